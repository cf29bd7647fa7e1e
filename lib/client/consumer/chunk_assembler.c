/*
 * Design notes: owns partially received chunked messages. Chunk 0 opens a
 * context (its entry becomes the assembly buffer, its metadata the
 * message's); later chunks must arrive in order and are appended; the last
 * one completes the message, which is then decoded like any entry
 * (decompressed as a whole). A chunk repeated before its successor is a
 * redelivery and is ignored; a gap abandons the message. Contexts are
 * bounded by count (the oldest is evicted), by total size (checked against
 * the announced total before anything is allocated) and by age. Abandoned
 * chunks are handed back to the consumer to be redelivered, or acked when
 * they can never be assembled. Loop thread only.
 */
#include "client/consumer/chunk_assembler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/loop.h"

struct pc_chunk_ctx {
    pc_chunk_ctx_t *next;
    char *uuid;
    int32_t nchunks, next_chunk;
    size_t total;
    pc_entry_t *entry;                    /* assembly buffer; chunk 0's metadata lives in its arena */
    const Pulsar__Proto__MessageMetadata *md;
    pulsarc_msgid_t *ids;                 /* the chunks received so far */
    int64_t created_ms;
};

struct pc_chunk_done {
    pc_chunk_done_t *next;
    pulsarc_msgid_t last;
    pulsarc_msgid_t *ids;
    size_t n;
};

static void ctx_free(pc_chunk_ctx_t *x) {
    if (x->entry)
        pc_entry_unref(x->entry);
    free(x->uuid);
    free(x->ids);
    free(x);
}

static void unlink_ctx(pc_chunks_t *ch, pc_chunk_ctx_t *x) {
    for (pc_chunk_ctx_t **pp = &ch->pending; *pp; pp = &(*pp)->next) {
        if (*pp == x) {
            *pp = x->next;
            ch->npending--;
            return;
        }
    }
}

/* Gives up on x: its chunks are redelivered (or acked) and it is freed. */
static void abandon(pc_chunks_t *ch, pc_chunk_ctx_t *x, int ack, pc_chunks_drop_fn drop, void *owner) {
    unlink_ctx(ch, x);
    if (x->next_chunk > 0)
        drop(owner, x->ids, (size_t)x->next_chunk, ack);
    ctx_free(x);
}

static void expire_old(pc_chunks_t *ch, pc_chunks_drop_fn drop, void *owner) {
    int64_t now = pc_now_ms();
    while (ch->pending && ch->expire_ms > 0 && now - ch->pending->created_ms > ch->expire_ms)
        abandon(ch, ch->pending, ch->auto_ack_oldest, drop, owner);
}

static pc_chunk_ctx_t *find(pc_chunks_t *ch, const char *uuid) {
    for (pc_chunk_ctx_t *x = ch->pending; x; x = x->next)
        if (strcmp(x->uuid, uuid) == 0)
            return x;
    return NULL;
}

static void append_ctx(pc_chunks_t *ch, pc_chunk_ctx_t *x) {
    pc_chunk_ctx_t **pp = &ch->pending;
    while (*pp)
        pp = &(*pp)->next;
    *pp = x;
    ch->npending++;
}

/* Chunk 0: a new context, after checking what the metadata announces. */
static pc_chunk_ctx_t *open_ctx(pc_chunks_t *ch, pc_rx_result_t *r, pc_rx_result_t *out) {
    const Pulsar__Proto__MessageMetadata *md = r->chunk_meta;
    /* Checked before allocating: a peer may announce anything. */
    if (md->total_chunk_msg_size < 0 || (size_t)md->total_chunk_msg_size > ch->max_bytes ||
        md->num_chunks_from_msg > md->total_chunk_msg_size + 1 || md->num_chunks_from_msg > 100000) {
        snprintf(out->error, sizeof out->error, "chunked message announces %d bytes in %d chunks (limit %zu bytes)",
                 md->total_chunk_msg_size, md->num_chunks_from_msg, ch->max_bytes);
        return NULL;
    }
    pc_chunk_ctx_t *x = calloc(1, sizeof *x);
    if (!x || !(x->uuid = strdup(md->uuid)) ||
        !(x->ids = calloc((size_t)md->num_chunks_from_msg, sizeof *x->ids)) ||
        pc_buf_reserve(&r->chunk_entry->data, (size_t)md->total_chunk_msg_size)) {
        if (x)
            ctx_free(x);
        snprintf(out->error, sizeof out->error, "out of memory assembling a chunked message");
        return NULL;
    }
    x->nchunks = md->num_chunks_from_msg;
    x->total = (size_t)md->total_chunk_msg_size;
    x->entry = r->chunk_entry; /* keeps chunk 0's reference and metadata */
    x->md = md;
    x->created_ms = pc_now_ms();
    r->chunk_entry = NULL;
    return x;
}

static int remember_done(pc_chunks_t *ch, pc_chunk_ctx_t *x) {
    /* A redelivered message replaces what its first delivery left: one record per message. */
    pc_chunks_forget(ch, &x->ids[x->nchunks - 1]);
    pc_chunk_done_t *d = calloc(1, sizeof *d);
    if (!d)
        return -1;
    d->last = x->ids[x->nchunks - 1];
    d->ids = x->ids;
    d->n = (size_t)x->nchunks;
    x->ids = NULL;
    d->next = ch->done;
    ch->done = d;
    return 0;
}

/* The last chunk arrived: decode the assembled entry into out. */
static int complete(pc_chunks_t *ch, pc_chunk_ctx_t *x, const Pulsar__Proto__CommandMessage *cm,
                    const pc_rx_opts_t *o, pc_rx_result_t *out) {
    unlink_ctx(ch, x);
    if (x->entry->data.len != x->total) {
        snprintf(out->error, sizeof out->error, "chunked message has %zu bytes, announced %zu",
                 x->entry->data.len, x->total);
        ctx_free(x);
        return -1;
    }
    pc_entry_t *e = x->entry;
    x->entry = NULL;
    pc_rx_decode_entry(e, x->md, cm, o, out); /* takes e's reference */
    for (pulsarc_msg_t *m = out->first; m; m = m->next)
        m->id = x->ids[x->nchunks - 1]; /* a chunked message is known by its last chunk */
    if (out->n)
        remember_done(ch, x);
    ctx_free(x);
    return out->validation_error == -1 ? 1 : -1;
}

static int add_chunk(pc_chunks_t *ch, pc_chunk_ctx_t *x, pc_rx_result_t *r, const pulsarc_msgid_t *id,
                     pc_rx_result_t *out) {
    if (x->entry->data.len + r->chunk_len > x->total) {
        snprintf(out->error, sizeof out->error, "chunks exceed the announced %zu bytes", x->total);
        return -1;
    }
    if (r->chunk_len)
        memcpy(x->entry->data.data + x->entry->data.len, r->chunk_data, r->chunk_len);
    x->entry->data.len += r->chunk_len;
    x->ids[x->next_chunk++] = *id;
    (void)ch;
    return 0;
}

int pc_chunks_add(pc_chunks_t *ch, pc_rx_result_t *r, const Pulsar__Proto__CommandMessage *cm,
                  const pc_rx_opts_t *o, pc_chunks_drop_fn drop, void *owner, pc_rx_result_t *out) {
    const Pulsar__Proto__MessageMetadata *md = r->chunk_meta;
    pulsarc_msgid_t id = {(int64_t)cm->message_id->ledgerid, (int64_t)cm->message_id->entryid, o->partition, -1, 0};
    memset(out, 0, sizeof *out);
    out->validation_error = -1;
    out->permits = 1;
    out->entry_id = id;
    expire_old(ch, drop, owner);
    pc_chunk_ctx_t *x = md->uuid ? find(ch, md->uuid) : NULL;
    int rc = 0;
    if (!md->uuid || md->chunk_id < 0 || md->chunk_id >= md->num_chunks_from_msg) {
        snprintf(out->error, sizeof out->error, "chunk without a usable uuid or chunk id");
        rc = -1;
    } else if (md->chunk_id == 0) {
        if (x) /* chunk 0 again: a redelivery, start over */
            abandon(ch, x, 0, drop, owner);
        if (ch->npending >= ch->max_pending)
            abandon(ch, ch->pending, ch->auto_ack_oldest, drop, owner);
        x = open_ctx(ch, r, out);
        if (!x)
            rc = -1;
        else if (add_chunk(ch, x, r, &id, out) == 0)
            append_ctx(ch, x);
        else
            ctx_free(x), rc = -1;
    } else if (!x) {
        drop(owner, &id, 1, 1); /* its first chunk is gone: it can never be assembled */
        snprintf(out->error, sizeof out->error, "chunk %d of %s arrived without its first chunk",
                 md->chunk_id, md->uuid);
        rc = -1;
    } else if (md->chunk_id < x->next_chunk) {
        rc = 0; /* duplicate: already have it */
    } else if (md->chunk_id > x->next_chunk || add_chunk(ch, x, r, &id, out)) {
        if (!out->error[0])
            snprintf(out->error, sizeof out->error, "chunk %d of %s out of order (expected %d)",
                     md->chunk_id, md->uuid, x->next_chunk);
        abandon(ch, x, 0, drop, owner);
        rc = -1;
    } else if (x->next_chunk == x->nchunks) {
        rc = complete(ch, x, cm, o, out);
    }
    if (r->chunk_entry)
        pc_entry_unref(r->chunk_entry);
    r->chunk_entry = NULL;
    if (rc < 0 && out->validation_error == -1)
        out->validation_error = -2; /* nothing to ack: dropped on our side */
    return rc;
}

const pulsarc_msgid_t *pc_chunks_ids(pc_chunks_t *ch, const pulsarc_msgid_t *last, size_t *n) {
    for (pc_chunk_done_t *d = ch->done; d; d = d->next) {
        if (d->last.ledger_id == last->ledger_id && d->last.entry_id == last->entry_id) {
            *n = d->n;
            return d->ids;
        }
    }
    *n = 0;
    return NULL;
}

static int same_entry(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b) {
    return a->ledger_id == b->ledger_id && a->entry_id == b->entry_id;
}

static int by_entry(const void *pa, const void *pb) {
    const pulsarc_msgid_t *a = pa, *b = pb;
    if (a->ledger_id != b->ledger_id)
        return a->ledger_id < b->ledger_id ? -1 : 1;
    if (a->entry_id != b->entry_id)
        return a->entry_id < b->entry_id ? -1 : 1;
    return 0;
}

size_t pc_chunks_expand(pc_chunks_t *ch, const pulsarc_msgid_t *ids, size_t n, pulsarc_msgid_t **out) {
    *out = NULL;
    size_t total = 0, k;
    int chunked = 0;
    for (size_t i = 0; i < n; i++) {
        const pulsarc_msgid_t *all = pc_chunks_ids(ch, &ids[i], &k);
        total += all ? k : 1;
        chunked |= all != NULL;
    }
    if (!chunked || !(*out = malloc(total * sizeof **out)))
        return n; /* nothing chunked (or no memory: the last chunks alone, as before) */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const pulsarc_msgid_t *all = pc_chunks_ids(ch, &ids[i], &k);
        if (all) {
            memcpy(*out + m, all, k * sizeof *all);
            m += k;
        } else {
            (*out)[m++] = ids[i];
        }
    }
    /* A chunk named twice (its message nacked as well as timed out) is asked for once. */
    qsort(*out, m, sizeof **out, by_entry);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (!u || !same_entry(&(*out)[u - 1], &(*out)[i]))
            (*out)[u++] = (*out)[i];
    return u;
}

void pc_chunks_forget(pc_chunks_t *ch, const pulsarc_msgid_t *last) {
    for (pc_chunk_done_t **pp = &ch->done; *pp; pp = &(*pp)->next) {
        pc_chunk_done_t *d = *pp;
        if (d->last.ledger_id == last->ledger_id && d->last.entry_id == last->entry_id) {
            *pp = d->next;
            free(d->ids);
            free(d);
            return;
        }
    }
}

void pc_chunks_free(pc_chunks_t *ch) {
    while (ch->pending) {
        pc_chunk_ctx_t *x = ch->pending;
        ch->pending = x->next;
        ctx_free(x);
    }
    while (ch->done) {
        pc_chunk_done_t *d = ch->done;
        ch->done = d->next;
        free(d->ids);
        free(d);
    }
    ch->npending = 0;
}
