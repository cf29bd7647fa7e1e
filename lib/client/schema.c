/*
 * Design notes: schema declarations. The property table's choices list
 * BYTES first and then the wire's Schema.Type values in wire order, so
 * choice k > 0 is wire type k - 1 (NONE = 0 … PROTOBUF_NATIVE = 20).
 * BYTES, as in the Java client, declares nothing. The checks here are the
 * ones the broker would otherwise answer with a less helpful error: a
 * structured type without a definition, or a definition where none is
 * read. Owned by the producer or consumer that reads it; immutable after.
 */
#include <stdlib.h>
#include <string.h>

#include "client/schema.h"
#include "conf/props.h"
#include "core/err.h"

/* Types whose schema_data carries the structure; the broker needs it. */
static int needs_definition(Pulsar__Proto__Schema__Type t) {
    return t == PULSAR__PROTO__SCHEMA__TYPE__Json || t == PULSAR__PROTO__SCHEMA__TYPE__Avro ||
           t == PULSAR__PROTO__SCHEMA__TYPE__Protobuf ||
           t == PULSAR__PROTO__SCHEMA__TYPE__ProtobufNative ||
           t == PULSAR__PROTO__SCHEMA__TYPE__KeyValue;
}

/* Avro-based definitions (AVRO, JSON, PROTOBUF) are JSON documents. */
static int json_based(Pulsar__Proto__Schema__Type t) {
    return t == PULSAR__PROTO__SCHEMA__TYPE__Json || t == PULSAR__PROTO__SCHEMA__TYPE__Avro ||
           t == PULSAR__PROTO__SCHEMA__TYPE__Protobuf;
}

static const char *first_non_space(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    return s;
}

static pulsarc_err_t check(const pc_schema_t *s, const char *type_name, char *errstr,
                           size_t errlen) {
    if (!s->declared && s->data[0])
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "schemaDefinition is set but schemaType is BYTES; set schemaType too");
    if (!s->declared)
        return PULSARC_OK;
    if (needs_definition(s->type) && !s->data[0])
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "schemaType %s needs schemaDefinition (the schema's text)", type_name);
    if (json_based(s->type) && *first_non_space(s->data) != '{')
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "schemaDefinition for %s must be a JSON object (an Avro schema), got "
                         "\"%.40s\"", type_name, s->data);
    if (!needs_definition(s->type) && s->data[0])
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "schemaType %s takes no schemaDefinition", type_name);
    return PULSARC_OK;
}

pulsarc_err_t pc_schema_from_conf(pc_schema_t *s, const pulsarc_conf_t *conf, char *errstr,
                                  size_t errlen) {
    memset(s, 0, sizeof *s);
    int64_t k = pc_conf_int(conf, PC_PROP_SCHEMA_TYPE);
    s->declared = k > 0;
    s->type = (Pulsar__Proto__Schema__Type)(k > 0 ? k - 1 : 0);
    s->name = strdup(pc_conf_str(conf, PC_PROP_SCHEMA_NAME));
    s->data = strdup(pc_conf_str(conf, PC_PROP_SCHEMA_DEFINITION));
    if (!s->name || !s->data) {
        pc_schema_clear(s);
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    char type_name[32];
    size_t len = sizeof type_name;
    if (pulsarc_conf_get(conf, "schemaType", type_name, &len))
        strcpy(type_name, "?");
    pulsarc_err_t err = check(s, type_name, errstr, errlen);
    if (err)
        pc_schema_clear(s);
    return err;
}

Pulsar__Proto__Schema *pc_schema_wire(const pc_schema_t *s, Pulsar__Proto__Schema *out) {
    if (!s->declared)
        return NULL;
    out->name = s->name;
    out->type = s->type;
    out->schema_data.data = (uint8_t *)s->data;
    out->schema_data.len = strlen(s->data);
    return out;
}

void pc_schema_clear(pc_schema_t *s) {
    free(s->name);
    free(s->data);
    memset(s, 0, sizeof *s);
}

pulsarc_err_t pulsarc_conf_check_schema(const pulsarc_conf_t *conf, char *errstr, size_t errlen) {
    if (!conf)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "conf is required");
    pc_schema_t s;
    pulsarc_err_t err = pc_schema_from_conf(&s, conf, errstr, errlen);
    pc_schema_clear(&s);
    return err;
}
