/*
 * Design notes: the binary form of a message id is a serialised
 * MessageIdData, the same bytes the Java client's toByteArray() gives, so
 * ids stored by one client can be read back by the other. Optional fields
 * are written only when meaningful (partition and batch index >= 0, batch
 * size > 0). Pure functions; any thread.
 *
 * The bytes to deserialize come from the user (a stored checkpoint, a
 * file), so they are bounded like network bytes before protobuf-c sees
 * them: an id nests at most one id (first_chunk_message_id, depth 2);
 * allowed here: depth 4, 4096 elements (ack_set words), 64 KiB unpacked.
 */
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "core/pbguard.h"
#include "pulsarc.h"

static const pc_pbguard_limits_t id_limits = {4, 4096, (size_t)64 << 10};

pulsarc_err_t pulsarc_msgid_serialize(const pulsarc_msgid_t *id, void *buf, size_t *len) {
    if (!id || !len)
        return PULSARC_ERR_INVALID_ARG;
    Pulsar__Proto__MessageIdData m = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    m.ledgerid = (uint64_t)id->ledger_id;
    m.entryid = (uint64_t)id->entry_id;
    m.has_partition = id->partition >= 0;
    m.partition = id->partition;
    m.has_batch_index = id->batch_index >= 0;
    m.batch_index = id->batch_index;
    m.has_batch_size = id->batch_size > 0;
    m.batch_size = id->batch_size;
    size_t need = pulsar__proto__message_id_data__get_packed_size(&m);
    size_t have = *len;
    *len = need;
    if (!buf || have < need)
        return PULSARC_ERR_INVALID_ARG;
    pulsar__proto__message_id_data__pack(&m, buf);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msgid_deserialize(const void *buf, size_t len, pulsarc_msgid_t *out) {
    if (!buf || !out || len == 0)
        return PULSARC_ERR_INVALID_ARG;
    pc_pbguard_result_t g;
    if (pc_pbguard_check(&pulsar__proto__message_id_data__descriptor, buf, len, &id_limits, &g))
        return PULSARC_ERR_MALFORMED;
    Pulsar__Proto__MessageIdData *m = pulsar__proto__message_id_data__unpack(NULL, len, buf);
    if (!m)
        return PULSARC_ERR_MALFORMED;
    out->ledger_id = (int64_t)m->ledgerid;
    out->entry_id = (int64_t)m->entryid;
    out->partition = m->has_partition ? m->partition : -1;
    out->batch_index = m->has_batch_index ? m->batch_index : -1;
    out->batch_size = m->has_batch_size ? m->batch_size : 0;
    pulsar__proto__message_id_data__free_unpacked(m, NULL);
    return PULSARC_OK;
}
