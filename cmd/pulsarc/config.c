/*
 * Design notes: where the tool's configuration comes from, and in which
 * order. Layers, lowest first:
 *
 *   1. pulsarc's own defaults (pulsarc_conf_new);
 *   2. the verb's defaults (perf produce blocks when its queue is full);
 *   3. client.conf, Java's format and key names: the file named by
 *      --client-conf, else by $PULSAR_CLIENT_CONF (none by default);
 *   4. the environment: $PULSAR_SERVICE_URL, $PULSAR_ADMIN_URL;
 *   5. flags, in command-line order (the last one wins).
 *
 * Every layer becomes a list of settings that carry their origin; they are
 * applied in that order to one pulsarc_conf_t, so a bad value is reported
 * as "--rate 5x: ...", "client.conf:12: ..." or "$PULSAR_SERVICE_URL: ...".
 *
 * client.conf: Java's defaults file has keys pulsarc does not have (key
 * stores, providers). Those are skipped; a warning is printed only when the
 * value asks for something pulsarc cannot do (useKeyStoreTls=true), so the
 * stock file loads silently. A key nobody knows is an error at file:line:
 * it is most likely a typo that would otherwise be ignored. Empty values
 * mean "unset", as they do for the Java tools.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Java client.conf names that differ from pulsarc's. */
static const struct {
    const char *java, *ours;
} renamed[] = {
    {"brokerServiceUrl", "serviceUrl"},
    {"tlsEnableHostnameVerification", "tlsHostnameVerificationEnable"},
};

/*
 * Java keys pulsarc has no equivalent for, with the value that needs none
 * (NULL: any non-empty value deserves a warning).
 */
static const struct {
    const char *key, *harmless;
} java_only[] = {
    {"useTls", "false"},          /* pulsarc: TLS follows the URL scheme */
    {"useKeyStoreTls", "false"},  {"tlsTrustStoreType", "JKS"},
    {"tlsTrustStorePath", NULL},  {"tlsTrustStorePassword", NULL},
    {"tlsKeyStoreType", "JKS"},   {"tlsKeyStorePath", NULL},
    {"tlsKeyStorePassword", NULL}, {"webserviceTlsProvider", NULL},
    {"tlsProvider", NULL},        {"sslProvider", NULL},
    {"tlsCiphers", NULL},         {"tlsProtocols", NULL},
    {"proxyServiceUrl", NULL},    {"proxyProtocol", NULL},
    {"listenerName", NULL},       {"socks5ProxyAddress", NULL},
    {"numIoThreads", NULL},       {"numListenerThreads", NULL},
    {"connectionsPerBroker", NULL}, {"useTcpNoDelay", "true"},
    {"statsIntervalSeconds", NULL}, {"concurrentLookupRequest", NULL},
    {"maxLookupRequest", NULL},   {"maxNumberOfRejectedRequestPerConnection", NULL},
    {"enableTransaction", "false"}, {"enableBusyWait", "false"},
    {"requestTimeoutMs", NULL},   {"lookupTimeoutMs", NULL},
    {"connectionMaxIdleSeconds", NULL},
};

/* 1 if pulsarc's property table has key (asked through the public API). */
static int pulsarc_has_key(const char *key) {
    static pulsarc_conf_t *probe;
    if (!probe)
        probe = pulsarc_conf_new();
    size_t len = 0;
    return probe && pulsarc_conf_get(probe, key, NULL, &len) != PULSARC_ERR_UNKNOWN_CONFIG;
}

const char *cli_clientconf_key(const char *java_key) {
    for (size_t i = 0; i < sizeof renamed / sizeof *renamed; i++)
        if (!strcmp(renamed[i].java, java_key))
            return renamed[i].ours;
    return pulsarc_has_key(java_key) ? java_key : NULL;
}

/* -1: not a Java-only key; 0: skip quietly; 1: skip with a warning. */
static int java_only_key(const char *key, const char *value) {
    for (size_t i = 0; i < sizeof java_only / sizeof *java_only; i++) {
        if (strcmp(java_only[i].key, key))
            continue;
        const char *ok = java_only[i].harmless;
        return ok && !strcasecmp(ok, value) ? 0 : 1;
    }
    return -1;
}

/* ---- the file format (java.util.Properties, the parts config files use) --- */

static char *trim(char *s) {
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Removes backslash escapes in place ("\:" → ":", "\t" → tab). */
static void unescape(char *s) {
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r != '\\' || !r[1]) {
            *w++ = *r;
            continue;
        }
        r++;
        *w++ = *r == 't' ? '\t' : *r == 'n' ? '\n' : *r == 'r' ? '\r' : *r;
    }
    *w = '\0';
}

/* Splits "key = value", "key: value" or "key value"; the key ends at an unescaped separator. */
static void split_kv(char *line, char **key, char **value) {
    char *p = line;
    while (*p && !strchr("=: \t", *p))
        p += (*p == '\\' && p[1]) ? 2 : 1;
    char *end = p;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '=' || *p == ':')
        p++;
    *end = '\0';
    *key = line;
    *value = trim(p);
    unescape(*key);
    unescape(*value);
}

/* 1 if the line ends in an odd number of backslashes (a continuation). */
static int continues(const char *s) {
    size_t n = strlen(s), k = 0;
    while (k < n && s[n - 1 - k] == '\\')
        k++;
    return k % 2 == 1;
}

/* Reads one logical line (joining continuations) into *buf; -1 at EOF, -2 out of memory. */
static int read_logical(FILE *f, char **buf, size_t *cap, int *lineno) {
    char *piece = NULL;
    size_t pcap = 0, len = 0;
    int got = 0;
    while (getline(&piece, &pcap, f) >= 0) {
        ++*lineno;
        char *t = got ? trim(piece) : piece;
        t[strcspn(t, "\r\n")] = '\0';
        size_t tl = strlen(t);
        if (len + tl + 1 > *cap) {
            char *nb = realloc(*buf, (len + tl + 1) * 2);
            if (!nb) {
                free(piece);
                return -2;
            }
            *buf = nb;
            *cap = (len + tl + 1) * 2;
        }
        memcpy(*buf + len, t, tl + 1);
        len += tl;
        got = 1;
        if (!continues(*buf))
            break;
        (*buf)[--len] = '\0';
    }
    free(piece);
    return got ? 0 : -1;
}

/* One key/value of the file at path:lineno. */
static int load_entry(const char *path, int lineno, const char *key, const char *value,
                      cli_settings_t *out, FILE *warn, char *err, size_t errlen) {
    if (!*value)
        return 0; /* "authPlugin=" means unset */
    const char *ours = cli_clientconf_key(key);
    if (!ours) {
        int j = java_only_key(key, value);
        if (j < 0) {
            snprintf(err, errlen, "%s:%d: unknown key '%s'", path, lineno, key);
            return CLI_EXIT_USAGE;
        }
        if (j > 0 && warn)
            fprintf(warn, "pulsarc: warning: %s:%d: '%s' is not supported by pulsarc, ignored\n",
                    path, lineno, key);
        return 0;
    }
    char origin[600];
    snprintf(origin, sizeof origin, "%s:%d (%s)", path, lineno, key);
    return cli_settings_add(out, ours, value, origin) ? CLI_EXIT_RUNTIME : 0;
}

int cli_clientconf_load(const char *path, cli_settings_t *out, FILE *warn, char *err,
                        size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open client.conf '%s': %s", path, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    char *buf = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (!rc) {
        int first = lineno + 1;
        int got = read_logical(f, &buf, &cap, &lineno);
        if (got == -2) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = CLI_EXIT_RUNTIME;
        }
        if (got < 0)
            break;
        char *line = trim(buf);
        if (!*line || *line == '#' || *line == '!')
            continue;
        char *key, *value;
        split_kv(line, &key, &value);
        rc = load_entry(path, first, key, value, out, warn, err, errlen);
    }
    free(buf);
    fclose(f);
    return rc;
}

/* ---- layering ------------------------------------------------------------ */

static const char *env_or_null(cli_getenv_fn env, const char *name) {
    const char *v = env(name);
    return v && *v ? v : NULL;
}

static const char *sys_getenv(const char *name) {
    return getenv(name);
}

static int add_env(cli_settings_t *all, cli_getenv_fn env) {
    static const struct {
        const char *var, *key;
    } vars[] = {{"PULSAR_SERVICE_URL", "serviceUrl"}, {"PULSAR_ADMIN_URL", "webServiceUrl"}};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = env_or_null(env, vars[i].var);
        char origin[64];
        snprintf(origin, sizeof origin, "$%s", vars[i].var);
        if (v && cli_settings_add(all, vars[i].key, v, origin))
            return CLI_EXIT_RUNTIME;
    }
    return 0;
}

static int add_all(cli_settings_t *all, const cli_settings_t *from) {
    for (size_t i = 0; from && i < from->n; i++)
        if (cli_settings_add(all, from->v[i].key, from->v[i].value, from->v[i].origin))
            return CLI_EXIT_RUNTIME;
    return 0;
}

static int collect(const cli_common_t *c, const cli_settings_t *defaults, cli_getenv_fn env,
                   FILE *warn, cli_settings_t *all) {
    int rc = add_all(all, defaults);
    const char *path = c->client_conf ? c->client_conf : env_or_null(env, "PULSAR_CLIENT_CONF");
    char err[700];
    if (!rc && path && (rc = cli_clientconf_load(path, all, warn, err, sizeof err)))
        return cli_fail(c->prog, rc, "%s", err);
    if (!rc)
        rc = add_env(all, env);
    if (!rc)
        rc = add_all(all, &c->flags);
    return rc ? cli_fail(c->prog, rc, "out of memory") : 0;
}

static int apply(const cli_common_t *c, cli_config_t *cfg) {
    for (size_t i = 0; i < cfg->applied.n; i++) {
        const cli_setting_t *s = &cfg->applied.v[i];
        char err[512];
        if (pulsarc_conf_set(cfg->conf, s->key, s->value, err, sizeof err) != PULSARC_OK)
            return cli_fail(c->prog, CLI_EXIT_USAGE, "%s: %s", s->origin, err);
    }
    return 0;
}

int cli_config_build(const cli_common_t *c, const cli_settings_t *defaults, cli_getenv_fn env,
                     FILE *warn, cli_config_t *out) {
    memset(out, 0, sizeof *out);
    out->conf = pulsarc_conf_new();
    if (!out->conf)
        return cli_fail(c->prog, CLI_EXIT_RUNTIME, "out of memory");
    int rc = collect(c, defaults, env ? env : sys_getenv, warn, &out->applied);
    if (!rc)
        rc = apply(c, out);
    if (rc)
        cli_config_free(out);
    return rc;
}

void cli_config_free(cli_config_t *cfg) {
    pulsarc_conf_destroy(cfg->conf);
    cli_settings_free(&cfg->applied);
    cfg->conf = NULL;
}

const char *cli_config_origin(const cli_config_t *cfg, const char *key) {
    for (size_t i = cfg->applied.n; i-- > 0;)
        if (!strcmp(cfg->applied.v[i].key, key))
            return cfg->applied.v[i].origin;
    return NULL;
}

const char *cli_config_get(const cli_config_t *cfg, const char *key, char *buf, size_t len) {
    size_t n = len;
    if (pulsarc_conf_get(cfg->conf, key, buf, &n) != PULSARC_OK && len)
        buf[0] = '\0';
    return buf;
}
