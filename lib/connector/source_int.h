/*
 * Internal state of a source, shared by source.c (lifecycle, checkpoints,
 * timers), source_conf.c (the pulsar.source.* table), source_fetch.c (the
 * fetch loop), split.c (one partition's consumer) and source_txn.c (the
 * acknowledgement transactions). Calls go one way: source.c and
 * source_fetch.c call split.c and source_txn.c, never the reverse; what
 * they all need (clock, log, shared or not) is in source_common.c, below
 * them.
 */
#ifndef PC_CONNECTOR_SOURCE_INT_H
#define PC_CONNECTOR_SOURCE_INT_H
#include <stdint.h>

#include "pulsarc.h"
#include "pulsarc/source.h"

typedef enum pc_sub_type { PC_SUB_EXCLUSIVE, PC_SUB_SHARED, PC_SUB_FAILOVER, PC_SUB_KEY_SHARED } pc_sub_type_t;

struct pulsarc_source_conf_s {
    char *sub_name;
    pc_sub_type_t sub_type;
    char **topics;
    size_t ntopics;
    int64_t discovery_ms;     /* pulsar.source.partitionDiscoveryIntervalMs */
    int64_t max_fetch_records;
    int64_t max_fetch_ms;
    int64_t fetch_one_ms;     /* -1: unset */
    int auto_ack;
    int64_t auto_commit_ms;
    int verify_fail;          /* FAIL_ON_MISMATCH */
    int key_shared_ooo;
    int reset_cursor;
    int metrics;
    int64_t txn_timeout_ms;   /* pulsar.source.transactionTimeoutMillis */
    int schema_evolution;     /* pulsar.source.enableSchemaEvolution */
    char *schema_type;        /* pulsar.source.schemaType, NULL: unset */
    char *schema_def;         /* pulsar.source.schemaDefinition */
    char *admin_url;
    pulsarc_start_cursor_t start;
    pulsarc_stop_cursor_t stop;
    pulsarc_source_log_cb log_cb;
    void *log_opaque;
    uint32_t reader_index;    /* this reader among reader_count (assign.c's rule) */
    uint32_t reader_count;    /* 1: the source reads every split */
    pulsarc_crypto_key_reader_cb key_reader; /* set on every split's consumer; NULL: none */
    void *key_reader_opaque;
};

/* Ids emitted but not yet acknowledged, for Shared / Key_Shared commits. */
typedef struct pc_idvec {
    pulsarc_msgid_t *ids;
    size_t n, cap;
} pc_idvec_t;

typedef struct pc_split {
    char *topic;                 /* full base name */
    int32_t partition;           /* -1: non-partitioned */
    char *name;                  /* the consumer's topic: base or base-partition-N */
    pulsarc_consumer_t *consumer;
    pulsarc_stop_cursor_t stop;  /* LATEST resolved to AFTER_ID at open */
    int finished;
    int has_last;
    pulsarc_msgid_t last;        /* last emitted id */
    uint64_t last_publish_time;
    int has_floor;               /* drop messages at or before floor (resume / exclusive start) */
    pulsarc_msgid_t floor;
    int floor_inclusive;         /* 1: floor itself is kept (inclusive start) */
    pulsarc_msg_t *pending;      /* received early (verification), not yet handed out */
    uint64_t next_idle_check_ms; /* rate limit of the caught-up check */
    pc_idvec_t unacked;          /* Shared / Key_Shared only */
    uint64_t emitted, emitted_bytes, dropped;
} pc_split_t;

/* An acknowledgement transaction of a Shared / Key_Shared source (source_txn.c). */
typedef struct pc_src_txn {
    pulsarc_txn_t *txn;
    uint64_t most, least;
} pc_src_txn_t;

/* Positions captured by one checkpoint, kept until it completes. */
typedef struct pc_pending_ckpt {
    uint64_t id;
    size_t n;                    /* splits at the time */
    int *has_last;
    pulsarc_msgid_t *last;
    size_t *unacked_upto;        /* Shared: how many of split->unacked it covers */
    pc_src_txn_t *txn;           /* transactional Shared: its acks, committed on completion */
    struct pc_pending_ckpt *next;
} pc_pending_ckpt_t;


struct pulsarc_source_s {
    pulsarc_client_t *client;
    pulsarc_source_conf_t conf;  /* deep copy */
    pc_split_t **splits;
    size_t nsplits, cap;
    size_t rr;                   /* next split to serve */
    pc_pending_ckpt_t *ckpts;    /* oldest first */
    uint64_t next_discovery_ms;
    uint64_t next_auto_commit_ms;
    int txn_mode;                /* Shared acks in transactions (source_txn.c) */
    pc_src_txn_t *reserved;      /* the next epoch's transaction, empty */
    void *admin;                 /* pulsarc_admin_t, made on first use (WITH_CURL only) */
};

/* ---------- source_conf.c ---------- */
void pc_source_conf_defaults(pulsarc_source_conf_t *c);
pulsarc_err_t pc_source_conf_copy(pulsarc_source_conf_t *dst, const pulsarc_source_conf_t *src);
void pc_source_conf_clear(pulsarc_source_conf_t *c);

/* ---------- source_common.c ---------- */
void pc_source_log(const pulsarc_source_t *src, pulsarc_source_log_level_t level,
                   const char *fmt, ...) __attribute__((format(printf, 3, 4)));
uint64_t pc_source_now_ms(void);
int pc_source_shared(const pulsarc_source_t *src);

/* ---------- source.c ---------- */
void pc_source_run_timers(pulsarc_source_t *src);
/* 1 when this reader reads split (topic, partition): its own by the rule, or every split when shared. */
int pc_source_owns(const pulsarc_source_t *src, const char *topic, int32_t partition);

/* ---------- source_txn.c ---------- */
struct pc_ckpt;
struct pc_ckpt_txn;
int pc_source_txn_mode(const pulsarc_source_t *src);
/* Acks every pending id in the reserved transaction, which p then owns; reserves the next. */
pulsarc_err_t pc_source_txn_checkpoint(pulsarc_source_t *src, pc_pending_ckpt_t *p,
                                       char *errstr, size_t errlen);
/* p's blob was written: its ids are the transaction's now, no longer pending. */
void pc_source_txn_checkpointed(pulsarc_source_t *src, pc_pending_ckpt_t *p);
/* The transactions blob p names (malloc'd array in *out). */
pulsarc_err_t pc_source_txn_list(const pulsarc_source_t *src, const pc_pending_ckpt_t *p,
                                 struct pc_ckpt_txn **out, size_t *n);
/* Commits q's transaction, if any, and forgets it. */
pulsarc_err_t pc_source_txn_commit(pulsarc_source_t *src, pc_pending_ckpt_t *q);
/* Commits and aborts what a restored blob names. */
pulsarc_err_t pc_source_txn_restore(pulsarc_source_t *src, const struct pc_ckpt *ck,
                                    char *errstr, size_t errlen);
/* abort: end it now; else leave it open for a restore to settle. */
void pc_source_txn_free(pc_src_txn_t *t, int abort);

/* ---------- split.c ---------- */
/* How a split is opened. restored: from a checkpoint (may be NULL). */
typedef struct pc_split_open_args {
    const char *topic;
    int32_t partition;
    int force_start;             /* apply the start cursor even to an existing subscription */
    const struct pc_ckpt_split *restored;
} pc_split_open_args_t;

pulsarc_err_t pc_split_open(pulsarc_source_t *src, const pc_split_open_args_t *a,
                            pc_split_t **out, char *errstr, size_t errlen);
void pc_split_destroy(pc_split_t *s);
/* The configuration every split's consumer gets (*out owned by the caller). */
pulsarc_err_t pc_split_consumer_conf(const pulsarc_source_t *src, pulsarc_conf_t **out,
                                     char *errstr, size_t errlen);
/* Receives one message for the split (pending first), waiting up to timeout_ms. */
pulsarc_err_t pc_split_receive(pc_split_t *s, pulsarc_msg_t **msg, int timeout_ms);
/* Finishes the split when nothing below its bound can arrive any more. */
void pc_split_check_caught_up(pulsarc_source_t *src, pc_split_t *s);
/* Records msg as emitted. */
pulsarc_err_t pc_split_emitted(pulsarc_source_t *src, pc_split_t *s, const pulsarc_msg_t *msg);
/* 1 when id is at or before the split's resume floor (already emitted). */
int pc_split_below_floor(const pc_split_t *s, const pulsarc_msgid_t *id);
void pc_split_finish(pulsarc_source_t *src, pc_split_t *s, const char *why);
#endif
