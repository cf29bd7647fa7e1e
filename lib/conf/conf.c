/*
 * Design notes: a configuration is a bag of text values indexed by the
 * property table in props.h; each value is validated and converted once,
 * in pulsarc_conf_set() (by the code every property table shares,
 * table.c and value.c), so readers get typed values with no parsing. The
 * text is kept as given: pulsarc_conf_get() returns what was set.
 * A conf is not shared: the caller owns it, objects copy what they need
 * at creation. No locks; not to be mutated while another thread reads it.
 */
#include "conf/props.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"

static const pc_prop_t pc_props[PC_PROP__COUNT] = {PC_PROPS(PC_PROP_ROW)};
const pc_prop_table_t pc_conf_table = {"pulsarc configuration", "lib/conf/props.h", pc_props,
                                       PC_PROP__COUNT};

struct pulsarc_conf_s {
    char *text[PC_PROP__COUNT]; /* NULL: default */
    int64_t num[PC_PROP__COUNT];
    struct {
        pc_any_fn fn;
        void *opaque;
    } cb[PC_CB__COUNT];
    /* Interceptors in the order added; copied whole by pulsarc_conf_dup. */
    pulsarc_producer_interceptor_t *pi;
    size_t npi;
    pulsarc_consumer_interceptor_t *ci;
    size_t nci;
};

#define PC_MAX_INTERCEPTORS 64

/* Appends one element of size sz to the array *arr of *n. */
static pulsarc_err_t append(void **arr, size_t *n, const void *elem, size_t sz) {
    if (*n >= PC_MAX_INTERCEPTORS)
        return PULSARC_ERR_BAD_CONFIG;
    char *grown = realloc(*arr, (*n + 1) * sz);
    if (!grown)
        return PULSARC_ERR_NOMEM;
    memcpy(grown + *n * sz, elem, sz);
    *arr = grown;
    (*n)++;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_conf_add_producer_interceptor(pulsarc_conf_t *c,
                                                    const pulsarc_producer_interceptor_t *icpt) {
    if (!c || !icpt)
        return PULSARC_ERR_INVALID_ARG;
    return append((void **)&c->pi, &c->npi, icpt, sizeof *icpt);
}

pulsarc_err_t pulsarc_conf_add_consumer_interceptor(pulsarc_conf_t *c,
                                                    const pulsarc_consumer_interceptor_t *icpt) {
    if (!c || !icpt)
        return PULSARC_ERR_INVALID_ARG;
    return append((void **)&c->ci, &c->nci, icpt, sizeof *icpt);
}

size_t pc_conf_producer_interceptors(const pulsarc_conf_t *c,
                                     const pulsarc_producer_interceptor_t **out) {
    *out = c ? c->pi : NULL;
    return c ? c->npi : 0;
}

size_t pc_conf_consumer_interceptors(const pulsarc_conf_t *c,
                                     const pulsarc_consumer_interceptor_t **out) {
    *out = c ? c->ci : NULL;
    return c ? c->nci : 0;
}

static pulsarc_err_t dup_interceptors(pulsarc_conf_t *c, const pulsarc_conf_t *src) {
    for (size_t i = 0; i < src->npi; i++)
        if (append((void **)&c->pi, &c->npi, &src->pi[i], sizeof src->pi[i]))
            return PULSARC_ERR_NOMEM;
    for (size_t i = 0; i < src->nci; i++)
        if (append((void **)&c->ci, &c->nci, &src->ci[i], sizeof src->ci[i]))
            return PULSARC_ERR_NOMEM;
    return PULSARC_OK;
}

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

static void load_defaults(pulsarc_conf_t *c) {
    for (int i = 0; i < PC_PROP__COUNT; i++)
        c->num[i] = pc_prop_default_num(&pc_props[i]);
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
    free(c->pi);
    free(c->ci);
    free(c);
}

pulsarc_conf_t *pulsarc_conf_dup(const pulsarc_conf_t *src) {
    pulsarc_conf_t *c = pulsarc_conf_new();
    if (!c || !src)
        return c;
    memcpy(c->cb, src->cb, sizeof c->cb);
    if (dup_interceptors(c, src)) {
        pulsarc_conf_destroy(c);
        return NULL;
    }
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
    int i = pc_prop_find(&pc_conf_table, key);
    if (i < 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_UNKNOWN_CONFIG,
                         "unknown configuration key '%s'", key);
    int64_t n;
    pulsarc_err_t err = pc_prop_check(&pc_props[i], value, &n, errstr, errlen);
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
    int i = pc_prop_find(&pc_conf_table, key);
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
    return c ? c->num[id] : pc_prop_default_num(&pc_props[id]);
}

const char *pc_conf_str(const pulsarc_conf_t *c, pc_prop_id_t id) {
    return c && c->text[id] ? c->text[id] : pc_props[id].defval;
}
