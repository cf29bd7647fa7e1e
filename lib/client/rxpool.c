/*
 * Design notes: owns the memory received messages live in. The io thread
 * takes entries from the free list and makes each message of an entry a
 * slot of the entry's own array; application threads drop messages through
 * pulsarc_msg_destroy(), and the last one recycles the entry. So the lock
 * is taken twice per entry (a batch of up to thousands of messages), never
 * per message: a per-message free list shared by the io thread and the
 * application thread was the fetch path's main contention.
 * A new entry costs three allocations (itself, its arena's first block,
 * its payload buffer): its first view is a slot inside it, and the pool
 * grows to the receive queue's depth, so warm-up is paid once per entry.
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
    pthread_mutex_init(&p->lock, NULL);
    p->max_entry_bytes = max_entry_bytes;
    /*
     * Live at once: the queue's worth queued, up to as many again granted
     * to the broker and on their way (a FLOW goes out at half the queue
     * taken), and a batch receive's in the application's hands; plus the
     * broker's overshoot of one batch. A bound of one queue freed and
     * re-allocated the surplus for ever (0.003 allocations a message,
     * unbatched, queue 10000). MAX_POOLED_BYTES still caps the memory.
     */
    p->max_free_entries = 2 * queue + 64;
    return p;
}

static int views_inline(const pc_entry_t *e) { return e->msgs == &e->one_msg; }

static size_t entry_bytes(const pc_entry_t *e) {
    size_t views = views_inline(e) ? 0 : e->capmsgs * sizeof *e->msgs; /* inline: in sizeof *e */
    return e->data.cap + e->arena.cap + views + sizeof *e;
}

static void entry_free(pc_entry_t *e) {
    pc_buf_free(&e->data);
    pc_arena_free(&e->arena);
    if (!views_inline(e))
        free(e->msgs);
    free(e);
}

void pc_rxpool_set_queue(pc_rxpool_t *p, size_t queue) {
    pc_entry_t *surplus = NULL;
    pthread_mutex_lock(&p->lock);
    p->max_free_entries = queue + 64;
    while (p->nfree_entries > p->max_free_entries) {
        pc_entry_t *e = p->free_entries;
        p->free_entries = e->next_free;
        p->nfree_entries--;
        p->pooled_bytes -= entry_bytes(e);
        e->next_free = surplus;
        surplus = e;
    }
    pthread_mutex_unlock(&p->lock);
    while (surplus) { /* freed outside the lock */
        pc_entry_t *e = surplus;
        surplus = e->next_free;
        entry_free(e);
    }
}

size_t pc_rxpool_pooled_bytes(pc_rxpool_t *p) {
    pthread_mutex_lock(&p->lock);
    size_t n = p->pooled_bytes;
    pthread_mutex_unlock(&p->lock);
    return n;
}

static void pool_unref(pc_rxpool_t *p) {
    if (atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    while (p->free_entries) {
        pc_entry_t *e = p->free_entries;
        p->free_entries = e->next_free;
        entry_free(e);
    }
    pthread_mutex_destroy(&p->lock);
    free(p->topic);
    free(p);
}

void pc_rxpool_release(pc_rxpool_t *p) {
    if (p)
        pool_unref(p);
}

pc_entry_t *pc_entry_get(pc_rxpool_t *p) {
    pthread_mutex_lock(&p->lock);
    pc_entry_t *e = p->free_entries;
    if (e) {
        p->free_entries = e->next_free;
        p->nfree_entries--;
        p->pooled_bytes -= entry_bytes(e);
    }
    pthread_mutex_unlock(&p->lock);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return NULL;
        pc_buf_init(&e->data, p->max_entry_bytes);
        e->msgs = &e->one_msg;
        e->capmsgs = 1;
    }
    atomic_init(&e->refs, 1);
    e->pool = p;
    e->next_free = NULL;
    e->data.len = 0;
    e->data_off = 0;
    e->nmsgs = 0;
    atomic_fetch_add(&p->refs, 1);
    return e;
}

void pc_entry_unref(pc_entry_t *e) {
    if (atomic_fetch_sub(&e->refs, 1) != 1)
        return;
    pc_rxpool_t *p = e->pool;
    pc_arena_reset(&e->arena);
    e->data.len = 0;
    size_t bytes = entry_bytes(e);
    pthread_mutex_lock(&p->lock);
    int keep = p->nfree_entries < p->max_free_entries && p->pooled_bytes + bytes <= MAX_POOLED_BYTES;
    if (keep) {
        e->next_free = p->free_entries;
        p->free_entries = e;
        p->nfree_entries++;
        p->pooled_bytes += bytes;
    }
    pthread_mutex_unlock(&p->lock);
    if (!keep)
        entry_free(e);
    pool_unref(p);
}

/* ---------- message views ---------- */

int pc_entry_reserve_msgs(pc_entry_t *e, size_t n) {
    if (e->nmsgs)
        return -1; /* views exist: the array must not move */
    if (n <= e->capmsgs)
        return 0;
    /* the array keeps its peak size; the inline slot is left unused once outgrown */
    pulsarc_msg_t *v = views_inline(e) ? malloc(n * sizeof *v) : realloc(e->msgs, n * sizeof *v);
    if (!v)
        return -1;
    e->msgs = v;
    e->capmsgs = n;
    return 0;
}

void pc_rxmsg_put(pulsarc_msg_t *m) {
    pc_entry_unref(m->entry);
}
