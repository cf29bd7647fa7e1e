/*
 * Design notes: codec.c owns the codec table and the checks every codec
 * shares; each codec_*.c owns one library call pair and nothing else, and
 * reports a wrong size in the words of codec_report.c, which sits below
 * both so that the table calls down into the codecs and never back up. The
 * table is indexed by the wire CompressionType, so a value from the peer
 * selects a row after one bounds check and a NULL row means "not built
 * in". Arguments are checked here once (NULL pointers of empty ranges are
 * swapped for a dummy byte, so no library ever sees NULL + 0), and the
 * codec name is prefixed here, so every error string names its codec.
 *
 * No state and no allocation of our own: compress writes straight into the
 * caller's pc_buf_t, decompress into the caller's buffer. Pure; any thread.
 */
#include "core/codec.h"

#include <string.h>
#include <strings.h>

#include "core/err.h"

typedef struct codec_row {
    const char *name;
    const pc_codec_ops_t *ops; /* NULL: NONE, or not built in */
} codec_row_t;

static const codec_row_t codec_table[] = {
    [PC_CODEC_NONE] = {"NONE", NULL},
    [PC_CODEC_LZ4] = {"LZ4", &pc_codec_lz4_ops},
    [PC_CODEC_ZLIB] = {"ZLIB", &pc_codec_zlib_ops},
#ifdef PULSARC_WITH_ZSTD
    [PC_CODEC_ZSTD] = {"ZSTD", &pc_codec_zstd_ops},
#else
    [PC_CODEC_ZSTD] = {"ZSTD", NULL},
#endif
#ifdef PULSARC_WITH_SNAPPY
    [PC_CODEC_SNAPPY] = {"SNAPPY", &pc_codec_snappy_ops},
#else
    [PC_CODEC_SNAPPY] = {"SNAPPY", NULL},
#endif
};

#define CODEC_COUNT (sizeof codec_table / sizeof codec_table[0])

/* The row for a wire value; NULL when the value is not a CompressionType.
 * The unsigned compare also rejects negative values cast from the wire. */
static const codec_row_t *row_of(pc_codec_t c) {
    return (unsigned)c < CODEC_COUNT ? &codec_table[c] : NULL;
}

int pc_codec_available(pc_codec_t c) {
    const codec_row_t *r = row_of(c);
    return r && (c == PC_CODEC_NONE || r->ops != NULL);
}

const char *pc_codec_name(pc_codec_t c) {
    const codec_row_t *r = row_of(c);
    return r ? r->name : "UNKNOWN";
}

int pc_codec_parse(const char *name, pc_codec_t *out) {
    if (!name || !out)
        return -1;
    for (size_t i = 0; i < CODEC_COUNT; i++) {
        if (strcasecmp(name, codec_table[i].name) == 0) {
            *out = (pc_codec_t)i;
            return 0;
        }
    }
    return -1;
}

size_t pc_codec_bound(pc_codec_t c, size_t len) {
    if (c == PC_CODEC_NONE)
        return len;
    const codec_row_t *r = row_of(c);
    return r && r->ops ? r->ops->bound(len) : 0;
}

/* Stands in for NULL pointers of empty ranges: libraries may do pointer
 * arithmetic on their arguments, and NULL + 0 is undefined in C. Never
 * written: every call that gets it also gets a size of 0. */
static uint8_t empty_range[1];

static pulsarc_err_t compress_with(const pc_codec_ops_t *ops, const uint8_t *in, size_t len,
                                   pc_buf_t *out) {
    size_t cap = ops->bound(len);
    if (cap == 0)
        return PULSARC_ERR_COMPRESSION; /* too big for this codec */
    pulsarc_err_t err = pc_buf_reserve(out, cap);
    if (err)
        return err;
    size_t written = 0;
    /* Write into the reserved tail and commit only on success, so a
     * failure leaves out->len where it was. */
    err = ops->compress(in, len, out->data + out->len, cap, &written);
    if (err)
        return err;
    out->len += written;
    return PULSARC_OK;
}

pulsarc_err_t pc_codec_compress(pc_codec_t c, const void *in, size_t len, pc_buf_t *out) {
    if (!out || (!in && len))
        return PULSARC_ERR_INVALID_ARG;
    const codec_row_t *r = row_of(c);
    if (!r || (c != PC_CODEC_NONE && !r->ops))
        return PULSARC_ERR_UNSUPPORTED;
    if (c == PC_CODEC_NONE)
        return pc_buf_append(out, in, len);
    return compress_with(r->ops, in ? in : empty_range, len, out);
}

/* NONE has no format to check, only the size. */
static pulsarc_err_t copy_exact(const void *in, size_t len, void *out, size_t expected,
                                char *errstr, size_t errlen) {
    if (len != expected)
        return pc_seterr(errstr, errlen, PULSARC_ERR_COMPRESSION,
                         "NONE: payload is %zu bytes, uncompressed_size says %zu", len, expected);
    if (len)
        memcpy(out, in, len);
    return PULSARC_OK;
}

pulsarc_err_t pc_codec_decompress(pc_codec_t c, const void *in, size_t len, void *out,
                                  size_t expected, char *errstr, size_t errlen) {
    const codec_row_t *r = row_of(c);
    if (!r)
        return pc_seterr(errstr, errlen, PULSARC_ERR_UNSUPPORTED,
                         "unknown compression type %d", (int)c);
    if (c != PC_CODEC_NONE && !r->ops)
        return pc_seterr(errstr, errlen, PULSARC_ERR_UNSUPPORTED,
                         "%s: compression type not built in", r->name);
    if ((!in && len) || (!out && expected))
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "%s: NULL buffer with a non-zero size", r->name);
    if (c == PC_CODEC_NONE)
        return copy_exact(in, len, out, expected, errstr, errlen);
    if (len == 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_COMPRESSION,
                         "%s: empty input is not a valid compressed payload", r->name);
    char why[160] = "";
    pulsarc_err_t err = r->ops->decompress(in, len, out ? out : empty_range, expected, why,
                                           sizeof why);
    if (err)
        return pc_seterr(errstr, errlen, err, "%s: %s", r->name, why[0] ? why : "failed");
    return PULSARC_OK;
}
