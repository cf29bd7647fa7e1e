/*
 * Design notes: the duration histogram (hist.h). Recording is two relaxed
 * atomic adds, so the io thread records lookups and send receipts without
 * a lock; reading copies each counter once. Any thread.
 */
#include "core/hist.h"

/* 1 ms to 60 s: durations are timed in whole milliseconds. */
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

uint64_t pc_hist_total(const pc_hist_snap_t *h) {
    uint64_t n = 0;
    for (int i = 0; i <= PC_HIST_NBOUNDS; i++)
        n += h->counts[i];
    return n;
}
