/*
 * Design notes: parses service URLs ("pulsar://h1:6650,h2:6650/") and the
 * "host:port" strings found in LOOKUP answers into fixed-size structs. No
 * allocation, no I/O (names are not resolved here), no shared state, so any
 * thread may call it. Every rejection names the offending piece and quotes
 * the whole input, because a bad URL usually comes straight from a user's
 * configuration and the message is all they get.
 */
#include "core/url.h"

#include <string.h>
#include <strings.h>

#include "core/err.h"

/* What is being parsed, for error messages. */
typedef struct url_ctx {
    const char *what; /* "service URL" or "address" */
    const char *text; /* the whole input */
    char *errstr;
    size_t errlen;
} url_ctx_t;

typedef struct url_scheme {
    const char *name;
    int tls, http;
    uint16_t port;
} url_scheme_t;

static const url_scheme_t url_schemes[] = {
    {"pulsar", 0, 0, 6650},
    {"pulsar+ssl", 1, 0, 6651},
    {"http", 0, 1, 80},
    {"https", 1, 1, 443},
};

#define URL_BAD(ctx, fmt, ...)                                                            \
    pc_seterr((ctx)->errstr, (ctx)->errlen, PULSARC_ERR_BAD_URL, fmt " in %s '%s'",      \
              __VA_ARGS__, (ctx)->what, (ctx)->text)

static int is_host_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '-' || c == '_';
}

static int is_v6_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
           c == ':' || c == '.';
}

/* Decimal 1..65535, nothing else. */
static pulsarc_err_t parse_port(const char *s, size_t n, uint16_t *port, const url_ctx_t *ctx) {
    if (n == 0)
        return URL_BAD(ctx, "%s", "empty port");
    unsigned long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return URL_BAD(ctx, "invalid port '%.*s'", (int)n, s);
        if (v <= 65535)
            v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v == 0 || v > 65535)
        return URL_BAD(ctx, "port '%.*s' out of range", (int)n, s);
    *port = (uint16_t)v;
    return PULSARC_OK;
}

/* A default of 0 means the caller requires an explicit port. */
static pulsarc_err_t use_default_port(uint16_t def_port, pc_hostport_t *hp,
                                      const url_ctx_t *ctx) {
    if (def_port == 0)
        return URL_BAD(ctx, "%s", "missing port");
    hp->port = def_port;
    return PULSARC_OK;
}

static pulsarc_err_t copy_host(const char *s, size_t n, pc_hostport_t *hp, const url_ctx_t *ctx) {
    if (n == 0)
        return URL_BAD(ctx, "%s", "empty host");
    if (n >= sizeof hp->host)
        return URL_BAD(ctx, "host name too long (%zu bytes, max %zu)", n, sizeof hp->host - 1);
    memcpy(hp->host, s, n);
    hp->host[n] = '\0';
    return PULSARC_OK;
}

/* "[v6]" or "[v6]:port"; s[0] is '['. */
static pulsarc_err_t parse_bracketed(const char *s, size_t n, uint16_t def_port,
                                     pc_hostport_t *hp, const url_ctx_t *ctx) {
    const char *rb = memchr(s, ']', n);
    if (!rb)
        return URL_BAD(ctx, "%s", "unterminated '['");
    size_t hn = (size_t)(rb - s - 1);
    for (size_t i = 0; i < hn; i++)
        if (!is_v6_char(s[1 + i]))
            return URL_BAD(ctx, "invalid IPv6 address '%.*s'", (int)hn, s + 1);
    if (hn > 0 && !memchr(s + 1, ':', hn))
        return URL_BAD(ctx, "invalid IPv6 address '%.*s'", (int)hn, s + 1);
    pulsarc_err_t err = copy_host(s + 1, hn, hp, ctx);
    if (err)
        return err;
    size_t rest = n - hn - 2;
    if (rest == 0)
        return use_default_port(def_port, hp, ctx);
    if (rb[1] != ':')
        return URL_BAD(ctx, "unexpected '%c' after ']'", rb[1]);
    return parse_port(rb + 2, rest - 1, &hp->port, ctx);
}

static pulsarc_err_t check_host_chars(const char *s, size_t n, const url_ctx_t *ctx) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (is_host_char((char)c))
            continue;
        if (c >= 0x20 && c < 0x7f)
            return URL_BAD(ctx, "invalid character '%c' in host '%.*s'", c, (int)n, s);
        return URL_BAD(ctx, "invalid byte 0x%02x in host '%.*s'", c, (int)n, s);
    }
    return PULSARC_OK;
}

/* "name", "name:port", "[v6]" or "[v6]:port" in s[0..n). */
static pulsarc_err_t parse_hostport(const char *s, size_t n, uint16_t def_port,
                                    pc_hostport_t *hp, const url_ctx_t *ctx) {
    if (n == 0)
        return URL_BAD(ctx, "%s", "empty host");
    if (s[0] == '[')
        return parse_bracketed(s, n, def_port, hp, ctx);
    const char *colon = memchr(s, ':', n);
    size_t hn = colon ? (size_t)(colon - s) : n;
    if (colon && memchr(colon + 1, ':', n - hn - 1))
        return URL_BAD(ctx, "IPv6 address '%.*s' must be written in brackets", (int)n, s);
    pulsarc_err_t err = copy_host(s, hn, hp, ctx);
    if (!err)
        err = check_host_chars(s, hn, ctx);
    if (err)
        return err;
    if (colon)
        return parse_port(colon + 1, n - hn - 1, &hp->port, ctx);
    return use_default_port(def_port, hp, ctx);
}

/* Splits "scheme://rest" and fills out's flags; *rest points past "://". */
static pulsarc_err_t parse_scheme(const char *url, pc_service_url_t *out, uint16_t *def_port,
                                  const char **rest, const url_ctx_t *ctx) {
    const char *sep = strstr(url, "://");
    if (!sep || sep == url)
        return pc_seterr(ctx->errstr, ctx->errlen, PULSARC_ERR_BAD_URL,
                         "missing scheme in service URL '%s' (expected pulsar://, "
                         "pulsar+ssl://, http:// or https://)",
                         url);
    size_t n = (size_t)(sep - url);
    for (size_t i = 0; i < sizeof url_schemes / sizeof url_schemes[0]; i++) {
        const url_scheme_t *s = &url_schemes[i];
        if (strlen(s->name) == n && strncasecmp(url, s->name, n) == 0) {
            out->tls = s->tls;
            out->http = s->http;
            *def_port = s->port;
            *rest = sep + 3;
            return PULSARC_OK;
        }
    }
    return pc_seterr(ctx->errstr, ctx->errlen, PULSARC_ERR_BAD_URL,
                     "unknown scheme '%.*s' in service URL '%s' (expected pulsar, "
                     "pulsar+ssl, http or https)",
                     (int)n, url, url);
}

/* Length of the host list; only a lone trailing '/' may follow it. */
static pulsarc_err_t host_list_len(const char *rest, size_t *len, const url_ctx_t *ctx) {
    const char *slash = strchr(rest, '/');
    *len = slash ? (size_t)(slash - rest) : strlen(rest);
    if (slash && slash[1] != '\0')
        return URL_BAD(ctx, "path '%s' not allowed (only a trailing '/')", slash);
    return PULSARC_OK;
}

static pulsarc_err_t parse_host_list(const char *s, size_t n, uint16_t def_port,
                                     pc_service_url_t *out, const url_ctx_t *ctx) {
    const char *end = s + n;
    for (;;) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *e = comma ? comma : end;
        if (out->nhosts == PC_URL_MAX_HOSTS)
            return URL_BAD(ctx, "too many hosts (max %d)", PC_URL_MAX_HOSTS);
        pulsarc_err_t err =
            parse_hostport(s, (size_t)(e - s), def_port, &out->hosts[out->nhosts], ctx);
        if (err)
            return err;
        out->nhosts++;
        if (!comma)
            return PULSARC_OK;
        s = comma + 1;
    }
}

static pulsarc_err_t service_url_parse(const char *url, pc_service_url_t *out,
                                       const url_ctx_t *ctx) {
    if (url[0] == '\0')
        return pc_seterr(ctx->errstr, ctx->errlen, PULSARC_ERR_BAD_URL,
                         "service URL is empty");
    const char *rest = NULL;
    uint16_t def_port = 0;
    size_t n = 0;
    pulsarc_err_t err = parse_scheme(url, out, &def_port, &rest, ctx);
    if (!err)
        err = host_list_len(rest, &n, ctx);
    if (!err)
        err = parse_host_list(rest, n, def_port, out, ctx);
    return err;
}

pulsarc_err_t pc_service_url_parse(const char *url, pc_service_url_t *out, char *errstr,
                                   size_t errlen) {
    if (!url || !out)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "service URL is NULL");
    url_ctx_t ctx = {"service URL", url, errstr, errlen};
    memset(out, 0, sizeof *out);
    pulsarc_err_t err = service_url_parse(url, out, &ctx);
    if (err)
        memset(out, 0, sizeof *out); /* never hand back half a result */
    return err;
}

pulsarc_err_t pc_hostport_parse(const char *s, uint16_t default_port, pc_hostport_t *out,
                                char *errstr, size_t errlen) {
    if (!s || !out)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "address is NULL");
    url_ctx_t ctx = {"address", s, errstr, errlen};
    memset(out, 0, sizeof *out);
    pulsarc_err_t err = parse_hostport(s, strlen(s), default_port, out, &ctx);
    if (err)
        memset(out, 0, sizeof *out);
    return err;
}
