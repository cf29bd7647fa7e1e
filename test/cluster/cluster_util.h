/*
 * What the cluster tests share: the harness's environment, a monotonic
 * clock, and HTTP against the brokers' web service (admin and lookup; curl
 * follows the redirects to a topic's owner). Header-only, static inline, so
 * each test program takes what it uses; failures fail the running test.
 */
#ifndef PC_CLUSTER_UTIL_H
#define PC_CLUSTER_UTIL_H
#include <check.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A variable run-with-cluster.sh exports; fails the test when missing. */
static inline const char *cluster_env(const char *name) {
    const char *v = getenv(name);
    ck_assert_msg(v && *v, "%s is not set: run under test/cluster/run-with-cluster.sh", name);
    return v;
}

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct body {
    char *p;
    size_t n;
} body_t;

static inline size_t on_body(void *p, size_t sz, size_t n, void *u) {
    body_t *b = u;
    char *q = realloc(b->p, b->n + sz * n + 1);
    if (!q)
        return 0;
    memcpy(q + b->n, p, sz * n);
    b->p = q;
    b->n += sz * n;
    b->p[b->n] = '\0';
    return sz * n;
}

/* METHOD url (JSON, empty body unless GET); the HTTP status (-1: no answer), *text the body if asked. */
static inline long http_call(const char *method, const char *url, char **text) {
    body_t b = {calloc(1, 1), 0};
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    if (strcmp(method, "GET") != 0)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    long code = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdr);
    if (text)
        *text = b.p;
    else
        free(b.p);
    return code;
}

/* GET url, which must answer 200; the body (malloc'd). */
static inline char *http_get(const char *url) {
    char *text = NULL;
    long code = http_call("GET", url, &text);
    ck_assert_msg(code == 200, "GET %s: HTTP %ld: %s", url, code, text);
    return text;
}

/* A string field of the JSON object GET url answers; fails the test otherwise. */
static inline void json_field_of(const char *url, const char *field, char *out, size_t len) {
    char *text = NULL;
    long code = http_call("GET", url, &text);
    json_object *j = code == 200 ? json_tokener_parse(text) : NULL, *v = NULL;
    ck_assert_msg(j && json_object_object_get_ex(j, field, &v), "GET %s: HTTP %ld: %s", url, code, text);
    snprintf(out, len, "%s", json_object_get_string(v));
    json_object_put(j);
    free(text);
}

/* The owner's pulsar:// URL of persistent topic "tenant/ns/local", by HTTP
 * lookup on web_url (a lookup assigns an owner to an unowned topic). */
static inline void lookup_owner(const char *web_url, const char *path, char *out, size_t len) {
    char url[1024];
    snprintf(url, sizeof url, "%s/lookup/v2/topic/persistent/%s", web_url, path);
    json_field_of(url, "brokerUrl", out, len);
}

/* 0-based index of url in a comma-separated list, or -1. */
static inline int index_in_list(const char *list, const char *url) {
    size_t n = strlen(url);
    int i = 0;
    for (const char *p = list; *p; i++) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, url, n) == 0)
            return i;
        p += len;
        if (*p == ',')
            p++;
    }
    return -1;
}
#endif
