/*
 * Design notes: building an encryptor or decryptor from configuration
 * strings, so that the producer and consumer need one call each. A key
 * path option is either one PEM file used for every key name (as the Java
 * client's defaultCryptoKeyReader(path)) or a list "name=path,name=path".
 * Every key is read at creation, so a bad file or a name without a key is
 * an error naming the option and the key before anything is sent.
 * Called while creating a producer or consumer; any thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "crypto/crypto_int.h"

#define MAX_NAMES 64

/* Next comma-separated item of *s, trimmed, into buf; 0 at the end. */
static int next_item(const char **s, char *buf, size_t cap) {
    const char *p = *s;
    while (*p == ' ' || *p == ',')
        p++;
    if (!*p)
        return 0;
    const char *end = strchr(p, ',');
    if (!end)
        end = p + strlen(p);
    *s = end;
    while (end > p && end[-1] == ' ')
        end--;
    size_t n = (size_t)(end - p);
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = 0;
    return 1;
}

/* The path for name in spec (one path for all, or name=path list); NULL
 * when the list has no entry for it. */
static const char *path_for(const char *spec, const char *name, char *buf, size_t cap) {
    if (!strchr(spec, '=')) {
        snprintf(buf, cap, "%s", spec);
        return buf;
    }
    const char *s = spec;
    while (next_item(&s, buf, cap)) {
        char *eq = strchr(buf, '=');
        if (eq && (size_t)(eq - buf) == strlen(name) && strncmp(buf, name, strlen(name)) == 0)
            return eq + 1;
    }
    return NULL;
}

/* The public key for name from the application's reader. */
static pulsarc_err_t ask_reader(pulsarc_crypto_key_reader_cb reader, void *opaque,
                                const char *name, pc_crypto_key_t **out, char *errstr,
                                size_t errlen) {
    char *buf = malloc(PC_CRYPTO_MAX_PEM);
    if (!buf)
        return PULSARC_ERR_NOMEM;
    long len = reader(name, 0, NULL, 0, buf, PC_CRYPTO_MAX_PEM, opaque);
    pulsarc_err_t err;
    if (len == 0)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                        "neither cryptoPublicKeyPath nor the key reader has this key");
    else if (len < 0 || (size_t)len > PC_CRYPTO_MAX_PEM)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO, "the key reader failed (returned %ld)",
                        len);
    else
        err = pc_crypto_key_from_pem(buf, (size_t)len, 0, name, out, errstr, errlen);
    free(buf);
    return err;
}

pulsarc_err_t pc_encryptor_from_conf(const char *names, const char *pub_spec,
                                     pulsarc_crypto_key_reader_cb reader, void *opaque,
                                     pc_encryptor_t **out, char *errstr, size_t errlen) {
    *out = NULL;
    if (!names || !*names)
        return PULSARC_OK;
    if ((!pub_spec || !*pub_spec) && !reader)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "encryptionKeys is set but cryptoPublicKeyPath is empty and there is no "
                         "key reader: no public key to encrypt for");
    if (!pub_spec)
        pub_spec = "";
    pc_encryptor_t *e = NULL;
    pulsarc_err_t err = pc_encryptor_new(&e, errstr, errlen);
    const char *s = names;
    char name[PC_CRYPTO_MAX_NAME_LEN + 1], pbuf[4096], why[256];
    int count = 0;
    while (!err && next_item(&s, name, sizeof name)) {
        if (++count > MAX_NAMES) {
            err = pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                            "encryptionKeys: more than %d key names", MAX_NAMES);
            break;
        }
        const char *path = *pub_spec ? path_for(pub_spec, name, pbuf, sizeof pbuf) : NULL;
        if ((!path || !*path) && !reader) {
            err = pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                            "encryptionKeys: key %s has no entry in cryptoPublicKeyPath", name);
            break;
        }
        pc_crypto_key_t *k = NULL;
        err = path && *path ? pc_crypto_key_from_file(path, 0, &k, why, sizeof why)
                            : ask_reader(reader, opaque, name, &k, why, sizeof why);
        if (!err)
            err = pc_encryptor_add_key(e, name, k, NULL, 0, why, sizeof why);
        if (err)
            pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                      "encryptionKeys: key %s (cryptoPublicKeyPath): %s", name, why);
    }
    if (!err && count == 0)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                        "encryptionKeys holds no key name");
    if (err) {
        pc_encryptor_free(e);
        return err == PULSARC_ERR_NOMEM ? err : PULSARC_ERR_BAD_CONFIG;
    }
    *out = e;
    return PULSARC_OK;
}

pulsarc_err_t pc_decryptor_from_conf(const char *priv_spec, pulsarc_crypto_key_reader_cb reader,
                                     void *opaque, pc_decryptor_t **out, char *errstr,
                                     size_t errlen) {
    *out = NULL;
    if ((!priv_spec || !*priv_spec) && !reader)
        return PULSARC_OK;
    if (!priv_spec)
        priv_spec = "";
    pc_decryptor_t *d = NULL;
    pulsarc_err_t err = pc_decryptor_new(&d, errstr, errlen);
    if (!err)
        pc_decryptor_set_app_reader(d, reader, opaque);
    char item[4096], why[256];
    const char *s = priv_spec;
    int single = !strchr(priv_spec, '=');
    int count = 0;
    while (!err && next_item(&s, item, sizeof item)) {
        char *eq = single ? NULL : strchr(item, '=');
        if (!single && (!eq || eq == item || !eq[1])) {
            err = pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                            "cryptoPrivateKeyPath: \"%s\" is not name=path", item);
            break;
        }
        if (eq)
            *eq = 0;
        const char *name = single ? "*" : item, *path = single ? priv_spec : eq + 1;
        pc_crypto_key_t *k = NULL;
        err = pc_crypto_key_from_file(path, 1, &k, why, sizeof why);
        if (!err)
            err = pc_decryptor_add_key(d, name, k, why, sizeof why);
        if (err)
            pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG, "cryptoPrivateKeyPath: %s", why);
        if (single || ++count > MAX_NAMES)
            break;
    }
    if (err) {
        pc_decryptor_free(d);
        return err == PULSARC_ERR_NOMEM ? err : PULSARC_ERR_BAD_CONFIG;
    }
    *out = d;
    return PULSARC_OK;
}
