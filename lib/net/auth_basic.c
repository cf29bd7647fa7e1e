/*
 * Design notes: basic authentication (auth_method_name "basic"), the Java
 * AuthenticationBasic plugin's scheme: authParams {"userId":"u",
 * "password":"p"}, sent to the broker as "u:p" in CONNECT and in every
 * answer to AUTH_CHALLENGE. The broker splits that on ':' and wants exactly
 * two non-empty parts, so a ':' in either value, or an empty one, is
 * refused here at client creation rather than by the broker later. Built
 * on the application thread; credentials() runs on the loop thread. The
 * "u:p" string is wiped when the provider is freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "net/auth_plugin.h"

typedef struct basic_auth {
    pc_auth_t base;
    char *user_pass; /* "userId:password" */
} basic_auth_t;

static pulsarc_err_t basic_credentials(pc_auth_t *a, uint8_t **data, size_t *len, char *err,
                                       size_t errlen) {
    basic_auth_t *b = (basic_auth_t *)a;
    *len = strlen(b->user_pass);
    *data = malloc(*len);
    if (!*data) {
        *len = 0;
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    memcpy(*data, b->user_pass, *len);
    return PULSARC_OK;
}

static void basic_free(pc_auth_t *a) {
    basic_auth_t *b = (basic_auth_t *)a;
    pc_auth_free_secret(b->user_pass);
    free(b);
}

/* The value of member key: present, non-empty and without ':'. */
static pulsarc_err_t member(const pc_auth_kv_t *kv, const char *key, const char **out, char *err,
                            size_t errlen) {
    *out = pc_auth_kv_get(kv, key);
    if (!*out || !**out)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: AuthenticationBasic needs a non-empty \"%s\"", key);
    if (strchr(*out, ':'))
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "authParams: the basic \"%s\" may not contain ':' (the broker splits "
                         "userId:password on it)", key);
    return PULSARC_OK;
}

pulsarc_err_t pc_auth_basic_new(const char *params, pc_auth_t **out, char *err, size_t errlen) {
    *out = NULL;
    pc_auth_kv_t kv;
    pulsarc_err_t e = pc_auth_kv_parse(params, "authParams", &kv, err, errlen);
    if (e)
        return e;
    const char *user = NULL, *pass = NULL;
    e = member(&kv, "userId", &user, err, errlen);
    if (!e)
        e = member(&kv, "password", &pass, err, errlen);
    basic_auth_t *b = e ? NULL : calloc(1, sizeof *b);
    size_t n = b ? strlen(user) + strlen(pass) + 2 : 0;
    if (b && (b->user_pass = malloc(n)))
        snprintf(b->user_pass, n, "%s:%s", user, pass);
    pc_auth_kv_free(&kv);
    if (e)
        return e;
    if (!b || !b->user_pass) {
        free(b);
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    b->base.method = "basic";
    b->base.credentials = basic_credentials;
    b->base.free = basic_free;
    *out = &b->base;
    return PULSARC_OK;
}
