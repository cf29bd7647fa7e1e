/*
 * Design notes: turns a client's configuration into the two security
 * objects its connections share: the authentication provider and, for a
 * pulsar+ssl:// service URL, the TLS context. Both are built once, on the
 * application thread inside pulsarc_client_new, so every configuration
 * mistake (unreadable CA file, key not matching its certificate, missing
 * token file) fails client creation with a clear message instead of
 * surfacing later as a connection error. The client owns both and frees
 * them after its pool.
 */
#include <string.h>

#include "conf/props.h"
#include "core/err.h"
#include "net/auth_plugin.h"
#include "net/conn.h"
#include "net/transport.h"

static const char *nonempty(const char *s) { return s && *s ? s : NULL; }

static pulsarc_err_t build_tls(pc_conn_opts_t *o, const pulsarc_conf_t *conf, char *err,
                               size_t errlen) {
    pc_tls_opts_t t;
    memset(&t, 0, sizeof t);
    t.trust_certs = nonempty(pc_conf_str(conf, PC_PROP_TLS_TRUST_CERTS_FILE_PATH));
    t.verify_hostname = (int)pc_conf_int(conf, PC_PROP_TLS_HOSTNAME_VERIFICATION);
    t.allow_insecure = (int)pc_conf_int(conf, PC_PROP_TLS_ALLOW_INSECURE);
    /* AuthenticationTls's own paths win over the plain TLS settings, as in Java. */
    const pc_auth_t *a = o->auth;
    t.cert_file = a && a->tls_cert ? a->tls_cert : nonempty(pc_conf_str(conf, PC_PROP_TLS_CERT_FILE));
    t.key_file = a && a->tls_key ? a->tls_key : nonempty(pc_conf_str(conf, PC_PROP_TLS_KEY_FILE));
    if (a && strcmp(a->method, "tls") == 0 && !t.cert_file)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "AuthenticationTls needs a client certificate: authParams "
                         "tlsCertFile/tlsKeyFile or tlsCertificateFilePath/tlsKeyFilePath");
    return pc_tls_ctx_new(&t, &o->tls, err, errlen);
}

pulsarc_err_t pc_conn_opts_security(pc_conn_opts_t *o, const pulsarc_conf_t *conf, int tls,
                                    char *err, size_t errlen) {
    o->auth = NULL;
    o->tls = NULL;
    pulsarc_err_t e = pc_auth_new(conf, &o->auth, err, errlen);
    if (!e && !tls && o->auth && strcmp(o->auth->method, "tls") == 0)
        e = pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                      "AuthenticationTls needs a pulsar+ssl:// service URL");
    if (!e && tls)
        e = build_tls(o, conf, err, errlen);
    if (e)
        pc_conn_opts_security_free(o);
    return e;
}

void pc_conn_opts_security_free(pc_conn_opts_t *o) {
    pc_auth_free(o->auth);
    pc_tls_ctx_free(o->tls);
    o->auth = NULL;
    o->tls = NULL;
}
