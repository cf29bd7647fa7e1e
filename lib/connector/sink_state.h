/*
 * The sink's checkpoint blob: which transactions a restored sink must
 * commit and which it must abort. No I/O; encode/decode from bytes only,
 * so it is unit-tested without a broker (test/unit/test_sink_checkpoint.c).
 */
#ifndef PC_SINK_STATE_H
#define PC_SINK_STATE_H
#include <stddef.h>
#include <stdint.h>

#include "pulsarc.h"

#define PC_SINK_STATE_MAGIC 0x4b535350u /* "PSSK" read as little-endian bytes */
#define PC_SINK_STATE_VERSION 2u   /* 2 added the writer; 1 is still read */
#define PC_SINK_STATE_MAX_WRITERS 4096u
#define PC_SINK_STATE_MAX_TXNS 65536u   /* a bound on what a blob may claim */

/* What the restored sink does with a transaction. */
typedef enum pc_sink_txn_fate {
    PC_SINK_TXN_COMMIT = 1, /* its checkpoint was taken: commit on restore */
    PC_SINK_TXN_ABORT = 2   /* opened after the checkpoint: abort on restore */
} pc_sink_txn_fate_t;

typedef struct pc_sink_txn_ref {
    uint64_t checkpoint_id; /* the checkpoint that closed it (ABORT: the blob's) */
    uint64_t most, least;   /* the transaction id */
    pc_sink_txn_fate_t fate;
} pc_sink_txn_ref_t;

typedef struct pc_sink_state {
    uint8_t guarantee;      /* pulsarc_sink_guarantee_t of the writer */
    uint64_t checkpoint_id; /* the checkpoint this blob belongs to */
    size_t ntxns;
    pc_sink_txn_ref_t *txns; /* owned (malloc) */
    uint32_t writer;        /* which of the parallel writers wrote it (0 for one, or a merge) */
    uint32_t writers;       /* of how many; 0 is written as 1 */
} pc_sink_state_t;

/* Serialises st into *out (malloc'd, caller frees) of *len bytes. */
pulsarc_err_t pc_sink_state_encode(const pc_sink_state_t *st, uint8_t **out, size_t *len);
/*
 * Parses buf into *st (its txns owned by the caller: pc_sink_state_free).
 * PULSARC_ERR_MALFORMED (truncated, bad magic, unknown version, bad fate,
 * trailing bytes) or PULSARC_ERR_CHECKSUM (CRC32C mismatch), with the reason
 * in errstr.
 */
pulsarc_err_t pc_sink_state_decode(const void *buf, size_t len, pc_sink_state_t *st,
                                   char *errstr, size_t errlen);
void pc_sink_state_free(pc_sink_state_t *st);
/*
 * Merges the states of writers 0..n-1 of n (sts, any order) into *out, one
 * writer's state (writer 0 of 1) holding every transaction, owned by the
 * caller. PULSARC_ERR_INVALID_ARG with errstr naming the problem: a writer
 * missing or given twice, states of different runs (writer counts),
 * checkpoints or delivery guarantees.
 */
pulsarc_err_t pc_sink_state_merge(const pc_sink_state_t *sts, size_t n, pc_sink_state_t *out,
                                  char *errstr, size_t errlen);
#endif
