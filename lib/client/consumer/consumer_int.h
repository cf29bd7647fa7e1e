/*
 * The consumer handle every kind of consumer starts with, and the table of
 * operations through which the public pulsarc_consumer_* calls reach the
 * kind behind a handle: a single-topic consumer (single.c, single.h), a
 * multi-topic consumer over partitions, topic lists or a pattern
 * (multi_topic.c), a zero-queue consumer that asks for one message per
 * receive (zero_queue.c), or a reader's consumer (a single-topic consumer
 * with a start position, start_position.c and reader.c). What the kinds share
 * lives here: identity, reference count, and the receive queue the
 * application takes messages from (receive_queue.c), guarded by `lock`.
 * handle.c runs the common life cycle and the public calls that dispatch,
 * above interceptors.c; the reference count is handle_ref.c, below both;
 * create.c picks the kind for pulsarc_consumer_new. A new kind fills a
 * pc_consumer_ops_t and delivers through single-topic members.
 *
 * Threads: the configuration is fixed before the loop sees the handle;
 * everything under "shared" is read and written under `lock` by the io
 * thread, application threads and the callback thread.
 */
#ifndef PC_CONSUMER_INT_H
#define PC_CONSUMER_INT_H
#include <stdatomic.h>
#include <stddef.h>

#include "client/client_int.h"
#include "client/message.h"

typedef struct pc_single pc_single_t;
typedef struct pc_consumer_ops pc_consumer_ops_t;

/*
 * The receive queue's upcalls to the consumer that received a message (the
 * message's rx_owner, or the queue's own consumer when it auto-scales):
 * the flow permits it owes back as its messages are handed out. The queue
 * (receive_queue.c) knows nothing else of the receiver; a single-topic
 * consumer fills the table (permits.c). rx is the queue's own consumer or
 * a member delivering into it (lock order: the queue's, then the member's).
 */
typedef struct pc_queue_receiver_ops {
    /* n permits owed (rx's lock held); 1: call post_flow once the lock is released. */
    int (*owe_locked)(pulsarc_consumer_t *rx, uint32_t n);
    /* One permit owed by a member, the queue's lock held and the member's not. */
    void (*owe_member)(pulsarc_consumer_t *rx);
    /* Sends what rx owes (no lock held, or only a parent queue's). */
    void (*post_flow)(pulsarc_consumer_t *rx);
    /* Permits owed and not yet sent (rx's lock held). */
    uint32_t (*owed_locked)(pulsarc_consumer_t *rx);
    /* Auto-scaling set rx's queue to n messages (its lock held; a leaf lock may be taken). */
    void (*resized)(pulsarc_consumer_t *rx, size_t n);
} pc_queue_receiver_ops_t;

struct pulsarc_consumer_s {
    pc_handle_t handle;
    const pc_consumer_ops_t *ops;
    const pc_queue_receiver_ops_t *rx_ops; /* set by kinds that receive (single-topic); else NULL */
    pulsarc_client_t *client;
    pc_topic_t topic;            /* what pulsarc_consumer_topic() shows */
    char *sub;
    atomic_int refs;

    /* ---- configuration (set before the loop sees the consumer) ---- */
    int sub_type;
    int queue_size;              /* receiverQueueSize: the most prefetched */
    int auto_scale;              /* autoScaledReceiverQueueSizeEnabled, single-topic consumers */
    int idle_shrink_ms;          /* autoScaledReceiverQueueIdleMs: 0, never shrink */
    size_t batch_max_msgs, batch_max_bytes;
    int batch_timeout_ms;
    pulsarc_message_listener_cb listener;
    void *listener_opaque;
    pulsarc_consumer_event_cb event_cb;
    void *event_opaque;
    struct pc_consumer_icpts *icpts; /* interceptors (interceptors.c), or NULL */

    /* ---- shared with application threads, under lock ---- */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pulsarc_msg_t *qhead, *qtail; /* each message's rx_owner is the single consumer that received it */
    pc_op_queue_t receivers;      /* receives waiting for a message, oldest first; only while qhead is NULL */
    int receive_callbacks;        /* receive_async outcomes queued and not yet called back */
    pc_op_queue_t drain_line;     /* closers waiting for receive_callbacks to reach 0 */
    size_t qlen, qbytes;
    uint64_t rx_bytes;            /* payload bytes ever appended to the queue (metrics) */
    int listener_posted;
    int closing, closed, close_posted;
    int end_of_topic;
    pulsarc_msgid_t last_dequeued; /* readers restart after it */
    int has_dequeued;
    pulsarc_consumer_stats_t stats;
    uint64_t permits_sent;        /* flow permits granted to the broker (single-topic consumers) */
    int cur_queue_size;           /* what is prefetched now: queue_size unless auto-scaled */
    int scale_hint;               /* auto-scaling: the last arrival used up the pipeline */
    size_t qlen_peak;             /* auto-scaling: the longest the queue was since the last idle check */
    uint64_t received_at_check;   /* auto-scaling: stats.received at the last idle check */
};

/* A receive waiting in a consumer's line: the giver stores the message, then completes op. */
typedef struct pc_receive {
    pc_op_t op; /* first: the line holds ops */
    pulsarc_msg_t *msg;
} pc_receive_t;

/* What differs between kinds; every public call that is not about the queue goes through it. */
struct pc_consumer_ops {
    /* close (or unsubscribe): waits until the broker side is done. */
    pulsarc_err_t (*close)(pulsarc_consumer_t *c, int unsubscribe);
    /* destroy: lets go of what the handle owns besides its memory. */
    void (*release)(pulsarc_consumer_t *c);
    /* the last reference is gone: frees the kind's state and the handle. */
    void (*free)(pulsarc_consumer_t *c);
    /* the single-topic consumer an id or received message is acked through; NULL if unknown. */
    pc_single_t *(*route)(pulsarc_consumer_t *c, const pulsarc_msgid_t *id, const pulsarc_msg_t *msg);
    /* calls fn on every single-topic consumer until one fails. */
    pulsarc_err_t (*each_single)(pulsarc_consumer_t *c, pulsarc_err_t (*fn)(pc_single_t *s, void *arg),
                                 void *arg);
    pulsarc_err_t (*seek)(pulsarc_consumer_t *c, int by_time, const pulsarc_msgid_t *id, uint64_t ms);
    pulsarc_err_t (*last_message_id)(pulsarc_consumer_t *c, pulsarc_msgid_t *id);
    /* the broker's side of has_message_available, once the queue was found empty. */
    pulsarc_err_t (*available_on_broker)(pulsarc_consumer_t *c, int *available);
    int (*is_connected)(pulsarc_consumer_t *c);
    /* adds what the kind counts to out (lock held). */
    void (*add_stats)(pulsarc_consumer_t *c, pulsarc_consumer_stats_t *out);
    /* one of the consumers delivering into c's queue reached the end of its topic. */
    void (*member_ended)(pulsarc_consumer_t *c);

    /* Kinds that do not prefetch (zero_queue.c) ask the broker for each
     * receiver; NULL for the others, whose messages each owe a permit back
     * when taken (receive_queue.c). receive_begin (lock held) may refuse a
     * receive before it takes or waits; with it set, messages are taken
     * owing nothing, receivers wait without a deadline and receiver_queued
     * (no lock) runs once one joined the line. receive_end (no lock) sees
     * every outcome before the application does and may change it. */
    pulsarc_err_t (*receive_begin)(pulsarc_consumer_t *c, int timeout_ms);
    void (*receiver_queued)(pulsarc_consumer_t *c);
    pulsarc_err_t (*receive_end)(pulsarc_consumer_t *c, pulsarc_msg_t **msgp, pulsarc_err_t err);
    pulsarc_err_t (*batch_receive)(pulsarc_consumer_t *c, pulsarc_msg_t **msgs, size_t cap, size_t *n);
    /* callback thread: hands queued messages to the listener. */
    void (*run_listener)(pulsarc_consumer_t *c);
    /* loop thread: the permits member asks for once (re)subscribed; NULL: its receiverQueueSize. */
    uint32_t (*subscribed)(pulsarc_consumer_t *c, pc_single_t *member);
};

/* handle_ref.c: the handle's reference count (any thread); the last unref calls ops->free. */
void pc_consumer_ref(pulsarc_consumer_t *c);
void pc_consumer_unref(pulsarc_consumer_t *c);
/* Posting helper for the public API: runs fn(arg) on the loop holding a reference on c. */
pulsarc_err_t pc_consumer_post(pulsarc_consumer_t *c, pc_loop_fn fn, void *arg);

/* handle.c: the common part's life cycle and the public calls that dispatch. */
pulsarc_err_t pc_consumer_base_init(pulsarc_consumer_t *c, const pc_consumer_ops_t *ops,
                                    pulsarc_client_t *cl, const char *sub);
/* Frees what pc_consumer_base_init made; the queue must be empty. */
void pc_consumer_base_free(pulsarc_consumer_t *c);
int pc_consumer_is_shared(const pulsarc_consumer_t *c);
/* Reads what every kind configures from conf (queue, batch receive, listener, events,
 * interceptors); PULSARC_ERR_NOMEM when the interceptors could not be copied. */
pulsarc_err_t pc_consumer_read_common_conf(pulsarc_consumer_t *c, const pulsarc_conf_t *conf);
/* Turns auto-scaling off: the queue stays at receiverQueueSize (kinds that do not scale). */
void pc_consumer_fixed_queue(pulsarc_consumer_t *c);

/* receive_queue.c: the queue (any thread, takes the lock itself unless noted). */
/* Appends a chain of n messages received by owner; 1 when the listener must be posted. */
int pc_queue_append(pulsarc_consumer_t *q, pulsarc_msg_t *first, pulsarc_msg_t *last, size_t n,
                    size_t bytes);
void pc_queue_post_listener(pulsarc_consumer_t *q);
/* Empties the queue (lock held) and returns how many messages were in it. */
size_t pc_queue_clear_locked(pulsarc_consumer_t *q);
size_t pc_queue_clear(pulsarc_consumer_t *q);
/* Drops the queued messages that owner received; returns how many. */
size_t pc_queue_drop_owned(pulsarc_consumer_t *q, const pulsarc_consumer_t *owner);
/* Drops the queued copies of id that owner received; returns how many. */
size_t pc_queue_drop_id(pulsarc_consumer_t *q, const pulsarc_consumer_t *owner,
                        const pulsarc_msgid_t *id);
/* Drops the queued messages owner received at or before id (a cumulative ack's reach). */
size_t pc_queue_drop_upto(pulsarc_consumer_t *q, const pulsarc_consumer_t *owner,
                          const pulsarc_msgid_t *id);
/*
 * Waits (lock held) for a message, close, end of topic or timeout_ms
 * (<0: forever); *dl has tv_sec < 0 until the first timed wait sets it.
 * Batch receive's wait (receivers of one message wait in `receivers`).
 */
pulsarc_err_t pc_queue_wait_locked(pulsarc_consumer_t *q, int timeout_ms, struct timespec *dl);
/*
 * The queue's state changed (lock held): closing or end of topic. Wakes
 * batch receive and completes every waiting receiver with CLOSED or
 * END_OF_TOPIC.
 */
void pc_queue_wake_locked(pulsarc_consumer_t *q);
/* After close: with a callback thread, waits until every receive_async
 * callback already queued has run (not from a callback). */
void pc_queue_wait_callbacks(pulsarc_consumer_t *q);
/* Removes the head (lock held, queue not empty) and owes no permit for it. */
pulsarc_msg_t *pc_queue_take_locked(pulsarc_consumer_t *q);
/* permits.c: flow permits the single-topic consumers behind c have granted so far (tests). */
uint64_t pc_consumer_permits_sent(pulsarc_consumer_t *c);

/* zero_queue.c: receiverQueueSize 0 on one non-partitioned topic. */
pulsarc_err_t pc_zero_queue_new(pulsarc_client_t *cl, const char *topic, const char *sub,
                                const pulsarc_conf_t *conf, pulsarc_consumer_t **cp, char *errstr,
                                size_t errlen);
void pc_consumer_notify_event(pulsarc_consumer_t *c, pulsarc_consumer_event_t ev);
#endif
