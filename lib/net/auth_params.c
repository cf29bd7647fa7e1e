/*
 * Design notes: the JSON form of authParams, a flat object of scalar
 * members ({"userId":"u","password":"p"}, {"issuerUrl":"https://..."}),
 * parsed strictly so a typo is reported with its offset instead of being
 * half-read. Written here rather than taken from json-c because the basic
 * provider must work in builds without libcurl/json-c (WITH_CURL=0), and
 * because every buffer that held a value is ours to wipe: the OAuth2 key
 * file and the issuer's answers (which carry the client secret and the
 * access token) go through it too, with nested values skipped. Values may
 * hold secrets: they never go into an error message, and pc_auth_kv_free
 * wipes them (through auth_provider.c, the one file below this one).
 * No state: any thread.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "net/auth_plugin.h"

typedef struct parser {
    const char *s;
    size_t pos;
    const char *what; /* "authParams", "the key file": names the input in errors */
    int skip_nested;  /* documents (key file, HTTP answers): nested values are skipped */
    char *err;
    size_t errlen;
} parser_t;

static void skip_ws(parser_t *p) {
    while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

static pulsarc_err_t fail(parser_t *p, const char *expected) {
    return pc_seterr(p->err, p->errlen, PULSARC_ERR_BAD_CONFIG,
                     "%s is not a flat JSON object: %s at offset %zu", p->what, expected, p->pos);
}

static int hexval(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Appends code point cp as UTF-8 (surrogate pairs are joined by the caller). */
static char *put_utf8(char *o, unsigned cp) {
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

static int read_hex4(parser_t *p, unsigned *cp) {
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)p->s[p->pos]);
        if (h < 0)
            return -1;
        *cp = *cp << 4 | (unsigned)h;
        p->pos++;
    }
    return 0;
}

/* One escape after the backslash; writes its bytes at *o. */
static int unescape(parser_t *p, char **o) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    char c = p->s[p->pos];
    if (!c)
        return -1; /* a backslash at the very end: never step past the NUL */
    p->pos++;
    const char *k = strchr(from, c);
    if (k) {
        *(*o)++ = to[k - from];
        return 0;
    }
    unsigned cp, lo;
    if (c != 'u' || read_hex4(p, &cp))
        return -1;
    if (cp >= 0xD800 && cp < 0xDC00) { /* a high surrogate needs its low half */
        if (p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
            return -1;
        p->pos += 2;
        if (read_hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF)
            return -1;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp < 0xE000) {
        return -1;
    }
    *o = put_utf8(*o, cp);
    return 0;
}

/* A JSON string at p->pos (the opening quote), malloc'd and unescaped. */
static char *read_string(parser_t *p) {
    if (p->s[p->pos] != '"')
        return NULL;
    p->pos++;
    size_t start = p->pos, cap = strlen(p->s + start) + 1;
    char *out = malloc(cap), *o = out; /* unescaping only shrinks (\uXXXX: 6 -> at most 4) */
    while (out && p->s[p->pos] != '"') {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '\0' || c < 0x20 || (c == '\\' && (p->pos++, unescape(p, &o)))) {
            pc_auth_wipe((uint8_t *)out, cap);
            return NULL;
        }
        if (c != '\\')
            *o++ = (char)c, p->pos++;
    }
    if (!out)
        return NULL;
    p->pos++;
    *o = '\0';
    return out;
}

/* A number, true, false or null: kept as its text. */
static char *read_literal(parser_t *p) {
    size_t start = p->pos;
    while (p->s[p->pos] && strchr("+-.0123456789eEtrufalsn", p->s[p->pos]))
        p->pos++;
    size_t n = p->pos - start;
    const char *t = p->s + start;
    int word = (n == 4 && !strncmp(t, "true", 4)) || (n == 5 && !strncmp(t, "false", 5)) ||
               (n == 4 && !strncmp(t, "null", 4));
    char *end = NULL;
    if (!word && n > 0) {
        char *num = strndup(t, n);
        if (num)
            strtod(num, &end);
        word = num && end && *end == '\0' && (isdigit((unsigned char)*t) || *t == '-');
        free(num);
    }
    return word ? strndup(t, n) : NULL;
}

/* Past a nested object or array at p->pos, without recursion. 0, or -1 if malformed. */
static int skip_nested(parser_t *p) {
    size_t depth = 0;
    do {
        char c = p->s[p->pos];
        if (c == '\0')
            return -1;
        if (c == '"') {
            for (p->pos++; p->s[p->pos] != '"'; p->pos++) {
                if (!p->s[p->pos] || (p->s[p->pos] == '\\' && !p->s[++p->pos]))
                    return -1;
            }
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
        p->pos++;
    } while (depth > 0);
    return 0;
}

static pulsarc_err_t add(pc_auth_kv_t *kv, char *key, char *val, int is_string, char *err,
                         size_t errlen) {
    if (kv->n == PC_AUTH_KV_MAX) {
        free(key);
        pc_auth_wipe((uint8_t *)val, strlen(val));
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG, "more than %d members",
                         PC_AUTH_KV_MAX);
    }
    kv->key[kv->n] = key;
    kv->is_string[kv->n] = (unsigned char)is_string;
    kv->val[kv->n++] = val;
    return PULSARC_OK;
}

static pulsarc_err_t parse_member(parser_t *p, pc_auth_kv_t *kv) {
    skip_ws(p);
    char *key = read_string(p);
    if (!key)
        return fail(p, "expected a member name in double quotes");
    skip_ws(p);
    if (p->s[p->pos] != ':') {
        free(key);
        return fail(p, "expected ':'");
    }
    p->pos++;
    skip_ws(p);
    char c = p->s[p->pos];
    if ((c == '{' || c == '[') && p->skip_nested) {
        free(key);
        if (skip_nested(p))
            return fail(p, "unterminated nested value");
        skip_ws(p);
        return PULSARC_OK;
    }
    if (c == '{' || c == '[') {
        pulsarc_err_t e = pc_seterr(p->err, p->errlen, PULSARC_ERR_BAD_CONFIG,
                                    "%s: member \"%s\" must be a string, not an %s", p->what,
                                    key, c == '{' ? "object" : "array");
        free(key);
        return e;
    }
    char *val = c == '"' ? read_string(p) : read_literal(p);
    if (!val) {
        free(key);
        return fail(p, "expected a string, number, true, false or null");
    }
    pulsarc_err_t e = add(kv, key, val, c == '"', p->err, p->errlen);
    skip_ws(p);
    return e;
}

pulsarc_err_t pc_auth_kv_parse(const char *json, const char *what, pc_auth_kv_t *kv, char *err,
                               size_t errlen) {
    return pc_auth_kv_parse_doc(json, what, 0, kv, err, errlen);
}

pulsarc_err_t pc_auth_kv_parse_doc(const char *json, const char *what, int skip_nested,
                                   pc_auth_kv_t *kv, char *err, size_t errlen) {
    memset(kv, 0, sizeof *kv);
    parser_t p = {.s = json ? json : "", .what = what, .skip_nested = skip_nested, .err = err,
                  .errlen = errlen};
    skip_ws(&p);
    if (p.s[p.pos] != '{')
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "%s is not JSON: expected a '{' object", what);
    p.pos++;
    skip_ws(&p);
    pulsarc_err_t e = PULSARC_OK;
    if (p.s[p.pos] == '}')
        p.pos++;
    else
        for (;;) {
            if ((e = parse_member(&p, kv)))
                break;
            if (p.s[p.pos] == '}') {
                p.pos++;
                break;
            }
            if (p.s[p.pos] != ',') {
                e = fail(&p, "expected ',' or '}'");
                break;
            }
            p.pos++;
        }
    skip_ws(&p);
    if (!e && p.s[p.pos])
        e = fail(&p, "unexpected text after the object");
    if (e)
        pc_auth_kv_free(kv);
    return e;
}

const char *pc_auth_kv_get_str(const pc_auth_kv_t *kv, const char *key) {
    for (size_t i = kv->n; i-- > 0;)
        if (strcmp(kv->key[i], key) == 0)
            return kv->is_string[i] ? kv->val[i] : NULL;
    return NULL;
}

const char *pc_auth_kv_get(const pc_auth_kv_t *kv, const char *key) {
    for (size_t i = kv->n; i-- > 0;) /* the last duplicate wins, as in most JSON readers */
        if (strcmp(kv->key[i], key) == 0)
            return kv->val[i];
    return NULL;
}

void pc_auth_kv_free(pc_auth_kv_t *kv) {
    for (size_t i = 0; i < kv->n; i++) {
        free(kv->key[i]);
        pc_auth_wipe((uint8_t *)kv->val[i], strlen(kv->val[i]));
    }
    kv->n = 0;
}
