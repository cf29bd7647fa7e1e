/*
 * Every public function (PULSARC_API in include/pulsarc.h and
 * include/pulsarc/admin.h) given NULL handles, NULL out-pointers, empty
 * strings and out-of-range values: it must return an error code (or the
 * documented neutral value for getters and destroy functions) and never
 * crash. Live handles come from the fake broker (test/faults/), so no real
 * broker is needed.
 *
 * Design notes
 *  - ERR(call) asserts the call returns something other than PULSARC_OK;
 *    NOCRASH(call) only runs it (for calls where NULL has a documented
 *    meaning, e.g. "conf may be NULL" or "NULL unsets").
 *  - The list of functions covered is COVERED[] below; test_list_complete
 *    reads the headers and prints every PULSARC_API function missing from
 *    it (a report, not a failure).
 *  - Check runs each test in a child process: a crash fails that test only
 *    and names it.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../faults/fake_broker.h"
#include "testutil.h"

#define ERR(call)                                                                         \
    do {                                                                                  \
        pulsarc_err_t e_ = (call);                                                        \
        ck_assert_msg(e_ != PULSARC_OK, "%s returned OK", #call);                          \
    } while (0)
#define NOCRASH(call) ((void)(call))

static char errbuf[256];
#define EB errbuf, sizeof errbuf

/* ---------- the coverage list ---------- */

static const char *const COVERED[] = {
    "pulsarc_version", "pulsarc_strerror", "pulsarc_errname", "pulsarc_err_is_retriable",
    "pulsarc_conf_new", "pulsarc_conf_dup", "pulsarc_conf_destroy", "pulsarc_conf_set",
    "pulsarc_conf_get", "pulsarc_conf_set_token_supplier", "pulsarc_msgid_earliest",
    "pulsarc_msgid_latest", "pulsarc_msgid_compare", "pulsarc_msgid_format", "pulsarc_msgid_parse",
    "pulsarc_msg_new", "pulsarc_msg_destroy", "pulsarc_msg_set_payload", "pulsarc_msg_set_key",
    "pulsarc_msg_set_key_bytes", "pulsarc_msg_set_ordering_key", "pulsarc_msg_set_deliver_at",
    "pulsarc_msg_set_deliver_after", "pulsarc_msg_set_replication_clusters",
    "pulsarc_msg_disable_replication", "pulsarc_msg_set_null_value", "pulsarc_msg_set_property",
    "pulsarc_msg_set_event_time", "pulsarc_msg_set_sequence_id", "pulsarc_msg_payload",
    "pulsarc_msg_len", "pulsarc_msg_key", "pulsarc_msg_key_bytes", "pulsarc_msg_ordering_key",
    "pulsarc_msg_schema_version",
    "pulsarc_msg_is_null_value", "pulsarc_msg_deliver_at", "pulsarc_msg_property",
    "pulsarc_msg_property_count", "pulsarc_msg_property_at", "pulsarc_msg_id",
    "pulsarc_msg_publish_time", "pulsarc_msg_event_time", "pulsarc_msg_sequence_id",
    "pulsarc_msg_redelivery_count", "pulsarc_msg_producer_name", "pulsarc_msg_topic",
    "pulsarc_client_new", "pulsarc_client_close", "pulsarc_client_destroy",
    "pulsarc_client_partitions", "pulsarc_client_poll", "pulsarc_producer_new",
    "pulsarc_producer_send", "pulsarc_producer_send_async", "pulsarc_producer_flush",
    "pulsarc_producer_flush_async",
    "pulsarc_producer_name", "pulsarc_producer_topic", "pulsarc_producer_last_sequence_id",
    "pulsarc_producer_close", "pulsarc_producer_destroy", "pulsarc_producer_set_router",
    "pulsarc_producer_partitions", "pulsarc_producer_stats", "pulsarc_conf_set_message_listener",
    "pulsarc_conf_set_consumer_event_listener", "pulsarc_consumer_new",
    "pulsarc_consumer_new_multi", "pulsarc_consumer_new_pattern", "pulsarc_consumer_receive",
    "pulsarc_consumer_receive_async",
    "pulsarc_consumer_batch_receive", "pulsarc_consumer_ack_id", "pulsarc_consumer_ack",
    "pulsarc_consumer_ack_cumulative_id", "pulsarc_consumer_ack_cumulative",
    "pulsarc_consumer_nack_id", "pulsarc_consumer_nack", "pulsarc_consumer_reconsume_later",
    "pulsarc_consumer_redeliver_unacked", "pulsarc_consumer_seek", "pulsarc_consumer_seek_time",
    "pulsarc_consumer_last_message_id", "pulsarc_consumer_has_message_available",
    "pulsarc_consumer_is_connected", "pulsarc_consumer_stats", "pulsarc_consumer_unsubscribe",
    "pulsarc_consumer_topic", "pulsarc_consumer_subscription", "pulsarc_consumer_close",
    "pulsarc_consumer_destroy", "pulsarc_reader_new", "pulsarc_reader_read",
    "pulsarc_reader_has_message_available", "pulsarc_reader_seek", "pulsarc_reader_seek_time",
    "pulsarc_reader_consumer", "pulsarc_reader_close", "pulsarc_reader_destroy",
    "pulsarc_tableview_new", "pulsarc_tableview_get", "pulsarc_tableview_size",
    "pulsarc_tableview_for_each", "pulsarc_tableview_listen", "pulsarc_tableview_refresh",
    "pulsarc_tableview_stats", "pulsarc_tableview_close", "pulsarc_tableview_destroy",
    /* NULL arguments of these are checked beside their other tests: */
    "pulsarc_msgid_serialize", "pulsarc_msgid_deserialize",          /* test_msgid_wire.c */
    "pulsarc_txn_new", "pulsarc_txn_commit", "pulsarc_txn_abort", "pulsarc_txn_destroy",
    "pulsarc_txn_resume", "pulsarc_txn_release", "pulsarc_txn_id", "pulsarc_producer_send_txn",
    "pulsarc_producer_send_async_txn", "pulsarc_consumer_ack_id_txn",
    "pulsarc_consumer_ack_ids_txn", "pulsarc_consumer_ack_cumulative_id_txn",
    "pulsarc_consumer_ack_ids_txn_each", "pulsarc_client_txn_enabled", /* test_txn.c */
    "pulsarc_conf_check_schema",
    "pulsarc_client_metrics", "pulsarc_metrics_free",                 /* test_metrics.c */
    "pulsarc_conf_add_producer_interceptor", "pulsarc_conf_add_consumer_interceptor",
    "pulsarc_msg_clone",                                  /* test_interceptor_conf.c */
#ifdef PULSARC_WITH_CURL
    "pulsarc_admin_new", "pulsarc_admin_destroy", "pulsarc_admin_set_token", "pulsarc_admin_url",
    "pulsarc_admin_list_free", "pulsarc_admin_create_topic", "pulsarc_admin_create_partitioned_topic",
    "pulsarc_admin_delete_topic", "pulsarc_admin_delete_partitioned_topic",
    "pulsarc_admin_list_topics", "pulsarc_admin_list_partitioned_topics",
    "pulsarc_admin_partition_count", "pulsarc_admin_create_subscription",
    "pulsarc_admin_delete_subscription", "pulsarc_admin_list_subscriptions",
    "pulsarc_admin_reset_cursor_to_id", "pulsarc_admin_reset_cursor_to_time",
    "pulsarc_admin_topic_stats", "pulsarc_admin_topic_stats_free",
    "pulsarc_admin_subscription_backlog", "pulsarc_admin_create_tenant",
    "pulsarc_admin_delete_tenant", "pulsarc_admin_create_namespace",
    "pulsarc_admin_delete_namespace", "pulsarc_admin_namespace_set_deduplication",
    "pulsarc_admin_namespace_get_deduplication", "pulsarc_admin_namespace_set_retention",
    "pulsarc_admin_namespace_get_retention", "pulsarc_admin_namespace_set_delayed_delivery",
    "pulsarc_admin_namespace_get_delayed_delivery",
#endif
    NULL};

static int covered(const char *name) {
    for (size_t i = 0; COVERED[i]; i++)
        if (!strcmp(COVERED[i], name))
            return 1;
    return 0;
}

/* Scans a header for "PULSARC_API ... pulsarc_xxx(" and checks each name. */
static int check_header(const char *path, char *missing, size_t mlen) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    int bad = 0;
    for (char *p = strstr(text, "PULSARC_API "); p; p = strstr(p + 1, "PULSARC_API ")) {
        char *paren = strchr(p, '(');
        char *semi = strchr(p, ';');
        if (!paren || (semi && semi < paren))
            continue;
        char *end = paren;
        while (end > p && (end[-1] == ' ' || end[-1] == '\n'))
            end--;
        char *start = end;
        while (start > p && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
                             (start[-1] >= '0' && start[-1] <= '9')))
            start--;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(end - start), start);
        if (!strncmp(name, "pulsarc_", 8) && !covered(name)) {
            size_t l = strlen(missing);
            snprintf(missing + l, mlen - l, " %s", name);
            bad++;
        }
    }
    return bad;
}

START_TEST(test_list_complete) {
    char missing[4096] = "";
    int bad = check_header("include/pulsarc.h", missing, sizeof missing);
#ifdef PULSARC_WITH_CURL
    bad += check_header("include/pulsarc/admin.h", missing, sizeof missing);
#endif
    if (access("include/pulsarc.h", R_OK) != 0)
        printf("note: include/pulsarc.h not found from %s; list not checked\n", getcwd(missing, 256));
    /* A report, not a failure: the API grows in other hands (see the brief). */
    printf("counts: api functions not covered here: %d%s\n", bad, missing);
}
END_TEST

/* ---------- no handles needed ---------- */

START_TEST(test_errors_and_version) {
    ck_assert_ptr_nonnull(pulsarc_version());
    ck_assert_ptr_nonnull(pulsarc_strerror((pulsarc_err_t)12345));
    ck_assert_ptr_nonnull(pulsarc_strerror((pulsarc_err_t)-9999));
    ck_assert_ptr_nonnull(pulsarc_errname((pulsarc_err_t)12345));
    ck_assert_ptr_nonnull(pulsarc_errname((pulsarc_err_t)-9999));
    ck_assert_int_eq(pulsarc_err_is_retriable((pulsarc_err_t)12345), 0);
    ck_assert_int_eq(pulsarc_err_is_retriable((pulsarc_err_t)-9999), 0);
}
END_TEST

static pulsarc_err_t token_cb(void *o, char *buf, size_t *len) {
    (void)o, (void)buf;
    *len = 0;
    return PULSARC_OK;
}

START_TEST(test_conf) {
    pulsarc_conf_t *c = pulsarc_conf_new();
    ck_assert_ptr_nonnull(c);
    pulsarc_conf_destroy(pulsarc_conf_dup(NULL)); /* NULL or a default conf; no crash */
    pulsarc_conf_destroy(NULL);
    ERR(pulsarc_conf_set(NULL, "serviceUrl", "pulsar://h", EB));
    ERR(pulsarc_conf_set(c, NULL, "x", EB));
    ERR(pulsarc_conf_set(c, "serviceUrl", NULL, EB));
    ERR(pulsarc_conf_set(c, "", "x", EB));
    ERR(pulsarc_conf_set(c, "noSuchKey", "x", NULL, 0));
    ERR(pulsarc_conf_set(c, "operationTimeoutMs", "", EB));
    ERR(pulsarc_conf_set(c, "operationTimeoutMs", "-5", EB));
    ERR(pulsarc_conf_set(c, "operationTimeoutMs", "0", EB));
    ERR(pulsarc_conf_set(c, "operationTimeoutMs", "99999999999999999999999", EB));
    ERR(pulsarc_conf_set(c, "operationTimeoutMs", "12abc", EB));
    ERR(pulsarc_conf_set(c, "receiverQueueSize", "-1", EB));
    ERR(pulsarc_conf_set(c, "batchingEnabled", "maybe", EB));
    ERR(pulsarc_conf_set(c, "compressionType", "BROTLI", EB));
    ERR(pulsarc_conf_set(c, "subscriptionType", "", EB));
    char buf[8];
    size_t len = sizeof buf;
    ERR(pulsarc_conf_get(NULL, "serviceUrl", buf, &len));
    ERR(pulsarc_conf_get(c, NULL, buf, &len));
    ERR(pulsarc_conf_get(c, "", buf, &len));
    ERR(pulsarc_conf_get(c, "noSuchKey", buf, &len));
    ERR(pulsarc_conf_get(c, "serviceUrl", buf, NULL));
    len = 0;
    NOCRASH(pulsarc_conf_get(c, "operationTimeoutMs", NULL, &len)); /* size query */
    len = 2;
    ERR(pulsarc_conf_get(c, "operationTimeoutMs", buf, &len)); /* "30000" does not fit */
    ERR(pulsarc_conf_set_token_supplier(NULL, token_cb, NULL));
    NOCRASH(pulsarc_conf_set_token_supplier(c, NULL, NULL)); /* NULL unsets */
    ERR(pulsarc_conf_set_message_listener(NULL, NULL, NULL));
    ERR(pulsarc_conf_set_consumer_event_listener(NULL, NULL, NULL));
    NOCRASH(pulsarc_conf_set_message_listener(c, NULL, NULL));
    NOCRASH(pulsarc_conf_set_consumer_event_listener(c, NULL, NULL));
    ERR(pulsarc_conf_check_schema(NULL, EB));
    ck_assert_int_eq(pulsarc_conf_check_schema(c, NULL, 0), PULSARC_OK); /* BYTES: nothing declared */
    ck_assert_int_eq(pulsarc_conf_set(c, "schemaType", "AVRO", EB), PULSARC_OK);
    ck_assert_int_eq(pulsarc_conf_check_schema(c, EB), PULSARC_ERR_BAD_CONFIG); /* no definition */
    ck_assert_ptr_nonnull(strstr(errbuf, "AVRO"));
    pulsarc_conf_destroy(c);
}
END_TEST

START_TEST(test_msgid) {
    pulsarc_msgid_t a = pulsarc_msgid_earliest(), b = pulsarc_msgid_latest();
    ck_assert_int_lt(pulsarc_msgid_compare(&a, &b), 0);
    NOCRASH(pulsarc_msgid_compare(NULL, &b));
    NOCRASH(pulsarc_msgid_compare(&a, NULL));
    NOCRASH(pulsarc_msgid_compare(NULL, NULL));
    char buf[64];
    ERR(pulsarc_msgid_format(NULL, buf, sizeof buf));
    ERR(pulsarc_msgid_format(&a, NULL, sizeof buf));
    ERR(pulsarc_msgid_format(&a, buf, 0));
    ERR(pulsarc_msgid_format(&b, buf, 3));
    pulsarc_msgid_t out;
    ERR(pulsarc_msgid_parse(NULL, &out));
    ERR(pulsarc_msgid_parse("1:2", NULL));
    ERR(pulsarc_msgid_parse("", &out));
    ERR(pulsarc_msgid_parse("1", &out));
    ERR(pulsarc_msgid_parse("1:2:3:4:5", &out));
    ERR(pulsarc_msgid_parse("a:b", &out));
    ERR(pulsarc_msgid_parse("1::2", &out));
    ERR(pulsarc_msgid_parse("99999999999999999999999:1", &out));
    ERR(pulsarc_msgid_parse("1:2:99999999999", &out));
}
END_TEST

START_TEST(test_msg_setters) {
    pulsarc_msg_destroy(NULL);
    ERR(pulsarc_msg_set_payload(NULL, "x", 1, 0));
    ERR(pulsarc_msg_set_key(NULL, "k"));
    ERR(pulsarc_msg_set_key_bytes(NULL, "k", 1));
    ERR(pulsarc_msg_set_ordering_key(NULL, "k", 1));
    ERR(pulsarc_msg_set_deliver_at(NULL, 1));
    ERR(pulsarc_msg_set_deliver_after(NULL, 1));
    const char *cl[] = {"c1", NULL};
    ERR(pulsarc_msg_set_replication_clusters(NULL, cl, 1));
    ERR(pulsarc_msg_disable_replication(NULL));
    ERR(pulsarc_msg_set_null_value(NULL));
    ERR(pulsarc_msg_set_property(NULL, "a", "b"));
    ERR(pulsarc_msg_set_event_time(NULL, 1));
    ERR(pulsarc_msg_set_sequence_id(NULL, 1));
    pulsarc_msg_t *m = pulsarc_msg_new();
    ck_assert_ptr_nonnull(m);
    ERR(pulsarc_msg_set_payload(m, NULL, 5, PULSARC_MSG_F_COPY));
    ERR(pulsarc_msg_set_payload(m, "x", 1, 0x100));
    NOCRASH(pulsarc_msg_set_payload(m, "x", 1, PULSARC_MSG_F_COPY)); /* COPY|FREE: see report */
    ERR(pulsarc_msg_set_payload(m, "x", SIZE_MAX, PULSARC_MSG_F_COPY)); /* refused before malloc */
    ERR(pulsarc_msg_set_payload(m, "x", 1, PULSARC_MSG_F_COPY | PULSARC_MSG_F_FREE));
    NOCRASH(pulsarc_msg_set_payload(m, NULL, 0, PULSARC_MSG_F_COPY));
    NOCRASH(pulsarc_msg_set_key(m, NULL));
    NOCRASH(pulsarc_msg_set_key(m, ""));
    ERR(pulsarc_msg_set_key_bytes(m, NULL, 4));
    ERR(pulsarc_msg_set_ordering_key(m, NULL, 4));
    ERR(pulsarc_msg_set_replication_clusters(m, NULL, 2));
    ERR(pulsarc_msg_set_replication_clusters(m, cl, 2)); /* second entry NULL */
    ERR(pulsarc_msg_set_property(m, NULL, "v"));
    ERR(pulsarc_msg_set_property(m, "n", NULL));
    ERR(pulsarc_msg_set_property(m, "", "v"));
    NOCRASH(pulsarc_msg_set_deliver_after(m, UINT64_MAX));
    pulsarc_msg_destroy(m);
}
END_TEST

START_TEST(test_msg_getters) {
    size_t len = 7;
    ck_assert_ptr_null(pulsarc_msg_payload(NULL));
    ck_assert_uint_eq(pulsarc_msg_len(NULL), 0);
    ck_assert_ptr_null(pulsarc_msg_key(NULL));
    ck_assert_ptr_null(pulsarc_msg_key_bytes(NULL, &len));
    ck_assert_ptr_null(pulsarc_msg_ordering_key(NULL, &len));
    ck_assert_ptr_null(pulsarc_msg_schema_version(NULL, &len));
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(pulsarc_msg_is_null_value(NULL), 0);
    ck_assert_uint_eq(pulsarc_msg_deliver_at(NULL), 0);
    ck_assert_ptr_null(pulsarc_msg_property(NULL, "a"));
    ck_assert_uint_eq(pulsarc_msg_property_count(NULL), 0);
    const char *n = NULL, *v = NULL;
    ERR(pulsarc_msg_property_at(NULL, 0, &n, &v));
    NOCRASH(pulsarc_msg_id(NULL));
    ck_assert_uint_eq(pulsarc_msg_publish_time(NULL), 0);
    ck_assert_uint_eq(pulsarc_msg_event_time(NULL), 0);
    NOCRASH(pulsarc_msg_sequence_id(NULL));
    ck_assert_uint_eq(pulsarc_msg_redelivery_count(NULL), 0);
    ck_assert_ptr_null(pulsarc_msg_producer_name(NULL));
    ck_assert_ptr_null(pulsarc_msg_topic(NULL));
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_property(m, "a", "b");
    ck_assert_ptr_null(pulsarc_msg_property(m, NULL));
    ck_assert_ptr_null(pulsarc_msg_property(m, ""));
    ERR(pulsarc_msg_property_at(m, 1, &n, &v));
    ERR(pulsarc_msg_property_at(m, SIZE_MAX, &n, &v));
    NOCRASH(pulsarc_msg_property_at(m, 0, NULL, NULL)); /* outputs optional */
    NOCRASH(pulsarc_msg_key_bytes(m, NULL));
    NOCRASH(pulsarc_msg_ordering_key(m, NULL));
    ck_assert_ptr_null(pulsarc_msg_schema_version(m, NULL)); /* nothing declared on a new message */
    pulsarc_msg_destroy(m);
}
END_TEST

/* ---------- handles, on the fake broker ---------- */

static pc_fb_t *fb;
static pulsarc_client_t *client;

static void fb_up(void) {
    fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    const char *kv[] = {"serviceUrl", pc_fb_url(fb), "operationTimeoutMs", "2000", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    ck_assert_int_eq(pulsarc_client_new(conf, &client, EB), PULSARC_OK);
    pulsarc_conf_destroy(conf);
}

static void fb_down(void) {
    pulsarc_client_destroy(client);
    client = NULL;
    pc_fb_destroy(fb);
    fb = NULL;
}

static void send_cb(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)err, (void)id, (void)msg;
    (*(int *)opaque)++;
}

static int route(const pulsarc_msg_t *m, int n, void *o) {
    (void)m, (void)o;
    return n - 1;
}

START_TEST(test_client) {
    pulsarc_client_t *c = NULL;
    ERR(pulsarc_client_new(NULL, NULL, EB));
    pulsarc_conf_t *conf = pulsarc_conf_new();
    ERR(pulsarc_client_new(conf, NULL, EB));
    pulsarc_conf_set(conf, "serviceUrl", "", NULL, 0);
    unsetenv("PULSAR_SERVICE_URL");
    ERR(pulsarc_client_new(conf, &c, EB)); /* no URL anywhere */
    ck_assert_ptr_null(c);
    pulsarc_conf_destroy(conf);
    ERR(pulsarc_client_close(NULL, 0));
    pulsarc_client_destroy(NULL);
    int n = -1;
    ERR(pulsarc_client_partitions(NULL, "t", &n, EB));
    ck_assert_int_le(pulsarc_client_poll(NULL, -5), 0);
    fb_up();
    ERR(pulsarc_client_partitions(client, NULL, &n, EB));
    ERR(pulsarc_client_partitions(client, "", &n, EB));
    ERR(pulsarc_client_partitions(client, "a/b/c/d/e", &n, EB));
    ERR(pulsarc_client_partitions(client, "t", NULL, EB));
    ck_assert_int_le(pulsarc_client_poll(client, -5), 0);
    ck_assert_int_le(pulsarc_client_poll(client, 0), 0);
    NOCRASH(pulsarc_client_close(client, -100));
    NOCRASH(pulsarc_client_close(client, 0)); /* twice */
    fb_down();
}
END_TEST

START_TEST(test_producer) {
    pulsarc_producer_t *p = NULL;
    ERR(pulsarc_producer_new(NULL, "t", NULL, &p, EB));
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msgid_t id;
    ERR(pulsarc_producer_send(NULL, m, &id));
    int calls = 0;
    ERR(pulsarc_producer_send_async(NULL, m, send_cb, &calls)); /* takes m */
    ERR(pulsarc_producer_flush(NULL, 0));
    ERR(pulsarc_producer_flush_async(NULL, NULL, NULL));
    ck_assert_ptr_null(pulsarc_producer_name(NULL));
    ck_assert_ptr_null(pulsarc_producer_topic(NULL));
    NOCRASH(pulsarc_producer_last_sequence_id(NULL));
    ERR(pulsarc_producer_close(NULL));
    pulsarc_producer_destroy(NULL);
    ERR(pulsarc_producer_set_router(NULL, route, NULL));
    ck_assert_int_eq(pulsarc_producer_partitions(NULL), 0);
    pulsarc_producer_stats_t st;
    ERR(pulsarc_producer_stats(NULL, &st));
    fb_up();
    ERR(pulsarc_producer_new(client, NULL, NULL, &p, EB));
    ERR(pulsarc_producer_new(client, "", NULL, &p, EB));
    ERR(pulsarc_producer_new(client, "bad://x/y/z", NULL, &p, EB));
    ERR(pulsarc_producer_new(client, "t", NULL, NULL, EB));
    pulsarc_conf_t *bad = pulsarc_conf_new();
    ck_assert_int_eq(pulsarc_producer_new(client, "t", bad, &p, EB), PULSARC_OK);
    pulsarc_conf_destroy(bad);
    ERR(pulsarc_producer_send(p, NULL, &id));
    ERR(pulsarc_producer_send_async(p, NULL, send_cb, &calls));
    NOCRASH(pulsarc_producer_flush(p, -1));
    NOCRASH(pulsarc_producer_flush_async(p, NULL, NULL)); /* no callback wanted */
    ERR(pulsarc_producer_set_router(p, route, NULL)); /* not partitioned */
    ERR(pulsarc_producer_stats(p, NULL));
    ck_assert_int_eq(pulsarc_producer_close(p), PULSARC_OK);
    m = pulsarc_msg_new();
    ERR(pulsarc_producer_send(p, m, &id)); /* closed */
    pulsarc_msg_destroy(m);
    NOCRASH(pulsarc_producer_close(p));
    pulsarc_producer_destroy(p);
    fb_down();
}
END_TEST

START_TEST(test_consumer) {
    pulsarc_consumer_t *c = NULL;
    ERR(pulsarc_consumer_new(NULL, "t", "s", NULL, &c, EB));
    const char *topics[] = {"a", "b"};
    ERR(pulsarc_consumer_new_multi(NULL, topics, 2, "s", NULL, &c, EB));
    ERR(pulsarc_consumer_new_pattern(NULL, "t.*", "s", NULL, &c, EB));
    pulsarc_msg_t *m = NULL;
    pulsarc_msgid_t id = pulsarc_msgid_earliest();
    ERR(pulsarc_consumer_receive(NULL, &m, 0));
    ERR(pulsarc_consumer_receive_async(NULL, NULL, NULL));
    size_t n = 0;
    pulsarc_msg_t *arr[4];
    ERR(pulsarc_consumer_batch_receive(NULL, arr, 4, &n));
    ERR(pulsarc_consumer_ack_id(NULL, &id));
    ERR(pulsarc_consumer_ack(NULL, NULL));
    ERR(pulsarc_consumer_ack_cumulative_id(NULL, &id));
    ERR(pulsarc_consumer_ack_cumulative(NULL, NULL));
    ERR(pulsarc_consumer_nack_id(NULL, &id));
    ERR(pulsarc_consumer_nack(NULL, NULL));
    ERR(pulsarc_consumer_reconsume_later(NULL, NULL, 10));
    ERR(pulsarc_consumer_redeliver_unacked(NULL));
    ERR(pulsarc_consumer_seek(NULL, &id));
    ERR(pulsarc_consumer_seek_time(NULL, 0));
    ERR(pulsarc_consumer_last_message_id(NULL, &id));
    int avail = 0;
    ERR(pulsarc_consumer_has_message_available(NULL, &avail));
    ck_assert_int_eq(pulsarc_consumer_is_connected(NULL), 0);
    pulsarc_consumer_stats_t st;
    ERR(pulsarc_consumer_stats(NULL, &st));
    ERR(pulsarc_consumer_unsubscribe(NULL));
    ck_assert_ptr_null(pulsarc_consumer_topic(NULL));
    ck_assert_ptr_null(pulsarc_consumer_subscription(NULL));
    ERR(pulsarc_consumer_close(NULL));
    pulsarc_consumer_destroy(NULL);
    fb_up();
    ERR(pulsarc_consumer_new(client, NULL, "s", NULL, &c, EB));
    ERR(pulsarc_consumer_new(client, "t", NULL, NULL, &c, EB));
    ERR(pulsarc_consumer_new(client, "t", "", NULL, &c, EB));
    ERR(pulsarc_consumer_new(client, "", "s", NULL, &c, EB));
    ERR(pulsarc_consumer_new(client, "t", "s", NULL, NULL, EB));
    ERR(pulsarc_consumer_new_multi(client, NULL, 2, "s", NULL, &c, EB));
    ERR(pulsarc_consumer_new_multi(client, topics, 0, "s", NULL, &c, EB));
    const char *with_null[] = {"a", NULL};
    ERR(pulsarc_consumer_new_multi(client, with_null, 2, "s", NULL, &c, EB));
    ERR(pulsarc_consumer_new_pattern(client, NULL, "s", NULL, &c, EB));
    ERR(pulsarc_consumer_new_pattern(client, "", "s", NULL, &c, EB));
    ERR(pulsarc_consumer_new_pattern(client, "persistent://public/default/([", "s", NULL, &c, EB));
    ck_assert_int_eq(pulsarc_consumer_new(client, "t", "s", NULL, &c, EB), PULSARC_OK);
    ERR(pulsarc_consumer_receive(c, NULL, 0));
    ERR(pulsarc_consumer_receive_async(c, NULL, NULL)); /* no callback to answer */
    ERR(pulsarc_consumer_batch_receive(c, NULL, 4, &n));
    ERR(pulsarc_consumer_batch_receive(c, arr, 4, NULL));
    NOCRASH(pulsarc_consumer_batch_receive(c, arr, 0, &n));
    ERR(pulsarc_consumer_ack_id(c, NULL));
    ERR(pulsarc_consumer_ack(c, NULL));
    ERR(pulsarc_consumer_ack_cumulative_id(c, NULL));
    ERR(pulsarc_consumer_ack_cumulative(c, NULL));
    ERR(pulsarc_consumer_nack_id(c, NULL));
    ERR(pulsarc_consumer_nack(c, NULL));
    ERR(pulsarc_consumer_reconsume_later(c, NULL, 10));
    ERR(pulsarc_consumer_seek(c, NULL));
    ERR(pulsarc_consumer_last_message_id(c, NULL));
    ERR(pulsarc_consumer_has_message_available(c, NULL));
    ERR(pulsarc_consumer_stats(c, NULL));
    ck_assert_int_eq(pulsarc_consumer_close(c), PULSARC_OK);
    ERR(pulsarc_consumer_receive(c, &m, 0)); /* closed */
    NOCRASH(pulsarc_consumer_close(c));
    pulsarc_consumer_destroy(c);
    fb_down();
}
END_TEST

START_TEST(test_reader) {
    pulsarc_reader_t *r = NULL;
    pulsarc_msgid_t start = pulsarc_msgid_earliest();
    ERR(pulsarc_reader_new(NULL, "t", &start, 0, NULL, &r, EB));
    pulsarc_msg_t *m = NULL;
    ERR(pulsarc_reader_read(NULL, &m, 0));
    int avail = 0;
    ERR(pulsarc_reader_has_message_available(NULL, &avail));
    ERR(pulsarc_reader_seek(NULL, &start));
    ERR(pulsarc_reader_seek_time(NULL, 0));
    ck_assert_ptr_null(pulsarc_reader_consumer(NULL));
    ERR(pulsarc_reader_close(NULL));
    pulsarc_reader_destroy(NULL);
    fb_up();
    ERR(pulsarc_reader_new(client, NULL, &start, 0, NULL, &r, EB));
    ERR(pulsarc_reader_new(client, "", &start, 0, NULL, &r, EB));
    ERR(pulsarc_reader_new(client, "t", NULL, 0, NULL, &r, EB));
    ERR(pulsarc_reader_new(client, "t", &start, 0, NULL, NULL, EB));
    ck_assert_int_eq(pulsarc_reader_new(client, "t", &start, 0, NULL, &r, EB), PULSARC_OK);
    ERR(pulsarc_reader_read(r, NULL, 0));
    ERR(pulsarc_reader_has_message_available(r, NULL));
    ERR(pulsarc_reader_seek(r, NULL));
    ck_assert_ptr_nonnull(pulsarc_reader_consumer(r));
    ck_assert_int_eq(pulsarc_reader_close(r), PULSARC_OK);
    NOCRASH(pulsarc_reader_close(r));
    pulsarc_reader_destroy(r);
    fb_down();
}
END_TEST

/* Live views are covered by test/integration/test_tableview.c. */
static void tv_cb(pulsarc_tableview_t *tv, const char *key, const void *value, size_t len,
                  void *opaque) {
    (void)tv, (void)key, (void)value, (void)len, (void)opaque;
}

START_TEST(test_tableview) {
    pulsarc_tableview_t *tv = NULL;
    ERR(pulsarc_tableview_new(NULL, "t", NULL, &tv, EB));
    ck_assert_ptr_null(tv);
    char buf[8];
    size_t len = 0;
    ERR(pulsarc_tableview_get(NULL, "k", buf, sizeof buf, &len));
    ck_assert_uint_eq(pulsarc_tableview_size(NULL), 0);
    ERR(pulsarc_tableview_for_each(NULL, tv_cb, NULL));
    ERR(pulsarc_tableview_listen(NULL, tv_cb, NULL));
    ERR(pulsarc_tableview_refresh(NULL, EB));
    pulsarc_tableview_stats_t st;
    ERR(pulsarc_tableview_stats(NULL, &st));
    ERR(pulsarc_tableview_close(NULL));
    pulsarc_tableview_destroy(NULL);
    fb_up();
    ERR(pulsarc_tableview_new(client, NULL, NULL, &tv, EB));
    ERR(pulsarc_tableview_new(client, "", NULL, &tv, EB));
    ERR(pulsarc_tableview_new(client, "t", NULL, NULL, EB));
    fb_down();
}
END_TEST

#ifdef PULSARC_WITH_CURL
START_TEST(test_admin) {
    pulsarc_admin_t *a = NULL;
    ERR(pulsarc_admin_new(NULL, NULL, EB));
    pulsarc_admin_destroy(NULL);
    ERR(pulsarc_admin_set_token(NULL, "t"));
    ck_assert_ptr_null(pulsarc_admin_url(NULL));
    pulsarc_admin_list_free(NULL);
    pulsarc_admin_topic_stats_free(NULL);
    const char *kv[] = {"webServiceUrl", "http://127.0.0.1:1", "operationTimeoutMs", "1000", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    ck_assert_int_eq(pulsarc_admin_new(conf, &a, EB), PULSARC_OK);
    pulsarc_conf_destroy(conf);
    pulsarc_admin_t *h[2] = {NULL, a};
    for (int i = 0; i < 2; i++) {
        pulsarc_admin_t *x = h[i];
        char **list = NULL;
        int n = 0, b = 0;
        int64_t v1 = 0, v2 = 0;
        pulsarc_admin_topic_stats_t *st = NULL;
        pulsarc_msgid_t id = pulsarc_msgid_earliest();
        ERR(pulsarc_admin_create_topic(x, NULL, EB));
        ERR(pulsarc_admin_create_topic(x, "", EB));
        ERR(pulsarc_admin_create_partitioned_topic(x, NULL, 2, EB));
        ERR(pulsarc_admin_create_partitioned_topic(x, "t", 0, EB));
        ERR(pulsarc_admin_create_partitioned_topic(x, "t", -3, EB));
        ERR(pulsarc_admin_delete_topic(x, NULL, 0, EB));
        ERR(pulsarc_admin_delete_partitioned_topic(x, "", 1, EB));
        ERR(pulsarc_admin_list_topics(x, NULL, &list, EB));
        ERR(pulsarc_admin_list_topics(x, "public/default", NULL, EB));
        ERR(pulsarc_admin_list_partitioned_topics(x, "", &list, EB));
        ERR(pulsarc_admin_partition_count(x, "t", NULL, EB));
        ERR(pulsarc_admin_partition_count(x, NULL, &n, EB));
        ERR(pulsarc_admin_create_subscription(x, "t", NULL, &id, EB));
        ERR(pulsarc_admin_create_subscription(x, "t", "", &id, EB));
        ERR(pulsarc_admin_delete_subscription(x, NULL, "s", 0, EB));
        ERR(pulsarc_admin_list_subscriptions(x, "t", NULL, EB));
        ERR(pulsarc_admin_reset_cursor_to_id(x, "t", "s", NULL, EB));
        ERR(pulsarc_admin_reset_cursor_to_time(x, "t", NULL, 0, EB));
        ERR(pulsarc_admin_topic_stats(x, "t", NULL, EB));
        ERR(pulsarc_admin_topic_stats(x, NULL, &st, EB));
        ERR(pulsarc_admin_subscription_backlog(x, "t", "s", NULL, EB));
        ERR(pulsarc_admin_create_tenant(x, NULL, "c", EB));
        ERR(pulsarc_admin_create_tenant(x, "", "c", EB));
        ERR(pulsarc_admin_delete_tenant(x, NULL, EB));
        ERR(pulsarc_admin_create_namespace(x, "", EB));
        ERR(pulsarc_admin_create_namespace(x, "no-slash", EB));
        ERR(pulsarc_admin_delete_namespace(x, NULL, 0, EB));
        ERR(pulsarc_admin_namespace_set_deduplication(x, NULL, 1, EB));
        ERR(pulsarc_admin_namespace_get_deduplication(x, "public/default", NULL, EB));
        ERR(pulsarc_admin_namespace_set_retention(x, "", 1, 1, EB));
        ERR(pulsarc_admin_namespace_get_retention(x, "public/default", NULL, &v2, EB));
        ERR(pulsarc_admin_namespace_get_retention(x, "public/default", &v1, NULL, EB));
        ERR(pulsarc_admin_namespace_set_delayed_delivery(x, NULL, 1, 1000, EB));
        ERR(pulsarc_admin_namespace_get_delayed_delivery(x, "public/default", NULL, &v1, EB));
        ERR(pulsarc_admin_namespace_get_delayed_delivery(x, "public/default", &b, NULL, EB));
        ck_assert_ptr_null(list);
        ck_assert_ptr_null(st);
    }
    NOCRASH(pulsarc_admin_set_token(a, NULL)); /* NULL removes */
    NOCRASH(pulsarc_admin_set_token(a, ""));
    ck_assert_ptr_nonnull(pulsarc_admin_url(a));
    pulsarc_admin_destroy(a);
}
END_TEST
#endif

static Suite *suite(void) {
    Suite *s = suite_create("null-args");
    TCase *tc = tcase_create("api");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_list_complete);
    tcase_add_test(tc, test_errors_and_version);
    tcase_add_test(tc, test_conf);
    tcase_add_test(tc, test_msgid);
    tcase_add_test(tc, test_msg_setters);
    tcase_add_test(tc, test_msg_getters);
    tcase_add_test(tc, test_client);
    tcase_add_test(tc, test_producer);
    tcase_add_test(tc, test_consumer);
    tcase_add_test(tc, test_reader);
    tcase_add_test(tc, test_tableview);
#ifdef PULSARC_WITH_CURL
    tcase_add_test(tc, test_admin);
#endif
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(suite)
