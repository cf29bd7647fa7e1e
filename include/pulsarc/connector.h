/*
 * pulsarc — Connector section: the configuration object of the Flink-style
 * source and sink, and the SQL table options (WITH (...)) with their row
 * formats. Included by pulsarc.h.
 *
 * Conventions are those of pulsarc.h. Nothing here does I/O except
 * pulsarc_connector_config_load_properties_file() (reads one file) and
 * pulsarc_connector_config_load_env() (reads the environment). Objects are
 * not locked: use one from one thread at a time; a finished, no longer
 * mutated configuration may be read from several threads.
 */
#ifndef PULSARC_CONNECTOR_H
#define PULSARC_CONNECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "pulsarc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/** @name Connector configuration
 *
 * One object holding every pulsar.client.*, pulsar.admin.*,
 * pulsar.source.*, pulsar.sink.*, pulsar.producer.* and pulsar.consumer.*
 * key of the Flink connector (docs/CONNECTOR_CONFIGURATION.md lists them).
 * A key not in that table is refused with PULSARC_ERR_UNKNOWN_CONFIG and an
 * errstr naming it; a bad value with PULSARC_ERR_BAD_CONFIG naming the key
 * (secrets — authParams, passwords — are never echoed).
 *
 * Values come from several sources. Each value remembers its source, and a
 * source never overrides a value from a stronger one, so the result does
 * not depend on the order the loaders are called in. Weakest first:
 *
 *   1. DEFAULT  the table's defaults
 *   2. FILE     a Java .properties file (shared, deployed configuration)
 *   3. ENV      PULSAR_* environment variables (per deployment)
 *   4. PAIR     -Dkey=value pairs (per invocation, any key)
 *   5. ARGS     named program arguments, --service-url ... (per invocation)
 *   6. BUILDER  pulsarc_connector_config_set*() calls (the program itself)
 *
 * Within one source the last value wins, except BUILDER: setting a key there
 * to a second, different value is an error ("This option ... has been set to
 * value ..."), as the connector's builders refuse it.
 */
/**@{*/
typedef struct pulsarc_connector_config_s pulsarc_connector_config_t;

/** Where a value came from; the order is the precedence (higher wins). */
typedef enum pulsarc_connector_origin_e {
    PULSARC_CONNECTOR_ORIGIN_DEFAULT = 0,
    PULSARC_CONNECTOR_ORIGIN_FILE = 1,
    PULSARC_CONNECTOR_ORIGIN_ENV = 2,
    PULSARC_CONNECTOR_ORIGIN_PAIR = 3,
    PULSARC_CONNECTOR_ORIGIN_ARGS = 4,
    PULSARC_CONNECTOR_ORIGIN_BUILDER = 5
} pulsarc_connector_origin_t;

/** "default", "file", "env", "-D", "args" or "builder". Static string. */
PULSARC_API const char *pulsarc_connector_origin_name(pulsarc_connector_origin_t origin);

/** A configuration holding only defaults. Owned by the caller; NULL on OOM. */
PULSARC_API pulsarc_connector_config_t *pulsarc_connector_config_new(void);
/** A deep copy (values, origins and routers). Owned by the caller. */
PULSARC_API pulsarc_connector_config_t *
pulsarc_connector_config_dup(const pulsarc_connector_config_t *cfg);
/** Frees cfg. NULL is a no-op. */
PULSARC_API void pulsarc_connector_config_destroy(pulsarc_connector_config_t *cfg);

/**
 * Sets key to value (both borrowed, copied) as a BUILDER override.
 * PULSARC_ERR_UNKNOWN_CONFIG for a key outside the table,
 * PULSARC_ERR_BAD_CONFIG for a bad value or a conflicting second builder
 * value, PULSARC_ERR_UNSUPPORTED for a value pulsarc cannot honour (e.g.
 * pulsar.client.useKeyStoreTls=true).
 */
PULSARC_API pulsarc_err_t pulsarc_connector_config_set(pulsarc_connector_config_t *cfg,
                                                       const char *key, const char *value,
                                                       char *errstr, size_t errlen);
/** Like pulsarc_connector_config_set() but as coming from origin. */
PULSARC_API pulsarc_err_t pulsarc_connector_config_set_from(pulsarc_connector_config_t *cfg,
                                                            pulsarc_connector_origin_t origin,
                                                            const char *key, const char *value,
                                                            char *errstr, size_t errlen);

/**
 * Reads the environment (ENV). envp is a NULL-terminated "NAME=value" array
 * (borrowed), or NULL for the process environment. Variables and keys:
 *   PULSAR_SERVICE_URL → pulsar.client.serviceUrl
 *   PULSAR_ADMIN_URL → pulsar.admin.adminUrl
 *   PULSAR_TENANT → pulsar.client.defaultTenant
 *   PULSAR_NAMESPACE → pulsar.client.defaultNamespace ("ns" or "tenant/ns")
 *   PULSAR_SUBSCRIPTION_NAMESPACE → pulsar.source.subscriptionNamespace
 *   PULSAR_AUTH_PLUGIN → pulsar.client.authPluginClassName
 *   PULSAR_AUTH_PARAMS → pulsar.client.authParams
 *   PULSAR_TLS_TRUST_CERTS_FILE_PATH → pulsar.client.tlsTrustCertsFilePath
 *   PULSAR_TLS_CERT_FILE_PATH → pulsar.client.tlsCertificateFilePath
 *   PULSAR_TLS_KEY_FILE_PATH → pulsar.client.tlsKeyFilePath
 *   PULSAR_TLS_HOSTNAME_VERIFICATION → pulsar.client.tlsHostnameVerificationEnable
 *   PULSAR_TLS_ALLOW_INSECURE_CONNECTION → pulsar.client.tlsAllowInsecureConnection
 * An empty variable counts as unset. errstr names the variable.
 */
PULSARC_API pulsarc_err_t pulsarc_connector_config_load_env(pulsarc_connector_config_t *cfg,
                                                            const char *const *envp,
                                                            char *errstr, size_t errlen);
/**
 * Reads a Java .properties file (FILE): key=value, key: value or
 * "key value"; # and ! comment lines; a line ending in an odd number of
 * backslashes continues on the next; \t \n \r \f \uXXXX and \<char>
 * escapes. The bytes are taken as UTF-8 (\u escapes become UTF-8).
 * Every key must be in the table; errstr gives "path:line: reason".
 * Nothing is applied unless the whole file is valid.
 */
PULSARC_API pulsarc_err_t
pulsarc_connector_config_load_properties_file(pulsarc_connector_config_t *cfg, const char *path,
                                              char *errstr, size_t errlen);
/** The same from text (borrowed, len bytes, no NUL needed). */
PULSARC_API pulsarc_err_t
pulsarc_connector_config_load_properties(pulsarc_connector_config_t *cfg, const char *text,
                                         size_t len, char *errstr, size_t errlen);
/** Applies n "key=value" strings (borrowed) as PAIR values (the -D of a JVM). */
PULSARC_API pulsarc_err_t pulsarc_connector_config_load_pairs(pulsarc_connector_config_t *cfg,
                                                              const char *const *pairs, size_t n,
                                                              char *errstr, size_t errlen);

/** load_args flag: leave arguments it does not know in argv instead of failing. */
#define PULSARC_CONNECTOR_ARGS_KEEP_UNKNOWN 0x1
/**
 * Reads program arguments; argv[0] is the program name and is skipped.
 * Named options (ARGS), each "--opt value" or "--opt=value":
 *   --service-url URL, --admin-url URL, --tenant T, --namespace NS
 *   ("tenant/ns" sets both), --subscription-namespace NS,
 *   --auth-plugin NAME, --auth-params PARAMS, --tls-trust-certs PATH,
 *   --tls-cert-file PATH, --tls-key-file PATH, --hostname-verification,
 *   --no-hostname-verification, --tls-allow-insecure;
 * -Dkey=value or -D key=value (PAIR); --properties-file PATH (FILE);
 * "--" ends the options. Without PULSARC_CONNECTOR_ARGS_KEEP_UNKNOWN any
 * other argument is an error naming it. With it, the arguments used are
 * removed from argv (order kept, argv[*argc] set to NULL) and *argc
 * updated, so the program can parse what is left.
 */
PULSARC_API pulsarc_err_t pulsarc_connector_config_load_args(pulsarc_connector_config_t *cfg,
                                                             int *argc, char **argv, int flags,
                                                             char *errstr, size_t errlen);

/** @name Builder shortcuts: each is pulsarc_connector_config_set() of one key. */
/**@{*/
PULSARC_API pulsarc_err_t pulsarc_connector_config_set_service_url(pulsarc_connector_config_t *cfg,
                                                                   const char *url, char *errstr,
                                                                   size_t errlen);
PULSARC_API pulsarc_err_t pulsarc_connector_config_set_admin_url(pulsarc_connector_config_t *cfg,
                                                                 const char *url, char *errstr,
                                                                 size_t errlen);
/** Default namespace; "tenant/ns" sets the default tenant too. */
PULSARC_API pulsarc_err_t pulsarc_connector_config_set_namespace(pulsarc_connector_config_t *cfg,
                                                                 const char *ns, char *errstr,
                                                                 size_t errlen);
PULSARC_API pulsarc_err_t pulsarc_connector_config_set_tenant(pulsarc_connector_config_t *cfg,
                                                              const char *tenant, char *errstr,
                                                              size_t errlen);
/** Where the source keeps its own bookkeeping (like a reader group's scope). */
PULSARC_API pulsarc_err_t
pulsarc_connector_config_set_subscription_namespace(pulsarc_connector_config_t *cfg,
                                                    const char *ns, char *errstr, size_t errlen);
/** Authentication method and its parameters (params may be NULL). */
PULSARC_API pulsarc_err_t pulsarc_connector_config_set_auth(pulsarc_connector_config_t *cfg,
                                                            const char *plugin, const char *params,
                                                            char *errstr, size_t errlen);
PULSARC_API pulsarc_err_t pulsarc_connector_config_set_tls_trust_certs(
    pulsarc_connector_config_t *cfg, const char *path, char *errstr, size_t errlen);
PULSARC_API pulsarc_err_t pulsarc_connector_config_set_hostname_verification(
    pulsarc_connector_config_t *cfg, int enable, char *errstr, size_t errlen);
/**@}*/

/**
 * The value of key as text (borrowed from cfg, valid until key is set
 * again or cfg destroyed): the value of the strongest source, else the
 * default; NULL for an unknown key or an unset key without default.
 */
PULSARC_API const char *pulsarc_connector_config_get(const pulsarc_connector_config_t *cfg,
                                                     const char *key);
/** The source of key's current value; -1 for an unknown key. */
PULSARC_API int pulsarc_connector_config_origin(const pulsarc_connector_config_t *cfg,
                                                const char *key);

/**
 * Checks the rules that span keys: pulsar.client.serviceUrl is set and
 * parses (several hosts allowed), the admin URL (when set) is http(s),
 * authParams and authParamMap are not both set, tenant and namespaces are
 * valid names. Every loader validates single values already.
 */
PULSARC_API pulsarc_err_t pulsarc_connector_config_validate(const pulsarc_connector_config_t *cfg,
                                                            char *errstr, size_t errlen);
/**
 * Writes the full name of topic (borrowed) into buf (len bytes):
 * "t" → persistent://<default tenant>/<default namespace>/t, "tenant/ns/t"
 * → persistent://tenant/ns/t; full names are checked and kept.
 */
PULSARC_API pulsarc_err_t pulsarc_connector_config_resolve_topic(
    const pulsarc_connector_config_t *cfg, const char *topic, char *buf, size_t len,
    char *errstr, size_t errlen);
/**
 * Writes "tenant/ns" of the source's bookkeeping namespace into buf:
 * pulsar.source.subscriptionNamespace ("ns" takes the default tenant), or
 * the default tenant/namespace when unset.
 */
PULSARC_API pulsarc_err_t pulsarc_connector_config_subscription_namespace(
    const pulsarc_connector_config_t *cfg, char *buf, size_t len);
/**
 * The full name of the bookkeeping topic local (borrowed), in the
 * subscription namespace: persistent://<subscription namespace>/<local>.
 */
PULSARC_API pulsarc_err_t pulsarc_connector_config_bookkeeping_topic(
    const pulsarc_connector_config_t *cfg, const char *local, char *buf, size_t len,
    char *errstr, size_t errlen);
/**
 * A core client configuration (owned by the caller on success) holding
 * every key the table maps onto the core: defaults first, then the values
 * that were set, weakest source first. Runs pulsarc_connector_config_validate().
 */
PULSARC_API pulsarc_err_t pulsarc_connector_config_to_client_conf(
    const pulsarc_connector_config_t *cfg, pulsarc_conf_t **confp, char *errstr, size_t errlen);

/**
 * A custom topic router for the sink (sink.custom-topic-router names one).
 * partitions (n entries, borrowed for the call) are the full names the sink
 * writes to; msg is borrowed. Returns the topic to write msg to: one of
 * partitions or any other full name, borrowed until the next call; NULL
 * fails the write. Runs on the thread that writes.
 */
typedef const char *(*pulsarc_connector_router_cb)(void *opaque, const pulsarc_msg_t *msg,
                                               const char *const *partitions, size_t n);
/** Registers router cb under name (copied); opaque is borrowed for cfg's lifetime. */
PULSARC_API pulsarc_err_t pulsarc_connector_config_add_router(pulsarc_connector_config_t *cfg,
                                                              const char *name,
                                                              pulsarc_connector_router_cb cb,
                                                              void *opaque);
/** Looks a router up; PULSARC_ERR_NOT_FOUND if no router has that name. */
PULSARC_API pulsarc_err_t pulsarc_connector_config_router(const pulsarc_connector_config_t *cfg,
                                                          const char *name,
                                                          pulsarc_connector_router_cb *cb,
                                                          void **opaque);
/**@}*/

/* ======================================================================== */
/** @name Table options
 *
 * The SQL connector's WITH (...) options ("connector" = "pulsar" or
 * "upsert-pulsar"), validated against a table schema into a table: the
 * topics, cursors, routing, formats and connector configuration a source or
 * sink runs with, and the codec between rows and messages.
 *
 * Physical column types: STRING, BYTES, BOOLEAN, INT, BIGINT, DOUBLE.
 * Metadata columns (METADATA FROM 'key'), readable: topic STRING,
 * message_size INT, producer_name STRING, message_id BYTES (the protobuf
 * MessageIdData), sequenceId BIGINT, publish_time and event_time
 * TIMESTAMP_LTZ (ms since the epoch), properties MAP; writable:
 * properties, event_time. Formats: raw (one value column) and json (a flat
 * object). The value holds every physical column except the key fields.
 */
/**@{*/
typedef enum pulsarc_table_type_e {
    PULSARC_TABLE_STRING = 1,
    PULSARC_TABLE_BYTES,
    PULSARC_TABLE_BOOLEAN,
    PULSARC_TABLE_INT,           /**< 32-bit */
    PULSARC_TABLE_BIGINT,        /**< 64-bit */
    PULSARC_TABLE_DOUBLE,
    PULSARC_TABLE_TIMESTAMP_LTZ, /**< ms since the epoch (metadata columns) */
    PULSARC_TABLE_MAP            /**< string → string (metadata column properties) */
} pulsarc_table_type_t;

typedef struct pulsarc_table_schema_s pulsarc_table_schema_t;

/** An empty schema for the table called name (copied). Owned by the caller. */
PULSARC_API pulsarc_table_schema_t *pulsarc_table_schema_new(const char *name);
PULSARC_API void pulsarc_table_schema_destroy(pulsarc_table_schema_t *schema);
/** Adds a physical column (name copied; duplicate names are refused). */
PULSARC_API pulsarc_err_t pulsarc_table_schema_add_column(pulsarc_table_schema_t *schema,
                                                          const char *name,
                                                          pulsarc_table_type_t type,
                                                          char *errstr, size_t errlen);
/**
 * Adds a metadata column: "name TYPE METADATA [FROM 'key'] [VIRTUAL]".
 * key NULL means the column name. Keys are checked by pulsarc_table_new().
 */
PULSARC_API pulsarc_err_t pulsarc_table_schema_add_metadata(pulsarc_table_schema_t *schema,
                                                            const char *name,
                                                            pulsarc_table_type_t type,
                                                            const char *key, int is_virtual,
                                                            char *errstr, size_t errlen);
/** PRIMARY KEY (cols...): n physical column names (borrowed, copied). */
PULSARC_API pulsarc_err_t pulsarc_table_schema_set_primary_key(pulsarc_table_schema_t *schema,
                                                               const char *const *cols, size_t n,
                                                               char *errstr, size_t errlen);

typedef struct pulsarc_table_s pulsarc_table_t;

/** What the table will be used as; some rules only hold for one side. */
#define PULSARC_TABLE_SOURCE 0x1
#define PULSARC_TABLE_SINK 0x2

/**
 * Parses the options text of a WITH clause (borrowed): optional "WITH",
 * then ( 'key' = 'value', ... ) with SQL string literals ('' is a quote),
 * -- and block comments allowed; and validates them against schema
 * (borrowed, copied). base (borrowed, may be NULL) is the configuration the
 * table's own is built on: service-url, admin-url, source.subscription-name
 * and every 'pulsar.*' option become BUILDER values of a copy of it, and
 * its routers serve sink.custom-topic-router. usage is a mix of
 * PULSARC_TABLE_SOURCE / _SINK. On success *tablep is owned by the caller.
 * On failure errstr holds the first rule broken, named after the option.
 */
PULSARC_API pulsarc_err_t pulsarc_table_new(const pulsarc_table_schema_t *schema,
                                            const char *with_text,
                                            const pulsarc_connector_config_t *base, int usage,
                                            pulsarc_table_t **tablep, char *errstr,
                                            size_t errlen);
/** The same from n key/value pairs: kv[2i] the key, kv[2i+1] the value (borrowed). */
PULSARC_API pulsarc_err_t pulsarc_table_new_kv(const pulsarc_table_schema_t *schema,
                                               const char *const *kv, size_t n,
                                               const pulsarc_connector_config_t *base, int usage,
                                               pulsarc_table_t **tablep, char *errstr,
                                               size_t errlen);
PULSARC_API void pulsarc_table_destroy(pulsarc_table_t *table);

/** 1 for 'upsert-pulsar'. */
PULSARC_API int pulsarc_table_is_upsert(const pulsarc_table_t *table);
/** The connector configuration of the table (borrowed from table). */
PULSARC_API const pulsarc_connector_config_t *pulsarc_table_config(const pulsarc_table_t *table);
/** Number of topics, and the i-th as a full name (borrowed), in the given order. */
PULSARC_API size_t pulsarc_table_topic_count(const pulsarc_table_t *table);
PULSARC_API const char *pulsarc_table_topic(const pulsarc_table_t *table, size_t i);
/**
 * source.subscription-name, or when unset a name derived from the topics
 * ("pulsarc-sql-<hash>" / "pulsarc-upsert-sql-<hash>"): the same table gets
 * the same subscription on every start, so none is orphaned. Borrowed.
 */
PULSARC_API const char *pulsarc_table_subscription_name(const pulsarc_table_t *table);
/** source.subscription-type as spelled in the option table ("Exclusive", ...). Borrowed. */
PULSARC_API const char *pulsarc_table_subscription_type(const pulsarc_table_t *table);

typedef enum pulsarc_table_cursor_kind_e {
    PULSARC_TABLE_CURSOR_EARLIEST = 1,
    PULSARC_TABLE_CURSOR_LATEST,
    PULSARC_TABLE_CURSOR_MESSAGE_ID,
    PULSARC_TABLE_CURSOR_PUBLISH_TIME,
    PULSARC_TABLE_CURSOR_NEVER /**< stop cursor only: read forever */
} pulsarc_table_cursor_kind_t;

/** A start or stop position. id is meaningful for MESSAGE_ID, time_ms for PUBLISH_TIME. */
typedef struct pulsarc_table_cursor_s {
    pulsarc_table_cursor_kind_t kind;
    pulsarc_msgid_t id;
    int64_t time_ms;
    int inclusive; /**< start: read id itself; stop: emit the message at the bound */
} pulsarc_table_cursor_t;

/** Start: earliest (default), latest, an id (inclusive) or a publish time (inclusive). */
PULSARC_API void pulsarc_table_start_cursor(const pulsarc_table_t *table, pulsarc_table_cursor_t *out);
/** Stop: never (default), latest (inclusive), at-id (exclusive), after-id (inclusive), at-time. */
PULSARC_API void pulsarc_table_stop_cursor(const pulsarc_table_t *table, pulsarc_table_cursor_t *out);

typedef enum pulsarc_table_routing_e {
    PULSARC_TABLE_ROUTING_ROUND_ROBIN = 1,
    PULSARC_TABLE_ROUTING_MESSAGE_KEY_HASH,
    PULSARC_TABLE_ROUTING_CUSTOM
} pulsarc_table_routing_t;
PULSARC_API pulsarc_table_routing_t pulsarc_table_routing_mode(const pulsarc_table_t *table);
/** sink.custom-topic-router or NULL (borrowed); the router is in the table's config. */
PULSARC_API const char *pulsarc_table_custom_router(const pulsarc_table_t *table);
/** sink.message-delay-interval in ms (0: no delay). */
PULSARC_API int64_t pulsarc_table_message_delay_ms(const pulsarc_table_t *table);
/** sink.parallelism, 0 when unset: how many sink writers the application runs
 * (writer i of N: pulsarc_sink_builder_set_writer); pulsarc starts none itself. */
PULSARC_API int pulsarc_table_sink_parallelism(const pulsarc_table_t *table);
/** "raw" or "json"; the key format is NULL without key fields. Borrowed. */
PULSARC_API const char *pulsarc_table_value_format(const pulsarc_table_t *table);
PULSARC_API const char *pulsarc_table_key_format(const pulsarc_table_t *table);
/** Key fields in key.fields order, and value fields in schema order (names borrowed). */
PULSARC_API size_t pulsarc_table_key_field_count(const pulsarc_table_t *table);
PULSARC_API const char *pulsarc_table_key_field(const pulsarc_table_t *table, size_t i);
PULSARC_API size_t pulsarc_table_value_field_count(const pulsarc_table_t *table);
PULSARC_API const char *pulsarc_table_value_field(const pulsarc_table_t *table, size_t i);

/* ---- rows ---- */
typedef struct pulsarc_table_row_s pulsarc_table_row_t;

typedef enum pulsarc_table_row_kind_e {
    PULSARC_TABLE_ROW_INSERT = 0,
    PULSARC_TABLE_ROW_UPDATE_BEFORE,
    PULSARC_TABLE_ROW_UPDATE_AFTER,
    PULSARC_TABLE_ROW_DELETE
} pulsarc_table_row_kind_t;

/** A row of table (borrowed; must outlive the row), every column NULL. Owned by the caller. */
PULSARC_API pulsarc_table_row_t *pulsarc_table_row_new(const pulsarc_table_t *table);
PULSARC_API void pulsarc_table_row_destroy(pulsarc_table_row_t *row);
/** Index of column name (physical or metadata), -1 if none. */
PULSARC_API int pulsarc_table_column_index(const pulsarc_table_t *table, const char *name);
PULSARC_API pulsarc_table_row_kind_t pulsarc_table_row_kind(const pulsarc_table_row_t *row);
PULSARC_API void pulsarc_table_row_set_kind(pulsarc_table_row_t *row, pulsarc_table_row_kind_t kind);
/**
 * Setters check the column's type: INVALID_ARG on a mismatch or a bad index.
 * Integers serve INT, BIGINT and TIMESTAMP_LTZ; bytes serve STRING and BYTES
 * (copied); map_put adds a pair to a MAP column (copied; value may be NULL).
 */
PULSARC_API pulsarc_err_t pulsarc_table_row_set_null(pulsarc_table_row_t *row, int col);
PULSARC_API pulsarc_err_t pulsarc_table_row_set_int(pulsarc_table_row_t *row, int col, int64_t v);
PULSARC_API pulsarc_err_t pulsarc_table_row_set_double(pulsarc_table_row_t *row, int col,
                                                       double v);
PULSARC_API pulsarc_err_t pulsarc_table_row_set_bool(pulsarc_table_row_t *row, int col, int v);
PULSARC_API pulsarc_err_t pulsarc_table_row_set_bytes(pulsarc_table_row_t *row, int col,
                                                      const void *p, size_t len);
PULSARC_API pulsarc_err_t pulsarc_table_row_set_string(pulsarc_table_row_t *row, int col,
                                                       const char *s);
PULSARC_API pulsarc_err_t pulsarc_table_row_map_put(pulsarc_table_row_t *row, int col,
                                                    const char *key, const char *value);
/** Getters: 1 when the column is NULL (or the index is bad). */
PULSARC_API int pulsarc_table_row_is_null(const pulsarc_table_row_t *row, int col);
PULSARC_API int64_t pulsarc_table_row_int(const pulsarc_table_row_t *row, int col);
PULSARC_API double pulsarc_table_row_double(const pulsarc_table_row_t *row, int col);
PULSARC_API int pulsarc_table_row_bool(const pulsarc_table_row_t *row, int col);
/** Bytes of a STRING/BYTES column (borrowed from row; NUL-terminated for STRING). */
PULSARC_API const void *pulsarc_table_row_bytes(const pulsarc_table_row_t *row, int col,
                                                size_t *len);
PULSARC_API size_t pulsarc_table_row_map_count(const pulsarc_table_row_t *row, int col);
/** The i-th pair of a MAP column (borrowed; *value may be NULL). */
PULSARC_API pulsarc_err_t pulsarc_table_row_map_at(const pulsarc_table_row_t *row, int col,
                                                   size_t i, const char **key,
                                                   const char **value);

/**
 * Row → message, as the sink writes it. The key fields, in the key format,
 * become the binary key (base64 with the b64 flag, like the Java client's
 * keyBytes); the other physical columns, in the value format, the payload;
 * writable metadata columns set properties (NULL values skipped) and the
 * event time (when > 0). In upsert mode DELETE and UPDATE_BEFORE rows give a
 * tombstone (null value) with the key. *msgp is owned by the caller.
 */
PULSARC_API pulsarc_err_t pulsarc_table_encode(const pulsarc_table_t *table,
                                               const pulsarc_table_row_t *row,
                                               pulsarc_msg_t **msgp, char *errstr,
                                               size_t errlen);
/**
 * Message (borrowed) → row, as the source reads it: key fields from the key,
 * value fields from the payload, metadata columns from the message. In
 * upsert mode an empty or null value gives a DELETE row holding only the
 * key fields; outside it, an error.
 */
PULSARC_API pulsarc_err_t pulsarc_table_decode(const pulsarc_table_t *table,
                                               const pulsarc_msg_t *msg,
                                               pulsarc_table_row_t *row, char *errstr,
                                               size_t errlen);
/**@}*/

#ifdef __cplusplus
}
#endif
#endif /* PULSARC_CONNECTOR_H */
