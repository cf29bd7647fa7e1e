/* Opening a connector transaction (source acks, sink sends): handle plus id. */
#ifndef PC_CONNECTOR_TXN_OPEN_H
#define PC_CONNECTOR_TXN_OPEN_H
#include <stdint.h>

#include "pulsarc.h"

/* Opens a transaction of timeout_ms (clamped to INT_MAX) and reads its id. */
pulsarc_err_t pc_connector_txn_open(pulsarc_client_t *client, int64_t timeout_ms,
                                    pulsarc_txn_t **txn, uint64_t *most, uint64_t *least,
                                    char *errstr, size_t errlen);
#endif
