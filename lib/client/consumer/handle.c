/*
 * Design notes: the part every consumer kind shares (consumer_int.h) and
 * the public calls that are the same for all of them: they check their
 * arguments and dispatch through the kind's table of operations. Nothing
 * here knows which kinds exist; single.c and multi_topic.c each fill a
 * table, reader.c builds on single.c.
 *
 * Lifetime: reference counted (handle_ref.c, below this file and the
 * interceptors, which hold references of their own); the common part's
 * creation and free here attach and free the interceptor chain
 * (interceptors.c), and destroy runs its close hooks.
 *
 * Threads: any; shared fields under the handle's lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/consumer_int.h"
#include "client/consumer/interceptors.h"
#include "client/metrics.h"
#include "core/err.h"

/* ---------- the common part ---------- */

static void handle_close(pc_handle_t *h) { pulsarc_consumer_close((pulsarc_consumer_t *)h); }
static void handle_destroy(pc_handle_t *h) { pulsarc_consumer_destroy((pulsarc_consumer_t *)h); }

/* Under the client's registry lock (metrics.c); takes the consumer's locks. */
static void handle_report(pc_handle_t *h, struct pc_metrics_entry *out) {
    pulsarc_consumer_t *c = (pulsarc_consumer_t *)h;
    out->kind = PC_METRICS_CONSUMER;
    out->topic = c->topic;
    snprintf(out->sub, sizeof out->sub, "%s", c->sub);
    pulsarc_consumer_stats(c, &out->consumer);
    pthread_mutex_lock(&c->lock);
    out->bytes_received = c->rx_bytes;
    out->queue_bytes = c->qbytes;
    pthread_mutex_unlock(&c->lock);
}

pulsarc_err_t pc_consumer_base_init(pulsarc_consumer_t *c, const pc_consumer_ops_t *ops,
                                    pulsarc_client_t *cl, const char *sub) {
    if (!(c->sub = strdup(sub)))
        return PULSARC_ERR_NOMEM;
    c->ops = ops;
    c->client = cl;
    atomic_init(&c->refs, 1);
    c->handle.close = handle_close;
    c->handle.destroy = handle_destroy;
    c->handle.report = handle_report;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &a);
    pthread_condattr_destroy(&a);
    return PULSARC_OK;
}

void pc_consumer_base_free(pulsarc_consumer_t *c) {
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    pc_consumer_icpts_free(c);
    free(c->sub);
}

pulsarc_err_t pc_consumer_read_common_conf(pulsarc_consumer_t *c, const pulsarc_conf_t *conf) {
    c->sub_type = (int)pc_conf_int(conf, PC_PROP_SUBSCRIPTION_TYPE);
    c->queue_size = (int)pc_conf_int(conf, PC_PROP_RECEIVER_QUEUE_SIZE);
    c->auto_scale = pc_conf_int(conf, PC_PROP_AUTO_SCALED_QUEUE) && c->queue_size > 1;
    c->idle_shrink_ms = (int)pc_conf_int(conf, PC_PROP_AUTO_SCALED_QUEUE_IDLE_MS);
    c->cur_queue_size = c->auto_scale ? 1 : c->queue_size; /* scaled from one message up */
    c->batch_max_msgs = (size_t)pc_conf_int(conf, PC_PROP_BATCH_RECV_MAX_MSGS);
    c->batch_max_bytes = (size_t)pc_conf_int(conf, PC_PROP_BATCH_RECV_MAX_BYTES);
    c->batch_timeout_ms = (int)pc_conf_int(conf, PC_PROP_BATCH_RECV_TIMEOUT_MS);
    pc_any_fn fn;
    pc_conf_get_cb(conf, PC_CB_MESSAGE_LISTENER, &fn, &c->listener_opaque);
    c->listener = (pulsarc_message_listener_cb)fn;
    pc_conf_get_cb(conf, PC_CB_CONSUMER_EVENT, &fn, &c->event_opaque);
    c->event_cb = (pulsarc_consumer_event_cb)fn;
    return pc_consumer_icpts_attach(c, conf);
}

void pc_consumer_fixed_queue(pulsarc_consumer_t *c) {
    c->auto_scale = 0;
    c->cur_queue_size = c->queue_size;
}

int pc_consumer_is_shared(const pulsarc_consumer_t *c) {
    return c->sub_type == PULSAR__PROTO__COMMAND_SUBSCRIBE__SUB_TYPE__Shared ||
           c->sub_type == PULSAR__PROTO__COMMAND_SUBSCRIBE__SUB_TYPE__Key_Shared;
}

/* ---------- public calls ---------- */

const char *pulsarc_consumer_topic(const pulsarc_consumer_t *c) { return c ? c->topic.full : NULL; }
const char *pulsarc_consumer_subscription(const pulsarc_consumer_t *c) { return c ? c->sub : NULL; }

int pulsarc_consumer_is_connected(pulsarc_consumer_t *c) { return c ? c->ops->is_connected(c) : 0; }

pulsarc_err_t pulsarc_consumer_stats(pulsarc_consumer_t *c, pulsarc_consumer_stats_t *out) {
    if (!c || !out)
        return PULSARC_ERR_INVALID_ARG;
    pthread_mutex_lock(&c->lock);
    *out = c->stats;
    out->queue_len = c->qlen;
    out->queue_size = (size_t)c->cur_queue_size;
    c->ops->add_stats(c, out);
    pthread_mutex_unlock(&c->lock);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_consumer_close(pulsarc_consumer_t *c) {
    if (!c)
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_err_t err = c->ops->close(c, 0);
    pc_queue_wait_callbacks(c);
    return err;
}

pulsarc_err_t pulsarc_consumer_unsubscribe(pulsarc_consumer_t *c) {
    if (!c)
        return PULSARC_ERR_INVALID_ARG;
    pulsarc_err_t err = c->ops->close(c, 1);
    pc_queue_wait_callbacks(c);
    return err;
}

void pulsarc_consumer_destroy(pulsarc_consumer_t *c) {
    if (!c)
        return;
    pulsarc_consumer_close(c);
    pc_consumer_icpts_close(c);
    c->ops->release(c);
    pc_client_unregister(c->client, &c->handle);
    pc_consumer_unref(c);
}

pulsarc_err_t pulsarc_consumer_seek(pulsarc_consumer_t *c, const pulsarc_msgid_t *id) {
    return c && id ? c->ops->seek(c, 0, id, 0) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_consumer_seek_time(pulsarc_consumer_t *c, uint64_t publish_time_ms) {
    return c ? c->ops->seek(c, 1, NULL, publish_time_ms) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_consumer_last_message_id(pulsarc_consumer_t *c, pulsarc_msgid_t *id) {
    return c && id ? c->ops->last_message_id(c, id) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_consumer_has_message_available(pulsarc_consumer_t *c, int *available) {
    if (!c || !available)
        return PULSARC_ERR_INVALID_ARG;
    *available = 0;
    pthread_mutex_lock(&c->lock);
    int queued = c->qhead != NULL;
    pthread_mutex_unlock(&c->lock);
    if (queued) {
        *available = 1;
        return PULSARC_OK;
    }
    return c->ops->available_on_broker(c, available);
}
