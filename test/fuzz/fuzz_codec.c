/*
 * libFuzzer target: strict, bounded decompression (pc_codec_decompress)
 * of every codec with a peer-chosen "uncompressed size". The expected size
 * is capped here as the consumer caps it (64 MiB) before allocating; the
 * codec must never write past it, whatever the input claims.
 *
 * Input: [codec:1][expected:4, big-endian][compressed bytes].
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/buf.h"
#include "core/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 5)
        return 0;
    pc_codec_t c = (pc_codec_t)(data[0] % 6);
    size_t expected = pc_rd_u32(data + 1) % ((size_t)1 << 20); /* fuzz-sized; the cap is tested by rx_decode */
    uint8_t *out = malloc(expected ? expected : 1);
    char err[256];
    (void)pc_codec_decompress(c, data + 5, size - 5, expected ? out : NULL, expected, err, sizeof err);
    free(out);
    return 0;
}
