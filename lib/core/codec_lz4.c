/*
 * Design notes: LZ4 as Pulsar puts it on the wire, a raw LZ4 block: no
 * frame (no 0x184D2204 magic), no size prefix, the size living only in
 * MessageMetadata.uncompressed_size. That is what lz4-java's block API,
 * the cpp client's LZ4_compress_default and Go's CompressBlock write.
 *
 * Decoding uses LZ4_decompress_safe, never the _fast variant the cpp
 * client uses: _fast trusts the input and can read past it. _safe bounds
 * both sides and also insists that the block ends exactly at the end of
 * the input, so trailing bytes count as corruption. Both calls take int
 * sizes, hence the LZ4_MAX_INPUT_SIZE checks. Pure; any thread.
 */
#include <limits.h>
#include <lz4.h>

#include "core/codec.h"
#include "core/err.h"

static size_t lz4_bound(size_t len) {
    if (len > LZ4_MAX_INPUT_SIZE)
        return 0;
    return (size_t)LZ4_compressBound((int)len);
}

static pulsarc_err_t lz4_compress(const uint8_t *in, size_t len, uint8_t *dst, size_t cap,
                                  size_t *written) {
    /* cap came from lz4_bound, so both fit in an int. */
    int n = LZ4_compress_default((const char *)in, (char *)dst, (int)len,
                                 cap > INT_MAX ? INT_MAX : (int)cap);
    if (n <= 0)
        return PULSARC_ERR_COMPRESSION;
    *written = (size_t)n;
    return PULSARC_OK;
}

static pulsarc_err_t lz4_decompress(const uint8_t *in, size_t len, uint8_t *out,
                                    size_t expected, char *why, size_t whylen) {
    if (len > INT_MAX || expected > LZ4_MAX_INPUT_SIZE)
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION,
                         "sizes beyond LZ4's 2 GB block limit (in %zu, out %zu)", len, expected);
    int n = LZ4_decompress_safe((const char *)in, (char *)out, (int)len, (int)expected);
    /* A block that would grow past `expected` fails inside LZ4 (it stops
     * at the capacity), so "too large" and "corrupt" share this report. */
    if (n < 0)
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION,
                         "corrupt block, or it decodes to more than %zu bytes", expected);
    if ((size_t)n != expected)
        return pc_codec_size_mismatch(why, whylen, (size_t)n, expected);
    return PULSARC_OK;
}

const pc_codec_ops_t pc_codec_lz4_ops = {lz4_bound, lz4_compress, lz4_decompress};
