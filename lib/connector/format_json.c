/*
 * Design notes: the json format — a row as one flat JSON object, one
 * member per column, named after it.
 *
 * Written here rather than with json-c: the connector must build without
 * libcurl (WITH_CURL=0 drops the admin client, the one json-c user), and
 * a flat object of scalars needs a small, strict reader, not a DOM.
 *
 * Reading (RFC 8259, strict): one object and nothing after it but blanks;
 * strings with the standard escapes (a \u surrogate pair becomes one code
 * point; a lone surrogate is an error) and no raw control characters;
 * numbers by the JSON grammar; nesting bounded (64) for members that are
 * skipped. Members without a column are skipped; a repeated member: the
 * last wins. Conversions follow Flink's json format: a STRING column takes
 * any member (numbers, booleans, objects as their JSON text); numeric and
 * boolean columns also take their value written as a string; BYTES are
 * base64 text. 'json.fail-on-missing-field' makes a missing member an
 * error (else NULL); 'json.ignore-parse-errors' turns a member of the wrong
 * type into NULL — the document itself must still be valid JSON.
 *
 * Writing: members in column order, NULL as null, doubles in the shortest
 * form that reads back to the same value; NaN and infinities have no JSON
 * form and are refused.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connector/table_int.h"
#include "core/base64.h"
#include "core/err.h"

#define JSON_MAX_DEPTH 64

/* ---- a growable buffer ---------------------------------------------------------------- */

typedef struct sb {
    char *p;
    size_t n, cap;
    int oom;
} sb_t;

static void sb_put(sb_t *b, const void *data, size_t n) {
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *grown = realloc(b->p, cap);
        if (!grown) {
            b->oom = 1;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sb_t *b, const char *s) {
    sb_put(b, s, strlen(s));
}

/* ---- writing ---------------------------------------------------------------------------- */

static void put_quoted(sb_t *b, const char *s, size_t n) {
    sb_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            sb_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            sb_put(b, esc, 6);
        } else {
            sb_put(b, s + i, 1);
        }
    }
    sb_put(b, "\"", 1);
}

static void put_double(sb_t *b, double d) {
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) { /* the shortest that reads back */
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    sb_str(b, buf);
}

static pulsarc_err_t put_value(sb_t *b, const tcol_t *c, const tval_t *v, char *e, size_t el) {
    char buf[32];
    if (v->is_null) {
        sb_str(b, "null");
        return PULSARC_OK;
    }
    switch (c->type) {
    case PULSARC_TABLE_STRING:
        put_quoted(b, v->bytes, v->len);
        return PULSARC_OK;
    case PULSARC_TABLE_BYTES: {
        char *b64 = malloc(pc_base64_len(v->len) + 1);
        if (!b64)
            return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
        pc_base64_encode(v->bytes, v->len, b64);
        put_quoted(b, b64, strlen(b64));
        free(b64);
        return PULSARC_OK;
    }
    case PULSARC_TABLE_BOOLEAN:
        sb_str(b, v->i ? "true" : "false");
        return PULSARC_OK;
    case PULSARC_TABLE_DOUBLE:
        if (!isfinite(v->d))
            return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG,
                             "json: column '%s' is not a finite number", c->name);
        put_double(b, v->d);
        return PULSARC_OK;
    default:
        snprintf(buf, sizeof buf, "%lld", (long long)v->i);
        sb_str(b, buf);
        return PULSARC_OK;
    }
}

pulsarc_err_t pc_fmt_json_encode(const tformat_t *f, const pulsarc_table_row_t *row,
                                 const int *idx, size_t n, uint8_t **out, size_t *len,
                                 int *is_null, char *e, size_t el) {
    (void)f;
    sb_t b = {NULL, 0, 0, 0};
    pulsarc_err_t err = PULSARC_OK;
    *out = NULL;
    *len = 0;
    *is_null = 0;
    sb_str(&b, "{");
    for (size_t i = 0; i < n && !err; i++) {
        const tcol_t *c = &row->t->schema->cols[idx[i]];
        if (i)
            sb_str(&b, ",");
        put_quoted(&b, c->name, strlen(c->name));
        sb_str(&b, ":");
        err = put_value(&b, c, &row->v[idx[i]], e, el);
    }
    sb_str(&b, "}");
    if (!err && b.oom)
        err = pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    if (err) {
        free(b.p);
        return err;
    }
    *out = (uint8_t *)b.p;
    *len = b.n;
    return PULSARC_OK;
}

/* ---- reading ------------------------------------------------------------------------------- */

typedef struct jr {
    const char *p, *start, *end;
} jr_t;

typedef enum { J_STRING, J_NUMBER, J_TRUE, J_FALSE, J_NULL, J_NESTED } jkind_t;

typedef struct jtok {
    jkind_t kind;
    const char *at; /* the raw text of the value */
    size_t len;
    sb_t str;   /* J_STRING: the decoded text */
    int is_int; /* J_NUMBER: no fraction, no exponent */
} jtok_t;

static pulsarc_err_t bad(const jr_t *r, const char *what, char *e, size_t el) {
    return pc_seterr(e, el, PULSARC_ERR_MALFORMED, "json: %s at offset %zu", what,
                     (size_t)(r->p - r->start));
}

static void ws(jr_t *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int peek(const jr_t *r) {
    return r->p < r->end ? (unsigned char)*r->p : -1;
}

static int hexval(char c) {
    char l = (char)(c | 0x20);
    return c >= '0' && c <= '9' ? c - '0' : l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
}

static long hex4(const char *s) {
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(s[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

static void put_utf8(sb_t *b, unsigned long cp) {
    char o[4];
    size_t n;
    if (cp < 0x80) {
        o[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        o[0] = (char)(0xF0 | (cp >> 18));
        o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    sb_put(b, o, n);
}

/* \uXXXX at r->p (after the backslash and 'u'), with a following low surrogate. */
static pulsarc_err_t unicode_escape(jr_t *r, sb_t *out, char *e, size_t el) {
    long hi = r->end - r->p >= 4 ? hex4(r->p) : -1;
    if (hi < 0)
        return bad(r, "bad \\u escape", e, el);
    r->p += 4;
    if (hi >= 0xDC00 && hi <= 0xDFFF)
        return bad(r, "lone low surrogate", e, el);
    if (hi >= 0xD800 && hi <= 0xDBFF) {
        long lo = r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u' ? hex4(r->p + 2) : -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return bad(r, "lone high surrogate", e, el);
        r->p += 6;
        hi = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
    }
    put_utf8(out, (unsigned long)hi);
    return PULSARC_OK;
}

static pulsarc_err_t escape(jr_t *r, sb_t *out, char *e, size_t el) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (r->p >= r->end)
        return bad(r, "unterminated string", e, el);
    char c = *r->p++;
    if (c == 'u')
        return unicode_escape(r, out, e, el);
    const char *at = strchr(from, c);
    if (!at || !c)
        return bad(r, "bad escape", e, el);
    sb_put(out, &to[at - from], 1);
    return PULSARC_OK;
}

/* A string at r->p (the opening quote) decoded into out. */
static pulsarc_err_t jstring(jr_t *r, sb_t *out, char *e, size_t el) {
    r->p++;
    sb_put(out, "", 0);
    for (;;) {
        if (r->p >= r->end)
            return bad(r, "unterminated string", e, el);
        unsigned char c = (unsigned char)*r->p++;
        pulsarc_err_t err = PULSARC_OK;
        if (c == '"')
            return PULSARC_OK;
        if (c < 0x20)
            return bad(r, "control character in string", e, el);
        if (c == '\\')
            err = escape(r, out, e, el);
        else
            sb_put(out, &c, 1);
        if (err)
            return err;
    }
}

static int digits(jr_t *r) {
    const char *s = r->p;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
        r->p++;
    return r->p > s;
}

/* A number by the JSON grammar; 0 if malformed. */
static int jnumber(jr_t *r, int *is_int) {
    *is_int = 1;
    if (peek(r) == '-')
        r->p++;
    if (peek(r) == '0')
        r->p++;
    else if (!digits(r))
        return 0;
    if (peek(r) == '.') {
        r->p++;
        *is_int = 0;
        if (!digits(r))
            return 0;
    }
    if (peek(r) == 'e' || peek(r) == 'E') {
        r->p++;
        *is_int = 0;
        if (peek(r) == '+' || peek(r) == '-')
            r->p++;
        if (!digits(r))
            return 0;
    }
    return 1;
}

static pulsarc_err_t jvalue(jr_t *r, jtok_t *tok, int depth, char *e, size_t el);

/* An object or array at r->p, skipped (members validated). */
static pulsarc_err_t jnested(jr_t *r, int depth, char *e, size_t el) {
    char close = *r->p == '{' ? '}' : ']';
    int object = close == '}';
    if (depth >= JSON_MAX_DEPTH)
        return bad(r, "nesting too deep", e, el);
    r->p++;
    ws(r);
    if (peek(r) == close) {
        r->p++;
        return PULSARC_OK;
    }
    for (;;) {
        jtok_t name = {0}, t = {0};
        pulsarc_err_t err = PULSARC_OK;
        if (object && peek(r) != '"')
            return bad(r, "expected a member name", e, el);
        if (object && !(err = jstring(r, &name.str, e, el))) {
            ws(r);
            err = peek(r) == ':' ? (r->p++, PULSARC_OK) : bad(r, "expected ':'", e, el);
            ws(r);
        }
        if (!err)
            err = jvalue(r, &t, depth + 1, e, el);
        free(name.str.p);
        free(t.str.p);
        if (err)
            return err;
        ws(r);
        if (peek(r) == close) {
            r->p++;
            return PULSARC_OK;
        }
        if (peek(r) != ',')
            return bad(r, object ? "expected ',' or '}'" : "expected ',' or ']'", e, el);
        r->p++;
        ws(r);
    }
}

static int word(jr_t *r, const char *w) {
    size_t n = strlen(w);
    if ((size_t)(r->end - r->p) < n || strncmp(r->p, w, n))
        return 0;
    r->p += n;
    return 1;
}

static pulsarc_err_t jvalue(jr_t *r, jtok_t *tok, int depth, char *e, size_t el) {
    int c = peek(r);
    pulsarc_err_t err = PULSARC_OK;
    tok->at = r->p;
    if (c == '"') {
        tok->kind = J_STRING;
        err = jstring(r, &tok->str, e, el);
    } else if (c == '{' || c == '[') {
        tok->kind = J_NESTED;
        err = jnested(r, depth, e, el);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        tok->kind = J_NUMBER;
        err = jnumber(r, &tok->is_int) ? PULSARC_OK : bad(r, "malformed number", e, el);
    } else if (word(r, "true") || word(r, "false") || word(r, "null")) {
        tok->kind = r->p[-1] == 'l' ? J_NULL : r->p[-2] == 'u' ? J_TRUE : J_FALSE;
    } else {
        err = bad(r, "expected a value", e, el);
    }
    tok->len = (size_t)(r->p - tok->at);
    if (!err && tok->str.oom)
        err = pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    return err;
}

/* ---- conversions ---------------------------------------------------------------------------- */

/* The token as text: a string's content, else its JSON text. */
static const char *tok_text(jtok_t *tok, size_t *n) {
    if (tok->kind == J_STRING) {
        *n = tok->str.n;
        return tok->str.p;
    }
    *n = tok->len;
    return tok->at;
}

static int to_int(jtok_t *tok, int64_t lo, int64_t hi, int64_t *out) {
    size_t n;
    const char *s = tok_text(tok, &n);
    char buf[32];
    if ((tok->kind != J_NUMBER && tok->kind != J_STRING) || (tok->kind == J_NUMBER && !tok->is_int) ||
        n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int to_double(jtok_t *tok, double *out) {
    size_t n;
    const char *s = tok_text(tok, &n);
    char buf[64];
    if ((tok->kind != J_NUMBER && tok->kind != J_STRING) || n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    *out = strtod(buf, &end);
    return *end || !isfinite(*out) ? -1 : 0;
}

static int to_bool(jtok_t *tok, int *out) {
    if (tok->kind == J_TRUE || tok->kind == J_FALSE) {
        *out = tok->kind == J_TRUE;
        return 0;
    }
    if (tok->kind != J_STRING || (strcasecmp(tok->str.p, "true") && strcasecmp(tok->str.p, "false")))
        return -1;
    *out = !strcasecmp(tok->str.p, "true");
    return 0;
}

static int to_bytes(jtok_t *tok, pulsarc_table_row_t *row, int col) {
    if (tok->kind != J_STRING)
        return -1;
    uint8_t *buf = malloc(tok->str.n / 4 * 3 + 3);
    long n = buf ? pc_base64_decode(tok->str.p, tok->str.n, buf) : -1;
    int rc = n < 0 || pulsarc_table_row_set_bytes(row, col, buf, (size_t)n) ? -1 : 0;
    free(buf);
    return rc;
}

/* Stores tok into column col; -1 when its kind does not fit the column. */
static int assign(jtok_t *tok, pulsarc_table_row_t *row, int col) {
    pulsarc_table_type_t type = row->t->schema->cols[col].type;
    int64_t i;
    double d;
    int b;
    size_t n;
    const char *s;
    if (tok->kind == J_NULL)
        return pulsarc_table_row_set_null(row, col) ? -1 : 0;
    switch (type) {
    case PULSARC_TABLE_STRING:
        s = tok_text(tok, &n);
        return pulsarc_table_row_set_bytes(row, col, s, n) ? -1 : 0;
    case PULSARC_TABLE_BYTES:
        return to_bytes(tok, row, col);
    case PULSARC_TABLE_BOOLEAN:
        return to_bool(tok, &b) || pulsarc_table_row_set_bool(row, col, b) ? -1 : 0;
    case PULSARC_TABLE_INT:
    case PULSARC_TABLE_BIGINT:
        if (type == PULSARC_TABLE_INT ? to_int(tok, INT32_MIN, INT32_MAX, &i)
                                      : to_int(tok, INT64_MIN, INT64_MAX, &i))
            return -1;
        return pulsarc_table_row_set_int(row, col, i) ? -1 : 0;
    case PULSARC_TABLE_DOUBLE:
        return to_double(tok, &d) || pulsarc_table_row_set_double(row, col, d) ? -1 : 0;
    default:
        return -1;
    }
}

/* ---- the object ----------------------------------------------------------------------------- */

typedef struct jdoc {
    const tformat_t *f;
    pulsarc_table_row_t *row;
    const int *idx;
    size_t n;
    char *seen;
} jdoc_t;

static pulsarc_err_t member(jr_t *r, jdoc_t *d, char *e, size_t el) {
    jtok_t name = {0}, val = {0};
    pulsarc_err_t err = peek(r) == '"' ? jstring(r, &name.str, e, el)
                                       : bad(r, "expected a member name", e, el);
    ws(r);
    if (!err)
        err = peek(r) == ':' ? (r->p++, PULSARC_OK) : bad(r, "expected ':'", e, el);
    ws(r);
    if (!err)
        err = jvalue(r, &val, 1, e, el);
    for (size_t i = 0; !err && i < d->n; i++) {
        const char *col = d->row->t->schema->cols[d->idx[i]].name;
        if (strlen(col) != name.str.n || memcmp(col, name.str.p, name.str.n))
            continue;
        d->seen[i] = 1;
        if (assign(&val, d->row, d->idx[i]) == 0)
            break;
        if (d->f->ignore_errors == 1)
            pulsarc_table_row_set_null(d->row, d->idx[i]);
        else
            err = pc_seterr(e, el, PULSARC_ERR_MALFORMED, "json: member '%s' does not fit column "
                            "type %s", col, pc_type_name(d->row->t->schema->cols[d->idx[i]].type));
    }
    free(name.str.p);
    free(val.str.p);
    return err;
}

static pulsarc_err_t object(jr_t *r, jdoc_t *d, char *e, size_t el) {
    ws(r);
    if (peek(r) != '{')
        return bad(r, "expected an object", e, el);
    r->p++;
    ws(r);
    if (peek(r) == '}') {
        r->p++;
        return PULSARC_OK;
    }
    for (;;) {
        pulsarc_err_t err = member(r, d, e, el);
        if (err)
            return err;
        ws(r);
        if (peek(r) == '}') {
            r->p++;
            return PULSARC_OK;
        }
        if (peek(r) != ',')
            return bad(r, "expected ',' or '}'", e, el);
        r->p++;
        ws(r);
    }
}

static pulsarc_err_t check_missing(const jdoc_t *d, char *e, size_t el) {
    for (size_t i = 0; i < d->n; i++)
        if (!d->seen[i] && d->f->fail_on_missing == 1)
            return pc_seterr(e, el, PULSARC_ERR_MALFORMED, "json: member '%s' is missing",
                             d->row->t->schema->cols[d->idx[i]].name);
    return PULSARC_OK;
}

pulsarc_err_t pc_fmt_json_decode(const tformat_t *f, const uint8_t *p, size_t len,
                                 pulsarc_table_row_t *row, const int *idx, size_t n, char *e,
                                 size_t el) {
    jr_t r = {(const char *)p, (const char *)p, (const char *)p + len};
    jdoc_t d = {f, row, idx, n, calloc(n ? n : 1, 1)};
    if (!d.seen)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = p ? object(&r, &d, e, el) : bad(&r, "no document", e, el);
    ws(&r);
    if (!err && r.p != r.end)
        err = bad(&r, "text after the object", e, el);
    if (!err)
        err = check_missing(&d, e, el);
    free(d.seen);
    return err;
}
