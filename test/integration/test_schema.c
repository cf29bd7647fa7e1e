/*
 * Schemas against the live broker's registry: a producer's declared schema
 * becomes the topic's; consumers and producers declaring another type are
 * refused with IncompatibleSchema and the broker's words; an Avro record
 * evolves compatibly (new version, carried by each message) and an
 * incompatible change is refused; undeclared (BYTES) clients still work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char *AVRO_V1 =
    "{\"type\":\"record\",\"name\":\"Reading\",\"namespace\":\"pulsarc.test\",\"fields\":["
    "{\"name\":\"sensor\",\"type\":\"string\"},{\"name\":\"value\",\"type\":\"int\"}]}";
/* v1 plus a field with a default: readable both ways (FULL compatibility). */
static const char *AVRO_V2 =
    "{\"type\":\"record\",\"name\":\"Reading\",\"namespace\":\"pulsarc.test\",\"fields\":["
    "{\"name\":\"sensor\",\"type\":\"string\"},{\"name\":\"value\",\"type\":\"int\"},"
    "{\"name\":\"unit\",\"type\":\"string\",\"default\":\"C\"}]}";
/* value changes type without a default: incompatible. */
static const char *AVRO_BAD =
    "{\"type\":\"record\",\"name\":\"Reading\",\"namespace\":\"pulsarc.test\",\"fields\":["
    "{\"name\":\"sensor\",\"type\":\"string\"},{\"name\":\"value\",\"type\":\"bytes\"}]}";

static pulsarc_conf_t *schema_conf(const char *type, const char *definition) {
    const char *kv[] = {"schemaType", type, "schemaDefinition", definition ? definition : "",
                        "subscriptionInitialPosition", "Earliest", "batchingEnabled", "false", NULL};
    pulsarc_conf_t *c = pulsarc_conf_new();
    char err[256];
    for (size_t i = 0; kv[i]; i += 2) {
        if (!strcmp(kv[i], "schemaType") && !type)
            continue;
        ck_assert_msg(pulsarc_conf_set(c, kv[i], kv[i + 1], err, sizeof err) == PULSARC_OK, "%s", err);
    }
    return c;
}

static pulsarc_err_t try_producer(pulsarc_client_t *c, const char *topic, const char *type,
                                  const char *def, pulsarc_producer_t **p, char *err, size_t el) {
    pulsarc_conf_t *conf = schema_conf(type, def);
    *p = NULL;
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, p, err, el);
    pulsarc_conf_destroy(conf);
    return e;
}

static pulsarc_err_t try_consumer(pulsarc_client_t *c, const char *topic, const char *sub,
                                  const char *type, const char *def, pulsarc_consumer_t **cons,
                                  char *err, size_t el) {
    pulsarc_conf_t *conf = schema_conf(type, def);
    *cons = NULL;
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, sub, conf, cons, err, el);
    pulsarc_conf_destroy(conf);
    return e;
}

static void send_text(pulsarc_producer_t *p, const char *text) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, text, strlen(text), PULSARC_MSG_F_COPY);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
    pulsarc_msg_destroy(m);
}

/* The schema version a received message carries, as a number (-1: none). */
static long long version_of(const pulsarc_msg_t *m) {
    size_t len = 0;
    const unsigned char *v = pulsarc_msg_schema_version(m, &len);
    if (!v)
        return -1;
    long long x = 0;
    for (size_t i = 0; i < len; i++)
        x = x << 8 | v[i];
    return x;
}

START_TEST(test_declared_type_is_enforced) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("schema-string");
    char err[512];
    pulsarc_producer_t *p;
    ck_assert_msg(try_producer(c, t, "STRING", NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    send_text(p, "hello");
    pulsarc_consumer_t *cons;
    /* Another type is refused, with the broker's reason. */
    pulsarc_err_t e = try_consumer(c, t, "s-int", "INT64", NULL, &cons, err, sizeof err);
    printf("[schema] INT64 consumer on a STRING topic: %s (%s)\n", pulsarc_errname(e), err);
    ck_assert_int_eq(e, PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA);
    ck_assert_ptr_null(cons);
    pulsarc_producer_t *q;
    e = try_producer(c, t, "INT64", NULL, &q, err, sizeof err);
    ck_assert_int_eq(e, PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA);
    ck_assert_ptr_null(q);
    /* The same type, and an undeclared (BYTES) consumer, are accepted. */
    ck_assert_msg(try_consumer(c, t, "s-str", "STRING", NULL, &cons, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 5000), PULSARC_OK);
    ck_assert_int_eq(version_of(m), 0);
    pulsarc_msg_destroy(m);
    pulsarc_consumer_destroy(cons);
    ck_assert_msg(try_consumer(c, t, "s-bytes", NULL, NULL, &cons, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    pulsarc_consumer_destroy(cons);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}
END_TEST

START_TEST(test_avro_evolution) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("schema-avro");
    char err[512];
    pulsarc_consumer_t *cons;
    ck_assert_msg(try_consumer(c, t, "s", "AVRO", AVRO_V1, &cons, err, sizeof err) == PULSARC_OK,
                  "%s", err);
    pulsarc_producer_t *p1, *p2, *bad;
    ck_assert_msg(try_producer(c, t, "AVRO", AVRO_V1, &p1, err, sizeof err) == PULSARC_OK, "%s", err);
    send_text(p1, "v1-bytes");
    ck_assert_msg(try_producer(c, t, "AVRO", AVRO_V2, &p2, err, sizeof err) == PULSARC_OK, "%s", err);
    send_text(p2, "v2-bytes");
    pulsarc_err_t e = try_producer(c, t, "AVRO", AVRO_BAD, &bad, err, sizeof err);
    printf("[schema] incompatible Avro change: %s (%s)\n", pulsarc_errname(e), err);
    ck_assert_int_eq(e, PULSARC_ERR_BROKER_INCOMPATIBLE_SCHEMA);
    ck_assert_ptr_nonnull(strstr(err, "ncompatib"));
    long long v[2];
    for (int i = 0; i < 2; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 5000), PULSARC_OK);
        v[i] = version_of(m);
        pulsarc_msg_destroy(m);
    }
    printf("[schema] versions carried: v1 producer %lld, v2 producer %lld\n", v[0], v[1]);
    ck_assert_int_eq(v[0], 0);
    ck_assert_int_eq(v[1], 1);
    pulsarc_producer_destroy(p1);
    pulsarc_producer_destroy(p2);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

/* Configuration mistakes are caught before anything reaches the broker. */
START_TEST(test_conf_errors_name_the_key) {
    pulsarc_client_t *c = pct_client();
    const char *t = pct_topic("schema-conf");
    char err[512];
    pulsarc_producer_t *p;
    ck_assert_int_eq(try_producer(c, t, "AVRO", NULL, &p, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "schemaDefinition"));
    ck_assert_int_eq(try_producer(c, t, "JSON", "not json", &p, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "JSON object"));
    ck_assert_int_eq(try_producer(c, t, "INT32", "{}", &p, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "takes no schemaDefinition"));
    pulsarc_consumer_t *cons;
    ck_assert_int_eq(try_consumer(c, t, "s", NULL, AVRO_V1, &cons, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "schemaType"));
    pulsarc_conf_t *conf = pulsarc_conf_new();
    ck_assert_int_eq(pulsarc_conf_set(conf, "schemaType", "XML", err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_nonnull(strstr(err, "schemaType"));
    pulsarc_conf_destroy(conf);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *schema_suite(void) {
    Suite *s = suite_create("live-schema");
    TCase *tc = tcase_create("schema");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_declared_type_is_enforced);
    tcase_add_test(tc, test_avro_evolution);
    tcase_add_test(tc, test_conf_errors_name_the_key);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(schema_suite)
