/* The message object shared by producers and consumers. */
#ifndef PC_MESSAGE_H
#define PC_MESSAGE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "pulsarc.h"

typedef struct pc_prop_kv {
    char *name;
    char *value;
} pc_prop_kv_t;

/*
 * What every message of one received entry shares (from the entry's
 * MessageMetadata and its MESSAGE command). A received view reads these
 * from its entry (pc_entry_t.shared), so building a view of a batch does
 * not copy them per message; a message the application owns (built, or a
 * clone) keeps its own in pulsarc_msg_s.own, topic and producer_name
 * malloc'd. The accessors (client/message.c) pick the one that applies.
 */
typedef struct pc_msg_shared {
    char *topic;
    char *producer_name;
    const uint8_t *schema_version; /* the writer's schema version, or NULL */
    size_t schema_version_len;
    uint64_t publish_time;
    uint32_t redelivery_count;
} pc_msg_shared_t;

/*
 * Field order matters to the consumer's decode: the fields from key to
 * repl_disabled are zero on a received view unless its record carries
 * them, and are cleared as one block (pc_msg_clear_view); the ones before
 * key are written one by one for every view.
 */
struct pulsarc_msg_s {
    uint8_t *data;
    size_t len;
    pulsarc_msgid_t id;
    uint64_t event_time;
    int64_t seq;
    uint32_t rx_epoch;    /* received: its consumer's resend epoch on arrival (ack.c) */
    struct pulsarc_msg_s *next; /* consumer receive queue link */
    /* Received messages are views: every pointer borrows from entry. */
    struct pc_entry *entry;
    /* ---- zero on a fresh view (pc_msg_clear_view) ---- */
    char *key;            /* partition key; base64 text when key_b64 */
    uint8_t *key_bin;     /* decoded binary key (received b64 keys) */
    size_t key_bin_len;
    uint8_t *ordering_key;
    size_t ordering_key_len;
    pc_prop_kv_t *props;
    size_t nprops, capprops;
    int key_b64;          /* the key is binary, sent base64-encoded */
    int null_value;
    int undecrypted;      /* received still encrypted (cryptoFailureAction CONSUME) */
    int owns_data;        /* free(data) on destroy */
    struct pulsarc_consumer_s *rx_owner; /* consumer that received it (queued messages only) */
    uint64_t deliver_at;  /* absolute ms since the epoch; 0: now */
    char **repl_clusters; /* NULL-terminated, or NULL */
    int has_seq;
    int repl_disabled;    /* last of the cleared block */
    /* ---- owned messages only: a view's shared fields are its entry's ---- */
    pc_msg_shared_t own;
};

#define PC_MSG_VIEW_CLEAR_BYTES                                                                 \
    (offsetof(pulsarc_msg_t, repl_disabled) + sizeof(int) - offsetof(pulsarc_msg_t, key))
_Static_assert(PC_MSG_VIEW_CLEAR_BYTES > 64 && PC_MSG_VIEW_CLEAR_BYTES <= 128,
               "pc_msg_clear_view clears the block in two parts of at most 64 bytes");

/*
 * A view's per-record fields that most records leave unset, all zeroed.
 * In two parts of at most 64 bytes: compilers store those inline as a few
 * vector stores, where one larger memset may become a string instruction
 * costing more than all the rest of building a view.
 */
static inline void pc_msg_clear_view(pulsarc_msg_t *m) {
    char *from = (char *)&m->key;
    memset(from, 0, 64);
    memset(from + 64, 0, PC_MSG_VIEW_CLEAR_BYTES - 64);
}


/* Adds a property without checking for an existing name (decode path). */
pulsarc_err_t pc_msg_add_property(pulsarc_msg_t *m, const char *name, size_t nlen,
                                  const char *value, size_t vlen);
/* Stores a copy of n bytes at *dst (NUL-terminated for convenience). */
pulsarc_err_t pc_msg_set_bytes(uint8_t **dst, size_t *dlen, const void *src, size_t n);
/* Sets the payload to a fresh copy of data. */
pulsarc_err_t pc_msg_copy_payload(pulsarc_msg_t *m, const void *data, size_t len);
#endif
