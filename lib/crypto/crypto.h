/*
 * End-to-end message encryption in the byte formats the Java client writes
 * and reads, so that either side can be pulsarc or Java. Depends on
 * lib/core and OpenSSL only; no I/O besides reading key files.
 *
 * The scheme (facts of the Java client, implemented here with OpenSSL EVP):
 *   - a 32-byte AES data key per producer, replaced every rotation period
 *     (4 hours, as Java) and at creation;
 *   - each message payload (after compression) is AES-256-GCM encrypted
 *     with a fresh random 12-byte IV and a 16-byte tag appended to the
 *     ciphertext, no associated data; the IV travels in
 *     MessageMetadata.encryption_param;
 *   - the data key is encrypted ("wrapped") for every configured public
 *     key and travels as MessageMetadata.encryption_keys[] = {key name,
 *     wrapped key, the key's metadata pairs}. encryption_algo stays unset:
 *     the Java client neither writes nor reads it;
 *   - RSA keys wrap with RSA-OAEP, SHA-1 and MGF1-SHA-1;
 *   - EC keys wrap with Bouncy Castle's "ECIES": an ephemeral key on the
 *     recipient's curve, ECDH, KDF2-SHA-1 over (ephemeral point || shared
 *     x), the first 16 derived bytes an HMAC-SHA-1 key and the rest XORed
 *     with the data key; output = uncompressed ephemeral point || XORed key
 *     || HMAC-SHA-1(XORed key || 8 zero bytes).
 *
 * Keys are PEM, as the Java client reads them: a public key as "PUBLIC
 * KEY" (or a "CERTIFICATE" whose key is taken), a private key as "RSA
 * PRIVATE KEY", "EC PRIVATE KEY" or PKCS#8 "PRIVATE KEY"; an "EC
 * PARAMETERS" block before the key is skipped. Encrypted PEM is refused.
 *
 * Threads: an encryptor or decryptor belongs to one producer or consumer
 * and is used by one thread at a time (its owner serialises calls). Keys
 * are immutable once read and may be shared.
 */
#ifndef PC_CRYPTO_H
#define PC_CRYPTO_H
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"
#include "core/buf.h"
#include "pulsarc.h"

#define PC_CRYPTO_DATA_KEY_LEN 32
#define PC_CRYPTO_IV_LEN 12
#define PC_CRYPTO_TAG_LEN 16
/* Key files and in-memory PEM above this size are refused. */
#define PC_CRYPTO_MAX_PEM (64 * 1024)
/* Hostile-metadata bounds on the consumer side. */
#define PC_CRYPTO_MAX_KEYS_TRIED 32
#define PC_CRYPTO_MAX_WRAPPED_LEN 4096
#define PC_CRYPTO_MAX_NAME_LEN 1024
/* Data-key lifetime on the producer (the Java client's 4 hours). */
#define PC_CRYPTO_ROTATE_MS (4ULL * 3600 * 1000)

/* What the consumer does with a message it cannot decrypt (Java's
 * ConsumerCryptoFailureAction). */
typedef enum pc_crypto_fail_action {
    PC_CRYPTO_FAIL = 0, /* hold the message back and report an error */
    PC_CRYPTO_DISCARD,  /* acknowledge and drop it */
    PC_CRYPTO_CONSUME,  /* deliver the encrypted bytes, marked as such */
} pc_crypto_fail_action_t;

typedef struct pc_crypto_key pc_crypto_key_t;

/* ---- keys ------------------------------------------------------------ */

/* Reads one public key (is_private 0) or private key (1) from PEM bytes.
 * what names the key in error messages (a key name or a file). */
pulsarc_err_t pc_crypto_key_from_pem(const void *pem, size_t len, int is_private,
                                     const char *what, pc_crypto_key_t **out, char *errstr,
                                     size_t errlen);
pulsarc_err_t pc_crypto_key_from_file(const char *path, int is_private, pc_crypto_key_t **out,
                                      char *errstr, size_t errlen);
void pc_crypto_key_free(pc_crypto_key_t *k);
/* "RSA" or "EC". */
const char *pc_crypto_key_type(const pc_crypto_key_t *k);

/* ---- wrapping a data key (exposed for tests) -------------------------- */

pulsarc_err_t pc_crypto_wrap(const pc_crypto_key_t *pub, const uint8_t *data_key, size_t len,
                             pc_buf_t *out, char *errstr, size_t errlen);
/* Unwraps into out (capacity cap); *outlen the data key's length. */
pulsarc_err_t pc_crypto_unwrap(const pc_crypto_key_t *priv, const uint8_t *in, size_t len,
                               uint8_t *out, size_t cap, size_t *outlen, char *errstr,
                               size_t errlen);

/* ---- producer side ---------------------------------------------------- */

typedef struct pc_encryptor pc_encryptor_t;

pulsarc_err_t pc_encryptor_new(pc_encryptor_t **out, char *errstr, size_t errlen);
void pc_encryptor_free(pc_encryptor_t *e);
/* Adds a recipient: name (as it goes on the wire), its public key (the
 * encryptor takes ownership, also on failure) and optional metadata pairs
 * sent with it. The data key is wrapped for it at once. */
pulsarc_err_t pc_encryptor_add_key(pc_encryptor_t *e, const char *name, pc_crypto_key_t *pub,
                                   const char *const *meta_kv, size_t meta_pairs, char *errstr,
                                   size_t errlen);
/* Data key lifetime in ms (default PC_CRYPTO_ROTATE_MS; 0 = never). */
void pc_encryptor_set_rotation(pc_encryptor_t *e, uint64_t period_ms);
/* A new data key now, wrapped again for every recipient. */
pulsarc_err_t pc_encryptor_rotate(pc_encryptor_t *e, char *errstr, size_t errlen);
/* Encrypts len bytes into out (replacing its contents) and points md's
 * encryption_keys and encryption_param at memory the encryptor and iv own:
 * valid until the next call on e (serialise md before). iv has
 * PC_CRYPTO_IV_LEN bytes, owned by the caller. */
pulsarc_err_t pc_encryptor_encrypt(pc_encryptor_t *e, Pulsar__Proto__MessageMetadata *md,
                                   uint8_t *iv, const void *in, size_t len, pc_buf_t *out,
                                   char *errstr, size_t errlen);
/* The producer's hook after compression: with an encryptor, encrypts
 * *data into memory e owns (valid until its next call), points *data and
 * *len at it and fills md; with e NULL, does nothing. */
pulsarc_err_t pc_encryptor_seal(pc_encryptor_t *e, Pulsar__Proto__MessageMetadata *md,
                                const uint8_t **data, size_t *len, char *errstr, size_t errlen);
/* Bytes encryption adds to a payload. */
size_t pc_crypto_overhead(void);

/* ---- consumer side ---------------------------------------------------- */

/* Finds the private key for name (the metadata pairs the producer sent
 * with it come along). Return PULSARC_ERR_NOT_FOUND when there is none;
 * *out is then owned by the caller of the callback (the decryptor). */
typedef pulsarc_err_t (*pc_crypto_key_fn)(void *ud, const char *name,
                                          Pulsar__Proto__KeyValue *const *meta, size_t n_meta,
                                          pc_crypto_key_t **out, char *errstr, size_t errlen);

typedef struct pc_decryptor pc_decryptor_t;

pulsarc_err_t pc_decryptor_new(pc_decryptor_t **out, char *errstr, size_t errlen);
void pc_decryptor_free(pc_decryptor_t *d);
/* A fixed private key for name (ownership taken, also on failure); name
 * "*" stands for any name no other entry matches. */
pulsarc_err_t pc_decryptor_add_key(pc_decryptor_t *d, const char *name, pc_crypto_key_t *priv,
                                   char *errstr, size_t errlen);
/* A reader called for names without a fixed key. */
void pc_decryptor_set_reader(pc_decryptor_t *d, pc_crypto_key_fn fn, void *ud);
/* The application's PEM key reader (pulsarc_conf_set_crypto_key_reader),
 * asked for names without a fixed key when no pc_crypto_key_fn is set. */
void pc_decryptor_set_app_reader(pc_decryptor_t *d, pulsarc_crypto_key_reader_cb cb,
                                 void *opaque);
/* 1 if md says the payload is encrypted. */
int pc_crypto_is_encrypted(const Pulsar__Proto__MessageMetadata *md);
/* Decrypts an encrypted payload into out (replacing its contents).
 * PULSARC_ERR_CRYPTO with a message naming the problem: no key for any of
 * the names, a malformed IV or wrapped key, or a failed GCM tag check (the
 * bytes in out are then never the plaintext). */
pulsarc_err_t pc_decryptor_decrypt(pc_decryptor_t *d, const Pulsar__Proto__MessageMetadata *md,
                                   const uint8_t *in, size_t len, pc_buf_t *out, char *errstr,
                                   size_t errlen);
/* The consumer's hook before decompression: decrypts *data into memory d
 * owns (valid until its next call) and points *data and *len at it. With
 * d NULL: PULSARC_ERR_CRYPTO (no private key configured). */
pulsarc_err_t pc_decryptor_open(pc_decryptor_t *d, const Pulsar__Proto__MessageMetadata *md,
                                const uint8_t **data, size_t *len, char *errstr, size_t errlen);

/* ---- from configuration ------------------------------------------------ */

/* names: "a,b" (encryptionKeys); pub_spec: one PEM path for every name or
 * "a=path,b=path" (cryptoPublicKeyPath); reader (may be NULL): asked for
 * names the spec does not give. Every key is read now. *out NULL when
 * names is empty. BAD_CONFIG naming the option and key otherwise. */
pulsarc_err_t pc_encryptor_from_conf(const char *names, const char *pub_spec,
                                     pulsarc_crypto_key_reader_cb reader, void *opaque,
                                     pc_encryptor_t **out, char *errstr, size_t errlen);
/* priv_spec: one PEM path for every name or "a=path,b=path"
 * (cryptoPrivateKeyPath); reader (may be NULL) for names it does not give.
 * *out NULL when both are empty. */
pulsarc_err_t pc_decryptor_from_conf(const char *priv_spec, pulsarc_crypto_key_reader_cb reader,
                                     void *opaque, pc_decryptor_t **out, char *errstr,
                                     size_t errlen);
#endif
