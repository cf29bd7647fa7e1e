/*
 * Reassembling chunked messages: chunks of one message (same uuid) are
 * copied in order into one entry; the last chunk completes it. Bounded in
 * the number of messages being assembled, their size and their age.
 */
#ifndef PC_CHUNK_ASSEMBLER_H
#define PC_CHUNK_ASSEMBLER_H
#include "client/consumer/rx_decode.h"

typedef struct pc_chunk_ctx pc_chunk_ctx_t;
typedef struct pc_chunk_done pc_chunk_done_t;

typedef struct pc_chunks {
    pc_chunk_ctx_t *pending;   /* oldest first */
    size_t npending;
    size_t max_pending;        /* maxPendingChunkedMessage */
    int64_t expire_ms;         /* expireTimeOfIncompleteChunkedMessageMs */
    int auto_ack_oldest;       /* autoAckOldestChunkedMessageOnQueueFull */
    size_t max_bytes;          /* a message's total size limit */
    pc_chunk_done_t *done;     /* delivered chunked messages: last id -> all chunk ids */
} pc_chunks_t;

/* What to do with chunk ids the assembler gave up on. */
typedef void (*pc_chunks_drop_fn)(void *owner, const pulsarc_msgid_t *ids, size_t n, int ack);

/*
 * Takes one chunk (r->chunk_entry, its reference included). Returns 1 when
 * the message completed (out holds it, decoded), 0 when the chunk was kept
 * (its permit may be returned), -1 when it was discarded (out->error says
 * why). Loop thread.
 */
int pc_chunks_add(pc_chunks_t *ch, pc_rx_result_t *r, const Pulsar__Proto__CommandMessage *cm,
                  const pc_rx_opts_t *o, pc_chunks_drop_fn drop, void *owner, pc_rx_result_t *out);
/* All chunk ids of the delivered chunked message whose id is last (NULL if not chunked). */
const pulsarc_msgid_t *pc_chunks_ids(pc_chunks_t *ch, const pulsarc_msgid_t *last, size_t *n);
/*
 * The entries to ask the broker for when ids are due for redelivery: every
 * chunk of each delivered chunked message named by its last chunk, the
 * other ids as they are, each entry once. Returns the count; *out is a new
 * array (the caller frees it), or NULL when ids needs no change.
 */
size_t pc_chunks_expand(pc_chunks_t *ch, const pulsarc_msgid_t *ids, size_t n, pulsarc_msgid_t **out);
/* Forgets a delivered chunked message once acked. */
void pc_chunks_forget(pc_chunks_t *ch, const pulsarc_msgid_t *last);
void pc_chunks_free(pc_chunks_t *ch);
#endif
