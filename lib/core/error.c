/*
 * Design notes: the error enum's names, descriptions and the retriable /
 * fatal split, plus the internal errstr helper. Everything here is a
 * constant table or writes only into caller-owned buffers, so any thread
 * may call it at any time.
 *
 * Retriable as docs/PROTOCOL.md §11.2 lists it: connection-level
 * trouble and the broker's "try again later" answers retry; bad input,
 * authorization, busy, fenced and terminated are final.
 */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>

#ifndef PULSARC_VERSION_STR
#error "PULSARC_VERSION_STR must be defined by the build"
#endif

typedef struct err_info {
    const char *name;
    const char *desc;
    int retriable;
} err_info_t;

/* Indexed by -err: PULSARC_OK and the local errors. */
static const err_info_t local_errs[] = {
    {"OK", "success", 0},
    {"INVALID_ARG", "invalid argument", 0},
    {"NOMEM", "out of memory or memory limit reached", 0},
    {"BAD_URL", "invalid service URL", 0},
    {"BAD_TOPIC", "invalid topic name", 0},
    {"BAD_CONFIG", "invalid configuration value", 0},
    {"UNKNOWN_CONFIG", "unknown configuration key", 0},
    {"MALFORMED", "malformed frame or protocol data", 0},
    {"CHECKSUM", "checksum mismatch", 0},
    {"FRAME_TOO_BIG", "frame exceeds the maximum size", 0},
    {"RESOLVE", "host name resolution failed", 1},
    {"CONNECT", "connection failed", 1},
    {"TIMEOUT", "operation timed out", 1},
    {"DISCONNECTED", "connection lost", 1},
    {"CLOSED", "handle is closed", 0},
    {"TOO_MANY_REDIRECTS", "too many lookup redirects", 0},
    {"QUEUE_FULL", "producer queue is full", 0},
    {"MSG_TOO_BIG", "message exceeds the maximum size", 0},
    {"UNSUPPORTED", "not supported", 0},
    {"PROTOCOL", "protocol violation by the peer", 0},
    {"TLS", "TLS failure", 0},
    {"END_OF_TOPIC", "end of topic reached", 0},
    {"COMPRESSION", "compression or decompression failed", 0},
    {"NO_MESSAGE", "no message available", 0},
    {"STATE", "operation not valid in the current state", 0},
    {"IO", "I/O error", 1},
    {"AUTH", "authentication set-up failed", 0},
    {"NOT_FOUND", "not found", 0},
    {"CRYPTO", "message encryption or decryption failed", 0},
};

/* Indexed by err - PULSARC_ERR_BROKER_BASE (the wire ServerError value). */
static const err_info_t broker_errs[] = {
    {"BROKER_UNKNOWN", "broker: unknown error", 1},
    {"BROKER_METADATA", "broker: metadata error", 1},
    {"BROKER_PERSISTENCE", "broker: persistence error", 1},
    {"BROKER_AUTHENTICATION", "broker: authentication failed", 0},
    {"BROKER_AUTHORIZATION", "broker: not authorized", 0},
    {"BROKER_CONSUMER_BUSY", "broker: consumer busy", 0},
    {"BROKER_SERVICE_NOT_READY", "broker: service not ready", 1},
    {"BROKER_PRODUCER_BLOCKED_QUOTA_ERROR", "broker: producer blocked by quota", 1},
    {"BROKER_PRODUCER_BLOCKED_QUOTA_EXCEPTION",
     "broker: producer blocked by quota (messages failed)", 0},
    {"BROKER_CHECKSUM", "broker: checksum error", 0},
    {"BROKER_UNSUPPORTED_VERSION", "broker: unsupported protocol version", 0},
    {"BROKER_TOPIC_NOT_FOUND", "broker: topic not found", 0},
    {"BROKER_SUBSCRIPTION_NOT_FOUND", "broker: subscription not found", 0},
    {"BROKER_CONSUMER_NOT_FOUND", "broker: consumer not found", 1},
    {"BROKER_TOO_MANY_REQUESTS", "broker: too many requests", 1},
    {"BROKER_TOPIC_TERMINATED", "broker: topic terminated", 0},
    {"BROKER_PRODUCER_BUSY", "broker: producer busy", 0},
    {"BROKER_INVALID_TOPIC_NAME", "broker: invalid topic name", 0},
    {"BROKER_INCOMPATIBLE_SCHEMA", "broker: incompatible schema", 0},
    {"BROKER_CONSUMER_ASSIGN", "broker: consumer assign error", 0},
    {"BROKER_TXN_COORDINATOR_NOT_FOUND", "broker: transaction coordinator not found", 1},
    {"BROKER_INVALID_TXN_STATUS", "broker: invalid transaction status", 0},
    {"BROKER_NOT_ALLOWED", "broker: operation not allowed", 0},
    {"BROKER_TXN_CONFLICT", "broker: transaction conflict", 0},
    {"BROKER_TXN_NOT_FOUND", "broker: transaction not found", 0},
    {"BROKER_PRODUCER_FENCED", "broker: producer fenced", 0},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* NULL for values outside the enum (e.g. a cast integer). */
static const err_info_t *err_lookup(pulsarc_err_t err) {
    int v = (int)err;
    if (v <= 0 && -v < COUNT(local_errs))
        return &local_errs[-v];
    if (v >= PULSARC_ERR_BROKER_BASE && v - PULSARC_ERR_BROKER_BASE < COUNT(broker_errs))
        return &broker_errs[v - PULSARC_ERR_BROKER_BASE];
    return NULL;
}

const char *pulsarc_version(void) {
    return PULSARC_VERSION_STR;
}

const char *pulsarc_strerror(pulsarc_err_t err) {
    const err_info_t *e = err_lookup(err);
    return e ? e->desc : "unknown error";
}

const char *pulsarc_errname(pulsarc_err_t err) {
    const err_info_t *e = err_lookup(err);
    return e ? e->name : "UNKNOWN";
}

int pulsarc_err_is_retriable(pulsarc_err_t err) {
    const err_info_t *e = err_lookup(err);
    return e ? e->retriable : 0;
}

pulsarc_err_t pc_seterr(char *errstr, size_t errlen, pulsarc_err_t err, const char *fmt, ...) {
    if (!errstr || errlen == 0)
        return err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errstr, errlen, fmt, ap);
    va_end(ap);
    return err;
}

pulsarc_err_t pc_err_from_server(int server_error) {
    if (server_error < 0 || server_error >= COUNT(broker_errs))
        return PULSARC_ERR_BROKER_UNKNOWN;
    return (pulsarc_err_t)(PULSARC_ERR_BROKER_BASE + server_error);
}
