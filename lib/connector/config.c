/*
 * Design notes: the connector configuration object.
 *
 * Every value is validated against the table in connector_props.h when it
 * arrives, whatever its source, by the code every property table shares
 * (lib/conf/table.c and value.c, the client's too), and stored as
 * canonical text (enum spelling of the table, true/false) plus a number,
 * with the source it came from. Precedence is a property of the stored value, not of call
 * order: a weaker source never replaces a stronger one. So an application
 * may load arguments before the environment, or a properties file named by
 * an argument after both, and still get the documented result.
 *
 * Order (weakest first): defaults, properties file, environment, -D pairs,
 * named arguments, builder calls. It is Pravega's (default < environment <
 * system property < argument < code) with the file at the bottom: a file
 * is the most shared and least specific source; the environment is per
 * deployment; -D and arguments are per invocation, the named arguments
 * being the narrower, documented interface; code is what the program
 * itself insists on.
 *
 * Single-value rules (type, range, enum, URL syntax, tenant/namespace
 * names, values pulsarc cannot honour) are checked on arrival so that the
 * error names the key and the source; rules spanning keys are checked by
 * pulsarc_connector_config_validate(). Secrets never enter error strings.
 */
#include <stdlib.h>
#include <string.h>

#include "connector/config_int.h"
#include "core/err.h"
#include "core/topic.h"
#include "core/url.h"
#include "pulsarc/connector.h"

const pc_prop_t pc_cc_props[PC_CC__COUNT] = {PC_CC_PROPS(PC_PROP_ROW)};
const pc_prop_table_t pc_cc_table = {"pulsarc connector configuration",
                                     "lib/connector/connector_props.h", pc_cc_props, PC_CC__COUNT};

/* ---- single-value rules beyond the type ------------------------------------ */

/* kind is "tenant" or "namespace"; checked as a part of a topic name. */
static pulsarc_err_t check_name(const pc_prop_t *p, const char *kind, const char *v, char *e,
                                size_t el) {
    char topic[PC_TOPIC_MAX], why[256];
    pc_topic_t t;
    if (!strcmp(kind, "tenant"))
        snprintf(topic, sizeof topic, "%s/x/x", v);
    else
        snprintf(topic, sizeof topic, "x/%s/x", v);
    if (*v && !strchr(v, '/') && pc_topic_parse(topic, NULL, NULL, &t, why, sizeof why) == 0)
        return PULSARC_OK;
    return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "%s: '%s' is not a valid %s name", p->name, v,
                     kind);
}

/* "ns" or "tenant/ns". */
static pulsarc_err_t check_namespace(const pc_prop_t *p, const char *v, char *e, size_t el) {
    const char *slash = strchr(v, '/');
    if (!slash)
        return check_name(p, "namespace", v, e, el);
    char tenant[PC_TOPIC_PART_MAX];
    snprintf(tenant, sizeof tenant, "%.*s", (int)(slash - v), v);
    pulsarc_err_t err = check_name(p, "tenant", tenant, e, el);
    return err ? err : check_name(p, "namespace", slash + 1, e, el);
}

/* Any service URL (the client looks topics up by the binary protocol or by HTTP); admin: HTTP. */
static pulsarc_err_t check_url(const pc_prop_t *p, const char *v, int need_http, char *e,
                               size_t el) {
    pc_service_url_t u;
    char why[256];
    if (pc_service_url_parse(v, &u, why, sizeof why))
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "%s: %s", p->name, why);
    if (need_http && !u.http)
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "%s: '%s' needs a http:// or https:// scheme",
                         p->name, v);
    return PULSARC_OK;
}

static pulsarc_err_t check_value(int id, const char *text, char *e, size_t el) {
    const pc_prop_t *p = &pc_cc_props[id];
    switch (id) {
    case PC_CC_CLIENT_SERVICE_URL:
        return check_url(p, text, 0, e, el);
    case PC_CC_ADMIN_URL:
        return check_url(p, text, 1, e, el);
    case PC_CC_CLIENT_DEFAULT_TENANT:
        return check_name(p, "tenant", text, e, el);
    case PC_CC_CLIENT_DEFAULT_NAMESPACE:
    case PC_CC_SOURCE_SUBSCRIPTION_NAMESPACE:
        return check_namespace(p, text, e, el);
    default:
        return PULSARC_OK;
    }
}

/* ---- storing ---------------------------------------------------------------- */

static pulsarc_err_t put(pulsarc_connector_config_t *c, int id, int origin, char *text,
                         int64_t num, char *e, size_t el) {
    const pc_prop_t *p = &pc_cc_props[id];
    if (c->text[id] && origin < c->origin[id]) { /* a stronger source has it */
        free(text);
        return PULSARC_OK;
    }
    if (c->text[id] && origin == PULSARC_CONNECTOR_ORIGIN_BUILDER && c->origin[id] == origin &&
        strcmp(c->text[id], text) != 0) {
        pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "This option %s has been set to value %s.",
                  p->name, pc_prop_shown(p, c->text[id]));
        free(text);
        return PULSARC_ERR_BAD_CONFIG;
    }
    free(c->text[id]);
    c->text[id] = text;
    c->num[id] = num;
    c->origin[id] = (signed char)origin;
    return PULSARC_OK;
}

/* The table's reading and the single-value rules: *text is malloc'd on success. */
static pulsarc_err_t read_value(int id, const char *value, char **text, int64_t *num, char *e,
                                size_t el) {
    pulsarc_err_t err = pc_prop_read(&pc_cc_props[id], value, text, num, e, el);
    if (!err && (err = check_value(id, *text, e, el)) != PULSARC_OK) {
        free(*text);
        *text = NULL;
    }
    return err;
}

static pulsarc_err_t store_one(pulsarc_connector_config_t *c, int id, int origin,
                               const char *value, char *e, size_t el) {
    char *text;
    int64_t num;
    pulsarc_err_t err = read_value(id, value, &text, &num, e, el);
    return err ? err : put(c, id, origin, text, num, e, el);
}

pulsarc_err_t pc_cc_parse(int id, const char *value, char **text, int64_t *num, char *e,
                          size_t el) {
    char *t = NULL;
    if (id < 0 || id >= PC_CC__COUNT || !value)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "key and value are required");
    pulsarc_err_t err = read_value(id, value, &t, num, e, el);
    if (text)
        *text = t;
    else
        free(t);
    return err;
}

/* "tenant/ns" as the default namespace sets the default tenant as well. */
static pulsarc_err_t store_namespace(pulsarc_connector_config_t *c, int origin, const char *v,
                                     char *e, size_t el) {
    const char *slash = strchr(v, '/');
    pulsarc_err_t err = check_namespace(&pc_cc_props[PC_CC_CLIENT_DEFAULT_NAMESPACE], v, e, el);
    if (err || !slash)
        return err ? err : store_one(c, PC_CC_CLIENT_DEFAULT_NAMESPACE, origin, v, e, el);
    char tenant[PC_TOPIC_PART_MAX];
    snprintf(tenant, sizeof tenant, "%.*s", (int)(slash - v), v);
    err = store_one(c, PC_CC_CLIENT_DEFAULT_TENANT, origin, tenant, e, el);
    return err ? err : store_one(c, PC_CC_CLIENT_DEFAULT_NAMESPACE, origin, slash + 1, e, el);
}

pulsarc_err_t pc_cc_store(pulsarc_connector_config_t *c, int id, int origin, const char *value,
                          char *e, size_t el) {
    if (!c || !value || id < 0 || id >= PC_CC__COUNT || origin < PULSARC_CONNECTOR_ORIGIN_DEFAULT ||
        origin > PULSARC_CONNECTOR_ORIGIN_BUILDER)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "configuration, key and value are required");
    if (id == PC_CC_CLIENT_DEFAULT_NAMESPACE)
        return store_namespace(c, origin, value, e, el);
    return store_one(c, id, origin, value, e, el);
}

const char *pc_cc_str(const pulsarc_connector_config_t *c, pc_cc_id_t id) {
    return c->text[id] ? c->text[id] : pc_cc_props[id].defval;
}

int64_t pc_cc_int(const pulsarc_connector_config_t *c, pc_cc_id_t id) {
    return c->num[id];
}

int pc_cc_is_set(const pulsarc_connector_config_t *c, pc_cc_id_t id) {
    return c->text[id] != NULL;
}

/* ---- object ------------------------------------------------------------------ */

static void load_defaults(pulsarc_connector_config_t *c) {
    for (int i = 0; i < PC_CC__COUNT; i++)
        c->num[i] = pc_prop_default_num(&pc_cc_props[i]);
}

pulsarc_connector_config_t *pulsarc_connector_config_new(void) {
    pulsarc_connector_config_t *c = calloc(1, sizeof *c);
    if (c)
        load_defaults(c);
    return c;
}

static void free_contents(pulsarc_connector_config_t *c) {
    for (int i = 0; i < PC_CC__COUNT; i++)
        free(c->text[i]);
    for (size_t i = 0; i < c->nrouters; i++)
        free(c->routers[i].name);
    free(c->routers);
}

void pulsarc_connector_config_destroy(pulsarc_connector_config_t *c) {
    if (!c)
        return;
    free_contents(c);
    free(c);
}

static int copy_routers(pulsarc_connector_config_t *d, const pulsarc_connector_config_t *s) {
    if (!s->nrouters)
        return 0;
    d->routers = calloc(s->nrouters, sizeof *d->routers);
    if (!d->routers)
        return -1;
    for (; d->nrouters < s->nrouters; d->nrouters++) {
        d->routers[d->nrouters] = s->routers[d->nrouters];
        if (!(d->routers[d->nrouters].name = strdup(s->routers[d->nrouters].name)))
            return -1;
    }
    return 0;
}

pulsarc_connector_config_t *pulsarc_connector_config_dup(const pulsarc_connector_config_t *s) {
    pulsarc_connector_config_t *d = pulsarc_connector_config_new();
    if (!d || !s)
        return d;
    memcpy(d->num, s->num, sizeof d->num);
    memcpy(d->origin, s->origin, sizeof d->origin);
    int failed = copy_routers(d, s);
    for (int i = 0; i < PC_CC__COUNT && !failed; i++)
        failed = s->text[i] && !(d->text[i] = strdup(s->text[i]));
    if (failed) {
        pulsarc_connector_config_destroy(d);
        return NULL;
    }
    return d;
}

pulsarc_err_t pc_cc_check_place(const char *what, int64_t index, int64_t count, int64_t max,
                                char *errstr, size_t errlen) {
    if (count < 1 || count > max)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "%s count %lld is out of range (1 to %lld)", what, (long long)count,
                         (long long)max);
    if (index < 0 || index >= count)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "%s index %lld is out of range for %lld %ss (0 to %lld)", what,
                         (long long)index, (long long)count, what, (long long)count - 1);
    return PULSARC_OK;
}

pulsarc_err_t pc_cc_atomically(pulsarc_connector_config_t *c, pc_cc_apply_fn apply, void *opaque,
                               char *e, size_t el) {
    pulsarc_connector_config_t *work = pulsarc_connector_config_dup(c);
    if (!work)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = apply(work, opaque, e, el);
    if (!err) { /* swap the contents: c takes work's, work frees c's old ones */
        pulsarc_connector_config_t old = *c;
        *c = *work;
        *work = old;
    }
    pulsarc_connector_config_destroy(work);
    return err;
}

/* ---- public setters and getters --------------------------------------------- */

pulsarc_err_t pulsarc_connector_config_set_from(pulsarc_connector_config_t *c,
                                                pulsarc_connector_origin_t origin,
                                                const char *key, const char *value, char *e,
                                                size_t el) {
    if (!c || !key || !value)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "configuration, key and value are required");
    int id = pc_prop_find(&pc_cc_table, key);
    if (id < 0)
        return pc_seterr(e, el, PULSARC_ERR_UNKNOWN_CONFIG, "unknown configuration key '%s'", key);
    return pc_cc_store(c, id, (int)origin, value, e, el);
}

pulsarc_err_t pulsarc_connector_config_set(pulsarc_connector_config_t *c, const char *key,
                                           const char *value, char *e, size_t el) {
    return pulsarc_connector_config_set_from(c, PULSARC_CONNECTOR_ORIGIN_BUILDER, key, value, e, el);
}

const char *pulsarc_connector_config_get(const pulsarc_connector_config_t *c, const char *key) {
    int id = pc_prop_find(&pc_cc_table, key);
    return c && id >= 0 ? pc_cc_str(c, (pc_cc_id_t)id) : NULL;
}

int pulsarc_connector_config_origin(const pulsarc_connector_config_t *c, const char *key) {
    int id = pc_prop_find(&pc_cc_table, key);
    if (!c || id < 0)
        return -1;
    return c->text[id] ? c->origin[id] : PULSARC_CONNECTOR_ORIGIN_DEFAULT;
}

const char *pulsarc_connector_origin_name(pulsarc_connector_origin_t o) {
    static const char *const names[] = {"default", "file", "env", "-D", "args", "builder"};
    return (unsigned)o <= PULSARC_CONNECTOR_ORIGIN_BUILDER ? names[o] : "?";
}

pulsarc_err_t pulsarc_connector_config_set_service_url(pulsarc_connector_config_t *c,
                                                       const char *url, char *e, size_t el) {
    return pulsarc_connector_config_set(c, "pulsar.client.serviceUrl", url, e, el);
}

pulsarc_err_t pulsarc_connector_config_set_admin_url(pulsarc_connector_config_t *c,
                                                     const char *url, char *e, size_t el) {
    return pulsarc_connector_config_set(c, "pulsar.admin.adminUrl", url, e, el);
}

pulsarc_err_t pulsarc_connector_config_set_namespace(pulsarc_connector_config_t *c,
                                                     const char *ns, char *e, size_t el) {
    return pulsarc_connector_config_set(c, "pulsar.client.defaultNamespace", ns, e, el);
}

pulsarc_err_t pulsarc_connector_config_set_tenant(pulsarc_connector_config_t *c,
                                                  const char *tenant, char *e, size_t el) {
    return pulsarc_connector_config_set(c, "pulsar.client.defaultTenant", tenant, e, el);
}

pulsarc_err_t pulsarc_connector_config_set_subscription_namespace(pulsarc_connector_config_t *c,
                                                                  const char *ns, char *e,
                                                                  size_t el) {
    return pulsarc_connector_config_set(c, "pulsar.source.subscriptionNamespace", ns, e, el);
}

pulsarc_err_t pulsarc_connector_config_set_auth(pulsarc_connector_config_t *c, const char *plugin,
                                                const char *params, char *e, size_t el) {
    pulsarc_err_t err =
        pulsarc_connector_config_set(c, "pulsar.client.authPluginClassName", plugin, e, el);
    if (err || !params)
        return err;
    return pulsarc_connector_config_set(c, "pulsar.client.authParams", params, e, el);
}

pulsarc_err_t pulsarc_connector_config_set_tls_trust_certs(pulsarc_connector_config_t *c,
                                                           const char *path, char *e, size_t el) {
    return pulsarc_connector_config_set(c, "pulsar.client.tlsTrustCertsFilePath", path, e, el);
}

pulsarc_err_t pulsarc_connector_config_set_hostname_verification(pulsarc_connector_config_t *c,
                                                                 int enable, char *e, size_t el) {
    return pulsarc_connector_config_set(c, "pulsar.client.tlsHostnameVerificationEnable",
                                        enable ? "true" : "false", e, el);
}

/* ---- routers ------------------------------------------------------------------ */

pulsarc_err_t pulsarc_connector_config_add_router(pulsarc_connector_config_t *c, const char *name,
                                                  pulsarc_connector_router_cb cb, void *opaque) {
    if (!c || !name || !*name || !cb)
        return PULSARC_ERR_INVALID_ARG;
    for (size_t i = 0; i < c->nrouters; i++)
        if (!strcmp(c->routers[i].name, name))
            return PULSARC_ERR_STATE; /* one router per name */
    cc_router_t *grown = realloc(c->routers, (c->nrouters + 1) * sizeof *grown);
    if (!grown)
        return PULSARC_ERR_NOMEM;
    c->routers = grown;
    cc_router_t r = {strdup(name), cb, opaque};
    if (!r.name)
        return PULSARC_ERR_NOMEM;
    c->routers[c->nrouters++] = r;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_connector_config_router(const pulsarc_connector_config_t *c,
                                              const char *name, pulsarc_connector_router_cb *cb,
                                              void **opaque) {
    for (size_t i = 0; c && name && i < c->nrouters; i++) {
        if (strcmp(c->routers[i].name, name))
            continue;
        if (cb)
            *cb = c->routers[i].cb;
        if (opaque)
            *opaque = c->routers[i].opaque;
        return PULSARC_OK;
    }
    return PULSARC_ERR_NOT_FOUND;
}
