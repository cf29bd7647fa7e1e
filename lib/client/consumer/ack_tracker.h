/*
 * Acknowledgements on their way to the broker: grouped on a timer or by
 * count, cumulative acks collapsed to the highest, and batches tracked per
 * entry so that acking one message of a batch never acks its siblings.
 */
#ifndef PC_ACK_TRACKER_H
#define PC_ACK_TRACKER_H
#include <stdint.h>

#include "net/loop.h"
#include "pulsarc.h"

/* One id as it goes on the wire: an entry, and the bits still unacked (or none). */
typedef struct pc_ack_item {
    int64_t ledger_id, entry_id;
    int64_t *ack_set; /* NULL: the whole entry */
    size_t n_ack_set;
} pc_ack_item_t;

/* Sends one CommandAck (cumulative: exactly one item); 0 if sent, -1 if not connected. */
typedef int (*pc_ack_send_fn)(void *owner, const pc_ack_item_t *items, size_t n, int cumulative);

typedef struct pc_ack_batch pc_ack_batch_t;

typedef struct pc_ack_tracker {
    pc_loop_t *loop;
    pc_ack_send_fn send;
    void *owner;
    int64_t group_ms;      /* 0: send every ack at once */
    size_t max_group;
    int batch_index_ack;   /* send partial-batch acks with ack_set */
    pc_ack_item_t *pending;
    size_t npending, cappending;
    int has_cumulative;
    pc_ack_item_t cumulative;
    int64_t cum_set[1];    /* storage for a cumulative ack_set of <= 64 bits */
    pc_ack_batch_t *batches[256]; /* partially acked batch entries, by entry id */
    pc_timer_t timer;
} pc_ack_tracker_t;

/* Loop thread only. */
void pc_ack_tracker_init(pc_ack_tracker_t *t, pc_loop_t *loop, pc_ack_send_fn send, void *owner,
                         int64_t group_ms, size_t max_group, int batch_index_ack);
/* Stops the group timer (loop thread); free releases memory (any thread, after stop). */
void pc_ack_tracker_stop(pc_ack_tracker_t *t);
void pc_ack_tracker_free(pc_ack_tracker_t *t);
void pc_ack_individual(pc_ack_tracker_t *t, const pulsarc_msgid_t *id);
void pc_ack_cumulative(pc_ack_tracker_t *t, const pulsarc_msgid_t *id);
/* Sends everything pending now. */
void pc_ack_flush(pc_ack_tracker_t *t);
/* Forgets batch bookkeeping (after a seek: the broker's view is reset). */
void pc_ack_forget_batches(pc_ack_tracker_t *t);
#endif
