/*
 * The end-to-end demo behind `make run`: one producer sends N messages
 * (synchronously, then asynchronously), one consumer reads them back and
 * acks them, and the figures are printed.
 *
 *   produce_consume [service-url] [count] [size]
 */
#include <pulsarc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static atomic_int async_ok, async_failed;

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)id, (void)msg, (void)opaque;
    if (err)
        atomic_fetch_add(&async_failed, 1);
    else
        atomic_fetch_add(&async_ok, 1);
}

static int die(const char *what, pulsarc_err_t err, const char *detail) {
    fprintf(stderr, "%s failed: %s (%s)\n", what, pulsarc_strerror(err), detail);
    return 1;
}

static pulsarc_msg_t *make_msg(const char *payload, size_t size, int i) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    char idx[16];
    snprintf(idx, sizeof idx, "%d", i);
    pulsarc_msg_set_payload(m, payload, size, PULSARC_MSG_F_COPY);
    pulsarc_msg_set_property(m, "i", idx);
    return m;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : getenv("PULSAR_SERVICE_URL");
    int count = argc > 2 ? atoi(argv[2]) : 20000;
    size_t size = argc > 3 ? (size_t)atoi(argv[3]) : 100;
    char err[512], topic[128];
    snprintf(topic, sizeof topic, "pulsarc-demo-%d-%ld", (int)getpid(), (long)time(NULL));
    pulsarc_conf_t *conf = pulsarc_conf_new();
    if (url)
        pulsarc_conf_set(conf, "serviceUrl", url, NULL, 0);
    pulsarc_conf_set(conf, "subscriptionInitialPosition", "Earliest", NULL, 0);
    pulsarc_conf_set(conf, "maxPendingMessages", "5000", NULL, 0);
    pulsarc_conf_set(conf, "blockIfQueueFull", "true", NULL, 0);
    pulsarc_client_t *client;
    pulsarc_err_t e = pulsarc_client_new(conf, &client, err, sizeof err);
    if (e)
        return die("client", e, err);
    pulsarc_consumer_t *cons;
    pulsarc_producer_t *prod;
    if ((e = pulsarc_consumer_new(client, topic, "demo", conf, &cons, err, sizeof err)))
        return die("subscribe", e, err);
    if ((e = pulsarc_producer_new(client, topic, conf, &prod, err, sizeof err)))
        return die("create producer", e, err);
    char *payload = malloc(size ? size : 1);
    memset(payload, 'x', size);
    int half = count / 2;

    double t0 = now_s();
    for (int i = 0; i < half; i++) {
        pulsarc_msg_t *m = make_msg(payload, size, i);
        if ((e = pulsarc_producer_send(prod, m, NULL)))
            return die("send", e, "sync");
        pulsarc_msg_destroy(m);
    }
    double t_sync = now_s() - t0;
    t0 = now_s();
    for (int i = half; i < count; i++)
        pulsarc_producer_send_async(prod, make_msg(payload, size, i), on_sent, NULL);
    pulsarc_producer_flush(prod, -1);
    double t_async = now_s() - t0;

    t0 = now_s();
    int received = 0, in_order = 1;
    pulsarc_msg_t *m;
    while (received < count && pulsarc_consumer_receive(cons, &m, 10000) == PULSARC_OK) {
        if (atoi(pulsarc_msg_property(m, "i")) != received)
            in_order = 0;
        pulsarc_consumer_ack(cons, m);
        pulsarc_msg_destroy(m);
        received++;
    }
    double t_recv = now_s() - t0;

    printf("topic            %s\n", topic);
    printf("message size     %zu bytes\n", size);
    printf("produced (sync)  %d msgs in %.2f s = %.0f msg/s\n", half, t_sync, half / t_sync);
    printf("produced (async) %d ok, %d failed in %.2f s = %.0f msg/s\n", atomic_load(&async_ok),
           atomic_load(&async_failed), t_async, (count - half) / t_async);
    printf("consumed         %d msgs in %.2f s = %.0f msg/s, %s\n", received, t_recv,
           received / t_recv, in_order ? "in order" : "OUT OF ORDER");
    pulsarc_producer_destroy(prod);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(client);
    pulsarc_conf_destroy(conf);
    free(payload);
    return received == count && in_order && atomic_load(&async_failed) == 0 ? 0 : 1;
}
