/*
 * Design notes: flag parsing and --help for every verb, from one table per
 * verb (cli_opt_t) plus the connection flags every verb shares.
 *
 *  - A flag may have several spellings ("-r,--rate"), including the
 *    pulsar-perf ones with one dash and several letters ("-db", "-time");
 *    matching is by whole spelling, so no letters are ever bundled.
 *    "--name=value" works for the double-dash spellings; "--" ends flags.
 *  - A flag's value is the next argument even when it starts with '-', so
 *    "-m -5" sends "-5".
 *  - Configuration flags are recorded, not applied (see cli.h); errors in
 *    their values surface when config.c applies them and still name the
 *    flag, because the flag as typed is the setting's origin.
 *  - Every error names the flag and the value and returns CLI_EXIT_USAGE.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- lists --------------------------------------------------------------- */

static int grow(void **v, size_t *cap, size_t n, size_t elem) {
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    void *nv = realloc(*v, ncap * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = ncap;
    return 0;
}

int cli_list_add(cli_list_t *l, const char *s) {
    if (grow((void **)&l->v, &l->cap, l->n, sizeof *l->v))
        return -1;
    l->v[l->n++] = s;
    return 0;
}

void cli_list_free(cli_list_t *l) {
    free(l->v);
    memset(l, 0, sizeof *l);
}

int cli_settings_add(cli_settings_t *s, const char *key, const char *value, const char *origin) {
    if (grow((void **)&s->v, &s->cap, s->n, sizeof *s->v))
        return -1;
    cli_setting_t *e = &s->v[s->n];
    e->key = strdup(key);
    e->value = strdup(value);
    e->origin = strdup(origin);
    if (!e->key || !e->value || !e->origin) {
        free(e->key), free(e->value), free(e->origin);
        return -1;
    }
    s->n++;
    return 0;
}

void cli_settings_free(cli_settings_t *s) {
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].key), free(s->v[i].value), free(s->v[i].origin);
    free(s->v);
    memset(s, 0, sizeof *s);
}

void cli_common_free(cli_common_t *c) {
    cli_settings_free(&c->flags);
    cli_list_free(&c->args);
}

/* ---- messages ------------------------------------------------------------ */

int cli_fail(const char *prog, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

int cli_usage(const char *prog, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see '%s --help')\n", prog);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_want_args(const cli_common_t *c, size_t lo, size_t hi, const char *what) {
    if (c->args.n < lo)
        return cli_usage(c->prog, "missing %s", what);
    if (c->args.n > hi)
        return cli_usage(c->prog, "unexpected argument '%s' (expected %s)", c->args.v[hi], what);
    return 0;
}

/* ---- numbers ------------------------------------------------------------- */

int cli_parse_int(const char *s, int64_t min, int64_t max, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_num(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* ---- the connection flags ----------------------------------------------- */

const cli_opt_t cli_conn_opts[] = {
    {"-u,--service-url", CLI_CONF, "URL", 0, "serviceUrl", NULL, 0, 0,
     "broker URL, pulsar://host:6650 or pulsar+ssl://host:6651"},
    {"--admin-url,--web-service-url", CLI_CONF, "URL", 0, "webServiceUrl", NULL, 0, 0,
     "admin (HTTP) URL, http://host:8080"},
    {"--client-conf", CLI_STR, "FILE", 0, NULL, NULL, 0, 0,
     "Java-style client.conf to read (default: $PULSAR_CLIENT_CONF)"},
    {"--auth-plugin", CLI_CONF, "NAME", 0, "authPlugin", NULL, 0, 0,
     "authentication plugin: token, tls, basic, oauth2, or the Java class name"},
    {"--auth-params", CLI_CONF, "PARAMS", 0, "authParams", NULL, 0, 0,
     "plugin parameters: token:JWT, file:///path, env:VAR, tlsCertFile:..,tlsKeyFile:.., "
     "{\"userId\":..,\"password\":..}, {\"issuerUrl\":..,\"privateKey\":\"file:///key.json\"}"},
    {"--tls-trust-certs", CLI_CONF, "FILE", 0, "tlsTrustCertsFilePath", NULL, 0, 0,
     "CA certificates (PEM) that verify the broker"},
    {"--tls-allow-insecure", CLI_CONF_SET, NULL, 0, "tlsAllowInsecureConnection", "true", 0, 0,
     "accept any broker certificate (tests only)"},
    {"--tls-no-hostname-verification", CLI_CONF_SET, NULL, 0, "tlsHostnameVerificationEnable",
     "false", 0, 0, "do not check the broker certificate's host name"},
    {"-C,--conf", CLI_CONF_KV, "KEY=VALUE", 0, NULL, NULL, 0, 0,
     "any pulsarc configuration key (repeatable; see docs/CONFIGURATION.md)"},
    {"-h,--help", CLI_HELP, NULL, 0, NULL, NULL, 0, 0, "this help"},
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};

/* ---- matching ------------------------------------------------------------ */

/* 1 if name is one of the comma-separated spellings (name of length n). */
static int spelled(const char *names, const char *name, size_t n) {
    for (const char *p = names; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !memcmp(p, name, n))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

static const cli_opt_t *find_opt(const cli_opt_t *tab, const char *name, size_t n) {
    for (; tab && tab->names; tab++)
        if (spelled(tab->names, name, n))
            return tab;
    return NULL;
}

static int takes_value(const cli_opt_t *o) {
    return o->kind != CLI_SWITCH && o->kind != CLI_CONF_SET && o->kind != CLI_HELP;
}

/* ---- storing ------------------------------------------------------------- */

typedef struct parse_ctx {
    const cli_spec_t *spec;
    cli_common_t *common;
    void *base;
} parse_ctx_t;

static int store_conf_kv(parse_ctx_t *pc, const char *flag, const char *val) {
    const char *eq = strchr(val, '=');
    if (!eq || eq == val)
        return cli_usage(pc->common->prog, "%s '%s': expected KEY=VALUE", flag, val);
    char key[256];
    size_t n = (size_t)(eq - val);
    if (n >= sizeof key)
        return cli_usage(pc->common->prog, "%s '%s': key too long", flag, val);
    memcpy(key, val, n);
    key[n] = '\0';
    char origin[300];
    snprintf(origin, sizeof origin, "%s %s", flag, val);
    return cli_settings_add(&pc->common->flags, key, eq + 1, origin) ? CLI_EXIT_RUNTIME : 0;
}

static int store_conf(parse_ctx_t *pc, const cli_opt_t *o, const char *flag, const char *val) {
    char origin[300];
    if (o->kind == CLI_CONF_SET)
        snprintf(origin, sizeof origin, "%s", flag);
    else
        snprintf(origin, sizeof origin, "%s %s", flag, val);
    const char *v = o->kind == CLI_CONF_SET ? o->fixed : val;
    return cli_settings_add(&pc->common->flags, o->key, v, origin) ? CLI_EXIT_RUNTIME : 0;
}

static int store_number(parse_ctx_t *pc, const cli_opt_t *o, void *field, const char *flag,
                        const char *val) {
    if (o->kind == CLI_INT) {
        if (cli_parse_int(val, o->min, o->max, (int64_t *)field) == 0)
            return 0;
        if (o->max == INT64_MAX)
            return cli_usage(pc->common->prog, "%s '%s': expected an integer >= %lld", flag, val,
                             (long long)o->min);
        return cli_usage(pc->common->prog, "%s '%s': expected an integer in %lld..%lld", flag,
                         val, (long long)o->min, (long long)o->max);
    }
    if (cli_parse_num(val, (double *)field) == 0)
        return 0;
    return cli_usage(pc->common->prog, "%s '%s': expected a number >= 0", flag, val);
}

/*
 * The field a table entry writes into. Connection flags write into the
 * common part; of them only --client-conf has a field (the others are
 * configuration settings or --help), so that is the one returned.
 */
static void *field_of(parse_ctx_t *pc, const cli_opt_t *o) {
    if (o >= cli_conn_opts && o < cli_conn_opts + sizeof cli_conn_opts / sizeof *cli_conn_opts)
        return (char *)pc->common + offsetof(cli_common_t, client_conf);
    return (char *)pc->base + o->off;
}

static int store(parse_ctx_t *pc, const cli_opt_t *o, const char *flag, const char *val) {
    void *field = field_of(pc, o);
    switch (o->kind) {
    case CLI_SWITCH:
        *(int *)field = 1;
        return 0;
    case CLI_INT:
    case CLI_NUM:
        return store_number(pc, o, field, flag, val);
    case CLI_STR:
        *(const char **)field = val;
        return 0;
    case CLI_LIST:
        return cli_list_add((cli_list_t *)field, val) ? CLI_EXIT_RUNTIME : 0;
    case CLI_CONF:
    case CLI_CONF_SET:
        return store_conf(pc, o, flag, val);
    case CLI_CONF_KV:
        return store_conf_kv(pc, flag, val);
    case CLI_HELP:
        pc->common->help = 1;
        return 0;
    }
    return 0;
}

/* ---- the parser ---------------------------------------------------------- */

static const cli_opt_t *lookup(parse_ctx_t *pc, const char *name, size_t n) {
    const cli_opt_t *o = find_opt(pc->spec->opts, name, n);
    if (o) {
        size_t idx = (size_t)(o - pc->spec->opts);
        if (idx < 64)
            pc->common->seen |= 1ull << idx;
        return o;
    }
    if (!pc->spec->conn) {
        o = find_opt(cli_conn_opts, name, n);
        return o && o->kind == CLI_HELP ? o : NULL;
    }
    return find_opt(cli_conn_opts, name, n);
}

/* Handles argv[*i], a flag; advances *i past its value. */
static int parse_flag(parse_ctx_t *pc, int argc, char **argv, int *i) {
    const char *arg = argv[*i];
    const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    const cli_opt_t *o = lookup(pc, arg, n);
    if (!o)
        return cli_usage(pc->common->prog, "unknown flag '%.*s'", (int)n, arg);
    char flag[64];
    snprintf(flag, sizeof flag, "%.*s", (int)n, arg);
    if (!takes_value(o)) {
        if (eq)
            return cli_usage(pc->common->prog, "%s takes no value (got '%s')", flag, eq + 1);
        return store(pc, o, flag, NULL);
    }
    if (eq)
        return store(pc, o, flag, eq + 1);
    if (*i + 1 >= argc)
        return cli_usage(pc->common->prog, "%s needs a value (%s)", flag, o->arg);
    return store(pc, o, flag, argv[++*i]);
}

int cli_parse(const cli_spec_t *spec, int argc, char **argv, cli_common_t *common, void *base) {
    parse_ctx_t pc = {spec, common, base};
    common->prog = spec->prog;
    int flags_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (!flags_done && !strcmp(a, "--"))
            flags_done = 1, rc = 0;
        else if (!flags_done && a[0] == '-' && a[1])
            rc = parse_flag(&pc, argc, argv, &i);
        else
            rc = cli_list_add(&common->args, a) ? CLI_EXIT_RUNTIME : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- help ---------------------------------------------------------------- */

static void print_opt(const cli_opt_t *o, FILE *out) {
    char left[128];
    size_t n = 0;
    for (const char *p = o->names; *p && n + 3 < sizeof left; p++) {
        left[n++] = *p;
        if (*p == ',')
            left[n++] = ' '; /* "-r, --rate" */
    }
    left[n] = '\0';
    if (o->arg)
        snprintf(left + n, sizeof left - n, " %s", o->arg);
    if (strlen(left) > 30)
        fprintf(out, "  %s\n  %-30s  %s\n", left, "", o->help);
    else
        fprintf(out, "  %-30s  %s\n", left, o->help);
}

static void print_table(const cli_opt_t *tab, FILE *out, int only_help) {
    for (; tab->names; tab++)
        if (!only_help || tab->kind == CLI_HELP)
            print_opt(tab, out);
}

void cli_print_opts(const cli_opt_t *tab, FILE *out) {
    print_table(tab, out, 0);
}

void cli_print_help(const cli_spec_t *spec, FILE *out) {
    fprintf(out, "Usage: %s %s\n\n%s\n", spec->prog, spec->usage, spec->summary);
    if (spec->opts && spec->opts->names) {
        fprintf(out, "\nFlags:\n");
        print_table(spec->opts, out, 0);
    }
    if (spec->conn) {
        fprintf(out, "\nConnection and configuration (flags > environment > client.conf):\n");
        print_table(cli_conn_opts, out, 0);
    } else {
        print_table(cli_conn_opts, out, 1);
    }
}
