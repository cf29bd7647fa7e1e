/*
 * libFuzzer target, structure-aware: the input is a recipe, not the bytes
 * a broker sends. It builds valid protobuf for a BaseCommand of any type
 * (chosen from the Type enum, so every command is reached) by walking the
 * protobuf-c descriptors, with what plain mutation rarely finds: messages
 * nested through a self-recursive field as deep as 256 KiB allows (~30,000), one field
 * repeated up to 2^20 times (packed runs, repeated sub-messages, repeats
 * of non-repeated fields that protobuf-c merges), absurd varints, long
 * strings, unknown fields. MESSAGE and SEND frames get a payload section:
 * MessageMetadata built the same way and a batch of SingleMessageMetadata
 * records.
 *
 * Each input is checked three ways:
 *   1. core/pbguard against protobuf-c on the command and the metadata:
 *      what the guard calls MALFORMED protobuf-c must reject; what it calls
 *      OK must unpack with no more allocated than the guard's estimate
 *      (a counting allocator); nothing else is unpacked (it would overflow
 *      the stack, the thing under test).
 *   2. the frame decoder (pc_frame_parse) on the whole frame;
 *   3. the consumer's decoder (pc_rx_decode, pc_chunks_add) on MESSAGE.
 *
 * Design notes: bytes are written back to front (content before the tag
 * and length that wrap it), so any nesting depth is a loop. The recipe is
 * read a byte at a time; when it runs out every choice reads 0, which
 * ends each message, so every input terminates. The generator recurses
 * at most GEN_LEVELS deep; deeper nesting comes only from the loop.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/chunk_assembler.h"
#include "client/message.h"
#include "client/consumer/rx_decode.h"
#include "client/rxpool.h"
#include "core/crc32c.h"
#include "core/frame.h"
#include "core/pbguard.h"
#include "pb_backwards.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP ((size_t)256 << 10)
#define GEN_LEVELS 6
/* Loops (nesting, repeats) stop with this much room left for what wraps them. */
#define ROOM ((size_t)16 << 10)
#define MAX_FRAME ((size_t)PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING)

typedef struct gen {
    const uint8_t *r, *rend; /* the recipe */
    pb_backwards_t out;      /* output, written from the end; full: the rest is skipped */
} gen_t;

static unsigned take(gen_t *g) { return g->r < g->rend ? *g->r++ : 0; }
static unsigned take16(gen_t *g) { return take(g) | take(g) << 8; }

static size_t used(const gen_t *g) { return CAP - g->out.pos; }

/* Small, one past a byte, 2^31 - 1, 2^32, all ones, "negative". */
static uint64_t absurd_value(gen_t *g) {
    static const uint64_t edge[] = {0, 1, 127, 128, 0x7fffffff, 0x80000000u, 0xffffffffu,
                                    0x100000000ull, UINT64_MAX, (uint64_t)INT64_MIN};
    unsigned k = take(g);
    if (k < 160)
        return k;
    if (k < 200)
        return edge[k % (sizeof edge / sizeof edge[0])];
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | take(g);
    return v;
}

/* Up to 2^20, weighted towards small. */
static size_t absurd_count(gen_t *g) {
    unsigned k = take(g);
    if (k < 128)
        return k;
    return (size_t)take16(g) << ((k - 128) % 5);
}

static void gen_message(gen_t *g, const ProtobufCMessageDescriptor *d, int level);

static void gen_scalar(gen_t *g, const ProtobufCFieldDescriptor *fd) {
    switch (fd->type) {
    case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FLOAT: {
        uint32_t v = (uint32_t)absurd_value(g);
        pbb_bytes(&g->out, &v, 4);
        pbb_key(&g->out, fd->id, 5);
        return;
    }
    case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_DOUBLE: {
        uint64_t v = absurd_value(g);
        pbb_bytes(&g->out, &v, 8);
        pbb_key(&g->out, fd->id, 1);
        return;
    }
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumDescriptor *e = fd->descriptor;
        unsigned k = take(g);
        pbb_varint(&g->out, k < 200 && e->n_values ? (uint64_t)(int64_t)e->values[k % e->n_values].value
                                                   : absurd_value(g));
        pbb_key(&g->out, fd->id, 0);
        return;
    }
    default:
        pbb_varint(&g->out, absurd_value(g));
        pbb_key(&g->out, fd->id, 0);
        return;
    }
}

static void gen_string(gen_t *g, const ProtobufCFieldDescriptor *fd) {
    unsigned k = take(g);
    size_t n = k < 200 ? k % 40 : absurd_count(g);
    if (n > g->out.pos / 2)
        n = g->out.pos / 2;
    if (g->out.full || g->out.pos < n + 64) {
        g->out.full = 1;
        return;
    }
    g->out.pos -= n;
    memset(g->out.buf + g->out.pos, 'a' + (int)(k % 26), n);
    pbb_wrap(&g->out, fd->id, n);
}

/* One occurrence of fd. */
static void gen_field(gen_t *g, const ProtobufCFieldDescriptor *fd, int level) {
    if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
        size_t before = used(g);
        if (level < GEN_LEVELS)
            gen_message(g, fd->descriptor, level + 1);
        pbb_wrap(&g->out, fd->id, used(g) - before);
    } else if (fd->type == PROTOBUF_C_TYPE_STRING || fd->type == PROTOBUF_C_TYPE_BYTES) {
        gen_string(g, fd);
    } else {
        gen_scalar(g, fd);
    }
}

/* fd many times: a packed run for repeatable scalars, else copies of one occurrence. */
static void gen_repeat(gen_t *g, const ProtobufCFieldDescriptor *fd, int level) {
    size_t n = absurd_count(g);
    int packable = fd->type != PROTOBUF_C_TYPE_MESSAGE && fd->type != PROTOBUF_C_TYPE_STRING &&
                   fd->type != PROTOBUF_C_TYPE_BYTES;
    if (fd->label == PROTOBUF_C_LABEL_REPEATED && packable && (take(g) & 1)) {
        size_t before = used(g);
        uint64_t v = absurd_value(g);
        int fixed4 = fd->type == PROTOBUF_C_TYPE_FIXED32 || fd->type == PROTOBUF_C_TYPE_SFIXED32 ||
                     fd->type == PROTOBUF_C_TYPE_FLOAT;
        int fixed8 = fd->type == PROTOBUF_C_TYPE_FIXED64 || fd->type == PROTOBUF_C_TYPE_SFIXED64 ||
                     fd->type == PROTOBUF_C_TYPE_DOUBLE;
        for (size_t i = 0; i < n && !g->out.full && g->out.pos > ROOM; i++) {
            if (fixed4 || fixed8)
                pbb_bytes(&g->out, &v, fixed4 ? 4 : 8);
            else
                pbb_varint(&g->out, v + (i & 3));
        }
        pbb_wrap(&g->out, fd->id, used(g) - before);
        return;
    }
    size_t before = used(g);
    gen_field(g, fd, level);
    size_t one = used(g) - before;
    for (size_t i = 1; i < n && !g->out.full && one && g->out.pos > ROOM + one; i++)
        pbb_bytes(&g->out, g->out.buf + g->out.pos, one); /* the occurrence just written, again in front of it */
}

/* A field of d that holds a d (MessageIdData.first_chunk_message_id), or NULL. */
static const ProtobufCFieldDescriptor *self_field(const ProtobufCMessageDescriptor *d) {
    for (unsigned i = 0; i < d->n_fields; i++)
        if (d->fields[i].type == PROTOBUF_C_TYPE_MESSAGE && d->fields[i].descriptor == d)
            return &d->fields[i];
    return NULL;
}

/* The required fields, so most generated messages unpack. */
static void gen_required(gen_t *g, const ProtobufCMessageDescriptor *d, int level) {
    for (unsigned i = 0; i < d->n_fields; i++)
        if (d->fields[i].label == PROTOBUF_C_LABEL_REQUIRED)
            gen_field(g, &d->fields[i], level);
}

/* d's required fields, then wrapped `depth` times through its self field. */
static void gen_deep(gen_t *g, const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *self,
                     size_t depth, int level) {
    size_t start = used(g);
    gen_required(g, d, level);
    for (size_t i = 0; i < depth && !g->out.full && g->out.pos > ROOM; i++) {
        pbb_wrap(&g->out, self->id, used(g) - start);
        gen_required(g, d, level);
    }
}

static void gen_message(gen_t *g, const ProtobufCMessageDescriptor *d, int level) {
    if (take(g) % 4 != 0) /* mostly valid: required fields present */
        gen_required(g, d, level);
    unsigned ops = take(g) % 8;
    for (unsigned i = 0; i < ops && !g->out.full; i++) {
        unsigned op = take(g);
        const ProtobufCFieldDescriptor *fd = d->n_fields ? &d->fields[take(g) % d->n_fields] : NULL;
        const ProtobufCFieldDescriptor *self = self_field(d);
        if (!fd || op % 8 == 4) { /* unknown field */
            pbb_varint(&g->out, absurd_value(g));
            pbb_key(&g->out, 1000 + take(g), 0);
        } else if (op % 8 == 5) {
            gen_repeat(g, fd, level);
        } else if (op % 8 == 6 && self) {
            size_t before = used(g);
            gen_deep(g, d, self, absurd_count(g) * (take(g) % 4 == 0 ? 4 : 1), level);
            pbb_wrap(&g->out, self->id, used(g) - before);
        } else {
            gen_field(g, fd, level);
        }
    }
}

/* ---------- checks ---------- */

typedef struct counting {
    size_t total;
} counting_t;

static void *count_alloc(void *data, size_t n) {
    ((counting_t *)data)->total += n;
    return malloc(n ? n : 1);
}
static void count_free(void *data, void *p) {
    (void)data;
    free(p);
}

/* The guard's verdict against protobuf-c's. */
static void check_guard(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n) {
    pc_pbguard_result_t res;
    pc_pbguard_status_t st = pc_pbguard_check(d, p, n, NULL, &res);
    if (st != PC_PBG_OK && st != PC_PBG_MALFORMED)
        return;
    counting_t c = {0};
    ProtobufCAllocator a = {count_alloc, count_free, &c};
    ProtobufCMessage *m = protobuf_c_message_unpack(d, &a, n, p);
    if (st == PC_PBG_MALFORMED && m)
        __builtin_trap(); /* the guard refused what protobuf-c takes */
    if (c.total > res.unpacked && st == PC_PBG_OK)
        __builtin_trap(); /* the estimate is not an upper bound */
    if (m)
        protobuf_c_message_free_unpacked(m, &a);
}

static pc_rxpool_t *pool;

static void drop(void *owner, const pulsarc_msgid_t *ids, size_t n, int ack) {
    (void)owner, (void)ids, (void)n, (void)ack;
}

static void consume(pc_rx_result_t *r) {
    for (pulsarc_msg_t *m = r->first; m; m = m->next) {
        size_t len = pulsarc_msg_len(m), klen = 0;
        const uint8_t *pl = pulsarc_msg_payload(m);
        volatile uint8_t sink = len ? pl[0] ^ pl[len - 1] : 0;
        (void)sink;
        (void)pulsarc_msg_key_bytes(m, &klen);
    }
    pc_rx_result_discard(r);
}

static void check_rx(const pc_frame_t *f) {
    if (!pool)
        pool = pc_rxpool_new("persistent://public/default/recipe", (size_t)64 << 20, 1000);
    pc_chunks_t ch;
    memset(&ch, 0, sizeof ch);
    ch.max_pending = 4;
    ch.expire_ms = 60000;
    ch.max_bytes = (size_t)64 << 20;
    pc_rx_opts_t o = {.partition = -1, .skip_upto = NULL};
    pc_rx_result_t r;
    pc_rx_decode(pool, f, &o, &r);
    if (r.chunk_entry) {
        pc_rx_result_t out;
        memset(&out, 0, sizeof out);
        if (pc_chunks_add(&ch, &r, f->cmd->message, &o, drop, NULL, &out) == 1)
            consume(&out);
    } else {
        consume(&r);
    }
    pc_chunks_free(&ch);
}

/* ---------- the frame ---------- */

static void put_u32(gen_t *g, uint32_t v) {
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    pbb_bytes(&g->out, b, 4);
}

/* [records][payload bytes] of a batch, then metadata and its size; returns the metadata span. */
static void gen_payload_section(gen_t *g, const uint8_t **meta, size_t *meta_len) {
    unsigned records = take(g) % 6;
    for (unsigned i = 0; i < records && !g->out.full; i++) {
        size_t pl = take(g) % 32;
        pbb_bytes(&g->out, g->r < g->rend ? g->r : (const uint8_t *)"", g->rend - g->r >= (long)pl ? pl : 0);
        size_t before = used(g);
        gen_message(g, &pulsar__proto__single_message_metadata__descriptor, 1);
        put_u32(g, (uint32_t)(used(g) - before));
    }
    size_t before = used(g);
    gen_message(g, &pulsar__proto__message_metadata__descriptor, 1);
    *meta_len = used(g) - before;
    *meta = g->out.buf + g->out.pos;
    put_u32(g, (uint32_t)*meta_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static uint8_t *buf;
    if (!buf && !(buf = malloc(CAP)))
        return 0;
    gen_t g = {data, data + size, {buf, CAP, 64, 0}};
    const ProtobufCEnumDescriptor *types = &pulsar__proto__base_command__type__descriptor;
    int type = types->values[take(&g) % types->n_values].value;
    int payload = type == PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE ||
                  type == PULSAR__PROTO__BASE_COMMAND__TYPE__SEND;
    const uint8_t *meta = NULL;
    size_t meta_len = 0, tail = 0;
    if (payload) {
        gen_payload_section(&g, &meta, &meta_len);
        uint32_t crc = pc_crc32c(0, g.out.buf + g.out.pos, used(&g)) ^ (take(&g) == 7);
        put_u32(&g, crc);
        pbb_bytes(&g.out, "\x0e\x01", 2);
        tail = used(&g);
    }
    const ProtobufCFieldDescriptor *body =
        protobuf_c_message_descriptor_get_field(&pulsar__proto__base_command__descriptor, (unsigned)type);
    size_t before = used(&g);
    if (body)
        gen_field(&g, body, 1);
    gen_message(&g, &pulsar__proto__base_command__descriptor, 2); /* extra top-level fields */
    pbb_varint(&g.out, (uint64_t)type);
    pbb_key(&g.out, 1, 0);
    size_t cmdlen = used(&g) - before;
    const uint8_t *cmd = g.out.buf + g.out.pos;
    put_u32(&g, (uint32_t)cmdlen);
    put_u32(&g, (uint32_t)(4 + cmdlen + tail));
    if (g.out.full)
        return 0;

    check_guard(&pulsar__proto__base_command__descriptor, cmd, cmdlen);
    if (meta)
        check_guard(&pulsar__proto__message_metadata__descriptor, meta, meta_len);
    pc_frame_t f;
    char err[256];
    long n = pc_frame_parse(g.out.buf + g.out.pos, used(&g), MAX_FRAME, &f, err, sizeof err);
    if (n > 0 && (size_t)n != used(&g))
        __builtin_trap(); /* one frame was written */
    if (n > 0 && f.cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE && f.has_payload)
        check_rx(&f);
    if (n > 0)
        pc_frame_clear(&f);
    return 0;
}
