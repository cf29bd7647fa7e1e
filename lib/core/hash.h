/* Key hashes for partition routing and Key_Shared. */
#ifndef PC_HASH_H
#define PC_HASH_H
#include <stddef.h>
#include <stdint.h>

/* MurmurHash3_x86_32 over len bytes, raw 32-bit result. */
uint32_t pc_murmur3_32(const void *data, size_t len, uint32_t seed);
/* Pulsar's Murmur3_32Hash: seed 0, masked to non-negative. */
int32_t pc_hash_murmur3(const void *data, size_t len);
/*
 * Java's String.hashCode over the UTF-16 code units of the UTF-8 input
 * (supplementary characters as surrogate pairs), masked to non-negative,
 * as the Java client's JavaStringHash does. Invalid UTF-8 bytes count as
 * U+FFFD.
 */
int32_t pc_hash_java_string(const char *utf8, size_t len);
#endif
