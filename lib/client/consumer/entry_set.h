/*
 * A bounded set of entry ids (ledger, entry), oldest forgotten first once
 * it is full. A consumer keeps two: the entries it acknowledged recently,
 * so that an entry the broker sends again before it has seen the ack (the
 * ack was grouped, in flight or lost with a connection) is dropped instead
 * of reaching the application twice; and the entries delivered since the
 * broker was last asked to send things again, so that a second copy the
 * broker sends unasked is dropped too. Pure data structure, no locks: its
 * owner's thread only.
 */
#ifndef PC_ENTRY_SET_H
#define PC_ENTRY_SET_H
#include <stddef.h>
#include <stdint.h>

typedef struct pc_entry_slot {
    int64_t ledger_id, entry_id;
    uint32_t next; /* next slot in the same hash chain, or PC_ENTRY_NONE */
} pc_entry_slot_t;

#define PC_ENTRY_NONE UINT32_MAX

typedef struct pc_entry_set {
    size_t max;             /* the bound: never more ids than this */
    size_t n;               /* ids remembered: the ring's and the run's */
    size_t cap, used, head; /* ring of slots, oldest at head, `used` of them in use */
    pc_entry_slot_t *slots;
    uint32_t *chains;       /* nchains heads (a power of two), PC_ENTRY_NONE when empty */
    size_t nchains;
    /* The newest ids, while they come in order: entries run_first..run_last
     * of one ledger, held as two numbers (run_first > run_last: none). The
     * ring holds only ids that came before the run. */
    int64_t run_ledger, run_first, run_last;
    /* The greatest id put in the ring since the last clear (ledger first):
     * an id above it and outside the run is known absent without a lookup. */
    int64_t top_ledger, top_entry;
} pc_entry_set_t;

/* max == 0 picks the default bound. Allocates lazily: an unused set costs nothing. */
void pc_entry_set_init(pc_entry_set_t *s, size_t max);
void pc_entry_set_free(pc_entry_set_t *s);
/* Forgets everything (keeps the bound). */
void pc_entry_set_clear(pc_entry_set_t *s);
/* Remembers an entry; when full the oldest is forgotten. Out of memory,
 * older ids are forgotten early; the new one is always remembered. Returns 0. */
int pc_entry_set_add(pc_entry_set_t *s, int64_t ledger_id, int64_t entry_id);
int pc_entry_set_has(const pc_entry_set_t *s, int64_t ledger_id, int64_t entry_id);
/* Remembers an entry unless it is there already: 1 when it was new, 0 when
 * it was there. One lookup where has-then-add would take two. */
int pc_entry_set_insert(pc_entry_set_t *s, int64_t ledger_id, int64_t entry_id);
#endif
