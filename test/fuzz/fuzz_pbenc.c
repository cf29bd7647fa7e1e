/*
 * libFuzzer target: the hand-written producer encoders (core/pbenc.c)
 * against protobuf-c. Whatever protobuf-c can unpack as a CommandSend, a
 * MessageMetadata or a SingleMessageMetadata, the hand encoder must either
 * decline it or count and write exactly protobuf-c's packing of it, and
 * write nothing past that size or past a smaller room it is given.
 *
 * Input: [selector:1][protobuf bytes]; selector % 3 picks the message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "PulsarApi.pb-c.h"
#include "core/pbenc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef size_t (*hand_enc_fn)(const void *msg, uint8_t *out, size_t cap);

static size_t enc_send(const void *m, uint8_t *out, size_t cap) { return pc_pbenc_send(m, out, cap); }
static size_t enc_md(const void *m, uint8_t *out, size_t cap) { return pc_pbenc_metadata(m, out, cap); }
static size_t enc_single(const void *m, uint8_t *out, size_t cap) {
    return pc_pbenc_single(m, out, cap);
}

static void check(const ProtobufCMessage *m, hand_enc_fn enc) {
    size_t n = enc(m, NULL, 0);
    if (n == PC_PBENC_FALLBACK)
        return;
    size_t want = protobuf_c_message_get_packed_size(m);
    if (n != want)
        abort();
    uint8_t *ref = malloc(want + 1), *got = malloc(want + 1);
    if (!ref || !got)
        abort();
    protobuf_c_message_pack(m, ref);
    got[want] = 0xA5;
    if (enc(m, got, want) != want || memcmp(got, ref, want) != 0 || got[want] != 0xA5)
        abort();
    size_t short_cap = want / 2; /* too little room: whole size, nothing past it */
    got[short_cap] = 0xA5;
    if (enc(m, got, short_cap) != want || got[short_cap] != 0xA5)
        abort();
    free(ref);
    free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 65536)
        return 0;
    const ProtobufCMessageDescriptor *d[] = {&pulsar__proto__command_send__descriptor,
                                             &pulsar__proto__message_metadata__descriptor,
                                             &pulsar__proto__single_message_metadata__descriptor};
    const hand_enc_fn enc[] = {enc_send, enc_md, enc_single};
    int which = data[0] % 3;
    ProtobufCMessage *m = protobuf_c_message_unpack(d[which], NULL, size - 1, data + 1);
    if (!m)
        return 0;
    check(m, enc[which]);
    protobuf_c_message_free_unpacked(m, NULL);
    return 0;
}
