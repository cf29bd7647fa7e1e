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

#define MAX_FREE_ENTRIES 64
#define MAX_FREE_MSGS 8192
#define ARENA_MIN 4096

/* ---------- arena ---------- */

void *pc_arena_alloc(pc_arena_t *a, size_t n) {
    n = (n + 7) & ~(size_t)7;
    if (a->used + n <= a->cap) {
        void *p = a->buf + a->used;
        a->used += n;
        return p;
    }
    pc_arena_chunk_t *c = malloc(sizeof *c + n);
    if (!c)
        return NULL;
    c->next = a->extra;
    a->extra = c;
    a->extra_bytes += n;
    return c->data;
}

char *pc_arena_strndup(pc_arena_t *a, const void *s, size_t n) {
    char *d = pc_arena_alloc(a, n + 1);
    if (d) {
        if (n)
            memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* Frees overflow chunks and grows the main block to last round's peak. */
static void arena_reset(pc_arena_t *a) {
    size_t peak = a->used + a->extra_bytes;
    while (a->extra) {
        pc_arena_chunk_t *next = a->extra->next;
        free(a->extra);
        a->extra = next;
    }
    a->extra_bytes = 0;
    a->used = 0;
    if (peak > a->cap) {
        size_t cap = peak < ARENA_MIN ? ARENA_MIN : peak + peak / 4;
        uint8_t *b = realloc(a->buf, cap);
        if (b) {
            a->buf = b;
            a->cap = cap;
        }
    }
}

static void arena_free(pc_arena_t *a) {
    arena_reset(a);
    free(a->buf);
}

/* ---------- pool ---------- */

pc_rxpool_t *pc_rxpool_new(const char *topic, size_t max_entry_bytes) {
    pc_rxpool_t *p = calloc(1, sizeof *p);
    if (!p || !(p->topic = strdup(topic))) {
        free(p);
        return NULL;
    }
    atomic_init(&p->refs, 1);
    pthread_mutex_init(&p->lock, NULL);
    p->max_entry_bytes = max_entry_bytes;
    return p;
}

static void entry_free(pc_entry_t *e) {
    pc_buf_free(&e->data);
    arena_free(&e->arena);
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
    arena_reset(&e->arena);
    e->data.len = 0;
    pthread_mutex_lock(&p->lock);
    int keep = p->nfree_entries < MAX_FREE_ENTRIES;
    if (keep) {
        e->next_free = p->free_entries;
        p->free_entries = e;
        p->nfree_entries++;
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
    int keep = p->nfree_msgs < MAX_FREE_MSGS;
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
