/*
 * Design notes: a reader is a consumer on a non-durable Exclusive
 * subscription that starts where the application says. The broker
 * positions a non-durable cursor at the start entry and delivers from
 * there; whatever of that entry precedes the start (the start itself, when
 * not inclusive, or earlier messages of its batch) is filtered here. After
 * a reconnect the reader re-subscribes from the last message it handed
 * out and filters up to it, so nothing is read twice.
 *
 * Latest with inclusive means the topic's last message, as for the Java
 * reader: the broker only knows "after the end", so once subscribed the
 * reader asks for the last message id and, if the topic has one, seeks
 * there (a seek reads its target first).
 *
 * The reader is a single-topic consumer (single.c) whose `start` points
 * at its start position (start_position.c); the public reader calls are
 * that consumer's. Threads: the application's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "client/consumer/single.h"
#include "core/err.h"

struct pulsarc_reader_s {
    pulsarc_consumer_t *c;
};

static void random_name(char *buf, size_t len) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32) ^
                           (unsigned long long)(uintptr_t)buf;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    snprintf(buf, len, "reader-%010llx", x & 0xffffffffffULL);
}

static int is_latest(const pulsarc_msgid_t *id) {
    pulsarc_msgid_t latest = pulsarc_msgid_latest();
    return id->ledger_id == latest.ledger_id && id->entry_id == latest.entry_id;
}

/* Latest, inclusive: move to the topic's last message, if it has one. */
static pulsarc_err_t start_at_last(pulsarc_consumer_t *c, char *errstr, size_t errlen) {
    pulsarc_msgid_t last;
    pulsarc_err_t err = pulsarc_consumer_last_message_id(c, &last);
    if (!err && last.entry_id >= 0)
        err = pulsarc_consumer_seek(c, &last);
    return err ? pc_seterr(errstr, errlen, err, "reader at latest, inclusive: %s",
                           pulsarc_strerror(err))
               : PULSARC_OK;
}

pulsarc_err_t pulsarc_reader_new(pulsarc_client_t *cl, const char *topic, const pulsarc_msgid_t *start,
                                 int inclusive, const pulsarc_conf_t *conf, pulsarc_reader_t **rp,
                                 char *errstr, size_t errlen) {
    if (!cl || !topic || !start || !rp)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "client, topic, start and readerp are required");
    *rp = NULL;
    if (pc_conf_int(conf, PC_PROP_RECEIVER_QUEUE_SIZE) == 0) /* reads use timeouts; see zero_queue.c */
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "receiverQueueSize 0 is for consumers only: a reader needs a receive queue");
    char name[64];
    const char *sub = pc_conf_str(conf, PC_PROP_SUBSCRIPTION_NAME);
    if (!*sub) {
        random_name(name, sizeof name);
        sub = name;
    }
    pulsarc_reader_t *r = calloc(1, sizeof *r);
    if (!r)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pc_single_t *c;
    pulsarc_err_t err = pc_single_prepare(cl, topic, sub, conf, &c, errstr, errlen);
    if (err) {
        free(r);
        return err;
    }
    r->c = &c->base;
    c->base.sub_type = PULSAR__PROTO__COMMAND_SUBSCRIBE__SUB_TYPE__Exclusive;
    if (!(c->start = pc_reader_pos_new(start, inclusive)))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (!err)
        err = pc_single_start(c, 1, errstr, errlen);
    if (!err && inclusive && is_latest(start))
        err = start_at_last(&c->base, errstr, errlen);
    if (err) {
        pc_consumer_unref(&c->base);
        free(r);
        return err;
    }
    *rp = r;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_reader_read(pulsarc_reader_t *r, pulsarc_msg_t **msgp, int timeout_ms) {
    return r ? pulsarc_consumer_receive(r->c, msgp, timeout_ms) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_reader_has_message_available(pulsarc_reader_t *r, int *available) {
    return r ? pulsarc_consumer_has_message_available(r->c, available) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_reader_seek(pulsarc_reader_t *r, const pulsarc_msgid_t *id) {
    return r ? pulsarc_consumer_seek(r->c, id) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_err_t pulsarc_reader_seek_time(pulsarc_reader_t *r, uint64_t ms) {
    return r ? pulsarc_consumer_seek_time(r->c, ms) : PULSARC_ERR_INVALID_ARG;
}

pulsarc_consumer_t *pulsarc_reader_consumer(pulsarc_reader_t *r) { return r ? r->c : NULL; }

pulsarc_err_t pulsarc_reader_close(pulsarc_reader_t *r) {
    return r ? pulsarc_consumer_close(r->c) : PULSARC_ERR_INVALID_ARG;
}

void pulsarc_reader_destroy(pulsarc_reader_t *r) {
    if (!r)
        return;
    pulsarc_consumer_destroy(r->c);
    free(r);
}
