/*
 * Design notes: LOOKUP follows redirects (bounded by maxLookupRedirects),
 * passing the broker's authoritative flag back as the protocol asks, and
 * reports where to connect, including the proxy case. PARTITIONED_METADATA
 * always goes to the service URL. Each operation is a small heap object
 * that lives until its callback has run. An http:// or https:// service URL
 * sends all three kinds of request to lookup_http.c instead. Loop thread only.
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

typedef struct lookup_op {
    pc_lookup_svc_t *svc;
    char *topic;
    int redirects;
    int authoritative;
    pc_hostport_t target; /* where the current LOOKUP goes */
    pc_lookup_cb cb;
    pc_partitions_cb pcb;
    pc_topics_cb tcb;
    void *arg;
} lookup_op_t;

const pc_hostport_t *pc_lookup_service_host(pc_lookup_svc_t *s) {
    const pc_hostport_t *h = &s->url.hosts[s->next_host % (unsigned)s->url.nhosts];
    s->next_host++;
    return h;
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

static void follow_redirect(lookup_op_t *op, const char *url, int authoritative) {
    pc_service_url_t u;
    char e[256];
    if (++op->redirects > op->svc->max_redirects) {
        finish(op, PULSARC_ERR_TOO_MANY_REDIRECTS, "lookup redirected too many times", NULL);
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

static void on_lookup_conn(void *arg, pc_conn_t *conn, pulsarc_err_t err, const char *msg) {
    lookup_op_t *op = arg;
    if (err) {
        finish(op, err, msg, NULL);
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
        pfinish(op, err, msg, 0);
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
        op->tcb(op->arg, PULSARC_OK, NULL, r->topics, r->n_topics);
    }
    op_free(op);
}

static void on_topics_conn(void *arg, pc_conn_t *conn, pulsarc_err_t err, const char *msg) {
    lookup_op_t *op = arg;
    if (err) {
        op->tcb(op->arg, err, msg, NULL, 0);
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
