/*
 * Design notes: configuration values from text, for every property table
 * in the project (the client's lib/conf/props.h and the connector's
 * connector_props.h), so an integer, a boolean or an enum is read and
 * refused the same way, with the same message, whichever key it is for.
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
