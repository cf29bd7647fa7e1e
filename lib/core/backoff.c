/*
 * Design notes: reconnect delays as the recent Java client computes them
 * (docs/PROTOCOL.md §11.3): start at initial, double each time up to max, and
 * subtract a random 0-10% so that many clients cut off by the same broker
 * restart do not all come back in the same millisecond. Never below initial.
 *
 * Each pc_backoff_t carries its own xorshift64 state, seeded from the clock
 * and the struct's address, so no global RNG (and no lock) is involved. A
 * backoff belongs to one owner (a producer's or consumer's reconnect logic
 * on the loop thread); the functions are reentrant but one struct must not
 * be shared between threads without the owner's lock.
 */
#include "core/backoff.h"

#include <time.h>

/* splitmix64's finaliser: spreads clock and address bits over the word. */
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t seed_for(const void *addr) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    uint64_t s = mix64(t ^ mix64((uint64_t)(uintptr_t)addr));
    return s ? s : 0x9e3779b97f4a7c15ull; /* xorshift must never hold 0 */
}

static uint64_t xorshift64(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

void pc_backoff_init(pc_backoff_t *b, int64_t initial_ms, int64_t max_ms) {
    b->initial_ms = initial_ms > 0 ? initial_ms : 1;
    b->max_ms = max_ms > b->initial_ms ? max_ms : b->initial_ms;
    b->next_ms = b->initial_ms;
    b->rng = seed_for(b);
}

int64_t pc_backoff_next(pc_backoff_t *b) {
    int64_t delay = b->next_ms;
    /* Compare before doubling so a huge max cannot overflow. */
    b->next_ms = delay > b->max_ms / 2 ? b->max_ms : delay * 2;
    int64_t span = delay / 10; /* jitter is 0..span inclusive */
    if (span > 0)
        delay -= (int64_t)(xorshift64(&b->rng) % (uint64_t)(span + 1));
    return delay < b->initial_ms ? b->initial_ms : delay;
}

void pc_backoff_reset(pc_backoff_t *b) {
    b->next_ms = b->initial_ms;
}
