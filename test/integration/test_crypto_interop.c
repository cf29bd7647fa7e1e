/*
 * End-to-end encryption on the live broker, and with the Java client
 * (pulsar-client from Maven, driven by test/interop/run.sh with
 * CryptoInterop.java). Keys come from the openssl command line
 * (test/interop/gen-crypto-keys.sh): RSA-2048, EC secp256k1, EC P-256.
 *   - Java encrypts for all three keys (single, batched, compressed,
 *     chunked): pulsarc decrypts byte-exact holding any one of them;
 *   - pulsarc encrypts the same ways: Java decrypts byte-exact with the
 *     RSA key, and with the P-256 key;
 *   - the consumer's crypto-failure actions on the broker: FAIL leaves the
 *     message unacked (a consumer with the key gets it later), DISCARD acks
 *     it, CONSUME delivers it encrypted and marked;
 *   - bad key settings fail producer/consumer creation naming the option.
 * The pattern is shared with CryptoInterop.java. The large message does not
 * compress, so that both clients really chunk it (broker maxMessageSize 1 MB).
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "producer_util.h"

#define N_MSGS 60
#define LARGE 1500000

static char keydir[64];
static const char *const key_names[] = {"rsa", "eck1", "ecp256"};
static const char *const key_files[] = {"rsa", "ec-k1", "ec-p256"};

static void make_keys(void) {
    snprintf(keydir, sizeof keydir, "/tmp/pulsarc-crypto-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(keydir));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "bash test/interop/gen-crypto-keys.sh %s", keydir);
    ck_assert_int_eq(system(cmd), 0);
}

static void remove_keys(void) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", keydir);
    ck_assert_int_eq(system(cmd), 0);
}

/* "name=dir/file.pem,..." for the keys in mask (bit i: key i). */
static const char *key_spec(unsigned mask, int pub, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < 3; i++)
        if (mask & (1u << i))
            n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s/%s%s", n ? "," : "", key_names[i],
                                  keydir, key_files[i], pub ? ".pub.pem" : ".pem");
    return buf;
}

static size_t pattern(int i, uint8_t *buf) {
    size_t len = 1 + (size_t)(i * 37) % 700;
    for (size_t k = 0; k < len; k++)
        buf[k] = (uint8_t)((k * 31 + (size_t)i * 7) & 0xff);
    return len;
}

static uint8_t *large_pattern(void) {
    uint8_t *b = malloc(LARGE);
    for (uint64_t k = 0; k < LARGE; k++) { /* incompressible, so that it is really chunked */
        uint64_t v = k * 0x9E3779B97F4A7C15ULL;
        v ^= v >> 29;
        v *= 0xBF58476D1CE4E5B9ULL;
        v ^= v >> 32;
        b[k] = (uint8_t)v;
    }
    return b;
}

static int run_java(const char *args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "PULSARC_INTEROP_MAIN=CryptoInterop.java bash test/interop/run.sh %s",
             args);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int java_available(void) {
    const char *f = getenv("PULSARC_BROKER_CLASSPATH_FILE");
    if ((f && access(f, R_OK) == 0) || access("test/broker/.work/classpath.txt", R_OK) == 0)
        return 1;
    printf("crypto interop: skipped, no broker classpath file (run under "
           "test/broker/run-with-broker.sh)\n");
    return 0;
}

/* Topic names tell CryptoInterop.java the codec, batching or chunking. */
static const char *const variants[] = {"none-single", "lz4-batch", "zstd-single", "zlib-batch",
                                       "snappy-batch", "chunk"};
#define N_VARIANTS 6

static void topic_names(const char *who, char names[N_VARIANTS][256]) {
    const char *base = pct_topic(who);
    for (int i = 0; i < N_VARIANTS; i++)
        snprintf(names[i], 256, "%s-%s-x", base, variants[i]);
}

static pulsarc_consumer_t *crypto_consumer(pulsarc_client_t *c, const char *topic, const char *sub,
                                           const char *priv_spec, const char *action) {
    const char *kv[] = {"subscriptionInitialPosition", "Earliest", "cryptoPrivateKeyPath",
                        priv_spec, "cryptoFailureAction", action, NULL};
    pulsarc_conf_t *cc = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, sub, cc, &cons, err, sizeof err);
    pulsarc_conf_destroy(cc);
    ck_assert_msg(e == PULSARC_OK, "consumer on %s: %s", topic, err);
    return cons;
}

static void check_variant(pulsarc_consumer_t *cons, const char *topic, int chunk) {
    for (int i = 0; i < (chunk ? 1 : N_MSGS); i++) {
        pulsarc_msg_t *m = receive_one(cons, i);
        ck_assert_int_eq(pulsarc_msg_is_encrypted(m), 0);
        if (chunk) {
            uint8_t *want = large_pattern();
            ck_assert_uint_eq(pulsarc_msg_len(m), LARGE);
            ck_assert_msg(memcmp(pulsarc_msg_payload(m), want, LARGE) == 0, "%s: large payload",
                          topic);
            free(want);
        } else {
            uint8_t buf[1024];
            size_t len = pattern(i, buf);
            ck_assert_msg(pulsarc_msg_len(m) == len &&
                              memcmp(pulsarc_msg_payload(m), buf, len) == 0,
                          "%s: payload of #%d (%zu bytes)", topic, i, pulsarc_msg_len(m));
            char v[16];
            snprintf(v, sizeof v, "%d", i);
            ck_assert_str_eq(pulsarc_msg_property(m, "i"), v);
        }
        pulsarc_msg_destroy(m);
    }
    expect_no_more(cons);
}

/* Java encrypts for all three keys; pulsarc reads each topic once per key,
 * holding only that key. */
START_TEST(test_pulsarc_decrypts_java) {
    if (!java_available())
        return;
    char names[N_VARIANTS][256], args[8192], spec[1024];
    topic_names("crypto-j", names);
    int n = snprintf(args, sizeof args, "produce %s %d %s", pct_service_url(), N_MSGS,
                     key_spec(7, 1, spec, sizeof spec));
    for (int i = 0; i < N_VARIANTS; i++)
        n += snprintf(args + n, sizeof args - (size_t)n, " %s", names[i]);
    ck_assert_int_eq(run_java(args), 0);
    pulsarc_client_t *c = pct_client();
    for (int t = 0; t < N_VARIANTS; t++)
        for (int k = 0; k < 3; k++) {
            pulsarc_consumer_t *cons =
                crypto_consumer(c, names[t], key_names[k], key_spec(1u << k, 0, spec, sizeof spec),
                                "FAIL");
            check_variant(cons, names[t], t == N_VARIANTS - 1);
            pulsarc_consumer_destroy(cons);
        }
    pulsarc_client_destroy(c);
}
END_TEST

static pulsarc_producer_t *crypto_producer(pulsarc_client_t *c, const char *topic,
                                           const char *variant, unsigned keys) {
    char spec[1024], names[64] = "", codec[16] = "NONE";
    for (int i = 0; i < 3; i++)
        if (keys & (1u << i))
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? "," : "", key_names[i]);
    int chunk = strcmp(variant, "chunk") == 0;
    int batch = strstr(variant, "batch") != NULL;
    if (chunk)
        snprintf(codec, sizeof codec, "LZ4");
    else
        for (size_t k = 0; variant[k] && variant[k] != '-'; k++)
            codec[k] = (char)(variant[k] >= 'a' ? variant[k] - 32 : variant[k]), codec[k + 1] = 0;
    const char *kv[] = {"encryptionKeys", names, "cryptoPublicKeyPath",
                        key_spec(keys, 1, spec, sizeof spec), "compressionType", codec,
                        "batchingEnabled", batch ? "true" : "false", "batchingMaxMessages", "25",
                        "batchingMaxPublishDelayMicros", "10000000", "chunkingEnabled",
                        chunk ? "true" : "false", "chunkMaxMessageSize", "200000", NULL};
    return make_producer(c, topic, kv);
}

static void produce_variant(pulsarc_client_t *c, const char *topic, const char *variant,
                            unsigned keys) {
    pulsarc_producer_t *p = crypto_producer(c, topic, variant, keys);
    if (strcmp(variant, "chunk") == 0) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, large_pattern(), LARGE, PULSARC_MSG_F_FREE);
        pulsarc_msg_set_property(m, "i", "0");
        ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
        pulsarc_msg_destroy(m);
        pulsarc_producer_destroy(p);
        return;
    }
    sent_log_t log;
    sent_log_init(&log);
    for (int i = 0; i < N_MSGS; i++) {
        uint8_t buf[1024];
        char v[16];
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, buf, pattern(i, buf), PULSARC_MSG_F_COPY);
        snprintf(v, sizeof v, "%d", i);
        pulsarc_msg_set_property(m, "i", v);
        ck_assert_int_eq(pulsarc_producer_send_async(p, m, on_sent_cb, &log), PULSARC_OK);
    }
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    sent_log_wait(&log, N_MSGS);
    ck_assert_int_eq(log.ok, N_MSGS);
    pulsarc_producer_destroy(p);
}

/* pulsarc encrypts for all three keys; Java decrypts with RSA, then P-256. */
START_TEST(test_java_decrypts_pulsarc) {
    if (!java_available())
        return;
    char names[N_VARIANTS][256], args[8192], spec[1024];
    topic_names("crypto-c", names);
    pulsarc_client_t *c = pct_client();
    for (int t = 0; t < N_VARIANTS; t++)
        produce_variant(c, names[t], variants[t], 7);
    pulsarc_client_destroy(c);
    for (int k = 0; k < 3; k += 2) {
        int n = snprintf(args, sizeof args, "consume %s %d %s", pct_service_url(), N_MSGS,
                         key_spec(1u << k, 0, spec, sizeof spec));
        for (int t = 0; t < N_VARIANTS; t++)
            n += snprintf(args + n, sizeof args - (size_t)n, " %s", names[t]);
        ck_assert_msg(run_java(args) == 0, "Java could not read pulsarc's messages with key %s",
                      key_names[k]);
    }
}
END_TEST

/* Our own round trip on the broker, batched and compressed, one EC key. */
START_TEST(test_pulsarc_round_trip) {
    char names[N_VARIANTS][256], spec[1024];
    topic_names("crypto-cc", names);
    pulsarc_client_t *c = pct_client();
    for (int t = 0; t < N_VARIANTS; t++) {
        produce_variant(c, names[t], variants[t], 2);
        pulsarc_consumer_t *cons =
            crypto_consumer(c, names[t], "s", key_spec(2, 0, spec, sizeof spec), "FAIL");
        check_variant(cons, names[t], t == N_VARIANTS - 1);
        pulsarc_consumer_destroy(cons);
    }
    pulsarc_client_destroy(c);
}
END_TEST

static int receive_none(pulsarc_consumer_t *cons) {
    pulsarc_msg_t *m = NULL;
    pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, 2000);
    if (e == PULSARC_OK)
        pulsarc_msg_destroy(m);
    return e == PULSARC_ERR_NO_MESSAGE;
}

/* FAIL and DISCARD, with a consumer holding the wrong key and one holding
 * none, then a consumer with the right key on the same subscription: it
 * gets everything after FAIL (left unacked), nothing after DISCARD. */
START_TEST(test_failure_actions_fail_and_discard) {
    char spec[1024];
    const char *topic = pct_topic("crypto-fail");
    pulsarc_client_t *c = pct_client();
    produce_variant(c, topic, "lz4-batch", 1); /* for the RSA key only */
    const char *actions[] = {"FAIL", "DISCARD"};
    for (int a = 0; a < 2; a++) {
        for (int wrong = 0; wrong < 2; wrong++) {
            char sub[32];
            snprintf(sub, sizeof sub, "%s-%d", actions[a], wrong);
            /* wrong: only the EC keys; else no key at all */
            pulsarc_consumer_t *cons =
                crypto_consumer(c, topic, sub, wrong ? key_spec(6, 0, spec, sizeof spec) : "",
                                actions[a]);
            ck_assert_msg(receive_none(cons), "%s delivered an undecryptable message", sub);
            pulsarc_consumer_destroy(cons);
            cons = crypto_consumer(c, topic, sub, key_spec(1, 0, spec, sizeof spec), "FAIL");
            if (a == 0)
                check_variant(cons, topic, 0);
            else
                ck_assert_msg(receive_none(cons), "%s: DISCARD did not ack", sub);
            pulsarc_consumer_destroy(cons);
        }
    }
    pulsarc_client_destroy(c);
}
END_TEST

/* Chunks are encrypted one by one (as the Java client does), so under
 * DISCARD every chunk is acked with the decryption error on arrival: a
 * consumer with the key on the same subscription finds nothing left. */
START_TEST(test_discard_chunked) {
    char spec[1024];
    const char *topic = pct_topic("crypto-chunk-discard");
    pulsarc_client_t *c = pct_client();
    produce_variant(c, topic, "chunk", 1);
    pulsarc_consumer_t *cons = crypto_consumer(c, topic, "s", "", "DISCARD");
    ck_assert_msg(receive_none(cons), "an undecryptable chunked message was delivered");
    pulsarc_consumer_destroy(cons);
    cons = crypto_consumer(c, topic, "s", key_spec(1, 0, spec, sizeof spec), "FAIL");
    ck_assert_msg(receive_none(cons), "DISCARD left chunks unacked");
    pulsarc_consumer_destroy(cons);
    cons = crypto_consumer(c, topic, "other", key_spec(1, 0, spec, sizeof spec), "FAIL");
    check_variant(cons, topic, 1); /* the message itself was fine */
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* CONSUME: each entry arrives as one message, encrypted, marked; a batch
 * of 25 is one message of the batch's encrypted bytes. */
START_TEST(test_failure_action_consume) {
    const char *topic = pct_topic("crypto-consume");
    pulsarc_client_t *c = pct_client();
    produce_variant(c, topic, "none-single", 1);
    pulsarc_consumer_t *cons = crypto_consumer(c, topic, "s", "", "CONSUME");
    for (int i = 0; i < N_MSGS; i++) {
        pulsarc_msg_t *m = receive_one(cons, i);
        uint8_t buf[1024];
        size_t len = pattern(i, buf);
        ck_assert_int_eq(pulsarc_msg_is_encrypted(m), 1);
        ck_assert_uint_eq(pulsarc_msg_len(m), len + 16); /* ciphertext and GCM tag */
        ck_assert_int_ne(memcmp(pulsarc_msg_payload(m), buf, len), 0);
        pulsarc_msg_destroy(m);
    }
    pulsarc_consumer_destroy(cons);
    const char *btopic = pct_topic("crypto-consume-b");
    produce_variant(c, btopic, "lz4-batch", 1);
    cons = crypto_consumer(c, btopic, "s", "", "CONSUME");
    for (int i = 0; i < N_MSGS / 25 + 1; i++) { /* 25 + 25 + 10 */
        pulsarc_msg_t *m = receive_one(cons, i);
        ck_assert_int_eq(pulsarc_msg_is_encrypted(m), 1);
        pulsarc_msg_destroy(m);
    }
    expect_no_more(cons);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

static void expect_producer_error(pulsarc_client_t *c, const char *names, const char *spec,
                                  const char *needle) {
    const char *kv[] = {"encryptionKeys", names, "cryptoPublicKeyPath", spec, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[512] = "";
    pulsarc_err_t e = pulsarc_producer_new(c, pct_topic("crypto-bad"), conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_int_eq(e, PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(err, needle) != NULL, "'%s' does not name '%s'", err, needle);
}

START_TEST(test_bad_key_settings) {
    char spec[1024], path[256];
    pulsarc_client_t *c = pct_client();
    expect_producer_error(c, "rsa", "", "cryptoPublicKeyPath");
    expect_producer_error(c, "other", key_spec(1, 1, spec, sizeof spec), "other");
    snprintf(path, sizeof path, "%s/rsa.pem", keydir); /* a private key where a public one goes */
    expect_producer_error(c, "rsa", path, "private key");
    snprintf(path, sizeof path, "%s/missing.pem", keydir);
    expect_producer_error(c, "rsa", path, "missing.pem");
    snprintf(path, sizeof path, "%s/ec-k1.pub.pem", keydir);
    const char *kv[] = {"cryptoPrivateKeyPath", path, NULL};
    pulsarc_conf_t *cc = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[512] = "";
    ck_assert_int_eq(pulsarc_consumer_new(c, pct_topic("crypto-bad"), "s", cc, &cons, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "cryptoPrivateKeyPath") && strstr(err, "public key"), "%s", err);
    pulsarc_conf_destroy(cc);
    pulsarc_client_destroy(c);
}
END_TEST

typedef struct reader_log {
    int public_calls, private_calls; /* private: from the io thread, read after destroy */
} reader_log_t;

/* Keys by name from the generated files; the consumer side gets only eck1. */
static long file_reader(const char *name, int is_private, const char *const *meta_kv,
                        size_t n_meta, char *buf, size_t cap, void *opaque) {
    reader_log_t *log = opaque;
    (void)meta_kv;
    (void)n_meta;
    if (is_private)
        log->private_calls++;
    else
        log->public_calls++;
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, key_names[i]) != 0 || (is_private && i != 1))
            continue;
        char path[256];
        snprintf(path, sizeof path, "%s/%s%s", keydir, key_files[i], is_private ? ".pem" : ".pub.pem");
        FILE *f = fopen(path, "rb");
        if (!f)
            return -1;
        size_t n = fread(buf, 1, cap, f);
        fclose(f);
        return (long)n;
    }
    return 0;
}

/* Keys from pulsarc_conf_set_crypto_key_reader on both sides: the
 * producer asks once per name at creation, the consumer once per data key
 * (not per message), and only for names it has no fixed key for. */
START_TEST(test_key_reader_callbacks) {
    const char *topic = pct_topic("crypto-reader");
    pulsarc_client_t *c = pct_client();
    reader_log_t plog = {0, 0}, clog = {0, 0};
    const char *pkv[] = {"encryptionKeys", "rsa,eck1", "batchingEnabled", "false", NULL};
    pulsarc_conf_t *pc = pct_conf(pkv);
    ck_assert_int_eq(pulsarc_conf_set_crypto_key_reader(pc, file_reader, &plog), PULSARC_OK);
    pulsarc_producer_t *p = NULL;
    char err[512] = "";
    ck_assert_msg(pulsarc_producer_new(c, topic, pc, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(pc);
    ck_assert_int_eq(plog.public_calls, 2);
    for (int i = 0; i < N_MSGS; i++) {
        uint8_t buf[1024];
        char v[16];
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, buf, pattern(i, buf), PULSARC_MSG_F_COPY);
        snprintf(v, sizeof v, "%d", i);
        pulsarc_msg_set_property(m, "i", v);
        ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    pulsarc_producer_destroy(p);
    const char *ckv[] = {"subscriptionInitialPosition", "Earliest", NULL};
    pulsarc_conf_t *cc = pct_conf(ckv);
    ck_assert_int_eq(pulsarc_conf_set_crypto_key_reader(cc, file_reader, &clog), PULSARC_OK);
    pulsarc_consumer_t *cons = NULL;
    ck_assert_msg(pulsarc_consumer_new(c, topic, "s", cc, &cons, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    pulsarc_conf_destroy(cc);
    check_variant(cons, topic, 0);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    /* rsa first: the reader says it has no private key for it, then eck1 */
    ck_assert_int_eq(clog.private_calls, 2);
    ck_assert_int_eq(clog.public_calls, 0);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("crypto-interop");
    TCase *t = tcase_create("java");
    tcase_set_timeout(t, 300);
    tcase_add_unchecked_fixture(t, make_keys, remove_keys);
    tcase_add_test(t, test_pulsarc_decrypts_java);
    tcase_add_test(t, test_java_decrypts_pulsarc);
    suite_add_tcase(s, t);
    t = tcase_create("broker");
    tcase_set_timeout(t, 120);
    tcase_add_unchecked_fixture(t, make_keys, remove_keys);
    tcase_add_test(t, test_pulsarc_round_trip);
    tcase_add_test(t, test_failure_actions_fail_and_discard);
    tcase_add_test(t, test_failure_action_consume);
    tcase_add_test(t, test_discard_chunked);
    tcase_add_test(t, test_bad_key_settings);
    tcase_add_test(t, test_key_reader_callbacks);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
