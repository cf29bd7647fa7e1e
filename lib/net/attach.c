/*
 * Design notes: see attach.h. Ids are handed out by one counter per client,
 * so consecutive ids are the common case; a multiplicative hash spreads
 * them anyway. The table grows at a load of 1 and never shrinks (a
 * connection's handles come and go; the bucket array is 8 bytes a slot).
 * Loop thread only.
 */
#include "net/attach.h"

#include <stdlib.h>

enum { FIRST_BUCKETS = 16 };

void pc_attach_init(pc_attach_table_t *t) {
    t->buckets = NULL;
    t->nbuckets = t->count = 0;
    t->touched = NULL;
}

static size_t slot(uint64_t id, size_t nbuckets) {
    return (size_t)((id * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (nbuckets - 1);
}

/* Rehashes into twice the buckets; on allocation failure keeps the old
 * ones (longer chains, still correct). */
static void grow(pc_attach_table_t *t) {
    size_t n = t->nbuckets ? t->nbuckets * 2 : FIRST_BUCKETS;
    pc_attached_t **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < t->nbuckets; i++) {
        /* Reversing each chain would reorder repeated ids: move in order. */
        pc_attached_t *a = t->buckets[i], *rev = NULL;
        while (a) {
            pc_attached_t *next = a->next;
            a->next = rev;
            rev = a;
            a = next;
        }
        for (a = rev; a;) {
            pc_attached_t *next = a->next;
            size_t s = slot(a->id, n);
            a->next = b[s];
            b[s] = a;
            a = next;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
}

void pc_attach_add(pc_attach_table_t *t, uint64_t id, const pc_conn_handler_t *h, void *obj) {
    if (t->count >= t->nbuckets)
        grow(t);
    pc_attached_t *a = calloc(1, sizeof *a);
    if (!a || !t->buckets)
        abort();
    a->id = id;
    a->h = h;
    a->obj = obj;
    size_t s = slot(id, t->nbuckets);
    a->next = t->buckets[s];
    t->buckets[s] = a;
    t->count++;
}

static void untouch(pc_attach_table_t *t, pc_attached_t *a) {
    for (pc_attached_t **pp = &t->touched; *pp; pp = &(*pp)->next_touched) {
        if (*pp == a) {
            *pp = a->next_touched;
            break;
        }
    }
    a->touched = 0;
}

void pc_attach_remove(pc_attach_table_t *t, uint64_t id) {
    if (!t->nbuckets)
        return;
    for (pc_attached_t **pp = &t->buckets[slot(id, t->nbuckets)]; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            pc_attached_t *a = *pp;
            *pp = a->next;
            if (a->touched)
                untouch(t, a);
            t->count--;
            free(a);
            return;
        }
    }
}

pc_attached_t *pc_attach_find(const pc_attach_table_t *t, uint64_t id) {
    if (!t->nbuckets)
        return NULL;
    for (pc_attached_t *a = t->buckets[slot(id, t->nbuckets)]; a; a = a->next)
        if (a->id == id)
            return a;
    return NULL;
}

void pc_attach_touch(pc_attach_table_t *t, pc_attached_t *a) {
    if (a->touched)
        return;
    a->touched = 1;
    a->next_touched = t->touched;
    t->touched = a;
}

pc_attached_t *pc_attach_pop_touched(pc_attach_table_t *t) {
    pc_attached_t *a = t->touched;
    if (a) {
        t->touched = a->next_touched;
        a->next_touched = NULL;
        a->touched = 0;
    }
    return a;
}

pc_attached_t *pc_attach_take_all(pc_attach_table_t *t) {
    pc_attached_t *all = NULL;
    for (size_t i = 0; i < t->nbuckets; i++) {
        while (t->buckets[i]) {
            pc_attached_t *a = t->buckets[i];
            t->buckets[i] = a->next;
            a->next = all;
            all = a;
        }
    }
    t->count = 0;
    t->touched = NULL;
    return all;
}

void pc_attach_free(pc_attach_table_t *t) {
    pc_attached_t *a = pc_attach_take_all(t);
    while (a) {
        pc_attached_t *next = a->next;
        free(a);
        a = next;
    }
    free(t->buckets);
    pc_attach_init(t);
}
