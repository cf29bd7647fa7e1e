/* Reconnect backoff: initial, doubling, capped, minus up to 10% jitter. */
#ifndef PC_BACKOFF_H
#define PC_BACKOFF_H
#include <stdint.h>

typedef struct pc_backoff {
    int64_t initial_ms;
    int64_t max_ms;
    int64_t next_ms;
    uint64_t rng; /* xorshift state, seeded at init */
} pc_backoff_t;

void pc_backoff_init(pc_backoff_t *b, int64_t initial_ms, int64_t max_ms);
/* The delay to wait now; doubles the next one up to max. Never below initial. */
int64_t pc_backoff_next(pc_backoff_t *b);
/* Back to the initial delay (after a success). */
void pc_backoff_reset(pc_backoff_t *b);
#endif
