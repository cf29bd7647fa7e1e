/*
 * Design notes: a walk over protobuf bytes that mirrors what protobuf-c's
 * unpack would do with them, counting instead of allocating. It reads each
 * field with the wire reader of core/pbwire.h, looks the field up in the
 * message's descriptor, and for a known sub-message field recurses with
 * depth + 1, refusing before the call when that passes max_depth, so its
 * own stack use is bounded by the limit, not by the input.
 *
 * The memory estimate follows protobuf-c 1.4's allocations, each rounded
 * up by SLACK for alignment and allocator headers:
 *   - every message: sizeof the struct, its required-field bitmap, and its
 *     scan slabs: protobuf-c records the first STACK_SCANS field
 *     occurrences on its stack, then allocates slabs of 32, 64, 128 ...
 *     SCAN_RECORD-byte records, each when the one before is full;
 *   - repeated fields: the element array (pointer, 4 or 8 bytes a value);
 *   - strings and bytes: their length + 1;
 *   - unknown fields: a record plus a copy of the field's bytes;
 *   - a non-repeated message field seen twice in one message is merged by
 *     protobuf-c once the repeat is unpacked, re-allocating the repeated
 *     arrays of both: charged after the repeat's walk as everything counted
 *     so far (an over-estimate that
 *     doubles per repeat, so a flood of repeats hits the limit fast;
 *     Pulsar's brokers never repeat a non-repeated field).
 *
 * Bounds, and why these numbers: see core/pbguard.h. Pure; any thread.
 */
#include "core/pbguard.h"

#include <stdio.h>
#include <string.h>

#include "core/pbwire.h"

const pc_pbguard_limits_t pc_pbguard_default_limits = {
    PC_PB_MAX_DEPTH, PC_PB_MAX_ELEMENTS, PC_PB_MAX_UNPACKED};

#define SLACK 16
#define SCAN_RECORD 32
#define STACK_SCANS 16
#define UNKNOWN_RECORD 32
/* Fields whose "seen once" bit is kept; a larger index shares a bit (overcharges). */
#define SEEN_BITS 128

typedef struct walk {
    const pc_pbguard_limits_t *lim;
    pc_pbguard_result_t *res;
    const uint8_t *top;
} walk_t;

static pc_pbguard_status_t stop(walk_t *w, pc_pbguard_status_t st, const ProtobufCMessageDescriptor *d,
                                const ProtobufCFieldDescriptor *fd) {
    w->res->status = st;
    w->res->message = d->short_name;
    w->res->field = fd ? fd->name : NULL;
    return st;
}

/* Adds n elements and b bytes; says which limit, if any, that passes. */
static pc_pbguard_status_t charge(walk_t *w, size_t n, size_t b) {
    pc_pbguard_result_t *r = w->res;
    r->elements += n;
    r->unpacked = b > SIZE_MAX - r->unpacked ? SIZE_MAX : r->unpacked + b;
    if (r->elements > w->lim->max_elements)
        return PC_PBG_TOO_MANY;
    if (r->unpacked > w->lim->max_unpacked)
        return PC_PBG_TOO_BIG;
    return PC_PBG_OK;
}

/* Bytes one value of a field's type takes in the unpacked struct or array. */
static size_t value_size(ProtobufCType t) {
    switch (t) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    default:
        return 4;
    }
}

static int is_packable(ProtobufCType t) {
    return t != PROTOBUF_C_TYPE_STRING && t != PROTOBUF_C_TYPE_BYTES && t != PROTOBUF_C_TYPE_MESSAGE;
}

/* Values in a packed run; -1 when it does not split into whole values. */
static long packed_count(ProtobufCType t, const uint8_t *p, size_t len) {
    size_t vs = value_size(t);
    int fixed = t == PROTOBUF_C_TYPE_FIXED32 || t == PROTOBUF_C_TYPE_SFIXED32 ||
                t == PROTOBUF_C_TYPE_FLOAT || t == PROTOBUF_C_TYPE_FIXED64 ||
                t == PROTOBUF_C_TYPE_SFIXED64 || t == PROTOBUF_C_TYPE_DOUBLE;
    if (fixed)
        return len % vs ? -1 : (long)(len / vs);
    long n = 0;
    for (size_t i = 0; i < len; i++) /* a varint ends at each byte below 0x80 */
        n += p[i] < 0x80;
    return len && p[len - 1] >= 0x80 ? -1 : n;
}

static pc_pbguard_status_t walk_message(walk_t *w, const ProtobufCMessageDescriptor *d,
                                        const uint8_t *p, const uint8_t *end, unsigned depth);

/* A field the descriptor knows. seen: this message's "field met before" bits. */
static pc_pbguard_status_t known_field(walk_t *w, const ProtobufCMessageDescriptor *d,
                                       const ProtobufCFieldDescriptor *fd, const pc_pb_field_t *f,
                                       uint8_t *seen, unsigned depth) {
    pc_pbguard_status_t st;
    int repeated = fd->label == PROTOBUF_C_LABEL_REPEATED, merge = 0;
    if (repeated && f->wt == PC_WT_LEN && is_packable(fd->type)) {
        long n = packed_count(fd->type, f->bytes, f->len);
        if (n < 0)
            return stop(w, PC_PBG_MALFORMED, d, fd);
        st = charge(w, (size_t)n, (size_t)n * value_size(fd->type) + SLACK);
        return st ? stop(w, st, d, fd) : PC_PBG_OK;
    }
    size_t bytes = repeated ? value_size(fd->type) + SLACK : 0;
    if (fd->type == PROTOBUF_C_TYPE_STRING || fd->type == PROTOBUF_C_TYPE_BYTES)
        bytes += f->len + 1 + SLACK;
    if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
        if (f->wt != PC_WT_LEN)
            return stop(w, PC_PBG_MALFORMED, d, fd);
        unsigned bit = (unsigned)(fd - d->fields) % SEEN_BITS;
        merge = !repeated && (seen[bit / 8] >> (bit % 8) & 1);
        seen[bit / 8] |= (uint8_t)(1u << (bit % 8));
    }
    st = charge(w, repeated || fd->type == PROTOBUF_C_TYPE_MESSAGE, bytes);
    if (st)
        return stop(w, st, d, fd);
    if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
        return PC_PBG_OK;
    if (depth + 1 > w->lim->max_depth) {
        w->res->depth = depth + 1;
        return stop(w, PC_PBG_TOO_DEEP, d, fd);
    }
    st = walk_message(w, fd->descriptor, f->bytes, f->bytes + f->len, depth + 1);
    if (st || !merge)
        return st;
    /* protobuf-c merges the repeat into the earlier one once both are
     * unpacked, re-allocating arrays of both: charged as all so far */
    st = charge(w, 0, w->res->unpacked);
    return st ? stop(w, st, d, fd) : PC_PBG_OK;
}

static pc_pbguard_status_t walk_message(walk_t *w, const ProtobufCMessageDescriptor *d,
                                        const uint8_t *p, const uint8_t *end, unsigned depth) {
    if (depth > w->res->depth)
        w->res->depth = depth;
    pc_pbguard_status_t st =
        charge(w, 0, d->sizeof_message + d->n_fields / 8 + 1 + 2 * SLACK);
    if (st)
        return stop(w, st, d, NULL);
    uint8_t seen[SEEN_BITS / 8] = {0};
    size_t occurrences = 0, scan_room = STACK_SCANS, next_slab = 2 * STACK_SCANS;
    while (p < end) {
        const uint8_t *start = p;
        pc_pb_field_t f;
        if (pc_pb_field(&p, end, &f)) {
            w->res->offset = (size_t)(start - w->top);
            return stop(w, PC_PBG_MALFORMED, d, NULL);
        }
        const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(d, f.num);
        if (fd)
            st = known_field(w, d, fd, &f, seen, depth);
        else if ((st = charge(w, 1, UNKNOWN_RECORD + (size_t)(p - start) + SLACK)))
            stop(w, st, d, NULL);
        if (st) {
            if (st == PC_PBG_MALFORMED && !w->res->offset)
                w->res->offset = (size_t)(start - w->top);
            return st;
        }
        if (++occurrences > scan_room) { /* protobuf-c's next scan slab */
            if (charge(w, 0, next_slab * SCAN_RECORD + SLACK))
                return stop(w, PC_PBG_TOO_BIG, d, fd);
            scan_room += next_slab;
            next_slab *= 2;
        }
    }
    return PC_PBG_OK;
}

pc_pbguard_status_t pc_pbguard_check(const ProtobufCMessageDescriptor *d, const uint8_t *p,
                                     size_t len, const pc_pbguard_limits_t *lim,
                                     pc_pbguard_result_t *res) {
    memset(res, 0, sizeof *res);
    walk_t w = {lim ? lim : &pc_pbguard_default_limits, res, p};
    if (w.lim->max_depth == 0)
        return stop(&w, PC_PBG_TOO_DEEP, d, NULL);
    res->status = walk_message(&w, d, p, p + len, 1);
    return res->status;
}

const char *pc_pbguard_describe(const pc_pbguard_result_t *res, const pc_pbguard_limits_t *lim,
                                char *buf, size_t len) {
    if (!lim)
        lim = &pc_pbguard_default_limits;
    const char *m = res->message ? res->message : "?";
    const char *sep = res->field ? "." : "";
    const char *fl = res->field ? res->field : "";
    switch (res->status) {
    case PC_PBG_OK:
        snprintf(buf, len, "within bounds (depth %u, %zu elements, ~%zu bytes unpacked)", res->depth,
                 res->elements, res->unpacked);
        break;
    case PC_PBG_MALFORMED:
        snprintf(buf, len, "%s%s%s: not protobuf wire format at byte %zu", m, sep, fl, res->offset);
        break;
    case PC_PBG_TOO_DEEP:
        snprintf(buf, len, "%s%s%s nests messages deeper than the limit of %u levels", m, sep, fl,
                 lim->max_depth);
        break;
    case PC_PBG_TOO_MANY:
        snprintf(buf, len, "%s%s%s: more than the limit of %zu elements", m, sep, fl, lim->max_elements);
        break;
    case PC_PBG_TOO_BIG:
        snprintf(buf, len, "%s%s%s: would unpack to more than the limit of %zu bytes", m, sep, fl,
                 lim->max_unpacked);
        break;
    }
    return buf;
}
