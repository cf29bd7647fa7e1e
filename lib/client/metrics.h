/*
 * Metrics room: the producer's send-duration histograms (core/hist.h), the
 * Prometheus text exposition writer, and the snapshot a producer or
 * consumer handle hands the client when pulsarc_client_metrics walks the
 * registry.
 *
 * Threads: histograms are recorded on the io thread (send receipts); reads
 * and the writer run on the application thread that asked for the text.
 */
#ifndef PC_CLIENT_METRICS_H
#define PC_CLIENT_METRICS_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/hist.h"
#include "core/topic.h"
#include "pulsarc.h"

/* A producer's send durations, send call to receipt, split by outcome. */
typedef struct pc_send_hists {
    pc_hist_t ok, failed;
} pc_send_hists_t;

static inline void pc_send_hists_record(pc_send_hists_t *h, int failed, uint64_t ms) {
    pc_hist_record(failed ? &h->failed : &h->ok, ms);
}

/* ---- Prometheus text exposition ---- */

/* The text being written, in a pc_buf kept NUL-terminated; oom is set on
 * the first failed allocation and every later write is dropped, so callers
 * check once at the end. */
typedef struct pc_text {
    pc_buf_t b;
    int oom;
} pc_text_t;

void pc_text_init(pc_text_t *t);
/* The text so far ("" before any write); valid until the next write. */
const char *pc_text_str(const pc_text_t *t);
void pc_text_puts(pc_text_t *t, const char *s);
void pc_text_printf(pc_text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A label value with backslash, double quote and newline escaped. */
void pc_text_label_value(pc_text_t *t, const char *v);

typedef struct pc_label {
    const char *name, *value;
} pc_label_t;

/* # HELP and # TYPE lines of one family (type: counter, gauge, histogram). */
void pc_prom_family(pc_text_t *t, const char *name, const char *type, const char *help);
/* name{labels} value, for a counter's or gauge's sample (name in full). */
void pc_prom_sample(pc_text_t *t, const char *name, const pc_label_t *labels, int nlabels,
                    uint64_t value);
/* name_bucket{labels,le=...} (cumulative), name_sum (seconds), name_count. */
void pc_prom_histogram(pc_text_t *t, const char *name, const pc_label_t *labels, int nlabels,
                       const pc_hist_snap_t *h);

/* ---- what a handle reports ---- */

typedef enum { PC_METRICS_PRODUCER = 1, PC_METRICS_CONSUMER = 2 } pc_metrics_kind_t;

typedef struct pc_metrics_entry {
    pc_metrics_kind_t kind;
    pc_topic_t topic;            /* the handle's topic (a partitioned one's base name) */
    char sub[PC_TOPIC_PART_MAX]; /* consumer: subscription, "" for a producer */
    pulsarc_producer_stats_t producer;
    pc_hist_snap_t send_ok, send_failed;
    pulsarc_consumer_stats_t consumer;
    uint64_t bytes_received;     /* consumer: payload bytes that reached its queue */
    uint64_t queue_bytes;        /* consumer: payload bytes waiting in its queue */
    uint64_t producer_reconnects; /* producer: created again on a new connection */
} pc_metrics_entry_t;

#endif
