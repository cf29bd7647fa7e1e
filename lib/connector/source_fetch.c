/*
 * Design notes: the fetch loop of a source, over several
 * splits from one thread.
 *
 * One batch: deadline = now + maxFetchTime; up to min(cap, maxFetchRecords)
 * receives while before the deadline, each waiting fetchOneMessageTime if
 * set, else the rest of the time; an empty receive ends the batch; a split
 * reaching its bound ends it too. A "receive" serves the splits
 * round-robin: first every unfinished split is polled without waiting (what
 * is queued is drained at once), and only when none has anything does it
 * block — on one split at a time in PC_POLL_SLICE_MS slices when several
 * are open, so a quiet split never hides a busy one for the whole wait.
 *
 * Per message: ids at or before a split's resume floor were emitted before
 * the checkpoint (or lie before an exclusive start) and are dropped, though
 * their stop verdict still counts, so a split that was restored exactly at
 * its bound finishes; then the stop verdict: CONTINUE emits, EXACTLY emits
 * and finishes, TERMINATE drops and finishes. The source is at end of input
 * once every split has finished.
 *
 * A parallel reader may own no split yet (more readers than partitions);
 * while it is unbounded and discovery is on, a partition may still come
 * its way, so fetch sleeps until the next discovery or the end of the
 * batch's time (never spins) and returns an empty batch.
 */
#include <limits.h>
#include <time.h>

#include "connector/cursor.h"
#include "connector/source_int.h"

#define PC_POLL_SLICE_MS 100
#define PC_NO_SPLITS 1 /* receive_one: every split has finished */

typedef struct got {
    pulsarc_msg_t *msg;
    pc_split_t *split;
} got_t;

/* Polls every open split once without waiting; counts the open ones. */
static pulsarc_err_t sweep(pulsarc_source_t *src, got_t *g, size_t *open, size_t *first_open) {
    *open = 0;
    for (size_t k = 0; k < src->nsplits; k++) {
        size_t i = (src->rr + k) % src->nsplits;
        pc_split_t *s = src->splits[i];
        if (s->finished)
            continue;
        pulsarc_err_t err = pc_split_receive(s, &g->msg, 0);
        if (err == PULSARC_OK) {
            g->split = s;
            src->rr = i + 1;
            return PULSARC_OK;
        }
        if (err == PULSARC_ERR_END_OF_TOPIC) {
            pc_split_finish(src, s, "topic terminated");
            continue;
        }
        if (err != PULSARC_ERR_NO_MESSAGE)
            return err;
        pc_split_check_caught_up(src, s);
        if (!s->finished && (*open)++ == 0)
            *first_open = i;
    }
    return PULSARC_ERR_NO_MESSAGE;
}

static int slice_for(const pc_split_t *s, size_t open, int remaining) {
    if (open == 1 && s->stop.kind == PULSARC_STOP_NEVER)
        return remaining; /* nothing else to watch: wait on it directly */
    return remaining < PC_POLL_SLICE_MS ? remaining : PC_POLL_SLICE_MS;
}

/* One receive of the loop: a message, PULSARC_ERR_NO_MESSAGE, PC_NO_SPLITS or an error. */
static int receive_one(pulsarc_source_t *src, int wait_ms, got_t *g) {
    uint64_t deadline = pc_source_now_ms() + (uint64_t)wait_ms;
    for (;;) {
        size_t open = 0, i = 0;
        pulsarc_err_t err = sweep(src, g, &open, &i);
        if (err != PULSARC_ERR_NO_MESSAGE)
            return err;
        if (open == 0)
            return PC_NO_SPLITS;
        uint64_t now = pc_source_now_ms();
        if (now >= deadline)
            return PULSARC_ERR_NO_MESSAGE;
        pc_split_t *s = src->splits[i];
        err = pc_split_receive(s, &g->msg, slice_for(s, open, (int)(deadline - now)));
        if (err == PULSARC_OK) {
            g->split = s;
            src->rr = i + 1;
            return PULSARC_OK;
        }
        if (err != PULSARC_ERR_NO_MESSAGE && err != PULSARC_ERR_END_OF_TOPIC)
            return err; /* end of topic is noticed by the next sweep */
    }
}

/* Applies floor and stop cursor to g; returns 1 when the batch must end. */
static int take(pulsarc_source_t *src, got_t *g, pulsarc_msg_t **out, size_t *n) {
    pc_split_t *s = g->split;
    pulsarc_msgid_t id = pulsarc_msg_id(g->msg);
    pc_stop_verdict_t v = pc_stop_decide(&s->stop, &id, pulsarc_msg_publish_time(g->msg),
                                         pulsarc_msg_event_time(g->msg));
    if (pc_split_below_floor(s, &id) || v == PC_STOP_TERMINATE) {
        s->dropped++;
        pulsarc_msg_destroy(g->msg);
    } else {
        pc_split_emitted(src, s, g->msg);
        out[(*n)++] = g->msg;
    }
    if (v == PC_STOP_CONTINUE)
        return 0;
    pc_split_finish(src, s, v == PC_STOP_EXACTLY ? "reached its inclusive bound"
                                                 : "passed its bound");
    return 1;
}

static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

/* No split to read (yet): wait for the next discovery, at most until deadline. */
static void wait_for_splits(pulsarc_source_t *src, uint64_t deadline) {
    uint64_t now = pc_source_now_ms();
    uint64_t until = src->next_discovery_ms < deadline ? src->next_discovery_ms : deadline;
    if (until > now) {
        uint64_t ms = until - now;
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    pc_source_run_timers(src);
}

pulsarc_err_t pulsarc_source_fetch(pulsarc_source_t *src, pulsarc_msg_t **out, size_t cap,
                                   size_t *n) {
    if (!src || !out || !n || cap == 0)
        return PULSARC_ERR_INVALID_ARG;
    *n = 0;
    pc_source_run_timers(src);
    size_t limit = (size_t)min64((int64_t)cap, src->conf.max_fetch_records);
    uint64_t deadline = pc_source_now_ms() + (uint64_t)src->conf.max_fetch_ms;
    pulsarc_err_t err = PULSARC_OK;
    while (*n < limit) {
        uint64_t now = pc_source_now_ms();
        if (now >= deadline)
            break;
        if (src->nsplits == 0 && !pulsarc_source_is_finished(src)) {
            wait_for_splits(src, deadline);
            continue;
        }
        int64_t wait = (int64_t)(deadline - now);
        if (src->conf.fetch_one_ms > 0)
            wait = min64(wait, src->conf.fetch_one_ms);
        got_t g = {NULL, NULL};
        int r = receive_one(src, (int)min64(wait, INT_MAX), &g);
        if (r != PULSARC_OK) {
            err = (r == PULSARC_ERR_NO_MESSAGE || r == PC_NO_SPLITS) ? PULSARC_OK : r;
            break;
        }
        if (take(src, &g, out, n))
            break;
    }
    if (!err && *n == 0 && pulsarc_source_is_finished(src))
        return PULSARC_SOURCE_END_OF_INPUT;
    return *n > 0 ? PULSARC_OK : err;
}
