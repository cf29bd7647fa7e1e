/*
 * Design notes: builds the benchmark corpora once, at start-up, so that the
 * hot paths of the replay server and the decode harness never encode
 * anything.
 *
 *  - Payloads are deterministic, JSON-like text records (an xorshift
 *    generator seeded per entry) padded with dictionary words, so the codecs
 *    see realistic, moderately compressible data and every entry differs.
 *  - Batches are laid out as producers write them: per message
 *    [u32 size][SingleMessageMetadata{payload_size, sequence_id}][payload];
 *    the MessageMetadata carries producer_name, sequence_id, publish_time,
 *    num_messages_in_batch (batched only) and, when compressed,
 *    compression + uncompressed_size.
 *  - The MESSAGE BaseCommand is written by hand (39 bytes) with three
 *    fixed-width varints so ids can be patched in place (corpus.h); the
 *    first frame is checked with pc_frame_parse + protobuf-c unpack so a
 *    layout mistake fails loudly at start-up, not as a client error.
 *  - Compressed corpora use lib/core/codec.h (pc_codec_compress: LZ4 raw
 *    block, zlib stream, zstd frame level 3, raw snappy — what the Java
 *    producer writes). The header is detected with __has_include so a tree
 *    without it still builds; those corpora then report "unavailable".
 */
#include "corpus.h"

#include <stdlib.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "core/buf.h"
#include "core/crc32c.h"
#include "core/frame.h"

#if __has_include("core/codec.h")
#include "core/codec.h"
#define BC_HAVE_CODEC 1
#else
/* A tree without lib/core/codec.h: compressed corpora report "unavailable"
 * and everything else still builds. */
#define BC_HAVE_CODEC 0
#endif

#define T_NONE PULSAR__PROTO__COMPRESSION_TYPE__NONE
#define T_LZ4 PULSAR__PROTO__COMPRESSION_TYPE__LZ4
#define T_ZLIB PULSAR__PROTO__COMPRESSION_TYPE__ZLIB
#define T_ZSTD PULSAR__PROTO__COMPRESSION_TYPE__ZSTD
#define T_SNAPPY PULSAR__PROTO__COMPRESSION_TYPE__SNAPPY

static const bc_spec_t specs[] = {
    {"batch100x1000", 100, 1000, T_NONE},
    {"batch100x1000-lz4", 100, 1000, T_LZ4},
    {"batch100x1000-zlib", 100, 1000, T_ZLIB},
    {"batch100x1000-zstd", 100, 1000, T_ZSTD},
    {"batch100x1000-snappy", 100, 1000, T_SNAPPY},
    {"single100", 100, 0, T_NONE},
    {"batch1kx100", 1024, 100, T_NONE},
};
#define NSPECS (sizeof specs / sizeof specs[0])

#define MIN_FRAMES 8
#define MAX_FRAMES 4096
#define PUBLISH_TIME_MS UINT64_C(1767225600000) /* 2026-01-01T00:00:00Z */

const bc_spec_t *bc_spec_at(size_t i) { return i < NSPECS ? &specs[i] : NULL; }

const bc_spec_t *bc_spec_find(const char *name) {
    for (size_t i = 0; i < NSPECS; i++)
        if (!strcmp(specs[i].name, name))
            return &specs[i];
    return NULL;
}

const char *bc_codec_name(int codec) {
    static const char *names[] = {"none", "lz4", "zlib", "zstd", "snappy"};
    return codec >= 0 && codec <= 4 ? names[codec] : "?";
}

#if BC_HAVE_CODEC
static int compress_payload(int codec, const uint8_t *in, size_t len, pc_buf_t *out) {
    return pc_codec_compress((pc_codec_t)codec, in, len, out) == PULSARC_OK ? 0 : -1;
}
#endif

int bc_codec_available(int codec) {
    if (codec == T_NONE)
        return 1;
#if BC_HAVE_CODEC
    return pc_codec_available((pc_codec_t)codec);
#else
    return 0;
#endif
}

void bc_spec_print_all(FILE *out) {
    for (size_t i = 0; i < NSPECS; i++) {
        const bc_spec_t *s = &specs[i];
        fprintf(out, "  %-22s %5u-byte messages, %s, codec %-6s %s\n", s->name, s->msg_size,
                s->per_entry ? "batched" : "unbatched", bc_codec_name(s->codec),
                bc_codec_available(s->codec) ? "" : "(unavailable in this build)");
    }
}

/* ---------- payload text ---------- */

static uint64_t xorshift(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static const char *const words[] = {
    "order", "payment", "shipped", "pending", "customer", "warehouse", "berlin", "tokyo",
    "retry", "status", "ok", "error", "latency", "region", "eu-west", "us-east",
    "sensor", "reading", "celsius", "battery", "firmware", "v2.3.1", "alpha", "beta",
};
#define NWORDS (sizeof words / sizeof words[0])

/* Fills n bytes with one record: a JSON-ish header, then words. */
static void gen_payload(uint8_t *p, size_t n, uint64_t seq, uint64_t *rng) {
    char head[160];
    uint64_t r = xorshift(rng);
    int k = snprintf(head, sizeof head,
                     "{\"seq\":%llu,\"user\":\"u%05u\",\"amount\":%u.%02u,\"event\":\"%s\",\"note\":\"",
                     (unsigned long long)seq, (unsigned)(r % 100000), (unsigned)(r >> 20) % 10000,
                     (unsigned)(r >> 40) % 100, words[(r >> 50) % NWORDS]);
    size_t used = (size_t)k < n ? (size_t)k : n;
    memcpy(p, head, used);
    while (used < n) {
        const char *w = words[xorshift(rng) % NWORDS];
        size_t wl = strlen(w);
        for (size_t i = 0; i <= wl && used < n; i++)
            p[used++] = i < wl ? (uint8_t)w[i] : ' ';
    }
    if (n >= 2) {
        p[n - 2] = '"';
        p[n - 1] = '}';
    }
}

/* ---------- entries ---------- */

/* Appends one batch payload of s->per_entry messages to out. */
static int build_batch(const bc_spec_t *s, uint64_t seq0, uint64_t *rng, pc_buf_t *out) {
    for (uint32_t i = 0; i < s->per_entry; i++) {
        Pulsar__Proto__SingleMessageMetadata sm = PULSAR__PROTO__SINGLE_MESSAGE_METADATA__INIT;
        sm.payload_size = (int32_t)s->msg_size;
        sm.has_sequence_id = 1;
        sm.sequence_id = seq0 + i;
        size_t smlen = pulsar__proto__single_message_metadata__get_packed_size(&sm);
        if (pc_buf_reserve(out, 4 + smlen + s->msg_size))
            return -1;
        pc_buf_put_u32(out, (uint32_t)smlen);
        out->len += pulsar__proto__single_message_metadata__pack(&sm, out->data + out->len);
        gen_payload(out->data + out->len, s->msg_size, seq0 + i, rng);
        out->len += s->msg_size;
    }
    return 0;
}

/* Serialises the entry's MessageMetadata into meta. */
static int build_meta(const bc_spec_t *s, uint64_t seq0, size_t raw_len, pc_buf_t *meta) {
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    md.producer_name = "replay-0";
    md.sequence_id = seq0;
    md.publish_time = PUBLISH_TIME_MS + seq0 / 1000;
    if (s->per_entry) {
        md.has_num_messages_in_batch = 1;
        md.num_messages_in_batch = (int32_t)s->per_entry;
        md.has_highest_sequence_id = 1;
        md.highest_sequence_id = seq0 + s->per_entry - 1;
    }
    if (s->codec != T_NONE) {
        md.has_compression = 1;
        md.compression = (Pulsar__Proto__CompressionType)s->codec;
        md.has_uncompressed_size = 1;
        md.uncompressed_size = (uint32_t)raw_len;
    }
    size_t n = pulsar__proto__message_metadata__get_packed_size(&md);
    meta->len = 0;
    if (pc_buf_reserve(meta, n))
        return -1;
    meta->len = pulsar__proto__message_metadata__pack(&md, meta->data);
    return 0;
}

/* The 39-byte MESSAGE BaseCommand with zero ids (patched later). */
static void build_cmd(uint8_t cmd[BC_CMD_LEN]) {
    static const uint8_t head[] = {
        0x08, 0x09,       /* type = MESSAGE */
        0x4a, 35,         /* field 9 (message), 35 bytes */
        0x08,             /*   consumer_id: 10-byte varint at [5] */
    };
    memset(cmd, 0, BC_CMD_LEN);
    memcpy(cmd, head, sizeof head);
    cmd[15] = 0x12;       /*   field 2 (message_id) */
    cmd[16] = 22;         /*   22 bytes */
    cmd[17] = 0x08;       /*     ledgerId: 10-byte varint at [18] */
    cmd[28] = 0x10;       /*     entryId: 10-byte varint at [29] */
    bc_put_varint10(cmd + 5, 0);
    bc_put_varint10(cmd + 18, 0);
    bc_put_varint10(cmd + 29, 0);
}

/* Appends one complete frame (with its CRC) to ring and records it. */
static int append_frame(bc_ring_t *r, pc_buf_t *ring, const pc_buf_t *meta, const uint8_t *pl,
                        size_t plen, uint32_t msgs) {
    uint8_t cmd[BC_CMD_LEN];
    build_cmd(cmd);
    size_t tail = 4 + meta->len + plen; /* what the CRC covers */
    size_t total = 4 + BC_CMD_LEN + 6 + tail;
    if (total > PC_DEFAULT_MAX_MESSAGE_SIZE || pc_buf_reserve(ring, 4 + total))
        return -1;
    size_t off = ring->len;
    pc_buf_put_u32(ring, (uint32_t)total);
    pc_buf_put_u32(ring, BC_CMD_LEN);
    pc_buf_append(ring, cmd, BC_CMD_LEN);
    pc_buf_put_u16(ring, PC_MAGIC_CRC32C);
    size_t crc_at = ring->len;
    pc_buf_put_u32(ring, 0);
    pc_buf_put_u32(ring, (uint32_t)meta->len);
    pc_buf_append(ring, meta->data, meta->len);
    pc_buf_append(ring, pl, plen);
    pc_wr_u32(ring->data + crc_at, pc_crc32c(0, ring->data + crc_at + 4, tail));
    r->frames[r->nframes].off = off;
    r->frames[r->nframes].len = (uint32_t)(4 + total);
    r->frames[r->nframes].msgs = msgs;
    r->nframes++;
    return 0;
}

/* Builds entry number k (payload, optional compression, metadata, frame). */
static int build_entry(bc_ring_t *r, pc_buf_t *ring, uint64_t k, pc_buf_t *raw, pc_buf_t *packed,
                       pc_buf_t *meta) {
    const bc_spec_t *s = r->spec;
    uint32_t msgs = s->per_entry ? s->per_entry : 1;
    uint64_t seq0 = k * msgs, rng = 0x9e3779b97f4a7c15ULL ^ (k + 1) * 0xbf58476d1ce4e5b9ULL;
    raw->len = 0;
    if (s->per_entry) {
        if (build_batch(s, seq0, &rng, raw))
            return -1;
    } else {
        if (pc_buf_reserve(raw, s->msg_size))
            return -1;
        gen_payload(raw->data, s->msg_size, seq0, &rng);
        raw->len = s->msg_size;
    }
    const pc_buf_t *pl = raw;
    if (s->codec != T_NONE) {
#if BC_HAVE_CODEC
        packed->len = 0;
        if (compress_payload(s->codec, raw->data, raw->len, packed))
            return -1;
        pl = packed;
#else
        (void)packed;
        return -1;
#endif
    }
    if (build_meta(s, seq0, raw->len, meta) || append_frame(r, ring, meta, pl->data, pl->len, msgs))
        return -1;
    r->msgs += msgs;
    r->user_bytes += (uint64_t)msgs * s->msg_size;
    r->batch_bytes += raw->len;
    r->wire_payload += pl->len;
    return 0;
}

/* Parses frame 0 back with patched ids; 0 when everything matches. */
static int self_check(const bc_ring_t *r, char *err, size_t errlen) {
    uint8_t *copy = malloc(r->frames[0].len);
    if (!copy)
        return -1;
    memcpy(copy, r->data, r->frames[0].len);
    bc_frame_t f0 = r->frames[0];
    f0.off = 0;
    bc_frame_set_ids(copy, &f0, 77, 123456789, UINT64_C(0x7fffffffffff0001));
    pc_frame_t f;
    char e[256] = "";
    long n = pc_frame_parse(copy, f0.len, PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING, &f, e, sizeof e);
    int ok = n == (long)f0.len && f.cmd->message && f.checksum_ok && f.has_checksum &&
             f.cmd->message->consumer_id == 77 && f.cmd->message->message_id &&
             f.cmd->message->message_id->ledgerid == 123456789 &&
             f.cmd->message->message_id->entryid == UINT64_C(0x7fffffffffff0001);
    Pulsar__Proto__MessageMetadata *md =
        ok ? pulsar__proto__message_metadata__unpack(NULL, f.meta_len, f.meta) : NULL;
    if (!md || (r->spec->per_entry && md->num_messages_in_batch != (int32_t)r->spec->per_entry))
        ok = 0;
    if (md)
        pulsar__proto__message_metadata__free_unpacked(md, NULL);
    if (n > 0)
        pc_frame_clear(&f);
    free(copy);
    if (!ok)
        snprintf(err, errlen, "self-check of the first frame failed%s%s", e[0] ? ": " : "", e);
    return ok ? 0 : -1;
}

int bc_ring_build(bc_ring_t *r, const bc_spec_t *spec, size_t target_bytes, char *err,
                  size_t errlen) {
    memset(r, 0, sizeof *r);
    r->spec = spec;
    if (!bc_codec_available(spec->codec)) {
        snprintf(err, errlen, "codec %s is not available in this build", bc_codec_name(spec->codec));
        return -1;
    }
    r->frames = calloc(MAX_FRAMES, sizeof *r->frames);
    pc_buf_t ring, raw, packed, meta;
    pc_buf_init(&ring, 0);
    pc_buf_init(&raw, 0);
    pc_buf_init(&packed, 0);
    pc_buf_init(&meta, 0);
    int rc = r->frames ? 0 : -1;
    for (uint64_t k = 0; !rc && k < MAX_FRAMES && (k < MIN_FRAMES || ring.len < target_bytes); k++)
        rc = build_entry(r, &ring, k, &raw, &packed, &meta);
    pc_buf_free(&raw);
    pc_buf_free(&packed);
    pc_buf_free(&meta);
    r->data = ring.data;
    r->len = ring.len;
    if (rc)
        snprintf(err, errlen, "building corpus %s failed (out of memory or codec error)", spec->name);
    else if (self_check(r, err, errlen))
        rc = -1;
    if (rc)
        bc_ring_free(r);
    return rc;
}

void bc_ring_free(bc_ring_t *r) {
    free(r->data);
    free(r->frames);
    memset(r, 0, sizeof *r);
}
