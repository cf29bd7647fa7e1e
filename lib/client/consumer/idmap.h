/* An open-addressing hash map from message id (ledger, entry, batch index) to a time. */
#ifndef PC_IDMAP_H
#define PC_IDMAP_H
#include <stddef.h>
#include <stdint.h>
#include "pulsarc.h"

typedef struct pc_idmap_slot {
    int64_t ledger, entry;
    int32_t batch, partition;
    int64_t when;  /* the value; INT64_MIN marks an empty slot, INT64_MIN + 1 a deleted one */
} pc_idmap_slot_t;

typedef struct pc_idmap {
    pc_idmap_slot_t *slots;
    size_t cap, used, live;
} pc_idmap_t;

void pc_idmap_init(pc_idmap_t *m);
void pc_idmap_free(pc_idmap_t *m);
/* Inserts or updates; -1 on OOM. */
int pc_idmap_put(pc_idmap_t *m, const pulsarc_msgid_t *id, int64_t when);
/* Removes id; 1 if it was there. */
int pc_idmap_del(pc_idmap_t *m, const pulsarc_msgid_t *id);
/* Removes every id whose value is <= now, writing up to max of them to out; returns the count. */
size_t pc_idmap_take_due(pc_idmap_t *m, int64_t now, pulsarc_msgid_t *out, size_t max);
/* Smallest value, or INT64_MAX when empty. */
int64_t pc_idmap_min(const pc_idmap_t *m);
void pc_idmap_clear(pc_idmap_t *m);
#endif
