/*
 * Design notes: the plain transport is send()/recv() on the connection's
 * non-blocking socket (sendmsg() for pieces gathered from several places,
 * so they need not be copied together first); it has no handshake and
 * buffers nothing, so a short read means the socket is drained. It also holds the TLS entry points of a
 * build without OpenSSL (WITH_TLS=0), which refuse with UNSUPPORTED.
 * Loop thread only.
 */
#include "net/transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "core/err.h"

static pc_tx_status_t tcp_fail(pc_transport_t *t, const char *what, int e) {
    t->errcode = PULSARC_ERR_DISCONNECTED;
    snprintf(t->err, sizeof t->err, "%s failed: %s", what, strerror(e));
    return PC_TX_ERR;
}

static pc_tx_status_t tcp_handshake(pc_transport_t *t) {
    (void)t;
    return PC_TX_OK;
}

static pc_tx_status_t tcp_read(pc_transport_t *t, uint8_t *buf, size_t len, size_t *n) {
    for (;;) {
        ssize_t r = recv(t->fd, buf, len, 0);
        if (r > 0) {
            *n = (size_t)r;
            return PC_TX_OK;
        }
        if (r == 0)
            return PC_TX_EOF;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            t->want = EPOLLIN;
            return PC_TX_AGAIN;
        }
        return tcp_fail(t, "read", errno);
    }
}

static pc_tx_status_t tcp_writev(pc_transport_t *t, const struct iovec *iov, int cnt, size_t *n) {
    struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt};
    for (;;) {
        ssize_t r = sendmsg(t->fd, &m, MSG_NOSIGNAL); /* writev would raise SIGPIPE */
        if (r >= 0) {
            *n = (size_t)r;
            return PC_TX_OK;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            t->want = EPOLLOUT;
            return PC_TX_AGAIN;
        }
        return tcp_fail(t, "write", errno);
    }
}

static pc_tx_status_t tcp_write(pc_transport_t *t, const uint8_t *buf, size_t len, size_t *n) {
    struct iovec one = {.iov_base = (void *)buf, .iov_len = len};
    return tcp_writev(t, &one, 1, n);
}

static void tcp_free(pc_transport_t *t) { free(t); }

static const pc_transport_vt tcp_vt = {tcp_handshake, tcp_read, tcp_write, tcp_writev, tcp_free};

pc_transport_t *pc_transport_tcp_new(int fd) {
    pc_transport_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->vt = &tcp_vt;
    t->fd = fd;
    return t;
}

#ifndef PULSARC_WITH_TLS
pulsarc_err_t pc_tls_ctx_new(const pc_tls_opts_t *o, pc_tls_ctx_t **out, char *err,
                             size_t errlen) {
    (void)o;
    *out = NULL;
    return pc_seterr(err, errlen, PULSARC_ERR_UNSUPPORTED,
                     "TLS (pulsar+ssl://) is not available: pulsarc was built with WITH_TLS=0");
}

void pc_tls_ctx_free(pc_tls_ctx_t *ctx) { (void)ctx; }

pc_transport_t *pc_transport_tls_new(pc_tls_ctx_t *ctx, int fd, const char *host, char *err,
                                     size_t errlen) {
    (void)ctx;
    (void)fd;
    (void)host;
    pc_seterr(err, errlen, PULSARC_ERR_UNSUPPORTED, "TLS is not built in");
    return NULL;
}
#endif
