/*
 * Design notes: the client owns the loop thread, the connection pool, the
 * lookup service and the callback queue, and keeps a registry of its
 * producers and consumers so close reaches them all. Public calls run on
 * application threads and only post closures to the loop; the only lock
 * here guards the registry. Shutdown order: handles, calls still running
 * on the loop (partition counts), connections, loop, callback queue — so
 * every pending operation gets its outcome first. Once close has taken
 * the list of handles no new one registers (CLOSED), so every handle's
 * close runs while the loop still does.
 *
 * threadingMode=loop: the loop gets no thread and the callback queue none;
 * pulsarc_client_step() turns the loop and then runs the callbacks on the
 * application's thread, and a push into the empty callback queue wakes the
 * loop's fd so the application knows to step. Nothing here starts a
 * thread in that mode: closing handles runs one after the other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "client/request.h"
#include "core/err.h"

pulsarc_err_t pc_client_post(pulsarc_client_t *c, pc_loop_fn fn, void *arg) {
    return pc_loop_post(c->loop, fn, arg);
}

pulsarc_err_t pc_client_post_within(pulsarc_client_t *c, pc_loop_fn fn, void *arg, int64_t within_us) {
    return pc_loop_post_within(c->loop, fn, arg, within_us);
}

pulsarc_err_t pc_client_parse_topic(pulsarc_client_t *c, const char *name, pc_topic_t *t,
                                    char *errstr, size_t errlen) {
    return pc_topic_parse(name, pc_conf_str(c->conf, PC_PROP_DEFAULT_TENANT),
                          pc_conf_str(c->conf, PC_PROP_DEFAULT_NAMESPACE), t, errstr, errlen);
}

pulsarc_err_t pc_client_register(pulsarc_client_t *c, pc_handle_t *h) {
    pthread_mutex_lock(&c->lock);
    int closed = c->closing || c->closed;
    if (!closed) {
        h->next = c->handles;
        c->handles = h;
    }
    pthread_mutex_unlock(&c->lock);
    return closed ? PULSARC_ERR_CLOSED : PULSARC_OK;
}

void pc_client_unregister(pulsarc_client_t *c, pc_handle_t *h) {
    pthread_mutex_lock(&c->lock);
    for (pc_handle_t **pp = &c->handles; *pp; pp = &(*pp)->next) {
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
}

void pc_client_set_report(pulsarc_client_t *c, pc_handle_t *h,
                          void (*report)(pc_handle_t *h, struct pc_metrics_entry *out)) {
    pthread_mutex_lock(&c->lock);
    h->report = report;
    pthread_mutex_unlock(&c->lock);
}

static int loop_mode(const pulsarc_client_t *c) {
    return pc_conf_int(c->conf, PC_PROP_THREADING_MODE) == 1;
}

static pulsarc_err_t resolve_service_url(pulsarc_client_t *c, char *errstr, size_t errlen) {
    const char *url = pc_conf_str(c->conf, PC_PROP_SERVICE_URL);
    if (!*url)
        url = getenv("PULSAR_SERVICE_URL");
    if (!url || !*url)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "serviceUrl is not set (nor PULSAR_SERVICE_URL)");
    pulsarc_err_t err = pc_service_url_parse(url, &c->lookup.url, errstr, errlen);
    if (err)
        return err;
#if !PULSARC_WITH_CURL
    if (c->lookup.url.http)
        return pc_seterr(errstr, errlen, PULSARC_ERR_UNSUPPORTED,
                         "HTTP lookup needs libcurl (built with WITH_CURL=0); use a pulsar:// service URL, not '%s'", url);
#endif
    if (loop_mode(c) && c->lookup.url.http)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "threadingMode=loop: HTTP lookup (serviceUrl '%s') needs a thread of its own; "
                         "use a pulsar:// service URL", url);
    if (loop_mode(c) && strstr(pc_conf_str(c->conf, PC_PROP_AUTH_PLUGIN), "uth2"))
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "threadingMode=loop: authPlugin OAuth2 fetches tokens on a thread of its own; "
                         "use threadingMode=thread");
    /* TLS context and authentication, shared by every connection. */
    return pc_conn_opts_security(&c->conn_opts, c->conf, c->lookup.url.tls, errstr, errlen);
}

static void setup_options(pulsarc_client_t *c) {
    snprintf(c->client_version, sizeof c->client_version, "pulsarc-%s", pulsarc_version());
    c->op_timeout_ms = (int)pc_conf_int(c->conf, PC_PROP_OPERATION_TIMEOUT_MS);
    memset(&c->conn_opts, 0, sizeof c->conn_opts);
    c->conn_opts.connect_timeout_ms = (int)pc_conf_int(c->conf, PC_PROP_CONNECTION_TIMEOUT_MS);
    c->conn_opts.keepalive_s = (int)pc_conf_int(c->conf, PC_PROP_KEEPALIVE_S);
    c->conn_opts.client_version = c->client_version;
    c->lookup.op_timeout_ms = c->op_timeout_ms;
    c->lookup.max_redirects = (int)pc_conf_int(c->conf, PC_PROP_MAX_LOOKUP_REDIRECTS);
    c->lookup.next_id = &c->next_id;
    c->lookup.conf = c->conf;
    c->conn_opts.counters = &c->net; /* lib/net counts into the client's */
    c->lookup.counters = &c->net;
}

static void client_free(pulsarc_client_t *c) {
    pc_pool_free(c->pool);
    if (c->loop)
        pc_loop_unref(c->loop);
    pc_conn_opts_security_free(&c->conn_opts); /* after the pool: connections use them */
    pulsarc_conf_destroy(c->conf);
    pc_memlimit_destroy(&c->memlimit);
    pc_cbq_free(&c->cbq); /* close only stopped it: the stepping calls read it until now */
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void wake_loop(void *loop) { pc_loop_wake(loop); }

static pulsarc_err_t start_runtime(pulsarc_client_t *c, char *errstr, size_t errlen) {
    int poll_mode = pc_conf_int(c->conf, PC_PROP_CALLBACK_MODE) == 1 || loop_mode(c);
    c->loop = pc_loop_new();
    if (c->loop && loop_mode(c))
        pc_loop_set_threadless(c->loop);
    c->pool = c->loop ? pc_pool_new(c->loop, &c->conn_opts) : NULL;
    c->lookup.pool = c->pool;
    c->lookup.loop = c->loop;
    c->lookup.auth = c->conn_opts.auth;
    if (!c->pool)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "could not create the event loop");
    if (pc_cbq_init(&c->cbq, !poll_mode))
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "could not start the callback thread");
    if (loop_mode(c)) {
        c->cbq.wake = wake_loop;
        c->cbq.wake_arg = c->loop;
    }
    if (pc_loop_start(c->loop, "pulsarc-io")) {
        pc_cbq_shutdown(&c->cbq);
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "could not start the network thread");
    }
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_client_new(const pulsarc_conf_t *conf, pulsarc_client_t **clientp,
                                 char *errstr, size_t errlen) {
    if (!clientp)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "clientp is NULL");
    *clientp = NULL;
    pulsarc_client_t *c = calloc(1, sizeof *c);
    if (!c || !(c->conf = conf ? pulsarc_conf_dup(conf) : pulsarc_conf_new())) {
        free(c);
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&c->lock, NULL);
    c->next_id = 1;
    pc_memlimit_init(&c->memlimit, pc_conf_int(c->conf, PC_PROP_MEMORY_LIMIT_BYTES));
    setup_options(c);
    pulsarc_err_t err = resolve_service_url(c, errstr, errlen);
    if (!err)
        err = start_runtime(c, errstr, errlen);
    if (err) {
        client_free(c);
        return err;
    }
    *clientp = c;
    return PULSARC_OK;
}

/* ---- partitions ---- */

/*
 * A partition count is a call (request.h) whose attempt is the lookup
 * service's PARTITIONED_METADATA: retriable answers (ServiceNotReady,
 * TooManyRequests, a lost connection) are retried with backoff until
 * operationTimeoutMs, as for lookups; a timed-out answer is not (it has
 * spent the whole time already).
 */
typedef struct parts_call {
    pc_call_t call;           /* first: the request's steps hand back a pc_call_t * */
    int *count;               /* the caller's; valid while call.op is set */
    char topic[];
} parts_call_t;

static void on_partitions(void *arg, pulsarc_err_t err, const char *msg, int n) {
    parts_call_t *pc = arg;
    if (!pc_call_wanted(&pc->call.req)) {
    } else if (err) {
        pc_request_failed(&pc->call.req, err, msg);
    } else {
        *pc->count = n;
        pc_call_complete(&pc->call, PULSARC_OK, NULL);
    }
    pc_call_unref(&pc->call.req); /* the attempt's */
}

static void parts_attempt(pc_request_t *r) {
    pc_lookup_partitions(&r->client->lookup, r->topic, on_partitions, r);
}

static int parts_retry_after(pc_request_t *r, pulsarc_err_t err) {
    (void)r;
    return pulsarc_err_is_retriable(err) && err != PULSARC_ERR_TIMEOUT;
}

static const pc_request_ops_t parts_ops = {
    .wanted = pc_call_wanted,
    .attempt = parts_attempt,
    .retry_after = parts_retry_after,
    .on_failed = pc_call_failed,
    .ref = pc_call_ref,
    .unref = pc_call_unref,
};

static void free_parts_call(pc_call_t *call) { free(call); }

static void do_partitions(void *arg) {
    parts_call_t *pc = arg;
    pulsarc_client_t *c = pc->call.req.client;
    if (pc_call_start(&pc->call, &c->calls))
        pc_request_start(&pc->call.req, c->op_timeout_ms);
}

pulsarc_err_t pulsarc_client_partitions(pulsarc_client_t *c, const char *topic, int *count,
                                        char *errstr, size_t errlen) {
    if (!c || !topic || !count)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "client, topic and count are required");
    pc_topic_t t;
    pulsarc_err_t err = pc_client_parse_topic(c, topic, &t, errstr, errlen);
    if (err)
        return err;
    size_t len = strlen(t.full) + 1;
    parts_call_t *pc = malloc(sizeof *pc + len);
    if (!pc)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    memcpy(pc->topic, t.full, len);
    pc_op_t op;
    pc_op_init(&op);
    *count = 0;
    pc_call_init(&pc->call, &parts_ops, c, pc->topic,
                 pc_conf_int(c->conf, PC_PROP_INITIAL_BACKOFF_MS),
                 pc_conf_int(c->conf, PC_PROP_MAX_BACKOFF_MS), &op, free_parts_call);
    pc->count = count;
    err = pc_client_post(c, do_partitions, pc);
    if (err) {
        free(pc);
        pc_seterr(errstr, errlen, err, "client is closed");
    } else {
        err = pc_op_wait(&op, errstr, errlen);
    }
    pc_op_destroy(&op);
    return err;
}

int pulsarc_client_poll(pulsarc_client_t *c, int timeout_ms) {
    if (!c || c->cbq.own_thread || pc_loop_threadless(c->loop))
        return 0; /* loop mode: pulsarc_client_step runs the callbacks */
    return pc_cbq_poll(&c->cbq, timeout_ms);
}

/* ---- loop mode ---- */

int pulsarc_client_fd(pulsarc_client_t *c) {
    return c && pc_loop_threadless(c->loop) ? pc_loop_fd(c->loop) : -1;
}

int pulsarc_client_next_timeout_ms(pulsarc_client_t *c) {
    if (!c || !pc_loop_threadless(c->loop))
        return -1;
    return pc_cbq_pending(&c->cbq) ? 0 : pc_loop_next_timeout_ms(c->loop);
}

/* Callbacks run between turns, with the loop marked so that a synchronous
 * call made by one turns the loop itself instead of waiting for us. */
static int step_callbacks(pulsarc_client_t *c) {
    pc_loop_step_callbacks(c->loop, 1);
    int n = pc_cbq_poll(&c->cbq, 0);
    pc_loop_step_callbacks(c->loop, 0);
    return n;
}

pulsarc_err_t pulsarc_client_step(pulsarc_client_t *c, int budget_ms, char *errstr,
                                  size_t errlen) {
    if (!c)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "client is NULL");
    if (!pc_loop_threadless(c->loop))
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "pulsarc_client_step needs threadingMode=loop; this client runs its own threads");
    const char *why = "";
    pulsarc_err_t err = pc_loop_step_enter(c->loop, &why);
    if (err)
        return pc_seterr(errstr, errlen, err, "%s", why);
    int64_t end = pc_now_ms() + (budget_ms > 0 ? budget_ms : 0);
    int worked = 0;
    for (;;) {
        int64_t left = end - pc_now_ms();
        int wait = worked || left <= 0 ? 0 : (int)left;
        int n = pc_loop_step_turn(c->loop, wait);
        n += step_callbacks(c);
        worked |= n > 0;
        if (pc_now_ms() >= end || (worked && n == 0))
            break;
    }
    pc_loop_step_leave(c->loop);
    return PULSARC_OK;
}

/* ---- shutdown ---- */

static void close_connections(void *arg) {
    pulsarc_client_t *c = arg;
    pc_call_list_cancel(&c->calls, PULSARC_ERR_CLOSED, "client closed");
    pc_pool_close_all(c->pool, PULSARC_ERR_CLOSED, "client closed");
}

/*
 * Closing every producer and consumer at once, bounded by one deadline: each
 * handle closes on a short-lived thread of its own and reports to one op of
 * as many parts; after the deadline the client goes on to close the
 * connections, which completes whatever those closes still wait for, and
 * then joins them.
 */
typedef struct closer {
    pc_handle_t *h;
    pc_op_t *all;
    pthread_t thread;
    int started;
} closer_t;

static void *closer_main(void *arg) {
    closer_t *k = arg;
    k->h->close(k->h);
    pc_op_done(k->all, PULSARC_OK, NULL);
    return NULL;
}

static closer_t *start_closers(pulsarc_client_t *c, pc_op_t *all, size_t *n) {
    pthread_mutex_lock(&c->lock);
    /* In the same hold as the list is taken: a handle registered after it
     * would never be closed, and its close posted after the loop stopped
     * would be lost (a partitioned handle's partition watch with it). */
    c->closing = 1;
    *n = 0;
    for (pc_handle_t *h = c->handles; h; h = h->next)
        (*n)++;
    closer_t *ks = calloc(*n ? *n : 1, sizeof *ks);
    size_t i = 0;
    for (pc_handle_t *h = c->handles; ks && h; h = h->next)
        ks[i++].h = h;
    pthread_mutex_unlock(&c->lock);
    if (!ks) {
        *n = 0;
        return NULL;
    }
    pc_op_add(all, (int)*n);
    int inline_only = pc_loop_threadless(c->loop); /* loop mode starts no thread */
    for (i = 0; i < *n; i++) {
        ks[i].all = all;
        ks[i].started = !inline_only &&
                        pthread_create(&ks[i].thread, NULL, closer_main, &ks[i]) == 0;
        if (!ks[i].started)
            closer_main(&ks[i]); /* no thread: close inline */
    }
    return ks;
}

static void join_closers(closer_t *ks, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (ks[i].started)
            pthread_join(ks[i].thread, NULL);
    free(ks);
}

static void destroy_handles(pulsarc_client_t *c) {
    for (;;) {
        pthread_mutex_lock(&c->lock);
        pc_handle_t *h = c->handles;
        pthread_mutex_unlock(&c->lock);
        if (!h)
            return;
        h->destroy(h); /* unregisters itself */
    }
}

pulsarc_err_t pulsarc_client_close(pulsarc_client_t *c, int timeout_ms) {
    if (!c)
        return PULSARC_ERR_INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    int was_closed = c->closed;
    pthread_mutex_unlock(&c->lock);
    if (was_closed)
        return PULSARC_OK;
    if (pc_in_callback())
        return PULSARC_ERR_STATE; /* cannot join our own callback thread */
    pc_op_t all; /* one part for each closer, one for us */
    pc_op_init(&all);
    size_t n;
    closer_t *ks = start_closers(c, &all, &n);
    pc_op_done(&all, PULSARC_OK, NULL);
    pc_op_wait_for(&all, timeout_ms < 0 ? c->op_timeout_ms : timeout_ms);
    pthread_mutex_lock(&c->lock);
    c->closed = 1;
    pthread_mutex_unlock(&c->lock);
    pc_client_post(c, close_connections, c); /* fails what the closers still wait on */
    join_closers(ks, n);
    pc_op_destroy(&all);
    pc_loop_stop(c->loop);
    pc_cbq_shutdown(&c->cbq);
    return PULSARC_OK;
}

void pulsarc_client_destroy(pulsarc_client_t *c) {
    if (!c || pc_in_callback())
        return;
    pulsarc_client_close(c, -1);
    destroy_handles(c);
    client_free(c);
}
