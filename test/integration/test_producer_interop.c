/*
 * Interop with the Java client (pulsar-client 4.0.7 from Maven Central,
 * driven by test/interop/run.sh):
 *   - what pulsarc produces with every codec, batching on and off, and a
 *     chunked message, is read correctly by a Java consumer;
 *   - what the Java client produces the same ways is read correctly by the
 *     project's consumer;
 *   - for every key and both hashing schemes, pulsarc's partitioned
 *     producer picks the partition the Java client picked (text keys,
 *     non-ASCII keys, binary keys sent base64).
 * The message pattern is shared with test/interop/Interop.java.
 */
#include <stdlib.h>

#include "producer_util.h"

#define N_INTEROP 60
#define LARGE 2600000

static const char *const codecs[] = {"none", "lz4", "zlib", "zstd", "snappy"};

static size_t pattern(int i, uint8_t *buf) {
    static const char text[] = "pulsarc interop ";
    size_t len = 20 + (size_t)(i % 50) * 13;
    for (size_t k = 0; k < len; k++)
        buf[k] = (uint8_t)text[(k + (size_t)i) % 16];
    return len;
}

static uint8_t *large_pattern(void) {
    uint8_t *b = malloc(LARGE);
    for (uint64_t k = 0; k < LARGE; k++)
        b[k] = (uint8_t)((k * 2654435761ULL) >> 13);
    return b;
}

static int run_java(const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "bash test/interop/run.sh %s", args);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int java_available(void) {
    const char *f = getenv("PULSARC_BROKER_CLASSPATH_FILE");
    if ((f && access(f, R_OK) == 0) || access("test/broker/.work/classpath.txt", R_OK) == 0)
        return 1;
    printf("interop: skipped, no broker classpath file (run under test/broker/run-with-broker.sh)\n");
    return 0;
}

/* "interop-<who>-<codec>-<batch|single>-..." : the name tells Java the settings. */
static void topic_names(const char *who, char names[11][256]) {
    for (int i = 0; i < 10; i++)
        snprintf(names[i], 256, "%s-%s-%s-x", pct_topic(who), codecs[i / 2],
                 i % 2 ? "batch" : "single");
    snprintf(names[10], 256, "%s-chunk-x", pct_topic(who));
}

static void produce_pattern(pulsarc_client_t *c, const char *topic, const char *codec, int batch) {
    char upper[16];
    for (size_t k = 0; k <= strlen(codec); k++)
        upper[k] = (char)(codec[k] >= 'a' && codec[k] <= 'z' ? codec[k] - 32 : codec[k]);
    const char *kv[] = {"compressionType", upper, "batchingEnabled", batch ? "true" : "false",
                        "batchingMaxMessages", "25", "batchingMaxPublishDelayMicros", "10000000", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < N_INTEROP; i++) {
        uint8_t buf[1024];
        char v[16], key[16];
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, buf, pattern(i, buf), PULSARC_MSG_F_COPY);
        snprintf(v, sizeof v, "%d", i);
        snprintf(key, sizeof key, "key-%d", i % 7);
        pulsarc_msg_set_key(m, key);
        pulsarc_msg_set_property(m, "i", v);
        pulsarc_msg_set_event_time(m, 1700000000000ULL + (uint64_t)i);
        ck_assert_int_eq(pulsarc_producer_send_async(p, m, on_sent_cb, &log), PULSARC_OK);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, N_INTEROP);
    ck_assert_int_eq(log.ok, N_INTEROP);
    pulsarc_producer_destroy(p);
}

static void produce_large(pulsarc_client_t *c, const char *topic) {
    const char *kv[] = {"chunkingEnabled", "true", "batchingEnabled", "false", "compressionType", "LZ4", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    uint8_t *data = large_pattern();
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, data, LARGE, PULSARC_MSG_F_FREE);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
    pulsarc_msg_destroy(m);
    pulsarc_producer_destroy(p);
}

START_TEST(test_java_reads_pulsarc) {
    if (!java_available())
        return;
    pulsarc_client_t *c = pct_client();
    char names[11][256], args[6000];
    topic_names("interop-c", names);
    int n = snprintf(args, sizeof args, "consume %s %d", pct_service_url(), N_INTEROP);
    for (int i = 0; i < 10; i++) {
        produce_pattern(c, names[i], codecs[i / 2], i % 2);
        n += snprintf(args + n, sizeof args - (size_t)n, " %s", names[i]);
    }
    produce_large(c, names[10]);
    snprintf(args + n, sizeof args - (size_t)n, " %s", names[10]);
    pulsarc_client_destroy(c);
    ck_assert_int_eq(run_java(args), 0);
}
END_TEST

static void check_pattern(const pulsarc_msg_t *m, int i, const char *topic) {
    uint8_t buf[1024];
    char v[16], key[16];
    size_t len = pattern(i, buf);
    snprintf(v, sizeof v, "%d", i);
    snprintf(key, sizeof key, "key-%d", i % 7);
    ck_assert_msg(pulsarc_msg_len(m) == len && memcmp(pulsarc_msg_payload(m), buf, len) == 0,
                  "%s: payload of #%d", topic, i);
    ck_assert_str_eq(pulsarc_msg_key(m), key);
    ck_assert_str_eq(pulsarc_msg_property(m, "i"), v);
    ck_assert_uint_eq(pulsarc_msg_event_time(m), 1700000000000ULL + (uint64_t)i);
    ck_assert_int_eq(pulsarc_msg_sequence_id(m), i);
}

START_TEST(test_pulsarc_reads_java) {
    if (!java_available())
        return;
    char names[11][256], args[6000];
    topic_names("interop-j", names);
    int n = snprintf(args, sizeof args, "produce %s %d", pct_service_url(), N_INTEROP);
    for (int i = 0; i < 11; i++) /* the 11th is one chunked message */
        n += snprintf(args + n, sizeof args - (size_t)n, " %s", names[i]);
    ck_assert_int_eq(run_java(args), 0);
    pulsarc_client_t *c = pct_client();
    for (int t = 0; t < 10; t++) {
        pulsarc_consumer_t *cons = make_consumer(c, names[t], "Exclusive");
        for (int i = 0; i < N_INTEROP; i++) {
            pulsarc_msg_t *m = receive_one(cons, i);
            check_pattern(m, i, names[t]);
            pulsarc_msgid_t id = pulsarc_msg_id(m);
            ck_assert_int_eq(id.batch_size > 0, t % 2); /* Java batched exactly when asked */
            pulsarc_msg_destroy(m);
        }
        expect_no_more(cons);
        pulsarc_consumer_destroy(cons);
    }
    pulsarc_consumer_t *cons = make_consumer(c, names[10], "Exclusive"); /* Java's chunks */
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 30000), PULSARC_OK);
    uint8_t *want = large_pattern();
    ck_assert_uint_eq(pulsarc_msg_len(m), LARGE);
    ck_assert_msg(memcmp(pulsarc_msg_payload(m), want, LARGE) == 0, "Java's chunked message differs");
    free(want);
    pulsarc_msg_destroy(m);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

#define NPARTS 5
#define NKEYS 40

static void key_list(char keys[NKEYS][64]) {
    static const char *fixed[] = {"a", "b", "key-1", "keykeykey2", "keykeykeykeykey1",
                                  "\xc3\xbc" "n\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9", /* "ünïcödé" */
                                  "\xf0\x9f\x98\x80" "emoji", "b64:00ff1080", "b64:cafe", ""};
    for (int i = 0; i < NKEYS; i++) {
        if (i < 10)
            snprintf(keys[i], 64, "%s", fixed[i]);
        else
            snprintf(keys[i], 64, "user-%d", i * 7919);
    }
}

static size_t unhex(const char *h, uint8_t *out) {
    size_t n = 0;
    for (; h[0] && h[1]; h += 2)
        out[n++] = (uint8_t)strtol((char[]){h[0], h[1], 0}, NULL, 16);
    return n;
}

/* Where pulsarc's partitioned producer sends key k. */
static int pulsarc_partition(pulsarc_producer_t *p, const char *k) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    uint8_t bin[32];
    if (strncmp(k, "b64:", 4) == 0)
        pulsarc_msg_set_key_bytes(m, bin, unhex(k + 4, bin));
    else
        pulsarc_msg_set_key(m, k);
    pulsarc_msgid_t id;
    ck_assert_int_eq(pulsarc_producer_send(p, m, &id), PULSARC_OK);
    pulsarc_msg_destroy(m);
    return id.partition;
}

/* _i: 0 JavaStringHash, 1 Murmur3_32Hash */
START_TEST(test_key_routing_matches_java) {
    if (!java_available())
        return;
    const char *scheme = _i ? "Murmur3_32Hash" : "JavaStringHash";
    const char *topic = pct_topic("interop-keys");
    char np[8];
    snprintf(np, sizeof np, "%d", NPARTS);
    int code = pct_admin("PUT", topic_path(topic, "/partitions"), np);
    ck_assert_msg(code == 204 || code == 200, "partitioned topic: HTTP %d", code);
    char keys[NKEYS][64], args[8192];
    key_list(keys);
    int n = snprintf(args, sizeof args, "keys %s %s %s", pct_service_url(), scheme, topic);
    for (int i = 0; i < NKEYS; i++)
        n += snprintf(args + n, sizeof args - (size_t)n, " '%s'", keys[i]);
    ck_assert_int_eq(run_java(args), 0);
    pulsarc_client_t *c = pct_client();
    int java_part[NKEYS];
    for (int i = 0; i < NKEYS; i++)
        java_part[i] = -1;
    for (int part = 0; part < NPARTS; part++) {
        char name[512];
        snprintf(name, sizeof name, "%s-partition-%d", topic, part);
        pulsarc_consumer_t *cons = make_consumer(c, name, "Exclusive");
        pulsarc_msg_t *m = NULL;
        while (pulsarc_consumer_receive(cons, &m, 2000) == PULSARC_OK) {
            for (int i = 0; i < NKEYS; i++)
                if (strcmp(pulsarc_msg_property(m, "key"), keys[i]) == 0)
                    java_part[i] = part;
            pulsarc_msg_destroy(m);
        }
        pulsarc_consumer_destroy(cons);
    }
    const char *kv[] = {"hashingScheme", scheme, "batchingEnabled", "false", NULL};
    pulsarc_producer_t *p = make_producer(c, topic, kv);
    for (int i = 0; i < NKEYS; i++) {
        ck_assert_msg(java_part[i] >= 0, "Java's message for key '%s' not found", keys[i]);
        int mine = pulsarc_partition(p, keys[i]);
        ck_assert_msg(mine == java_part[i], "%s key '%s': Java chose %d, pulsarc %d", scheme,
                      keys[i], java_part[i], mine);
    }
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("producer-interop");
    TCase *t = tcase_create("java");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_java_reads_pulsarc);
    tcase_add_test(t, test_pulsarc_reads_java);
    tcase_add_loop_test(t, test_key_routing_matches_java, 0, 2);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
