/*
 * Design notes: where a reader's non-durable cursor starts, and what the
 * single-topic consumer asks of it: the id its SUBSCRIBE names (after the
 * last message handed out once there is one, so a reconnect reads nothing
 * twice), what of the first entry to skip (the broker positions at the
 * entry; messages of it before the start are filtered), where a seek moved
 * it, and whether a topic's last id lies at or after it. A consumer
 * without one (start == NULL) has a durable cursor.
 *
 * Threads: created on the application thread before the consumer
 * subscribes; then read and moved on the io thread only (SUBSCRIBE,
 * MESSAGE, seek reply); start_at reads the queue under its lock.
 */
#include <stdlib.h>

#include "client/consumer/single.h"

static int is_sentinel(const pulsarc_msgid_t *id) {
    pulsarc_msgid_t e = pulsarc_msgid_earliest(), l = pulsarc_msgid_latest();
    return pulsarc_msgid_compare(id, &e) <= 0 || pulsarc_msgid_compare(id, &l) >= 0;
}

struct pc_reader_pos {
    pulsarc_msgid_t id;          /* where the cursor starts */
    int inclusive;               /* the start itself is read */
};

void pc_reader_start_at(pc_single_t *c, pulsarc_msgid_t *id) {
    pthread_mutex_lock(&c->base.lock);
    if (c->base.has_dequeued) { /* restart after the last message handed out */
        c->start->id = c->base.last_dequeued;
        c->start->inclusive = 0;
    }
    pthread_mutex_unlock(&c->base.lock);
    *id = c->start->id;
}

int pc_reader_skip_upto(const pc_single_t *c, pulsarc_msgid_t *skip) {
    const pc_reader_pos_t *p = c->start;
    if (is_sentinel(&p->id))
        return 0;
    *skip = p->id;
    if (p->inclusive) /* keep the start itself: skip only what precedes it */
        skip->batch_index = p->id.batch_index >= 0 ? p->id.batch_index - 1 : -2;
    return 1;
}

void pc_reader_moved(pc_single_t *c, const pulsarc_msgid_t *id) {
    c->start->id = *id;
    c->start->inclusive = 1;
}

int pc_reader_may_read(const pc_single_t *c, const pulsarc_msgid_t *last) {
    const pc_reader_pos_t *p = c->start;
    pulsarc_msgid_t e = pulsarc_msgid_earliest(), l = pulsarc_msgid_latest();
    if (pulsarc_msgid_compare(&p->id, &e) <= 0)
        return 1;
    if (pulsarc_msgid_compare(&p->id, &l) >= 0)
        return 0;
    pulsarc_msgid_t a = *last, s = p->id;
    if (a.batch_index < 0) /* the broker named the entry only: compare entries */
        a.batch_index = s.batch_index = -1;
    int cmp = pulsarc_msgid_compare(&a, &s);
    return p->inclusive ? cmp >= 0 : cmp > 0;
}

pc_reader_pos_t *pc_reader_pos_new(const pulsarc_msgid_t *start, int inclusive) {
    pc_reader_pos_t *p = calloc(1, sizeof *p);
    if (p) {
        p->id = *start;
        p->inclusive = inclusive != 0;
    }
    return p;
}

void pc_reader_pos_free(pc_single_t *c) {
    free(c->start);
    c->start = NULL;
}
