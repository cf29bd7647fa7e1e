/*
 * Allocation counter for the benchmark programs (see alloc_count.c).
 * Counts every malloc/calloc/realloc(NULL,..)/aligned allocation and every
 * free made by any code in the process, libraries included.
 */
#ifndef PC_BENCH_ALLOC_COUNT_H
#define PC_BENCH_ALLOC_COUNT_H
#include <stdint.h>

typedef struct bc_alloc_stats {
    uint64_t allocs;   /* new blocks (malloc, calloc, realloc of NULL, memalign ...) */
    uint64_t reallocs; /* realloc of an existing block */
    uint64_t frees;    /* free of a non-NULL pointer */
} bc_alloc_stats_t;

/* Totals over every thread so far (monotonic; subtract two snapshots). */
bc_alloc_stats_t bc_alloc_snapshot(void);
/* 0 when counting is compiled out (ASan/TSan builds own malloc): report n/a. */
int bc_alloc_counting(void);
#endif
