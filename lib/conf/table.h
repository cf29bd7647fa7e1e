/*
 * The one row format of every property table in the project (the client's
 * props.h, the connector's connector_props.h) and the code every table
 * shares: lookup by name, reading a value by its row, the rules a row's
 * flags impose, and the generated Markdown reference.
 *
 * A table is an X-macro list of rows:
 *
 *   X(id, "name", scope, type, "default", min, max, "choices", flags, "target", "doc")
 *
 *  - scope: CLIENT, PRODUCER, CONSUMER, BOTH (producer and consumer),
 *    ADMIN, SOURCE, SINK, TABLE (a SQL table as a whole) or FORMAT (a row
 *    format's option): which object reads the key.
 *  - type: STR, INT, BOOL, ENUM, MAP or LIST, as lib/conf/value.h reads it.
 *  - default NULL: unset (the key has no value until one is given).
 *  - min, max: the range of an INT; choices: ENUM's "a|b|c" (the number
 *    stored is the index; matching ignores case, '-' and '_' alike).
 *  - flags: PC_F_* below, 0 for an ordinary key.
 *  - target: the key of another table this one's value is copied to (the
 *    connector's keys feed the client's), NULL when none.
 *
 * Stateless, no allocation but the canonical text pc_prop_read returns:
 * any thread. Carried by both libraries through the internal core archive.
 */
#ifndef PC_CONF_TABLE_H
#define PC_CONF_TABLE_H
#include <stdint.h>
#include <stdio.h>

#include "conf/value.h"
#include "pulsarc.h"

typedef enum {
    PC_SCOPE_CLIENT,
    PC_SCOPE_PRODUCER,
    PC_SCOPE_CONSUMER,
    PC_SCOPE_BOTH,
    PC_SCOPE_ADMIN,
    PC_SCOPE_SOURCE,
    PC_SCOPE_SINK,
    PC_SCOPE_TABLE,
    PC_SCOPE_FORMAT
} pc_scope_t;

/* Flags: why a key is special. */
#define PC_F_SECRET 0x1   /* never shown in errors or dumps */
#define PC_F_NOOP 0x2     /* accepted so configurations load; pulsarc does not use it (yet) */
#define PC_F_DEFONLY 0x4  /* only the default is supported; another value is refused */
#define PC_F_LEGACY 0x8   /* a key of an older version (of the Flink connector), still accepted */
#define PC_F_ADDED 0x10   /* a pulsarc addition to a table that mirrors another project's keys */
#define PC_F_NS_TO_MS 0x20 /* nanoseconds here, milliseconds in the target key */

typedef struct pc_prop {
    const char *name;
    pc_scope_t scope;
    pc_value_kind_t type;
    const char *defval; /* NULL: unset */
    int64_t min, max;
    const char *choices;
    int flags;
    const char *target;
    const char *doc;
} pc_prop_t;

/* One initializer per row: const pc_prop_t rows[] = { TABLE(PC_PROP_ROW) }; */
#define PC_PROP_ROW(id, name, scope, type, def, min, max, choices, flags, target, doc) \
    {name, PC_SCOPE_##scope, PC_VALUE_##type, def, min, max, choices, flags, target, doc},

typedef struct pc_prop_table {
    const char *title;  /* heading of the generated reference */
    const char *source; /* the header the table lives in, named by the reference */
    const pc_prop_t *rows;
    int n;
} pc_prop_table_t;

/* Index of key in t, or -1. */
int pc_prop_find(const pc_prop_table_t *t, const char *key);
/*
 * Checks text against row p as it is: the value parser's rules, then the
 * rules of p's flags. *num: INT value, BOOL 0/1, ENUM index. Errors name
 * the key and the problem; a secret value is never shown.
 */
pulsarc_err_t pc_prop_check(const pc_prop_t *p, const char *text, int64_t *num, char *errstr,
                            size_t errlen);
/*
 * pc_prop_check on the canonical form of text: blanks trimmed from INT,
 * BOOL and ENUM values, an ENUM in its table spelling, a BOOL as
 * true/false. *canon (malloc'd) gets that form on success, NULL otherwise.
 */
pulsarc_err_t pc_prop_read(const pc_prop_t *p, const char *text, char **canon, int64_t *num,
                           char *errstr, size_t errlen);
/* The number of p's default (0 when it has none). */
int64_t pc_prop_default_num(const pc_prop_t *p);
/* What an error may show of a value of p. */
const char *pc_prop_shown(const pc_prop_t *p, const char *text);
/* Is choice idx of ENUM row p spelled want? */
int pc_prop_choice_is(const pc_prop_t *p, int64_t idx, const char *want);
/* The Markdown reference of every key of t. */
void pc_prop_write_doc(const pc_prop_table_t *t, FILE *out);
#endif
