/* Helpers for the live-broker tests: URLs, unique names, admin calls. */
#include "testutil.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *pct_service_url(void) {
    const char *u = getenv("PULSAR_SERVICE_URL");
    return u && *u ? u : "pulsar://127.0.0.1:6650";
}

const char *pct_admin_url(void) {
    const char *u = getenv("PULSAR_ADMIN_URL");
    return u && *u ? u : "http://127.0.0.1:8080";
}

const char *pct_cluster_name(void) {
    const char *c = getenv("PULSAR_CLUSTER");
    return c && *c ? c : "standalone";
}

const char *pct_topic(const char *prefix) {
    static char bufs[16][256];
    static int n;
    char *b = bufs[n++ % 16];
    snprintf(b, 256, "%s-%d-%d-%ld", prefix, (int)getpid(), n, (long)time(NULL));
    return b;
}

static size_t discard(void *p, size_t sz, size_t n, void *u) {
    (void)p;
    (void)u;
    return sz * n;
}

int pct_admin(const char *method, const char *path, const char *body) {
    CURL *h = curl_easy_init();
    if (!h)
        return -1;
    char url[1024];
    snprintf(url, sizeof url, "%s%s", pct_admin_url(), path);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    /* On a cluster a broker redirects (307) requests about topics it does not own. */
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    long code = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return (int)code;
}

static pulsarc_admin_t *pct_admin_client(void) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    pulsarc_conf_set(conf, "webServiceUrl", pct_admin_url(), NULL, 0);
    pulsarc_admin_t *a = NULL;
    char err[256];
    ck_assert_msg(pulsarc_admin_new(conf, &a, err, sizeof err) == PULSARC_OK, "admin: %s", err);
    pulsarc_conf_destroy(conf);
    return a;
}

void pct_create_partitioned(const char *topic, int partitions) {
    pulsarc_admin_t *a = pct_admin_client();
    char err[256];
    pulsarc_err_t e = pulsarc_admin_create_partitioned_topic(a, topic, partitions, err, sizeof err);
    ck_assert_msg(e == PULSARC_OK, "create %s with %d partitions: %s", topic, partitions, err);
    pulsarc_admin_destroy(a);
}

void pct_create_dedup_namespace(const char *ns) {
    pulsarc_admin_t *a = pct_admin_client();
    char err[256];
    ck_assert_msg(pulsarc_admin_create_namespace(a, ns, err, sizeof err) == PULSARC_OK, "namespace %s: %s", ns, err);
    ck_assert_msg(pulsarc_admin_namespace_set_deduplication(a, ns, 1, err, sizeof err) == PULSARC_OK,
                  "dedup on %s: %s", ns, err);
    pulsarc_admin_destroy(a);
}

pulsarc_conf_t *pct_conf(const char *const *kv) {
    pulsarc_conf_t *conf = pulsarc_conf_new();
    char err[256];
    for (size_t i = 0; kv && kv[i]; i += 2)
        ck_assert_msg(pulsarc_conf_set(conf, kv[i], kv[i + 1], err, sizeof err) == PULSARC_OK,
                      "conf %s: %s", kv[i], err);
    return conf;
}

pulsarc_client_t *pct_client_with(const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    char err[256];
    ck_assert(pulsarc_conf_set(conf, "serviceUrl", pct_service_url(), err, sizeof err) == PULSARC_OK);
    pulsarc_client_t *c = NULL;
    pulsarc_err_t e = pulsarc_client_new(conf, &c, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "client: %s", err);
    return c;
}

pulsarc_client_t *pct_client(void) { return pct_client_with(NULL); }
