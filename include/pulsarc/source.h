/*
 * pulsarc — Source section: connector-grade consumption with the semantics
 * of the Flink Pulsar source (splits, start and stop cursors, bounded
 * reads, checkpoints that drive acknowledgements). Included by pulsarc.h.
 *
 * Model
 *  - A source reads a list of topics. Each partition is one split (a
 *    non-partitioned topic is one split with partition -1), read by one
 *    consumer on that partition with the source's subscription name.
 *  - pulsarc_source_fetch() hands out batches. A message counts as emitted
 *    once fetch returned it; pulsarc_source_checkpoint() then captures, per
 *    split, the last emitted id (with its batch index) and the stop bound.
 *  - Exclusive / Failover: a source restored from that blob resumes right
 *    after those ids and never emits one of them again (messages the
 *    broker redelivers at or before the checkpointed id are dropped).
 *    Shared / Key_Shared have no such position: a restore does not seek,
 *    and whatever the subscription has not acknowledged is delivered
 *    again (see transactions below for what that covers).
 *  - Positions reach the broker only through acknowledgements: after
 *    pulsarc_source_checkpoint_complete() (cumulative acks for Exclusive /
 *    Failover, individual acks of the checkpointed messages for Shared /
 *    Key_Shared), or on a timer with pulsar.source.enableAutoAcknowledgeMessage.
 *  - Shared / Key_Shared with a client that has enableTransaction=true:
 *    each checkpoint acknowledges what it covers inside one transaction
 *    (all acks in flight together), named in the blob; completion commits
 *    it. A source restored from a blob commits that blob's transactions
 *    and aborts the one reserved for the epoch after it, so messages
 *    emitted after the checkpoint are delivered again and those before it
 *    never are — also after a crash between checkpoint and completion.
 *    Without transactions such a crash redelivers the checkpoint's
 *    messages (at-least-once).
 *
 *  - Parallel readers (a Flink source of parallelism N): N sources on the
 *    same topics and subscription, each told its place with
 *    pulsarc_source_conf_set_reader(conf, i, N), in one process (a thread
 *    each) or in N processes. Exclusive / Failover: reader i opens only the
 *    splits pulsarc_source_split_owner() gives to i, a rule every reader
 *    computes alone (no coordinator), also for partitions discovery finds
 *    later, so each split has exactly one reader. Shared / Key_Shared: the
 *    subscription is the split all N share; every reader subscribes to
 *    every partition and the broker deals each message to one of them.
 *    Each reader checkpoints its own splits (the blob says "reader i of
 *    N"); it restores into reader i of N, or, merged with the other N-1
 *    by pulsarc_source_checkpoint_merge(), into each reader of any count M,
 *    which resumes its splits after their last emitted messages.
 *
 * Threads: a source is driven by ONE application thread at a time (like a
 * Flink source reader); timers (auto-commit, partition discovery) run inside
 * pulsarc_source_fetch(). Different sources are independent.
 */
#ifndef PULSARC_SOURCE_H
#define PULSARC_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "pulsarc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/** @name Source */
/**@{*/

/** What pulsarc_source_fetch() returns once every split has finished. */
#define PULSARC_SOURCE_END_OF_INPUT PULSARC_ERR_END_OF_TOPIC

/** Where a split starts when its subscription is new (or reset is asked). */
typedef enum pulsarc_start_kind_e {
    PULSARC_START_EARLIEST = 0,     /**< the first message (the default) */
    PULSARC_START_LATEST = 1,       /**< after the last message present at open */
    PULSARC_START_MESSAGE_ID = 2,   /**< at id (inclusive) or just after it; an id
                                         with a partition >= 0 applies to that
                                         partition only, the others start earliest */
    PULSARC_START_PUBLISH_TIME = 3  /**< first message with publish time >= time_ms */
} pulsarc_start_kind_t;

typedef struct pulsarc_start_cursor_s {
    pulsarc_start_kind_t kind;
    pulsarc_msgid_t id;   /**< PULSARC_START_MESSAGE_ID; batch index honoured */
    int inclusive;        /**< PULSARC_START_MESSAGE_ID: 1 = id itself first */
    uint64_t time_ms;     /**< PULSARC_START_PUBLISH_TIME, ms since the epoch */
} pulsarc_start_cursor_t;

/** Where a split ends. Ids compare by (ledger, entry, batch index) within a
 * split; batch index -1 in a bound means the whole entry. */
typedef enum pulsarc_stop_kind_e {
    PULSARC_STOP_NEVER = 0,              /**< unbounded (the default) */
    PULSARC_STOP_LATEST = 1,             /**< up to and including the last message at open */
    PULSARC_STOP_AT_ID = 2,              /**< before id (exclusive) */
    PULSARC_STOP_AFTER_ID = 3,           /**< up to and including id */
    PULSARC_STOP_AT_PUBLISH_TIME = 4,    /**< publish time < time_ms */
    PULSARC_STOP_AFTER_PUBLISH_TIME = 5, /**< publish time <= time_ms (same ms kept) */
    PULSARC_STOP_AT_EVENT_TIME = 6,      /**< event time < time_ms */
    PULSARC_STOP_AFTER_EVENT_TIME = 7    /**< event time <= time_ms */
} pulsarc_stop_kind_t;

typedef struct pulsarc_stop_cursor_s {
    pulsarc_stop_kind_t kind;
    pulsarc_msgid_t id;   /**< the *_ID kinds */
    uint64_t time_ms;     /**< the *_TIME kinds, ms since the epoch */
} pulsarc_stop_cursor_t;

/** Cursor constructors (plain values, nothing to free). */
PULSARC_API pulsarc_start_cursor_t pulsarc_start_cursor_earliest(void);
PULSARC_API pulsarc_start_cursor_t pulsarc_start_cursor_latest(void);
PULSARC_API pulsarc_start_cursor_t pulsarc_start_cursor_message_id(pulsarc_msgid_t id,
                                                                   int inclusive);
PULSARC_API pulsarc_start_cursor_t pulsarc_start_cursor_publish_time(uint64_t ms);
PULSARC_API pulsarc_stop_cursor_t pulsarc_stop_cursor_never(void);
PULSARC_API pulsarc_stop_cursor_t pulsarc_stop_cursor_latest(void);
PULSARC_API pulsarc_stop_cursor_t pulsarc_stop_cursor_at_id(pulsarc_msgid_t id);
PULSARC_API pulsarc_stop_cursor_t pulsarc_stop_cursor_after_id(pulsarc_msgid_t id);
PULSARC_API pulsarc_stop_cursor_t pulsarc_stop_cursor_at_publish_time(uint64_t ms);
PULSARC_API pulsarc_stop_cursor_t pulsarc_stop_cursor_after_publish_time(uint64_t ms);
/** Event-time bounds end a split only on a message past them: event times
 * are the producer's, unordered, and 0 when unset. */
PULSARC_API pulsarc_stop_cursor_t pulsarc_stop_cursor_at_event_time(uint64_t ms);
PULSARC_API pulsarc_stop_cursor_t pulsarc_stop_cursor_after_event_time(uint64_t ms);

/** Source configuration. */
typedef struct pulsarc_source_conf_s pulsarc_source_conf_t;

/** Log levels of the source's own messages. */
typedef enum pulsarc_source_log_level_e {
    PULSARC_SOURCE_LOG_WARN = 1,
    PULSARC_SOURCE_LOG_INFO = 2
} pulsarc_source_log_level_t;
/** Receives a one-line message (borrowed for the call). Runs on the thread
 * that called into the source. Default: "pulsarc source: ..." on stderr. */
typedef void (*pulsarc_source_log_cb)(void *opaque, pulsarc_source_log_level_t level,
                                      const char *line);

/** A configuration with every default. Owned by the caller. NULL on OOM. */
PULSARC_API pulsarc_source_conf_t *pulsarc_source_conf_new(void);
/** Frees conf. NULL is a no-op. */
PULSARC_API void pulsarc_source_conf_destroy(pulsarc_source_conf_t *conf);
/**
 * Sets key to value (both borrowed). Keys, with the connector's names:
 *  - "pulsar.consumer.subscriptionName" (required)
 *  - "pulsar.consumer.subscriptionType": Exclusive (default), Shared,
 *    Failover, Key_Shared
 *  - "pulsar.source.partitionDiscoveryIntervalMs" (300000; <= 0 disables)
 *  - "pulsar.source.maxFetchRecords" (100), "pulsar.source.maxFetchTime"
 *    (10000 ms), "pulsar.source.fetchOneMessageTime" (unset: the rest of
 *    maxFetchTime)
 *  - "pulsar.source.enableAutoAcknowledgeMessage" (false),
 *    "pulsar.source.autoCommitCursorInterval" (5000 ms)
 *  - "pulsar.source.verifyInitialOffsets": WARN_ON_MISMATCH (default) or
 *    FAIL_ON_MISMATCH
 *  - "pulsar.source.allowKeySharedOutOfOrderDelivery" (false)
 *  - "pulsar.source.resetSubscriptionCursor" (false)
 *  - "pulsar.source.enableMetrics" (true)
 *  - "pulsar.source.transactionTimeoutMillis" (10800000): lifetime of the
 *    Shared / Key_Shared acknowledgement transactions
 *  - "pulsar.source.enableSchemaEvolution" (false) with
 *    "pulsar.source.schemaType" and "pulsar.source.schemaDefinition": the
 *    schema the application reads, declared by every split's consumer so
 *    the broker checks the topic's schema against it (an incompatible one
 *    fails pulsarc_source_new with PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA
 *    naming the split). Payloads stay bytes.
 *  - "pulsar.admin.adminUrl": admin API used to tell a new subscription
 *    from an existing one (default: $PULSAR_ADMIN_URL)
 * Unknown key → PULSARC_ERR_UNKNOWN_CONFIG; bad value → PULSARC_ERR_BAD_CONFIG.
 */
PULSARC_API pulsarc_err_t pulsarc_source_conf_set(pulsarc_source_conf_t *conf, const char *key,
                                                  const char *value, char *errstr,
                                                  size_t errlen);
/** Adds a topic (borrowed, copied): short or full name, or one partition. */
PULSARC_API pulsarc_err_t pulsarc_source_conf_add_topic(pulsarc_source_conf_t *conf,
                                                        const char *topic);
PULSARC_API pulsarc_err_t pulsarc_source_conf_set_start_cursor(pulsarc_source_conf_t *conf,
                                                               const pulsarc_start_cursor_t *c);
/** Rejects an AT/AFTER id bound of earliest or latest (use PULSARC_STOP_LATEST). */
PULSARC_API pulsarc_err_t pulsarc_source_conf_set_stop_cursor(pulsarc_source_conf_t *conf,
                                                              const pulsarc_stop_cursor_t *c);
/**
 * Makes the source reader index of count parallel readers (default 0 of
 * 1, the only reader). index outside 0..count-1, or count outside 1..4096
 * → PULSARC_ERR_BAD_CONFIG with errstr naming the value.
 */
PULSARC_API pulsarc_err_t pulsarc_source_conf_set_reader(pulsarc_source_conf_t *conf,
                                                         int64_t index, int64_t count,
                                                         char *errstr, size_t errlen);
/**
 * Decrypts end-to-end encrypted messages, as Flink's PulsarCrypto does for
 * its source: cb (opaque borrowed, must outlive every source made from
 * conf) supplies the private key a message's data key was wrapped with.
 * Runs on the client's io thread. What happens to a message no key opens
 * is pulsar.consumer.cryptoFailureAction's (FAIL by default). NULL cb →
 * INVALID_ARG.
 */
PULSARC_API pulsarc_err_t pulsarc_source_conf_set_crypto_key_reader(pulsarc_source_conf_t *conf,
                                                                   pulsarc_crypto_key_reader_cb cb,
                                                                   void *opaque);
/**
 * The reader (0..readers-1) that owns a split, as every Exclusive /
 * Failover reader computes it: with h = murmur3_32(full topic name
 * without partition suffix, seed 0), owner = (h mod readers +
 * max(partition, 0)) mod readers. topic (borrowed) is a short or full
 * name; with partition -1 a "-partition-N" suffix in it counts. -1 for a
 * bad name or readers == 0. Pure, any thread.
 */
PULSARC_API int pulsarc_source_split_owner(const char *topic, int32_t partition,
                                           uint32_t readers);
/** Log callback (opaque borrowed for the source's life); NULL restores stderr. */
PULSARC_API pulsarc_err_t pulsarc_source_conf_set_log_cb(pulsarc_source_conf_t *conf,
                                                         pulsarc_source_log_cb cb,
                                                         void *opaque);

typedef struct pulsarc_source_s pulsarc_source_t;

/**
 * Opens a source on client (borrowed; must outlive the source). conf is
 * borrowed and copied. checkpoint (borrowed, may be NULL) is a blob from
 * pulsarc_source_checkpoint(): its splits resume after their last emitted
 * ids and keep their stop bounds. A corrupt blob → PULSARC_ERR_CHECKSUM or
 * PULSARC_ERR_MALFORMED; with FAIL_ON_MISMATCH an unreadable checkpointed
 * position → PULSARC_ERR_NOT_FOUND naming the split. A blob holding
 * acknowledgement transactions needs a client with transactions
 * (PULSARC_ERR_BAD_CONFIG otherwise); they are settled before the splits
 * subscribe. Blocks while the splits subscribe. On success *out is owned by the caller.
 * Parallel readers: a blob stamped reader i of N restores only into reader
 * i of N, a merged one into any reader (PULSARC_ERR_BAD_CONFIG otherwise,
 * naming both places); a blob with a split outside the configured topics
 * (another topic set) → PULSARC_ERR_BAD_CONFIG naming the split; the same
 * split twice → PULSARC_ERR_MALFORMED. A newer format than this library
 * reads → PULSARC_ERR_MALFORMED naming the version.
 */
PULSARC_API pulsarc_err_t pulsarc_source_new(pulsarc_client_t *client,
                                             const pulsarc_source_conf_t *conf,
                                             const void *checkpoint, size_t checkpoint_len,
                                             pulsarc_source_t **out, char *errstr,
                                             size_t errlen);
/**
 * Fetches one batch into out[0..cap): at most min(cap,
 * pulsar.source.maxFetchRecords) messages within pulsar.source.maxFetchTime,
 * each receive waiting pulsar.source.fetchOneMessageTime (or the rest of the
 * time), ending at the first empty receive; splits are served round-robin.
 * Each message in out is owned by the caller. Returns PULSARC_OK (also with
 * *n == 0), PULSARC_SOURCE_END_OF_INPUT once every split has finished, or
 * an error of the underlying consumer.
 */
PULSARC_API pulsarc_err_t pulsarc_source_fetch(pulsarc_source_t *src, pulsarc_msg_t **out,
                                               size_t cap, size_t *n);
/**
 * Snapshot of the positions as of now (everything fetch returned so far),
 * remembered under checkpoint_id for pulsarc_source_checkpoint_complete().
 * *blob (malloc'd, free with free()) is self-contained and versioned.
 * Transactional Shared / Key_Shared: blocks for the acknowledgements (one
 * round trip) and fails with their error, the messages staying pending
 * for the next checkpoint.
 */
PULSARC_API pulsarc_err_t pulsarc_source_checkpoint(pulsarc_source_t *src,
                                                    uint64_t checkpoint_id, void **blob,
                                                    size_t *len);
/**
 * The checkpoint checkpoint_id is durable: acknowledges its positions and
 * forgets it and every older one. Ack failures are logged and retried at
 * the next completion (never fatal: acks only publish progress). With
 * transactions, commits the acknowledgement transactions of checkpoint_id
 * and of every older pending one, and returns the first commit error (the
 * messages of a failed commit are delivered again, not lost).
 */
PULSARC_API pulsarc_err_t pulsarc_source_checkpoint_complete(pulsarc_source_t *src,
                                                             uint64_t checkpoint_id);
/**
 * Merges the checkpoints of readers 0..n-1 of one run of n parallel
 * readers (blobs[i] of lens[i] bytes, borrowed, any order, taken at the
 * same checkpoint) into one blob (*out, malloc'd, free with free()) that
 * each reader of any count restores from. PULSARC_ERR_INVALID_ARG with
 * errstr naming the problem: a reader's blob missing or given twice, blobs
 * of runs of different sizes or subscription types, two readers claiming
 * the same Exclusive / Failover split; a corrupt blob gives its own error
 * naming which one.
 */
PULSARC_API pulsarc_err_t pulsarc_source_checkpoint_merge(const void *const *blobs,
                                                          const size_t *lens, size_t n,
                                                          void **out, size_t *out_len,
                                                          char *errstr, size_t errlen);
/** 1 when every split has finished. A parallel reader that owns no split
 * yet is not finished while it is unbounded (stop cursor never) and
 * partition discovery is on: fetch then waits for discovery (up to
 * maxFetchTime) and returns empty batches. */
PULSARC_API int pulsarc_source_is_finished(const pulsarc_source_t *src);

/** Per-split figures (pulsar.source.enableMetrics). */
typedef struct pulsarc_source_split_metrics_s {
    const char *topic;        /**< full name of the split's topic (borrowed from the source) */
    int32_t partition;        /**< -1 for a non-partitioned topic */
    int finished;             /**< 1 once the split reached its bound */
    uint64_t emitted;         /**< messages returned by fetch */
    uint64_t emitted_bytes;   /**< their payload bytes */
    uint64_t dropped;         /**< messages dropped (at/after the stop bound, or replayed before a resume point) */
    pulsarc_msgid_t last_emitted; /**< entry -1 when none */
    int64_t lag_entries;      /**< entries between last emitted and the topic's end; -1 unknown */
    int64_t lag_ms;           /**< now - publish time of the last emitted message; -1 unknown */
} pulsarc_source_split_metrics_t;

/** Number of splits (grows with partition discovery). */
PULSARC_API size_t pulsarc_source_split_count(const pulsarc_source_t *src);
/**
 * Figures of split i. Asks the broker for the topic's end to compute
 * lag_entries (one round trip). PULSARC_ERR_UNSUPPORTED when metrics are off.
 */
PULSARC_API pulsarc_err_t pulsarc_source_split_metrics(pulsarc_source_t *src, size_t i,
                                                       pulsarc_source_split_metrics_t *out);
/** Closes every split's consumer and frees src. Unacknowledged positions
 * stay unacknowledged. NULL is a no-op. */
PULSARC_API void pulsarc_source_destroy(pulsarc_source_t *src);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* PULSARC_SOURCE_H */
