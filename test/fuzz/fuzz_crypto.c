/*
 * libFuzzer target: end-to-end encryption's untrusted inputs (lib/crypto).
 *   mode 0  PEM key text, read as a public or a private key;
 *   mode 1  a MessageMetadata (protobuf) and a payload handed to a
 *           decryptor holding real RSA and EC private keys;
 *   mode 2  a genuine encrypted message (EC and RSA recipients) with the
 *           input's bytes XORed into its metadata or payload: decryption
 *           must either fail or give back exactly the original plaintext.
 * Keys are generated once per process with OpenSSL.
 *
 * Input: [mode:1][split:2, big-endian][bytes...]
 */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static pc_decryptor_t *dec;
static pc_encryptor_t *enc;
static uint8_t *genuine_md, plain[333];
static size_t genuine_md_len;
static pc_buf_t genuine_ct;

static void pem_pair(const char *type, const char *curve, char **pub, char **priv) {
    EVP_PKEY *k = curve ? EVP_PKEY_Q_keygen(NULL, NULL, type, curve)
                        : EVP_PKEY_Q_keygen(NULL, NULL, type, (size_t)2048);
    BIO *b = BIO_new(BIO_s_mem());
    BUF_MEM *m;
    PEM_write_bio_PUBKEY(b, k);
    BIO_get_mem_ptr(b, &m);
    *pub = strndup(m->data, m->length);
    BIO_free(b);
    b = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
    BIO_get_mem_ptr(b, &m);
    *priv = strndup(m->data, m->length);
    BIO_free(b);
    EVP_PKEY_free(k);
}

static pc_crypto_key_t *key(const char *pem, int is_private) {
    pc_crypto_key_t *k = NULL;
    if (pc_crypto_key_from_pem(pem, strlen(pem), is_private, "fuzz", &k, NULL, 0))
        abort();
    return k;
}

static void setup(void) {
    char *rsa_pub, *rsa_priv, *ec_pub, *ec_priv;
    pem_pair("RSA", NULL, &rsa_pub, &rsa_priv);
    pem_pair("EC", "P-256", &ec_pub, &ec_priv);
    if (pc_decryptor_new(&dec, NULL, 0) || pc_encryptor_new(&enc, NULL, 0) ||
        pc_decryptor_add_key(dec, "rsa", key(rsa_priv, 1), NULL, 0) ||
        pc_decryptor_add_key(dec, "*", key(ec_priv, 1), NULL, 0) ||
        pc_encryptor_add_key(enc, "ec", key(ec_pub, 0), NULL, 0, NULL, 0) ||
        pc_encryptor_add_key(enc, "rsa", key(rsa_pub, 0), NULL, 0, NULL, 0))
        abort();
    for (size_t i = 0; i < sizeof plain; i++)
        plain[i] = (uint8_t)(i * 7);
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    md.producer_name = (char *)"fuzz";
    static uint8_t iv[PC_CRYPTO_IV_LEN];
    pc_buf_init(&genuine_ct, 0);
    if (pc_encryptor_encrypt(enc, &md, iv, plain, sizeof plain, &genuine_ct, NULL, 0))
        abort();
    genuine_md_len = pulsar__proto__message_metadata__get_packed_size(&md);
    genuine_md = malloc(genuine_md_len);
    pulsar__proto__message_metadata__pack(&md, genuine_md);
    free(rsa_pub), free(rsa_priv), free(ec_pub), free(ec_priv);
}

static void decrypt_bytes(const uint8_t *meta, size_t mlen, const uint8_t *payload, size_t plen,
                          int check) {
    Pulsar__Proto__MessageMetadata *md = pulsar__proto__message_metadata__unpack(NULL, mlen, meta);
    if (!md)
        return;
    pc_buf_t out;
    pc_buf_init(&out, 0);
    char err[256];
    if (pc_crypto_is_encrypted(md) &&
        pc_decryptor_decrypt(dec, md, payload, plen, &out, err, sizeof err) == PULSARC_OK && check &&
        (out.len != sizeof plain || memcmp(out.data, plain, sizeof plain) != 0))
        abort(); /* a tampered message passed as different plaintext */
    pc_buf_free(&out);
    pulsar__proto__message_metadata__free_unpacked(md, NULL);
}

/* XORs the input into the genuine message: the first `split` bytes over
 * the metadata, the rest over the payload. */
static void tamper(const uint8_t *x, size_t n, size_t split) {
    uint8_t *meta = malloc(genuine_md_len), *ct = malloc(genuine_ct.len);
    memcpy(meta, genuine_md, genuine_md_len);
    memcpy(ct, genuine_ct.data, genuine_ct.len);
    if (split > n)
        split = n;
    for (size_t i = 0; i < split; i++)
        meta[i % genuine_md_len] ^= x[i];
    for (size_t i = split; i < n; i++)
        ct[(i - split) % genuine_ct.len] ^= x[i];
    decrypt_bytes(meta, genuine_md_len, ct, genuine_ct.len, 1);
    free(meta);
    free(ct);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!dec)
        setup();
    if (size < 3)
        return 0;
    size_t split = ((size_t)data[1] << 8) | data[2];
    const uint8_t *p = data + 3;
    size_t n = size - 3;
    switch (data[0] % 3) {
    case 0: {
        pc_crypto_key_t *k = NULL;
        char err[256];
        if (pc_crypto_key_from_pem(p, n, data[1] & 1, "fuzz", &k, err, sizeof err) == PULSARC_OK)
            pc_crypto_key_free(k);
        break;
    }
    case 1:
        if (split > n)
            split = n;
        decrypt_bytes(p, split, p + split, n - split, 0);
        break;
    default:
        tamper(p, n, split);
        break;
    }
    return 0;
}
