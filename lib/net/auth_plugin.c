/*
 * Design notes: picks the authentication provider from the Java-style
 * pair authPlugin/authParams (so client.conf files work unchanged), or
 * from a token supplier set with pulsarc_conf_set_token_supplier(). Runs
 * on the application thread inside pulsarc_client_new; the provider it
 * returns belongs to the client. The top of the authentication files:
 * it calls each provider's constructor; the providers call only down, to
 * the authParams reader (auth_params.c) and what all providers share
 * (auth_provider.c: freeing one, wiping secrets).
 */
#include "net/auth_plugin.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/props.h"
#include "core/err.h"

typedef enum {
    PLUGIN_NONE,
    PLUGIN_TOKEN,
    PLUGIN_TLS,
    PLUGIN_BASIC,
    PLUGIN_OAUTH2,
    PLUGIN_UNKNOWN
} plugin_t;

/* Java class names and the short names the other clients use. */
static plugin_t plugin_of(const char *name) {
    static const struct {
        const char *name;
        plugin_t kind;
    } names[] = {
        {"", PLUGIN_NONE},
        {"org.apache.pulsar.client.impl.auth.AuthenticationDisabled", PLUGIN_NONE},
        {"none", PLUGIN_NONE},
        {"org.apache.pulsar.client.impl.auth.AuthenticationToken", PLUGIN_TOKEN},
        {"token", PLUGIN_TOKEN},
        {"org.apache.pulsar.client.impl.auth.AuthenticationTls", PLUGIN_TLS},
        {"tls", PLUGIN_TLS},
        {"org.apache.pulsar.client.impl.auth.AuthenticationBasic", PLUGIN_BASIC},
        {"basic", PLUGIN_BASIC},
        {"org.apache.pulsar.client.impl.auth.oauth2.AuthenticationOAuth2", PLUGIN_OAUTH2},
        {"oauth2", PLUGIN_OAUTH2},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(name, names[i].name) == 0)
            return names[i].kind;
    return PLUGIN_UNKNOWN;
}

pulsarc_err_t pc_auth_new(const pulsarc_conf_t *conf, pc_auth_t **out, char *err,
                          size_t errlen) {
    const char *plugin = pc_conf_str(conf, PC_PROP_AUTH_PLUGIN);
    const char *params = pc_conf_str(conf, PC_PROP_AUTH_PARAMS);
    pc_any_fn fn = NULL;
    void *opaque = NULL;
    pc_conf_get_cb(conf, PC_CB_TOKEN_SUPPLIER, &fn, &opaque);
    pulsarc_token_supplier_cb cb = (pulsarc_token_supplier_cb)fn;
    *out = NULL;
    plugin_t kind = plugin_of(plugin);
    if (cb && (kind == PLUGIN_NONE || kind == PLUGIN_TOKEN))
        return pc_auth_token_new("", cb, opaque, out, err, errlen);
    switch (kind) {
    case PLUGIN_NONE:
        return PULSARC_OK;
    case PLUGIN_TOKEN:
        return pc_auth_token_new(params, NULL, NULL, out, err, errlen);
    case PLUGIN_TLS:
        return pc_auth_tls_new(params, out, err, errlen);
    case PLUGIN_BASIC:
        return pc_auth_basic_new(params, out, err, errlen);
    case PLUGIN_OAUTH2:
        return pc_auth_oauth2_new(params, pc_conf_str(conf, PC_PROP_TLS_TRUST_CERTS_FILE_PATH),
                                  out, err, errlen);
    default:
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authPlugin '%s' is not supported (use AuthenticationToken, "
                         "AuthenticationTls, AuthenticationBasic or AuthenticationOAuth2)", plugin);
    }
}

pulsarc_err_t pulsarc_conf_set_token_supplier(pulsarc_conf_t *conf, pulsarc_token_supplier_cb cb,
                                              void *opaque) {
    if (!conf)
        return PULSARC_ERR_INVALID_ARG;
    pc_conf_set_cb(conf, PC_CB_TOKEN_SUPPLIER, (pc_any_fn)cb, opaque);
    return PULSARC_OK;
}

#ifndef PULSARC_WITH_CURL
pulsarc_err_t pc_auth_oauth2_new(const char *params, const char *trust_certs, pc_auth_t **out,
                                 char *err, size_t errlen) {
    (void)params;
    (void)trust_certs;
    *out = NULL;
    return pc_seterr(err, errlen, PULSARC_ERR_UNSUPPORTED,
                     "AuthenticationOAuth2 needs libcurl, and pulsarc was built with WITH_CURL=0");
}
#endif

#ifndef PULSARC_WITH_TLS
pulsarc_err_t pc_auth_tls_new(const char *params, pc_auth_t **out, char *err, size_t errlen) {
    (void)params;
    *out = NULL;
    return pc_seterr(err, errlen, PULSARC_ERR_UNSUPPORTED,
                     "AuthenticationTls needs TLS, and pulsarc was built with WITH_TLS=0");
}
#endif
