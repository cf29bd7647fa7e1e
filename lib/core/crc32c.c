/*
 * Design notes: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) for
 * Pulsar's frame checksum. Two paths with identical results:
 *  - software: slicing-by-8, eight 256-entry tables built once;
 *  - hardware: the SSE4.2 crc32 instruction, x86-64 only, compiled for that
 *    one function via a target attribute so the rest of the library keeps
 *    the baseline ISA.
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

static void crc_init(void) {
    crc_build_tables();
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
__attribute__((target("sse4.2"))) static uint32_t crc_hw_update(uint32_t crc, const void *buf,
                                                                size_t len) {
    const uint8_t *p = buf;
    uint64_t c = ~crc;
    /* Byte steps up to an 8-byte boundary, then whole words. */
    for (; len > 0 && ((uintptr_t)p & 7) != 0; len--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, sizeof w);
        c = _mm_crc32_u64(c, w);
    }
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
