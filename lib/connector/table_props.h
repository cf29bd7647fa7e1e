/*
 * The SQL connector's WITH options ('pulsar' and 'upsert-pulsar' tables),
 * a third table of lib/conf's rows (lib/conf/table.h gives the format):
 * which options exist, their types, defaults and choices, and their
 * reference in docs/CONNECTOR_CONFIGURATION.md. table_options.c reads each
 * value by its row and checks the rules spanning options; its errors are
 * the SQL connector's own words ("Could not parse value ... for key ...").
 *
 * X(id, "option", scope, type, default, min, max, "choices", flags, "target", "doc")
 *  - target: the connector key (connector_props.h) the option sets.
 *  - FORMAT rows are the options of a row format; each is also taken with
 *    "key." (for the key format) or "value." (for the value format) before it.
 *  - The options' names are macros as well: the error texts quote them.
 */
#ifndef PC_CONNECTOR_TABLE_PROPS_H
#define PC_CONNECTOR_TABLE_PROPS_H
#include <stdint.h>

#include "conf/table.h"

#define K_CONNECTOR "connector"
#define K_TOPICS "topics"
#define K_SERVICE_URL "service-url"
#define K_ADMIN_URL "admin-url"
#define K_EXPLICIT "explicit"
#define K_FORMAT "format"
#define K_VALUE_FORMAT "value.format"
#define K_KEY_FORMAT "key.format"
#define K_KEY_FIELDS "key.fields"
#define K_FIELDS_INCLUDE "value.fields-include"
#define K_SUB_NAME "source.subscription-name"
#define K_SUB_TYPE "source.subscription-type"
#define K_START_ID "source.start.message-id"
#define K_START_TIME "source.start.publish-time"
#define K_STOP_AT_ID "source.stop.at-message-id"
#define K_STOP_AFTER_ID "source.stop.after-message-id"
#define K_STOP_AT_TIME "source.stop.at-publish-time"
#define K_ROUTING "sink.topic-routing-mode"
#define K_ROUTER "sink.custom-topic-router"
#define K_DELAY "sink.message-delay-interval"
#define K_PARALLELISM "sink.parallelism"

#define PC_TABLE_OPTS(X)                                                                           \
    X(CONNECTOR, K_CONNECTOR, TABLE, STR, NULL, 0, 0, NULL, 0, NULL,                               \
      "Required: 'pulsar', or 'upsert-pulsar' (a changelog keyed by the PRIMARY KEY).")            \
    X(TOPICS, K_TOPICS, TABLE, LIST, NULL, 0, 0, NULL, 0, NULL,                                    \
      "Required: topics separated by ';'; short names take the default tenant and namespace.")     \
    X(SERVICE_URL, K_SERVICE_URL, TABLE, STR, NULL, 0, 0, NULL, 0, "pulsar.client.serviceUrl",     \
      "Required: the broker's pulsar://, pulsar+ssl://, http:// or https:// URL.")                 \
    X(ADMIN_URL, K_ADMIN_URL, TABLE, STR, NULL, 0, 0, NULL, 0, "pulsar.admin.adminUrl",            \
      "The HTTP admin URL.")                                                                       \
    X(EXPLICIT, K_EXPLICIT, TABLE, ENUM, "true", 0, 0, "false|true", 0, NULL,                     \
      "Whether the table is declared in SQL (true) or derived from a catalog.")                    \
    X(FORMAT, K_FORMAT, TABLE, STR, NULL, 0, 0, NULL, 0, NULL,                                     \
      "Row format of the value, raw or json (the same as value.format).")                          \
    X(VALUE_FORMAT, K_VALUE_FORMAT, TABLE, STR, NULL, 0, 0, NULL, 0, NULL,                         \
      "Required (or format): row format of the value, raw or json.")                               \
    X(KEY_FORMAT, K_KEY_FORMAT, TABLE, STR, NULL, 0, 0, NULL, 0, NULL,                             \
      "Row format of the message key, raw or json; with key.fields (upsert-pulsar: required).")    \
    X(KEY_FIELDS, K_KEY_FIELDS, TABLE, LIST, NULL, 0, 0, NULL, 0, NULL,                            \
      "Physical columns, separated by ';', written to and read from the message key.")             \
    X(FIELDS_INCLUDE, K_FIELDS_INCLUDE, TABLE, ENUM, "EXCEPT_KEY", 0, 0, "EXCEPT_KEY|ALL", 0,      \
      NULL, "Whether the value also carries the key fields.")                                      \
    X(SUB_NAME, K_SUB_NAME, SOURCE, STR, NULL, 0, 0, NULL, 0, "pulsar.consumer.subscriptionName",  \
      "Subscription of the source; default: one derived from the topics, the same at each "       \
      "restart.")                                                                                  \
    X(SUB_TYPE, K_SUB_TYPE, SOURCE, ENUM, "Exclusive", 0, 0,                                       \
      "Exclusive|Shared|Failover|Key_Shared", 0, NULL, "Subscription type; Failover is refused.")  \
    X(START_ID, K_START_ID, SOURCE, STR, "earliest", 0, 0, NULL, 0, NULL,                          \
      "Where new subscriptions start: earliest, latest or ledger:entry:partition.")                \
    X(START_TIME, K_START_TIME, SOURCE, INT, NULL, INT64_MIN, INT64_MAX, NULL, 0, NULL,            \
      "... or at the first message published at or after this time, ms since the epoch.")         \
    X(STOP_AT_ID, K_STOP_AT_ID, SOURCE, STR, "never", 0, 0, NULL, 0, NULL,                         \
      "Where reading ends: never, latest (as of start) or before ledger:entry:partition.")         \
    X(STOP_AFTER_ID, K_STOP_AFTER_ID, SOURCE, STR, NULL, 0, 0, NULL, 0, NULL,                      \
      "... or after ledger:entry:partition.")                                                      \
    X(STOP_AT_TIME, K_STOP_AT_TIME, SOURCE, INT, NULL, INT64_MIN, INT64_MAX, NULL, 0, NULL,        \
      "... or at the first message published at or after this time, ms since the epoch.")         \
    X(ROUTING, K_ROUTING, SINK, ENUM, "round-robin", 0, 0, "round-robin|message-key-hash|custom",  \
      0, NULL, "How the sink spreads rows over topics; custom: use sink.custom-topic-router.")     \
    X(ROUTER, K_ROUTER, SINK, STR, NULL, 0, 0, NULL, 0, NULL,                                      \
      "Name of a router registered with pulsarc_connector_config_add_router().")                   \
    X(DELAY, K_DELAY, SINK, STR, "0 ms", 0, 0, NULL, 0, NULL,                                      \
      "Delivery delay of each message, a duration such as \"10 s\".")                              \
    X(PARALLELISM, K_PARALLELISM, SINK, INT, NULL, 1, INT32_MAX, NULL, 0, NULL,                    \
      "Sink parallelism: the number of sink writers the application runs, each a sink made "    \
      "with pulsarc_sink_builder_set_writer(i, N); reported, pulsarc starts no writer itself.")  \
    X(JSON_FAIL_ON_MISSING, "json.fail-on-missing-field", FORMAT, ENUM, "false", 0, 0,             \
      "false|true", 0, NULL, "json: a missing field is an error instead of NULL.")                 \
    X(JSON_IGNORE_ERRORS, "json.ignore-parse-errors", FORMAT, ENUM, "false", 0, 0, "false|true",   \
      0, NULL, "json: a member that does not fit its column becomes NULL instead of an error.")    \
    X(RAW_CHARSET, "raw.charset", FORMAT, STR, "UTF-8", 0, 0, NULL, PC_F_DEFONLY, NULL,            \
      "raw: the text encoding of STRING columns; pulsarc's raw format is UTF-8 only.")             \
    X(RAW_ENDIANNESS, "raw.endianness", FORMAT, ENUM, "big-endian", 0, 0,                          \
      "big-endian|little-endian", 0, NULL, "raw: byte order of numeric columns.")

typedef enum pc_table_opt_id {
#define PC_TABLE_OPT_ENUM(id, ...) PC_TO_##id,
    PC_TABLE_OPTS(PC_TABLE_OPT_ENUM)
#undef PC_TABLE_OPT_ENUM
    PC_TO__COUNT
} pc_table_opt_id_t;

extern const pc_prop_t pc_table_opts[PC_TO__COUNT];
/* The rows above, for lookup and the generated reference. */
extern const pc_prop_table_t pc_table_opt_table;
#endif
