/*
 * Design notes: SNAPPY as Pulsar puts it on the wire, a raw snappy block
 * (varint uncompressed length, then literal/copy elements). Not the
 * framing format with its "sNaPpY" stream identifier: the cpp client uses
 * snappy::Compress/Uncompress and Go snappy.Encode/Decode, both the block
 * API. Built only with WITH_SNAPPY=1; the C API is <snappy-c.h>.
 *
 * The block carries its own length, which we check against `expected`
 * before decoding: a mismatch is reported with both numbers, and snappy
 * never starts on a block that would not fit. snappy_uncompress then
 * refuses any block whose elements do not add up to exactly that length
 * or run past the input. Pure; any thread.
 */
#include <snappy-c.h>

#include "core/codec.h"
#include "core/err.h"

static size_t snappy_bound(size_t len) {
    /* snappy's length header is a varint32: nothing longer is encodable. */
    if (len > UINT32_MAX)
        return 0;
    return snappy_max_compressed_length(len);
}

static pulsarc_err_t snappy_compress_block(const uint8_t *in, size_t len, uint8_t *dst,
                                           size_t cap, size_t *written) {
    size_t n = cap;
    if (snappy_compress((const char *)in, len, (char *)dst, &n) != SNAPPY_OK)
        return PULSARC_ERR_COMPRESSION;
    *written = n;
    return PULSARC_OK;
}

static pulsarc_err_t snappy_decompress_block(const uint8_t *in, size_t len, uint8_t *out,
                                             size_t expected, char *why, size_t whylen) {
    size_t announced = 0;
    if (snappy_uncompressed_length((const char *)in, len, &announced) != SNAPPY_OK)
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION, "corrupt length header");
    if (announced != expected)
        return pc_codec_size_mismatch(why, whylen, announced, expected);
    size_t n = expected;
    if (snappy_uncompress((const char *)in, len, (char *)out, &n) != SNAPPY_OK)
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION, "corrupt block");
    /* Belt and braces: snappy already checks this internally. */
    if (n != expected)
        return pc_codec_size_mismatch(why, whylen, n, expected);
    return PULSARC_OK;
}

const pc_codec_ops_t pc_codec_snappy_ops = {snappy_bound, snappy_compress_block,
                                            snappy_decompress_block};
