/*
 * The client's property table. Every configuration key of the client, its
 * scope, type, default, range and doc line lives here and nowhere else;
 * validation, pulsarc_conf_get() and docs/CONFIGURATION.md all come from
 * it, through the code every table shares (table.h, which describes the
 * row format; the connector's keys are a second table of the same rows).
 *
 * X(id, "name", scope, type, "default", min, max, "enum|values", flags, target, "doc")
 */
#ifndef PC_PROPS_H
#define PC_PROPS_H
#include <stdint.h>

#include "conf/table.h"

#define PC_PROPS(X)                                                                           \
    X(SERVICE_URL, "serviceUrl", CLIENT, STR, "", 0, 0, NULL, 0, NULL,                        \
      "Broker URL: pulsar://host:6650[,host2:6650] (pulsar+ssl:// for TLS), or a broker's "  \
      "http(s)://host:8080 to look topics up over its REST API. "                            \
      "Falls back to $PULSAR_SERVICE_URL.")                                                 \
    X(WEB_SERVICE_URL, "webServiceUrl", CLIENT, STR, "", 0, 0, NULL, 0, NULL,                 \
      "Admin (HTTP) URL: http(s)://host:8080[,host2:8080]. Falls back to $PULSAR_ADMIN_URL.") \
    X(OPERATION_TIMEOUT_MS, "operationTimeoutMs", CLIENT, INT, "30000", 1, 3600000, NULL, 0, NULL, \
      "Timeout of each request to the broker (lookup, create producer, subscribe, ...).")     \
    X(CONNECTION_TIMEOUT_MS, "connectionTimeoutMs", CLIENT, INT, "10000", 1, 3600000, NULL, 0, NULL, \
      "Timeout of TCP connect plus the CONNECT/CONNECTED handshake.")                         \
    X(KEEPALIVE_S, "keepAliveIntervalSeconds", CLIENT, INT, "30", 0, 86400, NULL, 0, NULL,     \
      "PING interval; a PING still unanswered at the next tick closes the connection. 0: off.") \
    X(MAX_LOOKUP_REDIRECTS, "maxLookupRedirects", CLIENT, INT, "20", 1, 1000, NULL, 0, NULL,   \
      "Most LOOKUP redirects followed before failing.")                                       \
    X(INITIAL_BACKOFF_MS, "initialBackoffIntervalMs", CLIENT, INT, "100", 1, 3600000, NULL, 0, NULL, \
      "First reconnect delay; doubles on each failure.")                                      \
    X(MAX_BACKOFF_MS, "maxBackoffIntervalMs", CLIENT, INT, "60000", 1, 86400000, NULL, 0, NULL, \
      "Upper bound of the reconnect delay.")                                                  \
    X(DEFAULT_TENANT, "defaultTenant", CLIENT, STR, "public", 0, 0, NULL, 0, NULL,             \
      "Tenant for short topic names.")                                                        \
    X(DEFAULT_NAMESPACE, "defaultNamespace", CLIENT, STR, "default", 0, 0, NULL, 0, NULL,      \
      "Namespace for short topic names.")                                                     \
    X(CALLBACK_MODE, "callbackMode", CLIENT, ENUM, "thread", 0, 0, "thread|poll", 0, NULL,     \
      "Where callbacks run: the client's callback thread, or pulsarc_client_poll().")         \
    X(THREADING_MODE, "threadingMode", CLIENT, ENUM, "thread", 0, 0, "thread|loop", 0, NULL,  \
      "thread: the client runs its own io and callback threads. loop: the client starts no "  \
      "thread; the application watches pulsarc_client_fd() and calls pulsarc_client_step(), " \
      "which runs io, timers and callbacks on its thread (callbackMode is then ignored). "     \
      "Host names are resolved inside the step (a blocking getaddrinfo); http(s) service "    \
      "URLs and OAuth2 are refused in loop mode.")                                            \
    X(AUTH_PLUGIN, "authPlugin", CLIENT, STR, "", 0, 0, NULL, 0, NULL,                        \
      "Authentication: the Java plugin class org.apache.pulsar.client.impl.auth."             \
      "AuthenticationToken, AuthenticationTls, AuthenticationBasic or "                      \
      "oauth2.AuthenticationOAuth2 (short names: token, tls, basic, oauth2). Empty: none.")    \
    X(AUTH_PARAMS, "authParams", CLIENT, STR, "", 0, 0, NULL, PC_F_SECRET, NULL,                        \
      "Token: token:<jwt>, file:///path (re-read on every challenge), env:VAR or "           \
      "{\"token\":\"...\"}. TLS: tlsCertFile:<pem>,tlsKeyFile:<pem>. Basic: "                \
      "{\"userId\":\"...\",\"password\":\"...\"}. OAuth2 (client credentials): "                \
      "{\"issuerUrl\":\"https://...\",\"privateKey\":\"file:///key.json\" or "                 \
      "\"data:application/json;base64,...\" (key file with client_id, client_secret, "        \
      "optional issuer_url),\"audience\":\"...\",\"scope\":\"...\"}, and optionally "          \
      "\"trustCertsFilePath\" for the issuer's CA (default: tlsTrustCertsFilePath, else the " \
      "system CAs); tokens refreshed at 80% of expires_in. Never logged.")                  \
    X(TLS_TRUST_CERTS_FILE_PATH, "tlsTrustCertsFilePath", CLIENT, STR, "", 0, 0, NULL, 0, NULL, \
      "CA certificates (PEM file, or a directory in openssl rehash form) that verify the "   \
      "broker. Empty: the system trust store.")                                               \
    X(TLS_HOSTNAME_VERIFICATION, "tlsHostnameVerificationEnable", CLIENT, BOOL, "true", 0, 1,  \
      NULL, 0, NULL, "Check that the broker certificate names the host (or IP) dialled. On by default.") \
    X(TLS_ALLOW_INSECURE, "tlsAllowInsecureConnection", CLIENT, BOOL, "false", 0, 1, NULL, 0, NULL, \
      "Accept any broker certificate: no chain and no name check. For tests only.")           \
    X(TLS_CERT_FILE, "tlsCertificateFilePath", CLIENT, STR, "", 0, 0, NULL, 0, NULL,           \
      "Client certificate (PEM) presented for mutual TLS.")                                   \
    X(TLS_KEY_FILE, "tlsKeyFilePath", CLIENT, STR, "", 0, 0, NULL, 0, NULL,                    \
      "Private key (PEM) of tlsCertificateFilePath.")                                         \
    X(PRODUCER_NAME, "producerName", PRODUCER, STR, "", 0, 0, NULL, 0, NULL,                   \
      "Producer name; empty lets the broker assign one (kept across reconnects).")            \
    X(SEND_TIMEOUT_MS, "sendTimeoutMs", PRODUCER, INT, "30000", 0, 86400000, NULL, 0, NULL,    \
      "A message without a receipt after this long fails with TIMEOUT. 0: never.")           \
    X(MAX_PENDING_MESSAGES, "maxPendingMessages", PRODUCER, INT, "1000", 1, 10000000, NULL, 0, NULL, \
      "Most messages awaiting a receipt.")                                                    \
    X(BLOCK_IF_QUEUE_FULL, "blockIfQueueFull", PRODUCER, BOOL, "false", 0, 1, NULL, 0, NULL,   \
      "When the pending queue is full: block (up to sendTimeoutMs) instead of failing.")      \
    X(BATCHING_ENABLED, "batchingEnabled", PRODUCER, BOOL, "true", 0, 1, NULL, 0, NULL,       \
      "Group messages into batches (one entry, one receipt) before sending.")                 \
    X(BATCHING_MAX_MESSAGES, "batchingMaxMessages", PRODUCER, INT, "1000", 1, 1000000, NULL, 0, NULL, \
      "A batch is sent when it holds this many messages.")                                    \
    X(BATCHING_MAX_BYTES, "batchingMaxBytes", PRODUCER, INT, "131072", 1, 104857600, NULL, 0, NULL, \
      "A batch is sent when its payloads reach this size; a bigger message goes alone.")      \
    X(BATCHING_MAX_DELAY_US, "batchingMaxPublishDelayMicros", PRODUCER, INT, "1000", 1, 3600000000, NULL, 0, NULL, \
      "A batch is sent at the latest this long after its first message.")                     \
    X(BATCHER_BUILDER, "batcherBuilder", PRODUCER, ENUM, "DEFAULT", 0, 0, "DEFAULT|KEY_BASED", 0, NULL, \
      "KEY_BASED: one batch per key (ordering key, else key), for Key_Shared consumers.")     \
    X(COMPRESSION_TYPE, "compressionType", PRODUCER, ENUM, "NONE", 0, 0, "NONE|LZ4|ZLIB|ZSTD|SNAPPY", 0, NULL, \
      "Codec for each entry (a batch as a whole, or a single message).")                      \
    X(CHUNKING_ENABLED, "chunkingEnabled", PRODUCER, BOOL, "false", 0, 1, NULL, 0, NULL,      \
      "Split messages above the broker's max message size into chunks (needs batching off).") \
    X(CHUNK_MAX_MESSAGE_SIZE, "chunkMaxMessageSize", PRODUCER, INT, "-1", -1, 2147483647, NULL, 0, NULL, \
      "Largest chunk in bytes; -1: the broker's max message size.")                           \
    X(ENCRYPTION_KEYS, "encryptionKeys", PRODUCER, STR, "", 0, 0, NULL, 0, NULL,              \
      "End-to-end encryption: comma-separated key names; each message's AES-256-GCM data key " \
      "is encrypted for every one of them (RSA or EC public keys, as the Java client). "      \
      "Empty: messages are not encrypted.")                                                   \
    X(CRYPTO_PUBLIC_KEY_PATH, "cryptoPublicKeyPath", PRODUCER, STR, "", 0, 0, NULL, 0, NULL,  \
      "PEM public key file for every name of encryptionKeys, or name=path,name=path. Read " \
      "when the producer is created.")                                                        \
    X(ACCESS_MODE, "accessMode", PRODUCER, ENUM, "Shared", 0, 0, "Shared|Exclusive|WaitForExclusive|ExclusiveWithFencing", 0, NULL, \
      "Producer access mode on the topic.")                                                   \
    X(SCHEMA_TYPE, "schemaType", BOTH, ENUM, "BYTES", 0, 0,                                    \
      "BYTES|NONE|STRING|JSON|PROTOBUF|AVRO|BOOLEAN|INT8|INT16|INT32|INT64|FLOAT|DOUBLE|DATE|"  \
      "TIME|TIMESTAMP|KEY_VALUE|INSTANT|LOCAL_DATE|LOCAL_TIME|LOCAL_DATE_TIME|PROTOBUF_NATIVE", 0, NULL, \
      "Schema declared to the broker, which registers it or checks it against the topic's "   \
      "(IncompatibleSchema otherwise). BYTES: none declared. Payloads stay bytes either way.") \
    X(SCHEMA_DEFINITION, "schemaDefinition", BOTH, STR, "", 0, 0, NULL, 0, NULL,                \
      "The schema's data: the Avro schema JSON for AVRO and JSON, the descriptor for "         \
      "PROTOBUF / PROTOBUF_NATIVE, the two encoded schemas for KEY_VALUE. Required for those.") \
    X(SCHEMA_NAME, "schemaName", BOTH, STR, "", 0, 0, NULL, 0, NULL,                            \
      "Name sent with the schema (informational).")                                           \
    X(INITIAL_SEQUENCE_ID, "initialSequenceId", PRODUCER, INT, "-1", -1, INT64_MAX, NULL, 0, NULL, \
      "First automatic sequence id is this + 1; -1: continue from the broker's last.")        \
    X(MESSAGE_ROUTING_MODE, "messageRoutingMode", PRODUCER, ENUM, "RoundRobinPartition", 0, 0, "RoundRobinPartition|SinglePartition|CustomPartition", 0, NULL, \
      "Partitioned topics: where unkeyed messages go (keyed ones follow the key hash).")      \
    X(HASHING_SCHEME, "hashingScheme", PRODUCER, ENUM, "JavaStringHash", 0, 0, "JavaStringHash|Murmur3_32Hash", 0, NULL, \
      "Key hash for partition routing (the Java client's choices).")                          \
    X(PARTITION_SWITCH_FREQ, "batchingPartitionSwitchFrequencyByPublishDelay", PRODUCER, INT, "10", 1, 1000000, NULL, 0, NULL, \
      "Round-robin with batching: change partition every this many batching delays.")         \
    X(MAX_PENDING_ACROSS_PARTITIONS, "maxPendingMessagesAcrossPartitions", PRODUCER, INT, "50000", 1, 100000000, NULL, 0, NULL, \
      "Partitioned topics: the per-partition limit is min(maxPendingMessages, this / partitions).")\
    X(MEMORY_LIMIT_BYTES, "memoryLimitBytes", CLIENT, INT, "67108864", 0, INT64_MAX, NULL, 0, NULL, \
      "Payload bytes all producers of the client may hold pending. 0: no limit.")             \
    X(ENABLE_TRANSACTION, "enableTransaction", CLIENT, BOOL, "false", 0, 1, NULL, 0, NULL,    \
      "Allow transactions (pulsarc_txn_new); producers then register as transactional.")     \
    X(SUBSCRIPTION_TYPE, "subscriptionType", CONSUMER, ENUM, "Exclusive", 0, 0,                \
      "Exclusive|Shared|Failover|Key_Shared", 0, NULL, "Subscription type.")                 \
    X(SUBSCRIPTION_INITIAL_POSITION, "subscriptionInitialPosition", CONSUMER, ENUM, "Latest",  \
      0, 0, "Latest|Earliest", 0, NULL, "Where a new subscription starts.")                   \
    X(RECEIVER_QUEUE_SIZE, "receiverQueueSize", CONSUMER, INT, "1000", 0, 1000000, NULL, 0, NULL, \
      "Messages the broker may push ahead of receive(); refilled at half. 0: no prefetch, one " \
      "message asked per receive() or listener call (one non-partitioned topic only; receive " \
      "without a timeout, no batch receive, batched entries close the consumer; not for readers).") \
    X(AUTO_SCALED_QUEUE, "autoScaledReceiverQueueSizeEnabled", CONSUMER, BOOL, "false", 0, 1, NULL, 0, \
      NULL, "Start the receive queue at 1 message and double it, up to receiverQueueSize, each " \
      "time receive() or the listener finds it empty after it had filled: a slow application " \
      "keeps a small queue. Single-topic consumers and readers only.")                       \
    X(AUTO_SCALED_QUEUE_IDLE_MS, "autoScaledReceiverQueueIdleMs", CONSUMER, INT, "5000", 0,      \
      86400000, NULL, 0, NULL,                                                                 \
      "With autoScaledReceiverQueueSizeEnabled: halve the receive queue (not below 1 message) " \
      "each time it stays this long below a quarter of its size, with fewer than a quarter "   \
      "arriving: the permits the broker holds follow it down and the memory pool of received " \
      "messages is trimmed to it. 0: never shrink.")                                          \
    X(CONSUMER_NAME, "consumerName", CONSUMER, STR, "", 0, 0, NULL, 0, NULL,                   \
      "Consumer name (Failover orders consumers by it).")                                     \
    X(PRIORITY_LEVEL, "priorityLevel", CONSUMER, INT, "0", 0, 1000, NULL, 0, NULL,             \
      "Shared/Failover priority; lower is served first.")                                      \
    X(ACK_TIMEOUT_MS, "ackTimeoutMillis", CONSUMER, INT, "0", 0, 86400000, NULL, 0, NULL,        \
      "Redeliver a message not acked this long after delivery. 0: off.")                      \
    X(ACK_TIMEOUT_TICK_MS, "tickDurationMillis", CONSUMER, INT, "1000", 1, 3600000, NULL, 0, NULL, \
      "Granularity of the ack-timeout and negative-ack sweeps.")                               \
    X(NACK_DELAY_US, "negativeAckRedeliveryDelayMicros", CONSUMER, INT, "60000000", 0,         \
      86400000000, NULL, 0, NULL, "Delay before a negatively acked message is redelivered.")  \
    X(ACK_GROUP_TIME_US, "acknowledgementsGroupTimeMicros", CONSUMER, INT, "100000", 0,        \
      3600000000, NULL, 0, NULL, "Acks are grouped and sent at most this often. 0: send each at once.") \
    X(ACK_GROUP_MAX, "maxAcknowledgmentGroupSize", CONSUMER, INT, "1000", 1, 100000, NULL, 0, NULL, \
      "A group of acks is sent when it reaches this many ids.")                                \
    X(ACK_RECEIPT_ENABLED, "ackReceiptEnabled", CONSUMER, BOOL, "false", 0, 1, NULL, 0, NULL,   \
      "Each ack call waits for the broker's receipt and returns its error.")                   \
    X(BATCH_INDEX_ACK_ENABLED, "batchIndexAckEnabled", CONSUMER, BOOL, "false", 0, 1, NULL, 0, NULL, \
      "Tell the broker about acks of single batch messages (ack_set) at once, not only "        \
      "when the whole batch is acked.")                                                        \
    X(READ_COMPACTED, "readCompacted", CONSUMER, BOOL, "false", 0, 1, NULL, 0, NULL,             \
      "Read the compacted view of the topic.")                                                 \
    X(KEY_SHARED_MODE, "keySharedMode", CONSUMER, ENUM, "AUTO_SPLIT", 0, 0, "AUTO_SPLIT|STICKY", 0, NULL, \
      "Key_Shared: hash ranges split automatically, or fixed by keySharedHashRanges.")        \
    X(KEY_SHARED_RANGES, "keySharedHashRanges", CONSUMER, STR, "", 0, 0, NULL, 0, NULL,         \
      "Key_Shared STICKY: inclusive ranges of 0..65535, e.g. \"0-32767,40000-50000\".")         \
    X(KEY_SHARED_OOO, "keySharedAllowOutOfOrderDelivery", CONSUMER, BOOL, "false", 0, 1, NULL, 0, NULL, \
      "Key_Shared: let a new consumer receive at once, relaxing per-key order at the switch.") \
    X(BATCH_RECV_MAX_MSGS, "batchReceiveMaxNumMessages", CONSUMER, INT, "100", 1, 1000000, NULL, 0, NULL, \
      "pulsarc_consumer_batch_receive returns at most this many messages.")                    \
    X(BATCH_RECV_MAX_BYTES, "batchReceiveMaxNumBytes", CONSUMER, INT, "10485760", 1,          \
      2147483647, NULL, 0, NULL, "... or once their payloads reach this many bytes.")          \
    X(BATCH_RECV_TIMEOUT_MS, "batchReceiveTimeoutMs", CONSUMER, INT, "100", 0, 3600000, NULL, 0, NULL, \
      "... or when this much time has passed.")                                                \
    X(SUBSCRIPTION_NAME, "subscriptionName", CONSUMER, STR, "", 0, 0, NULL, 0, NULL,           \
      "Readers: the subscription name (default reader-<random>).")                             \
    X(AUTO_UPDATE_PARTITIONS_S, "autoUpdatePartitionsInterval", BOTH, INT, "60", 0, 86400,       \
      NULL, 0, NULL, "Seconds between checks for new partitions: of a partitioned producer's topic " \
      "(new partitions get producers, then the router uses them), of subscribed topics, of a table " \
      "view's topic. 0: never.") \
    X(PATTERN_DISCOVERY_S, "patternAutoDiscoveryPeriod", CONSUMER, INT, "60", 0, 86400, NULL, 0, NULL, \
      "Seconds between checks for new topics matching a regex subscription. 0: never.")      \
    X(PATTERN_TOPIC_WATCHER, "patternTopicWatcherEnabled", CONSUMER, BOOL, "true", 0, 1, NULL, 0, NULL, \
      "Regex subscriptions ask the broker to push topics created or deleted in the namespace "   \
      "(WATCH_TOPIC_LIST, brokers from 2.11), so they are picked up at once; "                  \
      "patternAutoDiscoveryPeriod polling stays as the fallback and safety net.")               \
    X(MAX_PENDING_CHUNKED, "maxPendingChunkedMessage", CONSUMER, INT, "10", 1, 100000, NULL, 0, NULL, \
      "Chunked messages assembled at once; past it the oldest is given up.")                   \
    X(CHUNK_EXPIRE_MS, "expireTimeOfIncompleteChunkedMessageMs", CONSUMER, INT, "60000", 0,     \
      86400000, NULL, 0, NULL, "An incomplete chunked message older than this is given up. 0: never.") \
    X(CHUNK_AUTO_ACK_OLDEST, "autoAckOldestChunkedMessageOnQueueFull", CONSUMER, BOOL, "false", \
      0, 1, NULL, 0, NULL, "Ack (drop for good) rather than redeliver the chunks of a message given up.") \
    X(CHUNK_MAX_BYTES, "maxChunkedMessageBytes", CONSUMER, INT, "104857600", 1, 2147483647,     \
      NULL, 0, NULL, "Largest chunked message this consumer assembles, in bytes.")               \
    X(DLQ_MAX_REDELIVER, "deadLetterPolicy.maxRedeliverCount", CONSUMER, INT, "0", 0, 1000000,   \
      NULL, 0, NULL, "Shared/Key_Shared: after this many redeliveries a message goes to the "   \
      "dead-letter topic instead. 0: off.")                                                    \
    X(DLQ_TOPIC, "deadLetterPolicy.deadLetterTopic", CONSUMER, STR, "", 0, 0, NULL, 0, NULL,     \
      "Dead-letter topic (default <topic>-<subscription>-DLQ).")                              \
    X(RETRY_TOPIC, "deadLetterPolicy.retryLetterTopic", CONSUMER, STR, "", 0, 0, NULL, 0, NULL,  \
      "Retry topic for pulsarc_consumer_reconsume_later (default <topic>-<subscription>-RETRY).") \
    X(RETRY_ENABLE, "retryEnable", CONSUMER, BOOL, "false", 0, 1, NULL, 0, NULL,                 \
      "Also subscribe to the retry topic and allow pulsarc_consumer_reconsume_later.")         \
    X(CRYPTO_PRIVATE_KEY_PATH, "cryptoPrivateKeyPath", CONSUMER, STR, "", 0, 0, NULL, 0, NULL, \
      "End-to-end encryption: PEM private key file used for any key name, or "                \
      "name=path,name=path. Read when the consumer is created.")                             \
    X(CRYPTO_FAILURE_ACTION, "cryptoFailureAction", CONSUMER, ENUM, "FAIL", 0, 0,              \
      "FAIL|DISCARD|CONSUME", 0, NULL, "A message that cannot be decrypted (no key, or it fails its " \
      "check): FAIL holds it back unacked (redelivered later), DISCARD acks it with a "      \
      "decryption error, CONSUME delivers the encrypted payload (pulsarc_msg_is_encrypted).")

typedef enum pc_prop_id {
#define PC_PROP_ENUM(id, ...) PC_PROP_##id,
    PC_PROPS(PC_PROP_ENUM)
#undef PC_PROP_ENUM
    PC_PROP__COUNT
} pc_prop_id_t;

/* The rows above, for lookup and the generated reference. */
extern const pc_prop_table_t pc_conf_table;

struct pulsarc_conf_s;
/* Typed reads; the default applies when the key was never set. */
int64_t pc_conf_int(const struct pulsarc_conf_s *c, pc_prop_id_t id);
const char *pc_conf_str(const struct pulsarc_conf_s *c, pc_prop_id_t id);
/*
 * Callbacks cannot be text: typed setters store them in these slots, and
 * the objects created from a conf read them back. Add an id per callback.
 */
typedef enum pc_cb_id {
    PC_CB_MESSAGE_LISTENER,
    PC_CB_CONSUMER_EVENT,
    PC_CB_TOKEN_SUPPLIER,
    PC_CB_MESSAGE_ROUTER,
    PC_CB_CRYPTO_KEY_READER,
    PC_CB__COUNT
} pc_cb_id_t;
typedef void (*pc_any_fn)(void);
void pc_conf_set_cb(struct pulsarc_conf_s *c, pc_cb_id_t id, pc_any_fn fn, void *opaque);
/* fn is NULL when unset (or c is NULL). */
void pc_conf_get_cb(const struct pulsarc_conf_s *c, pc_cb_id_t id, pc_any_fn *fn, void **opaque);
/* The interceptors added to c, in order (borrowed from c); 0 when none or c is NULL. */
size_t pc_conf_producer_interceptors(const struct pulsarc_conf_s *c,
                                     const pulsarc_producer_interceptor_t **out);
size_t pc_conf_consumer_interceptors(const struct pulsarc_conf_s *c,
                                     const pulsarc_consumer_interceptor_t **out);

#endif
