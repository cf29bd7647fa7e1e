/*
 * Design notes: the bounded set of entry ids (entry_set.h). The broker
 * sends a ledger's entries in order, so the newest ids are held as a run
 * (one ledger, first..last): remembering, checking and forgetting them is
 * arithmetic, no hashing, which matters because the consumer asks about
 * every entry it delivers and the hash's loads were cache misses. An id
 * that does not extend the run moves the run into the ring (each id moves
 * at most once, so this is constant work per id over time) and starts a
 * new run. The ring keeps those older ids in insertion order, so
 * forgetting the oldest is O(1) apart from unlinking it from its hash
 * chain; chains are slot indexes, rebuilt when the ring grows. The ring
 * starts small and doubles up to the bound, so a set that only ever sees
 * in-order ids allocates nothing. The bound counts ring and run together;
 * the oldest are forgotten first: the ring's, then the run's first ids.
 * The greatest id ever put in the ring is kept (lowered only by clear), so
 * a newer id is known absent without touching the ring. Owned by a
 * single-topic consumer: its io thread only.
 */
#include "client/consumer/entry_set.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX 4096
#define FIRST_CAP 64

static void reset(pc_entry_set_t *s) {
    s->n = s->used = s->head = 0;
    s->run_ledger = 0;
    s->run_first = 1;
    s->run_last = 0;
    s->top_ledger = INT64_MIN;
    s->top_entry = INT64_MIN;
}

void pc_entry_set_init(pc_entry_set_t *s, size_t max) {
    memset(s, 0, sizeof *s);
    reset(s);
    s->max = max ? max : DEFAULT_MAX;
    if (s->max > PC_ENTRY_NONE - 1)
        s->max = PC_ENTRY_NONE - 1; /* slot indexes are 32-bit */
}

void pc_entry_set_free(pc_entry_set_t *s) {
    free(s->slots);
    free(s->chains);
    s->slots = NULL;
    s->chains = NULL;
    s->cap = s->nchains = 0;
    reset(s);
}

void pc_entry_set_clear(pc_entry_set_t *s) {
    reset(s);
    for (size_t i = 0; i < s->nchains; i++)
        s->chains[i] = PC_ENTRY_NONE;
}

/* ---------- the run ---------- */

static size_t run_len(const pc_entry_set_t *s) {
    return s->run_first > s->run_last ? 0 : (size_t)(s->run_last - s->run_first + 1);
}

static int in_run(const pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    return ledger == s->run_ledger && entry >= s->run_first && entry <= s->run_last;
}

static int extends_run(const pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    return run_len(s) && ledger == s->run_ledger && entry == s->run_last + 1;
}

/* ---------- the ring ---------- */

/* (head + i) in the ring, for i < cap: by comparison, so cap need not be a power of two. */
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
    for (size_t i = 0; i < s->used; i++)
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
    for (size_t i = 0; i < s->used; i++)
        link_slot(s, i);
    return 0;
}

static void ring_forget_oldest(pc_entry_set_t *s) {
    size_t i = s->head;
    uint32_t *pp = &s->chains[chain_of(s, s->slots[i].ledger_id, s->slots[i].entry_id)];
    while (*pp != (uint32_t)i)
        pp = &s->slots[*pp].next;
    *pp = s->slots[i].next;
    s->head = ring_at(s, 1);
    s->used--;
    s->n--;
}

static int ring_has(const pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    if (!s->used || above_top(s, ledger, entry))
        return 0;
    for (uint32_t i = s->chains[chain_of(s, ledger, entry)]; i != PC_ENTRY_NONE; i = s->slots[i].next)
        if (s->slots[i].ledger_id == ledger && s->slots[i].entry_id == entry)
            return 1;
    return 0;
}

/* Appends an id known to be absent; the caller keeps n within the bound. */
static int ring_add(pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    if (s->used == s->cap && (s->cap == s->max || grow(s)))
        return -1;
    size_t i = ring_at(s, s->used);
    s->slots[i].ledger_id = ledger;
    s->slots[i].entry_id = entry;
    link_slot(s, i);
    s->used++;
    s->n++;
    if (above_top(s, ledger, entry)) {
        s->top_ledger = ledger;
        s->top_entry = entry;
    }
    return 0;
}

/* ---------- both ---------- */

/* Forgets the oldest until room is left for one more id. */
static void make_room(pc_entry_set_t *s) {
    while (s->n >= s->max) {
        if (s->used) {
            ring_forget_oldest(s);
        } else {
            s->run_first++;
            s->n--;
        }
    }
}

/* The run's ids go to the ring, oldest first; a ring that cannot grow (out of memory) forgets them. */
static void retire_run(pc_entry_set_t *s) {
    size_t len = run_len(s);
    s->n -= len;
    for (int64_t e = s->run_first; len; e++, len--) {
        make_room(s);
        if (ring_add(s, s->run_ledger, e))
            break;
    }
    s->run_first = 1;
    s->run_last = 0;
}

int pc_entry_set_has(const pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    return in_run(s, ledger, entry) || ring_has(s, ledger, entry);
}

int pc_entry_set_insert(pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    if (extends_run(s, ledger, entry)) { /* the common case: it cannot be older */
        if (!ring_has(s, ledger, entry)) {
            make_room(s);
            s->run_last++;
            s->n++;
            return 1;
        }
        return 0;
    }
    if (pc_entry_set_has(s, ledger, entry))
        return 0;
    retire_run(s);
    make_room(s);
    s->run_ledger = ledger;
    s->run_first = s->run_last = entry;
    s->n++;
    return 1;
}

int pc_entry_set_add(pc_entry_set_t *s, int64_t ledger, int64_t entry) {
    return pc_entry_set_insert(s, ledger, entry) < 0 ? -1 : 0;
}
