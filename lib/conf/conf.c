/*
 * Design notes: a configuration is a bag of text values indexed by the
 * property table in props.h; each value is validated and converted once,
 * in pulsarc_conf_set() (by value.c, the parser the connector's table
 * shares), so readers get typed values with no parsing.
 * A conf is not shared: the caller owns it, objects copy what they need
 * at creation. No locks; not to be mutated while another thread reads it.
 */
#include "conf/props.h"

#include <stdlib.h>
#include <string.h>

#include "conf/value.h"
#include "core/err.h"

const pc_prop_t pc_props[PC_PROP__COUNT] = {
#define PC_PROP_ROW(id, name, scope, type, def, min, max, choices, doc) \
    {name, PC_SCOPE_##scope, PC_TYPE_##type, def, min, max, choices, doc},
    PC_PROPS(PC_PROP_ROW)
#undef PC_PROP_ROW
};

struct pulsarc_conf_s {
    char *text[PC_PROP__COUNT]; /* NULL: default */
    int64_t num[PC_PROP__COUNT];
    struct {
        pc_any_fn fn;
        void *opaque;
    } cb[PC_CB__COUNT];
};

void pc_conf_set_cb(pulsarc_conf_t *c, pc_cb_id_t id, pc_any_fn fn, void *opaque) {
    c->cb[id].fn = fn;
    c->cb[id].opaque = opaque;
}

void pc_conf_get_cb(const pulsarc_conf_t *c, pc_cb_id_t id, pc_any_fn *fn, void **opaque) {
    *fn = c ? c->cb[id].fn : NULL;
    *opaque = c ? c->cb[id].opaque : NULL;
}

pulsarc_err_t pulsarc_conf_set_message_listener(pulsarc_conf_t *c, pulsarc_message_listener_cb cb,
                                                void *opaque) {
    if (!c)
        return PULSARC_ERR_INVALID_ARG;
    pc_conf_set_cb(c, PC_CB_MESSAGE_LISTENER, (pc_any_fn)cb, opaque);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_conf_set_consumer_event_listener(pulsarc_conf_t *c,
                                                       pulsarc_consumer_event_cb cb, void *opaque) {
    if (!c)
        return PULSARC_ERR_INVALID_ARG;
    pc_conf_set_cb(c, PC_CB_CONSUMER_EVENT, (pc_any_fn)cb, opaque);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_conf_set_crypto_key_reader(pulsarc_conf_t *c, pulsarc_crypto_key_reader_cb cb,
                                                void *opaque) {
    if (!c)
        return PULSARC_ERR_INVALID_ARG;
    pc_conf_set_cb(c, PC_CB_CRYPTO_KEY_READER, (pc_any_fn)cb, opaque);
    return PULSARC_OK;
}

static int find_prop(const char *key) {
    for (int i = 0; i < PC_PROP__COUNT; i++)
        if (strcmp(pc_props[i].name, key) == 0)
            return i;
    return -1;
}

/* Values are read by the project's one value parser (value.c). */
static pulsarc_err_t parse_value(const pc_prop_t *p, const char *v, int64_t *out, char *e,
                                 size_t el) {
    static const pc_value_kind_t kinds[] = {
        [PC_TYPE_STR] = PC_VALUE_STR,
        [PC_TYPE_INT] = PC_VALUE_INT,
        [PC_TYPE_BOOL] = PC_VALUE_BOOL,
        [PC_TYPE_ENUM] = PC_VALUE_ENUM,
    };
    pc_value_rule_t r = {p->name, kinds[p->type], p->min, p->max, p->choices};
    return pc_value_parse(&r, v, out, e, el);
}

static void load_defaults(pulsarc_conf_t *c) {
    for (int i = 0; i < PC_PROP__COUNT; i++)
        parse_value(&pc_props[i], pc_props[i].defval, &c->num[i], NULL, 0);
}

pulsarc_conf_t *pulsarc_conf_new(void) {
    pulsarc_conf_t *c = calloc(1, sizeof *c);
    if (c)
        load_defaults(c);
    return c;
}

void pulsarc_conf_destroy(pulsarc_conf_t *c) {
    if (!c)
        return;
    for (int i = 0; i < PC_PROP__COUNT; i++)
        free(c->text[i]);
    free(c);
}

pulsarc_conf_t *pulsarc_conf_dup(const pulsarc_conf_t *src) {
    pulsarc_conf_t *c = pulsarc_conf_new();
    if (!c || !src)
        return c;
    memcpy(c->cb, src->cb, sizeof c->cb);
    for (int i = 0; i < PC_PROP__COUNT; i++) {
        c->num[i] = src->num[i];
        if (src->text[i] && !(c->text[i] = strdup(src->text[i]))) {
            pulsarc_conf_destroy(c);
            return NULL;
        }
    }
    return c;
}

pulsarc_err_t pulsarc_conf_set(pulsarc_conf_t *c, const char *key, const char *value,
                               char *errstr, size_t errlen) {
    if (!c || !key || !value)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "conf, key and value are required");
    int i = find_prop(key);
    if (i < 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_UNKNOWN_CONFIG,
                         "unknown configuration key '%s'", key);
    int64_t n;
    pulsarc_err_t err = parse_value(&pc_props[i], value, &n, errstr, errlen);
    if (err)
        return err;
    char *copy = strdup(value);
    if (!copy)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    free(c->text[i]);
    c->text[i] = copy;
    c->num[i] = n;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_conf_get(const pulsarc_conf_t *c, const char *key, char *buf, size_t *len) {
    if (!c || !key || !len)
        return PULSARC_ERR_INVALID_ARG;
    int i = find_prop(key);
    if (i < 0)
        return PULSARC_ERR_UNKNOWN_CONFIG;
    const char *v = c->text[i] ? c->text[i] : pc_props[i].defval;
    size_t need = strlen(v) + 1;
    size_t have = *len;
    *len = need;
    if (!buf || have < need)
        return PULSARC_ERR_INVALID_ARG;
    memcpy(buf, v, need);
    return PULSARC_OK;
}

int64_t pc_conf_int(const pulsarc_conf_t *c, pc_prop_id_t id) {
    if (!c) {
        int64_t n = 0;
        parse_value(&pc_props[id], pc_props[id].defval, &n, NULL, 0);
        return n;
    }
    return c->num[id];
}

const char *pc_conf_str(const pulsarc_conf_t *c, pc_prop_id_t id) {
    return c && c->text[id] ? c->text[id] : pc_props[id].defval;
}

static const char *scope_name(pc_scope_t s) {
    return s == PC_SCOPE_CLIENT     ? "client"
           : s == PC_SCOPE_PRODUCER ? "producer"
           : s == PC_SCOPE_CONSUMER ? "consumer"
                                    : "producer, consumer";
}

static const char *type_name(pc_ptype_t t) {
    return t == PC_TYPE_INT ? "integer" : t == PC_TYPE_BOOL ? "boolean" : t == PC_TYPE_ENUM ? "enum" : "string";
}

void pc_conf_write_doc(FILE *out) {
    fprintf(out, "# pulsarc configuration\n\nGenerated from `lib/conf/props.h` by `make docs`; "
                 "do not edit.\n\n| key | scope | type | default | range / values | meaning |\n"
                 "|---|---|---|---|---|---|\n");
    for (int i = 0; i < PC_PROP__COUNT; i++) {
        const pc_prop_t *p = &pc_props[i];
        char range[64] = "";
        if (p->type == PC_TYPE_INT)
            snprintf(range, sizeof range, "%lld .. %lld", (long long)p->min, (long long)p->max);
        char choices[256] = "";
        for (size_t k = 0, o = 0; p->type == PC_TYPE_ENUM && p->choices[k] && o + 3 < sizeof choices; k++) {
            if (p->choices[k] == '|') /* a bare | would split the Markdown cell */
                choices[o++] = ',', choices[o++] = ' ';
            else
                choices[o++] = p->choices[k];
            choices[o] = '\0';
        }
        fprintf(out, "| `%s` | %s | %s | `%s` | %s | %s |\n", p->name, scope_name(p->scope),
                type_name(p->type), p->defval, p->type == PC_TYPE_ENUM ? choices : range, p->doc);
    }
}
