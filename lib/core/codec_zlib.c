/*
 * Design notes: ZLIB as Pulsar puts it on the wire, a zlib stream (RFC
 * 1950: CMF/FLG header, deflate data, Adler-32 trailer). Not raw deflate
 * and not gzip: Java's Deflater with nowrap=false, the cpp client's
 * compress() and Go's compress/zlib all write this wrapper, and they all
 * decode with the wrapper expected (inflateInit2(MAX_WBITS) in cpp).
 *
 * Compression is compress2 at Z_DEFAULT_COMPRESSION (level 6), the level
 * Java's Deflater and cpp's compress() use, so our bytes match theirs.
 *
 * Decompression runs one inflate(Z_FINISH) into the caller's buffer rather
 * than uncompress(): uncompress folds "output full", "input truncated" and
 * "trailing bytes" into one code, and the consumer's error report is worth
 * telling them apart. The Adler-32 trailer is verified by inflate, so
 * corruption is caught even when the size happens to match. zlib counts
 * in uInt; Pulsar sizes are 32-bit, so larger ones are simply refused.
 * Pure; any thread.
 */
#define ZLIB_CONST
#include <limits.h>
#include <string.h>
#include <zlib.h>

#include "core/codec.h"
#include "core/err.h"

static size_t zlib_bound(size_t len) {
    if (len > ULONG_MAX / 2)
        return 0;
    return (size_t)compressBound((uLong)len);
}

static pulsarc_err_t zlib_compress(const uint8_t *in, size_t len, uint8_t *dst, size_t cap,
                                   size_t *written) {
    uLongf n = (uLongf)cap;
    int rc = compress2(dst, &n, in, (uLong)len, Z_DEFAULT_COMPRESSION);
    if (rc == Z_MEM_ERROR)
        return PULSARC_ERR_NOMEM;
    if (rc != Z_OK)
        return PULSARC_ERR_COMPRESSION;
    *written = (size_t)n;
    return PULSARC_OK;
}

/* After the caller's buffer filled up without reaching the stream end:
 * would the stream produce another byte? Probes into a local byte, so the
 * caller's buffer is never written past its end. */
static int has_more_output(z_stream *s) {
    uint8_t probe;
    s->next_out = &probe;
    s->avail_out = 1;
    int rc = inflate(s, Z_FINISH);
    return (rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR) && s->avail_out == 0;
}

/* Maps what one inflate(Z_FINISH) call ended with to our verdict. */
static pulsarc_err_t judge(z_stream *s, int rc, size_t expected, char *why, size_t whylen) {
    size_t got = expected - s->avail_out;
    switch (rc) {
    case Z_STREAM_END:
        if (s->avail_in != 0)
            return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION,
                             "%u bytes after the end of the zlib stream", s->avail_in);
        return got == expected ? PULSARC_OK : pc_codec_size_mismatch(why, whylen, got, expected);
    case Z_DATA_ERROR:
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION, "corrupt stream (%s)",
                         s->msg ? s->msg : "data error");
    case Z_NEED_DICT:
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION,
                         "stream wants a preset dictionary (Pulsar never uses one)");
    case Z_MEM_ERROR:
        return pc_seterr(why, whylen, PULSARC_ERR_NOMEM, "out of memory");
    default: { /* Z_OK / Z_BUF_ERROR: stopped before the end of the stream */
        int full = s->avail_out == 0;
        if (full && has_more_output(s))
            return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION,
                             "decodes to more than uncompressed_size %zu", expected);
        /* The Java client deflates with SYNC_FLUSH and never finishes the
         * stream: no final block, no Adler-32. All input used and exactly
         * the expected bytes out is therefore a complete message. */
        if (full && s->avail_in == 0)
            return PULSARC_OK;
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION, "truncated stream");
    }
    }
}

static pulsarc_err_t zlib_decompress(const uint8_t *in, size_t len, uint8_t *out,
                                     size_t expected, char *why, size_t whylen) {
    if (len > UINT_MAX || expected > UINT_MAX)
        return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION,
                         "sizes beyond 4 GB (in %zu, out %zu)", len, expected);
    z_stream s;
    memset(&s, 0, sizeof s);
    s.next_in = in;
    s.avail_in = (uInt)len;
    /* inflateInit = inflateInit2(MAX_WBITS): the zlib wrapper, required. */
    int rc = inflateInit(&s);
    if (rc != Z_OK)
        return pc_seterr(why, whylen, rc == Z_MEM_ERROR ? PULSARC_ERR_NOMEM : PULSARC_ERR_COMPRESSION,
                         "inflateInit failed (%d)", rc);
    s.next_out = out;
    s.avail_out = (uInt)expected;
    rc = inflate(&s, Z_FINISH);
    pulsarc_err_t err = judge(&s, rc, expected, why, whylen);
    inflateEnd(&s);
    return err;
}

const pc_codec_ops_t pc_codec_zlib_ops = {zlib_bound, zlib_compress, zlib_decompress};
