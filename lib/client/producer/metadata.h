/*
 * What a message puts on the wire about itself: the MessageMetadata of a
 * single (non-batched) entry, and the SingleMessageMetadata record of each
 * message inside a batch (docs/PROTOCOL.md §4.7, §5.3). Pure functions over a
 * pulsarc_msg_t; the io thread calls them while framing.
 */
#ifndef PC_METADATA_H
#define PC_METADATA_H
#include "PulsarApi.pb-c.h"
#include "client/message.h"
#include "core/buf.h"

/* Storage the filled MessageMetadata points into (properties, clusters). */
typedef struct pc_md_store {
    Pulsar__Proto__KeyValue *kvs;
    Pulsar__Proto__KeyValue **kvp;
    char *local[1];       /* replicate_to when replication is disabled */
} pc_md_store_t;

/*
 * Fills md (already initialised) with m's user fields: properties, key
 * (+ base64 flag), ordering key, event time, deliver-at time, replicate_to,
 * null value. Pointers borrow from m and st; free st with pc_md_store_free.
 */
pulsarc_err_t pc_md_fill_user(Pulsar__Proto__MessageMetadata *md, pc_md_store_t *st,
                              const pulsarc_msg_t *m);
void pc_md_store_free(pc_md_store_t *st);

/* The most a record's SingleMessageMetadata takes without properties or
 * keys: 4 keys, two 10-byte varints, a 5-byte one, a bool. */
#define PC_MD_PLAIN_SINGLE_MAX 36

/* Appends one batch record: [u32 size][SingleMessageMetadata][payload]. */
pulsarc_err_t pc_md_append_single(pc_buf_t *out, const pulsarc_msg_t *m, int64_t seq);
/* The same record's head only, [u32 size][SingleMessageMetadata]: its
 * payload is sent from the message itself. */
pulsarc_err_t pc_md_append_single_head(pc_buf_t *out, const pulsarc_msg_t *m, int64_t seq);
#endif
