/*
 * Client-side helpers shared by the tests that run against the scripted
 * fake broker (fake_broker.h): a client with the fault tests' short
 * timeouts and backoff, and a one-call text send. Called from the test's
 * own thread; failures end the test through Check.
 */
#ifndef PC_TEST_FB_CLIENT_H
#define PC_TEST_FB_CLIENT_H
#include "pulsarc.h"

/* A client on url with the fault-test defaults (5 s operations, 2 s connect,
 * backoff 100 ms to 1 s), then extra NULL-terminated pairs over them. */
pulsarc_client_t *fb_client_on(const char *url, const char *const *extra);

/* Sends text as one message and waits for its receipt; returns the send error. */
pulsarc_err_t fb_send_text(pulsarc_producer_t *p, const char *text);
#endif
