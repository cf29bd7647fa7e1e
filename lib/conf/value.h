/*
 * The one parser of configuration values, shared by the client's property
 * table (conf.c) and the connector's (libpulsarc-connector carries its own
 * copy through the internal core archive). Stateless: any thread.
 */
#ifndef PC_CONF_VALUE_H
#define PC_CONF_VALUE_H
#include <stddef.h>
#include <stdint.h>

#include "pulsarc.h"

typedef enum {
    PC_VALUE_STR,  /* any text */
    PC_VALUE_INT,  /* decimal, within [min, max] */
    PC_VALUE_BOOL, /* true / false / 1 / 0, any case */
    PC_VALUE_ENUM, /* one of choices "a|b|c"; case ignored, '-' and '_' alike */
    PC_VALUE_MAP,  /* "k1:v1,k2:v2", every entry with a key; empty is the empty map */
    PC_VALUE_LIST  /* any text, split by its reader */
} pc_value_kind_t;

typedef struct pc_value_rule {
    const char *key; /* named in every error */
    pc_value_kind_t kind;
    int64_t min, max;    /* INT */
    const char *choices; /* ENUM */
} pc_value_rule_t;

/*
 * Checks text against r. *num gets the INT value, BOOL 0/1 or ENUM index
 * (0 otherwise). PULSARC_ERR_BAD_CONFIG names r->key and the value (STR,
 * MAP and LIST values, the only ones that may be secret, are never shown).
 */
pulsarc_err_t pc_value_parse(const pc_value_rule_t *r, const char *text, int64_t *num,
                             char *errstr, size_t errlen);
/* The spelling of choice idx in choices ("a|b|c"): *len bytes at the result; NULL if none. */
const char *pc_value_choice(const char *choices, int64_t idx, size_t *len);
/*
 * "<digits> [unit]" in milliseconds (no unit: ms; ns, us, ms, s, min, h, d
 * and their long names, any case; blanks around are ignored); -1 when the
 * text is not one or the result does not fit.
 */
int64_t pc_value_duration_ms(const char *text);
#endif
