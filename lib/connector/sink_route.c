/*
 * Design notes: where a message goes.
 *
 * The partition list is the configured topics flattened: a partitioned
 * topic contributes base-partition-0..N-1, a non-partitioned topic itself,
 * an explicitly listed partition itself unless its topic is listed too
 * (which already covers it). Unlike the connector's hash set, the user's
 * order is kept, so routing is reproducible. The list is loaded when the
 * sink opens (a failure there is fatal: a sink that cannot see its topics
 * cannot route) and refreshed from write() every
 * pulsar.sink.topicMetadataRefreshInterval; a failed refresh keeps the old
 * list, because losing partitions would misroute keyed messages.
 *
 * The sink routes itself and writes to partitions directly (one producer
 * per entry) rather than handing a partitioned producer the choice: the
 * connector's routing spans several topics, and its round-robin counts
 * messages (batchingMaxMessages per partition, so each batch fills on one
 * partition) where the core producer's counts time.
 *  - Round-robin: index = (start + count / batch) mod n. start is random
 *    per sink: the connector starts every writer at 0, piling the first
 *    batch of every subtask on one partition.
 *  - Key hash: murmur3_32 or Java's String hash of the key text, masked
 *    non-negative, mod n. Key-less messages stay on one random partition
 *    for a batch's worth, then jump: batches still fill, and load spreads
 *    (the connector picks a new random partition per message).
 *  - Custom: the user's router sees the list and may name any topic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connector/sink_int.h"
#include "core/hash.h"
#include "core/topic.h"

uint64_t pc_sink_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

size_t pc_sink_random_below(size_t n) {
    static _Thread_local unsigned seed;
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed = (unsigned)ts.tv_nsec ^ (unsigned)ts.tv_sec ^ (unsigned)(uintptr_t)&ts;
    }
    return n ? (size_t)rand_r(&seed) % n : 0;
}

/* ---------- the list ---------- */

typedef struct name_list {
    char **v;
    size_t n, cap;
} name_list_t;

static void list_free(name_list_t *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int list_has(const name_list_t *l, const char *name) {
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], name))
            return 1;
    return 0;
}

static pulsarc_err_t list_add(name_list_t *l, const char *name) {
    if (list_has(l, name))
        return PULSARC_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return PULSARC_ERR_NOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = strdup(name);
    return l->v[l->n++] ? PULSARC_OK : PULSARC_ERR_NOMEM;
}

/* 1 when the base topic of a listed partition is listed as well. */
static int base_listed(const pc_sink_settings_t *s, const pc_topic_t *t) {
    for (size_t i = 0; i < s->ntopics; i++) {
        pc_topic_t o;
        if (pc_topic_parse(s->topics[i], NULL, NULL, &o, NULL, 0) == PULSARC_OK &&
            o.partition < 0 && !strcmp(o.full, t->base))
            return 1;
    }
    return 0;
}

static pulsarc_err_t add_partitions(name_list_t *l, const pc_topic_t *t, int nparts) {
    char name[PC_TOPIC_MAX + 32];
    pulsarc_err_t err = PULSARC_OK;
    if (nparts <= 0)
        return list_add(l, t->full);
    for (int p = 0; !err && p < nparts; p++) {
        err = pc_topic_partition_name(t, p, name, sizeof name);
        if (!err)
            err = list_add(l, name);
    }
    return err;
}

static pulsarc_err_t add_topic(pulsarc_sink_t *sk, name_list_t *l, const char *topic,
                               char *errstr, size_t errlen) {
    pc_topic_t t;
    pulsarc_err_t err = pc_topic_parse(topic, NULL, NULL, &t, errstr, errlen);
    if (err)
        return err;
    if (t.partition >= 0)
        return base_listed(&sk->s, &t) ? PULSARC_OK : list_add(l, t.full);
    int nparts = 0;
    err = pulsarc_client_partitions(sk->client, t.full, &nparts, errstr, errlen);
    return err ? err : add_partitions(l, &t, nparts);
}

static pulsarc_err_t build_list(pulsarc_sink_t *sk, name_list_t *l, char *errstr,
                                size_t errlen) {
    memset(l, 0, sizeof *l);
    for (size_t i = 0; i < sk->s.ntopics; i++) {
        pulsarc_err_t err = add_topic(sk, l, sk->s.topics[i], errstr, errlen);
        if (err) {
            list_free(l);
            return err;
        }
    }
    return PULSARC_OK;
}

static void install_list(pc_sink_routes_t *r, name_list_t *l) {
    for (size_t i = 0; i < r->n; i++)
        free(r->names[i]);
    free(r->names);
    r->names = l->v;
    r->n = l->n;
    r->refreshed_ms = pc_sink_now_ms();
}

static uint64_t batch_size(const pulsarc_conf_t *conf) {
    char buf[32];
    size_t len = sizeof buf;
    if (pulsarc_conf_get(conf, "batchingMaxMessages", buf, &len) != PULSARC_OK)
        return 1000;
    uint64_t v = strtoull(buf, NULL, 10);
    return v ? v : 1000;
}

pulsarc_err_t pc_sink_routes_load(pulsarc_sink_t *sk, char *errstr, size_t errlen) {
    name_list_t l;
    pulsarc_err_t err = build_list(sk, &l, errstr, errlen);
    if (err)
        return err;
    install_list(&sk->routes, &l);
    sk->routes.batch = batch_size(sk->pconf);
    sk->routes.start = pc_sink_random_below(sk->routes.n);
    return PULSARC_OK;
}

void pc_sink_routes_maybe_refresh(pulsarc_sink_t *sk) {
    uint64_t now = pc_sink_now_ms();
    if (!sk->s.ntopics || now - sk->routes.refreshed_ms < (uint64_t)sk->s.opts.refresh_ms)
        return;
    name_list_t l;
    char err[256];
    if (build_list(sk, &l, err, sizeof err) != PULSARC_OK) {
        sk->routes.refreshed_ms = now; /* keep the old list; try again next interval */
        return;
    }
    install_list(&sk->routes, &l);
}

void pc_sink_routes_free(pc_sink_routes_t *r) {
    for (size_t i = 0; i < r->n; i++)
        free(r->names[i]);
    free(r->names);
    memset(r, 0, sizeof *r);
}

/* ---------- choosing ---------- */

static size_t round_robin(pc_sink_routes_t *r) {
    uint64_t i = r->start + r->count++ / r->batch;
    return (size_t)(i % r->n);
}

static size_t sticky_random(pc_sink_routes_t *r) {
    if (!r->sticky_left) {
        r->sticky = pc_sink_random_below(r->n);
        r->sticky_left = r->batch;
    }
    r->sticky_left--;
    return r->sticky % r->n;
}

static size_t key_hash(pulsarc_sink_t *sk, const char *key) {
    size_t len = strlen(key);
    int32_t h = sk->s.opts.key_hash == PC_SINK_HASH_JAVA ? pc_hash_java_string(key, len)
                                                         : pc_hash_murmur3(key, len);
    return (size_t)((uint32_t)h & 0x7fffffffu) % sk->routes.n;
}

const char *pc_sink_route(pulsarc_sink_t *sk, const pulsarc_msg_t *msg, char *errstr,
                          size_t errlen) {
    pc_sink_routes_t *r = &sk->routes;
    if (sk->s.router) {
        const char *t = sk->s.router(sk->s.router_opaque, msg, (const char *const *)r->names,
                                     r->n);
        if (!t && errstr)
            snprintf(errstr, errlen, "the custom topic router returned no topic");
        return t;
    }
    if (!r->n) {
        if (errstr)
            snprintf(errstr, errlen, "You should provide topics for routing.");
        return NULL;
    }
    const char *key = pulsarc_msg_key(msg);
    if (sk->s.routing == PULSARC_SINK_KEY_HASH)
        return r->names[key ? key_hash(sk, key) : sticky_random(r)];
    return r->names[round_robin(r)];
}
