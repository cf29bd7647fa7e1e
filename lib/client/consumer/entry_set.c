/*
 * Design notes: the set of recently acknowledged entries (entry_set.h).
 * Slots form a ring in insertion order, so forgetting the oldest is O(1)
 * apart from unlinking it from its hash chain; chains are slot indexes,
 * rebuilt when the ring grows. The ring starts small and doubles up to the
 * bound, so a consumer that receives little holds little. Owned by a
 * single-topic consumer: its io thread only.
 */
#include "client/consumer/entry_set.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX 4096
#define FIRST_CAP 64

void pc_entry_set_init(pc_entry_set_t *s, size_t max) {
    memset(s, 0, sizeof *s);
    s->max = max ? max : DEFAULT_MAX;
    if (s->max > PC_ENTRY_NONE - 1)
        s->max = PC_ENTRY_NONE - 1; /* slot indexes are 32-bit */
}

void pc_entry_set_free(pc_entry_set_t *s) {
    free(s->slots);
    free(s->chains);
    s->slots = NULL;
    s->chains = NULL;
    s->cap = s->n = s->head = s->nchains = 0;
}

void pc_entry_set_clear(pc_entry_set_t *s) {
    s->n = s->head = 0;
    for (size_t i = 0; i < s->nchains; i++)
        s->chains[i] = PC_ENTRY_NONE;
}

static size_t chain_of(const pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    uint64_t h = (uint64_t)ledger * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)entry;
    h ^= h >> 29;
    h *= UINT64_C(0xBF58476D1CE4E5B9);
    h ^= h >> 32;
    return (size_t)h & (s->nchains - 1);
}

static void link_slot(pc_entry_set_t *s, size_t i) {
    size_t c = chain_of(s, s->slots[i].ledger_id, s->slots[i].entry_id);
    s->slots[i].next = s->chains[c];
    s->chains[c] = (uint32_t)i;
}

/* A bigger ring (oldest moved to slot 0) and chains rebuilt for it. */
static int grow(pc_entry_set_t *s) {
    size_t cap = s->cap ? s->cap * 2 : FIRST_CAP;
    if (cap > s->max)
        cap = s->max;
    size_t nchains = 1;
    while (nchains < cap)
        nchains <<= 1;
    pc_entry_slot_t *slots = malloc(cap * sizeof *slots);
    uint32_t *chains = malloc(nchains * sizeof *chains);
    if (!slots || !chains) {
        free(slots);
        free(chains);
        return -1;
    }
    for (size_t i = 0; i < s->n; i++)
        slots[i] = s->slots[(s->head + i) % s->cap];
    free(s->slots);
    free(s->chains);
    s->slots = slots;
    s->chains = chains;
    s->cap = cap;
    s->nchains = nchains;
    s->head = 0;
    for (size_t i = 0; i < nchains; i++)
        chains[i] = PC_ENTRY_NONE;
    for (size_t i = 0; i < s->n; i++)
        link_slot(s, i);
    return 0;
}

static void forget_oldest(pc_entry_set_t *s) {
    size_t i = s->head;
    uint32_t *pp = &s->chains[chain_of(s, s->slots[i].ledger_id, s->slots[i].entry_id)];
    while (*pp != (uint32_t)i)
        pp = &s->slots[*pp].next;
    *pp = s->slots[i].next;
    s->head = (s->head + 1) % s->cap;
    s->n--;
}

int pc_entry_set_has(const pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    if (!s->n)
        return 0;
    for (uint32_t i = s->chains[chain_of(s, ledger, entry)]; i != PC_ENTRY_NONE; i = s->slots[i].next)
        if (s->slots[i].ledger_id == ledger && s->slots[i].entry_id == entry)
            return 1;
    return 0;
}

int pc_entry_set_add(pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    if (pc_entry_set_has(s, ledger, entry))
        return 0;
    if (s->n == s->cap) {
        if (s->cap < s->max) {
            if (grow(s))
                return -1;
        } else {
            forget_oldest(s);
        }
    }
    size_t i = (s->head + s->n) % s->cap;
    s->slots[i].ledger_id = ledger;
    s->slots[i].entry_id = entry;
    link_slot(s, i);
    s->n++;
    return 0;
}
