/*
 * What producers and consumers need from a transaction (txn.c): its id,
 * the count of sends and acks still running in it (commit waits for them),
 * and the one-time registration of each partition and subscription it
 * touches with its coordinator. All application thread unless noted.
 */
#ifndef PC_TXN_H
#define PC_TXN_H
#include <stdint.h>

#include "pulsarc.h"

/* The id; fixed at creation, so any thread may read it. */
void pc_txn_ids(const pulsarc_txn_t *t, uint64_t *most, uint64_t *least);
/*
 * A send or ack joins the transaction: STATE unless it is open. Holds a
 * reference until pc_txn_op_end, which any thread (the loop too) may call
 * with the operation's outcome; a failure dooms the commit.
 */
pulsarc_err_t pc_txn_op_begin(pulsarc_txn_t *t);
void pc_txn_op_end(pulsarc_txn_t *t, pulsarc_err_t err);
/* ADD_PARTITION_TO_TXN for topic, blocking, the first time only. */
pulsarc_err_t pc_txn_add_partition(pulsarc_txn_t *t, const char *topic, char *errstr,
                                   size_t errlen);
/* ADD_SUBSCRIPTION_TO_TXN for (topic, sub), blocking, the first time only. */
pulsarc_err_t pc_txn_add_subscription(pulsarc_txn_t *t, const char *topic, const char *sub,
                                      char *errstr, size_t errlen);

/* 1 when c was configured with enableTransaction=true. Any thread. */
int pc_client_txn_enabled(const pulsarc_client_t *c);
#endif
