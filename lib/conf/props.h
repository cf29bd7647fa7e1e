/*
 * The one property table. Every configuration key, its scope, type,
 * default, range and doc line lives here and nowhere else; validation,
 * pulsarc_conf_get() and docs/CONFIGURATION.md all come from it.
 *
 * X(id, "name", scope, type, "default", min, max, "enum|values", "doc")
 */
#ifndef PC_PROPS_H
#define PC_PROPS_H
#include <stdint.h>

#define PC_PROPS(X)                                                                           \
    X(SERVICE_URL, "serviceUrl", CLIENT, STR, "", 0, 0, NULL,                                 \
      "Broker URL: pulsar://host:6650[,host2:6650]. Falls back to $PULSAR_SERVICE_URL.")     \
    X(OPERATION_TIMEOUT_MS, "operationTimeoutMs", CLIENT, INT, "30000", 1, 3600000, NULL,      \
      "Timeout of each request to the broker (lookup, create producer, subscribe, ...).")     \
    X(CONNECTION_TIMEOUT_MS, "connectionTimeoutMs", CLIENT, INT, "10000", 1, 3600000, NULL,    \
      "Timeout of TCP connect plus the CONNECT/CONNECTED handshake.")                         \
    X(KEEPALIVE_S, "keepAliveIntervalSeconds", CLIENT, INT, "30", 0, 86400, NULL,              \
      "PING interval; a PING still unanswered at the next tick closes the connection. 0: off.") \
    X(MAX_LOOKUP_REDIRECTS, "maxLookupRedirects", CLIENT, INT, "20", 1, 1000, NULL,            \
      "Most LOOKUP redirects followed before failing.")                                       \
    X(INITIAL_BACKOFF_MS, "initialBackoffIntervalMs", CLIENT, INT, "100", 1, 3600000, NULL,    \
      "First reconnect delay; doubles on each failure.")                                      \
    X(MAX_BACKOFF_MS, "maxBackoffIntervalMs", CLIENT, INT, "60000", 1, 86400000, NULL,          \
      "Upper bound of the reconnect delay.")                                                  \
    X(DEFAULT_TENANT, "defaultTenant", CLIENT, STR, "public", 0, 0, NULL,                      \
      "Tenant for short topic names.")                                                        \
    X(DEFAULT_NAMESPACE, "defaultNamespace", CLIENT, STR, "default", 0, 0, NULL,               \
      "Namespace for short topic names.")                                                     \
    X(CALLBACK_MODE, "callbackMode", CLIENT, ENUM, "thread", 0, 0, "thread|poll",              \
      "Where callbacks run: the client's callback thread, or pulsarc_client_poll().")         \
    X(PRODUCER_NAME, "producerName", PRODUCER, STR, "", 0, 0, NULL,                            \
      "Producer name; empty lets the broker assign one (kept across reconnects).")            \
    X(SEND_TIMEOUT_MS, "sendTimeoutMs", PRODUCER, INT, "30000", 0, 86400000, NULL,             \
      "A message without a receipt after this long fails with TIMEOUT. 0: never.")           \
    X(MAX_PENDING_MESSAGES, "maxPendingMessages", PRODUCER, INT, "1000", 1, 10000000, NULL,    \
      "Most messages awaiting a receipt.")                                                    \
    X(BLOCK_IF_QUEUE_FULL, "blockIfQueueFull", PRODUCER, BOOL, "false", 0, 1, NULL,            \
      "When the pending queue is full: block (up to sendTimeoutMs) instead of failing.")      \
    X(SUBSCRIPTION_TYPE, "subscriptionType", CONSUMER, ENUM, "Exclusive", 0, 0,                \
      "Exclusive|Shared|Failover|Key_Shared", "Subscription type.")                          \
    X(SUBSCRIPTION_INITIAL_POSITION, "subscriptionInitialPosition", CONSUMER, ENUM, "Latest",  \
      0, 0, "Latest|Earliest", "Where a new subscription starts.")                            \
    X(RECEIVER_QUEUE_SIZE, "receiverQueueSize", CONSUMER, INT, "1000", 1, 1000000, NULL,        \
      "Messages the broker may push ahead of receive(); refilled at half.")                   \
    X(CONSUMER_NAME, "consumerName", CONSUMER, STR, "", 0, 0, NULL,                            \
      "Consumer name (Failover orders consumers by it).")                                     \
    X(PRIORITY_LEVEL, "priorityLevel", CONSUMER, INT, "0", 0, 1000, NULL,                      \
      "Shared/Failover priority; lower is served first.")

typedef enum pc_prop_id {
#define PC_PROP_ENUM(id, ...) PC_PROP_##id,
    PC_PROPS(PC_PROP_ENUM)
#undef PC_PROP_ENUM
    PC_PROP__COUNT
} pc_prop_id_t;

typedef enum { PC_SCOPE_CLIENT, PC_SCOPE_PRODUCER, PC_SCOPE_CONSUMER } pc_scope_t;
typedef enum { PC_TYPE_STR, PC_TYPE_INT, PC_TYPE_BOOL, PC_TYPE_ENUM } pc_ptype_t;

typedef struct pc_prop {
    const char *name;
    pc_scope_t scope;
    pc_ptype_t type;
    const char *defval;
    int64_t min, max;
    const char *choices; /* ENUM: '|'-separated; the value stored is the index */
    const char *doc;
} pc_prop_t;

extern const pc_prop_t pc_props[PC_PROP__COUNT];

struct pulsarc_conf_s;
/* Typed reads; the default applies when the key was never set. */
int64_t pc_conf_int(const struct pulsarc_conf_s *c, pc_prop_id_t id);
const char *pc_conf_str(const struct pulsarc_conf_s *c, pc_prop_id_t id);
/* Writes the Markdown reference of every key. */
#include <stdio.h>
void pc_conf_write_doc(FILE *out);
#endif
