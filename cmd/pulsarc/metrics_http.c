/*
 * Design notes: --metrics-port. A long-running verb (consume, read) serves
 * pulsarc_client_metrics as Prometheus text on 127.0.0.1 only, so a
 * scraper on the same machine can watch it. One thread of its own accepts
 * one connection at a time and answers any GET with the current text; the
 * verb's thread only starts and stops it. Stopping shuts the listening
 * socket down, which wakes the blocked accept: no polling.
 *
 *  - A request is read until its blank line, at most 8 KiB and 2 s per
 *    read; anything else than GET gets 405. One scrape at a time is plenty
 *    for a scraper and keeps memory bounded.
 *  - Port 0 lets the system pick one; the port is printed on stderr either way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"

struct cli_metrics_server {
    pulsarc_client_t *client;
    int fd;
    atomic_int stopping;
    pthread_t thread;
};

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0 && errno != EINTR)
            return; /* the scraper went away: nothing to do */
        if (w > 0)
            p += w, n -= (size_t)w;
    }
}

/* Reads the request head; 1 when it is a GET. */
static int read_request(int fd) {
    char buf[8192];
    size_t len = 0;
    while (len < sizeof buf - 1) {
        ssize_t r = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (r <= 0)
            return 0;
        len += (size_t)r;
        buf[len] = '\0';
        if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
            break;
    }
    return len >= 4 && !memcmp(buf, "GET ", 4);
}

static void answer(cli_metrics_server_t *s, int fd) {
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    char head[256];
    if (!read_request(fd)) {
        static const char bad[] = "HTTP/1.0 405 Method Not Allowed\r\nContent-Length: 0\r\n"
                                  "Connection: close\r\n\r\n";
        write_all(fd, bad, sizeof bad - 1);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    if (pulsarc_client_metrics(s->client, &text, &len) != PULSARC_OK) {
        static const char err[] = "HTTP/1.0 500 Internal Server Error\r\nContent-Length: 0\r\n"
                                  "Connection: close\r\n\r\n";
        write_all(fd, err, sizeof err - 1);
        return;
    }
    int n = snprintf(head, sizeof head,
                     "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n", len);
    write_all(fd, head, (size_t)n);
    write_all(fd, text, len);
    pulsarc_metrics_free(text);
}

static void *serve(void *arg) {
    cli_metrics_server_t *s = arg;
    while (!atomic_load(&s->stopping)) {
        int fd = accept(s->fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            break; /* shut down by cli_metrics_stop, or broken */
        }
        answer(s, fd);
        close(fd);
    }
    return NULL;
}

int cli_metrics_serve(const char *prog, pulsarc_client_t *client, int64_t port,
                      cli_metrics_server_t **out) {
    *out = NULL;
    if (port < 0)
        return 0; /* not asked for */
    cli_metrics_server_t *s = calloc(1, sizeof *s);
    if (!s)
        return cli_fail(prog, CLI_EXIT_RUNTIME, "out of memory");
    s->client = client;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int one = 1;
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(s->fd, (struct sockaddr *)&a, sizeof a) || listen(s->fd, 8) ||
        getsockname(s->fd, (struct sockaddr *)&a, &alen)) {
        int e = errno;
        if (s->fd >= 0)
            close(s->fd);
        free(s);
        return cli_fail(prog, CLI_EXIT_RUNTIME, "--metrics-port %lld: cannot listen on 127.0.0.1: %s",
                        (long long)port, strerror(e));
    }
    if (pthread_create(&s->thread, NULL, serve, s)) {
        close(s->fd);
        free(s);
        return cli_fail(prog, CLI_EXIT_RUNTIME, "cannot start the metrics thread");
    }
    fprintf(stderr, "%s: metrics on http://127.0.0.1:%u/metrics\n", prog, ntohs(a.sin_port));
    *out = s;
    return 0;
}

void cli_metrics_stop(cli_metrics_server_t *s) {
    if (!s)
        return;
    atomic_store(&s->stopping, 1);
    shutdown(s->fd, SHUT_RDWR); /* wakes the accept */
    pthread_join(s->thread, NULL);
    close(s->fd);
    free(s);
}
