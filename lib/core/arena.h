/* A bump allocator that learns its peak size, and its protobuf-c adapter. */
#ifndef PC_ARENA_H
#define PC_ARENA_H
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

typedef struct pc_arena_chunk {
    struct pc_arena_chunk *next;
    max_align_t data[];
} pc_arena_chunk_t;

typedef struct pc_arena {
    uint8_t *buf;
    size_t cap, used;
    pc_arena_chunk_t *extra; /* overflow this round */
    size_t extra_bytes;
} pc_arena_t;

/* 8-byte aligned; NULL on OOM. A fresh (zeroed) arena's first call
 * allocates its main block, at least 512 bytes. */
void *pc_arena_alloc(pc_arena_t *a, size_t n);
/* Copies n bytes plus a NUL into the arena. */
char *pc_arena_strndup(pc_arena_t *a, const void *s, size_t n);
/* Forgets everything; grows the main block to the last round's peak. */
void pc_arena_reset(pc_arena_t *a);
void pc_arena_free(pc_arena_t *a);
/* An allocator for protobuf-c unpack whose free is a no-op (reset frees). */
ProtobufCAllocator pc_arena_allocator(pc_arena_t *a);
#endif
