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

#include "net/loop.h"
#include "pulsarc.h"

typedef struct pc_auth pc_auth_t;

/* A connection waiting for a provider's fetch; lives inside the connection. */
typedef struct pc_auth_waiter {
    struct pc_auth_waiter *next;
    pc_loop_fn done; /* loop thread, once, unless cancelled first */
    void *arg;
} pc_auth_waiter_t;

struct pc_auth {
    const char *method; /* auth_method_name on the wire: "token", "tls" */
    /* Fresh credentials: *data malloc'd (caller wipes and frees), may be empty. */
    pulsarc_err_t (*credentials)(pc_auth_t *a, uint8_t **data, size_t *len, char *err,
                                 size_t errlen);
    void (*free)(pc_auth_t *a);
    /*
     * Optional, for providers whose credentials come over the network
     * (OAuth2); loop thread. Returns 1 when credentials() can answer now.
     * Otherwise a fetch runs (or is joined) on another thread and it
     * returns 0: w->done(w->arg) then runs on loop when that fetch ends,
     * well or not, unless cancel(a, w) came first. challenged_gen: nonzero
     * when the broker challenged the credentials of that generation (they
     * expired for it), so those may not be handed out again.
     */
    int (*prepare)(pc_auth_t *a, pc_loop_t *loop, uint64_t challenged_gen, pc_auth_waiter_t *w);
    void (*cancel)(pc_auth_t *a, pc_auth_waiter_t *w);
    /* Optional: generation of the credentials handed out last (0: none). */
    uint64_t (*generation)(pc_auth_t *a);
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
/* Any provider (auth_provider.c, with the two wipes below). NULL is fine. */
void pc_auth_free(pc_auth_t *a);

/* Providers (auth_token.c, auth_tls.c, auth_basic.c, auth_oauth2.c). params is authParams, may be "". */
pulsarc_err_t pc_auth_token_new(const char *params, pulsarc_token_supplier_cb cb, void *opaque,
                                pc_auth_t **out, char *err, size_t errlen);
pulsarc_err_t pc_auth_tls_new(const char *params, pc_auth_t **out, char *err, size_t errlen);
pulsarc_err_t pc_auth_basic_new(const char *params, pc_auth_t **out, char *err, size_t errlen);
/* trust_certs: the client's tlsTrustCertsFilePath ("" if unset), a default for the issuer's HTTPS. */
pulsarc_err_t pc_auth_oauth2_new(const char *params, const char *trust_certs, pc_auth_t **out,
                                 char *err, size_t errlen);

/* Wipes and frees a credential buffer. */
void pc_auth_wipe(uint8_t *data, size_t len);
/* Wipes and frees a NUL-terminated secret (NULL is fine). */
void pc_auth_free_secret(char *s);

/* The JSON form of authParams: a flat object of scalar members (auth_params.c). */
#define PC_AUTH_KV_MAX 128
typedef struct pc_auth_kv {
    size_t n;
    char *key[PC_AUTH_KV_MAX];
    char *val[PC_AUTH_KV_MAX]; /* strings unescaped; numbers and true/false/null as text */
    unsigned char is_string[PC_AUTH_KV_MAX];
} pc_auth_kv_t;
/* what names the input in error messages ("authParams"); values never appear in them. */
pulsarc_err_t pc_auth_kv_parse(const char *json, const char *what, pc_auth_kv_t *kv, char *err,
                               size_t errlen);
/* The same for documents that may hold nested objects/arrays: those members are skipped. */
pulsarc_err_t pc_auth_kv_parse_doc(const char *json, const char *what, int skip_nested,
                                   pc_auth_kv_t *kv, char *err, size_t errlen);
const char *pc_auth_kv_get(const pc_auth_kv_t *kv, const char *key);
/* Only if the member is a JSON string. */
const char *pc_auth_kv_get_str(const pc_auth_kv_t *kv, const char *key);
void pc_auth_kv_free(pc_auth_kv_t *kv); /* wipes the values */
#endif
