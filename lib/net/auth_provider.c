/*
 * Design notes: what every authentication provider shares, below all of
 * them: freeing a provider whatever its kind, and wiping a credential
 * buffer or secret string before it is freed. The providers
 * (auth_token.c, auth_tls.c, auth_basic.c, auth_oauth2.c) and the
 * authParams reader (auth_params.c) call down to it; the factory
 * (auth_plugin.c) sits above them all. No state: any thread.
 */
#include <stdlib.h>
#include <string.h>

#include "net/auth_plugin.h"

void pc_auth_free(pc_auth_t *a) {
    if (!a)
        return;
    free(a->tls_cert);
    free(a->tls_key);
    a->free(a);
}

void pc_auth_wipe(uint8_t *data, size_t len) {
    if (!data)
        return;
    explicit_bzero(data, len);
    free(data);
}

void pc_auth_free_secret(char *s) {
    if (s)
        pc_auth_wipe((uint8_t *)s, strlen(s));
}
