/*
 * Design notes: owns the memory received messages live in. The io thread
 * takes entries from its private free list and makes each message of an
 * entry a slot of the entry's own array; application threads drop
 * messages through pulsarc_msg_destroy(), and the last one pushes the
 * entry on the pool's lock-free "returned" stack, which the io thread takes
 * whole when its own list runs dry. No lock on either side: a free list
 * under a mutex shared by the io thread and the application was the fetch
 * path's main contention (first per message, then per unbatched entry).
 * The stack has a single consumer that takes everything at once, so the
 * usual ABA hazard of lock-free pops does not arise.
 * The pool is reference counted by its consumer and by every live entry,
 * so messages may outlive the consumer that received them. Arenas and
 * message arrays keep their peak size, so after warm-up nothing is
 * allocated. The free list is bounded; beyond the bound (count, or bytes
 * held) memory goes back to the system.
 */
#include "client/rxpool.h"

#include <stdlib.h>
#include <string.h>

/* Free entries keep their buffers: cap what they may hold in all. */
#define MAX_POOLED_BYTES ((size_t)32 << 20)

/* ---------- pool ---------- */

pc_rxpool_t *pc_rxpool_new(const char *topic, size_t max_entry_bytes, size_t queue) {
    pc_rxpool_t *p = calloc(1, sizeof *p);
    if (!p || !(p->topic = strdup(topic))) {
        free(p);
        return NULL;
    }
    atomic_init(&p->refs, 1);
    atomic_init(&p->returned, NULL);
    p->max_entry_bytes = max_entry_bytes;
    /* The broker may overshoot the queue by one batch: leave room for it. */
    p->max_free_entries = queue + 64;
    return p;
}

static size_t entry_bytes(const pc_entry_t *e) {
    return e->data.cap + e->arena.cap + e->capmsgs * sizeof *e->msgs + sizeof *e;
}

static void entry_free(pc_entry_t *e) {
    pc_buf_free(&e->data);
    pc_arena_free(&e->arena);
    free(e->msgs);
    free(e);
}

static void free_list(pc_entry_t *e) {
    while (e) {
        pc_entry_t *next = e->next_free;
        entry_free(e);
        e = next;
    }
}

static void pool_unref(pc_rxpool_t *p) {
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
        return;
    free_list(p->free_entries);
    free_list(atomic_load_explicit(&p->returned, memory_order_acquire));
    free(p->topic);
    free(p);
}

void pc_rxpool_release(pc_rxpool_t *p) {
    if (p)
        pool_unref(p);
}

/* Moves what other threads gave back to the private list, within its bounds. */
static void take_returned(pc_rxpool_t *p) {
    pc_entry_t *e = atomic_exchange_explicit(&p->returned, NULL, memory_order_acquire);
    while (e) {
        pc_entry_t *next = e->next_free;
        size_t bytes = entry_bytes(e);
        if (p->nfree_entries < p->max_free_entries && p->pooled_bytes + bytes <= MAX_POOLED_BYTES) {
            e->next_free = p->free_entries;
            p->free_entries = e;
            p->nfree_entries++;
            p->pooled_bytes += bytes;
        } else {
            entry_free(e);
        }
        e = next;
    }
}

pc_entry_t *pc_entry_get(pc_rxpool_t *p) {
    if (!p->free_entries)
        take_returned(p);
    pc_entry_t *e = p->free_entries;
    if (e) {
        p->free_entries = e->next_free;
        p->nfree_entries--;
        p->pooled_bytes -= entry_bytes(e);
    } else {
        e = calloc(1, sizeof *e);
        if (!e)
            return NULL;
        pc_buf_init(&e->data, p->max_entry_bytes);
    }
    atomic_init(&e->refs, 1);
    e->pool = p;
    e->next_free = NULL;
    e->data.len = 0;
    e->nmsgs = 0;
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    return e;
}

void pc_entry_unref(pc_entry_t *e) {
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
        return;
    pc_rxpool_t *p = e->pool;
    pc_arena_reset(&e->arena);
    e->data.len = 0;
    pc_entry_t *head = atomic_load_explicit(&p->returned, memory_order_relaxed);
    do
        e->next_free = head;
    while (!atomic_compare_exchange_weak_explicit(&p->returned, &head, e, memory_order_release,
                                                  memory_order_relaxed));
    pool_unref(p);
}

/* ---------- message views ---------- */

int pc_entry_reserve_msgs(pc_entry_t *e, size_t n) {
    if (e->nmsgs)
        return -1; /* views exist: the array must not move */
    if (n <= e->capmsgs)
        return 0;
    pulsarc_msg_t *v = realloc(e->msgs, n * sizeof *v);
    if (!v)
        return -1;
    e->msgs = v;
    e->capmsgs = n;
    return 0;
}

void pc_rxmsg_put(pulsarc_msg_t *m) {
    pc_entry_unref(m->entry);
}
