/*
 * Design notes: the bookkeeping behind negative acks and ack timeouts needs
 * "insert on delivery, delete on ack, sweep what is due" for thousands of
 * ids; an open-addressing table with linear probing does each in O(1)
 * without per-id allocation. Sweeps scan the table, which is fine at the
 * once-a-tick rate they run. Single-threaded (the consumer's loop thread).
 */
#include "client/consumer/idmap.h"

#include <stdlib.h>

#define EMPTY INT64_MIN
#define GONE (INT64_MIN + 1)

void pc_idmap_init(pc_idmap_t *m) {
    m->slots = NULL;
    m->cap = m->used = m->live = 0;
}

void pc_idmap_free(pc_idmap_t *m) {
    free(m->slots);
    pc_idmap_init(m);
}

void pc_idmap_clear(pc_idmap_t *m) {
    for (size_t i = 0; i < m->cap; i++)
        m->slots[i].when = EMPTY;
    m->used = m->live = 0;
}

static size_t hash_id(int64_t ledger, int64_t entry, int32_t batch) {
    uint64_t h = (uint64_t)ledger * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)entry + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2);
    h ^= (uint64_t)(uint32_t)batch * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 31));
}

static int same(const pc_idmap_slot_t *s, const pulsarc_msgid_t *id) {
    return s->ledger == id->ledger_id && s->entry == id->entry_id && s->batch == id->batch_index &&
           s->partition == id->partition;
}

static pc_idmap_slot_t *find(const pc_idmap_t *m, const pulsarc_msgid_t *id) {
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = hash_id(id->ledger_id, id->entry_id, id->batch_index) & mask;; i = (i + 1) & mask) {
        pc_idmap_slot_t *s = &m->slots[i];
        if (s->when == EMPTY)
            return NULL;
        if (s->when != GONE && same(s, id))
            return s;
    }
}

static int grow(pc_idmap_t *m) {
    size_t cap = m->cap ? m->cap * 2 : 256;
    while (m->live * 2 >= cap)
        cap *= 2;
    pc_idmap_slot_t *old = m->slots;
    size_t oldcap = m->cap;
    m->slots = malloc(cap * sizeof *m->slots);
    if (!m->slots) {
        m->slots = old;
        return -1;
    }
    m->cap = cap;
    pc_idmap_clear(m);
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].when == EMPTY || old[i].when == GONE)
            continue;
        pulsarc_msgid_t id = {old[i].ledger, old[i].entry, old[i].partition, old[i].batch, 0};
        pc_idmap_put(m, &id, old[i].when);
    }
    free(old);
    return 0;
}

int pc_idmap_put(pc_idmap_t *m, const pulsarc_msgid_t *id, int64_t when) {
    pc_idmap_slot_t *s = find(m, id);
    if (s) {
        s->when = when;
        return 0;
    }
    if ((m->used + 1) * 4 >= m->cap * 3 && grow(m))
        return -1;
    size_t mask = m->cap - 1;
    size_t i = hash_id(id->ledger_id, id->entry_id, id->batch_index) & mask;
    while (m->slots[i].when != EMPTY && m->slots[i].when != GONE)
        i = (i + 1) & mask;
    if (m->slots[i].when == EMPTY)
        m->used++;
    m->slots[i] = (pc_idmap_slot_t){id->ledger_id, id->entry_id, id->batch_index, id->partition, when};
    m->live++;
    return 0;
}

int pc_idmap_del(pc_idmap_t *m, const pulsarc_msgid_t *id) {
    pc_idmap_slot_t *s = find(m, id);
    if (!s)
        return 0;
    s->when = GONE;
    m->live--;
    return 1;
}

size_t pc_idmap_take_due(pc_idmap_t *m, int64_t now, pulsarc_msgid_t *out, size_t max) {
    size_t n = 0;
    for (size_t i = 0; i < m->cap && n < max; i++) {
        pc_idmap_slot_t *s = &m->slots[i];
        if (s->when == EMPTY || s->when == GONE || s->when > now)
            continue;
        out[n++] = (pulsarc_msgid_t){s->ledger, s->entry, s->partition, s->batch, 0};
        s->when = GONE;
        m->live--;
    }
    return n;
}

int64_t pc_idmap_min(const pc_idmap_t *m) {
    int64_t min = INT64_MAX;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].when != EMPTY && m->slots[i].when != GONE && m->slots[i].when < min)
            min = m->slots[i].when;
    return min;
}
