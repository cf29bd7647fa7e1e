/*
 * Design notes: the source's cursors as pure functions, so every rule is
 * testable from values alone.
 *
 * Order. Inside one split the partition carries no information (every id of
 * the split has the same one), and a bound written as "L:E" or "L:E:-1"
 * means a whole entry. Comparing the partition or treating -1 as "before
 * index 0" is what makes the Flink connector drop the named message on
 * partitioned or batched topics; here -1 on either side
 * compares equal to every message of the entry.
 *
 * Verdicts. Id bounds: before the bound → CONTINUE; the inclusive bound
 * itself → EXACTLY (for a whole-entry bound, only at the entry's last batch
 * message); beyond → TERMINATE. Time bounds never answer EXACTLY: an
 * inclusive time bound keeps every message of the bound's millisecond
 * (dropping the rest of it would lose messages), so the split only ends on the
 * first later message, or when it is caught up (split.c).
 */
#include <stdio.h>

#include "connector/cursor.h"
#include "core/err.h"

static int cmp_i64(int64_t a, int64_t b) {
    return a < b ? -1 : a > b;
}

int pc_cursor_cmp(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b) {
    int c = cmp_i64(a->ledger_id, b->ledger_id);
    if (c == 0)
        c = cmp_i64(a->entry_id, b->entry_id);
    if (c == 0 && a->batch_index >= 0 && b->batch_index >= 0)
        c = cmp_i64(a->batch_index, b->batch_index);
    return c;
}

/* 1 when id is the last message of its entry (or the entry is not a batch). */
static int last_of_entry(const pulsarc_msgid_t *id) {
    return id->batch_index < 0 || id->batch_size <= 0 || id->batch_index >= id->batch_size - 1;
}

static pc_stop_verdict_t decide_id(const pulsarc_stop_cursor_t *stop, const pulsarc_msgid_t *id) {
    int c = pc_cursor_cmp(id, &stop->id);
    if (c < 0)
        return PC_STOP_CONTINUE;
    if (c > 0 || stop->kind == PULSARC_STOP_AT_ID)
        return PC_STOP_TERMINATE;
    if (stop->id.batch_index >= 0 || last_of_entry(id))
        return PC_STOP_EXACTLY;
    return PC_STOP_CONTINUE; /* whole-entry bound: the rest of the batch is still in */
}

static pc_stop_verdict_t decide_time(uint64_t t, uint64_t bound, int inclusive) {
    if (t < bound || (inclusive && t == bound))
        return PC_STOP_CONTINUE;
    return PC_STOP_TERMINATE;
}

pc_stop_verdict_t pc_stop_decide(const pulsarc_stop_cursor_t *stop, const pulsarc_msgid_t *id,
                                 uint64_t publish_time, uint64_t event_time) {
    switch (stop->kind) {
    case PULSARC_STOP_AT_ID:
    case PULSARC_STOP_AFTER_ID:
        return decide_id(stop, id);
    case PULSARC_STOP_AT_PUBLISH_TIME:
        return decide_time(publish_time, stop->time_ms, 0);
    case PULSARC_STOP_AFTER_PUBLISH_TIME:
        return decide_time(publish_time, stop->time_ms, 1);
    case PULSARC_STOP_AT_EVENT_TIME:
        return decide_time(event_time, stop->time_ms, 0);
    case PULSARC_STOP_AFTER_EVENT_TIME:
        return decide_time(event_time, stop->time_ms, 1);
    default:
        return PC_STOP_CONTINUE; /* never; latest is resolved before any message */
    }
}

int pc_stop_is_id_bound(const pulsarc_stop_cursor_t *stop) {
    return stop->kind == PULSARC_STOP_AT_ID || stop->kind == PULSARC_STOP_AFTER_ID;
}

int pc_stop_passed_by(const pulsarc_stop_cursor_t *stop, const pulsarc_msgid_t *last) {
    if (!pc_stop_is_id_bound(stop))
        return 0;
    /* Anything written later gets an id above last, hence at or above the bound. */
    return pc_cursor_cmp(last, &stop->id) >= 0;
}

static int is_sentinel(const pulsarc_msgid_t *id) {
    pulsarc_msgid_t e = pulsarc_msgid_earliest(), l = pulsarc_msgid_latest();
    return (id->ledger_id == e.ledger_id && id->entry_id == e.entry_id) ||
           (id->ledger_id == l.ledger_id && id->entry_id == l.entry_id);
}

pulsarc_err_t pc_stop_validate(const pulsarc_stop_cursor_t *stop, char *errstr, size_t errlen) {
    if (!stop || stop->kind < PULSARC_STOP_NEVER || stop->kind > PULSARC_STOP_AFTER_EVENT_TIME)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "unknown stop cursor kind");
    if (pc_stop_is_id_bound(stop) && is_sentinel(&stop->id))
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "a stop id cannot be earliest or latest (use the latest stop cursor)");
    if (pc_stop_is_id_bound(stop) && (stop->id.ledger_id < 0 || stop->id.entry_id < 0))
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "stop id needs a ledger and entry");
    return PULSARC_OK;
}

pulsarc_err_t pc_start_validate(const pulsarc_start_cursor_t *start, char *errstr,
                                size_t errlen) {
    if (!start || start->kind < PULSARC_START_EARLIEST || start->kind > PULSARC_START_PUBLISH_TIME)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "unknown start cursor kind");
    return PULSARC_OK;
}

void pc_start_describe(const pulsarc_start_cursor_t *start, char *buf, size_t len) {
    char id[64] = "";
    switch (start->kind) {
    case PULSARC_START_LATEST:
        snprintf(buf, len, "latest");
        break;
    case PULSARC_START_MESSAGE_ID:
        pulsarc_msgid_format(&start->id, id, sizeof id);
        snprintf(buf, len, "id %s %s", id, start->inclusive ? "inclusive" : "exclusive");
        break;
    case PULSARC_START_PUBLISH_TIME:
        snprintf(buf, len, "publish time %llu", (unsigned long long)start->time_ms);
        break;
    default:
        snprintf(buf, len, "earliest");
    }
}

/* ---------- public constructors ---------- */

pulsarc_start_cursor_t pulsarc_start_cursor_earliest(void) {
    pulsarc_start_cursor_t c = {PULSARC_START_EARLIEST, pulsarc_msgid_earliest(), 1, 0};
    return c;
}

pulsarc_start_cursor_t pulsarc_start_cursor_latest(void) {
    pulsarc_start_cursor_t c = {PULSARC_START_LATEST, pulsarc_msgid_latest(), 1, 0};
    return c;
}

pulsarc_start_cursor_t pulsarc_start_cursor_message_id(pulsarc_msgid_t id, int inclusive) {
    pulsarc_start_cursor_t c = {PULSARC_START_MESSAGE_ID, id, inclusive != 0, 0};
    return c;
}

pulsarc_start_cursor_t pulsarc_start_cursor_publish_time(uint64_t ms) {
    pulsarc_start_cursor_t c = {PULSARC_START_PUBLISH_TIME, pulsarc_msgid_earliest(), 1, ms};
    return c;
}

static pulsarc_stop_cursor_t stop_of(pulsarc_stop_kind_t kind, pulsarc_msgid_t id, uint64_t ms) {
    pulsarc_stop_cursor_t c = {kind, id, ms};
    return c;
}

pulsarc_stop_cursor_t pulsarc_stop_cursor_never(void) {
    return stop_of(PULSARC_STOP_NEVER, pulsarc_msgid_latest(), 0);
}

pulsarc_stop_cursor_t pulsarc_stop_cursor_latest(void) {
    return stop_of(PULSARC_STOP_LATEST, pulsarc_msgid_latest(), 0);
}

pulsarc_stop_cursor_t pulsarc_stop_cursor_at_id(pulsarc_msgid_t id) {
    return stop_of(PULSARC_STOP_AT_ID, id, 0);
}

pulsarc_stop_cursor_t pulsarc_stop_cursor_after_id(pulsarc_msgid_t id) {
    return stop_of(PULSARC_STOP_AFTER_ID, id, 0);
}

pulsarc_stop_cursor_t pulsarc_stop_cursor_at_publish_time(uint64_t ms) {
    return stop_of(PULSARC_STOP_AT_PUBLISH_TIME, pulsarc_msgid_latest(), ms);
}

pulsarc_stop_cursor_t pulsarc_stop_cursor_after_publish_time(uint64_t ms) {
    return stop_of(PULSARC_STOP_AFTER_PUBLISH_TIME, pulsarc_msgid_latest(), ms);
}

pulsarc_stop_cursor_t pulsarc_stop_cursor_at_event_time(uint64_t ms) {
    return stop_of(PULSARC_STOP_AT_EVENT_TIME, pulsarc_msgid_latest(), ms);
}

pulsarc_stop_cursor_t pulsarc_stop_cursor_after_event_time(uint64_t ms) {
    return stop_of(PULSARC_STOP_AFTER_EVENT_TIME, pulsarc_msgid_latest(), ms);
}
