/*
 * Design notes: a source = the list of its splits plus the bookkeeping
 * that turns checkpoints into acknowledgements.
 *
 * Splits. Each configured topic becomes one split per partition (-1 for a
 * non-partitioned topic; an explicitly listed partition is one split, and a
 * topic absorbs its listed partitions because splits are unique by (topic,
 * partition)). Discovery runs once at open and then every
 * pulsar.source.partitionDiscoveryIntervalMs from inside fetch; it only
 * adds. Partitions found after the first discovery — and splits a restored
 * checkpoint does not know — start at the start cursor whatever the
 * subscription says. End of input is reported when every known split has
 * finished, even with discovery on (the Flink connector's unbounded
 * source never ends there).
 *
 * Commits. A checkpoint records each split's last emitted id (and, for
 * Shared / Key_Shared, how many emitted ids it covers) under its id.
 * Completion acknowledges them: cumulatively for Exclusive / Failover,
 * one by one for Shared / Key_Shared — or, when the client has
 * transactions, by committing the checkpoint's acknowledgement
 * transaction (source_txn.c) — then forgets that checkpoint and every
 * older one. Ack errors are logged, not fatal: the
 * next completion acknowledges a later position anyway.
 * With pulsar.source.enableAutoAcknowledgeMessage the same commit of the
 * current positions runs every autoCommitCursorInterval from fetch.
 *
 * Parallel readers. A source configured as reader i of N (Flink's subtask
 * i of a source of parallelism N) opens only the splits assign.c gives to
 * i, at open and at every discovery, so the N readers split the partitions
 * among themselves without a coordinator and a new partition is read by one
 * of them. Shared / Key_Shared: the subscription is the one split every
 * reader shares; each reader subscribes to every partition and the broker
 * deals the messages out. The blob a reader writes is stamped "reader i of
 * N" and holds its own splits only. It restores into the same reader, or,
 * once the N blobs are merged (pulsarc_source_checkpoint_merge), into any
 * reader of any count, which takes from the merged blob the splits it owns
 * and the transactions the same rule (on their place in the blob) gives
 * it, so each transaction is settled by exactly one reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/assign.h"
#include "connector/checkpoint.h"
#include "connector/cursor.h"
#include "connector/source_int.h"
#include "core/err.h"
#include "core/topic.h"
#ifdef PULSARC_WITH_CURL
#include "pulsarc/admin.h"
#endif

/* ---------- small utilities ---------- */

int pc_source_owns(const pulsarc_source_t *src, const char *topic, int32_t partition) {
    return pc_source_shared(src) ||
           pc_assign_owner(topic, partition, src->conf.reader_count) == src->conf.reader_index;
}

static pc_split_t *find_split(const pulsarc_source_t *src, const char *topic, int32_t part) {
    for (size_t i = 0; i < src->nsplits; i++)
        if (src->splits[i]->partition == part && !strcmp(src->splits[i]->topic, topic))
            return src->splits[i];
    return NULL;
}

static pulsarc_err_t add_split(pulsarc_source_t *src, const pc_split_open_args_t *a,
                               char *errstr, size_t errlen) {
    if (find_split(src, a->topic, a->partition) || !pc_source_owns(src, a->topic, a->partition))
        return PULSARC_OK;
    if (src->nsplits == src->cap) {
        size_t cap = src->cap ? src->cap * 2 : 8;
        pc_split_t **grown = realloc(src->splits, cap * sizeof *grown);
        if (!grown)
            return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
        src->splits = grown;
        src->cap = cap;
    }
    pc_split_t *s = NULL;
    pulsarc_err_t err = pc_split_open(src, a, &s, errstr, errlen);
    if (!err)
        src->splits[src->nsplits++] = s;
    return err;
}

/* ---------- discovery ---------- */

static pulsarc_err_t discover_topic(pulsarc_source_t *src, const char *name, int later,
                                    char *errstr, size_t errlen) {
    pc_topic_t t;
    pulsarc_err_t err = pc_topic_parse(name, NULL, NULL, &t, errstr, errlen);
    pc_split_open_args_t a = {t.base, t.partition, later, NULL};
    if (err || t.partition >= 0)
        return err ? err : add_split(src, &a, errstr, errlen);
    int n = 0;
    err = pulsarc_client_partitions(src->client, t.full, &n, errstr, errlen);
    if (!err && n == 0)
        err = add_split(src, &a, errstr, errlen);
    for (int p = 0; !err && p < n; p++) {
        a.partition = p;
        err = add_split(src, &a, errstr, errlen);
    }
    return err;
}

/* later: partitions found now start at the start cursor (new partitions). */
static pulsarc_err_t discover(pulsarc_source_t *src, int later, char *errstr, size_t errlen) {
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < src->conf.ntopics && !err; i++)
        err = discover_topic(src, src->conf.topics[i], later, errstr, errlen);
    return err;
}

/* ---------- commits ---------- */

static void pending_free(pc_pending_ckpt_t *p) {
    if (!p)
        return;
    free(p->has_last);
    free(p->last);
    free(p->unacked_upto);
    pc_source_txn_free(p->txn, 0); /* uncompleted: a restore from its checkpoint commits it */
    free(p);
}

/* After the first k unacked ids of split i went out, later checkpoints cover k fewer. */
static void shift_unacked(pulsarc_source_t *src, size_t i, size_t k) {
    pc_split_t *s = src->splits[i];
    memmove(s->unacked.ids, s->unacked.ids + k, (s->unacked.n - k) * sizeof *s->unacked.ids);
    s->unacked.n -= k;
    for (pc_pending_ckpt_t *p = src->ckpts; p; p = p->next)
        if (i < p->n)
            p->unacked_upto[i] = p->unacked_upto[i] > k ? p->unacked_upto[i] - k : 0;
}

static pulsarc_err_t commit_individual(pc_split_t *s, size_t upto) {
    pulsarc_err_t first = PULSARC_OK;
    for (size_t j = 0; j < upto && j < s->unacked.n; j++) {
        pulsarc_err_t err = pulsarc_consumer_ack_id(s->consumer, &s->unacked.ids[j]);
        if (err && !first)
            first = err;
    }
    return first;
}

static void commit_split(pulsarc_source_t *src, size_t i, const pulsarc_msgid_t *last,
                         size_t upto) {
    pc_split_t *s = src->splits[i];
    pulsarc_err_t err;
    if (pc_source_shared(src)) {
        err = commit_individual(s, upto);
        shift_unacked(src, i, upto < s->unacked.n ? upto : s->unacked.n);
    } else {
        err = pulsarc_consumer_ack_cumulative_id(s->consumer, last);
    }
    if (err)
        pc_source_log(src, PULSARC_SOURCE_LOG_WARN, "split %s: acknowledging failed (%s); "
                      "a later commit will cover it", s->name, pulsarc_strerror(err));
}

static void auto_commit(pulsarc_source_t *src) {
    for (size_t i = 0; i < src->nsplits; i++)
        if (src->splits[i]->has_last)
            commit_split(src, i, &src->splits[i]->last, src->splits[i]->unacked.n);
}

void pc_source_run_timers(pulsarc_source_t *src) {
    uint64_t now = pc_source_now_ms();
    if (src->conf.auto_ack && now >= src->next_auto_commit_ms) {
        auto_commit(src);
        src->next_auto_commit_ms = now + (uint64_t)src->conf.auto_commit_ms;
    }
    if (src->conf.discovery_ms > 0 && now >= src->next_discovery_ms) {
        char err[256];
        if (discover(src, 1, err, sizeof err))
            pc_source_log(src, PULSARC_SOURCE_LOG_WARN, "partition discovery failed: %s", err);
        src->next_discovery_ms = now + (uint64_t)src->conf.discovery_ms;
    }
}

/* ---------- checkpoints ---------- */

static pc_pending_ckpt_t *pending_new(const pulsarc_source_t *src, uint64_t id) {
    pc_pending_ckpt_t *p = calloc(1, sizeof *p);
    size_t n = src->nsplits ? src->nsplits : 1;
    if (!p || !(p->has_last = calloc(n, sizeof *p->has_last)) ||
        !(p->last = calloc(n, sizeof *p->last)) ||
        !(p->unacked_upto = calloc(n, sizeof *p->unacked_upto))) {
        pending_free(p);
        return NULL;
    }
    p->id = id;
    p->n = src->nsplits;
    for (size_t i = 0; i < p->n; i++) {
        p->has_last[i] = src->splits[i]->has_last;
        p->last[i] = src->splits[i]->last;
        p->unacked_upto[i] = src->splits[i]->unacked.n;
    }
    return p;
}

static void pending_append(pulsarc_source_t *src, pc_pending_ckpt_t *p) {
    pc_pending_ckpt_t **tail = &src->ckpts;
    while (*tail)
        tail = &(*tail)->next;
    *tail = p;
}

static pulsarc_err_t encode(const pulsarc_source_t *src, const pc_pending_ckpt_t *p,
                            void **blob, size_t *len) {
    pc_ckpt_t ck = {src->nsplits, calloc(src->nsplits ? src->nsplits : 1, sizeof(pc_ckpt_split_t)),
                    0, NULL, src->conf.reader_index, src->conf.reader_count,
                    pc_source_shared(src)};
    pulsarc_err_t err = ck.splits ? pc_source_txn_list(src, p, &ck.txns, &ck.ntxns)
                                  : PULSARC_ERR_NOMEM;
    if (err) {
        free(ck.splits);
        return err;
    }
    for (size_t i = 0; i < src->nsplits; i++) {
        const pc_split_t *s = src->splits[i];
        pc_ckpt_split_t cs = {s->topic,     s->partition, s->has_last,        s->finished, s->last,
                              s->has_floor, s->floor_inclusive, s->floor, s->stop};
        ck.splits[i] = cs;
    }
    uint8_t *out = NULL;
    err = pc_ckpt_encode(&ck, &out, len);
    free(ck.splits); /* the topics are borrowed from the splits */
    free(ck.txns);
    *blob = out;
    return err;
}

pulsarc_err_t pulsarc_source_checkpoint(pulsarc_source_t *src, uint64_t checkpoint_id,
                                        void **blob, size_t *len) {
    if (!src || !blob || !len)
        return PULSARC_ERR_INVALID_ARG;
    pc_pending_ckpt_t *p = pending_new(src, checkpoint_id);
    if (!p)
        return PULSARC_ERR_NOMEM;
    char why[512];
    pulsarc_err_t err = src->txn_mode ? pc_source_txn_checkpoint(src, p, why, sizeof why) : 0;
    if (err)
        pc_source_log(src, PULSARC_SOURCE_LOG_WARN, "checkpoint %llu failed: %s",
                      (unsigned long long)checkpoint_id, why);
    if (!err)
        err = encode(src, p, blob, len);
    if (err && p->txn) { /* named by no blob: undo it now rather than at its timeout */
        pc_source_txn_free(p->txn, 1);
        p->txn = NULL;
    }
    if (err) {
        pending_free(p);
    } else {
        pc_source_txn_checkpointed(src, p);
        pending_append(src, p);
    }
    return err;
}

pulsarc_err_t pulsarc_source_checkpoint_complete(pulsarc_source_t *src, uint64_t checkpoint_id) {
    if (!src)
        return PULSARC_ERR_INVALID_ARG;
    pc_pending_ckpt_t *p = src->ckpts;
    while (p && p->id != checkpoint_id)
        p = p->next;
    if (!p) {
        pc_source_log(src, PULSARC_SOURCE_LOG_WARN, "checkpoint %llu is unknown or already "
                      "completed; nothing to commit", (unsigned long long)checkpoint_id);
        return PULSARC_ERR_NOT_FOUND;
    }
    for (size_t i = 0; i < p->n; i++)
        if (p->has_last[i])
            commit_split(src, i, &p->last[i], p->unacked_upto[i]);
    /* Commit (transactional Shared) and forget this checkpoint and every one before it. */
    pulsarc_err_t first = PULSARC_OK;
    while (src->ckpts) {
        pc_pending_ckpt_t *q = src->ckpts;
        int last = q == p;
        src->ckpts = q->next;
        pulsarc_err_t err = pc_source_txn_commit(src, q);
        if (err && !first)
            first = err;
        pending_free(q);
        if (last)
            break;
    }
    return first;
}

/* ---------- lifecycle ---------- */

/* A blob of reader i of N restores into that reader only; a merged one into any. */
static pulsarc_err_t check_reader(const pulsarc_source_t *src, const pc_ckpt_t *ck,
                                  char *errstr, size_t errlen) {
    if (ck->readers == 1 ||
        (ck->readers == src->conf.reader_count && ck->reader == src->conf.reader_index))
        return PULSARC_OK;
    return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                     "the checkpoint is reader %u of %u's, this source is reader %u of %u: "
                     "merge the checkpoints of all %u readers first "
                     "(pulsarc_source_checkpoint_merge)", ck->reader, ck->readers,
                     src->conf.reader_index, src->conf.reader_count, ck->readers);
}

/* 1 when (topic, partition) is one of the configured topics or one of their partitions. */
static int configured(const pulsarc_source_t *src, const char *topic, int32_t partition) {
    for (size_t i = 0; i < src->conf.ntopics; i++) {
        pc_topic_t t;
        if (pc_topic_parse(src->conf.topics[i], NULL, NULL, &t, NULL, 0) == PULSARC_OK &&
            !strcmp(t.base, topic) && (t.partition < 0 || t.partition == partition))
            return 1;
    }
    return 0;
}

/* Every split of the blob must belong to this source's topics, and appear once. */
static pulsarc_err_t check_splits(const pulsarc_source_t *src, const pc_ckpt_t *ck,
                                  char *errstr, size_t errlen) {
    for (size_t i = 0; i < ck->n; i++) {
        const pc_ckpt_split_t *s = &ck->splits[i];
        if (!configured(src, s->topic, s->partition))
            return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                             "checkpoint split %s partition %d is not among this source's topics: "
                             "the checkpoint was taken on another topic set", s->topic,
                             (int)s->partition);
        for (size_t j = 0; j < i; j++)
            if (ck->splits[j].partition == s->partition && !strcmp(ck->splits[j].topic, s->topic))
                return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                                 "checkpoint split %s partition %d appears twice (claimed by two "
                                 "readers?)", s->topic, (int)s->partition);
    }
    return PULSARC_OK;
}

/* Keeps the transactions this reader settles: the k-th goes to reader k mod count. */
static void keep_own_txns(const pulsarc_source_t *src, pc_ckpt_t *ck) {
    if (ck->readers != 1 || src->conf.reader_count == 1)
        return; /* a reader's own blob: all its transactions are its own */
    size_t kept = 0;
    for (size_t k = 0; k < ck->ntxns; k++)
        if (k % src->conf.reader_count == src->conf.reader_index)
            ck->txns[kept++] = ck->txns[k];
    ck->ntxns = kept;
}

static pulsarc_err_t restore(pulsarc_source_t *src, const void *blob, size_t len, char *errstr,
                             size_t errlen) {
    pc_ckpt_t ck;
    pulsarc_err_t err = pc_ckpt_decode(blob, len, &ck, errstr, errlen);
    if (!err)
        err = check_reader(src, &ck, errstr, errlen);
    if (!err)
        err = check_splits(src, &ck, errstr, errlen);
    if (!err)
        keep_own_txns(src, &ck);
    /* Settled before subscribing, so no acknowledgement is still in doubt
     * when the broker starts delivering. */
    if (!err)
        err = pc_source_txn_restore(src, &ck, errstr, errlen);
    for (size_t i = 0; !err && i < ck.n; i++) {
        pc_split_open_args_t a = {ck.splits[i].topic, ck.splits[i].partition, 0, &ck.splits[i]};
        err = add_split(src, &a, errstr, errlen);
    }
    if (!err)
        pc_source_log(src, PULSARC_SOURCE_LOG_INFO, "restored %zu of the checkpoint's %zu splits",
                      src->nsplits, ck.n);
    pc_ckpt_free(&ck);
    return err;
}

pulsarc_err_t pulsarc_source_checkpoint_merge(const void *const *blobs, const size_t *lens,
                                              size_t n, void **out, size_t *out_len,
                                              char *errstr, size_t errlen) {
    if (!blobs || !lens || !out || !out_len || n == 0 || n > PC_CKPT_MAX_READERS)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "merge: blobs, lens, out and out_len are required, n from 1 to %d",
                         PC_CKPT_MAX_READERS);
    pc_ckpt_t *cks = calloc(n, sizeof *cks), merged;
    if (!cks)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = PULSARC_OK;
    char why[384] = "";
    for (size_t i = 0; i < n && !err; i++)
        if ((err = pc_ckpt_decode(blobs[i], lens[i], &cks[i], why, sizeof why)))
            pc_seterr(errstr, errlen, err, "checkpoint %zu: %s", i, why);
    if (!err)
        err = pc_ckpt_merge(cks, n, &merged, errstr, errlen);
    if (!err) {
        uint8_t *buf = NULL;
        if ((err = pc_ckpt_encode(&merged, &buf, out_len)))
            pc_seterr(errstr, errlen, err, "merge: cannot encode the merged checkpoint");
        *out = buf;
        pc_ckpt_free(&merged);
    }
    for (size_t i = 0; i < n; i++)
        pc_ckpt_free(&cks[i]);
    free(cks);
    return err;
}

int pulsarc_source_split_owner(const char *topic, int32_t partition, uint32_t readers) {
    pc_topic_t t;
    if (!topic || readers == 0 || partition < -1 ||
        pc_topic_parse(topic, NULL, NULL, &t, NULL, 0) != PULSARC_OK)
        return -1;
    if (partition < 0)
        partition = t.partition;
    return (int)pc_assign_owner(t.base, partition, readers);
}

static pulsarc_err_t check_conf(const pulsarc_source_conf_t *c, char *errstr, size_t errlen) {
    if (!c->sub_name || !*c->sub_name)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "pulsar.consumer.subscriptionName is required");
    if (c->ntopics == 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG, "no topics to read");
    if (c->schema_evolution && !c->schema_type)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "pulsar.source.enableSchemaEvolution needs pulsar.source.schemaType "
                         "(the schema the application reads)");
    if (!c->schema_evolution && (c->schema_type || c->schema_def))
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "pulsar.source.schemaType / schemaDefinition are only declared with "
                         "pulsar.source.enableSchemaEvolution=true");
    return PULSARC_OK;
}

/* A bad schemaType or definition fails here, before any split subscribes. */
static pulsarc_err_t check_schema(const pulsarc_source_t *src, char *errstr, size_t errlen) {
    pulsarc_conf_t *cc;
    char why[384] = "";
    pulsarc_err_t err = pc_split_consumer_conf(src, &cc, why, sizeof why);
    if (!err) {
        err = pulsarc_conf_check_schema(cc, why, sizeof why);
        pulsarc_conf_destroy(cc);
    }
    if (err)
        return pc_seterr(errstr, errlen, err, "pulsar.source.schemaType/schemaDefinition: %s", why);
    return PULSARC_OK;
}

static pulsarc_err_t open_splits(pulsarc_source_t *src, const void *ckpt, size_t len,
                                 char *errstr, size_t errlen) {
    pulsarc_err_t err = ckpt ? restore(src, ckpt, len, errstr, errlen) : PULSARC_OK;
    /* Splits a checkpoint does not know are partitions added since: start cursor. */
    if (!err)
        err = discover(src, ckpt != NULL, errstr, errlen);
    return err;
}

pulsarc_err_t pulsarc_source_new(pulsarc_client_t *client, const pulsarc_source_conf_t *conf,
                                 const void *checkpoint, size_t checkpoint_len,
                                 pulsarc_source_t **out, char *errstr, size_t errlen) {
    if (!client || !conf || !out)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "client, conf and out are required");
    pulsarc_err_t err = check_conf(conf, errstr, errlen);
    pulsarc_source_t *src = err ? NULL : calloc(1, sizeof *src);
    if (!err && !src)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (!err && pc_source_conf_copy(&src->conf, conf)) {
        free(src);
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    if (err)
        return err;
    src->client = client;
    src->txn_mode = pc_source_txn_mode(src);
    if (pc_source_shared(src) && !conf->auto_ack)
        pc_source_log(src, PULSARC_SOURCE_LOG_INFO, "checkpoints commit acknowledgements %s",
                      src->txn_mode ? "in one transaction each"
                                    : "one by one (the client has no transactions)");
    uint64_t now = pc_source_now_ms();
    src->next_discovery_ms = now + (uint64_t)(conf->discovery_ms > 0 ? conf->discovery_ms : 0);
    src->next_auto_commit_ms = now + (uint64_t)conf->auto_commit_ms;
    err = check_schema(src, errstr, errlen);
    if (!err)
        err = open_splits(src, checkpoint, checkpoint_len, errstr, errlen);
    if (err) {
        pulsarc_source_destroy(src);
        return err;
    }
    *out = src;
    return PULSARC_OK;
}

int pulsarc_source_is_finished(const pulsarc_source_t *src) {
    /* a reader with no split yet, unbounded, may still be given one by discovery */
    if (src && src->nsplits == 0 && src->conf.discovery_ms > 0 &&
        src->conf.stop.kind == PULSARC_STOP_NEVER)
        return 0;
    for (size_t i = 0; src && i < src->nsplits; i++)
        if (!src->splits[i]->finished)
            return 0;
    return 1;
}

void pulsarc_source_destroy(pulsarc_source_t *src) {
    if (!src)
        return;
    for (size_t i = 0; i < src->nsplits; i++)
        pc_split_destroy(src->splits[i]);
    free(src->splits);
    pc_source_txn_free(src->reserved, 1); /* empty: nothing to lose */
    while (src->ckpts) {
        pc_pending_ckpt_t *q = src->ckpts;
        src->ckpts = q->next;
        pending_free(q);
    }
#ifdef PULSARC_WITH_CURL
    pulsarc_admin_destroy(src->admin);
#endif
    pc_source_conf_clear(&src->conf);
    free(src);
}

/* ---------- metrics ---------- */

size_t pulsarc_source_split_count(const pulsarc_source_t *src) {
    return src ? src->nsplits : 0;
}

static int64_t entry_lag(pc_split_t *s) {
    pulsarc_msgid_t end;
    if (pulsarc_consumer_last_message_id(s->consumer, &end))
        return -1;
    if (end.entry_id < 0)
        return 0; /* an empty topic has nothing to catch up */
    if (!s->has_last)
        return -1;
    if (end.ledger_id != s->last.ledger_id)
        return -1; /* entries of other ledgers cannot be counted from ids */
    return end.entry_id - s->last.entry_id;
}

pulsarc_err_t pulsarc_source_split_metrics(pulsarc_source_t *src, size_t i,
                                           pulsarc_source_split_metrics_t *out) {
    if (!src || !out || i >= src->nsplits)
        return PULSARC_ERR_INVALID_ARG;
    if (!src->conf.metrics)
        return PULSARC_ERR_UNSUPPORTED;
    pc_split_t *s = src->splits[i];
    memset(out, 0, sizeof *out);
    out->topic = s->topic;
    out->partition = s->partition;
    out->finished = s->finished;
    out->emitted = s->emitted;
    out->emitted_bytes = s->emitted_bytes;
    out->dropped = s->dropped;
    out->last_emitted = s->has_last ? s->last : pulsarc_msgid_earliest();
    out->lag_entries = entry_lag(s);
    out->lag_ms = s->has_last ? (int64_t)(pc_source_now_ms() - s->last_publish_time) : -1;
    return PULSARC_OK;
}
