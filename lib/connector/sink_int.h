/*
 * Internals of the sink (include/pulsarc/sink.h), shared by
 *   sink_builder.c  settings, the pulsar.sink.* key table, validation;
 *   sink_route.c    the partition list and the routing of one message;
 *   sink.c          producers, writes, flush, checkpoints, close;
 *   sink_txn.c      the EXACTLY_ONCE transactions;
 *   sink_state.c    the checkpoint blob.
 */
#ifndef PC_SINK_INT_H
#define PC_SINK_INT_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "connector/sink_state.h"
#include "pulsarc.h"
#include "pulsarc/sink.h"

typedef enum { PC_SINK_HASH_MURMUR3 = 0, PC_SINK_HASH_JAVA = 1 } pc_sink_hash_t;

/* The pulsar.sink.* values. */
typedef struct pc_sink_opts {
    int64_t txn_timeout_ms;
    int64_t refresh_ms;
    pc_sink_hash_t key_hash;
    int max_recommit;
} pc_sink_opts_t;

/* Everything a builder holds, copied into the sink at build time. */
typedef struct pc_sink_settings {
    char *service_url, *admin_url, *producer_name;
    char **topics;
    size_t ntopics;
    int topics_set;
    pulsarc_sink_serialize_cb serialize;
    void *serialize_opaque;
    pulsarc_sink_guarantee_t guarantee;
    pulsarc_sink_routing_t routing;
    int routing_set;
    pulsarc_sink_router_cb router;
    void *router_opaque;
    uint64_t delay_ms;
    pulsarc_sink_delayer_cb delayer;
    void *delayer_opaque;
    pc_sink_opts_t opts;
    int schema_evolution;         /* pulsar.sink.enableSchemaEvolution */
    char *schema_type, *schema_def; /* pulsar.sink.schemaType / schemaDefinition */
    uint32_t writer_index;        /* this writer among writer_count (sink.parallelism) */
    uint32_t writer_count;        /* 0 or 1: the only writer */
    pulsarc_crypto_key_reader_cb key_reader; /* set on every producer's conf; NULL: none */
    void *key_reader_opaque;
} pc_sink_settings_t;

struct pulsarc_sink_builder_s {
    pc_sink_settings_t s;
    char **kv; /* core (key, value) pairs from pulsar.client.* / pulsar.producer.* */
    size_t nkv;
};

/* The flattened partition list and the round-robin / sticky cursors. */
typedef struct pc_sink_routes {
    char **names; /* full names; a non-partitioned topic is itself */
    size_t n;
    uint64_t refreshed_ms;
    uint64_t count;       /* messages routed round-robin so far */
    size_t start;         /* random first partition */
    size_t sticky;        /* key-less key-hash partition ... */
    uint64_t sticky_left; /* ... for this many more messages */
    uint64_t batch;       /* batchingMaxMessages */
} pc_sink_routes_t;

typedef struct pc_sink_producer {
    char *topic;
    pulsarc_producer_t *producer;
} pc_sink_producer_t;

/* One EXACTLY_ONCE transaction the sink still has to finish. */
typedef struct pc_sink_txn pc_sink_txn_t;

struct pulsarc_sink_s {
    pc_sink_settings_t s;
    pulsarc_client_t *client;
    pulsarc_conf_t *pconf; /* producer keys, producerName set per producer */
    pc_sink_routes_t routes;
    pc_sink_producer_t *prods;
    size_t nprods, capprods;
    /* Send outcomes arrive on the callback thread: guarded by lock. */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t pending, written, acked, failed;
    pulsarc_err_t send_err; /* first failure, sticky (AT_LEAST_ONCE / EXACTLY_ONCE) */
    char send_err_text[512];
    /* EXACTLY_ONCE: the open transaction, the next epoch's (opened one
     * checkpoint early, see sink_txn.c) and those awaiting commit. */
    pc_sink_txn_t *open_txn, *next_txn;
    pc_sink_txn_t **committing;
    size_t ncommitting;
    uint64_t txn_committed, txn_aborted;
    uint64_t txn_found_committed; /* restore: forgotten by the coordinator, no abort recorded */
    int closed;
};

/* sink_builder.c */
void pc_sink_settings_free(pc_sink_settings_t *s);
pulsarc_err_t pc_sink_settings_copy(pc_sink_settings_t *dst, const pc_sink_settings_t *src);
pulsarc_err_t pc_sink_validate(const pulsarc_sink_builder_t *b, char *errstr, size_t errlen);
pulsarc_err_t pc_sink_client_conf(const pulsarc_sink_builder_t *b, pulsarc_conf_t **out,
                                  char *errstr, size_t errlen);

/* sink_route.c */
pulsarc_err_t pc_sink_routes_load(pulsarc_sink_t *sk, char *errstr, size_t errlen);
void pc_sink_routes_maybe_refresh(pulsarc_sink_t *sk);
void pc_sink_routes_free(pc_sink_routes_t *r);
/* The topic msg goes to (borrowed until the next call) or NULL with errstr. */
const char *pc_sink_route(pulsarc_sink_t *sk, const pulsarc_msg_t *msg, char *errstr,
                          size_t errlen);
uint64_t pc_sink_now_ms(void);
size_t pc_sink_random_below(size_t n);

/* sink.c */
void pc_sink_set_error(pulsarc_sink_t *sk, pulsarc_err_t err, const char *fmt, ...);
pulsarc_err_t pc_sink_report(pulsarc_sink_t *sk, char *errstr, size_t errlen);
pulsarc_err_t pc_sink_wait_pending(pulsarc_sink_t *sk, int timeout_ms, char *errstr,
                                   size_t errlen);

/* sink_txn.c: one transaction per checkpoint epoch (EXACTLY_ONCE only). */
pulsarc_err_t pc_sink_txn_send(pulsarc_sink_t *sk, pulsarc_producer_t *p, pulsarc_msg_t *msg,
                               pulsarc_send_cb cb, char *errstr, size_t errlen);
pulsarc_err_t pc_sink_txn_checkpoint(pulsarc_sink_t *sk, uint64_t checkpoint_id,
                                     pc_sink_state_t *st, char *errstr, size_t errlen);
pulsarc_err_t pc_sink_txn_complete(pulsarc_sink_t *sk, uint64_t checkpoint_id, char *errstr,
                                   size_t errlen);
pulsarc_err_t pc_sink_txn_restore(pulsarc_sink_t *sk, const pc_sink_state_t *st,
                                  char *errstr, size_t errlen);
void pc_sink_txn_close(pulsarc_sink_t *sk);
#endif
