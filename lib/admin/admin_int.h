/*
 * Internal pieces of the admin client that need no network: JSON reading
 * and writing (json.c) and the HTTP/libcurl error mapping (admin.c).
 * Separate so the unit tests can drive them from captured strings.
 */
#ifndef PC_ADMIN_INT_H
#define PC_ADMIN_INT_H
#include <stddef.h>
#include <stdint.h>

#include "pulsarc.h"

/* --- reading; body is the NUL-terminated response text, borrowed ------ */

/*
 * The broker's explanation of a failed request, one line, into out:
 * the "reason" string of a JSON object body (Pulsar's own errors), else
 * its "message" (Jetty's error page as JSON, e.g. the authentication
 * filter's 401), else the <title> of an HTML error page, else the body's
 * first non-blank line (e.g. a Jackson parse error), else "". Never fails.
 */
void pc_admin_json_reason(const char *body, char *out, size_t outlen);

/* A JSON array of strings → NULL-terminated list owned by the caller. */
pulsarc_err_t pc_admin_json_strings(const char *body, char ***list, char *errstr,
                                    size_t errlen);
/* {"partitions":N,...} → N. */
pulsarc_err_t pc_admin_json_partitions(const char *body, int *count, char *errstr,
                                       size_t errlen);
/* TopicStats (or PartitionedTopicStats) → a new stats object. */
pulsarc_err_t pc_admin_json_topic_stats(const char *body, pulsarc_admin_topic_stats_t **stats,
                                        char *errstr, size_t errlen);
/*
 * Namespace policies. An empty body (the broker's answer when the
 * namespace has no such policy) gives PULSARC_ERR_NOT_FOUND.
 */
pulsarc_err_t pc_admin_json_bool(const char *body, int *out, char *errstr, size_t errlen);
/* transactionInBufferStats: "aborted" and whether a start position (still open) is given. */
pulsarc_err_t pc_admin_json_txn_in_buffer(const char *body, int *aborted, int *ongoing,
                                         char *errstr, size_t errlen);
pulsarc_err_t pc_admin_json_retention(const char *body, int64_t *minutes, int64_t *size_mb,
                                      char *errstr, size_t errlen);
pulsarc_err_t pc_admin_json_delayed_delivery(const char *body, int *active, int64_t *tick_ms,
                                             char *errstr, size_t errlen);

/* --- writing: each returns a malloc'd string owned by the caller, NULL on OOM */

/* {"ledgerId":..,"entryId":..,"partitionIndex":..[,"batchIndex":..]} */
char *pc_admin_json_msgid(const pulsarc_msgid_t *id);
/* {"retentionTimeInMinutes":..,"retentionSizeInMB":..} */
char *pc_admin_json_retention_body(int64_t minutes, int64_t size_mb);
/* {"active":..,"tickTime":..} */
char *pc_admin_json_delayed_body(int active, int64_t tick_ms);
/* {"allowedClusters":[clusters...],"adminRoles":[]}; clusters NULL-terminated */
char *pc_admin_json_tenant_body(const char *const *clusters);

/* --- error mapping (admin.c) ---------------------------------------- */

/* HTTP status (>= 300) → pulsarc error; see include/pulsarc/admin.h. */
pulsarc_err_t pc_admin_err_from_http(long status);
/* CURLcode → pulsarc error. */
pulsarc_err_t pc_admin_err_from_curl(int curl_code);
/* "Not Found" for 404 …; "" for unknown codes. Static string. */
const char *pc_admin_http_phrase(long status);
#endif
