/* Growable byte buffer with a hard size limit. */
#ifndef PC_BUF_H
#define PC_BUF_H
#include <stddef.h>
#include <stdint.h>
#include "pulsarc.h"

typedef struct pc_buf {
    uint8_t *data;
    size_t len;   /* bytes in use */
    size_t cap;   /* bytes allocated */
    size_t limit; /* never grow past this (0: SIZE_MAX / 2) */
} pc_buf_t;

void pc_buf_init(pc_buf_t *b, size_t limit);
void pc_buf_free(pc_buf_t *b);
/* Makes room for n more bytes; NOMEM past the limit or on OOM. */
pulsarc_err_t pc_buf_reserve(pc_buf_t *b, size_t n);
pulsarc_err_t pc_buf_append(pc_buf_t *b, const void *p, size_t n);
pulsarc_err_t pc_buf_put_u32(pc_buf_t *b, uint32_t v);
pulsarc_err_t pc_buf_put_u16(pc_buf_t *b, uint16_t v);
/* Drops the first n bytes (moves the rest to the front). */
void pc_buf_consume(pc_buf_t *b, size_t n);

static inline uint32_t pc_rd_u32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint16_t pc_rd_u16(const uint8_t *p) {
    return (uint16_t)(((unsigned)p[0] << 8) | p[1]);
}
static inline void pc_wr_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);  p[3] = (uint8_t)v;
}
#endif
