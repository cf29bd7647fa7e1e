/*
 * Conformance on the three-broker test cluster (test/cluster/start.sh),
 * run under run-with-cluster.sh, which exports where the brokers and the
 * proxy are (PULSARC_CLUSTER_*):
 *  - a 12-partition topic whose partitions the brokers' own lookups place
 *    on more than one broker: everything produced is consumed, and every
 *    keyed message lands on the partition the Java client's default
 *    routing (String.hashCode & INT_MAX, mod 12) names;
 *  - a client given broker 1's URL alone produces to and consumes from
 *    topics owned by brokers 2 and 3, and the owner is the broker that
 *    holds the producer;
 *  - a client given the proxy's URL: none of its TCP connections goes to a
 *    broker; the proxy's counters show it accepted at least as many
 *    connections and answered a lookup per partition, and its connection
 *    table lists the client's connections it carries to brokers;
 *  - HTTP lookup: broker 1's http:// URL as the service URL does all of the
 *    first test; its https:// URL too, with the test CA, and a wrong CA is
 *    a TLS error; the lookup carries the client's token (an expired one is
 *    refused with HTTP 401).
 * The service URL of the first test is $PULSAR_SERVICE_URL (broker 1 or the
 * proxy, as via.sh set it); the other two name their entry point.
 * Ownership comes from the brokers' HTTP lookup (/lookup/v2/topic/...), read
 * with json-c. Single-threaded test code (Check forks one process per test).
 */
#include <curl/curl.h>
#include <dirent.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_util.h"
#include "testutil.h"

#define NPARTS 12
#define NMSGS 1200
#define NKEYS 97

/* The owner's pulsar:// URL of a topic of public/default, by HTTP lookup on admin_url. */
static void owner_of(const char *admin_url, const char *topic, char *out, size_t len) {
    char path[512];
    snprintf(path, sizeof path, "public/default/%s", topic);
    lookup_owner(admin_url, path, out, len);
}

/* Port of the i-th URL of a comma-separated list of scheme://host:port. */
static int port_in_list(const char *list, int i) {
    const char *p = list;
    for (; i > 0 && p; i--)
        p = (p = strchr(p, ',')) ? p + 1 : NULL;
    ck_assert_ptr_nonnull(p);
    const char *colon = NULL;
    for (const char *q = p; *q && *q != ','; q++)
        if (*q == ':')
            colon = q;
    ck_assert_ptr_nonnull(colon);
    return atoi(colon + 1);
}

/* ---- the Java client's default key routing ---- */

/* Java's String.hashCode of an ASCII string, & Integer.MAX_VALUE, mod n. */
static int java_partition(const char *key, int n) {
    int32_t h = 0;
    for (const char *p = key; *p; p++)
        h = (int32_t)((uint32_t)h * 31u + (uint8_t)*p);
    return (int)((h & 0x7fffffff) % n);
}

static int partition_of_topic(const char *topic) {
    const char *p = strstr(topic, "-partition-");
    ck_assert_msg(p != NULL, "not a partition: %s", topic);
    return atoi(p + strlen("-partition-"));
}

static pulsarc_producer_t *producer_on(pulsarc_client_t *c, const char *topic) {
    pulsarc_producer_t *p = NULL;
    char err[512];
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"batchingMaxPublishDelayMicros", "2000", NULL});
    pulsarc_err_t e = pulsarc_producer_new(c, topic, conf, &p, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "producer on %s: %s", topic, err);
    return p;
}

static pulsarc_consumer_t *consumer_on(pulsarc_client_t *c, const char *topic) {
    pulsarc_consumer_t *cons = NULL;
    char err[512];
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"subscriptionInitialPosition", "Earliest", NULL});
    pulsarc_err_t e = pulsarc_consumer_new(c, topic, "cluster-sub", conf, &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "consumer on %s: %s", topic, err);
    return cons;
}

/*
 * Sends NMSGS keyed messages (property "i" = index) and checks each id's
 * partition against the Java routing; then receives them all, once each,
 * each from the partition its key names.
 */
static void produce_consume_keyed(pulsarc_client_t *c, const char *topic) {
    pulsarc_consumer_t *cons = consumer_on(c, topic);
    pulsarc_producer_t *p = producer_on(c, topic);
    ck_assert_int_eq(pulsarc_producer_partitions(p), NPARTS);
    int per_part[NPARTS] = {0};
    for (int i = 0; i < NMSGS; i++) {
        char key[32], v[16];
        snprintf(key, sizeof key, "user-%d", i % NKEYS);
        snprintf(v, sizeof v, "%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
        pulsarc_msg_set_key(m, key);
        pulsarc_msg_set_property(m, "i", v);
        pulsarc_msgid_t id;
        pulsarc_err_t e = pulsarc_producer_send(p, m, &id);
        pulsarc_msg_destroy(m);
        ck_assert_msg(e == PULSARC_OK, "send %d: %s", i, pulsarc_strerror(e));
        ck_assert_int_eq(id.partition, java_partition(key, NPARTS));
        per_part[id.partition]++;
    }
    static unsigned char seen[NMSGS];
    memset(seen, 0, sizeof seen);
    for (int n = 0; n < NMSGS; n++) {
        pulsarc_msg_t *m = NULL;
        pulsarc_err_t e = pulsarc_consumer_receive(cons, &m, 30000);
        ck_assert_msg(e == PULSARC_OK, "receive #%d of %d: %s", n, NMSGS, pulsarc_strerror(e));
        const char *is = pulsarc_msg_property(m, "i");
        ck_assert_ptr_nonnull(is);
        int i = atoi(is);
        ck_assert_msg(i >= 0 && i < NMSGS && !seen[i], "message %d unexpected or twice", i);
        seen[i] = 1;
        ck_assert_int_eq(partition_of_topic(pulsarc_msg_topic(m)), java_partition(pulsarc_msg_key(m), NPARTS));
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    pulsarc_msg_t *extra = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &extra, 1000), PULSARC_ERR_NO_MESSAGE);
    printf("%s: %d messages over %d partitions, per partition:", topic, NMSGS, NPARTS);
    for (int i = 0; i < NPARTS; i++)
        printf(" %d", per_part[i]);
    printf("\n");
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
}

/* How many brokers own the partitions of topic; prints the placement. */
static int brokers_owning_partitions(const char *topic) {
    const char *brokers = cluster_env("PULSARC_CLUSTER_BROKER_URLS");
    int count[8] = {0}, distinct = 0;
    printf("%s:", topic);
    for (int i = 0; i < NPARTS; i++) {
        char part[512], owner[256];
        snprintf(part, sizeof part, "%s-partition-%d", topic, i);
        owner_of(pct_admin_url(), part, owner, sizeof owner);
        int b = index_in_list(brokers, owner);
        ck_assert_msg(b >= 0 && b < 8, "partition %d owned by %s, not one of %s", i, owner, brokers);
        distinct += count[b]++ == 0;
        printf(" %d->broker%d", i, b + 1);
    }
    printf("\n");
    return distinct;
}

START_TEST(test_partitions_spread_over_brokers) {
    const char *topic = pct_topic("cluster-p12");
    pct_create_partitioned(topic, NPARTS);
    pulsarc_client_t *c = pct_client();
    produce_consume_keyed(c, topic);
    pulsarc_client_destroy(c);
    /* The producer's lookups placed the bundles; a second broker must hold some. */
    int distinct = brokers_owning_partitions(topic);
    ck_assert_msg(distinct > 1, "all %d partitions on one broker", NPARTS);
}
END_TEST

/* ---- a client on broker 1 reaches the others ---- */

/* A fresh topic name that broker number `want` (0-based) owns, found by lookup. */
static const char *topic_owned_by(int want) {
    const char *brokers = cluster_env("PULSARC_CLUSTER_BROKER_URLS");
    for (int tries = 0; tries < 200; tries++) {
        const char *t = pct_topic("cluster-owned");
        char owner[256];
        owner_of(cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL"), t, owner, sizeof owner);
        if (index_in_list(brokers, owner) == want)
            return t;
    }
    ck_abort_msg("no topic placed on broker %d in 200 lookups", want + 1);
    return NULL;
}

/* Publishers of topic as its owner (admin_url) reports them. */
static int publishers_on(const char *admin_url, const char *topic) {
    char url[1024];
    snprintf(url, sizeof url, "%s/admin/v2/persistent/public/default/%s/stats", admin_url, topic);
    char *text = http_get(url);
    json_object *j = json_tokener_parse(text), *pubs = NULL;
    ck_assert_msg(j && json_object_object_get_ex(j, "publishers", &pubs), "stats: %s", text);
    int n = (int)json_object_array_length(pubs);
    json_object_put(j);
    free(text);
    return n;
}

START_TEST(test_broker1_reaches_brokers_2_and_3) {
    const char *admins = cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URLS");
    const char *kv[] = {"serviceUrl", cluster_env("PULSARC_CLUSTER_BROKER_URL"), NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_client_t *c = NULL;
    char err[512];
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "client: %s", err);
    pulsarc_conf_destroy(conf);
    for (int b = 1; b <= 2; b++) {
        char topic[256], admin[256];
        snprintf(topic, sizeof topic, "%s", topic_owned_by(b));
        const char *a = admins;
        for (int k = 0; k < b; k++)
            a = strchr(a, ',') + 1;
        snprintf(admin, sizeof admin, "%.*s", (int)strcspn(a, ","), a);
        pulsarc_consumer_t *cons = consumer_on(c, topic);
        pulsarc_producer_t *p = producer_on(c, topic);
        ck_assert_int_eq(publishers_on(admin, topic), 1);
        for (int i = 0; i < 20; i++) {
            char v[16];
            snprintf(v, sizeof v, "%d", i);
            pulsarc_msg_t *m = pulsarc_msg_new();
            pulsarc_msg_set_payload(m, v, strlen(v), PULSARC_MSG_F_COPY);
            ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
            pulsarc_msg_destroy(m);
        }
        for (int i = 0; i < 20; i++) {
            pulsarc_msg_t *m = NULL;
            ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 30000), PULSARC_OK);
            char v[16];
            snprintf(v, sizeof v, "%d", i);
            ck_assert_int_eq((int)pulsarc_msg_len(m), (int)strlen(v));
            ck_assert(memcmp(pulsarc_msg_payload(m), v, strlen(v)) == 0);
            ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
            pulsarc_msg_destroy(m);
        }
        printf("broker1's URL reached %s on broker%d (%s)\n", topic, b + 1, admin);
        pulsarc_producer_destroy(p);
        pulsarc_consumer_destroy(cons);
    }
    pulsarc_client_destroy(c);
}
END_TEST

/* ---- through the proxy ---- */

#define MAX_SOCKS 256

/* This process's established TCP connections as (local port, remote port). */
static int own_tcp_connections(int local[], int remote[], int cap) {
    unsigned long inodes[MAX_SOCKS];
    int ninodes = 0;
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL && ninodes < MAX_SOCKS;) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (sscanf(link, "socket:[%lu]", &inodes[ninodes]) == 1)
            ninodes++;
    }
    closedir(d);
    FILE *f = fopen("/proc/self/net/tcp", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        unsigned lport, rport, state;
        unsigned long inode;
        if (sscanf(line, " %*d: %*x:%x %*x:%x %x %*x:%*x %*x:%*x %*x %*u %*d %lu", &lport, &rport, &state,
                   &inode) != 4 || state != 1 /* ESTABLISHED */)
            continue;
        for (int i = 0; i < ninodes; i++) {
            if (inodes[i] == inode) {
                local[n] = (int)lport;
                remote[n++] = (int)rport;
                break;
            }
        }
    }
    fclose(f);
    return n;
}

/* A counter of the proxy's /metrics/ (name without the "{" of its labels). */
static double proxy_counter(const char *proxy_admin, const char *name) {
    char url[512], needle[128];
    snprintf(url, sizeof url, "%s/metrics/", proxy_admin);
    snprintf(needle, sizeof needle, "\n%s{", name);
    char *text = http_get(url);
    const char *p = strstr(text, needle);
    ck_assert_msg(p != NULL, "no %s in the proxy's metrics", name);
    p = strchr(p, '}');
    double v = p ? atof(p + 1) : -1;
    free(text);
    return v;
}

START_TEST(test_proxy_carries_every_connection) {
    const char *proxy_url = cluster_env("PULSARC_CLUSTER_PROXY_URL");
    const char *proxy_admin = cluster_env("PULSARC_CLUSTER_PROXY_ADMIN_URL");
    const char *brokers = cluster_env("PULSARC_CLUSTER_BROKER_URLS");
    int proxy_port = port_in_list(proxy_url, 0);
    const char *topic = pct_topic("cluster-proxied");
    pct_create_partitioned(topic, NPARTS);

    double lookups_before = proxy_counter(proxy_admin, "pulsar_proxy_lookup_requests_total");
    double accepted_before = proxy_counter(proxy_admin, "pulsar_proxy_new_connections_total");
    const char *kv[] = {"serviceUrl", proxy_url, NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_client_t *c = NULL;
    char err[512];
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "client: %s", err);
    pulsarc_conf_destroy(conf);
    pulsarc_consumer_t *cons = consumer_on(c, topic);
    pulsarc_producer_t *p = producer_on(c, topic);
    for (int i = 0; i < 4 * NPARTS; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        pulsarc_msg_t *m = pulsarc_msg_new();
        pulsarc_msg_set_payload(m, key, strlen(key), PULSARC_MSG_F_COPY);
        pulsarc_msg_set_key(m, key);
        ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    for (int i = 0; i < 4 * NPARTS; i++) {
        pulsarc_msg_t *m = NULL;
        ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, 30000), PULSARC_OK);
        ck_assert_int_eq(pulsarc_consumer_ack(cons, m), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }

    /* The client's side: connections to the proxy, none to a broker. */
    int local[MAX_SOCKS], remote[MAX_SOCKS], to_proxy = 0;
    int n = own_tcp_connections(local, remote, MAX_SOCKS);
    for (int i = 0; i < n; i++) {
        for (int b = 0; b < 3; b++)
            ck_assert_msg(remote[i] != port_in_list(brokers, b), "a connection to broker%d's port %d", b + 1,
                          remote[i]);
        to_proxy += remote[i] == proxy_port;
    }
    ck_assert_int_ge(to_proxy, 2);

    /* The proxy's side: each of those connections, and where it carried it. */
    char url[512];
    snprintf(url, sizeof url, "%s/proxy-stats/connections", proxy_admin);
    char *text = http_get(url);
    json_object *list = json_tokener_parse(text);
    ck_assert_msg(list && json_object_is_type(list, json_type_array), "proxy stats: %s", text);
    int listed = 0, broker_seen[3] = {0};
    for (int i = 0; i < n; i++) {
        if (remote[i] != proxy_port)
            continue;
        char client_addr[64];
        snprintf(client_addr, sizeof client_addr, "/127.0.0.1:%d", local[i]);
        for (size_t k = 0; k < json_object_array_length(list); k++) {
            json_object *e = json_object_array_get_idx(list, k), *ca = NULL, *ba = NULL;
            if (!json_object_object_get_ex(e, "clientAddress", &ca) ||
                strcmp(json_object_get_string(ca), client_addr) != 0)
                continue;
            listed++;
            const char *baddr = json_object_object_get_ex(e, "brokerAddress", &ba) ? json_object_get_string(ba)
                                                                                  : NULL;
            const char *colon = baddr ? strrchr(baddr, ':') : NULL;
            int to_broker = 0;
            for (int b = 0; colon && b < 3; b++) {
                int hit = atoi(colon + 1) == port_in_list(brokers, b);
                broker_seen[b] |= hit;
                to_broker |= hit;
            }
            printf("proxied: client %s -> broker %s\n", client_addr, baddr ? baddr : "(none)");
            ck_assert_msg(to_broker, "the proxy carries %s to %s, not a broker", client_addr, baddr ? baddr : "(none)");
        }
    }
    json_object_put(list);
    free(text);
    /* It accepted every connection the client has to it, and lists (as
     * carried to a broker) at least one; lookup-only ones it never lists. */
    double accepted = proxy_counter(proxy_admin, "pulsar_proxy_new_connections_total") - accepted_before;
    printf("the proxy accepted %.0f connections, lists %d of the client's %d as carried to %d broker(s)\n",
           accepted, listed, to_proxy, broker_seen[0] + broker_seen[1] + broker_seen[2]);
    ck_assert_msg(accepted >= to_proxy, "the proxy accepted %.0f connections, the client has %d to it", accepted,
                  to_proxy);
    ck_assert_msg(listed >= 1, "the proxy lists none of the client's %d connections to it", to_proxy);
    double lookups = proxy_counter(proxy_admin, "pulsar_proxy_lookup_requests_total") - lookups_before;
    printf("the proxy answered %.0f lookups while the client looked up %d partitions\n", lookups, NPARTS);
    ck_assert_msg(lookups >= NPARTS, "the proxy answered %.0f lookups for %d partitions", lookups, NPARTS);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
}
END_TEST

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

static const char *secret(const char *name) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", cluster_env("PULSARC_TEST_SECRETS"), name);
    return path;
}

/* Broker 1's HTTP URL as the service URL: partition metadata, lookups
 * redirected to the other brokers, all 12 partitions produced and consumed. */
START_TEST(test_http_service_url) {
    const char *topic = pct_topic("cluster-http");
    pct_create_partitioned(topic, NPARTS);
    pulsarc_client_t *c = client_at(cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL"), NULL);
    produce_consume_keyed(c, topic);
    pulsarc_client_destroy(c);
    ck_assert_int_gt(brokers_owning_partitions(topic), 1);
}
END_TEST

/* https:// with the test CA works; a CA that signed nothing here is refused. */
START_TEST(test_https_service_url) {
    const char *url = cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL_TLS");
    const char *topic = pct_topic("cluster-https");
    pct_create_partitioned(topic, NPARTS);
    pulsarc_client_t *c = client_at(url, (const char *const[]){"tlsTrustCertsFilePath", secret("ca.pem"), NULL});
    produce_consume_keyed(c, topic);
    pulsarc_client_destroy(c);

    c = client_at(url, (const char *const[]){"tlsTrustCertsFilePath", secret("other-ca.pem"), NULL});
    pulsarc_producer_t *p = NULL;
    char err[512];
    pulsarc_err_t e = pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_TLS, "wrong CA: got %s: %s", pulsarc_errname(e), err);
    pulsarc_client_destroy(c);
}
END_TEST

/* Over http:// the lookup carries the client's token: a valid one works, an
 * expired one is refused by the broker's REST API (HTTP 401). */
START_TEST(test_http_lookup_sends_the_token) {
    const char *url = cluster_env("PULSARC_CLUSTER_BROKER_ADMIN_URL");
    char good[600], expired[600];
    snprintf(good, sizeof good, "file:%s", secret("client.jwt"));
    snprintf(expired, sizeof expired, "file:%s", secret("expired.jwt"));
    const char *topic = pct_topic("cluster-http-token");
    pulsarc_client_t *c = client_at(url, (const char *const[]){"authPlugin", "token", "authParams", good, NULL});
    pulsarc_producer_t *p = producer_on(c, topic);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, "t", 1, PULSARC_MSG_F_COPY);
    ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
    pulsarc_msg_destroy(m);
    pulsarc_producer_destroy(p);
    pulsarc_client_destroy(c);

    c = client_at(url, (const char *const[]){"authPlugin", "token", "authParams", expired,
                                             "operationTimeoutMs", "5000", NULL});
    char err[512] = "";
    pulsarc_err_t e = pulsarc_producer_new(c, topic, NULL, &p, err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_BROKER_AUTHENTICATION && strstr(err, "HTTP 401"), "expired token: %s: %s",
                  pulsarc_errname(e), err);
    pulsarc_client_destroy(c);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("cluster");
    TCase *t = tcase_create("cluster");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_partitions_spread_over_brokers);
    tcase_add_test(t, test_broker1_reaches_brokers_2_and_3);
    tcase_add_test(t, test_proxy_carries_every_connection);
    tcase_add_test(t, test_http_service_url);
    tcase_add_test(t, test_https_service_url);
    tcase_add_test(t, test_http_lookup_sends_the_token);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
