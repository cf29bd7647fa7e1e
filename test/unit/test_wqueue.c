/*
 * The write queue over a real socket with a small send buffer: copied and
 * borrowed pieces come out in queue order, byte for byte, when the socket
 * takes part of a gathered write at a time (cutting borrowed pieces), when
 * a write holds more pieces than one sendmsg takes, and when the borrowed
 * pieces are copied half-way through and their owners' memory is then
 * overwritten.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/transport.h"
#include "net/wqueue.h"
#include "testutil.h"

typedef struct pair {
    int w, r;
    pc_transport_t *tx;
    pc_buf_t got;
} pair_t;

static void pair_open(pair_t *p) {
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int small = 4096;
    ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
    p->w = sv[0];
    p->r = sv[1];
    p->tx = pc_transport_tcp_new(p->w);
    ck_assert_ptr_nonnull(p->tx);
    pc_buf_init(&p->got, 0);
}

static void pair_close(pair_t *p) {
    pc_tx_free(p->tx);
    close(p->w);
    close(p->r);
    pc_buf_free(&p->got);
}

/* Takes up to n bytes off the reading end (blocking for the first). */
static void take(pair_t *p, size_t n) {
    ck_assert_int_eq(pc_buf_reserve(&p->got, n), 0);
    ssize_t r = read(p->r, p->got.data + p->got.len, n);
    ck_assert_int_gt(r, 0);
    p->got.len += (size_t)r;
}

/* Pieces with distinct bytes, each owned by the test. */
typedef struct piece {
    uint8_t *data;
    size_t len;
    int borrowed;
} piece_t;

static piece_t *make_pieces(size_t n, unsigned seed) {
    piece_t *ps = calloc(n, sizeof *ps);
    srand(seed);
    for (size_t i = 0; i < n; i++) {
        /* heads of a few bytes between payloads; some payloads back to back,
         * one first of all */
        int borrowed = i % 3 != 1;
        size_t len = borrowed ? 512 + (size_t)(rand() % 3000) : 1 + (size_t)(rand() % 40);
        ps[i].data = malloc(len);
        for (size_t k = 0; k < len; k++)
            ps[i].data[k] = (uint8_t)rand();
        ps[i].len = len;
        ps[i].borrowed = borrowed;
    }
    return ps;
}

static void queue_pieces(pc_wqueue_t *q, const piece_t *ps, size_t n, pc_buf_t *want) {
    pc_buf_init(want, 0);
    for (size_t i = 0; i < n; i++) {
        pulsarc_err_t e = ps[i].borrowed ? pc_wq_borrow(q, ps[i].data, ps[i].len)
                                         : pc_wq_append(q, ps[i].data, ps[i].len);
        ck_assert_int_eq(e, PULSARC_OK);
        ck_assert_int_eq(pc_buf_append(want, ps[i].data, ps[i].len), PULSARC_OK);
    }
    ck_assert_uint_eq(pc_wq_len(q), want->len);
}

static void free_pieces(piece_t *ps, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(ps[i].data);
    free(ps);
}

/* 1: a borrowed piece was left cut by a short write. */
static int cut_piece(const pc_wqueue_t *q, const piece_t *ps, size_t n) {
    if (!q->nrefs)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (ps[i].borrowed && q->refs[0].p > ps[i].data && q->refs[0].p < ps[i].data + ps[i].len)
            return 1;
    return 0;
}

START_TEST(test_gathered_writes_survive_short_writes) {
    pair_t p;
    pair_open(&p);
    pc_wqueue_t q;
    pc_wq_init(&q);
    size_t n = 1600; /* over 1000 borrowed: more than one sendmsg's worth of pieces */
    piece_t *ps = make_pieces(n, 7);
    pc_buf_t want;
    queue_pieces(&q, ps, n, &want);
    int cuts = 0, agains = 0;
    for (;;) {
        pc_tx_status_t st = pc_wq_write(&q, p.tx);
        if (st == PC_TX_OK)
            break;
        ck_assert_int_eq(st, PC_TX_AGAIN);
        agains++;
        cuts += cut_piece(&q, ps, n);
        take(&p, 777);
    }
    ck_assert_uint_eq(pc_wq_len(&q), 0);
    while (p.got.len < want.len)
        take(&p, want.len - p.got.len);
    ck_assert_uint_eq(p.got.len, want.len);
    ck_assert(memcmp(p.got.data, want.data, want.len) == 0);
    ck_assert_int_gt(agains, 10);
    ck_assert_int_gt(cuts, 0); /* the partial-piece path really ran */
    pc_buf_free(&want);
    free_pieces(ps, n);
    pc_wq_free(&q);
    pair_close(&p);
}
END_TEST

START_TEST(test_copied_borrowed_pieces_outlive_their_owners) {
    pair_t p;
    pair_open(&p);
    pc_wqueue_t q;
    pc_wq_init(&q);
    size_t n = 60;
    piece_t *ps = make_pieces(n, 11);
    pc_buf_t want;
    queue_pieces(&q, ps, n, &want);
    ck_assert_int_eq(pc_wq_write(&q, p.tx), PC_TX_AGAIN);
    ck_assert(pc_wq_borrows(&q));
    size_t left = pc_wq_len(&q);
    ck_assert_int_eq(pc_wq_copy_borrowed(&q), PULSARC_OK);
    ck_assert(!pc_wq_borrows(&q));
    ck_assert_uint_eq(pc_wq_len(&q), left);
    for (size_t i = 0; i < n; i++) /* the owners reuse their memory */
        memset(ps[i].data, 0xEE, ps[i].len);
    while (pc_wq_write(&q, p.tx) == PC_TX_AGAIN)
        take(&p, 1000);
    while (p.got.len < want.len)
        take(&p, want.len - p.got.len);
    ck_assert_uint_eq(p.got.len, want.len);
    ck_assert(memcmp(p.got.data, want.data, want.len) == 0);
    pc_buf_free(&want);
    free_pieces(ps, n);
    pc_wq_free(&q);
    pair_close(&p);
}
END_TEST

START_TEST(test_cleared_queue_writes_nothing) {
    pair_t p;
    pair_open(&p);
    pc_wqueue_t q;
    pc_wq_init(&q);
    uint8_t big[2000];
    memset(big, 'b', sizeof big);
    ck_assert_int_eq(pc_wq_append(&q, "head", 4), PULSARC_OK);
    ck_assert_int_eq(pc_wq_borrow(&q, big, sizeof big), PULSARC_OK);
    pc_wq_clear(&q);
    ck_assert(!pc_wq_borrows(&q));
    ck_assert_int_eq(pc_wq_append(&q, "next", 4), PULSARC_OK);
    ck_assert_int_eq(pc_wq_write(&q, p.tx), PC_TX_OK);
    take(&p, 100);
    ck_assert_uint_eq(p.got.len, 4);
    ck_assert(memcmp(p.got.data, "next", 4) == 0);
    pc_wq_free(&q);
    pair_close(&p);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("wqueue");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gathered_writes_survive_short_writes);
    tcase_add_test(tc, test_copied_borrowed_pieces_outlive_their_owners);
    tcase_add_test(tc, test_cleared_queue_writes_nothing);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
