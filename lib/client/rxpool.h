/*
 * Receive-side memory: entries (one per MESSAGE frame: the payload bytes,
 * decompressed if needed, an arena for the metadata strings, and an array
 * of the message structs that are views into them). Entries are recycled
 * through a free list with all three kept, so a consumer in steady state
 * allocates nothing per message and takes no lock per message.
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
    size_t data_off; /* where the payload starts in data: past the frame's
                        head when data is the adopted frame (pc_frame_adopt) */
    pc_arena_t arena;
    pulsarc_msg_t *msgs; /* the views, reserved before the first is made */
    pc_msg_shared_t shared; /* what all its views share, set before the first */
    size_t nmsgs, capmsgs;
    /* msgs until an entry needs more than one view: an unbatched entry's
     * view costs no allocation of its own */
    pulsarc_msg_t one_msg;
} pc_entry_t;

struct pc_rxpool {
    atomic_int refs;         /* the consumer, plus one per live entry */
    pthread_mutex_t lock;    /* guards the free lists */
    pc_entry_t *free_entries;
    size_t nfree_entries;
    char *topic;             /* shared by every message of the consumer */
    size_t max_entry_bytes;  /* decompressed size limit per entry */
    size_t max_free_entries; /* sized from the receiver queue */
    size_t pooled_bytes;     /* memory held by free entries */
};

/* queue: receiverQueueSize, so a full queue's worth recycles without malloc. */
pc_rxpool_t *pc_rxpool_new(const char *topic, size_t max_entry_bytes, size_t queue);
/* Resizes the free list for a receive queue of queue messages (the queue
 * grew or shrank); free entries beyond it go back to the system now. Any
 * thread: takes only the pool's lock. */
void pc_rxpool_set_queue(pc_rxpool_t *p, size_t queue);
/* Bytes the free entries hold now (tests, figures). */
size_t pc_rxpool_pooled_bytes(pc_rxpool_t *p);
/* The consumer lets go; the pool lives until its last message is destroyed. */
void pc_rxpool_release(pc_rxpool_t *p);

/* A clean entry with one reference (the decoder's). */
pc_entry_t *pc_entry_get(pc_rxpool_t *p);
void pc_entry_unref(pc_entry_t *e);

/*
 * Room for n message views in e; 0 on success. Called before the first
 * view is made: the array never moves while views exist.
 */
int pc_entry_reserve_msgs(pc_entry_t *e, size_t n);
/*
 * The views are the slots e->msgs[0 .. nmsgs), filled in order by the
 * thread building e (client/consumer/rx_decode.c) before e's messages are
 * handed to anyone, each holding one reference on e.
 */
/* Drops a view (pulsarc_msg_destroy calls this); the last one recycles e. */
void pc_rxmsg_put(pulsarc_msg_t *m);
#endif
