/*
 * The schema a producer or consumer declares to the broker (schemaType,
 * schemaDefinition, schemaName), read once from its configuration. The
 * broker registers it, or checks it against the topic's; pulsarc itself
 * never encodes or decodes payloads with it.
 */
#ifndef PC_SCHEMA_H
#define PC_SCHEMA_H
#include <stddef.h>

#include "PulsarApi.pb-c.h"
#include "pulsarc.h"

typedef struct pc_schema {
    int declared;                      /* 0: BYTES, nothing is sent */
    Pulsar__Proto__Schema__Type type;
    char *name;                        /* owned */
    char *data;                        /* owned; may be empty */
} pc_schema_t;

/* Reads and checks the three keys; errstr names the key at fault. */
pulsarc_err_t pc_schema_from_conf(pc_schema_t *s, const pulsarc_conf_t *conf, char *errstr,
                                  size_t errlen);
/* Points out (initialised by the caller) at s's fields; NULL when nothing is declared. */
Pulsar__Proto__Schema *pc_schema_wire(const pc_schema_t *s, Pulsar__Proto__Schema *out);
void pc_schema_clear(pc_schema_t *s);
#endif
