/* Start and stop cursors of the source: pure decisions, no I/O. */
#ifndef PC_CONNECTOR_CURSOR_H
#define PC_CONNECTOR_CURSOR_H
#include "pulsarc.h"
#include "pulsarc/source.h"

/* What a stop cursor says about one received message. */
typedef enum pc_stop_verdict {
    PC_STOP_CONTINUE = 0, /* emit, keep going */
    PC_STOP_EXACTLY = 1,  /* emit, then the split is finished */
    PC_STOP_TERMINATE = 2 /* drop, the split is finished */
} pc_stop_verdict_t;

/*
 * Position order inside one split: ledger, entry, then batch index, with
 * the partition ignored. A batch index of -1 on either side stands for the
 * whole entry, so it compares equal to every message of that entry.
 */
int pc_cursor_cmp(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b);

/* The verdict of stop on a message with id and times. */
pc_stop_verdict_t pc_stop_decide(const pulsarc_stop_cursor_t *stop, const pulsarc_msgid_t *id,
                                 uint64_t publish_time, uint64_t event_time);

/* 1 for AT_ID / AFTER_ID (after LATEST has been resolved to AFTER_ID). */
int pc_stop_is_id_bound(const pulsarc_stop_cursor_t *stop);

/*
 * 1 when no message written after last (the topic's last id) can be
 * emitted under stop, i.e. the bound is at or behind the end of the topic.
 */
int pc_stop_passed_by(const pulsarc_stop_cursor_t *stop, const pulsarc_msgid_t *last);

/* Validates a stop cursor given by the application; errstr says why not. */
pulsarc_err_t pc_stop_validate(const pulsarc_stop_cursor_t *stop, char *errstr, size_t errlen);
pulsarc_err_t pc_start_validate(const pulsarc_start_cursor_t *start, char *errstr,
                                size_t errlen);

/* "earliest", "latest", "id 1:2:-1:3 inclusive", "publish time 123" ... */
void pc_start_describe(const pulsarc_start_cursor_t *start, char *buf, size_t len);
#endif
