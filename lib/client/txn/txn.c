/*
 * Design notes: a transaction as the application holds it (docs/PROTOCOL.md
 * §10). It owns its id (most bits = the coordinator), its state, the count
 * of sends and acks still running in it, and the set of partitions and
 * subscriptions already registered with the coordinator, so each is
 * registered once. The wire work is coordinator.c's.
 *
 * Threads: application threads call everything here; the loop thread only
 * calls pc_txn_op_end when a send completes. `lock` guards state and the
 * joined set; the id never changes. The sends and acks still running are
 * the parts of one op (`running`), plus one part held while the
 * transaction is open: ending gives that part up and waits on the op,
 * whose error is the first failed operation. The struct is reference
 * counted because a send in flight may outlive pulsarc_txn_destroy.
 *
 * Ending: commit and abort first wait (up to operationTimeoutMs) for the
 * transaction's pending sends and acks, as the broker must have every
 * message before it can seal the transaction. A commit after any of them
 * failed would lose that operation's effect silently, so it aborts instead
 * and says why (the Java client does the same). InvalidTxnStatus and
 * TransactionNotFound (e.g. the broker timed the transaction out) end the
 * transaction for good; other failures leave it open so the caller may try
 * again or abort.
 */
#include "client/txn/txn.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/txn/coordinator.h"
#include "core/err.h"

#define DEFAULT_TIMEOUT_MS 60000 /* the Java client's default */

typedef enum { TXN_OPEN, TXN_ENDING, TXN_COMMITTED, TXN_ABORTED, TXN_FAILED } txn_state_t;

struct pulsarc_txn_s {
    pc_tc_t *tc;
    uint64_t most, least;
    atomic_int refs;
    pthread_mutex_t lock;
    txn_state_t state;
    pc_op_t running;          /* a part per send and ack not yet completed, one while open */
    char **joined;            /* "P<topic>" or "S<topic>\n<sub>", registered */
    size_t njoined, capjoined;
};

/* ---------- lifetime ---------- */

static void txn_ref(pulsarc_txn_t *t) { atomic_fetch_add(&t->refs, 1); }

static void txn_unref(pulsarc_txn_t *t) {
    if (atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    for (size_t i = 0; i < t->njoined; i++)
        free(t->joined[i]);
    free(t->joined);
    pthread_mutex_destroy(&t->lock);
    pc_op_destroy(&t->running);
    pc_tc_unref(t->tc);
    free(t);
}

static pulsarc_txn_t *txn_alloc(pc_tc_t *tc, uint64_t most, uint64_t least) {
    pulsarc_txn_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->tc = tc;
    t->most = most;
    t->least = least;
    atomic_init(&t->refs, 1);
    pthread_mutex_init(&t->lock, NULL);
    pc_op_init(&t->running); /* its one part: the transaction is open */
    t->state = TXN_OPEN;
    return t;
}

void pc_txn_ids(const pulsarc_txn_t *t, uint64_t *most, uint64_t *least) {
    *most = t->most;
    *least = t->least;
}

pulsarc_err_t pulsarc_txn_id(const pulsarc_txn_t *t, uint64_t *most, uint64_t *least) {
    if (!t || !most || !least)
        return PULSARC_ERR_INVALID_ARG;
    pc_txn_ids(t, most, least);
    return PULSARC_OK;
}

/* ---------- creating ---------- */

int pc_client_txn_enabled(const pulsarc_client_t *c) {
    return c && pc_conf_int(c->conf, PC_PROP_ENABLE_TRANSACTION) != 0;
}

int pulsarc_client_txn_enabled(const pulsarc_client_t *c) {
    return pc_client_txn_enabled(c);
}

static pulsarc_err_t check_enabled(pulsarc_client_t *c, char *e, size_t el) {
    if (!pc_client_txn_enabled(c))
        return pc_seterr(e, el, PULSARC_ERR_STATE,
                         "transactions are off for this client; set enableTransaction=true");
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_txn_new(pulsarc_client_t *c, int timeout_ms, pulsarc_txn_t **txnp,
                              char *e, size_t el) {
    if (!c || !txnp)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "client and txnp are required");
    *txnp = NULL;
    pc_tc_t *tc = NULL;
    pulsarc_err_t err = check_enabled(c, e, el);
    if (!err)
        err = pc_tc_get(c, &tc, e, el);
    if (err)
        return err;
    pc_tc_req_t req = {.kind = PC_TC_NEW_TXN};
    req.ttl_ms = timeout_ms > 0 ? (uint64_t)timeout_ms : DEFAULT_TIMEOUT_MS;
    err = pc_tc_call(tc, &req, e, el);
    pulsarc_txn_t *t = err ? NULL : txn_alloc(tc, req.most, req.least);
    if (!t) {
        pc_tc_unref(tc);
        return err ? err : pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    *txnp = t; /* our reference on tc moves to t */
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_txn_resume(pulsarc_client_t *c, uint64_t most, uint64_t least,
                                 pulsarc_txn_t **txnp, char *e, size_t el) {
    if (!c || !txnp)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "client and txnp are required");
    *txnp = NULL;
    pc_tc_t *tc = NULL;
    pulsarc_err_t err = check_enabled(c, e, el);
    if (!err)
        err = pc_tc_get(c, &tc, e, el);
    if (err)
        return err;
    pulsarc_txn_t *t = txn_alloc(tc, most, least); /* the coordinator knows whether it lives */
    if (!t) {
        pc_tc_unref(tc);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    *txnp = t;
    return PULSARC_OK;
}

/* ---------- operations joining the transaction ---------- */

pulsarc_err_t pc_txn_op_begin(pulsarc_txn_t *t) {
    pthread_mutex_lock(&t->lock);
    int open = t->state == TXN_OPEN;
    if (open) /* under the lock: ending cannot start between the check and the count */
        pc_op_add(&t->running, 1);
    pthread_mutex_unlock(&t->lock);
    if (!open)
        return PULSARC_ERR_STATE;
    txn_ref(t);
    return PULSARC_OK;
}

void pc_txn_op_end(pulsarc_txn_t *t, pulsarc_err_t err) {
    /* Refused arguments sent nothing, so they cannot have changed the outcome. */
    if (err == PULSARC_ERR_INVALID_ARG || err == PULSARC_ERR_STATE)
        err = PULSARC_OK;
    pc_op_done(&t->running, err, NULL);
    txn_unref(t);
}

static int joined_locked(const pulsarc_txn_t *t, const char *key) {
    for (size_t i = 0; i < t->njoined; i++)
        if (strcmp(t->joined[i], key) == 0)
            return 1;
    return 0;
}

static pulsarc_err_t remember(pulsarc_txn_t *t, char *key) {
    pthread_mutex_lock(&t->lock);
    pulsarc_err_t err = PULSARC_OK;
    if (joined_locked(t, key)) { /* another thread registered it meanwhile */
        free(key);
    } else if (t->njoined == t->capjoined) {
        size_t cap = t->capjoined ? t->capjoined * 2 : 8;
        char **grown = realloc(t->joined, cap * sizeof *grown);
        err = grown ? PULSARC_OK : PULSARC_ERR_NOMEM;
        if (grown) {
            t->joined = grown;
            t->capjoined = cap;
            t->joined[t->njoined++] = key;
        } else {
            free(key);
        }
    } else {
        t->joined[t->njoined++] = key;
    }
    pthread_mutex_unlock(&t->lock);
    return err;
}

/* Registers req's topic (and subscription) unless key says it already is. */
static pulsarc_err_t join(pulsarc_txn_t *t, pc_tc_req_t *req, char *key, char *e, size_t el) {
    pthread_mutex_lock(&t->lock);
    int known = joined_locked(t, key);
    pthread_mutex_unlock(&t->lock);
    if (known) {
        free(key);
        return PULSARC_OK;
    }
    req->most = t->most;
    req->least = t->least;
    pulsarc_err_t err = pc_tc_call(t->tc, req, e, el);
    if (err) {
        free(key);
        return err;
    }
    return remember(t, key);
}

static char *make_key(char kind, const char *topic, const char *sub) {
    size_t n = strlen(topic) + (sub ? strlen(sub) + 1 : 0) + 2;
    char *key = malloc(n);
    if (key)
        snprintf(key, n, "%c%s%s%s", kind, topic, sub ? "\n" : "", sub ? sub : "");
    return key;
}

pulsarc_err_t pc_txn_add_partition(pulsarc_txn_t *t, const char *topic, char *e, size_t el) {
    char *key = make_key('P', topic, NULL);
    if (!key)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pc_tc_req_t req = {.kind = PC_TC_ADD_PARTITION, .topic = topic};
    return join(t, &req, key, e, el);
}

pulsarc_err_t pc_txn_add_subscription(pulsarc_txn_t *t, const char *topic, const char *sub,
                                      char *e, size_t el) {
    char *key = make_key('S', topic, sub);
    if (!key)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pc_tc_req_t req = {.kind = PC_TC_ADD_SUBSCRIPTION, .topic = topic, .sub = sub};
    return join(t, &req, key, e, el);
}

/* ---------- ending ---------- */

static const char *state_name(txn_state_t s) {
    static const char *const names[] = {"open", "ending", "committed", "aborted", "failed"};
    return names[s];
}

/* Moves OPEN to ENDING: no new operation may join from here on. */
static pulsarc_err_t begin_end(pulsarc_txn_t *t, char *e, size_t el) {
    pthread_mutex_lock(&t->lock);
    txn_state_t s = t->state;
    if (s == TXN_OPEN)
        t->state = TXN_ENDING;
    pthread_mutex_unlock(&t->lock);
    if (s == TXN_OPEN)
        return PULSARC_OK;
    return pc_seterr(e, el, PULSARC_ERR_STATE, "transaction %llu:%llu is %s",
                     (unsigned long long)t->most, (unsigned long long)t->least, state_name(s));
}

/*
 * Ending (no operation joins any more): gives up the open part and waits for
 * the pending operations; 1 when they all completed, with the first that
 * failed (or OK) in *failed.
 */
static int wait_ops(pulsarc_txn_t *t, pulsarc_err_t *failed) {
    pc_op_done(&t->running, PULSARC_OK, NULL);
    int all = pc_op_wait_for(&t->running, pc_tc_op_timeout(t->tc));
    *failed = pc_op_result(&t->running, NULL, 0);
    return all;
}

/* Back to OPEN takes the open part again (reopening the op if it had completed). */
static void set_state(pulsarc_txn_t *t, txn_state_t s) {
    pthread_mutex_lock(&t->lock);
    if (s == TXN_OPEN && t->state != TXN_OPEN)
        pc_op_add(&t->running, 1);
    t->state = s;
    pthread_mutex_unlock(&t->lock);
}

/* The state an END_TXN outcome leaves: only a definite answer ends it. */
static txn_state_t state_after(pulsarc_err_t err, int commit) {
    if (!err)
        return commit ? TXN_COMMITTED : TXN_ABORTED;
    if (err == PULSARC_ERR_BROKER_INVALID_TXN_STATUS || err == PULSARC_ERR_BROKER_TXN_NOT_FOUND)
        return TXN_FAILED;
    return TXN_OPEN;
}

static pulsarc_err_t end_txn(pulsarc_txn_t *t, int commit, char *e, size_t el) {
    pulsarc_err_t failed, err = begin_end(t, e, el);
    if (err)
        return err;
    if (!wait_ops(t, &failed)) {
        set_state(t, TXN_OPEN);
        return pc_seterr(e, el, PULSARC_ERR_TIMEOUT,
                         "sends or acks of the transaction still pending after operationTimeoutMs");
    }
    int doomed = commit && failed;
    pc_tc_req_t req = {.kind = PC_TC_END_TXN, .most = t->most, .least = t->least};
    req.commit = commit && !doomed;
    err = pc_tc_call(t->tc, &req, e, el);
    set_state(t, state_after(err, req.commit));
    if (!err && doomed)
        return pc_seterr(e, el, PULSARC_ERR_STATE,
                         "not committed: a send or acknowledgement in the transaction failed "
                         "(%s); the transaction was aborted", pulsarc_errname(failed));
    return err;
}

pulsarc_err_t pulsarc_txn_commit(pulsarc_txn_t *t, char *e, size_t el) {
    if (!t)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "txn is NULL");
    return end_txn(t, 1, e, el);
}

pulsarc_err_t pulsarc_txn_abort(pulsarc_txn_t *t, char *e, size_t el) {
    if (!t)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "txn is NULL");
    return end_txn(t, 0, e, el);
}

void pulsarc_txn_release(pulsarc_txn_t *t) {
    if (t)
        txn_unref(t); /* the transaction itself stays open on the broker */
}

void pulsarc_txn_destroy(pulsarc_txn_t *t) {
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    int open = t->state == TXN_OPEN;
    pthread_mutex_unlock(&t->lock);
    if (open) /* nobody can commit it any more: let the broker drop it now */
        end_txn(t, 0, NULL, 0);
    txn_unref(t);
}
