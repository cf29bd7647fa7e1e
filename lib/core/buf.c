/*
 * Design notes: a plain growable byte array used for outgoing frames and
 * the connection's receive buffer. Every buffer carries a limit so that a
 * peer announcing a huge size can never make us allocate past it. Not
 * thread-safe; each buffer belongs to one owner (usually the loop thread).
 */
#include "core/buf.h"

#include <stdlib.h>
#include <string.h>

void pc_buf_init(pc_buf_t *b, size_t limit) {
    memset(b, 0, sizeof *b);
    b->limit = limit ? limit : SIZE_MAX / 2;
}

void pc_buf_free(pc_buf_t *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

pulsarc_err_t pc_buf_reserve(pc_buf_t *b, size_t n) {
    if (n > b->limit || b->len > b->limit - n)
        return PULSARC_ERR_NOMEM;
    size_t need = b->len + n;
    if (need <= b->cap)
        return PULSARC_OK;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 4 ? need : cap * 2;
    if (cap > b->limit)
        cap = b->limit;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return PULSARC_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    return PULSARC_OK;
}

pulsarc_err_t pc_buf_append(pc_buf_t *b, const void *p, size_t n) {
    pulsarc_err_t err = pc_buf_reserve(b, n);
    if (err)
        return err;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return PULSARC_OK;
}

pulsarc_err_t pc_buf_put_u32(pc_buf_t *b, uint32_t v) {
    uint8_t tmp[4];
    pc_wr_u32(tmp, v);
    return pc_buf_append(b, tmp, 4);
}

pulsarc_err_t pc_buf_put_u16(pc_buf_t *b, uint16_t v) {
    uint8_t tmp[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    return pc_buf_append(b, tmp, 2);
}

void pc_buf_consume(pc_buf_t *b, size_t n) {
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}
