/*
 * Design notes: topic-name parsing and canonicalisation (docs/PROTOCOL.md §3.1).
 * Pure functions over caller-owned structs: no allocation, no shared state,
 * callable from any thread.
 *
 * Accepted forms:
 *   local                          -> persistent://<def_tenant>/<def_ns>/local
 *   tenant/ns/local                -> persistent://tenant/ns/local
 *   {persistent|non-persistent}://tenant/ns/local
 *
 * Local names never contain '/'. The Java client splits the part after the
 * scheme into at most 4 pieces and reads a 4-piece name as the legacy V1
 * form tenant/cluster/ns/local, so "persistent://t/ns/a/b" is not a V2 name
 * with local "a/b" there either; the C++ client refuses other counts. We do
 * not support V1 at all, so any extra '/' is rejected with a clear reason
 * rather than silently reinterpreted.
 *
 * Partition suffix: "-partition-N" at the end, N plain decimal digits.
 * Anything else after the last "-partition-" (letters, a sign, nothing) makes
 * it an ordinary local name. N with a leading zero or above INT_MAX is
 * rejected: Java would read "x-partition-07" as partition 7 of "x", yet the
 * name differs from "x-partition-7", so accepting it would split one topic
 * in two.
 */
#include "core/topic.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"

#define PARTITION_SUFFIX "-partition-"

typedef struct topic_ctx {
    const char *name;
    char *errstr;
    size_t errlen;
} topic_ctx_t;

#define TOPIC_BAD(ctx, fmt, ...)                                                           \
    pc_seterr((ctx)->errstr, (ctx)->errlen, PULSARC_ERR_BAD_TOPIC,                         \
              "invalid topic name '%s': " fmt, (ctx)->name, __VA_ARGS__)

static int is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '=' || c == ':' || c == '-';
}

/* Tenant or namespace: non-empty, fits, characters [A-Za-z0-9_.=:-]. */
static pulsarc_err_t copy_segment(const char *what, const char *s, size_t n, char *dst,
                                  size_t cap, const topic_ctx_t *ctx) {
    if (n == 0)
        return TOPIC_BAD(ctx, "empty %s", what);
    if (n >= cap)
        return TOPIC_BAD(ctx, "%s longer than %zu bytes", what, cap - 1);
    for (size_t i = 0; i < n; i++)
        if (!is_name_char(s[i]))
            return TOPIC_BAD(ctx, "character '%c' not allowed in %s '%.*s'", s[i], what,
                             (int)n, s);
    memcpy(dst, s, n);
    dst[n] = '\0';
    return PULSARC_OK;
}

static pulsarc_err_t copy_local(const char *s, const topic_ctx_t *ctx, pc_topic_t *out) {
    size_t n = strlen(s);
    if (n == 0)
        return TOPIC_BAD(ctx, "%s", "empty local name");
    if (strchr(s, '/'))
        return TOPIC_BAD(ctx, "%s",
                         "too many '/'-separated parts (expected tenant/namespace/local; "
                         "legacy tenant/cluster/namespace/local names are not supported)");
    if (n >= sizeof out->local)
        return TOPIC_BAD(ctx, "local name longer than %zu bytes", sizeof out->local - 1);
    memcpy(out->local, s, n + 1);
    return PULSARC_OK;
}

/* "tenant/ns/local" (local may not hold '/'; copy_local checks). */
static pulsarc_err_t split_path(const char *path, const topic_ctx_t *ctx, pc_topic_t *out) {
    const char *s1 = strchr(path, '/');
    const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (!s2)
        return TOPIC_BAD(ctx, "%s", "expected tenant/namespace/local after the scheme");
    pulsarc_err_t err =
        copy_segment("tenant", path, (size_t)(s1 - path), out->tenant, sizeof out->tenant, ctx);
    if (!err)
        err = copy_segment("namespace", s1 + 1, (size_t)(s2 - s1 - 1), out->ns, sizeof out->ns,
                           ctx);
    return err ? err : copy_local(s2 + 1, ctx, out);
}

static pulsarc_err_t parse_scheme(const char *name, const char *sep, const topic_ctx_t *ctx,
                                  pc_topic_t *out) {
    size_t n = (size_t)(sep - name);
    if (n == strlen("persistent") && memcmp(name, "persistent", n) == 0)
        out->persistent = 1;
    else if (n == strlen("non-persistent") && memcmp(name, "non-persistent", n) == 0)
        out->persistent = 0;
    else
        return TOPIC_BAD(ctx, "unknown domain '%.*s' (expected persistent or non-persistent)",
                         (int)n, name);
    return split_path(sep + 3, ctx, out);
}

static size_t count_slashes(const char *s) {
    size_t n = 0;
    for (; *s; s++)
        n += *s == '/';
    return n;
}

/* "local" or "tenant/ns/local", always persistent. */
static pulsarc_err_t parse_short(const char *name, const char *def_tenant, const char *def_ns,
                                 const topic_ctx_t *ctx, pc_topic_t *out) {
    out->persistent = 1;
    size_t slashes = count_slashes(name);
    if (slashes == 2)
        return split_path(name, ctx, out);
    if (slashes != 0)
        return TOPIC_BAD(ctx, "%s",
                         "expected 'local', 'tenant/namespace/local' or "
                         "'persistent://tenant/namespace/local'");
    pulsarc_err_t err =
        copy_segment("tenant", def_tenant, strlen(def_tenant), out->tenant, sizeof out->tenant, ctx);
    if (!err)
        err = copy_segment("namespace", def_ns, strlen(def_ns), out->ns, sizeof out->ns, ctx);
    return err ? err : copy_local(name, ctx, out);
}

/* Last occurrence of "-partition-" in s, or NULL. */
static const char *find_suffix(const char *s) {
    const char *last = NULL;
    for (const char *p = strstr(s, PARTITION_SUFFIX); p; p = strstr(p + 1, PARTITION_SUFFIX))
        last = p;
    return last;
}

static int all_digits(const char *s) {
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* Sets out->partition and returns the length of the local name without it. */
static pulsarc_err_t parse_partition(const topic_ctx_t *ctx, pc_topic_t *out, size_t *base_len) {
    const char *suf = find_suffix(out->local);
    const char *digits = suf ? suf + strlen(PARTITION_SUFFIX) : NULL;
    out->partition = -1;
    *base_len = strlen(out->local);
    if (!digits || !all_digits(digits))
        return PULSARC_OK; /* an ordinary local name */
    if (suf == out->local)
        return TOPIC_BAD(ctx, "%s", "empty local name before the partition suffix");
    if (digits[0] == '0' && digits[1] != '\0')
        return TOPIC_BAD(ctx, "partition index '%s' has a leading zero", digits);
    long long v = 0;
    for (const char *p = digits; *p && v <= INT_MAX; p++)
        v = v * 10 + (*p - '0');
    if (v > INT_MAX)
        return TOPIC_BAD(ctx, "partition index '%s' out of range", digits);
    out->partition = (int)v;
    *base_len = (size_t)(suf - out->local);
    return PULSARC_OK;
}

static pulsarc_err_t build_names(const topic_ctx_t *ctx, size_t base_len, pc_topic_t *out) {
    const char *dom = out->persistent ? "persistent" : "non-persistent";
    int n = snprintf(out->full, sizeof out->full, "%s://%s/%s/%s", dom, out->tenant, out->ns,
                     out->local);
    if (n < 0 || (size_t)n >= sizeof out->full)
        return TOPIC_BAD(ctx, "full name longer than %zu bytes", sizeof out->full - 1);
    size_t cut = strlen(out->local) - base_len; /* length of the partition suffix */
    memcpy(out->base, out->full, (size_t)n - cut);
    out->base[(size_t)n - cut] = '\0';
    return PULSARC_OK;
}

pulsarc_err_t pc_topic_parse(const char *name, const char *def_tenant, const char *def_ns,
                             pc_topic_t *out, char *errstr, size_t errlen) {
    if (!name || !out)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "topic name is NULL");
    topic_ctx_t ctx = {name, errstr, errlen};
    memset(out, 0, sizeof *out);
    if (name[0] == '\0')
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_TOPIC, "topic name is empty");
    const char *sep = strstr(name, "://");
    pulsarc_err_t err = sep ? parse_scheme(name, sep, &ctx, out)
                            : parse_short(name, def_tenant ? def_tenant : "public",
                                          def_ns ? def_ns : "default", &ctx, out);
    size_t base_len = 0;
    if (!err)
        err = parse_partition(&ctx, out, &base_len);
    if (!err)
        err = build_names(&ctx, base_len, out);
    if (err)
        memset(out, 0, sizeof *out);
    return err;
}

pulsarc_err_t pc_topic_partition_name(const pc_topic_t *t, int idx, char *buf, size_t len) {
    if (!t || !buf || idx < 0 || len == 0)
        return PULSARC_ERR_INVALID_ARG;
    int n = snprintf(buf, len, "%s" PARTITION_SUFFIX "%d", t->base, idx);
    if (n < 0 || (size_t)n >= len) {
        buf[0] = '\0';
        return PULSARC_ERR_INVALID_ARG;
    }
    return PULSARC_OK;
}
