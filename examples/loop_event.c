/*
 * The client inside a libevent loop (threadingMode=loop): one persistent
 * EV_READ event on the client's fd and one timer event set to
 * pulsarc_client_next_timeout_ms(); both call pulsarc_client_step(), inside
 * which the send callbacks and the consumer's message listener run, on the
 * loop's thread. One thread in the process.
 *
 *   loop_event [service-url] [count]
 *
 * Exits 0 when every message was sent, received and acknowledged and the
 * process never had a second thread.
 */
#include <event2/event.h>
#include <pulsarc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define IN_FLIGHT 500 /* under maxPendingMessages (1000 by default) */

typedef struct app {
    pulsarc_client_t *client;
    pulsarc_producer_t *producer;
    struct event_base *base;
    struct event *readable, *timer;
    int count, issued, sent, send_failed, received, step_errors;
} app_t;

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

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)id, (void)msg;
    app_t *a = opaque;
    if (err)
        a->send_failed++;
    else
        a->sent++;
}

static void on_message(pulsarc_consumer_t *c, pulsarc_msg_t *msg, void *opaque) {
    app_t *a = opaque;
    a->received++;
    pulsarc_consumer_ack(c, msg);
    pulsarc_msg_destroy(msg);
}

static void top_up(app_t *a) {
    while (a->issued < a->count && a->issued - a->sent - a->send_failed < IN_FLIGHT) {
        pulsarc_msg_t *m = pulsarc_msg_new();
        char payload[32];
        int n = snprintf(payload, sizeof payload, "message %d", a->issued++);
        pulsarc_msg_set_payload(m, payload, (size_t)n, PULSARC_MSG_F_COPY);
        pulsarc_producer_send_async(a->producer, m, on_sent, a);
    }
}

/* Steps the client, then re-arms the timer for its next deadline. */
static void step(evutil_socket_t fd, short what, void *arg) {
    (void)fd, (void)what;
    app_t *a = arg;
    char err[256];
    if (pulsarc_client_step(a->client, 5, err, sizeof err)) {
        fprintf(stderr, "step: %s\n", err);
        a->step_errors++;
        event_base_loopbreak(a->base);
        return;
    }
    if (a->received >= a->count && a->sent + a->send_failed >= a->count) {
        event_base_loopbreak(a->base);
        return;
    }
    top_up(a);
    int t = pulsarc_client_next_timeout_ms(a->client);
    event_del(a->timer);
    if (t >= 0) {
        struct timeval tv = {t / 1000, (t % 1000) * 1000};
        event_add(a->timer, &tv);
    }
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : getenv("PULSAR_SERVICE_URL");
    app_t a = {.count = argc > 2 ? atoi(argv[2]) : 10000};
    char err[256], topic[128];
    snprintf(topic, sizeof topic, "pulsarc-loop-event-%d-%ld", (int)getpid(), (long)time(NULL));
    pulsarc_conf_t *conf = pulsarc_conf_new();
    if (url)
        pulsarc_conf_set(conf, "serviceUrl", url, NULL, 0);
    pulsarc_conf_set(conf, "threadingMode", "loop", NULL, 0);
    pulsarc_conf_set_message_listener(conf, on_message, &a);
    pulsarc_consumer_t *consumer = NULL;
    /* Synchronous set-up: with nobody stepping yet, the calls turn the
     * client's loop themselves. */
    if (pulsarc_client_new(conf, &a.client, err, sizeof err) ||
        pulsarc_consumer_new(a.client, topic, "loop-event", conf, &consumer, err, sizeof err) ||
        pulsarc_producer_new(a.client, topic, NULL, &a.producer, err, sizeof err)) {
        fprintf(stderr, "set-up: %s\n", err);
        return 1;
    }
    pulsarc_conf_destroy(conf);

    a.base = event_base_new();
    a.readable = event_new(a.base, pulsarc_client_fd(a.client), EV_READ | EV_PERSIST, step, &a);
    a.timer = evtimer_new(a.base, step, &a);
    event_add(a.readable, NULL);
    struct timeval give_up = {60, 0};
    event_base_loopexit(a.base, &give_up); /* a bound, should the broker not answer */
    int64_t t0 = now_ms();
    top_up(&a);
    event_base_dispatch(a.base);
    int64_t took = now_ms() - t0;
    int threads = threads_in_process();

    pulsarc_producer_destroy(a.producer);
    pulsarc_consumer_destroy(consumer);
    pulsarc_client_destroy(a.client);
    event_free(a.readable);
    event_free(a.timer);
    event_base_free(a.base);
    printf("loop_event: sent %d (failed %d), received %d of %d in %lld ms; threads in the process: %d\n",
           a.sent, a.send_failed, a.received, a.count, (long long)took, threads);
    return a.step_errors || a.sent != a.count || a.received != a.count || threads != 1;
}
