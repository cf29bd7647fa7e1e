/*
 * Benchmark corpora: rings of pre-encoded MESSAGE frames, shared by the
 * replay server (bench/replay_server.c) and the decode harness
 * (bench/decode.c) so both measure exactly the same bytes.
 *
 * A ring is one contiguous buffer of complete frames
 *   [total:4][cmdlen:4][BaseCommand MESSAGE][0x0e01][crc:4][metalen:4][meta][payload]
 * whose BaseCommand is hand-encoded with consumer_id, ledgerId and entryId
 * as fixed-width 10-byte varints (non-minimal varints are valid protobuf).
 * The BaseCommand is outside the CRC, so bc_ring_set_ids() rewrites the ids
 * of a frame in place in O(1) — three constant-length stores — and nothing
 * else in the frame changes.
 */
#ifndef PC_BENCH_CORPUS_H
#define PC_BENCH_CORPUS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct bc_spec {
    const char *name;
    uint32_t msg_size;  /* payload bytes of each message */
    uint32_t per_entry; /* messages per batch entry; 0 = unbatched (one per frame) */
    int codec;          /* wire CompressionType of the batch payload */
} bc_spec_t;

/* One frame of the ring. */
typedef struct bc_frame {
    size_t off;    /* offset of the frame's length prefix in the ring */
    uint32_t len;  /* bytes of the whole frame, length prefix included */
    uint32_t msgs; /* messages in the entry = permits it consumes */
} bc_frame_t;

typedef struct bc_ring {
    const bc_spec_t *spec;
    uint8_t *data;
    size_t len;
    bc_frame_t *frames;
    size_t nframes;
    uint64_t msgs;          /* messages in one pass over the ring */
    uint64_t user_bytes;    /* application payload bytes in one pass */
    uint64_t batch_bytes;   /* entry payload bytes before compression */
    uint64_t wire_payload;  /* entry payload bytes as sent (after compression) */
} bc_ring_t;

/* Offsets (from the frame's first byte) of the patchable 10-byte varints. */
#define BC_CMD_LEN 39
#define BC_OFF_CONSUMER_ID (8 + 5)
#define BC_OFF_LEDGER_ID (8 + 18)
#define BC_OFF_ENTRY_ID (8 + 29)

/* The spec named name, or NULL. */
const bc_spec_t *bc_spec_find(const char *name);
/* The i-th known spec, or NULL past the end. */
const bc_spec_t *bc_spec_at(size_t i);
/* 1 when the codec can be used in this build (NONE always can). */
int bc_codec_available(int codec);
/* Short lower-case codec name ("none", "lz4", ...). */
const char *bc_codec_name(int codec);

/*
 * Builds a ring for spec: distinct entries (payloads differ, sequence ids
 * advance) until about target_bytes, between 8 and 4096 frames. Verifies
 * its first frame through the library's own frame parser. 0 on success,
 * -1 with a reason in err.
 */
int bc_ring_build(bc_ring_t *r, const bc_spec_t *spec, size_t target_bytes, char *err,
                  size_t errlen);
void bc_ring_free(bc_ring_t *r);

/* Writes v as a 10-byte varint (bit 63 in the last byte). */
static inline void bc_put_varint10(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 9; i++) {
        p[i] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[9] = (uint8_t)(v & 1);
}

/* Rewrites the ids of frame i of a ring held at base (a copy of r->data). */
static inline void bc_frame_set_ids(uint8_t *base, const bc_frame_t *f, uint64_t consumer_id,
                                    uint64_t ledger_id, uint64_t entry_id) {
    uint8_t *p = base + f->off;
    bc_put_varint10(p + BC_OFF_CONSUMER_ID, consumer_id);
    bc_put_varint10(p + BC_OFF_LEDGER_ID, ledger_id);
    bc_put_varint10(p + BC_OFF_ENTRY_ID, entry_id);
}

/* One line per spec: name, sizes, codec, availability. */
void bc_spec_print_all(FILE *out);
#endif
