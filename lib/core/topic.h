/* Topic names: persistent://tenant/ns/local[-partition-N] and short forms. */
#ifndef PC_TOPIC_H
#define PC_TOPIC_H
#include <stddef.h>
#include "pulsarc.h"

#define PC_TOPIC_PART_MAX 256
#define PC_TOPIC_MAX 1024

typedef struct pc_topic {
    int persistent;                  /* 1: persistent://, 0: non-persistent:// */
    char tenant[PC_TOPIC_PART_MAX];
    char ns[PC_TOPIC_PART_MAX];
    char local[PC_TOPIC_MAX];        /* local name, including any partition suffix */
    int partition;                   /* N from "-partition-N", else -1 */
    char full[PC_TOPIC_MAX];         /* canonical full name */
    char base[PC_TOPIC_MAX];         /* full name without the partition suffix */
} pc_topic_t;

/*
 * Parses name. "local" resolves to persistent://<tenant>/<ns>/local with the
 * given defaults ("public"/"default" when NULL); "tenant/ns/local" to
 * persistent://tenant/ns/local. Rejected with PULSARC_ERR_BAD_TOPIC and a
 * reason: empty parts, unknown scheme, wrong number of parts, bad partition
 * suffix, names too long, characters outside [A-Za-z0-9_.:=-]... for tenant
 * and namespace.
 */
pulsarc_err_t pc_topic_parse(const char *name, const char *def_tenant, const char *def_ns,
                             pc_topic_t *out, char *errstr, size_t errlen);

/* Writes "<base>-partition-<idx>" into buf; INVALID_ARG if it does not fit. */
pulsarc_err_t pc_topic_partition_name(const pc_topic_t *t, int idx, char *buf, size_t len);
#endif
