/*
 * The byte stream under a connection: plain TCP or TLS over it. conn.c
 * reads and writes only through this interface, so it never knows whether
 * the bytes are encrypted. Loop thread only.
 */
#ifndef PC_TRANSPORT_H
#define PC_TRANSPORT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "pulsarc.h"

typedef enum {
    PC_TX_OK,    /* progress made (*n bytes, or the handshake finished) */
    PC_TX_AGAIN, /* would block: wait for t->want (EPOLLIN and/or EPOLLOUT) */
    PC_TX_EOF,   /* the peer closed the stream cleanly */
    PC_TX_ERR    /* failed: t->err says why, t->errcode classifies it */
} pc_tx_status_t;

typedef struct pc_transport pc_transport_t;

typedef struct pc_transport_vt {
    pc_tx_status_t (*handshake)(pc_transport_t *t);
    pc_tx_status_t (*read)(pc_transport_t *t, uint8_t *buf, size_t len, size_t *n);
    pc_tx_status_t (*write)(pc_transport_t *t, const uint8_t *buf, size_t len, size_t *n);
    /* Optional (NULL: the caller copies the pieces into one buffer and uses
     * write): one write of cnt pieces in order, *n bytes taken in all. */
    pc_tx_status_t (*writev)(pc_transport_t *t, const struct iovec *iov, int cnt, size_t *n);
    void (*free)(pc_transport_t *t);
} pc_transport_vt;

struct pc_transport {
    const pc_transport_vt *vt;
    int fd;                 /* borrowed: conn.c owns and closes the socket */
    uint32_t want;          /* after AGAIN: the epoll events that let it progress */
    int read_until_again;   /* 1: data may sit decrypted inside the transport,
                               so a reader must loop until AGAIN, not stop at a
                               short read (TLS records, SSL_pending) */
    pulsarc_err_t errcode;  /* after ERR */
    char err[256];          /* after ERR; never holds secrets */
};

static inline pc_tx_status_t pc_tx_handshake(pc_transport_t *t) { return t->vt->handshake(t); }
static inline pc_tx_status_t pc_tx_read(pc_transport_t *t, uint8_t *b, size_t l, size_t *n) {
    return t->vt->read(t, b, l, n);
}
static inline pc_tx_status_t pc_tx_write(pc_transport_t *t, const uint8_t *b, size_t l,
                                         size_t *n) {
    return t->vt->write(t, b, l, n);
}
static inline pc_tx_status_t pc_tx_writev(pc_transport_t *t, const struct iovec *iov, int cnt,
                                          size_t *n) {
    return t->vt->writev(t, iov, cnt, n);
}
static inline int pc_tx_can_writev(const pc_transport_t *t) { return t->vt->writev != NULL; }
static inline void pc_tx_free(pc_transport_t *t) {
    if (t)
        t->vt->free(t);
}

/* Plain TCP on a connected non-blocking socket. */
pc_transport_t *pc_transport_tcp_new(int fd);

/*
 * TLS settings shared by every connection of a client (one SSL_CTX).
 * Built on an application thread in pulsarc_client_new, read-only after.
 */
typedef struct pc_tls_ctx pc_tls_ctx_t;

typedef struct pc_tls_opts {
    const char *trust_certs;  /* PEM file or directory; NULL/"": system store */
    const char *cert_file;    /* client certificate (mTLS), or NULL */
    const char *key_file;     /* its private key, or NULL */
    int verify_hostname;      /* check the server name / IP against the cert */
    int allow_insecure;       /* accept any server certificate */
} pc_tls_opts_t;

/* PULSARC_ERR_UNSUPPORTED when built with WITH_TLS=0. */
pulsarc_err_t pc_tls_ctx_new(const pc_tls_opts_t *o, pc_tls_ctx_t **out, char *err, size_t errlen);
void pc_tls_ctx_free(pc_tls_ctx_t *ctx);
/* A TLS client stream on fd towards host (the name checked and sent as SNI). */
pc_transport_t *pc_transport_tls_new(pc_tls_ctx_t *ctx, int fd, const char *host, char *err,
                                     size_t errlen);
#endif
