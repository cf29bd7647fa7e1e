/*
 * The consumer interceptor chain of one consumer handle (interceptors.c):
 * built from the configuration with the handle, run where a message is
 * handed to the application (receive_queue.c, and the listener it wraps),
 * after the public ack calls (ack.c), and when nacks or ack timeouts are
 * sent for redelivery (redelivery.c reports them, the callback queue runs
 * the hooks).
 */
#ifndef PC_CONSUMER_INTERCEPTORS_H
#define PC_CONSUMER_INTERCEPTORS_H
#include "pulsarc.h"

typedef struct pc_consumer_icpts pc_consumer_icpts_t;

/* Creation: c->icpts from conf (NULL when none); wraps c->listener when set. */
pulsarc_err_t pc_consumer_icpts_attach(pulsarc_consumer_t *c, const pulsarc_conf_t *conf);
/* pulsarc_consumer_destroy, once closed: the close hooks; later notices are dropped. */
void pc_consumer_icpts_close(pulsarc_consumer_t *c);
/* The handle's memory goes (any thread). */
void pc_consumer_icpts_free(pulsarc_consumer_t *c);
/* The messages msgs[0..n) about to be handed to the application, each replaced as the hooks say. */
void pc_consumer_icpts_before_consume(pulsarc_consumer_t *c, pulsarc_msg_t **msgs, size_t n);
/* After an ack call on the application's thread; returns err. */
pulsarc_err_t pc_consumer_icpts_acked(pulsarc_consumer_t *c, const pulsarc_msgid_t *id,
                                      int cumulative, pulsarc_err_t err);
/* Loop thread: ids of a consumer delivering into c's queue went for redelivery (timed_out: ack
 * timeout, else nacks); c is the handle the application holds. */
void pc_consumer_icpts_redelivered(pulsarc_consumer_t *c, int timed_out, const pulsarc_msgid_t *ids,
                                   size_t n);
#endif
