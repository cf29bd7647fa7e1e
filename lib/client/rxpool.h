/*
 * Receive-side memory: entries (one per MESSAGE frame: the payload bytes,
 * decompressed if needed, plus an arena for the metadata strings) and the
 * message structs that are views into them. Both are recycled through free
 * lists, so a consumer in steady state allocates nothing per message.
 */
#ifndef PC_RXPOOL_H
#define PC_RXPOOL_H
#include <pthread.h>
#include <stdatomic.h>

#include "client/message.h"
#include "core/buf.h"

typedef struct pc_arena_chunk {
    struct pc_arena_chunk *next;
    max_align_t data[];
} pc_arena_chunk_t;

/* Bump allocator; reset when its entry is recycled. Learns its peak size. */
typedef struct pc_arena {
    uint8_t *buf;
    size_t cap, used;
    pc_arena_chunk_t *extra; /* overflow this round */
    size_t extra_bytes;
} pc_arena_t;

typedef struct pc_rxpool pc_rxpool_t;

typedef struct pc_entry {
    atomic_int refs;
    pc_rxpool_t *pool;
    struct pc_entry *next_free;
    pc_buf_t data;   /* payload bytes the messages point into */
    pc_arena_t arena;
} pc_entry_t;

struct pc_rxpool {
    atomic_int refs;         /* the consumer, plus one per live entry */
    pthread_mutex_t lock;    /* guards the free lists */
    pc_entry_t *free_entries;
    size_t nfree_entries;
    pulsarc_msg_t *free_msgs;
    size_t nfree_msgs;
    char *topic;             /* shared by every message of the consumer */
    size_t max_entry_bytes;  /* decompressed size limit per entry */
};

pc_rxpool_t *pc_rxpool_new(const char *topic, size_t max_entry_bytes);
/* The consumer lets go; the pool lives until its last message is destroyed. */
void pc_rxpool_release(pc_rxpool_t *p);

/* A clean entry with one reference (the decoder's). */
pc_entry_t *pc_entry_get(pc_rxpool_t *p);
void pc_entry_unref(pc_entry_t *e);
/* Arena allocation (8-byte aligned); NULL on OOM. */
void *pc_arena_alloc(pc_arena_t *a, size_t n);
/* Copies n bytes plus a NUL into the arena. */
char *pc_arena_strndup(pc_arena_t *a, const void *s, size_t n);

/* A message view of e (takes a reference on e). */
pulsarc_msg_t *pc_rxmsg_get(pc_entry_t *e);
/* Returns a view to the pool (pulsarc_msg_destroy calls this). */
void pc_rxmsg_put(pulsarc_msg_t *m);
#endif
