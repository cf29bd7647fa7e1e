/*
 * Design notes: the split assignment rule of parallel source readers.
 *
 * Reader i of N reads the splits this function gives to i. Every reader
 * computes it alone, from the split's name and N, so readers in different
 * processes agree without talking to each other or to a coordinator, and a
 * partition found later by discovery goes to exactly one of them:
 *
 *   first = murmur3_32(full base topic name, seed 0) mod N
 *   owner = (first + max(partition, 0)) mod N
 *
 * The partitions of one topic go round the readers from a place that
 * depends on the topic, so one topic's partitions spread evenly and several
 * small topics do not all start at reader 0 (the scheme Flink uses for
 * Kafka and Pulsar partitions; the hash here is our own, stable across
 * processes, platforms and restarts). Pure function, any thread.
 */
#include <string.h>

#include "connector/assign.h"
#include "core/hash.h"

uint32_t pc_assign_owner(const char *topic, int32_t partition, uint32_t readers) {
    if (readers <= 1)
        return 0;
    uint32_t first = pc_murmur3_32(topic, strlen(topic), 0) % readers;
    uint32_t p = partition > 0 ? (uint32_t)partition : 0;
    return (uint32_t)(((uint64_t)first + p) % readers);
}
