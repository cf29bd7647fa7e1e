/*
 * Design notes: what a connector configuration yields — the cross-key
 * checks, full topic names (short names take the default tenant and
 * namespace; the source's bookkeeping lives in its own namespace), the core
 * client configuration.
 *
 * to_client_conf() copies every key that the table maps onto the core in
 * two steps: all defaults first, then the values that were set, weakest
 * source first. Two connector keys may feed one core key (the v4.0
 * pulsar.consumer.subscriptionInitialPosition and pulsar.source.initialCursor;
 * authParams and authParamMap): a set value always beats a default, and a
 * stronger source beats a weaker one, which is the same rule users see for
 * a single key. Values are checked again by the core table, so a connector
 * range wider than the core's cannot slip through; the error then names the
 * connector key.
 */
#include <stdlib.h>
#include <string.h>

#include "connector/config_int.h"
#include "core/err.h"
#include "core/topic.h"
#include "pulsarc/connector.h"

/* ---- cross-key rules ----------------------------------------------------------- */

static int has_text(const pulsarc_connector_config_t *c, pc_cc_id_t id) {
    const char *v = pc_cc_str(c, id);
    return v && *v;
}

static pulsarc_err_t check_tls_pair(const pulsarc_connector_config_t *c, char *e, size_t el) {
    if (has_text(c, PC_CC_CLIENT_TLS_CERT_FILE) == has_text(c, PC_CC_CLIENT_TLS_KEY_FILE))
        return PULSARC_OK;
    return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "%s and %s must be set together",
                     pc_cc_props[PC_CC_CLIENT_TLS_CERT_FILE].name,
                     pc_cc_props[PC_CC_CLIENT_TLS_KEY_FILE].name);
}

pulsarc_err_t pulsarc_connector_config_validate(const pulsarc_connector_config_t *c, char *e,
                                                size_t el) {
    if (!c)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "no configuration");
    if (!has_text(c, PC_CC_CLIENT_SERVICE_URL))
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Config option %s is not provided for pulsar client.",
                         pc_cc_props[PC_CC_CLIENT_SERVICE_URL].name);
    if (pc_cc_is_set(c, PC_CC_CLIENT_AUTH_PARAMS) && pc_cc_is_set(c, PC_CC_CLIENT_AUTH_PARAM_MAP))
        return pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG,
                         "Conflict config options %s and %s were provided; set only one",
                         pc_cc_props[PC_CC_CLIENT_AUTH_PARAMS].name,
                         pc_cc_props[PC_CC_CLIENT_AUTH_PARAM_MAP].name);
    return check_tls_pair(c, e, el);
}

/* ---- topic names ------------------------------------------------------------------- */

static pulsarc_err_t copy_out(const char *s, char *buf, size_t len, char *e, size_t el) {
    size_t n = strlen(s);
    if (!buf || n >= len)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "buffer of %zu bytes too small for '%s'",
                         len, s);
    memcpy(buf, s, n + 1);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_connector_config_resolve_topic(const pulsarc_connector_config_t *c,
                                                     const char *topic, char *buf, size_t len,
                                                     char *e, size_t el) {
    if (!c || !topic)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "configuration and topic are required");
    pc_topic_t t;
    pulsarc_err_t err = pc_topic_parse(topic, pc_cc_str(c, PC_CC_CLIENT_DEFAULT_TENANT),
                                       pc_cc_str(c, PC_CC_CLIENT_DEFAULT_NAMESPACE), &t, e, el);
    return err ? err : copy_out(t.full, buf, len, e, el);
}

pulsarc_err_t pulsarc_connector_config_subscription_namespace(const pulsarc_connector_config_t *c,
                                                              char *buf, size_t len) {
    if (!c || !buf)
        return PULSARC_ERR_INVALID_ARG;
    const char *ns = pc_cc_str(c, PC_CC_SOURCE_SUBSCRIPTION_NAMESPACE);
    const char *tenant = pc_cc_str(c, PC_CC_CLIENT_DEFAULT_TENANT);
    int n;
    if (!ns || !*ns)
        n = snprintf(buf, len, "%s/%s", tenant, pc_cc_str(c, PC_CC_CLIENT_DEFAULT_NAMESPACE));
    else if (strchr(ns, '/'))
        n = snprintf(buf, len, "%s", ns);
    else
        n = snprintf(buf, len, "%s/%s", tenant, ns);
    return n < 0 || (size_t)n >= len ? PULSARC_ERR_INVALID_ARG : PULSARC_OK;
}

pulsarc_err_t pulsarc_connector_config_bookkeeping_topic(const pulsarc_connector_config_t *c,
                                                         const char *local, char *buf, size_t len,
                                                         char *e, size_t el) {
    char ns[2 * PC_TOPIC_PART_MAX], name[PC_TOPIC_MAX];
    if (!local || strchr(local, '/'))
        return pc_seterr(e, el, PULSARC_ERR_BAD_TOPIC, "'%s' is not a local topic name",
                         local ? local : "(null)");
    if (pulsarc_connector_config_subscription_namespace(c, ns, sizeof ns))
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "no subscription namespace");
    if ((size_t)snprintf(name, sizeof name, "%s/%s", ns, local) >= sizeof name)
        return pc_seterr(e, el, PULSARC_ERR_BAD_TOPIC, "topic name too long");
    return pulsarc_connector_config_resolve_topic(c, name, buf, len, e, el);
}

/* ---- the core client configuration ------------------------------------------------- */

/* Origin of id's effective value; -1 when it has none. */
static int value_origin(const pulsarc_connector_config_t *c, int id) {
    if (c->text[id])
        return c->origin[id];
    return pc_cc_props[id].defval ? PULSARC_CONNECTOR_ORIGIN_DEFAULT : -1;
}

const char *pc_cc_target_value(int id, const char *text, int64_t num, char *buf, size_t len) {
    if (!(pc_cc_props[id].flags & PC_F_NS_TO_MS))
        return text;
    snprintf(buf, len, "%lld", (long long)(num / 1000000));
    return buf;
}

static pulsarc_err_t copy_to_core(const pulsarc_connector_config_t *c, int id,
                                  pulsarc_conf_t *conf, char *e, size_t el) {
    const pc_prop_t *p = &pc_cc_props[id];
    char scaled[32], why[256];
    const char *v = pc_cc_target_value(id, pc_cc_str(c, (pc_cc_id_t)id), c->num[id], scaled,
                                       sizeof scaled);
    pulsarc_err_t err = pulsarc_conf_set(conf, p->target, v, why, sizeof why);
    if (err)
        return pc_seterr(e, el, err, "%s (core key %s): %s", p->name, p->target,
                         (p->flags & PC_F_SECRET) ? "value refused" : why);
    return PULSARC_OK;
}

static pulsarc_err_t fill_core(const pulsarc_connector_config_t *c, pulsarc_conf_t *conf, char *e,
                               size_t el) {
    for (int origin = PULSARC_CONNECTOR_ORIGIN_DEFAULT; origin <= PULSARC_CONNECTOR_ORIGIN_BUILDER;
         origin++) {
        for (int id = 0; id < PC_CC__COUNT; id++) {
            if (!pc_cc_props[id].target || value_origin(c, id) != origin)
                continue;
            pulsarc_err_t err = copy_to_core(c, id, conf, e, el);
            if (err)
                return err;
        }
    }
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_connector_config_to_client_conf(const pulsarc_connector_config_t *c,
                                                      pulsarc_conf_t **confp, char *e,
                                                      size_t el) {
    if (!confp)
        return pc_seterr(e, el, PULSARC_ERR_INVALID_ARG, "confp is required");
    *confp = NULL;
    pulsarc_err_t err = pulsarc_connector_config_validate(c, e, el);
    if (err)
        return err;
    pulsarc_conf_t *conf = pulsarc_conf_new();
    if (!conf)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    if ((err = fill_core(c, conf, e, el)) != PULSARC_OK) {
        pulsarc_conf_destroy(conf);
        return err;
    }
    *confp = conf;
    return PULSARC_OK;
}
