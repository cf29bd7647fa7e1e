/* Internal to lib/crypto: AES-256-GCM over a whole payload (see gcm.c). */
#ifndef PC_CRYPTO_GCM_H
#define PC_CRYPTO_GCM_H
#include <openssl/evp.h>

#include "crypto/crypto.h"

/* out = ciphertext || tag (contents replaced). same_key: c was last used
 * with this key, whose schedule is kept (only the IV is set). */
pulsarc_err_t pc_gcm_seal(EVP_CIPHER_CTX *c, const uint8_t key[PC_CRYPTO_DATA_KEY_LEN],
                          int same_key, const uint8_t iv[PC_CRYPTO_IV_LEN], const uint8_t *in,
                          size_t len, pc_buf_t *out, char *errstr, size_t errlen);
/* out = plaintext when the tag checks; else CRYPTO and out empty. */
pulsarc_err_t pc_gcm_open(EVP_CIPHER_CTX *c, const uint8_t *key, size_t klen, int same_key,
                          const uint8_t iv[PC_CRYPTO_IV_LEN], const uint8_t *in, size_t len,
                          pc_buf_t *out, char *errstr, size_t errlen);
#endif
