/*
 * Design notes: getaddrinfo() blocks, so each resolution runs on its own
 * detached thread and hands the result back with pc_loop_post_held(); the
 * loop's hold guarantees the result is delivered even during shutdown, so
 * the callback runs exactly once and nothing leaks. Connections are
 * pooled, so resolutions are rare. A threadless loop (threadingMode=loop)
 * gets no thread: the lookup runs inline, on the stepping thread, and the
 * result is still handed back through a post so the callback never runs
 * inside pc_resolve_start.
 */
#include "net/resolve.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef struct job {
    pc_loop_t *loop;
    char host[256];
    char port[8];
    pc_resolve_cb cb;
    void *arg;
    struct addrinfo *res;
    char error[128];
} job_t;

static void deliver(void *arg) {
    job_t *j = arg;
    j->cb(j->arg, j->res, j->res ? NULL : j->error);
    pc_loop_unref(j->loop);
    free(j);
}

static void *resolve_main(void *arg) {
    job_t *j = arg;
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    int rc = getaddrinfo(j->host, j->port, &hints, &j->res);
    if (rc == EAI_BADFLAGS || (rc && !j->res)) { /* retry without ADDRCONFIG (loopback-only hosts) */
        hints.ai_flags = 0;
        rc = getaddrinfo(j->host, j->port, &hints, &j->res);
    }
    if (rc) {
        j->res = NULL;
        snprintf(j->error, sizeof j->error, "%s", gai_strerror(rc));
    }
    pc_loop_post_held(j->loop, deliver, j);
    return NULL;
}

void pc_resolve_start(pc_loop_t *loop, const char *host, uint16_t port, pc_resolve_cb cb,
                      void *arg) {
    job_t *j = calloc(1, sizeof *j);
    if (!j) {
        cb(arg, NULL, "out of memory");
        return;
    }
    j->loop = loop;
    snprintf(j->host, sizeof j->host, "%s", host);
    snprintf(j->port, sizeof j->port, "%u", port);
    j->cb = cb;
    j->arg = arg;
    pc_loop_ref(loop);
    pc_loop_hold(loop);
    if (pc_loop_threadless(loop)) {
        resolve_main(j);
        return;
    }
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, resolve_main, j)) {
        snprintf(j->error, sizeof j->error, "could not start a resolver thread");
        pc_loop_post_held(loop, deliver, j);
    }
    pthread_attr_destroy(&attr);
}
