/*
 * Acknowledgements on their way to the broker: grouped on a timer or by
 * count, cumulative acks collapsed to the highest, and batches tracked per
 * entry so that acking one message of a batch never acks its siblings.
 * What was sent stays until the broker confirms it (an ACK_RESPONSE to the
 * request id it carried) and is sent again after a reconnect; what was
 * acknowledged is remembered (a bounded set, the batch bitsets and the
 * cumulative position) so that a redelivery of it can be dropped.
 */
#ifndef PC_ACK_TRACKER_H
#define PC_ACK_TRACKER_H
#include <stdint.h>

#include "client/consumer/entry_set.h"
#include "net/loop.h"
#include "pulsarc.h"

/* One id as it goes on the wire: an entry, and the bits still unacked (or none). */
typedef struct pc_ack_item {
    int64_t ledger_id, entry_id;
    int64_t *ack_set; /* NULL: the whole entry */
    size_t n_ack_set;
} pc_ack_item_t;

/*
 * Sends one CommandAck (cumulative: exactly one item); 0 if sent, -1 if not
 * connected. *receipt: the request id whose ACK_RESPONSE will confirm it,
 * or 0 when no confirmation will come (a broker without ack receipts).
 */
typedef int (*pc_ack_send_fn)(void *owner, const pc_ack_item_t *items, size_t n, int cumulative,
                              uint64_t *receipt);

typedef struct pc_ack_batch pc_ack_batch_t;
typedef struct pc_ack_sent pc_ack_sent_t;

typedef struct pc_ack_tracker {
    pc_loop_t *loop;
    pc_ack_send_fn send;
    void *owner;
    int64_t group_ms;      /* 0: send every ack at once */
    size_t max_group;
    int batch_index_ack;   /* send partial-batch acks with ack_set */
    pc_ack_item_t *pending;
    size_t npending, cappending;
    int has_cumulative;
    pc_ack_item_t cumulative;
    int64_t cum_set[1];    /* storage for a cumulative ack_set of <= 64 bits */
    pc_ack_batch_t *batches[256]; /* partially acked batch entries, by entry id */
    pc_timer_t timer;
    /* Sent and not confirmed yet, oldest first; at most `acked.max` ids. */
    pc_ack_sent_t *sent_head, *sent_tail;
    size_t sent_ids;
    /* What the application acknowledged, consulted on delivery. */
    pc_entry_set_t acked;  /* whole entries */
    int has_cum_acked;     /* the highest cumulative ack: everything up to it */
    pulsarc_msgid_t cum_acked;
} pc_ack_tracker_t;

/* Loop thread only. remember: bound of the acked set and of the unconfirmed acks (0: default). */
void pc_ack_tracker_init(pc_ack_tracker_t *t, pc_loop_t *loop, pc_ack_send_fn send, void *owner,
                         int64_t group_ms, size_t max_group, int batch_index_ack, size_t remember);
/* Stops the group timer (loop thread); free releases memory (any thread, after stop). */
void pc_ack_tracker_stop(pc_ack_tracker_t *t);
void pc_ack_tracker_free(pc_ack_tracker_t *t);
void pc_ack_individual(pc_ack_tracker_t *t, const pulsarc_msgid_t *id);
void pc_ack_cumulative(pc_ack_tracker_t *t, const pulsarc_msgid_t *id);
/* Sends everything pending now. */
void pc_ack_flush(pc_ack_tracker_t *t);
/* After a new subscribe: sends again what was never confirmed, then everything pending. */
void pc_ack_resend(pc_ack_tracker_t *t);
/* The broker applied the ack that carried request id receipt (answered it without error). */
void pc_ack_confirmed(pc_ack_tracker_t *t, uint64_t receipt);
/*
 * Forgets batch bookkeeping, the acknowledged ids and what is unconfirmed
 * (after a seek: the broker's view is reset, and what was acked before it
 * may legitimately come again).
 */
void pc_ack_forget_batches(pc_ack_tracker_t *t);
/* Whether the application acknowledged id (its entry, its batch index, or up to it). */
int pc_ack_is_acked(const pc_ack_tracker_t *t, const pulsarc_msgid_t *id);
/*
 * Whether no message of the entry can be acknowledged yet (nothing up to
 * it, nor it, nor any of its batch indexes): what pc_ack_is_acked would
 * say of each of its messages, asked once per entry.
 */
int pc_ack_entry_untouched(const pc_ack_tracker_t *t, int64_t ledger, int64_t entry);
/* The broker delivered the acknowledged id's entry again: its ack goes out once more. */
void pc_ack_again(pc_ack_tracker_t *t, const pulsarc_msgid_t *id);
#endif
