/*
 * Design notes: counting allocations without LD_PRELOAD.
 *
 * The executable itself defines malloc, calloc, realloc, free and the
 * aligned variants, and forwards each to glibc's exported __libc_*
 * entry points. Symbols defined in the main program come first in the
 * dynamic linker's global lookup scope, so every shared library — libc's
 * own strdup, libprotobuf-c's unpack, pthread — binds to these wrappers,
 * exactly as with an LD_PRELOAD'ed counter, but with nothing to set in the
 * environment. glibc documents this ("Replacing malloc": provide malloc,
 * free, calloc, realloc). Because every wrapper forwards to the same glibc
 * allocator, blocks can be mixed freely (memalign'd block freed by free).
 *
 * Rejected alternatives: -Wl,--wrap=malloc only rewrites references in the
 * objects of the static link, so it misses protobuf-c's and libc's internal
 * allocations (the bulk of a decode); mallinfo2() reports bytes in use, not
 * calls; __malloc_hook was removed in glibc 2.34.
 *
 * Cost: the counters are per thread (a slot on its own cache line, claimed
 * on the thread's first allocation), written only by that thread with
 * relaxed atomics — plain loads/stores on x86 — so counting adds no
 * cross-core traffic to the client's io-thread/application-thread hand-off.
 * Threads past SLOTS share the last slot with atomic adds. Slots outlive
 * their threads, so short-lived threads (resolver) are still counted.
 *
 * Sanitizer builds (ASan/TSan) bring their own malloc; there the wrappers
 * are compiled out and bc_alloc_counting() returns 0.
 */
#include "alloc_count.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BC_COUNT 0
#else
#define BC_COUNT 1
#endif

int bc_alloc_counting(void) { return BC_COUNT; }

#if BC_COUNT
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

#define EXPORT __attribute__((visibility("default")))
#define SLOTS 64

typedef struct slot {
    _Atomic uint64_t allocs, reallocs, frees;
    char pad[64 - 3 * sizeof(uint64_t)];
} slot_t;

static _Alignas(64) slot_t slots[SLOTS];
static atomic_uint next_slot;
static _Thread_local int my_slot = -1;

static slot_t *slot_of_thread(void) {
    if (my_slot < 0) {
        unsigned s = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed);
        my_slot = s < SLOTS ? (int)s : SLOTS - 1;
    }
    return &slots[my_slot];
}

static void bump(_Atomic uint64_t *c) {
    if (my_slot == SLOTS - 1) { /* shared overflow slot */
        atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

EXPORT void *malloc(size_t n) {
    bump(&slot_of_thread()->allocs);
    return __libc_malloc(n);
}

EXPORT void *calloc(size_t a, size_t b) {
    bump(&slot_of_thread()->allocs);
    return __libc_calloc(a, b);
}

EXPORT void *realloc(void *p, size_t n) {
    slot_t *s = slot_of_thread();
    bump(p ? &s->reallocs : &s->allocs);
    return __libc_realloc(p, n);
}

EXPORT void free(void *p) {
    if (p)
        bump(&slot_of_thread()->frees);
    __libc_free(p);
}

EXPORT void *memalign(size_t align, size_t n) {
    bump(&slot_of_thread()->allocs);
    return __libc_memalign(align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

EXPORT int posix_memalign(void **out, size_t align, size_t n) {
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

#endif /* BC_COUNT */

bc_alloc_stats_t bc_alloc_snapshot(void) {
    bc_alloc_stats_t t = {0, 0, 0};
#if BC_COUNT
    for (int i = 0; i < SLOTS; i++) {
        t.allocs += atomic_load_explicit(&slots[i].allocs, memory_order_relaxed);
        t.reallocs += atomic_load_explicit(&slots[i].reallocs, memory_order_relaxed);
        t.frees += atomic_load_explicit(&slots[i].frees, memory_order_relaxed);
    }
#endif
    return t;
}
