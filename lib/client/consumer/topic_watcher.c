/*
 * Design notes: the watcher owns its WATCH_TOPIC_LIST on one connection
 * (handler.c does the lookup, connection, retries and reconnects), its
 * watcher id, and the attachment through which conn.c hands it the
 * WATCH_TOPIC_UPDATE pushes. What the broker names is checked against
 * PC_WATCH_MAX_TOPICS and passed on; the owner decides what to subscribe.
 * Io thread only, so no lock: the reference count is touched only there.
 *
 * Each reconnect sends a new watch without a topics hash: the success
 * reply then always carries the full list, which is what the owner
 * reconciles against (a hash would only save sending the list again).
 */
#include "client/consumer/topic_watcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/handler.h"

struct pc_topic_watcher {
    pc_handler_t h;          /* first: the handler's trace names the watcher by it */
    int refs;
    uint64_t id;             /* watcher id, fixed for its whole life */
    char *ns, *pattern, *lookup_topic;
    const pc_topic_watcher_ops_t *ops;
    void *owner;
    pc_conn_t *attached;     /* connection our pushes come from, or NULL */
};

#define W_OF(hp) ((pc_topic_watcher_t *)(hp))

static void w_ref(pc_handler_t *h) { W_OF(h)->refs++; }

static void w_unref(pc_handler_t *h) {
    pc_topic_watcher_t *w = W_OF(h);
    if (--w->refs > 0)
        return;
    w->ops->owner_unref(w->owner);
    free(w->ns);
    free(w->pattern);
    free(w->lookup_topic);
    free(w);
}

static void detach(pc_topic_watcher_t *w) {
    if (w->attached)
        pc_conn_detach_watcher(w->attached, w->id);
    w->attached = NULL;
}

static void send_close_watch(pc_handler_t *h, pc_conn_t *conn) {
    pc_topic_watcher_t *w = W_OF(h);
    Pulsar__Proto__CommandWatchTopicListClose wc = PULSAR__PROTO__COMMAND_WATCH_TOPIC_LIST_CLOSE__INIT;
    wc.watcher_id = w->id;
    wc.request_id = w->h.client->next_id++; /* its SUCCESS finds no request and is dropped */
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__WATCH_TOPIC_LIST_CLOSE;
    cmd.watchtopiclistclose = &wc;
    pc_conn_send(conn, &cmd);
}

/* Ends the watch for good from inside a callback: the owner's polling carries on alone. */
static void give_up(pc_topic_watcher_t *w, const char *why) {
    fprintf(stderr, "pulsarc: topic-list watcher for %s stopped: %s; polling at "
                    "patternAutoDiscoveryPeriod continues\n", w->pattern, why);
    pc_conn_t *conn = pc_handler_stop(&w->h);
    if (conn)
        send_close_watch(&w->h, conn);
    detach(w);
}

static int too_many(pc_topic_watcher_t *w, const char *what, size_t n) {
    if (n <= PC_WATCH_MAX_TOPICS)
        return 0;
    char why[200];
    snprintf(why, sizeof why, "%s names %zu topics, more than the limit of %d", what, n,
             PC_WATCH_MAX_TOPICS);
    give_up(w, why);
    return 1;
}

static void on_frame(void *obj, pc_conn_t *conn, const pc_frame_t *f) {
    pc_topic_watcher_t *w = obj;
    (void)conn;
    const Pulsar__Proto__CommandWatchTopicUpdate *u = f->cmd->watchtopicupdate;
    if (w->h.state != PC_H_READY || !u)
        return; /* a push before the list it changes: the list will carry it */
    if (too_many(w, "WATCH_TOPIC_UPDATE", u->n_new_topics + u->n_deleted_topics))
        return;
    w->ops->on_update(w->owner, u->new_topics, u->n_new_topics, u->deleted_topics,
                      u->n_deleted_topics);
}

static void on_conn_closed(void *obj, pc_conn_t *conn, pulsarc_err_t why) {
    pc_topic_watcher_t *w = obj;
    (void)conn;
    (void)why;
    w->attached = NULL; /* the connection already forgot us */
    pc_handler_lost(&w->h);
}

static const pc_conn_handler_t watcher_conn_handler = {on_frame, on_conn_closed, NULL};

static void send_watch(pc_handler_t *h, pc_conn_t *conn) {
    pc_topic_watcher_t *w = W_OF(h);
    if (!pc_conn_supports_topic_watchers(conn)) {
        h->create_req = 0;
        pc_handler_created(h, PULSARC_ERR_UNSUPPORTED, NULL,
                           "the broker does not offer topic-list watchers");
        return;
    }
    Pulsar__Proto__CommandWatchTopicList wl = PULSAR__PROTO__COMMAND_WATCH_TOPIC_LIST__INIT;
    wl.request_id = w->h.client->next_id++;
    wl.watcher_id = w->id;
    wl.namespace_ = w->ns;
    wl.topics_pattern = w->pattern;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__WATCH_TOPIC_LIST;
    cmd.watchtopiclist = &wl;
    detach(w); /* attach first: a push may follow the reply in the same read */
    pc_conn_attach_watcher(conn, w->id, &watcher_conn_handler, w);
    w->attached = conn;
    pc_handler_request_create(h, conn, &cmd, wl.request_id, w->h.client->op_timeout_ms);
}

static void on_ready(pc_handler_t *h, pc_conn_t *conn, const pc_frame_t *reply) {
    pc_topic_watcher_t *w = W_OF(h);
    (void)conn;
    if (reply->cmd->type != PULSAR__PROTO__BASE_COMMAND__TYPE__WATCH_TOPIC_LIST_SUCCESS) {
        char why[160]; /* any reply with our request id lands here */
        snprintf(why, sizeof why, "the broker answered WATCH_TOPIC_LIST with %s",
                 pc_cmd_name(reply->cmd->type));
        give_up(w, why);
        return;
    }
    const Pulsar__Proto__CommandWatchTopicListSuccess *s = reply->cmd->watchtopiclistsuccess;
    if (too_many(w, "WATCH_TOPIC_LIST_SUCCESS", s->n_topic))
        return;
    w->ops->on_list(w->owner, s->topic, s->n_topic);
}

static void on_failed(pc_handler_t *h, pulsarc_err_t err, const char *msg) {
    pc_topic_watcher_t *w = W_OF(h);
    detach(w);
    if (err != PULSARC_ERR_UNSUPPORTED) /* an older broker: polling is all there is, say nothing */
        fprintf(stderr, "pulsarc: topic-list watcher for %s failed: %s: %s; polling at "
                        "patternAutoDiscoveryPeriod continues\n",
                w->pattern, pulsarc_errname(err), msg ? msg : "");
}

/* A broker that refuses the watch once it has been up refuses it again: stop. */
static int is_final(pulsarc_err_t err) { return !pulsarc_err_is_retriable(err); }

static const pc_handler_ops_t watcher_handler_ops = {
    send_watch, send_close_watch, on_ready, on_failed, is_final, w_ref, w_unref,
};

pc_topic_watcher_t *pc_topic_watcher_start(pulsarc_client_t *c, const char *ns, const char *pattern,
                                           const char *lookup_topic,
                                           const pc_topic_watcher_ops_t *ops, void *owner) {
    pc_topic_watcher_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->ns = strdup(ns);
    w->pattern = strdup(pattern);
    w->lookup_topic = strdup(lookup_topic);
    if (!w->ns || !w->pattern || !w->lookup_topic) {
        free(w->ns);
        free(w->pattern);
        free(w->lookup_topic);
        free(w);
        return NULL;
    }
    w->refs = 1; /* the caller's */
    w->ops = ops;
    w->owner = owner;
    ops->owner_ref(owner);
    w->id = c->next_id++;
    pc_handler_init(&w->h, &watcher_handler_ops, c, w->lookup_topic);
    w->h.req.what = "watch";
    pc_handler_start(&w->h);
    /* Wanted for as long as the consumer lives: a broker away at the first
     * attempt is waited for, as after a creation (polling covers the gap). */
    w->h.req.deadline = -1;
    return w;
}

void pc_topic_watcher_stop(pc_topic_watcher_t *w) {
    if (!w)
        return;
    pc_conn_t *conn = pc_handler_stop(&w->h);
    if (conn)
        send_close_watch(&w->h, conn);
    detach(w);
    w_unref(&w->h);
}

int pc_topic_watcher_is_ready(const pc_topic_watcher_t *w) { return w && w->h.state == PC_H_READY; }
