/*
 * Design notes: wrapping the AES data key for one recipient key, in the
 * bytes the Java client (Bouncy Castle) writes and reads.
 *
 * RSA: RSA-OAEP with SHA-1 and MGF1-SHA-1 ("RSA/NONE/OAEPWithSHA1AndMGF1
 * Padding").
 *
 * EC: Bouncy Castle's "ECIES" cipher with its defaults, which is IEEE
 * 1363a DHAES in stream mode: an ephemeral key pair on the recipient's
 * curve; V = its public point, uncompressed; Z = x coordinate of the ECDH
 * shared point, padded to the field size; K = KDF2-SHA-1(V || Z) (X9.63's
 * KDF, counter from 1, no shared info) of 16 + n bytes; the first 16 bytes
 * key HMAC-SHA-1, the next n are XORed with the n-byte data key (C);
 * T = HMAC-SHA-1(C || L2) with L2 eight zero bytes (the bit length of an
 * absent encoding vector). Output V || C || T. Unwrapping accepts a
 * compressed V as well, checks the point is on the curve (OpenSSL does when
 * decoding it) and compares T in constant time before XORing.
 *
 * Only OpenSSL primitives (EVP PKEY, X963KDF, HMAC). Pure; any thread.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rsa.h>

#include "core/err.h"
#include "crypto/crypto_int.h"

#define MAC_KEY_LEN 16
#define MAC_LEN 20
#define MAX_POINT 133 /* uncompressed P-521 */
#define MAX_FIELD 66
#define MAX_UNWRAPPED 64

static pulsarc_err_t ossl_fail(char *errstr, size_t errlen, const char *what) {
    unsigned long e = ERR_get_error();
    char detail[160] = "";
    if (e)
        ERR_error_string_n(e, detail, sizeof detail);
    ERR_clear_error();
    return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO, "%s failed%s%s", what,
                     e ? ": " : "", detail);
}

/* ---- RSA -------------------------------------------------------------- */

static EVP_PKEY_CTX *rsa_ctx(EVP_PKEY *pkey, int encrypt) {
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(pkey, NULL);
    if (!c)
        return NULL;
    if ((encrypt ? EVP_PKEY_encrypt_init(c) : EVP_PKEY_decrypt_init(c)) <= 0 ||
        EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) <= 0 ||
        EVP_PKEY_CTX_set_rsa_oaep_md(c, EVP_sha1()) <= 0 ||
        EVP_PKEY_CTX_set_rsa_mgf1_md(c, EVP_sha1()) <= 0) {
        EVP_PKEY_CTX_free(c);
        return NULL;
    }
    return c;
}

static pulsarc_err_t rsa_wrap(EVP_PKEY *pkey, const uint8_t *in, size_t len, pc_buf_t *out,
                              char *errstr, size_t errlen) {
    EVP_PKEY_CTX *c = rsa_ctx(pkey, 1);
    size_t n = 0;
    pulsarc_err_t err = PULSARC_OK;
    if (!c || EVP_PKEY_encrypt(c, NULL, &n, in, len) <= 0)
        err = ossl_fail(errstr, errlen, "RSA-OAEP set-up");
    else if ((err = pc_buf_reserve(out, n)) == PULSARC_OK) {
        if (EVP_PKEY_encrypt(c, out->data + out->len, &n, in, len) <= 0)
            err = ossl_fail(errstr, errlen, "RSA-OAEP encryption of the data key");
        else
            out->len += n;
    }
    EVP_PKEY_CTX_free(c);
    return err;
}

static pulsarc_err_t rsa_unwrap(EVP_PKEY *pkey, const uint8_t *in, size_t len, uint8_t *out,
                                size_t cap, size_t *outlen, char *errstr, size_t errlen) {
    EVP_PKEY_CTX *c = rsa_ctx(pkey, 0);
    uint8_t tmp[1024]; /* up to 8192-bit keys */
    size_t n = sizeof tmp;
    pulsarc_err_t err = PULSARC_OK;
    if (!c)
        err = ossl_fail(errstr, errlen, "RSA-OAEP set-up");
    else if (len > sizeof tmp || EVP_PKEY_decrypt(c, tmp, &n, in, len) <= 0) {
        ERR_clear_error();
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                        "RSA-OAEP decryption of the data key failed (%zu bytes; wrong key or "
                        "damaged)", len);
    } else if (n > cap)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                        "the decrypted data key has %zu bytes, more than %zu", n, cap);
    else {
        memcpy(out, tmp, n);
        *outlen = n;
    }
    OPENSSL_cleanse(tmp, sizeof tmp);
    EVP_PKEY_CTX_free(c);
    return err;
}

/* ---- EC (Bouncy Castle ECIES) ----------------------------------------- */

/* The curve's name and field size in bytes. */
static pulsarc_err_t curve_of(EVP_PKEY *pkey, char *name, size_t cap, size_t *field,
                              char *errstr, size_t errlen) {
    size_t n = 0;
    if (!EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, name, cap, &n))
        return ossl_fail(errstr, errlen, "EC key without a named curve: reading its curve");
    int nid = OBJ_txt2nid(name);
    EC_GROUP *g = nid != NID_undef ? EC_GROUP_new_by_curve_name(nid) : NULL;
    if (!g)
        return ossl_fail(errstr, errlen, "looking up the EC curve");
    *field = ((size_t)EC_GROUP_get_degree(g) + 7) / 8;
    EC_GROUP_free(g);
    if (*field == 0 || *field > MAX_FIELD)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO, "EC curve %s: unsupported size",
                         name);
    return PULSARC_OK;
}

static pulsarc_err_t ecdh(EVP_PKEY *priv, EVP_PKEY *peer, uint8_t *z, size_t field,
                          char *errstr, size_t errlen) {
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(priv, NULL);
    size_t n = field;
    pulsarc_err_t err = PULSARC_OK;
    if (!c || EVP_PKEY_derive_init(c) <= 0 || EVP_PKEY_derive_set_peer(c, peer) <= 0 ||
        EVP_PKEY_derive(c, z, &n) <= 0)
        err = ossl_fail(errstr, errlen, "ECDH");
    else if (n != field)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO, "ECDH: %zu bytes, expected %zu", n,
                        field);
    EVP_PKEY_CTX_free(c);
    return err;
}

/* K = KDF2-SHA-1(V || Z), klen bytes. */
static pulsarc_err_t kdf2(const uint8_t *v, size_t vlen, const uint8_t *z, size_t zlen,
                          uint8_t *k, size_t klen, char *errstr, size_t errlen) {
    uint8_t secret[MAX_POINT + MAX_FIELD];
    memcpy(secret, v, vlen);
    memcpy(secret + vlen, z, zlen);
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "X963KDF", NULL);
    EVP_KDF_CTX *c = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
    OSSL_PARAM p[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA1", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, secret, vlen + zlen),
        OSSL_PARAM_construct_end(),
    };
    pulsarc_err_t err = PULSARC_OK;
    if (!c || EVP_KDF_derive(c, k, klen, p) <= 0)
        err = ossl_fail(errstr, errlen, "KDF2-SHA-1");
    EVP_KDF_CTX_free(c);
    EVP_KDF_free(kdf);
    OPENSSL_cleanse(secret, sizeof secret);
    return err;
}

static pulsarc_err_t mac_of(const uint8_t *mac_key, const uint8_t *c, size_t clen,
                            uint8_t t[MAC_LEN], char *errstr, size_t errlen) {
    uint8_t msg[MAX_UNWRAPPED + 8] = {0}; /* C || eight zero bytes */
    memcpy(msg, c, clen);
    unsigned int tl = MAC_LEN;
    if (!HMAC(EVP_sha1(), mac_key, MAC_KEY_LEN, msg, clen + 8, t, &tl) || tl != MAC_LEN)
        return ossl_fail(errstr, errlen, "HMAC-SHA-1");
    return PULSARC_OK;
}

static pulsarc_err_t ec_wrap(EVP_PKEY *pub, const uint8_t *in, size_t len, pc_buf_t *out,
                             char *errstr, size_t errlen) {
    char curve[64];
    size_t field, vlen = 0;
    uint8_t v[MAX_POINT], z[MAX_FIELD], k[MAC_KEY_LEN + MAX_UNWRAPPED], t[MAC_LEN];
    if (len > MAX_UNWRAPPED)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO, "data key too long for ECIES");
    pulsarc_err_t err = curve_of(pub, curve, sizeof curve, &field, errstr, errlen);
    if (err)
        return err;
    EVP_PKEY *eph = EVP_PKEY_Q_keygen(NULL, NULL, "EC", curve);
    if (!eph)
        return ossl_fail(errstr, errlen, "ECIES ephemeral key generation");
    /* Bouncy Castle writes the ephemeral point uncompressed. */
    if (!EVP_PKEY_set_utf8_string_param(eph, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                        "uncompressed") ||
        !EVP_PKEY_get_octet_string_param(eph, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, v, sizeof v,
                                         &vlen) ||
        vlen != 1 + 2 * field)
        err = ossl_fail(errstr, errlen, "encoding the ECIES ephemeral key");
    if (!err)
        err = ecdh(eph, pub, z, field, errstr, errlen);
    if (!err)
        err = kdf2(v, vlen, z, field, k, MAC_KEY_LEN + len, errstr, errlen);
    if (!err)
        err = pc_buf_reserve(out, vlen + len + MAC_LEN);
    if (!err) {
        uint8_t *o = out->data + out->len;
        memcpy(o, v, vlen);
        for (size_t i = 0; i < len; i++)
            o[vlen + i] = in[i] ^ k[MAC_KEY_LEN + i];
        err = mac_of(k, o + vlen, len, t, errstr, errlen);
        if (!err) {
            memcpy(o + vlen + len, t, MAC_LEN);
            out->len += vlen + len + MAC_LEN;
        }
    }
    EVP_PKEY_free(eph);
    OPENSSL_cleanse(z, sizeof z);
    OPENSSL_cleanse(k, sizeof k);
    return err;
}

/* The peer (ephemeral) public key from its encoded point; NULL when the
 * point does not decode or is not on the curve. */
static EVP_PKEY *ec_point_key(const char *curve, const uint8_t *v, size_t vlen) {
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *k = NULL;
    OSSL_PARAM p[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)curve, 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)v, vlen),
        OSSL_PARAM_construct_end(),
    };
    if (!c || EVP_PKEY_fromdata_init(c) <= 0 || EVP_PKEY_fromdata(c, &k, EVP_PKEY_PUBLIC_KEY, p) <= 0)
        k = NULL;
    EVP_PKEY_CTX_free(c);
    return k;
}

static pulsarc_err_t ec_unwrap(EVP_PKEY *priv, const uint8_t *in, size_t len, uint8_t *out,
                               size_t cap, size_t *outlen, char *errstr, size_t errlen) {
    char curve[64];
    size_t field;
    pulsarc_err_t err = curve_of(priv, curve, sizeof curve, &field, errstr, errlen);
    if (err)
        return err;
    size_t vlen = 0;
    if (len > 0 && in[0] == 0x04)
        vlen = 1 + 2 * field;
    else if (len > 0 && (in[0] == 0x02 || in[0] == 0x03))
        vlen = 1 + field;
    else
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "ECIES data key: does not start with an EC point (first byte 0x%02x)",
                         len ? in[0] : 0);
    if (len <= vlen + MAC_LEN || len - vlen - MAC_LEN > MAX_UNWRAPPED ||
        len - vlen - MAC_LEN > cap)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "ECIES data key: %zu bytes do not fit a %s point, a key and a MAC", len,
                         curve);
    size_t clen = len - vlen - MAC_LEN;
    EVP_PKEY *peer = ec_point_key(curve, in, vlen);
    if (!peer) {
        ERR_clear_error();
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "ECIES data key: the ephemeral key is not a point on %s", curve);
    }
    uint8_t z[MAX_FIELD], k[MAC_KEY_LEN + MAX_UNWRAPPED], t[MAC_LEN];
    err = ecdh(priv, peer, z, field, errstr, errlen);
    if (!err)
        err = kdf2(in, vlen, z, field, k, MAC_KEY_LEN + clen, errstr, errlen);
    if (!err)
        err = mac_of(k, in + vlen, clen, t, errstr, errlen);
    if (!err && CRYPTO_memcmp(t, in + vlen + clen, MAC_LEN) != 0)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                        "ECIES data key: MAC check failed (wrong key or damaged)");
    if (!err) {
        for (size_t i = 0; i < clen; i++)
            out[i] = in[vlen + i] ^ k[MAC_KEY_LEN + i];
        *outlen = clen;
    }
    EVP_PKEY_free(peer);
    OPENSSL_cleanse(z, sizeof z);
    OPENSSL_cleanse(k, sizeof k);
    return err;
}

/* ---- entry points ------------------------------------------------------ */

pulsarc_err_t pc_crypto_wrap(const pc_crypto_key_t *pub, const uint8_t *data_key, size_t len,
                             pc_buf_t *out, char *errstr, size_t errlen) {
    if (!pub || !data_key || !out || len == 0 || len > MAX_UNWRAPPED)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "wrap: bad argument");
    return pub->is_ec ? ec_wrap(pub->pkey, data_key, len, out, errstr, errlen)
                      : rsa_wrap(pub->pkey, data_key, len, out, errstr, errlen);
}

pulsarc_err_t pc_crypto_unwrap(const pc_crypto_key_t *priv, const uint8_t *in, size_t len,
                               uint8_t *out, size_t cap, size_t *outlen, char *errstr,
                               size_t errlen) {
    if (!priv || (!in && len) || !out || !outlen)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "unwrap: bad argument");
    if (!priv->is_private)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "unwrap: a public key cannot decrypt the data key");
    return priv->is_ec ? ec_unwrap(priv->pkey, in, len, out, cap, outlen, errstr, errlen)
                       : rsa_unwrap(priv->pkey, in, len, out, cap, outlen, errstr, errlen);
}
