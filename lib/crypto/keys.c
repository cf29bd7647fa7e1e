/*
 * Design notes: reading PEM keys for end-to-end encryption. The PEM blocks
 * are walked one by one (PEM_read_bio) so that every way of failing gets a
 * message of its own: no PEM at all, only EC parameters, a private key
 * where a public one is wanted, an encrypted key, a key type other than
 * RSA and EC. Input is bounded (PC_CRYPTO_MAX_PEM) and so is the number of
 * blocks looked at. Pure apart from reading the file; any thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "core/err.h"
#include "crypto/crypto_int.h"

#define MAX_PEM_BLOCKS 8

void pc_crypto_key_free(pc_crypto_key_t *k) {
    if (!k)
        return;
    EVP_PKEY_free(k->pkey);
    free(k);
}

const char *pc_crypto_key_type(const pc_crypto_key_t *k) {
    return k->is_ec ? "EC" : "RSA";
}

/* Wraps pkey (taken) after checking it is RSA or EC. */
static pulsarc_err_t adopt(EVP_PKEY *pkey, int is_private, const char *what, pc_crypto_key_t **out,
                           char *errstr, size_t errlen) {
    int id = EVP_PKEY_get_base_id(pkey);
    if (id != EVP_PKEY_RSA && id != EVP_PKEY_EC) {
        const char *tn = OBJ_nid2sn(id);
        EVP_PKEY_free(pkey);
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "key %s: type %s is not supported (RSA or EC only, as the Java client)",
                         what, tn ? tn : "unknown");
    }
    pc_crypto_key_t *k = calloc(1, sizeof *k);
    if (!k) {
        EVP_PKEY_free(pkey);
        return PULSARC_ERR_NOMEM;
    }
    k->pkey = pkey;
    k->is_ec = id == EVP_PKEY_EC;
    k->is_private = is_private;
    *out = k;
    return PULSARC_OK;
}

static EVP_PKEY *decode_public(const char *name, const unsigned char *der, long len) {
    const unsigned char *p = der;
    if (strcmp(name, "PUBLIC KEY") == 0)
        return d2i_PUBKEY(NULL, &p, len);
    if (strcmp(name, "RSA PUBLIC KEY") == 0)
        return d2i_PublicKey(EVP_PKEY_RSA, NULL, &p, len);
    if (strcmp(name, "CERTIFICATE") == 0) {
        X509 *x = d2i_X509(NULL, &p, len);
        EVP_PKEY *k = x ? X509_get_pubkey(x) : NULL;
        X509_free(x);
        return k;
    }
    return NULL;
}

static EVP_PKEY *decode_private(const char *name, const unsigned char *der, long len) {
    const unsigned char *p = der;
    if (strcmp(name, "PRIVATE KEY") == 0)
        return d2i_AutoPrivateKey(NULL, &p, len);
    if (strcmp(name, "RSA PRIVATE KEY") == 0)
        return d2i_PrivateKey(EVP_PKEY_RSA, NULL, &p, len);
    if (strcmp(name, "EC PRIVATE KEY") == 0)
        return d2i_PrivateKey(EVP_PKEY_EC, NULL, &p, len);
    return NULL;
}

static int is_public_block(const char *n) {
    return !strcmp(n, "PUBLIC KEY") || !strcmp(n, "RSA PUBLIC KEY") || !strcmp(n, "CERTIFICATE");
}
static int is_private_block(const char *n) {
    return !strcmp(n, "PRIVATE KEY") || !strcmp(n, "RSA PRIVATE KEY") ||
           !strcmp(n, "EC PRIVATE KEY");
}

/* One PEM block: NULL *pkey and OK to go on to the next block. */
static pulsarc_err_t take_block(const char *name, const char *header, const unsigned char *der,
                                long len, int is_private, const char *what, EVP_PKEY **pkey,
                                char *errstr, size_t errlen) {
    const char *want = is_private ? "private" : "public";
    if (strstr(name, "ENCRYPTED") || (header && strstr(header, "ENCRYPTED")))
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "key %s: the %s key is encrypted (passphrase-protected PEM is not "
                         "supported)", what, want);
    if (!is_private && is_private_block(name))
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "key %s: holds a private key (%s) where a public key is expected", what,
                         name);
    if (is_private && is_public_block(name))
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "key %s: holds a public key (%s) where a private key is expected", what,
                         name);
    if (!(is_private ? is_private_block(name) : is_public_block(name)))
        return PULSARC_OK; /* EC PARAMETERS and anything else: skip */
    *pkey = is_private ? decode_private(name, der, len) : decode_public(name, der, len);
    if (!*pkey)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "key %s: the PEM block \"%s\" does not hold a valid key", what, name);
    return PULSARC_OK;
}

pulsarc_err_t pc_crypto_key_from_pem(const void *pem, size_t len, int is_private,
                                     const char *what, pc_crypto_key_t **out, char *errstr,
                                     size_t errlen) {
    if (!pem || !out || !what)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "key: NULL argument");
    *out = NULL;
    if (len > PC_CRYPTO_MAX_PEM)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "key %s: %zu bytes, more than the %d a PEM key may have", what, len,
                         PC_CRYPTO_MAX_PEM);
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (!bio)
        return PULSARC_ERR_NOMEM;
    EVP_PKEY *pkey = NULL;
    pulsarc_err_t err = PULSARC_OK;
    int blocks = 0;
    while (!pkey && !err && blocks < MAX_PEM_BLOCKS) {
        char *name = NULL, *header = NULL;
        unsigned char *der = NULL;
        long dlen = 0;
        if (!PEM_read_bio(bio, &name, &header, &der, &dlen))
            break;
        blocks++;
        err = take_block(name, header, der, dlen, is_private, what, &pkey, errstr, errlen);
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_clear_free(der, (size_t)dlen);
    }
    ERR_clear_error();
    BIO_free(bio);
    if (err)
        return err;
    if (!pkey)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         blocks ? "key %s: no %s key among its PEM blocks"
                                : "key %s: not PEM (no -----BEGIN %s KEY----- block found)",
                         what, is_private ? "private" : "public");
    return adopt(pkey, is_private, what, out, errstr, errlen);
}

pulsarc_err_t pc_crypto_key_from_file(const char *path, int is_private, pc_crypto_key_t **out,
                                      char *errstr, size_t errlen) {
    if (!path || !*path || !out)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "key file: no path given");
    FILE *f = fopen(path, "rb");
    if (!f)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO, "key file %s: %s", path,
                         strerror(errno));
    char *buf = malloc(PC_CRYPTO_MAX_PEM + 1);
    if (!buf) {
        fclose(f);
        return PULSARC_ERR_NOMEM;
    }
    size_t n = fread(buf, 1, PC_CRYPTO_MAX_PEM + 1, f);
    int rd_err = ferror(f);
    fclose(f);
    pulsarc_err_t err;
    if (rd_err)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO, "key file %s: read error", path);
    else if (n > PC_CRYPTO_MAX_PEM)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                        "key file %s: larger than the %d bytes a PEM key may have", path,
                        PC_CRYPTO_MAX_PEM);
    else
        err = pc_crypto_key_from_pem(buf, n, is_private, path, out, errstr, errlen);
    OPENSSL_cleanse(buf, n);
    free(buf);
    return err;
}
