/*
 * The client inside a libuv loop (threadingMode=loop): a uv_poll_t on the
 * client's fd and a uv_timer_t set to pulsarc_client_next_timeout_ms();
 * both call pulsarc_client_step(), inside which the send callbacks and the
 * consumer's message listener run, on the loop's thread. One thread in the
 * process (libuv starts its thread pool only for work this program never
 * asks of it).
 *
 *   loop_uv [service-url] [count]
 *
 * Exits 0 when every message was sent, received and acknowledged and the
 * process never had a second thread.
 */
#include <pulsarc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#define IN_FLIGHT 500 /* under maxPendingMessages (1000 by default) */

typedef struct app {
    pulsarc_client_t *client;
    pulsarc_producer_t *producer;
    uv_poll_t poll;
    uv_timer_t timer, deadline;
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

static void stop_all(app_t *a) {
    uv_poll_stop(&a->poll);
    uv_timer_stop(&a->timer);
    uv_timer_stop(&a->deadline);
}

static void on_timer(uv_timer_t *t);

/* Steps the client, then re-arms the timer for its next deadline. */
static void step(app_t *a) {
    char err[256];
    if (pulsarc_client_step(a->client, 5, err, sizeof err)) {
        fprintf(stderr, "step: %s\n", err);
        a->step_errors++;
        stop_all(a);
        return;
    }
    if (a->received >= a->count && a->sent + a->send_failed >= a->count) {
        stop_all(a);
        return;
    }
    top_up(a);
    int t = pulsarc_client_next_timeout_ms(a->client);
    uv_timer_stop(&a->timer);
    if (t >= 0)
        uv_timer_start(&a->timer, on_timer, (uint64_t)t, 0);
}

static void on_readable(uv_poll_t *p, int status, int events) {
    (void)status, (void)events;
    step(p->data);
}

static void on_timer(uv_timer_t *t) { step(t->data); }

static void on_deadline(uv_timer_t *t) {
    fprintf(stderr, "loop_uv: gave up after 60 s\n");
    stop_all(t->data);
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : getenv("PULSAR_SERVICE_URL");
    app_t a = {.count = argc > 2 ? atoi(argv[2]) : 10000};
    char err[256], topic[128];
    snprintf(topic, sizeof topic, "pulsarc-loop-uv-%d-%ld", (int)getpid(), (long)time(NULL));
    pulsarc_conf_t *conf = pulsarc_conf_new();
    if (url)
        pulsarc_conf_set(conf, "serviceUrl", url, NULL, 0);
    pulsarc_conf_set(conf, "threadingMode", "loop", NULL, 0);
    pulsarc_conf_set_message_listener(conf, on_message, &a);
    pulsarc_consumer_t *consumer = NULL;
    /* Synchronous set-up: with nobody stepping yet, the calls turn the
     * client's loop themselves. */
    if (pulsarc_client_new(conf, &a.client, err, sizeof err) ||
        pulsarc_consumer_new(a.client, topic, "loop-uv", conf, &consumer, err, sizeof err) ||
        pulsarc_producer_new(a.client, topic, NULL, &a.producer, err, sizeof err)) {
        fprintf(stderr, "set-up: %s\n", err);
        return 1;
    }
    pulsarc_conf_destroy(conf);

    uv_loop_t *loop = uv_default_loop();
    uv_poll_init(loop, &a.poll, pulsarc_client_fd(a.client));
    uv_timer_init(loop, &a.timer);
    uv_timer_init(loop, &a.deadline);
    a.poll.data = a.timer.data = a.deadline.data = &a;
    uv_poll_start(&a.poll, UV_READABLE, on_readable);
    uv_timer_start(&a.deadline, on_deadline, 60000, 0);
    uv_update_time(loop);
    uint64_t t0 = uv_now(loop);
    top_up(&a);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_update_time(loop);
    uint64_t took = uv_now(loop) - t0;
    int threads = threads_in_process();

    pulsarc_producer_destroy(a.producer);
    pulsarc_consumer_destroy(consumer);
    pulsarc_client_destroy(a.client);
    uv_close((uv_handle_t *)&a.poll, NULL);
    uv_close((uv_handle_t *)&a.timer, NULL);
    uv_close((uv_handle_t *)&a.deadline, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    printf("loop_uv: sent %d (failed %d), received %d of %d in %llu ms; threads in the process: %d\n",
           a.sent, a.send_failed, a.received, a.count, (unsigned long long)took, threads);
    return a.step_errors || a.sent != a.count || a.received != a.count || threads != 1;
}
