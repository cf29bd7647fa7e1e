/* Which of a source's parallel readers owns a split: pure arithmetic, no I/O. */
#ifndef PC_CONNECTOR_ASSIGN_H
#define PC_CONNECTOR_ASSIGN_H
#include <stdint.h>

/* The reader (0..readers-1) that owns partition of topic (a full base name; -1: not partitioned). */
uint32_t pc_assign_owner(const char *topic, int32_t partition, uint32_t readers);
#endif
