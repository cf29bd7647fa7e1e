/*
 * libFuzzer target: the admin client's JSON readers (lib/admin/json.c):
 * error reasons, string lists, partition counts, topic stats and namespace
 * policies, on whatever text a broker (or something pretending to be one)
 * sends back.
 *
 * Input: [selector:1][body]; the body is NUL-terminated here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 65536)
        return 0;
    char *body = malloc(size);
    memcpy(body, data + 1, size - 1);
    body[size - 1] = '\0';
    char err[256], reason[128];
    pc_admin_json_reason(body, reason, (size_t)(data[0] % 4) * 40 + 1);
    char **list = NULL;
    if (pc_admin_json_strings(body, &list, err, sizeof err) == PULSARC_OK)
        pulsarc_admin_list_free(list);
    int n = 0;
    (void)pc_admin_json_partitions(body, &n, err, sizeof err);
    pulsarc_admin_topic_stats_t *st = NULL;
    if (pc_admin_json_topic_stats(body, &st, err, sizeof err) == PULSARC_OK)
        pulsarc_admin_topic_stats_free(st);
    int64_t a = 0, b = 0;
    (void)pc_admin_json_bool(body, &n, err, sizeof err);
    int aborted, ongoing;
    (void)pc_admin_json_txn_in_buffer(body, &aborted, &ongoing, err, sizeof err);
    (void)pc_admin_json_retention(body, &a, &b, err, sizeof err);
    (void)pc_admin_json_delayed_delivery(body, &n, &a, err, sizeof err);
    free(body);
    return 0;
}
