/*
 * Design notes: the value syntaxes of the SQL options that are more than
 * a word — message ids "ledger:entry:partition" and Flink durations.
 *
 * Message ids split on ':' into at most three parts, the third taking the
 * rest, exactly as the connector splits them; so "0:0:0:0" has three parts
 * and fails on its third, and the error texts are the connector's (users
 * search for them). There is no batch index in this syntax: the id names a
 * whole entry (batch index -1).
 *
 * Durations follow Flink's TimeUtils: a non-negative integer, optional
 * blanks, an optional unit (ms when absent); sub-millisecond units are
 * rounded down to whole milliseconds, the sink's resolution.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connector/table_int.h"
#include "core/err.h"

#define MSGID_FORMAT "MessageId format must be ledgerId:entryId:partitionId."

/* A Java Long.parseLong: optional sign, digits only, in range. */
static int parse_long(const char *s, size_t n, int64_t *out) {
    char buf[32];
    if (n == 0 || n >= sizeof buf || isspace((unsigned char)*s))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end || end == buf)
        return -1;
    *out = v;
    return 0;
}

pulsarc_err_t pc_table_parse_msgid(const char *text, pulsarc_msgid_t *out, char *e, size_t el) {
    const char *c1 = strchr(text, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, MSGID_FORMAT);
    int64_t ledger, entry, partition;
    if (parse_long(text, (size_t)(c1 - text), &ledger) ||
        parse_long(c1 + 1, (size_t)(c2 - c1 - 1), &entry) ||
        parse_long(c2 + 1, strlen(c2 + 1), &partition) || partition < INT32_MIN ||
        partition > INT32_MAX)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         MSGID_FORMAT " Each id should be able to parsed to long type.");
    pulsarc_msgid_t id = {ledger, entry, (int32_t)partition, -1, 0};
    *out = id;
    return PULSARC_OK;
}

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

int64_t pc_table_parse_duration_ms(const char *text) {
    while (isspace((unsigned char)*text))
        text++;
    const char *p = text;
    while (isdigit((unsigned char)*p))
        p++;
    int64_t value;
    if (parse_long(text, (size_t)(p - text), &value))
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
