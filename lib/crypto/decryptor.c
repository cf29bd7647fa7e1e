/*
 * Design notes: the consumer side of end-to-end encryption. Owns the
 * private keys given up front (by name, or "*" for any name), the optional
 * reader callback for the rest, and a small cache of data keys already
 * unwrapped, keyed by the exact wrapped bytes: a producer sends the same
 * wrapped key with every message until it rotates, so the private-key work
 * happens once per data key. The cache has a fixed number of slots (least
 * recently used goes), so a stream of hostile keys cannot grow memory.
 *
 * Metadata is untrusted: the IV must be exactly 12 bytes, at most
 * PC_CRYPTO_MAX_KEYS_TRIED entries are looked at, wrapped keys above
 * PC_CRYPTO_MAX_WRAPPED_LEN and names above PC_CRYPTO_MAX_NAME_LEN are
 * skipped. Used by the owning consumer's thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "core/err.h"
#include "crypto/crypto_int.h"
#include "crypto/gcm.h"

#define CACHE_SLOTS 8
#define MAX_DATA_KEY 64

typedef struct named_key {
    char *name;
    pc_crypto_key_t *priv;
} named_key_t;

typedef struct cached_key {
    uint8_t *wrapped; /* NULL: free slot */
    size_t wrapped_len;
    uint8_t key[MAX_DATA_KEY];
    size_t key_len;
    uint64_t last_use;
} cached_key_t;

struct pc_decryptor {
    named_key_t *keys;
    size_t n_keys;
    pc_crypto_key_fn reader;
    void *reader_ud;
    pulsarc_crypto_key_reader_cb app_reader; /* the application's PEM reader */
    void *app_opaque;
    cached_key_t cache[CACHE_SLOTS];
    uint64_t tick;
    EVP_CIPHER_CTX *gcm;
    uint8_t gcm_key[MAX_DATA_KEY]; /* the key gcm holds the schedule of */
    size_t gcm_key_len;            /* 0: none */
    pc_buf_t opened; /* pc_decryptor_open's output, kept until the next call */
};

pulsarc_err_t pc_decryptor_new(pc_decryptor_t **out, char *errstr, size_t errlen) {
    (void)errstr;
    (void)errlen;
    pc_decryptor_t *d = calloc(1, sizeof *d);
    if (!d || !(d->gcm = EVP_CIPHER_CTX_new())) {
        free(d);
        return PULSARC_ERR_NOMEM;
    }
    pc_buf_init(&d->opened, 0);
    *out = d;
    return PULSARC_OK;
}

static void slot_clear(cached_key_t *c) {
    free(c->wrapped);
    OPENSSL_cleanse(c, sizeof *c);
}

void pc_decryptor_free(pc_decryptor_t *d) {
    if (!d)
        return;
    for (size_t i = 0; i < d->n_keys; i++) {
        free(d->keys[i].name);
        pc_crypto_key_free(d->keys[i].priv);
    }
    free(d->keys);
    for (int i = 0; i < CACHE_SLOTS; i++)
        slot_clear(&d->cache[i]);
    OPENSSL_cleanse(d->gcm_key, sizeof d->gcm_key);
    EVP_CIPHER_CTX_free(d->gcm);
    pc_buf_free(&d->opened);
    free(d);
}

pulsarc_err_t pc_decryptor_add_key(pc_decryptor_t *d, const char *name, pc_crypto_key_t *priv,
                                   char *errstr, size_t errlen) {
    if (!d || !name || !*name || !priv) {
        pc_crypto_key_free(priv);
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "decryption key: missing name or key");
    }
    if (!priv->is_private) {
        pc_crypto_key_free(priv);
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "decryption key %s: a public key was given where the private key is "
                         "needed", name);
    }
    named_key_t *k = realloc(d->keys, (d->n_keys + 1) * sizeof *k);
    char *dup = strdup(name);
    if (!k || !dup) {
        free(dup);
        if (k)
            d->keys = k;
        pc_crypto_key_free(priv);
        return PULSARC_ERR_NOMEM;
    }
    d->keys = k;
    d->keys[d->n_keys].name = dup;
    d->keys[d->n_keys].priv = priv;
    d->n_keys++;
    return PULSARC_OK;
}

void pc_decryptor_set_reader(pc_decryptor_t *d, pc_crypto_key_fn fn, void *ud) {
    d->reader = fn;
    d->reader_ud = ud;
}

int pc_crypto_is_encrypted(const Pulsar__Proto__MessageMetadata *md) {
    return md && (md->n_encryption_keys > 0 || md->has_encryption_param);
}

static const pc_crypto_key_t *fixed_key(const pc_decryptor_t *d, const char *name) {
    const pc_crypto_key_t *any = NULL;
    for (size_t i = 0; i < d->n_keys; i++) {
        if (strcmp(d->keys[i].name, name) == 0)
            return d->keys[i].priv;
        if (strcmp(d->keys[i].name, "*") == 0)
            any = d->keys[i].priv;
    }
    return any;
}

static cached_key_t *cache_find(pc_decryptor_t *d, const ProtobufCBinaryData *w) {
    for (int i = 0; i < CACHE_SLOTS; i++) {
        cached_key_t *c = &d->cache[i];
        if (c->wrapped && c->wrapped_len == w->len && memcmp(c->wrapped, w->data, w->len) == 0) {
            c->last_use = ++d->tick;
            return c;
        }
    }
    return NULL;
}

static void cache_put(pc_decryptor_t *d, const ProtobufCBinaryData *w, const uint8_t *key,
                      size_t klen) {
    cached_key_t *victim = &d->cache[0];
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (!d->cache[i].wrapped) {
            victim = &d->cache[i];
            break;
        }
        if (d->cache[i].last_use < victim->last_use)
            victim = &d->cache[i];
    }
    uint8_t *copy = malloc(w->len);
    if (!copy)
        return; /* a cache miss next time, nothing worse */
    slot_clear(victim);
    memcpy(copy, w->data, w->len);
    victim->wrapped = copy;
    victim->wrapped_len = w->len;
    memcpy(victim->key, key, klen);
    victim->key_len = klen;
    victim->last_use = ++d->tick;
}

void pc_decryptor_set_app_reader(pc_decryptor_t *d, pulsarc_crypto_key_reader_cb cb,
                                 void *opaque) {
    d->app_reader = cb;
    d->app_opaque = opaque;
}

#define MAX_META_PAIRS 64

/* The application's reader for name: its PEM parsed; NOT_FOUND when it
 * has no such key. */
static pulsarc_err_t ask_app(const pc_decryptor_t *d, const Pulsar__Proto__EncryptionKeys *e,
                             pc_crypto_key_t **out, char *errstr, size_t errlen) {
    const char *kv[2 * MAX_META_PAIRS];
    size_t n = 0;
    for (size_t i = 0; i < e->n_metadata && n < MAX_META_PAIRS; i++)
        if (e->metadata[i] && e->metadata[i]->key && e->metadata[i]->value) {
            kv[2 * n] = e->metadata[i]->key;
            kv[2 * n + 1] = e->metadata[i]->value;
            n++;
        }
    char *buf = malloc(PC_CRYPTO_MAX_PEM);
    if (!buf)
        return PULSARC_ERR_NOMEM;
    long len = d->app_reader(e->key, 1, kv, n, buf, PC_CRYPTO_MAX_PEM, d->app_opaque);
    pulsarc_err_t err;
    if (len == 0)
        err = PULSARC_ERR_NOT_FOUND;
    else if (len < 0 || (size_t)len > PC_CRYPTO_MAX_PEM)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                        "the key reader failed for private key %.64s (returned %ld)", e->key, len);
    else
        err = pc_crypto_key_from_pem(buf, (size_t)len, 1, e->key, out, errstr, errlen);
    OPENSSL_cleanse(buf, PC_CRYPTO_MAX_PEM);
    free(buf);
    return err;
}

/* Unwraps entry e's data key with our private key for its name.
 * NOT_FOUND when we have no key for that name. */
static pulsarc_err_t unwrap_entry(pc_decryptor_t *d, const Pulsar__Proto__EncryptionKeys *e,
                                  uint8_t *key, size_t *klen, char *errstr, size_t errlen) {
    const pc_crypto_key_t *priv = fixed_key(d, e->key);
    pc_crypto_key_t *read = NULL;
    if (!priv && (d->reader || d->app_reader)) {
        pulsarc_err_t err = d->reader ? d->reader(d->reader_ud, e->key, e->metadata,
                                                  e->n_metadata, &read, errstr, errlen)
                                      : ask_app(d, e, &read, errstr, errlen);
        if (err == PULSARC_OK && !read)
            err = PULSARC_ERR_NOT_FOUND;
        if (err)
            return err;
        priv = read;
    }
    if (!priv)
        return PULSARC_ERR_NOT_FOUND;
    pulsarc_err_t err =
        pc_crypto_unwrap(priv, e->value.data, e->value.len, key, MAX_DATA_KEY, klen, errstr,
                         errlen);
    pc_crypto_key_free(read);
    return err;
}

/* GCM with key k, reusing the context's key schedule when it holds k. */
static pulsarc_err_t open_with(pc_decryptor_t *d, const uint8_t *k, size_t klen,
                               const uint8_t *iv, const uint8_t *in, size_t len, pc_buf_t *out,
                               char *errstr, size_t errlen) {
    int same = d->gcm_key_len == klen && CRYPTO_memcmp(d->gcm_key, k, klen) == 0;
    if (!same)
        d->gcm_key_len = 0; /* until a set-up with k has worked */
    pulsarc_err_t err = pc_gcm_open(d->gcm, k, klen, same, iv, in, len, out, errstr, errlen);
    if (!err && !same && klen <= sizeof d->gcm_key) {
        memcpy(d->gcm_key, k, klen);
        d->gcm_key_len = klen;
    }
    return err;
}

static int entry_usable(const Pulsar__Proto__EncryptionKeys *e) {
    return e && e->key && strlen(e->key) <= PC_CRYPTO_MAX_NAME_LEN && e->value.data &&
           e->value.len > 0 && e->value.len <= PC_CRYPTO_MAX_WRAPPED_LEN;
}

/* Appends "name" to the list of names without a key, bounded. */
static void note_name(char *list, size_t cap, const char *name) {
    size_t used = strlen(list);
    if (used + 4 >= cap)
        return;
    snprintf(list + used, cap - used, "%s%.64s", used ? ", " : "", name);
}

pulsarc_err_t pc_decryptor_decrypt(pc_decryptor_t *d, const Pulsar__Proto__MessageMetadata *md,
                                   const uint8_t *in, size_t len, pc_buf_t *out, char *errstr,
                                   size_t errlen) {
    if (!d || !md || (!in && len) || !out)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "decrypt: NULL argument");
    if (!md->has_encryption_param || md->encryption_param.len != PC_CRYPTO_IV_LEN)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "encrypted message: encryption_param has %zu bytes, expected a %d-byte "
                         "GCM IV", md->has_encryption_param ? md->encryption_param.len : 0,
                         PC_CRYPTO_IV_LEN);
    if (md->n_encryption_keys == 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "encrypted message without encryption_keys");
    const uint8_t *iv = md->encryption_param.data;
    size_t n = md->n_encryption_keys < PC_CRYPTO_MAX_KEYS_TRIED ? md->n_encryption_keys
                                                                : PC_CRYPTO_MAX_KEYS_TRIED;
    static const uint8_t empty;
    if (!len)
        in = &empty;
    /* A data key seen before: no private-key work. */
    for (size_t i = 0; i < n; i++) {
        const Pulsar__Proto__EncryptionKeys *e = md->encryption_keys[i];
        cached_key_t *c = entry_usable(e) ? cache_find(d, &e->value) : NULL;
        if (c)
            return open_with(d, c->key, c->key_len, iv, in, len, out, errstr, errlen);
    }
    char missing[256] = "";
    char last[256] = "";
    for (size_t i = 0; i < n; i++) {
        const Pulsar__Proto__EncryptionKeys *e = md->encryption_keys[i];
        if (!entry_usable(e)) {
            snprintf(last, sizeof last, "encryption key entry %zu is empty or oversized", i);
            continue;
        }
        uint8_t key[MAX_DATA_KEY];
        size_t klen = 0;
        char why[256] = "";
        pulsarc_err_t err = unwrap_entry(d, e, key, &klen, why, sizeof why);
        if (err == PULSARC_ERR_NOT_FOUND) {
            note_name(missing, sizeof missing, e->key);
            continue;
        }
        if (err) {
            snprintf(last, sizeof last, "key %.64s: %s", e->key, why);
            continue;
        }
        cache_put(d, &e->value, key, klen);
        err = open_with(d, key, klen, iv, in, len, out, errstr, errlen);
        OPENSSL_cleanse(key, sizeof key);
        return err;
    }
    if (*last)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "cannot decrypt the message's data key: %s%s%s", last,
                         *missing ? "; no private key for: " : "", missing);
    return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                     "no private key for any of the message's encryption keys (%s)", missing);
}

pulsarc_err_t pc_decryptor_open(pc_decryptor_t *d, const Pulsar__Proto__MessageMetadata *md,
                                const uint8_t **data, size_t *len, char *errstr, size_t errlen) {
    if (!d)
        return pc_seterr(errstr, errlen, PULSARC_ERR_CRYPTO,
                         "the message is encrypted and no private key is configured "
                         "(cryptoPrivateKeyPath)");
    pulsarc_err_t err = pc_decryptor_decrypt(d, md, *data, *len, &d->opened, errstr, errlen);
    if (err)
        return err;
    *data = d->opened.data ? d->opened.data : (const uint8_t *)"";
    *len = d->opened.len;
    return PULSARC_OK;
}
