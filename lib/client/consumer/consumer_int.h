/*
 * The consumer's shared state, split across consumer.c (life cycle and
 * broker events), receive_queue.c (receive queue, permits, listener),
 * ack.c (acks, nacks, redelivery) and seek.c (seek,
 * last message id). Fields are grouped by the thread that owns them.
 */
#ifndef PC_CONSUMER_INT_H
#define PC_CONSUMER_INT_H
#include <stdatomic.h>
#include <stddef.h>

#include "client/schema.h"
#include "client/consumer/ack_tracker.h"
#include "client/consumer/chunk_assembler.h"
#include "client/client_int.h"
#include "client/handler.h"
#include "client/message.h"
#include "client/consumer/redelivery.h"
#include "client/consumer/rx_decode.h"

#define PC_MAX_HASH_RANGES 64

typedef struct pc_dlq pc_dlq_t;

struct pulsarc_consumer_s {
    pc_handle_t handle;
    pulsarc_client_t *client;
    pc_topic_t topic;
    char *sub;
    atomic_int refs;
    uint64_t id;

    /* ---- loop thread ---- */
    pc_handler_t h;              /* connection state machine */
    pc_conn_t *attached;         /* connection our frames are routed from, or NULL */
    pc_waiter_t *create_waiter;
    pc_waiter_t *unsub_waiter;
    pc_waiter_t *ack_waiter;     /* a receipt is wanted for the ack in progress */
    pc_rxpool_t *pool;           /* memory of received messages */
    pc_ack_tracker_t acks;
    pc_redelivery_t redelivery;  /* nacks and ack timeouts */
    pc_chunks_t chunks;          /* chunked messages being assembled */
    pc_dlq_t *dlq;               /* dead-letter / retry topics, or NULL */
    uint64_t epoch;              /* consumer epoch for "redeliver all" */
    int durable;                 /* 0: reader (non-durable cursor) */
    int has_start;               /* readers: start_id applies */
    pulsarc_msgid_t start_id;
    int start_inclusive;
    int seeking;                 /* a seek succeeded; drop deliveries until re-subscribed */
    uint64_t subscribes;         /* successful SUBSCRIBEs so far */

    /* ---- configuration (set before the loop sees the consumer) ---- */
    int sub_type;
    int initial_position;
    int queue_size;
    int priority;
    int read_compacted;
    struct pc_decryptor *decryptor; /* end-to-end decryption, or NULL (lib/crypto) */
    int crypto_action;              /* pc_crypto_fail_action_t: cryptoFailureAction */
    int receipts;
    int ks_mode;
    int ks_allow_ooo;
    int ks_nranges;
    int32_t ks_ranges[PC_MAX_HASH_RANGES][2];
    char name[256];
    pc_schema_t schema;       /* declared when subscribing (immutable) */
    size_t batch_max_msgs, batch_max_bytes;
    int batch_timeout_ms;
    pulsarc_message_listener_cb listener;
    void *listener_opaque;
    pulsarc_consumer_event_cb event_cb;
    void *event_opaque;

    /* ---- multi-topic (multi_topic.c) ----
     * A parent has no broker presence: its children (one per topic or
     * partition) subscribe and deliver into the parent's queue. The
     * children array is guarded by the parent's lock. */
    pulsarc_consumer_t *parent;
    int is_multi;
    pulsarc_consumer_t **children;
    size_t nchildren, capchildren;
    pulsarc_conf_t *conf_copy;   /* for children found later */
    struct pc_multi *multi;      /* discovery state (loop thread) */

    /* ---- loop thread: decoded during one read, handed over at its end ---- */
    pc_rx_result_t pend;         /* first/last/n and permits of the entries gathered */

    /* ---- shared with application threads, under lock ---- */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pulsarc_msg_t *qhead, *qtail;
    size_t qlen, qbytes;
    uint32_t permits;            /* owed back to the broker */
    int flow_posted;
    int listener_posted;
    int closing, closed, close_posted;
    int end_of_topic;
    int connected;
    /* Plain acks queue here and go to the io thread in one post per burst;
     * two buffers swap, so steady-state acking allocates nothing. */
    pulsarc_msgid_t *ackq, *ackq_spare;
    size_t nackq, capackq, capspare;
    int ackq_posted;
    pulsarc_msgid_t last_dequeued; /* readers restart after it */
    int has_dequeued;
    pulsarc_consumer_stats_t stats;
};

#define PC_CONSUMER_OF_HANDLER(hp) \
    ((pulsarc_consumer_t *)((char *)(hp) - offsetof(pulsarc_consumer_t, h)))

/* consumer.c */
void pc_consumer_ref(pulsarc_consumer_t *c);
void pc_consumer_unref(pulsarc_consumer_t *c);
int pc_consumer_is_shared(const pulsarc_consumer_t *c);

/* receive_queue.c (loop thread unless noted) */
/* Takes a decoded entry; its messages reach the queue at the next flush. */
void pc_consumer_deliver(pulsarc_consumer_t *c, pc_rx_result_t *r);
/* Hands what was gathered since the last flush to the queue (loop thread). */
void pc_consumer_flush(pulsarc_consumer_t *c);
void pc_consumer_refund(pulsarc_consumer_t *c, uint32_t permits);
void pc_consumer_send_flow(pulsarc_consumer_t *c, uint32_t n);
/* Empties the queue (lock held) and returns how many messages were in it. */
size_t pc_consumer_clear_queue_locked(pulsarc_consumer_t *c);
/* Drops the messages c received that are still queued (in its parent's queue
 * for a child); returns how many. Takes the locks itself. */
size_t pc_consumer_drop_queued(pulsarc_consumer_t *c);
/* The consumer whose queue c's messages go to. */
static inline pulsarc_consumer_t *pc_consumer_queue_of(pulsarc_consumer_t *c) {
    return c->parent ? c->parent : c;
}
void pc_consumer_notify_event(pulsarc_consumer_t *c, pulsarc_consumer_event_t ev);

/* ack.c (loop thread) */
void pc_consumer_acks_init(pulsarc_consumer_t *c);
void pc_consumer_drop_chunks(void *owner, const pulsarc_msgid_t *ids, size_t n, int ack);
void pc_consumer_send_validation_ack(pulsarc_consumer_t *c, const pulsarc_msgid_t *id, int why);
/* Asks the broker to redeliver ids (all of them when n == 0 or not Shared). */
void pc_consumer_redeliver(pulsarc_consumer_t *c, const pulsarc_msgid_t *ids, size_t n);

/* consumer.c: creation in two steps, so the reader can adjust in between. */
pulsarc_err_t pc_consumer_prepare(pulsarc_client_t *cl, const char *topic, const char *sub,
                                  const pulsarc_conf_t *conf, pulsarc_consumer_t **cp,
                                  char *errstr, size_t errlen);
pulsarc_err_t pc_consumer_start(pulsarc_consumer_t *c, char *errstr, size_t errlen);
/* Loop thread: subscribes without anyone waiting (children found by discovery). */
void pc_consumer_start_async(pulsarc_consumer_t *c);

/* dead_letter.c */
pulsarc_err_t pc_dlq_configure(pulsarc_consumer_t *c, const pulsarc_conf_t *conf);
const char *pc_dlq_retry_topic(const pulsarc_consumer_t *c);
void pc_dlq_on_delivered(pulsarc_consumer_t *c, const pulsarc_msg_t *first);
/* Removes from ids the entries sent to the dead-letter topic instead; returns how many remain. */
size_t pc_dlq_filter(pulsarc_consumer_t *c, pulsarc_msgid_t *ids, size_t n);
void pc_dlq_close(pulsarc_consumer_t *c);
void pc_dlq_free(pulsarc_consumer_t *c);

/* multi_topic.c */
/* Routes an id (or a received message) of a multi consumer to the child that owns it. */
pulsarc_consumer_t *pc_multi_route(pulsarc_consumer_t *c, const pulsarc_msgid_t *id,
                                   const pulsarc_msg_t *msg);
pulsarc_err_t pc_multi_close(pulsarc_consumer_t *c, int unsubscribe);
void pc_multi_release_children(pulsarc_consumer_t *p);
void pc_multi_child_ended(pulsarc_consumer_t *parent);
void pc_multi_free(pulsarc_consumer_t *c);
/* Starts multi-topic subscription when topic is partitioned; *handled = 0 otherwise. */
pulsarc_err_t pc_multi_new_if_partitioned(pulsarc_client_t *cl, const char *topic, const char *sub,
                                          const pulsarc_conf_t *conf, pulsarc_consumer_t **cp,
                                          int *handled, char *errstr, size_t errlen);

/* reader.c */
int pc_reader_skip_upto(const pulsarc_consumer_t *c, pulsarc_msgid_t *skip);
int pc_reader_may_read(const pulsarc_consumer_t *c, const pulsarc_msgid_t *last);

/* Posting helper for the public API: runs fn(c) on the loop holding a reference. */
pulsarc_err_t pc_consumer_post(pulsarc_consumer_t *c, pc_loop_fn fn, void *arg);
#endif
