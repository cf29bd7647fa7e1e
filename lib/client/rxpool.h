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
#include "core/arena.h"
#include "core/buf.h"


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
    size_t max_free_entries, max_free_msgs; /* sized from the receiver queue */
    size_t pooled_bytes;     /* memory held by free entries */
};

/* queue: receiverQueueSize, so a full queue's worth recycles without malloc. */
pc_rxpool_t *pc_rxpool_new(const char *topic, size_t max_entry_bytes, size_t queue);
/* The consumer lets go; the pool lives until its last message is destroyed. */
void pc_rxpool_release(pc_rxpool_t *p);

/* A clean entry with one reference (the decoder's). */
pc_entry_t *pc_entry_get(pc_rxpool_t *p);
void pc_entry_unref(pc_entry_t *e);

/* A message view of e (takes a reference on e). */
pulsarc_msg_t *pc_rxmsg_get(pc_entry_t *e);
/* Returns a view to the pool (pulsarc_msg_destroy calls this). */
void pc_rxmsg_put(pulsarc_msg_t *m);
#endif
