/*
 * Authentication providers: what goes into CONNECT and AUTH_RESPONSE.
 * Built from the configuration on the application thread (pulsarc_client_new),
 * then used on the loop thread only; owned by the client, shared by all of
 * its connections. Credentials never go into an error string.
 */
#ifndef PC_AUTH_PLUGIN_H
#define PC_AUTH_PLUGIN_H
#include <stddef.h>
#include <stdint.h>

#include "pulsarc.h"

typedef struct pc_auth pc_auth_t;

struct pc_auth {
    const char *method; /* auth_method_name on the wire: "token", "tls" */
    /* Fresh credentials: *data malloc'd (caller wipes and frees), may be empty. */
    pulsarc_err_t (*credentials)(pc_auth_t *a, uint8_t **data, size_t *len, char *err,
                                 size_t errlen);
    void (*free)(pc_auth_t *a);
    char *tls_cert; /* client certificate the provider needs (TLS auth), or NULL */
    char *tls_key;
};

/*
 * From "authPlugin"/"authParams" and the token supplier of conf. *out is
 * NULL when no authentication is configured. Errors name the setting that
 * is wrong, never its secret value.
 */
pulsarc_err_t pc_auth_new(const pulsarc_conf_t *conf, pc_auth_t **out, char *err,
                          size_t errlen);
void pc_auth_free(pc_auth_t *a);

/* Providers (auth_token.c, auth_tls.c). params is authParams, may be "". */
pulsarc_err_t pc_auth_token_new(const char *params, pulsarc_token_supplier_cb cb, void *opaque,
                                pc_auth_t **out, char *err, size_t errlen);
pulsarc_err_t pc_auth_tls_new(const char *params, pc_auth_t **out, char *err, size_t errlen);

/* Wipes and frees a credential buffer. */
void pc_auth_wipe(uint8_t *data, size_t len);
#endif
