/* Shared helpers for the Check test programs. */
#ifndef PC_TESTUTIL_H
#define PC_TESTUTIL_H
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "pulsarc.h"

/* Runs one suite (fork mode unless CK_FORK=no) and exits with its verdict. */
#define PC_TEST_MAIN(suite_fn)                                          \
    int main(void) {                                                    \
        SRunner *sr = srunner_create(suite_fn());                       \
        srunner_run_all(sr, CK_NORMAL);                                 \
        int nf = srunner_ntests_failed(sr);                             \
        srunner_free(sr);                                               \
        return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                   \
    }

/* Deterministic test randomness (xorshift64): failures reproduce. */
static inline uint64_t pct_xorshift(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* $PULSAR_SERVICE_URL, or pulsar://127.0.0.1:6650. */
const char *pct_service_url(void);
/* $PULSAR_ADMIN_URL, or http://127.0.0.1:8080. */
const char *pct_admin_url(void);
/* $PULSAR_CLUSTER, or "standalone" (the standalone broker's cluster name). */
const char *pct_cluster_name(void);
/* A topic name unique to this run: "<prefix>-<pid>-<n>-<time>". Static buffer per call slot. */
const char *pct_topic(const char *prefix);
/* HTTP to the admin API; returns the status code (or -1). body may be NULL. */
int pct_admin(const char *method, const char *path, const char *body);
/* Set-up through the project's own admin client (pulsarc_admin_*): fail the test on error. */
void pct_create_partitioned(const char *topic, int partitions);
void pct_create_dedup_namespace(const char *ns);
/* A client on the test broker; fails the test if it cannot be created. */
pulsarc_client_t *pct_client(void);
/* A client with extra key=value settings (NULL-terminated pairs). */
pulsarc_client_t *pct_client_with(const char *const *kv);
/*
 * With PULSARC_TEST_LOOP_MODE=1 in the environment, pct_client*() make
 * threadingMode=loop clients and start a driver thread that steps each one
 * (the application's loop thread); pulsarc_client_destroy() below then
 * stops that thread after the client is closed, before freeing it.
 */
int pct_loop_mode(void);
void pct_client_destroy(pulsarc_client_t *c);
#ifndef PCT_NO_DESTROY_WRAP
#define pulsarc_client_destroy pct_client_destroy
#endif
/* A conf with the given NULL-terminated key, value pairs set. */
pulsarc_conf_t *pct_conf(const char *const *kv);
/* Sends n messages "<tag>-<i>" to topic, synchronously, from an unbatched
 * producer made for it (which also creates the topic). */
void pct_send_tagged(pulsarc_client_t *c, const char *topic, const char *tag, int n);
/* The same asynchronously, then a flush: batch > 1 batches up to batch
 * messages an entry (the delay is long, so batches fill), else unbatched. */
void pct_send_tagged_async(pulsarc_client_t *c, const char *topic, const char *tag, int n,
                           int batch);
#endif
