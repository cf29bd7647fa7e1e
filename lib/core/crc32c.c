/*
 * Design notes: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) for
 * Pulsar's frame checksum. Two paths with identical results:
 *  - software: slicing-by-8, eight 256-entry tables built once;
 *  - hardware: the SSE4.2 crc32 instruction, x86-64 only, compiled for that
 *    one function via a target attribute so the rest of the library keeps
 *    the baseline ISA. The instruction has a latency of about 3 cycles and
 *    a throughput of 1, so long buffers run as three independent streams
 *    over adjacent blocks, joined with "shift by a block of zeros" tables
 *    (CRC is linear: crc(A||B) = shift_|B|(crc(A)) ^ crc0(B)).
 * The choice is made once at run time. Tables and the choice are set up
 * under pthread_once and read-only afterwards, so every function here is
 * safe from any thread.
 */
#include "core/crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PC_CRC_HAVE_SSE42 1
#include <nmmintrin.h>
#endif

#define CRC32C_POLY 0x82F63B78u

static uint32_t crc_tab[8][256];
static int crc_hw;

/* Three-stream blocks: long ones for entries, short ones for small frames. */
#define CRC_LONG 4096
#define CRC_SHORT 256
_Static_assert(CRC_LONG % 32 == 0 && CRC_SHORT % 32 == 0, "crc_hw_3way steps 32 bytes a stream");
static uint32_t crc_shift_long[4][256], crc_shift_short[4][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* tab[0] is the classic byte table; tab[k][i] advances tab[k-1][i] by one
 * more zero byte, which lets the loop fold 8 input bytes per step. */
static void crc_build_tables(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc_tab[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++)
            crc_tab[k][i] = (crc_tab[k - 1][i] >> 8) ^ crc_tab[0][crc_tab[k - 1][i] & 0xff];
}

/* The raw register after n zero bytes (no pre/post inversion). */
static uint32_t crc_zeros(uint32_t c, size_t n) {
    while (n--)
        c = (c >> 8) ^ crc_tab[0][c & 0xff];
    return c;
}

/* t[k][i] = crc_zeros(i << 8k, n): the operator as four byte lookups. */
static void crc_build_shift(uint32_t t[4][256], size_t n) {
    uint32_t bit[32];
    for (int b = 0; b < 32; b++)
        bit[b] = crc_zeros(UINT32_C(1) << b, n);
    for (int k = 0; k < 4; k++)
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t v = 0;
            for (int b = 0; b < 8; b++)
                if (i & (1u << b))
                    v ^= bit[8 * k + b];
            t[k][i] = v;
        }
}

static inline uint32_t crc_shift(uint32_t t[4][256], uint32_t c) {
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

static void crc_init(void) {
    crc_build_tables();
    crc_build_shift(crc_shift_long, CRC_LONG);
    crc_build_shift(crc_shift_short, CRC_SHORT);
#ifdef PC_CRC_HAVE_SSE42
    __builtin_cpu_init(); /* needed if we run before libgcc's constructor */
    crc_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
}

static uint32_t crc_sw_bytes(uint32_t c, const uint8_t *p, size_t len) {
    while (len--)
        c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xff];
    return c;
}

/* Bytes are combined explicitly so the result is endian-independent. */
static uint32_t crc_sw_block8(uint32_t c, const uint8_t *p) {
    c ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return crc_tab[7][c & 0xff] ^ crc_tab[6][(c >> 8) & 0xff] ^
           crc_tab[5][(c >> 16) & 0xff] ^ crc_tab[4][c >> 24] ^ crc_tab[3][p[4]] ^
           crc_tab[2][p[5]] ^ crc_tab[1][p[6]] ^ crc_tab[0][p[7]];
}

uint32_t pc_crc32c_sw(uint32_t crc, const void *buf, size_t len) {
    const uint8_t *p = buf;
    uint32_t c = ~crc;
    pthread_once(&crc_once, crc_init);
    for (; len >= 8; len -= 8, p += 8)
        c = crc_sw_block8(c, p);
    return ~crc_sw_bytes(c, p, len);
}

#ifdef PC_CRC_HAVE_SSE42
static inline uint64_t rd64(const uint8_t *p) {
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* Runs blocks of 3 * blk bytes as three streams; returns the bytes done. */
__attribute__((target("sse4.2"))) static size_t crc_hw_3way(uint64_t *cp, const uint8_t *p,
                                                            size_t len, size_t blk,
                                                            uint32_t shift[4][256]) {
    size_t done = 0;
    uint64_t c = *cp;
    for (; len - done >= 3 * blk; done += 3 * blk) {
        const uint8_t *a = p + done, *b = a + blk, *d = b + blk;
        uint64_t c1 = 0, c2 = 0;
        /* Four words a stream per step (blk is a multiple of 32): the loop's
         * own count and branch were as many instructions as the crc32s. */
        for (size_t i = 0; i < blk; i += 32) {
            c = _mm_crc32_u64(c, rd64(a + i));
            c1 = _mm_crc32_u64(c1, rd64(b + i));
            c2 = _mm_crc32_u64(c2, rd64(d + i));
            c = _mm_crc32_u64(c, rd64(a + i + 8));
            c1 = _mm_crc32_u64(c1, rd64(b + i + 8));
            c2 = _mm_crc32_u64(c2, rd64(d + i + 8));
            c = _mm_crc32_u64(c, rd64(a + i + 16));
            c1 = _mm_crc32_u64(c1, rd64(b + i + 16));
            c2 = _mm_crc32_u64(c2, rd64(d + i + 16));
            c = _mm_crc32_u64(c, rd64(a + i + 24));
            c1 = _mm_crc32_u64(c1, rd64(b + i + 24));
            c2 = _mm_crc32_u64(c2, rd64(d + i + 24));
        }
        c = crc_shift(shift, crc_shift(shift, (uint32_t)c) ^ (uint32_t)c1) ^ (uint32_t)c2;
    }
    *cp = c;
    return done;
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw_update(uint32_t crc, const void *buf,
                                                                size_t len) {
    const uint8_t *p = buf;
    uint64_t c = (uint32_t)~crc;
    /* Byte steps up to an 8-byte boundary, then three streams, then words. */
    for (; len > 0 && ((uintptr_t)p & 7) != 0; len--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    size_t n = crc_hw_3way(&c, p, len, CRC_LONG, crc_shift_long);
    p += n, len -= n;
    n = crc_hw_3way(&c, p, len, CRC_SHORT, crc_shift_short);
    p += n, len -= n;
    for (; len >= 8; len -= 8, p += 8)
        c = _mm_crc32_u64(c, rd64(p));
    for (; len > 0; len--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

uint32_t pc_crc32c(uint32_t crc, const void *buf, size_t len) {
    pthread_once(&crc_once, crc_init);
#ifdef PC_CRC_HAVE_SSE42
    if (crc_hw)
        return crc_hw_update(crc, buf, len);
#endif
    return pc_crc32c_sw(crc, buf, len);
}

int pc_crc32c_hw_active(void) {
    pthread_once(&crc_once, crc_init);
    return crc_hw;
}
