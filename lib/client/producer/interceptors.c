/*
 * Design notes: the producer interceptors of one handle, copied from the
 * configuration at creation (so a conf may change or go afterwards) and
 * run in the order they were added. No lock: the list never changes after
 * creation, and each hook is application code, run on the thread the
 * public header names (sending thread, callback thread, creating thread),
 * never under a library lock nor on the io thread.
 *
 * Lifetime: atomic reference count. The handle holds one; each
 * asynchronous send holds one from before_send until its on_send_ack has
 * run, because that may be after pulsarc_producer_destroy returned (a
 * send callback still queued); so does a partitioned producer's
 * on_partitions_change after partitions were added, which runs on the
 * callback queue. The close hooks run when the count drops
 * to zero, so no hook of the chain follows them.
 */
#include "client/producer/interceptors.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "client/message.h"
#include "conf/props.h"

struct pc_producer_icpts {
    atomic_int refs;
    size_t n;
    pulsarc_producer_interceptor_t list[]; /* in the order added */
};

pulsarc_err_t pc_producer_icpts_new(const pulsarc_conf_t *conf, pc_producer_icpts_t **out) {
    const pulsarc_producer_interceptor_t *src;
    size_t n = pc_conf_producer_interceptors(conf, &src);
    *out = NULL;
    if (n == 0)
        return PULSARC_OK;
    pc_producer_icpts_t *ic = malloc(sizeof *ic + n * sizeof ic->list[0]);
    if (!ic)
        return PULSARC_ERR_NOMEM;
    atomic_init(&ic->refs, 1);
    ic->n = n;
    memcpy(ic->list, src, n * sizeof ic->list[0]);
    *out = ic;
    return PULSARC_OK;
}

static void icpts_ref(pc_producer_icpts_t *ic) { atomic_fetch_add(&ic->refs, 1); }

static void icpts_unref(pc_producer_icpts_t *ic) {
    if (atomic_fetch_sub(&ic->refs, 1) != 1)
        return;
    for (size_t i = 0; i < ic->n; i++)
        if (ic->list[i].close)
            ic->list[i].close(ic->list[i].opaque);
    free(ic);
}

void pc_producer_icpts_release(pc_producer_icpts_t *ic) {
    if (ic)
        icpts_unref(ic);
}

pc_producer_icpts_t *pc_producer_icpts_hold(pc_producer_icpts_t *ic) {
    if (ic)
        icpts_ref(ic);
    return ic;
}

void pc_producer_icpts_discard(pc_producer_icpts_t *ic) { free(ic); }

void pc_producer_icpts_partitions(pc_producer_icpts_t *ic, pulsarc_producer_t *p,
                                  const char *topic, int partitions) {
    for (size_t i = 0; ic && i < ic->n; i++)
        if (ic->list[i].on_partitions_change)
            ic->list[i].on_partitions_change(p, topic, partitions, ic->list[i].opaque);
}

void pc_producer_icpts_before_send(pc_producer_icpts_t *ic, pulsarc_producer_t *p,
                                   pulsarc_msg_t *msg) {
    int64_t seq = msg->seq; /* the sequence id belongs to the producer, not to the hooks */
    int has_seq = msg->has_seq;
    for (size_t i = 0; i < ic->n; i++)
        if (ic->list[i].before_send) /* a failing hook is ignored: the chain goes on */
            (void)ic->list[i].before_send(p, msg, ic->list[i].opaque);
    msg->seq = seq;
    msg->has_seq = has_seq;
}

void pc_producer_icpts_on_ack(pc_producer_icpts_t *ic, pulsarc_producer_t *p, pulsarc_err_t err,
                              const pulsarc_msgid_t *id, const pulsarc_msg_t *msg) {
    for (size_t i = 0; i < ic->n; i++)
        if (ic->list[i].on_send_ack)
            ic->list[i].on_send_ack(p, err, err ? NULL : id, msg, ic->list[i].opaque);
}

/* What an asynchronous send's callback was before the chain wrapped it. */
typedef struct wrapped_send {
    pc_producer_icpts_t *ic;
    pulsarc_send_cb cb;
    void *opaque;
} wrapped_send_t;

static void run_wrapped(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                        pulsarc_msg_t *msg, void *arg) {
    wrapped_send_t w = *(wrapped_send_t *)arg;
    free(arg);
    pc_producer_icpts_on_ack(w.ic, p, err, id, msg);
    if (w.cb)
        w.cb(p, err, id, msg, w.opaque);
    icpts_unref(w.ic);
}

pulsarc_err_t pc_producer_icpts_wrap(pc_producer_icpts_t *ic, pulsarc_send_cb *cb, void **opaque) {
    wrapped_send_t *w = malloc(sizeof *w);
    if (!w)
        return PULSARC_ERR_NOMEM;
    w->ic = ic;
    w->cb = *cb;
    w->opaque = *opaque;
    icpts_ref(ic);
    *cb = run_wrapped;
    *opaque = w;
    return PULSARC_OK;
}
