/*
 * Design notes: binary partition keys travel base64-encoded in
 * MessageMetadata.partition_key with partition_key_b64_encoded set, exactly
 * as the Java client sends them, so both sides hash the same string; those
 * use the strict decoder. Hand-written configuration (an OAuth2 key file in
 * a data: URL) uses the lenient one, which also takes the URL-safe alphabet
 * and missing padding. Pure functions; any thread.
 */
#include "core/base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t pc_base64_len(size_t n) { return (n + 2) / 3 * 4; }

void pc_base64_encode(const void *in, size_t n, char *out) {
    const uint8_t *p = in;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
}

/* The value of c in the standard alphabet, or with url_safe also in the
 * URL-safe one ('-' and '_' for '+' and '/'); -1 if it is in neither. */
static int digit_value(char c, int url_safe) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || (url_safe && c == '-'))
        return 62;
    if (c == '/' || (url_safe && c == '_'))
        return 63;
    return -1;
}

static int value_of(char c) { return digit_value(c, 0); }

long pc_base64_decode(const char *in, size_t len, uint8_t *out) {
    if (len % 4)
        return -1;
    long o = 0;
    for (size_t i = 0; i < len; i += 4) {
        int pad = (in[i + 3] == '=') + (in[i + 2] == '=');
        if (pad && i + 4 != len)
            return -1;
        int a = value_of(in[i]), b = value_of(in[i + 1]);
        int c = pad == 2 ? 0 : value_of(in[i + 2]), d = pad ? 0 : value_of(in[i + 3]);
        if (a < 0 || b < 0 || c < 0 || d < 0)
            return -1;
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        out[o++] = (uint8_t)(v >> 16);
        if (pad < 2)
            out[o++] = (uint8_t)(v >> 8);
        if (pad < 1)
            out[o++] = (uint8_t)v;
    }
    return o;
}

long pc_base64_decode_lenient(const char *in, size_t len, uint8_t *out) {
    long o = 0;
    uint32_t acc = 0;
    int bits = 0;
    size_t i = 0;
    for (; i < len && in[i] != '='; i++) {
        int v = digit_value(in[i], 1);
        if (v < 0)
            return -1;
        acc = acc << 6 | (uint32_t)v;
        if ((bits += 6) >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    while (i < len && in[i] == '=') /* padding, if any, only at the end */
        i++;
    return i < len ? -1 : o;
}
