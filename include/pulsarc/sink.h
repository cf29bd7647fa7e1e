/*
 * pulsarc — Sink section: connector-grade production with the semantics of
 * the Flink Pulsar sink (delivery guarantees tied to checkpoints, topic
 * routing across several topics, delayed delivery). Included by pulsarc.h.
 *
 * Model
 *  - A builder collects the settings; pulsarc_sink_builder_build() opens a
 *    sink with its own client, optionally restored from a checkpoint blob.
 *  - pulsarc_sink_write() turns one application element into a message
 *    (the serialiser callback), picks its topic partition (routing mode or
 *    custom router), sets its delivery time (delayer) and sends it.
 *  - The sink writes to the flattened list of partitions of its topics (a
 *    non-partitioned topic is one entry), one producer per entry, opened on
 *    first use; the list is refreshed every
 *    pulsar.sink.topicMetadataRefreshInterval.
 *  - Guarantees:
 *      NONE           fire and forget; send errors are only counted.
 *      AT_LEAST_ONCE  pulsarc_sink_checkpoint() returns once every message
 *                     written before it is acknowledged by the broker; a
 *                     send error is returned by the next write or
 *                     checkpoint.
 *      EXACTLY_ONCE   the messages between two checkpoints go into one
 *                     transaction, committed by
 *                     pulsarc_sink_checkpoint_complete(). The blob lists the
 *                     transactions awaiting commit and the ones that will
 *                     take the next writes, so a sink restored from it
 *                     commits the former and aborts the latter — also when
 *                     the application restores from the checkpoint before
 *                     the last one (it never completed). Readers are never
 *                     left waiting on a dead sink's transaction, except one
 *                     killed before its first checkpoint. A transaction
 *                     lives about three checkpoint intervals plus the
 *                     commit: pulsar.sink.transactionTimeoutMillis must
 *                     allow that. Needs a broker with transactions on.
 *
 * Threads: a sink is driven by ONE application thread at a time (like a
 * Flink sink writer); the user callbacks (serialiser, router, delayer) run
 * on that thread inside pulsarc_sink_write(). Send outcomes are handled on
 * the client's callback thread, never in user code.
 */
#ifndef PULSARC_SINK_H
#define PULSARC_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "pulsarc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/** @name Sink */
/**@{*/
typedef struct pulsarc_sink_builder_s pulsarc_sink_builder_t;
typedef struct pulsarc_sink_s pulsarc_sink_t;

/** pulsar.sink.deliveryGuarantee. */
typedef enum pulsarc_sink_guarantee_e {
    PULSARC_SINK_NONE = 0,          /**< "none" (the default) */
    PULSARC_SINK_AT_LEAST_ONCE = 1, /**< "at-least-once" */
    PULSARC_SINK_EXACTLY_ONCE = 2   /**< "exactly-once" */
} pulsarc_sink_guarantee_t;

/** How a message finds its partition when no custom router is set. */
typedef enum pulsarc_sink_routing_e {
    /** batchingMaxMessages consecutive messages per partition, then the
     * next one (the default). The sink starts at a random partition, so
     * parallel sinks do not all load partition 0 first. */
    PULSARC_SINK_ROUND_ROBIN = 0,
    /** hash(key) mod partitions, hash = pulsar.sink.messageKeyHash over the
     * key text (a binary key's base64 form). Key-less messages stick to a
     * random partition for batchingMaxMessages messages, then move on. */
    PULSARC_SINK_KEY_HASH = 1
} pulsarc_sink_routing_t;

/**
 * Fills msg (owned by the sink, fresh for every call) from element
 * (borrowed, as given to pulsarc_sink_write). Any return but PULSARC_OK
 * fails the write with that error and nothing is sent.
 */
typedef pulsarc_err_t (*pulsarc_sink_serialize_cb)(void *opaque, const void *element,
                                                   pulsarc_msg_t *msg);
/**
 * Custom topic router: returns the full topic name to write msg (borrowed)
 * to — one of partitions (n full names, borrowed for the call; empty when
 * the sink has no topics) or any other topic. The returned string is
 * borrowed until the next call. NULL fails the write.
 */
typedef const char *(*pulsarc_sink_router_cb)(void *opaque, const pulsarc_msg_t *msg,
                                              const char *const *partitions, size_t n);
/**
 * Delayer: the delivery time of msg (borrowed) in ms since the epoch, given
 * the current time now_ms; 0 (or anything <= now_ms) delivers at once.
 */
typedef uint64_t (*pulsarc_sink_delayer_cb)(void *opaque, const pulsarc_msg_t *msg,
                                            uint64_t now_ms);

/** A builder with every default. Owned by the caller. NULL on OOM. */
PULSARC_API pulsarc_sink_builder_t *pulsarc_sink_builder_new(void);
/** Frees b. NULL is a no-op. */
PULSARC_API void pulsarc_sink_builder_destroy(pulsarc_sink_builder_t *b);

/** pulsar.client.serviceUrl (copied). Required. */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_service_url(pulsarc_sink_builder_t *b,
                                                               const char *url);
/** pulsar.admin.adminUrl (copied). Kept for parity; the sink itself only
 * speaks the binary protocol. */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_admin_url(pulsarc_sink_builder_t *b,
                                                             const char *url);
/**
 * The topics (n names, borrowed, copied) to write to; a partitioned topic
 * contributes all its partitions, a listed partition ("t-partition-2") only
 * itself, and a topic absorbs its listed partitions. Order is kept. A second
 * call is refused (PULSARC_ERR_STATE, "setTopics couldn't be set twice.").
 */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_topics(pulsarc_sink_builder_t *b,
                                                          const char *const *topics,
                                                          size_t n);
/** The serialiser (required). opaque is borrowed for the sink's lifetime. */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_serializer(pulsarc_sink_builder_t *b,
                                                              pulsarc_sink_serialize_cb cb,
                                                              void *opaque);
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_delivery_guarantee(
    pulsarc_sink_builder_t *b, pulsarc_sink_guarantee_t g);
/**
 * pulsar.producer.producerName (copied). Each producer of the sink gets
 * its own name: a "%s" in name is replaced with a random id, and a name
 * without one gets "-%s" appended first (producer names are unique per
 * topic on the broker).
 */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_producer_name(pulsarc_sink_builder_t *b,
                                                                 const char *name);
/**
 * Makes the sink writer index of count parallel writers (Flink's
 * sink.parallelism; default 0 of 1). Each writer is a sink of its own,
 * driven by its own thread or process, with its own client, producers and,
 * for EXACTLY_ONCE, one transaction per checkpoint. Its checkpoint blob
 * says "writer index of count" and names only its transactions: it
 * restores into the same writer, or, merged with the others' by
 * pulsarc_sink_state_merge(), into every writer of any count, writer i of
 * M settling the k-th transaction of the merged blob when k mod M == i, so
 * each is committed or aborted exactly once. index outside 0..count-1 or
 * count outside 1..4096 → PULSARC_ERR_BAD_CONFIG naming the value.
 */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_writer(pulsarc_sink_builder_t *b,
                                                         int64_t index, int64_t count,
                                                         char *errstr, size_t errlen);
/**
 * End-to-end encryption of everything the sink writes, as Flink's
 * PulsarCrypto gives it: cb (opaque borrowed, must outlive the sink)
 * supplies the public key of each name in pulsar.producer.encryptionKeys
 * that pulsar.producer.cryptoPublicKeyPath does not give. Called on the
 * thread that creates the sink's producers. NULL cb → INVALID_ARG.
 */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_crypto_key_reader(pulsarc_sink_builder_t *b,
                                                                    pulsarc_crypto_key_reader_cb cb,
                                                                    void *opaque);
/** Delivery at write time + delay_ms (0: at once, the default). */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_delay(pulsarc_sink_builder_t *b,
                                                         uint64_t delay_ms);
/** Delivery time from cb (replaces a fixed delay). opaque is borrowed. */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_delayer(pulsarc_sink_builder_t *b,
                                                           pulsarc_sink_delayer_cb cb,
                                                           void *opaque);
/** Routing mode; refused (PULSARC_ERR_STATE) once a custom router is set. */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_routing_mode(pulsarc_sink_builder_t *b,
                                                                pulsarc_sink_routing_t mode);
/** Custom topic router; refused once a routing mode was set explicitly.
 * opaque is borrowed for the sink's lifetime. */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_topic_router(pulsarc_sink_builder_t *b,
                                                                pulsarc_sink_router_cb cb,
                                                                void *opaque);
/**
 * Any connector key (both borrowed, copied):
 *  - "pulsar.client.<key>" and "pulsar.producer.<key>": the core key
 *    <key> (pulsarc_conf_set's names, which are the Java client's);
 *  - "pulsar.admin.adminUrl";
 *  - "pulsar.sink.deliveryGuarantee" (none | at-least-once | exactly-once),
 *    "pulsar.sink.transactionTimeoutMillis" (10800000),
 *    "pulsar.sink.topicMetadataRefreshInterval" (1800000 ms),
 *    "pulsar.sink.messageKeyHash" (murmur-3-32-hash | java-hash),
 *    "pulsar.sink.maxRecommitTimes" (5), and, accepted without effect,
 *    "pulsar.sink.enableSchemaEvolution", "pulsar.sink.enableMetrics",
 *    "pulsar.sink.validateSinkMessageBytes".
 * PULSARC_ERR_UNKNOWN_CONFIG for other keys, PULSARC_ERR_BAD_CONFIG for a
 * bad value; errstr names the key.
 */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_set_config(pulsarc_sink_builder_t *b,
                                                          const char *key, const char *value,
                                                          char *errstr, size_t errlen);

/**
 * Validates b (borrowed; it may be reused or destroyed afterwards) and
 * opens a sink: a client, the partition lists of the topics, and — for a
 * restore — the transactions of state (a blob from pulsarc_sink_checkpoint,
 * borrowed; NULL for a fresh start) committed or aborted before this
 * returns. A transaction to commit that the coordinator no longer knows is
 * not taken as committed: the admin API (pulsar.admin.adminUrl) is asked
 * whether any partition the sink writes recorded it as aborted (the build
 * then fails naming the transaction and the partition: its messages are
 * lost) or still open; if none did, it committed before the crash and is
 * counted in txn_found_committed. When the admin API cannot answer, the
 * build fails saying so. A corrupt blob fails with PULSARC_ERR_CHECKSUM or
 * PULSARC_ERR_MALFORMED. On success *sinkp is owned by the caller.
 */
PULSARC_API pulsarc_err_t pulsarc_sink_builder_build(const pulsarc_sink_builder_t *b,
                                                     const void *state, size_t state_len,
                                                     pulsarc_sink_t **sinkp, char *errstr,
                                                     size_t errlen);

/**
 * Writes one element (borrowed for the call). timestamp_ms (0: none) becomes
 * the event time unless the serialiser set one. Returns once the message is
 * queued (it blocks while the producer queue is full). With AT_LEAST_ONCE a
 * failed earlier send is returned here (and by every later call).
 */
PULSARC_API pulsarc_err_t pulsarc_sink_write(pulsarc_sink_t *sink, const void *element,
                                             uint64_t timestamp_ms, char *errstr,
                                             size_t errlen);
/** Waits up to timeout_ms (<0: forever) until every written message has its
 * outcome. Returns the first send error with AT_LEAST_ONCE / EXACTLY_ONCE. */
PULSARC_API pulsarc_err_t pulsarc_sink_flush(pulsarc_sink_t *sink, int timeout_ms,
                                             char *errstr, size_t errlen);
/**
 * Takes checkpoint checkpoint_id (increasing). AT_LEAST_ONCE and
 * EXACTLY_ONCE flush first, waiting up to timeout_ms (<0: forever;
 * PULSARC_ERR_TIMEOUT when it runs out). EXACTLY_ONCE then closes the
 * current transaction (committed by pulsarc_sink_checkpoint_complete) and
 * opens the next one. *blob (malloc'd, owned by the caller, free()) and
 * *len receive the sink's state.
 */
PULSARC_API pulsarc_err_t pulsarc_sink_checkpoint(pulsarc_sink_t *sink, uint64_t checkpoint_id,
                                                  int timeout_ms, void **blob, size_t *len,
                                                  char *errstr, size_t errlen);
/**
 * Reports checkpoint_id complete: EXACTLY_ONCE commits the transactions of
 * that checkpoint and older ones (retrying up to
 * pulsar.sink.maxRecommitTimes on retriable errors). A transaction the
 * broker aborted (e.g. it timed out) is an error, never taken as
 * committed. No-op for the other guarantees.
 */
PULSARC_API pulsarc_err_t pulsarc_sink_checkpoint_complete(pulsarc_sink_t *sink,
                                                           uint64_t checkpoint_id,
                                                           char *errstr, size_t errlen);

/**
 * Merges the checkpoint blobs of writers 0..n-1 of one run of n parallel
 * writers (blobs[i] of lens[i] bytes, borrowed, any order, all of the same
 * checkpoint) into one (*out, malloc'd, free with free()) that every writer
 * of any count restores from (all M of them must: each settles its share).
 * PULSARC_ERR_INVALID_ARG with errstr naming the problem: a writer missing
 * or given twice, blobs of different writer counts, checkpoints or
 * guarantees; a corrupt blob gives its own error naming which one.
 */
PULSARC_API pulsarc_err_t pulsarc_sink_state_merge(const void *const *blobs, const size_t *lens,
                                                   size_t n, void **out, size_t *out_len,
                                                   char *errstr, size_t errlen);

/** Counters since the sink opened. */
typedef struct pulsarc_sink_stats_s {
    uint64_t written;      /**< messages handed to a producer */
    uint64_t acked;        /**< messages the broker acknowledged */
    uint64_t failed;       /**< messages whose send failed */
    uint64_t pending;      /**< written, outcome not known yet */
    size_t partitions;     /**< entries of the partition list */
    size_t producers;      /**< producers open */
    uint64_t txn_committed; /**< EXACTLY_ONCE transactions committed */
    uint64_t txn_aborted;   /**< EXACTLY_ONCE transactions aborted */
    uint64_t txn_found_committed; /**< restored "commit" transactions the coordinator had
                                       forgotten and no partition recorded as aborted or
                                       open: committed before the restore */
} pulsarc_sink_stats_t;
PULSARC_API pulsarc_err_t pulsarc_sink_stats(pulsarc_sink_t *sink, pulsarc_sink_stats_t *out);

/**
 * Closes the sink: flushes (up to operationTimeoutMs), aborts the
 * EXACTLY_ONCE transactions no checkpoint covers, leaves the checkpointed
 * but uncommitted ones open for a sink restored from that checkpoint,
 * closes producers and the client. Returns the first send error, if any.
 * Free with pulsarc_sink_destroy.
 */
PULSARC_API pulsarc_err_t pulsarc_sink_close(pulsarc_sink_t *sink, char *errstr,
                                             size_t errlen);
/** Closes (if needed) and frees. NULL is a no-op. */
PULSARC_API void pulsarc_sink_destroy(pulsarc_sink_t *sink);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* PULSARC_SINK_H */
