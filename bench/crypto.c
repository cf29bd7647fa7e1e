/*
 * bench/crypto.c — cost of end-to-end encryption (lib/crypto), in memory:
 * per payload size, ns per message and MB/s to encrypt (producer side:
 * fresh IV, AES-256-GCM, metadata filled) and to decrypt with the data
 * key already unwrapped (consumer side, the steady state); then the
 * once-per-data-key costs, wrapping and unwrapping for RSA-2048 and EC
 * P-256 (Bouncy Castle ECIES). Printed, never asserted.
 *
 * Usage: crypto [messages per size, default 20000]
 */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto/crypto.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static pc_crypto_key_t *gen(const char *type, const char *curve, int priv, pc_crypto_key_t **pub) {
    EVP_PKEY *k = curve ? EVP_PKEY_Q_keygen(NULL, NULL, type, curve)
                        : EVP_PKEY_Q_keygen(NULL, NULL, type, (size_t)2048);
    BIO *b = BIO_new(BIO_s_mem()), *c = BIO_new(BIO_s_mem());
    PEM_write_bio_PUBKEY(b, k);
    PEM_write_bio_PrivateKey(c, k, NULL, NULL, 0, NULL, NULL);
    BUF_MEM *mb, *mc;
    BIO_get_mem_ptr(b, &mb);
    BIO_get_mem_ptr(c, &mc);
    pc_crypto_key_t *out = NULL;
    char err[256];
    if (pc_crypto_key_from_pem(mb->data, mb->length, 0, "bench", pub, err, sizeof err) ||
        pc_crypto_key_from_pem(mc->data, mc->length, 1, "bench", &out, err, sizeof err)) {
        fprintf(stderr, "crypto bench: %s\n", err);
        exit(1);
    }
    (void)priv;
    BIO_free(b);
    BIO_free(c);
    EVP_PKEY_free(k);
    return out;
}

static void payload_rows(int n) {
    pc_crypto_key_t *pub, *priv = gen("EC", "P-256", 1, &pub);
    pc_encryptor_t *e;
    pc_decryptor_t *d;
    char err[256];
    if (pc_encryptor_new(&e, err, sizeof err) || pc_decryptor_new(&d, err, sizeof err) ||
        pc_encryptor_add_key(e, "k", pub, NULL, 0, err, sizeof err) ||
        pc_decryptor_add_key(d, "k", priv, err, sizeof err)) {
        fprintf(stderr, "crypto bench: %s\n", err);
        exit(1);
    }
    static const size_t sizes[] = {100, 1024, 16384, 131072};
    printf("%-10s %14s %12s %14s %12s\n", "payload", "encrypt ns/msg", "encrypt MB/s",
           "decrypt ns/msg", "decrypt MB/s");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t len = sizes[s];
        int count = len >= 16384 ? n / 10 : n;
        uint8_t *plain = calloc(1, len), iv[PC_CRYPTO_IV_LEN];
        pc_buf_t ct, pt;
        pc_buf_init(&ct, 0);
        pc_buf_init(&pt, 0);
        Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
        double t0 = now_ns();
        for (int i = 0; i < count; i++)
            pc_encryptor_encrypt(e, &md, iv, plain, len, &ct, err, sizeof err);
        double t1 = now_ns();
        for (int i = 0; i < count; i++)
            if (pc_decryptor_decrypt(d, &md, ct.data, ct.len, &pt, err, sizeof err)) {
                fprintf(stderr, "crypto bench: %s\n", err);
                exit(1);
            }
        double t2 = now_ns();
        double enc = (t1 - t0) / count, dec = (t2 - t1) / count;
        printf("%-10zu %14.0f %12.0f %14.0f %12.0f\n", len, enc, (double)len / enc * 1e3, dec,
               (double)len / dec * 1e3);
        free(plain);
        pc_buf_free(&ct);
        pc_buf_free(&pt);
    }
    pc_encryptor_free(e);
    pc_decryptor_free(d);
}

static void wrap_row(const char *label, const char *type, const char *curve, int n) {
    pc_crypto_key_t *pub, *priv = gen(type, curve, 1, &pub);
    uint8_t dk[32] = {1}, back[64];
    size_t blen;
    pc_buf_t w;
    pc_buf_init(&w, 0);
    char err[256];
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        w.len = 0;
        pc_crypto_wrap(pub, dk, sizeof dk, &w, err, sizeof err);
    }
    double t1 = now_ns();
    for (int i = 0; i < n; i++)
        if (pc_crypto_unwrap(priv, w.data, w.len, back, sizeof back, &blen, err, sizeof err)) {
            fprintf(stderr, "crypto bench: %s\n", err);
            exit(1);
        }
    double t2 = now_ns();
    printf("%-16s %10.1f %12.1f %10zu\n", label, (t1 - t0) / n / 1e3, (t2 - t1) / n / 1e3, w.len);
    pc_buf_free(&w);
    pc_crypto_key_free(pub);
    pc_crypto_key_free(priv);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    if (n < 10)
        n = 10;
    printf("end-to-end encryption, in memory (%d messages per size, EC P-256 recipient)\n", n);
    payload_rows(n);
    printf("\nper data key (once per producer and rotation; consumer once per new key)\n");
    printf("%-16s %10s %12s %10s\n", "key", "wrap us", "unwrap us", "bytes");
    wrap_row("RSA-2048 OAEP", "RSA", NULL, 200);
    wrap_row("EC P-256 ECIES", "EC", "P-256", 200);
    return 0;
}
