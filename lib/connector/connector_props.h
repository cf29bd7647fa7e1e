/*
 * The connector's one property table: every pulsar.client.*, pulsar.admin.*,
 * pulsar.source.*, pulsar.sink.*, pulsar.producer.* and pulsar.consumer.*
 * key, in the Flink connector's naming so that configurations port over.
 * Validation, the getters, the mapping onto the core client configuration
 * (lib/conf/props.h) and the generated reference all come from here; the
 * values are read by lib/conf/value.c, the parser the client's table uses.
 *
 * X(id, "key", type, default, min, max, "choices", "core key", scale, flags, "doc")
 *  - default NULL: unset (the key has no value until one is given).
 *  - core key: the pulsarc_conf_t key the value is copied to by
 *    pulsarc_connector_config_to_client_conf(), NULL when the connector
 *    runtime reads it itself (or nothing does, see CC_F_NOOP).
 *  - scale: the core value is value / scale (nanoseconds → milliseconds).
 *  - ENUM choices are '|'-separated; matching ignores case and treats '-'
 *    and '_' alike; the stored text is the spelling of the table.
 *
 * Where pulsarc's default differs from Flink's, the doc line says so
 * (tlsHostnameVerificationEnable: on, as everywhere in pulsarc).
 */
#ifndef PC_CONNECTOR_PROPS_H
#define PC_CONNECTOR_PROPS_H
#include <stdint.h>

/* Flags: why a key is special. */
#define CC_F_SECRET 0x1  /* never echoed in errors or dumps */
#define CC_F_NOOP 0x2    /* accepted so configurations load; pulsarc does not use it (yet) */
#define CC_F_DEFONLY 0x4 /* only the default is supported; another value is refused */
#define CC_F_LEGACY 0x8  /* a key of the v3.0 / v4.0 connector, still accepted */
#define CC_F_PULSARC 0x10 /* a pulsarc addition, not a Flink key */

#define CC_US 1            /* no scaling */
#define CC_NS_MS 1000000   /* nanoseconds in the table, milliseconds in the core */
#define CC_I64MAX INT64_MAX

#define PC_CC_PROPS(X)                                                                            \
    /* ---- pulsar.client.* ---------------------------------------------------------------- */ \
    X(CLIENT_SERVICE_URL, "pulsar.client.serviceUrl", STR, NULL, 0, 0, NULL, "serviceUrl", CC_US, 0, \
      "Binary-protocol URL, pulsar://h1:6650[,h2:6650] or pulsar+ssl://...")                     \
    X(CLIENT_AUTH_PLUGIN, "pulsar.client.authPluginClassName", STR, NULL, 0, 0, NULL, "authPlugin", \
      CC_US, 0, "Authentication method: the Java class name or its short name (token, tls).")   \
    X(CLIENT_AUTH_PARAMS, "pulsar.client.authParams", STR, NULL, 0, 0, NULL, "authParams", CC_US,  \
      CC_F_SECRET, "Parameters of the authentication method, as text (token:<jwt>, file:///...).") \
    X(CLIENT_AUTH_PARAM_MAP, "pulsar.client.authParamMap", MAP, NULL, 0, 0, NULL, "authParams",   \
      CC_US, CC_F_SECRET, "The same parameters as k1:v1,k2:v2; conflicts with authParams.")      \
    X(CLIENT_OPERATION_TIMEOUT, "pulsar.client.operationTimeoutMs", INT, "30000", 1, 3600000, NULL, \
      "operationTimeoutMs", CC_US, 0, "Timeout of each request to the broker.")                  \
    X(CLIENT_LOOKUP_TIMEOUT, "pulsar.client.lookupTimeoutMs", INT, "-1", -1, 3600000, NULL, NULL,  \
      CC_US, CC_F_NOOP, "Lookups use operationTimeoutMs in pulsarc.")                            \
    X(CLIENT_STATS_INTERVAL, "pulsar.client.statsIntervalSeconds", INT, "60", 0, 86400, NULL, NULL, \
      CC_US, CC_F_NOOP, "pulsarc keeps counters always; no periodic stats log.")                \
    X(CLIENT_NUM_IO_THREADS, "pulsar.client.numIoThreads", INT, "1", 1, 1024, NULL, NULL, CC_US,  \
      CC_F_NOOP, "pulsarc runs one network thread per client.")                                \
    X(CLIENT_NUM_LISTENER_THREADS, "pulsar.client.numListenerThreads", INT, "1", 1, 1024, NULL,   \
      NULL, CC_US, CC_F_NOOP, "pulsarc runs one callback thread per client.")                  \
    X(CLIENT_CONNECTIONS_PER_BROKER, "pulsar.client.connectionsPerBroker", INT, "1", 1, 1024, NULL, \
      NULL, CC_US, CC_F_NOOP, "pulsarc keeps one connection per broker.")                      \
    X(CLIENT_CONN_MAX_IDLE, "pulsar.client.connectionMaxIdleSeconds", INT, "180", -1, 86400, NULL, \
      NULL, CC_US, CC_F_NOOP, "Idle connections are kept open in pulsarc.")                    \
    X(CLIENT_TCP_NO_DELAY, "pulsar.client.useTcpNoDelay", BOOL, "true", 0, 1, NULL, NULL, CC_US,  \
      CC_F_NOOP, "pulsarc always sets TCP_NODELAY.")                                            \
    X(CLIENT_CONCURRENT_LOOKUP, "pulsar.client.concurrentLookupRequest", INT, "5000", 1, 1000000,  \
      NULL, NULL, CC_US, CC_F_NOOP, "Not limited separately in pulsarc.")                      \
    X(CLIENT_MAX_LOOKUP_REQUEST, "pulsar.client.maxLookupRequest", INT, "50000", 1, 1000000, NULL, \
      NULL, CC_US, CC_F_NOOP, "Not limited separately in pulsarc.")                            \
    X(CLIENT_MAX_LOOKUP_REDIRECTS, "pulsar.client.maxLookupRedirects", INT, "20", 1, 1000, NULL,   \
      "maxLookupRedirects", CC_US, 0, "Most LOOKUP redirects followed.")                        \
    X(CLIENT_MAX_REJECTED, "pulsar.client.maxNumberOfRejectedRequestPerConnection", INT, "50", 1,  \
      1000000, NULL, NULL, CC_US, CC_F_NOOP, "Not used by pulsarc.")                           \
    X(CLIENT_KEEPALIVE, "pulsar.client.keepAliveIntervalSeconds", INT, "30", 0, 86400, NULL,       \
      "keepAliveIntervalSeconds", CC_US, 0, "PING interval; 0 turns keep-alive off.")           \
    X(CLIENT_CONNECTION_TIMEOUT, "pulsar.client.connectionTimeoutMs", INT, "10000", 1, 3600000,    \
      NULL, "connectionTimeoutMs", CC_US, 0, "TCP connect plus the protocol handshake.")        \
    X(CLIENT_REQUEST_TIMEOUT, "pulsar.client.requestTimeoutMs", INT, "60000", 1, 3600000, NULL,    \
      NULL, CC_US, CC_F_NOOP, "pulsarc bounds each request by operationTimeoutMs.")            \
    X(CLIENT_INITIAL_BACKOFF, "pulsar.client.initialBackoffIntervalNanos", INT, "100000000",      \
      1000000, 3600000000000, NULL, "initialBackoffIntervalMs", CC_NS_MS, 0,                    \
      "First reconnect delay, in ns (the core keeps ms).")                                      \
    X(CLIENT_MAX_BACKOFF, "pulsar.client.maxBackoffIntervalNanos", INT, "60000000000", 1000000,   \
      86400000000000, NULL, "maxBackoffIntervalMs", CC_NS_MS, 0, "Largest reconnect delay, in ns.") \
    X(CLIENT_BUSY_WAIT, "pulsar.client.enableBusyWait", BOOL, "false", 0, 1, NULL, NULL, CC_US,    \
      CC_F_NOOP, "pulsarc's loop always sleeps in epoll.")                                       \
    X(CLIENT_LISTENER_NAME, "pulsar.client.listenerName", STR, NULL, 0, 0, NULL, NULL, CC_US,      \
      CC_F_DEFONLY, "Advertised listener names are not supported yet: lookups would return the " \
      "wrong addresses, so a value is refused rather than ignored.")                            \
    X(CLIENT_USE_KEYSTORE_TLS, "pulsar.client.useKeyStoreTls", BOOL, "false", 0, 1, NULL, NULL,   \
      CC_US, CC_F_DEFONLY, "Java key stores are not supported; use the PEM file keys.")          \
    X(CLIENT_SSL_PROVIDER, "pulsar.client.sslProvider", STR, NULL, 0, 0, NULL, NULL, CC_US,        \
      CC_F_NOOP, "pulsarc uses OpenSSL.")                                                       \
    X(CLIENT_KEYSTORE_TYPE, "pulsar.client.tlsKeyStoreType", STR, "JKS", 0, 0, NULL, NULL, CC_US,  \
      CC_F_NOOP, "Key stores are not supported (see useKeyStoreTls).")                         \
    X(CLIENT_KEYSTORE_PATH, "pulsar.client.tlsKeyStorePath", STR, NULL, 0, 0, NULL, NULL, CC_US,   \
      CC_F_NOOP, "Key stores are not supported (see useKeyStoreTls).")                         \
    X(CLIENT_KEYSTORE_PASSWORD, "pulsar.client.tlsKeyStorePassword", STR, NULL, 0, 0, NULL, NULL,  \
      CC_US, CC_F_NOOP | CC_F_SECRET, "Key stores are not supported (see useKeyStoreTls).")     \
    X(CLIENT_TRUSTSTORE_TYPE, "pulsar.client.tlsTrustStoreType", STR, "JKS", 0, 0, NULL, NULL,     \
      CC_US, CC_F_NOOP, "Key stores are not supported (see useKeyStoreTls).")                   \
    X(CLIENT_TRUSTSTORE_PATH, "pulsar.client.tlsTrustStorePath", STR, NULL, 0, 0, NULL, NULL,      \
      CC_US, CC_F_NOOP, "Key stores are not supported (see useKeyStoreTls).")                   \
    X(CLIENT_TRUSTSTORE_PASSWORD, "pulsar.client.tlsTrustStorePassword", STR, NULL, 0, 0, NULL,    \
      NULL, CC_US, CC_F_NOOP | CC_F_SECRET, "Key stores are not supported (see useKeyStoreTls).") \
    X(CLIENT_TLS_CIPHERS, "pulsar.client.tlsCiphers", LIST, "", 0, 0, NULL, NULL, CC_US, CC_F_NOOP, \
      "OpenSSL's defaults apply.")                                                              \
    X(CLIENT_TLS_PROTOCOLS, "pulsar.client.tlsProtocols", LIST, "", 0, 0, NULL, NULL, CC_US,       \
      CC_F_NOOP, "TLS 1.2 and later are used.")                                                 \
    X(CLIENT_TLS_TRUST_CERTS, "pulsar.client.tlsTrustCertsFilePath", STR, NULL, 0, 0, NULL,        \
      "tlsTrustCertsFilePath", CC_US, 0, "CA certificates (PEM) that verify the broker.")      \
    X(CLIENT_TLS_CERT_FILE, "pulsar.client.tlsCertificateFilePath", STR, NULL, 0, 0, NULL,         \
      "tlsCertificateFilePath", CC_US, 0, "Client certificate (PEM) for mutual TLS.")           \
    X(CLIENT_TLS_KEY_FILE, "pulsar.client.tlsKeyFilePath", STR, NULL, 0, 0, NULL, "tlsKeyFilePath", \
      CC_US, 0, "Private key (PEM) of the client certificate.")                                \
    X(CLIENT_TLS_ALLOW_INSECURE, "pulsar.client.tlsAllowInsecureConnection", BOOL, "false", 0, 1,  \
      NULL, "tlsAllowInsecureConnection", CC_US, 0, "Accept any broker certificate (tests only).") \
    X(CLIENT_TLS_HOSTNAME_VERIFICATION, "pulsar.client.tlsHostnameVerificationEnable", BOOL,       \
      "true", 0, 1, NULL, "tlsHostnameVerificationEnable", CC_US, 0,                            \
      "Check the broker certificate names the host dialled. On by default in pulsarc (off in "  \
      "Flink).")                                                                                \
    X(CLIENT_MEMORY_LIMIT, "pulsar.client.memoryLimitBytes", INT, "67108864", 0, CC_I64MAX, NULL,  \
      "memoryLimitBytes", CC_US, 0, "Pending payload bytes a client may hold; 0: no limit.")    \
    X(CLIENT_PROXY_URL, "pulsar.client.proxyServiceUrl", STR, NULL, 0, 0, NULL, NULL, CC_US,       \
      CC_F_DEFONLY, "SNI proxies are not supported yet; a value is refused.")                   \
    X(CLIENT_PROXY_PROTOCOL, "pulsar.client.proxyProtocol", ENUM, "SNI", 0, 0, "SNI", NULL, CC_US, \
      CC_F_NOOP, "See proxyServiceUrl.")                                                        \
    X(CLIENT_ENABLE_TRANSACTION, "pulsar.client.enableTransaction", BOOL, "false", 0, 1, NULL,     \
      NULL, CC_US, 0, "Transactions for the exactly-once sink (forced on by it).")              \
    X(CLIENT_DNS_BIND, "pulsar.client.dnsLookupBindAddress", STR, NULL, 0, 0, NULL, NULL, CC_US,   \
      CC_F_NOOP, "The system resolver is used.")                                               \
    X(CLIENT_SOCKS5_ADDRESS, "pulsar.client.socks5ProxyAddress", STR, NULL, 0, 0, NULL, NULL,      \
      CC_US, CC_F_DEFONLY, "SOCKS5 proxies are not supported; a value is refused.")             \
    X(CLIENT_SOCKS5_USER, "pulsar.client.socks5ProxyUsername", STR, NULL, 0, 0, NULL, NULL, CC_US, \
      CC_F_NOOP, "See socks5ProxyAddress.")                                                     \
    X(CLIENT_SOCKS5_PASSWORD, "pulsar.client.socks5ProxyPassword", STR, NULL, 0, 0, NULL, NULL,    \
      CC_US, CC_F_NOOP | CC_F_SECRET, "See socks5ProxyAddress.")                                \
    X(CLIENT_DEFAULT_TENANT, "pulsar.client.defaultTenant", STR, "public", 0, 0, NULL,             \
      "defaultTenant", CC_US, CC_F_PULSARC, "Tenant of short topic names.")                     \
    X(CLIENT_DEFAULT_NAMESPACE, "pulsar.client.defaultNamespace", STR, "default", 0, 0, NULL,      \
      "defaultNamespace", CC_US, CC_F_PULSARC,                                                  \
      "Namespace of short topic names; \"tenant/ns\" sets the tenant too.")                     \
    /* ---- pulsar.admin.* (v4.0; HEAD has no admin client) -------------------------------- */ \
    X(ADMIN_URL, "pulsar.admin.adminUrl", STR, NULL, 0, 0, NULL, "webServiceUrl", CC_US,           \
      CC_F_LEGACY, "HTTP admin URL, http(s)://h1:8080[,h2:8080].")                              \
    X(ADMIN_CONNECT_TIMEOUT, "pulsar.admin.connectTimeout", INT, "60000", 1, 3600000, NULL, NULL,  \
      CC_US, CC_F_LEGACY | CC_F_NOOP, "The admin client uses connectionTimeoutMs.")             \
    X(ADMIN_READ_TIMEOUT, "pulsar.admin.readTimeout", INT, "60000", 1, 3600000, NULL, NULL, CC_US, \
      CC_F_LEGACY | CC_F_NOOP, "The admin client uses operationTimeoutMs.")                     \
    X(ADMIN_REQUEST_TIMEOUT, "pulsar.admin.requestTimeout", INT, "300000", 1, 3600000, NULL, NULL, \
      CC_US, CC_F_LEGACY | CC_F_NOOP, "The admin client uses operationTimeoutMs.")              \
    X(ADMIN_CERT_REFRESH, "pulsar.admin.autoCertRefreshTime", INT, "300000", 1, 86400000, NULL,    \
      NULL, CC_US, CC_F_LEGACY | CC_F_NOOP, "Certificates are read at each connection.")        \
    X(ADMIN_REQUEST_RETRIES, "pulsar.admin.requestRetries", INT, "5", 0, 1000, NULL, NULL, CC_US,  \
      CC_F_LEGACY | CC_F_NOOP, "Not used by pulsarc.")                                          \
    X(ADMIN_REQUEST_WAIT, "pulsar.admin.requestWaitMillis", INT, "3000", 0, 3600000, NULL, NULL,   \
      CC_US, CC_F_LEGACY | CC_F_NOOP, "Not used by pulsarc.")                                   \
    X(ADMIN_REQUEST_RATES, "pulsar.admin.requestRates", INT, "5", 1, 1000000, NULL, NULL, CC_US,   \
      CC_F_LEGACY | CC_F_NOOP, "Not used by pulsarc.")                                          \
    /* ---- pulsar.consumer.* ---------------------------------------------------------------- */ \
    X(CONSUMER_SUBSCRIPTION_NAME, "pulsar.consumer.subscriptionName", STR, NULL, 0, 0, NULL,       \
      "subscriptionName", CC_US, 0, "The source's subscription (required by a source).")       \
    X(CONSUMER_SUBSCRIPTION_TYPE, "pulsar.consumer.subscriptionType", ENUM, "Exclusive", 0, 0,     \
      "Exclusive|Shared|Failover|Key_Shared", "subscriptionType", CC_US, CC_F_LEGACY,           \
      "v3.0 key (default Shared there). The 4.x source reads each split with one Exclusive "    \
      "consumer.")                                                                              \
    X(CONSUMER_SUBSCRIPTION_MODE, "pulsar.consumer.subscriptionMode", ENUM, "Durable", 0, 0,       \
      "Durable|NonDurable", NULL, CC_US, 0, "Durable subscriptions keep their position.")      \
    X(CONSUMER_INITIAL_POSITION, "pulsar.consumer.subscriptionInitialPosition", ENUM, NULL, 0, 0,  \
      "Latest|Earliest", "subscriptionInitialPosition", CC_US, CC_F_LEGACY,                     \
      "v4.0 name of pulsar.source.initialCursor.")                                              \
    X(CONSUMER_RECEIVER_QUEUE, "pulsar.consumer.receiverQueueSize", INT, "1000", 1, 1000000, NULL, \
      "receiverQueueSize", CC_US, 0, "Messages the broker may push ahead of receive().")        \
    X(CONSUMER_ACK_GROUP_TIME, "pulsar.consumer.acknowledgementsGroupTimeMicros", INT, "100000", 0, \
      3600000000, NULL, "acknowledgementsGroupTimeMicros", CC_US, 0, "Acks are grouped this long.") \
    X(CONSUMER_NACK_DELAY, "pulsar.consumer.negativeAckRedeliveryDelayMicros", INT, "60000000", 0, \
      86400000000, NULL, "negativeAckRedeliveryDelayMicros", CC_US, 0,                          \
      "Delay before a negatively acked message comes back.")                                    \
    X(CONSUMER_MAX_TOTAL_QUEUE, "pulsar.consumer.maxTotalReceiverQueueSizeAcrossPartitions", INT,  \
      "50000", 1, 100000000, NULL, NULL, CC_US, CC_F_NOOP,                                      \
      "One consumer per split: receiverQueueSize bounds each.")                                 \
    X(CONSUMER_NAME, "pulsar.consumer.consumerName", STR, NULL, 0, 0, NULL, "consumerName", CC_US, \
      0, "Consumer name.")                                                                      \
    X(CONSUMER_ACK_TIMEOUT, "pulsar.consumer.ackTimeoutMillis", INT, "0", 0, 86400000, NULL,       \
      "ackTimeoutMillis", CC_US, 0, "Redeliver messages unacked this long; 0: off.")           \
    X(CONSUMER_TICK_DURATION, "pulsar.consumer.tickDurationMillis", INT, "1000", 1, 3600000, NULL, \
      "tickDurationMillis", CC_US, 0, "Granularity of the ack-timeout sweep.")                  \
    X(CONSUMER_PRIORITY, "pulsar.consumer.priorityLevel", INT, "0", 0, 1000, NULL, "priorityLevel", \
      CC_US, 0, "Shared/Failover priority; lower first.")                                       \
    X(CONSUMER_MAX_PENDING_CHUNKED, "pulsar.consumer.maxPendingChunkedMessage", INT, "10", 1,      \
      100000, NULL, NULL, CC_US, CC_F_NOOP, "Chunk reassembly limits are fixed in pulsarc.")    \
    X(CONSUMER_AUTO_ACK_OLDEST_CHUNK, "pulsar.consumer.autoAckOldestChunkedMessageOnQueueFull",    \
      BOOL, "false", 0, 1, NULL, NULL, CC_US, CC_F_NOOP, "See maxPendingChunkedMessage.")       \
    X(CONSUMER_CHUNK_EXPIRE, "pulsar.consumer.expireTimeOfIncompleteChunkedMessageMillis", INT,    \
      "60000", 1, 86400000, NULL, NULL, CC_US, CC_F_NOOP, "See maxPendingChunkedMessage.")      \
    X(CONSUMER_CRYPTO_FAILURE, "pulsar.consumer.cryptoFailureAction", ENUM, "FAIL", 0, 0,          \
      "FAIL|DISCARD|CONSUME", NULL, CC_US, CC_F_NOOP, "End-to-end encryption is not supported.") \
    X(CONSUMER_PROPERTIES, "pulsar.consumer.properties", MAP, "", 0, 0, NULL, NULL, CC_US,         \
      CC_F_NOOP, "Consumer metadata sent at subscribe; not sent by pulsarc yet.")               \
    X(CONSUMER_READ_COMPACTED, "pulsar.consumer.readCompacted", BOOL, "false", 0, 1, NULL,         \
      "readCompacted", CC_US, 0, "Read the compacted view of the topic.")                       \
    X(CONSUMER_RETRY_ENABLE, "pulsar.consumer.retryEnable", BOOL, "false", 0, 1, NULL, NULL, CC_US, \
      CC_F_NOOP, "Retry-letter topics are not supported.")                                      \
    X(CONSUMER_DLQ_MAX_REDELIVER, "pulsar.consumer.deadLetterPolicy.maxRedeliverCount", INT, NULL, \
      1, 1000000, NULL, NULL, CC_US, CC_F_NOOP, "Dead-letter topics are not supported.")        \
    X(CONSUMER_DLQ_TOPIC, "pulsar.consumer.deadLetterPolicy.deadLetterTopic", STR, NULL, 0, 0,     \
      NULL, NULL, CC_US, CC_F_NOOP, "Dead-letter topics are not supported.")                   \
    X(CONSUMER_RETRY_TOPIC, "pulsar.consumer.deadLetterPolicy.retryLetterTopic", STR, NULL, 0, 0,  \
      NULL, NULL, CC_US, CC_F_NOOP, "Retry-letter topics are not supported.")                  \
    X(CONSUMER_REPLICATE_SUB, "pulsar.consumer.replicateSubscriptionState", BOOL, "false", 0, 1,   \
      NULL, NULL, CC_US, CC_F_NOOP, "Geo-replicated subscriptions are not supported.")         \
    X(CONSUMER_ACK_RECEIPT, "pulsar.consumer.ackReceiptEnabled", BOOL, "false", 0, 1, NULL,        \
      "ackReceiptEnabled", CC_US, 0, "Each ack waits for the broker's receipt.")                \
    X(CONSUMER_POOL_MESSAGES, "pulsar.consumer.poolMessages", BOOL, "false", 0, 1, NULL, NULL,     \
      CC_US, CC_F_NOOP, "pulsarc always pools received messages.")                              \
    X(CONSUMER_AUTO_SCALED_QUEUE, "pulsar.consumer.autoScaledReceiverQueueSizeEnabled", BOOL,      \
      "true", 0, 1, NULL, NULL, CC_US, CC_F_NOOP, "The queue size is fixed in pulsarc.")        \
    X(CONSUMER_SUB_PROPERTIES, "pulsar.consumer.subscriptionProperties", MAP, NULL, 0, 0, NULL,    \
      NULL, CC_US, CC_F_NOOP, "Subscription properties are not sent by pulsarc yet.")          \
    X(CONSUMER_AUTO_UPDATE_PARTITIONS, "pulsar.consumer.autoUpdatePartitionsIntervalSeconds", INT, \
      "60", 1, 86400, NULL, NULL, CC_US, CC_F_LEGACY | CC_F_NOOP,                               \
      "v3.0 key; the source discovers partitions itself.")                                      \
    /* ---- pulsar.producer.* ---------------------------------------------------------------- */ \
    X(PRODUCER_NAME, "pulsar.producer.producerName", STR, NULL, 0, 0, NULL, "producerName", CC_US, \
      0, "Producer name; empty lets the broker choose.")                                        \
    X(PRODUCER_SEND_TIMEOUT, "pulsar.producer.sendTimeoutMs", INT, "30000", 0, 86400000, NULL,     \
      "sendTimeoutMs", CC_US, 0, "A send without receipt fails after this long; 0: never.")    \
    X(PRODUCER_BATCH_DELAY, "pulsar.producer.batchingMaxPublishDelayMicros", INT, "1000", 1,       \
      3600000000, NULL, "batchingMaxPublishDelayMicros", CC_US, 0, "Longest a batch waits.")    \
    X(PRODUCER_PARTITION_SWITCH, "pulsar.producer.batchingPartitionSwitchFrequencyByPublishDelay", \
      INT, "10", 1, 1000000, NULL, "batchingPartitionSwitchFrequencyByPublishDelay", CC_US, 0,  \
      "Round-robin with batching: batching delays per partition.")                              \
    X(PRODUCER_BATCH_MAX_MESSAGES, "pulsar.producer.batchingMaxMessages", INT, "1000", 1, 1000000, \
      NULL, "batchingMaxMessages", CC_US, 0, "Messages per batch.")                             \
    X(PRODUCER_BATCH_MAX_BYTES, "pulsar.producer.batchingMaxBytes", INT, "131072", 1, 104857600,   \
      NULL, "batchingMaxBytes", CC_US, 0, "Payload bytes per batch.")                           \
    X(PRODUCER_BATCHING, "pulsar.producer.batchingEnabled", BOOL, "true", 0, 1, NULL,              \
      "batchingEnabled", CC_US, 0, "Group messages into batches.")                              \
    X(PRODUCER_CHUNKING, "pulsar.producer.chunkingEnabled", BOOL, "false", 0, 1, NULL,             \
      "chunkingEnabled", CC_US, 0, "Split large messages into chunks.")                         \
    X(PRODUCER_CHUNK_MAX, "pulsar.producer.chunkMaxMessageSize", INT, "-1", -1, 2147483647, NULL,  \
      "chunkMaxMessageSize", CC_US, 0, "Largest chunk; -1: the broker's limit.")                \
    X(PRODUCER_COMPRESSION, "pulsar.producer.compressionType", ENUM, "NONE", 0, 0,                 \
      "NONE|LZ4|ZLIB|ZSTD|SNAPPY", "compressionType", CC_US, 0, "Codec of each entry.")         \
    X(PRODUCER_INITIAL_SEQUENCE, "pulsar.producer.initialSequenceId", INT, NULL, -1, CC_I64MAX,    \
      NULL, "initialSequenceId", CC_US, 0, "First sequence id minus one.")                      \
    X(PRODUCER_CRYPTO_FAILURE, "pulsar.producer.producerCryptoFailureAction", ENUM, "FAIL", 0, 0,  \
      "FAIL|SEND", NULL, CC_US, CC_F_NOOP, "End-to-end encryption is not supported.")           \
    X(PRODUCER_PROPERTIES, "pulsar.producer.properties", MAP, "", 0, 0, NULL, NULL, CC_US,         \
      CC_F_NOOP, "Producer metadata; not sent by pulsarc yet.")                                 \
    X(PRODUCER_MAX_PENDING_ACROSS, "pulsar.producer.maxPendingMessagesAcrossPartitions", INT, NULL, \
      1, 100000000, NULL, "maxPendingMessagesAcrossPartitions", CC_US, CC_F_LEGACY,             \
      "v3.0 key: pending limit summed over partitions.")                                        \
    /* ---- pulsar.source.* ------------------------------------------------------------------ */ \
    X(SOURCE_DISCOVERY_INTERVAL, "pulsar.source.partitionDiscoveryIntervalMs", INT, "300000", -1,  \
      86400000000, NULL, NULL, CC_US, 0, "New partitions are looked for this often; <= 0: once.") \
    X(SOURCE_AUTO_ACK, "pulsar.source.enableAutoAcknowledgeMessage", BOOL, "false", 0, 1, NULL,    \
      NULL, CC_US, 0, "Ack the consumed position periodically, checkpoints or not.")            \
    X(SOURCE_AUTO_COMMIT_INTERVAL, "pulsar.source.autoCommitCursorInterval", INT, "5000", 1,       \
      86400000, NULL, NULL, CC_US, 0, "Period of those acks, ms.")                              \
    X(SOURCE_FETCH_ONE_TIME, "pulsar.source.fetchOneMessageTime", INT, NULL, 1, 3600000, NULL,     \
      NULL, CC_US, 0, "Wait per receive in a fetch, ms; unset: the rest of maxFetchTime.")      \
    X(SOURCE_MAX_FETCH_TIME, "pulsar.source.maxFetchTime", INT, "10000", 1, 3600000, NULL, NULL,   \
      CC_US, 0, "Longest fetch batch, ms.")                                                     \
    X(SOURCE_MAX_FETCH_RECORDS, "pulsar.source.maxFetchRecords", INT, "100", 1, 1000000, NULL,     \
      NULL, CC_US, 0, "Most records per fetch batch.")                                          \
    X(SOURCE_VERIFY_OFFSETS, "pulsar.source.verifyInitialOffsets", ENUM, "WARN_ON_MISMATCH", 0, 0, \
      "FAIL_ON_MISMATCH|WARN_ON_MISMATCH", NULL, CC_US, 0,                                      \
      "What a failed restore seek does: fail, or log and continue.")                            \
    X(SOURCE_KEY_SHARED_OOO, "pulsar.source.allowKeySharedOutOfOrderDelivery", BOOL, "false", 0,   \
      1, NULL, "keySharedAllowOutOfOrderDelivery", CC_US, 0,                                    \
      "Key-range splits may relax per-key order at consumer changes.")                          \
    X(SOURCE_SCHEMA_EVOLUTION, "pulsar.source.enableSchemaEvolution", BOOL, "false", 0, 1, NULL,   \
      NULL, CC_US, 0,                                                                            \
      "Each split subscribes declaring pulsar.source.schemaType: the broker checks the topic's " \
      "schema against it (IncompatibleSchema fails the source, naming the split).")            \
    X(SOURCE_SCHEMA_TYPE, "pulsar.source.schemaType", STR, NULL, 0, 0, NULL, NULL, CC_US,          \
      CC_F_PULSARC, "The schema the application reads, as the core schemaType (AVRO, JSON, "    \
      "STRING, INT64, ...); with enableSchemaEvolution.")                                       \
    X(SOURCE_SCHEMA_DEFINITION, "pulsar.source.schemaDefinition", STR, NULL, 0, 0, NULL, NULL,     \
      CC_US, CC_F_PULSARC, "Its definition (the Avro schema JSON for AVRO / JSON).")            \
    X(SOURCE_METRICS, "pulsar.source.enableMetrics", BOOL, "true", 0, 1, NULL, NULL, CC_US, 0,     \
      "Expose the source's counters.")                                                          \
    X(SOURCE_RESET_CURSOR, "pulsar.source.resetSubscriptionCursor", BOOL, "false", 0, 1, NULL,     \
      NULL, CC_US, 0, "Without a checkpoint, move existing subscriptions to the start cursor.") \
    X(SOURCE_INITIAL_CURSOR, "pulsar.source.initialCursor", ENUM, "Latest", 0, 0,                  \
      "Latest|Earliest", "subscriptionInitialPosition", CC_US, 0,                               \
      "Where a subscription the broker lacks starts.")                                          \
    X(SOURCE_TXN_TIMEOUT, "pulsar.source.transactionTimeoutMillis", INT, "10800000", 1,            \
      CC_I64MAX, NULL, NULL, CC_US, CC_F_LEGACY,                                                \
      "Lifetime of a Shared / Key_Shared source's acknowledgement transactions (one per "        \
      "checkpoint, used when the client has enableTransaction); keep it above a few checkpoint " \
      "intervals plus the restart time.")                                                        \
    X(SOURCE_SUBSCRIPTION_NAMESPACE, "pulsar.source.subscriptionNamespace", STR, NULL, 0, 0, NULL, \
      NULL, CC_US, CC_F_PULSARC,                                                                \
      "\"tenant/ns\" (or \"ns\") holding the source's own bookkeeping topics, like a reader "   \
      "group's scope; default: the default tenant/namespace.")                                  \
    /* ---- pulsar.sink.* -------------------------------------------------------------------- */ \
    X(SINK_DELIVERY_GUARANTEE, "pulsar.sink.deliveryGuarantee", ENUM, "none", 0, 0,                \
      "exactly-once|at-least-once|none", NULL, CC_US, 0, "What the sink promises at a checkpoint.") \
    X(SINK_TXN_TIMEOUT, "pulsar.sink.transactionTimeoutMillis", INT, "10800000", 1, CC_I64MAX,     \
      NULL, NULL, CC_US, 0, "Timeout of the exactly-once sink's transactions.")                 \
    X(SINK_METADATA_REFRESH, "pulsar.sink.topicMetadataRefreshInterval", INT, "1800000", 1,        \
      CC_I64MAX, NULL, NULL, CC_US, 0, "Partition lists are refreshed this often, ms.")         \
    X(SINK_KEY_HASH, "pulsar.sink.messageKeyHash", ENUM, "murmur-3-32-hash", 0, 0,                 \
      "java-hash|murmur-3-32-hash", NULL, CC_US, 0, "Key hash of message-key-hash routing.")    \
    X(SINK_SCHEMA_EVOLUTION, "pulsar.sink.enableSchemaEvolution", BOOL, "false", 0, 1, NULL, NULL, \
      CC_US, 0, "The sink's producers declare pulsar.sink.schemaType; the broker registers it " \
      "or checks it against each topic's (IncompatibleSchema fails the write).")               \
    X(SINK_SCHEMA_TYPE, "pulsar.sink.schemaType", STR, NULL, 0, 0, NULL, NULL, CC_US,              \
      CC_F_PULSARC, "The schema the sink writes, as the core schemaType; with "                 \
      "enableSchemaEvolution.")                                                                 \
    X(SINK_SCHEMA_DEFINITION, "pulsar.sink.schemaDefinition", STR, NULL, 0, 0, NULL, NULL, CC_US,  \
      CC_F_PULSARC, "Its definition (the Avro schema JSON for AVRO / JSON).")                   \
    X(SINK_MAX_RECOMMIT, "pulsar.sink.maxRecommitTimes", INT, "5", 0, 1000, NULL, NULL, CC_US, 0,  \
      "Retries of a transaction commit.")                                                       \
    X(SINK_METRICS, "pulsar.sink.enableMetrics", BOOL, "true", 0, 1, NULL, NULL, CC_US, 0,         \
      "Expose the sink's counters.")                                                            \
    X(SINK_VALIDATE_BYTES, "pulsar.sink.validateSinkMessageBytes", BOOL, "false", 0, 1, NULL, NULL, \
      CC_US, CC_F_NOOP, "pulsarc has no schema registry support.")                             \
    X(SINK_MAX_PENDING, "pulsar.sink.maxPendingMessages", INT, NULL, 1, 10000000, NULL,            \
      "maxPendingMessages", CC_US, CC_F_LEGACY, "v3.0 key: pending messages per producer.")

typedef enum pc_cc_id {
#define PC_CC_ENUM(id, ...) PC_CC_##id,
    PC_CC_PROPS(PC_CC_ENUM)
#undef PC_CC_ENUM
    PC_CC__COUNT
} pc_cc_id_t;

typedef enum { CC_T_STR, CC_T_INT, CC_T_BOOL, CC_T_ENUM, CC_T_MAP, CC_T_LIST } cc_type_t;

typedef struct pc_cc_prop {
    const char *name;
    cc_type_t type;
    const char *defval; /* NULL: unset */
    int64_t min, max;
    const char *choices;
    const char *core; /* pulsarc_conf_t key, or NULL */
    int64_t scale;
    int flags;
    const char *doc;
} pc_cc_prop_t;

extern const pc_cc_prop_t pc_cc_props[PC_CC__COUNT];
#endif
