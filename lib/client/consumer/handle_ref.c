/*
 * Design notes: a consumer handle's reference count, the bottom of the
 * handle: every file of the consumer room that keeps a handle past the
 * call it came in (loop closures, listener runs, interceptor notices,
 * members of a multi-topic consumer) takes a reference here. Counted
 * atomically because loop callbacks and listener callbacks may outlive
 * pulsarc_consumer_destroy(); the last reference hands the handle to its
 * kind's free operation (through the kind's table, so nothing here knows
 * the kinds). Any thread.
 */
#include "client/consumer/consumer_int.h"

void pc_consumer_ref(pulsarc_consumer_t *c) { atomic_fetch_add(&c->refs, 1); }

void pc_consumer_unref(pulsarc_consumer_t *c) {
    if (atomic_fetch_sub(&c->refs, 1) == 1)
        c->ops->free(c);
}

pulsarc_err_t pc_consumer_post(pulsarc_consumer_t *c, pc_loop_fn fn, void *arg) {
    pc_consumer_ref(c);
    pulsarc_err_t err = pc_client_post(c->client, fn, arg);
    if (err)
        pc_consumer_unref(c);
    return err;
}
