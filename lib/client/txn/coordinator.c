/*
 * Design notes: the transaction-coordinator (TC) client of one pulsarc
 * client (docs/PROTOCOL.md §10).
 *
 * Discovery: the coordinators are the partitions of the assign topic; their
 * count comes from PARTITIONED_METADATA, asked once, on the first
 * pulsarc_txn_new (an application thread, blocking). Coordinator i lives on
 * the broker that owns partition i, found with a LOOKUP of that partition's
 * name; its connection comes from the client's pool and is registered with
 * TC_CLIENT_CONNECT (brokers above protocol v18), which also tells us the
 * coordinator is loaded there.
 *
 * Ownership and threads: the object is created lazily and registered in the
 * client's handle list, so client close reaches it (pending calls fail with
 * CLOSED) and client destroy frees it; that list is also how it is found
 * again, by its close function, so the client struct needs no field for it.
 * It is reference counted: transactions keep it alive past the client.
 * n and closed are guarded by `lock` (application threads); links, calls
 * and the round-robin counter belong to the loop thread.
 *
 * A call is one request followed to its final answer: a pc_call_t (the
 * client's reconnecting request, on the heap, owned by the loop, freed
 * when it has completed and no step holds it), whose lookup, connection
 * and retry timer are request.c's. The steps special to coordinators are
 * here: reusing the link's connection or address, and registering a new
 * connection with TC_CLIENT_CONNECT before the request. The blocked
 * caller's op and request are touched only until completion; client close
 * cancels every call through the coordinator's call list.
 *
 * Retries follow the Java client: TransactionCoordinatorNotFound, a lost or
 * refused connection, ServiceNotReady and TooManyRequests retry with
 * backoff (initial, up to max/10) until operationTimeoutMs; the link to that
 * coordinator is then rebuilt from a fresh LOOKUP, as the coordinator may
 * have moved. Everything else (InvalidTxnStatus, TransactionNotFound,
 * TransactionConflict, NotAllowed, ...) is final.
 */
#include "client/txn/coordinator.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/request.h"
#include "core/backoff.h"
#include "core/err.h"

#define ASSIGN_TOPIC "persistent://pulsar/system/transaction_coordinator_assign"
#define TC_CONNECT_MIN_VERSION 19 /* brokers before v19 do not know TC_CLIENT_CONNECT */

typedef struct tc_link {
    pc_conn_t *conn;          /* registered with TC_CLIENT_CONNECT; we hold a reference */
    pc_broker_addr_t addr;    /* where the coordinator's partition lives */
    int has_addr;
} tc_link_t;

typedef struct tc_call {
    pc_call_t call;           /* first: the request's steps hand back a pc_call_t * */
    pc_tc_t *tc;
    pc_tc_req_t *req;         /* the caller's; valid while call.op is set */
    uint64_t tc_id;
    pc_conn_t *conn;          /* being registered (TC_CLIENT_CONNECT in flight) */
    char partition[200];      /* the coordinator's assign-topic partition */
} tc_call_t;

struct pc_tc {
    pc_handle_t handle;
    pulsarc_client_t *client;
    atomic_int refs;
    pthread_mutex_t lock;
    pthread_mutex_t discover_lock; /* one discovery at a time */
    int n;                    /* coordinators; -1 until discovered */
    int closed;
    int op_timeout_ms;        /* copied: transactions may outlive the client */
    pc_op_t close_op;
    /* loop thread */
    tc_link_t *links;
    pc_call_list_t calls;     /* cancelled (closed) by client close */
    uint64_t rr;
};

/* ---------- lifetime ---------- */

void pc_tc_ref(pc_tc_t *tc) { atomic_fetch_add(&tc->refs, 1); }

/* The last reference: the loop is gone or no longer knows us. */
void pc_tc_unref(pc_tc_t *tc) {
    if (atomic_fetch_sub(&tc->refs, 1) != 1)
        return;
    for (int i = 0; tc->links && i < tc->n; i++)
        if (tc->links[i].conn)
            pc_conn_unref(tc->links[i].conn);
    free(tc->links);
    pthread_mutex_destroy(&tc->lock);
    pthread_mutex_destroy(&tc->discover_lock);
    pc_op_destroy(&tc->close_op);
    free(tc);
}

int pc_tc_op_timeout(const pc_tc_t *tc) { return tc->op_timeout_ms; }

static void do_close(void *arg);

/* Client close (application thread): fails every call, then returns. */
static void tc_handle_close(pc_handle_t *h) {
    pc_tc_t *tc = (pc_tc_t *)h;
    pthread_mutex_lock(&tc->lock);
    int first = !tc->closed;
    tc->closed = 1;
    pthread_mutex_unlock(&tc->lock);
    if (first && pc_client_post(tc->client, do_close, tc) == PULSARC_OK)
        pc_op_wait(&tc->close_op, NULL, 0);
}

static void tc_handle_destroy(pc_handle_t *h) {
    pc_tc_t *tc = (pc_tc_t *)h;
    pc_client_unregister(tc->client, h);
    pc_tc_unref(tc); /* the client's reference */
}

static pc_tc_t *tc_new(pulsarc_client_t *c) {
    pc_tc_t *tc = calloc(1, sizeof *tc);
    if (!tc)
        return NULL;
    tc->handle.close = tc_handle_close;
    tc->handle.destroy = tc_handle_destroy;
    tc->client = c;
    tc->op_timeout_ms = c->op_timeout_ms;
    tc->n = -1;
    atomic_init(&tc->refs, 1);
    pthread_mutex_init(&tc->lock, NULL);
    pthread_mutex_init(&tc->discover_lock, NULL);
    pc_op_init(&tc->close_op);
    return tc;
}

/* The client's TC object, made on first use; a new reference for the caller. */
static pc_tc_t *find_or_add(pulsarc_client_t *c, pulsarc_err_t *err) {
    pc_tc_t *tc = NULL;
    pthread_mutex_lock(&c->lock);
    for (pc_handle_t *h = c->handles; h && !tc; h = h->next)
        if (h->close == tc_handle_close)
            tc = (pc_tc_t *)h;
    if (!tc && !c->closed && (tc = tc_new(c)) != NULL) {
        tc->handle.next = c->handles;
        c->handles = &tc->handle;
    }
    if (tc)
        pc_tc_ref(tc);
    *err = tc ? PULSARC_OK : c->closed ? PULSARC_ERR_CLOSED : PULSARC_ERR_NOMEM;
    pthread_mutex_unlock(&c->lock);
    return tc;
}

static pulsarc_err_t discover(pc_tc_t *tc, char *e, size_t el) {
    int n = 0;
    pulsarc_err_t err = pulsarc_client_partitions(tc->client, ASSIGN_TOPIC, &n, e, el);
    if (err)
        return err;
    if (n <= 0)
        return pc_seterr(e, el, PULSARC_ERR_UNSUPPORTED,
                         "the broker runs no transaction coordinator (%s has no partitions; "
                         "is transactionCoordinatorEnabled set?)", ASSIGN_TOPIC);
    tc->links = calloc((size_t)n, sizeof *tc->links);
    if (!tc->links)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pthread_mutex_lock(&tc->lock);
    tc->n = n; /* published to the loop by the post that carries the first call */
    pthread_mutex_unlock(&tc->lock);
    return PULSARC_OK;
}

pulsarc_err_t pc_tc_get(pulsarc_client_t *c, pc_tc_t **out, char *e, size_t el) {
    pulsarc_err_t err;
    pc_tc_t *tc = find_or_add(c, &err);
    if (!tc)
        return pc_seterr(e, el, err, "%s", err == PULSARC_ERR_CLOSED ? "client is closed" : "out of memory");
    pthread_mutex_lock(&tc->discover_lock);
    if (tc->n < 0)
        err = discover(tc, e, el);
    pthread_mutex_unlock(&tc->discover_lock);
    if (err) {
        pc_tc_unref(tc);
        return err;
    }
    *out = tc;
    return PULSARC_OK;
}

/* ---------- calls: completion and retries ---------- */

#define TC_CALL(r) ((tc_call_t *)(r))

static void free_call(pc_call_t *c) {
    tc_call_t *call = (tc_call_t *)c;
    if (call->conn)
        pc_conn_unref(call->conn);
    pc_tc_unref(call->tc);
    free(call);
}

static void finish(tc_call_t *call, pulsarc_err_t err, const char *msg) {
    pc_call_complete(&call->call, err, msg);
}

static int is_retriable(pulsarc_err_t err) {
    switch (err) {
    case PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND:
    case PULSARC_ERR_BROKER_SERVICE_NOT_READY:
    case PULSARC_ERR_BROKER_TOO_MANY_REQUESTS:
    case PULSARC_ERR_DISCONNECTED:
    case PULSARC_ERR_CONNECT:
    case PULSARC_ERR_RESOLVE:
        return 1;
    default:
        return 0;
    }
}

static void reset_link(tc_link_t *l) {
    if (l->conn)
        pc_conn_unref(l->conn);
    l->conn = NULL;
    l->has_addr = 0; /* look the coordinator up again: it may have moved */
}

static tc_link_t *link_of(tc_call_t *call) { return &call->tc->links[call->tc_id]; }

static int tc_retry_after(pc_request_t *r, pulsarc_err_t err) {
    tc_call_t *call = TC_CALL(r);
    if (!is_retriable(err))
        return 0;
    reset_link(link_of(call));
    return !call->tc->calls.closed;
}

/* ---------- calls: the request itself ---------- */

typedef struct cmd_store {
    pc_cmd_t cmd;
    Pulsar__Proto__CommandNewTxn nt;
    Pulsar__Proto__CommandAddPartitionToTxn ap;
    Pulsar__Proto__CommandAddSubscriptionToTxn as;
    Pulsar__Proto__CommandEndTxn et;
    Pulsar__Proto__Subscription sub;
    Pulsar__Proto__Subscription *subp;
    char *part;
} cmd_store_t;

static void build_new_txn(cmd_store_t *s, const tc_call_t *call, uint64_t rid) {
    pulsar__proto__command_new_txn__init(&s->nt);
    s->nt.request_id = rid;
    s->nt.has_txn_ttl_seconds = 1;
    s->nt.txn_ttl_seconds = call->req->ttl_ms; /* the field carries milliseconds */
    s->nt.has_tc_id = 1;
    s->nt.tc_id = call->tc_id;
    s->cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__NEW_TXN;
    s->cmd.newtxn = &s->nt;
}

static void build_add_partition(cmd_store_t *s, const tc_call_t *call, uint64_t rid) {
    pulsar__proto__command_add_partition_to_txn__init(&s->ap);
    s->ap.request_id = rid;
    s->ap.has_txnid_most_bits = s->ap.has_txnid_least_bits = 1;
    s->ap.txnid_most_bits = call->req->most;
    s->ap.txnid_least_bits = call->req->least;
    s->part = (char *)call->req->topic;
    s->ap.n_partitions = 1;
    s->ap.partitions = &s->part;
    s->cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_PARTITION_TO_TXN;
    s->cmd.addpartitiontotxn = &s->ap;
}

static void build_add_subscription(cmd_store_t *s, const tc_call_t *call, uint64_t rid) {
    pulsar__proto__command_add_subscription_to_txn__init(&s->as);
    pulsar__proto__subscription__init(&s->sub);
    s->sub.topic = (char *)call->req->topic;
    s->sub.subscription = (char *)call->req->sub;
    s->subp = &s->sub;
    s->as.request_id = rid;
    s->as.has_txnid_most_bits = s->as.has_txnid_least_bits = 1;
    s->as.txnid_most_bits = call->req->most;
    s->as.txnid_least_bits = call->req->least;
    s->as.n_subscription = 1;
    s->as.subscription = &s->subp;
    s->cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_SUBSCRIPTION_TO_TXN;
    s->cmd.addsubscriptiontotxn = &s->as;
}

static void build_end_txn(cmd_store_t *s, const tc_call_t *call, uint64_t rid) {
    pulsar__proto__command_end_txn__init(&s->et);
    s->et.request_id = rid;
    s->et.has_txnid_most_bits = s->et.has_txnid_least_bits = 1;
    s->et.txnid_most_bits = call->req->most;
    s->et.txnid_least_bits = call->req->least;
    s->et.has_txn_action = 1;
    s->et.txn_action = call->req->commit ? PULSAR__PROTO__TXN_ACTION__COMMIT
                                         : PULSAR__PROTO__TXN_ACTION__ABORT;
    s->cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__END_TXN;
    s->cmd.endtxn = &s->et;
}

/* The error a coordinator response carries in its own fields. */
#define RESP_ERR(r, msgp) \
    ((r)->has_error ? (*(msgp) = (r)->message, pc_err_from_server((r)->error)) : PULSARC_OK)

static pulsarc_err_t response_error(const pc_cmd_t *cmd, const char **msg) {
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__NEW_TXN_RESPONSE:
        return RESP_ERR(cmd->newtxnresponse, msg);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_PARTITION_TO_TXN_RESPONSE:
        return RESP_ERR(cmd->addpartitiontotxnresponse, msg);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_SUBSCRIPTION_TO_TXN_RESPONSE:
        return RESP_ERR(cmd->addsubscriptiontotxnresponse, msg);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__END_TXN_RESPONSE:
        return RESP_ERR(cmd->endtxnresponse, msg);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__TC_CLIENT_CONNECT_RESPONSE:
        return RESP_ERR(cmd->tcclientconnectresponse, msg);
    default:
        *msg = "unexpected reply from the transaction coordinator";
        return PULSARC_ERR_PROTOCOL;
    }
}

static void on_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    tc_call_t *call = arg;
    if (!pc_call_wanted(&call->call.req)) {
    } else if (!err && !(err = response_error(f->cmd, &msg))) {
        if (call->req->kind == PC_TC_NEW_TXN) {
            call->req->most = f->cmd->newtxnresponse->txnid_most_bits;
            call->req->least = f->cmd->newtxnresponse->txnid_least_bits;
        }
        finish(call, PULSARC_OK, NULL);
    } else {
        pc_request_failed(&call->call.req, err, msg);
    }
    pc_call_unref(&call->call.req); /* the step's */
}

static void send_request(tc_call_t *call, pc_conn_t *conn) {
    static void (*const build[])(cmd_store_t *, const tc_call_t *, uint64_t) = {
        [PC_TC_NEW_TXN] = build_new_txn,
        [PC_TC_ADD_PARTITION] = build_add_partition,
        [PC_TC_ADD_SUBSCRIPTION] = build_add_subscription,
        [PC_TC_END_TXN] = build_end_txn,
    };
    cmd_store_t s;
    pulsar__proto__base_command__init(&s.cmd);
    uint64_t rid = call->tc->client->next_id++;
    build[call->req->kind](&s, call, rid);
    pc_conn_request(conn, &s.cmd, rid, pc_tc_op_timeout(call->tc), on_reply, call);
}

/* ---------- calls: reaching the coordinator ---------- */

static void adopt_conn(tc_call_t *call) {
    tc_link_t *l = link_of(call);
    if (l->conn)
        pc_conn_unref(l->conn);
    l->conn = call->conn; /* our reference moves to the link */
    call->conn = NULL;
    send_request(call, l->conn);
}

static void on_tc_connected(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    tc_call_t *call = arg;
    if (!pc_call_wanted(&call->call.req)) {
        pc_call_unref(&call->call.req);
        return;
    }
    if (!err)
        err = response_error(f->cmd, &msg);
    if (err) {
        pc_conn_unref(call->conn);
        call->conn = NULL;
        pc_request_failed(&call->call.req, err, msg);
        pc_call_unref(&call->call.req);
        return;
    }
    adopt_conn(call); /* the step's reference passes to the request */
}

static void register_conn(tc_call_t *call, pc_conn_t *conn) {
    pc_conn_ref(conn);
    call->conn = conn;
    if (pc_conn_protocol_version(conn) < TC_CONNECT_MIN_VERSION) {
        adopt_conn(call);
        return;
    }
    Pulsar__Proto__CommandTcClientConnectRequest r = PULSAR__PROTO__COMMAND_TC_CLIENT_CONNECT_REQUEST__INIT;
    r.request_id = call->tc->client->next_id++;
    r.tc_id = call->tc_id;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__TC_CLIENT_CONNECT_REQUEST;
    cmd.tcclientconnectrequest = &r;
    pc_conn_request(conn, &cmd, r.request_id, pc_tc_op_timeout(call->tc), on_tc_connected, call);
}

/* The request has a connection to the coordinator's broker. */
static void tc_send(pc_request_t *r, pc_conn_t *conn) {
    tc_call_t *call = TC_CALL(r);
    if (conn == link_of(call)->conn) /* registered already (by another call, maybe) */
        send_request(call, conn);
    else
        register_conn(call, conn);
}

static pc_conn_t *tc_known_conn(pc_request_t *r) {
    tc_link_t *l = link_of(TC_CALL(r));
    return l->conn && !pc_conn_is_closed(l->conn) ? l->conn : NULL;
}

static const pc_broker_addr_t *tc_known_addr(pc_request_t *r) {
    tc_link_t *l = link_of(TC_CALL(r));
    return l->has_addr ? &l->addr : NULL;
}

static void tc_looked_up(pc_request_t *r, const pc_broker_addr_t *a) {
    tc_link_t *l = link_of(TC_CALL(r));
    l->addr = *a;
    l->has_addr = 1;
}

static const pc_request_ops_t tc_request_ops = {
    .wanted = pc_call_wanted,
    .send = tc_send,
    .known_conn = tc_known_conn,
    .known_addr = tc_known_addr,
    .looked_up = tc_looked_up,
    .retry_after = tc_retry_after,
    .on_failed = pc_call_failed,
    .ref = pc_call_ref,
    .unref = pc_call_unref,
};

/* ---------- calls: start, close ---------- */

static void do_start_call(void *arg) {
    tc_call_t *call = arg;
    pc_tc_t *tc = call->tc;
    if (!pc_call_start(&call->call, &tc->calls))
        return; /* closed: completed and freed */
    if (call->req->kind == PC_TC_NEW_TXN)
        call->req->most = tc->rr++ % (uint64_t)tc->n; /* spread transactions over the coordinators */
    call->tc_id = call->req->most;
    if (call->tc_id >= (uint64_t)tc->n) {
        finish(call, PULSARC_ERR_INVALID_ARG, "transaction id names no known coordinator");
        return;
    }
    snprintf(call->partition, sizeof call->partition, "%s-partition-%llu", ASSIGN_TOPIC,
             (unsigned long long)call->tc_id);
    pc_request_start(&call->call.req, pc_tc_op_timeout(tc));
}

static void do_close(void *arg) {
    pc_tc_t *tc = arg;
    pthread_mutex_lock(&tc->lock);
    int n = tc->n; /* discovery may still be writing it */
    pthread_mutex_unlock(&tc->lock);
    pc_call_list_cancel(&tc->calls, PULSARC_ERR_CLOSED, "client closed");
    for (int i = 0; i < n; i++)
        reset_link(&tc->links[i]);
    pc_op_done(&tc->close_op, PULSARC_OK, NULL);
}

static tc_call_t *call_new(pc_tc_t *tc, pc_tc_req_t *req, pc_op_t *op) {
    tc_call_t *call = calloc(1, sizeof *call);
    if (!call)
        return NULL;
    const pulsarc_conf_t *conf = tc->client->conf;
    int64_t max = pc_conf_int(conf, PC_PROP_MAX_BACKOFF_MS) / 10; /* as the Java TC handler */
    int64_t initial = pc_conf_int(conf, PC_PROP_INITIAL_BACKOFF_MS);
    pc_call_init(&call->call, &tc_request_ops, tc->client, call->partition, initial,
                 max > initial ? max : initial, op, free_call);
    call->tc = tc;
    call->req = req;
    return call;
}

pulsarc_err_t pc_tc_call(pc_tc_t *tc, pc_tc_req_t *req, char *e, size_t el) {
    pthread_mutex_lock(&tc->lock);
    int closed = tc->closed;
    pthread_mutex_unlock(&tc->lock);
    if (closed)
        return pc_seterr(e, el, PULSARC_ERR_CLOSED, "client is closed");
    pc_op_t op;
    pc_op_init(&op);
    tc_call_t *call = call_new(tc, req, &op);
    pulsarc_err_t err = call ? PULSARC_OK : PULSARC_ERR_NOMEM;
    if (call) {
        pc_tc_ref(tc); /* the call's, dropped when the loop frees it */
        err = pc_client_post(tc->client, do_start_call, call);
        if (err) {
            pc_tc_unref(tc);
            free(call);
        }
    }
    if (err)
        pc_seterr(e, el, err, "%s", err == PULSARC_ERR_NOMEM ? "out of memory" : "client is closed");
    else
        err = pc_op_wait(&op, e, el);
    pc_op_destroy(&op);
    return err;
}
