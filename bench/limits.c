/*
 * limits — the physical limits of this machine that bound the fetch path
 * (measured first, so the client's figures can be read against them).
 *
 * Design notes
 *  - memcpy: a DRAM-sized copy (64 MiB buffers) and a cache-resident one
 *    (256 KiB, roughly what the kernel->user copy of a socket read touches).
 *  - CRC32C: lib/core/crc32c.h, pc_crc32c (SSE4.2 when present) and
 *    pc_crc32c_sw (table), over 64 KiB blocks (a Pulsar entry's size class).
 *  - Loopback TCP: a writer thread and a reader thread over 127.0.0.1,
 *    1 GiB, with the reader's buffer at 64 KiB (the client's READ_CHUNK) and
 *    at 1 MiB; recv calls and bytes per recv are reported.
 *  - Each row also prints ns per 112-byte message (100 B payload + batch
 *    framing), the unit the client's per-message cost is compared in.
 *  - Wall-clock over several repetitions, best kept: on a shared 2-core
 *    machine the best run is the closest to the hardware's limit.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/crc32c.h"

#define MSG_BYTES 112.0
#define REPS 3

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;

static void row(const char *what, double bytes, double secs, const char *note) {
    double gbs = bytes / secs / 1e9;
    printf("| %-34s | %8.2f | %9.2f | %s\n", what, gbs, MSG_BYTES / gbs, note);
}

/* ---------- memcpy ---------- */

static double time_memcpy(size_t size, size_t total) {
    uint8_t *a = malloc(size), *b = malloc(size);
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    memset(a, 1, size);
    memset(b, 2, size); /* fault the pages in before timing */
    double best = 1e9;
    for (int r = 0; r < REPS; r++) {
        double t = now_s();
        for (size_t done = 0; done < total; done += size) {
            memcpy(b, a, size);
            __asm__ volatile("" ::"r"(b) : "memory");
        }
        double d = now_s() - t;
        best = d < best ? d : best;
    }
    sink += b[size / 2];
    free(a);
    free(b);
    return best;
}

/* ---------- CRC32C ---------- */

static double time_crc(uint32_t (*fn)(uint32_t, const void *, size_t), size_t total) {
    size_t block = 64 * 1024;
    uint8_t *buf = malloc(block);
    if (!buf)
        return 0;
    for (size_t i = 0; i < block; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    double best = 1e9;
    uint32_t crc = 0;
    for (int r = 0; r < REPS; r++) {
        double t = now_s();
        for (size_t done = 0; done < total; done += block)
            crc = fn(crc, buf, block);
        double d = now_s() - t;
        best = d < best ? d : best;
    }
    sink += crc;
    free(buf);
    return best;
}

/* ---------- loopback TCP ---------- */

typedef struct tcp_run {
    int fd;
    size_t total, chunk;
    uint64_t calls;
} tcp_run_t;

static void *writer(void *arg) {
    tcp_run_t *w = arg;
    uint8_t *buf = calloc(1, w->chunk);
    for (size_t done = 0; buf && done < w->total;) {
        ssize_t n = send(w->fd, buf, w->chunk < w->total - done ? w->chunk : w->total - done, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    free(buf);
    shutdown(w->fd, SHUT_WR);
    return NULL;
}

static void *reader(void *arg) {
    tcp_run_t *r = arg;
    uint8_t *buf = malloc(r->chunk);
    size_t got = 0;
    for (;;) {
        ssize_t n = buf ? recv(r->fd, buf, r->chunk, 0) : -1;
        if (n <= 0)
            break;
        got += (size_t)n;
        r->calls++;
    }
    r->total = got;
    free(buf);
    return NULL;
}

/* A connected pair over 127.0.0.1; 0 on success. */
static int tcp_pair(int fds[2]) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&a, &al))
        return -1;
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fds[0], (struct sockaddr *)&a, sizeof a))
        return -1;
    fds[1] = accept(l, NULL, NULL);
    close(l);
    return fds[1] < 0 ? -1 : 0;
}

static double time_tcp(size_t total, size_t rchunk, uint64_t *calls, size_t *got) {
    int fds[2];
    if (tcp_pair(fds))
        return 0;
    tcp_run_t w = {fds[0], total, 256 * 1024, 0}, r = {fds[1], 0, rchunk, 0};
    pthread_t tw, tr;
    double t = now_s();
    pthread_create(&tr, NULL, reader, &r);
    pthread_create(&tw, NULL, writer, &w);
    pthread_join(tw, NULL);
    pthread_join(tr, NULL);
    double d = now_s() - t;
    close(fds[0]);
    close(fds[1]);
    *calls = r.calls;
    *got = r.total;
    return d;
}

static void tcp_row(size_t total, size_t rchunk) {
    uint64_t calls = 0;
    size_t got = 0;
    double d = time_tcp(total, rchunk, &calls, &got);
    char what[64], note[96];
    snprintf(what, sizeof what, "loopback TCP, 1 flow, recv %zu KiB", rchunk / 1024);
    snprintf(note, sizeof note, "%llu recv calls, %.1f KiB/recv, %zu MiB moved",
             (unsigned long long)calls, calls ? got / 1024.0 / calls : 0.0, got >> 20);
    if (d > 0 && got == total)
        row(what, (double)got, d, note);
    else
        printf("| %-34s | failed\n", what);
}

int main(int argc, char **argv) {
    double scale = argc > 1 ? atof(argv[1]) : 1.0; /* shrink or grow every run */
    if (scale <= 0)
        scale = 1.0;
    size_t gib = (size_t)(1024.0 * 1024 * 1024 * scale);
    printf("| %-34s | %8s | %9s | %s\n", "operation", "GB/s", "ns/112B", "notes");
    printf("|%s|%s|%s|%s\n", "------------------------------------", "----------", "-----------",
           "------");
    row("memcpy 64 MiB buffers (DRAM)", 2.0 * gib, time_memcpy(64u << 20, 2 * gib), "best of 3");
    row("memcpy 256 KiB buffers (cache)", 4.0 * gib, time_memcpy(256u << 10, 4 * gib), "best of 3");
    char note[64];
    snprintf(note, sizeof note, "64 KiB blocks, %s", pc_crc32c_hw_active() ? "SSE4.2 in use" : "no SSE4.2: table");
    row("crc32c pc_crc32c", 2.0 * gib, time_crc(pc_crc32c, 2 * gib), note);
    row("crc32c pc_crc32c_sw (table)", gib / 4.0, time_crc(pc_crc32c_sw, gib / 4), "64 KiB blocks");
    tcp_row(gib, 64 * 1024);
    tcp_row(gib, 1024 * 1024);
    return (int)(sink & 0);
}
