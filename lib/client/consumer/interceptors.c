/*
 * Design notes: the consumer interceptors of the handle the application
 * holds (for a multi-topic or zero-queue consumer, the parent; its
 * members' queue pointer leads there, followed by ack.c for the
 * redelivery notices). Knows the handle only (consumer_int.h), never the
 * kinds behind it. The list is copied from the
 * configuration when the handle is made and never changes, so reading it
 * needs no lock. Hooks are application code and run with no library lock
 * held: before_consume and the ack hooks on the application's thread (or
 * the callback thread, for the listener), the redelivery notices on the
 * callback queue, posted there from the io thread, which never runs them.
 *
 * Lifetime: the chain's memory lives as long as the handle's (freed with
 * it). Its close hooks run once: pulsarc_consumer_destroy closes the gate
 * (no hook starts after that; a redelivery notice still queued is
 * dropped) and whoever leaves the gate last, the destroying thread or the
 * last hook still running, calls them. The gate's lock is a leaf, never
 * held while a hook runs.
 */
#include "client/consumer/interceptors.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/consumer_int.h"
#include "conf/props.h"

struct pc_consumer_icpts {
    pthread_mutex_t gate;  /* guards closed and running */
    int closed;            /* destroy started: no hook may start */
    int running;           /* hook runs in progress */
    pulsarc_message_listener_cb listener; /* the application's, wrapped */
    void *listener_opaque;
    size_t n;
    pulsarc_consumer_interceptor_t list[]; /* in the order added */
};

/* 1 when hooks may run now (then gate_leave after them), 0 once closed. */
static int gate_enter(pc_consumer_icpts_t *ic) {
    pthread_mutex_lock(&ic->gate);
    int open = !ic->closed;
    ic->running += open;
    pthread_mutex_unlock(&ic->gate);
    return open;
}

static void run_close_hooks(pc_consumer_icpts_t *ic) {
    for (size_t i = 0; i < ic->n; i++)
        if (ic->list[i].close)
            ic->list[i].close(ic->list[i].opaque);
}

static void gate_leave(pc_consumer_icpts_t *ic) {
    pthread_mutex_lock(&ic->gate);
    int last = --ic->running == 0 && ic->closed;
    pthread_mutex_unlock(&ic->gate);
    if (last)
        run_close_hooks(ic);
}

/* Callback thread: the listener sees what the hooks hand on. */
static void listen_intercepted(pulsarc_consumer_t *c, pulsarc_msg_t *msg, void *opaque) {
    pc_consumer_icpts_t *ic = opaque;
    pc_consumer_icpts_before_consume(c, &msg, 1);
    ic->listener(c, msg, ic->listener_opaque);
}

pulsarc_err_t pc_consumer_icpts_attach(pulsarc_consumer_t *c, const pulsarc_conf_t *conf) {
    const pulsarc_consumer_interceptor_t *src;
    size_t n = pc_conf_consumer_interceptors(conf, &src);
    if (n == 0 || c->icpts)
        return PULSARC_OK;
    pc_consumer_icpts_t *ic = calloc(1, sizeof *ic + n * sizeof ic->list[0]);
    if (!ic)
        return PULSARC_ERR_NOMEM;
    ic->n = n;
    memcpy(ic->list, src, n * sizeof ic->list[0]);
    pthread_mutex_init(&ic->gate, NULL);
    if (c->listener) {
        ic->listener = c->listener;
        ic->listener_opaque = c->listener_opaque;
        c->listener = listen_intercepted;
        c->listener_opaque = ic;
    }
    c->icpts = ic;
    return PULSARC_OK;
}

void pc_consumer_icpts_close(pulsarc_consumer_t *c) {
    pc_consumer_icpts_t *ic = c->icpts;
    if (!ic)
        return;
    pthread_mutex_lock(&ic->gate);
    int first = !ic->closed, idle = ic->running == 0;
    ic->closed = 1;
    pthread_mutex_unlock(&ic->gate);
    if (first && idle)
        run_close_hooks(ic);
}

void pc_consumer_icpts_free(pulsarc_consumer_t *c) {
    if (!c->icpts)
        return;
    pthread_mutex_destroy(&c->icpts->gate);
    free(c->icpts);
    c->icpts = NULL;
}

/* One message through the chain: a hook's NULL keeps what it was given. */
static pulsarc_msg_t *consume_one(pc_consumer_icpts_t *ic, pulsarc_consumer_t *c,
                                  pulsarc_msg_t *m) {
    for (size_t i = 0; i < ic->n; i++) {
        if (!ic->list[i].before_consume)
            continue;
        pulsarc_msg_t *next = ic->list[i].before_consume(c, m, ic->list[i].opaque);
        if (next)
            m = next;
    }
    return m;
}

void pc_consumer_icpts_before_consume(pulsarc_consumer_t *c, pulsarc_msg_t **msgs, size_t n) {
    pc_consumer_icpts_t *ic = c->icpts;
    if (!ic || n == 0 || !gate_enter(ic))
        return;
    for (size_t i = 0; i < n; i++)
        msgs[i] = consume_one(ic, c, msgs[i]);
    gate_leave(ic);
}

pulsarc_err_t pc_consumer_icpts_acked(pulsarc_consumer_t *c, const pulsarc_msgid_t *id,
                                      int cumulative, pulsarc_err_t err) {
    pc_consumer_icpts_t *ic = c && id ? c->icpts : NULL;
    if (!ic || !gate_enter(ic))
        return err;
    for (size_t i = 0; i < ic->n; i++) {
        const pulsarc_consumer_interceptor_t *h = &ic->list[i];
        if (cumulative && h->on_acknowledge_cumulative)
            h->on_acknowledge_cumulative(c, id, err, h->opaque);
        else if (!cumulative && h->on_acknowledge)
            h->on_acknowledge(c, id, err, h->opaque);
    }
    gate_leave(ic);
    return err;
}

/* ---------- redelivery notices: io thread -> callback queue ---------- */

typedef struct redelivery_notice {
    pc_cb_item_t item;
    pulsarc_consumer_t *c; /* referenced until the notice has run */
    int timed_out;
    size_t n;
    pulsarc_msgid_t ids[];
} redelivery_notice_t;

static void run_notice(pc_cb_item_t *it) {
    redelivery_notice_t *r = (redelivery_notice_t *)it;
    pc_consumer_icpts_t *ic = r->c->icpts;
    int open = gate_enter(ic);
    for (size_t i = 0; open && i < ic->n; i++) {
        const pulsarc_consumer_interceptor_t *h = &ic->list[i];
        if (r->timed_out && h->on_ack_timeout_send)
            h->on_ack_timeout_send(r->c, r->ids, r->n, h->opaque);
        else if (!r->timed_out && h->on_negative_acks_send)
            h->on_negative_acks_send(r->c, r->ids, r->n, h->opaque);
    }
    if (open)
        gate_leave(ic);
    pc_consumer_unref(r->c);
    free(r);
}

void pc_consumer_icpts_redelivered(pulsarc_consumer_t *c, int timed_out, const pulsarc_msgid_t *ids,
                                   size_t n) {
    if (!c->icpts || n == 0)
        return; /* a notice after destroy is dropped when it runs */
    redelivery_notice_t *r = malloc(sizeof *r + n * sizeof r->ids[0]);
    if (!r)
        return; /* a notice, not the redelivery itself: dropping it loses nothing else */
    r->item.run = run_notice;
    r->item.next = NULL;
    r->c = c;
    r->timed_out = timed_out;
    r->n = n;
    memcpy(r->ids, ids, n * sizeof ids[0]);
    pc_consumer_ref(c);
    pc_cbq_push(&c->client->cbq, &r->item);
}
