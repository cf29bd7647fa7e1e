/*
 * Design notes: the table schema (physical and metadata columns, primary
 * key) and rows of values over it.
 *
 * pulsarc does not parse CREATE TABLE: the application (or its SQL layer)
 * describes the columns, and the WITH options are validated against that.
 * Physical columns take the types the raw and json formats can carry;
 * TIMESTAMP_LTZ and MAP exist for metadata columns only, so a schema the
 * formats could not encode is refused when it is built, not at the first
 * row. A row holds one value per column, physical and metadata alike,
 * and owns its strings; setters check the column's type so that a format
 * never meets a value of the wrong kind.
 */
#include <stdlib.h>
#include <string.h>

#include "connector/table_int.h"
#include "core/err.h"

const char *pc_type_name(pulsarc_table_type_t t) {
    static const char *const names[] = {"?",      "STRING", "BYTES",         "BOOLEAN", "INT",
                                        "BIGINT", "DOUBLE", "TIMESTAMP_LTZ", "MAP"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

pulsarc_table_schema_t *pulsarc_table_schema_new(const char *name) {
    pulsarc_table_schema_t *s = calloc(1, sizeof *s);
    if (s && !(s->name = strdup(name ? name : "table"))) {
        free(s);
        return NULL;
    }
    return s;
}

static void free_pk(pulsarc_table_schema_t *s) {
    for (size_t i = 0; i < s->npk; i++)
        free(s->pk[i]);
    free(s->pk);
    s->pk = NULL;
    s->npk = 0;
}

void pulsarc_table_schema_destroy(pulsarc_table_schema_t *s) {
    if (!s)
        return;
    for (size_t i = 0; i < s->ncols; i++) {
        free(s->cols[i].name);
        free(s->cols[i].meta_key);
    }
    free(s->cols);
    free_pk(s);
    free(s->name);
    free(s);
}

int pc_table_schema_find(const pulsarc_table_schema_t *s, const char *name) {
    for (size_t i = 0; s && name && i < s->ncols; i++)
        if (!strcmp(s->cols[i].name, name))
            return (int)i;
    return -1;
}

static pulsarc_err_t add_col(pulsarc_table_schema_t *s, const tcol_t *c, char *e, size_t el) {
    if (!s || !c->name || !*c->name)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "schema and column name are required");
    if (pc_table_schema_find(s, c->name) >= 0)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "column '%s' is declared twice", c->name);
    tcol_t *grown = realloc(s->cols, (s->ncols + 1) * sizeof *grown);
    if (!grown)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    s->cols = grown;
    tcol_t col = *c;
    col.name = strdup(c->name);
    col.meta_key = c->meta_key ? strdup(c->meta_key) : NULL;
    if (!col.name || (c->meta_key && !col.meta_key)) {
        free(col.name);
        free(col.meta_key);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    s->cols[s->ncols++] = col;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_table_schema_add_column(pulsarc_table_schema_t *s, const char *name,
                                              pulsarc_table_type_t type, char *e, size_t el) {
    if (type < PULSARC_TABLE_STRING || type > PULSARC_TABLE_DOUBLE)
        return pc_seterr(e, el, PULSARC_ERR_UNSUPPORTED,
                         "column '%s': type %s is not supported for physical columns (STRING, "
                         "BYTES, BOOLEAN, INT, BIGINT, DOUBLE)",
                         name ? name : "", pc_type_name(type));
    tcol_t c = {(char *)name, type, 0, NULL, 0};
    return add_col(s, &c, e, el);
}

pulsarc_err_t pulsarc_table_schema_add_metadata(pulsarc_table_schema_t *s, const char *name,
                                                pulsarc_table_type_t type, const char *key,
                                                int is_virtual, char *e, size_t el) {
    if (type < PULSARC_TABLE_STRING || type > PULSARC_TABLE_MAP)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "column '%s': unknown type",
                         name ? name : "");
    tcol_t c = {(char *)name, type, 1, (char *)(key ? key : name), is_virtual != 0};
    return add_col(s, &c, e, el);
}

pulsarc_err_t pulsarc_table_schema_set_primary_key(pulsarc_table_schema_t *s,
                                                   const char *const *cols, size_t n, char *e,
                                                   size_t el) {
    if (!s || (!cols && n))
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "schema and columns are required");
    for (size_t i = 0; i < n; i++) {
        int c = pc_table_schema_find(s, cols[i]);
        if (c < 0 || s->cols[c].is_meta)
            return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG,
                             "PRIMARY KEY column '%s' is not a physical column", cols[i]);
    }
    free_pk(s);
    if (n && !(s->pk = calloc(n, sizeof *s->pk)))
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    for (; s->npk < n; s->npk++)
        if (!(s->pk[s->npk] = strdup(cols[s->npk])))
            return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    return PULSARC_OK;
}

pulsarc_table_schema_t *pc_table_schema_dup(const pulsarc_table_schema_t *s) {
    pulsarc_table_schema_t *d = pulsarc_table_schema_new(s->name);
    int failed = !d;
    for (size_t i = 0; !failed && i < s->ncols; i++)
        failed = add_col(d, &s->cols[i], NULL, 0) != PULSARC_OK;
    if (!failed)
        failed = pulsarc_table_schema_set_primary_key(d, (const char *const *)s->pk, s->npk,
                                                      NULL, 0) != PULSARC_OK;
    if (failed) {
        pulsarc_table_schema_destroy(d);
        return NULL;
    }
    return d;
}

/* ---- rows ---------------------------------------------------------------------- */

static void clear_value(tval_t *v) {
    free(v->bytes);
    for (size_t i = 0; i < v->nmap; i++) {
        free(v->mk[i]);
        free(v->mv[i]);
    }
    free(v->mk);
    free(v->mv);
    memset(v, 0, sizeof *v);
    v->is_null = 1;
}

void pc_row_clear(pulsarc_table_row_t *row) {
    for (size_t i = 0; i < row->t->schema->ncols; i++)
        clear_value(&row->v[i]);
    row->kind = PULSARC_TABLE_ROW_INSERT;
}

pulsarc_table_row_t *pulsarc_table_row_new(const pulsarc_table_t *t) {
    if (!t)
        return NULL;
    pulsarc_table_row_t *row = calloc(1, sizeof *row);
    if (!row)
        return NULL;
    row->t = t;
    row->v = calloc(t->schema->ncols ? t->schema->ncols : 1, sizeof *row->v);
    if (!row->v) {
        free(row);
        return NULL;
    }
    pc_row_clear(row);
    return row;
}

void pulsarc_table_row_destroy(pulsarc_table_row_t *row) {
    if (!row)
        return;
    pc_row_clear(row);
    free(row->v);
    free(row);
}

int pulsarc_table_column_index(const pulsarc_table_t *t, const char *name) {
    return t ? pc_table_schema_find(t->schema, name) : -1;
}

pulsarc_table_row_kind_t pulsarc_table_row_kind(const pulsarc_table_row_t *row) {
    return row ? row->kind : PULSARC_TABLE_ROW_INSERT;
}

void pulsarc_table_row_set_kind(pulsarc_table_row_t *row, pulsarc_table_row_kind_t kind) {
    if (row)
        row->kind = kind;
}

/* The value of col if its type is one of the mask's, else NULL. */
static tval_t *slot(const pulsarc_table_row_t *row, int col, unsigned mask) {
    if (!row || col < 0 || (size_t)col >= row->t->schema->ncols)
        return NULL;
    return (mask & (1u << row->t->schema->cols[col].type)) ? &row->v[col] : NULL;
}

#define T_BIT(t) (1u << PULSARC_TABLE_##t)
#define INTS (T_BIT(INT) | T_BIT(BIGINT) | T_BIT(TIMESTAMP_LTZ))
#define TEXTS (T_BIT(STRING) | T_BIT(BYTES))
#define ANY 0xFFFFFFFFu

pulsarc_err_t pulsarc_table_row_set_null(pulsarc_table_row_t *row, int col) {
    tval_t *v = slot(row, col, ANY);
    if (!v)
        return PULSARC_ERR_INVALID_ARG;
    clear_value(v);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_table_row_set_int(pulsarc_table_row_t *row, int col, int64_t n) {
    tval_t *v = slot(row, col, INTS);
    if (!v || (row->t->schema->cols[col].type == PULSARC_TABLE_INT &&
               (n < INT32_MIN || n > INT32_MAX)))
        return PULSARC_ERR_INVALID_ARG;
    clear_value(v);
    v->is_null = 0;
    v->i = n;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_table_row_set_double(pulsarc_table_row_t *row, int col, double d) {
    tval_t *v = slot(row, col, T_BIT(DOUBLE));
    if (!v)
        return PULSARC_ERR_INVALID_ARG;
    clear_value(v);
    v->is_null = 0;
    v->d = d;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_table_row_set_bool(pulsarc_table_row_t *row, int col, int b) {
    tval_t *v = slot(row, col, T_BIT(BOOLEAN));
    if (!v)
        return PULSARC_ERR_INVALID_ARG;
    clear_value(v);
    v->is_null = 0;
    v->i = b != 0;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_table_row_set_bytes(pulsarc_table_row_t *row, int col, const void *p,
                                          size_t len) {
    tval_t *v = slot(row, col, TEXTS);
    if (!v || (!p && len))
        return PULSARC_ERR_INVALID_ARG;
    char *copy = malloc(len + 1);
    if (!copy)
        return PULSARC_ERR_NOMEM;
    if (len)
        memcpy(copy, p, len);
    copy[len] = '\0';
    clear_value(v);
    v->is_null = 0;
    v->bytes = copy;
    v->len = len;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_table_row_set_string(pulsarc_table_row_t *row, int col, const char *s) {
    return s ? pulsarc_table_row_set_bytes(row, col, s, strlen(s)) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_table_row_map_put(pulsarc_table_row_t *row, int col, const char *key,
                                        const char *value) {
    tval_t *v = slot(row, col, T_BIT(MAP));
    if (!v || !key)
        return PULSARC_ERR_INVALID_ARG;
    char **mk = realloc(v->mk, (v->nmap + 1) * sizeof *mk);
    if (mk)
        v->mk = mk;
    char **mv = mk ? realloc(v->mv, (v->nmap + 1) * sizeof *mv) : NULL;
    if (mv)
        v->mv = mv;
    char *k = mv ? strdup(key) : NULL, *val = value && k ? strdup(value) : NULL;
    if (!k || (value && !val)) {
        free(k);
        return PULSARC_ERR_NOMEM;
    }
    v->mk[v->nmap] = k;
    v->mv[v->nmap++] = val;
    v->is_null = 0;
    return PULSARC_OK;
}

int pulsarc_table_row_is_null(const pulsarc_table_row_t *row, int col) {
    tval_t *v = slot(row, col, ANY);
    return !v || v->is_null;
}

int64_t pulsarc_table_row_int(const pulsarc_table_row_t *row, int col) {
    tval_t *v = slot(row, col, INTS | T_BIT(BOOLEAN));
    return v && !v->is_null ? v->i : 0;
}

double pulsarc_table_row_double(const pulsarc_table_row_t *row, int col) {
    tval_t *v = slot(row, col, T_BIT(DOUBLE));
    return v && !v->is_null ? v->d : 0.0;
}

int pulsarc_table_row_bool(const pulsarc_table_row_t *row, int col) {
    tval_t *v = slot(row, col, T_BIT(BOOLEAN));
    return v && !v->is_null ? (int)v->i : 0;
}

const void *pulsarc_table_row_bytes(const pulsarc_table_row_t *row, int col, size_t *len) {
    tval_t *v = slot(row, col, TEXTS);
    if (len)
        *len = v && !v->is_null ? v->len : 0;
    return v && !v->is_null ? v->bytes : NULL;
}

size_t pulsarc_table_row_map_count(const pulsarc_table_row_t *row, int col) {
    tval_t *v = slot(row, col, T_BIT(MAP));
    return v && !v->is_null ? v->nmap : 0;
}

pulsarc_err_t pulsarc_table_row_map_at(const pulsarc_table_row_t *row, int col, size_t i,
                                       const char **key, const char **value) {
    tval_t *v = slot(row, col, T_BIT(MAP));
    if (!v || v->is_null || i >= v->nmap)
        return PULSARC_ERR_INVALID_ARG;
    if (key)
        *key = v->mk[i];
    if (value)
        *value = v->mv[i];
    return PULSARC_OK;
}
