/*
 * Design notes: the open batches of one producer, io thread only.
 *
 * The default container has one group; the key-based one (batcherBuilder
 * KEY_BASED) has one group per key — the ordering key if set, else the
 * partition key — because the broker routes a whole entry to one Key_Shared
 * consumer by its entry-level key (docs/PROTOCOL.md §5.5). The limits
 * (batchingMaxMessages, batchingMaxBytes) apply to all groups together, so
 * the memory an open batch holds is bounded the same way in both modes.
 *
 * Delayed messages are never batched (the broker delays whole entries), and
 * a message bigger than batchingMaxBytes goes alone.
 */
#include <stdlib.h>
#include <string.h>

#include "client/producer/metadata.h"
#include "client/producer/producer_int.h"

void pc_batcher_init(pc_batcher_t *b, int key_based, int max_msgs, size_t max_bytes) {
    memset(b, 0, sizeof *b);
    b->key_based = key_based;
    b->max_msgs = max_msgs;
    b->max_bytes = max_bytes;
}

int pc_batcher_accepts(const pc_batcher_t *b, const pulsarc_msg_t *m) {
    return m->deliver_at == 0 && m->len <= b->max_bytes;
}

int pc_batcher_would_overflow(const pc_batcher_t *b, const pulsarc_msg_t *m) {
    return b->n > 0 && (b->n + 1 > b->max_msgs || b->bytes + m->len > b->max_bytes);
}

int pc_batcher_full(const pc_batcher_t *b) {
    return b->n >= b->max_msgs || b->bytes >= b->max_bytes;
}

int pc_batcher_empty(const pc_batcher_t *b) { return b->n == 0; }

/* The key a message is grouped by (NULL: none; empty keys are keys too). */
static const uint8_t *group_key(const pulsarc_msg_t *m, size_t *len) {
    if (m->ordering_key) {
        *len = m->ordering_key_len;
        return m->ordering_key;
    }
    *len = m->key ? strlen(m->key) : 0;
    return (const uint8_t *)m->key;
}

static int same_key(const pc_batch_group_t *g, const uint8_t *k, size_t len) {
    if (!g->key || !k)
        return !g->key && !k;
    return g->keylen == len && memcmp(g->key, k, len) == 0;
}

static pc_batch_group_t *find_group(pc_batcher_t *b, const pulsarc_msg_t *m) {
    size_t len = 0;
    const uint8_t *k = b->key_based ? group_key(m, &len) : NULL;
    pc_batch_group_t **pp = &b->groups;
    for (; *pp; pp = &(*pp)->next)
        if (same_key(*pp, k, len))
            return *pp;
    pc_batch_group_t *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    if (k && !(g->key = malloc(len ? len : 1))) {
        free(g);
        return NULL;
    }
    if (k)
        memcpy(g->key, k, len);
    g->keylen = len;
    *pp = g; /* appended: groups stay in the order their first message came */
    return g;
}

pulsarc_err_t pc_batcher_add(pc_batcher_t *b, send_item_t *it) {
    pc_batch_group_t *g = find_group(b, it->msg);
    if (!g)
        return PULSARC_ERR_NOMEM;
    it->next = NULL;
    if (g->last)
        g->last->next = it;
    else
        g->first = it;
    g->last = it;
    g->n++;
    b->n++;
    b->bytes += it->msg->len;
    return PULSARC_OK;
}

/*
 * Groups already come in the order of their first message, which is the
 * order of their lowest sequence id when ids are automatic; a user-set id
 * can break that, so sort by it (insertion sort: there are few groups).
 */
static pc_batch_group_t *sort_by_seq(pc_batch_group_t *list) {
    pc_batch_group_t *sorted = NULL;
    while (list) {
        pc_batch_group_t *g = list, **pp = &sorted;
        list = list->next;
        while (*pp && (*pp)->first->seq <= g->first->seq)
            pp = &(*pp)->next;
        g->next = *pp;
        *pp = g;
    }
    return sorted;
}

pc_batch_group_t *pc_batcher_take(pc_batcher_t *b) {
    pc_batch_group_t *list = b->groups;
    b->groups = NULL;
    b->n = 0;
    b->bytes = 0;
    return sort_by_seq(list);
}

void pc_batch_group_free(pc_batch_group_t *g) {
    free(g->key);
    free(g);
}

/* Room for the whole batch when its records are plain: one allocation per
 * batch instead of a buffer doubling its way up (keys may still grow it). */
static size_t serialized_hint(const pc_batch_group_t *g) {
    size_t n = 0;
    for (const send_item_t *it = g->first; it; it = it->next)
        n += 4 + PC_MD_PLAIN_SINGLE_MAX + it->msg->len;
    return n;
}

/* The records' heads only (their payloads stay in the messages); *payload
 * gets the length of the whole concatenation, heads and payloads. */
pulsarc_err_t pc_batch_serialize_heads(const pc_batch_group_t *g, pc_buf_t *out, size_t *payload) {
    size_t bodies = 0;
    pulsarc_err_t err = pc_buf_reserve(out, (size_t)g->n * (4 + PC_MD_PLAIN_SINGLE_MAX));
    for (const send_item_t *it = g->first; it && !err; it = it->next) {
        err = pc_md_append_single_head(out, it->msg, it->seq);
        bodies += it->msg->len;
    }
    *payload = out->len + bodies;
    return err;
}

pulsarc_err_t pc_batch_serialize(const pc_batch_group_t *g, pc_buf_t *out) {
    pulsarc_err_t err = pc_buf_reserve(out, serialized_hint(g));
    if (err)
        return err;
    for (const send_item_t *it = g->first; it && !err; it = it->next)
        err = pc_md_append_single(out, it->msg, it->seq);
    return err;
}
