/*
 * Design notes: `pulsarc tableview`, the latest value of every key of a
 * topic as a table view sees it (all partitions, the compacted view), read
 * to the topic's end and printed once, sorted by key so the output of two
 * runs compares with diff. Built on pulsarc_tableview_* like any
 * application; the entries are copied out of the for_each callback (whose
 * pointers are borrowed for the call) and printed after it.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct tv_opts {
    const char *format;
} tv_opts_t;

static const cli_opt_t tableview_flags[] = {
    {"-o,--format", CLI_STR, "FORMAT", offsetof(tv_opts_t, format), NULL, NULL, 0, 0,
     "raw (KEY, a tab, the value and a newline; the default) or json ({\"key\",\"value\"} per line)"},
    {"--receiver-queue-size", CLI_CONF, "N", 0, "receiverQueueSize", NULL, 0, 0,
     "messages prefetched from the broker per partition"},
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};

static const cli_spec_t tableview_spec = {
    "pulsarc tableview", "[flags] TOPIC",
    "Reads every partition of TOPIC to its end with a table view (the compacted view,\n"
    "as the Java client's TableView) and prints the latest value of each key, sorted by\n"
    "key. Keys deleted by an empty or null value are not printed.",
    tableview_flags, 1,
};

typedef struct entry {
    char *key;
    void *value;
    size_t len;
} entry_t;

typedef struct entries {
    entry_t *v;
    size_t n, cap;
    int oom;
} entries_t;

static void collect(pulsarc_tableview_t *tv, const char *key, const void *value, size_t len,
                    void *opaque) {
    (void)tv;
    entries_t *e = opaque;
    if (e->oom)
        return;
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 64;
        entry_t *v = realloc(e->v, cap * sizeof *v);
        if (!v) {
            e->oom = 1;
            return;
        }
        e->v = v, e->cap = cap;
    }
    entry_t *x = &e->v[e->n];
    x->key = strdup(key);
    x->value = malloc(len ? len : 1);
    x->len = len;
    if (!x->key || !x->value) {
        free(x->key), free(x->value);
        e->oom = 1;
        return;
    }
    memcpy(x->value, value, len);
    e->n++;
}

static int by_key(const void *a, const void *b) {
    return strcmp(((const entry_t *)a)->key, ((const entry_t *)b)->key);
}

static void print_entry(const entry_t *x, cli_format_t f) {
    if (f == CLI_FMT_JSON) {
        fputs("{\"key\":", stdout);
        cli_json_string(stdout, x->key, strlen(x->key));
        fputs(",\"value\":", stdout);
        cli_json_string(stdout, x->value, x->len);
        fputs("}\n", stdout);
    } else {
        printf("%s\t", x->key);
        fwrite(x->value, 1, x->len, stdout);
        fputc('\n', stdout);
    }
}

static int print_view(const cli_common_t *c, pulsarc_tableview_t *tv, cli_format_t f) {
    entries_t e = {0};
    pulsarc_tableview_for_each(tv, collect, &e);
    int rc = e.oom ? cli_fail(c->prog, CLI_EXIT_RUNTIME, "out of memory") : 0;
    if (!rc) {
        qsort(e.v, e.n, sizeof *e.v, by_key);
        for (size_t i = 0; i < e.n; i++)
            print_entry(&e.v[i], f);
        fprintf(stderr, "%s: %zu key(s)\n", c->prog, e.n);
    }
    for (size_t i = 0; i < e.n; i++)
        free(e.v[i].key), free(e.v[i].value);
    free(e.v);
    return rc;
}

static int run_view(const cli_common_t *c, cli_format_t f) {
    cli_config_t cfg;
    pulsarc_client_t *client;
    int rc = cli_open_client(c, NULL, &cfg, &client);
    if (rc)
        return rc;
    pulsarc_tableview_t *tv;
    char err[512];
    const char *topic = c->args.v[0];
    if (pulsarc_tableview_new(client, topic, cfg.conf, &tv, err, sizeof err)) {
        rc = cli_fail(c->prog, CLI_EXIT_RUNTIME, "cannot read '%s': %s", topic, err);
    } else {
        rc = print_view(c, tv, f);
        pulsarc_tableview_destroy(tv);
    }
    pulsarc_client_destroy(client);
    cli_config_free(&cfg);
    return rc;
}

int cli_cmd_tableview(int argc, char **argv) {
    tv_opts_t o = {0};
    cli_common_t c = {0};
    cli_format_t f = CLI_FMT_RAW;
    int rc = cli_parse(&tableview_spec, argc, argv, &c, &o);
    if (!rc && c.help)
        cli_print_help(&tableview_spec, stdout);
    else if (!rc && !(rc = cli_want_args(&c, 1, 1, "TOPIC"))) {
        if (o.format && (cli_format_parse(o.format, &f) || f == CLI_FMT_HEX))
            rc = cli_usage(tableview_spec.prog, "--format '%s': expected raw or json", o.format);
        else
            rc = run_view(&c, f);
    }
    cli_common_free(&c);
    return rc;
}
