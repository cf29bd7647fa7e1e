/*
 * Design notes: the set of recently acknowledged entries (entry_set.h).
 * Slots form a ring in insertion order, so forgetting the oldest is O(1)
 * apart from unlinking it from its hash chain; chains are slot indexes,
 * rebuilt when the ring grows. The ring starts small and doubles up to the
 * bound, so a consumer that receives little holds little. Ids mostly
 * arrive in order, so the set keeps the greatest id it was given: a newer
 * one is known absent without touching the ring or the chains, whose
 * loads were the cost (cache misses) of checking every delivered entry.
 * That bound is never lowered when the oldest is forgotten, only by
 * clear, so it can say "maybe" but never a wrong "absent". Ring positions
 * wrap by comparison, not division: the bound need not be a power of two.
 * Owned by a single-topic consumer: its io thread only.
 */
#include "client/consumer/entry_set.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX 4096
#define FIRST_CAP 64

static void reset_top(pc_entry_set_t *s) {
    s->top_ledger = INT64_MIN;
    s->top_entry = INT64_MIN;
}

void pc_entry_set_init(pc_entry_set_t *s, size_t max) {
    memset(s, 0, sizeof *s);
    reset_top(s);
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
    reset_top(s);
}

void pc_entry_set_clear(pc_entry_set_t *s) {
    s->n = s->head = 0;
    reset_top(s);
    for (size_t i = 0; i < s->nchains; i++)
        s->chains[i] = PC_ENTRY_NONE;
}

/* (head + i) in the ring, for i < cap. */
static size_t ring_at(const pc_entry_set_t *s, size_t i) {
    size_t at = s->head + i;
    return at >= s->cap ? at - s->cap : at;
}

static int above_top(const pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    return ledger > s->top_ledger || (ledger == s->top_ledger && entry > s->top_entry);
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
        slots[i] = s->slots[ring_at(s, i)];
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
    s->head = ring_at(s, 1);
    s->n--;
}

int pc_entry_set_has(const pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    if (!s->n || above_top(s, ledger, entry))
        return 0;
    for (uint32_t i = s->chains[chain_of(s, ledger, entry)]; i != PC_ENTRY_NONE; i = s->slots[i].next)
        if (s->slots[i].ledger_id == ledger && s->slots[i].entry_id == entry)
            return 1;
    return 0;
}

/* Adds an id known to be absent. */
static int add_absent(pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    if (s->n == s->cap) {
        if (s->cap < s->max) {
            if (grow(s))
                return -1;
        } else {
            forget_oldest(s);
        }
    }
    size_t i = ring_at(s, s->n);
    s->slots[i].ledger_id = ledger;
    s->slots[i].entry_id = entry;
    link_slot(s, i);
    s->n++;
    if (above_top(s, ledger, entry)) {
        s->top_ledger = ledger;
        s->top_entry = entry;
    }
    return 0;
}

int pc_entry_set_insert(pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    if (pc_entry_set_has(s, ledger, entry))
        return 0;
    return add_absent(s, ledger, entry) ? -1 : 1;
}

int pc_entry_set_add(pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    return pc_entry_set_insert(s, ledger, entry) < 0 ? -1 : 0;
}
