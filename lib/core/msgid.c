/*
 * Design notes: the public message-id value helpers (docs/PROTOCOL.md §8). The
 * id is a plain value type, so these are pure functions over caller memory,
 * safe from any thread.
 *
 * Ordering: ledger, entry, then batch index in plain numeric order, so a
 * non-batch id (-1) sorts before index 0 of the same entry, as the C++
 * client's operator< does. The ack-grouping tracker's special rule (no
 * batch index sorts after every index of its entry) is an internal concern
 * and lives with the tracker, not in this public compare.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pulsarc.h"

pulsarc_msgid_t pulsarc_msgid_earliest(void) {
    pulsarc_msgid_t id = {-1, -1, -1, -1, 0};
    return id;
}

pulsarc_msgid_t pulsarc_msgid_latest(void) {
    pulsarc_msgid_t id = {INT64_MAX, INT64_MAX, -1, -1, 0};
    return id;
}

static int cmp_i64(int64_t a, int64_t b) {
    return (a > b) - (a < b);
}

int pulsarc_msgid_compare(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b) {
    if (!a || !b) return (a != NULL) - (b != NULL); /* NULL sorts first; never crash */
    int c = cmp_i64(a->ledger_id, b->ledger_id);
    if (c == 0)
        c = cmp_i64(a->entry_id, b->entry_id);
    if (c == 0)
        c = cmp_i64(a->batch_index, b->batch_index);
    return c;
}

pulsarc_err_t pulsarc_msgid_format(const pulsarc_msgid_t *id, char *buf, size_t len) {
    if (!id || !buf || len == 0)
        return PULSARC_ERR_INVALID_ARG;
    int n;
    if (id->batch_index >= 0)
        n = snprintf(buf, len, "%" PRId64 ":%" PRId64 ":%" PRId32 ":%" PRId32, id->ledger_id,
                     id->entry_id, id->partition, id->batch_index);
    else
        n = snprintf(buf, len, "%" PRId64 ":%" PRId64 ":%" PRId32, id->ledger_id, id->entry_id,
                     id->partition);
    if (n < 0 || (size_t)n >= len) {
        buf[0] = '\0'; /* no truncated id that could be mistaken for a real one */
        return PULSARC_ERR_INVALID_ARG;
    }
    return PULSARC_OK;
}

/* An optional '-' then 1+ digits, nothing else, within [lo, hi]. */
static int parse_dec(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *out) {
    size_t i = (n > 0 && s[0] == '-') ? 1 : 0;
    int neg = i == 1;
    if (i == n)
        return -1;
    uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, mag = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (mag > (lim - d) / 10)
            return -1; /* would overflow int64 */
        mag = mag * 10 + d;
    }
    int64_t v = !neg ? (int64_t)mag : mag == lim ? INT64_MIN : -(int64_t)mag;
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Splits text on ':' into at most 4 parts; returns the count or -1. */
static int split_parts(const char *text, const char *start[4], size_t len[4]) {
    int n = 0;
    for (const char *p = text;; p++) {
        const char *colon = strchr(p, ':');
        if (n == 4)
            return -1;
        start[n] = p;
        len[n] = colon ? (size_t)(colon - p) : strlen(p);
        n++;
        if (!colon)
            return n;
        p = colon;
    }
}

pulsarc_err_t pulsarc_msgid_parse(const char *text, pulsarc_msgid_t *out) {
    if (!text || !out)
        return PULSARC_ERR_INVALID_ARG;
    const char *start[4];
    size_t len[4];
    int n = split_parts(text, start, len);
    if (n < 2)
        return PULSARC_ERR_INVALID_ARG;
    int64_t v[4] = {-1, -1, -1, -1};
    for (int i = 0; i < n; i++) {
        int64_t lo = i < 2 ? INT64_MIN : INT32_MIN, hi = i < 2 ? INT64_MAX : INT32_MAX;
        if (parse_dec(start[i], len[i], lo, hi, &v[i]) != 0)
            return PULSARC_ERR_INVALID_ARG;
    }
    pulsarc_msgid_t id = {v[0], v[1], (int32_t)v[2], (int32_t)v[3], 0};
    *out = id;
    return PULSARC_OK;
}
