/*
 * decode — the client's decode path fed from memory: no sockets, no
 * threads, deterministic.
 *
 * Design notes
 *  - Builds the same corpus ring as the replay server (bench/corpus.c) and
 *    walks it until N messages were decoded. Before each pass over the ring
 *    the entry ids are re-patched (outside the measured function) so ids
 *    advance as on the wire.
 *  - decode_pass() is the measured unit; it is a non-inlined, external
 *    function so `valgrind --tool=callgrind --toggle-collect=decode_pass`
 *    counts exactly the decode work; run.sh divides the Ir total by the
 *    message count printed here.
 *  - Per frame: pc_frame_parse (BaseCommand unpack + CRC32C check), a
 *    protobuf-c MessageMetadata unpack, decompression when the entry is
 *    compressed, then per message of a batch: the u32 size, a protobuf-c
 *    SingleMessageMetadata unpack, the payload slice. Each message is
 *    "touched" the way an application would (id, size, first payload byte)
 *    into a sink so nothing is optimised away. No payload copy: this
 *    isolates framing + metadata decode (+ decompression).
 *  - Two paths (--path):
 *      proto     the reference path above, built from pc_frame_parse and
 *                plain protobuf-c unpacks. It was written while the
 *                consumer's decode was static functions of the consumer's
 *                own source file; it stays as a fixed yardstick.
 *      consumer  pc_frame_parse_with (into an arena reset after each frame,
 *                as the connection does) + the consumer's own pc_rx_decode()
 *                (lib/client/consumer/rx_decode.h) + reading every message through
 *                the public getters + pulsarc_msg_destroy, i.e. the real
 *                io-thread work minus the socket and the queue hand-off.
 *                Compiled only when rx_decode.h exists (__has_include);
 *                this is the path the CI gate should follow. If its API
 *                changes, only decode_frame_rx() needs to follow.
 *  - Allocation counts come from bench/alloc_count.c (every malloc in the
 *    process, protobuf-c's included).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "PulsarApi.pb-c.h"
#include "alloc_count.h"
#include "core/buf.h"
#include "core/frame.h"
#include "corpus.h"

#if __has_include("core/codec.h")
#include "core/codec.h"
#define BD_HAVE_CODEC 1
#else
/* A tree without lib/core/codec.h: compressed corpora cannot be built or
 * decoded (bc_ring_build reports them unavailable). */
#define BD_HAVE_CODEC 0
#endif

#if __has_include("client/consumer/rx_decode.h")
#include "client/consumer/rx_decode.h"
#define BD_HAVE_RX 1
#else
#define BD_HAVE_RX 0
#endif

#define LEDGER_ID 4242
#define MAX_FRAME (PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING)

typedef struct dstate {
    uint64_t msgs, frames, bytes;
    uint64_t sink;
    pc_buf_t scratch; /* decompressed batch */
    char err[256];
    int use_rx;       /* --path consumer */
#if BD_HAVE_RX
    pc_rxpool_t *pool;
    pc_arena_t frame_arena; /* the command of one frame, as in lib/net/conn.c */
#endif
} dstate_t;

/* What an application reads of each message. */
static inline void touch(dstate_t *st, uint64_t ledger, uint64_t entry, int idx, const uint8_t *p,
                         size_t len) {
    st->sink += ledger ^ entry ^ (uint64_t)idx ^ len ^ (len ? p[0] : 0);
    st->bytes += len;
    st->msgs++;
}

/* Walks a batch payload of n messages; -1 if malformed. */
static int walk_batch(dstate_t *st, const uint8_t *p, size_t len, int n, uint64_t ledger,
                      uint64_t entry) {
    const uint8_t *end = p + len;
    for (int i = 0; i < n; i++) {
        if (end - p < 4)
            return -1;
        uint32_t smlen = pc_rd_u32(p);
        if ((size_t)(end - p - 4) < smlen)
            return -1;
        Pulsar__Proto__SingleMessageMetadata *sm =
            pulsar__proto__single_message_metadata__unpack(NULL, smlen, p + 4);
        p += 4 + smlen;
        int bad = !sm || sm->payload_size < 0 || (size_t)(end - p) < (size_t)sm->payload_size;
        if (!bad) {
            touch(st, ledger, entry, i, p, (size_t)sm->payload_size);
            p += sm->payload_size;
        }
        if (sm)
            pulsar__proto__single_message_metadata__free_unpacked(sm, NULL);
        if (bad)
            return -1;
    }
    return 0;
}

/* Replaces (*p, *len) by the decompressed entry payload; -1 on error. */
static int inflate_entry(dstate_t *st, const Pulsar__Proto__MessageMetadata *md, const uint8_t **p,
                         size_t *len) {
    if (!md->has_compression || md->compression == PULSAR__PROTO__COMPRESSION_TYPE__NONE)
        return 0;
#if BD_HAVE_CODEC
    size_t want = md->uncompressed_size;
    st->scratch.len = 0;
    if (want > PC_DEFAULT_MAX_MESSAGE_SIZE || pc_buf_reserve(&st->scratch, want) ||
        pc_codec_decompress((pc_codec_t)md->compression, *p, *len, st->scratch.data, want, st->err,
                            sizeof st->err) != PULSARC_OK)
        return -1;
    st->scratch.len = want;
    *p = st->scratch.data;
    *len = want;
    return 0;
#else
    (void)st, (void)p, (void)len;
    return -1;
#endif
}

/* Decodes one MESSAGE frame of exactly len bytes; -1 on any error. */
static int decode_frame(dstate_t *st, const uint8_t *buf, size_t len) {
    pc_frame_t f;
    long n = pc_frame_parse(buf, len, MAX_FRAME, &f, st->err, sizeof st->err);
    if (n <= 0)
        return -1;
    int rc = -1;
    const Pulsar__Proto__CommandMessage *cm = f.cmd->message;
    Pulsar__Proto__MessageMetadata *md = NULL;
    if ((size_t)n == len && cm && cm->message_id && f.has_payload && f.checksum_ok)
        md = pulsar__proto__message_metadata__unpack(NULL, f.meta_len, f.meta);
    const uint8_t *p = f.payload;
    size_t plen = f.payload_len;
    if (md && inflate_entry(st, md, &p, &plen) == 0) {
        uint64_t ledger = cm->message_id->ledgerid, entry = cm->message_id->entryid;
        if (md->has_num_messages_in_batch) {
            rc = walk_batch(st, p, plen, md->num_messages_in_batch, ledger, entry);
        } else {
            touch(st, ledger, entry, -1, p, plen);
            rc = 0;
        }
    }
    if (md)
        pulsar__proto__message_metadata__free_unpacked(md, NULL);
    pc_frame_clear(&f);
    st->frames++;
    return rc;
}

#if BD_HAVE_RX
/* The consumer's decode: pc_rx_decode, then each message as the app sees it. */
static int decode_frame_rx(dstate_t *st, const uint8_t *buf, size_t len) {
    pc_frame_t f;
    ProtobufCAllocator al = pc_arena_allocator(&st->frame_arena);
    long n = pc_frame_parse_with(buf, len, MAX_FRAME, &al, &f, st->err, sizeof st->err);
    if (n <= 0)
        return -1;
    pc_rx_opts_t o = {.partition = -1, .skip_upto = NULL};
    pc_rx_result_t r;
    pc_rx_decode(st->pool, &f, &o, &r);
    int rc = r.validation_error >= 0 || r.chunk_entry ? -1 : 0;
    if (rc)
        snprintf(st->err, sizeof st->err, "%s", r.error[0] ? r.error : "chunked entry");
    if (r.chunk_entry)
        pc_entry_unref(r.chunk_entry);
    for (pulsarc_msg_t *m = r.first, *next; m; m = next) {
        next = m->next;
        pulsarc_msgid_t id = pulsarc_msg_id(m);
        const uint8_t *p = pulsarc_msg_payload(m);
        touch(st, (uint64_t)id.ledger_id, (uint64_t)id.entry_id, id.batch_index, p, pulsarc_msg_len(m));
        pulsarc_msg_destroy(m);
    }
    pc_frame_clear(&f);
    pc_arena_reset(&st->frame_arena);
    st->frames++;
    return rc;
}
#endif

/* The measured unit: one pass over the ring, stopping at want messages. */
__attribute__((noinline)) int decode_pass(dstate_t *st, const bc_ring_t *r, const uint8_t *ring,
                                          uint64_t want) {
    for (size_t i = 0; i < r->nframes && st->msgs < want; i++) {
        const uint8_t *p = ring + r->frames[i].off;
#if BD_HAVE_RX
        int rc = st->use_rx ? decode_frame_rx(st, p, r->frames[i].len) : decode_frame(st, p, r->frames[i].len);
#else
        int rc = decode_frame(st, p, r->frames[i].len);
#endif
        if (rc)
            return -1;
    }
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Decodes want messages of one corpus and prints one result line. */
static size_t ring_bytes = 8u << 20;

static int run_corpus(const bc_spec_t *spec, uint64_t want, int use_rx) {
    const char *path = use_rx ? "consumer" : "proto";
    bc_ring_t r;
    char err[256];
    if (bc_ring_build(&r, spec, ring_bytes, err, sizeof err)) {
        printf("decode: corpus=%s path=%s status=unavailable reason=\"%s\"\n", spec->name, path, err);
        return 0;
    }
    dstate_t st;
    memset(&st, 0, sizeof st);
    pc_buf_init(&st.scratch, 0);
    st.use_rx = use_rx;
#if BD_HAVE_RX
    if (use_rx)
        st.pool = pc_rxpool_new("persistent://public/default/replay-bench", (size_t)64 << 20, 1000);
#endif
    uint64_t entry = 0;
    double busy = 0;
    bc_alloc_stats_t a0 = bc_alloc_snapshot();
    int rc = 0;
    while (!rc && st.msgs < want) {
        for (size_t i = 0; i < r.nframes; i++)
            bc_frame_set_ids(r.data, &r.frames[i], 1, LEDGER_ID, entry++);
        double t = now_s();
        rc = decode_pass(&st, &r, r.data, want);
        busy += now_s() - t;
    }
    bc_alloc_stats_t a1 = bc_alloc_snapshot();
    if (rc) {
        printf("decode: corpus=%s path=%s status=error msgs=%" PRIu64 " reason=\"%s\"\n", spec->name, path, st.msgs,
               st.err[0] ? st.err : "malformed entry");
    } else {
        double m = (double)st.msgs;
        printf("decode: corpus=%s path=%s status=ok ratio=%.2f msgs=%" PRIu64 " frames=%" PRIu64 " s=%.3f ns_per_msg=%.1f "
               "ns_per_frame=%.1f msgs_per_s=%.0f MB_per_s=%.1f allocs_per_msg=%.3f "
               "frees_per_msg=%.3f sink=%" PRIu64 "\n",
               spec->name, path, (double)r.batch_bytes / (double)r.wire_payload, st.msgs, st.frames, busy, busy * 1e9 / m, busy * 1e9 / (double)st.frames,
               m / busy, (double)st.bytes / busy / 1e6,
               bc_alloc_counting() ? (double)(a1.allocs - a0.allocs) / m : -1,
               bc_alloc_counting() ? (double)(a1.frees - a0.frees) / m : -1, st.sink & 0xffff);
    }
    pc_buf_free(&st.scratch);
#if BD_HAVE_RX
    if (st.pool)
        pc_rxpool_release(st.pool);
    pc_arena_free(&st.frame_arena);
#endif
    bc_ring_free(&r);
    return rc;
}

static void usage(void) {
    fprintf(stderr,
            "usage: decode [--corpus NAME|all (batch100x1000)] [--messages N (2000000)]\n"
            "              [--path proto|consumer (proto)]%s [--ring-bytes B (8 MiB)]\n"
            "For callgrind: valgrind --tool=callgrind --toggle-collect=decode_pass \\\n"
            "                 decode --corpus C --messages N   (Ir total / msgs = Ir per message)\n"
            "corpora:\n", BD_HAVE_RX ? "" : " (consumer: not in this tree)");
    bc_spec_print_all(stderr);
}

int main(int argc, char **argv) {
    const char *corpus = "batch100x1000";
    uint64_t want = 2000000;
    int use_rx = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--corpus") && i + 1 < argc)
            corpus = argv[++i];
        else if (!strcmp(argv[i], "--messages") && i + 1 < argc)
            want = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--ring-bytes") && i + 1 < argc)
            ring_bytes = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--path") && i + 1 < argc && (!strcmp(argv[i + 1], "proto") ||
                                                                (BD_HAVE_RX && !strcmp(argv[i + 1], "consumer"))))
            use_rx = !strcmp(argv[++i], "consumer");
        else {
            usage();
            return 2;
        }
    }
    if (!strcmp(corpus, "all")) {
        int rc = 0;
        for (size_t i = 0; bc_spec_at(i); i++)
            rc |= run_corpus(bc_spec_at(i), want, use_rx);
        return rc ? 1 : 0;
    }
    const bc_spec_t *spec = bc_spec_find(corpus);
    if (!spec || want == 0) {
        usage();
        return 2;
    }
    return run_corpus(spec, want, use_rx) ? 1 : 0;
}
