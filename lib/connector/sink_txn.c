/*
 * Design notes: the EXACTLY_ONCE transactions of the sink.
 *
 * One transaction per sink per checkpoint epoch, across every topic it
 * writes, not one per partition: a checkpoint
 * then commits one thing, and a restore has one thing to resolve per
 * epoch.
 *
 * Life of a transaction:
 *   reserved   opened at checkpoint N-1, unused: its id is in blob N-1
 *              (as "abort") before it ever holds a message;
 *   open       the current epoch's: from checkpoint N-1 it takes every
 *              write (the very first one is opened by the first write);
 *   committing checkpoint N closes it (after the flush, so it holds every
 *              message written before N) and records it in blob N (as
 *              "commit");
 *   committed  by pulsarc_sink_checkpoint_complete(N) for every epoch <= N.
 * Why reserve one epoch ahead: a sink killed after checkpoint N but before
 * that checkpoint completed is restored from blob N-1, and the transaction
 * holding its last writes is epoch N+1's, opened at checkpoint N. Had it
 * been opened there, blob N-1 could not name it, it would stay open until
 * its timeout, and readers could not pass its first message (the broker's
 * max read position): the Flink connector's transaction leak. Opened
 * at N-1 instead, it is in blob N-1 and gets aborted. So every transaction
 * that ever holds a message is named in the blob before it and in its own:
 * whichever of the two the application restores from, the restored sink
 * commits what that checkpoint covers and aborts the rest. A reserved
 * transaction that is never used costs nothing: it touches no topic, so
 * it blocks no reader. The price is lifetime: a transaction must outlive
 * about three checkpoint intervals plus the commit, which
 * pulsar.sink.transactionTimeoutMillis has to allow. The first epoch of a
 * fresh sink is not named anywhere (there is no blob yet); a sink killed
 * before its first checkpoint leaves it to the timeout.

 * Failures are never taken for success: a commit the broker
 * refuses because the transaction ended (timed out: InvalidTxnStatus /
 * TransactionNotFound on a transaction this sink still holds) is reported
 * as lost. Retriable failures (timeouts, lost connections) are retried up
 * to pulsar.sink.maxRecommitTimes. On restore, TransactionNotFound for a
 * "commit" entry is the one ambiguous answer: the coordinator forgets
 * ended transactions, committed or aborted (by a timeout) alike. So it is
 * checked, not assumed: every partition's transaction buffer remembers the
 * transactions aborted on it (and those still open), so the admin API is
 * asked about each partition the sink writes. An abort recorded anywhere
 * fails the restore naming the partition (the messages are lost: keep
 * transactionTimeoutMillis well above checkpoint interval + restart time);
 * none recorded means it committed (usually: the previous sink committed it
 * and died before its next checkpoint). No answer fails the restore too.
 *
 * An epoch with no message is not committed but aborted at its checkpoint:
 * there is nothing to lose, and an idle sink must not fail because an
 * empty transaction timed out.
 *
 * Close aborts the open (uncheckpointed) transaction and leaves the
 * committing ones alone: a restore from their checkpoint commits them, a
 * restore from the one before aborts them.
 */
#include <stdlib.h>
#include <string.h>

#include "connector/sink_int.h"
#include "connector/txn_open.h"
#include "core/err.h"
#ifdef PULSARC_WITH_CURL
#include "pulsarc/admin.h"
#endif

struct pc_sink_txn {
    pulsarc_txn_t *txn;
    uint64_t most, least;
    uint64_t checkpoint_id; /* committing: the checkpoint that closed it */
    uint64_t sends;
};

/* ---------- resolving a transaction known only by id ---------- */

/*
 * Commits or aborts (most, least) without a handle, for a restored blob.
 * The public API has no way to resume a transaction by id yet, so this
 * asks the client's coordinator directly; it is the one place to switch to
 * pulsarc_txn_resume() (or an end-by-id call) once include/pulsarc.h has it.
 */
static pulsarc_err_t end_by_id(pulsarc_sink_t *sk, uint64_t most, uint64_t least, int commit,
                               char *errstr, size_t errlen) {
    pulsarc_txn_t *t = NULL;
    pulsarc_err_t err = pulsarc_txn_resume(sk->client, most, least, &t, errstr, errlen);
    if (err)
        return err;
    err = commit ? pulsarc_txn_commit(t, errstr, errlen) : pulsarc_txn_abort(t, errstr, errlen);
    pulsarc_txn_release(t); /* ended (or to be retried): never abort behind the caller's back */
    return err;
}

/* The transaction is over and nothing we do can commit it any more. */
static int txn_gone(pulsarc_err_t err) {
    return err == PULSARC_ERR_BROKER_TXN_NOT_FOUND || err == PULSARC_ERR_BROKER_INVALID_TXN_STATUS;
}

/* pulsarc_txn_commit: STATE = a send in it failed, so it aborted instead. */
static int commit_gone(pulsarc_err_t err) {
    return txn_gone(err) || err == PULSARC_ERR_STATE;
}

static pulsarc_err_t with_retries(pulsarc_sink_t *sk, uint64_t most, uint64_t least,
                                  int commit, char *errstr, size_t errlen) {
    pulsarc_err_t err;
    int tries = 0;
    do
        err = end_by_id(sk, most, least, commit, errstr, errlen);
    while (err && pulsarc_err_is_retriable(err) && tries++ < sk->s.opts.max_recommit);
    return err;
}

#ifdef PULSARC_WITH_CURL
/* What one partition recorded: 0 nothing (committed, or never written there). */
static pulsarc_err_t partition_verdict(pulsarc_admin_t *a, const char *part,
                                       const pc_sink_txn_ref_t *r, const char **verdict,
                                       size_t *answered, char *errstr, size_t errlen) {
    int aborted = 0, ongoing = 0;
    char why[384] = "";
    pulsarc_err_t err = pulsarc_admin_txn_in_buffer(a, part, r->most, r->least, &aborted,
                                                    &ongoing, why, sizeof why);
    *verdict = aborted ? "was aborted (the broker recorded the abort; its messages are lost)"
             : ongoing ? "is still open there although the coordinator no longer knows it"
                       : NULL;
    if (err == PULSARC_ERR_NOT_FOUND)
        return PULSARC_OK; /* never written (created on first use): the transaction was not here */
    if (err)
        pc_seterr(errstr, errlen, err, "%s", why);
    else
        (*answered)++;
    return err;
}

static pulsarc_err_t admin_for(const pulsarc_sink_t *sk, pulsarc_admin_t **a, char *errstr,
                               size_t errlen) {
    pulsarc_conf_t *c = pulsarc_conf_new();
    if (!c)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = PULSARC_OK;
    if (sk->s.admin_url)
        err = pulsarc_conf_set(c, "webServiceUrl", sk->s.admin_url, errstr, errlen);
    if (!err)
        err = pulsarc_admin_new(c, a, errstr, errlen);
    pulsarc_conf_destroy(c);
    return err;
}

/* The coordinator forgot r: committed, or aborted? Asks every partition the sink writes. */
static pulsarc_err_t check_forgotten(pulsarc_sink_t *sk, const pc_sink_txn_ref_t *r,
                                     char *errstr, size_t errlen) {
    pulsarc_admin_t *a = NULL;
    char why[448] = "";
    const char *verdict = NULL, *where = NULL;
    size_t answered = 0;
    pulsarc_err_t err = admin_for(sk, &a, why, sizeof why);
    for (size_t i = 0; !err && !verdict && i < sk->routes.n; i++) {
        where = sk->routes.names[i];
        err = partition_verdict(a, where, r, &verdict, &answered, why, sizeof why);
    }
    pulsarc_admin_destroy(a);
    if (!err && !answered)
        err = pc_seterr(why, sizeof why, PULSARC_ERR_NOT_FOUND,
                        "none of the sink's %zu partitions exists", sk->routes.n);
    if (err)
        return pc_seterr(errstr, errlen, err,
                         "sink restore: transaction (%llu,%llu) of checkpoint %llu is unknown to "
                         "the coordinator, and whether it committed cannot be told: admin API: %s",
                         (unsigned long long)r->most, (unsigned long long)r->least,
                         (unsigned long long)r->checkpoint_id, why);
    if (verdict)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BROKER_TXN_NOT_FOUND,
                         "sink restore: transaction (%llu,%llu) of checkpoint %llu %s "
                         "(partition %s)", (unsigned long long)r->most,
                         (unsigned long long)r->least, (unsigned long long)r->checkpoint_id,
                         verdict, where);
    pthread_mutex_lock(&sk->lock);
    sk->txn_found_committed++;
    pthread_mutex_unlock(&sk->lock);
    return PULSARC_OK;
}
#else
static pulsarc_err_t check_forgotten(pulsarc_sink_t *sk, const pc_sink_txn_ref_t *r,
                                     char *errstr, size_t errlen) {
    (void)sk;
    return pc_seterr(errstr, errlen, PULSARC_ERR_UNSUPPORTED,
                     "sink restore: transaction (%llu,%llu) of checkpoint %llu is unknown to the "
                     "coordinator; built without libcurl, the admin API cannot tell whether it "
                     "committed", (unsigned long long)r->most, (unsigned long long)r->least,
                     (unsigned long long)r->checkpoint_id);
}
#endif

static pulsarc_err_t restore_one(pulsarc_sink_t *sk, const pc_sink_txn_ref_t *r, char *errstr,
                                 size_t errlen) {
    int commit = r->fate == PC_SINK_TXN_COMMIT;
    pulsarc_err_t err = with_retries(sk, r->most, r->least, commit, errstr, errlen);
    if (commit && err == PULSARC_ERR_BROKER_TXN_NOT_FOUND)
        return check_forgotten(sk, r, errstr, errlen);
    if (!err || (!commit && txn_gone(err))) {
        pthread_mutex_lock(&sk->lock);
        if (!err)
            *(commit ? &sk->txn_committed : &sk->txn_aborted) += 1;
        pthread_mutex_unlock(&sk->lock);
        return PULSARC_OK;
    }
    return pc_seterr(errstr, errlen, err,
                     "sink restore: %s of transaction (%llu,%llu) of checkpoint %llu failed: %s",
                     commit ? "commit" : "abort", (unsigned long long)r->most,
                     (unsigned long long)r->least, (unsigned long long)r->checkpoint_id,
                     err == PULSARC_ERR_BROKER_INVALID_TXN_STATUS
                         ? "the broker already aborted it (messages lost)"
                         : pulsarc_strerror(err));
}

pulsarc_err_t pc_sink_txn_restore(pulsarc_sink_t *sk, const pc_sink_state_t *st,
                                  char *errstr, size_t errlen) {
    /* Commits first, in checkpoint order, then aborts: order only matters
     * for readers, who then see epochs appear in the order written. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < st->ntxns; i++) {
            if ((st->txns[i].fate == PC_SINK_TXN_COMMIT) != (pass == 0))
                continue;
            pulsarc_err_t err = restore_one(sk, &st->txns[i], errstr, errlen);
            if (err)
                return err;
        }
    return PULSARC_OK;
}

/* ---------- the open transaction ---------- */

static pulsarc_err_t open_txn(pulsarc_sink_t *sk, pc_sink_txn_t **slot, char *errstr,
                              size_t errlen) {
    pc_sink_txn_t *t = calloc(1, sizeof *t);
    if (!t)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = pc_connector_txn_open(sk->client, sk->s.opts.txn_timeout_ms, &t->txn,
                                              &t->most, &t->least, errstr, errlen);
    if (err) {
        free(t);
        return err;
    }
    *slot = t;
    return PULSARC_OK;
}

static void drop_txn(pc_sink_txn_t *t) {
    if (!t)
        return;
    pulsarc_txn_destroy(t->txn); /* aborts it if still open */
    free(t);
}

pulsarc_err_t pc_sink_txn_send(pulsarc_sink_t *sk, pulsarc_producer_t *p, pulsarc_msg_t *msg,
                               pulsarc_send_cb cb, char *errstr, size_t errlen) {
    pulsarc_err_t err = sk->open_txn ? PULSARC_OK : open_txn(sk, &sk->open_txn, errstr, errlen);
    if (err) {
        cb(p, err, NULL, msg, sk); /* keeps the pending count right */
        pulsarc_msg_destroy(msg);
        return err;
    }
    sk->open_txn->sends++;
    return pulsarc_producer_send_async_txn(p, sk->open_txn->txn, msg, cb, sk);
}

/* ---------- checkpoints ---------- */

static pulsarc_err_t push_committing(pulsarc_sink_t *sk, pc_sink_txn_t *t) {
    pc_sink_txn_t **v = realloc(sk->committing, (sk->ncommitting + 1) * sizeof *v);
    if (!v)
        return PULSARC_ERR_NOMEM;
    sk->committing = v;
    v[sk->ncommitting++] = t;
    return PULSARC_OK;
}

/* Closes the epoch: the open transaction starts waiting for its commit. */
static pulsarc_err_t close_epoch(pulsarc_sink_t *sk, uint64_t checkpoint_id) {
    pc_sink_txn_t *t = sk->open_txn;
    sk->open_txn = NULL;
    if (!t)
        return PULSARC_OK;
    if (!t->sends) {
        pulsarc_txn_abort(t->txn, NULL, 0); /* empty: nothing to commit */
        drop_txn(t);
        return PULSARC_OK;
    }
    t->checkpoint_id = checkpoint_id;
    pulsarc_err_t err = push_committing(sk, t);
    if (err)
        drop_txn(t);
    return err;
}

static void add_ref(pc_sink_state_t *st, const pc_sink_txn_t *t, uint64_t checkpoint_id,
                    pc_sink_txn_fate_t fate) {
    if (t)
        st->txns[st->ntxns++] = (pc_sink_txn_ref_t){checkpoint_id, t->most, t->least, fate};
}

static pulsarc_err_t fill_state(const pulsarc_sink_t *sk, uint64_t checkpoint_id,
                                pc_sink_state_t *st) {
    st->ntxns = 0;
    st->txns = calloc(sk->ncommitting + 2, sizeof *st->txns);
    if (!st->txns)
        return PULSARC_ERR_NOMEM;
    for (size_t i = 0; i < sk->ncommitting; i++)
        add_ref(st, sk->committing[i], sk->committing[i]->checkpoint_id, PC_SINK_TXN_COMMIT);
    add_ref(st, sk->open_txn, checkpoint_id, PC_SINK_TXN_ABORT);
    add_ref(st, sk->next_txn, checkpoint_id, PC_SINK_TXN_ABORT);
    return PULSARC_OK;
}

/* The reserved transaction becomes the open one; a new one is reserved. */
static pulsarc_err_t advance(pulsarc_sink_t *sk, char *errstr, size_t errlen) {
    sk->open_txn = sk->next_txn;
    sk->next_txn = NULL;
    pulsarc_err_t err = sk->open_txn ? PULSARC_OK : open_txn(sk, &sk->open_txn, errstr, errlen);
    return err ? err : open_txn(sk, &sk->next_txn, errstr, errlen);
}

pulsarc_err_t pc_sink_txn_checkpoint(pulsarc_sink_t *sk, uint64_t checkpoint_id,
                                     pc_sink_state_t *st, char *errstr, size_t errlen) {
    pulsarc_err_t err = close_epoch(sk, checkpoint_id);
    if (err)
        return pc_seterr(errstr, errlen, err, "sink checkpoint: out of memory");
    err = advance(sk, errstr, errlen);
    if (err)
        return err;
    err = fill_state(sk, checkpoint_id, st);
    return err ? pc_seterr(errstr, errlen, err, "sink checkpoint: out of memory") : PULSARC_OK;
}

/* ---------- commits ---------- */

static pulsarc_err_t commit_one(pulsarc_sink_t *sk, pc_sink_txn_t *t, char *errstr,
                                size_t errlen) {
    pulsarc_err_t err;
    int tries = 0;
    do
        err = pulsarc_txn_commit(t->txn, errstr, errlen);
    while (err && !commit_gone(err) && pulsarc_err_is_retriable(err) &&
           tries++ < sk->s.opts.max_recommit);
    if (!err)
        return PULSARC_OK;
    return pc_seterr(errstr, errlen, err,
                     "commit of transaction (%llu,%llu) of checkpoint %llu failed%s: %s",
                     (unsigned long long)t->most, (unsigned long long)t->least,
                     (unsigned long long)t->checkpoint_id,
                     commit_gone(err) ? " (it was aborted: its messages are lost)" : "",
                     pulsarc_strerror(err));
}

static void remove_committing(pulsarc_sink_t *sk, size_t i) {
    memmove(&sk->committing[i], &sk->committing[i + 1],
            (sk->ncommitting - i - 1) * sizeof *sk->committing);
    sk->ncommitting--;
}

pulsarc_err_t pc_sink_txn_complete(pulsarc_sink_t *sk, uint64_t checkpoint_id, char *errstr,
                                   size_t errlen) {
    size_t i = 0;
    while (i < sk->ncommitting) {
        pc_sink_txn_t *t = sk->committing[i];
        if (t->checkpoint_id > checkpoint_id) {
            i++;
            continue;
        }
        pulsarc_err_t err = commit_one(sk, t, errstr, errlen);
        if (err && !commit_gone(err))
            return err; /* still open: a later completion retries it */
        remove_committing(sk, i);
        drop_txn(t);
        if (err)
            return err;
        pthread_mutex_lock(&sk->lock);
        sk->txn_committed++;
        pthread_mutex_unlock(&sk->lock);
    }
    return PULSARC_OK;
}

/* ---------- close ---------- */

static void abort_slot(pulsarc_sink_t *sk, pc_sink_txn_t **slot) {
    if (!*slot)
        return;
    pulsarc_txn_abort((*slot)->txn, NULL, 0);
    pthread_mutex_lock(&sk->lock);
    sk->txn_aborted++;
    pthread_mutex_unlock(&sk->lock);
    drop_txn(*slot);
    *slot = NULL;
}

void pc_sink_txn_close(pulsarc_sink_t *sk) {
    abort_slot(sk, &sk->open_txn);
    abort_slot(sk, &sk->next_txn);
    /* Committing transactions must stay open for a restored sink, and
     * pulsarc_txn_destroy() would abort them: release frees the handle
     * and leaves the transaction to the restore. */
    for (size_t i = 0; i < sk->ncommitting; i++) {
        pulsarc_txn_release(sk->committing[i]->txn);
        free(sk->committing[i]);
    }
    free(sk->committing);
    sk->committing = NULL;
    sk->ncommitting = 0;
}
