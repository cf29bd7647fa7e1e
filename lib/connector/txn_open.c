/*
 * Design notes: the one way the source and the sink open a transaction —
 * the configured lifetime clamped to what pulsarc_txn_new takes, and the
 * id read at once because both name it in their checkpoint blobs.
 * Application thread.
 */
#include "connector/txn_open.h"

pulsarc_err_t pc_connector_txn_open(pulsarc_client_t *client, int64_t timeout_ms,
                                    pulsarc_txn_t **txn, uint64_t *most, uint64_t *least,
                                    char *errstr, size_t errlen) {
    int t = timeout_ms > 2147483647 ? 2147483647 : (int)timeout_ms;
    pulsarc_err_t err = pulsarc_txn_new(client, t, txn, errstr, errlen);
    if (!err && (err = pulsarc_txn_id(*txn, most, least)) != PULSARC_OK) {
        pulsarc_txn_destroy(*txn);
        *txn = NULL;
    }
    return err;
}
