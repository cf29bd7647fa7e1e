/*
 * End-to-end encryption through the connector, as Flink's PulsarCrypto
 * gives it: a sink whose producers encrypt with the public key its key
 * reader supplies (pulsar.producer.encryptionKeys names the key), and a
 * source that decrypts with the private key its own key reader supplies.
 * Against the live broker:
 *  - what the sink stored is encrypted: a plain consumer with
 *    cryptoFailureAction=CONSUME gets entries marked encrypted, none equal
 *    to what was written (a batch stays one opaque entry without the key);
 *  - the source with the key reader emits every record, in clear, once;
 *  - a source without it emits nothing (FAIL holds the messages back) and
 *    the records are still there for the source that has the key.
 * Keys: a fresh RSA-2048 pair made with OpenSSL in memory per run.
 */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pulsarc/sink.h"
#include "pulsarc/source.h"
#include "testutil.h"

#define N 60

typedef struct keys {
    char pub[4096], priv[4096];
    size_t pub_len, priv_len;
    int public_calls, private_calls;
} keys_t;

static size_t pem_of(EVP_PKEY *k, int priv, char *out, size_t cap) {
    BIO *b = BIO_new(BIO_s_mem());
    int ok = priv ? PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL)
                  : PEM_write_bio_PUBKEY(b, k);
    ck_assert(ok == 1);
    int n = BIO_read(b, out, (int)cap);
    BIO_free(b);
    ck_assert(n > 0 && (size_t)n < cap);
    return (size_t)n;
}

static void make_keys(keys_t *k) {
    memset(k, 0, sizeof *k);
    EVP_PKEY *p = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    ck_assert_ptr_nonnull(p);
    k->pub_len = pem_of(p, 0, k->pub, sizeof k->pub);
    k->priv_len = pem_of(p, 1, k->priv, sizeof k->priv);
    EVP_PKEY_free(p);
}

/* The sink asks for the public key, the source for the private one, of "sinkkey" only. */
static long key_reader(const char *name, int is_private, const char *const *meta_kv,
                       size_t n_meta, char *buf, size_t cap, void *opaque) {
    keys_t *k = opaque;
    (void)meta_kv;
    (void)n_meta;
    if (strcmp(name, "sinkkey") != 0)
        return 0;
    const char *pem = is_private ? k->priv : k->pub;
    size_t len = is_private ? k->priv_len : k->pub_len;
    if (is_private)
        __atomic_add_fetch(&k->private_calls, 1, __ATOMIC_RELAXED);
    else
        __atomic_add_fetch(&k->public_calls, 1, __ATOMIC_RELAXED);
    if (len > cap)
        return -1;
    memcpy(buf, pem, len);
    return (long)len;
}

static pulsarc_err_t ser(void *opaque, const void *element, pulsarc_msg_t *m) {
    (void)opaque;
    return pulsarc_msg_set_payload(m, element, strlen(element), PULSARC_MSG_F_COPY);
}

static void sink_writes(const char *topic, keys_t *k) {
    pulsarc_sink_builder_t *b = pulsarc_sink_builder_new();
    const char *topics[] = {topic};
    char err[256];
    ck_assert_int_eq(pulsarc_sink_builder_set_topics(b, topics, 1), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_service_url(b, pct_service_url()), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_admin_url(b, pct_admin_url()), PULSARC_OK);
    ck_assert_int_eq(pulsarc_sink_builder_set_serializer(b, ser, NULL), PULSARC_OK);
    ck_assert_msg(pulsarc_sink_builder_set_config(b, "pulsar.producer.encryptionKeys", "sinkkey",
                                                  err, sizeof err) == PULSARC_OK, "%s", err);
    ck_assert_int_eq(pulsarc_sink_builder_set_crypto_key_reader(b, NULL, NULL),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_sink_builder_set_crypto_key_reader(b, key_reader, k), PULSARC_OK);
    pulsarc_sink_t *sink = NULL;
    ck_assert_msg(pulsarc_sink_builder_build(b, NULL, 0, &sink, err, sizeof err) == PULSARC_OK,
                  "build: %s", err);
    pulsarc_sink_builder_destroy(b);
    char body[32];
    for (int i = 0; i < N; i++) {
        snprintf(body, sizeof body, "c%d", i);
        ck_assert_msg(pulsarc_sink_write(sink, body, 0, err, sizeof err) == PULSARC_OK,
                      "write: %s", err);
    }
    ck_assert_msg(pulsarc_sink_close(sink, err, sizeof err) == PULSARC_OK, "close: %s", err);
    pulsarc_sink_destroy(sink);
}

/* What the broker stored, read without the key: entries, every one still encrypted. */
static int count_stored_encrypted(pulsarc_client_t *c, const char *topic) {
    pulsarc_conf_t *conf = pct_conf((const char *const[]){
        "subscriptionInitialPosition", "Earliest", "cryptoFailureAction", "CONSUME", NULL});
    pulsarc_consumer_t *cons = NULL;
    char err[256];
    ck_assert_msg(pulsarc_consumer_new(c, topic, "raw", conf, &cons, err, sizeof err) ==
                      PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    int n = 0;
    pulsarc_msg_t *m;
    while (pulsarc_consumer_receive(cons, &m, 3000) == PULSARC_OK) {
        ck_assert_int_eq(pulsarc_msg_is_encrypted(m), 1);
        ck_assert(pulsarc_msg_len(m) < 2 || memcmp(pulsarc_msg_payload(m), "c", 1) != 0 ||
                  pulsarc_msg_len(m) > 8);
        n++;
        pulsarc_msg_destroy(m);
    }
    pulsarc_consumer_destroy(cons);
    return n;
}

static pulsarc_source_t *source(pulsarc_client_t *c, const char *topic, const char *sub,
                                keys_t *k) {
    pulsarc_source_conf_t *conf = pulsarc_source_conf_new();
    char err[256];
    ck_assert_int_eq(pulsarc_source_conf_add_topic(conf, topic), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set(conf, "pulsar.consumer.subscriptionName", sub, err,
                                             sizeof err), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set(conf, "pulsar.source.maxFetchTime", "1000", err,
                                             sizeof err), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set_crypto_key_reader(conf, NULL, NULL),
                     PULSARC_ERR_INVALID_ARG);
    if (k)
        ck_assert_int_eq(pulsarc_source_conf_set_crypto_key_reader(conf, key_reader, k),
                         PULSARC_OK);
    pulsarc_source_t *s = NULL;
    pulsarc_err_t e = pulsarc_source_new(c, conf, NULL, 0, &s, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "source_new: %s (%s)", pulsarc_errname(e), err);
    pulsarc_source_conf_destroy(conf);
    return s;
}

/* Fetches until two empty fetches in a row; counts "c<i>" records, each index once. */
static int drain(pulsarc_source_t *src, int *seen, int *other) {
    int count = 0;
    pulsarc_msg_t *out[64];
    for (int idle = 0; idle < 2;) {
        size_t n = 0;
        pulsarc_err_t e = pulsarc_source_fetch(src, out, 64, &n);
        ck_assert_msg(e == PULSARC_OK, "fetch: %s", pulsarc_errname(e));
        idle = n == 0 ? idle + 1 : 0;
        for (size_t i = 0; i < n; i++) {
            char text[16] = "";
            size_t len = pulsarc_msg_len(out[i]);
            if (len < sizeof text)
                memcpy(text, pulsarc_msg_payload(out[i]), len);
            int x = text[0] == 'c' ? atoi(text + 1) : -1;
            if (x >= 0 && x < N && !pulsarc_msg_is_encrypted(out[i]))
                seen[x]++;
            else
                (*other)++;
            count++;
            pulsarc_msg_destroy(out[i]);
        }
    }
    return count;
}

START_TEST(test_sink_encrypts_source_decrypts) {
    keys_t k;
    make_keys(&k);
    char topic[512];
    snprintf(topic, sizeof topic, "persistent://public/default/%s", pct_topic("conn-crypto"));
    sink_writes(topic, &k);
    ck_assert_int_ge(k.public_calls, 1);
    pulsarc_client_t *c = pct_client();
    int stored = count_stored_encrypted(c, topic);

    int seen[N] = {0}, other = 0;
    pulsarc_source_t *blind = source(c, topic, "no-key", NULL);
    int blind_count = drain(blind, seen, &other);
    pulsarc_source_destroy(blind);

    pulsarc_source_t *src = source(c, topic, "with-key", &k);
    int count = drain(src, seen, &other);
    pulsarc_source_destroy(src);
    int once = 0;
    for (int i = 0; i < N; i++)
        once += seen[i] == 1;
    printf("connector-crypto: written=%d stored_encrypted_entries=%d without_key=%d with_key=%d "
           "in_clear_once=%d other=%d key_reader public=%d private=%d\n",
           N, stored, blind_count, count, once, other, k.public_calls, k.private_calls);
    ck_assert_int_ge(stored, 1);
    ck_assert_int_eq(blind_count, 0);
    ck_assert_int_eq(other, 0);
    ck_assert_int_eq(once, N);
    ck_assert_int_eq(count, N);
    ck_assert_int_ge(k.private_calls, 1);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("live-connector-crypto");
    TCase *t = tcase_create("crypto");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_sink_encrypts_source_decrypts);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
