/*
 * Design notes: the SQL connector's WITH options, validated into a table.
 * Which options exist, their types, defaults and choices are rows of
 * table_props.h (lib/conf's row format); each value is read by its row,
 * and refused in the connector's words.
 *
 * The checks run in a fixed order, so that the first error a user sees is
 * the most basic one: the connector identifier, the required options, the
 * formats and their options, unknown options, then each option's value,
 * then the rules spanning options (one start, one stop, router vs routing
 * mode, key format vs key fields, primary key vs upsert), then metadata
 * columns. Error texts are the Flink connector's where it has one, with
 * option names in quotes where the connector printed a
 * Java object; pulsarc's additions are worded the same way.
 *
 * Options that configure the client become BUILDER values of a copy of
 * the base configuration (service-url, admin-url, subscription name, every
 * 'pulsar.*' option), so they are validated by the one property table and
 * conflict with a different builder value instead of overriding it.
 *
 * Deliberate differences from the Flink connector:
 *  - no subscription name given: one derived from the topics instead of a
 *    random one, so restarts reuse it and nothing is orphaned;
 *  - 'format' and 'value.format' with different values is an error;
 *  - 'value.fields-include' (ALL | EXCEPT_KEY, default EXCEPT_KEY) is
 *    accepted, as the older connector had it;
 *  - sink.custom-topic-router names a router registered on the base
 *    configuration (C has no classes to instantiate).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/value.h"
#include "connector/config_int.h"
#include "connector/table_int.h"
#include "connector/table_props.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/url.h"

const pc_prop_t pc_table_opts[PC_TO__COUNT] = {PC_TABLE_OPTS(PC_PROP_ROW)};
const pc_prop_table_t pc_table_opt_table = {"pulsarc SQL table options",
                                            "lib/connector/table_props.h", pc_table_opts,
                                            PC_TO__COUNT};

typedef struct opts {
    const char *const *kv;
    size_t n;
} opts_t;

/* The value of key, or NULL. */
static const char *opt(const opts_t *o, const char *key) {
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->kv[2 * i], key))
            return o->kv[2 * i + 1];
    return NULL;
}

static pulsarc_err_t cannot_parse(const char *key, const char *value, char *e, size_t el) {
    return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "Could not parse value '%s' for key '%s'.",
                     value, key);
}

/*
 * Reads v, given as option key, by row id of the table (type, range,
 * choices; an integer as Long.parseLong takes it, without blanks). *num:
 * the INT value or the ENUM index.
 */
static pulsarc_err_t read_opt(int id, const char *key, const char *v, int64_t *num, char *e,
                              size_t el) {
    const pc_prop_t *p = &pc_table_opts[id];
    if ((p->type == PC_VALUE_INT && isspace((unsigned char)*v)) || pc_prop_check(p, v, num, NULL, 0))
        return cannot_parse(key, v, e, el);
    return PULSARC_OK;
}

/* read_opt into an int flag. */
static pulsarc_err_t read_flag(int id, const char *key, const char *v, int *flag, char *e,
                               size_t el) {
    int64_t n = 0;
    pulsarc_err_t err = read_opt(id, key, v, &n, e, el);
    *flag = (int)n;
    return err;
}

/* ---- step 1-2: connector and required options -------------------------------------- */

static pulsarc_err_t check_connector(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    const char *c = opt(o, K_CONNECTOR);
    if (c && !strcmp(c, "pulsar"))
        return PULSARC_OK;
    if (c && !strcmp(c, "upsert-pulsar")) {
        t->upsert = 1;
        return PULSARC_OK;
    }
    if (!c)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "One or more required options are missing: '" K_CONNECTOR "'");
    return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                     "Unsupported connector '%s': expected 'pulsar' or 'upsert-pulsar'", c);
}

static pulsarc_err_t check_required(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    char missing[256] = "";
    const char *req[] = {K_TOPICS, K_SERVICE_URL, K_VALUE_FORMAT, t->upsert ? K_KEY_FORMAT : NULL};
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        if (!req[i] || opt(o, req[i]) || (!strcmp(req[i], K_VALUE_FORMAT) && opt(o, K_FORMAT)))
            continue;
        size_t n = strlen(missing);
        snprintf(missing + n, sizeof missing - n, "%s'%s'", n ? ", " : "", req[i]);
    }
    if (!*missing)
        return PULSARC_OK;
    return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "One or more required options are missing: %s",
                     missing);
}

/* ---- step 3: formats ---------------------------------------------------------------- */

static const char *format_of(const opts_t *o, int key_side) {
    return key_side ? opt(o, K_KEY_FORMAT)
                    : opt(o, K_VALUE_FORMAT) ? opt(o, K_VALUE_FORMAT) : opt(o, K_FORMAT);
}

/* The value of "<side prefix><fmt>.<sub>"; the value side takes both spellings. */
static const char *fmt_opt(const opts_t *o, int key_side, const char *fmt, const char *sub,
                           char *keybuf, size_t len) {
    snprintf(keybuf, len, "%s%s.%s", key_side ? "key." : "value.", fmt, sub);
    const char *v = opt(o, keybuf);
    if (!v && !key_side) {
        snprintf(keybuf, len, "%s.%s", fmt, sub);
        v = opt(o, keybuf);
    }
    return v;
}

static pulsarc_err_t json_options(tformat_t *f, const opts_t *o, int key_side, char *e,
                                  size_t el) {
    char k[128];
    const char *v = fmt_opt(o, key_side, "json", "fail-on-missing-field", k, sizeof k);
    pulsarc_err_t err = v ? read_flag(PC_TO_JSON_FAIL_ON_MISSING, k, v, &f->fail_on_missing, e, el)
                          : PULSARC_OK;
    if (err)
        return err;
    v = fmt_opt(o, key_side, "json", "ignore-parse-errors", k, sizeof k);
    if (v && (err = read_flag(PC_TO_JSON_IGNORE_ERRORS, k, v, &f->ignore_errors, e, el)))
        return err;
    if (f->fail_on_missing == 1 && f->ignore_errors == 1)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "fail-on-missing-field and ignore-parse-errors shouldn't both be true.");
    return PULSARC_OK;
}

static pulsarc_err_t raw_options(tformat_t *f, const opts_t *o, int key_side, char *e,
                                 size_t el) {
    char k[128];
    const char *v = fmt_opt(o, key_side, "raw", "charset", k, sizeof k);
    if (v && strcasecmp(v, "UTF-8") && strcasecmp(v, "UTF8"))
        return pc_seterr(e, el, PULSARC_ERR_UNSUPPORTED,
                         "Unsupported '%s' = '%s': pulsarc's raw format is UTF-8 only", k, v);
    v = fmt_opt(o, key_side, "raw", "endianness", k, sizeof k);
    return v ? read_flag(PC_TO_RAW_ENDIANNESS, k, v, &f->little_endian, e, el) : PULSARC_OK;
}

static pulsarc_err_t check_format(tformat_t *f, const opts_t *o, int key_side, char *e,
                                  size_t el) {
    const char *name = format_of(o, key_side);
    memset(f, 0, sizeof *f);
    if (!strcmp(name, "raw")) {
        f->kind = FMT_RAW;
        return raw_options(f, o, key_side, e, el);
    }
    if (!strcmp(name, "json")) {
        f->kind = FMT_JSON;
        return json_options(f, o, key_side, e, el);
    }
    return pc_seterr(e, el, PULSARC_ERR_UNSUPPORTED,
                     "Could not find any format factory for identifier '%s' in '%s' (available: "
                     "raw, json)",
                     name, key_side ? K_KEY_FORMAT : K_VALUE_FORMAT);
}

static pulsarc_err_t check_formats(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    const char *f1 = opt(o, K_FORMAT), *f2 = opt(o, K_VALUE_FORMAT);
    if (f1 && f2 && strcmp(f1, f2))
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Only one of '" K_FORMAT "' and '" K_VALUE_FORMAT
                         "' can be specified. Detected both of them");
    pulsarc_err_t err = check_format(&t->value_fmt, o, 0, e, el);
    if (!err && opt(o, K_KEY_FORMAT))
        err = check_format(&t->key_fmt, o, 1, e, el);
    return err;
}

/* ---- step 4: unknown options --------------------------------------------------------- */

/* An option of the value format (bare or "value."-prefixed) or of the key format ("key."). */
static int is_format_option(const opts_t *o, const char *key) {
    const char *vf = format_of(o, 0), *kf = format_of(o, 1);
    for (int i = 0; i < PC_TO__COUNT; i++) {
        const char *sub = pc_table_opts[i].name;
        size_t flen = strcspn(sub, ".");
        if (pc_table_opts[i].scope != PC_SCOPE_FORMAT)
            continue;
        int value_fmt = vf && strlen(vf) == flen && !strncmp(sub, vf, flen);
        int key_fmt = kf && strlen(kf) == flen && !strncmp(sub, kf, flen);
        if ((value_fmt && (!strcmp(key, sub) || (!strncmp(key, "value.", 6) && !strcmp(key + 6, sub)))) ||
            (key_fmt && !strncmp(key, "key.", 4) && !strcmp(key + 4, sub)))
            return 1;
    }
    return 0;
}

static int is_known(const opts_t *o, const char *key) {
    if (!strncmp(key, "pulsar.", 7))
        return 1; /* checked against the connector's property table when applied */
    int id = pc_prop_find(&pc_table_opt_table, key);
    if (id >= 0 && pc_table_opts[id].scope != PC_SCOPE_FORMAT)
        return 1;
    return is_format_option(o, key);
}

static pulsarc_err_t check_unknown(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    char list[512] = "";
    for (size_t i = 0; i < o->n; i++) {
        if (is_known(o, o->kv[2 * i]))
            continue;
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s'%s'", n ? ", " : "", o->kv[2 * i]);
    }
    if (!*list)
        return PULSARC_OK;
    return pc_seterr(e, el, PULSARC_ERR_UNKNOWN_CONFIG, "Unsupported options found for '%s': %s",
                     t->upsert ? "upsert-pulsar" : "pulsar", list);
}

/* ---- step 5: the client configuration ---------------------------------------------- */

static pulsarc_err_t set_cfg(pulsarc_table_t *t, const char *key, const char *value,
                             const char *option, char *e, size_t el) {
    char why[384];
    pulsarc_err_t err = pulsarc_connector_config_set(t->cfg, key, value, why, sizeof why);
    if (!err)
        return PULSARC_OK;
    if (!option)
        return pc_seterr(e, el, err, "%s", why);
    return pc_seterr(e, el, err, "Invalid '%s': %s", option, why);
}

/* Option id, when given, sets the connector key its row targets. */
static pulsarc_err_t set_target(pulsarc_table_t *t, const opts_t *o, int id, char *e, size_t el) {
    const pc_prop_t *p = &pc_table_opts[id];
    const char *v = opt(o, p->name);
    return v ? set_cfg(t, p->target, v, p->name, e, el) : PULSARC_OK;
}

static pulsarc_err_t apply_client_options(pulsarc_table_t *t, const opts_t *o, char *e,
                                          size_t el) {
    pulsarc_err_t err = PULSARC_OK;
    for (int id = 0; !err && id < PC_TO__COUNT; id++)
        err = pc_table_opts[id].target ? set_target(t, o, id, e, el) : PULSARC_OK;
    for (size_t i = 0; !err && i < o->n; i++)
        if (!strncmp(o->kv[2 * i], "pulsar.", 7))
            err = set_cfg(t, o->kv[2 * i], o->kv[2 * i + 1], NULL, e, el);
    return err;
}

/* ---- step 6: topics and subscription ----------------------------------------------- */

/* Splits "a;b;;c" into non-empty items; calls fn for each. */
typedef pulsarc_err_t (*item_fn)(pulsarc_table_t *t, const char *item, char *e, size_t el);

static pulsarc_err_t each_item(pulsarc_table_t *t, const char *list, item_fn fn, char *e,
                               size_t el) {
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = PULSARC_OK;
    for (char *item = strtok_r(copy, ";", &save); item && !err; item = strtok_r(NULL, ";", &save))
        err = fn(t, item, e, el);
    free(copy);
    return err;
}

static pulsarc_err_t add_topic(pulsarc_table_t *t, const char *item, char *e, size_t el) {
    char full[1024], why[256];
    if (pulsarc_connector_config_resolve_topic(t->cfg, item, full, sizeof full, why, sizeof why))
        return pc_seterr(e, el, PULSARC_ERR_BAD_TOPIC,
                         "The topics name %s is not a valid topic name.", item);
    char **grown = realloc(t->topics, (t->ntopics + 1) * sizeof *grown);
    if (!grown)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    t->topics = grown;
    if (!(t->topics[t->ntopics] = strdup(full)))
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    t->ntopics++;
    return PULSARC_OK;
}

static pulsarc_err_t check_topics(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    pulsarc_err_t err = each_item(t, opt(o, K_TOPICS), add_topic, e, el);
    if (!err && t->ntopics == 0)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "The topics list should not be empty.");
    return err;
}

/* A name the same topics always get: restarts find their subscription again. */
static pulsarc_err_t derive_subscription(pulsarc_table_t *t, char *e, size_t el) {
    uint32_t h = 0;
    for (size_t i = 0; i < t->ntopics; i++)
        h = pc_murmur3_32(t->topics[i], strlen(t->topics[i]), h);
    char name[64];
    snprintf(name, sizeof name, "%s-%08x", t->upsert ? "pulsarc-upsert-sql" : "pulsarc-sql", h);
    return set_cfg(t, pc_table_opts[PC_TO_SUB_NAME].target, name, K_SUB_NAME, e, el);
}

static pulsarc_err_t check_subscription(pulsarc_table_t *t, const opts_t *o, char *e,
                                        size_t el) {
    static const char *const types[] = {"Exclusive", "Shared", "Failover", "Key_Shared"};
    const char *v = opt(o, K_SUB_TYPE);
    int idx = 0; /* the row's choices, in this order */
    if (v && read_flag(PC_TO_SUB_TYPE, K_SUB_TYPE, v, &idx, e, el))
        return PULSARC_ERR_BAD_CONFIG;
    if (idx == 2)
        return pc_seterr(e, el, PULSARC_ERR_UNSUPPORTED,
                         "Failover SubscriptionType is not supported. ");
    t->sub_type = types[idx];
    pulsarc_err_t err = opt(o, K_SUB_NAME) ? PULSARC_OK : derive_subscription(t, e, el);
    if (!err && !(t->sub_name = strdup(pc_cc_str(t->cfg, PC_CC_CONSUMER_SUBSCRIPTION_NAME))))
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    return err;
}

/* ---- step 7: cursors ------------------------------------------------------------------ */

static pulsarc_err_t check_start(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    const char *id = opt(o, K_START_ID), *ts = opt(o, K_START_TIME);
    pulsarc_table_cursor_t c = {PULSARC_TABLE_CURSOR_EARLIEST, pulsarc_msgid_earliest(), 0, 1};
    if (id && ts)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Only one of '" K_START_ID "' and '" K_START_TIME
                         "' can be specified. Detected both of them");
    pulsarc_err_t err = PULSARC_OK;
    if (id && !strcasecmp(id, "latest")) {
        c.kind = PULSARC_TABLE_CURSOR_LATEST;
        c.id = pulsarc_msgid_latest();
    } else if (id && strcasecmp(id, "earliest")) {
        c.kind = PULSARC_TABLE_CURSOR_MESSAGE_ID;
        err = pc_table_parse_msgid(id, &c.id, e, el);
    } else if (ts) {
        c.kind = PULSARC_TABLE_CURSOR_PUBLISH_TIME;
        err = read_opt(PC_TO_START_TIME, K_START_TIME, ts, &c.time_ms, e, el);
    }
    t->start = c;
    return err;
}

static pulsarc_err_t check_stop(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    const char *at = opt(o, K_STOP_AT_ID), *after = opt(o, K_STOP_AFTER_ID),
               *ts = opt(o, K_STOP_AT_TIME);
    pulsarc_table_cursor_t c = {PULSARC_TABLE_CURSOR_NEVER, pulsarc_msgid_latest(), 0, 0};
    if (!!at + !!after + !!ts > 1)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Only one of '" K_STOP_AT_ID "', '" K_STOP_AFTER_ID "' and '" K_STOP_AT_TIME
                         "' can be specified. Detected more than 1 of them");
    pulsarc_err_t err = PULSARC_OK;
    if (at && !strcasecmp(at, "latest")) {
        c.kind = PULSARC_TABLE_CURSOR_LATEST;
        c.inclusive = 1; /* up to and including the last message at split open */
    } else if (at && strcasecmp(at, "never")) {
        c.kind = PULSARC_TABLE_CURSOR_MESSAGE_ID;
        err = pc_table_parse_msgid(at, &c.id, e, el);
    } else if (after) {
        c.kind = PULSARC_TABLE_CURSOR_MESSAGE_ID;
        c.inclusive = 1;
        err = pc_table_parse_msgid(after, &c.id, e, el);
    } else if (ts) {
        c.kind = PULSARC_TABLE_CURSOR_PUBLISH_TIME;
        err = read_opt(PC_TO_STOP_AT_TIME, K_STOP_AT_TIME, ts, &c.time_ms, e, el);
    }
    t->stop = c;
    return err;
}

/* ---- step 8: sink options ------------------------------------------------------------- */

static pulsarc_err_t check_router(pulsarc_table_t *t, const char *router, char *e, size_t el) {
    if (pulsarc_connector_config_router(t->cfg, router, NULL, NULL))
        return pc_seterr(e, el, PULSARC_ERR_NOT_FOUND,
                         "Could not find and instantiate TopicRouter '%s': register it with "
                         "pulsarc_connector_config_add_router() on the base configuration",
                         router);
    t->routing = PULSARC_TABLE_ROUTING_CUSTOM;
    return (t->router = strdup(router)) ? PULSARC_OK
                                        : pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
}

static pulsarc_err_t check_routing(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    const char *mode = opt(o, K_ROUTING), *router = opt(o, K_ROUTER);
    int64_t idx = -1; /* none given */
    if (mode && read_opt(PC_TO_ROUTING, K_ROUTING, mode, &idx, e, el))
        return PULSARC_ERR_BAD_CONFIG;
    if (idx == 2)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Only round-robin and message-key-hash can be used. For custom, please "
                         "use " K_ROUTER " instead.");
    if (mode && router)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Only one of '" K_ROUTING "' and '" K_ROUTER
                         "' can be specified. Detected both of them");
    if (t->upsert && (router || idx == 0))
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "'upsert-pulsar' routes by message key: '" K_ROUTING
                         "' must be message-key-hash and '" K_ROUTER "' cannot be set");
    t->routing = t->upsert || idx == 1 ? PULSARC_TABLE_ROUTING_MESSAGE_KEY_HASH
                                       : PULSARC_TABLE_ROUTING_ROUND_ROBIN;
    return router ? check_router(t, router, e, el) : PULSARC_OK;
}

static pulsarc_err_t check_sink_values(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    const char *v = opt(o, K_DELAY);
    if (v && (t->delay_ms = pc_value_duration_ms(v)) < 0)
        return cannot_parse(K_DELAY, v, e, el);
    int64_t n = 0;
    if ((v = opt(o, K_PARALLELISM)) && read_opt(PC_TO_PARALLELISM, K_PARALLELISM, v, &n, e, el))
        return PULSARC_ERR_BAD_CONFIG;
    t->parallelism = (int)n;
    t->explicit_ = 1;
    v = opt(o, K_EXPLICIT);
    return v ? read_flag(PC_TO_EXPLICIT, K_EXPLICIT, v, &t->explicit_, e, el) : PULSARC_OK;
}

/* ---- step 9: key and value fields ---------------------------------------------------- */

static pulsarc_err_t push_idx(int **arr, size_t *n, int idx, char *e, size_t el) {
    int *grown = realloc(*arr, (*n + 1) * sizeof *grown);
    if (!grown)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    *arr = grown;
    grown[(*n)++] = idx;
    return PULSARC_OK;
}

static void physical_names(const pulsarc_table_schema_t *s, char *buf, size_t len) {
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->ncols && n < len; i++)
        if (!s->cols[i].is_meta)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", s->cols[i].name);
}

static pulsarc_err_t add_key_field(pulsarc_table_t *t, const char *name, char *e, size_t el) {
    int c = pc_table_schema_find(t->schema, name);
    if (c < 0 || t->schema->cols[c].is_meta) {
        char names[256];
        physical_names(t->schema, names, sizeof names);
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Could not find the field '%s' in the table schema for usage in the key "
                         "format. A key field must be a regular, physical column. The following "
                         "columns can be selected in the '" K_KEY_FIELDS "' option: [%s]",
                         name, names);
    }
    for (size_t i = 0; i < t->nkey; i++)
        if (t->key_idx[i] == c)
            return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                             "The field '%s' is listed twice in '" K_KEY_FIELDS "'", name);
    return push_idx(&t->key_idx, &t->nkey, c, e, el);
}

static pulsarc_err_t upsert_key(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    if (t->schema->npk == 0)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "'upsert-pulsar' require to define a PRIMARY KEY constraint; its "
                         "columns are written to and read from the message key.");
    if (opt(o, K_KEY_FIELDS))
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "'upsert-pulsar' takes the key fields from the PRIMARY KEY; '" K_KEY_FIELDS
                         "' cannot be set.");
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; !err && i < t->schema->npk; i++)
        err = add_key_field(t, t->schema->pk[i], e, el);
    return err;
}

static pulsarc_err_t plain_key(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    const char *fields = opt(o, K_KEY_FIELDS), *fmt = opt(o, K_KEY_FORMAT);
    if (t->schema->npk)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "The Pulsar table '%s' with '%s' format doesn't support defining PRIMARY "
                         "KEY constraint on the table, because it can't guarantee the semantic of "
                         "primary key.",
                         t->schema->name, format_of(o, 0));
    pulsarc_err_t err = fields ? each_item(t, fields, add_key_field, e, el) : PULSARC_OK;
    if (!err && t->nkey && !fmt)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "The option '" K_KEY_FIELDS "' can only be declared if a key format is "
                         "defined using '" K_KEY_FORMAT "'.");
    if (!err && !t->nkey && fmt)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "A key format '" K_KEY_FORMAT "' requires the declaration of one or more "
                         "of key fields using '" K_KEY_FIELDS "'.");
    return err;
}

static int is_key(const pulsarc_table_t *t, int c) {
    for (size_t i = 0; i < t->nkey; i++)
        if (t->key_idx[i] == c)
            return 1;
    return 0;
}

static pulsarc_err_t check_fields(pulsarc_table_t *t, const opts_t *o, char *e, size_t el) {
    pulsarc_err_t err = t->upsert ? upsert_key(t, o, e, el) : plain_key(t, o, e, el);
    const char *inc = opt(o, K_FIELDS_INCLUDE);
    int all = 0; /* EXCEPT_KEY|ALL */
    if (!err && inc && (err = read_flag(PC_TO_FIELDS_INCLUDE, K_FIELDS_INCLUDE, inc, &all, e, el)))
        return err;
    t->has_key = t->nkey > 0;
    for (size_t i = 0; !err && i < t->schema->ncols; i++)
        if (!t->schema->cols[i].is_meta && (all || !is_key(t, (int)i)))
            err = push_idx(&t->value_idx, &t->nvalue, (int)i, e, el);
    return err;
}

/* The raw format carries exactly one column. */
static pulsarc_err_t check_raw_arity(const pulsarc_table_t *t, char *e, size_t el) {
    if (t->value_fmt.kind == FMT_RAW && t->nvalue != 1)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "The 'raw' format supports a single physical value column; the value "
                         "of this table has %zu (all physical columns except the key fields)",
                         t->nvalue);
    if (t->has_key && t->key_fmt.kind == FMT_RAW && t->nkey != 1)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "The 'raw' key format supports a single key field; '" K_KEY_FIELDS
                         "' lists %zu",
                         t->nkey);
    return PULSARC_OK;
}

/* ---- step 10: metadata columns --------------------------------------------------------- */

static const struct meta_key {
    const char *key;
    pulsarc_table_type_t type;
    int writable;
} meta_keys[] = {
    {"topic", PULSARC_TABLE_STRING, 0},
    {"message_size", PULSARC_TABLE_INT, 0},
    {"producer_name", PULSARC_TABLE_STRING, 0},
    {"message_id", PULSARC_TABLE_BYTES, 0},
    {"sequenceId", PULSARC_TABLE_BIGINT, 0},
    {"publish_time", PULSARC_TABLE_TIMESTAMP_LTZ, 0},
    {"event_time", PULSARC_TABLE_TIMESTAMP_LTZ, 1},
    {"properties", PULSARC_TABLE_MAP, 1},
};

static pulsarc_err_t check_meta_column(const pulsarc_table_t *t, const tcol_t *c, int usage,
                                       char *e, size_t el) {
    const struct meta_key *m = NULL;
    for (size_t i = 0; i < sizeof meta_keys / sizeof meta_keys[0]; i++)
        if (!strcmp(meta_keys[i].key, c->meta_key))
            m = &meta_keys[i];
    if (!m)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Invalid metadata key '%s' in column '%s' of table '%s'. Readable "
                         "metadata keys: topic, message_size, producer_name, message_id, "
                         "sequenceId, publish_time, event_time, properties",
                         c->meta_key, c->name, t->schema->name);
    if (m->type != c->type)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Metadata column '%s' (key '%s') must be of type %s, not %s", c->name,
                         m->key, pc_type_name(m->type), pc_type_name(c->type));
    if ((usage & PULSARC_TABLE_SINK) && !m->writable && !c->is_virtual)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Metadata column '%s' (key '%s') is read-only: declare it VIRTUAL to "
                         "write to table '%s'. Writable metadata keys: properties, event_time",
                         c->name, m->key, t->schema->name);
    return PULSARC_OK;
}

static pulsarc_err_t check_metadata(const pulsarc_table_t *t, int usage, char *e, size_t el) {
    for (size_t i = 0; i < t->schema->ncols; i++) {
        const tcol_t *c = &t->schema->cols[i];
        pulsarc_err_t err = c->is_meta ? check_meta_column(t, c, usage, e, el) : PULSARC_OK;
        if (err)
            return err;
    }
    return PULSARC_OK;
}

/* ---- assembly ------------------------------------------------------------------------------ */

static pulsarc_err_t validate(pulsarc_table_t *t, const opts_t *o, int usage, char *e,
                              size_t el) {
    pulsarc_err_t err = check_connector(t, o, e, el);
    if (!err)
        err = check_required(t, o, e, el);
    if (!err)
        err = check_formats(t, o, e, el);
    if (!err)
        err = check_unknown(t, o, e, el);
    if (!err)
        err = apply_client_options(t, o, e, el);
    if (!err)
        err = check_topics(t, o, e, el);
    if (!err)
        err = check_subscription(t, o, e, el);
    if (!err)
        err = check_start(t, o, e, el);
    if (!err)
        err = check_stop(t, o, e, el);
    if (!err)
        err = check_routing(t, o, e, el);
    if (!err)
        err = check_sink_values(t, o, e, el);
    if (!err)
        err = check_fields(t, o, e, el);
    if (!err)
        err = check_raw_arity(t, e, el);
    return err ? err : check_metadata(t, usage, e, el);
}

void pulsarc_table_destroy(pulsarc_table_t *t) {
    if (!t)
        return;
    pulsarc_table_schema_destroy(t->schema);
    pulsarc_connector_config_destroy(t->cfg);
    for (size_t i = 0; i < t->ntopics; i++)
        free(t->topics[i]);
    free(t->topics);
    free(t->sub_name);
    free(t->router);
    free(t->key_idx);
    free(t->value_idx);
    free(t);
}

static pulsarc_err_t check_kv(const char *const *kv, size_t n, char *e, size_t el) {
    for (size_t i = 0; i < n; i++) {
        if (!kv[2 * i] || !kv[2 * i + 1])
            return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "option %zu has no key or value", i);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(kv[2 * i], kv[2 * j]))
                return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "Duplicate option '%s'",
                                 kv[2 * i]);
    }
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_table_new_kv(const pulsarc_table_schema_t *schema, const char *const *kv,
                                   size_t n, const pulsarc_connector_config_t *base, int usage,
                                   pulsarc_table_t **tablep, char *e, size_t el) {
    if (!tablep || !schema || (!kv && n))
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "schema, options and tablep are required");
    *tablep = NULL;
    pulsarc_err_t err = check_kv(kv, n, e, el);
    if (err)
        return err;
    pulsarc_table_t *t = calloc(1, sizeof *t);
    if (t && (!(t->schema = pc_table_schema_dup(schema)) ||
              !(t->cfg = base ? pulsarc_connector_config_dup(base) : pulsarc_connector_config_new())))
        err = PULSARC_ERR_NOMEM;
    if (!t || err) {
        pulsarc_table_destroy(t);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    opts_t o = {kv, n};
    if ((err = validate(t, &o, usage, e, el)) != PULSARC_OK) {
        pulsarc_table_destroy(t);
        return err;
    }
    *tablep = t;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_table_new(const pulsarc_table_schema_t *schema, const char *with_text,
                                const pulsarc_connector_config_t *base, int usage,
                                pulsarc_table_t **tablep, char *e, size_t el) {
    char **kv;
    size_t n;
    if (tablep)
        *tablep = NULL;
    pulsarc_err_t err = pc_with_parse(with_text, &kv, &n, e, el);
    if (err)
        return err;
    err = pulsarc_table_new_kv(schema, (const char *const *)kv, n, base, usage, tablep, e, el);
    pc_with_free(kv, n);
    return err;
}

/* ---- getters --------------------------------------------------------------------------------- */

int pulsarc_table_is_upsert(const pulsarc_table_t *t) {
    return t && t->upsert;
}

const pulsarc_connector_config_t *pulsarc_table_config(const pulsarc_table_t *t) {
    return t ? t->cfg : NULL;
}

size_t pulsarc_table_topic_count(const pulsarc_table_t *t) {
    return t ? t->ntopics : 0;
}

const char *pulsarc_table_topic(const pulsarc_table_t *t, size_t i) {
    return t && i < t->ntopics ? t->topics[i] : NULL;
}

const char *pulsarc_table_subscription_name(const pulsarc_table_t *t) {
    return t ? t->sub_name : NULL;
}

const char *pulsarc_table_subscription_type(const pulsarc_table_t *t) {
    return t ? t->sub_type : NULL;
}

void pulsarc_table_start_cursor(const pulsarc_table_t *t, pulsarc_table_cursor_t *out) {
    if (t && out)
        *out = t->start;
}

void pulsarc_table_stop_cursor(const pulsarc_table_t *t, pulsarc_table_cursor_t *out) {
    if (t && out)
        *out = t->stop;
}

pulsarc_table_routing_t pulsarc_table_routing_mode(const pulsarc_table_t *t) {
    return t ? t->routing : PULSARC_TABLE_ROUTING_ROUND_ROBIN;
}

const char *pulsarc_table_custom_router(const pulsarc_table_t *t) {
    return t ? t->router : NULL;
}

int64_t pulsarc_table_message_delay_ms(const pulsarc_table_t *t) {
    return t ? t->delay_ms : 0;
}

int pulsarc_table_sink_parallelism(const pulsarc_table_t *t) {
    return t ? t->parallelism : 0;
}

static const char *format_name(const tformat_t *f) {
    return f->kind == FMT_RAW ? "raw" : f->kind == FMT_JSON ? "json" : NULL;
}

const char *pulsarc_table_value_format(const pulsarc_table_t *t) {
    return t ? format_name(&t->value_fmt) : NULL;
}

const char *pulsarc_table_key_format(const pulsarc_table_t *t) {
    return t && t->has_key ? format_name(&t->key_fmt) : NULL;
}

size_t pulsarc_table_key_field_count(const pulsarc_table_t *t) {
    return t ? t->nkey : 0;
}

const char *pulsarc_table_key_field(const pulsarc_table_t *t, size_t i) {
    return t && i < t->nkey ? t->schema->cols[t->key_idx[i]].name : NULL;
}

size_t pulsarc_table_value_field_count(const pulsarc_table_t *t) {
    return t ? t->nvalue : 0;
}

const char *pulsarc_table_value_field(const pulsarc_table_t *t, size_t i) {
    return t && i < t->nvalue ? t->schema->cols[t->value_idx[i]].name : NULL;
}
