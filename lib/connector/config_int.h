/*
 * Internals of the connector configuration, shared by config.c (the object,
 * values and precedence), config_sources.c (environment, properties,
 * arguments), properties.c (the .properties syntax) and the table options.
 */
#ifndef PC_CONNECTOR_CONFIG_INT_H
#define PC_CONNECTOR_CONFIG_INT_H
#include <stdint.h>
#include <stdio.h>

#include "connector/connector_props.h"
#include "pulsarc.h"
#include "pulsarc/connector.h"

typedef struct cc_router {
    char *name;
    pulsarc_connector_router_cb cb;
    void *opaque;
} cc_router_t;

struct pulsarc_connector_config_s {
    char *text[PC_CC__COUNT];        /* NULL: not set, the default applies */
    int64_t num[PC_CC__COUNT];       /* INT value, BOOL 0/1, ENUM index */
    signed char origin[PC_CC__COUNT]; /* pulsarc_connector_origin_t of text */
    cc_router_t *routers;
    size_t nrouters;
};

/*
 * Validates value for property id and stores it as coming from origin,
 * unless a stronger source already set it (then nothing changes: PULSARC_OK).
 * errstr names the key (never a secret value).
 */
pulsarc_err_t pc_cc_store(pulsarc_connector_config_t *c, int id, int origin, const char *value,
                          char *errstr, size_t errlen);
/*
 * Reads value for property id by the table's rules (type, range, enum,
 * URL and name syntax) without storing it: *num as pc_cc_int would give
 * it, *text (when text is not NULL) the canonical text, malloc'd. For the
 * source and sink builders, which keep their settings in their own structs.
 */
pulsarc_err_t pc_cc_parse(int id, const char *value, char **text, int64_t *num, char *errstr,
                          size_t errlen);
/*
 * The value id gives its target key (the client's): text as it is, or
 * converted into buf when the units differ (nanoseconds to milliseconds).
 */
const char *pc_cc_target_value(int id, const char *text, int64_t num, char *buf, size_t len);
/* Effective text (set value, else default; NULL if neither). */
const char *pc_cc_str(const pulsarc_connector_config_t *c, pc_cc_id_t id);
/* Effective number (INT, BOOL 0/1, ENUM index). */
int64_t pc_cc_int(const pulsarc_connector_config_t *c, pc_cc_id_t id);
/* 1 if a source other than the defaults set id. */
int pc_cc_is_set(const pulsarc_connector_config_t *c, pc_cc_id_t id);

/*
 * Runs apply(c', opaque) on a copy c' of c and moves c' into c only when it
 * succeeds, so that a loader fails as a whole or applies as a whole.
 */
typedef pulsarc_err_t (*pc_cc_apply_fn)(pulsarc_connector_config_t *c, void *opaque,
                                        char *errstr, size_t errlen);
pulsarc_err_t pc_cc_atomically(pulsarc_connector_config_t *c, pc_cc_apply_fn apply,
                               void *opaque, char *errstr, size_t errlen);

/*
 * Checks a parallel member's place, "what index of count" (what: "reader"
 * or "writer"): count 1..max and index 0..count-1, else BAD_CONFIG naming
 * the value that is out of range.
 */
pulsarc_err_t pc_cc_check_place(const char *what, int64_t index, int64_t count, int64_t max,
                                char *errstr, size_t errlen);

/*
 * Java .properties syntax: calls cb(opaque, key, value, line) for each
 * entry in order (key and value unescaped, NUL-terminated, borrowed for the
 * call; line is the first line of the entry). Stops at the first non-zero
 * return of cb and returns it. Malformed \u escapes give BAD_CONFIG with
 * "line N: ...".
 */
typedef pulsarc_err_t (*pc_properties_cb)(void *opaque, const char *key, const char *value,
                                          int line, char *errstr, size_t errlen);
pulsarc_err_t pc_properties_parse(const char *text, size_t len, pc_properties_cb cb,
                                  void *opaque, char *errstr, size_t errlen);
#endif
