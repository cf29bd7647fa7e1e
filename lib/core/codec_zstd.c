/*
 * Design notes: ZSTD as Pulsar puts it on the wire, one standard zstd
 * frame (magic 28 B5 2F FD) from ZSTD_compress at level 3, the level the
 * cpp client uses and zstd's own default. Built only with WITH_ZSTD=1.
 *
 * Decoding is one-shot ZSTD_decompress into the caller's buffer: its
 * capacity is `expected`, so a frame that announces or produces more fails
 * inside zstd with dstSize_tooSmall (reported as "more than"), and one that
 * produces less is caught by the size compare. The one-shot API uses the
 * destination as its window, so a hostile window size costs no memory.
 * Trailing bytes that are not a frame fail as corruption. zstd allocates a
 * context per call; keeping one would mean state and locking, and payloads
 * are large enough for that cost not to show. Pure; any thread.
 */
#include <zstd.h>
#include <zstd_errors.h>

#include "core/codec.h"
#include "core/err.h"

#define PC_ZSTD_LEVEL 3

static size_t zstd_bound(size_t len) {
    size_t n = ZSTD_compressBound(len);
    return ZSTD_isError(n) ? 0 : n;
}

static pulsarc_err_t zstd_compress(const uint8_t *in, size_t len, uint8_t *dst, size_t cap,
                                   size_t *written) {
    size_t n = ZSTD_compress(dst, cap, in, len, PC_ZSTD_LEVEL);
    if (ZSTD_isError(n))
        return ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? PULSARC_ERR_NOMEM
                                                                     : PULSARC_ERR_COMPRESSION;
    *written = n;
    return PULSARC_OK;
}

static pulsarc_err_t zstd_decompress(const uint8_t *in, size_t len, uint8_t *out,
                                     size_t expected, char *why, size_t whylen) {
    size_t n = ZSTD_decompress(out, expected, in, len);
    if (!ZSTD_isError(n))
        return n == expected ? PULSARC_OK : pc_codec_size_mismatch(why, whylen, n, expected);
    switch (ZSTD_getErrorCode(n)) {
    case ZSTD_error_dstSize_tooSmall:
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION,
                         "frame holds more than uncompressed_size %zu", expected);
    case ZSTD_error_memory_allocation:
        return pc_seterr(why, whylen, PULSARC_ERR_NOMEM, "out of memory");
    default:
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION, "corrupt frame (%s)",
                         ZSTD_getErrorName(n));
    }
}

const pc_codec_ops_t pc_codec_zstd_ops = {zstd_bound, zstd_compress, zstd_decompress};
