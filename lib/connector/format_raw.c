/*
 * Design notes: the raw format — one column as the whole payload (or key).
 *
 * STRING and BYTES are the bytes themselves (UTF-8 for strings, not
 * checked: the bytes are the user's); BOOLEAN is one byte 0/1; INT 4,
 * BIGINT 8 and DOUBLE 8 bytes (IEEE 754 bits) in big-endian order unless
 * 'raw.endianness' says little-endian — the encoding Flink's raw format
 * uses, so both ends agree. A NULL column is a null value (a tombstone),
 * and a payload of the wrong size for a number is an error, never padded.
 */
#include <stdlib.h>
#include <string.h>

#include "connector/table_int.h"
#include "core/err.h"

static void put_uint(uint8_t *out, uint64_t v, size_t n, int little) {
    for (size_t i = 0; i < n; i++)
        out[little ? i : n - 1 - i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_uint(const uint8_t *p, size_t n, int little) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[little ? i : n - 1 - i] << (8 * i);
    return v;
}

/* Width in bytes of a fixed-size type, 0 for STRING/BYTES. */
static size_t width(pulsarc_table_type_t t) {
    return t == PULSARC_TABLE_BOOLEAN ? 1 : t == PULSARC_TABLE_INT ? 4
           : t == PULSARC_TABLE_BIGINT || t == PULSARC_TABLE_DOUBLE ? 8
                                                                      : 0;
}

pulsarc_err_t pc_fmt_raw_encode(const tformat_t *f, const pulsarc_table_row_t *row,
                                const int *idx, size_t n, uint8_t **out, size_t *len,
                                int *is_null, char *e, size_t el) {
    *out = NULL;
    *len = 0;
    *is_null = 0;
    if (n != 1)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "raw: %zu columns, one expected", n);
    const tval_t *v = &row->v[idx[0]];
    pulsarc_table_type_t type = row->t->schema->cols[idx[0]].type;
    if (v->is_null) {
        *is_null = 1;
        return PULSARC_OK;
    }
    size_t w = width(type), size = w ? w : v->len;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    uint64_t bits = (uint64_t)v->i;
    if (type == PULSARC_TABLE_DOUBLE)
        memcpy(&bits, &v->d, sizeof bits);
    if (w)
        put_uint(buf, bits, w, f->little_endian);
    else if (size)
        memcpy(buf, v->bytes, size);
    *out = buf;
    *len = size;
    return PULSARC_OK;
}

static pulsarc_err_t decode_fixed(const tformat_t *f, const uint8_t *p, size_t len,
                                  pulsarc_table_row_t *row, int col, char *e, size_t el) {
    const tcol_t *c = &row->t->schema->cols[col];
    size_t w = width(c->type);
    if (len != w)
        return pc_seterr(e, el, PULSARC_ERR_MALFORMED,
                         "raw: column '%s' is %s: expected %zu bytes, got %zu", c->name,
                         pc_type_name(c->type), w, len);
    uint64_t bits = get_uint(p, w, f->little_endian);
    if (c->type == PULSARC_TABLE_BOOLEAN)
        return pulsarc_table_row_set_bool(row, col, bits != 0);
    if (c->type == PULSARC_TABLE_DOUBLE) {
        double d;
        memcpy(&d, &bits, sizeof d);
        return pulsarc_table_row_set_double(row, col, d);
    }
    int64_t v = c->type == PULSARC_TABLE_INT ? (int64_t)(int32_t)(uint32_t)bits : (int64_t)bits;
    return pulsarc_table_row_set_int(row, col, v);
}

pulsarc_err_t pc_fmt_raw_decode(const tformat_t *f, const uint8_t *p, size_t len,
                                pulsarc_table_row_t *row, const int *idx, size_t n, char *e,
                                size_t el) {
    if (n != 1)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "raw: %zu columns, one expected", n);
    if (!p)
        return pulsarc_table_row_set_null(row, idx[0]);
    if (width(row->t->schema->cols[idx[0]].type))
        return decode_fixed(f, p, len, row, idx[0], e, el);
    pulsarc_err_t err = pulsarc_table_row_set_bytes(row, idx[0], p, len);
    return err ? pc_seterr(e, el, err, "out of memory") : PULSARC_OK;
}
