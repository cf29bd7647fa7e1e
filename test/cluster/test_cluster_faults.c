/*
 * Bad answers from a cluster, and a service URL naming several hosts, one
 * of them dead. Run under run-with-cluster.sh (PULSARC_CLUSTER_*), except
 * the redirect loop, which two fake brokers (test/faults) play because no
 * real broker redirects in a circle on demand:
 *  - a lookup redirected back and forth between two brokers ends with
 *    PULSARC_ERR_TOO_MANY_REDIRECTS, an error that shows the path and names
 *    the loop, after a bounded number of LOOKUPs, well within the
 *    operation timeout;
 *  - a topic of a namespace that only an unknown cluster serves: the real
 *    brokers refuse the lookup (binary and HTTP) and the client reports
 *    their reason, naming the cluster, without hanging;
 *  - the proxy refusing a client whose token is not a token: a clear
 *    authentication error from the proxy, no hang;
 *  - multi-host service URLs (pulsar://, pulsar+ssl://, http:// and through
 *    the proxy) whose first host is a dead loopback port: every create
 *    succeeds, round after round (each lookup starts at the next host and
 *    skips the dead one), and messages flow; with every host dead the error
 *    names the service URL's hosts.
 * "No hang" is a generous bound on each call (the operation timeout plus
 * slack), never a speed check. Single-threaded test code (Check forks one
 * process per test).
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../faults/fake_broker.h"
#include "../faults/fb_client.h"
#include "PulsarApi.pb-c.h"
#include "cluster_util.h"
#include "testutil.h"

#define T(x) PULSAR__PROTO__BASE_COMMAND__TYPE__##x

static pulsarc_client_t *client_at(const char *url, const char *const *more) {
    pulsarc_conf_t *conf = pct_conf(more);
    char err[512];
    ck_assert(pulsarc_conf_set(conf, "serviceUrl", url, err, sizeof err) == PULSARC_OK);
    pulsarc_client_t *c = NULL;
    pulsarc_err_t e = pulsarc_client_new(conf, &c, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "client on %s: %s", url, err);
    return c;
}

/* ---- a redirect loop between two brokers ---- */

START_TEST(test_redirect_loop_between_brokers) {
    pc_fb_t *a = pc_fb_new(), *b = pc_fb_new();
    pc_fb_set_redirect_url(a, pc_fb_url(b));
    pc_fb_set_redirect_url(b, pc_fb_url(a));
    pc_fb_rule(a, T(LOOKUP), PC_FB_REDIRECT, 0, NULL, 0, -1);
    pc_fb_rule(b, T(LOOKUP), PC_FB_REDIRECT, 0, NULL, 0, -1);
    pulsarc_client_t *c =
        fb_client_on(pc_fb_url(a), (const char *const[]){"maxLookupRedirects", "6", "operationTimeoutMs", "20000", NULL});
    pulsarc_producer_t *p = NULL;
    char err[1024] = "", pa[16], pb[16];
    double t0 = now_s();
    pulsarc_err_t e = pulsarc_producer_new(c, "loop-topic", NULL, &p, err, sizeof err);
    double took = now_s() - t0;
    pc_fb_stats_t sa, sb;
    pc_fb_stats(a, &sa);
    pc_fb_stats(b, &sb);
    printf("redirect loop: %s after %.2f s, LOOKUPs %llu + %llu: %s\n", pulsarc_errname(e), took,
           (unsigned long long)sa.cmds[T(LOOKUP)], (unsigned long long)sb.cmds[T(LOOKUP)], err);
    ck_assert_msg(e == PULSARC_ERR_TOO_MANY_REDIRECTS, "got %s: %s", pulsarc_errname(e), err);
    snprintf(pa, sizeof pa, ":%d", pc_fb_port(a));
    snprintf(pb, sizeof pb, ":%d", pc_fb_port(b));
    ck_assert_msg(strstr(err, "redirect loop") && strstr(err, pa) && strstr(err, pb) && strstr(err, "loop-topic"),
                  "the error names neither the loop nor its brokers: %s", err);
    /* Bounded: 7 LOOKUPs per attempt (6 redirects), and no retry storm. */
    uint64_t lookups = sa.cmds[T(LOOKUP)] + sb.cmds[T(LOOKUP)];
    ck_assert_msg(lookups >= 7 && lookups <= 70, "%llu LOOKUPs", (unsigned long long)lookups);
    ck_assert_msg(took < 20 + 10, "took %.1f s with a 20 s operation timeout", took);
    pulsarc_client_destroy(c);
    pc_fb_destroy(a);
    pc_fb_destroy(b);
}
END_TEST

/* ---- a namespace served only by a cluster the brokers do not serve ---- */

/* PUT on broker 1's admin API; 1 when it answered 200 or 204. */
static int admin_put(const char *path, const char *body) {
    int code = pct_admin("PUT", path, body);
    printf("PUT %s %s: HTTP %d\n", path, body, code);
    return code == 200 || code == 204;
}

/* tenant/ns whose only replication cluster is "ghost-N", a cluster the
 * metadata knows (its URLs on a dead loopback port) but no broker here serves. */
static void ghost_namespace(char *ns, size_t len) {
    char path[256], body[256], cluster[64];
    snprintf(cluster, sizeof cluster, "ghost-%d", (int)getpid());
    snprintf(path, sizeof path, "/admin/v2/clusters/%s", cluster);
    ck_assert(admin_put(path, "{\"serviceUrl\":\"http://127.0.0.1:9\",\"brokerServiceUrl\":\"pulsar://127.0.0.1:9\"}"));
    /* The tenant's name does not contain the cluster's: an error naming
     * the topic does not pass for one naming the cluster. */
    snprintf(path, sizeof path, "/admin/v2/tenants/gt-%d", (int)getpid());
    snprintf(body, sizeof body, "{\"allowedClusters\":[\"%s\",\"%s\"]}", cluster, pct_cluster_name());
    ck_assert(admin_put(path, body));
    snprintf(ns, len, "gt-%d/ns", (int)getpid());
    snprintf(path, sizeof path, "/admin/v2/namespaces/%s", ns);
    snprintf(body, sizeof body, "{\"replication_clusters\":[\"%s\"]}", cluster);
    ck_assert(admin_put(path, body));
}

static void expect_refused_lookup(const char *url, const char *topic, const char *cluster_name) {
    pulsarc_client_t *c = client_at(url, (const char *const[]){"operationTimeoutMs", "10000", NULL});
    pulsarc_producer_t *p = NULL;
    char err[1024] = "";
    double t0 = now_s();
    pulsarc_err_t e = pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err);
    double took = now_s() - t0;
    printf("unknown cluster via %s: %s after %.2f s: %s\n", url, pulsarc_errname(e), took, err);
    ck_assert_msg(e != PULSARC_OK, "a producer on %s was created", topic);
    ck_assert_msg(strstr(err, cluster_name) != NULL, "the error does not name the cluster %s: %s", cluster_name, err);
    ck_assert_msg(took < 10 + 10, "took %.1f s with a 10 s operation timeout", took);
    pulsarc_client_destroy(c);
}

START_TEST(test_unknown_cluster) {
    char ns[128], topic[256], cluster[64];
    ghost_namespace(ns, sizeof ns);
    snprintf(cluster, sizeof cluster, "ghost-%d", (int)getpid());
    snprintf(topic, sizeof topic, "persistent://%s/t", ns);
    expect_refused_lookup(cluster_env("PULSARC_CLUSTER_BROKER_URL"), topic, cluster);
    expect_refused_lookup(cluster_env("PULSARC_CLUSTER_PROXY_URL"), topic, cluster);
    expect_refused_lookup(cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL"), topic, cluster);
}
END_TEST

/* ---- the proxy refuses the connection ---- */

START_TEST(test_proxy_refuses_bad_token) {
    pulsarc_client_t *c = client_at(cluster_env("PULSARC_CLUSTER_PROXY_URL"),
                                    (const char *const[]){"authPlugin", "token", "authParams", "token:not-a-jwt",
                                                          "operationTimeoutMs", "10000", NULL});
    pulsarc_producer_t *p = NULL;
    char err[1024] = "";
    double t0 = now_s();
    pulsarc_err_t e = pulsarc_producer_new(c, pct_topic("proxy-refused"), NULL, &p, err, sizeof err);
    double took = now_s() - t0;
    printf("proxy with a bad token: %s after %.2f s: %s\n", pulsarc_errname(e), took, err);
    ck_assert_msg(e == PULSARC_ERR_BROKER_AUTHENTICATION, "got %s: %s", pulsarc_errname(e), err);
    ck_assert_msg(*err != '\0', "no error text");
    ck_assert_msg(took < 10 + 10, "took %.1f s with a 10 s operation timeout", took);
    pulsarc_client_destroy(c);
}
END_TEST

/* ---- multi-host service URLs ---- */

/* A loopback port nothing listens on: bound, then closed. */
static int dead_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* "scheme://DEAD,host:port" from a one-host URL: the dead host first. */
static void with_dead_first(const char *url, const char *dead_host, int dead, char *out, size_t len) {
    const char *rest = strstr(url, "://");
    ck_assert_ptr_nonnull(rest);
    snprintf(out, len, "%.*s://%s:%d,%s", (int)(rest - url), url, dead_host, dead, rest + 3);
}

static const char *secret(const char *name) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", cluster_env("PULSARC_TEST_SECRETS"), name);
    return path;
}

/* Four rounds of producer + consumer + one message on url, each a fresh
 * lookup (so half of them start at the dead host). */
static void rounds_on(const char *url, const char *const *more) {
    pulsarc_client_t *c = client_at(url, more);
    for (int round = 0; round < 4; round++) {
        const char *topic = pct_topic("multi-host");
        char err[1024] = "";
        pulsarc_conf_t *cc = pct_conf((const char *const[]){"subscriptionInitialPosition", "Earliest", NULL});
        pulsarc_consumer_t *cons = NULL;
        pulsarc_err_t e = pulsarc_consumer_new(c, topic, "mh", cc, &cons, err, sizeof err);
        pulsarc_conf_destroy(cc);
        ck_assert_msg(e == PULSARC_OK, "round %d on %s: consumer: %s: %s", round, url, pulsarc_errname(e), err);
        pulsarc_producer_t *p = NULL;
        e = pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err);
        ck_assert_msg(e == PULSARC_OK, "round %d on %s: producer: %s: %s", round, url, pulsarc_errname(e), err);
        ck_assert_int_eq(fb_send_text(p, "hello"), PULSARC_OK);
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 30000), PULSARC_OK);
        ck_assert_int_eq((int)pulsarc_msg_len(m), 5);
        ck_assert(memcmp(pulsarc_msg_payload(m), "hello", 5) == 0);
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
        pulsarc_producer_destroy(p);
        pulsarc_consumer_destroy(cons);
    }
    printf("4 rounds of lookup, produce and consume on %s\n", url);
    pulsarc_client_destroy(c);
}

START_TEST(test_multi_host_skips_dead_host) {
    int dead = dead_port();
    char url[512];
    with_dead_first(cluster_env("PULSARC_CLUSTER_BROKER_URL"), "127.0.0.1", dead, url, sizeof url);
    rounds_on(url, NULL);
    with_dead_first(cluster_env("PULSARC_CLUSTER_PROXY_URL"), "127.0.0.1", dead, url, sizeof url);
    rounds_on(url, NULL);
    with_dead_first(cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL"), "127.0.0.1", dead, url, sizeof url);
    rounds_on(url, NULL);
    with_dead_first(cluster_env("PULSARC_CLUSTER_BROKER_URL_TLS"), "localhost", dead, url, sizeof url);
    rounds_on(url, (const char *const[]){"tlsTrustCertsFilePath", secret("ca.pem"), NULL});
    with_dead_first(cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL_TLS"), "localhost", dead, url, sizeof url);
    rounds_on(url, (const char *const[]){"tlsTrustCertsFilePath", secret("ca.pem"), NULL});
}
END_TEST

START_TEST(test_multi_host_all_dead) {
    int d1 = dead_port(), d2 = dead_port();
    const char *schemes[] = {"pulsar", "http"};
    for (int i = 0; i < 2; i++) {
        char url[256], h1[32], h2[32];
        snprintf(url, sizeof url, "%s://127.0.0.1:%d,127.0.0.1:%d", schemes[i], d1, d2);
        pulsarc_client_t *c = client_at(url, (const char *const[]){"operationTimeoutMs", "5000", NULL});
        pulsarc_producer_t *p = NULL;
        char err[1024] = "";
        double t0 = now_s();
        pulsarc_err_t e = pulsarc_producer_new(c, "persistent://public/default/nowhere", NULL, &p, err, sizeof err);
        double took = now_s() - t0;
        printf("all hosts dead, %s: %s after %.2f s: %s\n", url, pulsarc_errname(e), took, err);
        ck_assert_msg(e != PULSARC_OK, "created a producer with no broker");
        snprintf(h1, sizeof h1, "127.0.0.1:%d", d1);
        snprintf(h2, sizeof h2, "127.0.0.1:%d", d2);
        ck_assert_msg(strstr(err, "2 hosts") && (strstr(err, h1) || strstr(err, h2)),
                      "the error names neither the service URL's hosts nor how many: %s", err);
        ck_assert_msg(took < 5 + 10, "took %.1f s with a 5 s operation timeout", took);
        pulsarc_client_destroy(c);
    }
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("cluster_faults");
    TCase *t = tcase_create("faults");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_redirect_loop_between_brokers);
    tcase_add_test(t, test_unknown_cluster);
    tcase_add_test(t, test_proxy_refuses_bad_token);
    tcase_add_test(t, test_multi_host_skips_dead_host);
    tcase_add_test(t, test_multi_host_all_dead);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
