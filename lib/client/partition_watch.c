/*
 * Design notes: a partition-count watch (partition_watch.h) is a timer and
 * at most one PARTITIONED_METADATA lookup, both on the io thread, which
 * owns every field: no lock. A check that finds the previous lookup still
 * out skips, so a slow broker never piles lookups up.
 *
 * Lifetime: the watch counts its holders in `holds`, the start's (dropped
 * by cancel) and the outstanding lookup's (dropped by its answer); the
 * last one frees the watch and lets go of the owner's reference. So a
 * lookup answered after the cancel finds the watch still allocated, sees
 * it cancelled, and drops the answer without calling the owner.
 *
 * Failures: a failed lookup changes nothing; the next check asks again.
 * The first failure of a run is written to stderr, and the recovery after
 * it, so a broker that keeps failing is reported once, not every period.
 */
#include "client/partition_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pc_partition_watch {
    pulsarc_client_t *client;
    const pc_partition_watch_ops_t *ops;
    void *owner;
    char *topic;
    int known;          /* the count the owner follows */
    int64_t period_ms;
    pc_timer_t timer;
    int asking;         /* a lookup is outstanding */
    int cancelled;
    int failing;        /* the last lookup failed (already reported) */
    int holds;          /* the start's until cancel, the outstanding lookup's */
};

static void release(pc_partition_watch_t *w) {
    if (--w->holds > 0)
        return;
    void *owner = w->owner;
    const pc_partition_watch_ops_t *ops = w->ops;
    free(w->topic);
    free(w);
    ops->unref(owner);
}

static void note_failure(pc_partition_watch_t *w, pulsarc_err_t err, const char *msg) {
    if (!w->failing)
        fprintf(stderr,
                "pulsarc: partition count of %s: lookup failed: %s: %s; keeping %d partitions, "
                "asking again every %lld ms\n",
                w->topic, pulsarc_errname(err), msg ? msg : "", w->known, (long long)w->period_ms);
    w->failing = 1;
}

static void on_count(void *arg, pulsarc_err_t err, const char *msg, int n) {
    pc_partition_watch_t *w = arg;
    w->asking = 0;
    if (w->cancelled) {
        /* asked before the cancel: the owner is no longer told anything */
    } else if (err) {
        note_failure(w, err, msg);
    } else {
        if (w->failing)
            fprintf(stderr, "pulsarc: partition count of %s: lookup works again (%d partitions)\n",
                    w->topic, n);
        w->failing = 0;
        if (n > w->known) {
            int now = w->ops->grew(w->owner, w->topic, w->known, n);
            if (now > w->known) /* never below what it followed already */
                w->known = now > n ? n : now;
        }
    }
    release(w);
}

static void on_timer(void *arg) {
    pc_partition_watch_t *w = arg;
    if (!w->asking) {
        w->asking = 1;
        w->holds++;
        pc_lookup_partitions(&w->client->lookup, w->topic, on_count, w);
    }
    pc_timer_start(w->client->loop, &w->timer, w->period_ms);
}

pc_partition_watch_t *pc_partition_watch_start(pulsarc_client_t *c, const char *topic, int known,
                                               int64_t period_ms,
                                               const pc_partition_watch_ops_t *ops, void *owner) {
    pc_partition_watch_t *w = calloc(1, sizeof *w);
    char *name = strdup(topic);
    if (!w || !name || period_ms <= 0) {
        free(w);
        free(name);
        return NULL;
    }
    w->client = c;
    w->ops = ops;
    w->owner = owner;
    w->topic = name;
    w->known = known;
    w->period_ms = period_ms;
    w->holds = 1;
    ops->ref(owner);
    pc_timer_init(&w->timer, on_timer, w);
    pc_timer_start(c->loop, &w->timer, period_ms);
    return w;
}

void pc_partition_watch_cancel(pc_partition_watch_t *w) {
    if (!w || w->cancelled)
        return;
    w->cancelled = 1;
    pc_timer_stop(w->client->loop, &w->timer);
    release(w);
}
