/*
 * Writes the seed corpora of the fuzz targets into <dir>/<target>/: a few
 * valid inputs (so the fuzzers start past the parsers' front doors) and
 * the hostile cases the issue names: sizes near 2^32, batches claiming
 * 10^9 messages, chunk totals of 4 GB, uncompressed sizes of 4 GB.
 * Usage: gen_seeds DIR (run by test/fuzz/run.sh --seeds).
 *
 * Design notes: seeds are built with the library's own encoders (frames,
 * protobuf-c packers, codecs), so they follow the formats exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/codec.h"
#include "core/frame.h"

static const char *root;

static void put_file(const char *target, const char *name, const void *p, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, target);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

/* ---- frames ---- */

static void frame_seeds(void) {
    pc_buf_t b;
    pc_buf_init(&b, 0);
    pc_buf_append(&b, "\x01", 1);
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PING;
    cmd.ping = &ping;
    pc_frame_encode(&b, &cmd);
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    id.ledgerid = 5;
    id.entryid = 9;
    Pulsar__Proto__CommandMessage m = PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    m.consumer_id = 1;
    m.message_id = &id;
    pc_cmd_t mc = PULSAR__PROTO__BASE_COMMAND__INIT;
    mc.type = PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE;
    mc.message = &m;
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    md.producer_name = "p";
    md.publish_time = 1;
    pc_frame_encode_payload(&b, &mc, &md, "hello", 5);
    put_file("fuzz_frame", "ping_and_message", b.data, b.len);
    /* sizes near 2^32: total, then command size */
    static const uint8_t huge_total[] = {1, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 2, 8, 18};
    static const uint8_t huge_cmd[] = {1, 0, 0, 0, 10, 0xff, 0xff, 0xff, 0xfe, 8, 18, 0, 0, 0};
    put_file("fuzz_frame", "total_near_4g", huge_total, sizeof huge_total);
    put_file("fuzz_frame", "cmdsize_near_4g", huge_cmd, sizeof huge_cmd);
    /* a MESSAGE whose metadata size is near 2^32 */
    pc_buf_t h;
    pc_buf_init(&h, 0);
    pc_buf_append(&h, "\x01", 1);
    pc_frame_encode_payload(&h, &mc, &md, "x", 1);
    uint32_t cmdlen = pc_rd_u32(h.data + 1 + 4);
    pc_wr_u32(h.data + 1 + 8 + cmdlen + 6, 0xfffffff0u);
    put_file("fuzz_frame", "metasize_near_4g", h.data, h.len);
    pc_buf_free(&h);
    pc_buf_free(&b);
}

/* ---- rx_decode records: [flags][metalen:2][paylen:2][acklen][meta][payload][acks] ---- */

static void record(pc_buf_t *out, int flags, const Pulsar__Proto__MessageMetadata *md,
                   const void *payload, size_t paylen) {
    size_t mlen = pulsar__proto__message_metadata__get_packed_size(md);
    uint8_t hdr[6] = {(uint8_t)flags, (uint8_t)(mlen >> 8), (uint8_t)mlen, (uint8_t)(paylen >> 8),
                      (uint8_t)paylen, 0};
    pc_buf_append(out, hdr, sizeof hdr);
    pc_buf_reserve(out, mlen);
    pulsar__proto__message_metadata__pack(md, out->data + out->len);
    out->len += mlen;
    pc_buf_append(out, payload, paylen);
}

static Pulsar__Proto__MessageMetadata base_md(void) {
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    md.producer_name = "p";
    md.sequence_id = 1;
    md.publish_time = 1700000000000ull;
    return md;
}

/* A batch payload of n single messages "m0".."m{n-1}". */
static void batch_payload(pc_buf_t *out, int n) {
    for (int i = 0; i < n; i++) {
        Pulsar__Proto__SingleMessageMetadata s = PULSAR__PROTO__SINGLE_MESSAGE_METADATA__INIT;
        s.payload_size = 2;
        s.partition_key = "k";
        size_t sl = pulsar__proto__single_message_metadata__get_packed_size(&s);
        pc_buf_put_u32(out, (uint32_t)sl);
        pc_buf_reserve(out, sl);
        pulsar__proto__single_message_metadata__pack(&s, out->data + out->len);
        out->len += sl;
        char body[3] = {'m', (char)('0' + i % 10), 0};
        pc_buf_append(out, body, 2);
    }
}

static void rx_seeds(void) {
    pc_buf_t b, pl;
    pc_buf_init(&b, 0);
    pc_buf_init(&pl, 0);
    Pulsar__Proto__MessageMetadata md = base_md();
    record(&b, 0, &md, "single", 6);
    put_file("fuzz_rx_decode", "single", b.data, b.len);

    b.len = 0;
    batch_payload(&pl, 3);
    md = base_md();
    md.has_num_messages_in_batch = 1;
    md.num_messages_in_batch = 3;
    record(&b, 4, &md, pl.data, pl.len);
    put_file("fuzz_rx_decode", "batch3", b.data, b.len);

    b.len = 0;
    md.num_messages_in_batch = 1000000000; /* 10^9 claimed, 3 present */
    record(&b, 8, &md, pl.data, pl.len);
    put_file("fuzz_rx_decode", "batch_claims_1e9", b.data, b.len);

    b.len = 0;
    pc_buf_t z;
    pc_buf_init(&z, 0);
    pc_codec_compress(PC_CODEC_LZ4, pl.data, pl.len, &z);
    md.num_messages_in_batch = 3;
    md.has_compression = 1;
    md.compression = PULSAR__PROTO__COMPRESSION_TYPE__LZ4;
    md.has_uncompressed_size = 1;
    md.uncompressed_size = (uint32_t)pl.len;
    record(&b, 12, &md, z.data, z.len);
    put_file("fuzz_rx_decode", "batch3_lz4", b.data, b.len);

    b.len = 0;
    md.uncompressed_size = 0xffffffffu; /* 4 GB claimed */
    record(&b, 16, &md, z.data, z.len);
    put_file("fuzz_rx_decode", "lz4_claims_4g", b.data, b.len);

    b.len = 0;
    z.len = 0;
    md = base_md();
    md.has_compression = 1;
    md.compression = PULSAR__PROTO__COMPRESSION_TYPE__ZLIB;
    md.has_uncompressed_size = 1;
    md.uncompressed_size = 11;
    pc_codec_compress(PC_CODEC_ZLIB, "zlib-single", 11, &z);
    record(&b, 20, &md, z.data, z.len);
    put_file("fuzz_rx_decode", "zlib_single", b.data, b.len);

    /* chunks: two of a message, then one announcing a 4 GB total */
    b.len = 0;
    md = base_md();
    md.uuid = "u-1";
    md.has_num_chunks_from_msg = 1;
    md.num_chunks_from_msg = 2;
    md.has_total_chunk_msg_size = 1;
    md.total_chunk_msg_size = 10;
    md.has_chunk_id = 1;
    md.chunk_id = 0;
    record(&b, 24, &md, "hello", 5);
    md.chunk_id = 1;
    record(&b, 28, &md, "world", 5);
    put_file("fuzz_rx_decode", "chunks_2", b.data, b.len);
    b.len = 0;
    md.chunk_id = 0;
    md.total_chunk_msg_size = -1; /* 0xffffffff on the wire: 4 GB as unsigned */
    record(&b, 32, &md, "hello", 5);
    md.total_chunk_msg_size = 2147483647;
    md.uuid = "u-2";
    record(&b, 36, &md, "hello", 5);
    put_file("fuzz_rx_decode", "chunk_total_4g", b.data, b.len);
    pc_buf_free(&z);
    pc_buf_free(&pl);
    pc_buf_free(&b);
}

/* ---- text targets ---- */

static void text_seed(const char *target, const char *name, uint8_t sel, const char *text) {
    size_t n = strlen(text);
    uint8_t *p = malloc(n + 1);
    p[0] = sel;
    memcpy(p + 1, text, n);
    put_file(target, name, p, n + 1);
    free(p);
}

static void conf_seed(const char *name, const char *k, const char *v) {
    size_t kl = strlen(k), vl = strlen(v);
    char *p = malloc(kl + vl + 2);
    memcpy(p, k, kl + 1);
    memcpy(p + kl + 1, v, vl + 1);
    put_file("fuzz_conf", name, p, kl + vl + 2);
    free(p);
}

static void text_seeds(void) {
    text_seed("fuzz_parse", "url", 0, "pulsar://a:6650,b:6651,[::1]:6652/");
    text_seed("fuzz_parse", "url_ssl", 1, "pulsar+ssl://broker.example.com:6651");
    text_seed("fuzz_parse", "topic_full", 2, "persistent://tenant/ns/topic-partition-3");
    text_seed("fuzz_parse", "topic_short", 3, "my-topic");
    text_seed("fuzz_parse", "msgid", 4, "123:456:-1:7");
    text_seed("fuzz_parse", "port_big", 5, "pulsar://h:4294967296");
    conf_seed("timeout", "operationTimeoutMs", "30000");
    conf_seed("timeout_huge", "operationTimeoutMs", "18446744073709551616");
    conf_seed("enum", "subscriptionType", "Key_Shared");
    conf_seed("ranges", "keySharedHashRanges", "0-100,200-65535");
    conf_seed("indexed", "#\x05", "-1");
    text_seed("fuzz_admin_json", "list", 0, "[\"persistent://public/default/a\",\"b\"]");
    text_seed("fuzz_admin_json", "partitions", 1, "{\"partitions\":4294967296}");
    text_seed("fuzz_admin_json", "stats", 2,
              "{\"msgInCounter\":1,\"storageSize\":2,\"subscriptions\":{\"s\":{\"msgBacklog\":3,"
              "\"backlogSize\":4,\"unackedMessages\":5,\"consumers\":[{}]}}}");
    text_seed("fuzz_admin_json", "reason", 3, "{\"reason\":\"Topic not found\"}");
    text_seed("fuzz_admin_json", "html", 0, "<html><title>401 Unauthorized</title></html>");
    text_seed("fuzz_admin_json", "retention", 1, "{\"retentionTimeInMinutes\":-1,\"retentionSizeInMB\":9e99}");
}

static void codec_seeds(void) {
    static const char text[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb";
    for (int c = 1; c <= 4; c++) {
        if (!pc_codec_available((pc_codec_t)c))
            continue;
        pc_buf_t b;
        pc_buf_init(&b, 0);
        uint8_t hdr[5] = {(uint8_t)c, 0, 0, 0, (uint8_t)(sizeof text - 1)};
        pc_buf_append(&b, hdr, sizeof hdr);
        pc_codec_compress((pc_codec_t)c, text, sizeof text - 1, &b);
        put_file("fuzz_codec", pc_codec_name((pc_codec_t)c), b.data, b.len);
        b.data[1] = b.data[2] = b.data[3] = b.data[4] = 0xff; /* claims 4 GB */
        char name[32];
        snprintf(name, sizeof name, "%s_4g", pc_codec_name((pc_codec_t)c));
        put_file("fuzz_codec", name, b.data, b.len);
        pc_buf_free(&b);
    }
}

/* ---- fuzz_command_recipe: recipes, read as that target's generator reads them ---- */

static void recipe_seeds(void) {
    const ProtobufCEnumDescriptor *t = &pulsar__proto__base_command__type__descriptor;
    uint8_t send_receipt = 0;
    for (unsigned i = 0; i < t->n_values && i < 256; i++) {
        uint8_t r[3] = {(uint8_t)i, 1, 0}; /* the command with its required fields */
        put_file("fuzz_command_recipe", t->values[i].name, r, sizeof r);
        if (t->values[i].value == PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT)
            send_receipt = (uint8_t)i;
    }
    /* SEND_RECEIPT (producer 5, sequence 6) whose message id asks to nest 131,071 deep (as many as fit) */
    uint8_t deep[] = {send_receipt, 1, 5, 6, 1, 0, 2, /* one op: field 2, message_id */
                      1, 5, 6, 1, 6, 0,              /* MessageIdData: op 6, nest ...   */
                      129, 0xff, 0xff, 1};           /* ... 0xffff << 1 times           */
    put_file("fuzz_command_recipe", "send_receipt_deep", deep, sizeof deep);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gen_seeds DIR\n");
        return 2;
    }
    root = argv[1];
    mkdir(root, 0755);
    frame_seeds();
    rx_seeds();
    text_seeds();
    codec_seeds();
    recipe_seeds();
    return 0;
}
