/*
 * Design notes: decoded protocol objects live exactly as long as the frame
 * or entry they came from, so they are bump-allocated and dropped all at
 * once. An arena that overflows in one round grows its main block to that
 * round's peak at reset, so after warm-up decoding allocates nothing.
 * A fresh arena's first allocation makes its main block (at least
 * ARENA_MIN) rather than an overflow chunk: a new arena then costs one
 * malloc, not a chunk per object, their frees and a regrow at reset.
 * Not thread-safe: each arena has one owner at a time.
 */
#include "core/arena.h"

#include <stdlib.h>
#include <string.h>

/* Small: an unbatched entry's metadata needs ~0.5 KB, and a receive queue
 * of 10,000 such entries must fit the pool's byte cap (rxpool.c) or they
 * are freed and allocated again. Arenas grow to their peak anyway. */
#define ARENA_MIN 512

/* The first block of a fresh arena; 0 on success. */
static int make_main_block(pc_arena_t *a, size_t n) {
    size_t cap = n < ARENA_MIN ? ARENA_MIN : n;
    uint8_t *b = malloc(cap);
    if (!b)
        return -1;
    a->buf = b;
    a->cap = cap;
    return 0;
}

void *pc_arena_alloc(pc_arena_t *a, size_t n) {
    n = (n + 7) & ~(size_t)7;
    if (a->used + n <= a->cap) {
        void *p = a->buf + a->used;
        a->used += n;
        return p;
    }
    /* off the fast path: a fresh arena has cap 0, so it always lands here */
    if (!a->buf && !a->extra && make_main_block(a, n) == 0) {
        a->used = n;
        return a->buf;
    }
    pc_arena_chunk_t *c = malloc(sizeof *c + n);
    if (!c)
        return NULL;
    c->next = a->extra;
    a->extra = c;
    a->extra_bytes += n;
    return c->data;
}

char *pc_arena_strndup(pc_arena_t *a, const void *s, size_t n) {
    char *d = pc_arena_alloc(a, n + 1);
    if (d) {
        if (n)
            memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

void pc_arena_reset(pc_arena_t *a) {
    size_t peak = a->used + a->extra_bytes;
    while (a->extra) {
        pc_arena_chunk_t *next = a->extra->next;
        free(a->extra);
        a->extra = next;
    }
    a->extra_bytes = 0;
    a->used = 0;
    if (peak > a->cap) {
        size_t cap = peak < ARENA_MIN ? ARENA_MIN : peak + peak / 4;
        uint8_t *b = realloc(a->buf, cap);
        if (b) {
            a->buf = b;
            a->cap = cap;
        }
    }
}

void pc_arena_free(pc_arena_t *a) {
    pc_arena_reset(a);
    free(a->buf);
    a->buf = NULL;
    a->cap = 0;
}

static void *pb_alloc(void *ad, size_t n) { return pc_arena_alloc(ad, n); }
static void pb_free(void *ad, void *p) { (void)ad, (void)p; }

ProtobufCAllocator pc_arena_allocator(pc_arena_t *a) {
    ProtobufCAllocator al = {pb_alloc, pb_free, a};
    return al;
}
