/*
 * Design notes: configuration values from text, for every property table
 * in the project (the client's lib/conf/props.h and the connector's
 * connector_props.h), so an integer, a boolean or an enum is read and
 * refused the same way, with the same message, whichever key it is for.
 * Durations are read in the text form Flink configurations use ("10 s").
 * Pure functions over caller-owned buffers: any thread, any time.
 */
#include "conf/value.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"

static int enum_char_eq(char a, char b) {
    a = a == '-' ? '_' : a;
    b = b == '-' ? '_' : b;
    return tolower((unsigned char)a) == tolower((unsigned char)b);
}

static int choice_eq(const char *choice, size_t len, const char *v, size_t vlen) {
    if (len != vlen)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!enum_char_eq(choice[i], v[i]))
            return 0;
    return 1;
}

/* Index of v among "a|b|c", or -1. */
static int64_t enum_index(const char *choices, const char *v) {
    size_t vlen = strlen(v);
    int64_t idx = 0;
    for (const char *p = choices; p && *p; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (choice_eq(p, len, v, vlen))
            return idx;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

const char *pc_value_choice(const char *choices, int64_t idx, size_t *len) {
    for (const char *p = choices; p && *p; idx--) {
        const char *bar = strchr(p, '|');
        if (idx == 0) {
            *len = bar ? (size_t)(bar - p) : strlen(p);
            return p;
        }
        if (!bar)
            break;
        p = bar + 1;
    }
    return NULL;
}

static pulsarc_err_t parse_int(const pc_value_rule_t *r, const char *v, int64_t *num,
                              char *e, size_t el) {
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || end == v || *end)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "%s: '%s' is not an integer", r->key,
                         v);
    if (n < r->min || n > r->max)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "%s: %lld is outside [%lld, %lld]",
                         r->key, n, (long long)r->min, (long long)r->max);
    *num = n;
    return PULSARC_OK;
}

static pulsarc_err_t parse_bool(const pc_value_rule_t *r, const char *v, int64_t *num,
                               char *e, size_t el) {
    if (!strcasecmp(v, "true") || !strcmp(v, "1"))
        *num = 1;
    else if (!strcasecmp(v, "false") || !strcmp(v, "0"))
        *num = 0;
    else
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "%s: '%s' is not true or false", r->key,
                         v);
    return PULSARC_OK;
}

static pulsarc_err_t check_map(const pc_value_rule_t *r, const char *v, char *e, size_t el) {
    int entry = 1;
    for (const char *s = v; *s; entry++) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        const char *colon = memchr(s, ':', n);
        if (!colon || colon == s)
            return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                             "%s: entry %d is not key:value (the form is k1:v1,k2:v2)", r->key,
                             entry);
        if (!comma)
            break;
        s = comma + 1;
    }
    return PULSARC_OK;
}

pulsarc_err_t pc_value_parse(const pc_value_rule_t *r, const char *v, int64_t *num, char *e,
                             size_t el) {
    *num = 0;
    switch (r->kind) {
    case PC_VALUE_INT:
        return parse_int(r, v, num, e, el);
    case PC_VALUE_BOOL:
        return parse_bool(r, v, num, e, el);
    case PC_VALUE_ENUM:
        if ((*num = enum_index(r->choices, v)) < 0)
            return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "%s: '%s' is not one of %s", r->key,
                             v, r->choices);
        return PULSARC_OK;
    case PC_VALUE_MAP:
        return check_map(r, v, e, el);
    default:
        return PULSARC_OK;
    }
}

/*
 * ---- durations ----
 * As Flink's TimeUtils reads them: a non-negative integer, optional blanks,
 * an optional unit (ms when absent); sub-millisecond units are rounded
 * down to whole milliseconds.
 */

static const struct unit {
    const char *label;
    int64_t num, den; /* ms = value * num / den */
} units[] = {
    {"ns", 1, 1000000},         {"nano", 1, 1000000},     {"nanos", 1, 1000000},
    {"nanosecond", 1, 1000000}, {"nanoseconds", 1, 1000000},
    {"us", 1, 1000},            {"\xc2\xb5s", 1, 1000},   {"micro", 1, 1000},
    {"micros", 1, 1000},        {"microsecond", 1, 1000}, {"microseconds", 1, 1000},
    {"ms", 1, 1},               {"milli", 1, 1},          {"millis", 1, 1},
    {"millisecond", 1, 1},      {"milliseconds", 1, 1},   {"s", 1000, 1},
    {"sec", 1000, 1},           {"secs", 1000, 1},        {"second", 1000, 1},
    {"seconds", 1000, 1},       {"m", 60000, 1},          {"min", 60000, 1},
    {"minute", 60000, 1},       {"minutes", 60000, 1},    {"h", 3600000, 1},
    {"hour", 3600000, 1},       {"hours", 3600000, 1},    {"d", 86400000, 1},
    {"day", 86400000, 1},       {"days", 86400000, 1},
};

static const struct unit *find_unit(const char *label, size_t n) {
    if (n == 0)
        return find_unit("ms", 2); /* no unit: milliseconds */
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].label) == n && !strncasecmp(units[i].label, label, n))
            return &units[i];
    return NULL;
}

int64_t pc_value_duration_ms(const char *text) {
    while (isspace((unsigned char)*text))
        text++;
    const char *p = text;
    while (isdigit((unsigned char)*p))
        p++;
    char digits[32];
    size_t nd = (size_t)(p - text);
    if (nd == 0 || nd >= sizeof digits)
        return -1;
    memcpy(digits, text, nd);
    digits[nd] = '\0';
    pc_value_rule_t r = {"duration", PC_VALUE_INT, 0, INT64_MAX, NULL};
    int64_t value;
    if (pc_value_parse(&r, digits, &value, NULL, 0))
        return -1;
    while (isspace((unsigned char)*p))
        p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1]))
        n--;
    const struct unit *u = find_unit(p, n);
    if (!u || (u->num > 1 && value > INT64_MAX / u->num))
        return -1;
    return value * u->num / u->den;
}
