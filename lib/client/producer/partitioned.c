/*
 * Design notes: a producer on a partitioned topic is one handle (what the
 * user holds, registered with the client) over one producer per partition
 * ("<topic>-partition-<i>", producer.c), created in parallel. The handle
 * owns the router (router.c) and nothing else of the send path: a message
 * is routed on the sending thread, under the handle's lock, and handed to
 * its partition's producer through that producer's ops, whose io-thread
 * machinery does the rest. Each partition producer holds a reference on
 * the handle so callbacks can show the handle to the user. The
 * per-partition pending limit is min(maxPendingMessages,
 * maxPendingMessagesAcrossPartitions / N), as in the Java client. The
 * partition count is read once, at creation.
 */
#include <stdio.h>
#include <stdlib.h>

#include "client/producer/producer_int.h"
#include "core/err.h"

typedef struct pc_partitioned_producer {
    pulsarc_producer_t base;
    pc_producer_settings_t part_cfg; /* what each partition producer is given */
    int nparts;
    pulsarc_producer_t **parts;
    /* application threads */
    pthread_mutex_t lock;            /* guards router and closing */
    pc_router_t router;
    int closing;
} pc_partitioned_producer_t;

/* Every pulsarc_producer_t this file receives is the base of one of its own. */
#define PP(bp) ((pc_partitioned_producer_t *)(bp))

static int per_partition_pending(const pulsarc_conf_t *conf, int nparts) {
    int64_t own = pc_conf_int(conf, PC_PROP_MAX_PENDING_MESSAGES);
    int64_t across = pc_conf_int(conf, PC_PROP_MAX_PENDING_ACROSS_PARTITIONS) / nparts;
    int64_t v = own < across ? own : across;
    return v < 1 ? 1 : (int)v;
}

static pulsarc_err_t start_partition(pc_partitioned_producer_t *pp, int i,
                                     const pulsarc_conf_t *conf, char *e, size_t el) {
    char name[PC_TOPIC_MAX + 32];
    pulsarc_err_t err = pc_topic_partition_name(&pp->base.topic, i, name, sizeof name);
    if (err)
        return pc_seterr(e, el, err, "partition name of %s too long", pp->base.topic.full);
    pulsarc_producer_t *p;
    err = pc_topic_producer_alloc(pp->base.client, name, conf, &pp->part_cfg, &pp->base, &p, e, el);
    if (err)
        return err;
    pp->parts[i] = p;
    if ((err = pc_topic_producer_begin_create(p)) != PULSARC_OK)
        return pc_seterr(e, el, err, "client is closed");
    return PULSARC_OK;
}

/* Undoes a partial creation: closes what came up, drops every reference. */
static void undo(pc_partitioned_producer_t *pp, const int *up) {
    for (int i = 0; i < pp->nparts; i++) {
        if (!pp->parts[i])
            continue;
        if (up[i])
            pp->parts[i]->ops->close(pp->parts[i]);
        pc_producer_unref(pp->parts[i]);
    }
    free(pp->parts);
    pp->parts = NULL;
    pp->nparts = 0;
}

/* Waits for every started partition; up[i] = 1 where it came up. */
static pulsarc_err_t wait_all(pc_partitioned_producer_t *pp, int started, int *up, char *e,
                              size_t el) {
    pulsarc_err_t first = PULSARC_OK;
    char m[512];
    for (int i = 0; i < started; i++) {
        pulsarc_err_t err = pc_topic_producer_wait_created(pp->parts[i], m, sizeof m);
        up[i] = err == PULSARC_OK;
        if (err)
            pc_producer_unref(pp->parts[i]); /* do_start's reference */
        if (err && !first)
            first = pc_seterr(e, el, err, "partition %d: %s", i, m);
    }
    return first;
}

static pulsarc_err_t pp_create(pulsarc_producer_t *bp, const pulsarc_conf_t *conf, char *e,
                               size_t el) {
    pc_partitioned_producer_t *pp = PP(bp);
    int nparts = pp->nparts;
    int *up = calloc((size_t)nparts, sizeof *up);
    if (!up)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = PULSARC_OK;
    int started = 0;
    while (started < nparts && !err)
        if ((err = start_partition(pp, started, conf, e, el)) == PULSARC_OK)
            started++;
    char ignore[8];
    pulsarc_err_t werr = wait_all(pp, started, up, err ? ignore : e, err ? sizeof ignore : el);
    err = err ? err : werr;
    if (err)
        undo(pp, up);
    free(up);
    if (err)
        return err;
    pc_router_init(&pp->router, conf, nparts);
    if (!pp->base.user_named) /* partitions get broker names; show the first */
        snprintf(pp->base.name, sizeof pp->base.name, "%s", pp->parts[0]->name);
    return PULSARC_OK;
}

static pulsarc_err_t pp_submit(pulsarc_producer_t *bp, send_item_t *it) {
    pc_partitioned_producer_t *pp = PP(bp);
    pthread_mutex_lock(&pp->lock);
    int closing = pp->closing;
    int i = pc_router_choose(&pp->router, it->msg, pp->nparts, -1);
    pthread_mutex_unlock(&pp->lock);
    if (closing)
        return PULSARC_ERR_CLOSED;
    if (i < 0) /* a custom router answered out of range, or none is set */
        return pp->router.mode == PC_ROUTE_CUSTOM && !pp->router.custom
                   ? PULSARC_ERR_STATE : PULSARC_ERR_INVALID_ARG;
    return pp->parts[i]->ops->submit(pp->parts[i], it);
}

static pulsarc_err_t pp_flush(pulsarc_producer_t *bp, int timeout_ms) {
    pc_partitioned_producer_t *pp = PP(bp);
    int64_t deadline = pc_now_ms() + timeout_ms;
    for (int i = 0; i < pp->nparts; i++) {
        int left = timeout_ms < 0 ? -1 : (int)(deadline - pc_now_ms());
        pulsarc_producer_t *part = pp->parts[i];
        pulsarc_err_t err = part->ops->flush(part, left < 0 && timeout_ms >= 0 ? 0 : left);
        if (err)
            return err;
    }
    return PULSARC_OK;
}

static void pp_close(pulsarc_producer_t *bp) {
    pc_partitioned_producer_t *pp = PP(bp);
    pthread_mutex_lock(&pp->lock);
    pp->closing = 1;
    pthread_mutex_unlock(&pp->lock);
    for (int i = 0; i < pp->nparts; i++)
        pp->parts[i]->ops->close(pp->parts[i]);
}

/* The Java client reports the highest of the partitions'. */
static int64_t pp_last_sequence_id(pulsarc_producer_t *bp) {
    pc_partitioned_producer_t *pp = PP(bp);
    int64_t v = -1;
    for (int i = 0; i < pp->nparts; i++) {
        int64_t s = pp->parts[i]->ops->last_sequence_id(pp->parts[i]);
        v = s > v ? s : v;
    }
    return v;
}

static int pp_partitions(const pulsarc_producer_t *bp) { return PP(bp)->nparts; }

static pulsarc_err_t pp_set_router(pulsarc_producer_t *bp, pulsarc_router_cb cb, void *opaque) {
    pc_partitioned_producer_t *pp = PP(bp);
    pthread_mutex_lock(&pp->lock);
    pp->router.custom = cb;
    pp->router.custom_opaque = opaque;
    pp->router.mode = PC_ROUTE_CUSTOM;
    pthread_mutex_unlock(&pp->lock);
    return PULSARC_OK;
}

static void pp_add_stats(pulsarc_producer_t *bp, pc_producer_stats_acc_t *sum, uint64_t *pending) {
    pc_partitioned_producer_t *pp = PP(bp);
    for (int i = 0; i < pp->nparts; i++)
        pp->parts[i]->ops->add_stats(pp->parts[i], sum, pending);
}

/* Each partition holds a reference on the handle: drop ours on them first. */
static void pp_release(pulsarc_producer_t *bp) {
    pc_partitioned_producer_t *pp = PP(bp);
    for (int i = 0; i < pp->nparts; i++)
        pc_producer_unref(pp->parts[i]);
}

static void pp_free(pulsarc_producer_t *bp) {
    pc_partitioned_producer_t *pp = PP(bp);
    pthread_mutex_destroy(&pp->lock);
    pc_producer_base_clear(&pp->base);
    free(pp->parts);
    free(pp);
}

static const pc_producer_ops_t partitioned_ops = {
    .create = pp_create,
    .submit = pp_submit,
    .flush = pp_flush,
    .close = pp_close,
    .last_sequence_id = pp_last_sequence_id,
    .partitions = pp_partitions,
    .set_router = pp_set_router,
    .add_stats = pp_add_stats,
    .release = pp_release,
    .free = pp_free,
};

pulsarc_err_t pc_partitioned_alloc(pulsarc_client_t *c, const pc_topic_t *topic, int nparts,
                                   const pulsarc_conf_t *conf, const pc_producer_settings_t *s,
                                   pulsarc_producer_t **out, char *e, size_t el) {
    pc_partitioned_producer_t *pp = calloc(1, sizeof *pp);
    pulsarc_producer_t **parts = calloc((size_t)nparts, sizeof *parts);
    if (!pp || !parts) {
        free(pp);
        free(parts);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    pc_producer_base_init(&pp->base, &partitioned_ops, c, topic, conf);
    pthread_mutex_init(&pp->lock, NULL);
    pp->parts = parts; /* filled by create */
    pp->nparts = nparts;
    pp->part_cfg = *s;
    pp->part_cfg.max_pending = per_partition_pending(conf, nparts);
    *out = &pp->base;
    return PULSARC_OK;
}
