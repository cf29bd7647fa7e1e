/*
 * The connector's property table: every pulsar.client.*, pulsar.admin.*,
 * pulsar.source.*, pulsar.sink.*, pulsar.producer.* and pulsar.consumer.*
 * key, in the Flink connector's naming so that configurations port over.
 * A second table of lib/conf's rows (lib/conf/table.h gives the format):
 * the client's keys and these are looked up, read, refused and documented
 * by the same code. Validation, the getters, the mapping onto the client's
 * keys (target: copied by pulsarc_connector_config_to_client_conf(); NULL
 * when the connector reads the key itself, or nothing does, PC_F_NOOP) and
 * docs/CONNECTOR_CONFIGURATION.md all come from here.
 *
 * X(id, "key", scope, type, default, min, max, "choices", flags, "target", "doc")
 *
 * Where pulsarc's default differs from Flink's, the doc line says so
 * (tlsHostnameVerificationEnable: on, as everywhere in pulsarc).
 */
#ifndef PC_CONNECTOR_PROPS_H
#define PC_CONNECTOR_PROPS_H
#include <stdint.h>

#include "conf/table.h"

#define PC_CC_PROPS(X)                                                                             \
    /* ---- pulsar.client.* ---------------------------------------------------------------- */    \
    X(CLIENT_SERVICE_URL, "pulsar.client.serviceUrl", CLIENT, STR, NULL, 0, 0, NULL, 0,            \
      "serviceUrl", "Broker URL: pulsar://h1:6650[,h2:6650], pulsar+ssl://..., or "       \
      "http(s)://h1:8080[,h2:8080] to look topics up over the brokers' REST API.")         \
    X(CLIENT_AUTH_PLUGIN, "pulsar.client.authPluginClassName", CLIENT, STR, NULL, 0, 0, NULL, 0,   \
      "authPlugin", "Authentication method: the Java class name or its short name (token, tls).")  \
    X(CLIENT_AUTH_PARAMS, "pulsar.client.authParams", CLIENT, STR, NULL, 0, 0, NULL, PC_F_SECRET,  \
      "authParams",                                                                                \
      "Parameters of the authentication method, as text (token:<jwt>, file:///...).")              \
    X(CLIENT_AUTH_PARAM_MAP, "pulsar.client.authParamMap", CLIENT, MAP, NULL, 0, 0, NULL,          \
      PC_F_SECRET, "authParams",                                                                   \
      "The same parameters as k1:v1,k2:v2; conflicts with authParams.")                            \
    X(CLIENT_OPERATION_TIMEOUT, "pulsar.client.operationTimeoutMs", CLIENT, INT, "30000", 1,       \
      3600000, NULL, 0, "operationTimeoutMs", "Timeout of each request to the broker.")            \
    X(CLIENT_LOOKUP_TIMEOUT, "pulsar.client.lookupTimeoutMs", CLIENT, INT, "-1", -1, 3600000,      \
      NULL, PC_F_NOOP, NULL, "Lookups use operationTimeoutMs in pulsarc.")                         \
    X(CLIENT_STATS_INTERVAL, "pulsar.client.statsIntervalSeconds", CLIENT, INT, "60", 0, 86400,    \
      NULL, PC_F_NOOP, NULL, "pulsarc keeps counters always; no periodic stats log.")              \
    X(CLIENT_NUM_IO_THREADS, "pulsar.client.numIoThreads", CLIENT, INT, "1", 1, 1024, NULL,        \
      PC_F_NOOP, NULL, "pulsarc runs one network thread per client.")                              \
    X(CLIENT_NUM_LISTENER_THREADS, "pulsar.client.numListenerThreads", CLIENT, INT, "1", 1, 1024,  \
      NULL, PC_F_NOOP, NULL, "pulsarc runs one callback thread per client.")                       \
    X(CLIENT_CONNECTIONS_PER_BROKER, "pulsar.client.connectionsPerBroker", CLIENT, INT, "1", 1,    \
      1024, NULL, PC_F_NOOP, NULL, "pulsarc keeps one connection per broker.")                     \
    X(CLIENT_CONN_MAX_IDLE, "pulsar.client.connectionMaxIdleSeconds", CLIENT, INT, "180", -1,      \
      86400, NULL, PC_F_NOOP, NULL, "Idle connections are kept open in pulsarc.")                  \
    X(CLIENT_TCP_NO_DELAY, "pulsar.client.useTcpNoDelay", CLIENT, BOOL, "true", 0, 1, NULL,        \
      PC_F_NOOP, NULL, "pulsarc always sets TCP_NODELAY.")                                         \
    X(CLIENT_CONCURRENT_LOOKUP, "pulsar.client.concurrentLookupRequest", CLIENT, INT, "5000", 1,   \
      1000000, NULL, PC_F_NOOP, NULL, "Not limited separately in pulsarc.")                        \
    X(CLIENT_MAX_LOOKUP_REQUEST, "pulsar.client.maxLookupRequest", CLIENT, INT, "50000", 1,        \
      1000000, NULL, PC_F_NOOP, NULL, "Not limited separately in pulsarc.")                        \
    X(CLIENT_MAX_LOOKUP_REDIRECTS, "pulsar.client.maxLookupRedirects", CLIENT, INT, "20", 1,       \
      1000, NULL, 0, "maxLookupRedirects", "Most LOOKUP redirects followed.")                      \
    X(CLIENT_MAX_REJECTED, "pulsar.client.maxNumberOfRejectedRequestPerConnection", CLIENT, INT,   \
      "50", 1, 1000000, NULL, PC_F_NOOP, NULL, "Not used by pulsarc.")                             \
    X(CLIENT_KEEPALIVE, "pulsar.client.keepAliveIntervalSeconds", CLIENT, INT, "30", 0, 86400,     \
      NULL, 0, "keepAliveIntervalSeconds", "PING interval; 0 turns keep-alive off.")               \
    X(CLIENT_CONNECTION_TIMEOUT, "pulsar.client.connectionTimeoutMs", CLIENT, INT, "10000", 1,     \
      3600000, NULL, 0, "connectionTimeoutMs", "TCP connect plus the protocol handshake.")         \
    X(CLIENT_REQUEST_TIMEOUT, "pulsar.client.requestTimeoutMs", CLIENT, INT, "60000", 1, 3600000,  \
      NULL, PC_F_NOOP, NULL, "pulsarc bounds each request by operationTimeoutMs.")                 \
    X(CLIENT_INITIAL_BACKOFF, "pulsar.client.initialBackoffIntervalNanos", CLIENT, INT,            \
      "100000000", 1000000, 3600000000000, NULL, PC_F_NS_TO_MS, "initialBackoffIntervalMs",        \
      "First reconnect delay, in ns (the core keeps ms).")                                         \
    X(CLIENT_MAX_BACKOFF, "pulsar.client.maxBackoffIntervalNanos", CLIENT, INT, "60000000000",     \
      1000000, 86400000000000, NULL, PC_F_NS_TO_MS, "maxBackoffIntervalMs",                        \
      "Largest reconnect delay, in ns.")                                                           \
    X(CLIENT_BUSY_WAIT, "pulsar.client.enableBusyWait", CLIENT, BOOL, "false", 0, 1, NULL,         \
      PC_F_NOOP, NULL, "pulsarc's loop always sleeps in epoll.")                                   \
    X(CLIENT_LISTENER_NAME, "pulsar.client.listenerName", CLIENT, STR, NULL, 0, 0, NULL,           \
      PC_F_DEFONLY, NULL,                                                                          \
      "Advertised listener names are not supported yet: lookups would return the "                 \
      "wrong addresses, so a value is refused rather than ignored.")                               \
    X(CLIENT_USE_KEYSTORE_TLS, "pulsar.client.useKeyStoreTls", CLIENT, BOOL, "false", 0, 1, NULL,  \
      PC_F_DEFONLY, NULL, "Java key stores are not supported; use the PEM file keys.")             \
    X(CLIENT_SSL_PROVIDER, "pulsar.client.sslProvider", CLIENT, STR, NULL, 0, 0, NULL, PC_F_NOOP,  \
      NULL, "pulsarc uses OpenSSL.")                                                               \
    X(CLIENT_KEYSTORE_TYPE, "pulsar.client.tlsKeyStoreType", CLIENT, STR, "JKS", 0, 0, NULL,       \
      PC_F_NOOP, NULL, "Key stores are not supported (see useKeyStoreTls).")                       \
    X(CLIENT_KEYSTORE_PATH, "pulsar.client.tlsKeyStorePath", CLIENT, STR, NULL, 0, 0, NULL,        \
      PC_F_NOOP, NULL, "Key stores are not supported (see useKeyStoreTls).")                       \
    X(CLIENT_KEYSTORE_PASSWORD, "pulsar.client.tlsKeyStorePassword", CLIENT, STR, NULL, 0, 0,      \
      NULL, PC_F_NOOP | PC_F_SECRET, NULL, "Key stores are not supported (see useKeyStoreTls).")   \
    X(CLIENT_TRUSTSTORE_TYPE, "pulsar.client.tlsTrustStoreType", CLIENT, STR, "JKS", 0, 0, NULL,   \
      PC_F_NOOP, NULL, "Key stores are not supported (see useKeyStoreTls).")                       \
    X(CLIENT_TRUSTSTORE_PATH, "pulsar.client.tlsTrustStorePath", CLIENT, STR, NULL, 0, 0, NULL,    \
      PC_F_NOOP, NULL, "Key stores are not supported (see useKeyStoreTls).")                       \
    X(CLIENT_TRUSTSTORE_PASSWORD, "pulsar.client.tlsTrustStorePassword", CLIENT, STR, NULL, 0, 0,  \
      NULL, PC_F_NOOP | PC_F_SECRET, NULL, "Key stores are not supported (see useKeyStoreTls).")   \
    X(CLIENT_TLS_CIPHERS, "pulsar.client.tlsCiphers", CLIENT, LIST, "", 0, 0, NULL, PC_F_NOOP,     \
      NULL, "OpenSSL's defaults apply.")                                                           \
    X(CLIENT_TLS_PROTOCOLS, "pulsar.client.tlsProtocols", CLIENT, LIST, "", 0, 0, NULL,            \
      PC_F_NOOP, NULL, "TLS 1.2 and later are used.")                                              \
    X(CLIENT_TLS_TRUST_CERTS, "pulsar.client.tlsTrustCertsFilePath", CLIENT, STR, NULL, 0, 0,      \
      NULL, 0, "tlsTrustCertsFilePath", "CA certificates (PEM) that verify the broker.")           \
    X(CLIENT_TLS_CERT_FILE, "pulsar.client.tlsCertificateFilePath", CLIENT, STR, NULL, 0, 0,       \
      NULL, 0, "tlsCertificateFilePath", "Client certificate (PEM) for mutual TLS.")               \
    X(CLIENT_TLS_KEY_FILE, "pulsar.client.tlsKeyFilePath", CLIENT, STR, NULL, 0, 0, NULL, 0,       \
      "tlsKeyFilePath", "Private key (PEM) of the client certificate.")                            \
    X(CLIENT_TLS_ALLOW_INSECURE, "pulsar.client.tlsAllowInsecureConnection", CLIENT, BOOL,         \
      "false", 0, 1, NULL, 0, "tlsAllowInsecureConnection",                                        \
      "Accept any broker certificate (tests only).")                                               \
    X(CLIENT_TLS_HOSTNAME_VERIFICATION, "pulsar.client.tlsHostnameVerificationEnable", CLIENT,     \
      BOOL, "true", 0, 1, NULL, 0, "tlsHostnameVerificationEnable",                                \
      "Check the broker certificate names the host dialled. On by default in pulsarc (off in "     \
      "Flink).")                                                                                   \
    X(CLIENT_MEMORY_LIMIT, "pulsar.client.memoryLimitBytes", CLIENT, INT, "67108864", 0,           \
      INT64_MAX, NULL, 0, "memoryLimitBytes",                                                      \
      "Pending payload bytes a client may hold; 0: no limit.")                                     \
    X(CLIENT_PROXY_URL, "pulsar.client.proxyServiceUrl", CLIENT, STR, NULL, 0, 0, NULL,            \
      PC_F_DEFONLY, NULL, "SNI proxies are not supported yet; a value is refused.")                \
    X(CLIENT_PROXY_PROTOCOL, "pulsar.client.proxyProtocol", CLIENT, ENUM, "SNI", 0, 0, "SNI",      \
      PC_F_NOOP, NULL, "See proxyServiceUrl.")                                                     \
    X(CLIENT_ENABLE_TRANSACTION, "pulsar.client.enableTransaction", CLIENT, BOOL, "false", 0, 1,   \
      NULL, 0, NULL, "Transactions for the exactly-once sink (forced on by it).")                  \
    X(CLIENT_DNS_BIND, "pulsar.client.dnsLookupBindAddress", CLIENT, STR, NULL, 0, 0, NULL,        \
      PC_F_NOOP, NULL, "The system resolver is used.")                                             \
    X(CLIENT_SOCKS5_ADDRESS, "pulsar.client.socks5ProxyAddress", CLIENT, STR, NULL, 0, 0, NULL,    \
      PC_F_DEFONLY, NULL, "SOCKS5 proxies are not supported; a value is refused.")                 \
    X(CLIENT_SOCKS5_USER, "pulsar.client.socks5ProxyUsername", CLIENT, STR, NULL, 0, 0, NULL,      \
      PC_F_NOOP, NULL, "See socks5ProxyAddress.")                                                  \
    X(CLIENT_SOCKS5_PASSWORD, "pulsar.client.socks5ProxyPassword", CLIENT, STR, NULL, 0, 0, NULL,  \
      PC_F_NOOP | PC_F_SECRET, NULL, "See socks5ProxyAddress.")                                    \
    X(CLIENT_DEFAULT_TENANT, "pulsar.client.defaultTenant", CLIENT, STR, "public", 0, 0, NULL,     \
      PC_F_ADDED, "defaultTenant", "Tenant of short topic names.")                                 \
    X(CLIENT_DEFAULT_NAMESPACE, "pulsar.client.defaultNamespace", CLIENT, STR, "default", 0, 0,    \
      NULL, PC_F_ADDED, "defaultNamespace",                                                        \
      "Namespace of short topic names; \"tenant/ns\" sets the tenant too.")                        \
    /* ---- pulsar.admin.* (v4.0; HEAD has no admin client) -------------------------------- */    \
    X(ADMIN_URL, "pulsar.admin.adminUrl", ADMIN, STR, NULL, 0, 0, NULL, PC_F_LEGACY,               \
      "webServiceUrl", "HTTP admin URL, http(s)://h1:8080[,h2:8080].")                             \
    X(ADMIN_CONNECT_TIMEOUT, "pulsar.admin.connectTimeout", ADMIN, INT, "60000", 1, 3600000,       \
      NULL, PC_F_LEGACY | PC_F_NOOP, NULL, "The admin client uses connectionTimeoutMs.")           \
    X(ADMIN_READ_TIMEOUT, "pulsar.admin.readTimeout", ADMIN, INT, "60000", 1, 3600000, NULL,       \
      PC_F_LEGACY | PC_F_NOOP, NULL, "The admin client uses operationTimeoutMs.")                  \
    X(ADMIN_REQUEST_TIMEOUT, "pulsar.admin.requestTimeout", ADMIN, INT, "300000", 1, 3600000,      \
      NULL, PC_F_LEGACY | PC_F_NOOP, NULL, "The admin client uses operationTimeoutMs.")            \
    X(ADMIN_CERT_REFRESH, "pulsar.admin.autoCertRefreshTime", ADMIN, INT, "300000", 1, 86400000,   \
      NULL, PC_F_LEGACY | PC_F_NOOP, NULL, "Certificates are read at each connection.")            \
    X(ADMIN_REQUEST_RETRIES, "pulsar.admin.requestRetries", ADMIN, INT, "5", 0, 1000, NULL,        \
      PC_F_LEGACY | PC_F_NOOP, NULL, "Not used by pulsarc.")                                       \
    X(ADMIN_REQUEST_WAIT, "pulsar.admin.requestWaitMillis", ADMIN, INT, "3000", 0, 3600000, NULL,  \
      PC_F_LEGACY | PC_F_NOOP, NULL, "Not used by pulsarc.")                                       \
    X(ADMIN_REQUEST_RATES, "pulsar.admin.requestRates", ADMIN, INT, "5", 1, 1000000, NULL,         \
      PC_F_LEGACY | PC_F_NOOP, NULL, "Not used by pulsarc.")                                       \
    /* ---- pulsar.consumer.* ---------------------------------------------------------------- */  \
    X(CONSUMER_SUBSCRIPTION_NAME, "pulsar.consumer.subscriptionName", CONSUMER, STR, NULL, 0, 0,   \
      NULL, 0, "subscriptionName", "The source's subscription (required by a source).")            \
    X(CONSUMER_SUBSCRIPTION_TYPE, "pulsar.consumer.subscriptionType", CONSUMER, ENUM,              \
      "Exclusive", 0, 0, "Exclusive|Shared|Failover|Key_Shared", PC_F_LEGACY, "subscriptionType",  \
      "v3.0 key (default Shared there). The 4.x source reads each split with one Exclusive "       \
      "consumer.")                                                                                 \
    X(CONSUMER_SUBSCRIPTION_MODE, "pulsar.consumer.subscriptionMode", CONSUMER, ENUM, "Durable",   \
      0, 0, "Durable|NonDurable", 0, NULL, "Durable subscriptions keep their position.")           \
    X(CONSUMER_INITIAL_POSITION, "pulsar.consumer.subscriptionInitialPosition", CONSUMER, ENUM,    \
      NULL, 0, 0, "Latest|Earliest", PC_F_LEGACY, "subscriptionInitialPosition",                   \
      "v4.0 name of pulsar.source.initialCursor.")                                                 \
    X(CONSUMER_RECEIVER_QUEUE, "pulsar.consumer.receiverQueueSize", CONSUMER, INT, "1000", 1,      \
      1000000, NULL, 0, "receiverQueueSize", "Messages the broker may push ahead of receive().")   \
    X(CONSUMER_ACK_GROUP_TIME, "pulsar.consumer.acknowledgementsGroupTimeMicros", CONSUMER, INT,   \
      "100000", 0, 3600000000, NULL, 0, "acknowledgementsGroupTimeMicros",                         \
      "Acks are grouped this long.")                                                               \
    X(CONSUMER_NACK_DELAY, "pulsar.consumer.negativeAckRedeliveryDelayMicros", CONSUMER, INT,      \
      "60000000", 0, 86400000000, NULL, 0, "negativeAckRedeliveryDelayMicros",                     \
      "Delay before a negatively acked message comes back.")                                       \
    X(CONSUMER_MAX_TOTAL_QUEUE, "pulsar.consumer.maxTotalReceiverQueueSizeAcrossPartitions",       \
      CONSUMER, INT, "50000", 1, 100000000, NULL, PC_F_NOOP, NULL,                                 \
      "One consumer per split: receiverQueueSize bounds each.")                                    \
    X(CONSUMER_NAME, "pulsar.consumer.consumerName", CONSUMER, STR, NULL, 0, 0, NULL, 0,           \
      "consumerName", "Consumer name.")                                                            \
    X(CONSUMER_ACK_TIMEOUT, "pulsar.consumer.ackTimeoutMillis", CONSUMER, INT, "0", 0, 86400000,   \
      NULL, 0, "ackTimeoutMillis", "Redeliver messages unacked this long; 0: off.")                \
    X(CONSUMER_TICK_DURATION, "pulsar.consumer.tickDurationMillis", CONSUMER, INT, "1000", 1,      \
      3600000, NULL, 0, "tickDurationMillis", "Granularity of the ack-timeout sweep.")             \
    X(CONSUMER_PRIORITY, "pulsar.consumer.priorityLevel", CONSUMER, INT, "0", 0, 1000, NULL, 0,    \
      "priorityLevel", "Shared/Failover priority; lower first.")                                   \
    X(CONSUMER_MAX_PENDING_CHUNKED, "pulsar.consumer.maxPendingChunkedMessage", CONSUMER, INT,     \
      "10", 1, 100000, NULL, PC_F_NOOP, NULL, "Chunk reassembly limits are fixed in pulsarc.")     \
    X(CONSUMER_AUTO_ACK_OLDEST_CHUNK, "pulsar.consumer.autoAckOldestChunkedMessageOnQueueFull",    \
      CONSUMER, BOOL, "false", 0, 1, NULL, PC_F_NOOP, NULL, "See maxPendingChunkedMessage.")       \
    X(CONSUMER_CHUNK_EXPIRE, "pulsar.consumer.expireTimeOfIncompleteChunkedMessageMillis",         \
      CONSUMER, INT, "60000", 1, 86400000, NULL, PC_F_NOOP, NULL,                                  \
      "See maxPendingChunkedMessage.")                                                             \
    X(CONSUMER_CRYPTO_FAILURE, "pulsar.consumer.cryptoFailureAction", CONSUMER, ENUM, "FAIL", 0,   \
      0, "FAIL|DISCARD|CONSUME", PC_F_NOOP, NULL, "End-to-end encryption is not supported.")       \
    X(CONSUMER_PROPERTIES, "pulsar.consumer.properties", CONSUMER, MAP, "", 0, 0, NULL,            \
      PC_F_NOOP, NULL, "Consumer metadata sent at subscribe; not sent by pulsarc yet.")            \
    X(CONSUMER_READ_COMPACTED, "pulsar.consumer.readCompacted", CONSUMER, BOOL, "false", 0, 1,     \
      NULL, 0, "readCompacted", "Read the compacted view of the topic.")                           \
    X(CONSUMER_RETRY_ENABLE, "pulsar.consumer.retryEnable", CONSUMER, BOOL, "false", 0, 1, NULL,   \
      PC_F_NOOP, NULL, "Retry-letter topics are not supported.")                                   \
    X(CONSUMER_DLQ_MAX_REDELIVER, "pulsar.consumer.deadLetterPolicy.maxRedeliverCount", CONSUMER,  \
      INT, NULL, 1, 1000000, NULL, PC_F_NOOP, NULL, "Dead-letter topics are not supported.")       \
    X(CONSUMER_DLQ_TOPIC, "pulsar.consumer.deadLetterPolicy.deadLetterTopic", CONSUMER, STR,       \
      NULL, 0, 0, NULL, PC_F_NOOP, NULL, "Dead-letter topics are not supported.")                  \
    X(CONSUMER_RETRY_TOPIC, "pulsar.consumer.deadLetterPolicy.retryLetterTopic", CONSUMER, STR,    \
      NULL, 0, 0, NULL, PC_F_NOOP, NULL, "Retry-letter topics are not supported.")                 \
    X(CONSUMER_REPLICATE_SUB, "pulsar.consumer.replicateSubscriptionState", CONSUMER, BOOL,        \
      "false", 0, 1, NULL, PC_F_NOOP, NULL, "Geo-replicated subscriptions are not supported.")     \
    X(CONSUMER_ACK_RECEIPT, "pulsar.consumer.ackReceiptEnabled", CONSUMER, BOOL, "false", 0, 1,    \
      NULL, 0, "ackReceiptEnabled", "Each ack waits for the broker's receipt.")                    \
    X(CONSUMER_POOL_MESSAGES, "pulsar.consumer.poolMessages", CONSUMER, BOOL, "false", 0, 1,       \
      NULL, PC_F_NOOP, NULL, "pulsarc always pools received messages.")                            \
    X(CONSUMER_AUTO_SCALED_QUEUE, "pulsar.consumer.autoScaledReceiverQueueSizeEnabled", CONSUMER,  \
      BOOL, "true", 0, 1, NULL, PC_F_NOOP, NULL, "The queue size is fixed in pulsarc.")            \
    X(CONSUMER_SUB_PROPERTIES, "pulsar.consumer.subscriptionProperties", CONSUMER, MAP, NULL, 0,   \
      0, NULL, PC_F_NOOP, NULL, "Subscription properties are not sent by pulsarc yet.")            \
    X(CONSUMER_AUTO_UPDATE_PARTITIONS, "pulsar.consumer.autoUpdatePartitionsIntervalSeconds",      \
      CONSUMER, INT, "60", 1, 86400, NULL, PC_F_LEGACY | PC_F_NOOP, NULL,                          \
      "v3.0 key; the source discovers partitions itself.")                                         \
    /* ---- pulsar.producer.* ---------------------------------------------------------------- */  \
    X(PRODUCER_NAME, "pulsar.producer.producerName", PRODUCER, STR, NULL, 0, 0, NULL, 0,           \
      "producerName", "Producer name; empty lets the broker choose.")                              \
    X(PRODUCER_SEND_TIMEOUT, "pulsar.producer.sendTimeoutMs", PRODUCER, INT, "30000", 0,           \
      86400000, NULL, 0, "sendTimeoutMs",                                                          \
      "A send without receipt fails after this long; 0: never.")                                   \
    X(PRODUCER_BATCH_DELAY, "pulsar.producer.batchingMaxPublishDelayMicros", PRODUCER, INT,        \
      "1000", 1, 3600000000, NULL, 0, "batchingMaxPublishDelayMicros", "Longest a batch waits.")   \
    X(PRODUCER_PARTITION_SWITCH,                                                                   \
      "pulsar.producer.batchingPartitionSwitchFrequencyByPublishDelay", PRODUCER, INT, "10", 1,    \
      1000000, NULL, 0, "batchingPartitionSwitchFrequencyByPublishDelay",                          \
      "Round-robin with batching: batching delays per partition.")                                 \
    X(PRODUCER_BATCH_MAX_MESSAGES, "pulsar.producer.batchingMaxMessages", PRODUCER, INT, "1000",   \
      1, 1000000, NULL, 0, "batchingMaxMessages", "Messages per batch.")                           \
    X(PRODUCER_BATCH_MAX_BYTES, "pulsar.producer.batchingMaxBytes", PRODUCER, INT, "131072", 1,    \
      104857600, NULL, 0, "batchingMaxBytes", "Payload bytes per batch.")                          \
    X(PRODUCER_BATCHING, "pulsar.producer.batchingEnabled", PRODUCER, BOOL, "true", 0, 1, NULL,    \
      0, "batchingEnabled", "Group messages into batches.")                                        \
    X(PRODUCER_CHUNKING, "pulsar.producer.chunkingEnabled", PRODUCER, BOOL, "false", 0, 1, NULL,   \
      0, "chunkingEnabled", "Split large messages into chunks.")                                   \
    X(PRODUCER_CHUNK_MAX, "pulsar.producer.chunkMaxMessageSize", PRODUCER, INT, "-1", -1,          \
      2147483647, NULL, 0, "chunkMaxMessageSize", "Largest chunk; -1: the broker's limit.")        \
    X(PRODUCER_COMPRESSION, "pulsar.producer.compressionType", PRODUCER, ENUM, "NONE", 0, 0,       \
      "NONE|LZ4|ZLIB|ZSTD|SNAPPY", 0, "compressionType", "Codec of each entry.")                   \
    X(PRODUCER_INITIAL_SEQUENCE, "pulsar.producer.initialSequenceId", PRODUCER, INT, NULL, -1,     \
      INT64_MAX, NULL, 0, "initialSequenceId", "First sequence id minus one.")                     \
    X(PRODUCER_CRYPTO_FAILURE, "pulsar.producer.producerCryptoFailureAction", PRODUCER, ENUM,      \
      "FAIL", 0, 0, "FAIL|SEND", PC_F_NOOP, NULL, "End-to-end encryption is not supported.")       \
    X(PRODUCER_PROPERTIES, "pulsar.producer.properties", PRODUCER, MAP, "", 0, 0, NULL,            \
      PC_F_NOOP, NULL, "Producer metadata; not sent by pulsarc yet.")                              \
    X(PRODUCER_MAX_PENDING_ACROSS, "pulsar.producer.maxPendingMessagesAcrossPartitions",           \
      PRODUCER, INT, NULL, 1, 100000000, NULL, PC_F_LEGACY, "maxPendingMessagesAcrossPartitions",  \
      "v3.0 key: pending limit summed over partitions.")                                           \
    /* ---- pulsar.source.* ------------------------------------------------------------------ */  \
    X(SOURCE_DISCOVERY_INTERVAL, "pulsar.source.partitionDiscoveryIntervalMs", SOURCE, INT,        \
      "300000", -1, 86400000000, NULL, 0, NULL,                                                    \
      "New partitions are looked for this often; <= 0: once.")                                     \
    X(SOURCE_AUTO_ACK, "pulsar.source.enableAutoAcknowledgeMessage", SOURCE, BOOL, "false", 0, 1,  \
      NULL, 0, NULL, "Ack the consumed position periodically, checkpoints or not.")                \
    X(SOURCE_AUTO_COMMIT_INTERVAL, "pulsar.source.autoCommitCursorInterval", SOURCE, INT, "5000",  \
      1, 86400000, NULL, 0, NULL, "Period of those acks, ms.")                                     \
    X(SOURCE_FETCH_ONE_TIME, "pulsar.source.fetchOneMessageTime", SOURCE, INT, NULL, 1, 3600000,   \
      NULL, 0, NULL, "Wait per receive in a fetch, ms; unset: the rest of maxFetchTime.")          \
    X(SOURCE_MAX_FETCH_TIME, "pulsar.source.maxFetchTime", SOURCE, INT, "10000", 1, 3600000,       \
      NULL, 0, NULL, "Longest fetch batch, ms.")                                                   \
    X(SOURCE_MAX_FETCH_RECORDS, "pulsar.source.maxFetchRecords", SOURCE, INT, "100", 1, 1000000,   \
      NULL, 0, NULL, "Most records per fetch batch.")                                              \
    X(SOURCE_VERIFY_OFFSETS, "pulsar.source.verifyInitialOffsets", SOURCE, ENUM,                   \
      "WARN_ON_MISMATCH", 0, 0, "FAIL_ON_MISMATCH|WARN_ON_MISMATCH", 0, NULL,                      \
      "What a failed restore seek does: fail, or log and continue.")                               \
    X(SOURCE_KEY_SHARED_OOO, "pulsar.source.allowKeySharedOutOfOrderDelivery", SOURCE, BOOL,       \
      "false", 0, 1, NULL, 0, "keySharedAllowOutOfOrderDelivery",                                  \
      "Key-range splits may relax per-key order at consumer changes.")                             \
    X(SOURCE_SCHEMA_EVOLUTION, "pulsar.source.enableSchemaEvolution", SOURCE, BOOL, "false", 0,    \
      1, NULL, 0, NULL,                                                                            \
      "Each split subscribes declaring pulsar.source.schemaType: the broker checks the topic's "   \
      "schema against it (IncompatibleSchema fails the source, naming the split).")                \
    X(SOURCE_SCHEMA_TYPE, "pulsar.source.schemaType", SOURCE, STR, NULL, 0, 0, NULL, PC_F_ADDED,   \
      NULL, "The schema the application reads, as the core schemaType (AVRO, JSON, "               \
      "STRING, INT64, ...); with enableSchemaEvolution.")                                          \
    X(SOURCE_SCHEMA_DEFINITION, "pulsar.source.schemaDefinition", SOURCE, STR, NULL, 0, 0, NULL,   \
      PC_F_ADDED, NULL, "Its definition (the Avro schema JSON for AVRO / JSON).")                  \
    X(SOURCE_METRICS, "pulsar.source.enableMetrics", SOURCE, BOOL, "true", 0, 1, NULL, 0, NULL,    \
      "Expose the source's counters.")                                                             \
    X(SOURCE_RESET_CURSOR, "pulsar.source.resetSubscriptionCursor", SOURCE, BOOL, "false", 0, 1,   \
      NULL, 0, NULL, "Without a checkpoint, move existing subscriptions to the start cursor.")     \
    X(SOURCE_INITIAL_CURSOR, "pulsar.source.initialCursor", SOURCE, ENUM, "Latest", 0, 0,          \
      "Latest|Earliest", 0, "subscriptionInitialPosition",                                         \
      "Where a subscription the broker lacks starts.")                                             \
    X(SOURCE_TXN_TIMEOUT, "pulsar.source.transactionTimeoutMillis", SOURCE, INT, "10800000", 1,    \
      INT64_MAX, NULL, PC_F_LEGACY, NULL,                                                          \
      "Lifetime of a Shared / Key_Shared source's acknowledgement transactions (one per "          \
      "checkpoint, used when the client has enableTransaction); keep it above a few checkpoint "   \
      "intervals plus the restart time.")                                                          \
    X(SOURCE_SUBSCRIPTION_NAMESPACE, "pulsar.source.subscriptionNamespace", SOURCE, STR, NULL, 0,  \
      0, NULL, PC_F_ADDED, NULL,                                                                   \
      "\"tenant/ns\" (or \"ns\") holding the source's own bookkeeping topics, like a reader "      \
      "group's scope; default: the default tenant/namespace.")                                     \
    /* ---- pulsar.sink.* -------------------------------------------------------------------- */  \
    X(SINK_DELIVERY_GUARANTEE, "pulsar.sink.deliveryGuarantee", SINK, ENUM, "none", 0, 0,          \
      "exactly-once|at-least-once|none", 0, NULL, "What the sink promises at a checkpoint.")       \
    X(SINK_TXN_TIMEOUT, "pulsar.sink.transactionTimeoutMillis", SINK, INT, "10800000", 1,          \
      INT64_MAX, NULL, 0, NULL, "Timeout of the exactly-once sink's transactions.")                \
    X(SINK_METADATA_REFRESH, "pulsar.sink.topicMetadataRefreshInterval", SINK, INT, "1800000", 1,  \
      INT64_MAX, NULL, 0, NULL, "Partition lists are refreshed this often, ms.")                   \
    X(SINK_KEY_HASH, "pulsar.sink.messageKeyHash", SINK, ENUM, "murmur-3-32-hash", 0, 0,           \
      "java-hash|murmur-3-32-hash", 0, NULL, "Key hash of message-key-hash routing.")              \
    X(SINK_SCHEMA_EVOLUTION, "pulsar.sink.enableSchemaEvolution", SINK, BOOL, "false", 0, 1,       \
      NULL, 0, NULL,                                                                               \
      "The sink's producers declare pulsar.sink.schemaType; the broker registers it "              \
      "or checks it against each topic's (IncompatibleSchema fails the write).")                   \
    X(SINK_SCHEMA_TYPE, "pulsar.sink.schemaType", SINK, STR, NULL, 0, 0, NULL, PC_F_ADDED, NULL,   \
      "The schema the sink writes, as the core schemaType; with " "enableSchemaEvolution.")        \
    X(SINK_SCHEMA_DEFINITION, "pulsar.sink.schemaDefinition", SINK, STR, NULL, 0, 0, NULL,         \
      PC_F_ADDED, NULL, "Its definition (the Avro schema JSON for AVRO / JSON).")                  \
    X(SINK_MAX_RECOMMIT, "pulsar.sink.maxRecommitTimes", SINK, INT, "5", 0, 1000, NULL, 0, NULL,   \
      "Retries of a transaction commit.")                                                          \
    X(SINK_METRICS, "pulsar.sink.enableMetrics", SINK, BOOL, "true", 0, 1, NULL, 0, NULL,          \
      "Expose the sink's counters.")                                                               \
    X(SINK_VALIDATE_BYTES, "pulsar.sink.validateSinkMessageBytes", SINK, BOOL, "false", 0, 1,      \
      NULL, PC_F_NOOP, NULL, "pulsarc has no schema registry support.")                            \
    X(SINK_MAX_PENDING, "pulsar.sink.maxPendingMessages", SINK, INT, NULL, 1, 10000000, NULL,      \
      PC_F_LEGACY, "maxPendingMessages", "v3.0 key: pending messages per producer.")

typedef enum pc_cc_id {
#define PC_CC_ENUM(id, ...) PC_CC_##id,
    PC_CC_PROPS(PC_CC_ENUM)
#undef PC_CC_ENUM
    PC_CC__COUNT
} pc_cc_id_t;

extern const pc_prop_t pc_cc_props[PC_CC__COUNT];
/* The rows above, for lookup and the generated reference. */
extern const pc_prop_table_t pc_cc_table;
#endif
