/*
 * Producer internals shared by the producer's files, top down:
 *   api.c                   the public pulsarc_producer_* calls: checks, the
 *                           kind chosen at creation, dispatch through the ops
 *   producer.c              producer of one topic or partition: lifecycle,
 *                           hand-off, pending FIFO, receipts, timeouts
 *   partitioned.c           one handle over one producer per partition
 *   router.c                partition choice for partitioned topics
 *   common.c                the shared handle's setup, configuration read once
 *   batch.c                 open batches (default and key-based) on the io thread
 *   entry.c                 framing one entry: single message or batch, compressed
 *   chunker.c               splitting a too-big entry into chunks
 *   send_op.c               one SEND frame in flight: allocated, framed, freed
 *
 * Every kind is its own struct that starts with pulsarc_producer_t (the
 * handle the user holds) and implements pc_producer_ops_t; nothing tests
 * which kind an object is.
 *
 * Vocabulary: an *item* is one user message waiting for its outcome; an
 * *op* is one SEND frame in flight (a single message, a batch of items, or
 * one chunk). Items are completed exactly once, by the op that carries them.
 */
#ifndef PC_PRODUCER_INT_H
#define PC_PRODUCER_INT_H
#include <stdatomic.h>

#include "client/client_int.h"
#include "client/handler.h"
#include "client/message.h"
#include "client/metrics.h"
#include "client/schema.h"
#include "core/codec.h"

struct pc_item_pool;

typedef struct send_item {
    /* In exactly one list at a time: the hand-off queue, then an open batch
     * group or the op that carries it, then (a callback's) its group on the
     * callback queue; then its pool's free list. */
    struct send_item *next;
    struct pc_item_pool *pool; /* where it goes back when done (common.c) */
    pulsarc_msg_t *msg;        /* owned when owns_msg */
    int owns_msg;
    pulsarc_send_cb cb;
    void *opaque;
    pc_op_t *waiter;       /* synchronous send */
    pulsarc_msgid_t *id_out;
    int64_t seq;
    int64_t queued_ms;         /* coarse monotonic clock, for the latency statistics */
    int64_t mem;               /* bytes reserved in the client memory limit */
    struct pulsarc_txn_s *txn; /* sent in this transaction (one pc_txn_op_begin), or NULL */
    /* Set when its outcome goes to a callback: the item itself then travels
     * on the callback queue, so reporting allocates nothing. */
    pc_cb_item_t cb_item;
    pulsarc_err_t err;
    pulsarc_msgid_t id;
    void *reporter;            /* the producer whose callback count it holds */
} send_item_t;

struct pc_send_op_pool;

typedef struct send_op {
    struct send_op *next;
    struct pc_send_op_pool *pool; /* where it goes back when done, or NULL */
    int64_t seq, highest_seq;  /* receipts may echo either (docs/PROTOCOL.md §4.3) */
    pc_buf_t frame;            /* the SEND frame, resent byte for byte: all of it, or */
    const uint8_t *tail;       /* its head only, when the payload is sent from here: */
    size_t tail_len;           /* the message's own bytes, alive until its items complete, */
    pc_buf_t body;             /* or a batch's records, kept here for resends, */
    int gathered;              /* or only their heads, each record's payload sent from
                                  its item's message (alive until the items complete) */
    send_item_t *items;        /* completed by this op's receipt; NULL on a non-final chunk */
    int nitems;
    int batched;               /* ids carry batch index and size */
    int64_t deadline_ms;
} send_op_t;

/*
 * Items a handle has finished with, kept for its next sends so that a
 * message costs no allocation of its own: taken by application threads,
 * given back by whichever thread completed the item (io or callback), so
 * under a leaf lock of its own. Holds at most max items: twice
 * maxPendingMessages, because a receipt frees its slots before the callback
 * thread gives the items back, so pending sends and items still waiting for
 * their callbacks together may need that many without allocating.
 */
typedef struct pc_item_pool {
    pthread_mutex_t lock;
    send_item_t *free;
    int n, max;
} pc_item_pool_t;

/*
 * Ops (SEND frames) a producer has finished with, each keeping its frame
 * and body buffers for the next frame. Io thread only. At most max ops (the
 * pending bound), and a frame or body bigger than PC_SEND_OP_KEEP_BYTES is
 * freed rather than kept, so a pool holds no more than a few small frames' worth per
 * pending slot.
 */
typedef struct pc_send_op_pool {
    send_op_t *free;
    int n, max;
} pc_send_op_pool_t;

#define PC_SEND_OP_KEEP_BYTES 4096

/* Open batches, io thread only (batch.c). */
typedef struct pc_batch_group {
    struct pc_batch_group *next;
    uint8_t *key;              /* NULL for the default container's single group */
    size_t keylen;
    send_item_t *first, *last;
    int n;
} pc_batch_group_t;

typedef struct pc_batcher {
    int key_based;
    int max_msgs;
    size_t max_bytes;
    pc_batch_group_t *groups;
    int n;                     /* messages in all groups */
    size_t bytes;              /* payload bytes in all groups */
} pc_batcher_t;

/* Partition routing (router.c); the state is touched under the owner's lock. */
typedef enum { PC_ROUTE_ROUND_ROBIN, PC_ROUTE_SINGLE, PC_ROUTE_CUSTOM } pc_route_mode_t;
typedef enum { PC_HASH_JAVA_STRING, PC_HASH_MURMUR3 } pc_hash_scheme_t;

typedef struct pc_router {
    pc_route_mode_t mode;
    pc_hash_scheme_t scheme;
    int batching;
    int64_t switch_ms;         /* round robin with batching: partition period */
    int start;                 /* random start / SinglePartition's fixed choice */
    uint64_t counter;          /* round robin without batching */
    pulsarc_router_cb custom;
    void *custom_opaque;
} pc_router_t;

typedef struct pc_producer_stats_acc {
    uint64_t msgs_sent, bytes_sent, send_errors, acks;
    uint64_t latency_sum_ms, latency_max_ms;
    uint64_t reconnects; /* PRODUCER_SUCCESS after the first (metrics) */
} pc_producer_stats_acc_t;

/* A producer's configuration, read and checked once (common.c). */
typedef struct pc_producer_settings {
    int send_timeout_ms;
    int max_pending;
    int block_if_full;
    int batching;
    int64_t batch_delay_us;
    int key_based_batches;
    int batch_max_msgs;
    size_t batch_max_bytes;
    pc_codec_t codec;
    struct pc_encryptor *encryptor; /* end-to-end encryption, or NULL (lib/crypto) */
    int chunking;
    int64_t chunk_max;
    int access_mode;
    int64_t initial_seq;       /* -1 when not set */
} pc_producer_settings_t;

/* What each producer kind implements; api.c dispatches every public call here. */
typedef struct pc_producer_ops {
    /* Creates it on the broker and waits (application thread, once). */
    pulsarc_err_t (*create)(pulsarc_producer_t *p, const pulsarc_conf_t *conf, char *errstr,
                            size_t errlen);
    /* Queues one item; the item's outcome is reported either way, unless
     * this fails: then the item is not consumed. */
    pulsarc_err_t (*submit)(pulsarc_producer_t *p, send_item_t *it);
    pulsarc_err_t (*flush)(pulsarc_producer_t *p, int timeout_ms);
    /* Adds parts to op (pc_op_add) and reports each once everything queued
     * before the call has its outcome; adds none when nothing is pending. */
    pulsarc_err_t (*flush_async)(pulsarc_producer_t *p, pc_op_t *op);
    /* Closes and waits for it (inside a library callback it only starts). */
    void (*close)(pulsarc_producer_t *p);
    int64_t (*last_sequence_id)(pulsarc_producer_t *p);
    int (*partitions)(const pulsarc_producer_t *p);
    pulsarc_err_t (*set_router)(pulsarc_producer_t *p, pulsarc_router_cb cb, void *opaque);
    /* Adds its counters to sum and its unanswered messages to *pending. */
    void (*add_stats)(pulsarc_producer_t *p, pc_producer_stats_acc_t *sum, uint64_t *pending);
    /* pulsarc_producer_destroy: drops the references it holds on others. */
    void (*release)(pulsarc_producer_t *p);
    /* The last reference is gone: frees the whole object. */
    void (*free)(pulsarc_producer_t *p);
} pc_producer_ops_t;

/* The handle every kind starts with. */
struct pulsarc_producer_s {
    const pc_producer_ops_t *ops;
    pc_handle_t handle;         /* the client's registry of user handles */
    pulsarc_client_t *client;
    atomic_int refs;
    pc_topic_t topic;
    char name[256];             /* the broker's name for it unless user_named (io thread writes) */
    int user_named;
    pc_send_hists_t send_hists; /* send durations; a partition's go to its owner's */
    struct pc_producer_icpts *icpts; /* the user handle's interceptors (api.c), or NULL */
    pc_item_pool_t items;       /* the items of messages sent through this handle */
    pc_op_t flushes_out;        /* countdown of flush_async callbacks not yet run (api.c) */
};

static inline void pc_producer_ref(pulsarc_producer_t *p) { atomic_fetch_add(&p->refs, 1); }

static inline void pc_producer_unref(pulsarc_producer_t *p) {
    if (atomic_fetch_sub(&p->refs, 1) == 1)
        p->ops->free(p);
}

/* common.c */
void pc_producer_base_init(pulsarc_producer_t *p, const pc_producer_ops_t *ops,
                           pulsarc_client_t *c, const pc_topic_t *topic,
                           const pulsarc_conf_t *conf);
/* Frees what the handle's item pool holds (its kind's free calls it). */
void pc_producer_base_clear(pulsarc_producer_t *p);
/* A zeroed item from p's pool (or a new one), NULL without memory; any thread. */
send_item_t *pc_item_get(pulsarc_producer_t *p);
/* Gives it back to its pool, or frees it when the pool is full; any thread. */
void pc_item_put(send_item_t *it);
/* pc_item_put for a chain linked by next: one lock per pool, not per item. */
void pc_item_put_chain(send_item_t *first);
/* Senders of a one-topic producer waiting in line for a pending slot (for tests). */
int pc_topic_producer_slot_waiters(pulsarc_producer_t *p);

/* Reads and checks conf for a producer on topic (schema included). */
pulsarc_err_t pc_producer_settings_read(pc_producer_settings_t *s, const pulsarc_conf_t *conf,
                                        const pc_topic_t *topic, char *errstr, size_t errlen);

/* producer.c: the producer of one topic or one partition. owner is the
 * partitioned handle it is a partition of (shown to callbacks, referenced),
 * or NULL. */
pulsarc_err_t pc_topic_producer_alloc(pulsarc_client_t *c, const char *topic,
                                      const pulsarc_conf_t *conf,
                                      const pc_producer_settings_t *s, pulsarc_producer_t *owner,
                                      pulsarc_producer_t **pp, char *errstr, size_t errlen);
/* Starts creating on the broker (io thread does the work); then wait. */
pulsarc_err_t pc_topic_producer_begin_create(pulsarc_producer_t *p);
pulsarc_err_t pc_topic_producer_wait_created(pulsarc_producer_t *p, char *errstr, size_t errlen);
/*
 * Starts creating without a waiter: fn runs once on the client's callback
 * queue with the outcome (msg NULL on success; on failure the producer is
 * closed). An error here means nothing started and fn will not run. The
 * caller's reference stays the caller's either way.
 */
typedef void (*pc_created_fn)(pulsarc_producer_t *p, pulsarc_err_t err, const char *msg, void *arg);
pulsarc_err_t pc_topic_producer_create_async(pulsarc_producer_t *p, pc_created_fn fn, void *arg);

/* batch.c */
void pc_batcher_init(pc_batcher_t *b, int key_based, int max_msgs, size_t max_bytes);
/* 1 when it can be batched at all (not delayed, not bigger than a batch). */
int pc_batcher_accepts(const pc_batcher_t *b, const pulsarc_msg_t *m);
/* 1 when adding m would overflow the open batches (send them first). */
int pc_batcher_would_overflow(const pc_batcher_t *b, const pulsarc_msg_t *m);
pulsarc_err_t pc_batcher_add(pc_batcher_t *b, send_item_t *it);
int pc_batcher_full(const pc_batcher_t *b);
int pc_batcher_empty(const pc_batcher_t *b);
/* Detaches every open group, ordered by the sequence id of its first item. */
pc_batch_group_t *pc_batcher_take(pc_batcher_t *b);
void pc_batch_group_free(pc_batch_group_t *g);
/* The [u32][SingleMessageMetadata][payload]* concatenation of a group. */
pulsarc_err_t pc_batch_serialize(const pc_batch_group_t *g, pc_buf_t *out);
/* Only the [u32][SingleMessageMetadata] heads, back to back; *payload gets
 * the length the whole concatenation has on the wire. */
pulsarc_err_t pc_batch_serialize_heads(const pc_batch_group_t *g, pc_buf_t *out, size_t *payload);

/*
 * What framing an entry takes from its producer (entry.c, chunker.c), filled
 * by the producer for each entry on the io thread: the broker's limits move
 * with the connection, the name and schema version with each creation.
 */
typedef struct pc_entry_conf {
    uint64_t producer_id;
    const char *producer_name;
    const uint8_t *schema_version;
    size_t schema_version_len;
    pc_codec_t codec;
    int chunking;
    size_t max_size;           /* the broker's maxMessageSize */
    size_t chunk_limit;        /* chunkMaxMessageSize, at most max_size */
    struct pc_encryptor *encryptor; /* end-to-end encryption (lib/crypto), or NULL */
    pc_send_op_pool_t *op_pool;     /* where the ops come from (the producer's) */
} pc_entry_conf_t;

/* entry.c: each returns a list of ops (more than one when chunked). */
pulsarc_err_t pc_entry_single(const pc_entry_conf_t *f, send_item_t *it, send_op_t **ops,
                              char *errstr, size_t errlen);
pulsarc_err_t pc_entry_batch(const pc_entry_conf_t *f, pc_batch_group_t *g, send_op_t **ops,
                             char *errstr, size_t errlen);

/* send_op.c */
void pc_send_op_pool_init(pc_send_op_pool_t *pool, int max);
void pc_send_op_pool_clear(pc_send_op_pool_t *pool);
/* An empty op from pool (NULL: none) or a new one; NULL without memory. */
send_op_t *pc_send_op_new(pc_send_op_pool_t *pool, int64_t seq, int64_t highest_seq);
/* Frames one SEND with meta and payload into op->frame. */
pulsarc_err_t pc_send_op_frame(const pc_entry_conf_t *f, send_op_t *op,
                               const Pulsar__Proto__MessageMetadata *md, const void *payload,
                               size_t len, int num_messages, int is_chunk);
/* Back to the pool it came from, or freed. */
void pc_send_op_free(send_op_t *op);
/* Frames one SEND whose payload stays where it is (uncompressed, not
 * encrypted: one message's bytes or op->body): only the head is copied into
 * op->frame. num_messages as for pc_send_op_frame. */
pulsarc_err_t pc_send_op_frame_borrowed(const pc_entry_conf_t *f, send_op_t *op,
                                        const Pulsar__Proto__MessageMetadata *md,
                                        const uint8_t *payload, size_t len, int num_messages);
/* Frames one uncompressed, unencrypted batch SEND whose records are sent
 * gathered: op->body holds the records' heads (pc_batch_serialize_heads),
 * items their payloads, in the same order; len is the records' whole
 * length. Only the frame's head is written to op->frame; its checksum runs
 * over the pieces in wire order. */
pulsarc_err_t pc_send_op_frame_gathered(const pc_entry_conf_t *f, send_op_t *op,
                                        const Pulsar__Proto__MessageMetadata *md,
                                        const send_item_t *items, size_t len, int num_messages);
/* Queues the op's frame on conn (head and borrowed or gathered payload). */
void pc_send_op_write(const send_op_t *op, struct pc_conn *conn);

/* chunker.c */
pulsarc_err_t pc_chunk_entry(const pc_entry_conf_t *f, send_item_t *it,
                             Pulsar__Proto__MessageMetadata *md, const uint8_t *payload,
                             size_t len, send_op_t **ops, char *errstr, size_t errlen);

/* router.c */
void pc_router_init(pc_router_t *r, const pulsarc_conf_t *conf, int nparts);
/* The partition for m, or -1 if a custom router answered out of range. */
int pc_router_choose(pc_router_t *r, const pulsarc_msg_t *m, int nparts, int64_t now_ms);
int32_t pc_router_hash(pc_hash_scheme_t s, const char *key, size_t len);

/* partitioned.c */
pulsarc_err_t pc_partitioned_alloc(pulsarc_client_t *c, const pc_topic_t *topic, int nparts,
                                   const pulsarc_conf_t *conf, const pc_producer_settings_t *s,
                                   pulsarc_producer_t **pp, char *errstr, size_t errlen);
#endif
