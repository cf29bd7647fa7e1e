/*
 * HTTP lookup (lib/net/lookup_http.c) against a canned HTTP server on
 * loopback: a thread that answers each request by the longest matching
 * path prefix of a route table and closes the connection. Checks the
 * answers a broker gives (partition count, owner) and the ones a broken or
 * hostile server gives: an HTTP error status, a body that is not JSON, a
 * missing field, a redirect loop (bounded by maxLookupRedirects, the
 * server sees exactly that many requests plus one), an answer above the
 * size bound, and a broker URL that is not a binary one.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"

typedef struct route {
    const char *prefix;
    int status;
    const char *body;     /* NULL: big_len bytes of 'x' */
    const char *location; /* for 3xx */
    size_t big_len;
} route_t;

static route_t routes[4];
static int listen_fd = -1, port, requests;
static pthread_t server;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void answer(int fd) {
    char req[4096] = "";
    size_t got = 0;
    while (got < sizeof req - 1 && !strstr(req, "\r\n\r\n")) {
        ssize_t r = read(fd, req + got, sizeof req - 1 - got);
        if (r <= 0)
            return;
        got += (size_t)r;
        req[got] = '\0';
    }
    char path[2048] = "";
    sscanf(req, "%*s %2047s", path);
    pthread_mutex_lock(&lock);
    requests++;
    const route_t *best = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (routes[i].prefix && !strncmp(path, routes[i].prefix, strlen(routes[i].prefix)) &&
            (!best || strlen(routes[i].prefix) > strlen(best->prefix)))
            best = &routes[i];
    route_t r = best ? *best : (route_t){"", 404, "{\"reason\":\"no route\"}", NULL, 0};
    pthread_mutex_unlock(&lock);
    size_t len = r.body ? strlen(r.body) : r.big_len;
    char head[1024];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%s%s%s"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     r.status, r.location ? "Location: " : "", r.location ? r.location : "",
                     r.location ? "\r\n" : "", len);
    write_all(fd, head, (size_t)n);
    if (r.body) {
        write_all(fd, r.body, len);
    } else {
        static char chunk[65536];
        memset(chunk, 'x', sizeof chunk);
        for (size_t sent = 0; sent < len; sent += sizeof chunk)
            write_all(fd, chunk, len - sent < sizeof chunk ? len - sent : sizeof chunk);
    }
}

static void *serve(void *arg) {
    (void)arg;
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0)
            return NULL; /* the listening socket was shut down */
        answer(fd);
        close(fd);
    }
}

static void server_start(void) {
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(listen_fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(listen_fd, 16), 0);
    socklen_t len = sizeof a;
    getsockname(listen_fd, (struct sockaddr *)&a, &len);
    port = ntohs(a.sin_port);
    requests = 0;
    memset(routes, 0, sizeof routes);
    ck_assert_int_eq(pthread_create(&server, NULL, serve, NULL), 0);
}

/* Routes change under the lock: the server thread reads them per request. */
static void set_route(int i, route_t r) {
    pthread_mutex_lock(&lock);
    routes[i] = r;
    pthread_mutex_unlock(&lock);
}

static void server_stop(void) {
    shutdown(listen_fd, SHUT_RDWR);
    pthread_join(server, NULL);
    close(listen_fd);
}

static pulsarc_client_t *http_client(const char *redirects) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    const char *kv[] = {"serviceUrl", url, "operationTimeoutMs", "5000", "maxLookupRedirects", redirects, NULL};
    pulsarc_conf_t *conf = pulsarc_conf_new();
    for (int i = 0; kv[i]; i += 2)
        ck_assert_int_eq(pulsarc_conf_set(conf, kv[i], kv[i + 1], NULL, 0), PULSARC_OK);
    pulsarc_client_t *c = NULL;
    char err[256];
    ck_assert_msg(pulsarc_client_new(conf, &c, err, sizeof err) == PULSARC_OK, "%s", err);
    pulsarc_conf_destroy(conf);
    return c;
}

#define PARTS_PATH "/admin/v2/persistent/public/default/t/partitions"

/* Partition count of "t" as the canned server answers it. */
static pulsarc_err_t partitions_of_t(int *n, char *err, size_t len) {
    pulsarc_client_t *c = http_client("3");
    *n = -1;
    err[0] = '\0';
    pulsarc_err_t e = pulsarc_client_partitions(c, "t", n, err, len);
    pulsarc_client_destroy(c);
    return e;
}

START_TEST(test_partition_count) {
    server_start();
    set_route(0, (route_t){PARTS_PATH, 200, "{\"partitions\":12,\"deleted\":false}", NULL, 0});
    int n;
    char err[256];
    ck_assert_int_eq(partitions_of_t(&n, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(n, 12);
    server_stop();
}
END_TEST

START_TEST(test_http_status_is_an_error) {
    server_start();
    set_route(0, (route_t){PARTS_PATH, 404, "{\"reason\":\"Topic not found\"}", NULL, 0});
    int n;
    char err[256];
    ck_assert_int_eq(partitions_of_t(&n, err, sizeof err), PULSARC_ERR_BROKER_TOPIC_NOT_FOUND);
    ck_assert_msg(strstr(err, "HTTP 404"), "%s", err);
    server_stop();
}
END_TEST

START_TEST(test_not_json) {
    server_start();
    set_route(0, (route_t){PARTS_PATH, 200, "<html>hello</html>", NULL, 0});
    int n;
    char err[256];
    ck_assert_int_eq(partitions_of_t(&n, err, sizeof err), PULSARC_ERR_PROTOCOL);
    ck_assert_msg(strstr(err, "not JSON"), "%s", err);
    server_stop();
}
END_TEST

START_TEST(test_missing_or_negative_field) {
    server_start();
    set_route(0, (route_t){PARTS_PATH, 200, "{\"deleted\":false}", NULL, 0});
    int n;
    char err[256];
    ck_assert_int_eq(partitions_of_t(&n, err, sizeof err), PULSARC_ERR_PROTOCOL);
    ck_assert_msg(strstr(err, "\"partitions\""), "%s", err);
    set_route(0, (route_t){PARTS_PATH, 200, "{\"partitions\":-4}", NULL, 0});
    ck_assert_int_eq(partitions_of_t(&n, err, sizeof err), PULSARC_ERR_PROTOCOL);
    server_stop();
}
END_TEST

START_TEST(test_redirect_loop_is_bounded) {
    server_start();
    char self[128];
    snprintf(self, sizeof self, "http://127.0.0.1:%d" PARTS_PATH, port);
    set_route(0, (route_t){PARTS_PATH, 307, "", self, 0});
    int n;
    char err[256];
    ck_assert_int_eq(partitions_of_t(&n, err, sizeof err), PULSARC_ERR_TOO_MANY_REDIRECTS);
    pthread_mutex_lock(&lock);
    ck_assert_int_eq(requests, 3 + 1); /* the first request and maxLookupRedirects more */
    pthread_mutex_unlock(&lock);
    server_stop();
}
END_TEST

START_TEST(test_oversized_answer) {
    server_start();
    set_route(0, (route_t){PARTS_PATH, 200, NULL, NULL, ((size_t)16 << 20) + 1});
    int n;
    char err[256];
    pulsarc_err_t e = partitions_of_t(&n, err, sizeof err);
    ck_assert_msg(e == PULSARC_ERR_PROTOCOL && strstr(err, "16 MiB"), "%s: %s", pulsarc_errname(e), err);
    server_stop();
}
END_TEST

/* A lookup that names an http:// broker (or nothing usable) is refused. */
START_TEST(test_lookup_without_binary_broker_url) {
    server_start();
    set_route(0, (route_t){PARTS_PATH, 200, "{\"partitions\":0}", NULL, 0});
    set_route(1, (route_t){"/lookup/v2/topic/persistent/public/default/t", 200,
                          "{\"brokerUrl\":\"http://127.0.0.1:1\",\"httpUrl\":\"http://127.0.0.1:1\"}", NULL, 0});
    pulsarc_client_t *c = http_client("3");
    pulsarc_producer_t *p = NULL;
    char err[256] = "";
    pulsarc_err_t e = pulsarc_producer_new(c, "t", NULL, &p, err, sizeof err);
    ck_assert_msg(e != PULSARC_OK, "producer created on a lookup without a broker URL");
    ck_assert_msg(strstr(err, "brokerUrl"), "%s: %s", pulsarc_errname(e), err);
    pulsarc_client_destroy(c);
    server_stop();
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("lookup_http");
    TCase *t = tcase_create("canned");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_partition_count);
    tcase_add_test(t, test_http_status_is_an_error);
    tcase_add_test(t, test_not_json);
    tcase_add_test(t, test_missing_or_negative_field);
    tcase_add_test(t, test_redirect_loop_is_bounded);
    tcase_add_test(t, test_oversized_answer);
    tcase_add_test(t, test_lookup_without_binary_broker_url);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(suite)
