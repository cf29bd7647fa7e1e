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
    size_t cap, n, head;    /* ring of slots, oldest at head */
    pc_entry_slot_t *slots;
    uint32_t *chains;       /* nchains heads (a power of two), PC_ENTRY_NONE when empty */
    size_t nchains;
    /* The greatest id added since the last clear (ledger first): an id above
     * it cannot be in the set, which is how the broker sends a ledger's
     * entries, so the common question costs no hash lookup. */
    int64_t top_ledger, top_entry;
} pc_entry_set_t;

/* max == 0 picks the default bound. Allocates lazily: an unused set costs nothing. */
void pc_entry_set_init(pc_entry_set_t *s, size_t max);
void pc_entry_set_free(pc_entry_set_t *s);
/* Forgets everything (keeps the bound). */
void pc_entry_set_clear(pc_entry_set_t *s);
/* Remembers an entry; when full the oldest is forgotten. -1: out of memory (not remembered). */
int pc_entry_set_add(pc_entry_set_t *s, int64_t ledger_id, int64_t entry_id);
int pc_entry_set_has(const pc_entry_set_t *s, int64_t ledger_id, int64_t entry_id);
/* Remembers an entry unless it is there already: 1 when it was new, 0 when
 * it was there, -1 when new but out of memory (not remembered). One lookup
 * where has-then-add would take two. */
int pc_entry_set_insert(pc_entry_set_t *s, int64_t ledger_id, int64_t entry_id);
#endif
