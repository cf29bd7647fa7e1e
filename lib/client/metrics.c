/*
 * Design notes: the metrics room. It owns the duration histogram (atomic
 * counters, recorded on the io thread when a send receipt or failure is
 * accounted, never locked), the Prometheus text exposition writer, and
 * pulsarc_client_metrics, which runs on the calling application thread:
 * under the client's registry lock it asks each registered producer and
 * consumer for a snapshot (each takes only its own locks, after the
 * registry lock as the lock order requires), then, with no lock held,
 * adds up handles that share a topic and subscription (one series per
 * label set, as the exposition format requires) and writes the text.
 *
 * Names follow the Java client's OpenTelemetry instruments turned into
 * Prometheus names: dots become underscores, the unit becomes a suffix
 * (s -> _seconds, By -> _bytes), counters end in _total; attributes become
 * labels (pulsar.topic -> pulsar_topic).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "client/metrics.h"

/* 1 ms to 60 s: send receipts are timed in whole milliseconds. */
const uint64_t pc_hist_bounds_ms[PC_HIST_NBOUNDS] = {1,   2,    5,    10,    25,    50,    100,  250,
                                                     500, 1000, 2500, 5000, 10000, 30000, 60000};

int pc_hist_bucket(uint64_t value_ms) {
    int lo = 0, hi = PC_HIST_NBOUNDS; /* the first bound >= value, or +Inf */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (pc_hist_bounds_ms[mid] >= value_ms)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void pc_hist_record(pc_hist_t *h, uint64_t value_ms) {
    atomic_fetch_add_explicit(&h->counts[pc_hist_bucket(value_ms)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ms, value_ms, memory_order_relaxed);
}

void pc_hist_read(const pc_hist_t *h, pc_hist_snap_t *out) {
    for (int i = 0; i <= PC_HIST_NBOUNDS; i++)
        out->counts[i] = atomic_load_explicit(&h->counts[i], memory_order_relaxed);
    out->sum_ms = atomic_load_explicit(&h->sum_ms, memory_order_relaxed);
}

void pc_hist_add(pc_hist_snap_t *into, const pc_hist_snap_t *from) {
    for (int i = 0; i <= PC_HIST_NBOUNDS; i++)
        into->counts[i] += from->counts[i];
    into->sum_ms += from->sum_ms;
}

/* ---------- text ---------- */

static int text_reserve(pc_text_t *t, size_t more) {
    if (t->oom)
        return -1;
    if (t->len + more + 1 <= t->cap)
        return 0;
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + more + 1)
        cap *= 2;
    char *b = realloc(t->buf, cap);
    if (!b) {
        t->oom = 1;
        return -1;
    }
    t->buf = b;
    t->cap = cap;
    return 0;
}

static void text_put(pc_text_t *t, const char *s, size_t n) {
    if (text_reserve(t, n))
        return;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
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
    if (text_reserve(t, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
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
    pc_hist_add(&into->send_ok, &e->send_ok);
    pc_hist_add(&into->send_failed, &e->send_failed);
    into->consumer.received += e->consumer.received;
    into->consumer.queue_len += e->consumer.queue_len;
    into->consumer.acked += e->consumer.acked;
    into->consumer.nacked += e->consumer.nacked;
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
static uint64_t received(const pc_metrics_entry_t *e) { return e->consumer.received; }
static uint64_t queued(const pc_metrics_entry_t *e) { return (uint64_t)e->consumer.queue_len; }
static uint64_t acked(const pc_metrics_entry_t *e) { return e->consumer.acked; }
static uint64_t nacked(const pc_metrics_entry_t *e) { return e->consumer.nacked; }

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
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_message_received_count", "counter",
     "Messages received from the broker.", received},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_receive_queue_count", "gauge",
     "Messages waiting in the receive queue.", queued},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_message_ack", "counter",
     "Acknowledge calls (individual and cumulative).", acked},
    {PC_METRICS_CONSUMER, "pulsar_client_consumer_message_nack", "counter",
     "Negative acknowledgements.", nacked},
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
    pc_text_t t = {0};
    pulsarc_err_t err = collect(c, &l);
    size_t n = err ? 0 : merge_series(&l);
    pc_text_puts(&t, ""); /* an empty client still gets a (empty) string */
    if (!err && has_kind(l.v, n, PC_METRICS_PRODUCER))
        write_send_duration(&t, l.v, n);
    for (size_t f = 0; !err && f < sizeof families / sizeof families[0]; f++)
        if (has_kind(l.v, n, families[f].kind))
            write_family(&t, &families[f], l.v, n);
    free(l.v);
    if (!err && t.oom)
        err = PULSARC_ERR_NOMEM;
    if (err) {
        free(t.buf);
        return err;
    }
    *text = t.buf;
    if (len)
        *len = t.len;
    return PULSARC_OK;
}

void pulsarc_metrics_free(char *text) { free(text); }
