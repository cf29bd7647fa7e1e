/*
 * libFuzzer target: the frame decoder (pc_frame_parse) fed arbitrary bytes,
 * as a hostile broker would send them, parsed in a loop the way the
 * connection does. Sizes near 2^32 and lengths that disagree must end in
 * an error, never in an over-read or an allocation past max_frame.
 *
 * Design notes: the first byte picks the frame limit (the default 5 MiB
 * + padding, or a tiny one) so both the "too big" and the "fits" paths
 * run; the rest is the stream. Every decoded frame is re-encoded when it
 * is a simple command, which exercises pc_frame_encode on whatever
 * protobuf-c accepted.
 */
#include <stddef.h>
#include <stdint.h>

#include "core/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    size_t max = (data[0] & 1) ? PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING : 64;
    const uint8_t *p = data + 1;
    size_t left = size - 1;
    while (left > 0) {
        pc_frame_t f;
        char err[256];
        long n = pc_frame_parse(p, left, max, &f, err, sizeof err);
        if (n <= 0)
            break;
        if ((size_t)n > left)
            __builtin_trap(); /* consumed more than it was given */
        if (!f.has_payload) {
            pc_buf_t out;
            pc_buf_init(&out, 1 << 20);
            (void)pc_frame_encode(&out, f.cmd);
            pc_buf_free(&out);
        } else if (f.payload + f.payload_len > p + n || f.meta + f.meta_len > p + n) {
            __builtin_trap(); /* a view past the frame */
        }
        pc_frame_clear(&f);
        p += n;
        left -= (size_t)n;
    }
    return 0;
}
