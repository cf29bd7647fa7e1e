/*
 * Design notes: the acknowledgement transactions of a Shared / Key_Shared
 * source.
 *
 * Used when the subscription is Shared or Key_Shared, auto-acknowledge is
 * off and the client has enableTransaction=true. Such a subscription has
 * no position to seek back to, so what a checkpoint covers has to be
 * acknowledged atomically with the checkpoint's completion, and undone if
 * the application goes back to an older checkpoint.
 *
 * One transaction per checkpoint epoch, reserved one epoch ahead (as the
 * sink does, sink_txn.c):
 *   reserved   opened at checkpoint N-1 and named in blob N-1 as "abort";
 *              empty until checkpoint N;
 *   committing at checkpoint N every id emitted since N-1 is acknowledged
 *              in it, all requests in flight at once (one round trip, not
 *              one per message); blob N names it as "commit";
 *   committed  by pulsarc_source_checkpoint_complete(N) for every epoch <= N.
 * Restored from blob N, a source commits what N covers (those messages are
 * in the application's state) and aborts the epoch after it, whose
 * messages the broker then delivers again. Acks only ever happen inside a
 * checkpoint call, so between checkpoints nothing is pending in any
 * transaction and a crash simply leaves the messages unacknowledged.
 *
 * Ids are de-duplicated before acknowledging (a redelivered message is
 * emitted, and recorded, again), because the broker refuses a second ack
 * of a position already pending in a transaction. An id the broker
 * answers with TransactionConflict is acknowledged elsewhere already
 * (another consumer of the subscription took a redelivered copy): it is
 * dropped and counted, and does not fail the checkpoint.
 *
 * Failures: any other failed acknowledgement fails the checkpoint and
 * aborts that transaction; the ids stay pending for the next checkpoint,
 * and the broker may deliver some of them again meanwhile (at-least-once
 * for that epoch, never loss). So does a blob that cannot be written
 * after the acks went through. A commit that fails at completion is
 * reported and its messages come back after the abort or timeout, never
 * lost. On restore a "commit" transaction the coordinator no longer knows
 * was committed by the previous source in all likelihood (it forgets
 * ended transactions), so it is logged, not fatal.
 *
 * Windows no blob covers: the very first checkpoint of a fresh source (no
 * earlier blob names its transaction), and a checkpoint after the
 * reservation failed. If the application dies after such a checkpoint
 * call and before it stored the blob, that epoch's acks hold its messages
 * until transactionTimeoutMillis; they are delayed, not lost. The same
 * holds for uncompleted checkpoints of a source destroyed and never
 * restored.
 *
 * Thread: the application's, through the source's calls (the source is
 * not thread-safe).
 */
#include <stdlib.h>
#include <string.h>

#include "connector/checkpoint.h"
#include "connector/source_int.h"
#include "connector/txn_open.h"
#include "core/err.h"

int pc_source_txn_mode(const pulsarc_source_t *src) {
    return pc_source_shared(src) && !src->conf.auto_ack && pulsarc_client_txn_enabled(src->client);
}

static pulsarc_err_t open_txn(pulsarc_source_t *src, pc_src_txn_t **out, char *errstr,
                              size_t errlen) {
    pc_src_txn_t *t = calloc(1, sizeof *t);
    if (!t)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = pc_connector_txn_open(src->client, src->conf.txn_timeout_ms, &t->txn,
                                              &t->most, &t->least, errstr, errlen);
    if (err) {
        free(t);
        return err;
    }
    *out = t;
    return PULSARC_OK;
}

void pc_source_txn_free(pc_src_txn_t *t, int abort) {
    if (!t)
        return;
    if (abort)
        pulsarc_txn_destroy(t->txn); /* aborts it while open */
    else
        pulsarc_txn_release(t->txn); /* a restore from its checkpoint commits it */
    free(t);
}

/* ---------- checkpoint ---------- */

static size_t pending_ids(const pulsarc_source_t *src) {
    size_t n = 0;
    for (size_t i = 0; i < src->nsplits; i++)
        n += src->splits[i]->unacked.n;
    return n;
}

static int id_order(const void *a, const void *b) {
    const pulsarc_msgid_t *x = a, *y = b;
    if (x->ledger_id != y->ledger_id)
        return x->ledger_id < y->ledger_id ? -1 : 1;
    if (x->entry_id != y->entry_id)
        return x->entry_id < y->entry_id ? -1 : 1;
    return (x->batch_index > y->batch_index) - (x->batch_index < y->batch_index);
}

/* Sorts and drops repeated ids (redeliveries emitted twice). */
static void dedup(pc_idvec_t *v) {
    if (v->n < 2)
        return;
    qsort(v->ids, v->n, sizeof *v->ids, id_order);
    size_t k = 1;
    for (size_t i = 1; i < v->n; i++)
        if (id_order(&v->ids[i], &v->ids[k - 1]))
            v->ids[k++] = v->ids[i];
    v->n = k;
}

/* TransactionConflict on one id: acknowledged elsewhere already, not our failure. */
static size_t count_conflicts(const pulsarc_err_t *errs, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += errs[i] == PULSARC_ERR_BROKER_TXN_CONFLICT;
    return k;
}

static pulsarc_err_t ack_split(pulsarc_source_t *src, pc_split_t *s, pc_src_txn_t *t,
                               char *errstr, size_t errlen) {
    dedup(&s->unacked);
    pulsarc_err_t *errs = calloc(s->unacked.n, sizeof *errs);
    pulsarc_err_t err = PULSARC_ERR_NOMEM;
    size_t conflicts = 0;
    if (errs) { /* only a real failure dooms the commit, not a conflict */
        err = pulsarc_consumer_ack_ids_txn_each(s->consumer, t->txn, s->unacked.ids,
                                                s->unacked.n, errs);
        conflicts = count_conflicts(errs, s->unacked.n);
    }
    free(errs);
    if (conflicts)
        pc_source_log(src, PULSARC_SOURCE_LOG_WARN, "split %s: %zu of %zu messages were "
                      "acknowledged by another consumer already (redelivered copies)", s->name,
                      conflicts, s->unacked.n);
    if (err)
        return pc_seterr(errstr, errlen, err, "split %s: acknowledging %zu messages in the "
                         "checkpoint's transaction failed: %s", s->name, s->unacked.n,
                         pulsarc_strerror(err));
    return PULSARC_OK;
}

static pulsarc_err_t ack_all(pulsarc_source_t *src, pc_src_txn_t *t, char *errstr, size_t errlen) {
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < src->nsplits && !err; i++)
        if (src->splits[i]->unacked.n)
            err = ack_split(src, src->splits[i], t, errstr, errlen);
    return err;
}

pulsarc_err_t pc_source_txn_checkpoint(pulsarc_source_t *src, pc_pending_ckpt_t *p,
                                       char *errstr, size_t errlen) {
    pulsarc_err_t err = PULSARC_OK;
    if (pending_ids(src)) {
        if (!src->reserved)
            err = open_txn(src, &src->reserved, errstr, errlen);
        if (!err && (err = ack_all(src, src->reserved, errstr, errlen)) != PULSARC_OK) {
            pc_source_txn_free(src->reserved, 1);
            src->reserved = NULL;
        }
        if (err)
            return err;
        p->txn = src->reserved;
        src->reserved = NULL;
    }
    /* The next epoch's, named now so that a restore from here can abort it. */
    char why[256];
    if (!src->reserved && open_txn(src, &src->reserved, why, sizeof why))
        pc_source_log(src, PULSARC_SOURCE_LOG_WARN, "opening the next checkpoint's transaction "
                      "failed (%s); the next checkpoint tries again", why);
    return PULSARC_OK;
}

void pc_source_txn_checkpointed(pulsarc_source_t *src, pc_pending_ckpt_t *p) {
    if (!p->txn)
        return;
    for (size_t i = 0; i < src->nsplits; i++)
        src->splits[i]->unacked.n = 0; /* now the transaction's */
    memset(p->unacked_upto, 0, p->n * sizeof *p->unacked_upto);
}

/* Every transaction blob p must name: pending ones and p's to commit, the reserved one to abort. */
pulsarc_err_t pc_source_txn_list(const pulsarc_source_t *src, const pc_pending_ckpt_t *p,
                                 pc_ckpt_txn_t **out, size_t *n) {
    size_t cap = 2;
    for (const pc_pending_ckpt_t *q = src->ckpts; q; q = q->next)
        cap++;
    pc_ckpt_txn_t *v = calloc(cap, sizeof *v);
    if (!v)
        return PULSARC_ERR_NOMEM;
    size_t k = 0;
    for (const pc_pending_ckpt_t *q = src->ckpts; q; q = q->next)
        if (q->txn)
            v[k++] = (pc_ckpt_txn_t){q->txn->most, q->txn->least, 1};
    if (p && p->txn)
        v[k++] = (pc_ckpt_txn_t){p->txn->most, p->txn->least, 1};
    if (src->reserved)
        v[k++] = (pc_ckpt_txn_t){src->reserved->most, src->reserved->least, 0};
    if (k > PC_CKPT_MAX_TXNS) {
        free(v);
        return PULSARC_ERR_STATE; /* over a thousand checkpoints never completed */
    }
    *out = v;
    *n = k;
    return PULSARC_OK;
}

/* ---------- completion ---------- */

pulsarc_err_t pc_source_txn_commit(pulsarc_source_t *src, pc_pending_ckpt_t *q) {
    if (!q->txn)
        return PULSARC_OK;
    char why[256] = "";
    pulsarc_err_t err = pulsarc_txn_commit(q->txn->txn, why, sizeof why);
    if (err)
        pc_source_log(src, PULSARC_SOURCE_LOG_WARN, "checkpoint %llu: committing its "
                      "acknowledgements failed (%s: %s); its messages will be delivered again",
                      (unsigned long long)q->id, pulsarc_strerror(err), why);
    pc_source_txn_free(q->txn, 1);
    q->txn = NULL;
    return err;
}

/* ---------- restore ---------- */

static pulsarc_err_t end_one(pulsarc_source_t *src, const pc_ckpt_txn_t *t, char *errstr,
                             size_t errlen) {
    pulsarc_txn_t *h = NULL;
    char why[256] = "";
    pulsarc_err_t err = pulsarc_txn_resume(src->client, t->most, t->least, &h, why, sizeof why);
    if (!err) {
        err = t->commit ? pulsarc_txn_commit(h, why, sizeof why) : pulsarc_txn_abort(h, why, sizeof why);
        pulsarc_txn_release(h);
    }
    if (err == PULSARC_ERR_BROKER_TXN_NOT_FOUND || err == PULSARC_ERR_BROKER_INVALID_TXN_STATUS) {
        /* Not found: ended long enough ago to be forgotten, committed by the
         * previous source in all likelihood. Invalid status on a commit: it
         * was aborted, so its messages come again (duplicates, not loss). */
        int aborted = t->commit && err == PULSARC_ERR_BROKER_INVALID_TXN_STATUS;
        pc_source_log(src, aborted ? PULSARC_SOURCE_LOG_WARN : PULSARC_SOURCE_LOG_INFO,
                      "restore: transaction (%llu,%llu) had already ended (%s)%s",
                      (unsigned long long)t->most, (unsigned long long)t->least,
                      pulsarc_strerror(err), aborted ? "; its messages will come again" : "");
        return PULSARC_OK;
    }
    if (err)
        return pc_seterr(errstr, errlen, err, "restore: %s of transaction (%llu,%llu) failed: %s",
                         t->commit ? "commit" : "abort", (unsigned long long)t->most,
                         (unsigned long long)t->least, why);
    return PULSARC_OK;
}

pulsarc_err_t pc_source_txn_restore(pulsarc_source_t *src, const pc_ckpt_t *ck, char *errstr,
                                    size_t errlen) {
    if (ck->ntxns && !pulsarc_client_txn_enabled(src->client))
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "the checkpoint holds %zu acknowledgement transactions; restoring it "
                         "needs a client with enableTransaction=true", ck->ntxns);
    /* Commits first, in checkpoint order; then the reserved epoch's abort. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < ck->ntxns; i++) {
            if (ck->txns[i].commit != (pass == 0))
                continue;
            pulsarc_err_t err = end_one(src, &ck->txns[i], errstr, errlen);
            if (err)
                return err;
        }
    return PULSARC_OK;
}
