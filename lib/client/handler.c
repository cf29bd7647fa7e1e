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
 */
#include "client/handler.h"

static void h_connect(pc_handler_t *h);

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
    pc_timer_init(&h->reconnect_timer, (pc_loop_fn)h_connect, h);
}

static void schedule_reconnect(pc_handler_t *h, int64_t delay) {
    h->state = PC_H_CONNECTING;
    pc_timer_start(h->client->loop, &h->reconnect_timer, delay);
}

static void create_failed(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
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
    pc_lookup_topic(&h->client->lookup, h->topic, on_lookup, h);
}

void pc_handler_start(pc_handler_t *h) {
    h->create_deadline = pc_now_ms() + h->client->op_timeout_ms;
    h->state = PC_H_CONNECTING;
    h_connect(h);
}

void pc_handler_lost(pc_handler_t *h) {
    h->conn = NULL;
    if (h->state == PC_H_READY)
        schedule_reconnect(h, pc_backoff_next(&h->backoff));
    else if (h->state == PC_H_CONNECTING && h->creating)
        h->lost_in_create = 1; /* pc_handler_created retries instead */
}

pc_conn_t *pc_handler_stop(pc_handler_t *h) {
    pc_timer_stop(h->client->loop, &h->reconnect_timer);
    pc_conn_t *conn = h->state == PC_H_READY ? h->conn : NULL;
    h->conn = NULL;
    if (h->state != PC_H_CLOSED)
        h->state = PC_H_CLOSING;
    return conn;
}
