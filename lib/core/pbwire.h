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

enum { PC_WT_VARINT = 0, PC_WT_I64 = 1, PC_WT_LEN = 2, PC_WT_I32 = 5 };

static inline int pc_pb_varint_slow(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
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

/* Reads a varint at *pp; 0 on success (and *pp advanced), -1 if truncated or too long. */
static inline int pc_pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) { /* keys and small values: one byte */
        *v = *p;
        *pp = p + 1;
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
