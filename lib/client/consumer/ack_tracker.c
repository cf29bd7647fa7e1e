/*
 * Design notes: owns acks between the application's call and the wire.
 * Individual acks collect in an array and go out as one multi-id ACK when
 * the group timer fires or max_group is reached; cumulative acks keep only
 * the highest. A message of a batch is acked by clearing its bit in the
 * entry's bitset: the entry itself is acked when the last bit clears, and,
 * with batch_index_ack on, partial progress is sent as an ack_set (the
 * broker ANDs it with what it has), so acking one message never acks its
 * siblings. Loop thread only.
 */
#include "client/consumer/ack_tracker.h"

#include <stdlib.h>
#include <string.h>

struct pc_ack_batch {
    pc_ack_batch_t *next;
    int64_t ledger_id, entry_id;
    int32_t size;
    size_t nwords;
    int64_t bits[]; /* 1 = not yet acked */
};

static void on_timer(void *arg) { pc_ack_flush(arg); }

void pc_ack_tracker_init(pc_ack_tracker_t *t, pc_loop_t *loop, pc_ack_send_fn send, void *owner,
                         int64_t group_ms, size_t max_group, int batch_index_ack) {
    memset(t, 0, sizeof *t);
    t->loop = loop;
    t->send = send;
    t->owner = owner;
    t->group_ms = group_ms;
    t->max_group = max_group ? max_group : 1000;
    t->batch_index_ack = batch_index_ack;
    pc_timer_init(&t->timer, on_timer, t);
}

static void free_pending(pc_ack_tracker_t *t) {
    for (size_t i = 0; i < t->npending; i++)
        free(t->pending[i].ack_set);
    t->npending = 0;
}

void pc_ack_forget_batches(pc_ack_tracker_t *t) {
    for (size_t b = 0; b < 256; b++) {
        while (t->batches[b]) {
            pc_ack_batch_t *x = t->batches[b];
            t->batches[b] = x->next;
            free(x);
        }
    }
}

void pc_ack_tracker_stop(pc_ack_tracker_t *t) {
    if (t->loop)
        pc_timer_stop(t->loop, &t->timer);
}

void pc_ack_tracker_free(pc_ack_tracker_t *t) {
    free_pending(t);
    free(t->pending);
    t->pending = NULL;
    pc_ack_forget_batches(t);
}

void pc_ack_flush(pc_ack_tracker_t *t) {
    pc_timer_stop(t->loop, &t->timer);
    /* What cannot be sent now (no connection) stays for the next flush. */
    if (t->has_cumulative && t->send(t->owner, &t->cumulative, 1, 1) == 0)
        t->has_cumulative = 0;
    if (t->npending && t->send(t->owner, t->pending, t->npending, 0) == 0)
        free_pending(t);
}

static void maybe_send(pc_ack_tracker_t *t) {
    if (t->group_ms <= 0 || t->npending >= t->max_group)
        pc_ack_flush(t);
    else if (!pc_timer_active(&t->timer))
        pc_timer_start(t->loop, &t->timer, t->group_ms);
}

static int push_item(pc_ack_tracker_t *t, int64_t ledger, int64_t entry, const int64_t *set,
                     size_t nset) {
    if (t->npending == t->cappending) {
        size_t cap = t->cappending ? t->cappending * 2 : 64;
        pc_ack_item_t *p = realloc(t->pending, cap * sizeof *p);
        if (!p)
            return -1;
        t->pending = p;
        t->cappending = cap;
    }
    pc_ack_item_t *it = &t->pending[t->npending];
    it->ledger_id = ledger;
    it->entry_id = entry;
    it->ack_set = NULL;
    it->n_ack_set = 0;
    if (nset) {
        if (!(it->ack_set = malloc(nset * sizeof *set)))
            return -1;
        memcpy(it->ack_set, set, nset * sizeof *set);
        it->n_ack_set = nset;
    }
    t->npending++;
    return 0;
}

/* ---------- batches ---------- */

static pc_ack_batch_t **slot_of(pc_ack_tracker_t *t, int64_t entry) {
    return &t->batches[(uint64_t)entry & 255];
}

static pc_ack_batch_t *find_batch(pc_ack_tracker_t *t, const pulsarc_msgid_t *id, int create) {
    for (pc_ack_batch_t *b = *slot_of(t, id->entry_id); b; b = b->next)
        if (b->ledger_id == id->ledger_id && b->entry_id == id->entry_id)
            return b;
    if (!create)
        return NULL;
    size_t words = ((size_t)id->batch_size + 63) / 64;
    pc_ack_batch_t *b = calloc(1, sizeof *b + words * sizeof(int64_t));
    if (!b)
        return NULL;
    b->ledger_id = id->ledger_id;
    b->entry_id = id->entry_id;
    b->size = id->batch_size;
    b->nwords = words;
    for (size_t w = 0; w < words; w++) {
        int bits = id->batch_size - (int)w * 64;
        b->bits[w] = bits >= 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1);
    }
    b->next = *slot_of(t, id->entry_id);
    *slot_of(t, id->entry_id) = b;
    return b;
}

static void drop_batch(pc_ack_tracker_t *t, pc_ack_batch_t *x) {
    for (pc_ack_batch_t **pp = slot_of(t, x->entry_id); *pp; pp = &(*pp)->next) {
        if (*pp == x) {
            *pp = x->next;
            free(x);
            return;
        }
    }
}

static int batch_done(const pc_ack_batch_t *b) {
    for (size_t w = 0; w < b->nwords; w++)
        if (b->bits[w])
            return 0;
    return 1;
}

/* Clears id's bit; returns 1 when the whole entry is now acked. */
static int ack_in_batch(pc_ack_tracker_t *t, const pulsarc_msgid_t *id, pc_ack_batch_t **out) {
    pc_ack_batch_t *b = find_batch(t, id, 1);
    *out = b;
    if (!b)
        return 1; /* OOM: fall back to acking the entry rather than losing the ack */
    b->bits[id->batch_index / 64] &= ~(int64_t)(UINT64_C(1) << (id->batch_index % 64));
    return batch_done(b);
}

static int is_batch_id(const pulsarc_msgid_t *id) {
    return id->batch_index >= 0 && id->batch_size > 1 && id->batch_index < id->batch_size;
}

void pc_ack_individual(pc_ack_tracker_t *t, const pulsarc_msgid_t *id) {
    if (!is_batch_id(id)) {
        push_item(t, id->ledger_id, id->entry_id, NULL, 0);
    } else {
        pc_ack_batch_t *b;
        if (ack_in_batch(t, id, &b)) {
            push_item(t, id->ledger_id, id->entry_id, NULL, 0);
            if (b)
                drop_batch(t, b);
        } else if (t->batch_index_ack) {
            push_item(t, id->ledger_id, id->entry_id, b->bits, b->nwords);
        } else {
            return; /* nothing to tell the broker until the batch completes */
        }
    }
    maybe_send(t);
}

/* ---------- cumulative ---------- */

static int cum_before(const pc_ack_tracker_t *t, int64_t ledger, int64_t entry) {
    return ledger < t->cumulative.ledger_id ||
           (ledger == t->cumulative.ledger_id && entry < t->cumulative.entry_id);
}

static void forget_batches_upto(pc_ack_tracker_t *t, int64_t ledger, int64_t entry) {
    for (size_t s = 0; s < 256; s++) {
        pc_ack_batch_t *b = t->batches[s];
        while (b) {
            pc_ack_batch_t *next = b->next;
            if (b->ledger_id < ledger || (b->ledger_id == ledger && b->entry_id < entry))
                drop_batch(t, b);
            b = next;
        }
    }
}

void pc_ack_cumulative(pc_ack_tracker_t *t, const pulsarc_msgid_t *id) {
    int64_t ledger = id->ledger_id, entry = id->entry_id;
    int partial = is_batch_id(id) && id->batch_index < id->batch_size - 1;
    if (partial && (!t->batch_index_ack || id->batch_size > 64)) {
        if (entry == 0)
            return; /* nothing wholly acked yet */
        entry--;    /* ack up to the entry before; this batch stays open */
        partial = 0;
    }
    if (t->has_cumulative && cum_before(t, ledger, entry))
        return;
    t->has_cumulative = 1;
    t->cumulative.ledger_id = ledger;
    t->cumulative.entry_id = entry;
    t->cumulative.ack_set = NULL;
    t->cumulative.n_ack_set = 0;
    if (partial) {
        /* bits above the acked index stay set: those are still unacked */
        uint64_t all = id->batch_size == 64 ? UINT64_MAX : (UINT64_C(1) << id->batch_size) - 1;
        t->cum_set[0] = (int64_t)(all & ~((UINT64_C(2) << id->batch_index) - 1));
        t->cumulative.ack_set = t->cum_set;
        t->cumulative.n_ack_set = 1;
    }
    forget_batches_upto(t, ledger, entry + (partial ? 0 : 1));
    maybe_send(t);
}
