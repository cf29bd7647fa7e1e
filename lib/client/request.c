/*
 * Design notes: the reconnecting request, written once (see request.h for
 * the policy). It owns the attempt's steps, the backoff and the retry
 * timer; the owner supplies the command through pc_request_ops_t and
 * decides which errors are worth another attempt. Loop thread only. Every
 * asynchronous step holds a reference on the owner and re-checks
 * `wanted` when it resumes.
 *
 * Calls (pc_call_t) add a lifetime for requests made on behalf of one
 * waiting caller: a reference count the loop alone touches, and a list a
 * close cancels them through.
 */
#include "client/request.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pc_request_tracing(void) {
    static _Atomic int on = -1; /* every client's loop thread may ask */
    int v = atomic_load(&on);
    if (v < 0) {
        const char *d = getenv("PULSARC_DEBUG");
        v = d && strstr(d, "reconnect") != NULL;
        atomic_store(&on, v);
    }
    return v;
}

void pc_request_trace(const pc_request_t *r, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    int64_t now = pc_now_ms();
    fprintf(stderr, "pulsarc: %lld.%03lld %p %s: %s\n", (long long)(now / 1000),
            (long long)(now % 1000), (const void *)r, r->topic, line);
}

static void attempt_timer(void *arg) { pc_request_attempt(arg); }

void pc_request_init(pc_request_t *r, const pc_request_ops_t *ops, pulsarc_client_t *c,
                     const char *topic, int64_t initial_ms, int64_t max_ms) {
    r->ops = ops;
    r->client = c;
    r->topic = topic;
    r->what = "request";
    r->conn_flags = 0;
    r->deadline = -1;
    pc_backoff_init(&r->backoff, initial_ms, max_ms);
    pc_backoff_init(&r->owner_backoff, initial_ms,
                    max_ms < PC_REQUEST_OWNER_MAX_MS ? max_ms : PC_REQUEST_OWNER_MAX_MS);
    r->owner_tries = 0;
    r->stage = r->best_stage = PC_RSTAGE_NONE;
    pc_timer_init(&r->timer, attempt_timer, r);
}

void pc_request_retry_in(pc_request_t *r, int64_t delay_ms) {
    PC_RTRACE(r, "reconnect in %lld ms", (long long)delay_ms);
    pc_timer_start(r->client->loop, &r->timer, delay_ms);
}

/* A failed attempt that got further than any since the last success restarts the schedule. */
static void note_progress(pc_request_t *r) {
    if (r->stage > r->best_stage) {
        r->best_stage = r->stage;
        pc_backoff_reset(&r->backoff);
    }
}

/*
 * The topic's owner could not be reached. Either the lookup named it and no
 * connection to it came up (refused, closed, or turned away by the proxy in
 * front of it; which error does not matter, retry_after has ruled out the
 * final ones), or the lookup itself was answered ServiceNotReady, which is
 * what a proxy answers when the owner it asks refuses its connection. Not
 * a lookup that got no answer: the service URL being down is the ordinary
 * schedule's case.
 */
static int owner_unreachable(const pc_request_t *r, pulsarc_err_t err) {
    return r->stage == PC_RSTAGE_LOOKED_UP ||
           (r->stage == PC_RSTAGE_NONE && err == PULSARC_ERR_BROKER_SERVICE_NOT_READY);
}

int64_t pc_request_next_delay(pc_request_t *r, pulsarc_err_t err) {
    note_progress(r);
    if (owner_unreachable(r, err) && r->owner_tries < PC_REQUEST_OWNER_TRIES) {
        r->owner_tries++;
        return pc_backoff_next(&r->owner_backoff);
    }
    return pc_backoff_next(&r->backoff);
}

void pc_request_failed(pc_request_t *r, pulsarc_err_t err, const char *msg) {
    PC_RTRACE(r, "attempt failed at stage %d: %s: %s", r->stage, pulsarc_errname(err),
              msg ? msg : "");
    int64_t delay = pc_request_next_delay(r, err);
    int out_of_time = r->deadline >= 0 && pc_now_ms() + delay > r->deadline;
    if (!r->ops->retry_after(r, err) || out_of_time)
        r->ops->on_failed(r, err, msg);
    else
        pc_request_retry_in(r, delay);
}

void pc_request_succeeded(pc_request_t *r) {
    r->best_stage = PC_RSTAGE_NONE;
    pc_backoff_reset(&r->backoff);
    pc_backoff_reset(&r->owner_backoff);
    r->owner_tries = 0;
}

void pc_request_stop(pc_request_t *r) { pc_timer_stop(r->client->loop, &r->timer); }

static void on_conn(void *arg, pc_conn_t *conn, pulsarc_err_t err, const char *msg) {
    pc_request_t *r = arg;
    int wanted = r->ops->wanted(r);
    if (wanted && !err) {
        r->stage = PC_RSTAGE_SENT;
        PC_RTRACE(r, "connection %s ready, sending %s", pc_conn_peer(conn), r->what);
        r->ops->send(r, conn); /* the reply drops our reference */
        return;
    }
    if (wanted)
        pc_request_failed(r, err, msg);
    r->ops->unref(r);
}

static void connect_to(pc_request_t *r, const pc_broker_addr_t *a) {
    pc_pool_get_ex(r->client->pool, a->host, a->port, a->proxied ? a->proxy_to : NULL,
                   r->conn_flags, on_conn, r);
}

static void on_lookup(void *arg, pulsarc_err_t err, const char *msg, const pc_broker_addr_t *a) {
    pc_request_t *r = arg;
    int wanted = r->ops->wanted(r);
    if (wanted && !err) {
        PC_RTRACE(r, "lookup: %s:%u", a->host, a->port);
        r->stage = PC_RSTAGE_LOOKED_UP;
        if (r->ops->looked_up)
            r->ops->looked_up(r, a);
        connect_to(r, a);
        return;
    }
    if (wanted)
        pc_request_failed(r, err, msg);
    r->ops->unref(r);
}

void pc_request_attempt(pc_request_t *r) {
    if (!r->ops->wanted(r))
        return;
    r->ops->ref(r);
    r->stage = PC_RSTAGE_NONE;
    pc_conn_t *conn = r->ops->known_conn ? r->ops->known_conn(r) : NULL;
    const pc_broker_addr_t *a = r->ops->known_addr ? r->ops->known_addr(r) : NULL;
    if (r->ops->attempt) {
        r->ops->attempt(r);
    } else if (conn) {
        r->ops->send(r, conn);
    } else if (a) {
        connect_to(r, a);
    } else {
        PC_RTRACE(r, "lookup");
        pc_lookup_topic(&r->client->lookup, r->topic, on_lookup, r);
    }
}

void pc_request_start(pc_request_t *r, int timeout_ms) {
    r->deadline = timeout_ms < 0 ? -1 : pc_now_ms() + timeout_ms;
    pc_request_attempt(r);
}

/* ---------- calls ---------- */

void pc_call_init(pc_call_t *call, const pc_request_ops_t *ops, pulsarc_client_t *c,
                  const char *topic, int64_t initial_ms, int64_t max_ms, pc_op_t *op,
                  void (*free_fn)(pc_call_t *call)) {
    pc_request_init(&call->req, ops, c, topic, initial_ms, max_ms);
    call->next = NULL;
    call->list = NULL;
    call->op = op;
    call->refs = 1; /* until completed */
    call->free_fn = free_fn;
}

int pc_call_wanted(pc_request_t *r) { return ((pc_call_t *)r)->op != NULL; }

void pc_call_ref(pc_request_t *r) { ((pc_call_t *)r)->refs++; }

static void unlink_call(pc_call_t *call) {
    if (!call->list)
        return;
    for (pc_call_t **pp = &call->list->head; *pp; pp = &(*pp)->next) {
        if (*pp == call) {
            *pp = call->next;
            break;
        }
    }
    call->list = NULL;
}

void pc_call_unref(pc_request_t *r) {
    pc_call_t *call = (pc_call_t *)r;
    if (--call->refs > 0)
        return;
    unlink_call(call);
    call->free_fn(call);
}

void pc_call_complete(pc_call_t *call, pulsarc_err_t err, const char *msg) {
    if (!call->op)
        return;
    pc_op_t *op = call->op;
    call->op = NULL;
    unlink_call(call);
    pc_op_done(op, err, msg);
    pc_call_unref(&call->req); /* the reference held until completion */
}

void pc_call_failed(pc_request_t *r, pulsarc_err_t err, const char *msg) {
    pc_call_complete((pc_call_t *)r, err, msg);
}

int pc_call_start(pc_call_t *call, pc_call_list_t *list) {
    if (list->closed) {
        pc_call_complete(call, PULSARC_ERR_CLOSED, "client is closed");
        return 0;
    }
    call->list = list;
    call->next = list->head;
    list->head = call;
    return 1;
}

void pc_call_list_cancel(pc_call_list_t *list, pulsarc_err_t err, const char *msg) {
    list->closed = 1;
    while (list->head) {
        pc_call_t *call = list->head;
        pc_request_stop(&call->req);
        pc_call_complete(call, err, msg); /* unlinks it */
    }
}
