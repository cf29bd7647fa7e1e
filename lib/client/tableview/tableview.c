/*
 * Design notes: the table view, a key -> latest value map of a topic kept
 * up to date in the background. It is a layer above the consumer and uses
 * only the public reader API: one reader per partition (readCompacted, from
 * the earliest message), each drained by a thread of the view's own that
 * blocks in pulsarc_reader_read. Threads of our own, rather than message
 * listeners on the client's callback thread, so that the view's listeners
 * can call anything (refresh of another view, blocking sends) without
 * stalling every other callback of the client, and so that closing knows
 * exactly when the last update has been applied.
 *
 * One lock and one token. The dispatch token (dispatch_busy, taken and
 * given back under `lock`) serializes applying an update together with
 * calling the listeners with it, listener registration (whose replay of
 * existing entries must not interleave with updates, or a listener could
 * see an old value after a newer one) and for_each. `lock` itself is held
 * only for short moments and guards the map, the partitions' positions and
 * the state, so get and size never wait for a slow listener. Only the
 * token's holder changes the map, which is why it may read it without
 * `lock`. A token rather than a mutex so that a partition thread waiting
 * for it can give up when the view closes: close, even from inside a
 * callback (which holds the token), can then join every other thread.
 *
 * Re-entry: user code runs only while its thread holds the token; a
 * thread-local chain of the views whose token the thread holds lets a
 * callback call back into its own view (nested for_each or listen run
 * without taking it again; refresh refuses with PULSARC_ERR_STATE because
 * the update it would wait for cannot be applied until the callback
 * returns). close and destroy stop every other thread and the readers at
 * once; from inside a callback destroy leaves only the freeing of memory to
 * the outermost exit of that thread's token, so the client may be
 * destroyed as soon as pulsarc_tableview_destroy returns.
 *
 * Refresh and the initial load ask each partition for its last message id
 * and wait on `cond` until every partition's last applied id reaches it.
 *
 * New partitions: for a partitioned topic a watcher thread asks for the
 * partition count every autoUpdatePartitionsInterval seconds (as the
 * Java client's TableView does) and, when it grew, opens a reader and a
 * thread for each new partition, read from its start like the others.
 * Partitions are only ever added: each part is allocated on its own, so a
 * part a thread holds never moves; the array of them grows under `lock`,
 * and close stops the watcher before it walks the array without it.
 * The producer's and the multi-topic consumer's io-thread partition watch
 * (client/partition_watch.h) is not used here on purpose: the view stays
 * on the public API, like the connector, and what it does on growth (open
 * a reader, start a thread) blocks, so an io-thread upcall would only hop
 * to a thread of the view's again; a thread that sleeps between blocking
 * pulsarc_client_partitions calls is the plain way on the public API.
 *
 * Threads: application threads call the public functions; one thread per
 * partition runs part_main; one more (partitioned topics) runs watch_main.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/tableview/kvmap.h"
#include "core/err.h"

typedef struct tv_part {
    pulsarc_tableview_t *tv;
    pulsarc_reader_t *reader;
    pthread_t thread;
    int started, joined;    /* joined: only by the thread that claimed the join */
    pulsarc_msgid_t pos;    /* last message applied (under lock) */
    int has_pos;
    int stopped;            /* the thread has left its loop (under lock) */
    pulsarc_err_t err;      /* why, when not by close */
} tv_part_t;

typedef struct tv_listener {
    pulsarc_tableview_cb cb;
    void *opaque;
} tv_listener_t;

struct pulsarc_tableview_s {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* a position moved, a partition stopped, the token or a join freed */
    int dispatch_busy;   /* the dispatch token is taken (its holder: held_top chains) */
    pc_kvmap_t map;
    tv_listener_t *listeners; /* under dispatch */
    size_t nlisteners, cap_listeners;
    uint64_t messages, updates; /* under lock */
    int closing;
    int joining;              /* a thread is joining the partition threads */
    int destroy_pending;      /* destroyed from inside a callback by `destroyer` */
    pthread_t destroyer;
    size_t nparts, cap_parts; /* grow under lock (watcher); fixed once it stopped */
    tv_part_t **parts;
    /* ---- the partition watcher (partitioned topics) ---- */
    pulsarc_client_t *client;
    char *topic;
    pulsarc_conf_t *reader_conf; /* for the readers of new partitions */
    int update_s;                /* autoUpdatePartitionsInterval; 0: never */
    pthread_t watcher;
    int watcher_started;
    int watcher_claimed, watcher_done; /* one thread joins it; the others wait for done */
    pthread_cond_t watch_cond;   /* close wakes the watcher (monotonic clock) */
};

/* ---------- who holds which view's dispatch ---------- */

typedef struct tv_held {
    pulsarc_tableview_t *tv; /* NULL: a nested entry that took nothing */
    struct tv_held *prev;
} tv_held_t;

static _Thread_local tv_held_t *held_top;

static int holds(const pulsarc_tableview_t *tv) {
    for (const tv_held_t *h = held_top; h; h = h->prev)
        if (h->tv == tv)
            return 1;
    return 0;
}

/*
 * Takes the dispatch token. A partition thread gives up (returns -1) once
 * the view is closing, so that close never waits for a token held by the
 * callback that is closing it.
 */
static int dispatch_enter(pulsarc_tableview_t *tv, tv_held_t *frame, int give_up_on_close) {
    frame->tv = NULL;
    if (holds(tv))
        return 0;
    pthread_mutex_lock(&tv->lock);
    while (tv->dispatch_busy && !(give_up_on_close && tv->closing))
        pthread_cond_wait(&tv->cond, &tv->lock);
    int got = !tv->dispatch_busy;
    tv->dispatch_busy |= got;
    pthread_mutex_unlock(&tv->lock);
    if (!got)
        return -1;
    frame->tv = tv;
    frame->prev = held_top;
    held_top = frame;
    return 0;
}

static void free_view(pulsarc_tableview_t *tv);

/* Returns 1 when the view was freed here (the caller must not touch it). */
static int dispatch_exit(pulsarc_tableview_t *tv, tv_held_t *frame) {
    if (!frame->tv)
        return 0;
    held_top = frame->prev;
    pthread_mutex_lock(&tv->lock);
    tv->dispatch_busy = 0;
    pthread_cond_broadcast(&tv->cond);
    int mine = tv->destroy_pending && pthread_equal(tv->destroyer, pthread_self());
    pthread_mutex_unlock(&tv->lock);
    if (mine)
        free_view(tv);
    return mine;
}

/* ---------- applying one message ---------- */

/* Updates the map and the partition's position; 1 when listeners are owed the update. */
static int apply_locked(pulsarc_tableview_t *tv, tv_part_t *p, const char *key, const void *val,
                        size_t len) {
    if (key && val) {
        if (pc_kvmap_put(&tv->map, key, val, len) != 0) {
            p->err = PULSARC_ERR_NOMEM;
            return -1;
        }
    } else if (key) {
        pc_kvmap_remove(&tv->map, key);
    }
    return key != NULL;
}

static int closing(pulsarc_tableview_t *tv) {
    pthread_mutex_lock(&tv->lock);
    int v = tv->closing;
    pthread_mutex_unlock(&tv->lock);
    return v;
}

/* A listener that closes the view stops the calls to the ones after it. */
static void notify(pulsarc_tableview_t *tv, const char *key, const void *val, size_t len) {
    size_t n = tv->nlisteners; /* one registered by a listener now already saw this in its replay */
    for (size_t i = 0; i < n && !closing(tv); i++)
        tv->listeners[i].cb(tv, key, val, len, tv->listeners[i].opaque);
}

/* Applies msg and tells the listeners. -1: the view is closing or out of memory, stop reading. */
static int apply(pulsarc_tableview_t *tv, tv_part_t *p, const pulsarc_msg_t *msg) {
    const char *key = pulsarc_msg_key(msg);
    size_t len = pulsarc_msg_len(msg);
    const void *val = len && !pulsarc_msg_is_null_value(msg) ? pulsarc_msg_payload(msg) : NULL;
    pthread_mutex_lock(&tv->lock);
    int owed = tv->closing ? -1 : apply_locked(tv, p, key, val, len);
    if (owed >= 0) {
        tv->messages++;
        tv->updates += (uint64_t)owed;
        p->pos = pulsarc_msg_id(msg);
        p->has_pos = 1;
        pthread_cond_broadcast(&tv->cond);
    }
    pthread_mutex_unlock(&tv->lock);
    if (owed > 0)
        notify(tv, key, val, val ? len : 0);
    return owed < 0 ? -1 : 0;
}

static void mark_stopped(pulsarc_tableview_t *tv, tv_part_t *p, pulsarc_err_t err) {
    pthread_mutex_lock(&tv->lock);
    p->stopped = 1;
    if (!p->err && !tv->closing)
        p->err = err;
    pthread_cond_broadcast(&tv->cond);
    pthread_mutex_unlock(&tv->lock);
}

static void *part_main(void *arg) {
    tv_part_t *p = arg;
    pulsarc_tableview_t *tv = p->tv;
    for (;;) {
        pulsarc_msg_t *msg = NULL;
        /* Once closing, the reader may already be destroyed by a callback of ours. */
        pulsarc_err_t err = closing(tv) ? PULSARC_ERR_CLOSED
                                        : pulsarc_reader_read(p->reader, &msg, -1);
        tv_held_t frame;
        if (!err && dispatch_enter(tv, &frame, 1) != 0)
            err = PULSARC_ERR_CLOSED;
        if (err) {
            pulsarc_msg_destroy(msg);
            mark_stopped(tv, p, err);
            return NULL;
        }
        int stop = apply(tv, p, msg);
        pulsarc_msg_destroy(msg);
        if (dispatch_exit(tv, &frame))
            return NULL; /* destroyed by our own listener: the view is gone */
        if (stop) {
            mark_stopped(tv, p, PULSARC_ERR_CLOSED);
            return NULL;
        }
    }
}

/* ---------- stopping ---------- */

static int is_part_thread(const pulsarc_tableview_t *tv, pthread_t t) {
    for (size_t i = 0; i < tv->nparts; i++)
        if (tv->parts[i]->started && pthread_equal(tv->parts[i]->thread, t))
            return 1;
    return 0;
}

/*
 * Joins every partition thread but the caller's own. One thread joins at a
 * time; a partition thread (closing from its callback) does not wait for
 * another joiner, which may be waiting for it to return.
 */
static void join_threads(pulsarc_tableview_t *tv) {
    pthread_t self = pthread_self();
    int part_thread = is_part_thread(tv, self);
    pthread_mutex_lock(&tv->lock);
    while (tv->joining && !part_thread)
        pthread_cond_wait(&tv->cond, &tv->lock);
    int claimed = !tv->joining;
    tv->joining |= claimed;
    pthread_mutex_unlock(&tv->lock);
    if (!claimed)
        return;
    for (size_t i = 0; i < tv->nparts; i++) {
        tv_part_t *p = tv->parts[i];
        if (p->started && !p->joined && !pthread_equal(p->thread, self)) {
            pthread_join(p->thread, NULL);
            p->joined = 1;
        }
    }
    pthread_mutex_lock(&tv->lock);
    tv->joining = 0;
    pthread_cond_broadcast(&tv->cond);
    pthread_mutex_unlock(&tv->lock);
}

/* Only memory is left: the readers are gone and no other thread of the view runs. */
static void free_view(pulsarc_tableview_t *tv) {
    if (is_part_thread(tv, pthread_self()))
        pthread_detach(pthread_self()); /* nobody is left to join it */
    pc_kvmap_free(&tv->map);
    free(tv->listeners);
    for (size_t i = 0; i < tv->nparts; i++)
        free(tv->parts[i]);
    free(tv->parts);
    free(tv->topic);
    pulsarc_conf_destroy(tv->reader_conf);
    pthread_mutex_destroy(&tv->lock);
    pthread_cond_destroy(&tv->cond);
    pthread_cond_destroy(&tv->watch_cond);
    free(tv);
}

/*
 * Wakes the watcher and joins it (closing is set). One thread joins; the
 * others, like a second close, wait until it has, since they walk the
 * partitions next. The watcher runs no user code and waits for no token,
 * so the caller is never the watcher and the wait always ends.
 */
static void stop_watcher(pulsarc_tableview_t *tv) {
    pthread_mutex_lock(&tv->lock);
    pthread_cond_broadcast(&tv->watch_cond);
    int mine = tv->watcher_started && !tv->watcher_claimed;
    tv->watcher_claimed |= mine;
    while (!mine && tv->watcher_started && !tv->watcher_done)
        pthread_cond_wait(&tv->cond, &tv->lock);
    pthread_mutex_unlock(&tv->lock);
    if (!mine)
        return;
    pthread_join(tv->watcher, NULL);
    pthread_mutex_lock(&tv->lock);
    tv->watcher_done = 1;
    pthread_cond_broadcast(&tv->cond);
    pthread_mutex_unlock(&tv->lock);
}

pulsarc_err_t pulsarc_tableview_close(pulsarc_tableview_t *tv) {
    if (!tv)
        return PULSARC_ERR_INVALID_ARG;
    pthread_mutex_lock(&tv->lock);
    int first = !tv->closing;
    tv->closing = 1;
    pthread_cond_broadcast(&tv->cond);
    pthread_mutex_unlock(&tv->lock);
    /* A closed reader wakes its thread's blocked read with PULSARC_ERR_CLOSED. */
    stop_watcher(tv); /* from here on the partitions are fixed */
    for (size_t i = 0; first && i < tv->nparts; i++)
        if (tv->parts[i]->reader)
            pulsarc_reader_close(tv->parts[i]->reader);
    join_threads(tv);
    return PULSARC_OK;
}

void pulsarc_tableview_destroy(pulsarc_tableview_t *tv) {
    if (!tv)
        return;
    pulsarc_tableview_close(tv);
    /* Every other partition thread has ended; the caller's own is not reading. */
    for (size_t i = 0; i < tv->nparts; i++) {
        pulsarc_reader_destroy(tv->parts[i]->reader);
        tv->parts[i]->reader = NULL;
    }
    if (holds(tv)) {
        pthread_mutex_lock(&tv->lock);
        tv->destroy_pending = 1;
        tv->destroyer = pthread_self();
        pthread_mutex_unlock(&tv->lock);
        return; /* freed when the outermost callback of this thread returns */
    }
    free_view(tv);
}

/* ---------- reading to the end ---------- */

/* Is a (a partition's last id) after b (what was applied)? By batch index when both have one. */
static int id_after(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b) {
    if (a->ledger_id != b->ledger_id)
        return a->ledger_id > b->ledger_id;
    if (a->entry_id != b->entry_id)
        return a->entry_id > b->entry_id;
    return a->batch_index >= 0 && b->batch_index >= 0 && a->batch_index > b->batch_index;
}

static int reached_locked(const tv_part_t *p, const pulsarc_msgid_t *target) {
    if (target->entry_id < 0)
        return 1; /* an empty partition has nothing to wait for */
    if (!p->has_pos || id_after(target, &p->pos))
        return 0;
    /* A target without a batch index means the whole entry: its last message too. */
    const pulsarc_msgid_t *at = &p->pos;
    if (target->batch_index < 0 && at->ledger_id == target->ledger_id &&
        at->entry_id == target->entry_id && at->batch_index >= 0 && at->batch_size > 0)
        return at->batch_index >= at->batch_size - 1;
    return 1;
}

/* 1: every partition reached its target; 0: not yet; <0: the error that stops the wait. */
static int caught_up_locked(const pulsarc_tableview_t *tv, const pulsarc_msgid_t *targets, size_t n,
                            pulsarc_err_t *err) {
    if (tv->closing) {
        *err = PULSARC_ERR_CLOSED;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const tv_part_t *p = tv->parts[i];
        if (reached_locked(p, &targets[i]))
            continue;
        if (p->stopped) {
            *err = p->err ? p->err : PULSARC_ERR_CLOSED;
            return -1;
        }
        return 0;
    }
    return 1;
}

/* The readers of the first n partitions (n: how many there were when asked). */
static pulsarc_reader_t **readers_now(pulsarc_tableview_t *tv, size_t *n) {
    pthread_mutex_lock(&tv->lock);
    *n = tv->nparts;
    pulsarc_reader_t **r = calloc(*n, sizeof *r);
    for (size_t i = 0; r && i < *n; i++)
        r[i] = tv->parts[i]->reader;
    pthread_mutex_unlock(&tv->lock);
    return r;
}

static pulsarc_err_t last_ids(pulsarc_reader_t **readers, size_t n, pulsarc_msgid_t *targets,
                              char *errstr, size_t errlen) {
    for (size_t i = 0; i < n; i++) {
        pulsarc_consumer_t *c = pulsarc_reader_consumer(readers[i]);
        pulsarc_err_t err = pulsarc_consumer_last_message_id(c, &targets[i]);
        if (err)
            return pc_seterr(errstr, errlen, err, "table view: last message id of %s: %s",
                             pulsarc_consumer_topic(c), pulsarc_strerror(err));
    }
    return PULSARC_OK;
}

/* Partitions added meanwhile are not waited for: they are read from their start anyway. */
static pulsarc_err_t read_to_end(pulsarc_tableview_t *tv, char *errstr, size_t errlen) {
    size_t n = 0;
    pulsarc_reader_t **readers = readers_now(tv, &n);
    pulsarc_msgid_t *targets = readers ? calloc(n, sizeof *targets) : NULL;
    if (!targets) {
        free(readers);
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    pulsarc_err_t err = last_ids(readers, n, targets, errstr, errlen);
    free(readers);
    if (err && closing(tv)) /* the question failed because close took the readers away */
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CLOSED, "table view is closed");
    pthread_mutex_lock(&tv->lock);
    int done = 0;
    while (!err && (done = caught_up_locked(tv, targets, n, &err)) == 0)
        pthread_cond_wait(&tv->cond, &tv->lock);
    pthread_mutex_unlock(&tv->lock);
    free(targets);
    if (done < 0)
        pc_seterr(errstr, errlen, err, "table view: reading stopped: %s", pulsarc_strerror(err));
    return err;
}

pulsarc_err_t pulsarc_tableview_refresh(pulsarc_tableview_t *tv, char *errstr, size_t errlen) {
    if (!tv)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "table view is NULL");
    if (holds(tv))
        return pc_seterr(errstr, errlen, PULSARC_ERR_STATE,
                         "table view: refresh from inside one of its own callbacks would never end");
    if (closing(tv))
        return pc_seterr(errstr, errlen, PULSARC_ERR_CLOSED, "table view is closed");
    return read_to_end(tv, errstr, errlen);
}

/* ---------- creation ---------- */

static pulsarc_tableview_t *alloc_view(void) {
    pulsarc_tableview_t *tv = calloc(1, sizeof *tv);
    if (!tv)
        return NULL;
    pthread_mutex_init(&tv->lock, NULL);
    pthread_cond_init(&tv->cond, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&tv->watch_cond, &a);
    pthread_condattr_destroy(&a);
    pc_kvmap_init(&tv->map);
    return tv;
}

/* The readers' configuration: the caller's, compacted, without a message listener. */
static pulsarc_conf_t *reader_conf(const pulsarc_conf_t *conf) {
    pulsarc_conf_t *rc = conf ? pulsarc_conf_dup(conf) : pulsarc_conf_new();
    if (!rc)
        return NULL;
    if (pulsarc_conf_set(rc, "readCompacted", "true", NULL, 0) != PULSARC_OK ||
        pulsarc_conf_set_message_listener(rc, NULL, NULL) != PULSARC_OK) {
        pulsarc_conf_destroy(rc);
        return NULL;
    }
    return rc;
}

/* A part reading partition index (-1: the topic is not partitioned) from its start. */
static pulsarc_err_t open_part(pulsarc_tableview_t *tv, int index, tv_part_t **out, char *errstr,
                               size_t errlen) {
    tv_part_t *p = calloc(1, sizeof *p);
    if (!p)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    p->tv = tv;
    char name[1024];
    if (index >= 0)
        snprintf(name, sizeof name, "%s-partition-%d", tv->topic, index);
    else
        snprintf(name, sizeof name, "%s", tv->topic);
    pulsarc_msgid_t earliest = pulsarc_msgid_earliest();
    pulsarc_err_t err = pulsarc_reader_new(tv->client, name, &earliest, 0, tv->reader_conf, &p->reader,
                                           errstr, errlen);
    if (err) {
        free(p);
        return err;
    }
    *out = p;
    return PULSARC_OK;
}

/* Appends parts (lock held by the caller when other threads may look). */
static int add_parts_locked(pulsarc_tableview_t *tv, tv_part_t **parts, size_t n) {
    if (tv->nparts + n > tv->cap_parts) {
        size_t cap = tv->cap_parts ? tv->cap_parts : 4;
        while (cap < tv->nparts + n)
            cap *= 2;
        tv_part_t **v = realloc(tv->parts, cap * sizeof *v);
        if (!v)
            return -1;
        tv->parts = v;
        tv->cap_parts = cap;
    }
    memcpy(tv->parts + tv->nparts, parts, n * sizeof *parts);
    tv->nparts += n;
    return 0;
}

static pulsarc_err_t start_thread(tv_part_t *p, char *errstr, size_t errlen) {
    if (pthread_create(&p->thread, NULL, part_main, p) != 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "table view: cannot start a reader thread");
    p->started = 1;
    pthread_setname_np(p->thread, "pulsarc-tv");
    return PULSARC_OK;
}

/* Opens partitions [from, to) (-1 .. 0 for a topic that is not partitioned) and starts their threads. */
static pulsarc_err_t open_parts(pulsarc_tableview_t *tv, int from, int to, char *errstr, size_t errlen) {
    size_t n = (size_t)(to - from);
    tv_part_t **parts = calloc(n, sizeof *parts);
    if (!parts)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = PULSARC_OK;
    size_t opened = 0;
    while (!err && opened < n) {
        err = open_part(tv, from + (int)opened, &parts[opened], errstr, errlen);
        opened += !err;
    }
    pthread_mutex_lock(&tv->lock);
    if (!err && tv->closing)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CLOSED, "table view is closed");
    else if (!err && add_parts_locked(tv, parts, n))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pthread_mutex_unlock(&tv->lock);
    if (err) { /* none of them is in the view: they go as they came */
        for (size_t i = 0; i < opened; i++) {
            pulsarc_reader_destroy(parts[i]->reader);
            free(parts[i]);
        }
        free(parts);
        return err;
    }
    /* In the view now: a thread that cannot start leaves its part stopped, which refresh reports. */
    for (size_t i = 0; i < n && !err; i++)
        if ((err = start_thread(parts[i], errstr, errlen)) != PULSARC_OK)
            mark_stopped(tv, parts[i], err);
    free(parts);
    return err;
}

/* ---------- new partitions ---------- */

/* One check: a grown partition count opens the new partitions. Errors wait for the next check. */
static void check_partitions(pulsarc_tableview_t *tv) {
    char err[256];
    int n = 0;
    if (pulsarc_client_partitions(tv->client, tv->topic, &n, err, sizeof err) != PULSARC_OK)
        return;
    int have = (int)tv->nparts; /* only this thread adds parts */
    if (n > have)
        open_parts(tv, have, n, err, sizeof err);
}

static void *watch_main(void *arg) {
    pulsarc_tableview_t *tv = arg;
    pthread_mutex_lock(&tv->lock);
    while (!tv->closing) {
        struct timespec due;
        clock_gettime(CLOCK_MONOTONIC, &due);
        due.tv_sec += tv->update_s;
        int rc = 0;
        while (!tv->closing && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&tv->watch_cond, &tv->lock, &due);
        if (tv->closing)
            break;
        pthread_mutex_unlock(&tv->lock);
        check_partitions(tv);
        pthread_mutex_lock(&tv->lock);
    }
    pthread_mutex_unlock(&tv->lock);
    return NULL;
}

/* autoUpdatePartitionsInterval of the caller's conf (the default when it has none). */
static int update_interval_s(const pulsarc_conf_t *conf) {
    char v[32];
    size_t len = sizeof v;
    pulsarc_conf_t *dflt = conf ? NULL : pulsarc_conf_new();
    const pulsarc_conf_t *from = conf ? conf : dflt;
    int s = from && pulsarc_conf_get(from, "autoUpdatePartitionsInterval", v, &len) == PULSARC_OK ? atoi(v) : 0;
    pulsarc_conf_destroy(dflt);
    return s;
}

static pulsarc_err_t start_watcher(pulsarc_tableview_t *tv, char *errstr, size_t errlen) {
    if (tv->update_s <= 0)
        return PULSARC_OK;
    if (pthread_create(&tv->watcher, NULL, watch_main, tv) != 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "table view: cannot start the partition watcher");
    pthread_setname_np(tv->watcher, "pulsarc-tv-parts");
    pthread_mutex_lock(&tv->lock);
    tv->watcher_started = 1;
    pthread_mutex_unlock(&tv->lock);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_tableview_new(pulsarc_client_t *client, const char *topic,
                                    const pulsarc_conf_t *conf, pulsarc_tableview_t **tvp,
                                    char *errstr, size_t errlen) {
    if (!client || !topic || !*topic || !tvp)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "table view: client, topic and tvp are required");
    *tvp = NULL;
    if (strlen(topic) > 900)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_TOPIC, "table view: topic name too long");
    if (pulsarc_client_fd(client) >= 0) /* a loop-mode client: the application owns the threads */
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "table view: runs a thread per partition, not available with threadingMode=loop");
    int partitions = 0;
    pulsarc_err_t err = pulsarc_client_partitions(client, topic, &partitions, errstr, errlen);
    if (err)
        return err;
    pulsarc_tableview_t *tv = alloc_view();
    if (!tv)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    tv->client = client;
    tv->topic = strdup(topic);
    tv->reader_conf = reader_conf(conf);
    tv->update_s = partitions > 0 ? update_interval_s(conf) : 0;
    if (!tv->topic || !tv->reader_conf)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (!err)
        err = partitions > 0 ? open_parts(tv, 0, partitions, errstr, errlen) : open_parts(tv, -1, 0, errstr, errlen);
    if (!err)
        err = read_to_end(tv, errstr, errlen);
    if (!err)
        err = start_watcher(tv, errstr, errlen);
    if (err) {
        pulsarc_tableview_destroy(tv);
        return err;
    }
    *tvp = tv;
    return PULSARC_OK;
}

/* ---------- reading the view ---------- */

pulsarc_err_t pulsarc_tableview_get(pulsarc_tableview_t *tv, const char *key, void *buf, size_t cap,
                                    size_t *len) {
    if (!tv || !key || !len || (!buf && cap))
        return PULSARC_ERR_INVALID_ARG;
    pthread_mutex_lock(&tv->lock);
    const pc_kv_entry_t *e = pc_kvmap_get(&tv->map, key);
    *len = e ? e->len : 0;
    if (e && cap)
        memcpy(buf, e->value, e->len < cap ? e->len : cap);
    pthread_mutex_unlock(&tv->lock);
    return e ? PULSARC_OK : PULSARC_ERR_NOT_FOUND;
}

size_t pulsarc_tableview_size(pulsarc_tableview_t *tv) {
    if (!tv)
        return 0;
    pthread_mutex_lock(&tv->lock);
    size_t n = tv->map.count;
    pthread_mutex_unlock(&tv->lock);
    return n;
}

typedef struct tv_visit {
    pulsarc_tableview_t *tv;
    pulsarc_tableview_cb cb;
    void *opaque;
} tv_visit_t;

/* Stops once the callback destroyed the view: it asked for no further calls. */
static int visit(const pc_kv_entry_t *e, void *arg) {
    tv_visit_t *v = arg;
    v->cb(v->tv, e->key, e->value, e->len, v->opaque);
    pthread_mutex_lock(&v->tv->lock);
    int stop = v->tv->destroy_pending;
    pthread_mutex_unlock(&v->tv->lock);
    return stop;
}

/* Under dispatch: nothing changes the map while the callbacks run. */
static void replay(pulsarc_tableview_t *tv, pulsarc_tableview_cb cb, void *opaque) {
    tv_visit_t v = {tv, cb, opaque};
    pc_kvmap_each(&tv->map, visit, &v);
}

pulsarc_err_t pulsarc_tableview_for_each(pulsarc_tableview_t *tv, pulsarc_tableview_cb cb,
                                         void *opaque) {
    if (!tv || !cb)
        return PULSARC_ERR_INVALID_ARG;
    tv_held_t frame;
    dispatch_enter(tv, &frame, 0);
    replay(tv, cb, opaque);
    dispatch_exit(tv, &frame);
    return PULSARC_OK;
}

static int add_listener(pulsarc_tableview_t *tv, pulsarc_tableview_cb cb, void *opaque) {
    if (tv->nlisteners == tv->cap_listeners) {
        size_t cap = tv->cap_listeners ? tv->cap_listeners * 2 : 4;
        tv_listener_t *l = realloc(tv->listeners, cap * sizeof *l);
        if (!l)
            return -1;
        tv->listeners = l;
        tv->cap_listeners = cap;
    }
    tv->listeners[tv->nlisteners++] = (tv_listener_t){cb, opaque};
    return 0;
}

pulsarc_err_t pulsarc_tableview_listen(pulsarc_tableview_t *tv, pulsarc_tableview_cb cb,
                                       void *opaque) {
    if (!tv || !cb)
        return PULSARC_ERR_INVALID_ARG;
    tv_held_t frame;
    dispatch_enter(tv, &frame, 0);
    pthread_mutex_lock(&tv->lock);
    int closing = tv->closing;
    pthread_mutex_unlock(&tv->lock);
    pulsarc_err_t err = closing ? PULSARC_ERR_CLOSED
                        : add_listener(tv, cb, opaque) ? PULSARC_ERR_NOMEM
                                                       : PULSARC_OK;
    if (!err)
        replay(tv, cb, opaque);
    dispatch_exit(tv, &frame);
    return err;
}

pulsarc_err_t pulsarc_tableview_stats(pulsarc_tableview_t *tv, pulsarc_tableview_stats_t *stats) {
    if (!tv || !stats)
        return PULSARC_ERR_INVALID_ARG;
    pthread_mutex_lock(&tv->lock);
    stats->partitions = tv->nparts;
    stats->keys = tv->map.count;
    stats->messages = tv->messages;
    stats->updates = tv->updates;
    pthread_mutex_unlock(&tv->lock);
    return PULSARC_OK;
}
