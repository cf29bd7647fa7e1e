/*
 * Design notes: what end-to-end encryption is in a build without OpenSSL
 * (WITH_TLS=0): asking for it is a clear error at creation, an encrypted
 * message meets the consumer's crypto-failure action. The other files of
 * lib/crypto are left out of such a build; with OpenSSL this one is empty.
 */
#ifndef PULSARC_WITH_TLS
#include "core/err.h"
#include "crypto/crypto.h"

pulsarc_err_t pc_encryptor_from_conf(const char *names, const char *pub_spec,
                                     pulsarc_crypto_key_reader_cb reader, void *opaque,
                                     pc_encryptor_t **out, char *errstr, size_t errlen) {
    (void)pub_spec, (void)reader, (void)opaque;
    *out = NULL;
    if (!names || !*names)
        return PULSARC_OK;
    return pc_seterr(errstr, errlen, PULSARC_ERR_UNSUPPORTED,
                     "encryptionKeys: this library was built without OpenSSL (WITH_TLS=0)");
}

pulsarc_err_t pc_decryptor_from_conf(const char *priv_spec, pulsarc_crypto_key_reader_cb reader,
                                     void *opaque, pc_decryptor_t **out, char *errstr,
                                     size_t errlen) {
    (void)opaque;
    *out = NULL;
    if ((!priv_spec || !*priv_spec) && !reader)
        return PULSARC_OK;
    return pc_seterr(errstr, errlen, PULSARC_ERR_UNSUPPORTED,
                     "cryptoPrivateKeyPath: this library was built without OpenSSL (WITH_TLS=0)");
}

void pc_encryptor_free(pc_encryptor_t *e) { (void)e; }
void pc_decryptor_free(pc_decryptor_t *d) { (void)d; }

pulsarc_err_t pc_encryptor_seal(pc_encryptor_t *e, Pulsar__Proto__MessageMetadata *md,
                                const uint8_t **data, size_t *len, char *errstr, size_t errlen) {
    (void)e, (void)md, (void)data, (void)len, (void)errstr, (void)errlen;
    return PULSARC_OK;
}

int pc_crypto_is_encrypted(const Pulsar__Proto__MessageMetadata *md) {
    return md && (md->n_encryption_keys > 0 || md->has_encryption_param);
}

pulsarc_err_t pc_decryptor_open(pc_decryptor_t *d, const Pulsar__Proto__MessageMetadata *md,
                                const uint8_t **data, size_t *len, char *errstr, size_t errlen) {
    (void)d, (void)md, (void)data, (void)len;
    return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                     "the message is encrypted and this library was built without OpenSSL");
}
#endif
