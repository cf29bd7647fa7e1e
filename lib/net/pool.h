/* Connection pool keyed by (logical broker, physical address). */
#ifndef PC_POOL_H
#define PC_POOL_H
#include "net/conn.h"

typedef struct pc_pool pc_pool_t;

/* Loop thread only (new/free may run before the loop starts / after it stops). */
pc_pool_t *pc_pool_new(pc_loop_t *loop, const pc_conn_opts_t *opts);
/*
 * Calls cb exactly once with a ready connection to host:port, reusing one
 * when it exists. proxy_to (NULL unless going through a proxy) is the
 * logical broker "host:port" sent in CONNECT.
 */
void pc_pool_get(pc_pool_t *p, const char *host, uint16_t port, const char *proxy_to,
                 pc_conn_ready_cb cb, void *arg);
/* Connections that advertise supports_partial_producer, kept apart from the rest. */
#define PC_CONN_F_PARTIAL_PRODUCER 1
void pc_pool_get_ex(pc_pool_t *p, const char *host, uint16_t port, const char *proxy_to, int flags,
                    pc_conn_ready_cb cb, void *arg);
/* Closes every connection (their users are notified). */
void pc_pool_close_all(pc_pool_t *p, pulsarc_err_t why, const char *reason);
void pc_pool_free(pc_pool_t *p);
#endif
