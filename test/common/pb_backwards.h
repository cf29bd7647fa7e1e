/*
 * Design note: a protobuf writer that fills a buffer from its end, so a
 * message nested thousands of levels deep is built by a loop (write the
 * innermost content, then prepend its length and key) where protobuf-c's
 * pack would recurse. Fields are prepended: write them in reverse order.
 * Shared by the unit tests, the fake broker and the fuzzer; header-only so
 * the fuzz build needs no extra object. A writer belongs to one thread.
 */
#ifndef PC_TEST_PB_BACKWARDS_H
#define PC_TEST_PB_BACKWARDS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct pb_backwards {
    uint8_t *buf;
    size_t pos;     /* the content is buf[pos .. end of buffer) */
    size_t reserve; /* a prepend that would leave less room than this in front is dropped */
    int full;       /* a prepend was dropped: the content is incomplete */
} pb_backwards_t;

static inline void pbb_bytes(pb_backwards_t *b, const void *p, size_t n) {
    if (b->full || b->pos < n + b->reserve) {
        b->full = 1;
        return;
    }
    b->pos -= n;
    memcpy(b->buf + b->pos, p, n);
}

static inline void pbb_varint(pb_backwards_t *b, uint64_t v) {
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    pbb_bytes(b, t, n);
}

/* The key of field num with wire type wt (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
static inline void pbb_key(pb_backwards_t *b, uint32_t num, int wt) {
    pbb_varint(b, (uint64_t)num << 3 | (unsigned)wt);
}

/* Field num as a varint value. */
static inline void pbb_uint(pb_backwards_t *b, uint32_t num, uint64_t v) {
    pbb_varint(b, v);
    pbb_key(b, num, 0);
}

/* Wraps the last len bytes written as field num (a sub-message, string or packed run). */
static inline void pbb_wrap(pb_backwards_t *b, uint32_t num, size_t len) {
    pbb_varint(b, len);
    pbb_key(b, num, 2);
}
#endif
