/*
 * The transaction-coordinator client of one pulsarc client (docs/PROTOCOL.md
 * §10): finds the coordinators, keeps a connection to each, and runs the
 * four coordinator requests with retries. txn.c builds transactions on it.
 */
#ifndef PC_TXN_COORD_H
#define PC_TXN_COORD_H
#include <stdint.h>

#include "client/client_int.h"

typedef struct pc_tc pc_tc_t;

typedef enum {
    PC_TC_NEW_TXN,
    PC_TC_ADD_PARTITION,
    PC_TC_ADD_SUBSCRIPTION,
    PC_TC_END_TXN
} pc_tc_kind_t;

/* One coordinator request; owned by the caller, borrowed for the call. */
typedef struct pc_tc_req {
    pc_tc_kind_t kind;
    uint64_t most, least;   /* the transaction (out for NEW_TXN: most is the TC id) */
    uint64_t ttl_ms;        /* NEW_TXN: the transaction timeout */
    const char *topic;      /* ADD_PARTITION, ADD_SUBSCRIPTION */
    const char *sub;        /* ADD_SUBSCRIPTION */
    int commit;             /* END_TXN: 1 commit, 0 abort */
} pc_tc_req_t;

/*
 * Application thread: the client's coordinator client, created on first
 * use; the first call also discovers the coordinators. Returns a reference
 * (pc_tc_unref). UNSUPPORTED when the broker runs no coordinator.
 */
pulsarc_err_t pc_tc_get(pulsarc_client_t *c, pc_tc_t **out, char *errstr, size_t errlen);
void pc_tc_ref(pc_tc_t *tc);
void pc_tc_unref(pc_tc_t *tc);
/*
 * Application thread: runs req on its coordinator and blocks for the
 * answer. Coordinator-not-found, not-ready and lost connections are retried
 * with backoff until operationTimeoutMs; every other error is final.
 */
pulsarc_err_t pc_tc_call(pc_tc_t *tc, pc_tc_req_t *req, char *errstr, size_t errlen);
/* The client's operationTimeoutMs. */
int pc_tc_op_timeout(const pc_tc_t *tc);
#endif
