/*
 * Design notes: the source's configuration. Keys carry the connector's own
 * names (pulsar.source.*, pulsar.consumer.subscriptionName/Type) so that a
 * Flink job's properties port over. Each value is read by the connector's
 * property table (connector_props.h: type, range, enum, URL syntax, through
 * lib/conf's table code); the static table here only says which field it
 * goes to. Unknown keys are rejected with their name.
 * Start and stop cursors are structured values, so they have typed setters;
 * so is the reader's place among parallel readers (index, count), which is
 * no property of the Flink connector (Flink hands each reader its subtask).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "connector/checkpoint.h"
#include "connector/config_int.h"
#include "connector/cursor.h"
#include "connector/source_int.h"
#include "core/err.h"

/* Where a key's value goes; the value itself is read by the connector's table. */
typedef enum { F_STR, F_I64, F_FLAG, F_SUB_TYPE, F_VERIFY } field_kind_t;

typedef struct key_def {
    pc_cc_id_t id;
    field_kind_t kind;
    size_t off;
} key_def_t;

#define OFF(f) offsetof(pulsarc_source_conf_t, f)
static const key_def_t keys[] = {
    {PC_CC_CONSUMER_SUBSCRIPTION_NAME, F_STR, OFF(sub_name)},
    {PC_CC_CONSUMER_SUBSCRIPTION_TYPE, F_SUB_TYPE, 0},
    {PC_CC_SOURCE_DISCOVERY_INTERVAL, F_I64, OFF(discovery_ms)},
    {PC_CC_SOURCE_MAX_FETCH_RECORDS, F_I64, OFF(max_fetch_records)},
    {PC_CC_SOURCE_MAX_FETCH_TIME, F_I64, OFF(max_fetch_ms)},
    {PC_CC_SOURCE_FETCH_ONE_TIME, F_I64, OFF(fetch_one_ms)},
    {PC_CC_SOURCE_AUTO_ACK, F_FLAG, OFF(auto_ack)},
    {PC_CC_SOURCE_AUTO_COMMIT_INTERVAL, F_I64, OFF(auto_commit_ms)},
    {PC_CC_SOURCE_VERIFY_OFFSETS, F_VERIFY, 0},
    {PC_CC_SOURCE_KEY_SHARED_OOO, F_FLAG, OFF(key_shared_ooo)},
    {PC_CC_SOURCE_RESET_CURSOR, F_FLAG, OFF(reset_cursor)},
    {PC_CC_SOURCE_METRICS, F_FLAG, OFF(metrics)},
    {PC_CC_SOURCE_TXN_TIMEOUT, F_I64, OFF(txn_timeout_ms)},
    {PC_CC_SOURCE_SCHEMA_EVOLUTION, F_FLAG, OFF(schema_evolution)},
    {PC_CC_SOURCE_SCHEMA_TYPE, F_STR, OFF(schema_type)},
    {PC_CC_SOURCE_SCHEMA_DEFINITION, F_STR, OFF(schema_def)},
    {PC_CC_ADMIN_URL, F_STR, OFF(admin_url)},
};

/* Stores a value the table has accepted (text is taken over). */
static void put(pulsarc_source_conf_t *c, const key_def_t *k, char *text, int64_t num) {
    char *at = (char *)c + k->off;
    if (k->kind == F_STR) {
        free(*(char **)at);
        *(char **)at = text;
        return;
    }
    free(text);
    if (k->kind == F_I64)
        *(int64_t *)at = num;
    else if (k->kind == F_FLAG)
        *(int *)at = (int)num;
    else if (k->kind == F_SUB_TYPE) /* the table lists the types in pc_sub_type_t's order */
        c->sub_type = (pc_sub_type_t)num;
    else
        c->verify_fail = num == 0; /* FAIL_ON_MISMATCH|WARN_ON_MISMATCH */
}

/* The table's defaults; a number without one is -1 (unset), strings start unset. */
void pc_source_conf_defaults(pulsarc_source_conf_t *c) {
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const pc_prop_t *p = &pc_cc_props[keys[i].id];
        if (keys[i].kind != F_STR)
            put(c, &keys[i], NULL, p->defval ? pc_prop_default_num(p) : -1);
    }
    c->start = pulsarc_start_cursor_earliest();
    c->stop = pulsarc_stop_cursor_never();
    c->reader_count = 1;
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

pulsarc_err_t pulsarc_source_conf_set_crypto_key_reader(pulsarc_source_conf_t *conf,
                                                       pulsarc_crypto_key_reader_cb cb,
                                                       void *opaque) {
    if (!conf || !cb)
        return PULSARC_ERR_INVALID_ARG;
    conf->key_reader = cb;
    conf->key_reader_opaque = opaque;
    return PULSARC_OK;
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
    int id = pc_prop_find(&pc_cc_table, key);
    for (size_t i = 0; id >= 0 && i < sizeof keys / sizeof keys[0]; i++) {
        if ((int)keys[i].id != id)
            continue;
        char *text;
        int64_t num;
        pulsarc_err_t err = pc_cc_parse(id, value, &text, &num, errstr, errlen);
        if (!err)
            put(conf, &keys[i], text, num);
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

pulsarc_err_t pulsarc_source_conf_set_reader(pulsarc_source_conf_t *conf, int64_t index,
                                             int64_t count, char *errstr, size_t errlen) {
    if (!conf)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "conf is required");
    pulsarc_err_t err = pc_cc_check_place("reader", index, count, PC_CKPT_MAX_READERS, errstr,
                                          errlen);
    if (err)
        return err;
    conf->reader_index = (uint32_t)index;
    conf->reader_count = (uint32_t)count;
    return PULSARC_OK;
}
