/*
 * Design notes: the connect/create/reconnect cycle of a producer or a
 * consumer, written once, on the reconnecting request (request.c), whose
 * steps, backoff and timer it uses; it owns the state and the `flap`
 * schedule, and the owner supplies the wire commands through
 * pc_handler_ops_t. Loop thread only. Every asynchronous step holds a
 * reference on the owner and re-checks the state when it resumes, so
 * closing at any moment is safe: a step that finds the handler no longer
 * CONNECTING just lets go.
 *
 * Retry policy (docs/PROTOCOL.md §11.2): before the first success, retriable
 * errors are retried until operationTimeoutMs, fatal ones fail at once;
 * after it, everything but the owner's final errors is retried forever.
 * Failed attempts (lookup, connect, create) back off on `backoff`, which a
 * creation resets. Losing a created resource waits on `flap` first; that
 * schedule resets only when the resource had been up for
 * PC_HANDLER_HEALTHY_MS or had carried traffic, so a loss after real work
 * (a broker restart, a topic unload) reconnects after the initial delay
 * while a broker that keeps dropping us right after the create is retried
 * ever more slowly.
 *
 * Parked requests (pc_handler_wait): a list on the handler, each with a
 * timer for its deadline. The list is taken whole before it is run or
 * failed, so a request that parks again from its run joins a fresh list
 * and waits for the next creation.
 */
#include "client/handler.h"

#include <stddef.h>

#define H_OF(r) ((pc_handler_t *)((char *)(r) - offsetof(pc_handler_t, req)))

/* ---------- parked requests ---------- */

static void unlink_waiting(pc_handler_t *h, pc_handler_wait_t *w) {
    for (pc_handler_wait_t **pp = &h->waiting; *pp; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
}

static void on_wait_deadline(void *arg) {
    pc_handler_wait_t *w = arg;
    unlink_waiting(w->h, w);
    w->fail(w, PULSARC_ERR_TIMEOUT, "not created again on the broker before the deadline");
}

void pc_handler_wait(pc_handler_t *h, pc_handler_wait_t *w, int64_t deadline_ms) {
    pc_handler_wait_t **pp = &h->waiting;
    while (*pp) /* appended: parked requests go out in the order they were made */
        pp = &(*pp)->next;
    w->h = h;
    w->next = NULL;
    *pp = w;
    int64_t left = deadline_ms - pc_now_ms();
    pc_timer_init(&w->timer, on_wait_deadline, w);
    pc_timer_start(h->client->loop, &w->timer, left > 0 ? left : 0);
}

/*
 * Takes the whole list; each request runs (err OK) or fails with err. h is
 * not read once the callbacks start: the last of them may let go of the
 * owner.
 */
static void release_waiting(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    pc_handler_wait_t *list = h->waiting;
    h->waiting = NULL;
    for (pc_handler_wait_t *w = list; w; w = w->next)
        pc_timer_stop(h->client->loop, &w->timer);
    while (list) {
        pc_handler_wait_t *w = list;
        list = w->next;
        if (err)
            w->fail(w, err, msg);
        else
            w->run(w);
    }
}

void pc_handler_fail_waiting(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    release_waiting(h, err, msg);
}

/* ---------- the reconnecting request ---------- */

static int h_wanted(pc_request_t *r) { return H_OF(r)->state == PC_H_CONNECTING; }

static void h_ref(pc_request_t *r) { H_OF(r)->ops->ref(H_OF(r)); }

static void h_unref(pc_request_t *r) { H_OF(r)->ops->unref(H_OF(r)); }

/* The connection is up: send the create, whose reply comes to pc_handler_created. */
static void h_send(pc_request_t *r, pc_conn_t *conn) {
    pc_handler_t *h = H_OF(r);
    pc_conn_ref(conn);
    h->creating = conn;
    h->lost_in_create = 0;
    h->epoch++;
    h->ops->send_create(h, conn); /* pc_handler_created drops our reference */
}

/* Before the first creation, retriable errors until the deadline; after it, all but final ones. */
static int h_retry_after(pc_request_t *r, pulsarc_err_t err) {
    pc_handler_t *h = H_OF(r);
    if (!h->created_once)
        return pulsarc_err_is_retriable(err);
    return !(h->ops->is_final && h->ops->is_final(err));
}

static void h_failed(pc_request_t *r, pulsarc_err_t err, const char *msg) {
    pc_handler_t *h = H_OF(r);
    h->state = PC_H_CLOSED;
    h->ops->on_failed(h, err, msg);
    release_waiting(h, err ? err : PULSARC_ERR_CLOSED, msg);
}

static const pc_request_ops_t handler_request_ops = {
    .wanted = h_wanted,
    .send = h_send,
    .retry_after = h_retry_after,
    .on_failed = h_failed,
    .ref = h_ref,
    .unref = h_unref,
};

void pc_handler_init(pc_handler_t *h, const pc_handler_ops_t *ops, pulsarc_client_t *c,
                     const char *topic) {
    int64_t initial = pc_conf_int(c->conf, PC_PROP_INITIAL_BACKOFF_MS);
    int64_t max = pc_conf_int(c->conf, PC_PROP_MAX_BACKOFF_MS);
    pc_request_init(&h->req, &handler_request_ops, c, topic, initial, max);
    h->req.what = "create";
    h->ops = ops;
    h->client = c;
    h->topic = topic;
    h->state = PC_H_CONNECTING;
    h->conn = h->creating = NULL;
    h->created_once = 0;
    h->epoch = 0;
    h->lost_in_create = 0;
    h->is_partial = NULL;
    h->conn_flags = 0;
    pc_backoff_init(&h->flap, initial, max);
    h->ready_at = 0;
    h->proved = 0;
    h->waiting = NULL;
}


static void schedule_reconnect(pc_handler_t *h, int64_t delay) {
    h->state = PC_H_CONNECTING;
    pc_request_retry_in(&h->req, delay);
}

void pc_handler_request_create(pc_handler_t *h, pc_conn_t *conn, const pc_cmd_t *cmd, uint64_t id,
                               int timeout_ms) {
    h->create_req = id;
    pc_conn_request(conn, cmd, id, timeout_ms, pc_handler_created, h);
}

static void created(pc_handler_t *h, pc_conn_t *conn, const pc_frame_t *f) {
    h->conn = conn;
    h->state = PC_H_READY;
    if (!h->created_once)
        h->req.deadline = -1; /* created: from now on only final errors end it */
    h->created_once = 1;
    h->ready_at = pc_now_ms();
    h->proved = 0;
    PC_RTRACE(&h->req, "created");
    pc_request_succeeded(&h->req);
    h->ops->on_ready(h, conn, f);
    release_waiting(h, PULSARC_OK, NULL);
}

void pc_handler_created(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    pc_handler_t *h = arg;
    if (!err && h->state == PC_H_CONNECTING && h->is_partial && f && h->is_partial(f))
        return; /* queued by the broker: keep the connection and our reference, wait on */
    pc_conn_t *conn = h->creating;
    h->creating = NULL;
    if (h->state != PC_H_CONNECTING) {
        if (!err) /* closed meanwhile: undo the creation on the broker */
            h->ops->send_close(h, conn);
    } else if (err) {
        if (err == PULSARC_ERR_TIMEOUT) /* the protocol asks for a close before a retry */
            h->ops->send_close(h, conn);
        pc_request_failed(&h->req, err, msg);
    } else if (h->lost_in_create) {
        /* A topic unload can close us between the broker's create and its reply. */
        h->ops->send_close(h, conn);
        pc_request_failed(&h->req, PULSARC_ERR_DISCONNECTED,
                          "closed by the broker while being created");
    } else {
        created(h, conn, f);
    }
    pc_conn_unref(conn);
    h->ops->unref(h);
}

void pc_handler_start(pc_handler_t *h) {
    h->req.conn_flags = h->conn_flags;
    h->state = PC_H_CONNECTING;
    pc_request_start(&h->req, h->client->op_timeout_ms);
}

void pc_handler_lost(pc_handler_t *h) {
    PC_RTRACE(&h->req, "connection lost (%s)", h->state == PC_H_READY ? "ready" : "not ready");
    h->conn = NULL;
    if (h->state == PC_H_READY) {
        if (h->proved || pc_now_ms() - h->ready_at >= PC_HANDLER_HEALTHY_MS)
            pc_backoff_reset(&h->flap);
        schedule_reconnect(h, pc_backoff_next(&h->flap));
    } else if (h->state == PC_H_CONNECTING && h->creating) {
        /* Closed by the broker (a topic unload) with our create in flight:
         * that create may never be answered, so waiting for its timeout
         * would stall us for operationTimeoutMs. Retry now instead. */
        h->lost_in_create = 1;
        pc_conn_fail_request(h->creating, h->create_req, PULSARC_ERR_DISCONNECTED,
                             "closed by the broker while being created");
    }
}

pc_conn_t *pc_handler_stop(pc_handler_t *h) {
    pc_request_stop(&h->req);
    pc_conn_t *conn = h->state == PC_H_READY ? h->conn : NULL;
    h->conn = NULL;
    if (h->state != PC_H_CLOSED)
        h->state = PC_H_CLOSING;
    release_waiting(h, PULSARC_ERR_CLOSED, "closed");
    return conn;
}
