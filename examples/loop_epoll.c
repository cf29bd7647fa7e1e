/*
 * The client inside an application's own epoll loop (threadingMode=loop):
 * one thread in the whole process. The client's fd sits in the
 * application's epoll set next to whatever else it watches; the loop sleeps
 * until that fd is readable or pulsarc_client_next_timeout_ms() has passed,
 * then calls pulsarc_client_step(), inside which the send callbacks and the
 * consumer's message listener run.
 *
 * Creating the producer and the consumer uses the synchronous calls: made
 * while nobody steps, they run the client's io themselves.
 *
 *   loop_epoll [service-url] [count]
 *
 * Exits 0 when every message was sent, received and acknowledged, every
 * callback ran on the main thread and the process never had a second thread.
 */
#include <pthread.h>
#include <pulsarc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

typedef struct app {
    pthread_t main_thread;
    pulsarc_producer_t *producer;
    int issued, sent, send_failed, received, foreign_thread_calls;
} app_t;

/* Sends stay under the producer's pending limit (maxPendingMessages,
 * 1000 by default): more go out as receipts come back. */
#define IN_FLIGHT 500

static int threads_in_process(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)id, (void)msg;
    app_t *a = opaque;
    if (!pthread_equal(pthread_self(), a->main_thread))
        a->foreign_thread_calls++;
    if (err)
        a->send_failed++;
    else
        a->sent++;
}

static void on_message(pulsarc_consumer_t *c, pulsarc_msg_t *msg, void *opaque) {
    app_t *a = opaque;
    if (!pthread_equal(pthread_self(), a->main_thread))
        a->foreign_thread_calls++;
    a->received++;
    pulsarc_consumer_ack(c, msg); /* asynchronous: queued for the next turn */
    pulsarc_msg_destroy(msg);
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void top_up(app_t *a, int count) {
    while (a->issued < count && a->issued - a->sent - a->send_failed < IN_FLIGHT) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        char payload[32];
        int n = snprintf(payload, sizeof payload, "message %d", a->issued++);
        pulsarc_msg_set_payload(m, payload, (size_t)n, PULSARC_MSG_F_COPY);
        pulsarc_producer_send_async(a->producer, m, on_sent, a);
    }
}

/* The application's loop: wait on its epoll set, step the client. */
static int run_until(pulsarc_client_t *client, int ep, app_t *a, int count, int64_t deadline) {
    char err[256];
    while ((a->received < count || a->sent + a->send_failed < count) && !a->send_failed &&
           now_ms() < deadline) {
        top_up(a, count);
        struct epoll_event ev;
        int t = pulsarc_client_next_timeout_ms(client);
        int left = (int)(deadline - now_ms());
        epoll_wait(ep, &ev, 1, t < 0 || t > left ? left : t);
        pulsarc_err_t e = pulsarc_client_step(client, 5, err, sizeof err);
        if (e) {
            fprintf(stderr, "step: %s\n", err);
            return 1;
        }
    }
    return 0;
}

static pulsarc_client_t *new_client(const char *url) {
    char err[256];
    pulsarc_conf_t *conf = pulsarc_conf_new();
    if (url)
        pulsarc_conf_set(conf, "serviceUrl", url, NULL, 0);
    pulsarc_conf_set(conf, "threadingMode", "loop", NULL, 0);
    pulsarc_client_t *client = NULL;
    if (pulsarc_client_new(conf, &client, err, sizeof err))
        fprintf(stderr, "client: %s\n", err);
    pulsarc_conf_destroy(conf);
    return client;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : getenv("PULSAR_SERVICE_URL");
    int count = argc > 2 ? atoi(argv[2]) : 10000;
    app_t a = {.main_thread = pthread_self()};
    char err[256], topic[128];
    snprintf(topic, sizeof topic, "pulsarc-loop-epoll-%d-%ld", (int)getpid(), (long)time(NULL));
    pulsarc_client_t *client = new_client(url);
    if (!client)
        return 1;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, pulsarc_client_fd(client), &ev);

    pulsarc_conf_t *cconf = pulsarc_conf_new();
    pulsarc_conf_set_message_listener(cconf, on_message, &a);
    pulsarc_consumer_t *consumer = NULL;
    pulsarc_producer_t *producer = NULL;
    if (pulsarc_consumer_new(client, topic, "loop-epoll", cconf, &consumer, err, sizeof err) ||
        pulsarc_producer_new(client, topic, NULL, &producer, err, sizeof err)) {
        fprintf(stderr, "create: %s\n", err);
        return 1;
    }
    pulsarc_conf_destroy(cconf);
    a.producer = producer;

    int64_t t0 = now_ms();
    int rc = run_until(client, ep, &a, count, t0 + 60000);
    int64_t took = now_ms() - t0;
    int threads = threads_in_process();

    pulsarc_producer_destroy(producer);
    pulsarc_consumer_destroy(consumer);
    pulsarc_client_destroy(client);
    close(ep);
    printf("loop_epoll: sent %d (failed %d), received %d of %d in %lld ms; "
           "callbacks off the main thread: %d; threads in the process: %d\n",
           a.sent, a.send_failed, a.received, count, (long long)took,
           a.foreign_thread_calls, threads);
    return rc || a.sent != count || a.received != count || a.foreign_thread_calls || threads != 1;
}
