/*
 * Client-side helpers for the fake-broker tests (see fb_client.h). No
 * state of its own; runs on the calling test's thread.
 */
#include "fb_client.h"

#include <string.h>

#include "testutil.h"

pulsarc_client_t *fb_client_on(const char *url, const char *const *extra) {
    const char *base[] = {"operationTimeoutMs", "5000", "connectionTimeoutMs", "2000",
                          "initialBackoffIntervalMs", "100", "maxBackoffIntervalMs", "1000", NULL};
    pulsarc_conf_t *conf = pct_conf(base);
    char err[256];
    for (size_t i = 0; extra && extra[i]; i += 2)
        ck_assert_msg(!pulsarc_conf_set(conf, extra[i], extra[i + 1], err, sizeof err), "%s", err);
    ck_assert(!pulsarc_conf_set(conf, "serviceUrl", url, err, sizeof err));
    pulsarc_client_t *c = NULL;
    pulsarc_err_t e = pulsarc_client_new(conf, &c, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "client: %s", err);
    return c;
}

pulsarc_err_t fb_send_text(pulsarc_producer_t *p, const char *text) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    pulsarc_msg_set_payload(m, text, strlen(text), PULSARC_MSG_F_COPY);
    pulsarc_err_t e = pulsarc_producer_send(p, m, NULL);
    pulsarc_msg_destroy(m);
    return e;
}
