/*
 * Design notes: the sink builder.
 *
 * Settings are plain fields; the typed setters exist for what is not a
 * string (callbacks, the topic list, the guarantee). pulsarc_sink_builder_
 * set_config() takes the connector's key names so a Flink job's
 * properties port over:
 *  - pulsar.sink.* (and pulsar.admin.adminUrl) are read by the connector's
 *    property table (connector_props.h, through lib/conf's table code),
 *    then stored in the settings' fields;
 *  - pulsar.client.* / pulsar.producer.* are read by the connector's table
 *    too when it has the key, and become the client key the row targets
 *    (a key only the client has is taken after its prefix); each is
 *    checked at once against a scratch core conf (so a typo fails at the
 *    call that made it) and kept as a pair, replayed at build time between the
 *    sink's defaults and the values the sink must force. Replaying instead
 *    of keeping a conf is what lets "the user's value beats our default"
 *    and "our forced value beats the user's" both hold.
 * The connector's builder errors are kept word for word where a user may
 * search for them ("setTopics couldn't be set twice.", ...).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/config_int.h"
#include "connector/sink_int.h"
#include "core/err.h"

static pulsarc_err_t say(pulsarc_err_t err, char *errstr, size_t errlen, const char *fmt,
                         const char *a, const char *b) {
    if (errstr && errlen)
        snprintf(errstr, errlen, fmt, a ? a : "", b ? b : "");
    return err;
}

static pulsarc_err_t set_str(char **dst, const char *v) {
    if (!v || !*v)
        return PULSARC_ERR_INVALID_ARG;
    char *copy = strdup(v);
    if (!copy)
        return PULSARC_ERR_NOMEM;
    free(*dst);
    *dst = copy;
    return PULSARC_OK;
}

/* ---------- the pulsar.sink.* table ---------- */

/* The keys the sink implements; their values are read by the connector's table. */
static const pc_cc_id_t sink_keys[] = {
    PC_CC_SINK_DELIVERY_GUARANTEE, PC_CC_SINK_TXN_TIMEOUT,       PC_CC_SINK_METADATA_REFRESH,
    PC_CC_SINK_KEY_HASH,           PC_CC_SINK_MAX_RECOMMIT,      PC_CC_SINK_SCHEMA_EVOLUTION,
    PC_CC_SINK_SCHEMA_TYPE,        PC_CC_SINK_SCHEMA_DEFINITION, PC_CC_SINK_METRICS,
    PC_CC_SINK_VALIDATE_BYTES,     PC_CC_ADMIN_URL,
};

/* Is the table's choice num of id spelled want? */
static int choice_is(pc_cc_id_t id, int64_t num, const char *want) {
    return pc_prop_choice_is(&pc_cc_props[id], num, want);
}

/* Stores a value the table has accepted; text is taken over. */
static pulsarc_err_t put_sink_key(pc_sink_settings_t *s, pc_cc_id_t id, char *text, int64_t num) {
    char **str = id == PC_CC_SINK_SCHEMA_TYPE         ? &s->schema_type
                 : id == PC_CC_SINK_SCHEMA_DEFINITION ? &s->schema_def
                 : id == PC_CC_ADMIN_URL              ? &s->admin_url
                                                      : NULL;
    pulsarc_err_t err = str ? set_str(str, text) : PULSARC_OK; /* type: checked at build */
    free(text);
    if (id == PC_CC_SINK_DELIVERY_GUARANTEE)
        s->guarantee = choice_is(id, num, "exactly-once")    ? PULSARC_SINK_EXACTLY_ONCE
                       : choice_is(id, num, "at-least-once") ? PULSARC_SINK_AT_LEAST_ONCE
                                                             : PULSARC_SINK_NONE;
    else if (id == PC_CC_SINK_TXN_TIMEOUT)
        s->opts.txn_timeout_ms = num;
    else if (id == PC_CC_SINK_METADATA_REFRESH)
        s->opts.refresh_ms = num;
    else if (id == PC_CC_SINK_KEY_HASH)
        s->opts.key_hash = choice_is(id, num, "java-hash") ? PC_SINK_HASH_JAVA : PC_SINK_HASH_MURMUR3;
    else if (id == PC_CC_SINK_MAX_RECOMMIT)
        s->opts.max_recommit = (int)num;
    else if (id == PC_CC_SINK_SCHEMA_EVOLUTION)
        s->schema_evolution = (int)num;
    return err; /* enableMetrics, validateSinkMessageBytes: accepted, nothing to set */
}

static pulsarc_err_t set_sink_key(pulsarc_sink_builder_t *b, const char *key, const char *v,
                                  char *errstr, size_t errlen) {
    int id = pc_prop_find(&pc_cc_table, key);
    for (size_t i = 0; id >= 0 && i < sizeof sink_keys / sizeof sink_keys[0]; i++) {
        if ((int)sink_keys[i] != id)
            continue;
        char *text;
        int64_t num;
        pulsarc_err_t err = pc_cc_parse(id, v, &text, &num, NULL, 0);
        if (!err)
            err = put_sink_key(&b->s, sink_keys[i], text, num);
        if (err == PULSARC_ERR_NOMEM || !err)
            return err;
        return say(PULSARC_ERR_BAD_CONFIG, errstr, errlen, "Invalid value '%s' for key '%s'.",
                   v, key);
    }
    return say(PULSARC_ERR_UNKNOWN_CONFIG, errstr, errlen, "Unknown sink option '%s'.%s", key,
               NULL);
}

/* ---------- core keys, kept as pairs ---------- */

static pulsarc_err_t check_core_key(const char *key, const char *v, char *errstr,
                                    size_t errlen) {
    pulsarc_conf_t *scratch = pulsarc_conf_new();
    if (!scratch)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t err = pulsarc_conf_set(scratch, key, v, errstr, errlen);
    pulsarc_conf_destroy(scratch);
    return err;
}

static pulsarc_err_t add_pair(pulsarc_sink_builder_t *b, const char *key, const char *v) {
    char **kv = realloc(b->kv, (b->nkv + 2) * sizeof *kv);
    if (!kv)
        return PULSARC_ERR_NOMEM;
    b->kv = kv;
    kv[b->nkv] = strdup(key);
    kv[b->nkv + 1] = strdup(v);
    b->nkv += 2;
    return kv[b->nkv - 2] && kv[b->nkv - 1] ? PULSARC_OK : PULSARC_ERR_NOMEM;
}

static pulsarc_err_t set_core_key(pulsarc_sink_builder_t *b, const char *key, const char *v,
                                  char *errstr, size_t errlen) {
    if (!strcmp(key, "serviceUrl"))
        return set_str(&b->s.service_url, v);
    if (!strcmp(key, "producerName"))
        return set_str(&b->s.producer_name, v);
    if (!strcmp(key, "callbackMode"))
        return say(PULSARC_ERR_BAD_CONFIG, errstr, errlen,
                   "'%s' is fixed by the sink (its send outcomes need the callback thread).",
                   key, NULL);
    pulsarc_err_t err = check_core_key(key, v, errstr, errlen);
    return err ? err : add_pair(b, key, v);
}

/*
 * A pulsar.client.* or pulsar.producer.* key: read by the connector's row
 * when it has one and set on the client key the row targets; a key only
 * the client has (after the prefix, e.g. pulsar.producer.maxPendingMessages)
 * goes to it directly. Keys pulsarc accepts without using are dropped.
 */
static pulsarc_err_t set_client_key(pulsarc_sink_builder_t *b, const char *key,
                                    const char *core_key, const char *v, char *errstr,
                                    size_t errlen) {
    int id = pc_prop_find(&pc_cc_table, key);
    const pc_prop_t *p = id >= 0 ? &pc_cc_props[id] : NULL;
    if (!p || (!p->target && !(p->flags & PC_F_NOOP)))
        return set_core_key(b, core_key, v, errstr, errlen);
    char *text, scaled[32];
    int64_t num;
    pulsarc_err_t err = pc_cc_parse(id, v, &text, &num, errstr, errlen);
    if (!err && p->target)
        err = set_core_key(b, p->target, pc_cc_target_value(id, text, num, scaled, sizeof scaled),
                           errstr, errlen);
    free(text);
    return err;
}

/* ---------- public builder ---------- */

pulsarc_sink_builder_t *pulsarc_sink_builder_new(void) {
    pulsarc_sink_builder_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    for (size_t i = 0; i < sizeof sink_keys / sizeof sink_keys[0]; i++) {
        const pc_prop_t *p = &pc_cc_props[sink_keys[i]];
        if (p->type != PC_VALUE_STR) /* the table's defaults; strings start unset */
            put_sink_key(&b->s, sink_keys[i], NULL, pc_prop_default_num(p));
    }
    return b;
}

void pc_sink_settings_free(pc_sink_settings_t *s) {
    free(s->service_url);
    free(s->admin_url);
    free(s->producer_name);
    free(s->schema_type);
    free(s->schema_def);
    for (size_t i = 0; i < s->ntopics; i++)
        free(s->topics[i]);
    free(s->topics);
    memset(s, 0, sizeof *s);
}

void pulsarc_sink_builder_destroy(pulsarc_sink_builder_t *b) {
    if (!b)
        return;
    pc_sink_settings_free(&b->s);
    for (size_t i = 0; i < b->nkv; i++)
        free(b->kv[i]);
    free(b->kv);
    free(b);
}

static char *dup_or_null(const char *v, int *oom) {
    if (!v)
        return NULL;
    char *c = strdup(v);
    if (!c)
        *oom = 1;
    return c;
}

pulsarc_err_t pc_sink_settings_copy(pc_sink_settings_t *dst, const pc_sink_settings_t *src) {
    int oom = 0;
    *dst = *src;
    dst->service_url = dup_or_null(src->service_url, &oom);
    dst->admin_url = dup_or_null(src->admin_url, &oom);
    dst->producer_name = dup_or_null(src->producer_name, &oom);
    dst->schema_type = dup_or_null(src->schema_type, &oom);
    dst->schema_def = dup_or_null(src->schema_def, &oom);
    dst->topics = src->ntopics ? calloc(src->ntopics, sizeof *dst->topics) : NULL;
    if (src->ntopics && !dst->topics) {
        dst->ntopics = 0;
        oom = 1;
    }
    for (size_t i = 0; dst->topics && i < src->ntopics; i++)
        dst->topics[i] = dup_or_null(src->topics[i], &oom);
    return oom ? PULSARC_ERR_NOMEM : PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_service_url(pulsarc_sink_builder_t *b, const char *url) {
    return b ? set_str(&b->s.service_url, url) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_sink_builder_set_admin_url(pulsarc_sink_builder_t *b, const char *url) {
    return b ? set_str(&b->s.admin_url, url) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_sink_builder_set_topics(pulsarc_sink_builder_t *b,
                                              const char *const *topics, size_t n) {
    if (!b || (n && !topics))
        return PULSARC_ERR_INVALID_ARG;
    if (b->s.topics_set)
        return PULSARC_ERR_STATE; /* the connector: "setTopics couldn't be set twice." */
    for (size_t i = 0; i < n; i++)
        if (!topics[i] || !*topics[i])
            return PULSARC_ERR_INVALID_ARG;
    b->s.topics = n ? calloc(n, sizeof *b->s.topics) : NULL;
    if (n && !b->s.topics)
        return PULSARC_ERR_NOMEM;
    b->s.topics_set = 1;
    for (size_t i = 0; i < n; i++) {
        b->s.topics[i] = strdup(topics[i]);
        if (!b->s.topics[i])
            return PULSARC_ERR_NOMEM;
        b->s.ntopics = i + 1;
    }
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_serializer(pulsarc_sink_builder_t *b,
                                                  pulsarc_sink_serialize_cb cb, void *opaque) {
    if (!b || !cb)
        return PULSARC_ERR_INVALID_ARG;
    b->s.serialize = cb;
    b->s.serialize_opaque = opaque;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_delivery_guarantee(pulsarc_sink_builder_t *b,
                                                          pulsarc_sink_guarantee_t g) {
    if (!b || g < PULSARC_SINK_NONE || g > PULSARC_SINK_EXACTLY_ONCE)
        return PULSARC_ERR_INVALID_ARG;
    b->s.guarantee = g;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_producer_name(pulsarc_sink_builder_t *b,
                                                     const char *name) {
    return b ? set_str(&b->s.producer_name, name) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_sink_builder_set_writer(pulsarc_sink_builder_t *b, int64_t index,
                                             int64_t count, char *errstr, size_t errlen) {
    if (!b)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "builder is required");
    pulsarc_err_t err = pc_cc_check_place("writer", index, count, PC_SINK_STATE_MAX_WRITERS,
                                          errstr, errlen);
    if (err)
        return err;
    b->s.writer_index = (uint32_t)index;
    b->s.writer_count = (uint32_t)count;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_delay(pulsarc_sink_builder_t *b, uint64_t delay_ms) {
    if (!b)
        return PULSARC_ERR_INVALID_ARG;
    b->s.delay_ms = delay_ms;
    b->s.delayer = NULL;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_delayer(pulsarc_sink_builder_t *b,
                                               pulsarc_sink_delayer_cb cb, void *opaque) {
    if (!b || !cb)
        return PULSARC_ERR_INVALID_ARG;
    b->s.delayer = cb;
    b->s.delayer_opaque = opaque;
    b->s.delay_ms = 0;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_crypto_key_reader(pulsarc_sink_builder_t *b,
                                                        pulsarc_crypto_key_reader_cb cb,
                                                        void *opaque) {
    if (!b || !cb)
        return PULSARC_ERR_INVALID_ARG;
    b->s.key_reader = cb;
    b->s.key_reader_opaque = opaque;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_routing_mode(pulsarc_sink_builder_t *b,
                                                    pulsarc_sink_routing_t mode) {
    if (!b || (mode != PULSARC_SINK_ROUND_ROBIN && mode != PULSARC_SINK_KEY_HASH))
        return PULSARC_ERR_INVALID_ARG;
    if (b->s.router)
        return PULSARC_ERR_STATE;
    b->s.routing = mode;
    b->s.routing_set = 1;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_topic_router(pulsarc_sink_builder_t *b,
                                                    pulsarc_sink_router_cb cb, void *opaque) {
    if (!b || !cb)
        return PULSARC_ERR_INVALID_ARG;
    if (b->s.routing_set)
        return PULSARC_ERR_STATE;
    b->s.router = cb;
    b->s.router_opaque = opaque;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_sink_builder_set_config(pulsarc_sink_builder_t *b, const char *key,
                                              const char *value, char *errstr, size_t errlen) {
    if (!b || !key || !value)
        return say(PULSARC_ERR_INVALID_ARG, errstr, errlen, "key and value are required%s%s",
                   NULL, NULL);
    if (!strncmp(key, "pulsar.sink.", 12) || !strcmp(key, "pulsar.admin.adminUrl"))
        return set_sink_key(b, key, value, errstr, errlen);
    if (!strncmp(key, "pulsar.client.", 14))
        return set_client_key(b, key, key + 14, value, errstr, errlen);
    if (!strncmp(key, "pulsar.producer.", 16))
        return set_client_key(b, key, key + 16, value, errstr, errlen);
    return say(PULSARC_ERR_UNKNOWN_CONFIG, errstr, errlen, "Unknown sink option '%s'.%s", key,
               NULL);
}

/* ---------- validation and the client configuration ---------- */

pulsarc_err_t pc_sink_validate(const pulsarc_sink_builder_t *b, char *errstr, size_t errlen) {
    if (!b)
        return say(PULSARC_ERR_INVALID_ARG, errstr, errlen, "no builder%s%s", NULL, NULL);
    if (!b->s.serialize)
        return say(PULSARC_ERR_INVALID_ARG, errstr, errlen, "serializationSchema must be set.%s%s",
                   NULL, NULL);
    if (!b->s.ntopics && !b->s.router)
        return say(PULSARC_ERR_INVALID_ARG, errstr, errlen,
                   "No topic names or custom topic router are provided.%s%s", NULL, NULL);
    if (!b->s.service_url)
        return say(PULSARC_ERR_INVALID_ARG, errstr, errlen,
                   "Config option pulsar.client.serviceUrl is not provided for pulsar client.%s%s",
                   NULL, NULL);
    if (b->s.schema_evolution && !b->s.schema_type)
        return say(PULSARC_ERR_BAD_CONFIG, errstr, errlen, "pulsar.sink.enableSchemaEvolution "
                   "needs pulsar.sink.schemaType (the schema the sink writes).%s%s", NULL, NULL);
    if (!b->s.schema_evolution && (b->s.schema_type || b->s.schema_def))
        return say(PULSARC_ERR_BAD_CONFIG, errstr, errlen, "pulsar.sink.schemaType / "
                   "schemaDefinition are only declared with pulsar.sink.enableSchemaEvolution"
                   "=true.%s%s", NULL, NULL);
    return PULSARC_OK;
}

static pulsarc_err_t conf_apply(pulsarc_conf_t *c, const char *k, const char *v, char *errstr,
                                size_t errlen) {
    return pulsarc_conf_set(c, k, v, errstr, errlen);
}

/* Sink defaults, then the user's pairs, then what the sink must force. */
pulsarc_err_t pc_sink_client_conf(const pulsarc_sink_builder_t *b, pulsarc_conf_t **out,
                                  char *errstr, size_t errlen) {
    pulsarc_conf_t *c = pulsarc_conf_new();
    if (!c)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t err = conf_apply(c, "blockIfQueueFull", "true", errstr, errlen);
    for (size_t i = 0; !err && i < b->nkv; i += 2)
        err = conf_apply(c, b->kv[i], b->kv[i + 1], errstr, errlen);
    if (!err)
        err = conf_apply(c, "serviceUrl", b->s.service_url, errstr, errlen);
    if (!err)
        err = conf_apply(c, "callbackMode", "thread", errstr, errlen);
    /* Transactional sends must not time out on their own: a timed-out send
     * inside a transaction would leave a hole the commit cannot see. */
    if (!err && b->s.guarantee == PULSARC_SINK_EXACTLY_ONCE)
        err = conf_apply(c, "sendTimeoutMs", "0", errstr, errlen);
    if (!err && b->s.guarantee == PULSARC_SINK_EXACTLY_ONCE)
        err = conf_apply(c, "enableTransaction", "true", errstr, errlen);
    /* Every producer of the sink declares the schema; the broker checks each topic's. */
    if (!err && b->s.schema_evolution)
        err = conf_apply(c, "schemaType", b->s.schema_type, errstr, errlen);
    if (!err && b->s.schema_evolution && b->s.schema_def)
        err = conf_apply(c, "schemaDefinition", b->s.schema_def, errstr, errlen);
    if (!err && b->s.key_reader)
        err = pulsarc_conf_set_crypto_key_reader(c, b->s.key_reader, b->s.key_reader_opaque);
    if (err) {
        pulsarc_conf_destroy(c);
        return err;
    }
    *out = c;
    return PULSARC_OK;
}
