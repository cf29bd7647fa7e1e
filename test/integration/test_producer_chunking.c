/*
 * Live-broker tests of chunking: a message above the broker's
 * maxMessageSize (1,024,000 on the test broker) is stored as several
 * entries. Each entry is fetched back from the broker (admin "get message
 * by id", which returns the stored payload and its metadata as X-Pulsar-*
 * headers) and checked: chunk ids 0..n-1, one uuid, num_chunks_from_msg,
 * total_chunk_msg_size, and the concatenated slices equal the (compressed)
 * payload. The Java consumer reassembling chunked messages (also
 * compressed ones) is checked in test_producer_interop.c.
 */
#include <curl/curl.h>
#include <strings.h>
#include <stdlib.h>

#include "core/buf.h"
#include "core/codec.h"
#include "producer_util.h"

typedef struct fetched {
    pc_buf_t body;
    int chunk_id, num_chunks;
    long total;
    char uuid[256];
} fetched_t;

static size_t on_body(void *p, size_t sz, size_t n, void *u) {
    pc_buf_append(&((fetched_t *)u)->body, p, sz * n);
    return sz * n;
}

static size_t on_header(char *h, size_t sz, size_t n, void *u) {
    fetched_t *f = u;
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(sz * n), h);
    line[strcspn(line, "\r\n")] = 0;
    if (!strncasecmp(line, "X-Pulsar-chunk-id: ", 19))
        f->chunk_id = atoi(line + 19);
    else if (!strncasecmp(line, "X-Pulsar-num-chunks-from-msg: ", 30))
        f->num_chunks = atoi(line + 30);
    else if (!strncasecmp(line, "X-Pulsar-total-chunk-msg-size: ", 31))
        f->total = atol(line + 31);
    else if (!strncasecmp(line, "X-Pulsar-uuid: ", 15))
        snprintf(f->uuid, sizeof f->uuid, "%s", line + 15);
    return sz * n;
}

static void fetch_entry(const char *topic, int64_t ledger, int64_t entry, fetched_t *f) {
    char url[1024], suffix[128];
    snprintf(suffix, sizeof suffix, "/ledger/%lld/entry/%lld", (long long)ledger, (long long)entry);
    snprintf(url, sizeof url, "%s%s", pct_admin_url(), topic_path(topic, suffix));
    memset(f, 0, sizeof *f);
    f->chunk_id = f->num_chunks = -1;
    pc_buf_init(&f->body, 0);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, f);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    /* On a cluster the entry comes from the topic's owner: a redirect to follow. */
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    long code = 0;
    ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    ck_assert_msg(code == 200, "GET %s: HTTP %ld", url, code);
}

static uint8_t *random_bytes(size_t len, unsigned seed) {
    uint8_t *b = malloc(len);
    for (size_t i = 0; i < len; i++)
        b[i] = (uint8_t)rand_r(&seed);
    return b;
}

/* Reads back the n chunk entries ending at last; returns the joined payload. */
static void check_chunks(const char *topic, pulsarc_msgid_t last, int n, pc_buf_t *joined) {
    char uuid[256] = "";
    long total = -1;
    pc_buf_init(joined, 0);
    for (int i = 0; i < n; i++) {
        fetched_t f;
        fetch_entry(topic, last.ledger_id, last.entry_id - (n - 1) + i, &f);
        ck_assert_int_eq(f.chunk_id, i);
        ck_assert_int_eq(f.num_chunks, n);
        ck_assert_msg(f.body.len < 1024000, "chunk %d is %zu bytes", i, f.body.len);
        if (i == 0) {
            snprintf(uuid, sizeof uuid, "%s", f.uuid);
            total = f.total;
        }
        ck_assert_str_eq(f.uuid, uuid);
        ck_assert_int_eq(f.total, total);
        pc_buf_append(joined, f.body.data, f.body.len);
        pc_buf_free(&f.body);
    }
    ck_assert_int_eq((long)joined->len, total);
}

/* _i: codec NONE (0) / LZ4 (1) / ZSTD (2); 2.6 MB of random bytes is 3 chunks. */
START_TEST(test_chunked_entries) {
    static const char *const codec[] = {"NONE", "LZ4", "ZSTD"};
    static const pc_codec_t ids[] = {PC_CODEC_NONE, PC_CODEC_LZ4, PC_CODEC_ZSTD};
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("chunks");
    const char *kv[] = {"chunkingEnabled", "true", "batchingEnabled", "false",
                        "compressionType", codec[_i], "producerName", "chunker", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    const size_t big = 2600 * 1000;
    uint8_t *data = random_bytes(big, 11);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, data, big, PULSARC_MSG_F_BORROW);
    pulsarc_msgid_t id;
    ck_assert_int_eq(pulsarc_producer_send(p, m, &id), PULSARC_OK);
    pulsarc_msg_destroy(m);
    ck_assert_int_eq(id.entry_id, 2); /* the send reports the last of 3 entries */
    pc_buf_t joined;
    check_chunks(topic, id, 3, &joined);
    uint8_t *plain = malloc(big);
    ck_assert_int_eq(pc_codec_decompress(ids[_i], joined.data, joined.len, plain, big, NULL, 0),
                     PULSARC_OK);
    ck_assert(memcmp(plain, data, big) == 0);
    fetched_t f;
    fetch_entry(topic, id.ledger_id, 0, &f);
    ck_assert_str_eq(f.uuid, "chunker-0"); /* <producerName>-<sequenceId> */
    pc_buf_free(&f.body);
    send_text(p, "small after large: one entry"); /* the producer goes on normally */
    free(plain);
    pc_buf_free(&joined);
    free(data);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

/* chunkMaxMessageSize: chunks smaller than the broker's limit. */
START_TEST(test_chunk_max_message_size) {
    pulsarc_client_t *c = pct_client();
    const char *topic = pct_topic("small-chunks");
    const char *kv[] = {"chunkingEnabled", "true", "batchingEnabled", "false",
                        "chunkMaxMessageSize", "10000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    uint8_t *data = random_bytes(95000, 5);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, data, 95000, PULSARC_MSG_F_BORROW);
    pulsarc_msgid_t id;
    ck_assert_int_eq(pulsarc_producer_send(p, m, &id), PULSARC_OK);
    pulsarc_msg_destroy(m);
    int n = (int)id.entry_id + 1;
    ck_assert_int_ge(n, 10); /* >= 10 chunks of < 10,000 bytes */
    pc_buf_t joined;
    check_chunks(topic, id, n, &joined);
    ck_assert_uint_eq(joined.len, 95000);
    ck_assert(memcmp(joined.data, data, 95000) == 0);
    pc_buf_free(&joined);
    free(data);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("producer-chunking");
    TCase *t = tcase_create("chunking");
    tcase_set_timeout(t, 120);
    /* Compressed chunks are read back through the Java consumer instead
     * (test_producer_interop.c): the broker's get-message endpoint does not
     * serve a compressed slice of a chunked message. */
    tcase_add_loop_test(t, test_chunked_entries, 0, 1);
    tcase_add_test(t, test_chunk_max_message_size);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
