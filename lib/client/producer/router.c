/*
 * Design notes: choosing the partition of a message on a partitioned topic,
 * with the Java client's rules so that a key lands on the same partition
 * whichever client produced it (docs/PROTOCOL.md §9):
 *   - a keyed message goes to hash(key) mod N, where key is the partition
 *     key as text (for binary keys, their base64 form, which is what the
 *     Java client's getKey() returns) and the ordering key plays no part;
 *     hash is hashingScheme: JavaStringHash (String.hashCode over UTF-16,
 *     masked non-negative; Java's default) or Murmur3_32Hash (seed 0, masked);
 *   - an unkeyed message, RoundRobinPartition: without batching the next
 *     partition each message; with batching the partition changes every
 *     batchingPartitionSwitchFrequencyByPublishDelay x batchingMaxPublishDelay
 *     of wall-clock time, so a batch fills up on one partition;
 *   - an unkeyed message, SinglePartition: one partition picked at random
 *     when the producer was created;
 *   - CustomPartition: the user's callback decides every message.
 * Called on the sending application thread, under the partitioned
 * handle's lock (the round-robin counter is its only mutable state).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/producer/producer_int.h"
#include "core/hash.h"

int32_t pc_router_hash(pc_hash_scheme_t s, const char *key, size_t len) {
    return s == PC_HASH_MURMUR3 ? pc_hash_murmur3(key, len) : pc_hash_java_string(key, len);
}

static int random_below(int n) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned seed = (unsigned)ts.tv_nsec ^ (unsigned)ts.tv_sec ^ (unsigned)(uintptr_t)&ts;
    return n > 0 ? (int)(rand_r(&seed) % n) : 0;
}

void pc_router_init(pc_router_t *r, const pulsarc_conf_t *conf, int nparts) {
    memset(r, 0, sizeof *r);
    r->mode = (pc_route_mode_t)pc_conf_int(conf, PC_PROP_MESSAGE_ROUTING_MODE);
    r->scheme = (pc_hash_scheme_t)pc_conf_int(conf, PC_PROP_HASHING_SCHEME);
    r->batching = (int)pc_conf_int(conf, PC_PROP_BATCHING_ENABLED);
    int64_t delay_ms = pc_conf_int(conf, PC_PROP_BATCHING_MAX_DELAY_US) / 1000;
    r->switch_ms = pc_conf_int(conf, PC_PROP_PARTITION_SWITCH_FREQ) * delay_ms;
    if (r->switch_ms < 1)
        r->switch_ms = 1;
    r->start = random_below(nparts);
    r->counter = (uint64_t)r->start;
}

static uint64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int round_robin(pc_router_t *r, int nparts, int64_t now_ms) {
    if (r->batching) {
        uint64_t now = now_ms >= 0 ? (uint64_t)now_ms : wall_ms();
        return (int)((now / (uint64_t)r->switch_ms + (uint64_t)r->start) % (uint64_t)nparts);
    }
    return (int)(r->counter++ % (uint64_t)nparts);
}

int pc_router_choose(pc_router_t *r, const pulsarc_msg_t *m, int nparts, int64_t now_ms) {
    if (r->mode == PC_ROUTE_CUSTOM && r->custom) {
        int i = r->custom(m, nparts, r->custom_opaque);
        return i >= 0 && i < nparts ? i : -1;
    }
    if (r->mode == PC_ROUTE_CUSTOM)
        return -1;
    if (m->key)
        return (int)(pc_router_hash(r->scheme, m->key, strlen(m->key)) % nparts);
    if (r->mode == PC_ROUTE_SINGLE)
        return r->start;
    return round_robin(r, nparts, now_ms);
}
