/*
 * Design notes: what every property table shares (the row format is in
 * table.h). A key is read the same way, refused with the same words and
 * documented in the same columns whichever table it belongs to: the
 * client's keys and the connector's go through these functions, their
 * values through value.c. A table adds only the rules that are its own
 * (URL schemes, tenant names, precedence of sources).
 * Pure functions over the caller's rows and buffers: any thread.
 */
#include "conf/table.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"

int pc_prop_find(const pc_prop_table_t *t, const char *key) {
    for (int i = 0; key && i < t->n; i++)
        if (strcmp(t->rows[i].name, key) == 0)
            return i;
    return -1;
}

const char *pc_prop_shown(const pc_prop_t *p, const char *text) {
    return (p->flags & PC_F_SECRET) ? "(secret, not shown)" : text;
}

int pc_prop_choice_is(const pc_prop_t *p, int64_t idx, const char *want) {
    size_t n;
    const char *at = pc_value_choice(p->choices, idx, &n);
    return at && n == strlen(want) && !strncmp(at, want, n);
}

static int is_default(const pc_prop_t *p, const char *text, int64_t num) {
    if (!p->defval)
        return *text == '\0';
    if (p->type == PC_VALUE_BOOL || p->type == PC_VALUE_ENUM || p->type == PC_VALUE_INT)
        return num == pc_prop_default_num(p);
    return !strcmp(text, p->defval);
}

pulsarc_err_t pc_prop_check(const pc_prop_t *p, const char *text, int64_t *num, char *e,
                            size_t el) {
    pc_value_rule_t r = {p->name, p->type, p->min, p->max, p->choices};
    pulsarc_err_t err = pc_value_parse(&r, text, num, e, el);
    if (err || !(p->flags & PC_F_DEFONLY) || is_default(p, text, *num))
        return err;
    /* a value pulsarc cannot honour is refused, not silently ignored */
    return pc_seterr(e, el, PULSARC_ERR_UNSUPPORTED, "%s: '%s' is not supported by pulsarc: %s",
                     p->name, pc_prop_shown(p, text), p->doc);
}

int64_t pc_prop_default_num(const pc_prop_t *p) {
    int64_t n = 0;
    pc_value_rule_t r = {p->name, p->type, p->min, p->max, p->choices};
    if (!p->defval || pc_value_parse(&r, p->defval, &n, NULL, 0))
        return 0;
    return n;
}

/* Copy of s without leading and trailing blanks. */
static char *trimmed(const char *s) {
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return strndup(s, n);
}

pulsarc_err_t pc_prop_read(const pc_prop_t *p, const char *v, char **canon, int64_t *num,
                           char *e, size_t el) {
    int verbatim = p->type == PC_VALUE_STR || p->type == PC_VALUE_MAP || p->type == PC_VALUE_LIST;
    char *text = verbatim ? strdup(v) : trimmed(v);
    *canon = NULL;
    if (!text)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = pc_prop_check(p, text, num, e, el);
    size_t n;
    const char *at = err || p->type != PC_VALUE_ENUM ? NULL : pc_value_choice(p->choices, *num, &n);
    if (at)
        memcpy(text, at, n); /* same length: the table's spelling */
    if (!err && p->type == PC_VALUE_BOOL) { /* "1" is shorter than "true" */
        free(text);
        if (!(text = strdup(*num ? "true" : "false")))
            err = pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    if (err)
        free(text);
    else
        *canon = text;
    return err;
}

/* ---- the reference ------------------------------------------------------------------ */

static const char *scope_name(pc_scope_t s) {
    static const char *const names[] = {"client", "producer", "consumer", "producer, consumer",
                                        "admin",  "source",   "sink",     "table",
                                        "format"};
    return names[s];
}

static const char *type_name(pc_value_kind_t t) {
    static const char *const names[] = {"string", "integer", "boolean", "enum", "map", "list"};
    return names[t];
}

/* The range of an INT, or an ENUM's choices with ", " for '|' (a bare | splits a cell). */
static void write_values(const pc_prop_t *p, char *out, size_t len) {
    out[0] = '\0';
    if (p->type == PC_VALUE_INT)
        snprintf(out, len, "%lld .. %lld", (long long)p->min, (long long)p->max);
    for (size_t k = 0, o = 0; p->type == PC_VALUE_ENUM && p->choices[k] && o + 3 < len; k++) {
        if (p->choices[k] == '|')
            out[o++] = ',', out[o++] = ' ';
        else
            out[o++] = p->choices[k];
        out[o] = '\0';
    }
}

static const char *flag_note(int flags) {
    return (flags & PC_F_NOOP)      ? " *Accepted, no effect.*"
           : (flags & PC_F_DEFONLY) ? " *Only the default is supported.*"
                                    : "";
}

static void write_row(FILE *out, const pc_prop_t *p, int targets) {
    char values[256], target[160] = "";
    write_values(p, values, sizeof values);
    if (targets)
        snprintf(target, sizeof target, " %s%s%s%s |", p->target ? "`" : "—",
                 p->target ? p->target : "", p->target ? "`" : "",
                 (p->flags & PC_F_NS_TO_MS) ? " (ms)" : "");
    fprintf(out, "| `%s` | %s | %s | %s%s%s | %s |%s %s%s%s%s |\n", p->name, scope_name(p->scope),
            type_name(p->type), p->defval ? "`" : "", p->defval ? p->defval : "(unset)",
            p->defval ? "`" : "", values, target, p->doc, flag_note(p->flags),
            (p->flags & PC_F_LEGACY) ? " *Key of older versions.*" : "",
            (p->flags & PC_F_ADDED) ? " *pulsarc addition.*" : "");
}

void pc_prop_write_doc(const pc_prop_table_t *t, FILE *out) {
    int targets = 0;
    for (int i = 0; i < t->n; i++)
        targets |= t->rows[i].target != NULL;
    fprintf(out, "# %s\n\nGenerated from `%s` by `make docs`; do not edit.\n\n"
                 "| key | scope | type | default | range / values |%s meaning |\n"
                 "|---|---|---|---|---|%s---|\n",
            t->title, t->source, targets ? " maps to |" : "", targets ? "---|" : "");
    for (int i = 0; i < t->n; i++)
        write_row(out, &t->rows[i], targets);
}
