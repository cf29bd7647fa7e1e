/* Client internals shared by producer.c, consumer.c and client.c. */
#ifndef PC_CLIENT_INT_H
#define PC_CLIENT_INT_H
#include <pthread.h>

#include "client/cbq.h"
#include "client/memlimit.h"
#include "client/op.h"
#include "conf/props.h"
#include "core/topic.h"
#include "net/lookup.h"
#include "net/pool.h"
#include "pulsarc.h"

struct pc_metrics_entry;

/* Producers and consumers register so that client close reaches them, and
 * so that pulsarc_client_metrics can read them. */
typedef struct pc_handle {
    struct pc_handle *next;
    void (*close)(struct pc_handle *h);   /* blocking close, app thread */
    void (*destroy)(struct pc_handle *h); /* frees it (client destroy) */
    /* Fills *out from the handle's counters (metrics.h), under the registry
     * lock, taking only the handle's own locks; NULL: nothing to report. */
    void (*report)(struct pc_handle *h, struct pc_metrics_entry *out);
} pc_handle_t;

struct pulsarc_client_s {
    pulsarc_conf_t *conf;
    pc_loop_t *loop;
    pc_pool_t *pool;          /* loop thread */
    pc_lookup_svc_t lookup;   /* loop thread */
    pc_conn_opts_t conn_opts;
    pc_net_counters_t net;    /* connections and lookups: the io thread adds, metrics reads */
    char client_version[64];
    uint64_t next_id;         /* loop thread: request, producer, consumer ids */
    pc_cbq_t cbq;
    int op_timeout_ms;
    pc_memlimit_t memlimit;   /* memoryLimitBytes, shared by all producers */
    pthread_mutex_t lock;     /* guards handles, closing and closed */
    pc_handle_t *handles;
    int closing;              /* close took its list of handles: none registers after */
    int closed;
    struct pc_call_list {     /* loop thread: calls client close cancels (request.h) */
        struct pc_call *head;
        int closed;
    } calls;
};

/* Runs fn(arg) on the loop thread; CLOSED if the client is shutting down. */
pulsarc_err_t pc_client_post(pulsarc_client_t *c, pc_loop_fn fn, void *arg);
/* As pc_client_post, for work that may wait within_us for the loop to wake (pc_loop_post_within). */
pulsarc_err_t pc_client_post_within(pulsarc_client_t *c, pc_loop_fn fn, void *arg, int64_t within_us);
pulsarc_err_t pc_client_register(pulsarc_client_t *c, pc_handle_t *h);
void pc_client_unregister(pulsarc_client_t *c, pc_handle_t *h);
/* Sets h->report under the registry lock: for a handle that is registered
 * before it can be read (a partitioned producer fills its partitions after). */
void pc_client_set_report(pulsarc_client_t *c, pc_handle_t *h,
                          void (*report)(pc_handle_t *h, struct pc_metrics_entry *out));
pulsarc_err_t pc_client_parse_topic(pulsarc_client_t *c, const char *name, pc_topic_t *t,
                                    char *errstr, size_t errlen);
#endif
