/*
 * Design notes: a producer on a partitioned topic is one handle (what the
 * user holds, registered with the client) over one ordinary producer per
 * partition ("<topic>-partition-<i>"), created in parallel. The handle owns
 * the router (router.c) and nothing else of the send path: a message is
 * routed on the sending thread, under the handle's lock, and handed to its
 * partition's producer, whose io-thread machinery does the rest. Each
 * partition producer holds a reference on the handle so callbacks can show
 * the handle to the user. The per-partition pending limit is
 * min(maxPendingMessages, maxPendingMessagesAcrossPartitions / N), as in
 * the Java client. The partition count is read once, at creation.
 */
#include <stdlib.h>

#include "client/producer/producer_int.h"
#include "core/err.h"

static int per_partition_pending(const pulsarc_conf_t *conf, int nparts) {
    int64_t own = pc_conf_int(conf, PC_PROP_MAX_PENDING_MESSAGES);
    int64_t across = pc_conf_int(conf, PC_PROP_MAX_PENDING_ACROSS_PARTITIONS) / nparts;
    int64_t v = own < across ? own : across;
    return v < 1 ? 1 : (int)v;
}

static pulsarc_err_t start_partition(pulsarc_client_t *c, pulsarc_producer_t *parent, int i,
                                     const pulsarc_conf_t *conf, char *e, size_t el) {
    char name[PC_TOPIC_MAX + 32];
    pulsarc_err_t err = pc_topic_partition_name(&parent->topic, i, name, sizeof name);
    if (err)
        return pc_seterr(e, el, err, "partition name of %s too long", parent->topic.full);
    pulsarc_producer_t *p;
    if ((err = pc_producer_alloc(c, name, conf, &p, e, el)) != PULSARC_OK)
        return err;
    p->parent = parent;
    pc_producer_ref(parent);
    p->max_pending = per_partition_pending(conf, parent->nparts);
    parent->parts[i] = p;
    if ((err = pc_producer_begin_create(p)) != PULSARC_OK)
        return pc_seterr(e, el, err, "client is closed");
    return PULSARC_OK;
}

/* Undoes a partial creation: closes what came up, drops every reference. */
static void undo(pulsarc_producer_t *parent, const int *up) {
    for (int i = 0; i < parent->nparts; i++) {
        if (!parent->parts[i])
            continue;
        if (up[i])
            pc_producer_close_one(parent->parts[i]);
        pc_producer_unref(parent->parts[i]);
    }
    free(parent->parts);
    parent->parts = NULL;
    parent->nparts = 0;
}

/* Waits for every started partition; up[i] = 1 where it came up. */
static pulsarc_err_t wait_all(pulsarc_producer_t *parent, int started, int *up, char *e, size_t el) {
    pulsarc_err_t first = PULSARC_OK;
    char m[512];
    for (int i = 0; i < started; i++) {
        pulsarc_err_t err = pc_producer_wait_created(parent->parts[i], m, sizeof m);
        up[i] = err == PULSARC_OK;
        if (err)
            pc_producer_unref(parent->parts[i]); /* do_start's reference */
        if (err && !first)
            first = pc_seterr(e, el, err, "partition %d: %s", i, m);
    }
    return first;
}

pulsarc_err_t pc_partitioned_new(pulsarc_client_t *c, pulsarc_producer_t *parent, int nparts,
                                 const pulsarc_conf_t *conf, char *e, size_t el) {
    parent->parts = calloc((size_t)nparts, sizeof *parent->parts);
    int *up = calloc((size_t)nparts, sizeof *up);
    if (!parent->parts || !up) {
        free(up);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    parent->nparts = nparts;
    pulsarc_err_t err = PULSARC_OK;
    int started = 0;
    while (started < nparts && !err)
        if ((err = start_partition(c, parent, started, conf, e, el)) == PULSARC_OK)
            started++;
    char ignore[8];
    pulsarc_err_t werr = wait_all(parent, started, up, err ? ignore : e, err ? sizeof ignore : el);
    err = err ? err : werr;
    if (err)
        undo(parent, up);
    free(up);
    if (err)
        return err;
    pc_router_init(&parent->router, conf, nparts);
    if (!parent->user_named) /* partitions get broker names; show the first */
        snprintf(parent->name, sizeof parent->name, "%s", parent->parts[0]->name);
    return PULSARC_OK;
}

pulsarc_err_t pc_partitioned_submit(pulsarc_producer_t *parent, send_item_t *it) {
    pthread_mutex_lock(&parent->lock);
    int closing = parent->closing;
    int i = pc_router_choose(&parent->router, it->msg, parent->nparts, -1);
    pthread_mutex_unlock(&parent->lock);
    if (closing)
        return PULSARC_ERR_CLOSED;
    if (i < 0) /* a custom router answered out of range, or none is set */
        return parent->router.mode == PC_ROUTE_CUSTOM && !parent->router.custom
                   ? PULSARC_ERR_STATE : PULSARC_ERR_INVALID_ARG;
    return pc_producer_submit(parent->parts[i], it);
}

pulsarc_err_t pc_partitioned_flush(pulsarc_producer_t *parent, int timeout_ms) {
    int64_t deadline = pc_now_ms() + timeout_ms;
    for (int i = 0; i < parent->nparts; i++) {
        int left = timeout_ms < 0 ? -1 : (int)(deadline - pc_now_ms());
        pulsarc_err_t err = pc_producer_flush_one(parent->parts[i], left < 0 && timeout_ms >= 0 ? 0 : left);
        if (err)
            return err;
    }
    return PULSARC_OK;
}

void pc_partitioned_close(pulsarc_producer_t *parent) {
    pthread_mutex_lock(&parent->lock);
    parent->closing = 1;
    pthread_mutex_unlock(&parent->lock);
    for (int i = 0; i < parent->nparts; i++)
        pc_producer_close_one(parent->parts[i]);
}

pulsarc_err_t pulsarc_producer_set_router(pulsarc_producer_t *p, pulsarc_router_cb cb, void *opaque) {
    if (!p || !cb)
        return PULSARC_ERR_INVALID_ARG;
    if (!p->nparts)
        return PULSARC_ERR_STATE;
    pthread_mutex_lock(&p->lock);
    p->router.custom = cb;
    p->router.custom_opaque = opaque;
    p->router.mode = PC_ROUTE_CUSTOM;
    pthread_mutex_unlock(&p->lock);
    return PULSARC_OK;
}
