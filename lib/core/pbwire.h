/*
 * A minimal protobuf wire reader: varints and fields, bounds-checked
 * against the end of the buffer. Used where protobuf-c's generic,
 * descriptor-driven unpack is too slow for the per-message path (batch
 * records, the MESSAGE command, MessageMetadata). Header-only so the hot
 * loops inline it. No allocation, no state; any thread.
 */
#ifndef PC_PBWIRE_H
#define PC_PBWIRE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { PC_WT_VARINT = 0, PC_WT_I64 = 1, PC_WT_LEN = 2, PC_WT_I32 = 5 };

static inline int pc_pb_varint_bytes(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
    const uint8_t *p = *pp;
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
        uint8_t b = *p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            *pp = p;
            return 0;
        }
    }
    return -1;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The 7-bit groups of the n (1..8) little-endian bytes in x, joined. */
static inline uint64_t pc_pb_squeeze(uint64_t x, int n) {
    if (n < 8)
        x &= (UINT64_C(1) << (8 * n)) - 1;
    x &= UINT64_C(0x7f7f7f7f7f7f7f7f);
    x = ((x & UINT64_C(0x7f007f007f007f00)) >> 1) | (x & UINT64_C(0x007f007f007f007f));
    x = ((x & UINT64_C(0x3fff00003fff0000)) >> 2) | (x & UINT64_C(0x00003fff00003fff));
    x = ((x & UINT64_C(0x0fffffff00000000)) >> 4) | (x & UINT64_C(0x000000000fffffff));
    return x;
}

/*
 * Multi-byte varints with 8 bytes readable: one load, the end found by the
 * first clear top bit, the groups joined with masks (no loop per byte).
 * Brokers pad some ids to 10 bytes, so this is not a rare case.
 */
__attribute__((noinline)) static int pc_pb_varint_slow(const uint8_t **pp, const uint8_t *end,
                                                       uint64_t *v) {
    const uint8_t *p = *pp;
    if (end - p < 8)
        return pc_pb_varint_bytes(pp, end, v);
    uint64_t x;
    memcpy(&x, p, sizeof x);
    uint64_t stop = ~x & UINT64_C(0x8080808080808080);
    if (stop) {
        int n = (__builtin_ctzll(stop) >> 3) + 1;
        *v = pc_pb_squeeze(x, n);
        *pp = p + n;
        return 0;
    }
    uint64_t r = pc_pb_squeeze(x, 8); /* bytes 8 and 9 carry bits 56..63 */
    if (end - p < 9)
        return -1;
    r |= (uint64_t)(p[8] & 0x7f) << 56;
    if (p[8] < 0x80) {
        *v = r;
        *pp = p + 9;
        return 0;
    }
    if (end - p < 10 || p[9] >= 0x80)
        return -1;
    *v = r | (uint64_t)p[9] << 63;
    *pp = p + 10;
    return 0;
}
#else
static inline int pc_pb_varint_slow(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
    return pc_pb_varint_bytes(pp, end, v);
}
#endif

/* Reads a varint at *pp; 0 on success (and *pp advanced), -1 if truncated or too long. */
__attribute__((always_inline)) static inline int pc_pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) { /* keys and small values: one byte */
        *v = *p;
        *pp = p + 1;
        return 0;
    }
    if (end - p >= 2 && p[1] < 0x80) { /* sizes and small counters */
        *v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
        *pp = p + 2;
        return 0;
    }
    return pc_pb_varint_slow(pp, end, v);
}

/* One field: its number, wire type, and value (varint) or bytes. */
typedef struct pc_pb_field {
    uint32_t num;
    int wt;
    uint64_t v;
    const uint8_t *bytes;
    size_t len;
} pc_pb_field_t;

/* Reads one field at *pp; 0 on success, -1 when malformed. */
static inline int pc_pb_field(const uint8_t **pp, const uint8_t *end, pc_pb_field_t *f) {
    uint64_t key;
    if (pc_pb_varint(pp, end, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
        return -1;
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    f->v = 0;
    f->bytes = NULL;
    f->len = 0;
    switch (f->wt) {
    case PC_WT_VARINT:
        return pc_pb_varint(pp, end, &f->v);
    case PC_WT_I64:
    case PC_WT_I32: {
        size_t n = f->wt == PC_WT_I64 ? 8 : 4;
        if ((size_t)(end - *pp) < n)
            return -1;
        *pp += n;
        return 0;
    }
    case PC_WT_LEN:
        if (pc_pb_varint(pp, end, &f->v) || f->v > (uint64_t)(end - *pp))
            return -1;
        f->bytes = *pp;
        f->len = (size_t)f->v;
        *pp += f->len;
        return 0;
    default:
        return -1;
    }
}
#endif
