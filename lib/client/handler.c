/*
 * Design notes: the connect/create/reconnect cycle of a producer or a
 * consumer, written once. It owns the state, the backoff and the reconnect
 * timer; the owner supplies the wire commands through pc_handler_ops_t.
 * Loop thread only. Every asynchronous step holds a reference on the owner
 * and re-checks the state when it resumes, so closing at any moment is safe:
 * a step that finds the handler no longer CONNECTING just lets go.
 *
 * Retry policy (protocol.md §11.2): before the first success, retriable
 * errors are retried until operationTimeoutMs, fatal ones fail at once;
 * after it, everything but the owner's final errors is retried forever.
 * Failed attempts (lookup, connect, create) back off on `backoff`, which a
 * creation resets. Losing a created resource waits on `flap` first; that
 * schedule resets only when the resource had been up for
 * PC_HANDLER_HEALTHY_MS or had carried traffic, so a loss after real work
 * (a broker restart, a topic unload) reconnects after the initial delay
 * while a broker that keeps dropping us right after the create is retried
 * ever more slowly.
 */
#include "client/handler.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void h_connect(pc_handler_t *h);

/* PULSARC_DEBUG=reconnect traces every step of the cycle with a monotonic
 * timestamp, per handle (topic and address): where a reconnect spends its
 * time. Read once (atomically: every client's loop thread may ask). */
static int trace_on(void) {
    static _Atomic int on = -1;
    int v = atomic_load(&on);
    if (v < 0) {
        const char *d = getenv("PULSARC_DEBUG");
        v = d && strstr(d, "reconnect") != NULL;
        atomic_store(&on, v);
    }
    return v;
}

#define HTRACE(h, ...)                                                                      \
    do {                                                                                    \
        if (trace_on())                                                                     \
            htrace(h, __VA_ARGS__);                                                         \
    } while (0)

__attribute__((format(printf, 2, 3))) static void htrace(const pc_handler_t *h, const char *fmt,
                                                         ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    int64_t now = pc_now_ms();
    fprintf(stderr, "pulsarc: %lld.%03lld %p %s: %s\n", (long long)(now / 1000),
            (long long)(now % 1000), (const void *)h, h->topic, line);
}

void pc_handler_init(pc_handler_t *h, const pc_handler_ops_t *ops, pulsarc_client_t *c,
                     const char *topic) {
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
    pc_backoff_init(&h->backoff, pc_conf_int(c->conf, PC_PROP_INITIAL_BACKOFF_MS),
                    pc_conf_int(c->conf, PC_PROP_MAX_BACKOFF_MS));
    pc_backoff_init(&h->flap, pc_conf_int(c->conf, PC_PROP_INITIAL_BACKOFF_MS),
                    pc_conf_int(c->conf, PC_PROP_MAX_BACKOFF_MS));
    h->ready_at = 0;
    h->proved = 0;
    h->stage = h->best_stage = PC_HSTAGE_NONE;
    pc_timer_init(&h->reconnect_timer, (pc_loop_fn)h_connect, h);
}

static void schedule_reconnect(pc_handler_t *h, int64_t delay) {
    HTRACE(h, "reconnect in %lld ms", (long long)delay);
    h->state = PC_H_CONNECTING;
    pc_timer_start(h->client->loop, &h->reconnect_timer, delay);
}

/* A failed attempt that got further than any since the last creation restarts the schedule. */
static void note_progress(pc_handler_t *h) {
    if (h->stage > h->best_stage) {
        h->best_stage = h->stage;
        pc_backoff_reset(&h->backoff);
    }
}

static void create_failed(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    HTRACE(h, "attempt failed at stage %d: %s: %s", h->stage, pulsarc_errname(err), msg ? msg : "");
    note_progress(h);
    int64_t delay = pc_backoff_next(&h->backoff);
    int out_of_time = pc_now_ms() + delay > h->create_deadline;
    if (!h->created_once && (!pulsarc_err_is_retriable(err) || out_of_time)) {
        h->state = PC_H_CLOSED;
        h->ops->on_failed(h, err, msg);
    } else if (h->created_once && h->ops->is_final && h->ops->is_final(err)) {
        h->state = PC_H_CLOSED;
        h->ops->on_failed(h, err, msg);
    } else {
        schedule_reconnect(h, delay);
    }
}

void pc_handler_request_create(pc_handler_t *h, pc_conn_t *conn, const pc_cmd_t *cmd, uint64_t id,
                               int timeout_ms) {
    h->create_req = id;
    pc_conn_request(conn, cmd, id, timeout_ms, pc_handler_created, h);
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
        create_failed(h, err, msg);
    } else if (h->lost_in_create) {
        /* A topic unload can close us between the broker's create and its reply. */
        h->ops->send_close(h, conn);
        create_failed(h, PULSARC_ERR_DISCONNECTED, "closed by the broker while being created");
    } else {
        h->conn = conn;
        h->state = PC_H_READY;
        h->created_once = 1;
        h->ready_at = pc_now_ms();
        h->proved = 0;
        h->best_stage = PC_HSTAGE_NONE;
        HTRACE(h, "created");
        pc_backoff_reset(&h->backoff);
        h->ops->on_ready(h, conn, f);
    }
    pc_conn_unref(conn);
    h->ops->unref(h);
}

static void on_conn(void *arg, pc_conn_t *conn, pulsarc_err_t err, const char *msg) {
    pc_handler_t *h = arg;
    if (h->state == PC_H_CONNECTING && !err) {
        pc_conn_ref(conn);
        h->creating = conn;
        h->lost_in_create = 0;
        h->epoch++;
        h->stage = PC_HSTAGE_CREATE_SENT;
        HTRACE(h, "connection %s ready, sending create", pc_conn_peer(conn));
        h->ops->send_create(h, conn); /* pc_handler_created drops our reference */
        return;
    }
    if (h->state == PC_H_CONNECTING)
        create_failed(h, err, msg);
    h->ops->unref(h);
}

static void on_lookup(void *arg, pulsarc_err_t err, const char *msg, const pc_broker_addr_t *a) {
    pc_handler_t *h = arg;
    if (h->state == PC_H_CONNECTING && !err) {
        HTRACE(h, "lookup: %s:%u", a->host, a->port);
        h->stage = PC_HSTAGE_LOOKED_UP;
        pc_pool_get_ex(h->client->pool, a->host, a->port, a->proxied ? a->proxy_to : NULL,
                       h->conn_flags, on_conn, h);
        return;
    }
    if (h->state == PC_H_CONNECTING)
        create_failed(h, err, msg);
    h->ops->unref(h);
}

static void h_connect(pc_handler_t *h) {
    if (h->state != PC_H_CONNECTING)
        return;
    h->ops->ref(h);
    HTRACE(h, "lookup");
    h->stage = PC_HSTAGE_NONE;
    pc_lookup_topic(&h->client->lookup, h->topic, on_lookup, h);
}

void pc_handler_start(pc_handler_t *h) {
    h->create_deadline = pc_now_ms() + h->client->op_timeout_ms;
    h->state = PC_H_CONNECTING;
    h_connect(h);
}

void pc_handler_lost(pc_handler_t *h) {
    HTRACE(h, "connection lost (%s)", h->state == PC_H_READY ? "ready" : "not ready");
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
    pc_timer_stop(h->client->loop, &h->reconnect_timer);
    pc_conn_t *conn = h->state == PC_H_READY ? h->conn : NULL;
    h->conn = NULL;
    if (h->state != PC_H_CLOSED)
        h->state = PC_H_CLOSING;
    return conn;
}
