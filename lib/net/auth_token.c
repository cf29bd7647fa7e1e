/*
 * Design notes: token authentication (auth_method_name "token", the JWT as
 * auth data). The token comes from one of four sources, read afresh each
 * time the broker needs it (CONNECT, and every AUTH_CHALLENGE), so a token
 * rotated on disk or by the application is picked up without reconnecting:
 *   authParams "token:<jwt>" or a bare token   fixed
 *   authParams "file:///path"                 the file, re-read, trimmed
 *   authParams "env:NAME"                     the variable, re-read
 *   authParams {"token":"<jwt>"}              fixed (the JSON form of Java)
 *   pulsarc_conf_set_token_supplier()         the application's callback
 * credentials() runs on the loop thread (a file read or the supplier call
 * briefly blocks it). No message here ever contains the token itself.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "net/auth_plugin.h"

#define TOKEN_MAX (64 * 1024)

typedef enum { SRC_FIXED, SRC_FILE, SRC_ENV, SRC_SUPPLIER } token_src_t;

typedef struct token_auth {
    pc_auth_t base;
    token_src_t src;
    char *value; /* the token, the path or the variable name */
    pulsarc_token_supplier_cb cb;
    void *opaque;
} token_auth_t;

/* The span of s without surrounding white space (token files end in a newline). */
static size_t trim(const uint8_t *s, size_t len, size_t *start) {
    size_t b = 0;
    while (b < len && isspace(s[b]))
        b++;
    while (len > b && isspace(s[len - 1]))
        len--;
    *start = b;
    return len - b;
}

/* Hands back a trimmed copy of s[0..len), or an error naming where it came from. */
static pulsarc_err_t give(const uint8_t *s, size_t len, uint8_t **data, size_t *out,
                          const char *from, char *err, size_t errlen) {
    size_t b, n = trim(s, len, &b);
    if (n == 0)
        return pc_seterr(err, errlen, PULSARC_ERR_AUTH, "the token from %s is empty", from);
    *data = malloc(n);
    if (!*data)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    memcpy(*data, s + b, n);
    *out = n;
    return PULSARC_OK;
}

static pulsarc_err_t read_file(token_auth_t *t, uint8_t **data, size_t *len, char *err,
                               size_t errlen) {
    FILE *f = fopen(t->value, "rb");
    if (!f)
        return pc_seterr(err, errlen, PULSARC_ERR_AUTH, "cannot read the token file '%s': %s",
                         t->value, strerror(errno));
    uint8_t *buf = malloc(TOKEN_MAX + 1);
    size_t n = buf ? fread(buf, 1, TOKEN_MAX + 1, f) : 0;
    int bad = buf && (ferror(f) || n > TOKEN_MAX);
    fclose(f);
    pulsarc_err_t e;
    if (!buf)
        e = pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    else if (bad)
        e = pc_seterr(err, errlen, PULSARC_ERR_AUTH, "the token file '%s' is unreadable or "
                      "larger than %d bytes", t->value, TOKEN_MAX);
    else
        e = give(buf, n, data, len, "the token file", err, errlen);
    pc_auth_wipe(buf, TOKEN_MAX + 1);
    return e;
}

static pulsarc_err_t read_env(token_auth_t *t, uint8_t **data, size_t *len, char *err,
                              size_t errlen) {
    const char *v = getenv(t->value);
    if (!v)
        return pc_seterr(err, errlen, PULSARC_ERR_AUTH,
                         "the token variable %s is not set", t->value);
    return give((const uint8_t *)v, strlen(v), data, len, "the environment", err, errlen);
}

static pulsarc_err_t call_supplier(token_auth_t *t, uint8_t **data, size_t *len, char *err,
                                   size_t errlen) {
    uint8_t *buf = malloc(TOKEN_MAX);
    if (!buf)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    size_t n = TOKEN_MAX;
    pulsarc_err_t rc = t->cb(t->opaque, (char *)buf, &n);
    pulsarc_err_t e;
    if (rc != PULSARC_OK)
        e = pc_seterr(err, errlen, PULSARC_ERR_AUTH, "the token supplier failed: %s",
                      pulsarc_errname(rc));
    else if (n > TOKEN_MAX)
        e = pc_seterr(err, errlen, PULSARC_ERR_AUTH, "the token supplier returned more than %d "
                      "bytes", TOKEN_MAX);
    else
        e = give(buf, n, data, len, "the token supplier", err, errlen);
    pc_auth_wipe(buf, TOKEN_MAX);
    return e;
}

static pulsarc_err_t token_credentials(pc_auth_t *a, uint8_t **data, size_t *len, char *err,
                                       size_t errlen) {
    token_auth_t *t = (token_auth_t *)a;
    *data = NULL;
    *len = 0;
    switch (t->src) {
    case SRC_FILE:
        return read_file(t, data, len, err, errlen);
    case SRC_ENV:
        return read_env(t, data, len, err, errlen);
    case SRC_SUPPLIER:
        return call_supplier(t, data, len, err, errlen);
    default:
        return give((const uint8_t *)t->value, strlen(t->value), data, len, "authParams", err,
                    errlen);
    }
}

static void token_free(pc_auth_t *a) {
    token_auth_t *t = (token_auth_t *)a;
    if (t->value)
        pc_auth_wipe((uint8_t *)t->value, strlen(t->value));
    free(t);
}

/*
 * The "token" member of a flat JSON object, unescaped (\" \\ \/ only: a
 * JWT is base64url and dots). NULL when absent or malformed.
 */
static char *json_token(const char *s) {
    const char *k = strstr(s, "\"token\"");
    if (!k)
        return NULL;
    k += 7;
    while (isspace((unsigned char)*k))
        k++;
    if (*k++ != ':')
        return NULL;
    while (isspace((unsigned char)*k))
        k++;
    if (*k++ != '"')
        return NULL;
    size_t cap = strlen(k) + 1;
    char *out = malloc(cap), *o = out;
    for (; out && *k && *k != '"'; k++)
        *o++ = (*k == '\\' && k[1]) ? *++k : *k;
    if (out && *k != '"') {
        pc_auth_wipe((uint8_t *)out, cap);
        return NULL;
    }
    if (out)
        *o = '\0';
    return out;
}

static const char *skip_prefix(const char *s, const char *prefix) {
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* Sets t->src and t->value from authParams. */
static pulsarc_err_t parse_params(token_auth_t *t, const char *p, char *err, size_t errlen) {
    const char *rest;
    t->src = SRC_FIXED;
    if ((rest = skip_prefix(p, "token:")))
        t->value = strdup(rest);
    else if ((rest = skip_prefix(p, "file://")) || (rest = skip_prefix(p, "file:"))) {
        t->src = SRC_FILE;
        t->value = strdup(rest);
    } else if ((rest = skip_prefix(p, "env:"))) {
        t->src = SRC_ENV;
        t->value = strdup(rest);
    } else if (*p == '{') {
        if (!(t->value = json_token(p)))
            return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                             "authParams: JSON without a \"token\" string member");
    } else {
        t->value = strdup(p);
    }
    if (!t->value)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (!*t->value)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: AuthenticationToken needs token:<jwt>, file:///path, "
                         "env:NAME or {\"token\":\"...\"}");
    return PULSARC_OK;
}

pulsarc_err_t pc_auth_token_new(const char *params, pulsarc_token_supplier_cb cb, void *opaque,
                                pc_auth_t **out, char *err, size_t errlen) {
    *out = NULL;
    token_auth_t *t = calloc(1, sizeof *t);
    if (!t)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    t->base.method = "token";
    t->base.credentials = token_credentials;
    t->base.free = token_free;
    t->cb = cb;
    t->opaque = opaque;
    t->src = SRC_SUPPLIER;
    pulsarc_err_t e = cb ? PULSARC_OK : parse_params(t, params, err, errlen);
    uint8_t *probe = NULL;
    size_t n = 0;
    /* Fail at client creation, not at the first connect, when the source is unusable. */
    if (!e && t->src != SRC_SUPPLIER)
        e = token_credentials(&t->base, &probe, &n, err, errlen);
    pc_auth_wipe(probe, n);
    if (e) {
        token_free(&t->base);
        return e;
    }
    *out = &t->base;
    return PULSARC_OK;
}
