/*
 * Design notes: one consumer handle over many topics — the partitions of a
 * partitioned topic, a list of topics, or every topic of a namespace
 * matching a regex. The parent has no broker presence; each child is an
 * ordinary consumer on one topic (or partition) that delivers into the
 * parent's receive queue, so receive, batch receive and the listener work
 * unchanged. Acks are routed to the child that received the message (by
 * the message, or by the partition in its id). Permits stay per child.
 *
 * Discovery runs on the io thread: new partitions of the topics
 * subscribed by name get children of their own through one partition
 * watch per partitioned topic (client/partition_watch.h, every
 * autoUpdatePartitionsInterval), new topics matching a pattern through a
 * poll of the namespace's topic list on a timer
 * (patternAutoDiscoveryPeriod). A regex subscription also keeps a
 * topic-list watcher (topic_watcher.h) when the broker offers one, so
 * topics created or deleted are pushed at once; polling stays as the
 * fallback and the safety net. Both feed the same two steps: a full
 * list is reconciled (matching topics without a child get one, children
 * whose topic is no longer listed are closed), a pushed change adds and
 * closes just what it names.
 *
 * The parent is its own kind behind the consumer table of operations
 * (consumer_int.h): its handle owns the receive queue; the children are
 * single-topic consumers (single.h) whose `queue` is the parent's.
 *
 * Lifetime: the parent holds a reference on every child until it is
 * destroyed; each child holds one on its parent, released when the child
 * is freed, so a late callback on a child never sees a freed parent.
 *
 * Threads: the children array is guarded by the parent's lock (any
 * thread); discovery state is the io thread's once the consumer is
 * created.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/single.h"
#include "client/consumer/topic_watcher.h"
#include "client/partition_watch.h"
#include "core/err.h"

typedef struct pc_discovery {
    char **bases;          /* topics subscribed by name, for partition discovery */
    int *nparts;           /* io thread: their partition counts followed (0: not partitioned) */
    size_t nbases;
    int64_t parts_period_ms; /* autoUpdatePartitionsInterval; 0: partitions are not followed */
    pc_partition_watch_t **part_watches; /* io thread: one per partitioned base, or NULL */
    char ns[600];          /* regex subscriptions: "tenant/ns" */
    regex_t re;
    int has_re;
    char **seen;           /* topic names that already have a child */
    size_t nseen, capseen;
    pc_timer_t timer;      /* regex subscriptions: the namespace poll */
    int64_t period_ms;     /* patternAutoDiscoveryPeriod; 0: no poll */
    int timer_held;        /* the timer holds a parent reference */
    char watch_pattern[PC_TOPIC_MAX + 16]; /* the regex as the broker's watcher gets it */
    int watch;             /* patternTopicWatcherEnabled */
    pc_topic_watcher_t *watcher; /* io thread; NULL when none runs */
    uint64_t changes;      /* io thread: children added or closed by discovery so far */
} pc_discovery_t;

typedef struct pc_multi {
    pulsarc_consumer_t base;
    pc_single_t **children;      /* under base.lock */
    size_t nchildren, capchildren;
    pc_single_t **retired;       /* under base.lock: closed children with letter producers */
    size_t nretired;
    pulsarc_conf_t *conf_copy;   /* for children found later */
    pc_discovery_t disc;
} pc_multi_t;

static pc_multi_t *multi_of(pulsarc_consumer_t *c) { return (pc_multi_t *)c; }

/* ---------- bookkeeping ---------- */

static int seen_has(const pc_discovery_t *m, const char *topic) {
    for (size_t i = 0; i < m->nseen; i++)
        if (strcmp(m->seen[i], topic) == 0)
            return 1;
    return 0;
}

static int seen_add(pc_discovery_t *m, const char *topic) {
    if (m->nseen == m->capseen) {
        size_t cap = m->capseen ? m->capseen * 2 : 16;
        char **s = realloc(m->seen, cap * sizeof *s);
        if (!s)
            return -1;
        m->seen = s;
        m->capseen = cap;
    }
    return (m->seen[m->nseen] = strdup(topic)) ? (int)m->nseen++ * 0 : -1;
}

static void seen_remove(pc_discovery_t *m, const char *topic) {
    for (size_t i = 0; i < m->nseen; i++) {
        if (strcmp(m->seen[i], topic) == 0) {
            free(m->seen[i]);
            m->seen[i] = m->seen[--m->nseen];
            return;
        }
    }
}

static void multi_free(pulsarc_consumer_t *base) {
    pc_multi_t *p = multi_of(base);
    pc_discovery_t *m = &p->disc;
    free(p->children);
    free(p->retired);
    pulsarc_conf_destroy(p->conf_copy);
    for (size_t i = 0; i < m->nbases; i++)
        free(m->bases[i]);
    for (size_t i = 0; i < m->nseen; i++)
        free(m->seen[i]);
    free(m->bases);
    free(m->nparts);
    free(m->part_watches);
    free(m->seen);
    if (m->has_re)
        regfree(&m->re);
    pc_queue_clear_locked(&p->base); /* last reference: nobody else can hold the lock */
    pc_consumer_base_free(&p->base);
    free(p);
}

static int add_to_parent(pc_multi_t *p, pc_single_t *c) {
    pthread_mutex_lock(&p->base.lock);
    int ok = 1;
    if (p->nchildren == p->capchildren) {
        size_t cap = p->capchildren ? p->capchildren * 2 : 8;
        pc_single_t **a = realloc(p->children, cap * sizeof *a);
        ok = a != NULL;
        if (ok) {
            p->children = a;
            p->capchildren = cap;
        }
    }
    if (ok)
        p->children[p->nchildren++] = c;
    pthread_mutex_unlock(&p->base.lock);
    return ok ? 0 : -1;
}

/* A child on topic, in the parent's list, not yet subscribed. */
static pulsarc_err_t prepare_child(pc_multi_t *p, const char *topic, pc_single_t **cp, char *e,
                                   size_t el) {
    pc_single_t *c;
    pulsarc_err_t err = pc_single_prepare(p->base.client, topic, p->base.sub, p->conf_copy, &c, e, el);
    if (err)
        return err;
    c->queue = &p->base;
    pc_consumer_ref(&p->base);
    c->base.listener = NULL; /* the parent's queue runs the listener */
    pc_consumer_fixed_queue(&c->base); /* auto-scaling is for single-topic consumers */
    if (add_to_parent(p, c)) {
        pc_consumer_unref(&c->base);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    seen_add(&p->disc, c->base.topic.full);
    *cp = c;
    return PULSARC_OK;
}

/* Creates a child on topic; with wait, subscribes before returning. */
static pulsarc_err_t add_child(pc_multi_t *p, const char *topic, int wait, char *e, size_t el) {
    pc_single_t *c;
    pulsarc_err_t err = prepare_child(p, topic, &c, e, el);
    if (err)
        return err;
    if (!wait) {
        pc_single_start_async(c);
        return PULSARC_OK;
    }
    return pc_single_start(c, 0, e, el);
}

/*
 * Children for topic: one per partition, subscribed together, or one for a
 * plain topic. Children prepared before a failure are started anyway, so
 * the caller's close finds every child in a state it can close.
 */
static pulsarc_err_t add_topic(pc_multi_t *p, const char *topic, int parts, char *e, size_t el) {
    if (parts <= 0)
        return add_child(p, topic, 1, e, el);
    pc_single_t **kids = calloc((size_t)parts, sizeof *kids);
    if (!kids)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = PULSARC_OK;
    int n = 0;
    while (n < parts && !err) {
        char name[PC_TOPIC_MAX + 32];
        snprintf(name, sizeof name, "%s-partition-%d", topic, n);
        if (!(err = prepare_child(p, name, &kids[n], e, el)))
            n++;
    }
    char started_err[256];
    pulsarc_err_t serr = pc_single_start_all(kids, (size_t)n, err ? started_err : e,
                                             err ? sizeof started_err : el);
    free(kids);
    return err ? err : serr;
}

/* ---------- routing ---------- */

static pc_single_t *multi_route(pulsarc_consumer_t *base, const pulsarc_msgid_t *id,
                                const pulsarc_msg_t *msg) {
    pc_multi_t *c = multi_of(base);
    pc_single_t *found = NULL;
    int matches = 0;
    pthread_mutex_lock(&c->base.lock);
    for (size_t i = 0; i < c->nchildren; i++) {
        pc_single_t *k = c->children[i];
        if (msg && msg->rx_owner == &k->base) {
            found = k;
            matches = 1;
            break;
        }
        if (id && k->base.topic.partition == id->partition) {
            found = k;
            matches++;
        }
    }
    pthread_mutex_unlock(&c->base.lock);
    return matches == 1 ? found : NULL; /* ambiguous ids are refused */
}

static void multi_member_ended(pulsarc_consumer_t *base) {
    pc_multi_t *p = multi_of(base);
    pthread_mutex_lock(&p->base.lock);
    int all = 1;
    for (size_t i = 0; i < p->nchildren; i++) {
        pc_single_t *k = p->children[i];
        pthread_mutex_lock(&k->base.lock);
        all = all && k->base.end_of_topic;
        pthread_mutex_unlock(&k->base.lock);
    }
    if (all)
        p->base.end_of_topic = 1;
    pc_queue_wake_locked(&p->base);
    pthread_mutex_unlock(&p->base.lock);
    if (all)
        pc_consumer_notify_event(&p->base, PULSARC_CONSUMER_END_OF_TOPIC);
}

/* ---------- discovery (io thread) ---------- */

static int parent_open(pc_multi_t *p) {
    pthread_mutex_lock(&p->base.lock);
    int open = !p->base.closing;
    pthread_mutex_unlock(&p->base.lock);
    return open;
}

/* The partition watch of a subscribed topic found n partitions: children for the new ones. */
static int on_parts_grew(void *owner, const char *topic, int known, int n) {
    pc_multi_t *p = owner;
    pc_discovery_t *m = &p->disc;
    size_t b = 0;
    while (b < m->nbases && strcmp(m->bases[b], topic) != 0)
        b++;
    if (b == m->nbases) /* not one of ours: cannot happen, the watches are per base */
        return known;
    for (int i = m->nparts[b]; parent_open(p) && i < n; i++) {
        char name[PC_TOPIC_MAX + 32];
        snprintf(name, sizeof name, "%s-partition-%d", m->bases[b], i);
        if (add_child(p, name, 0, NULL, 0) != PULSARC_OK)
            break; /* the next check offers the rest again */
        m->nparts[b] = i + 1;
    }
    return m->nparts[b];
}

static void parts_ref(void *owner) { pc_consumer_ref(&((pc_multi_t *)owner)->base); }
static void parts_unref(void *owner) { pc_consumer_unref(&((pc_multi_t *)owner)->base); }

static const pc_partition_watch_ops_t parts_ops = {on_parts_grew, parts_ref, parts_unref};

/* "persistent://t/ns/x-partition-3" -> "t/ns/x" (what the regex sees). */
static void match_name(const char *topic, char *out, size_t len) {
    const char *s = strstr(topic, "://");
    snprintf(out, len, "%s", s ? s + 3 : topic);
    char *suffix = strstr(out, "-partition-");
    if (suffix)
        *suffix = '\0';
}

static int matches(pc_discovery_t *m, const char *topic) {
    char name[PC_TOPIC_MAX];
    match_name(topic, name, sizeof name);
    return regexec(&m->re, name, 0, NULL, 0) == 0;
}

/* Keeps a closed child until release, which closes its letter-topic producers. */
static void add_retired(pc_multi_t *p, pc_single_t *c) {
    pthread_mutex_lock(&p->base.lock);
    pc_single_t **r = realloc(p->retired, (p->nretired + 1) * sizeof *r);
    if (r) {
        p->retired = r;
        p->retired[p->nretired++] = c;
    }
    pthread_mutex_unlock(&p->base.lock);
    if (!r)
        pc_consumer_unref(&c->base); /* its producers then close when the client does */
}

/* A matching topic without a child gets one (subscribed without waiting). */
static void topic_added(pc_multi_t *p, const char *topic) {
    if (!seen_has(&p->disc, topic) && matches(&p->disc, topic)) {
        p->disc.changes++;
        add_child(p, topic, 0, NULL, 0);
    }
}

/* The topic is gone: its child is closed and what it queued is dropped. */
static void topic_deleted(pc_multi_t *p, const char *topic) {
    pc_single_t *gone = NULL;
    pthread_mutex_lock(&p->base.lock);
    for (size_t i = 0; i < p->nchildren && !gone; i++) {
        if (strcmp(p->children[i]->base.topic.full, topic) == 0) {
            gone = p->children[i];
            memmove(&p->children[i], &p->children[i + 1], (p->nchildren - i - 1) * sizeof *p->children);
            p->nchildren--;
        }
    }
    pthread_mutex_unlock(&p->base.lock);
    seen_remove(&p->disc, topic); /* topic may be the entry itself: not read after this */
    if (!gone)
        return;
    p->disc.changes++;
    pc_single_drop_queued(gone);
    pc_single_close_async(gone);
    if (gone->dlq)
        add_retired(p, gone); /* its letter producers are closed off the io thread, at release */
    else
        pc_consumer_unref(&gone->base);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A full list of the namespace's topics (or of those matching): add and close to fit it. */
static void reconcile(pc_multi_t *p, char *const *topics, size_t n) {
    pc_discovery_t *m = &p->disc;
    char **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return;
    memcpy(sorted, topics, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_str);
    for (size_t i = m->nseen; i-- > 0;) { /* backwards: topic_deleted moves the last one here */
        char *t = m->seen[i];
        if (!bsearch(&t, sorted, n, sizeof *sorted, cmp_str))
            topic_deleted(p, t);
    }
    free(sorted);
    for (size_t i = 0; i < n; i++)
        topic_added(p, topics[i]);
}

typedef struct poll_ctx {
    pc_multi_t *p;
    uint64_t changes; /* disc.changes when the list was asked for */
} poll_ctx_t;

/*
 * A polled list older than a change the watcher pushed meanwhile would
 * undo it (close a topic just created, re-create one just deleted): such
 * a list is skipped, the next poll reconciles.
 */
static void on_topics(void *arg, pulsarc_err_t err, const char *msg, char **topics, size_t n) {
    poll_ctx_t *x = arg;
    pc_multi_t *p = x->p;
    (void)msg;
    if (!err && parent_open(p) && x->changes == p->disc.changes)
        reconcile(p, topics, n);
    free(x);
    pc_consumer_unref(&p->base);
}

/* ---------- the topic-list watcher (io thread) ---------- */

static void watch_list(void *owner, char *const *topics, size_t n) {
    pc_multi_t *p = owner;
    if (parent_open(p))
        reconcile(p, topics, n);
}

static void watch_update(void *owner, char *const *added, size_t nadded, char *const *deleted,
                         size_t ndeleted) {
    pc_multi_t *p = owner;
    for (size_t i = 0; i < ndeleted && parent_open(p); i++)
        topic_deleted(p, deleted[i]);
    for (size_t i = 0; i < nadded && parent_open(p); i++)
        topic_added(p, added[i]);
}

static void watch_ref(void *owner) { pc_consumer_ref(&((pc_multi_t *)owner)->base); }
static void watch_unref(void *owner) { pc_consumer_unref(&((pc_multi_t *)owner)->base); }

static const pc_topic_watcher_ops_t watch_ops = {watch_list, watch_update, watch_ref, watch_unref};

static void do_start_watcher(void *arg) {
    pc_multi_t *p = arg;
    pc_discovery_t *m = &p->disc;
    if (parent_open(p)) {
        char lookup[PC_TOPIC_MAX + 32]; /* any topic of the namespace finds a broker that serves it */
        snprintf(lookup, sizeof lookup, "persistent://%s/pattern-consumer", m->ns);
        m->watcher = pc_topic_watcher_start(p->base.client, m->ns, m->watch_pattern, lookup,
                                            &watch_ops, p);
    }
    pc_consumer_unref(&p->base);
}

/* Asks for the namespace's topics; on_topics reconciles the answer. */
static void discover(pc_multi_t *p) {
    pc_discovery_t *m = &p->disc;
    poll_ctx_t *x = malloc(sizeof *x);
    if (!x)
        return;
    x->p = p;
    x->changes = m->changes;
    pc_consumer_ref(&p->base);
    pc_lookup_namespace_topics(&p->base.client->lookup, m->ns, on_topics, x);
}

static void on_discovery_timer(void *arg) {
    pc_multi_t *p = arg;
    if (!parent_open(p)) {
        p->disc.timer_held = 0;
        pc_consumer_unref(&p->base);
        return;
    }
    discover(p);
    pc_timer_start(p->base.client->loop, &p->disc.timer, p->disc.period_ms);
}

static void do_start_discovery(void *arg) {
    pc_multi_t *p = arg;
    p->disc.timer_held = 1; /* keeps the reference the post took */
    pc_timer_start(p->base.client->loop, &p->disc.timer, p->disc.period_ms);
}

/* One partition watch per partitioned topic subscribed by name. */
static void do_start_part_watches(void *arg) {
    pc_multi_t *p = arg;
    pc_discovery_t *m = &p->disc;
    if (parent_open(p) && (m->part_watches = calloc(m->nbases, sizeof *m->part_watches)))
        for (size_t i = 0; i < m->nbases; i++)
            if (m->nparts[i] > 0)
                m->part_watches[i] = pc_partition_watch_start(p->base.client, m->bases[i],
                                                              m->nparts[i], m->parts_period_ms,
                                                              &parts_ops, p);
    pc_consumer_unref(&p->base);
}

static void do_stop_discovery(void *arg) {
    pc_multi_t *p = arg;
    pc_topic_watcher_stop(p->disc.watcher);
    p->disc.watcher = NULL;
    for (size_t i = 0; p->disc.part_watches && i < p->disc.nbases; i++)
        pc_partition_watch_cancel(p->disc.part_watches[i]);
    free(p->disc.part_watches);
    p->disc.part_watches = NULL;
    if (p->disc.timer_held) {
        pc_timer_stop(p->base.client->loop, &p->disc.timer);
        p->disc.timer_held = 0;
        pc_consumer_unref(&p->base);
    }
    pc_consumer_unref(&p->base);
}

/* Regex subscriptions: the namespace poll every period_s. */
static void start_discovery(pc_multi_t *p, int64_t period_s) {
    if (period_s <= 0)
        return;
    p->disc.period_ms = period_s * 1000;
    pc_timer_init(&p->disc.timer, on_discovery_timer, p);
    pc_consumer_post(&p->base, do_start_discovery, p);
}

/* Topics subscribed by name: their partition counts every period_s. */
static void start_part_watches(pc_multi_t *p, int64_t period_s) {
    if (period_s <= 0)
        return;
    p->disc.parts_period_ms = period_s * 1000;
    if (pc_consumer_post(&p->base, do_start_part_watches, p) != PULSARC_OK)
        p->disc.parts_period_ms = 0;
}

/* ---------- closing ---------- */

static size_t snapshot(pc_multi_t *p, pc_single_t ***out) {
    pthread_mutex_lock(&p->base.lock);
    size_t n = p->nchildren;
    *out = calloc(n ? n : 1, sizeof **out);
    for (size_t i = 0; *out && i < n; i++)
        (*out)[i] = p->children[i];
    pthread_mutex_unlock(&p->base.lock);
    return *out ? n : 0;
}

static pulsarc_err_t multi_close(pulsarc_consumer_t *base, int unsubscribe) {
    pc_multi_t *p = multi_of(base);
    pthread_mutex_lock(&p->base.lock);
    int first = !p->base.close_posted;
    p->base.close_posted = p->base.closing = 1;
    pc_queue_wake_locked(&p->base);
    pthread_mutex_unlock(&p->base.lock);
    if (first && (p->disc.period_ms > 0 || p->disc.parts_period_ms > 0 || p->disc.watch))
        pc_consumer_post(&p->base, do_stop_discovery, p);
    pc_single_t **kids;
    size_t n = snapshot(p, &kids);
    pulsarc_err_t err = PULSARC_OK, e;
    for (size_t i = 0; i < n; i++) {
        e = unsubscribe ? pulsarc_consumer_unsubscribe(&kids[i]->base)
                        : pulsarc_consumer_close(&kids[i]->base);
        if (!err)
            err = e;
    }
    free(kids);
    pthread_mutex_lock(&p->base.lock);
    p->base.closed = 1;
    pthread_cond_broadcast(&p->base.cond);
    pthread_mutex_unlock(&p->base.lock);
    return err;
}

/* Drops the parent's references on its children (pulsarc_consumer_destroy). */
static void multi_release(pulsarc_consumer_t *base) {
    pc_multi_t *p = multi_of(base);
    pc_single_t **kids;
    size_t n = snapshot(p, &kids);
    pthread_mutex_lock(&p->base.lock);
    p->nchildren = 0;
    pc_single_t **retired = p->retired;
    size_t nretired = p->nretired;
    p->retired = NULL;
    p->nretired = 0;
    pthread_mutex_unlock(&p->base.lock);
    for (size_t i = 0; i < nretired; i++) {
        pc_dlq_close(retired[i]);
        pc_consumer_unref(&retired[i]->base);
    }
    free(retired);
    pc_queue_clear(&p->base);
    for (size_t i = 0; i < n; i++) {
        pc_dlq_close(kids[i]); /* their letter-topic producers are ours to close */
        pc_consumer_unref(&kids[i]->base);
    }
    free(kids);
}

/* ---------- the other operations: each child's, combined ---------- */

static pulsarc_err_t multi_each(pulsarc_consumer_t *base, pulsarc_err_t (*fn)(pc_single_t *, void *),
                                void *arg) {
    pc_multi_t *p = multi_of(base);
    pulsarc_err_t err = PULSARC_OK;
    pthread_mutex_lock(&p->base.lock);
    for (size_t i = 0; i < p->nchildren && !err; i++)
        err = fn(p->children[i], arg);
    pthread_mutex_unlock(&p->base.lock);
    return err;
}

/* Every child seeks; what the parent had queued is from before the seek. */
static pulsarc_err_t multi_seek(pulsarc_consumer_t *base, int by_time, const pulsarc_msgid_t *id,
                                uint64_t ms) {
    pc_single_t **kids;
    size_t n = snapshot(multi_of(base), &kids);
    if (!kids)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < n && !err; i++)
        err = pc_single_seek(&kids[i]->base, by_time, id, ms);
    free(kids);
    pc_queue_clear(base);
    return err;
}

static pulsarc_err_t multi_last_message_id(pulsarc_consumer_t *base, pulsarc_msgid_t *id) {
    (void)base;
    (void)id;
    return PULSARC_ERR_UNSUPPORTED; /* one id cannot describe several topics */
}

static pulsarc_err_t multi_available_on_broker(pulsarc_consumer_t *base, int *available) {
    pc_single_t **kids;
    size_t n = snapshot(multi_of(base), &kids);
    pulsarc_err_t err = kids ? PULSARC_OK : PULSARC_ERR_NOMEM;
    for (size_t i = 0; kids && i < n && !err && !*available; i++)
        err = pulsarc_consumer_has_message_available(&kids[i]->base, available);
    free(kids);
    return err;
}

/* Connected when it has children and all of them are. */
static int multi_is_connected(pulsarc_consumer_t *base) {
    pc_multi_t *p = multi_of(base);
    pthread_mutex_lock(&p->base.lock);
    int v = p->nchildren > 0;
    for (size_t i = 0; i < p->nchildren; i++)
        v = pulsarc_consumer_is_connected(&p->children[i]->base) && v;
    pthread_mutex_unlock(&p->base.lock);
    return v;
}

static void add_child_stats(pulsarc_consumer_stats_t *to, const pulsarc_consumer_stats_t *from) {
    to->received += from->received;
    to->acked += from->acked;
    to->nacked += from->nacked;
    to->redelivery_requests += from->redelivery_requests;
    to->discarded += from->discarded;
    to->reconnects += from->reconnects;
}

/* Children count what reached the broker; the parent what was handed out. */
static void multi_add_stats(pulsarc_consumer_t *base, pulsarc_consumer_stats_t *out) {
    pc_multi_t *p = multi_of(base);
    out->received = out->acked = out->nacked = out->redelivery_requests = 0;
    out->discarded = out->reconnects = 0;
    for (size_t i = 0; i < p->nchildren; i++) { /* pulsarc_consumer_stats holds our lock */
        pulsarc_consumer_stats_t cs;
        pulsarc_consumer_stats(&p->children[i]->base, &cs);
        add_child_stats(out, &cs);
    }
}

static const pc_consumer_ops_t multi_ops = {
    .close = multi_close,
    .release = multi_release,
    .free = multi_free,
    .route = multi_route,
    .each_single = multi_each,
    .seek = multi_seek,
    .last_message_id = multi_last_message_id,
    .available_on_broker = multi_available_on_broker,
    .is_connected = multi_is_connected,
    .add_stats = multi_add_stats,
    .member_ended = multi_member_ended,
};

/* ---------- creation ---------- */

/* The parent takes its name, configuration checks and common settings from a probe child. */
static pulsarc_err_t new_parent(pulsarc_client_t *cl, const char *first_topic, const char *display,
                                const char *sub, const pulsarc_conf_t *conf, pc_multi_t **pp,
                                char *e, size_t el) {
    if (pc_conf_int(conf, PC_PROP_RECEIVER_QUEUE_SIZE) == 0) /* as the Java client: no zero queue here */
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "receiverQueueSize 0 works on one non-partitioned topic only, not on a "
                         "multi-topic or pattern consumer");
    pc_single_t *probe;
    pulsarc_err_t err = pc_single_prepare(cl, first_topic, sub, conf, &probe, e, el);
    if (err)
        return err;
    pc_multi_t *p = calloc(1, sizeof *p);
    if (p && pc_consumer_base_init(&p->base, &multi_ops, cl, sub)) {
        free(p);
        p = NULL;
    }
    if (p) {
        p->base.topic = probe->base.topic;
        snprintf(p->base.topic.full, sizeof p->base.topic.full, "%s", display);
        pulsarc_err_t cerr = pc_consumer_read_common_conf(&p->base, conf);
        pc_consumer_fixed_queue(&p->base);
        p->conf_copy = cerr ? NULL : conf ? pulsarc_conf_dup(conf) : pulsarc_conf_new();
    }
    pc_consumer_unref(&probe->base);
    if (!p)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    if (!p->conf_copy || pc_client_register(cl, &p->base.handle)) {
        pc_consumer_unref(&p->base);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory or client closed");
    }
    *pp = p;
    return PULSARC_OK;
}

static void abandon(pc_multi_t *p) {
    multi_close(&p->base, 0);
    pulsarc_consumer_destroy(&p->base);
}

static pulsarc_err_t remember_base(pc_discovery_t *m, const char *topic, int parts) {
    char **b = realloc(m->bases, (m->nbases + 1) * sizeof *b);
    int *n = b ? realloc(m->nparts, (m->nbases + 1) * sizeof *n) : NULL;
    if (b)
        m->bases = b;
    if (!n)
        return PULSARC_ERR_NOMEM;
    m->nparts = n;
    if (!(m->bases[m->nbases] = strdup(topic)))
        return PULSARC_ERR_NOMEM;
    m->nparts[m->nbases++] = parts;
    return PULSARC_OK;
}

static pulsarc_err_t subscribe_topics(pc_multi_t *p, const char *const *topics, size_t n,
                                      char *e, size_t el) {
    for (size_t i = 0; i < n; i++) {
        pc_topic_t t;
        int parts = 0;
        pulsarc_err_t err = pc_client_parse_topic(p->base.client, topics[i], &t, e, el);
        if (!err && t.partition < 0)
            err = pulsarc_client_partitions(p->base.client, t.full, &parts, e, el);
        if (!err)
            err = remember_base(&p->disc, t.full, t.partition < 0 ? parts : 0);
        if (!err)
            err = add_topic(p, t.full, parts, e, el);
        if (err)
            return err;
    }
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_consumer_new_multi(pulsarc_client_t *cl, const char *const *topics, size_t n,
                                         const char *sub, const pulsarc_conf_t *conf,
                                         pulsarc_consumer_t **cp, char *errstr, size_t errlen) {
    if (!cl || !topics || !n || !sub || !*sub || !cp)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "client, at least one topic, a subscription and consumerp are required");
    *cp = NULL;
    for (size_t i = 0; i < n; i++)
        if (!topics[i])
            return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "topic %zu is NULL", i);
    pc_multi_t *p;
    pulsarc_err_t err = new_parent(cl, topics[0], topics[0], sub, conf, &p, errstr, errlen);
    if (err)
        return err;
    if ((err = subscribe_topics(p, topics, n, errstr, errlen))) {
        abandon(p);
        return err;
    }
    start_part_watches(p, pc_conf_int(conf, PC_PROP_AUTO_UPDATE_PARTITIONS_S));
    *cp = &p->base;
    return PULSARC_OK;
}

/* ---------- regex subscriptions ---------- */

typedef struct list_req {
    pulsarc_client_t *cl;
    const char *ns;
    pc_op_t w;
    char **topics;
    size_t n;
} list_req_t;

static void on_list(void *arg, pulsarc_err_t err, const char *msg, char **topics, size_t n) {
    list_req_t *r = arg;
    r->topics = calloc(n ? n : 1, sizeof *r->topics);
    for (size_t i = 0; !err && r->topics && i < n; i++)
        if ((r->topics[r->n] = strdup(topics[i])))
            r->n++;
    pc_op_done(&r->w, err, msg);
}

static void do_list(void *arg) {
    list_req_t *r = arg;
    pc_lookup_namespace_topics(&r->cl->lookup, r->ns, on_list, r);
}

/* "persistent://t/ns/re" or "t/ns/re" or "re" -> ns and an anchored regex over "t/ns/name". */
static pulsarc_err_t parse_pattern(pulsarc_client_t *cl, const char *pattern, pc_discovery_t *m,
                                   char *e, size_t el) {
    const char *s = strstr(pattern, "://");
    if (s && strncmp(pattern, "persistent://", 13) != 0)
        return pc_seterr(e, el, PULSARC_ERR_BAD_TOPIC, "pattern '%s': only persistent topics can be matched", pattern);
    const char *body = s ? s + 3 : pattern;
    const char *slash1 = strchr(body, '/'), *slash2 = slash1 ? strchr(slash1 + 1, '/') : NULL;
    char full[PC_TOPIC_MAX + 8];
    if (slash2) {
        snprintf(m->ns, sizeof m->ns, "%.*s", (int)(slash2 - body), body);
        snprintf(full, sizeof full, "^(%s)$", body);
        snprintf(m->watch_pattern, sizeof m->watch_pattern, "persistent://%s", body);
    } else {
        snprintf(m->ns, sizeof m->ns, "%s/%s", pc_conf_str(cl->conf, PC_PROP_DEFAULT_TENANT),
                 pc_conf_str(cl->conf, PC_PROP_DEFAULT_NAMESPACE));
        snprintf(full, sizeof full, "^(%s/%s)$", m->ns, body);
        snprintf(m->watch_pattern, sizeof m->watch_pattern, "persistent://%s/%s", m->ns, body);
    }
    if (regcomp(&m->re, full, REG_EXTENDED | REG_NOSUB))
        return pc_seterr(e, el, PULSARC_ERR_BAD_TOPIC, "pattern '%s' is not a valid regular expression", pattern);
    m->has_re = 1;
    return PULSARC_OK;
}

static pulsarc_err_t list_namespace(pulsarc_client_t *cl, const char *ns, list_req_t *r, char *e,
                                    size_t el) {
    memset(r, 0, sizeof *r);
    r->cl = cl;
    r->ns = ns;
    pc_op_init(&r->w);
    pulsarc_err_t err = pc_client_post(cl, do_list, r);
    err = err ? pc_seterr(e, el, err, "client is closed") : pc_op_wait(&r->w, e, el);
    pc_op_destroy(&r->w);
    return err;
}

static pulsarc_err_t subscribe_matching(pc_multi_t *p, list_req_t *r, char *e, size_t el) {
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < r->n && !err; i++) {
        char name[PC_TOPIC_MAX];
        match_name(r->topics[i], name, sizeof name);
        if (regexec(&p->disc.re, name, 0, NULL, 0) == 0)
            err = add_child(p, r->topics[i], 1, e, el);
    }
    return err;
}

pulsarc_err_t pulsarc_consumer_new_pattern(pulsarc_client_t *cl, const char *pattern, const char *sub,
                                           const pulsarc_conf_t *conf, pulsarc_consumer_t **cp,
                                           char *errstr, size_t errlen) {
    if (!cl || !pattern || !*pattern || !sub || !*sub || !cp)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "client, a pattern, a subscription and consumerp are required");
    *cp = NULL;
    pc_discovery_t probe;
    memset(&probe, 0, sizeof probe);
    pulsarc_err_t err = parse_pattern(cl, pattern, &probe, errstr, errlen);
    if (err)
        return err;
    char placeholder[700];
    snprintf(placeholder, sizeof placeholder, "persistent://%s/pattern-consumer", probe.ns);
    pc_multi_t *p;
    if ((err = new_parent(cl, placeholder, pattern, sub, conf, &p, errstr, errlen))) {
        regfree(&probe.re);
        return err;
    }
    p->disc = probe; /* takes the compiled regex */
    list_req_t r;
    err = list_namespace(cl, p->disc.ns, &r, errstr, errlen);
    if (!err)
        err = subscribe_matching(p, &r, errstr, errlen);
    for (size_t i = 0; i < r.n; i++)
        free(r.topics[i]);
    free(r.topics);
    if (err) {
        abandon(p);
        return err;
    }
    start_discovery(p, pc_conf_int(conf, PC_PROP_PATTERN_DISCOVERY_S));
    p->disc.watch = (int)pc_conf_int(conf, PC_PROP_PATTERN_TOPIC_WATCHER);
    if (p->disc.watch && pc_consumer_post(&p->base, do_start_watcher, p) != PULSARC_OK)
        p->disc.watch = 0;
    *cp = &p->base;
    return PULSARC_OK;
}
