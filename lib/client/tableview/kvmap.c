/*
 * Design notes: chained hashing with FNV-1a over the key's bytes. The
 * bucket array doubles when the load passes one entry per bucket, so a
 * lookup stays short however many keys the topic carries. A failed
 * allocation leaves the map as it was: growing is best effort, a put
 * either lands whole or not at all.
 *
 * Threads: whoever holds the owning view's lock.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/tableview/kvmap.h"

#define KV_MIN_BUCKETS 64

static size_t hash_key(const char *key) {
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return (size_t)h;
}

void pc_kvmap_init(pc_kvmap_t *m) { memset(m, 0, sizeof *m); }

static void free_entry(pc_kv_entry_t *e) {
    free(e->key);
    free(e->value);
    free(e);
}

void pc_kvmap_free(pc_kvmap_t *m) {
    for (size_t i = 0; i < m->nbuckets; i++) {
        pc_kv_entry_t *e = m->buckets[i];
        while (e) {
            pc_kv_entry_t *next = e->next;
            free_entry(e);
            e = next;
        }
    }
    free(m->buckets);
    pc_kvmap_init(m);
}

static pc_kv_entry_t **slot_of(const pc_kvmap_t *m, const char *key) {
    pc_kv_entry_t **pp = &m->buckets[hash_key(key) & (m->nbuckets - 1)];
    while (*pp && strcmp((*pp)->key, key) != 0)
        pp = &(*pp)->next;
    return pp;
}

const pc_kv_entry_t *pc_kvmap_get(const pc_kvmap_t *m, const char *key) {
    return m->nbuckets ? *slot_of(m, key) : NULL;
}

/* Rehashes into twice as many buckets; on allocation failure keeps the old ones. */
static void grow(pc_kvmap_t *m) {
    size_t n = m->nbuckets ? m->nbuckets * 2 : KV_MIN_BUCKETS;
    pc_kv_entry_t **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < m->nbuckets; i++) {
        pc_kv_entry_t *e = m->buckets[i];
        while (e) {
            pc_kv_entry_t *next = e->next;
            size_t at = hash_key(e->key) & (n - 1);
            e->next = b[at];
            b[at] = e;
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
}

static void *dup_bytes(const void *p, size_t len) {
    void *d = malloc(len);
    if (d)
        memcpy(d, p, len);
    return d;
}

static int replace_value(pc_kv_entry_t *e, const void *value, size_t len) {
    void *v = dup_bytes(value, len);
    if (!v)
        return -1;
    free(e->value);
    e->value = v;
    e->len = len;
    return 0;
}

int pc_kvmap_put(pc_kvmap_t *m, const char *key, const void *value, size_t len) {
    if (m->count >= m->nbuckets)
        grow(m);
    if (!m->nbuckets)
        return -1;
    pc_kv_entry_t **pp = slot_of(m, key);
    if (*pp)
        return replace_value(*pp, value, len);
    pc_kv_entry_t *e = calloc(1, sizeof *e);
    if (!e || !(e->key = strdup(key)) || !(e->value = dup_bytes(value, len))) {
        if (e)
            free_entry(e);
        return -1;
    }
    e->len = len;
    *pp = e;
    m->count++;
    return 0;
}

int pc_kvmap_remove(pc_kvmap_t *m, const char *key) {
    if (!m->nbuckets)
        return 0;
    pc_kv_entry_t **pp = slot_of(m, key);
    pc_kv_entry_t *e = *pp;
    if (!e)
        return 0;
    *pp = e->next;
    free_entry(e);
    m->count--;
    return 1;
}

void pc_kvmap_each(const pc_kvmap_t *m, int (*fn)(const pc_kv_entry_t *e, void *arg), void *arg) {
    for (size_t i = 0; i < m->nbuckets; i++)
        for (const pc_kv_entry_t *e = m->buckets[i]; e; e = e->next)
            if (fn(e, arg))
                return;
}
