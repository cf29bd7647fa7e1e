/*
 * Design notes: a latency histogram with bounded relative error and fixed
 * memory, in the layout HdrHistogram made common (our own code).
 *
 * Values below 2*H (H = 2^CLI_HIST_SUB_BITS = 32) get one bucket each.
 * Above, a value v with highest set bit b is shifted right by s = b - 5 so
 * that its top six bits m = v >> s lie in [32, 64); its bucket is s*32 + m.
 * Buckets stay contiguous across powers of two, each power of two has 32
 * buckets of equal width, so the width is at most 1/32 of the value: about
 * 3% error, enough to tell p99 from p999, in ~9 KiB. Recording is a shift
 * and an increment; quantiles walk the counts once.
 *
 * Quantiles report the upper bound of the bucket that holds them (never
 * above the exact maximum), the conservative choice for latency.
 */
#include <math.h>
#include <string.h>

#include "cli.h"

#define HALF (1u << CLI_HIST_SUB_BITS)
#define MAX_VALUE ((1ull << 40) - 1)

static int msb(uint64_t v) {
    return 63 - __builtin_clzll(v);
}

size_t cli_hist_index(uint64_t v) {
    if (v > MAX_VALUE)
        v = MAX_VALUE;
    if (v < 2 * HALF)
        return (size_t)v;
    int s = msb(v) - CLI_HIST_SUB_BITS;
    return (size_t)s * HALF + (size_t)(v >> s);
}

uint64_t cli_hist_lower(size_t idx) {
    if (idx < 2 * HALF)
        return idx;
    size_t s = idx / HALF - 1;
    return (uint64_t)(idx - s * HALF) << s;
}

uint64_t cli_hist_upper(size_t idx) {
    if (idx < 2 * HALF)
        return idx;
    size_t s = idx / HALF - 1;
    return (((uint64_t)(idx - s * HALF) + 1) << s) - 1;
}

void cli_hist_reset(cli_hist_t *h) {
    memset(h, 0, sizeof *h);
}

void cli_hist_record(cli_hist_t *h, uint64_t v) {
    h->counts[cli_hist_index(v)]++;
    if (!h->total || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->total++;
    h->sum += (double)v;
}

void cli_hist_merge(cli_hist_t *into, const cli_hist_t *from) {
    if (!from->total)
        return;
    for (size_t i = 0; i < CLI_HIST_BUCKETS; i++)
        into->counts[i] += from->counts[i];
    if (!into->total || from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
    into->total += from->total;
    into->sum += from->sum;
}

uint64_t cli_hist_quantile(const cli_hist_t *h, double q) {
    if (!h->total)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->total);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < CLI_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t up = cli_hist_upper(i);
            return up < h->max ? up : h->max;
        }
    }
    return h->max;
}

double cli_hist_mean(const cli_hist_t *h) {
    return h->total ? h->sum / (double)h->total : 0;
}

void cli_hist_summary(const cli_hist_t *h, char *buf, size_t len) {
    snprintf(buf, len, "mean %.3f p50 %.3f p95 %.3f p99 %.3f p999 %.3f max %.3f",
             cli_hist_mean(h) / 1e3, cli_hist_quantile(h, 0.50) / 1e3,
             cli_hist_quantile(h, 0.95) / 1e3, cli_hist_quantile(h, 0.99) / 1e3,
             cli_hist_quantile(h, 0.999) / 1e3, h->max / 1e3);
}

/* Count of values in [lo, hi) microseconds, from whole buckets. */
static uint64_t count_range(const cli_hist_t *h, uint64_t lo, uint64_t hi) {
    uint64_t n = 0;
    for (size_t i = cli_hist_index(lo); i < CLI_HIST_BUCKETS && cli_hist_lower(i) < hi; i++)
        n += h->counts[i];
    return n;
}

static void print_rows(const cli_hist_t *h, FILE *out) {
    uint64_t lo = 0, hi = 1;
    double cum = 0;
    while (lo <= h->max) {
        uint64_t n = count_range(h, lo, hi);
        cum += (double)n;
        if (n) {
            double pct = 100.0 * (double)n / (double)h->total;
            fprintf(out, "  [%10.3f, %10.3f) %10llu %6.2f%% %7.3f%% ", lo / 1e3, hi / 1e3,
                    (unsigned long long)n, pct, 100.0 * cum / (double)h->total);
            for (int b = 0; b < (int)(pct / 2.5 + 0.5); b++)
                fputc('#', out);
            fputc('\n', out);
        }
        lo = hi;
        hi *= 2;
    }
}

void cli_hist_print(const cli_hist_t *h, FILE *out) {
    static const double qs[] = {0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999};
    fprintf(out, "latency (ms) over %llu samples: min %.3f mean %.3f max %.3f\n",
            (unsigned long long)h->total, h->min / 1e3, cli_hist_mean(h) / 1e3, h->max / 1e3);
    if (!h->total)
        return;
    fprintf(out, "percentiles (ms):");
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        fprintf(out, "  p%g %.3f", qs[i] * 100, cli_hist_quantile(h, qs[i]) / 1e3);
    fprintf(out, "\nhistogram (ms, ranges by powers of two):\n");
    fprintf(out, "  %-25s %10s %7s %8s\n", "range", "count", "share", "cum");
    print_rows(h, out);
}
