/* Base64 (RFC 4648): strict standard form as the Java client encodes binary keys,
 * and a lenient decoder for hand-written configuration. */
#ifndef PC_BASE64_H
#define PC_BASE64_H
#include <stddef.h>
#include <stdint.h>

/* Encoded length of n bytes, without the NUL. */
size_t pc_base64_len(size_t n);
/* Writes the encoding and a NUL into out (pc_base64_len(n) + 1 bytes). */
void pc_base64_encode(const void *in, size_t n, char *out);
/* Decodes into out (at least 3 * (len / 4) bytes); returns the length, or -1 if invalid. */
long pc_base64_decode(const char *in, size_t len, uint8_t *out);
/* Lenient form for hand-written input: standard or URL-safe alphabet (mixed is
 * fine), padding optional. Decodes into out (at least 3 * len / 4 bytes);
 * returns the length, or -1 on a character outside both alphabets or anything
 * after the padding. */
long pc_base64_decode_lenient(const char *in, size_t len, uint8_t *out);
#endif
