/*
 * Unit tests for the payload codecs (lib/core/codec*.c). The wire formats
 * are pinned three ways: round trips through our own code, cross-checks
 * against the libraries' direct APIs (what the Java and cpp clients call),
 * and fixed byte vectors derived by hand from the format specs, so a
 * change of format (framing, wrapper, level) cannot pass unnoticed.
 * ZSTD and SNAPPY tests exist only when built in (#ifdef).
 */
#include <lz4.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef PULSARC_WITH_ZSTD
#include <zstd.h>
#endif
#ifdef PULSARC_WITH_SNAPPY
#include <snappy-c.h>
#endif

#include "core/buf.h"
#include "core/codec.h"
#include "pulsarc.h"
#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define ck_assert_contains(hay, needle)                                                    \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' does not contain '%s'", (hay),    \
                  (needle))

/* Every real codec this build has; loop tests run once per entry. */
static const pc_codec_t codecs[] = {
    PC_CODEC_LZ4,
    PC_CODEC_ZLIB,
#ifdef PULSARC_WITH_ZSTD
    PC_CODEC_ZSTD,
#endif
#ifdef PULSARC_WITH_SNAPPY
    PC_CODEC_SNAPPY,
#endif
};

/* Deterministic test randomness (xorshift64), so failures reproduce. */
typedef struct rng {
    uint64_t s;
} rng_t;

static uint64_t rnd(rng_t *r) {
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

static void fill_random(rng_t *r, uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd(r);
}

/* Text-like data: compressible but not trivially so. */
static void fill_mixed(rng_t *r, uint8_t *p, size_t n) {
    static const char *words[] = {"pulsar ", "topic ", "ledger ", "entry ", "broker ", "ack "};
    size_t i = 0;
    while (i < n) {
        const char *w = words[rnd(r) % NELEM(words)];
        for (size_t k = 0; w[k] && i < n; k++)
            p[i++] = (uint8_t)w[k];
        if (i < n && rnd(r) % 4 == 0)
            p[i++] = (uint8_t)rnd(r);
    }
}

/* Compresses with our API into a fresh buffer (fails the test on error). */
static pc_buf_t compress_ok(pc_codec_t c, const void *in, size_t len) {
    pc_buf_t b;
    pc_buf_init(&b, 0);
    pulsarc_err_t err = pc_codec_compress(c, in, len, &b);
    ck_assert_msg(err == PULSARC_OK, "%s compress of %zu bytes: %d", pc_codec_name(c), len,
                  (int)err);
    return b;
}

/*
 * Decompresses into a heap buffer of exactly `expected` bytes, so ASan and
 * valgrind flag any write past it. *outp gets the buffer (free it).
 */
static pulsarc_err_t decode_exact(pc_codec_t c, const void *in, size_t len, size_t expected,
                                  uint8_t **outp, char *err, size_t errlen) {
    uint8_t *out = expected ? malloc(expected) : NULL;
    ck_assert(expected == 0 || out != NULL);
    err[0] = '\0';
    pulsarc_err_t rc = pc_codec_decompress(c, in, len, out, expected, err, errlen);
    *outp = out;
    return rc;
}

static void assert_roundtrip(pc_codec_t c, const uint8_t *in, size_t len) {
    pc_buf_t b = compress_ok(c, in, len);
    ck_assert_uint_le(b.len, pc_codec_bound(c, len));
    uint8_t *out;
    char err[256];
    pulsarc_err_t rc = decode_exact(c, b.data, b.len, len, &out, err, sizeof err);
    ck_assert_msg(rc == PULSARC_OK, "%s round trip of %zu bytes: %d %s", pc_codec_name(c), len,
                  (int)rc, err);
    ck_assert(len == 0 || memcmp(out, in, len) == 0);
    free(out);
    pc_buf_free(&b);
}

/* ======================================================================== */
/* names, parsing, availability, bounds */

START_TEST(test_names) {
    ck_assert_str_eq(pc_codec_name(PC_CODEC_NONE), "NONE");
    ck_assert_str_eq(pc_codec_name(PC_CODEC_LZ4), "LZ4");
    ck_assert_str_eq(pc_codec_name(PC_CODEC_ZLIB), "ZLIB");
    ck_assert_str_eq(pc_codec_name(PC_CODEC_ZSTD), "ZSTD");
    ck_assert_str_eq(pc_codec_name(PC_CODEC_SNAPPY), "SNAPPY");
    ck_assert_str_eq(pc_codec_name((pc_codec_t)5), "UNKNOWN");
    ck_assert_str_eq(pc_codec_name((pc_codec_t)9), "UNKNOWN");
    ck_assert_str_eq(pc_codec_name((pc_codec_t)-1), "UNKNOWN");
}
END_TEST

START_TEST(test_wire_values) {
    /* CompressionType in PulsarApi.proto. */
    ck_assert_int_eq(PC_CODEC_NONE, 0);
    ck_assert_int_eq(PC_CODEC_LZ4, 1);
    ck_assert_int_eq(PC_CODEC_ZLIB, 2);
    ck_assert_int_eq(PC_CODEC_ZSTD, 3);
    ck_assert_int_eq(PC_CODEC_SNAPPY, 4);
}
END_TEST

START_TEST(test_parse) {
    static const struct {
        const char *s;
        pc_codec_t c;
    } ok[] = {
        {"none", PC_CODEC_NONE},  {"NONE", PC_CODEC_NONE},     {"lz4", PC_CODEC_LZ4},
        {"LZ4", PC_CODEC_LZ4},    {"zlib", PC_CODEC_ZLIB},     {"ZLib", PC_CODEC_ZLIB},
        {"zstd", PC_CODEC_ZSTD},  {"ZSTD", PC_CODEC_ZSTD},     {"snappy", PC_CODEC_SNAPPY},
        {"SnApPy", PC_CODEC_SNAPPY},
    };
    for (size_t i = 0; i < NELEM(ok); i++) {
        pc_codec_t c = (pc_codec_t)77;
        ck_assert_msg(pc_codec_parse(ok[i].s, &c) == 0, "%s", ok[i].s);
        ck_assert_int_eq(c, ok[i].c);
    }
    static const char *bad[] = {"", "gzip", "lz", "lz4 ", " zlib", "deflate", "zstd1", "UNKNOWN"};
    for (size_t i = 0; i < NELEM(bad); i++) {
        pc_codec_t c = (pc_codec_t)77;
        ck_assert_msg(pc_codec_parse(bad[i], &c) == -1, "'%s' parsed", bad[i]);
        ck_assert_int_eq(c, 77);
    }
    pc_codec_t c = (pc_codec_t)77;
    ck_assert_int_eq(pc_codec_parse(NULL, &c), -1);
    ck_assert_int_eq(c, 77);
    ck_assert_int_eq(pc_codec_parse("lz4", NULL), -1);
    /* Every name parses back to its value. */
    for (int v = 0; v <= 4; v++) {
        ck_assert_int_eq(pc_codec_parse(pc_codec_name((pc_codec_t)v), &c), 0);
        ck_assert_int_eq(c, v);
    }
}
END_TEST

START_TEST(test_available) {
    ck_assert_int_eq(pc_codec_available(PC_CODEC_NONE), 1);
    ck_assert_int_eq(pc_codec_available(PC_CODEC_LZ4), 1);
    ck_assert_int_eq(pc_codec_available(PC_CODEC_ZLIB), 1);
#ifdef PULSARC_WITH_ZSTD
    ck_assert_int_eq(pc_codec_available(PC_CODEC_ZSTD), 1);
#else
    ck_assert_int_eq(pc_codec_available(PC_CODEC_ZSTD), 0);
#endif
#ifdef PULSARC_WITH_SNAPPY
    ck_assert_int_eq(pc_codec_available(PC_CODEC_SNAPPY), 1);
#else
    ck_assert_int_eq(pc_codec_available(PC_CODEC_SNAPPY), 0);
#endif
    ck_assert_int_eq(pc_codec_available((pc_codec_t)5), 0);
    ck_assert_int_eq(pc_codec_available((pc_codec_t)9), 0);
    ck_assert_int_eq(pc_codec_available((pc_codec_t)-1), 0);
}
END_TEST

START_TEST(test_bound) {
    ck_assert_uint_eq(pc_codec_bound(PC_CODEC_NONE, 1234), 1234);
    ck_assert_uint_eq(pc_codec_bound((pc_codec_t)9, 100), 0);
    for (size_t i = 0; i < NELEM(codecs); i++) {
        ck_assert_uint_ge(pc_codec_bound(codecs[i], 0), 1);
        ck_assert_uint_ge(pc_codec_bound(codecs[i], 100000), 100000);
    }
    /* LZ4 blocks are int-sized: past LZ4_MAX_INPUT_SIZE there is no bound. */
    ck_assert_uint_eq(pc_codec_bound(PC_CODEC_LZ4, (size_t)LZ4_MAX_INPUT_SIZE + 1), 0);
    ck_assert_uint_ge(pc_codec_bound(PC_CODEC_LZ4, LZ4_MAX_INPUT_SIZE), LZ4_MAX_INPUT_SIZE);
#ifndef PULSARC_WITH_ZSTD
    ck_assert_uint_eq(pc_codec_bound(PC_CODEC_ZSTD, 100), 0);
#endif
#ifndef PULSARC_WITH_SNAPPY
    ck_assert_uint_eq(pc_codec_bound(PC_CODEC_SNAPPY, 100), 0);
#endif
}
END_TEST

/* ======================================================================== */
/* round trips (loop tests: _i indexes codecs[]) */

START_TEST(test_roundtrip_small) {
    pc_codec_t c = codecs[_i];
    assert_roundtrip(c, NULL, 0);
    assert_roundtrip(c, (const uint8_t *)"", 0);
    assert_roundtrip(c, (const uint8_t *)"x", 1);
    assert_roundtrip(c, (const uint8_t *)"\0", 1);
    assert_roundtrip(c, (const uint8_t *)"hello", 5);
    rng_t r = {0x9E3779B97F4A7C15ull};
    uint8_t buf[300];
    for (size_t n = 2; n <= sizeof buf; n += 7) {
        fill_random(&r, buf, n);
        assert_roundtrip(c, buf, n);
    }
}
END_TEST

START_TEST(test_roundtrip_random) {
    pc_codec_t c = codecs[_i];
    rng_t r = {0xD1B54A32D192ED03ull + (uint64_t)_i};
    static const size_t sizes[] = {4096, 65536 + 7, 1 << 20};
    for (size_t k = 0; k < NELEM(sizes); k++) {
        uint8_t *in = malloc(sizes[k]);
        ck_assert_ptr_nonnull(in);
        fill_random(&r, in, sizes[k]);
        assert_roundtrip(c, in, sizes[k]);
        fill_mixed(&r, in, sizes[k]);
        assert_roundtrip(c, in, sizes[k]);
        free(in);
    }
}
END_TEST

START_TEST(test_roundtrip_repetitive) {
    pc_codec_t c = codecs[_i];
    size_t n = 1 << 20;
    uint8_t *in = malloc(n);
    ck_assert_ptr_nonnull(in);
    for (size_t i = 0; i < n; i++)
        in[i] = (uint8_t)"abc"[i % 3];
    assert_roundtrip(c, in, n);
    /* And it did compress, at least tenfold (snappy, with copies of at
     * most 64 bytes, manages about 20x here; the others far more). */
    pc_buf_t b = compress_ok(c, in, n);
    ck_assert_msg(b.len < n / 10, "%s: %zu bytes", pc_codec_name(c), b.len);
    pc_buf_free(&b);
    memset(in, 0, n);
    assert_roundtrip(c, in, 300000);
    free(in);
}
END_TEST

START_TEST(test_compress_appends) {
    pc_codec_t c = codecs[_i];
    pc_buf_t b;
    pc_buf_init(&b, 0);
    ck_assert_int_eq(pc_buf_append(&b, "HDR", 3), PULSARC_OK);
    ck_assert_int_eq(pc_codec_compress(c, "hello hello hello", 17, &b), PULSARC_OK);
    ck_assert(memcmp(b.data, "HDR", 3) == 0);
    pc_buf_t alone = compress_ok(c, "hello hello hello", 17);
    ck_assert_uint_eq(b.len, 3 + alone.len);
    ck_assert(memcmp(b.data + 3, alone.data, alone.len) == 0);
    pc_buf_free(&alone);
    pc_buf_free(&b);
}
END_TEST

/* A buffer limit below the bound fails with NOMEM and leaves out as it was. */
START_TEST(test_compress_respects_buf_limit) {
    pc_codec_t c = codecs[_i];
    pc_buf_t b;
    pc_buf_init(&b, 8);
    ck_assert_int_eq(pc_buf_append(&b, "ab", 2), PULSARC_OK);
    ck_assert_int_eq(pc_codec_compress(c, "hello", 5, &b), PULSARC_ERR_NOMEM);
    ck_assert_uint_eq(b.len, 2);
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_deterministic) {
    pc_codec_t c = codecs[_i];
    uint8_t in[5000];
    rng_t r = {42};
    fill_mixed(&r, in, sizeof in);
    pc_buf_t a = compress_ok(c, in, sizeof in);
    pc_buf_t b = compress_ok(c, in, sizeof in);
    ck_assert_uint_eq(a.len, b.len);
    ck_assert(memcmp(a.data, b.data, a.len) == 0);
    pc_buf_free(&a);
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_none) {
    pc_buf_t b = compress_ok(PC_CODEC_NONE, "hello", 5);
    ck_assert_uint_eq(b.len, 5);
    ck_assert(memcmp(b.data, "hello", 5) == 0);
    char out[5], err[128] = "";
    ck_assert_int_eq(pc_codec_decompress(PC_CODEC_NONE, b.data, 5, out, 5, err, sizeof err),
                     PULSARC_OK);
    ck_assert(memcmp(out, "hello", 5) == 0);
    ck_assert_int_eq(pc_codec_decompress(PC_CODEC_NONE, b.data, 5, out, 4, err, sizeof err),
                     PULSARC_ERR_COMPRESSION);
    ck_assert_contains(err, "NONE");
    ck_assert_int_eq(pc_codec_decompress(PC_CODEC_NONE, NULL, 0, NULL, 0, err, sizeof err),
                     PULSARC_OK);
    pc_buf_free(&b);
}
END_TEST

/* ======================================================================== */
/* LZ4: raw block */

START_TEST(test_lz4_is_raw_block) {
    rng_t r = {7};
    uint8_t in[10000];
    fill_mixed(&r, in, sizeof in);
    pc_buf_t b = compress_ok(PC_CODEC_LZ4, in, sizeof in);
    /* An LZ4 frame starts with magic 0x184D2204, little-endian on disk. */
    static const uint8_t frame_magic[] = {0x04, 0x22, 0x4D, 0x18};
    ck_assert(b.len < 4 || memcmp(b.data, frame_magic, 4) != 0);
    /* No size prefix either: LZ4's own block decoder takes it as is. */
    uint8_t out[sizeof in];
    int n = LZ4_decompress_safe((const char *)b.data, (char *)out, (int)b.len, (int)sizeof out);
    ck_assert_int_eq(n, (int)sizeof in);
    ck_assert(memcmp(out, in, sizeof in) == 0);
    /* And what LZ4_compress_default writes is byte for byte ours. */
    char ref[LZ4_COMPRESSBOUND(sizeof in)];
    int m = LZ4_compress_default((const char *)in, ref, (int)sizeof in, (int)sizeof ref);
    ck_assert_int_eq(m, (int)b.len);
    ck_assert(memcmp(ref, b.data, b.len) == 0);
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_lz4_golden) {
    /* Inputs under 13 bytes are all literals: token 0x50 (5 literals,
     * no match), then the literals. */
    static const uint8_t hello[] = {0x50, 'h', 'e', 'l', 'l', 'o'};
    pc_buf_t b = compress_ok(PC_CODEC_LZ4, "hello", 5);
    ck_assert_uint_eq(b.len, sizeof hello);
    ck_assert(memcmp(b.data, hello, sizeof hello) == 0);
    pc_buf_free(&b);
    /* Empty input: one token with no literals. */
    b = compress_ok(PC_CODEC_LZ4, NULL, 0);
    ck_assert_uint_eq(b.len, 1);
    ck_assert_uint_eq(b.data[0], 0x00);
    pc_buf_free(&b);

    /* Hand-made block with a match: sequence 1 = token 0x2E (2 literals,
     * match length 4+14=18), "ab", offset 2 (LE 02 00); sequence 2 = token
     * 0x50, 5 literals "xyzwv". Yields "ab" x 10 + "xyzwv". */
    static const uint8_t blk[] = {0x2E, 'a', 'b', 0x02, 0x00, 0x50, 'x', 'y', 'z', 'w', 'v'};
    const char *want = "abababababababababab"
                       "xyzwv";
    uint8_t *out;
    char err[256];
    ck_assert_int_eq(decode_exact(PC_CODEC_LZ4, blk, sizeof blk, 25, &out, err, sizeof err),
                     PULSARC_OK);
    ck_assert(memcmp(out, want, 25) == 0);
    free(out);
}
END_TEST

/* ======================================================================== */
/* ZLIB: zlib wrapper */

START_TEST(test_zlib_has_header) {
    rng_t r = {8};
    uint8_t in[10000];
    fill_mixed(&r, in, sizeof in);
    pc_buf_t b = compress_ok(PC_CODEC_ZLIB, in, sizeof in);
    ck_assert_uint_ge(b.len, 6);
    /* CMF 0x78: deflate (CM 8) with a 32 KiB window; FLG makes the pair a
     * multiple of 31. gzip would start 1F 8B, raw deflate has no header. */
    ck_assert_uint_eq(b.data[0], 0x78);
    ck_assert_uint_eq((b.data[0] * 256u + b.data[1]) % 31u, 0);
    ck_assert_uint_eq(b.data[1] & 0x20, 0); /* FDICT clear */
    /* zlib's own one-shot decoder reads it. */
    uint8_t out[sizeof in];
    uLongf n = sizeof out;
    ck_assert_int_eq(uncompress(out, &n, b.data, b.len), Z_OK);
    ck_assert_uint_eq(n, sizeof in);
    ck_assert(memcmp(out, in, sizeof in) == 0);
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_zlib_golden) {
    /* python3 -c 'import zlib;print(zlib.compress(b"hello",6).hex())'
     * 78 9c: header (level 6); cb 48 cd c9 c9 07 00: fixed-Huffman deflate;
     * 06 2c 02 15: Adler-32 of "hello" (a = 1+532 = 0x215, b = 0x62c). */
    static const uint8_t hello[] = {0x78, 0x9c, 0xcb, 0x48, 0xcd, 0xc9, 0xc9,
                                    0x07, 0x00, 0x06, 0x2c, 0x02, 0x15};
    pc_buf_t b = compress_ok(PC_CODEC_ZLIB, "hello", 5);
    ck_assert_uint_eq(b.len, sizeof hello);
    ck_assert(memcmp(b.data, hello, sizeof hello) == 0);
    pc_buf_free(&b);

    /* Hand-made: header 78 01 (0x7801 % 31 == 0), one final stored block
     * (01, LEN 05 00, NLEN fa ff, "hello"), Adler-32 06 2c 02 15. */
    static const uint8_t stored[] = {0x78, 0x01, 0x01, 0x05, 0x00, 0xfa, 0xff, 'h',
                                     'e',  'l',  'l',  'o',  0x06, 0x2c, 0x02, 0x15};
    uint8_t *out;
    char err[256];
    ck_assert_int_eq(decode_exact(PC_CODEC_ZLIB, stored, sizeof stored, 5, &out, err, sizeof err),
                     PULSARC_OK);
    ck_assert(memcmp(out, "hello", 5) == 0);
    free(out);
}
END_TEST

START_TEST(test_zlib_rejects_gzip_and_raw) {
    uint8_t *out;
    char err[256];
    /* gzip member of "hello" (header, same deflate data, CRC32, ISIZE). */
    static const uint8_t gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x86,
                                 0xa6, 0x10, 0x36, 0x05, 0x00, 0x00, 0x00};
    ck_assert_int_eq(decode_exact(PC_CODEC_ZLIB, gz, sizeof gz, 5, &out, err, sizeof err),
                     PULSARC_ERR_COMPRESSION);
    ck_assert_contains(err, "ZLIB");
    free(out);
    /* Raw deflate: the same block without wrapper. */
    static const uint8_t raw[] = {0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00};
    ck_assert_int_eq(decode_exact(PC_CODEC_ZLIB, raw, sizeof raw, 5, &out, err, sizeof err),
                     PULSARC_ERR_COMPRESSION);
    free(out);
}
END_TEST

/* ======================================================================== */
/* ZSTD: frame */

#ifdef PULSARC_WITH_ZSTD
START_TEST(test_zstd_is_frame) {
    rng_t r = {9};
    uint8_t in[10000];
    fill_mixed(&r, in, sizeof in);
    pc_buf_t b = compress_ok(PC_CODEC_ZSTD, in, sizeof in);
    static const uint8_t magic[] = {0x28, 0xB5, 0x2F, 0xFD};
    ck_assert_uint_ge(b.len, 4);
    ck_assert(memcmp(b.data, magic, 4) == 0);
    ck_assert_uint_eq(ZSTD_getFrameContentSize(b.data, b.len), sizeof in);
    uint8_t out[sizeof in];
    ck_assert_uint_eq(ZSTD_decompress(out, sizeof out, b.data, b.len), sizeof in);
    ck_assert(memcmp(out, in, sizeof in) == 0);
    /* Level 3, as the cpp client: same bytes as ZSTD_compress(..., 3). */
    uint8_t ref[ZSTD_COMPRESSBOUND(sizeof in)];
    size_t m = ZSTD_compress(ref, sizeof ref, in, sizeof in, 3);
    ck_assert(!ZSTD_isError(m));
    ck_assert_uint_eq(m, b.len);
    ck_assert(memcmp(ref, b.data, m) == 0);
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_zstd_golden) {
    uint8_t *out;
    char err[256];
    /* Hand-made frame: magic; descriptor 0x20 (single segment, 1-byte
     * content size, no checksum, no dictionary); content size 5; block
     * header 3 bytes LE = last(1) | raw(0)<<1 | 5<<3 = 0x29; "hello". */
    static const uint8_t raw[] = {0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x05, 0x29,
                                  0x00, 0x00, 'h',  'e',  'l',  'l',  'o'};
    ck_assert_int_eq(decode_exact(PC_CODEC_ZSTD, raw, sizeof raw, 5, &out, err, sizeof err),
                     PULSARC_OK);
    ck_assert(memcmp(out, "hello", 5) == 0);
    free(out);
    /* RLE block: last(1) | rle(1)<<1 | 10<<3 = 0x53, then the byte 'a'. */
    static const uint8_t rle[] = {0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x0A, 0x53, 0x00, 0x00, 'a'};
    ck_assert_int_eq(decode_exact(PC_CODEC_ZSTD, rle, sizeof rle, 10, &out, err, sizeof err),
                     PULSARC_OK);
    ck_assert(memcmp(out, "aaaaaaaaaa", 10) == 0);
    free(out);
    /* The content size in the header is checked: expected 4 fails. */
    ck_assert_int_eq(decode_exact(PC_CODEC_ZSTD, rle, sizeof rle, 4, &out, err, sizeof err),
                     PULSARC_ERR_COMPRESSION);
    ck_assert_contains(err, "ZSTD");
    free(out);
}
END_TEST
#endif

/* ======================================================================== */
/* SNAPPY: raw block */

#ifdef PULSARC_WITH_SNAPPY
/* Protobuf-style varint, as snappy writes the uncompressed length. */
static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

START_TEST(test_snappy_is_raw_block) {
    rng_t r = {10};
    static const size_t sizes[] = {0, 1, 127, 128, 300, 16384, 100000};
    uint8_t *in = malloc(100000);
    uint8_t *out = malloc(100000);
    ck_assert(in && out);
    for (size_t k = 0; k < NELEM(sizes); k++) {
        size_t n = sizes[k];
        fill_mixed(&r, in, n);
        pc_buf_t b = compress_ok(PC_CODEC_SNAPPY, in, n);
        /* Starts with varint(n); the framing format would start FF 06 00 00 "sNaPpY". */
        uint8_t v[10];
        size_t vn = put_varint(v, n);
        ck_assert_uint_ge(b.len, vn);
        ck_assert_msg(memcmp(b.data, v, vn) == 0, "size %zu", n);
        size_t got = 100000;
        ck_assert_int_eq(snappy_uncompress((const char *)b.data, b.len, (char *)out, &got),
                         SNAPPY_OK);
        ck_assert_uint_eq(got, n);
        ck_assert(n == 0 || memcmp(out, in, n) == 0);
        pc_buf_free(&b);
    }
    free(in);
    free(out);
}
END_TEST

START_TEST(test_snappy_golden) {
    /* varint(5) = 05; literal tag (5-1)<<2 | 0 = 0x10; "hello". */
    static const uint8_t hello[] = {0x05, 0x10, 'h', 'e', 'l', 'l', 'o'};
    pc_buf_t b = compress_ok(PC_CODEC_SNAPPY, "hello", 5);
    ck_assert_uint_eq(b.len, sizeof hello);
    ck_assert(memcmp(b.data, hello, sizeof hello) == 0);
    pc_buf_free(&b);
    /* Empty input is just varint(0). */
    b = compress_ok(PC_CODEC_SNAPPY, NULL, 0);
    ck_assert_uint_eq(b.len, 1);
    ck_assert_uint_eq(b.data[0], 0x00);
    pc_buf_free(&b);

    /* Hand-made with a copy: varint(8); literal "ab" (tag 0x04); 1-byte
     * offset copy, length 6, offset 2: tag (6-4)<<2 | 01 = 0x09, then 02. */
    static const uint8_t blk[] = {0x08, 0x04, 'a', 'b', 0x09, 0x02};
    uint8_t *out;
    char err[256];
    ck_assert_int_eq(decode_exact(PC_CODEC_SNAPPY, blk, sizeof blk, 8, &out, err, sizeof err),
                     PULSARC_OK);
    ck_assert(memcmp(out, "abababab", 8) == 0);
    free(out);
}
END_TEST

START_TEST(test_snappy_rejects_framing_format) {
    /* Stream identifier chunk, then an uncompressed-data chunk of "hello". */
    static const uint8_t framed[] = {0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y'};
    uint8_t *out;
    char err[256];
    ck_assert_int_eq(decode_exact(PC_CODEC_SNAPPY, framed, sizeof framed, 5, &out, err, sizeof err),
                     PULSARC_ERR_COMPRESSION);
    ck_assert_contains(err, "SNAPPY");
    free(out);
}
END_TEST
#endif

/* ======================================================================== */
/* rejections */

typedef struct corrupt_case {
    pc_codec_t codec;
    const char *what;
    const uint8_t *in;
    size_t len;
    size_t expected;
} corrupt_case_t;

/* Token 0x04: no literals, match of 8 at offset 1, before the output start. */
static const uint8_t lz4_bad_offset[] = {0x04, 0x01, 0x00};
/* Token 0xF0: 15+ literals, the length continues past the input. */
static const uint8_t lz4_bad_len[] = {0xF0, 0xFF, 0xFF};
/* "hello" with the Adler-32 trailer's last byte flipped. */
static const uint8_t zlib_bad_adler[] = {0x78, 0x9c, 0xcb, 0x48, 0xcd, 0xc9, 0xc9,
                                         0x07, 0x00, 0x06, 0x2c, 0x02, 0x14};
/* FCHECK wrong: 0x789d % 31 != 0. */
static const uint8_t zlib_bad_header[] = {0x78, 0x9d, 0xcb, 0x48, 0xcd, 0xc9, 0xc9,
                                          0x07, 0x00, 0x06, 0x2c, 0x02, 0x15};
#ifdef PULSARC_WITH_ZSTD
/* Raw block claims 9 bytes, 5 present. */
static const uint8_t zstd_short_block[] = {0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x05, 0x49,
                                           0x00, 0x00, 'h',  'e',  'l',  'l',  'o'};
static const uint8_t zstd_bad_magic[] = {0x28, 0xB5, 0x2F, 0xFE, 0x20, 0x05, 0x29,
                                         0x00, 0x00, 'h',  'e',  'l',  'l',  'o'};
#endif
#ifdef PULSARC_WITH_SNAPPY
/* Literal of 5 with only 3 bytes present. */
static const uint8_t snappy_short_literal[] = {0x05, 0x10, 'h', 'e', 'l'};
/* Copy with offset 0. */
static const uint8_t snappy_zero_offset[] = {0x08, 0x04, 'a', 'b', 0x09, 0x00};
/* Varint that never ends. */
static const uint8_t snappy_bad_varint[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
#endif

static const corrupt_case_t corrupt_cases[] = {
    {PC_CODEC_LZ4, "offset before start", lz4_bad_offset, sizeof lz4_bad_offset, 8},
    {PC_CODEC_LZ4, "literal length past input", lz4_bad_len, sizeof lz4_bad_len, 100},
    {PC_CODEC_ZLIB, "bad adler", zlib_bad_adler, sizeof zlib_bad_adler, 5},
    {PC_CODEC_ZLIB, "bad header", zlib_bad_header, sizeof zlib_bad_header, 5},
#ifdef PULSARC_WITH_ZSTD
    {PC_CODEC_ZSTD, "short block", zstd_short_block, sizeof zstd_short_block, 5},
    {PC_CODEC_ZSTD, "bad magic", zstd_bad_magic, sizeof zstd_bad_magic, 5},
#endif
#ifdef PULSARC_WITH_SNAPPY
    {PC_CODEC_SNAPPY, "short literal", snappy_short_literal, sizeof snappy_short_literal, 5},
    {PC_CODEC_SNAPPY, "zero offset", snappy_zero_offset, sizeof snappy_zero_offset, 8},
    {PC_CODEC_SNAPPY, "bad varint", snappy_bad_varint, sizeof snappy_bad_varint, 5},
#endif
};

START_TEST(test_reject_corrupt) {
    const corrupt_case_t *k = &corrupt_cases[_i];
    uint8_t *out;
    char err[256];
    pulsarc_err_t rc = decode_exact(k->codec, k->in, k->len, k->expected, &out, err, sizeof err);
    ck_assert_msg(rc == PULSARC_ERR_COMPRESSION, "%s %s: %d", pc_codec_name(k->codec), k->what,
                  (int)rc);
    ck_assert_contains(err, pc_codec_name(k->codec));
    free(out);
}
END_TEST

/* Expected one more or one less than the real size, for several sizes. */
START_TEST(test_reject_size_mismatch) {
    pc_codec_t c = codecs[_i];
    rng_t r = {11};
    static const size_t sizes[] = {0, 1, 5, 1000, 70000};
    uint8_t *in = malloc(70000);
    ck_assert_ptr_nonnull(in);
    for (size_t k = 0; k < NELEM(sizes); k++) {
        size_t n = sizes[k];
        fill_mixed(&r, in, n);
        pc_buf_t b = compress_ok(c, in, n);
        uint8_t *out;
        char err[256];
        size_t wrong[] = {n + 1, n + 1000, n ? n - 1 : 0, n / 2};
        for (size_t w = 0; w < NELEM(wrong); w++) {
            if (wrong[w] == n)
                continue;
            pulsarc_err_t rc = decode_exact(c, b.data, b.len, wrong[w], &out, err, sizeof err);
            ck_assert_msg(rc == PULSARC_ERR_COMPRESSION, "%s real %zu expected %zu: %d",
                          pc_codec_name(c), n, wrong[w], (int)rc);
            ck_assert_contains(err, pc_codec_name(c));
            free(out);
        }
        pc_buf_free(&b);
    }
    free(in);
}
END_TEST

/* With expected too small, nothing lands past `expected` (canary check,
 * in addition to the exact-size buffers ASan watches elsewhere). */
START_TEST(test_no_write_past_expected) {
    pc_codec_t c = codecs[_i];
    uint8_t in[4000];
    rng_t r = {12};
    fill_mixed(&r, in, sizeof in);
    pc_buf_t b = compress_ok(c, in, sizeof in);
    uint8_t out[sizeof in];
    for (size_t exp = 0; exp < sizeof in; exp += 397) {
        memset(out, 0xA5, sizeof out);
        char err[256];
        ck_assert_int_eq(pc_codec_decompress(c, b.data, b.len, out, exp, err, sizeof err),
                         PULSARC_ERR_COMPRESSION);
        for (size_t i = exp; i < sizeof out; i++)
            ck_assert_msg(out[i] == 0xA5, "%s expected %zu: byte %zu written", pc_codec_name(c),
                          exp, i);
    }
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_reject_empty_input) {
    pc_codec_t c = codecs[_i];
    char err[256] = "";
    uint8_t out[1];
    ck_assert_int_eq(pc_codec_decompress(c, NULL, 0, NULL, 0, err, sizeof err),
                     PULSARC_ERR_COMPRESSION);
    ck_assert_contains(err, pc_codec_name(c));
    ck_assert_int_eq(pc_codec_decompress(c, "", 0, out, 1, err, sizeof err),
                     PULSARC_ERR_COMPRESSION);
}
END_TEST

START_TEST(test_reject_truncated) {
    pc_codec_t c = codecs[_i];
    uint8_t in[2000];
    rng_t r = {13};
    fill_mixed(&r, in, sizeof in);
    pc_buf_t b = compress_ok(c, in, sizeof in);
    for (size_t n = 0; n < b.len; n++) {
        uint8_t *out;
        char err[256];
        pulsarc_err_t rc = decode_exact(c, b.data, n, sizeof in, &out, err, sizeof err);
        /* ZLIB: a stream cut after its last data block but before the final
         * block and Adler-32 is what the Java client sends (SYNC_FLUSH, no
         * finish), so it is accepted when every byte came out intact. */
        if (c == PC_CODEC_ZLIB && rc == PULSARC_OK) {
            ck_assert(memcmp(out, in, sizeof in) == 0);
            ck_assert_uint_ge(n, b.len - 6);
        } else {
            ck_assert_msg(rc == PULSARC_ERR_COMPRESSION, "%s prefix %zu of %zu: %d",
                          pc_codec_name(c), n, b.len, (int)rc);
        }
        free(out);
    }
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_reject_trailing) {
    pc_codec_t c = codecs[_i];
    static const uint8_t junk[][4] = {{0x00}, {0xFF}, {0x10, 'x'}, {0x78, 0x9c, 0x03, 0x00}};
    static const size_t junk_len[] = {1, 1, 2, 4};
    for (size_t j = 0; j < NELEM(junk); j++) {
        pc_buf_t b = compress_ok(c, "hello hello hello", 17);
        ck_assert_int_eq(pc_buf_append(&b, junk[j], junk_len[j]), PULSARC_OK);
        uint8_t *out;
        char err[256];
        pulsarc_err_t rc = decode_exact(c, b.data, b.len, 17, &out, err, sizeof err);
        ck_assert_msg(rc == PULSARC_ERR_COMPRESSION, "%s junk %zu: %d %s", pc_codec_name(c), j,
                      (int)rc, err);
        free(out);
        pc_buf_free(&b);
    }
}
END_TEST

START_TEST(test_unknown_codec) {
    char err[256] = "";
    uint8_t out[8];
    pc_buf_t b;
    pc_buf_init(&b, 0);
    for (int v = 5; v <= 9; v += 4) {
        ck_assert_int_eq(pc_codec_decompress((pc_codec_t)v, "abc", 3, out, 3, err, sizeof err),
                         PULSARC_ERR_UNSUPPORTED);
        ck_assert_contains(err, v == 9 ? "9" : "5");
        ck_assert_int_eq(pc_codec_compress((pc_codec_t)v, "abc", 3, &b), PULSARC_ERR_UNSUPPORTED);
    }
    ck_assert_int_eq(pc_codec_decompress((pc_codec_t)-1, "abc", 3, out, 3, err, sizeof err),
                     PULSARC_ERR_UNSUPPORTED);
    ck_assert_int_eq(pc_codec_compress((pc_codec_t)-1, "abc", 3, &b), PULSARC_ERR_UNSUPPORTED);
    ck_assert_uint_eq(b.len, 0);
    /* errstr may be NULL. */
    ck_assert_int_eq(pc_codec_decompress((pc_codec_t)9, "abc", 3, out, 3, NULL, 0),
                     PULSARC_ERR_UNSUPPORTED);
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_not_built_in) {
    char err[256] = "";
    uint8_t out[8];
    pc_buf_t b;
    pc_buf_init(&b, 0);
#ifndef PULSARC_WITH_ZSTD
    ck_assert_int_eq(pc_codec_compress(PC_CODEC_ZSTD, "abc", 3, &b), PULSARC_ERR_UNSUPPORTED);
    ck_assert_int_eq(pc_codec_decompress(PC_CODEC_ZSTD, "abc", 3, out, 3, err, sizeof err),
                     PULSARC_ERR_UNSUPPORTED);
    ck_assert_contains(err, "ZSTD");
#endif
#ifndef PULSARC_WITH_SNAPPY
    ck_assert_int_eq(pc_codec_compress(PC_CODEC_SNAPPY, "abc", 3, &b), PULSARC_ERR_UNSUPPORTED);
    ck_assert_int_eq(pc_codec_decompress(PC_CODEC_SNAPPY, "abc", 3, out, 3, err, sizeof err),
                     PULSARC_ERR_UNSUPPORTED);
    ck_assert_contains(err, "SNAPPY");
#endif
    (void)out;
    (void)err;
    ck_assert_uint_eq(b.len, 0);
    pc_buf_free(&b);
}
END_TEST

START_TEST(test_bad_args) {
    char err[256] = "";
    uint8_t out[8];
    pc_buf_t b;
    pc_buf_init(&b, 0);
    ck_assert_int_eq(pc_codec_compress(PC_CODEC_LZ4, "abc", 3, NULL), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pc_codec_compress(PC_CODEC_LZ4, NULL, 3, &b), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pc_codec_decompress(PC_CODEC_LZ4, NULL, 3, out, 3, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pc_codec_decompress(PC_CODEC_LZ4, "abc", 3, NULL, 3, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    pc_buf_free(&b);
}
END_TEST

/* ======================================================================== */
/* hostile input: mutations and garbage into exact-size buffers */

START_TEST(test_fuzz_mutations) {
    pc_codec_t c = codecs[_i];
    rng_t r = {0xC0DEC0DEull + (uint64_t)_i};
    uint8_t in[4096];
    fill_mixed(&r, in, sizeof in);
    pc_buf_t good = compress_ok(c, in, sizeof in);
    uint8_t *mut = malloc(good.len + 16);
    ck_assert_ptr_nonnull(mut);
    int ok = 0, bad = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(mut, good.data, good.len);
        size_t len = good.len;
        int flips = 1 + (int)(rnd(&r) % 3);
        for (int f = 0; f < flips; f++)
            mut[rnd(&r) % len] ^= (uint8_t)(1u << (rnd(&r) % 8));
        if (rnd(&r) % 4 == 0)
            len = 1 + rnd(&r) % len;
        /* Also lie about the size now and then. */
        size_t expected = rnd(&r) % 8 == 0 ? rnd(&r) % 8192 : sizeof in;
        uint8_t *out;
        char err[256];
        pulsarc_err_t rc = decode_exact(c, mut, len, expected, &out, err, sizeof err);
        ck_assert_msg(rc == PULSARC_OK || rc == PULSARC_ERR_COMPRESSION, "%s: %d",
                      pc_codec_name(c), (int)rc);
        if (rc)
            ck_assert_contains(err, pc_codec_name(c));
        rc ? bad++ : ok++;
        free(out);
    }
    ck_assert_int_gt(bad, 0);
    free(mut);
    pc_buf_free(&good);
}
END_TEST

START_TEST(test_fuzz_garbage) {
    pc_codec_t c = codecs[_i];
    rng_t r = {0xBADC0FFEEull + (uint64_t)_i};
    uint8_t junk[512];
    for (int it = 0; it < 3000; it++) {
        size_t len = 1 + rnd(&r) % sizeof junk;
        fill_random(&r, junk, len);
        size_t expected = rnd(&r) % 4096;
        uint8_t *out;
        char err[256];
        pulsarc_err_t rc = decode_exact(c, junk, len, expected, &out, err, sizeof err);
        ck_assert_msg(rc == PULSARC_OK || rc == PULSARC_ERR_COMPRESSION, "%s: %d",
                      pc_codec_name(c), (int)rc);
        free(out);
    }
}
END_TEST

/* ======================================================================== */
/* threads: no shared state, so concurrent use must just work */

static void *thread_roundtrips(void *arg) {
    rng_t r = {(uint64_t)(uintptr_t)arg * 2654435761u + 1};
    uint8_t in[3000], out[3000];
    for (int it = 0; it < 40; it++) {
        pc_codec_t c = codecs[(size_t)it % NELEM(codecs)];
        size_t n = rnd(&r) % sizeof in;
        fill_mixed(&r, in, n);
        pc_buf_t b;
        pc_buf_init(&b, 0);
        if (pc_codec_compress(c, in, n, &b) != PULSARC_OK ||
            pc_codec_decompress(c, b.data, b.len, out, n, NULL, 0) != PULSARC_OK ||
            (n && memcmp(in, out, n) != 0)) {
            pc_buf_free(&b);
            return (void *)1;
        }
        pc_buf_free(&b);
    }
    return NULL;
}

START_TEST(test_threads) {
    pthread_t th[4];
    for (uintptr_t i = 0; i < NELEM(th); i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, thread_roundtrips, (void *)(i + 1)), 0);
    for (size_t i = 0; i < NELEM(th); i++) {
        void *res;
        ck_assert_int_eq(pthread_join(th[i], &res), 0);
        ck_assert_ptr_null(res);
    }
}
END_TEST

/* ======================================================================== */

static TCase *tc(const char *name) {
    TCase *t = tcase_create(name);
    tcase_set_timeout(t, 120); /* megabyte round trips and fuzzing under valgrind */
    return t;
}

/* The Java client deflates with SYNC_FLUSH and never calls finish: the
 * stream has no final block and no Adler-32. Such entries must decode. */
START_TEST(test_zlib_java_sync_flush_stream) {
    const char *text = "the quick brown fox jumps over the lazy dog, again and again and again";
    size_t len = strlen(text);
    uint8_t comp[512], out[512];
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit(&z, 6), Z_OK);
    z.next_in = (Bytef *)text;
    z.avail_in = (uInt)len;
    z.next_out = comp;
    z.avail_out = sizeof comp;
    ck_assert_int_eq(deflate(&z, Z_SYNC_FLUSH), Z_OK);
    size_t clen = sizeof comp - z.avail_out;
    deflateEnd(&z);
    char why[200];
    ck_assert_int_eq(pc_codec_decompress(PC_CODEC_ZLIB, comp, clen, out, len, why, sizeof why), PULSARC_OK);
    ck_assert(memcmp(out, text, len) == 0);
    /* ...but a stream cut inside its data is still truncated. */
    ck_assert_int_eq(pc_codec_decompress(PC_CODEC_ZLIB, comp, clen / 2, out, len, why, sizeof why),
                     PULSARC_ERR_COMPRESSION);
}
END_TEST

static Suite *codec_suite(void) {
    Suite *s = suite_create("codec");
    int n = (int)NELEM(codecs);

    TCase *t = tc("meta");
    tcase_add_test(t, test_names);
    tcase_add_test(t, test_zlib_java_sync_flush_stream);
    tcase_add_test(t, test_wire_values);
    tcase_add_test(t, test_parse);
    tcase_add_test(t, test_available);
    tcase_add_test(t, test_bound);
    tcase_add_test(t, test_none);
    suite_add_tcase(s, t);

    t = tc("roundtrip");
    tcase_add_loop_test(t, test_roundtrip_small, 0, n);
    tcase_add_loop_test(t, test_roundtrip_random, 0, n);
    tcase_add_loop_test(t, test_roundtrip_repetitive, 0, n);
    tcase_add_loop_test(t, test_compress_appends, 0, n);
    tcase_add_loop_test(t, test_compress_respects_buf_limit, 0, n);
    tcase_add_loop_test(t, test_deterministic, 0, n);
    suite_add_tcase(s, t);

    t = tc("format");
    tcase_add_test(t, test_lz4_is_raw_block);
    tcase_add_test(t, test_lz4_golden);
    tcase_add_test(t, test_zlib_has_header);
    tcase_add_test(t, test_zlib_golden);
    tcase_add_test(t, test_zlib_rejects_gzip_and_raw);
#ifdef PULSARC_WITH_ZSTD
    tcase_add_test(t, test_zstd_is_frame);
    tcase_add_test(t, test_zstd_golden);
#endif
#ifdef PULSARC_WITH_SNAPPY
    tcase_add_test(t, test_snappy_is_raw_block);
    tcase_add_test(t, test_snappy_golden);
    tcase_add_test(t, test_snappy_rejects_framing_format);
#endif
    suite_add_tcase(s, t);

    t = tc("reject");
    tcase_add_loop_test(t, test_reject_corrupt, 0, (int)NELEM(corrupt_cases));
    tcase_add_loop_test(t, test_reject_size_mismatch, 0, n);
    tcase_add_loop_test(t, test_no_write_past_expected, 0, n);
    tcase_add_loop_test(t, test_reject_empty_input, 0, n);
    tcase_add_loop_test(t, test_reject_truncated, 0, n);
    tcase_add_loop_test(t, test_reject_trailing, 0, n);
    tcase_add_test(t, test_unknown_codec);
    tcase_add_test(t, test_not_built_in);
    tcase_add_test(t, test_bad_args);
    suite_add_tcase(s, t);

    t = tc("hostile");
    tcase_add_loop_test(t, test_fuzz_mutations, 0, n);
    tcase_add_loop_test(t, test_fuzz_garbage, 0, n);
    tcase_add_test(t, test_threads);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(codec_suite)
