/*
 * libFuzzer target: the text parsers a user or a broker controls: service
 * URLs (pc_service_url_parse), "host:port" from lookups
 * (pc_hostport_parse), topic names (pc_topic_parse, then
 * pc_topic_partition_name), message ids (pulsarc_msgid_parse, then
 * pulsarc_msgid_format) and the JSON of authParams, OAuth2 key files and
 * OAuth2 issuers' answers (pc_auth_kv_parse_doc; nested members skipped
 * when the selector's bit 2 is set).
 *
 * Input: [selector:1][text]; the text is NUL-terminated here. Every
 * parser gets every input whatever the selector; the selector only picks
 * the partition index and the default tenant/namespace.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/topic.h"
#include "core/url.h"
#include "net/auth_plugin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 8192)
        return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char err[256];
    pc_service_url_t u;
    (void)pc_service_url_parse(text, &u, err, sizeof err);
    pc_hostport_t hp;
    (void)pc_hostport_parse(text, 6650, &hp, err, sizeof err);
    pc_topic_t t;
    const char *tenant = (data[0] & 1) ? "tenant" : NULL, *ns = (data[0] & 2) ? "ns" : NULL;
    if (pc_topic_parse(text, tenant, ns, &t, err, sizeof err) == PULSARC_OK) {
        char name[PC_TOPIC_MAX + 32];
        (void)pc_topic_partition_name(&t, data[0] >> 2, name, sizeof name);
        (void)pc_topic_partition_name(&t, INT32_MAX, name, 8);
    }
    pulsarc_msgid_t id;
    if (pulsarc_msgid_parse(text, &id) == PULSARC_OK) {
        char buf[64];
        (void)pulsarc_msgid_format(&id, buf, sizeof buf);
        (void)pulsarc_msgid_format(&id, buf, 1 + (data[0] % 64));
    }
    pc_auth_kv_t kv;
    if (pc_auth_kv_parse_doc(text, "input", data[0] & 4, &kv, err, sizeof err) == PULSARC_OK) {
        (void)pc_auth_kv_get_str(&kv, "access_token");
        (void)pc_auth_kv_get(&kv, "expires_in");
        pc_auth_kv_free(&kv);
    }
    free(text);
    return 0;
}
