/*
 * Unit tests of the SQL table options: the WITH (...) text, every
 * validation rule and error text, the values a table yields (topics,
 * cursors, routing, formats, key and value fields, the connector
 * configuration), and rows to messages and back through the raw and json
 * formats with metadata columns. No broker.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "client/message.h"
#include "conf/value.h"
#include "connector/connector_props.h"
#include "connector/table_int.h"
#include "connector/table_props.h"
#include "pulsarc.h"
#include "pulsarc/connector.h"
#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define ck_assert_contains(hay, needle) \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' does not contain '%s'", (hay), (needle))

static char err[1024];

/* ======================================================================== */
/* schemas */

enum { S_PLAIN, S_ONE, S_META_BAD_KEY, S_META_BAD_TYPE, S_META_READONLY, S_PK, S_META_ALL };

static void add(pulsarc_table_schema_t *s, const char *name, pulsarc_table_type_t type) {
    ck_assert_msg(!pulsarc_table_schema_add_column(s, name, type, err, sizeof err), "%s", err);
}

static void meta(pulsarc_table_schema_t *s, const char *name, pulsarc_table_type_t type,
                 const char *key, int is_virtual) {
    ck_assert_msg(!pulsarc_table_schema_add_metadata(s, name, type, key, is_virtual, err,
                                                     sizeof err), "%s", err);
}

static pulsarc_table_schema_t *schema(int variant) {
    pulsarc_table_schema_t *s = pulsarc_table_schema_new("t");
    if (variant == S_ONE) {
        add(s, "v", PULSARC_TABLE_STRING);
        return s;
    }
    add(s, "id", PULSARC_TABLE_BIGINT);
    add(s, "name", PULSARC_TABLE_STRING);
    add(s, "score", PULSARC_TABLE_DOUBLE);
    if (variant == S_META_BAD_KEY)
        meta(s, "ts", PULSARC_TABLE_TIMESTAMP_LTZ, "timestamp", 1);
    if (variant == S_META_BAD_TYPE)
        meta(s, "topic", PULSARC_TABLE_INT, NULL, 1);
    if (variant == S_META_READONLY)
        meta(s, "tp", PULSARC_TABLE_STRING, "topic", 0);
    if (variant == S_PK) {
        const char *pk[] = {"id"};
        ck_assert_int_eq(pulsarc_table_schema_set_primary_key(s, pk, 1, err, sizeof err), 0);
    }
    if (variant == S_META_ALL) {
        meta(s, "topic", PULSARC_TABLE_STRING, NULL, 1);
        meta(s, "size", PULSARC_TABLE_INT, "message_size", 1);
        meta(s, "producer", PULSARC_TABLE_STRING, "producer_name", 1);
        meta(s, "mid", PULSARC_TABLE_BYTES, "message_id", 1);
        meta(s, "seq", PULSARC_TABLE_BIGINT, "sequenceId", 1);
        meta(s, "pt", PULSARC_TABLE_TIMESTAMP_LTZ, "publish_time", 1);
        meta(s, "et", PULSARC_TABLE_TIMESTAMP_LTZ, "event_time", 0);
        meta(s, "props", PULSARC_TABLE_MAP, "properties", 0);
    }
    return s;
}

/* ======================================================================== */
/* options as base + overrides */

#define BASE_N 4
static const char *const base_kv[BASE_N][2] = {
    {"connector", "pulsar"},
    {"topics", "t"},
    {"service-url", "pulsar://h:6650"},
    {"format", "json"},
};

typedef struct optset {
    const char *kv[64];
    size_t n;
} optset_t;

/* base options, then each (key, value) of extra: value NULL removes the key. */
static optset_t options(const char *const *extra) {
    optset_t o = {{0}, 0};
    for (size_t i = 0; i < BASE_N; i++) {
        o.kv[2 * o.n] = base_kv[i][0];
        o.kv[2 * o.n++ + 1] = base_kv[i][1];
    }
    for (size_t i = 0; extra && extra[i]; i += 2) {
        size_t j = 0;
        while (j < o.n && strcmp(o.kv[2 * j], extra[i]))
            j++;
        if (!extra[i + 1]) { /* remove */
            for (; j + 1 < o.n; j++) {
                o.kv[2 * j] = o.kv[2 * j + 2];
                o.kv[2 * j + 1] = o.kv[2 * j + 3];
            }
            o.n -= j < o.n;
            continue;
        }
        o.kv[2 * j] = extra[i];
        o.kv[2 * j + 1] = extra[i + 1];
        if (j == o.n)
            o.n++;
    }
    return o;
}

static pulsarc_err_t make(int variant, const char *const *extra,
                          const pulsarc_connector_config_t *base, int usage,
                          pulsarc_table_t **t) {
    pulsarc_table_schema_t *s = schema(variant);
    optset_t o = options(extra);
    err[0] = '\0';
    pulsarc_err_t rc = pulsarc_table_new_kv(s, o.kv, o.n, base, usage, t, err, sizeof err);
    pulsarc_table_schema_destroy(s);
    return rc;
}

static pulsarc_table_t *make_ok(int variant, const char *const *extra) {
    pulsarc_table_t *t = NULL;
    pulsarc_err_t rc = make(variant, extra, NULL, PULSARC_TABLE_SOURCE | PULSARC_TABLE_SINK, &t);
    ck_assert_msg(rc == PULSARC_OK, "%s", err);
    return t;
}

/* ======================================================================== */
/* every error of the options */

#define X(...) ((const char *const[]){__VA_ARGS__, NULL})

static const struct bad_case {
    const char *what;
    int variant, usage;
    const char *const *extra;
    const char *msg;
} bad_cases[] = {
    {"no connector", S_PLAIN, 3, X("connector", NULL),
     "One or more required options are missing: 'connector'"},
    {"other connector", S_PLAIN, 3, X("connector", "kafka"),
     "Unsupported connector 'kafka': expected 'pulsar' or 'upsert-pulsar'"},
    {"no topics/url", S_PLAIN, 3, X("topics", NULL, "service-url", NULL),
     "One or more required options are missing: 'topics', 'service-url'"},
    {"no format", S_PLAIN, 3, X("format", NULL),
     "One or more required options are missing: 'value.format'"},
    {"topics empty", S_PLAIN, 3, X("topics", ""), "The topics list should not be empty."},
    {"topics ;", S_PLAIN, 3, X("topics", ";"), "The topics list should not be empty."},
    {"topic invalid", S_PLAIN, 3, X("topics", "a;x/y"),
     "The topics name x/y is not a valid topic name."},
    {"service-url scheme", S_PLAIN, 3, X("service-url", "ftp://h:21"),
     "Invalid 'service-url': pulsar.client.serviceUrl: unknown scheme 'ftp' in service URL "
     "'ftp://h:21'"},
    {"service-url syntax", S_PLAIN, 3, X("service-url", "pulsar://h:99999"), "Invalid 'service-url'"},
    {"admin-url", S_PLAIN, 3, X("admin-url", "pulsar://h:6650"),
     "Invalid 'admin-url': pulsar.admin.adminUrl"},
    {"Failover", S_PLAIN, 3, X("source.subscription-type", "Failover"),
     "Failover SubscriptionType is not supported. "},
    {"failover", S_PLAIN, 3, X("source.subscription-type", "failover"),
     "Failover SubscriptionType is not supported."},
    {"sub type", S_PLAIN, 3, X("source.subscription-type", "Random"),
     "Could not parse value 'Random' for key 'source.subscription-type'."},
    {"id 0", S_PLAIN, 3, X("source.start.message-id", "0"),
     "MessageId format must be ledgerId:entryId:partitionId."},
    {"id 0:", S_PLAIN, 3, X("source.start.message-id", "0:"),
     "MessageId format must be ledgerId:entryId:partitionId."},
    {"id 0:0", S_PLAIN, 3, X("source.start.message-id", "0:0"),
     "MessageId format must be ledgerId:entryId:partitionId."},
    {"id 0:0:", S_PLAIN, 3, X("source.start.message-id", "0:0:"),
     "MessageId format must be ledgerId:entryId:partitionId. Each id should be able to parsed "
     "to long type."},
    {"id 0:0:0:0", S_PLAIN, 3, X("source.start.message-id", "0:0:0:0"),
     "Each id should be able to parsed to long type."},
    {"id a:b:c", S_PLAIN, 3, X("source.stop.at-message-id", "a:b:c"),
     "Each id should be able to parsed to long type."},
    {"id spaces", S_PLAIN, 3, X("source.stop.after-message-id", " 1:2:3"),
     "Each id should be able to parsed to long type."},
    {"after latest", S_PLAIN, 3, X("source.stop.after-message-id", "latest"),
     "MessageId format must be ledgerId:entryId:partitionId."},
    {"two starts", S_PLAIN, 3,
     X("source.start.message-id", "earliest", "source.start.publish-time", "1"),
     "Only one of 'source.start.message-id' and 'source.start.publish-time' can be specified. "
     "Detected both of them"},
    {"publish time", S_PLAIN, 3, X("source.start.publish-time", "yesterday"),
     "Could not parse value 'yesterday' for key 'source.start.publish-time'."},
    {"two stops", S_PLAIN, 3,
     X("source.stop.at-message-id", "never", "source.stop.at-publish-time", "5"),
     "Only one of 'source.stop.at-message-id', 'source.stop.after-message-id' and "
     "'source.stop.at-publish-time' can be specified. Detected more than 1 of them"},
    {"three stops", S_PLAIN, 3,
     X("source.stop.at-message-id", "1:2:3", "source.stop.after-message-id", "1:2:3",
       "source.stop.at-publish-time", "5"),
     "Detected more than 1 of them"},
    {"stop time", S_PLAIN, 3, X("source.stop.at-publish-time", "5s"),
     "Could not parse value '5s' for key 'source.stop.at-publish-time'."},
    {"routing custom", S_PLAIN, 3, X("sink.topic-routing-mode", "custom"),
     "Only round-robin and message-key-hash can be used. For custom, please use "
     "sink.custom-topic-router"},
    {"routing bad", S_PLAIN, 3, X("sink.topic-routing-mode", "random"),
     "Could not parse value 'random' for key 'sink.topic-routing-mode'."},
    {"router and mode", S_PLAIN, 3,
     X("sink.topic-routing-mode", "round-robin", "sink.custom-topic-router", "mine"),
     "Only one of 'sink.topic-routing-mode' and 'sink.custom-topic-router' can be specified. "
     "Detected both of them"},
    {"router missing", S_PLAIN, 3, X("sink.custom-topic-router", "mine"),
     "Could not find and instantiate TopicRouter 'mine'"},
    {"delay", S_PLAIN, 3, X("sink.message-delay-interval", "soon"),
     "Could not parse value 'soon' for key 'sink.message-delay-interval'."},
    {"delay negative", S_PLAIN, 3, X("sink.message-delay-interval", "-1 s"),
     "for key 'sink.message-delay-interval'"},
    {"parallelism", S_PLAIN, 3, X("sink.parallelism", "0"),
     "Could not parse value '0' for key 'sink.parallelism'."},
    {"explicit", S_PLAIN, 3, X("explicit", "maybe"),
     "Could not parse value 'maybe' for key 'explicit'."},
    {"fields no format", S_PLAIN, 3, X("key.fields", "id"),
     "The option 'key.fields' can only be declared if a key format is defined using "
     "'key.format'."},
    {"format no fields", S_PLAIN, 3, X("key.format", "json"),
     "A key format 'key.format' requires the declaration of one or more of key fields using "
     "'key.fields'."},
    {"format empty fields", S_PLAIN, 3, X("key.format", "json", "key.fields", ";"),
     "A key format 'key.format' requires the declaration"},
    {"unknown key field", S_PLAIN, 3, X("key.format", "json", "key.fields", "id;nope"),
     "Could not find the field 'nope' in the table schema for usage in the key format. A key "
     "field must be a regular, physical column. The following columns can be selected in the "
     "'key.fields' option: [id, name, score]"},
    {"metadata key field", S_META_ALL, 1, X("key.format", "json", "key.fields", "topic"),
     "Could not find the field 'topic'"},
    {"key field twice", S_PLAIN, 3, X("key.format", "json", "key.fields", "id;id"),
     "The field 'id' is listed twice in 'key.fields'"},
    {"value format", S_PLAIN, 3, X("format", NULL, "value.format", "avro"),
     "Could not find any format factory for identifier 'avro' in 'value.format'"},
    {"key format", S_PLAIN, 3, X("key.format", "csv", "key.fields", "id"),
     "Could not find any format factory for identifier 'csv' in 'key.format'"},
    {"two formats", S_PLAIN, 3, X("value.format", "raw"),
     "Only one of 'format' and 'value.format' can be specified. Detected both of them"},
    {"unknown option", S_PLAIN, 3, X("foo", "1", "scan.startup.mode", "x"),
     "Unsupported options found for 'pulsar': 'foo', 'scan.startup.mode'"},
    {"unknown json option", S_PLAIN, 3, X("json.foo", "1"),
     "Unsupported options found for 'pulsar': 'json.foo'"},
    {"other format's option", S_PLAIN, 3, X("raw.charset", "UTF-8"),
     "Unsupported options found for 'pulsar': 'raw.charset'"},
    {"key option without key format", S_PLAIN, 3, X("key.json.ignore-parse-errors", "true"),
     "Unsupported options found for 'pulsar': 'key.json.ignore-parse-errors'"},
    {"pulsar key", S_PLAIN, 3, X("pulsar.client.bogus", "1"),
     "unknown configuration key 'pulsar.client.bogus'"},
    {"pulsar value", S_PLAIN, 3, X("pulsar.producer.batchingMaxMessages", "many"),
     "pulsar.producer.batchingMaxMessages: 'many' is not an integer"},
    {"json flags", S_PLAIN, 3,
     X("json.fail-on-missing-field", "true", "json.ignore-parse-errors", "true"),
     "fail-on-missing-field and ignore-parse-errors shouldn't both be true."},
    {"json flag value", S_PLAIN, 3, X("json.ignore-parse-errors", "yes"),
     "Could not parse value 'yes' for key 'json.ignore-parse-errors'."},
    {"raw endianness", S_ONE, 3, X("format", "raw", "raw.endianness", "middle"),
     "Could not parse value 'middle' for key 'raw.endianness'."},
    {"raw charset", S_ONE, 3, X("format", "raw", "raw.charset", "latin1"),
     "pulsarc's raw format is UTF-8 only"},
    {"raw arity", S_PLAIN, 3, X("format", "raw"),
     "The 'raw' format supports a single physical value column; the value of this table has 3"},
    {"raw key arity", S_PLAIN, 3, X("key.format", "raw", "key.fields", "id;name"),
     "The 'raw' key format supports a single key field; 'key.fields' lists 2"},
    {"fields include", S_PLAIN, 3, X("value.fields-include", "SOME"),
     "Could not parse value 'SOME' for key 'value.fields-include'."},
    {"metadata key", S_META_BAD_KEY, 1, NULL,
     "Invalid metadata key 'timestamp' in column 'ts' of table 't'. Readable metadata keys: "
     "topic, message_size, producer_name, message_id, sequenceId, publish_time, event_time, "
     "properties"},
    {"metadata type", S_META_BAD_TYPE, 1, NULL,
     "Metadata column 'topic' (key 'topic') must be of type STRING, not INT"},
    {"metadata read-only", S_META_READONLY, PULSARC_TABLE_SINK, NULL,
     "Metadata column 'tp' (key 'topic') is read-only: declare it VIRTUAL to write to table 't'"},
    {"primary key", S_PK, 3, NULL,
     "The Pulsar table 't' with 'json' format doesn't support defining PRIMARY KEY constraint "
     "on the table, because it can't guarantee the semantic of primary key."},
    {"upsert no pk", S_PLAIN, 3, X("connector", "upsert-pulsar", "key.format", "json"),
     "'upsert-pulsar' require to define a PRIMARY KEY constraint"},
    {"upsert no key format", S_PK, 3, X("connector", "upsert-pulsar"),
     "One or more required options are missing: 'key.format'"},
    {"upsert key fields", S_PK, 3,
     X("connector", "upsert-pulsar", "key.format", "json", "key.fields", "id"),
     "'upsert-pulsar' takes the key fields from the PRIMARY KEY; 'key.fields' cannot be set."},
    {"upsert round robin", S_PK, 3,
     X("connector", "upsert-pulsar", "key.format", "json", "sink.topic-routing-mode",
       "round-robin"),
     "'upsert-pulsar' routes by message key"},
    {"upsert unknown", S_PK, 3, X("connector", "upsert-pulsar", "key.format", "json", "x", "y"),
     "Unsupported options found for 'upsert-pulsar': 'x'"},
    {"subscription twice", S_PLAIN, 3,
     X("source.subscription-name", "a", "pulsar.consumer.subscriptionName", "b"),
     "This option pulsar.consumer.subscriptionName has been set to value a."},
};

START_TEST(option_error) {
    const struct bad_case *b = &bad_cases[_i];
    pulsarc_table_t *t = (pulsarc_table_t *)1;
    pulsarc_err_t rc = make(b->variant, b->extra, NULL, b->usage, &t);
    ck_assert_msg(rc != PULSARC_OK, "%s: accepted", b->what);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err, b->msg) != NULL, "%s: '%s' does not contain '%s'", b->what, err,
                  b->msg);
}
END_TEST

START_TEST(error_against_base_config) {
    pulsarc_connector_config_t *base = pulsarc_connector_config_new();
    ck_assert_int_eq(pulsarc_connector_config_set_service_url(base, "pulsar://other:6650", err,
                                                              sizeof err), 0);
    pulsarc_table_t *t = NULL;
    ck_assert_int_eq(make(S_PLAIN, NULL, base, 3, &t), PULSARC_ERR_BAD_CONFIG);
    ck_assert_contains(err, "Invalid 'service-url': This option pulsar.client.serviceUrl has "
                            "been set to value pulsar://other:6650.");
    /* the same value is no conflict */
    ck_assert_int_eq(make(S_PLAIN, X("service-url", "pulsar://other:6650"), base, 3, &t), 0);
    pulsarc_table_destroy(t);
    pulsarc_connector_config_destroy(base);
}
END_TEST

/* The options that set connector keys name keys the connector's table has. */
START_TEST(option_targets_exist) {
    for (int i = 0; i < PC_TO__COUNT; i++) {
        const pc_prop_t *p = &pc_table_opts[i];
        ck_assert_msg(!p->target || pc_prop_find(&pc_cc_table, p->target) >= 0,
                      "%s sets unknown key %s", p->name, p->target);
    }
}
END_TEST

START_TEST(readonly_metadata_fine_for_source) {
    pulsarc_table_t *t = NULL;
    ck_assert_int_eq(make(S_META_READONLY, NULL, NULL, PULSARC_TABLE_SOURCE, &t), 0);
    pulsarc_table_destroy(t);
}
END_TEST

/* ======================================================================== */
/* the WITH text */

START_TEST(with_round_trip) {
    pulsarc_table_schema_t *s = schema(S_PLAIN);
    const char *text =
        "WITH (\n"
        "  'connector' = 'pulsar',   -- the identifier\n"
        "  'topics' = 'orders;persistent://acme/prod/payments;orders',\n"
        "  /* several hosts */ 'service-url' = 'pulsar://h1:6650,h2:6651',\n"
        "  'admin-url' = 'http://h1:8080',\n"
        "  'source.subscription-name' = 'it''s mine',\n"
        "  'format' = 'json'\n"
        ");";
    pulsarc_table_t *t = NULL;
    ck_assert_msg(!pulsarc_table_new(s, text, NULL, 3, &t, err, sizeof err), "%s", err);
    ck_assert_int_eq(pulsarc_table_topic_count(t), 3);
    ck_assert_str_eq(pulsarc_table_topic(t, 0), "persistent://public/default/orders");
    ck_assert_str_eq(pulsarc_table_topic(t, 1), "persistent://acme/prod/payments");
    ck_assert_str_eq(pulsarc_table_topic(t, 2), "persistent://public/default/orders");
    ck_assert_ptr_null(pulsarc_table_topic(t, 3));
    const pulsarc_connector_config_t *cfg = pulsarc_table_config(t);
    ck_assert_str_eq(pulsarc_connector_config_get(cfg, "pulsar.client.serviceUrl"),
                     "pulsar://h1:6650,h2:6651");
    ck_assert_str_eq(pulsarc_connector_config_get(cfg, "pulsar.admin.adminUrl"), "http://h1:8080");
    ck_assert_str_eq(pulsarc_table_subscription_name(t), "it's mine");
    ck_assert_str_eq(pulsarc_connector_config_get(cfg, "pulsar.consumer.subscriptionName"),
                     "it's mine");
    ck_assert_str_eq(pulsarc_table_value_format(t), "json");
    ck_assert_ptr_null(pulsarc_table_key_format(t));
    pulsarc_table_destroy(t);
    pulsarc_table_schema_destroy(s);
}
END_TEST

START_TEST(with_forms) {
    pulsarc_table_schema_t *s = schema(S_PLAIN);
    const char *texts[] = {
        "('connector'='pulsar','topics'='t','service-url'='pulsar://h','format'='json')",
        "'connector'='pulsar', 'topics'='t', 'service-url'='pulsar://h', 'format'='json'",
        "with('connector'='pulsar','topics'='t','service-url'='pulsar://h','format'='json') ; ",
        "WITH /* c */ ( -- c\n 'connector' = 'pulsar' , 'topics' = 't' , 'service-url' = "
        "'pulsar://h' , 'format' = 'json' ) -- end",
    };
    for (size_t i = 0; i < NELEM(texts); i++) {
        pulsarc_table_t *t = NULL;
        ck_assert_msg(!pulsarc_table_new(s, texts[i], NULL, 3, &t, err, sizeof err), "%zu: %s",
                      i, err);
        pulsarc_table_destroy(t);
    }
    pulsarc_table_schema_destroy(s);
}
END_TEST

static const struct bad_text {
    const char *text, *msg;
} bad_texts[] = {
    {"WITH ('connector' = 'pulsar", "offset 20: unterminated string literal"},
    {"WITH ('connector' 'pulsar')", "offset 18: expected '='"},
    {"WITH ('a' = 'b' 'c' = 'd')", "offset 16: expected ',' or ')'"},
    {"WITH ('a' = 'b',)", "expected a quoted option key"},
    {"WITH (connector = 'pulsar')", "offset 6: expected a quoted option key near 'connector = '"},
    {"WITH ('a' = 'b') extra", "expected the end after ')'"},
    {"WITH 'a' = 'b'", "expected '(' after WITH"},
    {"WITH ('a' = 'b' /* open", "unterminated comment"},
    {"WITH ('a' = 1)", "expected a quoted option value"},
    {"WITH ('a' = 'b', 'a' = 'c')", "Duplicate option 'a' in the WITH clause"},
    {"WITH ('a' = 'b'", "expected ',' or ')', found the end"},
    {"WITH ()", "One or more required options are missing: 'connector'"},
    {"", "One or more required options are missing: 'connector'"},
};

START_TEST(with_errors) {
    pulsarc_table_schema_t *s = schema(S_PLAIN);
    pulsarc_table_t *t = (pulsarc_table_t *)1;
    ck_assert_int_ne(pulsarc_table_new(s, bad_texts[_i].text, NULL, 3, &t, err, sizeof err), 0);
    ck_assert_ptr_null(t);
    ck_assert_contains(err, bad_texts[_i].msg);
    pulsarc_table_schema_destroy(s);
}
END_TEST

START_TEST(with_literal_quotes) {
    char **kv;
    size_t n;
    ck_assert_int_eq(pc_with_parse("('k''ey' = '''v''' , 'e' = '')", &kv, &n, err, sizeof err), 0);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(kv[0], "k'ey");
    ck_assert_str_eq(kv[1], "'v'");
    ck_assert_str_eq(kv[2], "e");
    ck_assert_str_eq(kv[3], "");
    pc_with_free(kv, n);
}
END_TEST

START_TEST(kv_duplicates) {
    pulsarc_table_schema_t *s = schema(S_PLAIN);
    const char *kv[] = {"connector", "pulsar", "connector", "pulsar"};
    pulsarc_table_t *t = NULL;
    ck_assert_int_eq(pulsarc_table_new_kv(s, kv, 2, NULL, 3, &t, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "Duplicate option 'connector'");
    pulsarc_table_schema_destroy(s);
}
END_TEST

/* ======================================================================== */
/* what a table yields */

START_TEST(topics_list_forms) {
    pulsarc_table_t *t = make_ok(S_PLAIN, X("topics", "a;"));
    ck_assert_int_eq(pulsarc_table_topic_count(t), 1);
    pulsarc_table_destroy(t);
    t = make_ok(S_PLAIN, X("topics", "a;;b-partition-1"));
    ck_assert_int_eq(pulsarc_table_topic_count(t), 2);
    ck_assert_str_eq(pulsarc_table_topic(t, 1), "persistent://public/default/b-partition-1");
    pulsarc_table_destroy(t);
    /* short names take the base configuration's namespace */
    pulsarc_connector_config_t *base = pulsarc_connector_config_new();
    const char *envp[] = {"PULSAR_NAMESPACE=acme/orders", NULL};
    ck_assert_int_eq(pulsarc_connector_config_load_env(base, envp, err, sizeof err), 0);
    ck_assert_int_eq(make(S_PLAIN, NULL, base, 3, &t), 0);
    ck_assert_str_eq(pulsarc_table_topic(t, 0), "persistent://acme/orders/t");
    pulsarc_table_destroy(t);
    pulsarc_connector_config_destroy(base);
}
END_TEST

static void cursor_is(const pulsarc_table_cursor_t *c, pulsarc_table_cursor_kind_t kind, int64_t ledger,
                      int64_t entry, int32_t part, int64_t ms, int inclusive) {
    ck_assert_int_eq(c->kind, kind);
    if (kind == PULSARC_TABLE_CURSOR_MESSAGE_ID) {
        ck_assert_int_eq(c->id.ledger_id, ledger);
        ck_assert_int_eq(c->id.entry_id, entry);
        ck_assert_int_eq(c->id.partition, part);
        ck_assert_int_eq(c->id.batch_index, -1);
    }
    if (kind == PULSARC_TABLE_CURSOR_PUBLISH_TIME)
        ck_assert_int_eq(c->time_ms, ms);
    ck_assert_int_eq(c->inclusive, inclusive);
}

START_TEST(cursors) {
    pulsarc_table_cursor_t c;
    pulsarc_table_t *t = make_ok(S_PLAIN, NULL);
    pulsarc_table_start_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_EARLIEST, 0, 0, 0, 0, 1);
    pulsarc_table_stop_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_NEVER, 0, 0, 0, 0, 0);
    pulsarc_table_destroy(t);
    t = make_ok(S_PLAIN, X("source.start.message-id", "12:2:-1", "source.stop.at-message-id",
                           "20:0:3"));
    pulsarc_table_start_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_MESSAGE_ID, 12, 2, -1, 0, 1);
    pulsarc_table_stop_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_MESSAGE_ID, 20, 0, 3, 0, 0);
    pulsarc_table_destroy(t);
    t = make_ok(S_PLAIN, X("source.start.message-id", "latest", "source.stop.after-message-id",
                           "-1:-1:-1"));
    pulsarc_table_start_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_LATEST, 0, 0, 0, 0, 1);
    pulsarc_table_stop_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_MESSAGE_ID, -1, -1, -1, 0, 1);
    pulsarc_table_destroy(t);
    t = make_ok(S_PLAIN, X("source.start.publish-time", "1700000000000",
                           "source.stop.at-publish-time", "1800000000000"));
    pulsarc_table_start_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_PUBLISH_TIME, 0, 0, 0, 1700000000000LL, 1);
    pulsarc_table_stop_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_PUBLISH_TIME, 0, 0, 0, 1800000000000LL, 0);
    pulsarc_table_destroy(t);
    t = make_ok(S_PLAIN, X("source.start.message-id", "earliest", "source.stop.at-message-id",
                           "latest"));
    pulsarc_table_start_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_EARLIEST, 0, 0, 0, 0, 1);
    pulsarc_table_stop_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_LATEST, 0, 0, 0, 0, 1);
    pulsarc_table_destroy(t);
    t = make_ok(S_PLAIN, X("source.stop.at-message-id", "never"));
    pulsarc_table_stop_cursor(t, &c);
    cursor_is(&c, PULSARC_TABLE_CURSOR_NEVER, 0, 0, 0, 0, 0);
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(message_id_texts) {
    pulsarc_msgid_t id;
    ck_assert_int_eq(pc_table_parse_msgid("9223372036854775807:0:2147483647", &id, err,
                                          sizeof err), 0);
    ck_assert_int_eq(id.ledger_id, INT64_MAX);
    ck_assert_int_eq(id.partition, INT32_MAX);
    ck_assert_int_eq(pc_table_parse_msgid("1:2:2147483648", &id, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_int_eq(pc_table_parse_msgid("+1:-2:0", &id, err, sizeof err), 0);
    ck_assert_int_eq(id.ledger_id, 1);
    ck_assert_int_eq(id.entry_id, -2);
}
END_TEST

START_TEST(durations) {
    static const struct {
        const char *text;
        int64_t ms;
    } cases[] = {
        {"0 ms", 0},      {"250", 250},       {"10 s", 10000},  {"10s", 10000},
        {"1 min", 60000}, {"2 h", 7200000},   {"1 d", 86400000}, {"1500 us", 1},
        {"3 SECONDS", 3000}, {"7 millis", 7}, {"5m", 300000},   {" 4 ms ", 4},
        {"", -1},         {"ms", -1},         {"1.5 s", -1},    {"-1 s", -1},
        {"1 week", -1},   {"99999999999999999 d", -1},
    };
    for (size_t i = 0; i < NELEM(cases); i++)
        ck_assert_msg(pc_value_duration_ms(cases[i].text) == cases[i].ms, "'%s'",
                      cases[i].text);
}
END_TEST

START_TEST(sink_values) {
    pulsarc_table_t *t = make_ok(S_PLAIN, NULL);
    ck_assert_int_eq(pulsarc_table_routing_mode(t), PULSARC_TABLE_ROUTING_ROUND_ROBIN);
    ck_assert_int_eq(pulsarc_table_message_delay_ms(t), 0);
    ck_assert_int_eq(pulsarc_table_sink_parallelism(t), 0);
    ck_assert_ptr_null(pulsarc_table_custom_router(t));
    pulsarc_table_destroy(t);
    t = make_ok(S_PLAIN, X("sink.topic-routing-mode", "MESSAGE-KEY-HASH",
                           "sink.message-delay-interval", "10 s", "sink.parallelism", "4",
                           "explicit", "false"));
    ck_assert_int_eq(pulsarc_table_routing_mode(t), PULSARC_TABLE_ROUTING_MESSAGE_KEY_HASH);
    ck_assert_int_eq(pulsarc_table_message_delay_ms(t), 10000);
    ck_assert_int_eq(pulsarc_table_sink_parallelism(t), 4);
    pulsarc_table_destroy(t);
}
END_TEST

static const char *first_partition(void *opaque, const pulsarc_msg_t *msg,
                                   const char *const *partitions, size_t n) {
    (void)opaque;
    (void)msg;
    return n ? partitions[0] : NULL;
}

START_TEST(custom_router) {
    pulsarc_connector_config_t *base = pulsarc_connector_config_new();
    ck_assert_int_eq(pulsarc_connector_config_add_router(base, "mine", first_partition, NULL), 0);
    pulsarc_table_t *t = NULL;
    ck_assert_msg(!make(S_PLAIN, X("sink.custom-topic-router", "mine"), base, 3, &t), "%s", err);
    ck_assert_int_eq(pulsarc_table_routing_mode(t), PULSARC_TABLE_ROUTING_CUSTOM);
    ck_assert_str_eq(pulsarc_table_custom_router(t), "mine");
    pulsarc_connector_router_cb cb = NULL;
    ck_assert_int_eq(pulsarc_connector_config_router(pulsarc_table_config(t), "mine", &cb, NULL),
                     0);
    ck_assert_ptr_eq((void *)cb, (void *)first_partition);
    pulsarc_table_destroy(t);
    pulsarc_connector_config_destroy(base);
}
END_TEST

START_TEST(subscription_derived) {
    pulsarc_table_t *a = make_ok(S_PLAIN, X("topics", "x;y"));
    pulsarc_table_t *b = make_ok(S_PLAIN, X("topics", "x;y", "format", "json"));
    pulsarc_table_t *c = make_ok(S_PLAIN, X("topics", "y;x"));
    ck_assert_str_eq(pulsarc_table_subscription_name(a), pulsarc_table_subscription_name(b));
    ck_assert_str_ne(pulsarc_table_subscription_name(a), pulsarc_table_subscription_name(c));
    ck_assert_int_eq(strncmp(pulsarc_table_subscription_name(a), "pulsarc-sql-", 12), 0);
    ck_assert_int_eq(strlen(pulsarc_table_subscription_name(a)), 12 + 8);
    ck_assert_str_eq(pulsarc_table_subscription_type(a), "Exclusive");
    pulsarc_table_destroy(a);
    pulsarc_table_destroy(b);
    pulsarc_table_destroy(c);
    a = make_ok(S_PK, X("connector", "upsert-pulsar", "key.format", "json",
                        "source.subscription-type", "key_shared"));
    ck_assert_int_eq(strncmp(pulsarc_table_subscription_name(a), "pulsarc-upsert-sql-", 19), 0);
    ck_assert_str_eq(pulsarc_table_subscription_type(a), "Key_Shared");
    pulsarc_table_destroy(a);
}
END_TEST

START_TEST(pulsar_options_forwarded) {
    pulsarc_table_t *t = make_ok(S_PLAIN, X("pulsar.producer.batchingMaxMessages", "5",
                                            "pulsar.source.partitionDiscoveryIntervalMs", "-1"));
    const pulsarc_connector_config_t *cfg = pulsarc_table_config(t);
    ck_assert_str_eq(pulsarc_connector_config_get(cfg, "pulsar.producer.batchingMaxMessages"), "5");
    ck_assert_int_eq(pulsarc_connector_config_origin(cfg, "pulsar.producer.batchingMaxMessages"),
                     PULSARC_CONNECTOR_ORIGIN_BUILDER);
    ck_assert_str_eq(pulsarc_connector_config_get(cfg, "pulsar.source.partitionDiscoveryIntervalMs"),
                     "-1");
    pulsarc_conf_t *conf = NULL;
    ck_assert_msg(!pulsarc_connector_config_to_client_conf(cfg, &conf, err, sizeof err), "%s", err);
    char buf[64];
    size_t len = sizeof buf;
    ck_assert_int_eq(pulsarc_conf_get(conf, "batchingMaxMessages", buf, &len), 0);
    ck_assert_str_eq(buf, "5");
    len = sizeof buf;
    ck_assert_int_eq(pulsarc_conf_get(conf, "serviceUrl", buf, &len), 0);
    ck_assert_str_eq(buf, "pulsar://h:6650");
    pulsarc_conf_destroy(conf);
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(key_and_value_fields) {
    pulsarc_table_t *t = make_ok(S_PLAIN, X("key.format", "json", "key.fields", "score;id"));
    ck_assert_str_eq(pulsarc_table_key_format(t), "json");
    ck_assert_int_eq(pulsarc_table_key_field_count(t), 2);
    ck_assert_str_eq(pulsarc_table_key_field(t, 0), "score");
    ck_assert_str_eq(pulsarc_table_key_field(t, 1), "id");
    ck_assert_int_eq(pulsarc_table_value_field_count(t), 1);
    ck_assert_str_eq(pulsarc_table_value_field(t, 0), "name");
    pulsarc_table_destroy(t);
    t = make_ok(S_PLAIN, X("key.format", "raw", "key.fields", "name", "value.fields-include",
                           "ALL"));
    ck_assert_int_eq(pulsarc_table_value_field_count(t), 3);
    pulsarc_table_destroy(t);
    t = make_ok(S_PK, X("connector", "upsert-pulsar", "key.format", "json"));
    ck_assert(pulsarc_table_is_upsert(t));
    ck_assert_int_eq(pulsarc_table_key_field_count(t), 1);
    ck_assert_str_eq(pulsarc_table_key_field(t, 0), "id");
    ck_assert_int_eq(pulsarc_table_value_field_count(t), 2);
    ck_assert_int_eq(pulsarc_table_routing_mode(t), PULSARC_TABLE_ROUTING_MESSAGE_KEY_HASH);
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(format_options_accepted) {
    pulsarc_table_t *t = make_ok(S_PLAIN, X("format", NULL, "value.format", "json",
                                            "value.json.fail-on-missing-field", "true",
                                            "key.format", "raw", "key.fields", "name",
                                            "key.raw.endianness", "little-endian"));
    ck_assert(t->value_fmt.fail_on_missing == 1);
    ck_assert(t->key_fmt.little_endian == 1);
    pulsarc_table_destroy(t);
    t = make_ok(S_ONE, X("format", "raw", "raw.charset", "utf-8"));
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(schema_rules) {
    pulsarc_table_schema_t *s = pulsarc_table_schema_new("x");
    ck_assert_int_eq(pulsarc_table_schema_add_column(s, "a", PULSARC_TABLE_STRING, err,
                                                     sizeof err), 0);
    ck_assert_int_eq(pulsarc_table_schema_add_column(s, "a", PULSARC_TABLE_INT, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_contains(err, "column 'a' is declared twice");
    ck_assert_int_eq(pulsarc_table_schema_add_column(s, "m", PULSARC_TABLE_MAP, err, sizeof err),
                     PULSARC_ERR_UNSUPPORTED);
    ck_assert_int_eq(pulsarc_table_schema_add_metadata(s, "p", PULSARC_TABLE_MAP, "properties", 0,
                                                       err, sizeof err), 0);
    const char *pk[] = {"p"};
    ck_assert_int_eq(pulsarc_table_schema_set_primary_key(s, pk, 1, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_contains(err, "PRIMARY KEY column 'p' is not a physical column");
    pulsarc_table_schema_destroy(s);
}
END_TEST

/* ======================================================================== */
/* rows and messages */

static const char *payload(const pulsarc_msg_t *m) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)pulsarc_msg_len(m), (const char *)pulsarc_msg_payload(m));
    return buf;
}

static pulsarc_table_row_t *sample_row(pulsarc_table_t *t) {
    pulsarc_table_row_t *r = pulsarc_table_row_new(t);
    ck_assert_int_eq(pulsarc_table_row_set_int(r, pulsarc_table_column_index(t, "id"), 42), 0);
    ck_assert_int_eq(pulsarc_table_row_set_string(r, pulsarc_table_column_index(t, "name"),
                                                  "a \"q\"\\\n\x01é"), 0);
    ck_assert_int_eq(pulsarc_table_row_set_double(r, pulsarc_table_column_index(t, "score"), 0.1),
                     0);
    return r;
}

START_TEST(json_round_trip_with_key) {
    pulsarc_table_t *t = make_ok(S_PLAIN, X("key.format", "json", "key.fields", "id"));
    pulsarc_table_row_t *r = sample_row(t);
    pulsarc_msg_t *m = NULL;
    ck_assert_msg(!pulsarc_table_encode(t, r, &m, err, sizeof err), "%s", err);
    ck_assert_str_eq(payload(m), "{\"name\":\"a \\\"q\\\"\\\\\\u000a\\u0001é\",\"score\":0.1}");
    size_t klen;
    const char *key = pulsarc_msg_key_bytes(m, &klen);
    ck_assert_int_eq(klen, 9);
    ck_assert_int_eq(memcmp(key, "{\"id\":42}", 9), 0);
    ck_assert_str_eq(pulsarc_msg_key(m), "eyJpZCI6NDJ9"); /* base64, as keyBytes travels */
    pulsarc_table_row_t *back = pulsarc_table_row_new(t);
    ck_assert_msg(!pulsarc_table_decode(t, m, back, err, sizeof err), "%s", err);
    ck_assert_int_eq(pulsarc_table_row_int(back, 0), 42);
    size_t n;
    ck_assert_str_eq(pulsarc_table_row_bytes(back, 1, &n), "a \"q\"\\\n\x01é");
    ck_assert(pulsarc_table_row_double(back, 2) == 0.1);
    ck_assert_int_eq(pulsarc_table_row_kind(back), PULSARC_TABLE_ROW_INSERT);
    pulsarc_msg_destroy(m);
    pulsarc_table_row_destroy(back);
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(json_encode_values) {
    pulsarc_table_schema_t *s = pulsarc_table_schema_new("j");
    add(s, "b", PULSARC_TABLE_BOOLEAN);
    add(s, "i", PULSARC_TABLE_INT);
    add(s, "raw", PULSARC_TABLE_BYTES);
    add(s, "d", PULSARC_TABLE_DOUBLE);
    add(s, "n", PULSARC_TABLE_STRING);
    const char *kv[] = {"connector", "pulsar", "topics", "t", "service-url", "pulsar://h",
                        "format", "json"};
    pulsarc_table_t *t = NULL;
    ck_assert_int_eq(pulsarc_table_new_kv(s, kv, 4, NULL, 3, &t, err, sizeof err), 0);
    pulsarc_table_row_t *r = pulsarc_table_row_new(t);
    ck_assert_int_eq(pulsarc_table_row_set_bool(r, 0, 1), 0);
    ck_assert_int_eq(pulsarc_table_row_set_int(r, 1, -7), 0);
    ck_assert_int_eq(pulsarc_table_row_set_bytes(r, 2, "\x00\xff", 2), 0);
    ck_assert_int_eq(pulsarc_table_row_set_double(r, 3, 1e300), 0);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_table_encode(t, r, &m, err, sizeof err), 0);
    ck_assert_str_eq(payload(m), "{\"b\":true,\"i\":-7,\"raw\":\"AP8=\",\"d\":1e+300,\"n\":null}");
    pulsarc_msg_destroy(m);
    ck_assert_int_eq(pulsarc_table_row_set_double(r, 3, NAN), 0);
    ck_assert_int_eq(pulsarc_table_encode(t, r, &m, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_contains(err, "json: column 'd' is not a finite number");
    /* setters check types and ranges */
    ck_assert_int_eq(pulsarc_table_row_set_int(r, 1, INT64_C(1) << 40), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_table_row_set_string(r, 0, "x"), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_table_row_set_int(r, 9, 1), PULSARC_ERR_INVALID_ARG);
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
    pulsarc_table_schema_destroy(s);
}
END_TEST

/* Decodes payload text into a fresh row of t; returns the result. */
static pulsarc_err_t decode_text(pulsarc_table_t *t, const char *text, pulsarc_table_row_t **r) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, text, strlen(text), PULSARC_MSG_F_COPY);
    *r = pulsarc_table_row_new(t);
    err[0] = '\0';
    pulsarc_err_t rc = pulsarc_table_decode(t, m, *r, err, sizeof err);
    pulsarc_msg_destroy(m);
    return rc;
}

START_TEST(json_decode_lenient_values) {
    pulsarc_table_t *t = make_ok(S_PLAIN, NULL);
    pulsarc_table_row_t *r;
    ck_assert_msg(!decode_text(t, " {\"extra\":{\"a\":[1,{\"b\":null}],\"c\":\"\\u00e9\"},"
                                  "\"id\":\"17\",\"name\":12.5e1,\"score\":\"2.5\",\"id\":18} ",
                               &r), "%s", err);
    ck_assert_int_eq(pulsarc_table_row_int(r, 0), 18); /* the last member wins */
    ck_assert_str_eq(pulsarc_table_row_bytes(r, 1, NULL), "12.5e1");
    ck_assert(pulsarc_table_row_double(r, 2) == 2.5);
    pulsarc_table_row_destroy(r);
    ck_assert_msg(!decode_text(t, "{\"name\":{\"x\": [true]},\"id\":null}", &r), "%s", err);
    ck_assert_str_eq(pulsarc_table_row_bytes(r, 1, NULL), "{\"x\": [true]}");
    ck_assert(pulsarc_table_row_is_null(r, 0));
    ck_assert(pulsarc_table_row_is_null(r, 2)); /* missing: NULL */
    pulsarc_table_row_destroy(r);
    ck_assert_msg(!decode_text(t, "{\"name\":\"\\ud83d\\ude00\\t\\/\"}", &r), "%s", err);
    ck_assert_str_eq(pulsarc_table_row_bytes(r, 1, NULL), "\xf0\x9f\x98\x80\t/");
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
}
END_TEST

static const struct bad_json {
    const char *text, *msg;
} bad_jsons[] = {
    {"[1]", "json: expected an object at offset 0"},
    {"{\"id\":1} x", "json: text after the object at offset 9"},
    {"{\"id\":01}", "expected ',' or '}'"},
    {"{\"id\":1.}", "malformed number"},
    {"{\"id\":-}", "malformed number"},
    {"{\"id\":1,}", "expected a member name"},
    {"{id:1}", "expected a member name"},
    {"{\"id\" 1}", "expected ':'"},
    {"{\"name\":\"a\x01\"}", "control character in string"},
    {"{\"name\":\"\\x\"}", "bad escape"},
    {"{\"name\":\"\\ud800\"}", "lone high surrogate"},
    {"{\"name\":\"\\udc00\"}", "lone low surrogate"},
    {"{\"name\":\"\\u12\"}", "bad \\u escape"},
    {"{\"name\":\"abc", "unterminated string"},
    {"{\"name\":tru}", "expected a value"},
    {"{\"id\":1.5}", "json: member 'id' does not fit column type BIGINT"},
    {"{\"id\":true}", "does not fit column type BIGINT"},
    {"{\"id\":\"12x\"}", "does not fit column type BIGINT"},
    {"{\"score\":\"fast\"}", "does not fit column type DOUBLE"},
    {"{\"id\":99999999999999999999}", "does not fit column type BIGINT"},
    {"{\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]"
     "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
     "nesting too deep"},
    {"", "expected an object"},
};

START_TEST(json_decode_errors) {
    pulsarc_table_t *t = make_ok(S_PLAIN, NULL);
    pulsarc_table_row_t *r;
    const struct bad_json *b = &bad_jsons[_i];
    pulsarc_err_t rc = decode_text(t, b->text, &r);
    if (!*b->text) /* an empty value is a null value: refused before any format */
        ck_assert_contains(err, "Invalid null value received in non-upsert mode");
    else
        ck_assert_msg(rc == PULSARC_ERR_MALFORMED && strstr(err, b->msg), "'%s': %s", b->text,
                      err);
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(json_decode_flags) {
    pulsarc_table_t *t = make_ok(S_PLAIN, X("json.fail-on-missing-field", "true"));
    pulsarc_table_row_t *r;
    ck_assert_int_eq(decode_text(t, "{\"id\":1,\"name\":\"n\"}", &r), PULSARC_ERR_MALFORMED);
    ck_assert_str_eq(err, "json: member 'score' is missing");
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
    t = make_ok(S_PLAIN, X("json.ignore-parse-errors", "true"));
    ck_assert_msg(!decode_text(t, "{\"id\":\"x\",\"name\":\"n\",\"score\":[1]}", &r), "%s", err);
    ck_assert(pulsarc_table_row_is_null(r, 0));
    ck_assert(pulsarc_table_row_is_null(r, 2));
    ck_assert_str_eq(pulsarc_table_row_bytes(r, 1, NULL), "n");
    pulsarc_table_row_destroy(r);
    ck_assert_int_eq(decode_text(t, "{\"id\":", &r), PULSARC_ERR_MALFORMED); /* syntax still counts */
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(raw_round_trips) {
    static const pulsarc_table_type_t types[] = {PULSARC_TABLE_STRING, PULSARC_TABLE_BYTES,
                                                 PULSARC_TABLE_BOOLEAN, PULSARC_TABLE_INT,
                                                 PULSARC_TABLE_BIGINT, PULSARC_TABLE_DOUBLE};
    static const char *const want_be[] = {"hi", "hi", "\x01", "\xff\xff\xff\xfe",
                                          "\x00\x00\x00\x00\x00\x00\x01\x00",
                                          "\x3f\xf8\x00\x00\x00\x00\x00\x00"};
    static const size_t want_len[] = {2, 2, 1, 4, 8, 8};
    for (int little = 0; little <= 1; little++) {
        for (size_t i = 0; i < NELEM(types); i++) {
            pulsarc_table_schema_t *s = pulsarc_table_schema_new("r");
            add(s, "v", types[i]);
            const char *kv[] = {"connector", "pulsar", "topics", "t", "service-url", "pulsar://h",
                                "format", "raw", "raw.endianness",
                                little ? "little-endian" : "big-endian"};
            pulsarc_table_t *t = NULL;
            ck_assert_msg(!pulsarc_table_new_kv(s, kv, 5, NULL, 3, &t, err, sizeof err), "%s", err);
            pulsarc_table_row_t *r = pulsarc_table_row_new(t);
            if (types[i] <= PULSARC_TABLE_BYTES)
                pulsarc_table_row_set_string(r, 0, "hi");
            else if (types[i] == PULSARC_TABLE_BOOLEAN)
                pulsarc_table_row_set_bool(r, 0, 1);
            else if (types[i] == PULSARC_TABLE_DOUBLE)
                pulsarc_table_row_set_double(r, 0, 1.5);
            else
                pulsarc_table_row_set_int(r, 0, types[i] == PULSARC_TABLE_INT ? -2 : 256);
            pulsarc_msg_t *m = NULL;
            ck_assert_int_eq(pulsarc_table_encode(t, r, &m, err, sizeof err), 0);
            ck_assert_int_eq(pulsarc_msg_len(m), want_len[i]);
            const uint8_t *p = pulsarc_msg_payload(m);
            for (size_t k = 0; k < want_len[i]; k++) {
                size_t at = little && types[i] > PULSARC_TABLE_BYTES ? want_len[i] - 1 - k : k;
                ck_assert_int_eq(p[at], (uint8_t)want_be[i][k]);
            }
            pulsarc_table_row_t *back = pulsarc_table_row_new(t);
            ck_assert_msg(!pulsarc_table_decode(t, m, back, err, sizeof err), "%s", err);
            if (types[i] == PULSARC_TABLE_DOUBLE)
                ck_assert(pulsarc_table_row_double(back, 0) == 1.5);
            else if (types[i] > PULSARC_TABLE_BYTES)
                ck_assert_int_eq(pulsarc_table_row_int(back, 0), pulsarc_table_row_int(r, 0));
            else
                ck_assert_str_eq(pulsarc_table_row_bytes(back, 0, NULL), "hi");
            pulsarc_msg_destroy(m);
            pulsarc_table_row_destroy(back);
            pulsarc_table_row_destroy(r);
            pulsarc_table_destroy(t);
            pulsarc_table_schema_destroy(s);
        }
    }
}
END_TEST

START_TEST(raw_errors_and_nulls) {
    pulsarc_table_t *t = make_ok(S_PLAIN, X("key.format", "raw", "key.fields", "id"));
    pulsarc_table_row_t *r = sample_row(t);
    pulsarc_table_row_set_null(r, 0); /* a NULL raw key: no key at all */
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_table_encode(t, r, &m, err, sizeof err), 0);
    ck_assert_ptr_null(pulsarc_msg_key(m));
    pulsarc_msg_set_key(m, "abc"); /* 3 bytes for a BIGINT key */
    ck_assert_int_eq(pulsarc_table_decode(t, m, r, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_str_eq(err, "raw: column 'id' is BIGINT: expected 8 bytes, got 3");
    pulsarc_msg_destroy(m);
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
    t = make_ok(S_ONE, X("format", "raw"));
    r = pulsarc_table_row_new(t);
    ck_assert_int_eq(pulsarc_table_encode(t, r, &m, err, sizeof err), 0);
    ck_assert(pulsarc_msg_is_null_value(m)); /* a NULL value column: a null value */
    pulsarc_msg_destroy(m);
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(upsert_changelog) {
    pulsarc_table_t *t = make_ok(S_PK, X("connector", "upsert-pulsar", "key.format", "json"));
    pulsarc_table_row_t *r = sample_row(t);
    pulsarc_table_row_set_kind(r, PULSARC_TABLE_ROW_DELETE);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_table_encode(t, r, &m, err, sizeof err), 0);
    ck_assert(pulsarc_msg_is_null_value(m));
    size_t klen;
    ck_assert_int_eq(memcmp(pulsarc_msg_key_bytes(m, &klen), "{\"id\":42}", 9), 0);
    pulsarc_table_row_t *back = pulsarc_table_row_new(t);
    ck_assert_int_eq(pulsarc_table_decode(t, m, back, err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_table_row_kind(back), PULSARC_TABLE_ROW_DELETE);
    ck_assert_int_eq(pulsarc_table_row_int(back, 0), 42);
    ck_assert(pulsarc_table_row_is_null(back, 1));
    pulsarc_msg_destroy(m);
    pulsarc_table_row_set_kind(r, PULSARC_TABLE_ROW_UPDATE_AFTER);
    ck_assert_int_eq(pulsarc_table_encode(t, r, &m, err, sizeof err), 0);
    ck_assert(!pulsarc_msg_is_null_value(m));
    ck_assert_str_eq(payload(m), "{\"name\":\"a \\\"q\\\"\\\\\\u000a\\u0001é\",\"score\":0.1}");
    pulsarc_msg_destroy(m);
    pulsarc_table_row_destroy(back);
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
    /* a plain table is insert-only, and refuses null values */
    t = make_ok(S_PLAIN, NULL);
    r = sample_row(t);
    pulsarc_table_row_set_kind(r, PULSARC_TABLE_ROW_UPDATE_BEFORE);
    ck_assert_int_eq(pulsarc_table_encode(t, r, &m, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_contains(err, "accepts INSERT rows only");
    m = pulsarc_msg_new();
    pulsarc_msg_set_null_value(m);
    ck_assert_int_eq(pulsarc_table_decode(t, m, r, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_contains(err, "Invalid null value received in non-upsert mode");
    pulsarc_msg_destroy(m);
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(metadata_read_and_write) {
    pulsarc_table_t *t = make_ok(S_META_ALL, NULL);
    pulsarc_table_row_t *r = sample_row(t);
    int props = pulsarc_table_column_index(t, "props"), et = pulsarc_table_column_index(t, "et");
    ck_assert_int_eq(pulsarc_table_row_map_put(r, props, "k1", "v1"), 0);
    ck_assert_int_eq(pulsarc_table_row_map_put(r, props, "k2", NULL), 0);
    ck_assert_int_eq(pulsarc_table_row_set_int(r, et, 1234), 0);
    pulsarc_table_row_set_string(r, pulsarc_table_column_index(t, "topic"), "ignored: virtual");
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_table_encode(t, r, &m, err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_msg_property_count(m), 1); /* the NULL entry is skipped */
    ck_assert_str_eq(pulsarc_msg_property(m, "k1"), "v1");
    ck_assert_int_eq(pulsarc_msg_event_time(m), 1234);
    /* as if received */
    m->own.topic = strdup("persistent://public/default/t-partition-1");
    m->own.producer_name = strdup("prod-1");
    m->own.publish_time = 1700000000123ULL;
    pulsarc_msgid_t id = {7, 9, 1, 2, 5};
    m->id = id;
    pulsarc_msg_set_sequence_id(m, 77);
    pulsarc_table_row_t *back = pulsarc_table_row_new(t);
    ck_assert_msg(!pulsarc_table_decode(t, m, back, err, sizeof err), "%s", err);
    ck_assert_str_eq(pulsarc_table_row_bytes(back, pulsarc_table_column_index(t, "topic"), NULL),
                     "persistent://public/default/t-partition-1");
    ck_assert_int_eq(pulsarc_table_row_int(back, pulsarc_table_column_index(t, "size")),
                     (int64_t)pulsarc_msg_len(m));
    ck_assert_str_eq(pulsarc_table_row_bytes(back, pulsarc_table_column_index(t, "producer"), NULL),
                     "prod-1");
    ck_assert_int_eq(pulsarc_table_row_int(back, pulsarc_table_column_index(t, "seq")), 77);
    ck_assert_int_eq(pulsarc_table_row_int(back, pulsarc_table_column_index(t, "pt")),
                     1700000000123LL);
    ck_assert_int_eq(pulsarc_table_row_int(back, et), 1234);
    ck_assert_int_eq(pulsarc_table_row_map_count(back, props), 1);
    const char *k, *v;
    ck_assert_int_eq(pulsarc_table_row_map_at(back, props, 0, &k, &v), 0);
    ck_assert_str_eq(k, "k1");
    ck_assert_str_eq(v, "v1");
    size_t n;
    const uint8_t *mid = pulsarc_table_row_bytes(back, pulsarc_table_column_index(t, "mid"), &n);
    Pulsar__Proto__MessageIdData *d = pulsar__proto__message_id_data__unpack(NULL, n, mid);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->ledgerid, 7);
    ck_assert_int_eq(d->entryid, 9);
    ck_assert_int_eq(d->partition, 1);
    ck_assert_int_eq(d->batch_index, 2);
    ck_assert_int_eq(d->batch_size, 5);
    pulsar__proto__message_id_data__free_unpacked(d, NULL);
    pulsarc_msg_destroy(m);
    pulsarc_table_row_destroy(back);
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
}
END_TEST

START_TEST(metadata_defaults) {
    /* a message with no topic, producer or properties: empty, not NULL */
    pulsarc_table_t *t = make_ok(S_META_ALL, NULL);
    pulsarc_table_row_t *r;
    ck_assert_msg(!decode_text(t, "{}", &r), "%s", err);
    ck_assert_str_eq(pulsarc_table_row_bytes(r, pulsarc_table_column_index(t, "topic"), NULL), "");
    int props = pulsarc_table_column_index(t, "props");
    ck_assert(!pulsarc_table_row_is_null(r, props));
    ck_assert_int_eq(pulsarc_table_row_map_count(r, props), 0);
    ck_assert_int_eq(pulsarc_table_row_int(r, pulsarc_table_column_index(t, "et")), 0);
    size_t n;
    pulsarc_table_row_bytes(r, pulsarc_table_column_index(t, "mid"), &n);
    ck_assert_int_gt(n, 0);
    pulsarc_table_row_destroy(r);
    pulsarc_table_destroy(t);
}
END_TEST

static Suite *table_options_suite(void) {
    Suite *s = suite_create("table_options");
    TCase *t = tcase_create("errors");
    tcase_add_loop_test(t, option_error, 0, (int)NELEM(bad_cases));
    tcase_add_test(t, error_against_base_config);
    tcase_add_test(t, readonly_metadata_fine_for_source);
    tcase_add_test(t, option_targets_exist);
    suite_add_tcase(s, t);
    t = tcase_create("with");
    tcase_add_test(t, with_round_trip);
    tcase_add_test(t, with_forms);
    tcase_add_loop_test(t, with_errors, 0, (int)NELEM(bad_texts));
    tcase_add_test(t, with_literal_quotes);
    tcase_add_test(t, kv_duplicates);
    suite_add_tcase(s, t);
    t = tcase_create("values");
    tcase_add_test(t, topics_list_forms);
    tcase_add_test(t, cursors);
    tcase_add_test(t, message_id_texts);
    tcase_add_test(t, durations);
    tcase_add_test(t, sink_values);
    tcase_add_test(t, custom_router);
    tcase_add_test(t, subscription_derived);
    tcase_add_test(t, pulsar_options_forwarded);
    tcase_add_test(t, key_and_value_fields);
    tcase_add_test(t, format_options_accepted);
    tcase_add_test(t, schema_rules);
    suite_add_tcase(s, t);
    t = tcase_create("codec");
    tcase_add_test(t, json_round_trip_with_key);
    tcase_add_test(t, json_encode_values);
    tcase_add_test(t, json_decode_lenient_values);
    tcase_add_loop_test(t, json_decode_errors, 0, (int)NELEM(bad_jsons));
    tcase_add_test(t, json_decode_flags);
    tcase_add_test(t, raw_round_trips);
    tcase_add_test(t, raw_errors_and_nulls);
    tcase_add_test(t, upsert_changelog);
    tcase_add_test(t, metadata_read_and_write);
    tcase_add_test(t, metadata_defaults);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(table_options_suite)
