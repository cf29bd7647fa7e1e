/*
 * Design notes: the text of a WITH clause as key/value pairs.
 *
 *   [WITH] ( 'key' = 'value' [, 'key' = 'value']* ) [;]
 *
 * Keys and values are SQL string literals: single quotes, '' for a quote
 * inside, no other escapes (as in Flink SQL). Blanks, "-- to end of line"
 * and block comments may stand between tokens. The parentheses may be left
 * out of a bare list. A key given twice is an error rather than "last one
 * wins": in a table definition a repeated option is a mistake, and silently
 * picking one of two service URLs is worse than stopping.
 *
 * Errors give the byte offset, so a long DDL string can be pointed at.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connector/table_int.h"
#include "core/err.h"

typedef struct lexer {
    const char *s;
    size_t pos;
} lexer_t;

/* Skips blanks and comments; an unterminated block comment is an error. */
static pulsarc_err_t skip_space(lexer_t *x, char *e, size_t el) {
    for (;;) {
        while (isspace((unsigned char)x->s[x->pos]))
            x->pos++;
        if (!strncmp(x->s + x->pos, "--", 2)) {
            while (x->s[x->pos] && x->s[x->pos] != '\n')
                x->pos++;
        } else if (!strncmp(x->s + x->pos, "/*", 2)) {
            const char *end = strstr(x->s + x->pos + 2, "*/");
            if (!end)
                return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                                 "WITH clause, offset %zu: unterminated comment", x->pos);
            x->pos = (size_t)(end - x->s) + 2;
        } else {
            return PULSARC_OK;
        }
    }
}

static pulsarc_err_t expected(const lexer_t *x, const char *what, char *e, size_t el) {
    if (!x->s[x->pos])
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "WITH clause, offset %zu: expected %s, found the end", x->pos, what);
    return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "WITH clause, offset %zu: expected %s near '%.12s'",
                     x->pos, what, x->s + x->pos);
}

/* A quoted literal at x->pos into *out (malloc'd). */
static pulsarc_err_t literal(lexer_t *x, const char *what, char **out, char *e, size_t el) {
    if (x->s[x->pos] != '\'')
        return expected(x, what, e, el);
    size_t start = x->pos++, n = 0;
    char *buf = malloc(strlen(x->s + x->pos) + 1);
    if (!buf)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    for (;;) {
        char c = x->s[x->pos];
        if (!c) {
            free(buf);
            return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                             "WITH clause, offset %zu: unterminated string literal", start);
        }
        x->pos++;
        if (c == '\'' && x->s[x->pos] != '\'')
            break;
        if (c == '\'')
            x->pos++; /* '' is one quote */
        buf[n++] = c;
    }
    buf[n] = '\0';
    *out = buf;
    return PULSARC_OK;
}

/* The optional WITH keyword and opening parenthesis; *paren set if present. */
static pulsarc_err_t opening(lexer_t *x, int *paren, char *e, size_t el) {
    pulsarc_err_t err = skip_space(x, e, el);
    if (!err && !strncasecmp(x->s + x->pos, "with", 4) &&
        !isalnum((unsigned char)x->s[x->pos + 4]) && x->s[x->pos + 4] != '_') {
        x->pos += 4;
        err = skip_space(x, e, el);
        if (!err && x->s[x->pos] != '(')
            return expected(x, "'(' after WITH", e, el);
    }
    *paren = !err && x->s[x->pos] == '(';
    if (*paren) {
        x->pos++;
        err = skip_space(x, e, el);
    }
    return err;
}

/* After the list: ')' if opened, an optional ';', then the end. */
static pulsarc_err_t closing(lexer_t *x, int paren, char *e, size_t el) {
    if (paren && x->s[x->pos] != ')')
        return expected(x, "',' or ')'", e, el);
    if (paren)
        x->pos++;
    pulsarc_err_t err = skip_space(x, e, el);
    if (!err && x->s[x->pos] == ';') {
        x->pos++;
        err = skip_space(x, e, el);
    }
    if (!err && x->s[x->pos])
        return expected(x, paren ? "the end after ')'" : "',' or the end", e, el);
    return err;
}

typedef struct kvlist {
    char **kv;
    size_t n, cap; /* strings, two per option */
} kvlist_t;

static pulsarc_err_t push(kvlist_t *l, char *key, char *value, char *e, size_t el) {
    for (size_t i = 0; i < l->n; i += 2)
        if (!strcmp(l->kv[i], key)) {
            pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "Duplicate option '%s' in the WITH clause", key);
            free(key);
            free(value);
            return PULSARC_ERR_BAD_CONFIG;
        }
    if (l->n + 2 > l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **grown = realloc(l->kv, cap * sizeof *grown);
        if (!grown) {
            free(key);
            free(value);
            return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
        }
        l->kv = grown;
        l->cap = cap;
    }
    l->kv[l->n++] = key;
    l->kv[l->n++] = value;
    return PULSARC_OK;
}

/* 'key' = 'value' at x->pos. */
static pulsarc_err_t option(lexer_t *x, kvlist_t *l, char *e, size_t el) {
    char *key = NULL, *value = NULL;
    pulsarc_err_t err = literal(x, "a quoted option key", &key, e, el);
    if (!err)
        err = skip_space(x, e, el);
    if (!err && x->s[x->pos] != '=')
        err = expected(x, "'='", e, el);
    if (!err) {
        x->pos++;
        err = skip_space(x, e, el);
    }
    if (!err)
        err = literal(x, "a quoted option value", &value, e, el);
    if (err) {
        free(key);
        return err;
    }
    err = push(l, key, value, e, el);
    return err ? err : skip_space(x, e, el);
}

static pulsarc_err_t options(lexer_t *x, int paren, kvlist_t *l, char *e, size_t el) {
    if (paren && x->s[x->pos] == ')')
        return PULSARC_OK; /* WITH () */
    if (!paren && !x->s[x->pos])
        return PULSARC_OK; /* empty text */
    for (;;) {
        pulsarc_err_t err = option(x, l, e, el);
        if (err || x->s[x->pos] != ',')
            return err;
        x->pos++;
        if ((err = skip_space(x, e, el)) != PULSARC_OK)
            return err;
    }
}

void pc_with_free(char **kv, size_t n) {
    for (size_t i = 0; kv && i < 2 * n; i++)
        free(kv[i]);
    free(kv);
}

pulsarc_err_t pc_with_parse(const char *text, char ***kv, size_t *n, char *e, size_t el) {
    *kv = NULL;
    *n = 0;
    if (!text)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "no WITH text");
    lexer_t x = {text, 0};
    kvlist_t l = {NULL, 0, 0};
    int paren = 0;
    pulsarc_err_t err = opening(&x, &paren, e, el);
    if (!err)
        err = options(&x, paren, &l, e, el);
    if (!err)
        err = closing(&x, paren, e, el);
    if (err) {
        pc_with_free(l.kv, l.n / 2);
        return err;
    }
    *kv = l.kv;
    *n = l.n / 2;
    return PULSARC_OK;
}
