/*
 * The producer interceptor chain of one producer handle (interceptors.c):
 * built from the configuration at creation, run around every send by the
 * public calls (api.c). Reference counted: the handle holds one reference,
 * every asynchronous send in flight another; the interceptors' close hooks
 * run when the last one goes.
 */
#ifndef PC_PRODUCER_INTERCEPTORS_H
#define PC_PRODUCER_INTERCEPTORS_H
#include "pulsarc.h"

typedef struct pc_producer_icpts pc_producer_icpts_t;

/* *out is NULL when conf holds no producer interceptor. */
pulsarc_err_t pc_producer_icpts_new(const pulsarc_conf_t *conf, pc_producer_icpts_t **out);
/* The handle, or a holder, lets go of its reference (NULL is a no-op). */
void pc_producer_icpts_release(pc_producer_icpts_t *ic);
/* Creation failed, nothing was sent: frees ic without its close hooks (NULL is a no-op). */
void pc_producer_icpts_discard(pc_producer_icpts_t *ic);
/* Another reference, for a hook run off the handle's own threads; let go
 * with pc_producer_icpts_release (NULL is a no-op and returns NULL). */
pc_producer_icpts_t *pc_producer_icpts_hold(pc_producer_icpts_t *ic);
/* A partitioned producer was created, or adopted partitions added to its
 * topic: on_partitions_change with the new count (NULL ic is a no-op). */
void pc_producer_icpts_partitions(pc_producer_icpts_t *ic, pulsarc_producer_t *p,
                                  const char *topic, int partitions);
/* Runs every before_send on msg; the producer's sequence id survives them. */
void pc_producer_icpts_before_send(pc_producer_icpts_t *ic, pulsarc_producer_t *p,
                                   pulsarc_msg_t *msg);
/* Runs every on_send_ack. */
void pc_producer_icpts_on_ack(pc_producer_icpts_t *ic, pulsarc_producer_t *p, pulsarc_err_t err,
                              const pulsarc_msgid_t *id, const pulsarc_msg_t *msg);
/*
 * Asynchronous sends: replaces *cb / *opaque with a callback that runs
 * on_send_ack and then the original one, holding a reference on ic until
 * then. PULSARC_ERR_NOMEM leaves them as they were.
 */
pulsarc_err_t pc_producer_icpts_wrap(pc_producer_icpts_t *ic, pulsarc_send_cb *cb, void **opaque);
#endif
