/*
 * Design notes: rows to messages and back, for a validated table.
 *
 * Key fields go through the key format into the message key as bytes
 * (base64 with the b64 flag, as the connector stores keyBytes, so
 * key-hash routing hashes the base64 text just as it does); the value
 * fields through the value format into the payload. The sink side writes
 * the two writable metadata columns (properties, event_time); the source
 * side fills every metadata column from the message. message_id is the
 * protobuf MessageIdData the Java client's toByteArray() produces, so ids
 * stored by either can be compared.
 *
 * Changelog: a 'pulsar' table is insert-only, so encoding another row kind
 * is an error; 'upsert-pulsar' writes DELETE and UPDATE_BEFORE as a
 * tombstone with the key, and reads an empty or null value as a DELETE
 * that carries only the key fields.
 */
#include <stdlib.h>
#include <string.h>

#include "connector/table_int.h"
#include "core/err.h"

typedef pulsarc_err_t (*fmt_encode_fn)(const tformat_t *, const pulsarc_table_row_t *,
                                       const int *, size_t, uint8_t **, size_t *, int *, char *,
                                       size_t);
typedef pulsarc_err_t (*fmt_decode_fn)(const tformat_t *, const uint8_t *, size_t,
                                       pulsarc_table_row_t *, const int *, size_t, char *,
                                       size_t);

static fmt_encode_fn encoder(const tformat_t *f) {
    return f->kind == FMT_RAW ? pc_fmt_raw_encode : pc_fmt_json_encode;
}

static fmt_decode_fn decoder(const tformat_t *f) {
    return f->kind == FMT_RAW ? pc_fmt_raw_decode : pc_fmt_json_decode;
}

/* ---- row → message ----------------------------------------------------------------- */

static pulsarc_err_t encode_key(const pulsarc_table_t *t, const pulsarc_table_row_t *row,
                                pulsarc_msg_t *msg, char *e, size_t el) {
    uint8_t *buf;
    size_t len;
    int is_null;
    if (!t->has_key)
        return PULSARC_OK;
    pulsarc_err_t err =
        encoder(&t->key_fmt)(&t->key_fmt, row, t->key_idx, t->nkey, &buf, &len, &is_null, e, el);
    if (!err && !is_null && pulsarc_msg_set_key_bytes(msg, buf, len))
        err = pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    free(buf);
    return err;
}

static int is_retraction(pulsarc_table_row_kind_t k) {
    return k == PULSARC_TABLE_ROW_DELETE || k == PULSARC_TABLE_ROW_UPDATE_BEFORE;
}

static pulsarc_err_t encode_value(const pulsarc_table_t *t, const pulsarc_table_row_t *row,
                                  pulsarc_msg_t *msg, char *e, size_t el) {
    uint8_t *buf;
    size_t len;
    int is_null;
    if (t->upsert && is_retraction(row->kind))
        return pulsarc_msg_set_null_value(msg);
    pulsarc_err_t err = encoder(&t->value_fmt)(&t->value_fmt, row, t->value_idx, t->nvalue, &buf,
                                               &len, &is_null, e, el);
    if (err || is_null)
        return err ? err : pulsarc_msg_set_null_value(msg);
    if (pulsarc_msg_set_payload(msg, buf, len, PULSARC_MSG_F_FREE)) {
        free(buf);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    return PULSARC_OK;
}

static pulsarc_err_t encode_properties(const tval_t *v, pulsarc_msg_t *msg) {
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < v->nmap && !err; i++)
        if (v->mv[i]) /* a NULL value has no property form: skipped */
            err = pulsarc_msg_set_property(msg, v->mk[i], v->mv[i]);
    return err;
}

static pulsarc_err_t encode_metadata(const pulsarc_table_t *t, const pulsarc_table_row_t *row,
                                     pulsarc_msg_t *msg) {
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < t->schema->ncols && !err; i++) {
        const tcol_t *c = &t->schema->cols[i];
        const tval_t *v = &row->v[i];
        if (!c->is_meta || c->is_virtual || v->is_null)
            continue;
        if (!strcmp(c->meta_key, "properties"))
            err = encode_properties(v, msg);
        else if (!strcmp(c->meta_key, "event_time") && v->i > 0)
            err = pulsarc_msg_set_event_time(msg, (uint64_t)v->i);
    }
    return err;
}

pulsarc_err_t pulsarc_table_encode(const pulsarc_table_t *t, const pulsarc_table_row_t *row,
                                   pulsarc_msg_t **msgp, char *e, size_t el) {
    if (!t || !row || !msgp || row->t != t)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG,
                         "table, one of its rows and msgp are required");
    *msgp = NULL;
    if (!t->upsert && row->kind != PULSARC_TABLE_ROW_INSERT)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG,
                         "The 'pulsar' table accepts INSERT rows only; use 'upsert-pulsar' for "
                         "updates and deletes");
    pulsarc_msg_t *msg = pulsarc_msg_new();
    if (!msg)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = encode_key(t, row, msg, e, el);
    if (!err)
        err = encode_value(t, row, msg, e, el);
    if (!err && (err = encode_metadata(t, row, msg)) != PULSARC_OK)
        pc_seterr(e, el, err, "out of memory");
    if (err) {
        pulsarc_msg_destroy(msg);
        return err;
    }
    *msgp = msg;
    return PULSARC_OK;
}

/* ---- message → row ------------------------------------------------------------------ */

static pulsarc_err_t put_message_id(const pulsarc_msg_t *msg, pulsarc_table_row_t *row, int col) {
    pulsarc_msgid_t id = pulsarc_msg_id(msg);
    uint8_t buf[64]; /* five varints at most */
    size_t n = sizeof buf;
    pulsarc_err_t err = pulsarc_msgid_serialize(&id, buf, &n);
    if (err)
        return err;
    return pulsarc_table_row_set_bytes(row, col, buf, n);
}

static pulsarc_err_t put_properties(const pulsarc_msg_t *msg, pulsarc_table_row_t *row, int col) {
    pulsarc_err_t err = PULSARC_OK;
    row->v[col].is_null = 0; /* an empty map, not NULL */
    for (size_t i = 0; i < pulsarc_msg_property_count(msg) && !err; i++) {
        const char *k, *v;
        if (!(err = pulsarc_msg_property_at(msg, i, &k, &v)))
            err = pulsarc_table_row_map_put(row, col, k, v);
    }
    return err;
}

static pulsarc_err_t put_metadata(const tcol_t *c, const pulsarc_msg_t *msg,
                                  pulsarc_table_row_t *row, int col) {
    const char *k = c->meta_key, *s;
    if (!strcmp(k, "topic") || !strcmp(k, "producer_name")) {
        s = k[0] == 't' ? pulsarc_msg_topic(msg) : pulsarc_msg_producer_name(msg);
        return pulsarc_table_row_set_string(row, col, s ? s : "");
    }
    if (!strcmp(k, "message_size"))
        return pulsarc_table_row_set_int(row, col, (int64_t)pulsarc_msg_len(msg));
    if (!strcmp(k, "message_id"))
        return put_message_id(msg, row, col);
    if (!strcmp(k, "sequenceId"))
        return pulsarc_table_row_set_int(row, col, pulsarc_msg_sequence_id(msg));
    if (!strcmp(k, "publish_time"))
        return pulsarc_table_row_set_int(row, col, (int64_t)pulsarc_msg_publish_time(msg));
    if (!strcmp(k, "event_time"))
        return pulsarc_table_row_set_int(row, col, (int64_t)pulsarc_msg_event_time(msg));
    return put_properties(msg, row, col);
}

static pulsarc_err_t decode_metadata(const pulsarc_table_t *t, const pulsarc_msg_t *msg,
                                     pulsarc_table_row_t *row, char *e, size_t el) {
    for (size_t i = 0; i < t->schema->ncols; i++) {
        const tcol_t *c = &t->schema->cols[i];
        pulsarc_err_t err = c->is_meta ? put_metadata(c, msg, row, (int)i) : PULSARC_OK;
        if (err)
            return pc_seterr(e, el, err, "metadata column '%s': %s", c->name,
                             pulsarc_strerror(err));
    }
    return PULSARC_OK;
}

static pulsarc_err_t decode_key(const pulsarc_table_t *t, const pulsarc_msg_t *msg,
                                pulsarc_table_row_t *row, char *e, size_t el) {
    size_t len = 0;
    const void *key = t->has_key ? pulsarc_msg_key_bytes(msg, &len) : NULL;
    if (!key)
        return PULSARC_OK; /* no key: the key fields stay NULL */
    return decoder(&t->key_fmt)(&t->key_fmt, key, len, row, t->key_idx, t->nkey, e, el);
}

pulsarc_err_t pulsarc_table_decode(const pulsarc_table_t *t, const pulsarc_msg_t *msg,
                                   pulsarc_table_row_t *row, char *e, size_t el) {
    if (!t || !msg || !row || row->t != t)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG,
                         "table, message and one of its rows are required");
    pc_row_clear(row);
    size_t len = pulsarc_msg_len(msg);
    int no_value = pulsarc_msg_is_null_value(msg) || len == 0;
    if (no_value && !t->upsert)
        return pc_seterr(e, el, PULSARC_ERR_MALFORMED,
                         "Invalid null value received in non-upsert mode: a 'pulsar' table needs "
                         "a value in every message");
    pulsarc_err_t err = decode_key(t, msg, row, e, el);
    if (!err && no_value)
        row->kind = PULSARC_TABLE_ROW_DELETE;
    else if (!err)
        err = decoder(&t->value_fmt)(&t->value_fmt, pulsarc_msg_payload(msg), len, row,
                                     t->value_idx, t->nvalue, e, el);
    return err ? err : decode_metadata(t, msg, row, e, el);
}
