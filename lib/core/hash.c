/*
 * Design notes: the two key hashes Pulsar clients route with (docs/PROTOCOL.md
 * §9). Murmur3_x86_32 with seed 0 is what every client agrees on; the
 * Java String.hashCode variant is there so keys route as a Java producer
 * with the default scheme would route them, which needs the key's UTF-16
 * code units rather than its UTF-8 bytes. Pure functions, any thread.
 */
#include "core/hash.h"

#define HASH_MASK 0x7FFFFFFFu
#define UTF_REPLACEMENT 0xFFFDu

static uint32_t rotl32(uint32_t x, int r) {
    return (x << r) | (x >> (32 - r));
}

static uint32_t murmur_mix_k(uint32_t k) {
    k *= 0xcc9e2d51u;
    k = rotl32(k, 15);
    return k * 0x1b873593u;
}

static uint32_t murmur_fmix(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}

/* Little-endian read regardless of the host's byte order. */
static uint32_t load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t pc_murmur3_32(const void *data, size_t len, uint32_t seed) {
    const uint8_t *p = data;
    uint32_t h = seed;
    size_t nblocks = len / 4;
    for (size_t i = 0; i < nblocks; i++, p += 4) {
        h ^= murmur_mix_k(load_le32(p));
        h = rotl32(h, 13) * 5 + 0xe6546b64u;
    }
    uint32_t k = 0;
    switch (len & 3) { /* the 1-3 tail bytes, little-endian */
    case 3: k ^= (uint32_t)p[2] << 16; /* fall through */
    case 2: k ^= (uint32_t)p[1] << 8;  /* fall through */
    case 1: k ^= p[0]; h ^= murmur_mix_k(k);
    }
    return murmur_fmix(h ^ (uint32_t)len);
}

int32_t pc_hash_murmur3(const void *data, size_t len) {
    return (int32_t)(pc_murmur3_32(data, len, 0) & HASH_MASK);
}

/*
 * Classifies a UTF-8 lead byte: returns how many continuation bytes follow
 * (-1 if b cannot start a character), its payload bits, and the range the
 * first continuation byte must fall in. The ranges are Unicode's
 * well-formed UTF-8 table, which shuts out overlongs (E0, F0), surrogates
 * (ED) and values above U+10FFFF (F4).
 */
static int utf8_lead(uint8_t b, uint32_t *cp, uint8_t *lo, uint8_t *hi) {
    *lo = 0x80;
    *hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
        *cp = b & 0x1F;
        return 1;
    }
    if (b >= 0xE0 && b <= 0xEF) {
        *cp = b & 0x0F;
        *lo = b == 0xE0 ? 0xA0 : 0x80;
        *hi = b == 0xED ? 0x9F : 0xBF;
        return 2;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        *cp = b & 0x07;
        *lo = b == 0xF0 ? 0x90 : 0x80;
        *hi = b == 0xF4 ? 0x8F : 0xBF;
        return 3;
    }
    return -1;
}

/*
 * Decodes the code point at s[*i] and advances *i past it. Ill-formed input
 * yields one U+FFFD per maximal ill-formed subsequence (Unicode's
 * recommended practice, which Java's decoder follows): we stop before the
 * first byte that cannot continue the sequence and resume there.
 */
static uint32_t utf8_next(const uint8_t *s, size_t len, size_t *i) {
    uint8_t b = s[(*i)++], lo, hi;
    uint32_t cp = b;
    if (b < 0x80)
        return cp;
    int need = utf8_lead(b, &cp, &lo, &hi);
    if (need < 0)
        return UTF_REPLACEMENT;
    for (; need > 0; need--, lo = 0x80, hi = 0xBF) {
        if (*i >= len || s[*i] < lo || s[*i] > hi)
            return UTF_REPLACEMENT;
        cp = (cp << 6) | (s[(*i)++] & 0x3Fu);
    }
    return cp;
}

int32_t pc_hash_java_string(const char *utf8, size_t len) {
    const uint8_t *s = (const uint8_t *)utf8;
    uint32_t h = 0; /* unsigned: Java's int arithmetic wraps */
    size_t i = 0;
    while (i < len) {
        uint32_t cp = utf8_next(s, len, &i);
        if (cp >= 0x10000) { /* a surrogate pair in UTF-16 */
            cp -= 0x10000;
            h = 31 * h + (0xD800 + (cp >> 10));
            cp = 0xDC00 + (cp & 0x3FF);
        }
        h = 31 * h + cp;
    }
    return (int32_t)(h & HASH_MASK);
}
