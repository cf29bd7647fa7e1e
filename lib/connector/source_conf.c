/*
 * Design notes: the source's configuration. Keys carry the connector's own
 * names (pulsar.source.*, pulsar.consumer.subscriptionName/Type) so that a
 * Flink job's properties port over; one static table maps each key to a
 * parser and a field, and unknown keys are rejected with their name. The
 * connector-wide configuration object (lib/connector/config.c) will absorb
 * this table later; until then the source owns the keys it implements.
 * Start and stop cursors are structured values, so they have typed setters.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connector/cursor.h"
#include "connector/source_int.h"
#include "core/err.h"

typedef pulsarc_err_t (*parse_fn)(pulsarc_source_conf_t *c, size_t off, const char *v);

typedef struct key_def {
    const char *name;
    parse_fn parse;
    size_t off;
} key_def_t;

static pulsarc_err_t parse_i64(pulsarc_source_conf_t *c, size_t off, const char *v) {
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end)
        return PULSARC_ERR_BAD_CONFIG;
    *(int64_t *)((char *)c + off) = x;
    return PULSARC_OK;
}

static pulsarc_err_t parse_pos_i64(pulsarc_source_conf_t *c, size_t off, const char *v) {
    pulsarc_err_t err = parse_i64(c, off, v);
    if (!err && *(int64_t *)((char *)c + off) <= 0)
        return PULSARC_ERR_BAD_CONFIG;
    return err;
}

static pulsarc_err_t parse_bool(pulsarc_source_conf_t *c, size_t off, const char *v) {
    int *dst = (int *)((char *)c + off);
    if (!strcasecmp(v, "true"))
        *dst = 1;
    else if (!strcasecmp(v, "false"))
        *dst = 0;
    else
        return PULSARC_ERR_BAD_CONFIG;
    return PULSARC_OK;
}

static pulsarc_err_t parse_str(pulsarc_source_conf_t *c, size_t off, const char *v) {
    char **dst = (char **)((char *)c + off);
    char *copy = strdup(v);
    if (!copy)
        return PULSARC_ERR_NOMEM;
    free(*dst);
    *dst = copy;
    return PULSARC_OK;
}

static pulsarc_err_t parse_sub_type(pulsarc_source_conf_t *c, size_t off, const char *v) {
    static const char *names[] = {"Exclusive", "Shared", "Failover", "Key_Shared"};
    (void)off;
    for (int i = 0; i < 4; i++)
        if (!strcmp(v, names[i])) {
            c->sub_type = (pc_sub_type_t)i;
            return PULSARC_OK;
        }
    return PULSARC_ERR_BAD_CONFIG;
}

static pulsarc_err_t parse_verify(pulsarc_source_conf_t *c, size_t off, const char *v) {
    (void)off;
    if (!strcmp(v, "FAIL_ON_MISMATCH"))
        c->verify_fail = 1;
    else if (!strcmp(v, "WARN_ON_MISMATCH"))
        c->verify_fail = 0;
    else
        return PULSARC_ERR_BAD_CONFIG;
    return PULSARC_OK;
}

#define OFF(f) offsetof(pulsarc_source_conf_t, f)
static const key_def_t keys[] = {
    {"pulsar.consumer.subscriptionName", parse_str, OFF(sub_name)},
    {"pulsar.consumer.subscriptionType", parse_sub_type, 0},
    {"pulsar.source.partitionDiscoveryIntervalMs", parse_i64, OFF(discovery_ms)},
    {"pulsar.source.maxFetchRecords", parse_pos_i64, OFF(max_fetch_records)},
    {"pulsar.source.maxFetchTime", parse_pos_i64, OFF(max_fetch_ms)},
    {"pulsar.source.fetchOneMessageTime", parse_pos_i64, OFF(fetch_one_ms)},
    {"pulsar.source.enableAutoAcknowledgeMessage", parse_bool, OFF(auto_ack)},
    {"pulsar.source.autoCommitCursorInterval", parse_pos_i64, OFF(auto_commit_ms)},
    {"pulsar.source.verifyInitialOffsets", parse_verify, 0},
    {"pulsar.source.allowKeySharedOutOfOrderDelivery", parse_bool, OFF(key_shared_ooo)},
    {"pulsar.source.resetSubscriptionCursor", parse_bool, OFF(reset_cursor)},
    {"pulsar.source.enableMetrics", parse_bool, OFF(metrics)},
    {"pulsar.source.transactionTimeoutMillis", parse_pos_i64, OFF(txn_timeout_ms)},
    {"pulsar.source.enableSchemaEvolution", parse_bool, OFF(schema_evolution)},
    {"pulsar.source.schemaType", parse_str, OFF(schema_type)},
    {"pulsar.source.schemaDefinition", parse_str, OFF(schema_def)},
    {"pulsar.admin.adminUrl", parse_str, OFF(admin_url)},
};

void pc_source_conf_defaults(pulsarc_source_conf_t *c) {
    memset(c, 0, sizeof *c);
    c->sub_type = PC_SUB_EXCLUSIVE;
    c->discovery_ms = 300000;
    c->max_fetch_records = 100;
    c->max_fetch_ms = 10000;
    c->fetch_one_ms = -1;
    c->auto_commit_ms = 5000;
    c->metrics = 1;
    c->txn_timeout_ms = 10800000; /* 3 h, the v3.0 connector's */
    c->start = pulsarc_start_cursor_earliest();
    c->stop = pulsarc_stop_cursor_never();
}

pulsarc_source_conf_t *pulsarc_source_conf_new(void) {
    pulsarc_source_conf_t *c = malloc(sizeof *c);
    if (c)
        pc_source_conf_defaults(c);
    return c;
}

void pc_source_conf_clear(pulsarc_source_conf_t *c) {
    free(c->sub_name);
    free(c->admin_url);
    free(c->schema_type);
    free(c->schema_def);
    for (size_t i = 0; i < c->ntopics; i++)
        free(c->topics[i]);
    free(c->topics);
    pc_source_conf_defaults(c);
}

void pulsarc_source_conf_destroy(pulsarc_source_conf_t *conf) {
    if (!conf)
        return;
    pc_source_conf_clear(conf);
    free(conf);
}

static char *dup_or_null(const char *s, int *failed) {
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *failed = 1;
    return d;
}

pulsarc_err_t pc_source_conf_copy(pulsarc_source_conf_t *dst, const pulsarc_source_conf_t *src) {
    int failed = 0;
    *dst = *src;
    dst->sub_name = dup_or_null(src->sub_name, &failed);
    dst->admin_url = dup_or_null(src->admin_url, &failed);
    dst->schema_type = dup_or_null(src->schema_type, &failed);
    dst->schema_def = dup_or_null(src->schema_def, &failed);
    dst->topics = calloc(src->ntopics ? src->ntopics : 1, sizeof *dst->topics);
    dst->ntopics = 0;
    for (size_t i = 0; dst->topics && i < src->ntopics; i++)
        dst->topics[dst->ntopics++] = dup_or_null(src->topics[i], &failed);
    if (!dst->topics || failed) {
        pc_source_conf_clear(dst);
        return PULSARC_ERR_NOMEM;
    }
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_source_conf_set(pulsarc_source_conf_t *conf, const char *key,
                                      const char *value, char *errstr, size_t errlen) {
    if (!conf || !key || !value)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "conf, key and value are required");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strcmp(keys[i].name, key) != 0)
            continue;
        pulsarc_err_t err = keys[i].parse(conf, keys[i].off, value);
        if (err == PULSARC_ERR_BAD_CONFIG)
            return pc_seterr(errstr, errlen, err, "%s: invalid value \"%s\"", key, value);
        return err;
    }
    return pc_seterr(errstr, errlen, PULSARC_ERR_UNKNOWN_CONFIG, "%s: unknown source key", key);
}

pulsarc_err_t pulsarc_source_conf_add_topic(pulsarc_source_conf_t *conf, const char *topic) {
    if (!conf || !topic || !*topic)
        return PULSARC_ERR_INVALID_ARG;
    char **grown = realloc(conf->topics, (conf->ntopics + 1) * sizeof *grown);
    if (!grown)
        return PULSARC_ERR_NOMEM;
    conf->topics = grown;
    if (!(grown[conf->ntopics] = strdup(topic)))
        return PULSARC_ERR_NOMEM;
    conf->ntopics++;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_source_conf_set_start_cursor(pulsarc_source_conf_t *conf,
                                                   const pulsarc_start_cursor_t *c) {
    if (!conf || pc_start_validate(c, NULL, 0))
        return PULSARC_ERR_INVALID_ARG;
    conf->start = *c;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_source_conf_set_stop_cursor(pulsarc_source_conf_t *conf,
                                                  const pulsarc_stop_cursor_t *c) {
    if (!conf || pc_stop_validate(c, NULL, 0))
        return PULSARC_ERR_INVALID_ARG;
    conf->stop = *c;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_source_conf_set_log_cb(pulsarc_source_conf_t *conf,
                                             pulsarc_source_log_cb cb, void *opaque) {
    if (!conf)
        return PULSARC_ERR_INVALID_ARG;
    conf->log_cb = cb;
    conf->log_opaque = opaque;
    return PULSARC_OK;
}
