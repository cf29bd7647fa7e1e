/*
 * A connection's bytes waiting to be written: copied bytes in one buffer,
 * and borrowed pieces (pointer and length, kept alive by whoever queued
 * them) placed between them, written in queue order with one gathered
 * write where the transport has one. Loop thread only.
 */
#ifndef PC_WQUEUE_H
#define PC_WQUEUE_H
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "net/transport.h"

typedef struct pc_wref {
    size_t at;          /* goes before this byte of own */
    const uint8_t *p;
    size_t len;
} pc_wref_t;

typedef struct pc_wqueue {
    pc_buf_t own;       /* copied bytes, in order */
    pc_wref_t *refs;    /* borrowed pieces, in order */
    size_t nrefs, cap;
    size_t ref_bytes;
} pc_wqueue_t;

void pc_wq_init(pc_wqueue_t *q);
void pc_wq_free(pc_wqueue_t *q);
/* Drops everything queued. */
void pc_wq_clear(pc_wqueue_t *q);
static inline size_t pc_wq_len(const pc_wqueue_t *q) { return q->own.len + q->ref_bytes; }
static inline int pc_wq_borrows(const pc_wqueue_t *q) { return q->nrefs > 0; }
/* Queues a copy of p. */
static inline pulsarc_err_t pc_wq_append(pc_wqueue_t *q, const void *p, size_t n) {
    return pc_buf_append(&q->own, p, n);
}
/* Queues p itself: it must stay unchanged until written, cleared or copied
 * (pc_wq_copy_borrowed). Without memory for the note, a copy. */
pulsarc_err_t pc_wq_borrow(pc_wqueue_t *q, const void *p, size_t n);
/* Copies every borrowed piece into the queue, in place: their owners may
 * then free them. NOMEM leaves the queue as it was. */
pulsarc_err_t pc_wq_copy_borrowed(pc_wqueue_t *q);
/*
 * Writes until the queue is empty (OK), the socket is full (AGAIN), or the
 * transport fails (EOF/ERR). A transport without writev gets only copied
 * bytes (nothing is borrowed for it).
 */
pc_tx_status_t pc_wq_write(pc_wqueue_t *q, pc_transport_t *tx);
#endif
