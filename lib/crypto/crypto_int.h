/* Internal to lib/crypto: the key object behind pc_crypto_key_t. */
#ifndef PC_CRYPTO_INT_H
#define PC_CRYPTO_INT_H
#include <openssl/evp.h>

#include "crypto/crypto.h"

struct pc_crypto_key {
    EVP_PKEY *pkey;
    int is_ec;      /* else RSA */
    int is_private;
};
#endif
