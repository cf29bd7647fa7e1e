/*
 * Design notes: the metrics room. It owns the Prometheus text exposition
 * writer (into a pc_buf) and pulsarc_client_metrics, which runs on the
 * calling application thread:
 * under the client's registry lock it asks each registered producer and
 * consumer for a snapshot (each takes only its own locks, after the
 * registry lock as the lock order requires), then, with no lock held,
 * adds up handles that share a topic and subscription (one series per
 * label set, as the exposition format requires) and writes the text.
 *
 * Besides the handles, the client's own counters (lib/net/netstats.h):
 * connections opened, closed, failed and open now, and the lookups'
 * durations by transport, kind and outcome, written only for the label
 * sets this client used.
 *
 * Names follow the Java client's OpenTelemetry instruments turned into
 * Prometheus names: dots become underscores, the unit becomes a suffix
 * (s -> _seconds, By -> _bytes), counters end in _total; attributes become
 * labels (pulsar.topic -> pulsar_topic). What the Java client has no
 * instrument for (connections open now, the receive queue's bytes and
 * capacity, redelivery requests, reconnects) is named in the same style.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "client/metrics.h"

/* ---------- text ---------- */

void pc_text_init(pc_text_t *t) {
    pc_buf_init(&t->b, 0);
    t->oom = 0;
}

const char *pc_text_str(const pc_text_t *t) { return t->b.data ? (const char *)t->b.data : ""; }

/* Appends n bytes and keeps a NUL after them (not counted in len). */
static void text_put(pc_text_t *t, const char *s, size_t n) {
    if (t->oom || pc_buf_reserve(&t->b, n + 1)) {
        t->oom = 1;
        return;
    }
    memcpy(t->b.data + t->b.len, s, n);
    t->b.len += n;
    t->b.data[t->b.len] = '\0';
}

void pc_text_puts(pc_text_t *t, const char *s) { text_put(t, s, strlen(s)); }

void pc_text_printf(pc_text_t *t, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        text_put(t, small, (size_t)n);
        return;
    }
    if (t->oom || pc_buf_reserve(&t->b, (size_t)n + 1)) {
        t->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf((char *)t->b.data + t->b.len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->b.len += (size_t)n;
}

void pc_text_label_value(pc_text_t *t, const char *v) {
    const char *run = v;
    for (; *v; v++) {
        const char *esc = *v == '\\' ? "\\\\" : *v == '"' ? "\\\"" : *v == '\n' ? "\\n" : NULL;
        if (!esc)
            continue;
        text_put(t, run, (size_t)(v - run));
        pc_text_puts(t, esc);
        run = v + 1;
    }
    text_put(t, run, (size_t)(v - run));
}

void pc_prom_family(pc_text_t *t, const char *name, const char *type, const char *help) {
    pc_text_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* {a="x",b="y" — left open so a histogram can add le; closed by the caller. */
static void open_labels(pc_text_t *t, const pc_label_t *labels, int n) {
    pc_text_puts(t, "{");
    for (int i = 0; i < n; i++) {
        pc_text_printf(t, "%s%s=\"", i ? "," : "", labels[i].name);
        pc_text_label_value(t, labels[i].value);
        pc_text_puts(t, "\"");
    }
}

void pc_prom_sample(pc_text_t *t, const char *name, const pc_label_t *labels, int nlabels,
                    uint64_t value) {
    pc_text_puts(t, name);
    open_labels(t, labels, nlabels);
    pc_text_printf(t, "} %" PRIu64 "\n", value);
}

void pc_prom_histogram(pc_text_t *t, const char *name, const pc_label_t *labels, int nlabels,
                       const pc_hist_snap_t *h) {
    uint64_t cum = 0;
    for (int i = 0; i <= PC_HIST_NBOUNDS; i++) {
        cum += h->counts[i];
        pc_text_printf(t, "%s_bucket", name);
        open_labels(t, labels, nlabels);
        if (i < PC_HIST_NBOUNDS) /* milliseconds written as exact decimal seconds */
            pc_text_printf(t, "%sle=\"%" PRIu64 ".%03" PRIu64 "\"} %" PRIu64 "\n", nlabels ? "," : "",
                           pc_hist_bounds_ms[i] / 1000, pc_hist_bounds_ms[i] % 1000, cum);
        else
            pc_text_printf(t, "%sle=\"+Inf\"} %" PRIu64 "\n", nlabels ? "," : "", cum);
    }
    pc_text_printf(t, "%s_sum", name);
    open_labels(t, labels, nlabels);
    pc_text_printf(t, "} %" PRIu64 ".%03" PRIu64 "\n", h->sum_ms / 1000, h->sum_ms % 1000);
    pc_text_printf(t, "%s_count", name);
    open_labels(t, labels, nlabels);
    pc_text_printf(t, "} %" PRIu64 "\n", cum);
}

/* ---------- the client's export ---------- */

typedef struct entry_list {
    pc_metrics_entry_t *v;
    size_t n, cap;
} entry_list_t;

static pc_metrics_entry_t *list_push(entry_list_t *l) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        pc_metrics_entry_t *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    pc_metrics_entry_t *e = &l->v[l->n];
    memset(e, 0, sizeof *e);
    return e;
}

static pulsarc_err_t collect(pulsarc_client_t *c, entry_list_t *l) {
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&c->lock);
    for (pc_handle_t *h = c->handles; h && !err; h = h->next) {
        if (!h->report)
            continue;
        pc_metrics_entry_t *e = list_push(l);
        if (!e) {
            err = PULSARC_ERR_NOMEM;
            break;
        }
        h->report(h, e);
        l->n++;
    }
    pthread_mutex_unlock(&c->lock);
    return err;
}

static int same_series(const pc_metrics_entry_t *a, const pc_metrics_entry_t *b) {
    return a->kind == b->kind && !strcmp(a->topic.full, b->topic.full) && !strcmp(a->sub, b->sub);
}

static void merge_into(pc_metrics_entry_t *into, const pc_metrics_entry_t *e) {
    into->producer.bytes_sent += e->producer.bytes_sent;
    into->producer.pending += e->producer.pending;
    into->producer_reconnects += e->producer_reconnects;
    pc_hist_add(&into->send_ok, &e->send_ok);
    pc_hist_add(&into->send_failed, &e->send_failed);
    into->consumer.received += e->consumer.received;
    into->consumer.queue_len += e->consumer.queue_len;
    into->consumer.acked += e->consumer.acked;
    into->consumer.nacked += e->consumer.nacked;
    into->consumer.redelivery_requests += e->consumer.redelivery_requests;
    into->consumer.reconnects += e->consumer.reconnects;
    into->consumer.queue_size += e->consumer.queue_size;
    into->bytes_received += e->bytes_received;
    into->queue_bytes += e->queue_bytes;
}

/* Folds handles with the same labels into the first of them; returns the
 * number of distinct series left at the front of the list. */
static size_t merge_series(entry_list_t *l) {
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        size_t j = 0;
        while (j < n && !same_series(&l->v[j], &l->v[i]))
            j++;
        if (j < n)
            merge_into(&l->v[j], &l->v[i]);
        else if (n++ != i)
            l->v[n - 1] = l->v[i];
    }
    return n;
}

static int labels_of(const pc_metrics_entry_t *e, pc_label_t *out) {
    out[0] = (pc_label_t){"pulsar_tenant", e->topic.tenant};
    out[1] = (pc_label_t){"pulsar_namespace", e->topic.ns};
    out[2] = (pc_label_t){"pulsar_topic", e->topic.full};
    if (e->kind != PC_METRICS_CONSUMER)
        return 3;
    out[3] = (pc_label_t){"pulsar_subscription", e->sub};
    return 4;
}

typedef uint64_t (*value_of_fn)(const pc_metrics_entry_t *e);

static uint64_t send_bytes(const pc_metrics_entry_t *e) { return e->producer.bytes_sent; }
static uint64_t pending(const pc_metrics_entry_t *e) { return e->producer.pending; }
static uint64_t producer_reconnects(const pc_metrics_entry_t *e) { return e->producer_reconnects; }
static uint64_t received(const pc_metrics_entry_t *e) { return e->consumer.received; }
static uint64_t queued(const pc_metrics_entry_t *e) { return (uint64_t)e->consumer.queue_len; }
static uint64_t acked(const pc_metrics_entry_t *e) { return e->consumer.acked; }
static uint64_t nacked(const pc_metrics_entry_t *e) { return e->consumer.nacked; }
static uint64_t received_bytes(const pc_metrics_entry_t *e) { return e->bytes_received; }
static uint64_t queued_bytes(const pc_metrics_entry_t *e) { return e->queue_bytes; }
static uint64_t queue_capacity(const pc_metrics_entry_t *e) { return (uint64_t)e->consumer.queue_size; }
static uint64_t redeliveries(const pc_metrics_entry_t *e) { return e->consumer.redelivery_requests; }
static uint64_t reconnects(const pc_metrics_entry_t *e) { return e->consumer.reconnects; }

typedef struct family {
    pc_metrics_kind_t kind;
    const char *name, *type, *help;
    value_of_fn value;
} family_t;

static const family_t families[] = {
    {PC_METRICS_PRODUCER, "pulsar_client_producer_message_send_size_bytes", "counter",
     "Payload bytes of messages the broker acknowledged (before compression).", send_bytes},
    {PC_METRICS_PRODUCER, "pulsar_client_producer_message_pending_count", "gauge",
     "Messages queued or in flight, waiting for a receipt.", pending},
    {PC_METRICS_PRODUCER, "pulsar_client_producer_reconnect", "counter",
     "Producers created again on a new connection after the first.", producer_reconnects},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_message_received_count", "counter",
     "Messages received from the broker.", received},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_receive_queue_count", "gauge",
     "Messages waiting in the receive queue.", queued},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_message_ack", "counter",
     "Acknowledge calls (individual and cumulative).", acked},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_message_nack", "counter",
     "Negative acknowledgements.", nacked},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_message_received_size_bytes", "counter",
     "Payload bytes of the messages received from the broker.", received_bytes},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_receive_queue_size_bytes", "gauge",
     "Payload bytes of the messages waiting in the receive queue.", queued_bytes},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_receive_queue_capacity", "gauge",
     "Messages the receive queue prefetches now: receiverQueueSize, or its auto-scaled value.",
     queue_capacity},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_redelivery_request", "counter",
     "Redelivery requests sent to the broker (nacks, ack timeouts, redeliver calls).", redeliveries},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_reconnect", "counter",
     "Subscriptions made again on a new connection after the first.", reconnects},
};

static void write_family(pc_text_t *t, const family_t *f, const pc_metrics_entry_t *v, size_t n) {
    /* In the text format the TYPE line names the sample: a counter's with
     * its _total (only OpenMetrics drops it there). */
    char sample[160];
    snprintf(sample, sizeof sample, "%s%s", f->name, strcmp(f->type, "counter") ? "" : "_total");
    pc_prom_family(t, sample, f->type, f->help);
    pc_label_t labels[4];
    for (size_t i = 0; i < n; i++)
        if (v[i].kind == f->kind)
            pc_prom_sample(t, sample, labels, labels_of(&v[i], labels), f->value(&v[i]));
}

static void write_send_duration(pc_text_t *t, const pc_metrics_entry_t *v, size_t n) {
    static const char name[] = "pulsar_client_producer_message_send_duration_seconds";
    pc_prom_family(t, name, "histogram",
                   "Time from the send call to the broker's receipt or the failure.");
    pc_label_t labels[5];
    for (size_t i = 0; i < n; i++) {
        if (v[i].kind != PC_METRICS_PRODUCER)
            continue;
        int nl = labels_of(&v[i], labels);
        labels[nl] = (pc_label_t){"pulsar_response_status", "success"};
        pc_prom_histogram(t, name, labels, nl + 1, &v[i].send_ok);
        labels[nl].value = "failed";
        pc_prom_histogram(t, name, labels, nl + 1, &v[i].send_failed);
    }
}

/* ---------- the client's own: connections and lookups ---------- */

static uint64_t load(const _Atomic uint64_t *v) {
    return atomic_load_explicit(v, memory_order_relaxed);
}

static void write_connections(pc_text_t *t, pc_net_counters_t *n) {
    uint64_t opened = load(&n->conn_opened), closed = load(&n->conn_closed);
    pc_prom_family(t, "pulsar_client_connection_opened_total", "counter",
                   "Connections that completed the handshake.");
    pc_prom_sample(t, "pulsar_client_connection_opened_total", NULL, 0, opened);
    pc_prom_family(t, "pulsar_client_connection_closed_total", "counter",
                   "Connections closed after the handshake.");
    pc_prom_sample(t, "pulsar_client_connection_closed_total", NULL, 0, closed);
    pc_prom_family(t, "pulsar_client_connection_failed_total", "counter",
                   "Connection attempts that failed before the handshake completed.");
    pc_label_t l = {"pulsar_failure_type", "tcp-failed"};
    pc_prom_sample(t, "pulsar_client_connection_failed_total", &l, 1, load(&n->conn_failed_tcp));
    l.value = "handshake";
    pc_prom_sample(t, "pulsar_client_connection_failed_total", &l, 1, load(&n->conn_failed_handshake));
    /* A close counted between the two loads may put closed ahead: never below 0. */
    pc_prom_family(t, "pulsar_client_connection_open_count", "gauge", "Connections open now.");
    pc_prom_sample(t, "pulsar_client_connection_open_count", NULL, 0, opened > closed ? opened - closed : 0);
}

static void write_lookups(pc_text_t *t, pc_net_counters_t *n) {
    static const char name[] = "pulsar_client_lookup_duration_seconds";
    static const char *const kinds[PC_LOOKUP_KINDS] = {"topic", "metadata", "list-topics"};
    pc_prom_family(t, name, "histogram",
                   "Duration of lookups, the call to the answer (redirects included).");
    for (int http = 0; http < 2; http++)
        for (int k = 0; k < PC_LOOKUP_KINDS; k++)
            for (int failed = 0; failed < 2; failed++) {
                pc_hist_snap_t h;
                pc_hist_read(&n->lookups[http][k][failed], &h);
                if (!pc_hist_total(&h)) /* only what this client did */
                    continue;
                pc_label_t l[3] = {{"pulsar_lookup_transport_type", http ? "http" : "binary"},
                                   {"pulsar_lookup_type", kinds[k]},
                                   {"pulsar_response_status", failed ? "failed" : "success"}};
                pc_prom_histogram(t, name, l, 3, &h);
            }
}

static int has_kind(const pc_metrics_entry_t *v, size_t n, pc_metrics_kind_t kind) {
    for (size_t i = 0; i < n; i++)
        if (v[i].kind == kind)
            return 1;
    return 0;
}

pulsarc_err_t pulsarc_client_metrics(pulsarc_client_t *c, char **text, size_t *len) {
    if (!c || !text)
        return PULSARC_ERR_INVALID_ARG;
    *text = NULL;
    if (len)
        *len = 0;
    entry_list_t l = {0};
    pc_text_t t;
    pc_text_init(&t);
    pulsarc_err_t err = collect(c, &l);
    size_t n = err ? 0 : merge_series(&l);
    pc_text_puts(&t, ""); /* allocates: the caller always gets a string */
    write_connections(&t, &c->net);
    write_lookups(&t, &c->net);
    if (!err && has_kind(l.v, n, PC_METRICS_PRODUCER))
        write_send_duration(&t, l.v, n);
    for (size_t f = 0; !err && f < sizeof families / sizeof families[0]; f++)
        if (has_kind(l.v, n, families[f].kind))
            write_family(&t, &families[f], l.v, n);
    free(l.v);
    if (!err && t.oom)
        err = PULSARC_ERR_NOMEM;
    if (err) {
        pc_buf_free(&t.b);
        return err;
    }
    *text = (char *)t.b.data; /* the caller frees it with pulsarc_metrics_free */
    if (len)
        *len = t.b.len;
    return PULSARC_OK;
}

void pulsarc_metrics_free(char *text) { free(text); }
