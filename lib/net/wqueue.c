/*
 * Design notes: the queue is the copied bytes (own) plus a list of
 * borrowed pieces, each noted with the offset in own it goes before, so
 * queue order is own[0..at0], piece 0, own[at0..at1], piece 1, ... own's
 * tail. Small frames are cheaper to copy than to note, so the caller
 * borrows only large pieces (message payloads); with none borrowed a write
 * is one plain write of own, as before. A write that takes part of the
 * queue drops what it took: own's front, whole pieces, and the front of a
 * piece it cut. Copying the borrowed pieces in place (own grown, segments
 * moved back from the end) lets their owners free them; the connection
 * does so whenever a write leaves some unwritten, so a piece is borrowed
 * for one loop turn at most and the queue's memory stays what copying
 * everything would hold. Loop thread only.
 */
#include "net/wqueue.h"

#include <stdlib.h>
#include <string.h>

#define WQ_IOV 512 /* pieces per gathered write (Linux takes 1024) */

void pc_wq_init(pc_wqueue_t *q) {
    memset(q, 0, sizeof *q);
    pc_buf_init(&q->own, 0);
}

void pc_wq_free(pc_wqueue_t *q) {
    pc_buf_free(&q->own);
    free(q->refs);
    memset(q, 0, sizeof *q);
}

void pc_wq_clear(pc_wqueue_t *q) {
    q->own.len = 0;
    q->nrefs = 0;
    q->ref_bytes = 0;
}

static int grow_refs(pc_wqueue_t *q) {
    size_t cap = q->cap ? q->cap * 2 : 64;
    pc_wref_t *r = realloc(q->refs, cap * sizeof *r);
    if (!r)
        return -1;
    q->refs = r;
    q->cap = cap;
    return 0;
}

pulsarc_err_t pc_wq_borrow(pc_wqueue_t *q, const void *p, size_t n) {
    if (n == 0)
        return PULSARC_OK;
    if (q->nrefs == q->cap && grow_refs(q))
        return pc_wq_append(q, p, n);
    q->refs[q->nrefs++] = (pc_wref_t){q->own.len, p, n};
    q->ref_bytes += n;
    return PULSARC_OK;
}

pulsarc_err_t pc_wq_copy_borrowed(pc_wqueue_t *q) {
    if (!q->nrefs)
        return PULSARC_OK;
    size_t total = pc_wq_len(q);
    if (pc_buf_reserve(&q->own, q->ref_bytes))
        return PULSARC_ERR_NOMEM;
    uint8_t *d = q->own.data;
    size_t src_end = q->own.len, dst_end = total;
    for (size_t i = q->nrefs; i-- > 0;) { /* from the end: nothing is overwritten unread */
        const pc_wref_t *r = &q->refs[i];
        size_t seg = src_end - r->at;
        memmove(d + dst_end - seg, d + r->at, seg);
        dst_end -= seg;
        memcpy(d + dst_end - r->len, r->p, r->len);
        dst_end -= r->len;
        src_end = r->at;
    }
    q->own.len = total;
    q->nrefs = 0;
    q->ref_bytes = 0;
    return PULSARC_OK;
}

/* The queue's front in order, at most max pieces. */
static int gather(const pc_wqueue_t *q, struct iovec *iov, int max) {
    int cnt = 0;
    size_t own_at = 0;
    for (size_t i = 0; i < q->nrefs; i++) {
        const pc_wref_t *r = &q->refs[i];
        if (r->at > own_at) {
            iov[cnt++] = (struct iovec){q->own.data + own_at, r->at - own_at};
            own_at = r->at;
        }
        if (cnt == max)
            return cnt;
        iov[cnt++] = (struct iovec){(void *)r->p, r->len};
        if (cnt == max)
            return cnt;
    }
    if (q->own.len > own_at)
        iov[cnt++] = (struct iovec){q->own.data + own_at, q->own.len - own_at};
    return cnt;
}

/* Drops the first n bytes in queue order. */
static void consume(pc_wqueue_t *q, size_t n) {
    size_t own_done = 0, i = 0;
    while (n > 0) {
        size_t next_at = i < q->nrefs ? q->refs[i].at : q->own.len;
        size_t k = next_at - own_done < n ? next_at - own_done : n;
        own_done += k;
        n -= k;
        if (n == 0 || i == q->nrefs)
            break;
        pc_wref_t *r = &q->refs[i];
        k = r->len < n ? r->len : n;
        r->p += k;
        r->len -= k;
        q->ref_bytes -= k;
        n -= k;
        if (r->len == 0)
            i++;
    }
    pc_buf_consume(&q->own, own_done);
    if (i)
        memmove(q->refs, q->refs + i, (q->nrefs - i) * sizeof *q->refs);
    q->nrefs -= i;
    for (size_t j = 0; j < q->nrefs; j++)
        q->refs[j].at -= own_done;
}

pc_tx_status_t pc_wq_write(pc_wqueue_t *q, pc_transport_t *tx) {
    while (pc_wq_len(q) > 0) {
        size_t n = 0;
        pc_tx_status_t st;
        if (!q->nrefs) {
            st = pc_tx_write(tx, q->own.data, q->own.len, &n);
        } else {
            struct iovec iov[WQ_IOV];
            st = pc_tx_writev(tx, iov, gather(q, iov, WQ_IOV), &n);
        }
        if (st != PC_TX_OK)
            return st;
        consume(q, n);
    }
    return PC_TX_OK;
}
