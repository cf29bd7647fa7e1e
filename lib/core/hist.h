/*
 * A fixed-bucket duration histogram that any thread records into with
 * atomics only (no lock on the io thread), and plain snapshots of it for
 * adding up and writing. Pure code: the metrics writer (lib/client) reads
 * what lib/net and the producers record.
 *
 * A reader may see a bucket bumped before the sum: each value is exact,
 * the set is not one instant, which a scraper tolerates.
 */
#ifndef PC_HIST_H
#define PC_HIST_H
#include <stdatomic.h>
#include <stdint.h>

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
/* Observations in the snapshot (the sum of its buckets). */
uint64_t pc_hist_total(const pc_hist_snap_t *h);
#endif
