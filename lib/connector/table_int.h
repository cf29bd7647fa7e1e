/*
 * Internals of the SQL table options: the schema, the validated table,
 * rows, and the row formats (raw, json) that table_codec.c drives.
 */
#ifndef PC_CONNECTOR_TABLE_INT_H
#define PC_CONNECTOR_TABLE_INT_H
#include <stddef.h>
#include <stdint.h>

#include "pulsarc.h"
#include "pulsarc/connector.h"

typedef struct tcol {
    char *name;
    pulsarc_table_type_t type;
    int is_meta;
    char *meta_key; /* metadata columns: the key (defaults to the name) */
    int is_virtual;
} tcol_t;

struct pulsarc_table_schema_s {
    char *name;
    tcol_t *cols;
    size_t ncols;
    char **pk;
    size_t npk;
};

typedef enum { FMT_RAW = 1, FMT_JSON } fmt_kind_t;

typedef struct tformat {
    fmt_kind_t kind;
    int fail_on_missing; /* json.fail-on-missing-field */
    int ignore_errors;   /* json.ignore-parse-errors */
    int little_endian;   /* raw.endianness */
} tformat_t;

struct pulsarc_table_s {
    pulsarc_table_schema_t *schema; /* owned copy */
    int upsert;
    pulsarc_connector_config_t *cfg;
    char **topics;
    size_t ntopics;
    char *sub_name;
    const char *sub_type; /* static spelling */
    pulsarc_table_cursor_t start, stop;
    pulsarc_table_routing_t routing;
    char *router;
    int64_t delay_ms;
    int parallelism;
    int explicit_;
    int has_key;
    tformat_t key_fmt, value_fmt;
    int *key_idx; /* column indexes, key.fields order */
    size_t nkey;
    int *value_idx; /* column indexes, schema order */
    size_t nvalue;
};

typedef struct tval {
    int is_null;
    int64_t i;
    double d;
    char *bytes; /* STRING / BYTES, NUL-terminated */
    size_t len;
    char **mk, **mv; /* MAP pairs; mv[i] may be NULL */
    size_t nmap;
} tval_t;

struct pulsarc_table_row_s {
    const pulsarc_table_t *t;
    pulsarc_table_row_kind_t kind;
    tval_t *v;
};

/* Sets every column of row to NULL and the kind to INSERT. */
void pc_row_clear(pulsarc_table_row_t *row);

/* Schema helpers (schema.c). */
pulsarc_table_schema_t *pc_table_schema_dup(const pulsarc_table_schema_t *s);
int pc_table_schema_find(const pulsarc_table_schema_t *s, const char *name);
const char *pc_type_name(pulsarc_table_type_t t);

/*
 * Formats. encode writes the columns idx[0..n) of row into a fresh heap
 * buffer (*out, *len; *is_null when the result is a null value); decode
 * fills those columns from [p, p+len).
 */
pulsarc_err_t pc_fmt_raw_encode(const tformat_t *f, const pulsarc_table_row_t *row,
                                const int *idx, size_t n, uint8_t **out, size_t *len,
                                int *is_null, char *errstr, size_t errlen);
pulsarc_err_t pc_fmt_raw_decode(const tformat_t *f, const uint8_t *p, size_t len,
                                pulsarc_table_row_t *row, const int *idx, size_t n,
                                char *errstr, size_t errlen);
pulsarc_err_t pc_fmt_json_encode(const tformat_t *f, const pulsarc_table_row_t *row,
                                 const int *idx, size_t n, uint8_t **out, size_t *len,
                                 int *is_null, char *errstr, size_t errlen);
pulsarc_err_t pc_fmt_json_decode(const tformat_t *f, const uint8_t *p, size_t len,
                                 pulsarc_table_row_t *row, const int *idx, size_t n,
                                 char *errstr, size_t errlen);

/* The WITH (...) text as key/value pairs (with_clause.c); *kv owned by the caller. */
pulsarc_err_t pc_with_parse(const char *text, char ***kv, size_t *n, char *errstr,
                            size_t errlen);
void pc_with_free(char **kv, size_t n);

/* "L:E:P" as the SQL options take it, with the connector's error texts. */
pulsarc_err_t pc_table_parse_msgid(const char *text, pulsarc_msgid_t *out, char *errstr,
                                   size_t errlen);
#endif
