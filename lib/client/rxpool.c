/*
 * Design notes: owns the memory received messages live in. The io thread
 * takes entries and message structs from the free lists; application
 * threads give them back through pulsarc_msg_destroy(). The pool is
 * reference counted by its consumer and by every live entry, so messages
 * may outlive the consumer that received them. Arenas remember their peak
 * size, so after warm-up a batch's metadata fits without any malloc.
 * Free lists are bounded; beyond the bound memory goes back to the system.
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
    /* The broker may overshoot the queue by one batch: leave room for it. */
    p->max_free_entries = queue + 64;
    p->max_free_msgs = 2 * queue + 1024;
    return p;
}

static size_t entry_bytes(const pc_entry_t *e) { return e->data.cap + e->arena.cap + sizeof *e; }

static void entry_free(pc_entry_t *e) {
    pc_buf_free(&e->data);
    pc_arena_free(&e->arena);
    free(e);
}

static void pool_unref(pc_rxpool_t *p) {
    if (atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    while (p->free_entries) {
        pc_entry_t *e = p->free_entries;
        p->free_entries = e->next_free;
        entry_free(e);
    }
    while (p->free_msgs) {
        pulsarc_msg_t *m = p->free_msgs;
        p->free_msgs = m->next;
        free(m);
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
    }
    atomic_init(&e->refs, 1);
    e->pool = p;
    e->next_free = NULL;
    e->data.len = 0;
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

pulsarc_msg_t *pc_rxmsg_get(pc_entry_t *e) {
    pc_rxpool_t *p = e->pool;
    pthread_mutex_lock(&p->lock);
    pulsarc_msg_t *m = p->free_msgs;
    if (m) {
        p->free_msgs = m->next;
        p->nfree_msgs--;
    }
    pthread_mutex_unlock(&p->lock);
    if (!m && !(m = malloc(sizeof *m)))
        return NULL;
    memset(m, 0, sizeof *m);
    m->entry = e;
    m->topic = p->topic;
    m->seq = -1;
    atomic_fetch_add(&e->refs, 1);
    return m;
}

void pc_rxmsg_put(pulsarc_msg_t *m) {
    pc_entry_t *e = m->entry;
    pc_rxpool_t *p = e->pool;
    atomic_fetch_add(&p->refs, 1); /* keep the pool while we use its lock */
    pthread_mutex_lock(&p->lock);
    int keep = p->nfree_msgs < p->max_free_msgs;
    if (keep) {
        m->next = p->free_msgs;
        p->free_msgs = m;
        p->nfree_msgs++;
    }
    pthread_mutex_unlock(&p->lock);
    if (!keep)
        free(m);
    pc_entry_unref(e);
    pool_unref(p);
}
