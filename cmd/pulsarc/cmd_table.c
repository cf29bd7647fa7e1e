/*
 * Design notes: `pulsarc table write|read --option k=v ...`, the SQL
 * connector's WITH (...) options driven from the shell.
 *
 *  - The options go unchanged to pulsarc_table_new_kv(), so validation and
 *    its messages are the library's (they name the option); a refused
 *    combination exits 2 with that message.
 *  - The schema comes from --column NAME:TYPE (physical), --metadata KEY
 *    (a metadata column named KEY, typed as the connector types it) and
 *    --primary-key COL; without --column there is one STRING column "value".
 *  - service-url / admin-url default to the connection flags, environment
 *    and client.conf (the usual precedence); an --option always wins.
 *  - write: every stdin line is one row. It is parsed with a helper table of
 *    the same value format (json: every physical column, raw: the value
 *    column), so there is one JSON/raw reader, the library's. A writable
 *    event_time metadata column is read as a BIGINT member of the same
 *    name. Rows go through pulsarc_table_encode() into a sink built from
 *    the table (topics, routing mode, delay; AT_LEAST_ONCE like the SQL
 *    sink); 'pulsar.client|producer|sink.*' options are forwarded to it.
 *  - read: a source built from the table (topics, start/stop cursors,
 *    subscription name and type, forwarded 'pulsar.source.*' options);
 *    every message is decoded into a row and printed as one JSON object,
 *    columns in schema order (BYTES as base64, MAP as an object). It ends
 *    at the stop cursor, after --count rows, or after --timeout idle
 *    seconds. Nothing is acknowledged unless --commit is given.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

typedef struct table_opts {
    cli_list_t options, columns, metadata, pkey;
    int64_t count;
    double timeout;
    int commit;
} table_opts_t;

#define OFF(f) offsetof(table_opts_t, f)
#define COMMON_TABLE_FLAGS                                                                    \
    {"-O,--option", CLI_LIST, "KEY=VALUE", OFF(options), NULL, NULL, 0, 0,                     \
     "a table option, as in WITH ('KEY' = 'VALUE') (repeatable)"},                            \
    {"--column", CLI_LIST, "NAME:TYPE", OFF(columns), NULL, NULL, 0, 0,                        \
     "physical column: STRING, BYTES, BOOLEAN, INT, BIGINT, DOUBLE (repeatable; "             \
     "default: value:STRING)"},                                                               \
    {"--metadata", CLI_LIST, "KEY", OFF(metadata), NULL, NULL, 0, 0,                           \
     "metadata column KEY: topic, message_size, producer_name, message_id, sequenceId, "      \
     "publish_time, event_time, properties (repeatable)"},                                    \
    {"--primary-key", CLI_LIST, "COL", OFF(pkey), NULL, NULL, 0, 0,                            \
     "PRIMARY KEY column (repeatable; upsert-pulsar needs one)"}

static const cli_opt_t write_flags[] = {
    COMMON_TABLE_FLAGS,
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};

static const cli_opt_t read_flags[] = {
    COMMON_TABLE_FLAGS,
    {"-n,--count", CLI_INT, "N", OFF(count), NULL, NULL, 0, INT64_MAX,
     "stop after N rows; 0 = no limit (default)"},
    {"--timeout", CLI_NUM, "SECONDS", OFF(timeout), NULL, NULL, 0, 0,
     "stop when no row came for this long; 0 = wait forever (default)"},
    {"--commit", CLI_SWITCH, NULL, OFF(commit), NULL, NULL, 0, 0,
     "acknowledge what was printed (checkpoint) before exiting"},
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};
#undef OFF

static const cli_spec_t write_spec = {
    "pulsarc table write", "--option KEY=VALUE ... [--column NAME:TYPE ...]",
    "Writes stdin to a Pulsar table: one row per line, a JSON object for\n"
    "value.format json, the line itself for raw. The options are the SQL connector's\n"
    "(connector, topics, service-url, value.format, key.format, key.fields,\n"
    "sink.topic-routing-mode, sink.message-delay-interval, pulsar.*). An invalid\n"
    "combination prints the connector's message and exits 2.",
    write_flags, 1,
};

static const cli_spec_t read_spec = {
    "pulsarc table read", "--option KEY=VALUE ... [--count N] [--column NAME:TYPE ...]",
    "Reads a Pulsar table through a source (source.start.*, source.stop.*,\n"
    "source.subscription-name/type) and prints one JSON object per row, physical\n"
    "and metadata columns in schema order.",
    read_flags, 1,
};

/* ---- schema ---------------------------------------------------------------- */

typedef struct col {
    const char *name;
    pulsarc_table_type_t type;
    int meta, is_virtual;
} col_t;

typedef struct tbl {
    const char *prog;
    col_t cols[64];
    size_t ncols;
    char name_buf[64][128];
    const char **kv; /* 2 * nkv */
    size_t nkv;
    char *kv_store;
    pulsarc_table_t *table;
} tbl_t;

static const struct {
    const char *name;
    pulsarc_table_type_t type;
} type_names[] = {{"STRING", PULSARC_TABLE_STRING}, {"VARCHAR", PULSARC_TABLE_STRING},
                  {"BYTES", PULSARC_TABLE_BYTES},   {"BOOLEAN", PULSARC_TABLE_BOOLEAN},
                  {"INT", PULSARC_TABLE_INT},       {"INTEGER", PULSARC_TABLE_INT},
                  {"BIGINT", PULSARC_TABLE_BIGINT}, {"DOUBLE", PULSARC_TABLE_DOUBLE}};

static const struct {
    const char *key;
    pulsarc_table_type_t type;
    int is_virtual;
} meta_keys[] = {{"topic", PULSARC_TABLE_STRING, 1},
                 {"message_size", PULSARC_TABLE_INT, 1},
                 {"producer_name", PULSARC_TABLE_STRING, 1},
                 {"message_id", PULSARC_TABLE_BYTES, 1},
                 {"sequenceId", PULSARC_TABLE_BIGINT, 1},
                 {"publish_time", PULSARC_TABLE_TIMESTAMP_LTZ, 1},
                 {"event_time", PULSARC_TABLE_TIMESTAMP_LTZ, 0},
                 {"properties", PULSARC_TABLE_MAP, 0}};

static int add_physical(tbl_t *t, const char *spec) {
    const char *colon = strrchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : 0;
    if (!colon || !n || n >= sizeof t->name_buf[0])
        return cli_usage(t->prog, "--column '%s': expected NAME:TYPE", spec);
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++) {
        if (strcasecmp(colon + 1, type_names[i].name))
            continue;
        memcpy(t->name_buf[t->ncols], spec, n);
        t->name_buf[t->ncols][n] = 0;
        t->cols[t->ncols] = (col_t){t->name_buf[t->ncols], type_names[i].type, 0, 0};
        t->ncols++;
        return 0;
    }
    return cli_usage(t->prog,
                     "--column '%s': unknown type '%s' (STRING, BYTES, BOOLEAN, INT, BIGINT, "
                     "DOUBLE)",
                     spec, colon + 1);
}

static int add_metadata(tbl_t *t, const char *key) {
    for (size_t i = 0; i < sizeof meta_keys / sizeof *meta_keys; i++) {
        if (strcmp(key, meta_keys[i].key))
            continue;
        t->cols[t->ncols++] = (col_t){key, meta_keys[i].type, 1, meta_keys[i].is_virtual};
        return 0;
    }
    return cli_usage(t->prog,
                     "--metadata '%s': expected topic, message_size, producer_name, message_id, "
                     "sequenceId, publish_time, event_time or properties",
                     key);
}

static int collect_columns(tbl_t *t, const table_opts_t *o) {
    int rc = 0;
    if (o->columns.n + o->metadata.n + 1 > sizeof t->cols / sizeof *t->cols)
        return cli_usage(t->prog, "too many columns");
    for (size_t i = 0; !rc && i < o->columns.n; i++)
        rc = add_physical(t, o->columns.v[i]);
    if (!rc && !o->columns.n)
        t->cols[t->ncols++] = (col_t){"value", PULSARC_TABLE_STRING, 0, 0};
    for (size_t i = 0; !rc && i < o->metadata.n; i++)
        rc = add_metadata(t, o->metadata.v[i]);
    return rc;
}

/* The schema: physical and metadata columns, and the primary key. */
static pulsarc_table_schema_t *make_schema(const tbl_t *t, const table_opts_t *o, char *err,
                                           size_t errlen) {
    pulsarc_table_schema_t *s = pulsarc_table_schema_new("pulsarc_cli");
    pulsarc_err_t e = s ? PULSARC_OK : PULSARC_ERR_NOMEM;
    for (size_t i = 0; !e && i < t->ncols; i++) {
        const col_t *c = &t->cols[i];
        e = c->meta ? pulsarc_table_schema_add_metadata(s, c->name, c->type, NULL, c->is_virtual,
                                                        err, errlen)
                    : pulsarc_table_schema_add_column(s, c->name, c->type, err, errlen);
    }
    if (!e && o->pkey.n)
        e = pulsarc_table_schema_set_primary_key(s, o->pkey.v, o->pkey.n, err, errlen);
    if (e && !*err)
        snprintf(err, errlen, "%s", pulsarc_strerror(e));
    if (e)
        pulsarc_table_schema_destroy(s), s = NULL;
    return s;
}

/* ---- options ---------------------------------------------------------------- */

static int has_key(const tbl_t *t, const char *key) {
    for (size_t i = 0; i < t->nkv; i++)
        if (!strcmp(t->kv[2 * i], key))
            return 1;
    return 0;
}

/* Splits every "k=v" into kv (keys and values point into kv_store). */
static int split_options(tbl_t *t, const table_opts_t *o) {
    size_t total = 0;
    for (size_t i = 0; i < o->options.n; i++)
        total += strlen(o->options.v[i]) + 1;
    t->kv_store = malloc(total + 1);
    t->kv = calloc(2 * (o->options.n + 2), sizeof *t->kv);
    if (!t->kv_store || !t->kv)
        return cli_fail(t->prog, CLI_EXIT_RUNTIME, "out of memory");
    char *p = t->kv_store;
    for (size_t i = 0; i < o->options.n; i++) {
        const char *s = o->options.v[i], *eq = strchr(s, '=');
        if (!eq || eq == s)
            return cli_usage(t->prog, "--option '%s': expected KEY=VALUE", s);
        memcpy(p, s, strlen(s) + 1);
        p[eq - s] = 0;
        t->kv[2 * t->nkv] = p, t->kv[2 * t->nkv + 1] = p + (eq - s) + 1;
        t->nkv++, p += strlen(s) + 1;
    }
    return 0;
}

/* Adds service-url / admin-url from flags, environment and client.conf when absent. */
static int default_urls(tbl_t *t, const cli_common_t *c, char *urls, size_t len) {
    cli_config_t cfg;
    int rc = cli_config_build(c, NULL, NULL, stderr, &cfg);
    if (rc)
        return rc;
    const char *want[][2] = {{"service-url", "serviceUrl"}, {"admin-url", "webServiceUrl"}};
    size_t half = len / 2;
    for (size_t i = 0; i < 2; i++) {
        char *buf = urls + i * half;
        const char *v = cli_config_get(&cfg, want[i][1], buf, half);
        if (v && *v && !has_key(t, want[i][0])) {
            t->kv[2 * t->nkv] = want[i][0], t->kv[2 * t->nkv + 1] = v;
            t->nkv++;
        }
    }
    cli_config_free(&cfg);
    return 0;
}

/* Builds the table; an option the connector refuses is a usage error (exit 2). */
static int open_table(tbl_t *t, const table_opts_t *o, const cli_common_t *c, int usage,
                      char *urls, size_t len) {
    char err[512] = "";
    int rc = collect_columns(t, o);
    if (!rc)
        rc = split_options(t, o);
    if (!rc)
        rc = default_urls(t, c, urls, len);
    if (rc)
        return rc;
    pulsarc_table_schema_t *s = make_schema(t, o, err, sizeof err);
    if (!s)
        return cli_fail(t->prog, CLI_EXIT_USAGE, "%s", err);
    pulsarc_err_t e =
        pulsarc_table_new_kv(s, t->kv, t->nkv, NULL, usage, &t->table, err, sizeof err);
    pulsarc_table_schema_destroy(s);
    if (e)
        return cli_fail(t->prog, CLI_EXIT_USAGE, "%s", err);
    return 0;
}

static void close_table(tbl_t *t) {
    pulsarc_table_destroy(t->table);
    free(t->kv);
    free(t->kv_store);
}

static int has_prefix(const char *s, const char *p) {
    return !strncmp(s, p, strlen(p));
}

static const char *cfg_get(const tbl_t *t, const char *key) {
    return pulsarc_connector_config_get(pulsarc_table_config(t->table), key);
}

/* ---- write ------------------------------------------------------------------ */

/* Sink serialiser: copies the encoded message (element) into the sink's. */
static pulsarc_err_t copy_msg(void *opaque, const void *element, pulsarc_msg_t *msg) {
    const pulsarc_msg_t *m = element;
    size_t klen;
    const void *key = pulsarc_msg_key_bytes(m, &klen);
    pulsarc_err_t e = PULSARC_OK;
    (void)opaque;
    if (pulsarc_msg_is_null_value(m))
        e = pulsarc_msg_set_null_value(msg);
    else
        e = pulsarc_msg_set_payload(msg, pulsarc_msg_payload(m), pulsarc_msg_len(m),
                                    PULSARC_MSG_F_COPY);
    if (!e && key)
        e = pulsarc_msg_set_key_bytes(msg, key, klen);
    for (size_t i = 0; !e && i < pulsarc_msg_property_count(m); i++) {
        const char *k, *v;
        if (!pulsarc_msg_property_at(m, i, &k, &v))
            e = pulsarc_msg_set_property(msg, k, v);
    }
    if (!e && pulsarc_msg_event_time(m))
        e = pulsarc_msg_set_event_time(msg, pulsarc_msg_event_time(m));
    return e;
}

/* 1 if the helper table parses column c from the input line. */
static int line_column(const tbl_t *t, const col_t *c, int json) {
    if (c->meta)
        return json && !strcmp(c->name, "event_time");
    if (json)
        return 1;
    for (size_t i = 0; i < pulsarc_table_value_field_count(t->table); i++)
        if (!strcmp(pulsarc_table_value_field(t->table, i), c->name))
            return 1;
    return 0;
}

/* The helper table reading one line in the value format into physical columns. */
static int open_parser(const tbl_t *t, pulsarc_table_t **parser) {
    char err[512] = "";
    int json = !strcmp(pulsarc_table_value_format(t->table), "json");
    pulsarc_table_schema_t *s = pulsarc_table_schema_new("pulsarc_cli_input");
    pulsarc_err_t e = s ? PULSARC_OK : PULSARC_ERR_NOMEM;
    for (size_t i = 0; !e && i < t->ncols; i++)
        if (line_column(t, &t->cols[i], json))
            e = pulsarc_table_schema_add_column(
                s, t->cols[i].name, t->cols[i].meta ? PULSARC_TABLE_BIGINT : t->cols[i].type, err,
                sizeof err);
    const char *kv[64] = {"connector", "pulsar", "topics", pulsarc_table_topic(t->table, 0),
                          "service-url", "pulsar://localhost:6650", "value.format",
                          json ? "json" : "raw"};
    size_t n = 4;
    for (size_t i = 0; i < t->nkv && n < 32; i++) {
        const char *k = t->kv[2 * i];
        if (has_prefix(k, "json.") || has_prefix(k, "raw.") || has_prefix(k, "value.json.") ||
            has_prefix(k, "value.raw."))
            kv[2 * n] = k, kv[2 * n + 1] = t->kv[2 * i + 1], n++;
    }
    if (!e)
        e = pulsarc_table_new_kv(s, kv, n, NULL, PULSARC_TABLE_SOURCE, parser, err, sizeof err);
    pulsarc_table_schema_destroy(s);
    if (e)
        return cli_fail(t->prog, CLI_EXIT_USAGE, "input format: %s",
                        *err ? err : pulsarc_strerror(e));
    return 0;
}

static pulsarc_err_t copy_value(const pulsarc_table_row_t *from, int fi, pulsarc_table_row_t *to,
                                int ti, pulsarc_table_type_t type) {
    size_t len;
    const void *p;
    if (pulsarc_table_row_is_null(from, fi))
        return pulsarc_table_row_set_null(to, ti);
    switch (type) {
    case PULSARC_TABLE_STRING:
    case PULSARC_TABLE_BYTES:
        p = pulsarc_table_row_bytes(from, fi, &len);
        return pulsarc_table_row_set_bytes(to, ti, p, len);
    case PULSARC_TABLE_BOOLEAN:
        return pulsarc_table_row_set_bool(to, ti, pulsarc_table_row_bool(from, fi));
    case PULSARC_TABLE_DOUBLE:
        return pulsarc_table_row_set_double(to, ti, pulsarc_table_row_double(from, fi));
    default:
        return pulsarc_table_row_set_int(to, ti, pulsarc_table_row_int(from, fi));
    }
}

/* Line → row of the main table, through the parser table. */
static pulsarc_err_t parse_line(const tbl_t *t, const pulsarc_table_t *parser, const char *line,
                                size_t len, pulsarc_table_row_t *row, char *err, size_t errlen) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_table_row_t *in = pulsarc_table_row_new(parser);
    pulsarc_err_t e = m && in ? PULSARC_OK : PULSARC_ERR_NOMEM;
    if (!e)
        e = pulsarc_msg_set_payload(m, line, len, PULSARC_MSG_F_COPY);
    if (!e)
        e = pulsarc_table_decode(parser, m, in, err, errlen);
    for (size_t i = 0; !e && i < t->ncols; i++) {
        int fi = pulsarc_table_column_index(parser, t->cols[i].name);
        int ti = pulsarc_table_column_index(t->table, t->cols[i].name);
        if (fi >= 0)
            e = copy_value(in, fi, row, ti, t->cols[i].meta ? PULSARC_TABLE_BIGINT : t->cols[i].type);
    }
    pulsarc_table_row_destroy(in);
    pulsarc_msg_destroy(m);
    return e;
}

/* Forwards options prefixed by one of prefixes through set (a sink or source setter). */
typedef pulsarc_err_t (*set_fn)(void *h, const char *k, const char *v, char *e, size_t el);

static int forward(const tbl_t *t, const char *const *prefixes, set_fn set, void *h) {
    char err[512];
    for (size_t i = 0; i < t->nkv; i++)
        for (size_t j = 0; prefixes[j]; j++)
            if (has_prefix(t->kv[2 * i], prefixes[j]) &&
                set(h, t->kv[2 * i], t->kv[2 * i + 1], err, sizeof err))
                return cli_fail(t->prog, CLI_EXIT_USAGE, "%s", err);
    return 0;
}

static pulsarc_err_t sink_set(void *h, const char *k, const char *v, char *e, size_t el) {
    return pulsarc_sink_builder_set_config(h, k, v, e, el);
}

static int configure_sink(const tbl_t *t, pulsarc_sink_builder_t *b) {
    static const char *const pfx[] = {"pulsar.client.", "pulsar.producer.", "pulsar.sink.", NULL};
    const char *topics[256];
    size_t n = pulsarc_table_topic_count(t->table);
    for (size_t i = 0; i < n && i < 256; i++)
        topics[i] = pulsarc_table_topic(t->table, i);
    const char *admin = cfg_get(t, "pulsar.admin.adminUrl");
    if (pulsarc_sink_builder_set_service_url(b, cfg_get(t, "pulsar.client.serviceUrl")) ||
        (admin && *admin && pulsarc_sink_builder_set_admin_url(b, admin)) ||
        pulsarc_sink_builder_set_topics(b, topics, n < 256 ? n : 256) ||
        pulsarc_sink_builder_set_serializer(b, copy_msg, NULL) ||
        pulsarc_sink_builder_set_delivery_guarantee(b, PULSARC_SINK_AT_LEAST_ONCE) ||
        pulsarc_sink_builder_set_delay(b, (uint64_t)pulsarc_table_message_delay_ms(t->table)))
        return cli_fail(t->prog, CLI_EXIT_USAGE, "cannot configure the sink");
    pulsarc_table_routing_t r = pulsarc_table_routing_mode(t->table);
    if (r == PULSARC_TABLE_ROUTING_CUSTOM)
        return cli_fail(t->prog, CLI_EXIT_USAGE,
                        "sink.custom-topic-router: the CLI has no custom routers");
    if (r == PULSARC_TABLE_ROUTING_MESSAGE_KEY_HASH &&
        pulsarc_sink_builder_set_routing_mode(b, PULSARC_SINK_KEY_HASH))
        return cli_fail(t->prog, CLI_EXIT_USAGE, "cannot set the routing mode");
    return forward(t, pfx, sink_set, b);
}

static int write_row(tbl_t *t, pulsarc_sink_t *sink, const pulsarc_table_t *parser,
                     const char *line, size_t len, uint64_t lineno) {
    char err[512] = "";
    pulsarc_table_row_t *row = pulsarc_table_row_new(t->table);
    pulsarc_msg_t *m = NULL;
    pulsarc_err_t e = row ? parse_line(t, parser, line, len, row, err, sizeof err)
                          : PULSARC_ERR_NOMEM;
    if (!e)
        e = pulsarc_table_encode(t->table, row, &m, err, sizeof err);
    int rc = e ? cli_fail(t->prog, CLI_EXIT_RUNTIME, "stdin:%llu: %s", (unsigned long long)lineno,
                          *err ? err : pulsarc_strerror(e))
               : 0;
    if (!rc && pulsarc_sink_write(sink, m, 0, err, sizeof err))
        rc = cli_fail(t->prog, CLI_EXIT_RUNTIME, "write failed: %s", err);
    pulsarc_msg_destroy(m);
    pulsarc_table_row_destroy(row);
    return rc;
}

static int write_lines(tbl_t *t, pulsarc_sink_t *sink, const pulsarc_table_t *parser) {
    char *line = NULL, err[512] = "";
    size_t cap = 0;
    ssize_t len;
    uint64_t n = 0, written = 0;
    int rc = 0;
    while (!rc && !cli_interrupted() && (len = getline(&line, &cap, stdin)) >= 0) {
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        rc = write_row(t, sink, parser, line, (size_t)len, ++n);
        written += !rc;
    }
    free(line);
    if (pulsarc_sink_flush(sink, -1, err, sizeof err))
        rc = rc ? rc : cli_fail(t->prog, CLI_EXIT_RUNTIME, "flush failed: %s", err);
    fprintf(stderr, "%s: %llu row(s) written\n", t->prog, (unsigned long long)written);
    return rc;
}

static int table_write(tbl_t *t) {
    char err[512] = "";
    pulsarc_table_t *parser = NULL;
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    pulsarc_sink_t *sink = NULL;
    int rc = b ? open_parser(t, &parser) : cli_fail(t->prog, CLI_EXIT_RUNTIME, "out of memory");
    if (!rc)
        rc = configure_sink(t, b);
    if (!rc && pulsarc_sink_builder_build(b, NULL, 0, &sink, err, sizeof err))
        rc = cli_fail(t->prog, CLI_EXIT_RUNTIME, "cannot open the sink: %s", err);
    if (!rc)
        rc = write_lines(t, sink, parser);
    if (sink && pulsarc_sink_close(sink, err, sizeof err) && !rc)
        rc = cli_fail(t->prog, CLI_EXIT_RUNTIME, "close failed: %s", err);
    pulsarc_sink_destroy(sink);
    pulsarc_sink_builder_destroy(b);
    pulsarc_table_destroy(parser);
    return rc;
}

/* ---- read ------------------------------------------------------------------- */

static pulsarc_start_cursor_t start_of(const pulsarc_table_t *table) {
    pulsarc_table_cursor_t c;
    pulsarc_table_start_cursor(table, &c);
    switch (c.kind) {
    case PULSARC_TABLE_CURSOR_LATEST:
        return pulsarc_start_cursor_latest();
    case PULSARC_TABLE_CURSOR_MESSAGE_ID:
        return pulsarc_start_cursor_message_id(c.id, c.inclusive);
    case PULSARC_TABLE_CURSOR_PUBLISH_TIME:
        return pulsarc_start_cursor_publish_time((uint64_t)c.time_ms);
    default:
        return pulsarc_start_cursor_earliest();
    }
}

static pulsarc_stop_cursor_t stop_of(const pulsarc_table_t *table) {
    pulsarc_table_cursor_t c;
    pulsarc_table_stop_cursor(table, &c);
    switch (c.kind) {
    case PULSARC_TABLE_CURSOR_LATEST:
        return pulsarc_stop_cursor_latest();
    case PULSARC_TABLE_CURSOR_MESSAGE_ID:
        return c.inclusive ? pulsarc_stop_cursor_after_id(c.id) : pulsarc_stop_cursor_at_id(c.id);
    case PULSARC_TABLE_CURSOR_PUBLISH_TIME:
        return pulsarc_stop_cursor_at_publish_time((uint64_t)c.time_ms);
    default:
        return pulsarc_stop_cursor_never();
    }
}

static pulsarc_err_t source_set(void *h, const char *k, const char *v, char *e, size_t el) {
    return pulsarc_source_conf_set(h, k, v, e, el);
}

static int configure_source(const tbl_t *t, pulsarc_source_conf_t *sc) {
    static const char *const pfx[] = {"pulsar.source.", NULL};
    char err[512] = "";
    pulsarc_start_cursor_t start = start_of(t->table);
    pulsarc_stop_cursor_t stop = stop_of(t->table);
    const char *admin = cfg_get(t, "pulsar.admin.adminUrl");
    pulsarc_err_t e = PULSARC_OK;
    for (size_t i = 0; !e && i < pulsarc_table_topic_count(t->table); i++)
        e = pulsarc_source_conf_add_topic(sc, pulsarc_table_topic(t->table, i));
    if (!e)
        e = pulsarc_source_conf_set(sc, "pulsar.consumer.subscriptionName",
                                    pulsarc_table_subscription_name(t->table), err, sizeof err);
    if (!e)
        e = pulsarc_source_conf_set(sc, "pulsar.consumer.subscriptionType",
                                    pulsarc_table_subscription_type(t->table), err, sizeof err);
    if (!e && admin && *admin)
        e = pulsarc_source_conf_set(sc, "pulsar.admin.adminUrl", admin, err, sizeof err);
    if (!e) /* short fetches keep Ctrl-C and --timeout prompt */
        e = pulsarc_source_conf_set(sc, "pulsar.source.maxFetchTime", "500", err, sizeof err);
    if (!e)
        e = pulsarc_source_conf_set_start_cursor(sc, &start);
    if (!e)
        e = pulsarc_source_conf_set_stop_cursor(sc, &stop);
    if (e)
        return cli_fail(t->prog, CLI_EXIT_USAGE, "%s", *err ? err : pulsarc_strerror(e));
    return forward(t, pfx, source_set, sc);
}

static void print_map(const pulsarc_table_row_t *row, int col) {
    putchar('{');
    for (size_t i = 0; i < pulsarc_table_row_map_count(row, col); i++) {
        const char *k, *v;
        if (pulsarc_table_row_map_at(row, col, i, &k, &v))
            continue;
        printf("%s", i ? "," : "");
        cli_json_string(stdout, k, strlen(k));
        putchar(':');
        if (v)
            cli_json_string(stdout, v, strlen(v));
        else
            fputs("null", stdout);
    }
    putchar('}');
}

static void print_value(const pulsarc_table_row_t *row, int col, pulsarc_table_type_t type) {
    size_t len;
    const void *p;
    if (pulsarc_table_row_is_null(row, col)) {
        fputs("null", stdout);
        return;
    }
    switch (type) {
    case PULSARC_TABLE_STRING:
        p = pulsarc_table_row_bytes(row, col, &len);
        cli_json_string(stdout, p, len);
        break;
    case PULSARC_TABLE_BYTES:
        p = pulsarc_table_row_bytes(row, col, &len);
        putchar('"'), cli_base64(stdout, p, len), putchar('"');
        break;
    case PULSARC_TABLE_BOOLEAN:
        fputs(pulsarc_table_row_bool(row, col) ? "true" : "false", stdout);
        break;
    case PULSARC_TABLE_DOUBLE:
        printf("%.17g", pulsarc_table_row_double(row, col));
        break;
    case PULSARC_TABLE_MAP:
        print_map(row, col);
        break;
    default:
        printf("%lld", (long long)pulsarc_table_row_int(row, col));
    }
}

static const char *kind_name(pulsarc_table_row_kind_t k) {
    static const char *const names[] = {"+I", "-U", "+U", "-D"};
    return names[k <= PULSARC_TABLE_ROW_DELETE ? k : 0];
}

static void print_row(const tbl_t *t, const pulsarc_table_row_t *row) {
    putchar('{');
    if (pulsarc_table_is_upsert(t->table))
        printf("\"op\":\"%s\",", kind_name(pulsarc_table_row_kind(row)));
    for (size_t i = 0; i < t->ncols; i++) {
        printf("%s", i ? "," : "");
        cli_json_string(stdout, t->cols[i].name, strlen(t->cols[i].name));
        putchar(':');
        print_value(row, pulsarc_table_column_index(t->table, t->cols[i].name), t->cols[i].type);
    }
    fputs("}\n", stdout);
    fflush(stdout);
}

static int print_msg(const tbl_t *t, const pulsarc_msg_t *m) {
    char err[512] = "";
    pulsarc_table_row_t *row = pulsarc_table_row_new(t->table);
    pulsarc_err_t e = row ? pulsarc_table_decode(t->table, m, row, err, sizeof err)
                          : PULSARC_ERR_NOMEM;
    if (!e)
        print_row(t, row);
    pulsarc_table_row_destroy(row);
    if (e)
        return cli_fail(t->prog, CLI_EXIT_RUNTIME, "cannot decode a message: %s",
                        *err ? err : pulsarc_strerror(e));
    return 0;
}

typedef struct read_state {
    uint64_t got, idle_since;
    int done;
} read_state_t;

/* One fetch; prints its rows. Sets st->done at the end of input, count or timeout. */
static int fetch_once(const tbl_t *t, const table_opts_t *o, pulsarc_source_t *src,
                      read_state_t *st) {
    pulsarc_msg_t *batch[100];
    size_t n = 0;
    int rc = 0;
    pulsarc_err_t e = pulsarc_source_fetch(src, batch, 100, &n);
    if (e == PULSARC_SOURCE_END_OF_INPUT)
        st->done = 1;
    else if (e)
        return cli_fail(t->prog, CLI_EXIT_RUNTIME, "fetch failed: %s", pulsarc_strerror(e));
    for (size_t i = 0; i < n; i++) {
        if (!rc && !st->done && (!o->count || st->got < (uint64_t)o->count))
            rc = print_msg(t, batch[i]), st->got++;
        pulsarc_msg_destroy(batch[i]);
    }
    if (n)
        st->idle_since = cli_now_ns();
    if ((o->count && st->got >= (uint64_t)o->count) ||
        (o->timeout > 0 && cli_now_ns() - st->idle_since >= (uint64_t)(o->timeout * 1e9)))
        st->done = 1;
    return rc;
}

static int commit(const tbl_t *t, pulsarc_source_t *src) {
    void *blob = NULL;
    size_t len;
    pulsarc_err_t e = pulsarc_source_checkpoint(src, 1, &blob, &len);
    free(blob);
    if (!e)
        e = pulsarc_source_checkpoint_complete(src, 1);
    return e ? cli_fail(t->prog, CLI_EXIT_RUNTIME, "commit failed: %s", pulsarc_strerror(e)) : 0;
}

static int read_rows(const tbl_t *t, const table_opts_t *o, pulsarc_client_t *client,
                     const pulsarc_source_conf_t *sc) {
    char err[512] = "";
    pulsarc_source_t *src;
    if (pulsarc_source_new(client, sc, NULL, 0, &src, err, sizeof err))
        return cli_fail(t->prog, CLI_EXIT_RUNTIME, "cannot open the source: %s", err);
    read_state_t st = {0, cli_now_ns(), 0};
    int rc = 0;
    while (!rc && !st.done && !cli_interrupted())
        rc = fetch_once(t, o, src, &st);
    if (!rc && o->commit)
        rc = commit(t, src);
    fprintf(stderr, "%s: %llu row(s) read%s\n", t->prog, (unsigned long long)st.got,
            cli_interrupted() ? " (interrupted)" : "");
    pulsarc_source_destroy(src);
    return rc;
}

static int table_read(tbl_t *t, const table_opts_t *o) {
    char err[512] = "";
    pulsarc_conf_t *conf = NULL;
    pulsarc_client_t *client = NULL;
    pulsarc_source_conf_t *sc = pulsarc_source_conf_new();
    int rc = sc ? configure_source(t, sc) : cli_fail(t->prog, CLI_EXIT_RUNTIME, "out of memory");
    if (!rc && pulsarc_connector_config_to_client_conf(pulsarc_table_config(t->table), &conf, err,
                                                       sizeof err))
        rc = cli_fail(t->prog, CLI_EXIT_USAGE, "%s", err);
    if (!rc && pulsarc_client_new(conf, &client, err, sizeof err))
        rc = cli_fail(t->prog, CLI_EXIT_RUNTIME, "cannot create the client: %s", err);
    if (!rc)
        rc = read_rows(t, o, client, sc);
    if (client)
        pulsarc_client_destroy(client);
    pulsarc_conf_destroy(conf);
    pulsarc_source_conf_destroy(sc);
    return rc;
}

/* ---- entry ------------------------------------------------------------------ */

static void free_opts(table_opts_t *o) {
    cli_list_free(&o->options);
    cli_list_free(&o->columns);
    cli_list_free(&o->metadata);
    cli_list_free(&o->pkey);
}

static int run_table(const cli_spec_t *spec, int usage, int argc, char **argv) {
    table_opts_t o = {0};
    cli_common_t c = {0};
    tbl_t t = {.prog = spec->prog};
    char urls[1024];
    int rc = cli_parse(spec, argc, argv, &c, &o);
    if (!rc && c.help)
        cli_print_help(spec, stdout);
    else if (!rc && !(rc = cli_want_args(&c, 0, 0, "")) &&
             !(rc = open_table(&t, &o, &c, usage, urls, sizeof urls))) {
        cli_trap_signals();
        rc = usage == PULSARC_TABLE_SINK ? table_write(&t) : table_read(&t, &o);
    }
    close_table(&t);
    free_opts(&o);
    cli_common_free(&c);
    return rc;
}

static void print_table_help(FILE *out) {
    fputs("Usage: pulsarc table write|read --option KEY=VALUE ... [flags]\n\n"
          "  write  rows from stdin into a Pulsar table (the SQL connector's options)\n"
          "  read   rows of a Pulsar table as JSON lines\n\n"
          "'pulsarc table write --help' and 'pulsarc table read --help' list the flags.\n",
          out);
}

int cli_cmd_table(int argc, char **argv) {
    if (argc < 1) {
        print_table_help(stderr);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))
        return print_table_help(stdout), CLI_EXIT_OK;
    if (!strcmp(argv[0], "write"))
        return run_table(&write_spec, PULSARC_TABLE_SINK, argc - 1, argv + 1);
    if (!strcmp(argv[0], "read"))
        return run_table(&read_spec, PULSARC_TABLE_SOURCE, argc - 1, argv + 1);
    return cli_usage("pulsarc table", "unknown command '%s': expected write or read", argv[0]);
}
