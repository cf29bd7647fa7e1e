/*
 * The lookup service both ways of looking up share (lookup.c over the
 * binary protocol, lookup_http.c over REST): the client's settings and
 * counters, the service URL's hosts taken round-robin (lookup_service.c),
 * and the answer types and callbacks. Loop thread only.
 */
#ifndef PC_LOOKUP_SERVICE_H
#define PC_LOOKUP_SERVICE_H
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

/* The next service URL host (round-robin). */
const pc_hostport_t *pc_lookup_service_host(pc_lookup_svc_t *s);
#endif
