/*
 * Design notes: one split = one consumer on one topic or partition, with
 * the source's subscription name.
 *
 * Positioning happens with the reading consumer itself (subscribe, then
 * seek): there is no temporary consumer to race the real one on an
 * Exclusive subscription, and the client drops everything queued before
 * the seek. Which position wins:
 *   1. a checkpoint: seek to the entry of the last emitted id and drop
 *      every message at or before that id ("floor"), so the rest of a batch
 *      is kept and a message is never emitted twice;
 *   2. no checkpoint, and the subscription is new, reset is asked, or the
 *      split was discovered later: the start cursor;
 *   3. otherwise the subscription's own position.
 * Shared / Key_Shared restores never seek: the last emitted id is no
 * watermark there (other consumers, redeliveries and aborted transactions
 * put older ids after newer ones), and a seek would move the whole
 * subscription, dropping its individual acks. Redelivery of whatever is
 * unacknowledged is the recovery; what the checkpoint
 * covers was acknowledged in its transaction (source_txn.c), or comes
 * again without one.
 * Whether a subscription exists is asked of the admin API before
 * subscribing (subscribing creates it); when the admin API cannot answer,
 * the subscription is taken as existing, and earliest / latest still
 * apply through the consumer's initial position. Seeking to the last emitted entry
 * rather than past it lets the restore verify the position: the first
 * message back must be that entry (or the next one); anything else means
 * the checkpointed data is gone. The check needs
 * the checkpointed entry to be still stored: with no retention, an entry
 * acknowledged and trimmed away reads as a mismatch even when nothing after
 * it was lost, which WARN_ON_MISMATCH (the default) only logs.
 *
 * A stop bound "latest" is resolved once, here, from GET_LAST_MESSAGE_ID on
 * this consumer (no throw-away subscription); the resolved id
 * travels in the checkpoint. A split also finishes without a message when
 * nothing below its bound can arrive any more: the topic's
 * end is at or past an id bound and nothing is left to read, or a publish
 * time bound lies PC_TIME_GRACE_MS in the past and nothing is left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connector/checkpoint.h"
#include "connector/cursor.h"
#include "connector/source_int.h"
#include "core/err.h"
#include "core/topic.h"
#ifdef PULSARC_WITH_CURL
#include "pulsarc/admin.h"
#endif

/* How long a restore waits for the checkpointed entry to come back. */
#define PC_VERIFY_WAIT_MS 5000
/* Publish times are producer clocks: allow this much for late writers. */
#define PC_TIME_GRACE_MS 2000
/* Minimum spacing of the caught-up check (one GET_LAST_MESSAGE_ID each). */
#define PC_IDLE_CHECK_MS 500
/* Retries of a call that failed because the consumer was reconnecting. */
#define PC_RETRIES 50

static const char *const sub_type_names[] = {"Exclusive", "Shared", "Failover", "Key_Shared"};

/* ---------- subscription existence ---------- */

#ifdef PULSARC_WITH_CURL
static pulsarc_err_t admin_handle(pulsarc_source_t *src, char *errstr, size_t errlen) {
    if (src->admin)
        return PULSARC_OK;
    pulsarc_conf_t *c = pulsarc_conf_new();
    if (!c)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t err = PULSARC_OK;
    if (src->conf.admin_url)
        err = pulsarc_conf_set(c, "webServiceUrl", src->conf.admin_url, errstr, errlen);
    if (!err)
        err = pulsarc_admin_new(c, (pulsarc_admin_t **)&src->admin, errstr, errlen);
    pulsarc_conf_destroy(c);
    return err;
}

static pulsarc_err_t sub_exists(pulsarc_source_t *src, const char *topic, int *exists,
                                char *errstr, size_t errlen) {
    *exists = 0;
    pulsarc_err_t err = admin_handle(src, errstr, errlen);
    char **list = NULL;
    if (!err)
        err = pulsarc_admin_list_subscriptions(src->admin, topic, &list, errstr, errlen);
    if (err == PULSARC_ERR_NOT_FOUND)
        return PULSARC_OK; /* no topic yet, so no subscription */
    for (size_t i = 0; !err && list[i]; i++)
        if (!strcmp(list[i], src->conf.sub_name))
            *exists = 1;
    pulsarc_admin_list_free(list);
    return err;
}
#else
static pulsarc_err_t sub_exists(pulsarc_source_t *src, const char *topic, int *exists,
                                char *errstr, size_t errlen) {
    (void)src;
    (void)topic;
    *exists = 1;
    return pc_seterr(errstr, errlen, PULSARC_ERR_UNSUPPORTED,
                     "built without libcurl: cannot tell a new subscription from an existing one");
}
#endif

/* ---------- small helpers ---------- */

static int retriable(pulsarc_err_t err) {
    return err == PULSARC_ERR_DISCONNECTED || err == PULSARC_ERR_TIMEOUT ||
           err == PULSARC_ERR_BROKER_SERVICE_NOT_READY;
}

/* The consumer reconnects after every seek: calls made meanwhile are retried. */
static pulsarc_err_t last_id(pc_split_t *s, pulsarc_msgid_t *id) {
    pulsarc_err_t err = PULSARC_OK;
    for (int i = 0; i < PC_RETRIES; i++) {
        if (!retriable(err = pulsarc_consumer_last_message_id(s->consumer, id)))
            break;
        usleep(100 * 1000);
    }
    return err;
}

static pulsarc_err_t available(pc_split_t *s, int *avail) {
    pulsarc_err_t err = PULSARC_OK;
    *avail = s->pending != NULL;
    for (int i = 0; !*avail && i < PC_RETRIES; i++) {
        if (!retriable(err = pulsarc_consumer_has_message_available(s->consumer, avail)))
            break;
        usleep(100 * 1000);
    }
    return err;
}

static pulsarc_err_t seek_entry(pc_split_t *s, const pulsarc_msgid_t *id) {
    pulsarc_msgid_t at = *id;
    at.batch_index = -1; /* the broker positions on entries; the floor handles the rest */
    pulsarc_err_t err = PULSARC_OK;
    for (int i = 0; i < PC_RETRIES; i++) {
        if (!retriable(err = pulsarc_consumer_seek(s->consumer, &at)))
            break;
        usleep(100 * 1000);
    }
    return err;
}

static pulsarc_err_t seek_time(pc_split_t *s, uint64_t ms) {
    pulsarc_err_t err = PULSARC_OK;
    for (int i = 0; i < PC_RETRIES; i++) {
        if (!retriable(err = pulsarc_consumer_seek_time(s->consumer, ms)))
            break;
        usleep(100 * 1000);
    }
    return err;
}

static void set_floor(pc_split_t *s, const pulsarc_msgid_t *id, int inclusive) {
    s->has_floor = 1;
    s->floor = *id;
    s->floor_inclusive = inclusive;
}

int pc_split_below_floor(const pc_split_t *s, const pulsarc_msgid_t *id) {
    if (!s->has_floor)
        return 0;
    int c = pc_cursor_cmp(id, &s->floor);
    return c < 0 || (c == 0 && !s->floor_inclusive);
}

/* ---------- consumer ---------- */

/* The declared schema travels only with enableSchemaEvolution (checked at source_new). */
static pulsarc_err_t set_schema(const pulsarc_source_t *src, pulsarc_conf_t *c, char *errstr,
                                size_t errlen) {
    if (!src->conf.schema_evolution)
        return PULSARC_OK;
    pulsarc_err_t err = pulsarc_conf_set(c, "schemaType", src->conf.schema_type, errstr, errlen);
    if (!err && src->conf.schema_def)
        err = pulsarc_conf_set(c, "schemaDefinition", src->conf.schema_def, errstr, errlen);
    return err;
}

pulsarc_err_t pc_split_consumer_conf(const pulsarc_source_t *src, pulsarc_conf_t **out,
                                     char *errstr, size_t errlen) {
    pulsarc_conf_t *c = pulsarc_conf_new();
    if (!c)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    const char *initial = src->conf.start.kind == PULSARC_START_LATEST ? "Latest" : "Earliest";
    pulsarc_err_t err = pulsarc_conf_set(c, "subscriptionType", sub_type_names[src->conf.sub_type],
                                         errstr, errlen);
    if (!err)
        err = pulsarc_conf_set(c, "subscriptionInitialPosition", initial, errstr, errlen);
    if (!err)
        err = pulsarc_conf_set(c, "keySharedAllowOutOfOrderDelivery",
                               src->conf.key_shared_ooo ? "true" : "false", errstr, errlen);
    if (!err)
        err = set_schema(src, c, errstr, errlen);
    if (!err && src->conf.key_reader)
        err = pulsarc_conf_set_crypto_key_reader(c, src->conf.key_reader,
                                                 src->conf.key_reader_opaque);
    if (err)
        pulsarc_conf_destroy(c);
    else
        *out = c;
    return err;
}

static pulsarc_err_t subscribe(pulsarc_source_t *src, pc_split_t *s, char *errstr,
                               size_t errlen) {
    pulsarc_conf_t *cc;
    pulsarc_err_t err = pc_split_consumer_conf(src, &cc, errstr, errlen);
    if (err)
        return err;
    char why[512] = "";
    err = pulsarc_consumer_new(src->client, s->name, src->conf.sub_name, cc, &s->consumer, why,
                               sizeof why);
    pulsarc_conf_destroy(cc);
    if (err == PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA)
        return pc_seterr(errstr, errlen, err, "split %s: the topic's schema does not accept "
                         "pulsar.source.schemaType %s: %s", s->name, src->conf.schema_type, why);
    if (err)
        pc_seterr(errstr, errlen, err, "%s", why);
    return err;
}

static pulsarc_err_t split_name(pc_split_t *s) {
    size_t len = strlen(s->topic) + 32;
    if (!(s->name = malloc(len)))
        return PULSARC_ERR_NOMEM;
    if (s->partition >= 0)
        snprintf(s->name, len, "%s-partition-%d", s->topic, (int)s->partition);
    else
        snprintf(s->name, len, "%s", s->topic);
    return PULSARC_OK;
}

/* ---------- start positions ---------- */

/*
 * A message id names a position in one partition's ledgers only, so a
 * message-id start applies to the split of its own partition (or to every
 * split when the id carries no partition); the other splits start at the
 * earliest message (applying one partition's id to every partition would
 * name positions that mean nothing there).
 */
static pulsarc_err_t apply_start(pulsarc_source_t *src, pc_split_t *s, int sub_is_new) {
    const pulsarc_start_cursor_t *st = &src->conf.start;
    pulsarc_msgid_t e = pulsarc_msgid_earliest(), l = pulsarc_msgid_latest();
    switch (st->kind) {
    case PULSARC_START_EARLIEST:
        return sub_is_new ? PULSARC_OK : seek_entry(s, &e); /* new: initial position did it */
    case PULSARC_START_LATEST:
        return sub_is_new ? PULSARC_OK : seek_entry(s, &l);
    case PULSARC_START_MESSAGE_ID:
        if (st->id.partition >= 0 && st->id.partition != s->partition)
            return sub_is_new ? PULSARC_OK : seek_entry(s, &e); /* an id of another partition */
        set_floor(s, &st->id, st->inclusive);
        return seek_entry(s, &st->id);
    case PULSARC_START_PUBLISH_TIME:
        return seek_time(s, st->time_ms);
    }
    return PULSARC_ERR_INVALID_ARG;
}

static pulsarc_err_t position_fresh(pulsarc_source_t *src, pc_split_t *s, int force,
                                    char *errstr, size_t errlen) {
    int exists = 0;
    pulsarc_err_t err = PULSARC_OK;
    if (!force && !src->conf.reset_cursor && sub_exists(src, s->name, &exists, errstr, errlen)) {
        /* Not fatal: earliest / latest still apply through the initial position. */
        pc_source_log(src, PULSARC_SOURCE_LOG_WARN, "%s: cannot tell whether subscription %s "
                      "exists (%s); treating it as existing", s->name, src->conf.sub_name, errstr);
        exists = 1;
    }
    if (!err)
        err = subscribe(src, s, errstr, errlen);
    if (err || exists)
        return err; /* an existing subscription continues where it is */
    char what[96];
    pc_start_describe(&src->conf.start, what, sizeof what);
    pc_source_log(src, PULSARC_SOURCE_LOG_INFO, "%s: starting at %s (%s)", s->name, what,
                  force ? "new partition" : src->conf.reset_cursor ? "reset" : "new subscription");
    err = apply_start(src, s, !force && !src->conf.reset_cursor);
    if (err)
        pc_seterr(errstr, errlen, err, "%s: applying the start cursor (%s) failed: %s", s->name,
                  what, pulsarc_strerror(err));
    return err;
}

/* ---------- restore ---------- */

/* The first message after the resume seek must be the checkpointed entry or the next. */
static int resumes_cleanly(const pulsarc_msgid_t *ck, const pulsarc_msgid_t *first) {
    return first->ledger_id == ck->ledger_id &&
           (first->entry_id == ck->entry_id || first->entry_id == ck->entry_id + 1);
}

static pulsarc_err_t mismatch(pulsarc_source_t *src, pc_split_t *s, const char *what,
                              char *errstr, size_t errlen) {
    char ck[64];
    pulsarc_msgid_format(&s->last, ck, sizeof ck);
    if (src->conf.verify_fail)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOT_FOUND,
                         "split %s: checkpointed position %s can no longer be read (%s)",
                         s->name, ck, what);
    pc_source_log(src, PULSARC_SOURCE_LOG_WARN,
                  "split %s: checkpointed position %s can no longer be read (%s); "
                  "continuing from the first readable message", s->name, ck, what);
    return PULSARC_OK;
}

static pulsarc_err_t verify_resume(pulsarc_source_t *src, pc_split_t *s, pulsarc_err_t seek_err,
                                   char *errstr, size_t errlen) {
    char what[128];
    if (seek_err) {
        snprintf(what, sizeof what, "seek failed: %s", pulsarc_strerror(seek_err));
        return mismatch(src, s, what, errstr, errlen);
    }
    pulsarc_err_t err = pulsarc_consumer_receive(s->consumer, &s->pending, PC_VERIFY_WAIT_MS);
    if (err) {
        snprintf(what, sizeof what, "nothing to read there: %s", pulsarc_strerror(err));
        return mismatch(src, s, what, errstr, errlen);
    }
    pulsarc_msgid_t first = pulsarc_msg_id(s->pending);
    if (resumes_cleanly(&s->last, &first))
        return PULSARC_OK;
    char id[64];
    pulsarc_msgid_format(&first, id, sizeof id);
    snprintf(what, sizeof what, "the first readable message is %s", id);
    return mismatch(src, s, what, errstr, errlen);
}

static pulsarc_err_t position_restored(pulsarc_source_t *src, pc_split_t *s,
                                       const pc_ckpt_split_t *r, char *errstr, size_t errlen) {
    s->stop = r->stop;
    s->finished = r->finished;
    pulsarc_err_t err = subscribe(src, s, errstr, errlen);
    if (!err && !r->has_last && r->has_floor)
        set_floor(s, &r->floor, r->floor_inclusive); /* keep honouring the start id */
    if (err || !r->has_last)
        return err; /* nothing emitted yet: the subscription's position applies */
    s->has_last = 1;
    s->last = r->last;
    if (pc_source_shared(src))
        return PULSARC_OK; /* no watermark to seek to: see the note on Shared restores */
    set_floor(s, &r->last, 0);
    if (s->finished)
        return PULSARC_OK; /* kept only to commit its last position */
    return verify_resume(src, s, seek_entry(s, &r->last), errstr, errlen);
}

/* ---------- stop bound ---------- */

static pulsarc_err_t resolve_stop(pulsarc_source_t *src, pc_split_t *s, char *errstr,
                                  size_t errlen) {
    s->stop = src->conf.stop;
    if (s->stop.kind != PULSARC_STOP_LATEST)
        return PULSARC_OK;
    pulsarc_msgid_t last;
    pulsarc_err_t err = last_id(s, &last);
    if (err)
        return pc_seterr(errstr, errlen, err, "%s: resolving the latest stop position failed: %s",
                         s->name, pulsarc_strerror(err));
    s->stop.kind = PULSARC_STOP_AFTER_ID; /* latest = up to and including the last message */
    s->stop.id = last;
    return PULSARC_OK;
}

static int caught_up_by_id(pc_split_t *s) {
    pulsarc_msgid_t last;
    int avail = 1;
    if (last_id(s, &last) || !pc_stop_passed_by(&s->stop, &last))
        return 0;
    return available(s, &avail) == PULSARC_OK && !avail;
}

static int caught_up_by_time(pc_split_t *s) {
    int avail = 1;
    if (pc_source_now_ms() < s->stop.time_ms + PC_TIME_GRACE_MS)
        return 0;
    return available(s, &avail) == PULSARC_OK && !avail;
}
static void check_caught_up_now(pulsarc_source_t *src, pc_split_t *s) {
    int done = 0;
    if (s->finished || s->pending)
        return;
    if (pc_stop_is_id_bound(&s->stop))
        done = caught_up_by_id(s);
    else if (s->stop.kind == PULSARC_STOP_AT_PUBLISH_TIME ||
             s->stop.kind == PULSARC_STOP_AFTER_PUBLISH_TIME)
        done = caught_up_by_time(s);
    if (done)
        pc_split_finish(src, s, "nothing left before its stop bound");
}

void pc_split_check_caught_up(pulsarc_source_t *src, pc_split_t *s) {
    uint64_t now = pc_source_now_ms();
    if (now < s->next_idle_check_ms)
        return;
    s->next_idle_check_ms = now + PC_IDLE_CHECK_MS;
    check_caught_up_now(src, s);
}

void pc_split_finish(pulsarc_source_t *src, pc_split_t *s, const char *why) {
    if (s->finished)
        return;
    s->finished = 1;
    pc_source_log(src, PULSARC_SOURCE_LOG_INFO, "split %s finished: %s", s->name, why);
}

/* ---------- lifecycle ---------- */

pulsarc_err_t pc_split_open(pulsarc_source_t *src, const pc_split_open_args_t *a,
                            pc_split_t **out, char *errstr, size_t errlen) {
    pc_split_t *s = calloc(1, sizeof *s);
    if (!s || !(s->topic = strdup(a->topic))) {
        free(s);
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    s->partition = a->partition;
    s->last = pulsarc_msgid_earliest();
    pulsarc_err_t err = split_name(s);
    if (!err && a->restored)
        err = position_restored(src, s, a->restored, errstr, errlen);
    else if (!err)
        err = position_fresh(src, s, a->force_start, errstr, errlen);
    if (!err && !a->restored)
        err = resolve_stop(src, s, errstr, errlen);
    if (!err)
        check_caught_up_now(src, s);
    if (err) {
        pc_split_destroy(s);
        return err;
    }
    *out = s;
    return PULSARC_OK;
}

void pc_split_destroy(pc_split_t *s) {
    if (!s)
        return;
    pulsarc_msg_destroy(s->pending);
    pulsarc_consumer_destroy(s->consumer);
    free(s->unacked.ids);
    free(s->name);
    free(s->topic);
    free(s);
}

pulsarc_err_t pc_split_receive(pc_split_t *s, pulsarc_msg_t **msg, int timeout_ms) {
    if (s->pending) {
        *msg = s->pending;
        s->pending = NULL;
        return PULSARC_OK;
    }
    return pulsarc_consumer_receive(s->consumer, msg, timeout_ms);
}

static pulsarc_err_t idvec_push(pc_idvec_t *v, const pulsarc_msgid_t *id) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        pulsarc_msgid_t *grown = realloc(v->ids, cap * sizeof *grown);
        if (!grown)
            return PULSARC_ERR_NOMEM;
        v->ids = grown;
        v->cap = cap;
    }
    v->ids[v->n++] = *id;
    return PULSARC_OK;
}

pulsarc_err_t pc_split_emitted(pulsarc_source_t *src, pc_split_t *s, const pulsarc_msg_t *msg) {
    pulsarc_msgid_t id = pulsarc_msg_id(msg);
    s->has_last = 1;
    s->last = id;
    s->last_publish_time = pulsarc_msg_publish_time(msg);
    s->emitted++;
    s->emitted_bytes += pulsarc_msg_len(msg);
    return pc_source_shared(src) ? idvec_push(&s->unacked, &id) : PULSARC_OK;
}
