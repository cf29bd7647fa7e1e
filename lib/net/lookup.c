/*
 * Design notes: LOOKUP follows redirects (bounded by maxLookupRedirects),
 * passing the broker's authoritative flag back as the protocol asks, and
 * reports where to connect, including the proxy case. PARTITIONED_METADATA
 * always goes to the service URL. A service URL may name several hosts:
 * each operation starts at the next one (round-robin) and, when it cannot
 * connect there, tries the others in turn before it fails. The brokers a
 * LOOKUP was sent to are remembered, so that running out of redirects
 * reports the path (and names a loop when a broker comes round again).
 * Each operation is a small heap object that lives until its callback has
 * run. An http:// or https:// service URL
 * sends all three kinds of request to lookup_http.c instead; both take
 * their hosts from lookup_service.c, below them, and lookup_http.c never
 * calls back up here. Every lookup,
 * either way, is timed from the call to its answer into the client's
 * counters (netstats.h), redirects and host fail-over included, as one
 * observation by kind, transport and outcome. Loop thread only.
 */
#include "net/lookup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "net/lookup_http.h"

/*
 * Each partition becomes a producer or consumer of its own, so a count
 * from the broker is bounded before anything is allocated for it; real
 * topics have tens to thousands (the wire type allows 2^32 - 1).
 */
#define PC_MAX_PARTITIONS 100000

/* Brokers of a redirect path kept for the error message; the count goes on. */
#define PC_LOOKUP_PATH_KEPT 8

typedef struct lookup_op {
    pc_lookup_svc_t *svc;
    char *topic;
    int redirects;
    int hosts_tried; /* service URL hosts this operation could not connect to */
    pc_hostport_t path[PC_LOOKUP_PATH_KEPT];
    int authoritative;
    pc_hostport_t target; /* where the current LOOKUP goes */
    pc_lookup_cb cb;
    pc_partitions_cb pcb;
    pc_topics_cb tcb;
    void *arg;
} lookup_op_t;

/* ---- timing: every lookup, over either transport, from call to answer ---- */

typedef struct timed {
    pc_hist_t *hists; /* [2]: success, failed */
    int64_t started_ms;
    union {
        pc_lookup_cb topic;
        pc_partitions_cb partitions;
        pc_topics_cb topics;
    } cb;
    void *arg;
} timed_t;

/* NULL when nothing counts (or no memory: the lookup still runs, untimed). */
static timed_t *timed_new(pc_lookup_svc_t *s, pc_lookup_kind_t kind, void *arg) {
    timed_t *t = s->counters ? malloc(sizeof *t) : NULL;
    if (!t)
        return NULL;
    t->hists = s->counters->lookups[s->url.http ? 1 : 0][kind];
    t->started_ms = pc_now_ms();
    t->arg = arg;
    return t;
}

/* Records the outcome and frees t; returns the caller's arg. */
static void *timed_done(timed_t *t, pulsarc_err_t err) {
    int64_t ms = pc_now_ms() - t->started_ms;
    pc_hist_record(&t->hists[err ? 1 : 0], ms > 0 ? (uint64_t)ms : 0);
    void *arg = t->arg;
    free(t);
    return arg;
}

static void timed_topic(void *arg, pulsarc_err_t err, const char *msg, const pc_broker_addr_t *addr) {
    pc_lookup_cb cb = ((timed_t *)arg)->cb.topic;
    cb(timed_done(arg, err), err, msg, addr);
}

static void timed_partitions(void *arg, pulsarc_err_t err, const char *msg, int n) {
    pc_partitions_cb cb = ((timed_t *)arg)->cb.partitions;
    cb(timed_done(arg, err), err, msg, n);
}

static void timed_topics(void *arg, pulsarc_err_t err, const char *msg, char **topics, size_t n) {
    pc_topics_cb cb = ((timed_t *)arg)->cb.topics;
    cb(timed_done(arg, err), err, msg, topics, n);
}

static void op_free(lookup_op_t *op) {
    free(op->topic);
    free(op);
}

static void finish(lookup_op_t *op, pulsarc_err_t err, const char *msg,
                   const pc_broker_addr_t *addr) {
    op->cb(op->arg, err, msg, addr);
    op_free(op);
}

static void send_lookup(lookup_op_t *op);

/* A TLS client follows the broker's pulsar+ssl:// address, a plain one its pulsar://. */
static const char *broker_url(const lookup_op_t *op, const char *plain, const char *tls) {
    return op->svc->url.tls ? tls : plain;
}

static int same_host(const pc_hostport_t *a, const pc_hostport_t *b) {
    return a->port == b->port && strcmp(a->host, b->host) == 0;
}

/* "lookup of T redirected more than N times (...): a -> b -> a -> ... (a
 * redirect loop: the lookup came back to a)". */
static void fail_redirects(lookup_op_t *op) {
    char m[1024];
    int n = op->redirects < PC_LOOKUP_PATH_KEPT ? op->redirects : PC_LOOKUP_PATH_KEPT;
    size_t len = (size_t)snprintf(m, sizeof m, "lookup of %s redirected more than %d times (maxLookupRedirects): ",
                                  op->topic, op->svc->max_redirects);
    for (int i = 0; i < n && len < sizeof m; i++)
        len += (size_t)snprintf(m + len, sizeof m - len, "%s%s:%u", i ? " -> " : "", op->path[i].host,
                                op->path[i].port);
    if (op->redirects > n && len < sizeof m)
        len += (size_t)snprintf(m + len, sizeof m - len, " -> ...");
    /* The first broker seen twice: where the loop closes. */
    for (int i = 1; i < n && len < sizeof m; i++) {
        for (int j = 0; j < i; j++) {
            if (same_host(&op->path[i], &op->path[j])) {
                snprintf(m + len, sizeof m - len, " (a redirect loop: the lookup came back to %s:%u)",
                         op->path[j].host, op->path[j].port);
                finish(op, PULSARC_ERR_TOO_MANY_REDIRECTS, m, NULL);
                return;
            }
        }
    }
    finish(op, PULSARC_ERR_TOO_MANY_REDIRECTS, m, NULL);
}

static void follow_redirect(lookup_op_t *op, const char *url, int authoritative) {
    pc_service_url_t u;
    char e[256];
    if (op->redirects < PC_LOOKUP_PATH_KEPT)
        op->path[op->redirects] = op->target;
    if (++op->redirects > op->svc->max_redirects) {
        fail_redirects(op);
        return;
    }
    if (!url || pc_service_url_parse(url, &u, e, sizeof e)) {
        finish(op, PULSARC_ERR_PROTOCOL, "lookup redirect without a usable broker URL", NULL);
        return;
    }
    op->target = u.hosts[0];
    op->authoritative = authoritative;
    send_lookup(op);
}

static void connect_to(lookup_op_t *op, const Pulsar__Proto__CommandLookupTopicResponse *r) {
    pc_service_url_t u;
    char e[256];
    const char *url = broker_url(op, r->brokerserviceurl, r->brokerserviceurltls);
    if (!url || pc_service_url_parse(url, &u, e, sizeof e)) {
        finish(op, PULSARC_ERR_PROTOCOL, "lookup answer without a usable broker URL", NULL);
        return;
    }
    pc_broker_addr_t a;
    memset(&a, 0, sizeof a);
    if (r->has_proxy_through_service_url && r->proxy_through_service_url) {
        a.proxied = 1;
        snprintf(a.host, sizeof a.host, "%s", op->target.host);
        a.port = op->target.port;
        snprintf(a.proxy_to, sizeof a.proxy_to, "%s:%u", u.hosts[0].host, u.hosts[0].port);
    } else {
        a.port = u.hosts[0].port;
        snprintf(a.host, sizeof a.host, "%s", u.hosts[0].host);
    }
    finish(op, PULSARC_OK, NULL, &a);
}

static void on_lookup_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    lookup_op_t *op = arg;
    if (err) {
        finish(op, err, msg, NULL);
        return;
    }
    const Pulsar__Proto__CommandLookupTopicResponse *r = f->cmd->lookuptopicresponse;
    if (!r || !r->has_response ||
        r->response == PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Failed) {
        err = r && r->has_error ? pc_err_from_server(r->error) : PULSARC_ERR_PROTOCOL;
        finish(op, err, r && r->message ? r->message : "lookup failed", NULL);
    } else if (r->response == PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Redirect) {
        follow_redirect(op, broker_url(op, r->brokerserviceurl, r->brokerserviceurltls),
                        r->has_authoritative && r->authoritative);
    } else {
        connect_to(op, r);
    }
}

/*
 * A service URL host that cannot be reached (refused, unresolvable, TLS or
 * handshake failure, timeout): move op->target to the next host of the
 * service URL and return 1, unless the operation has left the service URL
 * (a redirect) or every host has been tried. A broker's own error answer
 * is not a reason to try elsewhere.
 */
static int next_service_host(lookup_op_t *op, pulsarc_err_t err) {
    if (op->redirects > 0 || err >= PULSARC_ERR_BROKER_BASE || err == PULSARC_ERR_NOMEM ||
        err == PULSARC_ERR_CLOSED)
        return 0;
    if (++op->hosts_tried >= op->svc->url.nhosts)
        return 0;
    op->target = *pc_lookup_service_host(op->svc);
    return 1;
}

/* The connection error as it came for a one-host service URL or a
 * redirect target; for several hosts, that none could be reached and the
 * last one's error. */
static const char *conn_failure(const lookup_op_t *op, const char *msg, char *buf, size_t len) {
    if (op->svc->url.nhosts < 2 || op->redirects > 0)
        return msg;
    snprintf(buf, len, "none of the %d hosts of the service URL could be reached; the last, %s:%u: %s",
             op->svc->url.nhosts, op->target.host, op->target.port, msg ? msg : "failed");
    return buf;
}

static void on_lookup_conn(void *arg, pc_conn_t *conn, pulsarc_err_t err, const char *msg) {
    lookup_op_t *op = arg;
    if (err) {
        char m[512];
        if (next_service_host(op, err))
            send_lookup(op);
        else
            finish(op, err, conn_failure(op, msg, m, sizeof m), NULL);
        return;
    }
    Pulsar__Proto__CommandLookupTopic lt = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC__INIT;
    lt.topic = op->topic;
    lt.request_id = (*op->svc->next_id)++;
    lt.has_authoritative = 1;
    lt.authoritative = op->authoritative;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP;
    cmd.lookuptopic = &lt;
    pc_conn_request(conn, &cmd, lt.request_id, op->svc->op_timeout_ms, on_lookup_reply, op);
}

static void send_lookup(lookup_op_t *op) {
    pc_pool_get(op->svc->pool, op->target.host, op->target.port, NULL, on_lookup_conn, op);
}

static lookup_op_t *op_new(pc_lookup_svc_t *s, const char *topic, void *arg) {
    lookup_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return NULL;
    op->svc = s;
    op->arg = arg;
    op->topic = strdup(topic);
    if (!op->topic) {
        free(op);
        return NULL;
    }
    op->target = *pc_lookup_service_host(s);
    return op;
}

void pc_lookup_topic(pc_lookup_svc_t *s, const char *topic, pc_lookup_cb cb, void *arg) {
    timed_t *t = timed_new(s, PC_LOOKUP_KIND_TOPIC, arg);
    if (t) {
        t->cb.topic = cb;
        cb = timed_topic;
        arg = t;
    }
    if (s->url.http) {
        pc_lookup_http_topic(s, topic, cb, arg);
        return;
    }
    lookup_op_t *op = op_new(s, topic, arg);
    if (!op) {
        cb(arg, PULSARC_ERR_NOMEM, "out of memory", NULL);
        return;
    }
    op->cb = cb;
    send_lookup(op);
}

/* ---- partitioned metadata ---- */

/* "the broker answered PARTITIONED_METADATA for T with a LOOKUP_RESPONSE
 * command: <its message>" (a static buffer: loop thread only). */
static const char *wrong_reply(const pc_frame_t *f, const char *what, const lookup_op_t *op) {
    static char m[400];
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&pulsar__proto__base_command__type__descriptor, (int)f->cmd->type);
    const Pulsar__Proto__CommandLookupTopicResponse *l = f->cmd->lookuptopicresponse;
    /* pulsar-proxy answers a refused PARTITIONED_METADATA so: its text is the reason */
    const char *why = l && l->message ? l->message : NULL;
    snprintf(m, sizeof m, "the broker answered %s for %s with a %s command%s%.200s", what, op->topic,
             v ? v->name : "unknown", why ? ": " : "", why ? why : "");
    return m;
}

static void pfinish(lookup_op_t *op, pulsarc_err_t err, const char *msg, int n) {
    op->pcb(op->arg, err, msg, n);
    op_free(op);
}

static void on_partitions_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f,
                                const char *msg) {
    lookup_op_t *op = arg;
    if (err) {
        pfinish(op, err, msg, 0);
        return;
    }
    const Pulsar__Proto__CommandPartitionedTopicMetadataResponse *r = f->cmd->partitionmetadataresponse;
    if (!r) { /* another command under this request id */
        pfinish(op, PULSARC_ERR_PROTOCOL, wrong_reply(f, "PARTITIONED_METADATA", op), 0);
        return;
    }
    if (r->has_response &&
        r->response == PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__LOOKUP_TYPE__Failed) {
        err = r->has_error ? pc_err_from_server(r->error) : PULSARC_ERR_PROTOCOL;
        pfinish(op, err, r->message ? r->message : "partition metadata lookup failed", 0);
        return;
    }
    if (r->has_partitions && r->partitions > PC_MAX_PARTITIONS) {
        char m[200];
        snprintf(m, sizeof m, "PARTITIONED_METADATA_RESPONSE says %s has %u partitions, more than the limit of %d",
                 op->topic, r->partitions, PC_MAX_PARTITIONS);
        pfinish(op, PULSARC_ERR_PROTOCOL, m, 0);
        return;
    }
    pfinish(op, PULSARC_OK, NULL, r->has_partitions ? (int)r->partitions : 0);
}

static void on_partitions_conn(void *arg, pc_conn_t *conn, pulsarc_err_t err, const char *msg) {
    lookup_op_t *op = arg;
    if (err) {
        char m[512];
        if (next_service_host(op, err))
            pc_pool_get(op->svc->pool, op->target.host, op->target.port, NULL, on_partitions_conn, op);
        else
            pfinish(op, err, conn_failure(op, msg, m, sizeof m), 0);
        return;
    }
    Pulsar__Proto__CommandPartitionedTopicMetadata pm =
        PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA__INIT;
    pm.topic = op->topic;
    pm.request_id = (*op->svc->next_id)++;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA;
    cmd.partitionmetadata = &pm;
    pc_conn_request(conn, &cmd, pm.request_id, op->svc->op_timeout_ms, on_partitions_reply, op);
}

void pc_lookup_partitions(pc_lookup_svc_t *s, const char *topic, pc_partitions_cb cb, void *arg) {
    timed_t *t = timed_new(s, PC_LOOKUP_KIND_METADATA, arg);
    if (t) {
        t->cb.partitions = cb;
        cb = timed_partitions;
        arg = t;
    }
    if (s->url.http) {
        pc_lookup_http_partitions(s, topic, cb, arg);
        return;
    }
    lookup_op_t *op = op_new(s, topic, arg);
    if (!op) {
        cb(arg, PULSARC_ERR_NOMEM, "out of memory", 0);
        return;
    }
    op->pcb = cb;
    pc_pool_get(s->pool, op->target.host, op->target.port, NULL, on_partitions_conn, op);
}

/* ---- topics of a namespace ---- */

static void on_topics_reply(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg) {
    lookup_op_t *op = arg;
    if (err) {
        op->tcb(op->arg, err, msg, NULL, 0);
    } else {
        const Pulsar__Proto__CommandGetTopicsOfNamespaceResponse *r = f->cmd->gettopicsofnamespaceresponse;
        if (r)
            op->tcb(op->arg, PULSARC_OK, NULL, r->topics, r->n_topics);
        else
            op->tcb(op->arg, PULSARC_ERR_PROTOCOL, wrong_reply(f, "GET_TOPICS_OF_NAMESPACE", op), NULL, 0);
    }
    op_free(op);
}

static void on_topics_conn(void *arg, pc_conn_t *conn, pulsarc_err_t err, const char *msg) {
    lookup_op_t *op = arg;
    if (err) {
        char m[512];
        if (next_service_host(op, err)) {
            pc_pool_get(op->svc->pool, op->target.host, op->target.port, NULL, on_topics_conn, op);
            return;
        }
        op->tcb(op->arg, err, conn_failure(op, msg, m, sizeof m), NULL, 0);
        op_free(op);
        return;
    }
    Pulsar__Proto__CommandGetTopicsOfNamespace g = PULSAR__PROTO__COMMAND_GET_TOPICS_OF_NAMESPACE__INIT;
    g.namespace_ = op->topic; /* holds the namespace here */
    g.request_id = (*op->svc->next_id)++;
    g.has_mode = 1;
    g.mode = PULSAR__PROTO__COMMAND_GET_TOPICS_OF_NAMESPACE__MODE__PERSISTENT;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__GET_TOPICS_OF_NAMESPACE;
    cmd.gettopicsofnamespace = &g;
    pc_conn_request(conn, &cmd, g.request_id, op->svc->op_timeout_ms, on_topics_reply, op);
}

void pc_lookup_namespace_topics(pc_lookup_svc_t *s, const char *ns, pc_topics_cb cb, void *arg) {
    timed_t *t = timed_new(s, PC_LOOKUP_KIND_LIST_TOPICS, arg);
    if (t) {
        t->cb.topics = cb;
        cb = timed_topics;
        arg = t;
    }
    if (s->url.http) {
        pc_lookup_http_namespace_topics(s, ns, cb, arg);
        return;
    }
    lookup_op_t *op = op_new(s, ns, arg);
    if (!op) {
        cb(arg, PULSARC_ERR_NOMEM, "out of memory", NULL, 0);
        return;
    }
    op->tcb = cb;
    pc_pool_get(s->pool, op->target.host, op->target.port, NULL, on_topics_conn, op);
}
