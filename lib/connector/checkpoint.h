/* The source's checkpoint blob: encode and decode, no I/O. */
#ifndef PC_CONNECTOR_CHECKPOINT_H
#define PC_CONNECTOR_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>

#include "pulsarc/source.h"

#define PC_CKPT_MAGIC "PCSC"
#define PC_CKPT_VERSION 3 /* 3 added the reader, 2 the transactions; 1 and 2 are still read */
#define PC_CKPT_MAX_READERS 4096
#define PC_CKPT_MAX_TXNS 1024

/* One split as a checkpoint stores it. */
typedef struct pc_ckpt_split {
    char *topic;              /* full base name (no -partition-N), owned */
    int32_t partition;        /* -1 for a non-partitioned topic */
    int has_last;             /* last_emitted is meaningful */
    int finished;             /* the split reached its bound */
    pulsarc_msgid_t last;     /* last emitted id, batch index and size kept */
    int has_floor;            /* nothing emitted yet, but a message-id start cursor */
    int floor_inclusive;      /* ... keeps its own id (inclusive start) */
    pulsarc_msgid_t floor;    /* ... drops every message before it */
    pulsarc_stop_cursor_t stop; /* the bound, LATEST already resolved to an id */
} pc_ckpt_split_t;

/* A Shared / Key_Shared acknowledgement transaction and what a restore does with it. */
typedef struct pc_ckpt_txn {
    uint64_t most, least;
    int commit;               /* 1: holds acks this checkpoint covers; 0: reserved, abort */
} pc_ckpt_txn_t;

typedef struct pc_ckpt {
    size_t n;
    pc_ckpt_split_t *splits;  /* n entries, owned */
    size_t ntxns;
    pc_ckpt_txn_t *txns;      /* ntxns entries, owned (NULL when none) */
    uint32_t reader;          /* which reader wrote it (0 for one reader or a merge) */
    uint32_t readers;         /* of how many; 0 is written as 1 */
    int shared;               /* Shared / Key_Shared: every reader holds every split */
} pc_ckpt_t;

/* Encodes ck into a malloc'd buffer (*out, *len). */
pulsarc_err_t pc_ckpt_encode(const pc_ckpt_t *ck, uint8_t **out, size_t *len);
/*
 * Decodes buf into *ck (owned by the caller: pc_ckpt_free). Bad magic,
 * unknown version or truncation → PULSARC_ERR_MALFORMED; a CRC mismatch →
 * PULSARC_ERR_CHECKSUM; errstr says which and where.
 */
pulsarc_err_t pc_ckpt_decode(const void *buf, size_t len, pc_ckpt_t *ck, char *errstr,
                             size_t errlen);
void pc_ckpt_free(pc_ckpt_t *ck);
/*
 * Merges the checkpoints of readers 0..n-1 of n (cks, each decoded, any
 * order) into *out, a checkpoint of one reader that any number of readers
 * can restore from (owned by the caller: pc_ckpt_free; its topics are
 * copies). Errors name the problem: a reader missing or given twice,
 * readers of different counts or subscription kinds, two readers claiming
 * the same split (Exclusive / Failover; Shared readers all hold every split).
 */
pulsarc_err_t pc_ckpt_merge(const pc_ckpt_t *cks, size_t n, pc_ckpt_t *out, char *errstr,
                            size_t errlen);
#endif
