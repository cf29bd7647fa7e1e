/*
 * Live-broker tests of the admin REST client: topics and partitioned
 * topics, subscriptions, backlog after producing with the binary client,
 * cursor resets by id and by time (checked through backlog numbers),
 * tenants, namespaces and their policies read back, and the error paths
 * (404, conflict, bad URL, refused port, unknown host, bad names).
 */
#ifndef PULSARC_WITH_CURL
/* Built with WITH_CURL=0: there is no admin client, so nothing to test. */
#include "testutil.h"

START_TEST(test_admin_not_built) {}
END_TEST

static Suite *admin_suite(void) {
    Suite *s = suite_create("admin");
    TCase *tc = tcase_create("not built");
    tcase_add_test(tc, test_admin_not_built);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(admin_suite)
#else
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "testutil.h"

static char err[512];

static int64_t now_ms(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static pulsarc_admin_t *admin_with_url(const char *url) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    ck_assert(pulsarc_conf_set(conf, "webServiceUrl", url, err, sizeof err) == PULSARC_OK);
    /* generous: a broker that just started loads the namespace (and makes
     * its system topics) inside the first request, slow on a loaded machine */
    ck_assert(pulsarc_conf_set(conf, "operationTimeoutMs", "60000", err, sizeof err) == PULSARC_OK);
    pulsarc_admin_t *a = NULL;
    pulsarc_err_t e = pulsarc_admin_new(conf, &a, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "admin: %s", err);
    return a;
}

static pulsarc_admin_t *admin(void) { return admin_with_url(pct_admin_url()); }

#define OK(call) ck_assert_msg((call) == PULSARC_OK, "%s: %s", #call, err)
#define FAILS(want, call)                                                                 \
    do {                                                                                  \
        err[0] = '\0';                                                                    \
        pulsarc_err_t got_ = (call);                                                      \
        ck_assert_msg(got_ == (want), "%s: got %s (%s), want %s", #call,                  \
                      pulsarc_errname(got_), err, pulsarc_errname(want));                \
    } while (0)

static int in_list(char **list, const char *s) {
    for (char **p = list; p && *p; p++)
        if (strcmp(*p, s) == 0)
            return 1;
    return 0;
}

static const char *full(const char *local) {
    static char bufs[8][512];
    static int n;
    char *b = bufs[n++ % 8];
    snprintf(b, 512, "persistent://public/default/%s", local);
    return b;
}

/* Sends n small messages to topic with the binary client; ids (may be NULL) get their ids. */
static void produce(const char *topic, int n, pulsarc_msgid_t *ids) {
    pulsarc_client_t *c = pct_client();
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    for (int i = 0; i < n; i++) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        char payload[32];
        int len = snprintf(payload, sizeof payload, "admin-%d", i);
        pulsarc_msg_set_payload(m, payload, (size_t)len, PULSARC_MSG_F_COPY);
        pulsarc_msgid_t id;
        ck_assert(pulsarc_producer_send(p, m, &id) == PULSARC_OK);
        if (ids)
            ids[i] = id;
        pulsarc_msg_destroy(m);
    }
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
}

static int64_t backlog(pulsarc_admin_t *a, const char *topic, const char *sub) {
    int64_t b = -1;
    OK(pulsarc_admin_subscription_backlog(a, topic, sub, &b, err, sizeof err));
    return b;
}

/* The backlog once it equals want (stats can lag a write by a moment, more
 * on a loaded machine), or the last seen after 30 s. */
static int64_t backlog_settled(pulsarc_admin_t *a, const char *topic, const char *sub,
                               int64_t want) {
    int64_t b = -1;
    for (int i = 0; i < 300 && (b = backlog(a, topic, sub)) != want; i++)
        usleep(100 * 1000);
    return b;
}

START_TEST(test_topic_create_list_delete) {
    pulsarc_admin_t *a = admin();
    const char *t = pct_topic("adm-topic");
    char **list = NULL;
    int n = -1;
    OK(pulsarc_admin_create_topic(a, t, err, sizeof err));
    FAILS(PULSARC_ADMIN_ERR_CONFLICT, pulsarc_admin_create_topic(a, full(t), err, sizeof err));
    ck_assert_msg(strstr(err, "HTTP 409") && strstr(err, "already exists"), "%s", err);
    OK(pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    ck_assert_msg(in_list(list, full(t)), "%s not listed", t);
    pulsarc_admin_list_free(list);
    OK(pulsarc_admin_partition_count(a, t, &n, err, sizeof err));
    ck_assert_int_eq(n, 0);
    OK(pulsarc_admin_delete_topic(a, t, 0, err, sizeof err));
    OK(pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    ck_assert(!in_list(list, full(t)));
    pulsarc_admin_list_free(list);
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_delete_topic(a, t, 1, err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_delete_busy_topic_needs_force) {
    pulsarc_admin_t *a = admin();
    const char *t = pct_topic("adm-busy");
    pulsarc_client_t *c = pct_client();
    pulsarc_producer_t *p = NULL;
    ck_assert_msg(pulsarc_producer_new(c, t, NULL, &p, err, sizeof err) == PULSARC_OK, "%s", err);
    FAILS(PULSARC_ERR_BROKER_NOT_ALLOWED, pulsarc_admin_delete_topic(a, t, 0, err, sizeof err));
    ck_assert_msg(strstr(err, "HTTP 412"), "%s", err);
    OK(pulsarc_admin_delete_topic(a, t, 1, err, sizeof err));
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_partitioned_topic) {
    pulsarc_admin_t *a = admin();
    const char *t = pct_topic("adm-part");
    char **list = NULL, part1[512];
    int n = -1;
    OK(pulsarc_admin_create_partitioned_topic(a, t, 3, err, sizeof err));
    FAILS(PULSARC_ADMIN_ERR_CONFLICT, pulsarc_admin_create_partitioned_topic(a, t, 3, err, sizeof err));
    OK(pulsarc_admin_partition_count(a, t, &n, err, sizeof err));
    ck_assert_int_eq(n, 3);
    snprintf(part1, sizeof part1, "public/default/%s", t); /* tenant/ns/local form */
    OK(pulsarc_admin_partition_count(a, part1, &n, err, sizeof err));
    ck_assert_int_eq(n, 3);
    OK(pulsarc_admin_list_partitioned_topics(a, "public/default", &list, err, sizeof err));
    ck_assert_msg(in_list(list, full(t)), "%s not listed as partitioned", t);
    pulsarc_admin_list_free(list);
    snprintf(part1, sizeof part1, "%s-partition-1", full(t));
    OK(pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    ck_assert_msg(in_list(list, part1), "%s not listed", part1);
    ck_assert(!in_list(list, full(t)));
    pulsarc_admin_list_free(list);
    OK(pulsarc_admin_delete_partitioned_topic(a, t, 1, err, sizeof err));
    /* On a cluster the broker asked may be another than the one that deleted,
     * and its metadata cache learns of the deletion a moment later. */
    for (int tries = 0; tries < 10 && pulsarc_admin_partition_count(a, t, &n, err, sizeof err) == PULSARC_OK;
         tries++)
        sleep(1);
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_partition_count(a, t, &n, err, sizeof err));
    OK(pulsarc_admin_list_partitioned_topics(a, "public/default", &list, err, sizeof err));
    ck_assert(!in_list(list, full(t)));
    pulsarc_admin_list_free(list);
    FAILS(PULSARC_ERR_INVALID_ARG, pulsarc_admin_create_partitioned_topic(a, t, 0, err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_local_name_is_url_encoded) {
    pulsarc_admin_t *a = admin();
    char t[256], **list = NULL;
    snprintf(t, sizeof t, "%s a?b#c&d+e", pct_topic("adm-enc"));
    OK(pulsarc_admin_create_topic(a, t, err, sizeof err));
    OK(pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    ck_assert_msg(in_list(list, full(t)), "'%s' not listed as such", t);
    pulsarc_admin_list_free(list);
    OK(pulsarc_admin_create_subscription(a, t, "sub x?y&z", NULL, err, sizeof err));
    OK(pulsarc_admin_list_subscriptions(a, t, &list, err, sizeof err));
    ck_assert(in_list(list, "sub x?y&z"));
    pulsarc_admin_list_free(list);
    OK(pulsarc_admin_delete_topic(a, t, 1, err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_subscription_create_list_delete) {
    pulsarc_admin_t *a = admin();
    const char *t = pct_topic("adm-sub");
    char **list = NULL;
    pulsarc_msgid_t earliest = pulsarc_msgid_earliest();
    OK(pulsarc_admin_create_topic(a, t, err, sizeof err));
    OK(pulsarc_admin_create_subscription(a, t, "s-latest", NULL, err, sizeof err));
    OK(pulsarc_admin_create_subscription(a, t, "s-earliest", &earliest, err, sizeof err));
    FAILS(PULSARC_ADMIN_ERR_CONFLICT,
          pulsarc_admin_create_subscription(a, t, "s-latest", NULL, err, sizeof err));
    OK(pulsarc_admin_list_subscriptions(a, t, &list, err, sizeof err));
    ck_assert(in_list(list, "s-latest") && in_list(list, "s-earliest"));
    ck_assert_ptr_null(list[2]);
    pulsarc_admin_list_free(list);
    OK(pulsarc_admin_delete_subscription(a, t, "s-latest", 0, err, sizeof err));
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_delete_subscription(a, t, "s-latest", 0, err, sizeof err));
    ck_assert_msg(strstr(err, "HTTP 404 Not Found: Subscription s-latest not found"), "%s", err);
    OK(pulsarc_admin_list_subscriptions(a, t, &list, err, sizeof err));
    ck_assert(!in_list(list, "s-latest") && in_list(list, "s-earliest"));
    pulsarc_admin_list_free(list);
    FAILS(PULSARC_ERR_INVALID_ARG, pulsarc_admin_create_subscription(a, t, "", NULL, err, sizeof err));
    OK(pulsarc_admin_delete_topic(a, t, 1, err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

#define N 10

START_TEST(test_backlog_and_reset_cursor_to_id) {
    pulsarc_admin_t *a = admin();
    const char *t = pct_topic("adm-backlog");
    pulsarc_msgid_t ids[N];
    OK(pulsarc_admin_create_topic(a, t, err, sizeof err));
    OK(pulsarc_admin_create_subscription(a, t, "sub", NULL, err, sizeof err));
    ck_assert_int_eq(backlog(a, t, "sub"), 0);
    produce(t, N, ids);
    ck_assert_int_eq(backlog_settled(a, t, "sub", N), N);

    pulsarc_admin_topic_stats_t *st = NULL;
    OK(pulsarc_admin_topic_stats(a, t, &st, err, sizeof err));
    ck_assert_int_eq(st->msg_in_counter, N);
    ck_assert_uint_eq(st->nsubs, 1);
    ck_assert_str_eq(st->subs[0].name, "sub");
    ck_assert_int_eq(st->subs[0].msg_backlog, N);
    ck_assert_int_gt(st->subs[0].backlog_size, 0);
    ck_assert_int_eq(st->subs[0].consumers, 0);
    pulsarc_admin_topic_stats_free(st);

    OK(pulsarc_admin_reset_cursor_to_id(a, t, "sub", &ids[4], err, sizeof err));
    ck_assert_int_eq(backlog_settled(a, t, "sub", N - 4), N - 4); /* ids[4] is delivered next */
    OK(pulsarc_admin_reset_cursor_to_id(a, t, "sub", &ids[N - 1], err, sizeof err));
    ck_assert_int_eq(backlog_settled(a, t, "sub", 1), 1);
    OK(pulsarc_admin_reset_cursor_to_id(a, t, "sub", &ids[0], err, sizeof err));
    ck_assert_int_eq(backlog_settled(a, t, "sub", N), N);

    int64_t b = 0;
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_subscription_backlog(a, t, "nope", &b, err, sizeof err));
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_reset_cursor_to_id(a, t, "nope", &ids[0], err, sizeof err));
    OK(pulsarc_admin_delete_topic(a, t, 1, err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_reset_cursor_to_time) {
    pulsarc_admin_t *a = admin();
    const char *t = pct_topic("adm-time");
    OK(pulsarc_admin_create_topic(a, t, err, sizeof err));
    OK(pulsarc_admin_create_subscription(a, t, "sub", NULL, err, sizeof err));
    produce(t, 4, NULL);
    usleep(300 * 1000);
    int64_t mid = now_ms();
    usleep(300 * 1000);
    produce(t, 6, NULL);
    ck_assert_int_eq(backlog_settled(a, t, "sub", N), N);
    OK(pulsarc_admin_reset_cursor_to_time(a, t, "sub", now_ms() + 3600 * 1000, err, sizeof err));
    ck_assert_int_eq(backlog_settled(a, t, "sub", 0), 0);
    OK(pulsarc_admin_reset_cursor_to_time(a, t, "sub", mid, err, sizeof err));
    ck_assert_int_eq(backlog_settled(a, t, "sub", 6), 6);
    OK(pulsarc_admin_reset_cursor_to_time(a, t, "sub", 0, err, sizeof err));
    ck_assert_int_eq(backlog_settled(a, t, "sub", N), N);
    FAILS(PULSARC_ERR_INVALID_ARG, pulsarc_admin_reset_cursor_to_time(a, t, "sub", -5, err, sizeof err));
    OK(pulsarc_admin_delete_topic(a, t, 1, err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_partitioned_backlog_and_resets) {
    pulsarc_admin_t *a = admin();
    const char *t = pct_topic("adm-pback");
    char p0[512], p1[512];
    snprintf(p0, sizeof p0, "%s-partition-0", t);
    snprintf(p1, sizeof p1, "%s-partition-1", t);
    OK(pulsarc_admin_create_partitioned_topic(a, t, 2, err, sizeof err));
    OK(pulsarc_admin_create_subscription(a, t, "sub", NULL, err, sizeof err)); /* every partition */
    pulsarc_msgid_t ids[N];
    produce(p0, 3, ids);
    produce(p1, 5, NULL);
    ck_assert_int_eq(backlog_settled(a, t, "sub", 8), 8);
    ck_assert_int_eq(backlog(a, p0, "sub"), 3);
    ck_assert_int_eq(backlog(a, p1, "sub"), 5);
    pulsarc_admin_topic_stats_t *st = NULL;
    OK(pulsarc_admin_topic_stats(a, t, &st, err, sizeof err));
    ck_assert_int_eq(st->msg_in_counter, 8);
    pulsarc_admin_topic_stats_free(st);

    pulsarc_msgid_t at = ids[2];
    at.partition = 0; /* base name + partition index → that partition's cursor */
    OK(pulsarc_admin_reset_cursor_to_id(a, t, "sub", &at, err, sizeof err));
    ck_assert_int_eq(backlog_settled(a, p0, "sub", 1), 1);
    ck_assert_int_eq(backlog(a, t, "sub"), 6);
    OK(pulsarc_admin_reset_cursor_to_time(a, t, "sub", now_ms() + 3600 * 1000, err, sizeof err));
    ck_assert_int_eq(backlog_settled(a, t, "sub", 0), 0);
    OK(pulsarc_admin_delete_partitioned_topic(a, t, 1, err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

/*
 * Deletes ns once its own topics are gone. Loading a topic makes the broker
 * set up system topics of the namespace in the background (its transaction
 * buffer snapshot, the topic-policy events); until that work has finished,
 * a delete answers 409 ("non empty bundle") although no topic of ours is
 * left. On a cluster (ZooKeeper metadata) another broker may also still
 * list the deleted topic (409 "non empty namespace") or answer HTTP 500
 * ("Directory not empty" in its log). Those answers are retried, as a user
 * would, for up to 15 s; every other answer counts at once.
 */
/* 1 once ns lists no topic (another broker of a cluster may lag), within 15 s. */
static int namespace_emptied(pulsarc_admin_t *a, const char *ns) {
    for (int i = 0; i < 150; i++) {
        char **list = NULL;
        if (i > 0)
            usleep(100 * 1000);
        if (pulsarc_admin_list_topics(a, ns, &list, err, sizeof err) != PULSARC_OK)
            continue;
        int empty = list[0] == NULL;
        pulsarc_admin_list_free(list);
        if (empty)
            return 1;
    }
    return 0;
}

static int delete_retriable(pulsarc_err_t e, const char *why) {
    return e == PULSARC_ADMIN_ERR_CONFLICT || (e != PULSARC_OK && strstr(why, "HTTP 500"));
}

static pulsarc_err_t delete_namespace_after_topics(pulsarc_admin_t *a, const char *ns, char *why,
                                                   size_t len) {
    pulsarc_err_t e = PULSARC_OK;
    for (int i = 0; i < 150; i++) {
        if (i > 0)
            usleep(100 * 1000);
        e = pulsarc_admin_delete_namespace(a, ns, 0, why, len);
        if (!delete_retriable(e, why))
            break;
    }
    return e;
}

/* The same for a tenant just after its last namespace: HTTP 500 while the
 * brokers still release the namespace's bundles ("Directory not empty" for
 * /namespace/<tenant> in the broker log). */
static pulsarc_err_t delete_tenant_after_namespaces(pulsarc_admin_t *a, const char *tenant, char *why,
                                                   size_t len) {
    pulsarc_err_t e = PULSARC_OK;
    for (int attempt = 0; attempt < 5; attempt++) {
        e = pulsarc_admin_delete_tenant(a, tenant, why, len);
        if (e == PULSARC_OK || !strstr(why, "HTTP 500"))
            break;
        sleep(1);
    }
    return e;
}

START_TEST(test_tenant_namespace_and_policies) {
    pulsarc_admin_t *a = admin();
    char tenant[128], ns[256], other[256];
    snprintf(tenant, sizeof tenant, "pct-%d-%ld", (int)getpid(), (long)time(NULL));
    snprintf(ns, sizeof ns, "%s/ns1", tenant);
    snprintf(other, sizeof other, "%s-missing/ns1", tenant);
    OK(pulsarc_admin_create_tenant(a, tenant, NULL, err, sizeof err));
    FAILS(PULSARC_ADMIN_ERR_CONFLICT, pulsarc_admin_create_tenant(a, tenant, pct_cluster_name(), err, sizeof err));
    OK(pulsarc_admin_create_namespace(a, ns, err, sizeof err));
    FAILS(PULSARC_ADMIN_ERR_CONFLICT, pulsarc_admin_create_namespace(a, ns, err, sizeof err));
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_create_namespace(a, other, err, sizeof err));
    ck_assert_msg(strstr(err, "Tenant does not exist"), "%s", err);

    int on = -1, active = -1;
    int64_t minutes = -9, mb = -9, tick = -9;
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_namespace_get_deduplication(a, ns, &on, err, sizeof err));
    ck_assert_msg(strstr(err, "no deduplication policy"), "%s", err);
    OK(pulsarc_admin_namespace_set_deduplication(a, ns, 1, err, sizeof err));
    OK(pulsarc_admin_namespace_get_deduplication(a, ns, &on, err, sizeof err));
    ck_assert_int_eq(on, 1);
    OK(pulsarc_admin_namespace_set_deduplication(a, ns, 0, err, sizeof err));
    OK(pulsarc_admin_namespace_get_deduplication(a, ns, &on, err, sizeof err));
    ck_assert_int_eq(on, 0);

    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_namespace_get_retention(a, ns, &minutes, &mb, err, sizeof err));
    OK(pulsarc_admin_namespace_set_retention(a, ns, 90, 120, err, sizeof err));
    OK(pulsarc_admin_namespace_get_retention(a, ns, &minutes, &mb, err, sizeof err));
    ck_assert_int_eq(minutes, 90);
    ck_assert_int_eq(mb, 120);
    OK(pulsarc_admin_namespace_set_retention(a, ns, -1, -1, err, sizeof err));
    OK(pulsarc_admin_namespace_get_retention(a, ns, &minutes, &mb, err, sizeof err));
    ck_assert(minutes == -1 && mb == -1);

    OK(pulsarc_admin_namespace_set_delayed_delivery(a, ns, 1, 250, err, sizeof err));
    OK(pulsarc_admin_namespace_get_delayed_delivery(a, ns, &active, &tick, err, sizeof err));
    ck_assert(active == 1 && tick == 250);
    OK(pulsarc_admin_namespace_set_delayed_delivery(a, ns, 0, 1000, err, sizeof err));
    OK(pulsarc_admin_namespace_get_delayed_delivery(a, ns, &active, &tick, err, sizeof err));
    ck_assert(active == 0 && tick == 1000);

    /* a topic in the new namespace, through the full-name form */
    char topic[512], **list = NULL;
    snprintf(topic, sizeof topic, "persistent://%s/t1", ns);
    OK(pulsarc_admin_create_topic(a, topic, err, sizeof err));
    OK(pulsarc_admin_list_topics(a, ns, &list, err, sizeof err));
    ck_assert(in_list(list, topic) && list[1] == NULL);
    pulsarc_admin_list_free(list);
    FAILS(PULSARC_ADMIN_ERR_CONFLICT, pulsarc_admin_delete_tenant(a, tenant, err, sizeof err));
    ck_assert_msg(strstr(err, "active namespaces"), "%s", err);
    /* the test broker keeps forceDeleteNamespaceAllowed=false: 405 */
    FAILS(PULSARC_ERR_UNSUPPORTED, pulsarc_admin_delete_namespace(a, ns, 1, err, sizeof err));
    ck_assert_msg(strstr(err, "HTTP 405"), "%s", err);
    FAILS(PULSARC_ADMIN_ERR_CONFLICT, pulsarc_admin_delete_namespace(a, ns, 0, err, sizeof err));
    ck_assert_msg(strstr(err, "non empty namespace"), "%s", err);
    OK(pulsarc_admin_delete_topic(a, topic, 0, err, sizeof err));
    ck_assert_msg(namespace_emptied(a, ns), "%s still lists its deleted topic", ns);
    OK(delete_namespace_after_topics(a, ns, err, sizeof err));
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_namespace_get_retention(a, ns, &minutes, &mb, err, sizeof err));
    OK(delete_tenant_after_namespaces(a, tenant, err, sizeof err));
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_delete_tenant(a, tenant, err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_not_found_and_bad_names) {
    pulsarc_admin_t *a = admin();
    pulsarc_admin_topic_stats_t *st = NULL;
    char **list = NULL;
    int n;
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_topic_stats(a, "no-such-topic-zz", &st, err, sizeof err));
    ck_assert_msg(strstr(err, "HTTP 404 Not Found: Topic persistent://public/default/no-such-topic-zz not found"),
                  "%s", err);
    ck_assert_ptr_null(st);
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_partition_count(a, "no-such-topic-zz", &n, err, sizeof err));
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_list_subscriptions(a, "no-such-topic-zz", &list, err, sizeof err));
    ck_assert_ptr_null(list);
    FAILS(PULSARC_ERR_NOT_FOUND, pulsarc_admin_list_topics(a, "no-such-tenant/ns", &list, err, sizeof err));
    FAILS(PULSARC_ERR_BAD_TOPIC, pulsarc_admin_create_topic(a, "a/b/c/d", err, sizeof err));
    FAILS(PULSARC_ERR_BAD_TOPIC, pulsarc_admin_create_topic(a, "", err, sizeof err));
    FAILS(PULSARC_ERR_INVALID_ARG, pulsarc_admin_list_topics(a, "public", &list, err, sizeof err));
    FAILS(PULSARC_ERR_INVALID_ARG, pulsarc_admin_list_topics(a, "public/default/x", &list, err, sizeof err));
    FAILS(PULSARC_ERR_INVALID_ARG, pulsarc_admin_create_tenant(a, "a/b", NULL, err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_bad_urls) {
    const char *bad[] = {"ftp://127.0.0.1:8080", "pulsar://127.0.0.1:6650", "http://", "http://h:99999",
                         "http://127.0.0.1:8080/admin", NULL};
    for (int i = 0; bad[i]; i++) {
        pulsarc_conf_t *conf = pulsarc_conf_new();
        ck_assert(pulsarc_conf_set(conf, "webServiceUrl", bad[i], err, sizeof err) == PULSARC_OK);
        pulsarc_admin_t *a = (pulsarc_admin_t *)1;
        FAILS(PULSARC_ERR_BAD_URL, pulsarc_admin_new(conf, &a, err, sizeof err));
        ck_assert_ptr_null(a);
        ck_assert_msg(err[0], "no reason for %s", bad[i]);
        pulsarc_conf_destroy(conf);
    }
}
END_TEST

START_TEST(test_refused_port_and_unknown_host) {
    pulsarc_admin_t *a = admin_with_url("http://127.0.0.1:1");
    char **list = NULL;
    FAILS(PULSARC_ERR_CONNECT, pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    ck_assert_msg(strstr(err, "127.0.0.1") && strstr(err, "onnect"), "%s", err);
    ck_assert(pulsarc_err_is_retriable(PULSARC_ERR_CONNECT));
    pulsarc_admin_destroy(a);
    a = admin_with_url("http://no-such-host.invalid:8080");
    FAILS(PULSARC_ERR_RESOLVE, pulsarc_admin_create_topic(a, "x", err, sizeof err));
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_second_host_when_first_refuses) {
    const char *hp = strstr(pct_admin_url(), "://") + 3;
    char url[512], **list = NULL;
    snprintf(url, sizeof url, "http://127.0.0.1:1,%s", hp);
    pulsarc_admin_t *a = admin_with_url(url);
    ck_assert_str_eq(pulsarc_admin_url(a), "http://127.0.0.1:1");
    OK(pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    pulsarc_admin_list_free(list);
    ck_assert_str_ne(pulsarc_admin_url(a), "http://127.0.0.1:1");
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_env_fallback) {
    char saved[512];
    snprintf(saved, sizeof saved, "%s", pct_admin_url());
    setenv("PULSAR_ADMIN_URL", saved, 1);
    pulsarc_admin_t *a = NULL;
    OK(pulsarc_admin_new(NULL, &a, err, sizeof err)); /* webServiceUrl unset */
    char **list = NULL;
    OK(pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    pulsarc_admin_list_free(list);
    pulsarc_admin_destroy(a);
    unsetenv("PULSAR_ADMIN_URL");
    FAILS(PULSARC_ERR_BAD_CONFIG, pulsarc_admin_new(NULL, &a, err, sizeof err));
    ck_assert_msg(strstr(err, "webServiceUrl"), "%s", err);
    setenv("PULSAR_ADMIN_URL", saved, 1);
}
END_TEST

/* ---- token and TLS, when the test broker has its generated secrets ------ */

/* $PULSARC_TEST_SECRETS/name when readable, else NULL. */
static const char *secret(const char *name) {
    static char bufs[8][512];
    static int n;
    const char *dir = getenv("PULSARC_TEST_SECRETS");
    if (!dir || !*dir)
        return NULL;
    char *b = bufs[n++ % 8];
    snprintf(b, 512, "%s/%s", dir, name);
    return access(b, R_OK) == 0 ? b : NULL;
}

/* The token in secret file name (one line), into buf. */
static void read_token(const char *name, char *buf, size_t len) {
    const char *path = secret(name);
    FILE *f = path ? fopen(path, "r") : NULL;
    ck_assert_msg(f && fgets(buf, (int)len, f), "cannot read %s", name);
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
}

/* Lists public/default through an admin on url with extra conf pairs;
 * PULSARC_ERR_UNKNOWN_CONFIG when this build has no such key. */
static pulsarc_err_t list_via(const char *url, const char *const *kv) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_err_t e = pulsarc_conf_set(conf, "webServiceUrl", url, err, sizeof err);
    for (size_t i = 0; !e && kv && kv[i]; i += 2)
        e = pulsarc_conf_set(conf, kv[i], kv[i + 1], err, sizeof err);
    pulsarc_admin_t *a = NULL;
    if (!e)
        e = pulsarc_admin_new(conf, &a, err, sizeof err);
    char **list = NULL;
    if (!e)
        e = pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err);
    pulsarc_admin_list_free(list);
    pulsarc_admin_destroy(a);
    pulsarc_conf_destroy(conf);
    return e;
}

/* A bounded response body, for raw_get. */
typedef struct raw_body {
    char s[8192];
    size_t n;
} raw_body_t;

static size_t raw_collect(char *p, size_t size, size_t nmemb, void *ud) {
    raw_body_t *b = ud;
    size_t n = size * nmemb, room = sizeof b->s - 1 - b->n;
    memcpy(b->s + b->n, p, n < room ? n : room);
    b->n += n < room ? n : room;
    b->s[b->n] = '\0';
    return n;
}

/* GET path from the broker with libcurl alone (no pulsarc code), sending
 * token as a Bearer token for the "token" method (without the method name
 * the broker takes a bad token as anonymous); the status is returned, the
 * body put in b. */
static long raw_get(const char *path, const char *token, raw_body_t *b) {
    char url[1024], auth[4200];
    snprintf(url, sizeof url, "%s%s", pct_admin_url(), path);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    b->n = 0;
    b->s[0] = '\0';
    CURL *h = curl_easy_init();
    ck_assert(h);
    struct curl_slist *hdr = curl_slist_append(NULL, auth);
    hdr = curl_slist_append(hdr, "X-Pulsar-Auth-Method-Name: token");
    hdr = curl_slist_append(hdr, "Accept: application/json");
    ck_assert(hdr);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, raw_collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    long status = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return status;
}

/* s into out with every run of digits made one '#': the same text told at
 * another moment (times, durations) compares equal. */
static void digits_folded(const char *s, char *out, size_t len) {
    size_t n = 0;
    for (; *s && n + 1 < len; s++) {
        if (*s >= '0' && *s <= '9') {
            if (n == 0 || out[n - 1] != '#')
                out[n++] = '#';
        } else {
            out[n++] = *s;
        }
    }
    out[n] = '\0';
}

/*
 * What the admin client promises for a refused token, whatever words the
 * broker uses (4.0 says "Authentication required", 4.2 the actual cause):
 * the status in errstr, then the broker's own reason passed through (its
 * text is in the body the broker sends for the same request, fetched here
 * without pulsarc; digits aside, as a reason may quote the time), and never
 * the token itself.
 */
static void check_refusal_reported(const char *token) {
    static const char status[] = "HTTP 401 Unauthorized: ";
    const char *why = strstr(err, status);
    ck_assert_msg(why, "no '%s' in: %s", status, err);
    why += strlen(status);
    raw_body_t body;
    ck_assert_int_eq(raw_get("/admin/v2/persistent/public/default", token, &body), 401);
    char why_f[sizeof err], body_f[sizeof body.s];
    digits_folded(why, why_f, sizeof why_f);
    digits_folded(body.s, body_f, sizeof body_f);
    ck_assert_msg(*why && strstr(body_f, why_f), "reason '%s' is not from the broker's answer: %s",
                  why, body.s);
    ck_assert_msg(!strstr(err, token), "the token is echoed: %s", err);
}

START_TEST(test_token) {
    pulsarc_admin_t *a = admin();
    char **list = NULL, tok[4096];
    ck_assert(pulsarc_admin_set_token(a, "bad\r\nX-Injected: 1") == PULSARC_ERR_INVALID_ARG);
    /* a token sent with its method name is checked, not taken as "anonymous" */
    if (!secret("client.jwt")) { /* a broker without authentication ignores the header */
        ck_assert(pulsarc_admin_set_token(a, "abc.def.ghi") == PULSARC_OK);
        OK(pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
        pulsarc_admin_list_free(list);
        pulsarc_admin_destroy(a);
        return;
    }
    read_token("client.jwt", tok, sizeof tok);
    ck_assert(pulsarc_admin_set_token(a, tok) == PULSARC_OK);
    OK(pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    pulsarc_admin_list_free(list);
    const char *bad[] = {"wrong-key.jwt", "expired.jwt", NULL};
    FAILS(PULSARC_OK, pulsarc_admin_set_token(a, "abc.def.ghi"));
    FAILS(PULSARC_ERR_BROKER_AUTHENTICATION,
          pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    check_refusal_reported("abc.def.ghi");
    for (int i = 0; bad[i]; i++) {
        read_token(bad[i], tok, sizeof tok);
        ck_assert(pulsarc_admin_set_token(a, tok) == PULSARC_OK);
        FAILS(PULSARC_ERR_BROKER_AUTHENTICATION,
              pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
        check_refusal_reported(tok);
    }
    ck_assert(pulsarc_admin_set_token(a, NULL) == PULSARC_OK); /* anonymous again */
    OK(pulsarc_admin_list_topics(a, "public/default", &list, err, sizeof err));
    pulsarc_admin_list_free(list);
    pulsarc_admin_destroy(a);
}
END_TEST

START_TEST(test_https_and_certificate_checks) {
    const char *url = getenv("PULSAR_ADMIN_URL_TLS"), *ca = secret("ca.pem");
    if (!url || !*url || !ca) {
        fprintf(stderr, "test_https: skipped (no TLS listener or secrets)\n");
        return;
    }
    pulsarc_err_t e = list_via(url, (const char *const[]){"tlsTrustCertsFilePath", ca, NULL});
    if (e == PULSARC_ERR_UNKNOWN_CONFIG) {
        fprintf(stderr, "test_https: skipped (this build has no TLS keys)\n");
        return;
    }
    ck_assert_msg(e == PULSARC_OK, "%s with the test CA: %s", url, err);
    OK(list_via(url, (const char *const[]){"tlsTrustCertsFilePath", secret("ca-dir"), NULL}));
    /* the system trust store, or another CA, do not know the broker */
    FAILS(PULSARC_ERR_TLS, list_via(url, NULL));
    FAILS(PULSARC_ERR_TLS, list_via(url, (const char *const[]){"tlsTrustCertsFilePath",
                                                                secret("other-ca.pem"), NULL}));
    OK(list_via(url, (const char *const[]){"tlsAllowInsecureConnection", "true", NULL}));
    /* a host name the certificate does not carry: the wrong-host address if
     * the HTTPS listener is bound there, else this machine's own name */
    char wurl[512], host[256] = "";
    const char *wrong = getenv("PULSARC_TEST_WRONG_HOST"), *port = strrchr(url, ':');
    gethostname(host, sizeof host - 1);
    const char *cands[] = {wrong ? wrong : "127.0.0.2", host, NULL};
    const char *const with_ca[] = {"tlsTrustCertsFilePath", ca, NULL};
    for (int i = 0; cands[i]; i++) {
        snprintf(wurl, sizeof wurl, "https://%s%s", cands[i], port);
        if (!cands[i][0] || !strcmp(cands[i], "localhost") ||
            (e = list_via(wurl, with_ca)) == PULSARC_ERR_CONNECT || e == PULSARC_ERR_RESOLVE) {
            wurl[0] = '\0';
            continue;
        }
        ck_assert_msg(e == PULSARC_ERR_TLS && strstr(err, wurl), "%s: %s", wurl, err);
        OK(list_via(wurl, (const char *const[]){"tlsTrustCertsFilePath", ca,
                                                "tlsHostnameVerificationEnable", "false", NULL}));
        break;
    }
    if (!wurl[0])
        fprintf(stderr, "test_https: wrong-host check skipped (no other name reaches the listener)\n");
    /* a client certificate (mutual TLS) */
    OK(list_via(url, (const char *const[]){"tlsTrustCertsFilePath", ca, "tlsCertificateFilePath",
                                           secret("client.pem"), "tlsKeyFilePath",
                                           secret("client.key"), NULL}));
}
END_TEST

static Suite *admin_suite(void) {
    Suite *s = suite_create("admin");
    TCase *tc = tcase_create("live");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_topic_create_list_delete);
    tcase_add_test(tc, test_delete_busy_topic_needs_force);
    tcase_add_test(tc, test_partitioned_topic);
    tcase_add_test(tc, test_local_name_is_url_encoded);
    tcase_add_test(tc, test_subscription_create_list_delete);
    tcase_add_test(tc, test_backlog_and_reset_cursor_to_id);
    tcase_add_test(tc, test_reset_cursor_to_time);
    tcase_add_test(tc, test_partitioned_backlog_and_resets);
    tcase_add_test(tc, test_tenant_namespace_and_policies);
    tcase_add_test(tc, test_not_found_and_bad_names);
    tcase_add_test(tc, test_bad_urls);
    tcase_add_test(tc, test_refused_port_and_unknown_host);
    tcase_add_test(tc, test_second_host_when_first_refuses);
    tcase_add_test(tc, test_env_fallback);
    tcase_add_test(tc, test_token);
    tcase_add_test(tc, test_https_and_certificate_checks);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(admin_suite)
#endif /* PULSARC_WITH_CURL */
