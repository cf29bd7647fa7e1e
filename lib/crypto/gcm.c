/*
 * Design notes: the payload cipher, AES-256-GCM with a 12-byte IV and the
 * 16-byte tag appended to the ciphertext, no associated data (the Java
 * client's "AES/GCM/NoPadding" with a 128-bit tag). Decryption also takes
 * 128- and 192-bit data keys, which a Java producer may send. One EVP context per
 * encryptor or decryptor, used by its owner's thread only.
 */
#include <limits.h>
#include <string.h>

#include <openssl/err.h>

#include "core/err.h"
#include "crypto/gcm.h"

/* Sets key (unless the context already holds it) and IV. */
static int keyed(EVP_CIPHER_CTX *c, const EVP_CIPHER *aes, int enc, const uint8_t *key,
                 int same_key, const uint8_t *iv) {
    if (same_key)
        return EVP_CipherInit_ex(c, NULL, NULL, NULL, iv, enc) == 1;
    return EVP_CipherInit_ex(c, aes, NULL, NULL, NULL, enc) == 1 &&
           EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, PC_CRYPTO_IV_LEN, NULL) == 1 &&
           EVP_CipherInit_ex(c, NULL, NULL, key, iv, enc) == 1;
}

pulsarc_err_t pc_gcm_seal(EVP_CIPHER_CTX *c, const uint8_t key[PC_CRYPTO_DATA_KEY_LEN],
                          int same_key, const uint8_t iv[PC_CRYPTO_IV_LEN], const uint8_t *in,
                          size_t len, pc_buf_t *out, char *errstr, size_t errlen) {
    if (len > INT_MAX - PC_CRYPTO_TAG_LEN)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MSG_TOO_BIG,
                         "encrypt: a %zu-byte payload is too large", len);
    out->len = 0;
    pulsarc_err_t err = pc_buf_reserve(out, len + PC_CRYPTO_TAG_LEN);
    if (err)
        return err;
    int n = 0, fin = 0;
    if (!keyed(c, EVP_aes_256_gcm(), 1, key, same_key, iv) ||
        EVP_EncryptUpdate(c, out->data, &n, in, (int)len) != 1 ||
        EVP_EncryptFinal_ex(c, out->data + n, &fin) != 1 ||
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, PC_CRYPTO_TAG_LEN,
                            out->data + n + fin) != 1) {
        ERR_clear_error();
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO, "AES-256-GCM encryption failed");
    }
    out->len = (size_t)n + (size_t)fin + PC_CRYPTO_TAG_LEN;
    return PULSARC_OK;
}

pulsarc_err_t pc_gcm_open(EVP_CIPHER_CTX *c, const uint8_t *key, size_t klen, int same_key,
                          const uint8_t iv[PC_CRYPTO_IV_LEN], const uint8_t *in, size_t len,
                          pc_buf_t *out, char *errstr, size_t errlen) {
    /* A Java producer limited by an old JCE policy sends 128-bit keys. */
    const EVP_CIPHER *aes = klen == 32   ? EVP_aes_256_gcm()
                            : klen == 24 ? EVP_aes_192_gcm()
                            : klen == 16 ? EVP_aes_128_gcm()
                                         : NULL;
    if (!aes)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "the data key has %zu bytes, not an AES key (16, 24 or 32)", klen);
    if (len < PC_CRYPTO_TAG_LEN || len > INT_MAX)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "encrypted payload of %zu bytes: shorter than its %d-byte GCM tag", len,
                         PC_CRYPTO_TAG_LEN);
    size_t clen = len - PC_CRYPTO_TAG_LEN;
    out->len = 0;
    pulsarc_err_t err = pc_buf_reserve(out, clen + 1);
    if (err)
        return err;
    int n = 0, fin = 0;
    if (!keyed(c, aes, 0, key, same_key, iv) ||
        EVP_DecryptUpdate(c, out->data, &n, in, (int)clen) != 1 ||
        EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, PC_CRYPTO_TAG_LEN,
                            (void *)(in + clen)) != 1 ||
        EVP_DecryptFinal_ex(c, out->data + n, &fin) != 1) {
        ERR_clear_error();
        OPENSSL_cleanse(out->data, clen); /* never leave unverified plaintext behind */
        out->len = 0;
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "AES-256-GCM tag check failed: the payload, its IV or its data key was "
                         "altered, or the key is not the one it was encrypted with");
    }
    out->len = (size_t)n + (size_t)fin;
    return PULSARC_OK;
}
