/*
 * Design notes: one consumer handle over many topics — the partitions of a
 * partitioned topic, a list of topics, or every topic of a namespace
 * matching a regex. The parent has no broker presence; each child is an
 * ordinary consumer on one topic (or partition) that delivers into the
 * parent's receive queue, so receive, batch receive and the listener work
 * unchanged. Acks are routed to the child that received the message (by
 * the message, or by the partition in its id). Permits stay per child.
 *
 * Discovery runs on the io thread on a timer: new partitions of the
 * subscribed topics (autoUpdatePartitionsInterval) and new topics matching
 * the pattern (patternAutoDiscoveryPeriod) get children of their own.
 *
 * Lifetime: the parent holds a reference on every child until it is
 * destroyed; each child holds one on its parent, released when the child
 * is freed, so a late callback on a child never sees a freed parent.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/consumer_int.h"
#include "core/err.h"

typedef struct pc_multi {
    char **bases;          /* topics subscribed by name, for partition discovery */
    int *nparts;           /* their known partition counts (0: not partitioned) */
    size_t nbases;
    char ns[600];          /* regex subscriptions: "tenant/ns" */
    regex_t re;
    int has_re;
    char **seen;           /* topic names that already have a child */
    size_t nseen, capseen;
    pc_timer_t timer;
    int64_t period_ms;
    int timer_held;        /* the timer holds a parent reference */
} pc_multi_t;

/* ---------- bookkeeping ---------- */

static int seen_has(const pc_multi_t *m, const char *topic) {
    for (size_t i = 0; i < m->nseen; i++)
        if (strcmp(m->seen[i], topic) == 0)
            return 1;
    return 0;
}

static int seen_add(pc_multi_t *m, const char *topic) {
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

void pc_multi_free(pulsarc_consumer_t *c) {
    pc_multi_t *m = c->multi;
    if (c->parent)
        pc_consumer_unref(c->parent);
    free(c->children);
    pulsarc_conf_destroy(c->conf_copy);
    if (!m)
        return;
    for (size_t i = 0; i < m->nbases; i++)
        free(m->bases[i]);
    for (size_t i = 0; i < m->nseen; i++)
        free(m->seen[i]);
    free(m->bases);
    free(m->nparts);
    free(m->seen);
    if (m->has_re)
        regfree(&m->re);
    free(m);
}

static int add_to_parent(pulsarc_consumer_t *p, pulsarc_consumer_t *c) {
    pthread_mutex_lock(&p->lock);
    int ok = 1;
    if (p->nchildren == p->capchildren) {
        size_t cap = p->capchildren ? p->capchildren * 2 : 8;
        pulsarc_consumer_t **a = realloc(p->children, cap * sizeof *a);
        ok = a != NULL;
        if (ok) {
            p->children = a;
            p->capchildren = cap;
        }
    }
    if (ok)
        p->children[p->nchildren++] = c;
    pthread_mutex_unlock(&p->lock);
    return ok ? 0 : -1;
}

/* Creates a child on topic; with wait, subscribes before returning. */
static pulsarc_err_t add_child(pulsarc_consumer_t *p, const char *topic, int wait, char *e, size_t el) {
    pulsarc_consumer_t *c;
    pulsarc_err_t err = pc_consumer_prepare(p->client, topic, p->sub, p->conf_copy, &c, e, el);
    if (err)
        return err;
    c->parent = p;
    pc_consumer_ref(p);
    c->listener = NULL; /* the parent's queue runs the listener */
    if (add_to_parent(p, c)) {
        pc_consumer_unref(c);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    }
    seen_add(p->multi, c->topic.full);
    if (!wait) {
        pc_consumer_start_async(c);
        return PULSARC_OK;
    }
    return pc_consumer_start(c, e, el);
}

/* Children for topic: one per partition, or one for a plain topic. */
static pulsarc_err_t add_topic(pulsarc_consumer_t *p, const char *topic, int parts, char *e, size_t el) {
    if (parts <= 0)
        return add_child(p, topic, 1, e, el);
    for (int i = 0; i < parts; i++) {
        char name[PC_TOPIC_MAX + 32];
        snprintf(name, sizeof name, "%s-partition-%d", topic, i);
        pulsarc_err_t err = add_child(p, name, 1, e, el);
        if (err)
            return err;
    }
    return PULSARC_OK;
}

/* ---------- routing ---------- */

pulsarc_consumer_t *pc_multi_route(pulsarc_consumer_t *c, const pulsarc_msgid_t *id,
                                   const pulsarc_msg_t *msg) {
    pulsarc_consumer_t *found = NULL;
    int matches = 0;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->nchildren; i++) {
        pulsarc_consumer_t *k = c->children[i];
        if (msg && msg->rx_owner == k) {
            found = k;
            matches = 1;
            break;
        }
        if (id && k->topic.partition == id->partition) {
            found = k;
            matches++;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return matches == 1 ? found : NULL; /* ambiguous ids are refused */
}

void pc_multi_child_ended(pulsarc_consumer_t *p) {
    pthread_mutex_lock(&p->lock);
    int all = 1;
    for (size_t i = 0; i < p->nchildren; i++) {
        pulsarc_consumer_t *k = p->children[i];
        pthread_mutex_lock(&k->lock);
        all = all && k->end_of_topic;
        pthread_mutex_unlock(&k->lock);
    }
    if (all)
        p->end_of_topic = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    if (all)
        pc_consumer_notify_event(p, PULSARC_CONSUMER_END_OF_TOPIC);
}

/* ---------- discovery (io thread) ---------- */

typedef struct parts_ctx {
    pulsarc_consumer_t *p;
    size_t base;
} parts_ctx_t;

static int parent_open(pulsarc_consumer_t *p) {
    pthread_mutex_lock(&p->lock);
    int open = !p->closing;
    pthread_mutex_unlock(&p->lock);
    return open;
}

static void on_parts(void *arg, pulsarc_err_t err, const char *msg, int n) {
    parts_ctx_t *x = arg;
    pulsarc_consumer_t *p = x->p;
    pc_multi_t *m = p->multi;
    (void)msg;
    for (int i = m->nparts[x->base]; !err && parent_open(p) && m->nparts[x->base] > 0 && i < n; i++) {
        char name[PC_TOPIC_MAX + 32];
        snprintf(name, sizeof name, "%s-partition-%d", m->bases[x->base], i);
        if (add_child(p, name, 0, NULL, 0) == PULSARC_OK)
            m->nparts[x->base] = i + 1;
    }
    free(x);
    pc_consumer_unref(p);
}

/* "persistent://t/ns/x-partition-3" -> "t/ns/x" (what the regex sees). */
static void match_name(const char *topic, char *out, size_t len) {
    const char *s = strstr(topic, "://");
    snprintf(out, len, "%s", s ? s + 3 : topic);
    char *suffix = strstr(out, "-partition-");
    if (suffix)
        *suffix = '\0';
}

static void on_topics(void *arg, pulsarc_err_t err, const char *msg, char **topics, size_t n) {
    pulsarc_consumer_t *p = arg;
    pc_multi_t *m = p->multi;
    (void)msg;
    for (size_t i = 0; !err && parent_open(p) && i < n; i++) {
        char name[PC_TOPIC_MAX];
        match_name(topics[i], name, sizeof name);
        if (!seen_has(m, topics[i]) && regexec(&m->re, name, 0, NULL, 0) == 0)
            add_child(p, topics[i], 0, NULL, 0);
    }
    pc_consumer_unref(p);
}

static void discover(pulsarc_consumer_t *p) {
    pc_multi_t *m = p->multi;
    for (size_t i = 0; i < m->nbases; i++) {
        parts_ctx_t *x = malloc(sizeof *x);
        if (!x)
            continue;
        x->p = p;
        x->base = i;
        pc_consumer_ref(p);
        pc_lookup_partitions(&p->client->lookup, m->bases[i], on_parts, x);
    }
    if (m->has_re) {
        pc_consumer_ref(p);
        pc_lookup_namespace_topics(&p->client->lookup, m->ns, on_topics, p);
    }
}

static void on_discovery_timer(void *arg) {
    pulsarc_consumer_t *p = arg;
    if (!parent_open(p)) {
        p->multi->timer_held = 0;
        pc_consumer_unref(p);
        return;
    }
    discover(p);
    pc_timer_start(p->client->loop, &p->multi->timer, p->multi->period_ms);
}

static void do_start_discovery(void *arg) {
    pulsarc_consumer_t *p = arg;
    p->multi->timer_held = 1; /* keeps the reference the post took */
    pc_timer_start(p->client->loop, &p->multi->timer, p->multi->period_ms);
}

static void do_stop_discovery(void *arg) {
    pulsarc_consumer_t *p = arg;
    if (p->multi->timer_held) {
        pc_timer_stop(p->client->loop, &p->multi->timer);
        p->multi->timer_held = 0;
        pc_consumer_unref(p);
    }
    pc_consumer_unref(p);
}

static void start_discovery(pulsarc_consumer_t *p, int64_t period_s) {
    if (period_s <= 0)
        return;
    p->multi->period_ms = period_s * 1000;
    pc_timer_init(&p->multi->timer, on_discovery_timer, p);
    pc_consumer_post(p, do_start_discovery, p);
}

/* ---------- closing ---------- */

static size_t snapshot(pulsarc_consumer_t *p, pulsarc_consumer_t ***out) {
    pthread_mutex_lock(&p->lock);
    size_t n = p->nchildren;
    *out = calloc(n ? n : 1, sizeof **out);
    for (size_t i = 0; *out && i < n; i++)
        (*out)[i] = p->children[i];
    pthread_mutex_unlock(&p->lock);
    return *out ? n : 0;
}

pulsarc_err_t pc_multi_close(pulsarc_consumer_t *p, int unsubscribe) {
    pthread_mutex_lock(&p->lock);
    int first = !p->close_posted;
    p->close_posted = p->closing = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    if (first && p->multi->period_ms > 0)
        pc_consumer_post(p, do_stop_discovery, p);
    pulsarc_consumer_t **kids;
    size_t n = snapshot(p, &kids);
    pulsarc_err_t err = PULSARC_OK, e;
    for (size_t i = 0; i < n; i++) {
        e = unsubscribe ? pulsarc_consumer_unsubscribe(kids[i]) : pulsarc_consumer_close(kids[i]);
        if (!err)
            err = e;
    }
    free(kids);
    pthread_mutex_lock(&p->lock);
    p->closed = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    return err;
}

/* Drops the parent's references on its children (pulsarc_consumer_destroy). */
void pc_multi_release_children(pulsarc_consumer_t *p) {
    pulsarc_consumer_t **kids;
    size_t n = snapshot(p, &kids);
    pthread_mutex_lock(&p->lock);
    p->nchildren = 0;
    pthread_mutex_unlock(&p->lock);
    pc_consumer_drop_queued(p);
    for (size_t i = 0; i < n; i++) {
        pc_dlq_close(kids[i]); /* their letter-topic producers are ours to close */
        pc_consumer_unref(kids[i]);
    }
    free(kids);
}

/* ---------- creation ---------- */

static pulsarc_err_t new_parent(pulsarc_client_t *cl, const char *first_topic, const char *display,
                                const char *sub, const pulsarc_conf_t *conf, pulsarc_consumer_t **pp,
                                char *e, size_t el) {
    pulsarc_consumer_t *p;
    pulsarc_err_t err = pc_consumer_prepare(cl, first_topic, sub, conf, &p, e, el);
    if (err)
        return err;
    p->is_multi = 1;
    snprintf(p->topic.full, sizeof p->topic.full, "%s", display);
    p->multi = calloc(1, sizeof *p->multi);
    p->conf_copy = conf ? pulsarc_conf_dup(conf) : pulsarc_conf_new();
    if (!p->multi || !p->conf_copy || pc_client_register(cl, &p->handle)) {
        pc_consumer_unref(p);
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory or client closed");
    }
    *pp = p;
    return PULSARC_OK;
}

static void abandon(pulsarc_consumer_t *p) {
    pc_multi_close(p, 0);
    pulsarc_consumer_destroy(p);
}

static pulsarc_err_t remember_base(pc_multi_t *m, const char *topic, int parts) {
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

static pulsarc_err_t subscribe_topics(pulsarc_consumer_t *p, const char *const *topics, size_t n,
                                      char *e, size_t el) {
    for (size_t i = 0; i < n; i++) {
        pc_topic_t t;
        int parts = 0;
        pulsarc_err_t err = pc_client_parse_topic(p->client, topics[i], &t, e, el);
        if (!err && t.partition < 0)
            err = pulsarc_client_partitions(p->client, t.full, &parts, e, el);
        if (!err)
            err = remember_base(p->multi, t.full, t.partition < 0 ? parts : 0);
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
    pulsarc_consumer_t *p;
    pulsarc_err_t err = new_parent(cl, topics[0], topics[0], sub, conf, &p, errstr, errlen);
    if (err)
        return err;
    if ((err = subscribe_topics(p, topics, n, errstr, errlen))) {
        abandon(p);
        return err;
    }
    start_discovery(p, pc_conf_int(conf, PC_PROP_AUTO_UPDATE_PARTITIONS_S));
    *cp = p;
    return PULSARC_OK;
}

pulsarc_err_t pc_multi_new_if_partitioned(pulsarc_client_t *cl, const char *topic, const char *sub,
                                          const pulsarc_conf_t *conf, pulsarc_consumer_t **cp,
                                          int *handled, char *errstr, size_t errlen) {
    pc_topic_t t;
    int parts = 0;
    *handled = 0;
    if (pc_client_parse_topic(cl, topic, &t, NULL, 0) || t.partition >= 0)
        return PULSARC_OK; /* the plain path reports bad names */
    pulsarc_err_t err = pulsarc_client_partitions(cl, t.full, &parts, errstr, errlen);
    if (err || parts == 0)
        return err;
    *handled = 1;
    return pulsarc_consumer_new_multi(cl, &topic, 1, sub, conf, cp, errstr, errlen);
}

/* ---------- regex subscriptions ---------- */

typedef struct list_req {
    pulsarc_client_t *cl;
    const char *ns;
    pc_waiter_t w;
    char **topics;
    size_t n;
} list_req_t;

static void on_list(void *arg, pulsarc_err_t err, const char *msg, char **topics, size_t n) {
    list_req_t *r = arg;
    r->topics = calloc(n ? n : 1, sizeof *r->topics);
    for (size_t i = 0; !err && r->topics && i < n; i++)
        if ((r->topics[r->n] = strdup(topics[i])))
            r->n++;
    pc_waiter_done(&r->w, err, msg);
}

static void do_list(void *arg) {
    list_req_t *r = arg;
    pc_lookup_namespace_topics(&r->cl->lookup, r->ns, on_list, r);
}

/* "persistent://t/ns/re" or "t/ns/re" or "re" -> ns and an anchored regex over "t/ns/name". */
static pulsarc_err_t parse_pattern(pulsarc_client_t *cl, const char *pattern, pc_multi_t *m,
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
    } else {
        snprintf(m->ns, sizeof m->ns, "%s/%s", pc_conf_str(cl->conf, PC_PROP_DEFAULT_TENANT),
                 pc_conf_str(cl->conf, PC_PROP_DEFAULT_NAMESPACE));
        snprintf(full, sizeof full, "^(%s/%s)$", m->ns, body);
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
    pc_waiter_init(&r->w);
    pulsarc_err_t err = pc_client_post(cl, do_list, r);
    err = err ? pc_seterr(e, el, err, "client is closed") : pc_waiter_wait(&r->w, e, el);
    pc_waiter_destroy(&r->w);
    return err;
}

static pulsarc_err_t subscribe_matching(pulsarc_consumer_t *p, list_req_t *r, char *e, size_t el) {
    pulsarc_err_t err = PULSARC_OK;
    for (size_t i = 0; i < r->n && !err; i++) {
        char name[PC_TOPIC_MAX];
        match_name(r->topics[i], name, sizeof name);
        if (regexec(&p->multi->re, name, 0, NULL, 0) == 0)
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
    pc_multi_t probe;
    memset(&probe, 0, sizeof probe);
    pulsarc_err_t err = parse_pattern(cl, pattern, &probe, errstr, errlen);
    if (err)
        return err;
    char placeholder[700];
    snprintf(placeholder, sizeof placeholder, "persistent://%s/pattern-consumer", probe.ns);
    pulsarc_consumer_t *p;
    if ((err = new_parent(cl, placeholder, pattern, sub, conf, &p, errstr, errlen))) {
        regfree(&probe.re);
        return err;
    }
    *p->multi = probe; /* takes the compiled regex */
    list_req_t r;
    err = list_namespace(cl, p->multi->ns, &r, errstr, errlen);
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
    *cp = p;
    return PULSARC_OK;
}
