/*
 * Design notes: the producer side of end-to-end encryption. Owns the data
 * key, the recipients (name, public key, metadata pairs, the data key as
 * wrapped for them) and the EncryptionKeys records that message metadata
 * points at. The data key is replaced once its period has run out, checked
 * when a payload is encrypted (monotonic clock), so an idle producer does
 * no work; every recipient's wrapped key is renewed with it. Each payload
 * gets a fresh random IV. Used by the owning producer's thread only.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "core/err.h"
#include "crypto/crypto_int.h"
#include "crypto/gcm.h"

typedef struct recipient {
    char *name;
    pc_crypto_key_t *pub;
    pc_buf_t wrapped;
    Pulsar__Proto__KeyValue *kv;
    Pulsar__Proto__KeyValue **kvp;
    size_t n_kv;
    Pulsar__Proto__EncryptionKeys rec; /* what metadata points at */
} recipient_t;

struct pc_encryptor {
    uint8_t data_key[PC_CRYPTO_DATA_KEY_LEN];
    uint64_t key_born_ms;
    uint64_t period_ms;
    recipient_t **r;
    Pulsar__Proto__EncryptionKeys **recs;
    size_t n;
    EVP_CIPHER_CTX *gcm;
    int gcm_keyed; /* gcm holds data_key's schedule */
    uint8_t seal_iv[PC_CRYPTO_IV_LEN]; /* pc_encryptor_seal's output, kept until the next call */
    pc_buf_t sealed;
};

static uint64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

size_t pc_crypto_overhead(void) {
    return PC_CRYPTO_TAG_LEN;
}

static void recipient_free(recipient_t *r) {
    if (!r)
        return;
    free(r->name);
    pc_crypto_key_free(r->pub);
    pc_buf_free(&r->wrapped);
    for (size_t i = 0; i < r->n_kv; i++) {
        free(r->kv[i].key);
        free(r->kv[i].value);
    }
    free(r->kv);
    free(r->kvp);
    free(r);
}

void pc_encryptor_free(pc_encryptor_t *e) {
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        recipient_free(e->r[i]);
    free(e->r);
    free(e->recs);
    EVP_CIPHER_CTX_free(e->gcm);
    pc_buf_free(&e->sealed);
    OPENSSL_cleanse(e->data_key, sizeof e->data_key);
    free(e);
}

static pulsarc_err_t random_key(uint8_t key[PC_CRYPTO_DATA_KEY_LEN], char *errstr,
                                size_t errlen) {
    if (RAND_bytes(key, PC_CRYPTO_DATA_KEY_LEN) != 1)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "no random bytes for a data key (OpenSSL RAND_bytes failed)");
    return PULSARC_OK;
}

pulsarc_err_t pc_encryptor_new(pc_encryptor_t **out, char *errstr, size_t errlen) {
    pc_encryptor_t *e = calloc(1, sizeof *e);
    if (!e || !(e->gcm = EVP_CIPHER_CTX_new())) {
        free(e);
        return PULSARC_ERR_NOMEM;
    }
    e->period_ms = PC_CRYPTO_ROTATE_MS;
    pc_buf_init(&e->sealed, 0);
    pulsarc_err_t err = random_key(e->data_key, errstr, errlen);
    if (err) {
        pc_encryptor_free(e);
        return err;
    }
    e->key_born_ms = mono_ms();
    *out = e;
    return PULSARC_OK;
}

void pc_encryptor_set_rotation(pc_encryptor_t *e, uint64_t period_ms) {
    e->period_ms = period_ms;
}

static void set_wrapped(recipient_t *r) {
    r->rec.value.data = r->wrapped.data;
    r->rec.value.len = r->wrapped.len;
}

/* All or nothing: a failure leaves the old key and its wrappings in use. */
pulsarc_err_t pc_encryptor_rotate(pc_encryptor_t *e, char *errstr, size_t errlen) {
    uint8_t key[PC_CRYPTO_DATA_KEY_LEN];
    pc_buf_t *fresh = calloc(e->n ? e->n : 1, sizeof *fresh);
    if (!fresh)
        return PULSARC_ERR_NOMEM;
    pulsarc_err_t err = random_key(key, errstr, errlen);
    size_t done = 0;
    for (; !err && done < e->n; done++) {
        pc_buf_init(&fresh[done], 0);
        err = pc_crypto_wrap(e->r[done]->pub, key, sizeof key, &fresh[done], errstr, errlen);
    }
    for (size_t i = 0; i < done; i++) {
        if (!err) { /* the new wrapping replaces the old one */
            pc_buf_t old = e->r[i]->wrapped;
            e->r[i]->wrapped = fresh[i];
            fresh[i] = old;
            set_wrapped(e->r[i]);
        }
        pc_buf_free(&fresh[i]);
    }
    free(fresh);
    if (!err) {
        memcpy(e->data_key, key, sizeof key);
        e->gcm_keyed = 0;
        e->key_born_ms = mono_ms();
    }
    OPENSSL_cleanse(key, sizeof key);
    return err;
}

static pulsarc_err_t copy_meta(recipient_t *r, const char *const *kv, size_t pairs) {
    if (!pairs)
        return PULSARC_OK;
    r->kv = calloc(pairs, sizeof *r->kv);
    r->kvp = calloc(pairs, sizeof *r->kvp);
    if (!r->kv || !r->kvp)
        return PULSARC_ERR_NOMEM;
    for (size_t i = 0; i < pairs; i++) {
        pulsar__proto__key_value__init(&r->kv[i]);
        r->n_kv = i + 1;
        if (!kv[2 * i] || !kv[2 * i + 1])
            return PULSARC_ERR_INVALID_ARG;
        r->kv[i].key = strdup(kv[2 * i]);
        r->kv[i].value = strdup(kv[2 * i + 1]);
        if (!r->kv[i].key || !r->kv[i].value)
            return PULSARC_ERR_NOMEM;
        r->kvp[i] = &r->kv[i];
    }
    return PULSARC_OK;
}

static pulsarc_err_t grow(pc_encryptor_t *e) {
    recipient_t **r = realloc(e->r, (e->n + 1) * sizeof *r);
    if (!r)
        return PULSARC_ERR_NOMEM;
    e->r = r;
    Pulsar__Proto__EncryptionKeys **recs = realloc(e->recs, (e->n + 1) * sizeof *recs);
    if (!recs)
        return PULSARC_ERR_NOMEM;
    e->recs = recs;
    return PULSARC_OK;
}

pulsarc_err_t pc_encryptor_add_key(pc_encryptor_t *e, const char *name, pc_crypto_key_t *pub,
                                   const char *const *meta_kv, size_t meta_pairs, char *errstr,
                                   size_t errlen) {
    if (!e || !name || !*name || !pub || strlen(name) > PC_CRYPTO_MAX_NAME_LEN) {
        pc_crypto_key_free(pub);
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "encryption key: missing or overlong name, or no public key");
    }
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->r[i]->name, name) == 0) {
            pc_crypto_key_free(pub);
            return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                             "encryption key %s: named twice", name);
        }
    recipient_t *r = calloc(1, sizeof *r);
    if (!r) {
        pc_crypto_key_free(pub);
        return PULSARC_ERR_NOMEM;
    }
    r->pub = pub;
    pc_buf_init(&r->wrapped, 0);
    pulsar__proto__encryption_keys__init(&r->rec);
    r->name = strdup(name);
    pulsarc_err_t err = r->name ? copy_meta(r, meta_kv, meta_pairs) : PULSARC_ERR_NOMEM;
    if (err == PULSARC_ERR_INVALID_ARG)
        pc_seterr(errstr, errlen, err, "encryption key %s: a metadata key or value is NULL", name);
    if (!err && pub->is_private)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                        "encryption key %s: a private key was given where the public key is "
                        "needed", name);
    if (!err)
        err = pc_crypto_wrap(pub, e->data_key, sizeof e->data_key, &r->wrapped, errstr, errlen);
    if (!err)
        err = grow(e);
    if (err) {
        recipient_free(r);
        return err;
    }
    set_wrapped(r);
    r->rec.key = r->name;
    r->rec.n_metadata = r->n_kv;
    r->rec.metadata = r->kvp;
    e->r[e->n] = r;
    e->recs[e->n] = &r->rec;
    e->n++;
    return PULSARC_OK;
}

pulsarc_err_t pc_encryptor_encrypt(pc_encryptor_t *e, Pulsar__Proto__MessageMetadata *md,
                                   uint8_t *iv, const void *in, size_t len, pc_buf_t *out,
                                   char *errstr, size_t errlen) {
    if (!e || !md || !iv || (!in && len) || !out)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "encrypt: NULL argument");
    if (e->n == 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "encrypt: no encryption key configured");
    pulsarc_err_t err;
    if (e->period_ms && mono_ms() - e->key_born_ms >= e->period_ms &&
        (err = pc_encryptor_rotate(e, errstr, errlen)) != PULSARC_OK)
        return err;
    if (RAND_bytes(iv, PC_CRYPTO_IV_LEN) != 1)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "no random bytes for an IV (OpenSSL RAND_bytes failed)");
    static const uint8_t empty;
    err = pc_gcm_seal(e->gcm, e->data_key, e->gcm_keyed, iv, len ? in : &empty, len, out, errstr,
                      errlen);
    e->gcm_keyed = !err;
    if (err)
        return err;
    md->n_encryption_keys = e->n;
    md->encryption_keys = e->recs;
    md->has_encryption_param = 1;
    md->encryption_param.data = iv;
    md->encryption_param.len = PC_CRYPTO_IV_LEN;
    return PULSARC_OK;
}

pulsarc_err_t pc_encryptor_seal(pc_encryptor_t *e, Pulsar__Proto__MessageMetadata *md,
                                const uint8_t **data, size_t *len, char *errstr, size_t errlen) {
    if (!e)
        return PULSARC_OK;
    pulsarc_err_t err = pc_encryptor_encrypt(e, md, e->seal_iv, *data, *len, &e->sealed, errstr,
                                             errlen);
    if (err)
        return err;
    *data = e->sealed.data;
    *len = e->sealed.len;
    return PULSARC_OK;
}
