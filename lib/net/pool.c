/*
 * Design notes: the pool owns one reference to every live connection and
 * forgets a connection as soon as it closes (via the close hook), so the
 * next request opens a fresh one. Keys include the logical broker because a
 * proxy needs one TCP connection per target broker. Loop thread only.
 */
#include "net/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *next;
    char key[600];
    pc_conn_t *conn;
} entry_t;

struct pc_pool {
    pc_loop_t *loop;
    pc_conn_opts_t opts;
    entry_t *entries;
};

pc_pool_t *pc_pool_new(pc_loop_t *loop, const pc_conn_opts_t *opts) {
    pc_pool_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->loop = loop;
    p->opts = *opts; /* strings stay owned by the client, which outlives the pool */
    return p;
}

static void on_conn_closed(void *arg, pc_conn_t *c) {
    pc_pool_t *p = arg;
    for (entry_t **pp = &p->entries; *pp; pp = &(*pp)->next) {
        if ((*pp)->conn == c) {
            entry_t *e = *pp;
            *pp = e->next;
            pc_conn_unref(e->conn);
            free(e);
            return;
        }
    }
}

static pc_conn_t *conn_new_flagged(pc_pool_t *p, const char *host, uint16_t port,
                                   const char *proxy_to, int flags) {
    pc_conn_opts_t o = p->opts;
    o.partial_producer = (flags & PC_CONN_F_PARTIAL_PRODUCER) != 0;
    return pc_conn_new(p->loop, &o, host, port, proxy_to);
}

static entry_t *find(pc_pool_t *p, const char *key) {
    for (entry_t *e = p->entries; e; e = e->next)
        if (strcmp(e->key, key) == 0 && !pc_conn_is_closed(e->conn))
            return e;
    return NULL;
}

void pc_pool_get(pc_pool_t *p, const char *host, uint16_t port, const char *proxy_to,
                 pc_conn_ready_cb cb, void *arg) {
    pc_pool_get_ex(p, host, port, proxy_to, 0, cb, arg);
}

void pc_pool_get_ex(pc_pool_t *p, const char *host, uint16_t port, const char *proxy_to, int flags,
                    pc_conn_ready_cb cb, void *arg) {
    char key[600];
    snprintf(key, sizeof key, "%s:%u|%s|%d", host, port, proxy_to ? proxy_to : "", flags);
    entry_t *e = find(p, key);
    if (!e) {
        e = calloc(1, sizeof *e);
        pc_conn_t *c = e ? conn_new_flagged(p, host, port, proxy_to, flags) : NULL;
        if (!c) {
            free(e);
            cb(arg, NULL, PULSARC_ERR_NOMEM, "out of memory");
            return;
        }
        snprintf(e->key, sizeof e->key, "%s", key);
        e->conn = c;
        e->next = p->entries;
        p->entries = e;
        pc_conn_set_close_hook(c, on_conn_closed, p);
    }
    pc_conn_when_ready(e->conn, cb, arg);
}

void pc_pool_close_all(pc_pool_t *p, pulsarc_err_t why, const char *reason) {
    while (p->entries)
        pc_conn_close(p->entries->conn, why, reason); /* the hook unlinks it */
}

void pc_pool_free(pc_pool_t *p) {
    if (!p)
        return;
    while (p->entries) {
        entry_t *e = p->entries;
        p->entries = e->next;
        pc_conn_set_close_hook(e->conn, NULL, NULL);
        pc_conn_unref(e->conn);
        free(e);
    }
    free(p);
}
