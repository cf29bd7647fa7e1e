/*
 * Helpers for the live-broker tests: URLs, unique names, admin calls, and
 * the loop-mode switch: a driver thread per client plays the application's
 * event loop (poll on the client's fd for the next timeout, then step).
 */
#define PCT_NO_DESTROY_WRAP
#include "testutil.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>

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

/* A producer for topic: batch > 1 batches up to batch messages an entry, else none. */
static pulsarc_producer_t *tagged_producer(pulsarc_client_t *c, const char *topic, int batch) {
    char max[16];
    snprintf(max, sizeof max, "%d", batch > 1 ? batch : 1);
    const char *kv[] = {"batchingEnabled", batch > 1 ? "true" : "false", "batchingMaxMessages", max,
                        "batchingMaxPublishDelayMicros", "2000000", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_producer_t *p = NULL;
    char err[256];
    ck_assert_msg(pulsarc_producer_new(c, topic, conf, &p, err, sizeof err) == PULSARC_OK, "%s: %s",
                  topic, err);
    pulsarc_conf_destroy(conf);
    return p;
}

static pulsarc_msg_t *tagged_msg(const char *tag, int i) {
    char body[128];
    snprintf(body, sizeof body, "%s-%d", tag, i);
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, body, strlen(body), PULSARC_MSG_F_COPY);
    return m;
}

void pct_send_tagged(pulsarc_client_t *c, const char *topic, const char *tag, int n) {
    pulsarc_producer_t *p = tagged_producer(c, topic, 0);
    for (int i = 0; i < n; i++) {
        pulsarc_msg_t *m = tagged_msg(tag, i);
        ck_assert_int_eq(pulsarc_producer_send(p, m, NULL), PULSARC_OK);
        pulsarc_msg_destroy(m);
    }
    pulsarc_producer_destroy(p);
}

void pct_send_tagged_async(pulsarc_client_t *c, const char *topic, const char *tag, int n,
                           int batch) {
    pulsarc_producer_t *p = tagged_producer(c, topic, batch);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(pulsarc_producer_send_async(p, tagged_msg(tag, i), NULL, NULL), PULSARC_OK);
    ck_assert_int_eq(pulsarc_producer_flush(p, 30000), PULSARC_OK);
    pulsarc_producer_destroy(p);
}

int pct_loop_mode(void) {
    const char *v = getenv("PULSARC_TEST_LOOP_MODE");
    return v && !strcmp(v, "1");
}

typedef struct driver {
    struct driver *next;
    pulsarc_client_t *c;
    pthread_t thread;
    atomic_int stop;
} driver_t;

static pthread_mutex_t drivers_lock = PTHREAD_MUTEX_INITIALIZER;
static driver_t *drivers;

/* The application's loop: sleep on the fd until the next timer, step. */
static void *drive(void *arg) {
    driver_t *d = arg;
    int fd = pulsarc_client_fd(d->c);
    while (!atomic_load(&d->stop)) {
        int t = pulsarc_client_next_timeout_ms(d->c);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        poll(&p, 1, t < 0 || t > 100 ? 100 : t); /* wakes now and then to see stop */
        char err[256];
        pulsarc_err_t e = pulsarc_client_step(d->c, 0, err, sizeof err);
        if (e == PULSARC_ERR_CLOSED)
            break;
        if (e != PULSARC_OK) { /* not ck_assert: this is not the test's thread */
            fprintf(stderr, "loop-mode driver: pulsarc_client_step: %s\n", err);
            abort();
        }
    }
    return NULL;
}

static void start_driver(pulsarc_client_t *c) {
    driver_t *d = calloc(1, sizeof *d);
    ck_assert(d != NULL);
    d->c = c;
    atomic_init(&d->stop, 0);
    ck_assert(pthread_create(&d->thread, NULL, drive, d) == 0);
    pthread_mutex_lock(&drivers_lock);
    d->next = drivers;
    drivers = d;
    pthread_mutex_unlock(&drivers_lock);
}

static driver_t *take_driver(pulsarc_client_t *c) {
    pthread_mutex_lock(&drivers_lock);
    driver_t *d = NULL;
    for (driver_t **pp = &drivers; *pp; pp = &(*pp)->next) {
        if ((*pp)->c == c) {
            d = *pp;
            *pp = d->next;
            break;
        }
    }
    pthread_mutex_unlock(&drivers_lock);
    return d;
}

void pct_client_destroy(pulsarc_client_t *c) {
    driver_t *d = c ? take_driver(c) : NULL;
    if (d) { /* close while the driver steps, as an application would */
        pulsarc_client_close(c, -1);
        atomic_store(&d->stop, 1);
        pthread_join(d->thread, NULL);
        free(d);
    }
    pulsarc_client_destroy(c);
}

pulsarc_client_t *pct_client_with(const char *const *kv) {
    pulsarc_conf_t *conf = pct_conf(kv);
    char err[256];
    ck_assert(pulsarc_conf_set(conf, "serviceUrl", pct_service_url(), err, sizeof err) == PULSARC_OK);
    if (pct_loop_mode())
        ck_assert(pulsarc_conf_set(conf, "threadingMode", "loop", err, sizeof err) == PULSARC_OK);
    pulsarc_client_t *c = NULL;
    pulsarc_err_t e = pulsarc_client_new(conf, &c, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "client: %s", err);
    if (pct_loop_mode()) {
        ck_assert_msg(pulsarc_client_fd(c) >= 0, "threadingMode=loop did not take");
        start_driver(c);
    }
    return c;
}

pulsarc_client_t *pct_client(void) { return pct_client_with(NULL); }
