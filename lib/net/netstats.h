/*
 * What the network layer counts for the client's metrics: connections
 * opened, closed and failed (conn.c), lookups by transport, kind and
 * outcome with their durations (lookup.c). The client owns one of these
 * and passes it down (pc_conn_opts_t.counters, pc_lookup_svc_t.counters);
 * lib/net only adds to it, with relaxed atomics on the io thread, and the
 * metrics writer reads it from any thread. A NULL pointer counts nothing.
 */
#ifndef PC_NETSTATS_H
#define PC_NETSTATS_H
#include <stdatomic.h>
#include <stdint.h>

#include "core/hist.h"

/* The kinds of lookup, named as the Java client labels them. */
typedef enum {
    PC_LOOKUP_KIND_TOPIC,       /* where a topic is served (LOOKUP) */
    PC_LOOKUP_KIND_METADATA,    /* how many partitions (PARTITIONED_METADATA) */
    PC_LOOKUP_KIND_LIST_TOPICS, /* the topics of a namespace */
    PC_LOOKUP_KINDS
} pc_lookup_kind_t;

typedef struct pc_net_counters {
    _Atomic uint64_t conn_opened;           /* reached CONNECTED */
    _Atomic uint64_t conn_closed;           /* closed after CONNECTED */
    _Atomic uint64_t conn_failed_tcp;       /* never connected: name resolution or TCP */
    _Atomic uint64_t conn_failed_handshake; /* TCP up, TLS or CONNECT failed */
    /* [http][kind][failed]: durations, call to answer, redirects included */
    pc_hist_t lookups[2][PC_LOOKUP_KINDS][2];
} pc_net_counters_t;

/* Adds one to n->field unless n is NULL. */
#define PC_NET_COUNT(n, field)                                                                     \
    do {                                                                                           \
        if (n)                                                                                     \
            atomic_fetch_add_explicit(&(n)->field, 1, memory_order_relaxed);                       \
    } while (0)
#endif
