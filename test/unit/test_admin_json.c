/*
 * Unit tests of the admin client's JSON handling and error mapping, with no
 * broker: bodies captured once from a live Pulsar 4.0.7 standalone broker
 * (topic stats, lists, partition metadata, policies, error reasons, a
 * Jackson 400), plus malformed and mistyped variants, the request bodies
 * we build, the HTTP/libcurl → pulsarc_err_t mapping, and the argument
 * checks that fail before any request is made.
 */
#ifndef PULSARC_WITH_CURL
/* Built with WITH_CURL=0: there is no admin client, so nothing to test. */
#include "testutil.h"

START_TEST(test_admin_not_built) {}
END_TEST

static Suite *admin_json_suite(void) {
    Suite *s = suite_create("admin_json");
    TCase *tc = tcase_create("not built");
    tcase_add_test(tc, test_admin_not_built);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(admin_json_suite)
#else
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "admin/admin_int.h"
#include "testutil.h"

/* ---- captured from the broker (curl against /admin/v2, 4.0.7) ---------- */

/* GET …/cap-t1/stats: 5 messages, subscription s1 reset to entry 2, s2 at the start. */
static const char STATS_JSON[] =
    "{\"msgRateIn\":0.0,\"msgThroughputIn\":0.0,\"msgRateOut\":0.0,\"msgThroughputOut\":0"
    ".0,\"bytesInCounter\":210,\"msgInCounter\":5,\"systemTopicBytesInCounter\":0,\"bytes"
    "OutCounter\":0,\"msgOutCounter\":0,\"bytesOutInternalCounter\":0,\"averageMsgSize\":"
    "0.0,\"msgChunkPublished\":false,\"storageSize\":210,\"backlogSize\":210,\"backlogQuo"
    "taLimitSize\":-1,\"backlogQuotaLimitTime\":-1,\"oldestBacklogMessageAgeSeconds\":-1,"
    "\"publishRateLimitedTimes\":0,\"earliestMsgPublishTimeInBacklogs\":0,\"offloadedStor"
    "ageSize\":0,\"lastOffloadLedgerId\":0,\"lastOffloadSuccessTimeStamp\":0,\"lastOffloa"
    "dFailureTimeStamp\":0,\"ongoingTxnCount\":0,\"abortedTxnCount\":0,\"committedTxnCoun"
    "t\":0,\"publishers\":[],\"waitingPublishers\":0,\"subscriptions\":{\"s1\":{\"msgRate"
    "Out\":0.0,\"msgThroughputOut\":0.0,\"bytesOutCounter\":0,\"msgOutCounter\":0,\"msgRa"
    "teRedeliver\":0.0,\"messageAckRate\":0.0,\"chunkedMessageRate\":0.0,\"msgBacklog\":3"
    ",\"backlogSize\":126,\"earliestMsgPublishTimeInBacklog\":0,\"msgBacklogNoDelayed\":3"
    ",\"blockedSubscriptionOnUnackedMsgs\":false,\"msgDelayed\":0,\"msgInReplay\":0,\"una"
    "ckedMessages\":0,\"type\":\"None\",\"msgRateExpired\":0.0,\"totalMsgExpired\":0,\"la"
    "stExpireTimestamp\":0,\"lastConsumedFlowTimestamp\":0,\"lastConsumedTimestamp\":0,\""
    "lastAckedTimestamp\":0,\"lastMarkDeleteAdvancedTimestamp\":0,\"consumers\":[],\"isDu"
    "rable\":true,\"isReplicated\":false,\"allowOutOfOrderDelivery\":false,\"consumersAft"
    "erMarkDeletePosition\":{},\"drainingHashesCount\":0,\"drainingHashesClearedTotal\":0"
    ",\"drainingHashesUnackedMessages\":0,\"nonContiguousDeletedMessagesRanges\":0,\"nonC"
    "ontiguousDeletedMessagesRangesSerializedSize\":0,\"delayedMessageIndexSizeInBytes\":"
    "0,\"subscriptionProperties\":{},\"filterProcessedMsgCount\":0,\"filterAcceptedMsgCou"
    "nt\":0,\"filterRejectedMsgCount\":0,\"filterRescheduledMsgCount\":0,\"dispatchThrott"
    "ledMsgEventsBySubscriptionLimit\":0,\"dispatchThrottledBytesEventsBySubscriptionLimi"
    "t\":0,\"dispatchThrottledMsgEventsByTopicLimit\":0,\"dispatchThrottledBytesEventsByT"
    "opicLimit\":0,\"dispatchThrottledMsgEventsByBrokerLimit\":0,\"dispatchThrottledBytes"
    "EventsByBrokerLimit\":0,\"durable\":true,\"replicated\":false},\"s2\":{\"msgRateOut\""
    ":0.0,\"msgThroughputOut\":0.0,\"bytesOutCounter\":0,\"msgOutCounter\":0,\"msgRateRed"
    "eliver\":0.0,\"messageAckRate\":0.0,\"chunkedMessageRate\":0.0,\"msgBacklog\":5,\"ba"
    "cklogSize\":210,\"earliestMsgPublishTimeInBacklog\":0,\"msgBacklogNoDelayed\":5,\"bl"
    "ockedSubscriptionOnUnackedMsgs\":false,\"msgDelayed\":0,\"msgInReplay\":0,\"unackedM"
    "essages\":0,\"type\":\"None\",\"msgRateExpired\":0.0,\"totalMsgExpired\":0,\"lastExp"
    "ireTimestamp\":0,\"lastConsumedFlowTimestamp\":0,\"lastConsumedTimestamp\":0,\"lastA"
    "ckedTimestamp\":0,\"lastMarkDeleteAdvancedTimestamp\":0,\"consumers\":[],\"isDurable"
    "\":true,\"isReplicated\":false,\"allowOutOfOrderDelivery\":false,\"consumersAfterMar"
    "kDeletePosition\":{},\"drainingHashesCount\":0,\"drainingHashesClearedTotal\":0,\"dr"
    "ainingHashesUnackedMessages\":0,\"nonContiguousDeletedMessagesRanges\":0,\"nonContig"
    "uousDeletedMessagesRangesSerializedSize\":0,\"delayedMessageIndexSizeInBytes\":0,\"s"
    "ubscriptionProperties\":{},\"filterProcessedMsgCount\":0,\"filterAcceptedMsgCount\":"
    "0,\"filterRejectedMsgCount\":0,\"filterRescheduledMsgCount\":0,\"dispatchThrottledMs"
    "gEventsBySubscriptionLimit\":0,\"dispatchThrottledBytesEventsBySubscriptionLimit\":0"
    ",\"dispatchThrottledMsgEventsByTopicLimit\":0,\"dispatchThrottledBytesEventsByTopicL"
    "imit\":0,\"dispatchThrottledMsgEventsByBrokerLimit\":0,\"dispatchThrottledBytesEvent"
    "sByBrokerLimit\":0,\"durable\":true,\"replicated\":false}},\"replication\":{},\"dedu"
    "plicationStatus\":\"Disabled\",\"nonContiguousDeletedMessagesRanges\":0,\"nonContigu"
    "ousDeletedMessagesRangesSerializedSize\":0,\"delayedMessageIndexSizeInBytes\":0,\"co"
    "mpaction\":{\"lastCompactionRemovedEventCount\":0,\"lastCompactionSucceedTimestamp\""
    ":0,\"lastCompactionFailedTimestamp\":0,\"lastCompactionDurationTimeInMills\":0},\"ow"
    "nerBroker\":\"localhost:8080\"}";

/* GET …/cap-p2/partitioned-stats?perPartition=false: 2 partitions, 3 + 4 messages,
 * subscription ps at the start of both (summed by the broker). */
static const char PSTATS_JSON[] =
    "{\"msgRateIn\":0.0,\"msgThroughputIn\":0.0,\"msgRateOut\":0.0,\"msgThroughputOut\":0"
    ".0,\"bytesInCounter\":294,\"msgInCounter\":7,\"systemTopicBytesInCounter\":0,\"bytes"
    "OutCounter\":0,\"msgOutCounter\":0,\"bytesOutInternalCounter\":0,\"averageMsgSize\":"
    "0.0,\"msgChunkPublished\":false,\"storageSize\":294,\"backlogSize\":294,\"backlogQuo"
    "taLimitSize\":-1,\"backlogQuotaLimitTime\":-1,\"oldestBacklogMessageAgeSeconds\":0,\""
    "publishRateLimitedTimes\":0,\"earliestMsgPublishTimeInBacklogs\":0,\"offloadedStorag"
    "eSize\":0,\"lastOffloadLedgerId\":0,\"lastOffloadSuccessTimeStamp\":0,\"lastOffloadF"
    "ailureTimeStamp\":0,\"ongoingTxnCount\":0,\"abortedTxnCount\":0,\"committedTxnCount\""
    ":0,\"publishers\":[],\"waitingPublishers\":0,\"subscriptions\":{\"ps\":{\"msgRateOut"
    "\":0.0,\"msgThroughputOut\":0.0,\"bytesOutCounter\":0,\"msgOutCounter\":0,\"msgRateR"
    "edeliver\":0.0,\"messageAckRate\":0.0,\"chunkedMessageRate\":0.0,\"msgBacklog\":7,\""
    "backlogSize\":294,\"earliestMsgPublishTimeInBacklog\":0,\"msgBacklogNoDelayed\":7,\""
    "blockedSubscriptionOnUnackedMsgs\":false,\"msgDelayed\":0,\"msgInReplay\":0,\"unacke"
    "dMessages\":0,\"type\":\"None\",\"msgRateExpired\":0.0,\"totalMsgExpired\":0,\"lastE"
    "xpireTimestamp\":0,\"lastConsumedFlowTimestamp\":0,\"lastConsumedTimestamp\":0,\"las"
    "tAckedTimestamp\":0,\"lastMarkDeleteAdvancedTimestamp\":0,\"consumers\":[],\"isDurab"
    "le\":true,\"isReplicated\":false,\"allowOutOfOrderDelivery\":false,\"consumersAfterM"
    "arkDeletePosition\":{},\"drainingHashesCount\":0,\"drainingHashesClearedTotal\":0,\""
    "drainingHashesUnackedMessages\":0,\"nonContiguousDeletedMessagesRanges\":0,\"nonCont"
    "iguousDeletedMessagesRangesSerializedSize\":0,\"delayedMessageIndexSizeInBytes\":0,\""
    "subscriptionProperties\":{},\"filterProcessedMsgCount\":0,\"filterAcceptedMsgCount\""
    ":0,\"filterRejectedMsgCount\":0,\"filterRescheduledMsgCount\":0,\"dispatchThrottledM"
    "sgEventsBySubscriptionLimit\":0,\"dispatchThrottledBytesEventsBySubscriptionLimit\":"
    "0,\"dispatchThrottledMsgEventsByTopicLimit\":0,\"dispatchThrottledBytesEventsByTopic"
    "Limit\":0,\"dispatchThrottledMsgEventsByBrokerLimit\":0,\"dispatchThrottledBytesEven"
    "tsByBrokerLimit\":0,\"durable\":true,\"replicated\":false}},\"replication\":{},\"non"
    "ContiguousDeletedMessagesRanges\":0,\"nonContiguousDeletedMessagesRangesSerializedSi"
    "ze\":0,\"delayedMessageIndexSizeInBytes\":0,\"compaction\":{\"lastCompactionRemovedE"
    "ventCount\":0,\"lastCompactionSucceedTimestamp\":0,\"lastCompactionFailedTimestamp\""
    ":0,\"lastCompactionDurationTimeInMills\":0},\"metadata\":{\"partitions\":2,\"deleted"
    "\":false},\"partitions\":{}}";

/* GET /admin/v2/persistent/public/default */
static const char LIST_JSON[] =
    "[\"persistent://public/default/cap-p3-partition-0\",\"persistent://public/default/ca"
    "p-p3-partition-1\",\"persistent://public/default/cap-p3-partition-2\",\"persistent:/"
    "/public/default/cap-t1\"]";

/* GET /admin/v2/persistent/public/default/partitioned */
static const char LIST_PART_JSON[] =
    "[\"persistent://public/default/cap-p3\"]";

/* GET …/cap-t1/subscriptions */
static const char SUBS_JSON[] =
    "[\"s1\",\"s2\"]";

/* GET …/cap-p3/partitions (3 partitions) */
static const char PARTITIONS_JSON[] =
    "{\"partitions\":3,\"deleted\":false}";

/* GET …/cap-t1/partitions (not partitioned) */
static const char PARTITIONS_PLAIN_JSON[] =
    "{\"partitions\":0,\"deleted\":false}";

/* 404 body of GET …/nope-zz/partitions */
static const char NOT_FOUND_JSON[] =
    "{\"reason\":\"Topic persistent://public/default/nope-zz not found\"}";

/* 409 body of PUT on an existing topic */
static const char CONFLICT_JSON[] =
    "{\"reason\":\"This topic already exists\"}";

/* 400 body (text, not JSON) for a truncated retention body */
static const char JACKSON_400_TEXT[] =
    "Unexpected end-of-input within/between Object entries\n at [Source: REDACTED (`Strea"
    "mReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 27]";

/* The same 401 as Jetty writes it for "Accept: application/json" (what we send). */
static const char JETTY_401_JSON[] =
    "{\n\"servlet\":\"org.glassfish.jersey.servlet.ServletContainer-28831d69\",\n"
    "\"message\":\"Authentication required\",\n\"url\":\"/admin/v2/persistent/public/default\",\n"
    "\"status\":\"401\"\n}";

/* 401 from the broker's authentication filter (Jetty's HTML error page) for
 * a bad token sent with X-Pulsar-Auth-Method-Name: token. */
static const char JETTY_401_HTML[] =
    "<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html;charset=ISO-8859-1\"/>\n"
    "<title>Error 401 Authentication required</title>\n</head>\n"
    "<body><h2>HTTP ERROR 401 Authentication required</h2>\n<table>\n"
    "<tr><th>URI:</th><td>/admin/v2/tenants</td></tr>\n<tr><th>STATUS:</th><td>401</td></tr>\n"
    "<tr><th>MESSAGE:</th><td>Authentication required</td></tr>\n"
    "<tr><th>SERVLET:</th><td>org.glassfish.jersey.servlet.ServletContainer-29090809</td></tr>\n"
    "</table>\n<hr/><a href=\"https://jetty.org/\">Powered by Jetty:// 9.4.57.v20241219</a><hr/>\n\n"
    "</body>\n</html>\n";

/* GET …/namespaces/captenant/ns1/delayedDelivery after {"active":true,"tickTime":500} */
static const char DELAYED_JSON[] =
    "{\"tickTime\":500,\"active\":true,\"maxDeliveryDelayInMillis\":0}";

/* GET …/retention after setting 60 min / 100 MB */
static const char RETENTION_JSON[] =
    "{\"retentionTimeInMinutes\":60,\"retentionSizeInMB\":100}";

/* GET …/deduplication after POST true (the body is a bare JSON boolean) */
static const char DEDUP_JSON[] =
    "true";

/* GET /admin/v2/tenants */
static const char TENANTS_JSON[] =
    "[\"captenant\",\"public\",\"pulsar\"]";

/* ---- topic stats ----------------------------------------------------- */

static char err[512];

START_TEST(test_stats_from_capture) {
    pulsarc_admin_topic_stats_t *st = NULL;
    ck_assert_int_eq(pc_admin_json_topic_stats(STATS_JSON, &st, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(st->msg_in_counter, 5);
    ck_assert_int_eq(st->storage_size, 210);
    ck_assert_int_eq(st->backlog_size, 210);
    ck_assert_int_eq(st->publishers, 0);
    ck_assert_uint_eq(st->nsubs, 2);
    int seen = 0;
    for (size_t i = 0; i < st->nsubs; i++) {
        const pulsarc_admin_sub_stats_t *s = &st->subs[i];
        if (strcmp(s->name, "s1") == 0) {
            ck_assert_int_eq(s->msg_backlog, 3);
            ck_assert_int_eq(s->backlog_size, 126);
            seen |= 1;
        } else if (strcmp(s->name, "s2") == 0) {
            ck_assert_int_eq(s->msg_backlog, 5);
            ck_assert_int_eq(s->backlog_size, 210);
            seen |= 2;
        }
        ck_assert_int_eq(s->unacked, 0);
        ck_assert_int_eq(s->consumers, 0);
    }
    ck_assert_int_eq(seen, 3);
    pulsarc_admin_topic_stats_free(st);
    pulsarc_admin_topic_stats_free(NULL);
}
END_TEST

START_TEST(test_partitioned_stats_from_capture) {
    pulsarc_admin_topic_stats_t *st = NULL;
    ck_assert_int_eq(pc_admin_json_topic_stats(PSTATS_JSON, &st, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(st->msg_in_counter, 7);
    ck_assert_int_eq(st->storage_size, 294);
    ck_assert_uint_eq(st->nsubs, 1);
    ck_assert_str_eq(st->subs[0].name, "ps");
    ck_assert_int_eq(st->subs[0].msg_backlog, 7);
    ck_assert_int_eq(st->subs[0].backlog_size, 294);
    pulsarc_admin_topic_stats_free(st);
}
END_TEST

START_TEST(test_stats_small_and_mistyped) {
    pulsarc_admin_topic_stats_t *st = NULL;
    ck_assert_int_eq(pc_admin_json_topic_stats("{}", &st, err, sizeof err), PULSARC_OK);
    ck_assert_uint_eq(st->nsubs, 0);
    ck_assert_ptr_null(st->subs);
    pulsarc_admin_topic_stats_free(st);
    const char *ok = "{\"publishers\":[{},{}],\"subscriptions\":{\"a\":{\"msgBacklog\":"
                     "9223372036854775807,\"consumers\":[{}]}}}";
    ck_assert_int_eq(pc_admin_json_topic_stats(ok, &st, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(st->publishers, 2);
    ck_assert_int_eq(st->subs[0].msg_backlog, INT64_MAX);
    ck_assert_int_eq(st->subs[0].consumers, 1);
    pulsarc_admin_topic_stats_free(st);
    const char *bad[] = {
        "{\"msgInCounter\":\"5\"}",                       /* number as a string */
        "{\"subscriptions\":[]}",                         /* array, not object */
        "{\"subscriptions\":{\"a\":{\"msgBacklog\":1.5}}}", /* not an integer */
        "{\"subscriptions\":{\"a\":{\"consumers\":3}}}",  /* not an array */
        "{\"subscriptions\":{\"a\":7}}",                   /* not an object */
        "[]", "5", "null", "", NULL};
    for (int i = 0; bad[i]; i++) {
        st = (pulsarc_admin_topic_stats_t *)1;
        ck_assert_msg(pc_admin_json_topic_stats(bad[i], &st, err, sizeof err) ==
                          PULSARC_ERR_MALFORMED, "accepted %s", bad[i]);
        ck_assert_msg(strstr(err, "topic stats"), "%s: %s", bad[i], err);
        ck_assert_ptr_eq(st, (pulsarc_admin_topic_stats_t *)1); /* untouched on failure */
    }
}
END_TEST

START_TEST(test_malformed_json_is_a_clear_error) {
    char half[sizeof STATS_JSON];
    memcpy(half, STATS_JSON, sizeof STATS_JSON / 2);
    half[sizeof STATS_JSON / 2] = '\0';
    pulsarc_admin_topic_stats_t *st = NULL;
    ck_assert_int_eq(pc_admin_json_topic_stats(half, &st, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_msg(strstr(err, "malformed JSON at offset") && strstr(err, "unexpected end of data"),
                  "%s", err);
    char **list = NULL;
    ck_assert_int_eq(pc_admin_json_strings("[\"a\"] trailing", &list, err, sizeof err),
                     PULSARC_ERR_MALFORMED);
    ck_assert_msg(strstr(err, "offset 6"), "%s", err);
    ck_assert_int_eq(pc_admin_json_strings(JACKSON_400_TEXT, &list, err, sizeof err),
                     PULSARC_ERR_MALFORMED);
    ck_assert_int_eq(pc_admin_json_strings(NULL, &list, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_null(list);
}
END_TEST

/* ---- lists and partition metadata --------------------------------------- */

START_TEST(test_lists_from_capture) {
    char **list = NULL;
    ck_assert_int_eq(pc_admin_json_strings(LIST_JSON, &list, err, sizeof err), PULSARC_OK);
    ck_assert_str_eq(list[0], "persistent://public/default/cap-p3-partition-0");
    ck_assert_str_eq(list[3], "persistent://public/default/cap-t1");
    ck_assert_ptr_null(list[4]);
    pulsarc_admin_list_free(list);
    ck_assert_int_eq(pc_admin_json_strings(LIST_PART_JSON, &list, err, sizeof err), PULSARC_OK);
    ck_assert_str_eq(list[0], "persistent://public/default/cap-p3");
    ck_assert_ptr_null(list[1]);
    pulsarc_admin_list_free(list);
    ck_assert_int_eq(pc_admin_json_strings(SUBS_JSON, &list, err, sizeof err), PULSARC_OK);
    ck_assert(!strcmp(list[0], "s1") && !strcmp(list[1], "s2") && !list[2]);
    pulsarc_admin_list_free(list);
    ck_assert_int_eq(pc_admin_json_strings(TENANTS_JSON, &list, err, sizeof err), PULSARC_OK);
    ck_assert_str_eq(list[2], "pulsar");
    pulsarc_admin_list_free(list);
    ck_assert_int_eq(pc_admin_json_strings("[]", &list, err, sizeof err), PULSARC_OK);
    ck_assert_ptr_null(list[0]);
    pulsarc_admin_list_free(list);
    ck_assert_int_eq(pc_admin_json_strings("[\"caf\\u00e9 a\\\"b\"]", &list, err, sizeof err),
                     PULSARC_OK);
    ck_assert_str_eq(list[0], "caf\xc3\xa9 a\"b");
    pulsarc_admin_list_free(list);
    pulsarc_admin_list_free(NULL);
}
END_TEST

START_TEST(test_lists_mistyped) {
    char **list = (char **)1;
    ck_assert_int_eq(pc_admin_json_strings("[\"a\",1]", &list, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_msg(strstr(err, "item 1 is a int"), "%s", err);
    ck_assert_int_eq(pc_admin_json_strings("{\"a\":1}", &list, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_msg(strstr(err, "expected a JSON array, got object"), "%s", err);
    ck_assert_int_eq(pc_admin_json_strings("[null]", &list, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_ptr_eq(list, (char **)1);
}
END_TEST

START_TEST(test_partitions_from_capture) {
    int n = -1;
    ck_assert_int_eq(pc_admin_json_partitions(PARTITIONS_JSON, &n, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(pc_admin_json_partitions(PARTITIONS_PLAIN_JSON, &n, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(n, 0);
    const char *bad[] = {"{\"deleted\":false}", "{\"partitions\":-1}", "{\"partitions\":\"3\"}",
                         "{\"partitions\":4294967296}", "3", NOT_FOUND_JSON, NULL};
    for (int i = 0; bad[i]; i++) {
        n = 77;
        ck_assert_msg(pc_admin_json_partitions(bad[i], &n, err, sizeof err) == PULSARC_ERR_MALFORMED,
                      "accepted %s", bad[i]);
        ck_assert_int_eq(n, 77);
    }
}
END_TEST

/* ---- error reasons ------------------------------------------------------- */

START_TEST(test_reason_extraction) {
    char r[256];
    pc_admin_json_reason(NOT_FOUND_JSON, r, sizeof r);
    ck_assert_str_eq(r, "Topic persistent://public/default/nope-zz not found");
    pc_admin_json_reason(CONFLICT_JSON, r, sizeof r);
    ck_assert_str_eq(r, "This topic already exists");
    pc_admin_json_reason(JACKSON_400_TEXT, r, sizeof r); /* not JSON: its first line */
    ck_assert_str_eq(r, "Unexpected end-of-input within/between Object entries");
    pc_admin_json_reason(JETTY_401_JSON, r, sizeof r); /* no "reason": "message" */
    ck_assert_str_eq(r, "Authentication required");
    pc_admin_json_reason("{\"reason\":\"\",\"message\":\"m\"}", r, sizeof r);
    ck_assert_str_eq(r, "m");
    pc_admin_json_reason(JETTY_401_HTML, r, sizeof r); /* HTML: its title */
    ck_assert_str_eq(r, "Error 401 Authentication required");
    pc_admin_json_reason("<title>\n  spaced  \n</title>", r, sizeof r);
    ck_assert_str_eq(r, "spaced");
    pc_admin_json_reason("<title></title>rest", r, sizeof r); /* empty title: first line */
    ck_assert_str_eq(r, "<title></title>rest");
    pc_admin_json_reason("", r, sizeof r);
    ck_assert_str_eq(r, "");
    pc_admin_json_reason(NULL, r, sizeof r);
    ck_assert_str_eq(r, "");
    pc_admin_json_reason("\n\n  <html>Server Error</html>  \r\n<body>", r, sizeof r);
    ck_assert_str_eq(r, "<html>Server Error</html>");
    pc_admin_json_reason("{\"reason\":\"line one\\nline two\"}", r, sizeof r);
    ck_assert_str_eq(r, "line one");
    pc_admin_json_reason("{\"reason\":5}", r, sizeof r); /* no string reason: the raw text */
    ck_assert_str_eq(r, "{\"reason\":5}");
    pc_admin_json_reason("{\"reason\":\"x\"", r, sizeof r); /* truncated JSON */
    ck_assert_str_eq(r, "{\"reason\":\"x\"");
    char small[8];
    pc_admin_json_reason(CONFLICT_JSON, small, sizeof small);
    ck_assert_str_eq(small, "This to");
    pc_admin_json_reason(CONFLICT_JSON, small, 0); /* no room: no write */
}
END_TEST

/* ---- namespace policies -------------------------------------------------- */

START_TEST(test_policies_from_capture) {
    int on = -1, active = -1;
    int64_t min = 0, mb = 0, tick = 0;
    ck_assert_int_eq(pc_admin_json_bool(DEDUP_JSON, &on, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(on, 1);
    ck_assert_int_eq(pc_admin_json_bool("false", &on, err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(on, 0);
    ck_assert_int_eq(pc_admin_json_retention(RETENTION_JSON, &min, &mb, err, sizeof err), PULSARC_OK);
    ck_assert(min == 60 && mb == 100);
    ck_assert_int_eq(pc_admin_json_delayed_delivery(DELAYED_JSON, &active, &tick, err, sizeof err),
                     PULSARC_OK);
    ck_assert(active == 1 && tick == 500);
}
END_TEST

/* transactionInBufferStats as a 4.0 broker answers it (aborted, open, neither). */
START_TEST(test_txn_in_buffer) {
    int aborted = -1, ongoing = -1;
    ck_assert_int_eq(pc_admin_json_txn_in_buffer("{\"aborted\":true}", &aborted, &ongoing, err,
                                                 sizeof err), PULSARC_OK);
    ck_assert(aborted == 1 && ongoing == 0);
    ck_assert_int_eq(pc_admin_json_txn_in_buffer("{\"startPosition\":\"12:3\",\"aborted\":false}",
                                                 &aborted, &ongoing, err, sizeof err), PULSARC_OK);
    ck_assert(aborted == 0 && ongoing == 1);
    ck_assert_int_eq(pc_admin_json_txn_in_buffer("{\"aborted\":false}", &aborted, &ongoing, err,
                                                 sizeof err), PULSARC_OK);
    ck_assert(aborted == 0 && ongoing == 0);
    ck_assert_int_eq(pc_admin_json_txn_in_buffer("{\"aborted\":\"no\"}", &aborted, &ongoing, err,
                                                 sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_msg(strstr(err, "aborted") != NULL, "%s", err);
    ck_assert_int_eq(pc_admin_json_txn_in_buffer("[]", &aborted, &ongoing, err, sizeof err),
                     PULSARC_ERR_MALFORMED);
}
END_TEST

START_TEST(test_policies_unset_and_mistyped) {
    int on = 7, active = 7;
    int64_t min = 7, mb = 7, tick = 7;
    /* an unset policy comes back as 200 with an empty body */
    ck_assert_int_eq(pc_admin_json_bool("", &on, err, sizeof err), PULSARC_ERR_NOT_FOUND);
    ck_assert_msg(strstr(err, "no deduplication policy"), "%s", err);
    ck_assert_int_eq(pc_admin_json_retention(" \n", &min, &mb, err, sizeof err), PULSARC_ERR_NOT_FOUND);
    ck_assert_int_eq(pc_admin_json_delayed_delivery("", &active, &tick, err, sizeof err),
                     PULSARC_ERR_NOT_FOUND);
    ck_assert_int_eq(pc_admin_json_bool("1", &on, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_int_eq(pc_admin_json_bool("\"true\"", &on, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_int_eq(pc_admin_json_retention("{\"retentionSizeInMB\":\"1\"}", &min, &mb, err, sizeof err),
                     PULSARC_ERR_MALFORMED);
    ck_assert_int_eq(pc_admin_json_retention("[]", &min, &mb, err, sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert_int_eq(pc_admin_json_delayed_delivery("{\"tickTime\":5}", &active, &tick, err, sizeof err),
                     PULSARC_ERR_MALFORMED);
    ck_assert_int_eq(pc_admin_json_delayed_delivery("{\"active\":\"yes\"}", &active, &tick, err,
                                                    sizeof err), PULSARC_ERR_MALFORMED);
    ck_assert(on == 7 && active == 7 && min == 7 && mb == 7 && tick == 7);
}
END_TEST

/* ---- request bodies ------------------------------------------------------ */

/* body parses with json-c and equals want textually. */
static void body_is(char *body, const char *want) {
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body, want);
    json_object *o = json_tokener_parse(body);
    ck_assert_ptr_nonnull(o);
    json_object_put(o);
    free(body);
}

START_TEST(test_request_bodies) {
    pulsarc_msgid_t id = {3, 2, -1, -1, 0};
    body_is(pc_admin_json_msgid(&id), "{\"ledgerId\":3,\"entryId\":2,\"partitionIndex\":-1}");
    id.batch_index = 4;
    id.partition = 1;
    body_is(pc_admin_json_msgid(&id),
            "{\"ledgerId\":3,\"entryId\":2,\"partitionIndex\":1,\"batchIndex\":4}");
    pulsarc_msgid_t latest = pulsarc_msgid_latest(), earliest = pulsarc_msgid_earliest();
    body_is(pc_admin_json_msgid(&latest), "{\"ledgerId\":9223372036854775807,\"entryId\":"
                                          "9223372036854775807,\"partitionIndex\":-1}");
    body_is(pc_admin_json_msgid(&earliest), "{\"ledgerId\":-1,\"entryId\":-1,\"partitionIndex\":-1}");
    body_is(pc_admin_json_retention_body(60, -1),
            "{\"retentionTimeInMinutes\":60,\"retentionSizeInMB\":-1}");
    body_is(pc_admin_json_delayed_body(1, 500), "{\"active\":true,\"tickTime\":500}");
    body_is(pc_admin_json_delayed_body(0, 0), "{\"active\":false,\"tickTime\":0}");
    const char *one[] = {"standalone", NULL};
    body_is(pc_admin_json_tenant_body(one), "{\"allowedClusters\":[\"standalone\"],\"adminRoles\":[]}");
    const char *odd[] = {"a\"b", "c\\d", NULL};
    body_is(pc_admin_json_tenant_body(odd),
            "{\"allowedClusters\":[\"a\\\"b\",\"c\\\\d\"],\"adminRoles\":[]}");
    body_is(pc_admin_json_tenant_body(NULL), "{\"allowedClusters\":[],\"adminRoles\":[]}");
}
END_TEST

/* ---- error mapping -------------------------------------------------------- */

START_TEST(test_http_status_mapping) {
    ck_assert_int_eq(pc_admin_err_from_http(200), PULSARC_OK);
    ck_assert_int_eq(pc_admin_err_from_http(204), PULSARC_OK);
    ck_assert_int_eq(pc_admin_err_from_http(400), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pc_admin_err_from_http(401), PULSARC_ERR_BROKER_AUTHENTICATION);
    ck_assert_int_eq(pc_admin_err_from_http(403), PULSARC_ERR_BROKER_AUTHORIZATION);
    ck_assert_int_eq(pc_admin_err_from_http(404), PULSARC_ERR_NOT_FOUND);
    ck_assert_int_eq(pc_admin_err_from_http(405), PULSARC_ERR_UNSUPPORTED);
    ck_assert_int_eq(pc_admin_err_from_http(408), PULSARC_ERR_TIMEOUT);
    ck_assert_int_eq(pc_admin_err_from_http(409), PULSARC_ADMIN_ERR_CONFLICT);
    ck_assert_int_eq(pc_admin_err_from_http(412), PULSARC_ERR_BROKER_NOT_ALLOWED);
    ck_assert_int_eq(pc_admin_err_from_http(429), PULSARC_ERR_BROKER_TOO_MANY_REQUESTS);
    ck_assert_int_eq(pc_admin_err_from_http(500), PULSARC_ERR_BROKER_UNKNOWN);
    ck_assert_int_eq(pc_admin_err_from_http(503), PULSARC_ERR_BROKER_SERVICE_NOT_READY);
    ck_assert_int_eq(pc_admin_err_from_http(504), PULSARC_ERR_TIMEOUT);
    ck_assert_int_eq(pc_admin_err_from_http(302), PULSARC_ERR_BROKER_UNKNOWN);
    ck_assert_int_eq(pc_admin_err_from_http(0), PULSARC_ERR_BROKER_UNKNOWN);
    ck_assert(pulsarc_err_is_retriable(pc_admin_err_from_http(503)));
    ck_assert(!pulsarc_err_is_retriable(pc_admin_err_from_http(403)));
    ck_assert_str_eq(pc_admin_http_phrase(404), "Not Found");
    ck_assert_str_eq(pc_admin_http_phrase(409), "Conflict");
    ck_assert_str_eq(pc_admin_http_phrase(299), "");
}
END_TEST

START_TEST(test_curl_code_mapping) {
    ck_assert_int_eq(pc_admin_err_from_curl(0), PULSARC_OK);
    ck_assert_int_eq(pc_admin_err_from_curl(7 /* COULDNT_CONNECT */), PULSARC_ERR_CONNECT);
    ck_assert_int_eq(pc_admin_err_from_curl(6 /* COULDNT_RESOLVE_HOST */), PULSARC_ERR_RESOLVE);
    ck_assert_int_eq(pc_admin_err_from_curl(28 /* OPERATION_TIMEDOUT */), PULSARC_ERR_TIMEOUT);
    ck_assert_int_eq(pc_admin_err_from_curl(3 /* URL_MALFORMAT */), PULSARC_ERR_BAD_URL);
    ck_assert_int_eq(pc_admin_err_from_curl(60 /* PEER_FAILED_VERIFICATION */), PULSARC_ERR_TLS);
    ck_assert_int_eq(pc_admin_err_from_curl(35 /* SSL_CONNECT_ERROR */), PULSARC_ERR_TLS);
    ck_assert_int_eq(pc_admin_err_from_curl(52 /* GOT_NOTHING */), PULSARC_ERR_DISCONNECTED);
    ck_assert_int_eq(pc_admin_err_from_curl(47 /* TOO_MANY_REDIRECTS */), PULSARC_ERR_TOO_MANY_REDIRECTS);
    ck_assert_int_eq(pc_admin_err_from_curl(23 /* WRITE_ERROR */), PULSARC_ERR_IO);
}
END_TEST

/* ---- argument checks that need no broker --------------------------------- */

static pulsarc_admin_t *admin_on(const char *url) {
    pulsarc_conf_t *conf = pct_conf((const char *const[]){"webServiceUrl", url, NULL});
    pulsarc_admin_t *a = NULL;
    pulsarc_err_t e = pulsarc_admin_new(conf, &a, err, sizeof err);
    pulsarc_conf_destroy(conf);
    ck_assert_msg(e == PULSARC_OK, "%s: %s", url, err);
    return a;
}

START_TEST(test_admin_new_and_arguments) {
    pulsarc_admin_t *a = admin_on("https://[::1]:8443/");
    ck_assert_str_eq(pulsarc_admin_url(a), "https://[::1]:8443");
    pulsarc_admin_destroy(a);
    a = admin_on("http://localhost");
    ck_assert_str_eq(pulsarc_admin_url(a), "http://localhost:80");
    char **list = NULL;
    int n;
    ck_assert_int_eq(pulsarc_admin_list_topics(a, "nope", &list, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "tenant/namespace"), "%s", err);
    ck_assert_int_eq(pulsarc_admin_list_topics(a, "/x", &list, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_admin_list_topics(a, NULL, &list, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_admin_partition_count(a, "a/b/c/d", &n, err, sizeof err), PULSARC_ERR_BAD_TOPIC);
    ck_assert_int_eq(pulsarc_admin_partition_count(a, NULL, &n, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_admin_create_partitioned_topic(a, "t", 0, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_admin_delete_subscription(a, "t", "", 0, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_admin_reset_cursor_to_id(a, "t", "s", NULL, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_admin_create_tenant(a, "", NULL, err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_admin_set_token(a, "a\nb"), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_admin_set_token(a, "tok"), PULSARC_OK);
    ck_assert_int_eq(pulsarc_admin_set_token(a, ""), PULSARC_OK);
    static char huge[3000];
    memset(huge, '%', sizeof huge - 1); /* each escapes to 3 bytes: the path is too long */
    ck_assert_int_eq(pulsarc_admin_delete_subscription(a, "t", huge, 0, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "longer than"), "%s", err);
    pulsarc_admin_destroy(a);
    pulsarc_admin_destroy(NULL);
    ck_assert_int_eq(pulsarc_admin_create_topic(NULL, "t", err, sizeof err), PULSARC_ERR_INVALID_ARG);
    ck_assert_int_eq(pulsarc_admin_new(NULL, NULL, err, sizeof err), PULSARC_ERR_INVALID_ARG);
}
END_TEST

START_TEST(test_admin_new_bad_urls) {
    const char *bad[] = {"ftp://h:1", "pulsar://h:6650", "http://h:0", "http://h:8080/admin", "x", NULL};
    for (int i = 0; bad[i]; i++) {
        pulsarc_conf_t *conf = pct_conf((const char *const[]){"webServiceUrl", bad[i], NULL});
        pulsarc_admin_t *a = (pulsarc_admin_t *)1;
        ck_assert_msg(pulsarc_admin_new(conf, &a, err, sizeof err) == PULSARC_ERR_BAD_URL, "%s", bad[i]);
        ck_assert_ptr_null(a);
        ck_assert(err[0]);
        pulsarc_conf_destroy(conf);
    }
    unsetenv("PULSAR_ADMIN_URL");
    pulsarc_admin_t *a = NULL;
    ck_assert_int_eq(pulsarc_admin_new(NULL, &a, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(err, "PULSAR_ADMIN_URL"), "%s", err);
}
END_TEST

START_TEST(test_refused_port_without_broker) {
    pulsarc_admin_t *a = admin_on("http://127.0.0.1:1");
    int n = -1;
    ck_assert_int_eq(pulsarc_admin_partition_count(a, "t", &n, err, sizeof err), PULSARC_ERR_CONNECT);
    ck_assert_msg(strstr(err, "GET http://127.0.0.1:1/admin/v2/persistent/public/default/t/partitions"),
                  "%s", err);
    ck_assert_int_eq(n, -1);
    pulsarc_admin_destroy(a);
}
END_TEST

static Suite *admin_json_suite(void) {
    Suite *s = suite_create("admin_json");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, test_stats_from_capture);
    tcase_add_test(tc, test_partitioned_stats_from_capture);
    tcase_add_test(tc, test_stats_small_and_mistyped);
    tcase_add_test(tc, test_malformed_json_is_a_clear_error);
    tcase_add_test(tc, test_lists_from_capture);
    tcase_add_test(tc, test_lists_mistyped);
    tcase_add_test(tc, test_partitions_from_capture);
    tcase_add_test(tc, test_reason_extraction);
    tcase_add_test(tc, test_policies_from_capture);
    tcase_add_test(tc, test_policies_unset_and_mistyped);
    tcase_add_test(tc, test_request_bodies);
    suite_add_tcase(s, tc);
    tc = tcase_create("mapping");
    tcase_add_test(tc, test_http_status_mapping);
    tcase_add_test(tc, test_curl_code_mapping);
    tcase_add_test(tc, test_admin_new_and_arguments);
    tcase_add_test(tc, test_admin_new_bad_urls);
    tcase_add_test(tc, test_refused_port_without_broker);
    tcase_add_test(tc, test_txn_in_buffer);
    suite_add_tcase(s, tc);
    return s;
}

PC_TEST_MAIN(admin_json_suite)
#endif /* PULSARC_WITH_CURL */
