/*
 * pulsarc — an Apache Pulsar client in C that speaks the binary protocol.
 *
 * One header, in sections: Errors, Configuration, Message ids, Messages,
 * Client, Producer, Consumer, Interceptors, Reader, Table view, Transactions.
 *
 * Conventions
 *  - Every handle is opaque. Every *_new has a matching *_destroy.
 *  - Functions that can fail return pulsarc_err_t (PULSARC_OK == 0).
 *    Functions that take (char *errstr, size_t errlen) write a one-line,
 *    human-readable reason there on failure (errstr may be NULL).
 *  - Ownership is stated on every pointer: "borrowed" means the library
 *    does not keep it past the call; "owned by X" says who frees it.
 *  - Threads: every function is safe to call from any thread unless its
 *    comment says otherwise. Callbacks never run under a library lock and
 *    never on the network thread; see docs/THREADS.md.
 */
#ifndef PULSARC_H
#define PULSARC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PULSARC_API __attribute__((visibility("default")))
#else
#define PULSARC_API
#endif

/** @name Version */
/**@{*/
/** The library version, e.g. "0.1.0". Static string. */
PULSARC_API const char *pulsarc_version(void);
/**@}*/

/* ======================================================================== */
/** @name Errors */
/**@{*/

/**
 * One error enum for the whole library.
 *  - 0 is success.
 *  - Negative values are local errors (bad input, I/O, timeouts).
 *  - Values from PULSARC_ERR_BROKER_BASE up are the broker's ServerError
 *    codes (PULSARC_ERR_BROKER_BASE + wire value), with the broker's own
 *    message available through the errstr of the failing call.
 */
typedef enum pulsarc_err_e {
    PULSARC_OK = 0,

    PULSARC_ERR_INVALID_ARG = -1,      /**< NULL, empty or out-of-range argument */
    PULSARC_ERR_NOMEM = -2,            /**< allocation failed or a memory limit hit */
    PULSARC_ERR_BAD_URL = -3,          /**< service URL does not parse */
    PULSARC_ERR_BAD_TOPIC = -4,        /**< topic name does not parse */
    PULSARC_ERR_BAD_CONFIG = -5,       /**< a configuration value is invalid */
    PULSARC_ERR_UNKNOWN_CONFIG = -6,   /**< no such configuration key */
    PULSARC_ERR_MALFORMED = -7,        /**< malformed frame or protocol data */
    PULSARC_ERR_CHECKSUM = -8,         /**< CRC32C mismatch */
    PULSARC_ERR_FRAME_TOO_BIG = -9,    /**< frame above the negotiated maximum */
    PULSARC_ERR_RESOLVE = -10,         /**< host name did not resolve */
    PULSARC_ERR_CONNECT = -11,         /**< TCP connect failed (refused, unreachable) */
    PULSARC_ERR_TIMEOUT = -12,         /**< operation did not finish in time */
    PULSARC_ERR_DISCONNECTED = -13,    /**< connection lost while the request was in flight */
    PULSARC_ERR_CLOSED = -14,          /**< the handle is closed or closing */
    PULSARC_ERR_TOO_MANY_REDIRECTS = -15, /**< lookup redirected too often */
    PULSARC_ERR_QUEUE_FULL = -16,      /**< producer pending queue is full */
    PULSARC_ERR_MSG_TOO_BIG = -17,     /**< message above the broker's max size */
    PULSARC_ERR_UNSUPPORTED = -18,     /**< feature not built in or not supported */
    PULSARC_ERR_PROTOCOL = -19,        /**< the peer broke the protocol */
    PULSARC_ERR_TLS = -20,             /**< TLS handshake or verification failed */
    PULSARC_ERR_END_OF_TOPIC = -21,    /**< topic terminated and fully consumed */
    PULSARC_ERR_COMPRESSION = -22,     /**< (de)compression failed */
    PULSARC_ERR_NO_MESSAGE = -23,      /**< receive timed out with nothing queued */
    PULSARC_ERR_STATE = -24,           /**< call not valid in the current state */
    PULSARC_ERR_IO = -25,              /**< socket or file error */
    PULSARC_ERR_AUTH = -26,            /**< local authentication set-up failed */
    PULSARC_ERR_NOT_FOUND = -27,       /**< no such item (property, key) */
    PULSARC_ERR_CRYPTO = -28,          /**< end-to-end encryption: bad key, no key, or a message that fails its check */

    PULSARC_ERR_BROKER_BASE = 1000,
    PULSARC_ERR_BROKER_UNKNOWN = 1000,
    PULSARC_ERR_BROKER_METADATA = 1001,
    PULSARC_ERR_BROKER_PERSISTENCE = 1002,
    PULSARC_ERR_BROKER_AUTHENTICATION = 1003,
    PULSARC_ERR_BROKER_AUTHORIZATION = 1004,
    PULSARC_ERR_BROKER_CONSUMER_BUSY = 1005,
    PULSARC_ERR_BROKER_SERVICE_NOT_READY = 1006,
    PULSARC_ERR_BROKER_PRODUCER_BLOCKED_QUOTA_ERROR = 1007,
    PULSARC_ERR_BROKER_PRODUCER_BLOCKED_QUOTA_EXCEPTION = 1008,
    PULSARC_ERR_BROKER_CHECKSUM = 1009,
    PULSARC_ERR_BROKER_UNSUPPORTED_VERSION = 1010,
    PULSARC_ERR_BROKER_TOPIC_NOT_FOUND = 1011,
    PULSARC_ERR_BROKER_SUBSCRIPTION_NOT_FOUND = 1012,
    PULSARC_ERR_BROKER_CONSUMER_NOT_FOUND = 1013,
    PULSARC_ERR_BROKER_TOO_MANY_REQUESTS = 1014,
    PULSARC_ERR_BROKER_TOPIC_TERMINATED = 1015,
    PULSARC_ERR_BROKER_PRODUCER_BUSY = 1016,
    PULSARC_ERR_BROKER_INVALID_TOPIC_NAME = 1017,
    PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA = 1018,
    PULSARC_ERR_BROKER_CONSUMER_ASSIGN = 1019,
    PULSARC_ERR_BROKER_TXN_COORDINATOR_NOT_FOUND = 1020,
    PULSARC_ERR_BROKER_INVALID_TXN_STATUS = 1021,
    PULSARC_ERR_BROKER_NOT_ALLOWED = 1022,
    PULSARC_ERR_BROKER_TXN_CONFLICT = 1023,
    PULSARC_ERR_BROKER_TXN_NOT_FOUND = 1024,
    PULSARC_ERR_BROKER_PRODUCER_FENCED = 1025
} pulsarc_err_t;

/** A short English description of err. Static string, never NULL. */
PULSARC_API const char *pulsarc_strerror(pulsarc_err_t err);
/** The enum name of err without the prefix, e.g. "TIMEOUT". Static string. */
PULSARC_API const char *pulsarc_errname(pulsarc_err_t err);
/**
 * 1 if retrying the same operation later may succeed (timeouts, lost
 * connections, ServiceNotReady, TooManyRequests, …), 0 if it is fatal
 * (bad input, authorization, busy, fenced, terminated, …).
 */
PULSARC_API int pulsarc_err_is_retriable(pulsarc_err_t err);
/**@}*/

/* ======================================================================== */
/** @name Configuration
 *
 * String key/value configuration with the Java client's property names
 * ("serviceUrl", "operationTimeoutMs", "batchingMaxMessages", …). One table
 * drives validation and the generated docs/CONFIGURATION.md. A pulsarc_conf_t
 * may hold client, producer and consumer keys at once: each object reads the
 * keys of its own scope.
 */
/**@{*/
typedef struct pulsarc_conf_s pulsarc_conf_t;

/** A configuration with every default. Owned by the caller. NULL on OOM. */
PULSARC_API pulsarc_conf_t *pulsarc_conf_new(void);
/** A deep copy. Owned by the caller. */
PULSARC_API pulsarc_conf_t *pulsarc_conf_dup(const pulsarc_conf_t *conf);
/** Frees conf. NULL is a no-op. */
PULSARC_API void pulsarc_conf_destroy(pulsarc_conf_t *conf);
/**
 * Sets key to value (both borrowed, copied). Unknown keys give
 * PULSARC_ERR_UNKNOWN_CONFIG, bad values PULSARC_ERR_BAD_CONFIG; errstr names
 * the key and the value.
 */
PULSARC_API pulsarc_err_t pulsarc_conf_set(pulsarc_conf_t *conf, const char *key,
                                           const char *value, char *errstr,
                                           size_t errlen);
/**
 * Writes the current value of key (the default if unset) into buf as text.
 * *len is the buffer size in, the needed size (with the NUL) out.
 */
PULSARC_API pulsarc_err_t pulsarc_conf_get(const pulsarc_conf_t *conf, const char *key,
                                           char *buf, size_t *len);
/**
 * Checks conf's schemaType, schemaName and schemaDefinition together, as
 * creating a producer or consumer with conf would (e.g. AVRO needs a
 * definition, BYTES takes none), without connecting. PULSARC_ERR_BAD_CONFIG
 * with the reason in errstr; PULSARC_ERR_INVALID_ARG when conf is NULL.
 */
PULSARC_API pulsarc_err_t pulsarc_conf_check_schema(const pulsarc_conf_t *conf, char *errstr,
                                                    size_t errlen);
/**@}*/

/* ======================================================================== */
/** @name Authentication and TLS
 *
 * TLS is on when the service URL is pulsar+ssl://. The broker certificate
 * is verified against "tlsTrustCertsFilePath" (or the system store), and
 * its name against the host dialled ("tlsHostnameVerificationEnable",
 * on by default); "tlsAllowInsecureConnection" turns all checks off.
 * TLS 1.2 is the minimum. A client certificate ("tlsCertificateFilePath",
 * "tlsKeyFilePath") gives mutual TLS.
 *
 * Authentication uses the Java client's pair "authPlugin" / "authParams":
 *  - AuthenticationToken (or "token"): authParams "token:<jwt>",
 *    "file:///path" (re-read whenever the broker asks again),
 *    "env:NAME" (re-read too) or {"token":"<jwt>"};
 *  - AuthenticationTls (or "tls"): authParams
 *    "tlsCertFile:/c.pem,tlsKeyFile:/k.pem" (or the TLS keys above).
 * The broker may ask for fresh credentials at any time (AUTH_CHALLENGE,
 * e.g. before a token expires); they are read again from their source and
 * sent without reconnecting. Secrets never appear in error strings.
 * A client built with WITH_TLS=0 refuses pulsar+ssl:// URLs with
 * PULSARC_ERR_UNSUPPORTED.
 */
/**@{*/
/**
 * Supplies a token. buf has room for *len bytes (64 KiB): write the token
 * there (no NUL needed), set *len to its length and return PULSARC_OK; any
 * other return fails the connection attempt with PULSARC_ERR_AUTH. Called
 * on the client's network thread whenever a connection sends credentials
 * (CONNECT, and each AUTH_CHALLENGE): keep it quick, do not call pulsarc
 * functions from it, and make it thread-safe if several clients share it.
 */
typedef pulsarc_err_t (*pulsarc_token_supplier_cb)(void *opaque, char *buf, size_t *len);
/**
 * Token authentication with tokens from cb (opaque is passed back, borrowed
 * for the life of every client made from conf). Takes precedence over
 * authParams; authPlugin may be empty or the token plugin. NULL cb unsets.
 */
PULSARC_API pulsarc_err_t pulsarc_conf_set_token_supplier(pulsarc_conf_t *conf,
                                                          pulsarc_token_supplier_cb cb,
                                                          void *opaque);
/**@}*/

/* ======================================================================== */
/** @name Message ids
 *
 * A message id is a small value type, copied freely; no allocation.
 */
/**@{*/
typedef struct pulsarc_msgid_s {
    int64_t ledger_id;
    int64_t entry_id;
    int32_t partition;   /**< -1 for a non-partitioned topic */
    int32_t batch_index; /**< -1 when the entry is not a batch */
    int32_t batch_size;  /**< 0 when unknown or not a batch */
} pulsarc_msgid_t;

/** The position before the first message (-1:-1:-1). */
PULSARC_API pulsarc_msgid_t pulsarc_msgid_earliest(void);
/** The position after the last message (INT64_MAX:INT64_MAX:-1). */
PULSARC_API pulsarc_msgid_t pulsarc_msgid_latest(void);
/** <0, 0, >0 comparing ledger, entry, then batch index (partition ignored). */
PULSARC_API int pulsarc_msgid_compare(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b);
/**
 * Text form "ledger:entry:partition[:batchIndex]" (as the Java client
 * prints). Returns PULSARC_ERR_INVALID_ARG if buf is too small (64 is enough).
 */
PULSARC_API pulsarc_err_t pulsarc_msgid_format(const pulsarc_msgid_t *id, char *buf,
                                               size_t len);
/**
 * Binary form: a serialised MessageIdData, as the Java client's
 * MessageId.toByteArray(). *len is buf's size in, the bytes needed out
 * (PULSARC_ERR_INVALID_ARG when too small; 64 bytes always suffice).
 */
PULSARC_API pulsarc_err_t pulsarc_msgid_serialize(const pulsarc_msgid_t *id, void *buf,
                                                  size_t *len);
/** Reads the binary form; PULSARC_ERR_MALFORMED when the bytes do not parse. */
PULSARC_API pulsarc_err_t pulsarc_msgid_deserialize(const void *buf, size_t len,
                                                    pulsarc_msgid_t *out);
/** Parses 2 to 4 ':'-separated integers; missing parts default to -1. */
PULSARC_API pulsarc_err_t pulsarc_msgid_parse(const char *text, pulsarc_msgid_t *out);
/**@}*/

/* ======================================================================== */
/** @name Messages
 *
 * One message type for both directions. To produce: pulsarc_msg_new(), set
 * fields, send. Received messages come from pulsarc_consumer_receive().
 * Either way the caller owns the message and frees it with
 * pulsarc_msg_destroy().
 */
/**@{*/
typedef struct pulsarc_msg_s pulsarc_msg_t;

/** Payload flags for pulsarc_msg_set_payload(). */
#define PULSARC_MSG_F_COPY 0x1 /**< copy the bytes now (default when 0) */
#define PULSARC_MSG_F_FREE 0x2 /**< take ownership; free() it when done */
#define PULSARC_MSG_F_BORROW 0x4 /**< caller keeps the bytes alive until the send completes */

/** A new empty outgoing message. Owned by the caller. */
PULSARC_API pulsarc_msg_t *pulsarc_msg_new(void);
/** Frees msg and everything it owns. NULL is a no-op. */
PULSARC_API void pulsarc_msg_destroy(pulsarc_msg_t *msg);

/** Sets the payload (see PULSARC_MSG_F_*). len may be 0. */
PULSARC_API pulsarc_err_t pulsarc_msg_set_payload(pulsarc_msg_t *msg, const void *data,
                                                  size_t len, int flags);
/** Sets the partition key (copied). */
PULSARC_API pulsarc_err_t pulsarc_msg_set_key(pulsarc_msg_t *msg, const char *key);
/**
 * Sets a binary partition key (copied). It travels base64-encoded with the
 * "b64" flag, as the Java client's keyBytes() does; pulsarc_msg_key()
 * then returns the base64 text and pulsarc_msg_key_bytes() the bytes.
 */
PULSARC_API pulsarc_err_t pulsarc_msg_set_key_bytes(pulsarc_msg_t *msg, const void *key,
                                                    size_t len);
/** Ordering key for Key_Shared (copied); takes precedence over the key there. */
PULSARC_API pulsarc_err_t pulsarc_msg_set_ordering_key(pulsarc_msg_t *msg, const void *key,
                                                       size_t len);
/** Delayed delivery at an absolute time, ms since the epoch (Shared/Key_Shared). */
PULSARC_API pulsarc_err_t pulsarc_msg_set_deliver_at(pulsarc_msg_t *msg, uint64_t ms);
/** Delayed delivery ms from now (the time is fixed when this is called). */
PULSARC_API pulsarc_err_t pulsarc_msg_set_deliver_after(pulsarc_msg_t *msg, uint64_t ms);
/** Restricts geo-replication to these clusters (strings copied). */
PULSARC_API pulsarc_err_t pulsarc_msg_set_replication_clusters(pulsarc_msg_t *msg,
                                                               const char *const *clusters,
                                                               size_t n);
/** Disables geo-replication of this message. */
PULSARC_API pulsarc_err_t pulsarc_msg_disable_replication(pulsarc_msg_t *msg);
/** Marks the message as a null value (a tombstone for compacted topics). */
PULSARC_API pulsarc_err_t pulsarc_msg_set_null_value(pulsarc_msg_t *msg);
/** Adds or replaces a property (both copied). */
PULSARC_API pulsarc_err_t pulsarc_msg_set_property(pulsarc_msg_t *msg, const char *name,
                                                   const char *value);
/** Event time in ms since the epoch (0 = unset). */
PULSARC_API pulsarc_err_t pulsarc_msg_set_event_time(pulsarc_msg_t *msg, uint64_t ms);
/** Explicit sequence id (default: the producer's next). */
PULSARC_API pulsarc_err_t pulsarc_msg_set_sequence_id(pulsarc_msg_t *msg, int64_t seq);
/**
 * A standalone deep copy of msg (borrowed): payload, keys, properties,
 * times, and for a received message its id, topic, producer name and
 * redelivery count (so the copy can be acknowledged as the original).
 * Unlike a received message the copy can be changed with the setters.
 * Owned by the caller; NULL on OOM or when msg is NULL.
 */
PULSARC_API pulsarc_msg_t *pulsarc_msg_clone(const pulsarc_msg_t *msg);

/** Payload bytes (borrowed from msg, valid until it is destroyed). */
PULSARC_API const void *pulsarc_msg_payload(const pulsarc_msg_t *msg);
PULSARC_API size_t pulsarc_msg_len(const pulsarc_msg_t *msg);
/** Partition key or NULL (borrowed from msg). */
PULSARC_API const char *pulsarc_msg_key(const pulsarc_msg_t *msg);
/** The key as bytes (decoded when it was binary) and its length; NULL if none. Borrowed. */
PULSARC_API const void *pulsarc_msg_key_bytes(const pulsarc_msg_t *msg, size_t *len);
/**
 * The version of the schema the message was written with (received
 * messages from a producer that declared a schemaType), as the broker's
 * schema registry numbers it (8 bytes, big-endian, from 0); NULL if none.
 * Borrowed.
 */
PULSARC_API const void *pulsarc_msg_schema_version(const pulsarc_msg_t *msg, size_t *len);
/** The ordering key and its length, or NULL. Borrowed. */
PULSARC_API const void *pulsarc_msg_ordering_key(const pulsarc_msg_t *msg, size_t *len);
/** 1 when the message is a null value (tombstone). */
PULSARC_API int pulsarc_msg_is_null_value(const pulsarc_msg_t *msg);
/**
 * 1 when the message arrived end-to-end encrypted and could not be
 * decrypted, and cryptoFailureAction CONSUME delivered it as it was: the
 * payload is the entry's encrypted (and possibly compressed) bytes, a
 * whole batch as one message.
 */
PULSARC_API int pulsarc_msg_is_encrypted(const pulsarc_msg_t *msg);
/** Requested delivery time in ms since the epoch, 0 if not delayed. */
PULSARC_API uint64_t pulsarc_msg_deliver_at(const pulsarc_msg_t *msg);
/** Property value or NULL (borrowed from msg). */
PULSARC_API const char *pulsarc_msg_property(const pulsarc_msg_t *msg, const char *name);
/** Number of properties, and the i-th name/value (borrowed). */
PULSARC_API size_t pulsarc_msg_property_count(const pulsarc_msg_t *msg);
PULSARC_API pulsarc_err_t pulsarc_msg_property_at(const pulsarc_msg_t *msg, size_t i,
                                                  const char **name, const char **value);
/** The message id (received messages, or a sent message after its receipt). */
PULSARC_API pulsarc_msgid_t pulsarc_msg_id(const pulsarc_msg_t *msg);
PULSARC_API uint64_t pulsarc_msg_publish_time(const pulsarc_msg_t *msg);
PULSARC_API uint64_t pulsarc_msg_event_time(const pulsarc_msg_t *msg);
PULSARC_API int64_t pulsarc_msg_sequence_id(const pulsarc_msg_t *msg);
PULSARC_API uint32_t pulsarc_msg_redelivery_count(const pulsarc_msg_t *msg);
/** Name of the producer that sent it (borrowed) or NULL. */
PULSARC_API const char *pulsarc_msg_producer_name(const pulsarc_msg_t *msg);
/** Full topic name the message came from (borrowed) or NULL. */
PULSARC_API const char *pulsarc_msg_topic(const pulsarc_msg_t *msg);
/**@}*/

/* ======================================================================== */
/** @name Client
 *
 * A client owns one network thread (all sockets, timers and protocol state)
 * and a connection pool. Producers and consumers are created from it.
 */
/**@{*/
typedef struct pulsarc_client_s pulsarc_client_t;

/**
 * Creates a client. conf is borrowed and copied (NULL: all defaults, which
 * needs "serviceUrl" from the PULSAR_SERVICE_URL variable). On success
 * *clientp is owned by the caller; free with pulsarc_client_destroy().
 */
PULSARC_API pulsarc_err_t pulsarc_client_new(const pulsarc_conf_t *conf,
                                             pulsarc_client_t **clientp, char *errstr,
                                             size_t errlen);
/**
 * Closes every producer and consumer of the client (pending operations fail
 * with PULSARC_ERR_CLOSED), closes connections, and stops the network thread.
 * A producer or consumer asked for while it runs is refused with
 * PULSARC_ERR_CLOSED.
 * Blocks at most timeout_ms (<0: operationTimeoutMs). Safe from any thread;
 * from inside a callback it only marks the client closing and returns.
 */
PULSARC_API pulsarc_err_t pulsarc_client_close(pulsarc_client_t *client, int timeout_ms);
/** Closes (if needed) and frees the client. Producers and consumers must be
 * destroyed first or are destroyed here. NULL is a no-op. */
PULSARC_API void pulsarc_client_destroy(pulsarc_client_t *client);

/**
 * Number of partitions of topic (0 for a non-partitioned topic), asked of
 * the broker with PARTITIONED_METADATA.
 */
PULSARC_API pulsarc_err_t pulsarc_client_partitions(pulsarc_client_t *client,
                                                    const char *topic, int *count,
                                                    char *errstr, size_t errlen);
/**
 * Runs queued callbacks (send results, message listeners) on the calling
 * thread when "callbackMode" is "poll"; waits up to timeout_ms for one.
 * Returns the number of callbacks run. With the default "thread" mode the
 * client's callback thread runs them and this returns 0.
 */
PULSARC_API int pulsarc_client_poll(pulsarc_client_t *client, int timeout_ms);
/**@}*/

/* ======================================================================== */
/** @name Event-loop mode (threadingMode=loop)
 *
 * With "threadingMode" "loop" the client starts no thread. The application
 * watches one file descriptor in its own loop (epoll, poll, libuv,
 * libevent...) and calls pulsarc_client_step() when it is readable or when
 * pulsarc_client_next_timeout_ms() has passed; io, timers (keep-alive,
 * batching delay, ack grouping, reconnect backoff, operation timeouts) and
 * every callback run inside that call, on the application's thread.
 *
 * Synchronous calls (pulsarc_producer_new, _send, pulsarc_consumer_receive,
 * _close...) still work: made while no thread is inside a step of the client
 * (or from inside one of its callbacks), they run the client's io
 * themselves until their result is in (never callbacks: those wait for the
 * next step); made while another thread steps, they wait for that thread.
 * Host names are resolved inside the step with a blocking getaddrinfo
 * (numeric addresses cost nothing); http(s):// service URLs and OAuth2 are
 * refused with PULSARC_ERR_BAD_CONFIG, and so are table views (a thread per
 * partition).
 */
/**@{*/
/**
 * The descriptor to watch for readability (level-triggered: it stays
 * readable while a step has io, posted work or callbacks to run). Owned by
 * the client: never read or close it. -1 when the client is not in loop mode.
 */
PULSARC_API int pulsarc_client_fd(pulsarc_client_t *client);
/**
 * Runs ready io, due timers, posted work and then queued callbacks on the
 * calling thread. When nothing is ready it waits up to budget_ms for
 * something (0: never waits); it keeps going while work is ready and the
 * budget lasts, so it returns within about budget_ms (plus the length of
 * one callback). PULSARC_ERR_STATE when called from two threads at once or
 * from inside one of this client's callbacks (errstr names which),
 * PULSARC_ERR_INVALID_ARG when the client is not in loop mode,
 * PULSARC_ERR_CLOSED once the client is closed.
 */
PULSARC_API pulsarc_err_t pulsarc_client_step(pulsarc_client_t *client, int budget_ms,
                                              char *errstr, size_t errlen);
/**
 * How long the application may sleep before the next step: -1 until the
 * fd turns readable (no timer pending), 0 when work is waiting, else the
 * milliseconds until the next timer is due (0 too while another thread is
 * inside a step: it never blocks). Meant for the stepping thread, between
 * steps. -1 when not in loop mode, and between pulsarc_client_close() and
 * pulsarc_client_destroy() (the next step returns PULSARC_ERR_CLOSED).
 */
PULSARC_API int pulsarc_client_next_timeout_ms(pulsarc_client_t *client);
/**@}*/

/* ======================================================================== */
/** @name Producer */
/**@{*/
typedef struct pulsarc_producer_s pulsarc_producer_t;

/**
 * Result of an asynchronous send. err is PULSARC_OK or the failure; id is
 * the message id on success. msg is the message that was sent; it is
 * borrowed for the duration of the call and freed by the library after it
 * returns. Runs on the callback thread (or in pulsarc_client_poll).
 */
typedef void (*pulsarc_send_cb)(pulsarc_producer_t *producer, pulsarc_err_t err,
                                const pulsarc_msgid_t *id, pulsarc_msg_t *msg,
                                void *opaque);

/**
 * Creates a producer on topic (borrowed). conf (borrowed, may be NULL) is
 * read for producer keys ("producerName", "sendTimeoutMs", …). Blocks until
 * the broker accepts the producer or operationTimeoutMs passes.
 * On success *producerp is owned by the caller. On a partitioned topic the
 * handle checks the partition count every "autoUpdatePartitionsInterval"
 * seconds (0: never) and, when partitions were added, creates their
 * producers and only then routes over the new count; that creation runs
 * where callbacks run (the callback thread, or pulsarc_client_poll).
 */
PULSARC_API pulsarc_err_t pulsarc_producer_new(pulsarc_client_t *client, const char *topic,
                                               const pulsarc_conf_t *conf,
                                               pulsarc_producer_t **producerp,
                                               char *errstr, size_t errlen);
/**
 * Sends msg and waits for the broker's receipt. msg stays owned by the
 * caller. On success *id (may be NULL) receives the message id.
 */
PULSARC_API pulsarc_err_t pulsarc_producer_send(pulsarc_producer_t *producer,
                                                const pulsarc_msg_t *msg,
                                                pulsarc_msgid_t *id);
/**
 * Queues msg for sending and returns. Ownership of msg passes to the
 * library whatever the result; cb (may be NULL) is called exactly once with
 * the outcome — also when this call itself fails.
 */
PULSARC_API pulsarc_err_t pulsarc_producer_send_async(pulsarc_producer_t *producer,
                                                      pulsarc_msg_t *msg,
                                                      pulsarc_send_cb cb, void *opaque);
/** Waits until every message queued before the call has its outcome. */
PULSARC_API pulsarc_err_t pulsarc_producer_flush(pulsarc_producer_t *producer,
                                                 int timeout_ms);
/**
 * Result of pulsarc_producer_flush_async: err is PULSARC_OK once every
 * message queued before the flush has its outcome (each send's own result
 * went to its own callback or caller). Runs on the callback thread (or in
 * pulsarc_client_poll), after the callbacks of those sends.
 */
typedef void (*pulsarc_flush_cb)(pulsarc_producer_t *producer, pulsarc_err_t err,
                                 void *opaque);
/**
 * Starts a flush and returns: open batches are sent now, and cb is called
 * exactly once when every message queued before the call has its outcome
 * (also when the producer closes meanwhile: close gives each pending send
 * its outcome). cb may be NULL. On an error return (PULSARC_ERR_CLOSED once
 * the client is closed: nothing could call back) nothing started and cb
 * is not called. With the callback thread, pulsarc_producer_close (and
 * destroy) returns only after cb has run, as for send callbacks; in poll
 * mode or when closed from inside a callback, cb may run later and still
 * gets a valid handle (the library keeps it until cb has returned). Any
 * thread, also inside callbacks.
 */
PULSARC_API pulsarc_err_t pulsarc_producer_flush_async(pulsarc_producer_t *producer,
                                                       pulsarc_flush_cb cb, void *opaque);
/** The producer's name (assigned by the broker unless configured). Borrowed. */
PULSARC_API const char *pulsarc_producer_name(const pulsarc_producer_t *producer);
/** Topic name in full form. Borrowed. */
PULSARC_API const char *pulsarc_producer_topic(const pulsarc_producer_t *producer);
/** The sequence id of the last message the broker acknowledged (-1: none). */
PULSARC_API int64_t pulsarc_producer_last_sequence_id(const pulsarc_producer_t *producer);
/**
 * Closes the producer on the broker. Pending sends complete or fail
 * (PULSARC_ERR_CLOSED) exactly once. Safe from any thread and from a
 * callback (there it only marks).
 */
PULSARC_API pulsarc_err_t pulsarc_producer_close(pulsarc_producer_t *producer);
/** Closes (if needed) and frees. NULL is a no-op. */
PULSARC_API void pulsarc_producer_destroy(pulsarc_producer_t *producer);

/**
 * Custom partition router ("messageRoutingMode" CustomPartition): returns
 * the partition in [0, num_partitions) for msg (borrowed). Runs on the
 * thread that calls send, so it must be thread-safe if several threads send.
 */
typedef int (*pulsarc_router_cb)(const pulsarc_msg_t *msg, int num_partitions, void *opaque);
/**
 * Installs a custom router on a producer of a partitioned topic; messages
 * sent after the call use it (keyed ones too, as in the Java client).
 * PULSARC_ERR_STATE on a non-partitioned topic. opaque is borrowed until
 * the producer is destroyed.
 */
PULSARC_API pulsarc_err_t pulsarc_producer_set_router(pulsarc_producer_t *producer,
                                                      pulsarc_router_cb cb, void *opaque);
/** Partitions the handle routes over (grows as partitions are added); 0 for
 *  a non-partitioned topic. */
PULSARC_API int pulsarc_producer_partitions(const pulsarc_producer_t *producer);

/** Producer figures since creation (all partitions summed). */
typedef struct pulsarc_producer_stats_s {
    uint64_t msgs_sent;       /**< messages the broker acknowledged */
    uint64_t bytes_sent;      /**< their payload bytes (before compression) */
    uint64_t send_errors;     /**< messages that failed (timeout, closed, rejected, ...) */
    uint64_t pending;         /**< messages queued or in flight right now */
    double latency_avg_ms;    /**< mean time from send to receipt */
    uint64_t latency_max_ms;  /**< longest time from send to receipt */
} pulsarc_producer_stats_t;
/** Fills *out (borrowed). */
PULSARC_API pulsarc_err_t pulsarc_producer_stats(pulsarc_producer_t *producer,
                                                 pulsarc_producer_stats_t *out);
/**@}*/

/* ======================================================================== */
/** @name Consumer */
/**@{*/
typedef struct pulsarc_consumer_s pulsarc_consumer_t;

/** Events reported to a consumer event listener. */
typedef enum pulsarc_consumer_event_e {
    PULSARC_CONSUMER_ACTIVE = 1,      /**< became the active consumer (Failover/Exclusive) */
    PULSARC_CONSUMER_INACTIVE = 2,    /**< another consumer became active */
    PULSARC_CONSUMER_END_OF_TOPIC = 3 /**< the topic was terminated and fully consumed */
} pulsarc_consumer_event_t;

/**
 * Called for each message when a listener is configured (instead of
 * pulsarc_consumer_receive). msg is owned by the callee (pulsarc_msg_destroy).
 * Runs on the client's callback thread, one message at a time per client.
 */
typedef void (*pulsarc_message_listener_cb)(pulsarc_consumer_t *consumer, pulsarc_msg_t *msg,
                                            void *opaque);
typedef void (*pulsarc_consumer_event_cb)(pulsarc_consumer_t *consumer,
                                          pulsarc_consumer_event_t event, void *opaque);

/** Sets the message listener used by consumers created with conf (opaque borrowed). */
PULSARC_API pulsarc_err_t pulsarc_conf_set_message_listener(pulsarc_conf_t *conf,
                                                           pulsarc_message_listener_cb cb,
                                                           void *opaque);
/** Sets the event listener (active consumer changes, end of topic). */
PULSARC_API pulsarc_err_t pulsarc_conf_set_consumer_event_listener(pulsarc_conf_t *conf,
                                                                  pulsarc_consumer_event_cb cb,
                                                                  void *opaque);

/**
 * End-to-end encryption key reader (the Java client's CryptoKeyReader):
 * writes the PEM text of the key called name into buf (cap bytes) and
 * returns its length, 0 when it has no such key, -1 on error. is_private
 * 1: a consumer's private key, asked when a message with a new data key
 * arrives, with the metadata pairs the producer sent for that key
 * (meta_kv: key, value, key, value..., n_meta pairs); is_private 0: a
 * producer's public key, asked at creation for every encryptionKeys name
 * that cryptoPublicKeyPath does not give. Runs on the client's io thread
 * (consumer) or the creating thread (producer); must not block long.
 */
typedef long (*pulsarc_crypto_key_reader_cb)(const char *name, int is_private,
                                             const char *const *meta_kv, size_t n_meta,
                                             char *buf, size_t cap, void *opaque);
/** Sets the key reader of producers and consumers created with conf (opaque borrowed). */
PULSARC_API pulsarc_err_t pulsarc_conf_set_crypto_key_reader(pulsarc_conf_t *conf,
                                                            pulsarc_crypto_key_reader_cb cb,
                                                            void *opaque);

/** Counters of one consumer, as of the call. */
typedef struct pulsarc_consumer_stats_s {
    uint64_t received;        /**< messages taken from the broker into the queue */
    uint64_t delivered;       /**< messages handed to the application */
    uint64_t acked;           /**< individual and cumulative ack calls */
    uint64_t nacked;          /**< negative acks */
    uint64_t redelivery_requests; /**< REDELIVER commands sent */
    uint64_t discarded;       /**< entries dropped as corrupt or undecodable */
    uint64_t reconnects;      /**< successful re-subscriptions after the first */
    size_t queue_len;         /**< messages waiting in the receive queue */
    size_t queue_size;        /**< receiverQueueSize (its current value when auto-scaled) */
} pulsarc_consumer_stats_t;

/**
 * Subscribes to topic (borrowed) with subscription name sub (borrowed).
 * conf (borrowed, may be NULL) is read for consumer keys
 * ("subscriptionType", "subscriptionInitialPosition", "receiverQueueSize",
 * …). Blocks until subscribed. On success *consumerp is owned by the caller.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_new(pulsarc_client_t *client, const char *topic,
                                               const char *sub, const pulsarc_conf_t *conf,
                                               pulsarc_consumer_t **consumerp,
                                               char *errstr, size_t errlen);
/**
 * Subscribes to several topics behind one handle (each may be partitioned:
 * every partition is subscribed). Messages of all topics arrive in one
 * queue; acks are routed to the topic each message came from. New
 * partitions are picked up every "autoUpdatePartitionsInterval" seconds.
 * topics (borrowed) holds n names. pulsarc_consumer_new() does the same by
 * itself for a partitioned topic.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_new_multi(pulsarc_client_t *client,
                                                     const char *const *topics, size_t n,
                                                     const char *sub, const pulsarc_conf_t *conf,
                                                     pulsarc_consumer_t **consumerp,
                                                     char *errstr, size_t errlen);
/**
 * Subscribes to every persistent topic of a namespace whose name matches
 * pattern, a POSIX extended regex over "tenant/namespace/topic", written as
 * "persistent://tenant/ns/REGEX", "tenant/ns/REGEX" or "REGEX" (default
 * namespace). Topics created later are found every
 * "patternAutoDiscoveryPeriod" seconds.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_new_pattern(pulsarc_client_t *client,
                                                       const char *pattern, const char *sub,
                                                       const pulsarc_conf_t *conf,
                                                       pulsarc_consumer_t **consumerp,
                                                       char *errstr, size_t errlen);
/**
 * Waits up to timeout_ms (<0: forever) for the next message. On success
 * *msgp is owned by the caller (pulsarc_msg_destroy). PULSARC_ERR_NO_MESSAGE
 * when the time ran out. With "receiverQueueSize" 0 (no prefetch: each call
 * asks the broker for one message) only timeout_ms < 0 is allowed, as with
 * the Java client (PULSARC_ERR_STATE otherwise, and from batch receive);
 * a batched entry closes such a consumer and fails with
 * PULSARC_ERR_UNSUPPORTED.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_receive(pulsarc_consumer_t *consumer,
                                                   pulsarc_msg_t **msgp, int timeout_ms);
/**
 * The outcome of one pulsarc_consumer_receive_async: err is PULSARC_OK and
 * msg the next message, owned by the callee as with receive
 * (pulsarc_msg_destroy); or err is the reason there is none (msg NULL):
 * PULSARC_ERR_CLOSED when the consumer closed first, PULSARC_ERR_STATE with
 * a message listener set, PULSARC_ERR_END_OF_TOPIC once a terminated topic
 * was fully received, and with "receiverQueueSize" 0 what receive would
 * return. Runs on the client's callback thread (or inside
 * pulsarc_client_poll with "callbackMode" "poll", or pulsarc_client_step in
 * loop mode), never under a library lock; it may call any consumer
 * function, receive_async too.
 */
typedef void (*pulsarc_receive_cb)(pulsarc_consumer_t *consumer, pulsarc_err_t err,
                                   pulsarc_msg_t *msg, void *opaque);
/**
 * Asks for the next message without waiting: cb(consumer, err, msg, opaque)
 * runs exactly once with it or with an error (see pulsarc_receive_cb).
 * Pending receives (sync or async) are served one message each, in the
 * order they were made. Interceptors' before_consume run for the message
 * as for receive. Closing the consumer completes every pending one with
 * PULSARC_ERR_CLOSED; with a callback thread ("callbackMode" "thread") close
 * returns only after those callbacks ran, unless called from a callback.
 * Returns PULSARC_OK when cb will run; PULSARC_ERR_INVALID_ARG,
 * PULSARC_ERR_NOMEM, or PULSARC_ERR_CLOSED once the consumer is closing or
 * closed (so a callback that asks again on CLOSED cannot keep close
 * waiting) or the client is closed, when it will not. Any thread.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_receive_async(pulsarc_consumer_t *consumer,
                                                         pulsarc_receive_cb cb, void *opaque);
/**
 * Waits up to batchReceiveTimeoutMs for up to batchReceiveMaxNumMessages
 * messages (or batchReceiveMaxNumBytes) and stores at most cap of them in
 * msgs; *n receives the count (possibly 0 on timeout). Each message is owned
 * by the caller. Returns PULSARC_OK even when *n is 0.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_batch_receive(pulsarc_consumer_t *consumer,
                                                         pulsarc_msg_t **msgs, size_t cap,
                                                         size_t *n);
/**
 * Acknowledges one message by id. Prefer pulsarc_consumer_ack when the
 * message is at hand: only it can tell a message received before a
 * reconnect (see there).
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_ack_id(pulsarc_consumer_t *consumer,
                                                  const pulsarc_msgid_t *id);
/**
 * Acknowledges msg (borrowed). An acknowledged message is not received
 * again, even when the broker resends it (after a reconnect, or asked to
 * redeliver everything unacked). For a message received before such a
 * resend, whose copy may already be queued, this call (and
 * pulsarc_consumer_ack_cumulative) waits for the io thread to take the
 * copy out before it returns, also inside a callback.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_ack(pulsarc_consumer_t *consumer,
                                               const pulsarc_msg_t *msg);
/**
 * Acknowledges every message up to and including id (not allowed on
 * Shared and Key_Shared subscriptions: PULSARC_ERR_STATE).
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_ack_cumulative_id(pulsarc_consumer_t *consumer,
                                                             const pulsarc_msgid_t *id);
PULSARC_API pulsarc_err_t pulsarc_consumer_ack_cumulative(pulsarc_consumer_t *consumer,
                                                          const pulsarc_msg_t *msg);
/**
 * Negative acknowledgement: the message is redelivered after
 * negativeAckRedeliveryDelayMicros (its whole entry, for batches).
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_nack_id(pulsarc_consumer_t *consumer,
                                                   const pulsarc_msgid_t *id);
PULSARC_API pulsarc_err_t pulsarc_consumer_nack(pulsarc_consumer_t *consumer,
                                                const pulsarc_msg_t *msg);
/**
 * With "retryEnable": publishes a copy of msg (borrowed) to the retry topic,
 * to be delivered again after delay_ms (RECONSUMETIMES counts the rounds),
 * or to the dead-letter topic once that count passes
 * deadLetterPolicy.maxRedeliverCount; then acks msg. Blocks until published.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_reconsume_later(pulsarc_consumer_t *consumer,
                                                           const pulsarc_msg_t *msg,
                                                           uint64_t delay_ms);
/** Asks the broker to redeliver every unacknowledged message now. */
PULSARC_API pulsarc_err_t pulsarc_consumer_redeliver_unacked(pulsarc_consumer_t *consumer);
/**
 * Moves the subscription to id (the next message received is the one after
 * it for durable subscriptions, as the broker positions the cursor).
 * Messages already queued locally are dropped. Blocks until the broker
 * confirms. This call, seek_time, last_message_id and
 * has_message_available wait while the consumer is reconnecting (as it
 * does after every seek) and go ahead once it is subscribed again; within
 * operationTimeoutMs all told, else PULSARC_ERR_TIMEOUT; closing the
 * consumer ends the wait with PULSARC_ERR_CLOSED.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_seek(pulsarc_consumer_t *consumer,
                                                const pulsarc_msgid_t *id);
/** Moves the subscription to the first message published at or after ms. */
PULSARC_API pulsarc_err_t pulsarc_consumer_seek_time(pulsarc_consumer_t *consumer,
                                                     uint64_t publish_time_ms);
/** The id of the last message written to the topic (entry -1 when empty). */
PULSARC_API pulsarc_err_t pulsarc_consumer_last_message_id(pulsarc_consumer_t *consumer,
                                                           pulsarc_msgid_t *id);
/** *available = 1 when a message after the last one received exists. */
PULSARC_API pulsarc_err_t pulsarc_consumer_has_message_available(pulsarc_consumer_t *consumer,
                                                                 int *available);
/** 1 while subscribed on a live connection. */
PULSARC_API int pulsarc_consumer_is_connected(pulsarc_consumer_t *consumer);
/** Copies the consumer's counters into *stats. */
PULSARC_API pulsarc_err_t pulsarc_consumer_stats(pulsarc_consumer_t *consumer,
                                                 pulsarc_consumer_stats_t *stats);
/** Deletes the subscription on the broker and closes the consumer. */
PULSARC_API pulsarc_err_t pulsarc_consumer_unsubscribe(pulsarc_consumer_t *consumer);
/** Topic name in full form. Borrowed. */
PULSARC_API const char *pulsarc_consumer_topic(const pulsarc_consumer_t *consumer);
/** Subscription name. Borrowed. */
PULSARC_API const char *pulsarc_consumer_subscription(const pulsarc_consumer_t *consumer);
/**
 * Closes the consumer on the broker; blocked receives return
 * PULSARC_ERR_CLOSED. Safe from any thread and from a callback.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_close(pulsarc_consumer_t *consumer);
/** Closes (if needed) and frees. NULL is a no-op. */
PULSARC_API void pulsarc_consumer_destroy(pulsarc_consumer_t *consumer);
/**@}*/

/* ======================================================================== */
/** @name Interceptors
 *
 * Application hooks that see every message a producer sends or a consumer
 * hands out, as the Java client's ProducerInterceptor and
 * ConsumerInterceptor. Each is a struct of function pointers (any may be
 * NULL) and an opaque pointer passed back to every hook. Added to a
 * configuration in order; every producer or consumer created with it calls
 * its hooks in that order (the chain), for the handle the application
 * holds (a partitioned producer or multi-topic consumer calls them once,
 * not per partition). Hooks never run under a library lock nor on the
 * network thread; each says where it runs. They may call pulsarc
 * functions, except the blocking ones of the handle they were called for
 * (close, flush, a synchronous send).
 *
 * A hook that fails does not break the chain: a non-OK before_send is
 * counted as nothing, the next hook gets the message as the failing one
 * left it; a NULL from before_consume means "keep msg as it was".
 */
/**@{*/
typedef struct pulsarc_producer_interceptor_s {
    /**
     * Runs on the thread that calls send, once per message, before the
     * message is queued or batched (so also before the memory budget and
     * pending queue accept it). May change msg with the pulsarc_msg_set_*
     * setters: payload, key, ordering key, properties, event time, delivery
     * time, replication. The sequence id is the producer's: a sequence id
     * set here is undone. For a synchronous send msg is a copy of the
     * caller's message, which stays unchanged. Return PULSARC_OK; any other
     * value is ignored (the message is sent as the hook left it).
     */
    pulsarc_err_t (*before_send)(pulsarc_producer_t *producer, pulsarc_msg_t *msg, void *opaque);
    /**
     * Exactly once per message before_send saw: err PULSARC_OK with the
     * message id, or the failure (PULSARC_ERR_TIMEOUT for sendTimeoutMs,
     * PULSARC_ERR_CLOSED for a close with the send pending, a full queue
     * or memory budget, ...) with id NULL. msg and id are borrowed for the
     * call. For an asynchronous send it runs where send callbacks run (the
     * callback thread or pulsarc_client_poll), right before the send's own
     * callback, or on the sending thread when send_async itself fails; for
     * a synchronous send, on the sending thread before the send returns.
     */
    void (*on_send_ack)(pulsarc_producer_t *producer, pulsarc_err_t err,
                        const pulsarc_msgid_t *id, const pulsarc_msg_t *msg, void *opaque);
    /**
     * A producer of a partitioned topic (topic borrowed) routes over
     * partitions partitions: once when it was created, on the creating
     * thread before pulsarc_producer_new returns; then each time it
     * adopted partitions added to the topic (autoUpdatePartitionsInterval),
     * with the new count, after messages started going to them, where
     * callbacks run (the callback thread or pulsarc_client_poll).
     */
    void (*on_partitions_change)(pulsarc_producer_t *producer, const char *topic, int partitions,
                                 void *opaque);
    /**
     * The producer is gone: called once per producer created, after its
     * last hook, on the thread that destroys it or on the callback thread
     * after the last send outcome (not when pulsarc_producer_new fails).
     * opaque may be freed here.
     */
    void (*close)(void *opaque);
    void *opaque; /**< borrowed until close (or for the life of conf when close is NULL) */
} pulsarc_producer_interceptor_t;

/**
 * Appends icpt (copied; its opaque is borrowed) to the producer
 * interceptors of conf. PULSARC_ERR_INVALID_ARG when conf or icpt is NULL,
 * PULSARC_ERR_BAD_CONFIG beyond 64 interceptors.
 */
PULSARC_API pulsarc_err_t pulsarc_conf_add_producer_interceptor(
    pulsarc_conf_t *conf, const pulsarc_producer_interceptor_t *icpt);

typedef struct pulsarc_consumer_interceptor_s {
    /**
     * Sees each message before the application does: in
     * pulsarc_consumer_receive and batch receive (on the receiving thread),
     * before a receive_async callback and before the message listener (on
     * the callback thread). Returns the
     * message to hand on: msg itself (it may be inspected, but a received
     * message is read-only), or a replacement owned by the library from
     * then on, in which case the hook owns msg and must destroy it (a
     * pulsarc_msg_clone() of msg, changed, keeps the id, so it can be
     * acknowledged). NULL: the hook failed; msg goes on unchanged.
     * Readers (and table views) made with the conf run it on what they
     * read, on the reading thread.
     */
    pulsarc_msg_t *(*before_consume)(pulsarc_consumer_t *consumer, pulsarc_msg_t *msg,
                                     void *opaque);
    /**
     * After an individual ack (pulsarc_consumer_ack, _ack_id): err is what
     * the call returns (with ackReceiptEnabled, the broker's answer). On the
     * acking thread, once per call.
     */
    void (*on_acknowledge)(pulsarc_consumer_t *consumer, const pulsarc_msgid_t *id,
                           pulsarc_err_t err, void *opaque);
    /** The same for cumulative acks. */
    void (*on_acknowledge_cumulative)(pulsarc_consumer_t *consumer, const pulsarc_msgid_t *id,
                                      pulsarc_err_t err, void *opaque);
    /**
     * The negative acks whose delay ran out were sent for redelivery: the
     * entries (batch index -1) in ids[0..n), borrowed. On the callback
     * thread.
     */
    void (*on_negative_acks_send)(pulsarc_consumer_t *consumer, const pulsarc_msgid_t *ids,
                                  size_t n, void *opaque);
    /**
     * Messages not acknowledged within ackTimeoutMillis were sent for
     * redelivery: their ids, borrowed. On the callback thread.
     */
    void (*on_ack_timeout_send)(pulsarc_consumer_t *consumer, const pulsarc_msgid_t *ids,
                                size_t n, void *opaque);
    /**
     * Called once per consumer created (not when its creation fails),
     * after pulsarc_consumer_destroy closed it
     * and every hook already running returned: on the destroying thread,
     * or on the thread of that last hook. No hook is called after it (a
     * redelivery notice still queued is dropped; a message still on its
     * way to the listener gets there without before_consume). opaque may
     * be freed here.
     */
    void (*close)(void *opaque);
    void *opaque; /**< borrowed until close (or for the life of conf when close is NULL) */
} pulsarc_consumer_interceptor_t;

/** Appends icpt (copied; opaque borrowed) to the consumer interceptors of conf. */
PULSARC_API pulsarc_err_t pulsarc_conf_add_consumer_interceptor(
    pulsarc_conf_t *conf, const pulsarc_consumer_interceptor_t *icpt);
/**@}*/

/* ======================================================================== */
/** @name Reader
 *
 * A reader walks a topic from a position of its choosing on a non-durable
 * subscription: nothing is acknowledged, nothing is kept on the broker.
 */
/**@{*/
typedef struct pulsarc_reader_s pulsarc_reader_t;

/**
 * Creates a reader on topic starting at *start (pulsarc_msgid_earliest(),
 * pulsarc_msgid_latest() or a message id); with inclusive the message at
 * start itself is read first. conf may set "receiverQueueSize" and
 * "subscriptionName" (default "reader-<random>"). *readerp is owned by the
 * caller.
 */
PULSARC_API pulsarc_err_t pulsarc_reader_new(pulsarc_client_t *client, const char *topic,
                                             const pulsarc_msgid_t *start, int inclusive,
                                             const pulsarc_conf_t *conf,
                                             pulsarc_reader_t **readerp, char *errstr,
                                             size_t errlen);
/** Like pulsarc_consumer_receive. */
PULSARC_API pulsarc_err_t pulsarc_reader_read(pulsarc_reader_t *reader, pulsarc_msg_t **msgp,
                                              int timeout_ms);
PULSARC_API pulsarc_err_t pulsarc_reader_has_message_available(pulsarc_reader_t *reader,
                                                               int *available);
PULSARC_API pulsarc_err_t pulsarc_reader_seek(pulsarc_reader_t *reader,
                                              const pulsarc_msgid_t *id);
PULSARC_API pulsarc_err_t pulsarc_reader_seek_time(pulsarc_reader_t *reader, uint64_t ms);
/** The underlying consumer (borrowed), for stats and events. */
PULSARC_API pulsarc_consumer_t *pulsarc_reader_consumer(pulsarc_reader_t *reader);
PULSARC_API pulsarc_err_t pulsarc_reader_close(pulsarc_reader_t *reader);
PULSARC_API void pulsarc_reader_destroy(pulsarc_reader_t *reader);
/**@}*/

/* ======================================================================== */
/** @name Table view
 *
 * A key -> latest value view of a topic, as the Java client's TableView:
 * every partition of a partitioned topic is read from the start of its
 * compacted view (readCompacted) by a reader of its own, and each message
 * with a partition key (as pulsarc_msg_key gives it: base64 text for a
 * binary key, as Java's getKey) sets that key to a copy of its payload; a message
 * with an empty payload or marked null (pulsarc_msg_set_null_value) deletes
 * the key. Messages without a key are skipped. A partitioned topic's
 * partition count is asked for again every "autoUpdatePartitionsInterval"
 * seconds of conf (default 60; 0: only at creation), and each new
 * partition is read from its start like the others.
 *
 * Threads: one reader thread per partition applies updates in the
 * background. Updates, listener calls and pulsarc_tableview_for_each are
 * serialized: no listener call overlaps another or an iteration, and a
 * key's updates reach listeners in the order they were written. Inside a
 * listener or for_each callback every call on the view is allowed except
 * pulsarc_tableview_refresh (PULSARC_ERR_STATE: the update it would wait
 * for could not be applied until the callback returns); close and destroy
 * work there as anywhere (after destroy, make no further call on the view;
 * its memory is released when the callback returns). The client must
 * outlive the view: destroy the view first.
 */
/**@{*/
typedef struct pulsarc_tableview_s pulsarc_tableview_t;

/**
 * Called with one entry of the view. key and value are borrowed for the
 * call only; value is NULL and len 0 when the key was deleted (listeners
 * only: for_each never sees deleted keys).
 */
typedef void (*pulsarc_tableview_cb)(pulsarc_tableview_t *tv, const char *key,
                                     const void *value, size_t len, void *opaque);

/**
 * Creates a view of topic (borrowed) and reads every partition to its end
 * as of the call (the last message id each partition reports) before
 * returning; from then on updates are applied in the background. conf
 * (borrowed, may be NULL) is read for reader keys such as
 * "receiverQueueSize"; "readCompacted" is always on and a message listener
 * in conf is ignored. On success *tvp is owned by the caller
 * (pulsarc_tableview_destroy).
 */
PULSARC_API pulsarc_err_t pulsarc_tableview_new(pulsarc_client_t *client, const char *topic,
                                                const pulsarc_conf_t *conf,
                                                pulsarc_tableview_t **tvp, char *errstr,
                                                size_t errlen);
/**
 * Copies the value of key (borrowed) into buf (caller-owned, cap bytes; may
 * be NULL when cap is 0) and sets *len to the value's full length: when
 * *len > cap only the first cap bytes were copied, call again with a larger
 * buffer. PULSARC_ERR_NOT_FOUND (and *len 0) when the view has no such key.
 * Still answers after close, from what was read until then.
 */
PULSARC_API pulsarc_err_t pulsarc_tableview_get(pulsarc_tableview_t *tv, const char *key,
                                                void *buf, size_t cap, size_t *len);
/** Number of keys in the view (0 for NULL). */
PULSARC_API size_t pulsarc_tableview_size(pulsarc_tableview_t *tv);
/**
 * Calls cb once for every key of the view, on the calling thread, with no
 * update applied while it runs (updates wait until it returns).
 * opaque is borrowed and passed through.
 */
PULSARC_API pulsarc_err_t pulsarc_tableview_for_each(pulsarc_tableview_t *tv,
                                                     pulsarc_tableview_cb cb, void *opaque);
/**
 * Registers cb as a listener (Java's forEachAndListen): it is called at
 * once, on the calling thread, for every key already in the view, then on
 * a reader thread for every update after that, each exactly once
 * (deletions with value NULL). opaque is borrowed until the view is
 * destroyed. Listeners cannot be removed; they stop with the view.
 * PULSARC_ERR_CLOSED (and cb never called) once the view is closed.
 */
PULSARC_API pulsarc_err_t pulsarc_tableview_listen(pulsarc_tableview_t *tv,
                                                   pulsarc_tableview_cb cb, void *opaque);
/**
 * Reads every partition to its end as of this call (the last message id
 * each reports) and returns once all of it is in the view: a value written
 * before the call is visible to get() afterwards. PULSARC_ERR_STATE from
 * inside a callback of this view, PULSARC_ERR_CLOSED once closed, or the
 * error that stopped a partition's reader.
 */
PULSARC_API pulsarc_err_t pulsarc_tableview_refresh(pulsarc_tableview_t *tv, char *errstr,
                                                    size_t errlen);
/** Counters of one view, as of the call. */
typedef struct pulsarc_tableview_stats_s {
    size_t partitions; /**< readers: the topic's partitions, 1 if it has none */
    size_t keys;       /**< keys in the view (pulsarc_tableview_size) */
    uint64_t messages; /**< messages read, with a key or without */
    uint64_t updates;  /**< messages with a key, applied as a set or a deletion */
} pulsarc_tableview_stats_t;
/** Copies the view's counters into *stats. */
PULSARC_API pulsarc_err_t pulsarc_tableview_stats(pulsarc_tableview_t *tv,
                                                  pulsarc_tableview_stats_t *stats);
/**
 * Stops the background updates and closes the readers; the view keeps what
 * it read (get, size, for_each still work). Blocks until the reader threads
 * have ended (from inside a callback: every one but the caller's own, which
 * ends when the callback returns); no listener is called after it returns.
 * Safe from any thread; idempotent.
 */
PULSARC_API pulsarc_err_t pulsarc_tableview_close(pulsarc_tableview_t *tv);
/**
 * Closes (if needed) and frees the view, its readers and every value in it.
 * From inside a callback of this view the memory is released once that
 * callback returns: make no further call on the view. NULL is a no-op.
 */
PULSARC_API void pulsarc_tableview_destroy(pulsarc_tableview_t *tv);
/**@}*/

/* ======================================================================== */
/** @name Transactions
 *
 * Messages sent and acknowledgements made in a transaction take effect
 * together at commit, or not at all. Needs "enableTransaction"=true on the
 * client and a broker with its transaction coordinator on. Consumers see
 * only committed messages. The first send to each partition and the first
 * ack on each subscription in a transaction register it with the
 * coordinator (one blocking round trip each).
 */
/**@{*/
typedef struct pulsarc_txn_s pulsarc_txn_t;

/**
 * Opens a transaction. The broker aborts it if it is still open timeout_ms
 * after this call (<= 0: 60000). Blocks; on success *txnp is owned by the
 * caller (pulsarc_txn_destroy).
 */
PULSARC_API pulsarc_err_t pulsarc_txn_new(pulsarc_client_t *client, int timeout_ms,
                                          pulsarc_txn_t **txnp, char *errstr, size_t errlen);
/**
 * Waits for the transaction's pending sends and acks, then commits. If any
 * of them failed it aborts instead and returns PULSARC_ERR_STATE. A
 * transaction the broker already ended (timed out) gives
 * PULSARC_ERR_BROKER_INVALID_TXN_STATUS or _TXN_NOT_FOUND. Other errors
 * (timeouts, lost connections) leave it open: retry, or abort.
 */
PULSARC_API pulsarc_err_t pulsarc_txn_commit(pulsarc_txn_t *txn, char *errstr, size_t errlen);
/** Waits for pending sends and acks, then aborts: none of them takes effect. */
PULSARC_API pulsarc_err_t pulsarc_txn_abort(pulsarc_txn_t *txn, char *errstr, size_t errlen);
/** Aborts the transaction if it is still open, then frees the handle. NULL is a no-op. */
PULSARC_API void pulsarc_txn_destroy(pulsarc_txn_t *txn);
/**
 * A handle on a transaction known only by its id (e.g. kept in a
 * checkpoint), to commit or abort it; sends cannot join it through this
 * handle's earlier history. Owned by the caller (destroy or release).
 */
PULSARC_API pulsarc_err_t pulsarc_txn_resume(pulsarc_client_t *client, uint64_t most,
                                             uint64_t least, pulsarc_txn_t **txnp,
                                             char *errstr, size_t errlen);
/** Frees the handle but leaves the transaction open on the broker (to resume later). */
PULSARC_API void pulsarc_txn_release(pulsarc_txn_t *txn);
/** The transaction id (most = the coordinator's number). */
PULSARC_API pulsarc_err_t pulsarc_txn_id(const pulsarc_txn_t *txn, uint64_t *most,
                                         uint64_t *least);
/**
 * Like pulsarc_producer_send, inside txn (borrowed): the message becomes
 * visible at commit. Transactional messages are never batched with others.
 * PULSARC_ERR_STATE when txn is no longer open.
 */
PULSARC_API pulsarc_err_t pulsarc_producer_send_txn(pulsarc_producer_t *producer,
                                                    pulsarc_txn_t *txn,
                                                    const pulsarc_msg_t *msg,
                                                    pulsarc_msgid_t *id);
/** Like pulsarc_producer_send_async, inside txn (borrowed until cb has run). */
PULSARC_API pulsarc_err_t pulsarc_producer_send_async_txn(pulsarc_producer_t *producer,
                                                          pulsarc_txn_t *txn,
                                                          pulsarc_msg_t *msg,
                                                          pulsarc_send_cb cb, void *opaque);
/**
 * Acknowledges id inside txn: it takes effect at commit; after an abort the
 * message is delivered again. Waits for the broker's answer:
 * PULSARC_ERR_BROKER_TXN_CONFLICT when another transaction holds (or the
 * subscription already has) the acknowledgement.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_ack_id_txn(pulsarc_consumer_t *consumer,
                                                      pulsarc_txn_t *txn,
                                                      const pulsarc_msgid_t *id);
/**
 * Individual acknowledgements of n ids (borrowed) inside txn, all sent
 * before the first answer is awaited: one round trip for the lot, as
 * Java's acknowledgeAsync(List, txn). Returns the first error; ids before
 * a failed one may still have joined the transaction (abort to undo).
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_ack_ids_txn(pulsarc_consumer_t *consumer,
                                                       pulsarc_txn_t *txn,
                                                       const pulsarc_msgid_t *ids, size_t n);
/** Cumulative form (Exclusive and Failover subscriptions only, else PULSARC_ERR_STATE). */
PULSARC_API pulsarc_err_t pulsarc_consumer_ack_cumulative_id_txn(pulsarc_consumer_t *consumer,
                                                                 pulsarc_txn_t *txn,
                                                                 const pulsarc_msgid_t *id);
/**
 * Like pulsarc_consumer_ack_ids_txn, with each id's outcome written to
 * errs[i] (caller-owned, n entries). An id answered with
 * PULSARC_ERR_BROKER_TXN_CONFLICT (the subscription already has that
 * acknowledgement, e.g. a redelivered copy acknowledged elsewhere) is
 * reported there but does not doom txn; any other failure does, and is
 * returned (the first one). PULSARC_OK when every id joined or conflicted.
 */
PULSARC_API pulsarc_err_t pulsarc_consumer_ack_ids_txn_each(pulsarc_consumer_t *consumer,
                                                            pulsarc_txn_t *txn,
                                                            const pulsarc_msgid_t *ids, size_t n,
                                                            pulsarc_err_t *errs);
/** 1 when client was created with "enableTransaction"=true, else 0 (also for NULL). */
PULSARC_API int pulsarc_client_txn_enabled(const pulsarc_client_t *client);
/**@}*/

/* ======================================================================== */
/** @name Metrics
 * The client's producers and consumers as Prometheus text exposition
 * (version 0.0.4), named after the Java client's OpenTelemetry metrics
 * with dots as underscores, a unit suffix and _total on counters:
 * pulsar_client_producer_message_send_duration_seconds (histogram, label
 * pulsar_response_status success|failed),
 * pulsar_client_producer_message_send_size_bytes_total,
 * pulsar_client_producer_message_pending_count,
 * pulsar_client_producer_reconnect_total,
 * pulsar_client_consumer_message_received_count_total,
 * pulsar_client_consumer_receive_queue_count,
 * pulsar_client_consumer_message_ack_total and _nack_total,
 * pulsar_client_consumer_message_received_size_bytes_total,
 * pulsar_client_consumer_receive_queue_size_bytes (payload bytes queued),
 * pulsar_client_consumer_receive_queue_capacity (receiverQueueSize, or its
 * auto-scaled value now), pulsar_client_consumer_redelivery_request_total
 * and pulsar_client_consumer_reconnect_total. Labels:
 * pulsar_tenant, pulsar_namespace, pulsar_topic (a partitioned topic's
 * name, its partitions summed) and, for consumers, pulsar_subscription;
 * handles with the same labels are summed into one series.
 * The client's own, without topic labels:
 * pulsar_client_connection_opened_total (handshake completed),
 * pulsar_client_connection_closed_total (closed after that),
 * pulsar_client_connection_failed_total (label pulsar_failure_type
 * tcp-failed|handshake), pulsar_client_connection_open_count, and
 * pulsar_client_lookup_duration_seconds (histogram, labels
 * pulsar_lookup_transport_type binary|http, pulsar_lookup_type
 * topic|metadata|list-topics, pulsar_response_status success|failed; one
 * observation per lookup, redirects included; only label sets that
 * occurred are written). Durations are timed in whole milliseconds.
 */
/**@{*/
/**
 * Writes the metrics of every producer and consumer the client has now,
 * and of its connections and lookups since it was created.
 * On success *text is a NUL-terminated string owned by the caller (free
 * with pulsarc_metrics_free) and *len (len may be NULL) its length; with
 * no handles, only the client's own families. Any thread; it takes each handle's
 * lock briefly and never waits on the network.
 */
PULSARC_API pulsarc_err_t pulsarc_client_metrics(pulsarc_client_t *client, char **text,
                                                 size_t *len);
/** Frees text returned by pulsarc_client_metrics. NULL is a no-op. */
PULSARC_API void pulsarc_metrics_free(char *text);
/**@}*/

#ifdef __cplusplus
}
#endif

/* Further sections, each in its own file under include/pulsarc/. */
#if __has_include(<pulsarc/admin.h>) || __has_include("pulsarc/admin.h")
#include "pulsarc/admin.h"
#endif
#if __has_include(<pulsarc/connector.h>) || __has_include("pulsarc/connector.h")
#include "pulsarc/connector.h"
#endif
#if __has_include(<pulsarc/source.h>) || __has_include("pulsarc/source.h")
#include "pulsarc/source.h"
#endif
#if __has_include(<pulsarc/sink.h>) || __has_include("pulsarc/sink.h")
#include "pulsarc/sink.h"
#endif

#endif /* PULSARC_H */
