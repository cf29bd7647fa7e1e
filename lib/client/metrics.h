/*
 * Metrics room: a fixed-bucket histogram that any thread records into with
 * atomics only (no lock on the send path), the Prometheus text exposition
 * writer, and the snapshot a producer or consumer handle hands the client
 * when pulsarc_client_metrics walks the registry.
 *
 * Threads: pc_hist_record runs on the io thread (send receipts); reads
 * (pc_hist_read) and the writer run on the application thread that asked
 * for the text. A reader may see a bucket bumped before the sum: each value
 * is exact, the set is not one instant, which a scraper tolerates.
 */
#ifndef PC_CLIENT_METRICS_H
#define PC_CLIENT_METRICS_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/topic.h"
#include "pulsarc.h"

/* Upper bounds (inclusive, in milliseconds) of the duration buckets; one
 * more bucket, +Inf, takes what is above the last. */
#define PC_HIST_NBOUNDS 15
extern const uint64_t pc_hist_bounds_ms[PC_HIST_NBOUNDS];

typedef struct pc_hist {
    _Atomic uint64_t counts[PC_HIST_NBOUNDS + 1]; /* per bucket, not cumulative */
    _Atomic uint64_t sum_ms;
} pc_hist_t;

/* A plain copy, for adding up and writing. */
typedef struct pc_hist_snap {
    uint64_t counts[PC_HIST_NBOUNDS + 1];
    uint64_t sum_ms;
} pc_hist_snap_t;

/* Index of the bucket value_ms falls into (PC_HIST_NBOUNDS: +Inf). */
int pc_hist_bucket(uint64_t value_ms);
void pc_hist_record(pc_hist_t *h, uint64_t value_ms);
void pc_hist_read(const pc_hist_t *h, pc_hist_snap_t *out);
void pc_hist_add(pc_hist_snap_t *into, const pc_hist_snap_t *from);

/* A producer's send durations, send call to receipt, split by outcome. */
typedef struct pc_send_hists {
    pc_hist_t ok, failed;
} pc_send_hists_t;

static inline void pc_send_hists_record(pc_send_hists_t *h, int failed, uint64_t ms) {
    pc_hist_record(failed ? &h->failed : &h->ok, ms);
}

/* ---- Prometheus text exposition ---- */

/* A growing text buffer; oom is set on the first failed allocation and
 * every later write is dropped, so callers check once at the end. */
typedef struct pc_text {
    char *buf;
    size_t len, cap;
    int oom;
} pc_text_t;

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
} pc_metrics_entry_t;

#endif
