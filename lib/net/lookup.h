/* Topic lookup and partition metadata over the binary protocol. */
#ifndef PC_LOOKUP_H
#define PC_LOOKUP_H
#include "core/url.h"
#include "net/pool.h"

typedef struct pc_lookup_svc {
    pc_pool_t *pool;
    pc_loop_t *loop;                 /* where HTTP lookups hand back their answers */
    const struct pulsarc_conf_s *conf; /* the client's (TLS settings of HTTP lookups) */
    struct pc_auth *auth;            /* the client's credentials, or NULL (HTTP lookups) */
    pc_service_url_t url;
    unsigned next_host;  /* round-robin over the service URL's hosts */
    int op_timeout_ms;
    int max_redirects;
    uint64_t *next_id;   /* the client's request-id counter (loop thread) */
    pc_net_counters_t *counters; /* the client's, or NULL: lookups by kind and outcome */
} pc_lookup_svc_t;

/* Where a topic lives: connect to host:port, sending proxy_to (or NULL) in CONNECT. */
typedef struct pc_broker_addr {
    char host[PC_HOST_MAX];
    uint16_t port;
    char proxy_to[PC_HOST_MAX + 8];
    int proxied;
} pc_broker_addr_t;

typedef void (*pc_lookup_cb)(void *arg, pulsarc_err_t err, const char *errmsg,
                             const pc_broker_addr_t *addr);
typedef void (*pc_partitions_cb)(void *arg, pulsarc_err_t err, const char *errmsg,
                                 int partitions);

/* Topics of a namespace (partition names included); owned by the callee for the call only. */
typedef void (*pc_topics_cb)(void *arg, pulsarc_err_t err, const char *errmsg, char **topics,
                             size_t n);

/* Loop thread only; each calls cb exactly once. */
void pc_lookup_topic(pc_lookup_svc_t *s, const char *topic, pc_lookup_cb cb, void *arg);
void pc_lookup_partitions(pc_lookup_svc_t *s, const char *topic, pc_partitions_cb cb, void *arg);
/* GET_TOPICS_OF_NAMESPACE for "tenant/ns" (persistent topics). */
void pc_lookup_namespace_topics(pc_lookup_svc_t *s, const char *ns, pc_topics_cb cb, void *arg);
/* The next service URL host (round-robin). */
const pc_hostport_t *pc_lookup_service_host(pc_lookup_svc_t *s);
#endif
