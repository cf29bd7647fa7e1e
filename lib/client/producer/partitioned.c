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
 * maxPendingMessagesAcrossPartitions / N), N the count at creation;
 * partitions added later get the same limit (as in the Java client).
 *
 * Partitions added later (autoUpdatePartitionsInterval, 0: never): a
 * partition watch (client/partition_watch.h) asks for the partition
 * count on the io thread; a larger one starts a *growth*, at most one at
 * a time, which hops to the callback queue because creating a partition
 * producer may run application code (a crypto key reader). There the new
 * partitions' producers are created without waiting, each reporting back
 * on the callback queue; when the last has reported, the handle adopts
 * all of them and the router's count under the lock, in one step, so no
 * message is routed to a partition whose producer is not up. Then the
 * interceptors' on_partitions_change runs, on the callback queue. A
 * failed growth closes what it created and the next check tries again
 * (the watch is told the count adopted, not the count seen); a smaller
 * count or a failed lookup changes nothing. Close closes the partitions
 * being added too; a growth that finds the handle closing closes what it
 * created instead of adopting it.
 *
 * Threads: parts, nparts, router, growth and closing are under `lock`
 * (any thread; the parts array grows, so it is read only under the lock,
 * each partition producer living as long as the handle). The watch is the
 * io thread's, started and cancelled by posts, so close's cancel always
 * follows the start; it holds a reference on the handle while it lives, a
 * growth holds one until it is over.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "client/partition_watch.h"
#include "client/producer/interceptors.h"
#include "client/producer/producer_int.h"
#include "core/err.h"

struct pc_growth;

typedef struct pc_partitioned_producer {
    pulsarc_producer_t base;
    pc_producer_settings_t part_cfg; /* what each partition producer is given */
    pulsarc_conf_t *conf;            /* a copy, for partitions added later; NULL when never checked */
    int64_t period_ms;               /* autoUpdatePartitionsInterval; 0: never */
    pc_partition_watch_t *watch;     /* io thread; NULL when none runs */
    /* any thread, under lock */
    pthread_mutex_t lock;
    int nparts;
    pulsarc_producer_t **parts;
    pc_router_t router;
    struct pc_growth *growth;        /* partitions being added, or NULL */
    int closing;
} pc_partitioned_producer_t;

/* Partitions [from, to) being added; the fields under the handle's lock. */
typedef struct pc_growth {
    pc_partitioned_producer_t *pp;   /* referenced until the growth is over */
    int from, to;
    pulsarc_producer_t **parts;      /* index i - from; NULL until started */
    char *up;                        /* 1 where the broker created it */
    int left;                        /* outcomes still owed, the starter's own included */
    pulsarc_err_t err;               /* the first failure */
    pc_cb_item_t item;               /* the hop from the io thread to the callback queue */
} pc_growth_t;

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

static void start_checks(pc_partitioned_producer_t *pp);
static int pp_partitions(const pulsarc_producer_t *bp);

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
    start_checks(pp);
    return PULSARC_OK;
}

/* The producer of partition i, or NULL past the last one (any thread). */
static pulsarc_producer_t *part_at(pc_partitioned_producer_t *pp, int i) {
    pthread_mutex_lock(&pp->lock);
    pulsarc_producer_t *p = i < pp->nparts ? pp->parts[i] : NULL;
    pthread_mutex_unlock(&pp->lock);
    return p;
}

static int is_open(pc_partitioned_producer_t *pp) {
    pthread_mutex_lock(&pp->lock);
    int open = !pp->closing;
    pthread_mutex_unlock(&pp->lock);
    return open;
}

/* ---------- partitions added later: the growth (callback queue) ---------- */

static void growth_free(pc_growth_t *g) {
    pc_partitioned_producer_t *pp = g->pp;
    free(g->parts);
    free(g->up);
    free(g);
    pc_producer_unref(&pp->base);
}

/* Nothing adopted: closes what came up (a callback only starts a close) and lets go. */
static void growth_undo(pc_growth_t *g) {
    for (int k = 0; k < g->to - g->from; k++) {
        if (!g->parts[k])
            continue;
        if (g->up[k])
            g->parts[k]->ops->close(g->parts[k]);
        pc_producer_unref(g->parts[k]);
    }
}

/* Under the lock: the new partitions join the handle and the router's count. */
static int growth_adopt(pc_partitioned_producer_t *pp, pc_growth_t *g) {
    pulsarc_producer_t **parts = realloc(pp->parts, (size_t)g->to * sizeof *parts);
    if (!parts)
        return 0;
    for (int i = g->from; i < g->to; i++)
        parts[i] = g->parts[i - g->from];
    pp->parts = parts;
    pp->nparts = g->to;
    return 1;
}

/* Every new partition has reported: adopt them all, or none. */
static void growth_finish(pc_growth_t *g) {
    pc_partitioned_producer_t *pp = g->pp;
    pc_producer_icpts_t *ic = NULL;
    pthread_mutex_lock(&pp->lock);
    int adopted = !g->err && !pp->closing && growth_adopt(pp, g);
    if (adopted) /* read before close can take it away: close takes this lock first */
        ic = pc_producer_icpts_hold(pp->base.icpts);
    pp->growth = NULL;
    pthread_mutex_unlock(&pp->lock);
    if (adopted)
        pc_producer_icpts_partitions(ic, &pp->base, pp->base.topic.full, g->to);
    else
        growth_undo(g);
    pc_producer_icpts_release(ic);
    growth_free(g);
}

/* n more outcomes arrived, err the worst of them; the last finishes the growth. */
static void growth_report(pc_growth_t *g, pulsarc_err_t err, int n) {
    pc_partitioned_producer_t *pp = g->pp;
    pthread_mutex_lock(&pp->lock);
    if (err && !g->err)
        g->err = err;
    g->left -= n;
    int last = g->left == 0;
    pthread_mutex_unlock(&pp->lock);
    if (last)
        growth_finish(g);
}

static void on_added_created(pulsarc_producer_t *p, pulsarc_err_t err, const char *msg, void *arg) {
    pc_growth_t *g = arg;
    (void)msg; /* the next check tries again */
    pthread_mutex_lock(&g->pp->lock);
    if (!err)
        g->up[p->topic.partition - g->from] = 1;
    pthread_mutex_unlock(&g->pp->lock);
    growth_report(g, err, 1);
}

/*
 * Starts partition i; its outcome then reaches on_added_created. It is
 * visible to close only once started, so close never meets a producer it
 * cannot close; one started after close began is closed here.
 */
static pulsarc_err_t growth_start(pc_growth_t *g, int i) {
    pc_partitioned_producer_t *pp = g->pp;
    char name[PC_TOPIC_MAX + 32], e[256];
    pulsarc_producer_t *p;
    if (!is_open(pp))
        return PULSARC_ERR_CLOSED;
    pulsarc_err_t err = pc_topic_partition_name(&pp->base.topic, i, name, sizeof name);
    if (!err)
        err = pc_topic_producer_alloc(pp->base.client, name, pp->conf, &pp->part_cfg, &pp->base, &p,
                                      e, sizeof e);
    if (err)
        return err;
    if ((err = pc_topic_producer_create_async(p, on_added_created, g)) != PULSARC_OK) {
        pc_producer_unref(p);
        return err;
    }
    pthread_mutex_lock(&pp->lock);
    g->parts[i - g->from] = p;
    int closing = pp->closing;
    pthread_mutex_unlock(&pp->lock);
    if (closing)
        p->ops->close(p);
    return PULSARC_OK;
}

static void growth_run(pc_cb_item_t *it) {
    pc_growth_t *g = (pc_growth_t *)((char *)it - offsetof(pc_growth_t, item));
    pthread_mutex_lock(&g->pp->lock);
    g->left = g->to - g->from + 1; /* before any outcome can arrive */
    pthread_mutex_unlock(&g->pp->lock);
    pulsarc_err_t err = PULSARC_OK;
    int i = g->from;
    while (i < g->to && (err = growth_start(g, i)) == PULSARC_OK)
        i++;
    growth_report(g, err, g->to - i + 1); /* the ones never started, and the starter */
}

/* Under the lock: a growth to n partitions, holding a reference on the handle. */
static pc_growth_t *growth_new(pc_partitioned_producer_t *pp, int n) {
    size_t k = (size_t)(n - pp->nparts);
    pc_growth_t *g = calloc(1, sizeof *g);
    pulsarc_producer_t **parts = calloc(k, sizeof *parts);
    char *up = calloc(k, 1);
    if (!g || !parts || !up) { /* the next check tries again */
        free(g);
        free(parts);
        free(up);
        return NULL;
    }
    g->parts = parts;
    g->up = up;
    g->pp = pp;
    g->from = pp->nparts;
    g->to = n;
    g->item.run = growth_run;
    pc_producer_ref(&pp->base);
    return g;
}

/* ---------- following the partition count (io thread) ---------- */

/* More partitions than adopted: starts a growth unless one is under way. */
static int on_grew(void *owner, const char *topic, int known, int n) {
    pc_partitioned_producer_t *pp = owner;
    pc_growth_t *g = NULL;
    (void)topic;
    (void)known; /* pp->nparts is what counts: a growth adopts its partitions later */
    pthread_mutex_lock(&pp->lock);
    if (!pp->closing && !pp->growth && n > pp->nparts && (g = growth_new(pp, n)))
        pp->growth = g;
    int follows = pp->nparts; /* a growth that fails is then offered again */
    pthread_mutex_unlock(&pp->lock);
    if (g)
        pc_cbq_push(&pp->base.client->cbq, &g->item);
    return follows;
}

static void watch_ref(void *owner) { pc_producer_ref(&((pc_partitioned_producer_t *)owner)->base); }
static void watch_unref(void *owner) { pc_producer_unref(&((pc_partitioned_producer_t *)owner)->base); }

static const pc_partition_watch_ops_t watch_ops = {on_grew, watch_ref, watch_unref};

static void do_start_checks(void *arg) {
    pc_partitioned_producer_t *pp = arg;
    if (is_open(pp))
        pp->watch = pc_partition_watch_start(pp->base.client, pp->base.topic.full,
                                             pp_partitions(&pp->base), pp->period_ms, &watch_ops, pp);
    pc_producer_unref(&pp->base); /* the post's */
}

static void do_stop_checks(void *arg) {
    pc_partitioned_producer_t *pp = arg;
    pc_partition_watch_cancel(pp->watch);
    pp->watch = NULL;
    pc_producer_unref(&pp->base); /* the post's */
}

/* Runs fn on the io thread with a reference on the handle. */
static void post_ref(pc_partitioned_producer_t *pp, pc_loop_fn fn) {
    pc_producer_ref(&pp->base);
    if (pc_client_post(pp->base.client, fn, pp) != PULSARC_OK)
        pc_producer_unref(&pp->base);
}

static void start_checks(pc_partitioned_producer_t *pp) {
    if (pp->period_ms > 0)
        post_ref(pp, do_start_checks);
}

/* ---------- the rest of the ops ---------- */

static pulsarc_err_t pp_submit(pulsarc_producer_t *bp, send_item_t *it) {
    pc_partitioned_producer_t *pp = PP(bp);
    pthread_mutex_lock(&pp->lock);
    int closing = pp->closing;
    int i = pc_router_choose(&pp->router, it->msg, pp->nparts, -1);
    pulsarc_producer_t *part = i >= 0 ? pp->parts[i] : NULL;
    pthread_mutex_unlock(&pp->lock);
    if (closing)
        return PULSARC_ERR_CLOSED;
    if (!part) /* a custom router answered out of range, or none is set */
        return pp->router.mode == PC_ROUTE_CUSTOM && !pp->router.custom
                   ? PULSARC_ERR_STATE : PULSARC_ERR_INVALID_ARG;
    return part->ops->submit(part, it);
}

static pulsarc_err_t pp_flush(pulsarc_producer_t *bp, int timeout_ms) {
    pc_partitioned_producer_t *pp = PP(bp);
    int64_t deadline = pc_now_ms() + timeout_ms;
    pulsarc_producer_t *part;
    for (int i = 0; (part = part_at(pp, i)) != NULL; i++) {
        int left = timeout_ms < 0 ? -1 : (int)(deadline - pc_now_ms());
        pulsarc_err_t err = part->ops->flush(part, left < 0 && timeout_ms >= 0 ? 0 : left);
        if (err)
            return err;
    }
    return PULSARC_OK;
}

static pulsarc_err_t pp_flush_async(pulsarc_producer_t *bp, pc_op_t *op) {
    pc_partitioned_producer_t *pp = PP(bp);
    pulsarc_producer_t *part;
    for (int i = 0; (part = part_at(pp, i)) != NULL; i++) {
        pulsarc_err_t err = part->ops->flush_async(part, op);
        if (err)
            return err;
    }
    return PULSARC_OK;
}

/* Under the lock: the partitions a growth has started, each referenced. */
static int adding_snapshot(pc_partitioned_producer_t *pp, pulsarc_producer_t ***out) {
    pc_growth_t *g = pp->growth;
    int n = 0;
    *out = g ? calloc((size_t)(g->to - g->from), sizeof **out) : NULL;
    for (int k = 0; *out && k < g->to - g->from; k++)
        if (g->parts[k]) {
            pc_producer_ref(g->parts[k]);
            (*out)[n++] = g->parts[k];
        }
    return n;
}

static void pp_close(pulsarc_producer_t *bp) {
    pc_partitioned_producer_t *pp = PP(bp);
    pulsarc_producer_t **adding;
    pthread_mutex_lock(&pp->lock);
    int first = !pp->closing;
    pp->closing = 1;
    int nadding = adding_snapshot(pp, &adding);
    pthread_mutex_unlock(&pp->lock);
    if (first && pp->period_ms > 0)
        post_ref(pp, do_stop_checks);
    pulsarc_producer_t *part;
    for (int i = 0; (part = part_at(pp, i)) != NULL; i++)
        part->ops->close(part);
    for (int k = 0; k < nadding; k++) { /* the growth then finds the handle closing */
        adding[k]->ops->close(adding[k]);
        pc_producer_unref(adding[k]);
    }
    free(adding);
}

/* The Java client reports the highest of the partitions'. */
static int64_t pp_last_sequence_id(pulsarc_producer_t *bp) {
    pc_partitioned_producer_t *pp = PP(bp);
    int64_t v = -1;
    pulsarc_producer_t *part;
    for (int i = 0; (part = part_at(pp, i)) != NULL; i++) {
        int64_t s = part->ops->last_sequence_id(part);
        v = s > v ? s : v;
    }
    return v;
}

static int pp_partitions(const pulsarc_producer_t *bp) {
    pc_partitioned_producer_t *pp = PP(bp); /* reading takes the lock */
    pthread_mutex_lock(&pp->lock);
    int n = pp->nparts;
    pthread_mutex_unlock(&pp->lock);
    return n;
}

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
    pulsarc_producer_t *part;
    for (int i = 0; (part = part_at(pp, i)) != NULL; i++)
        part->ops->add_stats(part, sum, pending);
}

/* Each partition holds a reference on the handle: drop ours on them first. */
static void pp_release(pulsarc_producer_t *bp) {
    pc_partitioned_producer_t *pp = PP(bp);
    pulsarc_producer_t *part;
    for (int i = 0; (part = part_at(pp, i)) != NULL; i++)
        pc_producer_unref(part);
}

static void pp_free(pulsarc_producer_t *bp) {
    pc_partitioned_producer_t *pp = PP(bp);
    pthread_mutex_destroy(&pp->lock);
    pc_producer_base_clear(&pp->base);
    pulsarc_conf_destroy(pp->conf);
    free(pp->parts);
    free(pp);
}

static const pc_producer_ops_t partitioned_ops = {
    .create = pp_create,
    .submit = pp_submit,
    .flush = pp_flush,
    .flush_async = pp_flush_async,
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
    int64_t period_s = pc_conf_int(conf, PC_PROP_AUTO_UPDATE_PARTITIONS_S);
    pulsarc_conf_t *copy = period_s <= 0 ? NULL : conf ? pulsarc_conf_dup(conf) : pulsarc_conf_new();
    if (!pp || !parts || (period_s > 0 && !copy)) {
        free(pp);
        free(parts);
        pulsarc_conf_destroy(copy);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    pc_producer_base_init(&pp->base, &partitioned_ops, c, topic, conf);
    pthread_mutex_init(&pp->lock, NULL);
    pp->parts = parts; /* filled by create */
    pp->nparts = nparts;
    pp->part_cfg = *s;
    pp->part_cfg.max_pending = per_partition_pending(conf, nparts);
    pp->conf = copy;
    pp->period_ms = period_s * 1000;
    *out = &pp->base;
    return PULSARC_OK;
}
