/*
 * Writer-thread CPU per record when a batch of records (a 16-byte head and
 * a payload each) goes to a loopback TCP socket (a) copied into one buffer
 * and sent, as the connection does for small pieces, or (b) gathered with
 * sendmsg over the head and the payload in place (up to 512 pieces a call).
 * A reader thread drains the socket; only the writer's CPU is counted
 * (RUSAGE_THREAD: user + system, the kernel's copy into the socket
 * included, which callgrind does not see). The connection's borrowing
 * threshold (lib/net/conn.c, BORROW_MIN) is where (b) starts to win. The
 * payloads here sit in cache, which favours copying. CPU time on a shared
 * machine is noisy: the best of five runs is printed.
 *
 *   build/bench/gather [MiB per size (2048)]
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define BATCH_BYTES (256 * 1024)
#define HEAD 16
#define MAXIOV 512

static void *drain(void *arg) {
    int fd = *(int *)arg;
    static char buf[1 << 20];
    while (read(fd, buf, sizeof buf) > 0)
        ;
    return NULL;
}

static double thread_cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static void send_all(int fd, const uint8_t *p, size_t n) {
    while (n) {
        ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
        if (r <= 0) { perror("send"); exit(1); }
        p += r; n -= (size_t)r;
    }
}

static void sendmsg_all(int fd, struct iovec *iov, int cnt) {
    while (cnt) {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)cnt};
        ssize_t r = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (r <= 0) { perror("sendmsg"); exit(1); }
        size_t n = (size_t)r;
        while (cnt && n >= iov->iov_len) { n -= iov->iov_len; iov++; cnt--; }
        if (cnt) { iov->iov_base = (char *)iov->iov_base + n; iov->iov_len -= n; }
    }
}

/* ns of writer CPU per record for total_bytes of records of size sz. */
static double run(int fd, size_t sz, int gathered, size_t total_bytes) {
    size_t per_batch = BATCH_BYTES / (sz + HEAD);
    if (per_batch < 1) per_batch = 1;
    uint8_t **payloads = malloc(per_batch * sizeof *payloads);
    uint8_t *heads = malloc(per_batch * HEAD);
    for (size_t i = 0; i < per_batch; i++) {
        payloads[i] = malloc(sz);
        memset(payloads[i], (int)i, sz);
    }
    memset(heads, 7, per_batch * HEAD);
    uint8_t *buf = malloc(per_batch * (sz + HEAD));
    struct iovec *iov = malloc(2 * per_batch * sizeof *iov);
    size_t records = 0;
    double t0 = thread_cpu_s();
    for (size_t done = 0; done < total_bytes; done += per_batch * (sz + HEAD)) {
        if (!gathered) {
            size_t off = 0;
            for (size_t i = 0; i < per_batch; i++) {
                memcpy(buf + off, heads + i * HEAD, HEAD); off += HEAD;
                memcpy(buf + off, payloads[i], sz); off += sz;
            }
            send_all(fd, buf, off);
        } else {
            int cnt = 0;
            for (size_t i = 0; i < per_batch; i++) {
                iov[cnt++] = (struct iovec){heads + i * HEAD, HEAD};
                iov[cnt++] = (struct iovec){payloads[i], sz};
            }
            for (int at = 0; at < cnt; at += MAXIOV)
                sendmsg_all(fd, iov + at, cnt - at < MAXIOV ? cnt - at : MAXIOV);
        }
        records += per_batch;
    }
    double ns = (thread_cpu_s() - t0) * 1e9 / (double)records;
    for (size_t i = 0; i < per_batch; i++) free(payloads[i]);
    free(payloads); free(heads); free(buf); free(iov);
    return ns;
}

int main(int argc, char **argv) {
    size_t total = (argc > 1 ? (size_t)atol(argv[1]) : 2048) << 20; /* MiB per run */
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    int w = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0 || w < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) ||
        getsockname(ls, (struct sockaddr *)&a, &al) || connect(w, (struct sockaddr *)&a, sizeof a)) {
        perror("loopback socket");
        return 1;
    }
    int r = accept(ls, NULL, NULL);
    setsockopt(w, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pthread_t th;
    pthread_create(&th, NULL, drain, &r);
    size_t sizes[] = {256, 512, 1024, 2048, 4096, 16384};
    printf("| payload B | copied+send ns/record | sendmsg ns/record | (best of 5, writer thread CPU) |\n");
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        double bc = 1e18, bg = 1e18;
        for (int rep = 0; rep < 5; rep++) {
            double c = run(w, sizes[k], 0, total / 5), g = run(w, sizes[k], 1, total / 5);
            if (c < bc) bc = c;
            if (g < bg) bg = g;
        }
        printf("| %9zu | %20.1f | %17.1f |\n", sizes[k], bc, bg);
    }
    shutdown(w, SHUT_WR);
    pthread_join(th, NULL);
    return 0;
}
