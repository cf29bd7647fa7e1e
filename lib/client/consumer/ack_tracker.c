/*
 * Design notes: owns acks between the application's call and the broker's
 * confirmation. Individual acks collect in an array and go out as one
 * multi-id ACK when the group timer fires or max_group is reached;
 * cumulative acks keep only the highest. A message of a batch is acked by
 * clearing its bit in the entry's bitset: the entry itself is acked when
 * the last bit clears, and, with batch_index_ack on, partial progress is
 * sent as an ack_set (the broker ANDs it with what it has), so acking one
 * message never acks its siblings.
 *
 * An ACK a connection carried away is not known to have arrived: each one
 * sent is kept (`sent`) until the broker's ACK_RESPONSE to its request id
 * confirms it; after the next SUBSCRIBE succeeds, everything still kept is
 * sent again, before any FLOW, so the broker knows it before it dispatches.
 * Without receipts (an old broker) nothing confirms: what was sent is kept
 * and resent likewise. Either way at most `acked.max` ids are kept, the
 * oldest dropped first (by then long since applied, or the connection
 * would have failed). Acks are idempotent on the broker, so sending one
 * twice is harmless.
 *
 * What the application acknowledged is remembered too: whole entries in a
 * bounded set (entry_set.c), batch indexes in the bitsets, and the highest
 * cumulative position; delivery consults it (pc_ack_is_acked) and drops
 * what the broker sent again before it saw the ack. Loop thread only.
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

/* One CommandAck sent and not confirmed yet; owns its items' ack_sets. */
struct pc_ack_sent {
    pc_ack_sent_t *next;
    uint64_t receipt; /* the request id its ACK_RESPONSE answers; 0: none will */
    int cumulative;
    size_t n;
    pc_ack_item_t items[];
};

static void on_timer(void *arg) { pc_ack_flush(arg); }

void pc_ack_tracker_init(pc_ack_tracker_t *t, pc_loop_t *loop, pc_ack_send_fn send, void *owner,
                         int64_t group_ms, size_t max_group, int batch_index_ack, size_t remember) {
    memset(t, 0, sizeof *t);
    t->loop = loop;
    t->send = send;
    t->owner = owner;
    t->group_ms = group_ms;
    t->max_group = max_group ? max_group : 1000;
    t->batch_index_ack = batch_index_ack;
    pc_timer_init(&t->timer, on_timer, t);
    pc_entry_set_init(&t->acked, remember);
}

static void free_items(pc_ack_item_t *items, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(items[i].ack_set);
}

static void free_pending(pc_ack_tracker_t *t) {
    free_items(t->pending, t->npending);
    t->npending = 0;
}

/* ---------- sent, not confirmed ---------- */

static void drop_sent(pc_ack_tracker_t *t, pc_ack_sent_t **pp) {
    pc_ack_sent_t *x = *pp;
    *pp = x->next;
    if (t->sent_tail == x) {
        t->sent_tail = NULL; /* its predecessor becomes the tail */
        for (pc_ack_sent_t *y = t->sent_head; y; y = y->next)
            t->sent_tail = y;
    }
    t->sent_ids -= x->n;
    free_items(x->items, x->n);
    free(x);
}

static void forget_sent(pc_ack_tracker_t *t) {
    while (t->sent_head)
        drop_sent(t, &t->sent_head);
}

/* A copy of items whose ack_sets are its own; NULL when out of memory. */
static pc_ack_sent_t *copy_sent(const pc_ack_item_t *items, size_t n) {
    pc_ack_sent_t *x = malloc(sizeof *x + n * sizeof *items);
    if (!x)
        return NULL;
    memcpy(x->items, items, n * sizeof *items);
    for (size_t i = 0; i < n; i++) {
        x->items[i].ack_set = NULL;
        if (items[i].n_ack_set && !(x->items[i].ack_set = malloc(items[i].n_ack_set * sizeof(int64_t)))) {
            free_items(x->items, i); /* never as the whole entry: that would ack its siblings */
            free(x);
            return NULL;
        }
        if (items[i].n_ack_set)
            memcpy(x->items[i].ack_set, items[i].ack_set, items[i].n_ack_set * sizeof(int64_t));
    }
    return x;
}

/*
 * Keeps what went out until it is confirmed. own: the items' ack_sets
 * become the record's (pending items); else they are copied (the
 * cumulative one lives in the tracker). Out of memory: not kept, which is
 * what happened to every ack before receipts.
 */
static void keep_sent(pc_ack_tracker_t *t, pc_ack_item_t *items, size_t n, int cumulative,
                      uint64_t receipt, int own) {
    pc_ack_sent_t *x = own ? malloc(sizeof *x + n * sizeof *items) : copy_sent(items, n);
    if (x && own)
        memcpy(x->items, items, n * sizeof *items);
    if (!x) {
        if (own)
            free_items(items, n);
        return;
    }
    x->next = NULL;
    x->receipt = receipt;
    x->cumulative = cumulative;
    x->n = n;
    if (t->sent_tail)
        t->sent_tail->next = x;
    else
        t->sent_head = x;
    t->sent_tail = x;
    t->sent_ids += n;
    while (t->sent_ids > t->acked.max && t->sent_head != x)
        drop_sent(t, &t->sent_head); /* the oldest: long since applied, most likely */
}

void pc_ack_confirmed(pc_ack_tracker_t *t, uint64_t receipt) {
    for (pc_ack_sent_t **pp = &t->sent_head; *pp; pp = &(*pp)->next) {
        if ((*pp)->receipt == receipt) {
            drop_sent(t, pp);
            return;
        }
    }
}

void pc_ack_forget_batches(pc_ack_tracker_t *t) {
    for (size_t b = 0; b < 256; b++) {
        while (t->batches[b]) {
            pc_ack_batch_t *x = t->batches[b];
            t->batches[b] = x->next;
            free(x);
        }
    }
    pc_entry_set_clear(&t->acked);
    t->has_cum_acked = 0;
    forget_sent(t);
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
    pc_entry_set_free(&t->acked);
}

void pc_ack_flush(pc_ack_tracker_t *t) {
    pc_timer_stop(t->loop, &t->timer);
    /* What cannot be sent now (no connection) stays for the next flush. */
    uint64_t receipt = 0;
    if (t->has_cumulative && t->send(t->owner, &t->cumulative, 1, 1, &receipt) == 0) {
        t->has_cumulative = 0;
        keep_sent(t, &t->cumulative, 1, 1, receipt, 0);
    }
    receipt = 0;
    if (t->npending && t->send(t->owner, t->pending, t->npending, 0, &receipt) == 0) {
        keep_sent(t, t->pending, t->npending, 0, receipt, 1);
        t->npending = 0;
    }
}

static void maybe_send(pc_ack_tracker_t *t) {
    if (t->group_ms <= 0 || t->npending >= t->max_group)
        pc_ack_flush(t);
    else if (!pc_timer_active(&t->timer))
        pc_timer_start(t->loop, &t->timer, t->group_ms);
}

static int reserve_pending(pc_ack_tracker_t *t, size_t more) {
    if (t->npending + more <= t->cappending)
        return 0;
    size_t cap = t->cappending ? t->cappending : 64;
    while (cap < t->npending + more)
        cap *= 2;
    pc_ack_item_t *p = realloc(t->pending, cap * sizeof *p);
    if (!p)
        return -1;
    t->pending = p;
    t->cappending = cap;
    return 0;
}

static int push_item(pc_ack_tracker_t *t, int64_t ledger, int64_t entry, const int64_t *set,
                     size_t nset) {
    if (reserve_pending(t, 1))
        return -1;
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

static pc_ack_batch_t *const *slot_of_const(const pc_ack_tracker_t *t, int64_t entry) {
    return &t->batches[(uint64_t)entry & 255];
}

static pc_ack_batch_t **slot_of(pc_ack_tracker_t *t, int64_t entry) {
    return &t->batches[(uint64_t)entry & 255];
}

static pc_ack_batch_t *lookup_batch(const pc_ack_tracker_t *t, int64_t ledger, int64_t entry) {
    for (pc_ack_batch_t *b = *slot_of_const(t, entry); b; b = b->next)
        if (b->ledger_id == ledger && b->entry_id == entry)
            return b;
    return NULL;
}

static pc_ack_batch_t *find_batch(pc_ack_tracker_t *t, const pulsarc_msgid_t *id, int create) {
    pc_ack_batch_t *b = lookup_batch(t, id->ledger_id, id->entry_id);
    if (b || !create)
        return b;
    size_t words = ((size_t)id->batch_size + 63) / 64;
    b = calloc(1, sizeof *b + words * sizeof(int64_t));
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

/* The whole entry is acked: on the wire, and remembered for delivery. */
static void ack_entry(pc_ack_tracker_t *t, int64_t ledger, int64_t entry) {
    push_item(t, ledger, entry, NULL, 0);
    pc_entry_set_add(&t->acked, ledger, entry);
}

void pc_ack_individual(pc_ack_tracker_t *t, const pulsarc_msgid_t *id) {
    if (!is_batch_id(id)) {
        ack_entry(t, id->ledger_id, id->entry_id);
    } else {
        pc_ack_batch_t *b;
        if (ack_in_batch(t, id, &b)) {
            ack_entry(t, id->ledger_id, id->entry_id);
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

/* What the application acked up to (its id, not the entry the wire may step back to). */
static void remember_cumulative(pc_ack_tracker_t *t, const pulsarc_msgid_t *id) {
    int partial = is_batch_id(id) && id->batch_index < id->batch_size - 1;
    t->has_cum_acked = 1;
    t->cum_acked = *id;
    t->cum_acked.batch_index = partial ? id->batch_index : -1;
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
    remember_cumulative(t, id);
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

/* ---------- after a reconnect ---------- */

/* A cumulative ack sent before goes again unless a later one is pending. */
static void resend_cumulative(pc_ack_tracker_t *t, const pc_ack_item_t *it) {
    if (t->has_cumulative && (cum_before(t, it->ledger_id, it->entry_id) ||
                              (it->ledger_id == t->cumulative.ledger_id &&
                               it->entry_id == t->cumulative.entry_id)))
        return;
    t->has_cumulative = 1;
    t->cumulative.ledger_id = it->ledger_id;
    t->cumulative.entry_id = it->entry_id;
    t->cumulative.ack_set = NULL;
    t->cumulative.n_ack_set = 0;
    if (it->n_ack_set == 1) {
        t->cum_set[0] = it->ack_set[0];
        t->cumulative.ack_set = t->cum_set;
        t->cumulative.n_ack_set = 1;
    }
}

void pc_ack_resend(pc_ack_tracker_t *t) {
    while (t->sent_head) {
        pc_ack_sent_t *x = t->sent_head;
        if (x->cumulative) {
            resend_cumulative(t, &x->items[0]);
        } else if (reserve_pending(t, x->n) == 0) {
            memcpy(&t->pending[t->npending], x->items, x->n * sizeof *x->items);
            t->npending += x->n;
            x->n = 0; /* the ack_sets now belong to pending */
        }
        t->sent_head = x->next;
        free_items(x->items, x->n);
        free(x);
    }
    t->sent_tail = NULL;
    t->sent_ids = 0;
    pc_ack_flush(t);
}

/* ---------- what was acked, for delivery ---------- */

static int cum_covers(const pc_ack_tracker_t *t, const pulsarc_msgid_t *id) {
    const pulsarc_msgid_t *c = &t->cum_acked;
    if (!t->has_cum_acked || id->ledger_id > c->ledger_id)
        return 0;
    if (id->ledger_id < c->ledger_id || id->entry_id < c->entry_id)
        return 1;
    if (id->entry_id > c->entry_id)
        return 0;
    return c->batch_index < 0 || (id->batch_index >= 0 && id->batch_index <= c->batch_index);
}

static int batch_bit_cleared(const pc_ack_tracker_t *t, const pulsarc_msgid_t *id) {
    if (id->batch_index < 0)
        return 0;
    const pc_ack_batch_t *b = lookup_batch(t, id->ledger_id, id->entry_id);
    if (!b || id->batch_index >= b->size)
        return 0;
    return !((uint64_t)b->bits[id->batch_index / 64] & (UINT64_C(1) << (id->batch_index % 64)));
}

int pc_ack_is_acked(const pc_ack_tracker_t *t, const pulsarc_msgid_t *id) {
    return cum_covers(t, id) || pc_entry_set_has(&t->acked, id->ledger_id, id->entry_id) ||
           batch_bit_cleared(t, id);
}

int pc_ack_entry_untouched(const pc_ack_tracker_t *t, int64_t ledger, int64_t entry) {
    const pulsarc_msgid_t *c = &t->cum_acked;
    int cum_before = !t->has_cum_acked || c->ledger_id < ledger ||
                     (c->ledger_id == ledger && c->entry_id < entry);
    return cum_before && !pc_entry_set_has(&t->acked, ledger, entry) && !lookup_batch(t, ledger, entry);
}

void pc_ack_again(pc_ack_tracker_t *t, const pulsarc_msgid_t *id) {
    pc_ack_batch_t *b;
    if (pc_entry_set_has(&t->acked, id->ledger_id, id->entry_id))
        push_item(t, id->ledger_id, id->entry_id, NULL, 0);
    else if (cum_covers(t, id))
        t->has_cumulative = 1; /* the last cumulative ack, still in t->cumulative */
    else if (t->batch_index_ack && (b = lookup_batch(t, id->ledger_id, id->entry_id)))
        push_item(t, id->ledger_id, id->entry_id, b->bits, b->nwords);
    else
        return;
    maybe_send(t);
}
