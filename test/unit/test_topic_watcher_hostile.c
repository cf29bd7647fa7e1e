/*
 * A regex consumer's topic-list watcher against the scripted fake broker
 * (test/faults/fake_broker.c), for what a real broker does not send on
 * demand: a WATCH_TOPIC_UPDATE for a watcher id the client never used (it
 * is dropped), and one naming more topics than PC_WATCH_MAX_TOPICS (the
 * watcher stops with a message naming the count and the limit, closes its
 * watch on the broker, and the consumer goes on working). A broker that
 * does not offer watchers never gets WATCH_TOPIC_LIST; one that answers
 * it with something else than WATCH_TOPIC_LIST_SUCCESS is given up on.
 * And the reconnect: the watch is sent again on the new connection and the
 * full list in its answer is reconciled (a topic gone from it loses its
 * consumer, a new one gets one).
 *
 * Design notes: the watcher's messages go to stderr, which the test reads
 * back by pointing fd 2 at a temporary file. Order on one connection is
 * what makes the checks exact: the broker pushes the bad update first and
 * a good one after it, so once the good one's SUBSCRIBE arrived the bad one
 * was handled already.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../faults/fake_broker.h"
#include "../faults/fb_client.h"
#include "PulsarApi.pb-c.h"
#include "client/consumer/topic_watcher.h"
#include "stderr_capture.h"
#include "testutil.h"

#define T(x) PULSAR__PROTO__BASE_COMMAND__TYPE__##x
#define WAIT_MS 10000

static pulsarc_consumer_t *pattern_consumer(pulsarc_client_t *c) {
    const char *kv[] = {"patternAutoDiscoveryPeriod", "3600", NULL};
    pulsarc_conf_t *conf = pct_conf(kv);
    pulsarc_consumer_t *cons = NULL;
    char err[256] = "";
    pulsarc_err_t e = pulsarc_consumer_new_pattern(c, "persistent://public/default/w-.*", "sub", conf,
                                                   &cons, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "pattern consumer: %s", err);
    return cons;
}

static uint64_t cmds(pc_fb_t *fb, int type) {
    pc_fb_stats_t st;
    pc_fb_stats(fb, &st);
    return st.cmds[type];
}

START_TEST(test_hostile_updates_are_refused) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    const char *topics[] = {"persistent://public/default/w-a", "persistent://public/default/other"};
    pc_fb_set_topics(fb, topics, 2, 1);
    captured_t cap;
    capture_stderr(&cap);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    pulsarc_consumer_t *cons = pattern_consumer(c);
    ck_assert_uint_eq(cmds(fb, T(SUBSCRIBE)), 1); /* w-a; "other" does not match */
    ck_assert(pc_fb_wait_cmds(fb, T(WATCH_TOPIC_LIST), 1, WAIT_MS));

    pc_fb_topic_update(fb, "persistent://public/default/w-stranger", 1, 1); /* not our watcher id */
    pc_fb_topic_update(fb, "persistent://public/default/w-b", 1, 0);
    ck_assert(pc_fb_wait_cmds(fb, T(SUBSCRIBE), 2, WAIT_MS));
    pc_fb_topic_update(fb, "persistent://public/default/other-2", 1, 0); /* does not match */

    /* 100,001 short names: 2.7 MB, inside the frame limit and the protobuf guard */
    pc_fb_topic_update(fb, "persistent://public/default/w-", PC_WATCH_MAX_TOPICS + 1, 0);
    ck_assert(pc_fb_wait_cmds(fb, T(WATCH_TOPIC_LIST_CLOSE), 1, WAIT_MS));
    ck_assert_uint_eq(cmds(fb, T(SUBSCRIBE)), 2); /* neither the stranger, other-2 nor the flood */

    pc_fb_push(fb, "still here", 10, PC_FB_GOOD); /* to the newest child, w-b */
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, WAIT_MS), PULSARC_OK);
    ck_assert_int_eq(pulsarc_msg_len(m), 10);
    pulsarc_msg_destroy(m);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    char *text = release_stderr(&cap);
    ck_assert_msg(strstr(text, "WATCH_TOPIC_UPDATE names 100001 topics, more than the limit of 100000"),
                  "stderr: %s", text);
    free(text);
    ck_assert_uint_eq(cmds(fb, T(WATCH_TOPIC_LIST)), 1); /* not re-sent after giving up */
    pc_fb_destroy(fb);
}
END_TEST

START_TEST(test_no_watch_without_the_feature_flag) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    const char *topics[] = {"persistent://public/default/w-a"};
    pc_fb_set_topics(fb, topics, 1, 0);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    pulsarc_consumer_t *cons = pattern_consumer(c);
    /* The watcher starts right after creation; a producer created after
     * that on the same connection is answered after its check. */
    pulsarc_producer_t *p = NULL;
    char err[256] = "";
    ck_assert_msg(pulsarc_producer_new(c, "persistent://public/default/x", NULL, &p, err, sizeof err) ==
                      PULSARC_OK, "%s", err);
    ck_assert_uint_eq(cmds(fb, T(WATCH_TOPIC_LIST)), 0);
    pulsarc_producer_destroy(p);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

START_TEST(test_wrong_answer_to_the_watch) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    const char *topics[] = {"persistent://public/default/w-a"};
    pc_fb_set_topics(fb, topics, 1, 2); /* the flag, then SUCCESS instead of the list */
    captured_t cap;
    capture_stderr(&cap);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    pulsarc_consumer_t *cons = pattern_consumer(c);
    ck_assert(pc_fb_wait_cmds(fb, T(WATCH_TOPIC_LIST_CLOSE), 1, WAIT_MS));
    pc_fb_push(fb, "still here", 10, PC_FB_GOOD);
    pulsarc_msg_t *m = NULL;
    ck_assert_int_eq(pulsarc_consumer_receive(cons, &m, WAIT_MS), PULSARC_OK);
    pulsarc_msg_destroy(m);
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    char *text = release_stderr(&cap);
    ck_assert_msg(strstr(text, "the broker answered WATCH_TOPIC_LIST with SUCCESS"), "stderr: %s", text);
    free(text);
    ck_assert_uint_eq(cmds(fb, T(WATCH_TOPIC_LIST)), 1);
    pc_fb_destroy(fb);
}
END_TEST

/* Waits (bounded) until a, b and c have that many open consumers on the broker. */
static int wait_open(pc_fb_t *fb, const char *a, int na, const char *b, int nb, const char *c, int nc) {
    for (int i = 0; i < WAIT_MS / 10; i++) {
        if (pc_fb_open_consumers(fb, a) == na && pc_fb_open_consumers(fb, b) == nb &&
            pc_fb_open_consumers(fb, c) == nc)
            return 1;
        usleep(10000);
    }
    return 0;
}

START_TEST(test_reconnect_reconciles_the_full_list) {
    pc_fb_t *fb = pc_fb_new();
    ck_assert_ptr_nonnull(fb);
    const char *a = "persistent://public/default/w-a", *b = "persistent://public/default/w-b",
               *cc = "persistent://public/default/w-c";
    const char *before[] = {a, b}, *after[] = {a, cc};
    pc_fb_set_topics(fb, before, 2, 1);
    pulsarc_client_t *c = fb_client_on(pc_fb_url(fb), NULL);
    pulsarc_consumer_t *cons = pattern_consumer(c);
    ck_assert(pc_fb_wait_cmds(fb, T(WATCH_TOPIC_LIST), 1, WAIT_MS));
    ck_assert(wait_open(fb, a, 1, b, 1, cc, 0));
    pc_fb_set_topics(fb, after, 2, 1); /* while away, b was deleted and c created */
    pc_fb_drop_connections(fb);
    ck_assert(pc_fb_wait_cmds(fb, T(WATCH_TOPIC_LIST), 2, WAIT_MS));
    ck_assert_msg(wait_open(fb, a, 1, b, 0, cc, 1), "open consumers: a %d, b %d, c %d",
                  pc_fb_open_consumers(fb, a), pc_fb_open_consumers(fb, b), pc_fb_open_consumers(fb, cc));
    /* Once more: a child left behind on b would be back after this reconnect. */
    pc_fb_drop_connections(fb);
    ck_assert(pc_fb_wait_cmds(fb, T(WATCH_TOPIC_LIST), 3, WAIT_MS));
    ck_assert(wait_open(fb, a, 1, b, 0, cc, 1));
    pulsarc_consumer_destroy(cons);
    pulsarc_client_destroy(c);
    pc_fb_destroy(fb);
}
END_TEST

static Suite *watcher_suite(void) {
    Suite *s = suite_create("topic-watcher-hostile");
    TCase *tc = tcase_create("hostile");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_hostile_updates_are_refused);
    tcase_add_test(tc, test_no_watch_without_the_feature_flag);
    tcase_add_test(tc, test_wrong_answer_to_the_watch);
    tcase_add_test(tc, test_reconnect_reconciles_the_full_list);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(watcher_suite)
