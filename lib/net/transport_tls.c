/*
 * Design notes: TLS over the connection's non-blocking socket, with
 * OpenSSL. One SSL_CTX per client (pc_tls_ctx_t: trust store, client
 * certificate, TLS 1.2 minimum) is built on the application thread in
 * pulsarc_client_new and only read afterwards; each connection owns one
 * SSL object, used on the loop thread only.
 *
 * The epoll loop drives everything: every OpenSSL call may answer
 * WANT_READ or WANT_WRITE (also SSL_read wanting to write, or SSL_write
 * wanting to read, e.g. on a TLS 1.3 key update), which we report as
 * PC_TX_AGAIN with the events to wait for. conn.c then retries both its
 * read and its write side on any event, so the cross cases need no state
 * here. Partial writes are on, so a large frame goes out record by record.
 *
 * Security defaults: the server certificate is always verified against the
 * trust store, and its name against the host we dialled (DNS names with
 * SSL_set1_host, IP literals with set1_ip_asc), unless the user turns
 * that off explicitly. SNI is sent for names only (RFC 6066 forbids IPs).
 *
 * Sockets go through a tiny BIO of our own that uses send(MSG_NOSIGNAL):
 * OpenSSL's socket BIO uses write(), which would raise SIGPIPE in the
 * application when a broker drops the connection.
 */
#include "net/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "core/err.h"

struct pc_tls_ctx {
    SSL_CTX *ctx;
    BIO_METHOD *bio_method;
    int verify_hostname;
    int allow_insecure;
};

typedef struct tls_transport {
    pc_transport_t base;
    SSL *ssl;
    int handshake_done;
} tls_transport_t;

/* ---------- the socket BIO ---------- */

static int bio_fd(BIO *b) { return (int)(intptr_t)BIO_get_data(b); }

static int bio_write(BIO *b, const char *data, int len) {
    BIO_clear_retry_flags(b);
    ssize_t n = send(bio_fd(b), data, (size_t)len, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_write(b);
    return (int)n;
}

static int bio_read(BIO *b, char *data, int len) {
    BIO_clear_retry_flags(b);
    ssize_t n = recv(bio_fd(b), data, (size_t)len, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_read(b);
    return (int)n;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr) {
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0; /* nothing is buffered here */
}

static int bio_create(BIO *b) {
    BIO_set_init(b, 1);
    return 1;
}

static BIO_METHOD *bio_method_new(void) {
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "pulsarc-socket");
    if (!m)
        return NULL;
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, bio_create);
    return m;
}

/* ---------- errors ---------- */

/* The newest OpenSSL error as text; OpenSSL's strings never hold key material. */
static const char *ssl_reason(char *buf, size_t len) {
    unsigned long e = ERR_peek_last_error();
    if (!e)
        return "unknown TLS error";
    const char *r = ERR_reason_error_string(e);
    if (r)
        snprintf(buf, len, "%s", r);
    else
        ERR_error_string_n(e, buf, len);
    return buf;
}

static pc_tx_status_t tls_fail(tls_transport_t *t, pulsarc_err_t code, const char *what) {
    char reason[160];
    long v = SSL_get_verify_result(t->ssl);
    t->base.errcode = code;
    if (!t->handshake_done && v != X509_V_OK)
        snprintf(t->base.err, sizeof t->base.err, "TLS %s failed: certificate verification: %s",
                 what, X509_verify_cert_error_string(v));
    else
        snprintf(t->base.err, sizeof t->base.err, "TLS %s failed: %s", what,
                 ssl_reason(reason, sizeof reason));
    ERR_clear_error();
    return PC_TX_ERR;
}

/* SSL_ERROR_SYSCALL: a socket error, or EOF where OpenSSL did not expect it. */
static pc_tx_status_t tls_syscall(tls_transport_t *t, const char *what) {
    int e = errno;
    if (ERR_peek_last_error())
        return tls_fail(t, PULSARC_ERR_TLS, what);
    if (e == 0 && t->handshake_done)
        return PC_TX_EOF;
    t->base.errcode = e ? PULSARC_ERR_DISCONNECTED : PULSARC_ERR_TLS;
    if (e)
        snprintf(t->base.err, sizeof t->base.err, "TLS %s failed: %s", what, strerror(e));
    else
        snprintf(t->base.err, sizeof t->base.err,
                 "the peer closed the connection during the TLS handshake");
    return PC_TX_ERR;
}

/* Maps the outcome of an SSL_* call (ok = its success flag). */
static pc_tx_status_t tls_status(tls_transport_t *t, int ok, int rc, const char *what) {
    if (ok)
        return PC_TX_OK;
    int e = SSL_get_error(t->ssl, rc);
    switch (e) {
    case SSL_ERROR_WANT_READ:
        t->base.want = EPOLLIN;
        return PC_TX_AGAIN;
    case SSL_ERROR_WANT_WRITE:
        t->base.want = EPOLLOUT;
        return PC_TX_AGAIN;
    case SSL_ERROR_ZERO_RETURN:
        return PC_TX_EOF;
    case SSL_ERROR_SYSCALL:
        return tls_syscall(t, what);
    case SSL_ERROR_SSL:
        if (t->handshake_done && ERR_GET_REASON(ERR_peek_last_error()) ==
                                     SSL_R_UNEXPECTED_EOF_WHILE_READING) {
            ERR_clear_error(); /* a broker that just closes the socket */
            return PC_TX_EOF;
        }
        return tls_fail(t, PULSARC_ERR_TLS, what);
    default:
        return tls_fail(t, PULSARC_ERR_TLS, what);
    }
}

/* ---------- the transport ---------- */

static pc_tx_status_t tls_handshake(pc_transport_t *base) {
    tls_transport_t *t = (tls_transport_t *)base;
    ERR_clear_error();
    errno = 0;
    int rc = SSL_do_handshake(t->ssl);
    pc_tx_status_t st = tls_status(t, rc == 1, rc, "handshake");
    if (st == PC_TX_OK)
        t->handshake_done = 1;
    return st;
}

static pc_tx_status_t tls_read(pc_transport_t *base, uint8_t *buf, size_t len, size_t *n) {
    tls_transport_t *t = (tls_transport_t *)base;
    ERR_clear_error();
    errno = 0;
    int rc = SSL_read_ex(t->ssl, buf, len, n);
    return tls_status(t, rc == 1, rc, "read");
}

static pc_tx_status_t tls_write(pc_transport_t *base, const uint8_t *buf, size_t len,
                                size_t *n) {
    tls_transport_t *t = (tls_transport_t *)base;
    ERR_clear_error();
    errno = 0;
    *n = 0;
    if (len == 0)
        return PC_TX_OK;
    int rc = SSL_write_ex(t->ssl, buf, len, n);
    return tls_status(t, rc == 1, rc, "write");
}

static void tls_free(pc_transport_t *base) {
    tls_transport_t *t = (tls_transport_t *)base;
    if (t->handshake_done) {
        SSL_shutdown(t->ssl); /* one best-effort close_notify; never waits */
        ERR_clear_error();
    }
    SSL_free(t->ssl);
    free(t);
}

/* No writev: SSL_write takes one buffer, so the connection copies what it
 * sends into one (as many small records would cost more than the copy). */
static const pc_transport_vt tls_vt = {tls_handshake, tls_read, tls_write, NULL, tls_free};

static int is_ip_literal(const char *host) {
    unsigned char a[16];
    return inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1;
}

/* What the server's certificate must name: host as an IP or as a DNS name. */
static int set_peer_identity(pc_tls_ctx_t *ctx, SSL *ssl, const char *host) {
    int ip = is_ip_literal(host);
    if (!ip && !SSL_set_tlsext_host_name(ssl, host))
        return 0;
    if (ctx->allow_insecure || !ctx->verify_hostname)
        return 1;
    if (ip)
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1;
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return SSL_set1_host(ssl, host) == 1;
}

pc_transport_t *pc_transport_tls_new(pc_tls_ctx_t *ctx, int fd, const char *host, char *err,
                                     size_t errlen) {
    char reason[160];
    tls_transport_t *t = calloc(1, sizeof *t);
    BIO *bio = NULL;
    ERR_clear_error();
    if (t && (t->ssl = SSL_new(ctx->ctx)) && (bio = BIO_new(ctx->bio_method))) {
        BIO_set_data(bio, (void *)(intptr_t)fd);
        SSL_set_bio(t->ssl, bio, bio); /* takes our one reference */
        SSL_set_connect_state(t->ssl);
        if (set_peer_identity(ctx, t->ssl, host)) {
            t->base.vt = &tls_vt;
            t->base.fd = fd;
            t->base.read_until_again = 1;
            return &t->base;
        }
    }
    pc_seterr(err, errlen, PULSARC_ERR_TLS, "TLS set-up for '%s' failed: %s", host,
              ssl_reason(reason, sizeof reason));
    if (t && t->ssl)
        SSL_free(t->ssl);
    else if (bio)
        BIO_free(bio);
    free(t);
    ERR_clear_error();
    return NULL;
}

/* ---------- the per-client context ---------- */

static pulsarc_err_t ctx_fail(char *err, size_t errlen, const char *what, const char *path) {
    char reason[160];
    pc_seterr(err, errlen, PULSARC_ERR_TLS, "%s '%s': %s", what, path,
              ssl_reason(reason, sizeof reason));
    ERR_clear_error();
    return PULSARC_ERR_TLS;
}

static pulsarc_err_t load_trust(SSL_CTX *ctx, const char *path, char *err, size_t errlen) {
    if (!path || !*path) {
        if (SSL_CTX_set_default_verify_paths(ctx) == 1)
            return PULSARC_OK;
        return ctx_fail(err, errlen, "cannot load the system trust store", "default");
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return pc_seterr(err, errlen, PULSARC_ERR_TLS, "tlsTrustCertsFilePath '%s': %s", path,
                         strerror(errno));
    int dir = S_ISDIR(st.st_mode);
    if (SSL_CTX_load_verify_locations(ctx, dir ? NULL : path, dir ? path : NULL) == 1)
        return PULSARC_OK;
    return ctx_fail(err, errlen, "cannot load trusted certificates from", path);
}

static pulsarc_err_t load_client_cert(SSL_CTX *ctx, const char *cert, const char *key,
                                      char *err, size_t errlen) {
    int has_cert = cert && *cert, has_key = key && *key;
    if (!has_cert && !has_key)
        return PULSARC_OK;
    if (has_cert != has_key)
        return pc_seterr(err, errlen, PULSARC_ERR_BAD_CONFIG,
                         "a TLS client certificate needs both a certificate file and a key file");
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
        return ctx_fail(err, errlen, "cannot load the client certificate", cert);
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
        return ctx_fail(err, errlen, "cannot load the client key", key);
    if (SSL_CTX_check_private_key(ctx) != 1)
        return ctx_fail(err, errlen, "the client key does not match the certificate", cert);
    return PULSARC_OK;
}

static pulsarc_err_t ctx_setup(pc_tls_ctx_t *c, const pc_tls_opts_t *o, char *err,
                               size_t errlen) {
    if (!c->ctx || !c->bio_method ||
        SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION) != 1)
        return ctx_fail(err, errlen, "cannot create a TLS context", "client");
    SSL_CTX_set_mode(c->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_verify(c->ctx, o->allow_insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
    pulsarc_err_t e = o->allow_insecure ? PULSARC_OK : load_trust(c->ctx, o->trust_certs, err, errlen);
    if (!e)
        e = load_client_cert(c->ctx, o->cert_file, o->key_file, err, errlen);
    return e;
}

pulsarc_err_t pc_tls_ctx_new(const pc_tls_opts_t *o, pc_tls_ctx_t **out, char *err,
                             size_t errlen) {
    *out = NULL;
    pc_tls_ctx_t *c = calloc(1, sizeof *c);
    if (!c)
        return pc_seterr(err, errlen, PULSARC_ERR_NOMEM, "out of memory");
    ERR_clear_error();
    c->ctx = SSL_CTX_new(TLS_client_method());
    c->bio_method = bio_method_new();
    c->verify_hostname = o->verify_hostname;
    c->allow_insecure = o->allow_insecure;
    pulsarc_err_t e = ctx_setup(c, o, err, errlen);
    if (e) {
        pc_tls_ctx_free(c);
        return e;
    }
    *out = c;
    return PULSARC_OK;
}

void pc_tls_ctx_free(pc_tls_ctx_t *c) {
    if (!c)
        return;
    SSL_CTX_free(c->ctx);
    if (c->bio_method)
        BIO_meth_free(c->bio_method);
    free(c);
}
