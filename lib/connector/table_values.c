/*
 * Design notes: the value syntaxes of the SQL options that are more than
 * a word — message ids "ledger:entry:partition". (Flink durations are
 * read by lib/conf/value.c, the project's value parser.)
 *
 * Message ids split on ':' into at most three parts, the third taking the
 * rest, exactly as the connector splits them; so "0:0:0:0" has three parts
 * and fails on its third, and the error texts are the connector's (users
 * search for them). There is no batch index in this syntax: the id names a
 * whole entry (batch index -1).
 * */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

