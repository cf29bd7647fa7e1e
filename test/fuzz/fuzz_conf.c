/*
 * libFuzzer target: configuration. Arbitrary key/value pairs through
 * pulsarc_conf_set (numbers past their range, enums, booleans, huge
 * strings), then pulsarc_conf_get of the same key with small buffers, and
 * pulsarc_conf_dup of the result.
 *
 * Input: "key\0value\0key\0value..." (up to 16 pairs). To reach real keys
 * quickly, a key starting with '#' followed by a byte N names the N-th
 * known key of a fixed list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pulsarc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const KEYS[] = {
    "serviceUrl", "operationTimeoutMs", "connectionTimeoutMs", "keepAliveIntervalSeconds",
    "maxLookupRedirects", "initialBackoffIntervalMs", "maxBackoffIntervalMs", "callbackMode",
    "authPlugin", "authParams", "tlsAllowInsecureConnection", "producerName", "sendTimeoutMs",
    "maxPendingMessages", "batchingEnabled", "batchingMaxMessages", "batchingMaxBytes",
    "batchingMaxPublishDelayMicros", "compressionType", "chunkingEnabled", "chunkMaxMessageSize",
    "accessMode", "initialSequenceId", "messageRoutingMode", "memoryLimitBytes",
    "subscriptionType", "subscriptionInitialPosition", "receiverQueueSize",
    "negativeAckRedeliveryDelayMicros", "acknowledgementsGroupTimeMicros", "keySharedHashRanges",
    "batchReceiveMaxNumBytes", "webServiceUrl", "defaultTenant"};

static const char *key_of(const char *k) {
    if (k[0] == '#' && k[1])
        return KEYS[(uint8_t)k[1] % (sizeof KEYS / sizeof KEYS[0])];
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 65536)
        return 0;
    char *text = malloc(size + 2);
    memcpy(text, data, size);
    text[size] = text[size + 1] = '\0';
    pulsarc_conf_t *conf = pulsarc_conf_new();
    char err[256];
    const char *p = text, *end = text + size;
    for (int i = 0; i < 16 && p < end; i++) {
        const char *k = p;
        const char *v = k + strlen(k) + 1;
        if (v > end)
            break;
        const char *key = key_of(k);
        (void)pulsarc_conf_set(conf, key, v, err, sizeof err);
        char buf[16];
        size_t len = (size_t)(i % 3) * 8;
        (void)pulsarc_conf_get(conf, key, len ? buf : NULL, &len);
        p = v + strlen(v) + 1;
    }
    pulsarc_conf_destroy(pulsarc_conf_dup(conf));
    pulsarc_conf_destroy(conf);
    free(text);
    return 0;
}
