/* CRC-32C (Castagnoli), as Pulsar frames use it. */
#ifndef PC_CRC32C_H
#define PC_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/*
 * zlib-style update: pass 0 first, then the previous result to continue, so
 * crc(a||b) == pc_crc32c(pc_crc32c(0, a), b). Uses SSE4.2 when the CPU has
 * it (checked once at run time), a slicing table otherwise.
 */
uint32_t pc_crc32c(uint32_t crc, const void *buf, size_t len);
/* The portable path alone, for tests and for CPUs without SSE4.2. */
uint32_t pc_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* 1 when the hardware path is in use. */
int pc_crc32c_hw_active(void);
#endif
