/*
 * Following a partitioned topic's partition count, for owners that keep a
 * member per partition (a partitioned producer, a multi-topic consumer).
 * Io thread only: start, cancel and every upcall run there.
 *
 * Every period_ms the watch asks the broker for the topic's partition
 * count. A count above the one the owner follows is offered through
 * `grew`, which answers how many partitions the owner follows now; what it
 * did not take (a growth still under way, or one that failed) is offered
 * again at the next check. A failed lookup keeps the count and is logged;
 * a smaller count is ignored (Pulsar never shrinks a topic).
 *
 * The watch holds a reference on its owner from start until it is freed.
 * After pc_partition_watch_cancel no upcall runs, even when a lookup
 * asked before the cancel is answered later.
 */
#ifndef PC_PARTITION_WATCH_H
#define PC_PARTITION_WATCH_H
#include <stdint.h>

#include "client/client_int.h"

typedef struct pc_partition_watch pc_partition_watch_t;

typedef struct pc_partition_watch_ops {
    /* topic has n partitions, more than the `known` the owner follows:
     * returns how many it follows now (known..n). */
    int (*grew)(void *owner, const char *topic, int known, int n);
    /* The owner's reference count. */
    void (*ref)(void *owner);
    void (*unref)(void *owner);
} pc_partition_watch_ops_t;

/*
 * The first check comes period_ms after the start. Returns NULL when out
 * of memory (the owner then simply does not follow the topic).
 */
pc_partition_watch_t *pc_partition_watch_start(pulsarc_client_t *c, const char *topic, int known,
                                               int64_t period_ms,
                                               const pc_partition_watch_ops_t *ops, void *owner);
/* No check and no upcall any more; the watch frees itself. NULL is fine. */
void pc_partition_watch_cancel(pc_partition_watch_t *w);
#endif
