/*
 * Producer internals shared by the producer's files:
 *   producer.c              lifecycle, pending FIFO, receipts, timeouts, public API
 *   batch.c                 open batches (default and key-based) on the io thread
 *   entry.c                 framing one entry: single message or batch, compressed
 *   chunker.c               splitting a too-big entry into chunks
 *   router.c                partition choice for partitioned topics
 *   partitioned.c           one handle over one producer per partition
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
#include "client/schema.h"
#include "core/codec.h"

typedef struct send_item {
    struct send_item *next;
    pulsarc_msg_t *msg;        /* owned when owns_msg */
    int owns_msg;
    pulsarc_send_cb cb;
    void *opaque;
    pc_waiter_t *waiter;       /* synchronous send */
    pulsarc_msgid_t *id_out;
    int64_t seq;
    int64_t queued_ms;         /* monotonic, for the timeout and latency */
    int64_t mem;               /* bytes reserved in the client memory limit */
    struct pulsarc_txn_s *txn; /* sent in this transaction (one pc_txn_op_begin), or NULL */
} send_item_t;

typedef struct send_op {
    struct send_op *next;
    int64_t seq, highest_seq;  /* receipts may echo either (protocol.md §4.3) */
    pc_buf_t frame;            /* the SEND frame, resent byte for byte */
    send_item_t *items;        /* completed by this op's receipt; NULL on a non-final chunk */
    int nitems;
    int batched;               /* ids carry batch index and size */
    int64_t deadline_ms;
} send_op_t;

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
} pc_producer_stats_acc_t;

struct pulsarc_producer_s {
    pc_handle_t handle;
    pulsarc_client_t *client;
    pulsarc_producer_t *parent; /* partition producers: the handle the user holds */
    pc_topic_t topic;
    atomic_int refs;
    uint64_t id;
    /* io thread */
    pc_handler_t h;
    pc_conn_t *attached;        /* connection our frames are routed from, or NULL */
    char name[256];
    int user_named;
    pc_schema_t schema;         /* declared at creation (immutable) */
    uint8_t schema_version[64]; /* the broker's version of it, from PRODUCER_SUCCESS */
    size_t schema_version_len;
    pc_timer_t send_timer;
    pc_timer_t batch_timer;
    send_op_t *head, *tail;
    pc_batcher_t batcher;
    int64_t next_seq;
    int seeded;                 /* next_seq came from the user or the first creation */
    uint64_t topic_epoch;
    int has_topic_epoch;
    pc_waiter_t create_w;
    int creating;               /* create_w not yet completed */
    /* configuration */
    int send_timeout_ms;
    int max_pending;
    int block_if_full;
    int batching;
    int64_t batch_delay_us;
    pc_codec_t codec;
    struct pc_encryptor *encryptor; /* end-to-end encryption, or NULL (lib/crypto) */
    int chunking;
    int64_t chunk_max;
    int access_mode;
    /* partitioned handle only */
    int nparts;
    pulsarc_producer_t **parts;
    pc_router_t router;
    /* shared with application threads, under lock */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int inflight;
    uint64_t enqueued, completed;
    int closing;
    int closed;
    int close_posted;
    int64_t last_seq_acked;
    pc_producer_stats_acc_t stats;
};

/* producer.c */
void pc_producer_ref(pulsarc_producer_t *p);
void pc_producer_unref(pulsarc_producer_t *p);
/* Allocates and reads conf; the topic is parsed from name. */
pulsarc_err_t pc_producer_alloc(pulsarc_client_t *c, const char *name, const pulsarc_conf_t *conf,
                                pulsarc_producer_t **pp, char *errstr, size_t errlen);
/* Starts creating on the broker (io thread does the work); then wait. */
pulsarc_err_t pc_producer_begin_create(pulsarc_producer_t *p);
pulsarc_err_t pc_producer_wait_created(pulsarc_producer_t *p, char *errstr, size_t errlen);
/* Queues one item (application thread); the item's outcome is reported either way. */
pulsarc_err_t pc_producer_submit(pulsarc_producer_t *p, send_item_t *it);
pulsarc_err_t pc_producer_flush_one(pulsarc_producer_t *p, int timeout_ms);
void pc_producer_close_one(pulsarc_producer_t *p);
/* Loop thread: frames the open batches and queues them for sending. */
void pc_producer_flush_batches(pulsarc_producer_t *p);
/* Loop thread: queues framed ops (in order) and writes them when ready. */
void pc_producer_queue_ops(pulsarc_producer_t *p, send_op_t *first);
/* Loop thread: the single exit of every item. */
void pc_producer_complete_item(pulsarc_producer_t *p, send_item_t *it, pulsarc_err_t err,
                               const char *errmsg, const pulsarc_msgid_t *id);
size_t pc_producer_max_message_size(const pulsarc_producer_t *p);

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

/* entry.c: each returns a list of ops (more than one when chunked). */
pulsarc_err_t pc_entry_single(pulsarc_producer_t *p, send_item_t *it, send_op_t **ops,
                              char *errstr, size_t errlen);
pulsarc_err_t pc_entry_batch(pulsarc_producer_t *p, pc_batch_group_t *g, send_op_t **ops,
                             char *errstr, size_t errlen);
/* Frames one SEND with meta and payload into op->frame. */
pulsarc_err_t pc_entry_frame(pulsarc_producer_t *p, send_op_t *op,
                             const Pulsar__Proto__MessageMetadata *md, const void *payload,
                             size_t len, int num_messages, int is_chunk);
void pc_send_op_free(send_op_t *op);

/* chunker.c */
pulsarc_err_t pc_chunk_entry(pulsarc_producer_t *p, send_item_t *it,
                             Pulsar__Proto__MessageMetadata *md, const uint8_t *payload,
                             size_t len, send_op_t **ops, char *errstr, size_t errlen);

/* router.c */
void pc_router_init(pc_router_t *r, const pulsarc_conf_t *conf, int nparts);
/* The partition for m, or -1 if a custom router answered out of range. */
int pc_router_choose(pc_router_t *r, const pulsarc_msg_t *m, int nparts, int64_t now_ms);
int32_t pc_router_hash(pc_hash_scheme_t s, const char *key, size_t len);

/* partitioned.c */
pulsarc_err_t pc_partitioned_new(pulsarc_client_t *c, pulsarc_producer_t *parent, int nparts,
                                 const pulsarc_conf_t *conf, char *errstr, size_t errlen);
pulsarc_err_t pc_partitioned_submit(pulsarc_producer_t *parent, send_item_t *it);
pulsarc_err_t pc_partitioned_flush(pulsarc_producer_t *parent, int timeout_ms);
void pc_partitioned_close(pulsarc_producer_t *parent);
#endif
