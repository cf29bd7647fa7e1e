/*
 * A bounds check for protobuf bytes before protobuf-c unpacks them.
 *
 * protobuf-c's unpack recurses once per nested message and allocates what
 * the bytes announce, with no limit of its own: a message id nested inside
 * a message id thousands of times (MessageIdData.first_chunk_message_id
 * allows it) exhausts the stack, and a few megabytes of tiny repeated
 * elements become hundreds of megabytes of structs. pc_pbguard_check walks
 * the raw bytes against the same descriptors, without allocating and with
 * its own recursion stopped at the depth limit, and says whether unpacking
 * them stays inside these bounds:
 *
 *   bound                        limit        Pulsar's own messages need
 *   nesting depth                16 levels    4 (BaseCommand > CommandSubscribe
 *                                             > KeySharedMeta > IntRange)
 *   elements (sub-messages,      1,000,000    one per topic name in a
 *     repeated values, unknown                namespace listing, one per
 *     fields) in one decode                   property of a message
 *   memory unpacking takes       64 MiB       ~8 x the wire size for properties
 *                                             of 10-byte keys and values: a
 *                                             whole 5 MiB of them fits
 *
 * The memory figure is an upper estimate of what protobuf-c allocates
 * (structs, arrays, strings, unknown-field copies, its scan bookkeeping);
 * test/fuzz/fuzz_command_recipe.c checks the estimate against a counting allocator.
 * Pure functions; any thread.
 */
#ifndef PC_PBGUARD_H
#define PC_PBGUARD_H
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#define PC_PB_MAX_DEPTH 16
#define PC_PB_MAX_ELEMENTS 1000000
#define PC_PB_MAX_UNPACKED ((size_t)64 << 20)

typedef enum pc_pbguard_status {
    PC_PBG_OK = 0,
    PC_PBG_MALFORMED = 1, /* not protobuf wire format (protobuf-c would refuse it too) */
    PC_PBG_TOO_DEEP = 2,  /* messages nested past max_depth */
    PC_PBG_TOO_MANY = 3,  /* more elements than max_elements */
    PC_PBG_TOO_BIG = 4,   /* unpacking would take more than max_unpacked bytes */
} pc_pbguard_status_t;

typedef struct pc_pbguard_limits {
    unsigned max_depth;
    size_t max_elements;
    size_t max_unpacked;
} pc_pbguard_limits_t;

/* The limits above, used when pc_pbguard_check gets NULL. */
extern const pc_pbguard_limits_t pc_pbguard_default_limits;

/* What the walk found: the totals, or where it stopped. */
typedef struct pc_pbguard_result {
    pc_pbguard_status_t status;
    unsigned depth;       /* deepest nesting seen (the top message is 1) */
    size_t elements;      /* elements counted */
    size_t unpacked;      /* estimated bytes protobuf-c allocates */
    size_t offset;        /* where a MALFORMED field starts, from the top */
    const char *message;  /* the message type being read when it stopped */
    const char *field;    /* its field then, or NULL */
} pc_pbguard_result_t;

/*
 * Walks len bytes at p as a `d`. Returns res->status; res (required) says
 * where it stopped. Bytes it calls OK unpack within the limits; bytes it
 * calls MALFORMED are ones protobuf-c also rejects (or does not reach).
 */
pc_pbguard_status_t pc_pbguard_check(const ProtobufCMessageDescriptor *d, const uint8_t *p,
                                     size_t len, const pc_pbguard_limits_t *lim,
                                     pc_pbguard_result_t *res);

/* One line for an error message, e.g. "MessageIdData.first_chunk_message_id
 * nests messages deeper than the limit of 16". Returns buf. */
const char *pc_pbguard_describe(const pc_pbguard_result_t *res, const pc_pbguard_limits_t *lim,
                                char *buf, size_t len);
#endif
