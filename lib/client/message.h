/* The message object shared by producers and consumers. */
#ifndef PC_MESSAGE_H
#define PC_MESSAGE_H
#include <stdint.h>
#include "pulsarc.h"

typedef struct pc_prop_kv {
    char *name;
    char *value;
} pc_prop_kv_t;

struct pulsarc_msg_s {
    uint8_t *data;
    size_t len;
    int owns_data;        /* free(data) on destroy */
    char *key;            /* partition key; base64 text when key_b64 */
    int key_b64;          /* the key is binary, sent base64-encoded */
    uint8_t *key_bin;     /* decoded binary key (received b64 keys) */
    size_t key_bin_len;
    uint8_t *ordering_key;
    size_t ordering_key_len;
    uint64_t deliver_at;  /* absolute ms since the epoch; 0: now */
    char **repl_clusters; /* NULL-terminated, or NULL */
    int repl_disabled;
    int null_value;
    int undecrypted;      /* received still encrypted (cryptoFailureAction CONSUME) */
    pc_prop_kv_t *props;
    size_t nprops, capprops;
    uint64_t event_time;
    uint64_t publish_time;
    int64_t seq;
    int has_seq;
    pulsarc_msgid_t id;
    uint32_t redelivery_count;
    char *producer_name;
    const uint8_t *schema_version; /* received: the writer's schema version, or NULL */
    size_t schema_version_len;
    char *topic;
    struct pulsarc_msg_s *next; /* consumer receive queue link */
    /* Received messages are views: every pointer above borrows from entry. */
    struct pc_entry *entry;
    struct pulsarc_consumer_s *rx_owner; /* consumer that received it (queued messages only) */
};

/* Adds a property without checking for an existing name (decode path). */
pulsarc_err_t pc_msg_add_property(pulsarc_msg_t *m, const char *name, size_t nlen,
                                  const char *value, size_t vlen);
/* Stores a copy of n bytes at *dst (NUL-terminated for convenience). */
pulsarc_err_t pc_msg_set_bytes(uint8_t **dst, size_t *dlen, const void *src, size_t n);
/* Sets the payload to a fresh copy of data. */
pulsarc_err_t pc_msg_copy_payload(pulsarc_msg_t *m, const void *data, size_t len);
#endif
