/*
 * Design notes: the sources a connector configuration fills itself from —
 * the environment, a .properties file (or text), -D key=value pairs and
 * program arguments. Each loader stamps its values with its origin;
 * config.c decides what wins, so the loaders may run in any order.
 *
 * Every loader applies atomically (pc_cc_atomically): a file with one bad
 * line, or an argument list with one unknown option, changes nothing.
 * Errors name where the value came from — the variable, "path:line", the
 * -D pair or the option — and then the key.
 *
 * Variable and option names are tables below, next to the key each one
 * sets, so the header's documentation can be checked against them by the
 * tests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connector/config_int.h"
#include "core/err.h"
#include "pulsarc/connector.h"

extern char **environ;

#define PROPERTIES_MAX (16u << 20) /* a larger file is not a configuration */

/* Rewrites errstr as "<where>: <errstr>". */
static pulsarc_err_t prefixed(pulsarc_err_t err, const char *where, char *e, size_t el) {
    if (!err || !e || !el)
        return err;
    char inner[512];
    snprintf(inner, sizeof inner, "%s", e);
    return pc_seterr(e, el, err, "%s: %s", where, inner);
}

/* key=value from origin; unknown keys are errors naming the key. */
static pulsarc_err_t store_key(pulsarc_connector_config_t *c, int origin, const char *key,
                               const char *value, char *e, size_t el) {
    int id = pc_prop_find(&pc_cc_table, key);
    if (id < 0)
        return pc_seterr(e, el, PULSARC_ERR_UNKNOWN_CONFIG, "unknown configuration key '%s'", key);
    return pc_cc_store(c, id, origin, value, e, el);
}

/* ---- environment ------------------------------------------------------------ */

static const struct env_var {
    const char *name;
    pc_cc_id_t id;
} env_vars[] = {
    {"PULSAR_SERVICE_URL", PC_CC_CLIENT_SERVICE_URL},
    {"PULSAR_ADMIN_URL", PC_CC_ADMIN_URL},
    {"PULSAR_TENANT", PC_CC_CLIENT_DEFAULT_TENANT},
    {"PULSAR_NAMESPACE", PC_CC_CLIENT_DEFAULT_NAMESPACE},
    {"PULSAR_SUBSCRIPTION_NAMESPACE", PC_CC_SOURCE_SUBSCRIPTION_NAMESPACE},
    {"PULSAR_AUTH_PLUGIN", PC_CC_CLIENT_AUTH_PLUGIN},
    {"PULSAR_AUTH_PARAMS", PC_CC_CLIENT_AUTH_PARAMS},
    {"PULSAR_TLS_TRUST_CERTS_FILE_PATH", PC_CC_CLIENT_TLS_TRUST_CERTS},
    {"PULSAR_TLS_CERT_FILE_PATH", PC_CC_CLIENT_TLS_CERT_FILE},
    {"PULSAR_TLS_KEY_FILE_PATH", PC_CC_CLIENT_TLS_KEY_FILE},
    {"PULSAR_TLS_HOSTNAME_VERIFICATION", PC_CC_CLIENT_TLS_HOSTNAME_VERIFICATION},
    {"PULSAR_TLS_ALLOW_INSECURE_CONNECTION", PC_CC_CLIENT_TLS_ALLOW_INSECURE},
};

static const char *env_lookup(const char *const *envp, const char *name) {
    size_t n = strlen(name);
    for (; envp && *envp; envp++)
        if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

static pulsarc_err_t apply_env(pulsarc_connector_config_t *c, void *opaque, char *e, size_t el) {
    const char *const *envp = opaque;
    for (size_t i = 0; i < sizeof env_vars / sizeof env_vars[0]; i++) {
        const char *v = env_lookup(envp, env_vars[i].name);
        if (!v || !*v)
            continue; /* NAME= is the shell's way of leaving it unset */
        pulsarc_err_t err = pc_cc_store(c, (int)env_vars[i].id, PULSARC_CONNECTOR_ORIGIN_ENV, v, e, el);
        if (err)
            return prefixed(err, env_vars[i].name, e, el);
    }
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_connector_config_load_env(pulsarc_connector_config_t *c,
                                                const char *const *envp, char *e, size_t el) {
    if (!c)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "no configuration");
    const char *const *env = envp ? envp : (const char *const *)environ;
    return pc_cc_atomically(c, apply_env, (void *)env, e, el);
}

/* ---- properties -------------------------------------------------------------- */

typedef struct props_job {
    const char *text, *where;
    size_t len;
} props_job_t;

static pulsarc_err_t on_property(void *opaque, const char *key, const char *value, int line,
                                 char *e, size_t el) {
    pulsarc_connector_config_t *c = opaque;
    pulsarc_err_t err = store_key(c, PULSARC_CONNECTOR_ORIGIN_FILE, key, value, e, el);
    char where[32];
    snprintf(where, sizeof where, "line %d", line);
    return prefixed(err, where, e, el);
}

static pulsarc_err_t apply_properties(pulsarc_connector_config_t *c, void *opaque, char *e,
                                      size_t el) {
    const props_job_t *job = opaque;
    pulsarc_err_t err = pc_properties_parse(job->text, job->len, on_property, c, e, el);
    return prefixed(err, job->where, e, el);
}

pulsarc_err_t pulsarc_connector_config_load_properties(pulsarc_connector_config_t *c,
                                                       const char *text, size_t len, char *e,
                                                       size_t el) {
    if (!c || (!text && len))
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "configuration and text are required");
    props_job_t job = {text ? text : "", "properties", len};
    return pc_cc_atomically(c, apply_properties, &job, e, el);
}

/* The whole file into a heap buffer (*len bytes, NUL-terminated). */
static pulsarc_err_t read_file(const char *path, char **out, size_t *len, char *e, size_t el) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return pc_seterr(e, el, PULSARC_ERR_IO, "%s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf && !ferror(f) && !feof(f) && n < PROPERTIES_MAX) {
        char *grown = n == cap ? realloc(buf, (cap *= 2) + 1) : buf;
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        n += fread(buf + n, 1, cap - n, f);
    }
    int bad = ferror(f) || n >= PROPERTIES_MAX;
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return pc_seterr(e, el, buf ? PULSARC_ERR_IO : PULSARC_ERR_NOMEM, "%s: %s", path,
                         !buf ? "out of memory" : n >= PROPERTIES_MAX ? "file too large"
                                                                      : "read error");
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_connector_config_load_properties_file(pulsarc_connector_config_t *c,
                                                            const char *path, char *e,
                                                            size_t el) {
    if (!c || !path)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "configuration and path are required");
    char *text = NULL;
    size_t len = 0;
    pulsarc_err_t err = read_file(path, &text, &len, e, el);
    if (err)
        return err;
    props_job_t job = {text, path, len};
    err = pc_cc_atomically(c, apply_properties, &job, e, el);
    free(text);
    return err;
}

/* ---- -D pairs -------------------------------------------------------------------- */

/* One "key=value" as a PAIR value. */
static pulsarc_err_t store_pair(pulsarc_connector_config_t *c, const char *pair, char *e,
                                size_t el) {
    const char *eq = strchr(pair, '=');
    if (!eq || eq == pair)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "-D '%s': expected key=value", pair);
    char *key = strndup(pair, (size_t)(eq - pair));
    if (!key)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = store_key(c, PULSARC_CONNECTOR_ORIGIN_PAIR, key, eq + 1, e, el);
    free(key);
    return prefixed(err, "-D", e, el);
}

typedef struct pairs_job {
    const char *const *pairs;
    size_t n;
} pairs_job_t;

static pulsarc_err_t apply_pairs(pulsarc_connector_config_t *c, void *opaque, char *e,
                                 size_t el) {
    const pairs_job_t *job = opaque;
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < job->n && !err; i++)
        err = job->pairs[i] ? store_pair(c, job->pairs[i], e, el)
                            : pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "pair %zu is NULL", i);
    return err;
}

pulsarc_err_t pulsarc_connector_config_load_pairs(pulsarc_connector_config_t *c,
                                                  const char *const *pairs, size_t n, char *e,
                                                  size_t el) {
    if (!c || (!pairs && n))
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "configuration and pairs are required");
    pairs_job_t job = {pairs, n};
    return pc_cc_atomically(c, apply_pairs, &job, e, el);
}

/* ---- program arguments ------------------------------------------------------------ */

#define ARG_PROPERTIES_FILE (-1) /* not a key: loads a file */

static const struct arg_opt {
    const char *name; /* without the leading "--" */
    int id;           /* pc_cc_id_t, or ARG_PROPERTIES_FILE */
    const char *flag_value; /* NULL: takes a value; else the value the flag sets */
} arg_opts[] = {
    {"service-url", PC_CC_CLIENT_SERVICE_URL, NULL},
    {"admin-url", PC_CC_ADMIN_URL, NULL},
    {"tenant", PC_CC_CLIENT_DEFAULT_TENANT, NULL},
    {"namespace", PC_CC_CLIENT_DEFAULT_NAMESPACE, NULL},
    {"subscription-namespace", PC_CC_SOURCE_SUBSCRIPTION_NAMESPACE, NULL},
    {"auth-plugin", PC_CC_CLIENT_AUTH_PLUGIN, NULL},
    {"auth-params", PC_CC_CLIENT_AUTH_PARAMS, NULL},
    {"tls-trust-certs", PC_CC_CLIENT_TLS_TRUST_CERTS, NULL},
    {"tls-cert-file", PC_CC_CLIENT_TLS_CERT_FILE, NULL},
    {"tls-key-file", PC_CC_CLIENT_TLS_KEY_FILE, NULL},
    {"hostname-verification", PC_CC_CLIENT_TLS_HOSTNAME_VERIFICATION, "true"},
    {"no-hostname-verification", PC_CC_CLIENT_TLS_HOSTNAME_VERIFICATION, "false"},
    {"tls-allow-insecure", PC_CC_CLIENT_TLS_ALLOW_INSECURE, "true"},
    {"properties-file", ARG_PROPERTIES_FILE, NULL},
};

typedef struct args_job {
    int argc;
    char **argv;
    int flags;
    char *used; /* argc entries: 1 when the argument was ours */
} args_job_t;

static const struct arg_opt *find_opt(const char *name, size_t n) {
    for (size_t i = 0; i < sizeof arg_opts / sizeof arg_opts[0]; i++)
        if (strlen(arg_opts[i].name) == n && !strncmp(arg_opts[i].name, name, n))
            return &arg_opts[i];
    return NULL;
}

static pulsarc_err_t apply_opt(pulsarc_connector_config_t *c, const struct arg_opt *o,
                               const char *value, char *e, size_t el) {
    if (o->id == ARG_PROPERTIES_FILE)
        return pulsarc_connector_config_load_properties_file(c, value, e, el);
    pulsarc_err_t err = pc_cc_store(c, o->id, PULSARC_CONNECTOR_ORIGIN_ARGS, value, e, el);
    char where[64];
    snprintf(where, sizeof where, "--%s", o->name);
    return prefixed(err, where, e, el);
}

/* --name, --name=value or --name value at argv[*i]; advances *i past a value. */
static pulsarc_err_t take_long_opt(pulsarc_connector_config_t *c, args_job_t *job, int *i,
                                   char *e, size_t el) {
    const char *arg = job->argv[*i] + 2, *eq = strchr(arg, '=');
    const struct arg_opt *o = find_opt(arg, eq ? (size_t)(eq - arg) : strlen(arg));
    if (!o)
        return PULSARC_ERR_NOT_FOUND;
    job->used[*i] = 1;
    if (o->flag_value && eq)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "--%s takes no value", o->name);
    if (o->flag_value)
        return apply_opt(c, o, o->flag_value, e, el);
    if (!eq && *i + 1 >= job->argc)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "--%s needs a value", o->name);
    const char *value = eq ? eq + 1 : job->argv[++*i];
    job->used[*i] = 1;
    return apply_opt(c, o, value, e, el);
}

/* -Dkey=value or -D key=value. */
static pulsarc_err_t take_define(pulsarc_connector_config_t *c, args_job_t *job, int *i, char *e,
                                 size_t el) {
    const char *pair = job->argv[*i] + 2;
    job->used[*i] = 1;
    if (!*pair) {
        if (*i + 1 >= job->argc)
            return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "-D needs key=value");
        pair = job->argv[++*i];
        job->used[*i] = 1;
    }
    return store_pair(c, pair, e, el);
}

static pulsarc_err_t take_arg(pulsarc_connector_config_t *c, args_job_t *job, int *i, char *e,
                              size_t el) {
    const char *arg = job->argv[*i];
    pulsarc_err_t err = PULSARC_ERR_NOT_FOUND;
    if (!strncmp(arg, "-D", 2))
        err = take_define(c, job, i, e, el);
    else if (!strncmp(arg, "--", 2))
        err = take_long_opt(c, job, i, e, el);
    if (err != PULSARC_ERR_NOT_FOUND || (job->flags & PULSARC_CONNECTOR_ARGS_KEEP_UNKNOWN))
        return err == PULSARC_ERR_NOT_FOUND ? PULSARC_OK : err;
    return pc_seterr(e, el, PULSARC_ERR_UNKNOWN_CONFIG, "unknown argument '%s'", arg);
}

static pulsarc_err_t apply_args(pulsarc_connector_config_t *c, void *opaque, char *e,
                                size_t el) {
    args_job_t *job = opaque;
    memset(job->used, 0, (size_t)job->argc);
    for (int i = 1; i < job->argc; i++) {
        if (job->argv[i] && !strcmp(job->argv[i], "--"))
            break; /* the rest belongs to the program */
        pulsarc_err_t err = job->argv[i] ? take_arg(c, job, &i, e, el) : PULSARC_OK;
        if (err)
            return err;
    }
    return PULSARC_OK;
}

/* Drops the arguments used, keeping the order of the others. */
static void compact_args(args_job_t *job, int *argc) {
    int out = 0;
    for (int i = 0; i < job->argc; i++)
        if (!job->used[i])
            job->argv[out++] = job->argv[i];
    for (int i = out; i < job->argc; i++)
        job->argv[i] = NULL;
    *argc = out;
}

pulsarc_err_t pulsarc_connector_config_load_args(pulsarc_connector_config_t *c, int *argc,
                                                 char **argv, int flags, char *e, size_t el) {
    if (!c || !argc || *argc < 0 || (!argv && *argc))
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "configuration and arguments are required");
    args_job_t job = {*argc, argv, flags, calloc((size_t)*argc + 1, 1)};
    if (!job.used)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = pc_cc_atomically(c, apply_args, &job, e, el);
    if (!err && (flags & PULSARC_CONNECTOR_ARGS_KEEP_UNKNOWN))
        compact_args(&job, argc);
    free(job.used);
    return err;
}
