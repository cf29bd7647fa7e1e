/*
 * A single-topic consumer: one SUBSCRIBE on one topic (or partition), its
 * connection, permits, acks, redelivery, chunk assembly and dead-letter
 * state. It delivers into a receive queue: its own handle's, or the
 * multi-topic consumer's it belongs to (`queue`). Split across single.c
 * (life cycle and broker events), deliver.c (decoded entries to the
 * queue), permits.c (flow permits; the queue is receive_queue.c),
 * ack.c (acks, nacks, redelivery), seek.c (seek, last message id),
 * dead_letter.c, and start_position.c (where a reader starts).
 *
 * Threads: "loop thread" fields are the io thread's alone; "shared"
 * fields are under base.lock; the configuration is fixed before the loop
 * sees the consumer.
 */
#ifndef PC_CONSUMER_SINGLE_H
#define PC_CONSUMER_SINGLE_H
#include "client/consumer/ack_tracker.h"
#include "client/consumer/chunk_assembler.h"
#include "client/consumer/consumer_int.h"
#include "client/consumer/redelivery.h"
#include "client/consumer/rx_decode.h"
#include "client/handler.h"
#include "client/schema.h"

#define PC_MAX_HASH_RANGES 64

typedef struct pc_dlq pc_dlq_t;
typedef struct pc_reader_pos pc_reader_pos_t;

struct pc_single {
    pulsarc_consumer_t base;
    pulsarc_consumer_t *queue;   /* whose receive queue gets our messages: &base or a multi-topic one */
    uint64_t id;

    /* ---- loop thread ---- */
    pc_handler_t h;              /* connection state machine */
    pc_conn_t *attached;         /* connection our frames are routed from, or NULL */
    pc_op_t *create_waiter;
    pc_op_t *unsub_waiter;
    pc_op_t *ack_waiter;     /* a receipt is wanted for the ack in progress */
    pc_op_t closed_op;           /* completed once nothing of it runs on the loop (any thread) */
    pc_rxpool_t *pool;           /* memory of received messages */
    struct pc_decryptor *decryptor; /* end-to-end decryption (lib/crypto), or NULL */
    int crypto_action;           /* pc_crypto_fail_action_t: cryptoFailureAction */
    pc_ack_tracker_t acks;
    pc_redelivery_t redelivery;  /* nacks and ack timeouts */
    pc_chunks_t chunks;          /* chunked messages being assembled */
    pc_dlq_t *dlq;               /* dead-letter / retry topics, or NULL */
    pc_reader_pos_t *start;      /* readers: where the non-durable cursor starts; NULL: durable */
    uint64_t epoch;              /* consumer epoch for "redeliver all" */
    int seeking;                 /* a seek succeeded; drop deliveries until re-subscribed */
    uint64_t subscribes;         /* successful SUBSCRIBEs so far */
    pc_entry_set_t delivered;    /* entries delivered since the broker was last asked to send again */
    size_t acks_to_check;        /* next acks whose id may also be queued again (pc_single_held_across) */
    uint32_t resend_epoch;       /* bumped under base.lock each time the broker is to resend what is
                                  * unacked (a SUBSCRIBE, "redeliver everything"); messages carry it */
    pc_rx_result_t pend;         /* decoded during a run of reads, handed over at its end */
    pc_timer_t idle_timer;       /* auto-scaling: the idle check that shrinks the queue */

    /* ---- configuration ---- */
    int initial_position;
    int priority;
    int read_compacted;
    int receipts;
    int ks_mode;
    int ks_allow_ooo;
    int ks_nranges;
    int32_t ks_ranges[PC_MAX_HASH_RANGES][2];
    char name[256];
    pc_schema_t schema;          /* declared when subscribing (immutable) */

    /* ---- shared, under base.lock ---- */
    uint32_t permits;            /* owed back to the broker */
    uint32_t withheld;           /* owed permits kept back after the queue shrank */
    int flow_posted;
    pc_post_node_t flow_node;    /* queued on the loop while flow_posted, until do_flow runs */
    int connected;
    /* Plain acks queue here and go to the io thread in one post per burst;
     * two buffers swap, so steady-state acking allocates nothing. */
    pulsarc_msgid_t *ackq, *ackq_spare;
    size_t nackq, capackq, capspare;
    int ackq_posted;
};

#define PC_SINGLE_OF_HANDLER(hp) ((pc_single_t *)((char *)(hp) - offsetof(pc_single_t, h)))

/* The single-topic consumer behind a handle that is known to be one (its own ops). */
static inline pc_single_t *pc_single_of(pulsarc_consumer_t *c) { return (pc_single_t *)c; }

/* single.c: creation in two steps, so readers and multi-topic consumers adjust in between. */
pulsarc_err_t pc_single_prepare(pulsarc_client_t *cl, const char *topic, const char *sub,
                                const pulsarc_conf_t *conf, pc_single_t **sp, char *errstr,
                                size_t errlen);
/* Subscribes and waits; registers with the client unless it delivers into another queue. */
pulsarc_err_t pc_single_start(pc_single_t *s, int own_handle, char *errstr, size_t errlen);
/*
 * Subscribes the n members of a multi-topic consumer (none registered with
 * the client) all at once and waits until each has answered: the first
 * error, or OK. Members that failed are marked closed, as pc_single_start
 * marks its own. Any thread but the loop's.
 */
pulsarc_err_t pc_single_start_all(pc_single_t **members, size_t n, char *errstr, size_t errlen);
/* Loop thread: subscribes without anyone waiting (children found by discovery). */
void pc_single_start_async(pc_single_t *s);
/* Any thread: closes without waiting (a multi-topic child whose topic was deleted). */
void pc_single_close_async(pc_single_t *s);

/* deliver.c (loop thread unless noted) */
/* Takes a decoded entry; its messages reach the queue at the next flush. */
void pc_single_deliver(pc_single_t *s, pc_rx_result_t *r);
/* Hands what was gathered since the last flush to the queue (loop thread). */
void pc_single_flush(pc_single_t *s);
/*
 * Drops from a decoded entry what this consumer already acknowledged (the
 * broker sent it again before it saw the ack), acking it once more;
 * returns 1 when nothing of the entry is left to deliver.
 */
int pc_single_drop_acked(pc_single_t *s, pc_rx_result_t *r);

/* receive_queue.c */
/*
 * Drops the messages s received that are still queued, and those the run
 * of reads in progress gathered but has not handed over yet; returns how
 * many. Loop thread (the gathered ones are its own).
 */
static inline size_t pc_single_drop_queued(pc_single_t *s) {
    pc_single_flush(s);
    return pc_queue_drop_owned(s->queue, &s->base);
}

/* permits.c: flow permits (any thread unless noted) */
/* Entries dropped before the queue: their permits are owed back at once. */
void pc_single_refund(pc_single_t *s, uint32_t permits);
/* Loop thread: one FLOW of n permits, when subscribed. */
void pc_single_send_flow(pc_single_t *s, uint32_t n);
/* What the receive queue asks of a single-topic consumer, set on each as it is made. */
extern const pc_queue_receiver_ops_t pc_single_receiver_ops;
/* Loop thread: the permits a fresh subscription grants (its queue's kind decides). */
uint32_t pc_single_subscribed_permits(pc_single_t *s);
/* Loop thread, an auto-scaling consumer with its own queue: halves the
 * queue when it stayed small and quiet since the last check. */
void pc_single_idle_check(pc_single_t *s);

/* ack.c (loop thread) */
/* Starts the ack and redelivery trackers; due receives what the redelivery tracker gives up on. */
void pc_single_acks_init(pc_single_t *s, pc_redeliver_fn due);
/*
 * The broker is about to send again everything unacked (a new subscribe,
 * "redeliver all"): what comes next is no second copy, and messages the
 * application holds unacked will be queued a second time, so the acks that
 * come for them also drop those copies.
 */
void pc_single_held_across(pc_single_t *s);
/* Applies the acks the application queued and the io thread has not taken yet. */
void pc_single_apply_queued_acks(pc_single_t *s);
void pc_single_drop_chunks(void *owner, const pulsarc_msgid_t *ids, size_t n, int ack);
void pc_single_send_validation_ack(pc_single_t *s, const pulsarc_msgid_t *id, int why);
/* Asks the broker to redeliver ids (all of them when n == 0 or not Shared). */
void pc_single_redeliver(pc_single_t *s, const pulsarc_msgid_t *ids, size_t n);

/* seek.c (application threads; the work runs on the loop) */
pulsarc_err_t pc_single_seek(pulsarc_consumer_t *c, int by_time, const pulsarc_msgid_t *id, uint64_t ms);
pulsarc_err_t pc_single_last_message_id(pulsarc_consumer_t *c, pulsarc_msgid_t *id);
pulsarc_err_t pc_single_available_on_broker(pulsarc_consumer_t *c, int *available);

/* dead_letter.c */
pulsarc_err_t pc_dlq_configure(pc_single_t *s, const pulsarc_conf_t *conf);
const char *pc_dlq_retry_topic(const pc_single_t *s);
void pc_dlq_on_delivered(pc_single_t *s, const pulsarc_msg_t *first);
/* The redelivery tracker's output (nacks, ack timeouts): dead-letters what is due, redelivers the rest. */
void pc_dlq_redeliver_due(void *owner, const pulsarc_msgid_t *ids, size_t n);
void pc_dlq_close(pc_single_t *s);
void pc_dlq_free(pc_single_t *s);

/* start_position.c: where a reader's non-durable cursor starts (loop thread unless noted). */
/* Application thread, before subscribing. NULL: out of memory. */
pc_reader_pos_t *pc_reader_pos_new(const pulsarc_msgid_t *start, int inclusive);
/* The id the SUBSCRIBE starts at: after the last message handed out, else the start. */
void pc_reader_start_at(pc_single_t *s, pulsarc_msgid_t *id);
/* What of the first entry precedes the start and is skipped; 0: nothing. */
int pc_reader_skip_upto(const pc_single_t *s, pulsarc_msgid_t *skip);
/* A seek moved the start to id (inclusive). */
void pc_reader_moved(pc_single_t *s, const pulsarc_msgid_t *id);
/* Whether the topic's last id lies at or after where the reader starts. */
int pc_reader_may_read(const pc_single_t *s, const pulsarc_msgid_t *last);
void pc_reader_pos_free(pc_single_t *s);
#endif
