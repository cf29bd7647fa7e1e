/*
 * Payload compression in the exact byte formats the Java client writes and
 * reads (docs/PROTOCOL.md §6). No I/O, no threads, no state: any thread.
 *
 *   LZ4     raw LZ4 block: no frame, no size prefix
 *   ZLIB    zlib stream (RFC 1950: header + deflate + Adler-32); not raw, not gzip
 *   ZSTD    standard zstd frame, level 3
 *   SNAPPY  raw snappy block (varint length + elements); not the framing format
 *
 * The uncompressed size is never taken from the compressed bytes: it comes
 * from MessageMetadata.uncompressed_size and the result must match it.
 */
#ifndef PC_CODEC_H
#define PC_CODEC_H
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "pulsarc.h"

/* The wire CompressionType values. */
typedef enum pc_codec {
    PC_CODEC_NONE = 0,
    PC_CODEC_LZ4 = 1,
    PC_CODEC_ZLIB = 2,
    PC_CODEC_ZSTD = 3,
    PC_CODEC_SNAPPY = 4,
} pc_codec_t;

/* 1 when c can be used in this build (NONE, LZ4, ZLIB always; ZSTD and
 * SNAPPY unless built with WITH_ZSTD=0 / WITH_SNAPPY=0); 0 otherwise. */
int pc_codec_available(pc_codec_t c);

/* "NONE", "LZ4", "ZLIB", "ZSTD", "SNAPPY" (the Java enum names), also for
 * codecs not built in; "UNKNOWN" for other values. Static string. */
const char *pc_codec_name(pc_codec_t c);

/* Name to value, case-insensitive ("lz4", "LZ4", "none", ...). Returns 0,
 * or -1 (out untouched) for an unknown name or NULL. A known name parses
 * even when the codec is not built in: check pc_codec_available(). */
int pc_codec_parse(const char *name, pc_codec_t *out);

/* Worst-case compressed size of len input bytes; 0 when c is unknown or
 * not built in, or len is beyond what the codec can take (LZ4: ~2 GB). */
size_t pc_codec_bound(pc_codec_t c, size_t len);

/*
 * Appends the compressed form of in[0..len) to out (NONE: a copy). in may
 * be NULL when len is 0. On error out->len is unchanged (its capacity may
 * have grown). Errors: UNSUPPORTED (unknown or not built in), NOMEM (out's
 * limit or OOM), COMPRESSION (the library failed or len is too big for it),
 * INVALID_ARG (out NULL).
 */
pulsarc_err_t pc_codec_compress(pc_codec_t c, const void *in, size_t len, pc_buf_t *out);

/*
 * Decompresses in[0..len) into out, which has room for exactly `expected`
 * bytes (MessageMetadata.uncompressed_size); at most `expected` bytes are
 * ever written, whatever the input. Succeeds only when the whole input is
 * one valid stream that yields exactly `expected` bytes (NONE: len ==
 * expected, copied). out may be NULL when expected is 0. Empty input is
 * rejected for every real codec: none of them encodes anything as 0 bytes.
 *
 * Hostile input: `expected` comes from the peer too, so the CALLER must
 * bound it (e.g. by the max message size) before allocating out; this
 * function trusts it only as a buffer size.
 *
 * Errors (errstr says which codec and what went wrong; may be NULL/0):
 * COMPRESSION (corrupt, truncated or trailing input, size != expected),
 * UNSUPPORTED (unknown value or not built in), NOMEM (library allocation),
 * INVALID_ARG (in or out NULL with a non-zero size).
 */
pulsarc_err_t pc_codec_decompress(pc_codec_t c, const void *in, size_t len, void *out,
                                  size_t expected, char *errstr, size_t errlen);

/* ---- for the per-codec files (codec_*.c) only ------------------------ */

/*
 * One codec. codec.c checks arguments and replaces NULL pointers of empty
 * ranges before calling, so in, out and dst are never NULL and decompress
 * sees len >= 1. On failure an implementation writes a short reason (no
 * codec name: the dispatcher prefixes it) into why[0..whylen).
 */
typedef struct pc_codec_ops {
    size_t (*bound)(size_t len); /* 0: len too big for the codec */
    /* Writes at most cap bytes to dst; *written gets the size. */
    pulsarc_err_t (*compress)(const uint8_t *in, size_t len, uint8_t *dst, size_t cap,
                              size_t *written);
    pulsarc_err_t (*decompress)(const uint8_t *in, size_t len, uint8_t *out, size_t expected,
                                char *why, size_t whylen);
} pc_codec_ops_t;

extern const pc_codec_ops_t pc_codec_lz4_ops;
extern const pc_codec_ops_t pc_codec_zlib_ops;
#ifdef PULSARC_WITH_ZSTD
extern const pc_codec_ops_t pc_codec_zstd_ops;
#endif
#ifdef PULSARC_WITH_SNAPPY
extern const pc_codec_ops_t pc_codec_snappy_ops;
#endif

/* The shared "size mismatch" reason, so every codec words it alike. */
pulsarc_err_t pc_codec_size_mismatch(char *why, size_t whylen, size_t got, size_t expected);
#endif
