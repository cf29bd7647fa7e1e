/*
 * Design notes: TLS client-certificate authentication (auth_method_name
 * "tls"). The identity is the certificate presented in the TLS handshake,
 * so the auth data is empty; this provider only carries the certificate and
 * key paths to the TLS context (transport_opts.c loads them). authParams as
 * in Java: "tlsCertFile:/a.pem,tlsKeyFile:/b.pem" or the JSON object
 * {"tlsCertFile":"/a.pem","tlsKeyFile":"/b.pem"}. Built on the application
 * thread; credentials() runs on the loop thread.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "net/auth_plugin.h"

static pulsarc_err_t tls_credentials(pc_auth_t *a, uint8_t **data, size_t *len, char *err,
                                     size_t errlen) {
    (void)a;
    (void)err;
    (void)errlen;
    *data = NULL; /* the certificate in the handshake is the credential */
    *len = 0;
    return PULSARC_OK;
}

static void tls_auth_free(pc_auth_t *a) { free(a); }

/*
 * The value of key in params, in either form: "key:value" items separated
 * by ',' or a flat JSON object ("key":"value"). Malloc'd, or NULL.
 */
static char *param(const char *params, const char *key) {
    size_t klen = strlen(key);
    for (const char *p = params; (p = strstr(p, key)); p += klen) {
        const char *v = p + klen;
        int json = p > params && p[-1] == '"' && *v == '"';
        if (p > params && !json && p[-1] != ',' && p[-1] != ' ')
            continue;
        v += json;
        while (*v == ' ')
            v++;
        if (*v++ != ':')
            continue;
        while (*v == ' ' || (json && *v == '"'))
            v++;
        size_t n = strcspn(v, json ? "\"" : ",");
        while (n > 0 && v[n - 1] == ' ')
            n--;
        return strndup(v, n);
    }
    return NULL;
}

pulsarc_err_t pc_auth_tls_new(const char *params, pc_auth_t **out, char *err, size_t errlen) {
    *out = NULL;
    pc_auth_t *a = calloc(1, sizeof *a);
    if (!a)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    a->method = "tls";
    a->credentials = tls_credentials;
    a->free = tls_auth_free;
    a->tls_cert = param(params, "tlsCertFile");
    a->tls_key = param(params, "tlsKeyFile");
    int has_cert = a->tls_cert && *a->tls_cert, has_key = a->tls_key && *a->tls_key;
    if (has_cert != has_key) {
        pc_auth_free(a);
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: AuthenticationTls needs both tlsCertFile and tlsKeyFile");
    }
    *out = a;
    return PULSARC_OK;
}
