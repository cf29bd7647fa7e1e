/*
 * pulsarc — Admin section: a small client of the broker's HTTP admin API
 * (/admin/v2, docs/PROTOCOL.md §13), built on libcurl and json-c. Included by
 * pulsarc.h; the functions exist only in a library built with WITH_CURL=1
 * (PULSARC_WITH_CURL).
 *
 * Conventions are those of pulsarc.h, plus:
 *  - Topic names take the same short and full forms as the client
 *    ("t", "tenant/ns/t", "persistent://tenant/ns/t", "...-partition-N");
 *    short names use "defaultTenant" / "defaultNamespace" of the conf.
 *  - A namespace argument is "tenant/namespace".
 *  - On failure errstr reads "<METHOD> <path>: HTTP <status> <phrase>:
 *    <the broker's reason>" or "<METHOD> <url>: <transport error>". The
 *    HTTP status maps to the return value:
 *      400 → PULSARC_ERR_INVALID_ARG, 401 → PULSARC_ERR_BROKER_AUTHENTICATION,
 *      403 → PULSARC_ERR_BROKER_AUTHORIZATION, 404 → PULSARC_ERR_NOT_FOUND,
 *      405 → PULSARC_ERR_UNSUPPORTED, 408/504 → PULSARC_ERR_TIMEOUT,
 *      409 → PULSARC_ADMIN_ERR_CONFLICT (already exists, or still in use:
 *            a tenant with namespaces, a namespace with topics),
 *      412 → PULSARC_ERR_BROKER_NOT_ALLOWED (a precondition of the broker's),
 *      429 → PULSARC_ERR_BROKER_TOO_MANY_REQUESTS,
 *      503 → PULSARC_ERR_BROKER_SERVICE_NOT_READY, other → PULSARC_ERR_BROKER_UNKNOWN.
 *    Transport failures: refused → PULSARC_ERR_CONNECT, unknown host →
 *    PULSARC_ERR_RESOLVE, time-out → PULSARC_ERR_TIMEOUT, TLS → PULSARC_ERR_TLS.
 *    A response that is not the expected JSON → PULSARC_ERR_MALFORMED.
 *  - Threads: an admin handle is used by ONE thread at a time (it owns one
 *    libcurl easy handle and its response buffer). Use one handle per
 *    thread, or serialise the calls. Different handles are independent.
 *    Every call blocks for at most "operationTimeoutMs".
 */
#ifndef PULSARC_ADMIN_H
#define PULSARC_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "pulsarc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/** @name Admin */
/**@{*/
typedef struct pulsarc_admin_s pulsarc_admin_t;

/**
 * The error an admin call returns for HTTP 409 Conflict (the topic,
 * subscription, tenant or namespace already exists, or is still in use).
 * An alias until the error enum has a value of its own; compare against
 * this name.
 */
#define PULSARC_ADMIN_ERR_CONFLICT PULSARC_ERR_STATE

/**
 * Creates an admin handle. conf (borrowed, may be NULL) is read for
 * "webServiceUrl" (http:// or https://; falls back to $PULSAR_ADMIN_URL;
 * with several hosts the next is tried when one refuses),
 * "operationTimeoutMs" (whole request), "connectionTimeoutMs",
 * "maxLookupRedirects" (HTTP redirects followed), "defaultTenant",
 * "defaultNamespace", and the TLS keys "tlsTrustCertsFilePath" (a PEM file
 * or an openssl-rehash directory; only those CAs are then trusted),
 * "tlsCertificateFilePath" + "tlsKeyFilePath" (client certificate),
 * "tlsAllowInsecureConnection", "tlsHostnameVerificationEnable" (on unless
 * set to false). "authPlugin"/"authParams" are not read yet: use
 * pulsarc_admin_set_token(). No request is made here.
 * On success *out is owned by the caller (pulsarc_admin_destroy).
 */
PULSARC_API pulsarc_err_t pulsarc_admin_new(const pulsarc_conf_t *conf, pulsarc_admin_t **out,
                                            char *errstr, size_t errlen);
/** Frees admin. NULL is a no-op. */
PULSARC_API void pulsarc_admin_destroy(pulsarc_admin_t *admin);
/**
 * Sends "Authorization: Bearer <token>" on every later request (token
 * borrowed, copied; NULL or "" removes it). The header is kept across the
 * broker's redirects to other brokers of the cluster.
 */
PULSARC_API pulsarc_err_t pulsarc_admin_set_token(pulsarc_admin_t *admin, const char *token);
/** The base URL requests go to, e.g. "http://127.0.0.1:8080". Borrowed from admin. */
PULSARC_API const char *pulsarc_admin_url(const pulsarc_admin_t *admin);
/** Frees a list returned by an admin call (the strings and the array). NULL is a no-op. */
PULSARC_API void pulsarc_admin_list_free(char **list);

/* --- topics --- */

/** Creates a non-partitioned topic (topic borrowed). */
PULSARC_API pulsarc_err_t pulsarc_admin_create_topic(pulsarc_admin_t *admin, const char *topic,
                                                     char *errstr, size_t errlen);
/** Creates a partitioned topic with partitions (>= 1) partitions. */
PULSARC_API pulsarc_err_t pulsarc_admin_create_partitioned_topic(pulsarc_admin_t *admin,
                                                                 const char *topic,
                                                                 int partitions, char *errstr,
                                                                 size_t errlen);
/**
 * Deletes a non-partitioned topic (or one partition). force != 0 also
 * closes its producers and consumers; without it a topic with connected
 * clients fails with PULSARC_ERR_BROKER_NOT_ALLOWED.
 */
PULSARC_API pulsarc_err_t pulsarc_admin_delete_topic(pulsarc_admin_t *admin, const char *topic,
                                                     int force, char *errstr, size_t errlen);
/** Deletes a partitioned topic and all its partitions; force as above. */
PULSARC_API pulsarc_err_t pulsarc_admin_delete_partitioned_topic(pulsarc_admin_t *admin,
                                                                 const char *topic, int force,
                                                                 char *errstr, size_t errlen);
/**
 * Persistent topics of namespace ns (borrowed, "tenant/ns") in full form:
 * the non-partitioned topics and every partition ("...-partition-N"), not
 * the partitioned topics' base names. On success *list is a NULL-terminated
 * array owned by the caller (pulsarc_admin_list_free).
 */
PULSARC_API pulsarc_err_t pulsarc_admin_list_topics(pulsarc_admin_t *admin, const char *ns,
                                                    char ***list, char *errstr, size_t errlen);
/** Persistent partitioned topics of ns (base names, full form); as above. */
PULSARC_API pulsarc_err_t pulsarc_admin_list_partitioned_topics(pulsarc_admin_t *admin,
                                                                const char *ns, char ***list,
                                                                char *errstr, size_t errlen);
/**
 * Number of partitions of topic: 0 for a non-partitioned topic,
 * PULSARC_ERR_NOT_FOUND when there is no such topic.
 */
PULSARC_API pulsarc_err_t pulsarc_admin_partition_count(pulsarc_admin_t *admin,
                                                        const char *topic, int *count,
                                                        char *errstr, size_t errlen);

/* --- subscriptions --- */

/**
 * Creates durable subscription sub (borrowed) on topic, starting at pos
 * (borrowed; NULL = latest; pulsarc_msgid_earliest() = the first message).
 * On a partitioned topic it is created on every partition.
 */
PULSARC_API pulsarc_err_t pulsarc_admin_create_subscription(pulsarc_admin_t *admin,
                                                            const char *topic, const char *sub,
                                                            const pulsarc_msgid_t *pos,
                                                            char *errstr, size_t errlen);
/** Deletes sub; force != 0 first disconnects its consumers. */
PULSARC_API pulsarc_err_t pulsarc_admin_delete_subscription(pulsarc_admin_t *admin,
                                                            const char *topic, const char *sub,
                                                            int force, char *errstr,
                                                            size_t errlen);
/** Subscription names of topic; *list as for pulsarc_admin_list_topics(). */
PULSARC_API pulsarc_err_t pulsarc_admin_list_subscriptions(pulsarc_admin_t *admin,
                                                           const char *topic, char ***list,
                                                           char *errstr, size_t errlen);
/**
 * Moves sub's cursor so that the next message delivered is id (borrowed;
 * batch index ignored). When topic names a partitioned topic (no
 * "-partition-N" suffix) and id->partition >= 0, the cursor of that
 * partition is moved.
 */
PULSARC_API pulsarc_err_t pulsarc_admin_reset_cursor_to_id(pulsarc_admin_t *admin,
                                                           const char *topic, const char *sub,
                                                           const pulsarc_msgid_t *id,
                                                           char *errstr, size_t errlen);
/**
 * Moves sub's cursor to the first message published at or after ms
 * (milliseconds since the epoch); on a partitioned topic, on every partition.
 */
PULSARC_API pulsarc_err_t pulsarc_admin_reset_cursor_to_time(pulsarc_admin_t *admin,
                                                             const char *topic, const char *sub,
                                                             int64_t ms, char *errstr,
                                                             size_t errlen);

/* --- stats --- */

/** One subscription in pulsarc_admin_topic_stats_t. */
typedef struct pulsarc_admin_sub_stats_s {
    char *name;            /**< owned by the enclosing stats */
    int64_t msg_backlog;   /**< messages not yet acknowledged ("msgBacklog") */
    int64_t backlog_size;  /**< bytes of that backlog ("backlogSize") */
    int64_t unacked;       /**< delivered, not acknowledged ("unackedMessages") */
    int consumers;         /**< connected consumers */
} pulsarc_admin_sub_stats_t;

/** A small part of the broker's topic stats. */
typedef struct pulsarc_admin_topic_stats_s {
    int64_t msg_in_counter; /**< messages published since the topic was loaded */
    int64_t storage_size;   /**< bytes stored */
    int64_t backlog_size;   /**< bytes of the largest subscription backlog */
    int publishers;         /**< connected producers */
    size_t nsubs;
    pulsarc_admin_sub_stats_t *subs; /**< nsubs entries, owned by the stats */
} pulsarc_admin_topic_stats_t;

/**
 * Stats of topic; for a partitioned topic, summed over its partitions. On
 * success *stats is owned by the caller (pulsarc_admin_topic_stats_free).
 */
PULSARC_API pulsarc_err_t pulsarc_admin_topic_stats(pulsarc_admin_t *admin, const char *topic,
                                                    pulsarc_admin_topic_stats_t **stats,
                                                    char *errstr, size_t errlen);
/**
 * What topic (one partition; borrowed) knows of transaction (most, least):
 * *aborted = 1 when it recorded the transaction as aborted, *ongoing = 1
 * when the transaction is still open on it. Both 0: it committed, or never
 * wrote to this topic. PULSARC_ERR_NOT_FOUND when the topic does not exist.
 */
PULSARC_API pulsarc_err_t pulsarc_admin_txn_in_buffer(pulsarc_admin_t *admin, const char *topic,
                                                      uint64_t most, uint64_t least,
                                                      int *aborted, int *ongoing, char *errstr,
                                                      size_t errlen);
/** Frees stats. NULL is a no-op. */
PULSARC_API void pulsarc_admin_topic_stats_free(pulsarc_admin_topic_stats_t *stats);
/**
 * Backlog (messages) of subscription sub on topic (summed over partitions);
 * PULSARC_ERR_NOT_FOUND when the topic has no such subscription.
 */
PULSARC_API pulsarc_err_t pulsarc_admin_subscription_backlog(pulsarc_admin_t *admin,
                                                             const char *topic, const char *sub,
                                                             int64_t *backlog, char *errstr,
                                                             size_t errlen);

/* --- tenants and namespaces --- */

/**
 * Creates tenant (borrowed) allowed on cluster (borrowed; NULL: every
 * cluster the broker knows), with no admin roles.
 */
PULSARC_API pulsarc_err_t pulsarc_admin_create_tenant(pulsarc_admin_t *admin,
                                                      const char *tenant, const char *cluster,
                                                      char *errstr, size_t errlen);
/** Deletes a tenant without namespaces (else PULSARC_ADMIN_ERR_CONFLICT). */
PULSARC_API pulsarc_err_t pulsarc_admin_delete_tenant(pulsarc_admin_t *admin,
                                                      const char *tenant, char *errstr,
                                                      size_t errlen);
/** Creates namespace ns ("tenant/ns", borrowed); the tenant must exist. */
PULSARC_API pulsarc_err_t pulsarc_admin_create_namespace(pulsarc_admin_t *admin, const char *ns,
                                                         char *errstr, size_t errlen);
/**
 * Deletes ns, which must hold no topics (else PULSARC_ADMIN_ERR_CONFLICT).
 * force != 0 also deletes its topics, where the broker allows it
 * (forceDeleteNamespaceAllowed; otherwise PULSARC_ERR_UNSUPPORTED, HTTP 405).
 */
PULSARC_API pulsarc_err_t pulsarc_admin_delete_namespace(pulsarc_admin_t *admin, const char *ns,
                                                         int force, char *errstr,
                                                         size_t errlen);

/*
 * Namespace policies. Each getter returns PULSARC_ERR_NOT_FOUND both when
 * the namespace does not exist and when it has no such policy of its own
 * (the broker's default applies); errstr tells which.
 */

/** Turns broker-side deduplication on (enabled != 0) or off for ns. */
PULSARC_API pulsarc_err_t pulsarc_admin_namespace_set_deduplication(pulsarc_admin_t *admin,
                                                                    const char *ns, int enabled,
                                                                    char *errstr, size_t errlen);
/** *enabled = 1 or 0. */
PULSARC_API pulsarc_err_t pulsarc_admin_namespace_get_deduplication(pulsarc_admin_t *admin,
                                                                    const char *ns,
                                                                    int *enabled, char *errstr,
                                                                    size_t errlen);
/** Retention of acknowledged messages: minutes and MiB (-1: unlimited, 0: none). */
PULSARC_API pulsarc_err_t pulsarc_admin_namespace_set_retention(pulsarc_admin_t *admin,
                                                                const char *ns, int64_t minutes,
                                                                int64_t size_mb, char *errstr,
                                                                size_t errlen);
PULSARC_API pulsarc_err_t pulsarc_admin_namespace_get_retention(pulsarc_admin_t *admin,
                                                                const char *ns,
                                                                int64_t *minutes,
                                                                int64_t *size_mb, char *errstr,
                                                                size_t errlen);
/** Delayed delivery on (active != 0) or off, with the tracker's tick in ms. */
PULSARC_API pulsarc_err_t pulsarc_admin_namespace_set_delayed_delivery(pulsarc_admin_t *admin,
                                                                       const char *ns,
                                                                       int active,
                                                                       int64_t tick_ms,
                                                                       char *errstr,
                                                                       size_t errlen);
PULSARC_API pulsarc_err_t pulsarc_admin_namespace_get_delayed_delivery(pulsarc_admin_t *admin,
                                                                       const char *ns,
                                                                       int *active,
                                                                       int64_t *tick_ms,
                                                                       char *errstr,
                                                                       size_t errlen);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* PULSARC_ADMIN_H */
