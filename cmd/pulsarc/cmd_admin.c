/*
 * Design notes: `pulsarc admin GROUP ACTION [flags] ARGS`, a thin layer over
 * the admin client (pulsarc/admin.h): topics, subscriptions, tenants,
 * namespaces and a few namespace policies.
 *
 *  - One table lists every action with its arguments, the flags it takes
 *    and the function that runs it. The flag table given to the parser is
 *    filtered per action, so a flag that does not apply is an "unknown
 *    flag" error, and each action's --help shows exactly its flags.
 *  - Results are plain for scripts: lists one name per line, numbers
 *    alone, stats as one JSON object; nothing on stdout for create/delete.
 *  - The admin client has no authentication plugins of its own: a token
 *    from authPlugin/authParams (token:, file:, env:, JSON or bare) is
 *    passed as a bearer token, and TLS authentication params
 *    (tlsCertFile/tlsKeyFile) become the TLS key pair of the HTTP client.
 *  - Without libcurl (WITH_CURL=0) the verb exists and says so.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

#ifndef PULSARC_WITH_CURL

int cli_cmd_admin(int argc, char **argv) {
    (void)argc, (void)argv;
    return cli_fail("pulsarc admin", CLI_EXIT_RUNTIME,
                    "this build has no admin client (built with WITH_CURL=0)");
}

#else

#define UNSET INT64_MIN

typedef struct admin_opts {
    int64_t partitions, minutes, size_mb, tick_ms, to_time;
    const char *position, *cluster, *to_id;
    int force, partitioned, enable, disable;
} admin_opts_t;

enum {
    F_PARTITIONS = 1 << 0, F_FORCE = 1 << 1, F_PARTITIONED = 1 << 2, F_POSITION = 1 << 3,
    F_CLUSTER = 1 << 4, F_TO_ID = 1 << 5, F_TO_TIME = 1 << 6, F_MINUTES = 1 << 7,
    F_SIZE_MB = 1 << 8, F_ENABLE = 1 << 9, F_DISABLE = 1 << 10, F_TICK = 1 << 11,
};

#define OFF(f) offsetof(admin_opts_t, f)
/* Index i of this table is flag bit 1 << i above. */
static const cli_opt_t admin_flags[] = {
    {"-p,--partitions", CLI_INT, "N", OFF(partitions), NULL, NULL, 0, 1000000,
     "create a partitioned topic with N partitions (0: non-partitioned)"},
    {"-f,--force", CLI_SWITCH, NULL, OFF(force), NULL, NULL, 0, 0,
     "also when clients are connected (or, for namespaces, topics exist)"},
    {"--partitioned", CLI_SWITCH, NULL, OFF(partitioned), NULL, NULL, 0, 0,
     "list partitioned topics (base names) instead of topics and partitions"},
    {"--position", CLI_STR, "POS", OFF(position), NULL, NULL, 0, 0,
     "where the subscription starts: latest (default), earliest or ledger:entry"},
    {"--cluster", CLI_STR, "NAME", OFF(cluster), NULL, NULL, 0, 0,
     "allowed cluster (default: every cluster)"},
    {"--to-id", CLI_STR, "ID", OFF(to_id), NULL, NULL, 0, 0, "ledger:entry[:partition]"},
    {"--to-time", CLI_INT, "MS", OFF(to_time), NULL, NULL, 0, INT64_MAX,
     "publish time, ms since the epoch"},
    {"--minutes", CLI_INT, "N", OFF(minutes), NULL, NULL, -1, INT64_MAX,
     "retention time (-1: unlimited, 0: none)"},
    {"--size-mb", CLI_INT, "N", OFF(size_mb), NULL, NULL, -1, INT64_MAX,
     "retention size (-1: unlimited, 0: none)"},
    {"--enable", CLI_SWITCH, NULL, OFF(enable), NULL, NULL, 0, 0, "turn it on"},
    {"--disable", CLI_SWITCH, NULL, OFF(disable), NULL, NULL, 0, 0, "turn it off"},
    {"--tick-ms", CLI_INT, "MS", OFF(tick_ms), NULL, NULL, 1, INT64_MAX,
     "delayed-delivery tracker tick (default 1000)"},
};
#undef OFF
#define NFLAGS (sizeof admin_flags / sizeof *admin_flags)

typedef struct admin_ctx {
    pulsarc_admin_t *adm;
    const admin_opts_t *o;
    const char *const *args;
    const char *prog;
    char err[1024];
} admin_ctx_t;

typedef struct admin_action {
    const char *group, *name, *args;
    size_t nargs;
    unsigned flags;
    int (*run)(admin_ctx_t *a);
    const char *help;
} admin_action_t;

/* ---- helpers ------------------------------------------------------------- */

static int fail(admin_ctx_t *a, pulsarc_err_t e) {
    return cli_fail(a->prog, CLI_EXIT_RUNTIME, "%s (%s)", a->err[0] ? a->err : "failed",
                    pulsarc_errname(e));
}

static int done(admin_ctx_t *a, pulsarc_err_t e) {
    return e == PULSARC_OK ? CLI_EXIT_OK : fail(a, e);
}

static int print_list(admin_ctx_t *a, pulsarc_err_t e, char **list) {
    if (e != PULSARC_OK)
        return fail(a, e);
    for (char **p = list; p && *p; p++)
        printf("%s\n", *p);
    pulsarc_admin_list_free(list);
    return CLI_EXIT_OK;
}

/* --enable / --disable, exactly one. */
static int on_off(admin_ctx_t *a, int *on) {
    if (a->o->enable == a->o->disable)
        return cli_usage(a->prog, "give exactly one of --enable and --disable");
    *on = a->o->enable;
    return 0;
}

/* ---- topics -------------------------------------------------------------- */

static int topic_create(admin_ctx_t *a) {
    int64_t n = a->o->partitions == UNSET ? 0 : a->o->partitions;
    if (n > 0)
        return done(a, pulsarc_admin_create_partitioned_topic(a->adm, a->args[0], (int)n, a->err,
                                                              sizeof a->err));
    return done(a, pulsarc_admin_create_topic(a->adm, a->args[0], a->err, sizeof a->err));
}

static int topic_delete(admin_ctx_t *a) {
    int n = 0;
    pulsarc_err_t e = pulsarc_admin_partition_count(a->adm, a->args[0], &n, a->err, sizeof a->err);
    if (e != PULSARC_OK)
        return fail(a, e);
    if (n > 0)
        e = pulsarc_admin_delete_partitioned_topic(a->adm, a->args[0], a->o->force, a->err,
                                                   sizeof a->err);
    else
        e = pulsarc_admin_delete_topic(a->adm, a->args[0], a->o->force, a->err, sizeof a->err);
    return done(a, e);
}

static int topic_list(admin_ctx_t *a) {
    char **list = NULL;
    pulsarc_err_t e =
        a->o->partitioned
            ? pulsarc_admin_list_partitioned_topics(a->adm, a->args[0], &list, a->err,
                                                    sizeof a->err)
            : pulsarc_admin_list_topics(a->adm, a->args[0], &list, a->err, sizeof a->err);
    return print_list(a, e, list);
}

static int topic_partitions(admin_ctx_t *a) {
    int n = 0;
    pulsarc_err_t e = pulsarc_admin_partition_count(a->adm, a->args[0], &n, a->err, sizeof a->err);
    if (e == PULSARC_OK)
        printf("%d\n", n);
    return done(a, e);
}

static void print_stats(const pulsarc_admin_topic_stats_t *s) {
    printf("{\"msgInCounter\":%lld,\"storageSize\":%lld,\"backlogSize\":%lld,"
           "\"publishers\":%d,\"subscriptions\":{",
           (long long)s->msg_in_counter, (long long)s->storage_size,
           (long long)s->backlog_size, s->publishers);
    for (size_t i = 0; i < s->nsubs; i++) {
        const pulsarc_admin_sub_stats_t *u = &s->subs[i];
        fputs(i ? "," : "", stdout);
        cli_json_string(stdout, u->name, strlen(u->name));
        printf(":{\"msgBacklog\":%lld,\"backlogSize\":%lld,\"unackedMessages\":%lld,"
               "\"consumers\":%d}",
               (long long)u->msg_backlog, (long long)u->backlog_size, (long long)u->unacked,
               u->consumers);
    }
    printf("}}\n");
}

static int topic_stats(admin_ctx_t *a) {
    pulsarc_admin_topic_stats_t *s = NULL;
    pulsarc_err_t e = pulsarc_admin_topic_stats(a->adm, a->args[0], &s, a->err, sizeof a->err);
    if (e != PULSARC_OK)
        return fail(a, e);
    print_stats(s);
    pulsarc_admin_topic_stats_free(s);
    return CLI_EXIT_OK;
}

/* ---- subscriptions ------------------------------------------------------- */

static int parse_id(admin_ctx_t *a, const char *flag, const char *s, pulsarc_msgid_t *id) {
    if (!strcasecmp(s, "earliest"))
        *id = pulsarc_msgid_earliest();
    else if (!strcasecmp(s, "latest"))
        *id = pulsarc_msgid_latest();
    else if (pulsarc_msgid_parse(s, id) != PULSARC_OK)
        return cli_usage(a->prog, "%s '%s': expected earliest, latest or ledger:entry", flag, s);
    return 0;
}

static int sub_create(admin_ctx_t *a) {
    pulsarc_msgid_t pos, *pp = NULL;
    if (a->o->position) {
        int rc = parse_id(a, "--position", a->o->position, &pos);
        if (rc)
            return rc;
        pp = &pos;
    }
    return done(a, pulsarc_admin_create_subscription(a->adm, a->args[0], a->args[1], pp, a->err,
                                                     sizeof a->err));
}

static int sub_delete(admin_ctx_t *a) {
    return done(a, pulsarc_admin_delete_subscription(a->adm, a->args[0], a->args[1], a->o->force,
                                                     a->err, sizeof a->err));
}

static int sub_list(admin_ctx_t *a) {
    char **list = NULL;
    pulsarc_err_t e =
        pulsarc_admin_list_subscriptions(a->adm, a->args[0], &list, a->err, sizeof a->err);
    return print_list(a, e, list);
}

static int sub_backlog(admin_ctx_t *a) {
    int64_t n = 0;
    pulsarc_err_t e = pulsarc_admin_subscription_backlog(a->adm, a->args[0], a->args[1], &n,
                                                         a->err, sizeof a->err);
    if (e == PULSARC_OK)
        printf("%lld\n", (long long)n);
    return done(a, e);
}

static int sub_reset(admin_ctx_t *a) {
    int by_id = a->o->to_id != NULL, by_time = a->o->to_time != UNSET;
    if (by_id == by_time)
        return cli_usage(a->prog, "give exactly one of --to-id and --to-time");
    if (by_time)
        return done(a, pulsarc_admin_reset_cursor_to_time(a->adm, a->args[0], a->args[1],
                                                          a->o->to_time, a->err, sizeof a->err));
    pulsarc_msgid_t id;
    int rc = parse_id(a, "--to-id", a->o->to_id, &id);
    if (rc)
        return rc;
    return done(a, pulsarc_admin_reset_cursor_to_id(a->adm, a->args[0], a->args[1], &id, a->err,
                                                    sizeof a->err));
}

/* ---- tenants and namespaces ---------------------------------------------- */

static int tenant_create(admin_ctx_t *a) {
    return done(a, pulsarc_admin_create_tenant(a->adm, a->args[0], a->o->cluster, a->err,
                                               sizeof a->err));
}

static int tenant_delete(admin_ctx_t *a) {
    return done(a, pulsarc_admin_delete_tenant(a->adm, a->args[0], a->err, sizeof a->err));
}

static int ns_create(admin_ctx_t *a) {
    return done(a, pulsarc_admin_create_namespace(a->adm, a->args[0], a->err, sizeof a->err));
}

static int ns_delete(admin_ctx_t *a) {
    return done(a, pulsarc_admin_delete_namespace(a->adm, a->args[0], a->o->force, a->err,
                                                  sizeof a->err));
}

static int ns_set_retention(admin_ctx_t *a) {
    if (a->o->minutes == UNSET || a->o->size_mb == UNSET)
        return cli_usage(a->prog, "give both --minutes and --size-mb");
    return done(a, pulsarc_admin_namespace_set_retention(a->adm, a->args[0], a->o->minutes,
                                                         a->o->size_mb, a->err, sizeof a->err));
}

static int ns_get_retention(admin_ctx_t *a) {
    int64_t minutes = 0, mb = 0;
    pulsarc_err_t e = pulsarc_admin_namespace_get_retention(a->adm, a->args[0], &minutes, &mb,
                                                            a->err, sizeof a->err);
    if (e == PULSARC_OK)
        printf("{\"retentionTimeInMinutes\":%lld,\"retentionSizeInMB\":%lld}\n",
               (long long)minutes, (long long)mb);
    return done(a, e);
}

static int ns_set_dedup(admin_ctx_t *a) {
    int on = 0, rc = on_off(a, &on);
    if (rc)
        return rc;
    return done(a, pulsarc_admin_namespace_set_deduplication(a->adm, a->args[0], on, a->err,
                                                             sizeof a->err));
}

static int ns_get_dedup(admin_ctx_t *a) {
    int on = 0;
    pulsarc_err_t e = pulsarc_admin_namespace_get_deduplication(a->adm, a->args[0], &on, a->err,
                                                                sizeof a->err);
    if (e == PULSARC_OK)
        printf("%s\n", on ? "true" : "false");
    return done(a, e);
}

static int ns_set_delayed(admin_ctx_t *a) {
    int on = 0, rc = on_off(a, &on);
    if (rc)
        return rc;
    int64_t tick = a->o->tick_ms == UNSET ? 1000 : a->o->tick_ms;
    return done(a, pulsarc_admin_namespace_set_delayed_delivery(a->adm, a->args[0], on, tick,
                                                                a->err, sizeof a->err));
}

static int ns_get_delayed(admin_ctx_t *a) {
    int on = 0;
    int64_t tick = 0;
    pulsarc_err_t e = pulsarc_admin_namespace_get_delayed_delivery(a->adm, a->args[0], &on,
                                                                   &tick, a->err, sizeof a->err);
    if (e == PULSARC_OK)
        printf("{\"active\":%s,\"tickTimeMillis\":%lld}\n", on ? "true" : "false",
               (long long)tick);
    return done(a, e);
}

static const admin_action_t actions[] = {
    {"topics", "create", "TOPIC", 1, F_PARTITIONS, topic_create, "create a topic"},
    {"topics", "delete", "TOPIC", 1, F_FORCE, topic_delete,
     "delete a topic (a partitioned one with all its partitions)"},
    {"topics", "list", "NAMESPACE", 1, F_PARTITIONED, topic_list,
     "list the topics of tenant/namespace"},
    {"topics", "partitions", "TOPIC", 1, 0, topic_partitions,
     "print the number of partitions (0: not partitioned)"},
    {"topics", "stats", "TOPIC", 1, 0, topic_stats, "print counters and backlogs as JSON"},
    {"subscriptions", "create", "TOPIC SUBSCRIPTION", 2, F_POSITION, sub_create,
     "create a durable subscription"},
    {"subscriptions", "delete", "TOPIC SUBSCRIPTION", 2, F_FORCE, sub_delete,
     "delete a subscription"},
    {"subscriptions", "list", "TOPIC", 1, 0, sub_list, "list the subscriptions of a topic"},
    {"subscriptions", "backlog", "TOPIC SUBSCRIPTION", 2, 0, sub_backlog,
     "print the number of messages not yet acknowledged"},
    {"subscriptions", "reset-cursor", "TOPIC SUBSCRIPTION", 2, F_TO_ID | F_TO_TIME, sub_reset,
     "move the subscription to a message id or a publish time"},
    {"tenants", "create", "TENANT", 1, F_CLUSTER, tenant_create, "create a tenant"},
    {"tenants", "delete", "TENANT", 1, 0, tenant_delete, "delete a tenant without namespaces"},
    {"namespaces", "create", "TENANT/NAMESPACE", 1, 0, ns_create, "create a namespace"},
    {"namespaces", "delete", "TENANT/NAMESPACE", 1, F_FORCE, ns_delete, "delete a namespace"},
    {"namespaces", "set-retention", "TENANT/NAMESPACE", 1, F_MINUTES | F_SIZE_MB,
     ns_set_retention, "set the retention of acknowledged messages"},
    {"namespaces", "get-retention", "TENANT/NAMESPACE", 1, 0, ns_get_retention,
     "print the retention policy as JSON"},
    {"namespaces", "set-deduplication", "TENANT/NAMESPACE", 1, F_ENABLE | F_DISABLE,
     ns_set_dedup, "turn broker-side deduplication on or off"},
    {"namespaces", "get-deduplication", "TENANT/NAMESPACE", 1, 0, ns_get_dedup,
     "print true or false"},
    {"namespaces", "set-delayed-delivery", "TENANT/NAMESPACE", 1, F_ENABLE | F_DISABLE | F_TICK,
     ns_set_delayed, "turn delayed delivery on or off"},
    {"namespaces", "get-delayed-delivery", "TENANT/NAMESPACE", 1, 0, ns_get_delayed,
     "print the delayed-delivery policy as JSON"},
};
#define NACTIONS (sizeof actions / sizeof *actions)

/* ---- authentication for the HTTP client ---------------------------------- */

static void trim_into(char *dst, size_t len, const char *src, size_t n) {
    while (n && isspace((unsigned char)*src))
        src++, n--;
    while (n && isspace((unsigned char)src[n - 1]))
        n--;
    snprintf(dst, len, "%.*s", (int)n, src);
}

static int read_token_file(const char *path, char *tok, size_t len) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    trim_into(tok, len, buf, n);
    return 0;
}

/* The bearer token authParams names, into tok ("" when none). */
static int token_from_params(const char *params, char *tok, size_t len) {
    const char *q = strstr(params, "\"token\"");
    tok[0] = '\0';
    if (!strncmp(params, "token:", 6))
        trim_into(tok, len, params + 6, strlen(params + 6));
    else if (!strncmp(params, "file://", 7))
        return read_token_file(params + 7, tok, len);
    else if (!strncmp(params, "file:", 5))
        return read_token_file(params + 5, tok, len);
    else if (!strncmp(params, "env:", 4))
        return getenv(params + 4) ? (trim_into(tok, len, getenv(params + 4),
                                               strlen(getenv(params + 4))), 0)
                                  : -1;
    else if (q && (q = strchr(q + 7, '"')) && strchr(q + 1, '"'))
        trim_into(tok, len, q + 1, (size_t)(strchr(q + 1, '"') - q - 1));
    else
        trim_into(tok, len, params, strlen(params));
    return 0;
}

/* Copies "name:value" of a comma-separated list into conf key. */
static void tls_param(pulsarc_conf_t *conf, const char *params, const char *name, const char *key) {
    const char *p = strstr(params, name);
    if (!p || p[strlen(name)] != ':')
        return;
    p += strlen(name) + 1;
    char val[1024];
    snprintf(val, sizeof val, "%.*s", (int)strcspn(p, ","), p);
    pulsarc_conf_set(conf, key, val, NULL, 0);
}

static const char *origin_text(const cli_config_t *cfg, const char *key) {
    const char *o = cli_config_origin(cfg, key);
    return o ? o : "the default";
}

static int admin_auth(const char *prog, cli_config_t *cfg, pulsarc_admin_t *adm) {
    char plugin[512], params[4096], tok[16384];
    cli_config_get(cfg, "authPlugin", plugin, sizeof plugin);
    cli_config_get(cfg, "authParams", params, sizeof params);
    if (strcasestr(plugin, "tls")) {
        tls_param(cfg->conf, params, "tlsCertFile", "tlsCertificateFilePath");
        tls_param(cfg->conf, params, "tlsKeyFile", "tlsKeyFilePath");
        return 0;
    }
    if (!strcasestr(plugin, "token"))
        return 0;
    if (token_from_params(params, tok, sizeof tok))
        return cli_fail(prog, CLI_EXIT_USAGE, "authParams (from %s): cannot read the token",
                        origin_text(cfg, "authParams"));
    return adm ? (pulsarc_admin_set_token(adm, tok) ? CLI_EXIT_RUNTIME : 0) : 0;
}

static int open_admin(const cli_common_t *c, cli_config_t *cfg, pulsarc_admin_t **adm) {
    int rc = cli_config_build(c, NULL, NULL, stderr, cfg);
    if (rc)
        return rc;
    char url[512], err[512];
    if (!*cli_config_get(cfg, "webServiceUrl", url, sizeof url))
        rc = cli_usage(c->prog, "no admin URL: give --admin-url, set $PULSAR_ADMIN_URL, or "
                                "webServiceUrl in client.conf");
    else if (!(rc = admin_auth(c->prog, cfg, NULL)) &&
             pulsarc_admin_new(cfg->conf, adm, err, sizeof err) != PULSARC_OK)
        rc = cli_fail(c->prog, CLI_EXIT_USAGE, "cannot create the admin client: %s (%s from %s)",
                      err, url, origin_text(cfg, "webServiceUrl"));
    else if (!rc && (rc = admin_auth(c->prog, cfg, *adm)))
        pulsarc_admin_destroy(*adm);
    if (rc)
        cli_config_free(cfg);
    return rc;
}

/* ---- dispatch ------------------------------------------------------------ */

static const admin_action_t *find_action(const char *group, const char *name) {
    for (size_t i = 0; i < NACTIONS; i++)
        if (!strcmp(actions[i].group, group) && name && !strcmp(actions[i].name, name))
            return &actions[i];
    return NULL;
}

static void admin_help(FILE *out) {
    fputs("Usage: pulsarc admin GROUP ACTION [flags] ARGUMENTS\n\n"
          "Administration over the broker's HTTP admin API (webServiceUrl). Actions:\n",
          out);
    for (size_t i = 0; i < NACTIONS; i++) {
        char left[80];
        snprintf(left, sizeof left, "%s %s %s", actions[i].group, actions[i].name,
                 actions[i].args);
        fprintf(out, "  %-50s %s\n", left, actions[i].help);
    }
    fputs("\n'pulsarc admin GROUP ACTION --help' lists the flags of an action.\n", out);
}

static int run_action(const admin_action_t *act, const cli_spec_t *spec, admin_opts_t *o,
                      cli_common_t *c) {
    int rc = cli_want_args(c, act->nargs, act->nargs, act->args);
    cli_config_t cfg;
    admin_ctx_t a = {.o = o, .args = c->args.v, .prog = spec->prog};
    if (rc || (rc = open_admin(c, &cfg, &a.adm)))
        return rc;
    rc = act->run(&a);
    pulsarc_admin_destroy(a.adm);
    cli_config_free(&cfg);
    return rc;
}

static int run(const admin_action_t *act, int argc, char **argv) {
    cli_opt_t opts[NFLAGS + 1];
    size_t n = 0;
    for (size_t i = 0; i < NFLAGS; i++)
        if (act->flags & (1u << i))
            opts[n++] = admin_flags[i];
    memset(&opts[n], 0, sizeof opts[n]);
    char prog[96], usage[96];
    snprintf(prog, sizeof prog, "pulsarc admin %s %s", act->group, act->name);
    snprintf(usage, sizeof usage, "[flags] %s", act->args);
    cli_spec_t spec = {prog, usage, act->help, opts, 1};
    admin_opts_t o = {.partitions = UNSET, .minutes = UNSET, .size_mb = UNSET,
                      .tick_ms = UNSET, .to_time = UNSET};
    cli_common_t c = {0};
    int rc = cli_parse(&spec, argc, argv, &c, &o);
    if (!rc && c.help)
        cli_print_help(&spec, stdout);
    else if (!rc)
        rc = run_action(act, &spec, &o, &c);
    cli_common_free(&c);
    return rc;
}

int cli_cmd_admin(int argc, char **argv) {
    if (argc < 1)
        return admin_help(stderr), CLI_EXIT_USAGE;
    if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))
        return admin_help(stdout), CLI_EXIT_OK;
    const admin_action_t *act = find_action(argv[0], argc > 1 ? argv[1] : NULL);
    if (!act)
        return cli_usage("pulsarc admin", "unknown action '%s%s%s'", argv[0], argc > 1 ? " " : "",
                         argc > 1 ? argv[1] : "");
    return run(act, argc - 2, argv + 2);
}

#endif /* PULSARC_WITH_CURL */
