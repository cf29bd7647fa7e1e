/*
 * The producers or consumers attached to one connection, found by id in
 * constant time (a chained hash table that doubles as it fills), and the
 * ones that received a frame during the current read, so the end of a read
 * visits those only. A client may hold 10,000 of each on one connection: a
 * linear list would make every receipt and every read cost that many steps.
 * Loop thread only (owned by its connection).
 */
#ifndef PC_ATTACH_H
#define PC_ATTACH_H
#include <stddef.h>
#include <stdint.h>

#include "net/conn.h"

typedef struct pc_attached {
    struct pc_attached *next;         /* bucket chain; the list pc_attach_take_all returns */
    struct pc_attached *next_touched; /* the touched list, while touched */
    uint64_t id;
    const pc_conn_handler_t *h;
    void *obj;
    int touched;
} pc_attached_t;

typedef struct pc_attach_table {
    pc_attached_t **buckets;
    size_t nbuckets;                  /* a power of two, or 0 before the first add */
    size_t count;
    pc_attached_t *touched;
} pc_attach_table_t;

void pc_attach_init(pc_attach_table_t *t);
/* Adds obj under id; the latest added wins a lookup of a repeated id. Aborts
 * on allocation failure: losing it would strand the producer silently. */
void pc_attach_add(pc_attach_table_t *t, uint64_t id, const pc_conn_handler_t *h, void *obj);
/* Removes and frees the latest added under id, if any. */
void pc_attach_remove(pc_attach_table_t *t, uint64_t id);
pc_attached_t *pc_attach_find(const pc_attach_table_t *t, uint64_t id);
/* Notes that a received a frame during this run of reads (once). */
void pc_attach_touch(pc_attach_table_t *t, pc_attached_t *a);
/* The next touched entry, no longer touched; NULL when none is left. */
pc_attached_t *pc_attach_pop_touched(pc_attach_table_t *t);
/* Empties the table and hands every entry over as a list linked by next
 * (the caller frees each with free()). */
pc_attached_t *pc_attach_take_all(pc_attach_table_t *t);
void pc_attach_free(pc_attach_table_t *t);
#endif
