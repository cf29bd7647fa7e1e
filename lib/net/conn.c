/*
 * Design notes: a connection owns one socket and everything that is per
 * socket in the protocol: the CONNECT/CONNECTED handshake, PING/PONG,
 * request-id correlation (each request with its own timer), and routing of
 * unsolicited frames to the producer or consumer attached under an id.
 * Frames are appended to one write queue and written at the end of the
 * loop turn that queued them, so a burst costs one syscall, not one each.
 * Large pieces a producer sends from its own memory (message payloads) are
 * borrowed, not copied, where the transport gathers (plain TCP: one
 * sendmsg over the pieces; TLS copies, SSL_write taking one buffer). A
 * piece is borrowed until the write that ends its turn: what that write
 * leaves is copied then, and a connection that fails or closes drops it.
 * Within the turn its owner may still free it (a send timeout, a closing
 * producer), so before freeing lent memory it asks every connection of the
 * thread to copy what it borrows (pc_conn_copy_borrowed): those borrowing
 * are on a thread-local list, empty between turns.
 *
 * Bytes go through a transport (transport.h): plain TCP, or TLS whose
 * handshake runs after the TCP connect and before CONNECT is sent. Because
 * TLS may need to write in order to read and the reverse, every socket
 * event retries both directions. Credentials are asked of the auth
 * provider each time they are sent (CONNECT, and AUTH_RESPONSE to every
 * AUTH_CHALLENGE, which may come before CONNECTED or at any time after),
 * and wiped right after encoding. A provider that fetches them over the
 * network (OAuth2) may make the connection wait for its fetch first; a
 * challenge tells it which generation of credentials the broker found
 * expired, so those are not sent again.
 *
 * Loop thread only. Reference counted: the pool holds one reference, and
 * every callback into user-facing layers runs with a temporary one, so a
 * callback may close the connection without pulling it out from under us.
 * Every request callback and ready callback runs exactly once.
 */
#include "net/conn.h"

#include "net/attach.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/err.h"
#include "net/auth_plugin.h"
#include "net/resolve.h"
#include "net/transport.h"
#include "net/wqueue.h"

#define PROTOCOL_VERSION 20
#define READ_CHUNK (64 * 1024)
#define HANDOFF_BYTES (256 * 1024) /* read before what was read goes to the consumers (read_input) */
#define WRITE_NOW_BYTES (256 * 1024) /* queued bytes that are written without waiting for the turn's end */
/* Smaller pieces are copied: on loopback the kernel's cost per extra piece
 * of a sendmsg outweighs copying them below about 1 KiB (bench/gather). */
#define BORROW_MIN 1024
#define ERR_CRED_MAX 440 /* a provider's message: an issuer's URL and its error_description */

/* ST_TLS: TCP is up, the TLS handshake runs; ST_HANDSHAKE: CONNECT sent (or
 * waiting for the credentials to send with it). */
typedef enum {
    ST_RESOLVING,
    ST_CONNECTING,
    ST_TLS,
    ST_HANDSHAKE,
    ST_READY,
    ST_CLOSED
} conn_state_t;

typedef struct waiter {
    struct waiter *next;
    pc_conn_ready_cb cb;
    void *arg;
} waiter_t;

typedef struct request {
    struct request *next;
    pc_conn_t *conn;
    uint64_t id;
    pc_req_cb cb;
    void *arg;
    pc_timer_t timer;
} request_t;

struct pc_conn {
    int refs;
    conn_state_t state;
    pc_arena_t arena;        /* decoded commands: valid while one frame is dispatched */
    ProtobufCAllocator pb;
    pc_loop_t *loop;
    pc_conn_opts_t opts;
    char host[256];
    uint16_t port;
    char peer[300];
    char *proxy_to;
    int fd;
    pc_transport_t *tx;   /* from TCP connect until close */
    int read_wants_out;   /* the last read (TLS) waits for the socket to be writable */
    pc_io_t io;
    struct addrinfo *addrs, *next_addr;
    pc_timer_t connect_timer;
    pc_timer_t keepalive_timer;
    pc_timer_t fail_timer;   /* a write failed: close on the next loop turn */
    int write_failed;
    int fail_eof;
    int waiting_pong;
    int got_traffic;
    pc_buf_t rbuf;
    pc_wqueue_t wq;          /* bytes to write: copied, and borrowed pieces */
    pc_conn_t *next_borrowing; /* on the thread's borrowing list */
    int borrowing;
    size_t max_message_size;
    int protocol_version;
    waiter_t *waiters;
    request_t *requests;
    pc_attach_table_t producers, consumers; /* by id: 10,000 of each may share it */
    pc_attach_table_t watchers;   /* topic-list watchers, by watcher id */
    int topic_watchers;           /* the broker announced supports_topic_watchers */
    pc_auth_waiter_t auth_wait; /* parked while the provider fetches credentials */
    int auth_waiting;           /* 0, or what waits: AUTH_FOR_CONNECT / AUTH_FOR_CHALLENGE */
    uint64_t auth_gen;          /* generation of the credentials last sent */
    void (*close_hook)(void *arg, pc_conn_t *c);
    void *close_hook_arg;
    pc_defer_t defer;          /* the free after the last reference */
    pc_defer_t flush_defer;    /* the write at the end of this loop turn */
    int flush_pending;         /* flush_defer is queued (and holds a reference) */
};

static void conn_on_io(void *arg, uint32_t events);
static void write_queued_now(pc_conn_t *c);
static int may_write(const pc_conn_t *c);
static void try_next_addr(pc_conn_t *c, const char *last_error);
static void sync_borrowing(pc_conn_t *c);

/* ---------- lifetime ---------- */

void pc_conn_ref(pc_conn_t *c) { c->refs++; }

static void conn_free(void *arg) {
    pc_conn_t *c = arg;
    pc_buf_free(&c->rbuf);
    pc_arena_free(&c->arena);
    pc_wq_clear(&c->wq);
    sync_borrowing(c);
    pc_wq_free(&c->wq);
    pc_attach_free(&c->producers);
    pc_attach_free(&c->consumers);
    pc_attach_free(&c->watchers);
    if (c->addrs)
        freeaddrinfo(c->addrs);
    free(c->proxy_to);
    free((char *)c->opts.client_version);
    free(c);
}

void pc_conn_unref(pc_conn_t *c) {
    if (--c->refs > 0)
        return;
    /* Its io may be in the loop's current epoll batch (closed by a post). */
    pc_loop_defer(c->loop, &c->defer, conn_free, c);
}

int pc_conn_is_ready(const pc_conn_t *c) { return c->state == ST_READY; }
int pc_conn_is_closed(const pc_conn_t *c) { return c->state == ST_CLOSED; }
size_t pc_conn_max_message_size(const pc_conn_t *c) { return c->max_message_size; }
int pc_conn_protocol_version(const pc_conn_t *c) { return c->protocol_version; }
const char *pc_conn_peer(const pc_conn_t *c) { return c->peer; }

void pc_conn_set_close_hook(pc_conn_t *c, void (*hook)(void *, pc_conn_t *), void *arg) {
    c->close_hook = hook;
    c->close_hook_arg = arg;
}

/* ---------- closing ---------- */

static void fail_waiters(pc_conn_t *c, pulsarc_err_t why, const char *reason) {
    waiter_t *w = c->waiters;
    c->waiters = NULL;
    while (w) {
        waiter_t *next = w->next;
        w->cb(w->arg, NULL, why, reason);
        free(w);
        w = next;
    }
}

static void fail_requests(pc_conn_t *c, pulsarc_err_t why, const char *reason) {
    request_t *r = c->requests;
    c->requests = NULL;
    while (r) {
        request_t *next = r->next;
        pc_timer_stop(c->loop, &r->timer);
        r->cb(r->arg, why, NULL, reason);
        free(r);
        r = next;
    }
}

static void notify_attached(pc_conn_t *c, pc_attach_table_t *t, pulsarc_err_t why) {
    pc_attached_t *a = pc_attach_take_all(t);
    while (a) {
        pc_attached_t *next = a->next;
        a->h->on_closed(a->obj, c, why);
        free(a);
        a = next;
    }
}

/* A close after CONNECTED counts as closed; before, as a failed attempt. */
static void count_close(const pc_conn_t *c) {
    pc_net_counters_t *n = c->opts.counters;
    if (c->state == ST_READY)
        PC_NET_COUNT(n, conn_closed);
    else if (c->state == ST_RESOLVING || c->state == ST_CONNECTING)
        PC_NET_COUNT(n, conn_failed_tcp);
    else
        PC_NET_COUNT(n, conn_failed_handshake);
}

void pc_conn_close(pc_conn_t *c, pulsarc_err_t why, const char *reason) {
    if (c->state == ST_CLOSED)
        return;
    count_close(c);
    int was_writable = may_write(c);
    c->state = ST_CLOSED;
    pc_conn_ref(c);
    if (c->auth_waiting) { /* the provider's fetch goes on for others */
        c->opts.auth->cancel(c->opts.auth, &c->auth_wait);
        c->auth_waiting = 0;
        pc_conn_unref(c);
    }
    pc_timer_stop(c->loop, &c->connect_timer);
    pc_timer_stop(c->loop, &c->keepalive_timer);
    if (pc_timer_active(&c->fail_timer)) { /* closed by someone else first */
        pc_timer_stop(c->loop, &c->fail_timer);
        pc_conn_unref(c);
    }
    if (c->fd >= 0) {
        if (was_writable)
            write_queued_now(c);
        pc_io_del(c->loop, &c->io);
        pc_tx_free(c->tx); /* before close(): TLS may send close_notify */
        c->tx = NULL;
        close(c->fd);
        c->fd = -1;
    }
    pc_wq_clear(&c->wq); /* nothing more is written: borrowed pieces go back */
    sync_borrowing(c);
    fail_waiters(c, why, reason);
    fail_requests(c, why, reason);
    notify_attached(c, &c->producers, why);
    notify_attached(c, &c->consumers, why);
    notify_attached(c, &c->watchers, why);
    if (c->close_hook)
        c->close_hook(c->close_hook_arg, c);
    pc_conn_unref(c);
}

static void closef(pc_conn_t *c, pulsarc_err_t why, const char *fmt, const char *detail) {
    char msg[640];
    snprintf(msg, sizeof msg, fmt, c->peer, detail ? detail : "");
    pc_conn_close(c, why, msg);
}

/* ---------- writing ---------- */

/* The transport's own words, after the peer's address. */
static void close_tx_error(pc_conn_t *c) {
    closef(c, c->tx->errcode ? c->tx->errcode : PULSARC_ERR_DISCONNECTED, "%s: %s", c->tx->err);
}

static void update_interest(pc_conn_t *c) {
    int out = pc_wq_len(&c->wq) > 0 || c->read_wants_out;
    pc_io_mod(c->loop, &c->io, EPOLLIN | (out ? EPOLLOUT : 0));
}

/* Closing inside a send would free the connection under its caller (who may
 * go on sending): a write failure only marks, and the close runs next turn. */
static void on_write_failed(void *arg) {
    pc_conn_t *c = arg;
    if (c->state == ST_CLOSED) { /* closed meanwhile: its transport is gone */
        pc_conn_unref(c);
        return;
    }
    if (c->fail_eof)
        closef(c, PULSARC_ERR_DISCONNECTED, "%s closed the connection%s", NULL);
    else
        close_tx_error(c);
    pc_conn_unref(c);
}

static void write_failed(pc_conn_t *c, int eof) {
    if (c->write_failed)
        return;
    c->write_failed = 1;
    c->fail_eof = eof;
    pc_conn_ref(c); /* held by the timer */
    pc_timer_start(c->loop, &c->fail_timer, 0);
}

/* Its owner may free a borrowed piece after this turn: what the socket
 * did not take is copied, or, without memory, the connection goes. */
static void keep_unwritten(pc_conn_t *c) {
    if (pc_wq_copy_borrowed(&c->wq) == PULSARC_OK)
        return;
    pc_wq_clear(&c->wq);
    c->tx->errcode = PULSARC_ERR_NOMEM;
    snprintf(c->tx->err, sizeof c->tx->err, "out of memory keeping unwritten bytes");
    write_failed(c, 0);
}

static void flush_out(pc_conn_t *c) {
    if (c->write_failed) { /* nothing more is written: drop what is borrowed */
        pc_wq_clear(&c->wq);
        sync_borrowing(c);
        return;
    }
    pc_tx_status_t st = pc_wq_write(&c->wq, c->tx);
    if (st == PC_TX_EOF || st == PC_TX_ERR) {
        pc_wq_clear(&c->wq);
        write_failed(c, st == PC_TX_EOF);
    } else if (st == PC_TX_AGAIN) {
        keep_unwritten(c); /* EPOLLIN is always on; EPOLLOUT while bytes wait */
    }
    sync_borrowing(c);
    if (!c->write_failed)
        update_interest(c);
}

static int may_write(const pc_conn_t *c) { return c->state == ST_READY || c->state == ST_HANDSHAKE; }

/* On close: what this turn queued still leaves, as it would have before
 * writes were put off to the turn's end. Best effort, and a failure arms
 * nothing (the connection is going anyway). */
static void write_queued_now(pc_conn_t *c) {
    if (!c->write_failed)
        pc_wq_write(&c->wq, c->tx);
}

static void flush_at_turn_end(void *arg) {
    pc_conn_t *c = arg;
    c->flush_pending = 0;
    if (may_write(c))
        flush_out(c);
    pc_conn_unref(c);
}

/*
 * Frames queued while the loop handles one batch of events (a drained
 * hand-off of sends, the receipts of one read) leave in one write at the
 * end of the turn instead of one syscall each. Past WRITE_NOW_BYTES the
 * buffer is written at once, which bounds both its size and the delay.
 */
static pulsarc_err_t queued(pc_conn_t *c, pulsarc_err_t err) {
    if (err)
        return err;
    if (!may_write(c))
        return c->state == ST_CLOSED ? PULSARC_ERR_DISCONNECTED : PULSARC_OK;
    if (pc_wq_len(&c->wq) >= WRITE_NOW_BYTES) {
        flush_out(c);
    } else if (!c->flush_pending) {
        c->flush_pending = 1;
        pc_conn_ref(c); /* held by flush_defer */
        pc_loop_defer(c->loop, &c->flush_defer, flush_at_turn_end, c);
    }
    return c->state == ST_CLOSED ? PULSARC_ERR_DISCONNECTED : PULSARC_OK;
}

pulsarc_err_t pc_conn_send(pc_conn_t *c, const pc_cmd_t *cmd) {
    if (c->state == ST_CLOSED)
        return PULSARC_ERR_DISCONNECTED;
    return queued(c, pc_frame_encode(&c->wq.own, cmd));
}

pulsarc_err_t pc_conn_send_raw(pc_conn_t *c, const uint8_t *data, size_t len) {
    if (c->state == ST_CLOSED)
        return PULSARC_ERR_DISCONNECTED;
    return queued(c, pc_wq_append(&c->wq, data, len));
}

/* Connections of this thread that borrow pieces now (few, and only within a turn). */
static _Thread_local pc_conn_t *borrowing;

static void sync_borrowing(pc_conn_t *c) {
    if (pc_wq_borrows(&c->wq) == c->borrowing)
        return;
    if (!c->borrowing) {
        c->next_borrowing = borrowing;
        borrowing = c;
        c->borrowing = 1;
        return;
    }
    for (pc_conn_t **pp = &borrowing; *pp; pp = &(*pp)->next_borrowing) {
        if (*pp == c) {
            *pp = c->next_borrowing;
            break;
        }
    }
    c->borrowing = 0;
}

pulsarc_err_t pc_conn_send_borrowed(pc_conn_t *c, const uint8_t *data, size_t len) {
    /* The common small piece, and whatever cannot be gathered now: copied. */
    if (len < BORROW_MIN || !may_write(c) || c->write_failed || !pc_tx_can_writev(c->tx))
        return pc_conn_send_raw(c, data, len);
    pulsarc_err_t err = pc_wq_borrow(&c->wq, data, len);
    sync_borrowing(c);
    return queued(c, err);
}

void pc_conn_copy_borrowed(void) {
    while (borrowing) {
        pc_conn_t *c = borrowing;
        if (c->tx && !c->write_failed)
            keep_unwritten(c);
        else
            pc_wq_clear(&c->wq);
        sync_borrowing(c);
        if (borrowing == c) { /* cannot happen: the queue borrows nothing now */
            borrowing = c->next_borrowing;
            c->borrowing = 0;
        }
    }
}

/* ---------- requests ---------- */

static request_t *take_request(pc_conn_t *c, uint64_t id) {
    for (request_t **pp = &c->requests; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            request_t *r = *pp;
            *pp = r->next;
            pc_timer_stop(c->loop, &r->timer);
            return r;
        }
    }
    return NULL;
}

static void request_timeout(void *arg) {
    request_t *r = arg;
    pc_conn_t *c = r->conn;
    if (take_request(c, r->id) != r)
        return;
    char msg[128];
    snprintf(msg, sizeof msg, "request %llu to %s timed out", (unsigned long long)r->id, c->peer);
    r->cb(r->arg, PULSARC_ERR_TIMEOUT, NULL, msg);
    free(r);
}

void pc_conn_request(pc_conn_t *c, const pc_cmd_t *cmd, uint64_t id, int timeout_ms,
                     pc_req_cb cb, void *arg) {
    if (c->state == ST_CLOSED) {
        cb(arg, PULSARC_ERR_DISCONNECTED, NULL, "connection is closed");
        return;
    }
    request_t *r = calloc(1, sizeof *r);
    if (!r) {
        cb(arg, PULSARC_ERR_NOMEM, NULL, "out of memory");
        return;
    }
    r->conn = c;
    r->id = id;
    r->cb = cb;
    r->arg = arg;
    pc_timer_init(&r->timer, request_timeout, r);
    r->next = c->requests;
    c->requests = r;
    if (timeout_ms > 0)
        pc_timer_start(c->loop, &r->timer, timeout_ms);
    pulsarc_err_t err = pc_conn_send(c, cmd);
    if (err && take_request(c, id) == r) { /* not failed by a close already */
        cb(arg, err, NULL, "could not send request");
        free(r);
    }
}

int pc_conn_fail_request(pc_conn_t *c, uint64_t id, pulsarc_err_t err, const char *msg) {
    request_t *r = take_request(c, id);
    if (!r)
        return 0;
    r->cb(r->arg, err, NULL, msg);
    free(r);
    return 1;
}

/* ---------- attachments ---------- */

void pc_conn_attach_producer(pc_conn_t *c, uint64_t id, const pc_conn_handler_t *h, void *obj) {
    pc_attach_add(&c->producers, id, h, obj);
}
void pc_conn_attach_consumer(pc_conn_t *c, uint64_t id, const pc_conn_handler_t *h, void *obj) {
    pc_attach_add(&c->consumers, id, h, obj);
}
void pc_conn_detach_producer(pc_conn_t *c, uint64_t id) { pc_attach_remove(&c->producers, id); }
void pc_conn_detach_consumer(pc_conn_t *c, uint64_t id) { pc_attach_remove(&c->consumers, id); }
void pc_conn_attach_watcher(pc_conn_t *c, uint64_t id, const pc_conn_handler_t *h, void *obj) {
    pc_attach_add(&c->watchers, id, h, obj);
}
void pc_conn_detach_watcher(pc_conn_t *c, uint64_t id) { pc_attach_remove(&c->watchers, id); }
int pc_conn_supports_topic_watchers(const pc_conn_t *c) { return c->topic_watchers; }

/* ---------- handshake and keep-alive ---------- */

/* Fresh credentials from the provider; on failure the connection is closed. */
static int get_credentials(pc_conn_t *c, uint8_t **data, size_t *len) {
    char err[ERR_CRED_MAX];
    *data = NULL;
    *len = 0;
    if (!c->opts.auth)
        return 0;
    pulsarc_err_t e = c->opts.auth->credentials(c->opts.auth, data, len, err, sizeof err);
    if (e)
        closef(c, e, "authentication towards %s: %s", err);
    else if (c->opts.auth->generation)
        c->auth_gen = c->opts.auth->generation(c->opts.auth);
    return e ? -1 : 0;
}

enum { AUTH_FOR_CONNECT = 1, AUTH_FOR_CHALLENGE = 2 };
static void send_connect_now(pc_conn_t *c);
static void answer_challenge_now(pc_conn_t *c);

static void on_auth_ready(void *arg) {
    pc_conn_t *c = arg;
    int what = c->auth_waiting;
    c->auth_waiting = 0;
    if (what == AUTH_FOR_CONNECT && c->state == ST_HANDSHAKE)
        send_connect_now(c);
    else if (what == AUTH_FOR_CHALLENGE && c->state != ST_CLOSED)
        answer_challenge_now(c);
    pc_conn_unref(c);
}

/*
 * A provider that fetches over the network (OAuth2) may have nothing to
 * hand out yet: the connection then waits, holding a reference, until the
 * provider's fetch ends (the connect timer still runs). 1: go on now.
 */
static int auth_ready(pc_conn_t *c, int what, uint64_t challenged_gen) {
    pc_auth_t *a = c->opts.auth;
    if (!a || !a->prepare || c->auth_waiting)
        return !c->auth_waiting;
    c->auth_wait.done = on_auth_ready;
    c->auth_wait.arg = c;
    if (a->prepare(a, c->loop, challenged_gen, &c->auth_wait))
        return 1;
    c->auth_waiting = what;
    pc_conn_ref(c);
    return 0;
}

static void send_connect(pc_conn_t *c) {
    c->state = ST_HANDSHAKE;
    if (auth_ready(c, AUTH_FOR_CONNECT, 0))
        send_connect_now(c);
}

static void send_connect_now(pc_conn_t *c) {
    uint8_t *cred;
    size_t cred_len;
    if (get_credentials(c, &cred, &cred_len))
        return;
    Pulsar__Proto__CommandConnect conn = PULSAR__PROTO__COMMAND_CONNECT__INIT;
    Pulsar__Proto__FeatureFlags ff = PULSAR__PROTO__FEATURE_FLAGS__INIT;
    conn.client_version = (char *)c->opts.client_version;
    conn.has_protocol_version = 1;
    conn.protocol_version = PROTOCOL_VERSION;
    ff.has_supports_auth_refresh = 1;
    ff.supports_auth_refresh = 1;
    ff.has_supports_broker_entry_metadata = 1;
    ff.supports_broker_entry_metadata = 1;
    /*
     * supports_partial_producer only on connections kept for WaitForExclusive
     * producers: with it on, the 4.0 broker also answered producer_ready=false
     * to Shared producers re-connecting during a topic unload and never sent
     * the final reply, stalling them (seen in test_producer_reconnect).
     */
    ff.has_supports_partial_producer = 1;
    ff.supports_partial_producer = c->opts.partial_producer;
    ff.has_supports_topic_watchers = 1; /* WATCH_TOPIC_LIST for regex subscriptions */
    ff.supports_topic_watchers = 1;
    conn.feature_flags = &ff;
    if (c->opts.auth) {
        conn.auth_method_name = (char *)c->opts.auth->method;
        conn.has_auth_data = 1;
        conn.auth_data.data = cred ? cred : (uint8_t *)"";
        conn.auth_data.len = cred_len;
    }
    conn.proxy_to_broker_url = c->proxy_to;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT;
    cmd.connect = &conn;
    c->state = ST_HANDSHAKE;
    pc_conn_send(c, &cmd);
    pc_auth_wipe(cred, cred_len); /* encoded into the write queue by now */
}

/*
 * The broker asks for credentials again: a refresh ("PulsarAuthRefresh")
 * when the ones it holds expire, or a further step of a multi-step method.
 * Both are answered with fresh data from the provider; the broker closes
 * the connection itself if it does not accept them.
 */
static void handle_auth_challenge(pc_conn_t *c, const Pulsar__Proto__CommandAuthChallenge *ch) {
    (void)ch;
    /* The broker found what this connection sent expired: not that one again. */
    if (auth_ready(c, AUTH_FOR_CHALLENGE, c->auth_gen))
        answer_challenge_now(c);
}

static void answer_challenge_now(pc_conn_t *c) {
    uint8_t *cred;
    size_t cred_len;
    if (get_credentials(c, &cred, &cred_len))
        return;
    Pulsar__Proto__AuthData data = PULSAR__PROTO__AUTH_DATA__INIT;
    data.auth_method_name = c->opts.auth ? (char *)c->opts.auth->method : "none";
    data.has_auth_data = 1; /* brokers expect the field even when empty */
    data.auth_data.data = cred ? cred : (uint8_t *)"";
    data.auth_data.len = cred_len;
    Pulsar__Proto__CommandAuthResponse resp = PULSAR__PROTO__COMMAND_AUTH_RESPONSE__INIT;
    resp.client_version = (char *)c->opts.client_version;
    resp.response = &data;
    resp.has_protocol_version = 1;
    resp.protocol_version = PROTOCOL_VERSION;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_RESPONSE;
    cmd.authresponse = &resp;
    pc_conn_send(c, &cmd);
    pc_auth_wipe(cred, cred_len);
}

static void send_simple(pc_conn_t *c, int type) {
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    Pulsar__Proto__CommandPing ping = PULSAR__PROTO__COMMAND_PING__INIT;
    Pulsar__Proto__CommandPong pong = PULSAR__PROTO__COMMAND_PONG__INIT;
    cmd.type = type;
    if (type == PULSAR__PROTO__BASE_COMMAND__TYPE__PING)
        cmd.ping = &ping;
    else
        cmd.pong = &pong;
    pc_conn_send(c, &cmd);
}

static void keepalive_tick(void *arg) {
    pc_conn_t *c = arg;
    if (c->waiting_pong && !c->got_traffic) {
        closef(c, PULSARC_ERR_TIMEOUT, "%s did not answer PING within the keep-alive interval%s",
               NULL);
        return;
    }
    c->got_traffic = 0;
    c->waiting_pong = 1;
    send_simple(c, PULSAR__PROTO__BASE_COMMAND__TYPE__PING);
    if (c->state == ST_READY)
        pc_timer_start(c->loop, &c->keepalive_timer, (int64_t)c->opts.keepalive_s * 1000);
}

static void handle_connected(pc_conn_t *c, const Pulsar__Proto__CommandConnected *cd) {
    if (c->state != ST_HANDSHAKE) {
        closef(c, PULSARC_ERR_PROTOCOL, "%s sent CONNECTED twice%s", NULL);
        return;
    }
    c->protocol_version = cd->has_protocol_version ? cd->protocol_version : 0;
    c->topic_watchers = cd->feature_flags && cd->feature_flags->supports_topic_watchers;
    if (cd->has_max_message_size && cd->max_message_size > 0) /* the receive buffer grows to it */
        c->max_message_size = (size_t)cd->max_message_size > PC_MAX_MESSAGE_SIZE_CEILING ? PC_MAX_MESSAGE_SIZE_CEILING
                                                                                 : (size_t)cd->max_message_size;
    c->rbuf.limit = c->max_message_size + PC_FRAME_PADDING + 8;
    c->state = ST_READY;
    PC_NET_COUNT(c->opts.counters, conn_opened);
    pc_timer_stop(c->loop, &c->connect_timer);
    if (c->opts.keepalive_s > 0)
        pc_timer_start(c->loop, &c->keepalive_timer, (int64_t)c->opts.keepalive_s * 1000);
    waiter_t *w = c->waiters;
    c->waiters = NULL;
    while (w) {
        waiter_t *next = w->next;
        if (c->state == ST_READY)
            w->cb(w->arg, c, PULSARC_OK, NULL);
        else
            w->cb(w->arg, NULL, PULSARC_ERR_DISCONNECTED, "connection closed");
        free(w);
        w = next;
    }
}

void pc_conn_when_ready(pc_conn_t *c, pc_conn_ready_cb cb, void *arg) {
    if (c->state == ST_READY) {
        cb(arg, c, PULSARC_OK, NULL);
        return;
    }
    if (c->state == ST_CLOSED) {
        cb(arg, NULL, PULSARC_ERR_DISCONNECTED, "connection is closed");
        return;
    }
    waiter_t *w = calloc(1, sizeof *w);
    if (!w) {
        cb(arg, NULL, PULSARC_ERR_NOMEM, "out of memory");
        return;
    }
    w->cb = cb;
    w->arg = arg;
    w->next = c->waiters;
    c->waiters = w;
}

/* ---------- dispatch ---------- */

/* The request id of a reply, for the commands that answer a request. */
static int reply_request_id(const pc_cmd_t *cmd, uint64_t *id) {
#define RID(field) \
    do { *id = cmd->field->request_id; return 1; } while (0)
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS: RID(success);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR: RID(error);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER_SUCCESS: RID(producer_success);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA_RESPONSE: RID(partitionmetadataresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE: RID(lookuptopicresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_LAST_MESSAGE_ID_RESPONSE: RID(getlastmessageidresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_TOPICS_OF_NAMESPACE_RESPONSE: RID(gettopicsofnamespaceresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_SCHEMA_RESPONSE: RID(getschemaresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__GET_OR_CREATE_SCHEMA_RESPONSE: RID(getorcreateschemaresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CONSUMER_STATS_RESPONSE: RID(consumerstatsresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ACK_RESPONSE: RID(ackresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__NEW_TXN_RESPONSE: RID(newtxnresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_PARTITION_TO_TXN_RESPONSE: RID(addpartitiontotxnresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ADD_SUBSCRIPTION_TO_TXN_RESPONSE: RID(addsubscriptiontotxnresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__END_TXN_RESPONSE: RID(endtxnresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__TC_CLIENT_CONNECT_RESPONSE: RID(tcclientconnectresponse);
    case PULSAR__PROTO__BASE_COMMAND__TYPE__WATCH_TOPIC_LIST_SUCCESS: RID(watchtopiclistsuccess);
    default: return 0;
    }
#undef RID
}

/* ERROR replies, and responses that carry an error code of their own. */
static pulsarc_err_t reply_error(const pc_cmd_t *cmd, const char **msg) {
    *msg = NULL;
    if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR) {
        *msg = cmd->error->message;
        return pc_err_from_server(cmd->error->error);
    }
    return PULSARC_OK;
}

/* PRODUCER_SUCCESS with producer_ready=false: queued for exclusive access. */
static int is_partial_reply(const pc_cmd_t *cmd) {
    return cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER_SUCCESS &&
           cmd->producer_success->has_producer_ready && !cmd->producer_success->producer_ready;
}

/* A partial reply: the request stays registered, without a timeout, for the final one. */
static void dispatch_partial(pc_conn_t *c, const pc_frame_t *f, uint64_t id) {
    for (request_t *r = c->requests; r; r = r->next) {
        if (r->id == id) {
            pc_timer_stop(c->loop, &r->timer);
            r->cb(r->arg, PULSARC_OK, f, NULL);
            return;
        }
    }
}

static void dispatch_reply(pc_conn_t *c, const pc_frame_t *f, uint64_t id) {
    if (is_partial_reply(f->cmd)) {
        dispatch_partial(c, f, id);
        return;
    }
    request_t *r = take_request(c, id);
    if (!r)
        return; /* late reply to a request that timed out */
    const char *msg;
    pulsarc_err_t err = reply_error(f->cmd, &msg);
    r->cb(r->arg, err, f, msg);
    free(r);
}

static int producer_id_of(const pc_cmd_t *cmd, uint64_t *id) {
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT: *id = cmd->send_receipt->producer_id; return 1;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_ERROR: *id = cmd->send_error->producer_id; return 1;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER: *id = cmd->close_producer->producer_id; return 1;
    default: return 0;
    }
}

static int consumer_id_of(const pc_cmd_t *cmd, uint64_t *id) {
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__MESSAGE: *id = cmd->message->consumer_id; return 1;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_CONSUMER: *id = cmd->close_consumer->consumer_id; return 1;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ACTIVE_CONSUMER_CHANGE: *id = cmd->active_consumer_change->consumer_id; return 1;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__REACHED_END_OF_TOPIC: *id = cmd->reachedendoftopic->consumer_id; return 1;
    default: return 0;
    }
}

/* A consumer that got a frame is noted first: its frame handler may detach
 * it (which also forgets the note), never another one. */
static void dispatch_attached(pc_conn_t *c, pc_attach_table_t *t, uint64_t id, const pc_frame_t *f) {
    pc_attached_t *a = pc_attach_find(t, id);
    if (!a)
        return;
    if (a->h->on_input_done)
        pc_attach_touch(t, a);
    a->h->on_frame(a->obj, c, f);
}

/* PULSARC_DEBUG=frames traces every command received (names and ids only:
 * never payloads or credentials). Read once. */
static int trace_frames(void) {
    static int on = -1;
    if (on < 0) {
        const char *d = getenv("PULSARC_DEBUG");
        on = d && strstr(d, "frames") != NULL;
    }
    return on;
}

static void trace(const pc_conn_t *c, const pc_cmd_t *cmd) {
    uint64_t id = 0;
    if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__ACTIVE_CONSUMER_CHANGE)
        id = cmd->active_consumer_change->consumer_id * 10 + (cmd->active_consumer_change->is_active != 0);
    else if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS)
        id = cmd->success->request_id;
    fprintf(stderr, "pulsarc: %s <- %s (%llu)\n", c->peer, pc_cmd_name(cmd->type), (unsigned long long)id);
}

static void dispatch(pc_conn_t *c, const pc_frame_t *f) {
    const pc_cmd_t *cmd = f->cmd;
    uint64_t id;
    if (trace_frames())
        trace(c, cmd);
    c->got_traffic = 1;
    c->waiting_pong = 0;
    if (c->state == ST_HANDSHAKE && cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__ERROR) {
        char m[400];
        snprintf(m, sizeof m, "broker %s refused the connection: %s", c->peer,
                 cmd->error->message ? cmd->error->message : "");
        pc_conn_close(c, pc_err_from_server(cmd->error->error), m);
    } else if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED) {
        handle_connected(c, cmd->connected);
    } else if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__AUTH_CHALLENGE) {
        handle_auth_challenge(c, cmd->authchallenge);
    } else if (c->state != ST_READY) {
        char m[300];
        snprintf(m, sizeof m, "%s sent %s before CONNECTED", c->peer, pc_cmd_name(cmd->type));
        pc_conn_close(c, PULSARC_ERR_PROTOCOL, m);
    } else if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__PING) {
        send_simple(c, PULSAR__PROTO__BASE_COMMAND__TYPE__PONG);
    } else if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__PONG) {
        /* liveness already noted */
    } else if (reply_request_id(cmd, &id)) {
        dispatch_reply(c, f, id);
    } else if (producer_id_of(cmd, &id)) {
        dispatch_attached(c, &c->producers, id, f);
    } else if (consumer_id_of(cmd, &id)) {
        dispatch_attached(c, &c->consumers, id, f);
    } else if (cmd->type == PULSAR__PROTO__BASE_COMMAND__TYPE__WATCH_TOPIC_UPDATE) {
        /* a push for a watcher closed meanwhile (or never ours) is dropped */
        dispatch_attached(c, &c->watchers, cmd->watchtopicupdate->watcher_id, f);
    }
    /* Other unsolicited commands (e.g. TOPIC_MIGRATED) are not used yet. */
}

/* ---------- reading ---------- */

static void input_done(pc_conn_t *c) {
    /* Only those that got a frame in this run of reads: a walk over every
     * consumer made each run cost as many steps as there were consumers. */
    for (pc_attached_t *a; (a = pc_attach_pop_touched(&c->consumers)) != NULL;)
        a->h->on_input_done(a->obj, c); /* it may detach itself, never another */
}

/*
 * A large frame at the buffer's front may be taken whole by its handler
 * (pc_frame_adopt: a batch's payload changes hands instead of being
 * copied into an entry). Small frames are cheaper to copy than to hand
 * over, and one not at the front would leave a hole.
 */
static void offer_buffer(pc_conn_t *c, pc_frame_t *f, size_t off, size_t n) {
    if (off == 0 && n >= READ_CHUNK) {
        f->source = &c->rbuf;
        f->frame_len = n;
    }
}

static void process_input(pc_conn_t *c) {
    size_t off = 0;
    while (c->state != ST_CLOSED) {
        pc_frame_t f;
        char err[256];
        size_t max = c->max_message_size + PC_FRAME_PADDING;
        long n = pc_frame_parse_with(c->rbuf.data + off, c->rbuf.len - off, max, &c->pb, &f, err, sizeof err);
        if (n == 0)
            break;
        if (n < 0) {
            /* Said once here as well: producers and consumers only learn that
             * the connection broke, and reconnect as for any broken one. */
            fprintf(stderr, "pulsarc: closing the connection to %s: bad frame: %s\n", c->peer, err);
            closef(c, (pulsarc_err_t)n, "bad frame from %s: %s", err);
            return;
        }
        const uint8_t *base = c->rbuf.data;
        offer_buffer(c, &f, off, (size_t)n);
        off += (size_t)n;
        dispatch(c, &f);
        pc_frame_clear(&f);
        pc_arena_reset(&c->arena); /* nothing of a frame outlives its dispatch */
        if (c->rbuf.data != base)
            off = 0; /* adopted: the buffer now holds only what followed the frame */
    }
    pc_buf_consume(&c->rbuf, off);
}

/*
 * Room for the next read. The buffer starts with the frame still
 * incomplete (process_input consumed the rest); a large one's remainder
 * is read exactly, so once it is processed nothing is left to move to the
 * buffer's front: reading on past it moved half a frame a frame on
 * average for entries of a batch. Small frames read as much as fits.
 * An empty buffer reads one chunk: were it to read past a large frame's
 * end, what followed would have to be copied out when the frame is
 * adopted (offer_buffer).
 */
static size_t read_room(const pc_conn_t *c) {
    size_t room = c->rbuf.cap - c->rbuf.len;
    if (c->rbuf.len < 4)
        return room < READ_CHUNK ? room : READ_CHUNK;
    size_t total = 4 + (size_t)pc_rd_u32(c->rbuf.data);
    if (total < READ_CHUNK || total <= c->rbuf.len)
        return room;
    size_t rest = total - c->rbuf.len;
    return rest < room ? rest : room;
}

/* One read and what it completed; 1 while the socket may hold more. */
static int read_some(pc_conn_t *c, size_t *got) {
    if (pc_buf_reserve(&c->rbuf, READ_CHUNK) && pc_buf_reserve(&c->rbuf, 1)) {
        closef(c, PULSARC_ERR_FRAME_TOO_BIG, "receive buffer limit reached on %s%s", NULL);
        return 0;
    }
    size_t room = read_room(c), n = 0;
    pc_tx_status_t st = pc_tx_read(c->tx, c->rbuf.data + c->rbuf.len, room, &n);
    if (st == PC_TX_OK) {
        c->rbuf.len += n;
        *got += n;
        process_input(c);
        /* A short plain read drained the socket; TLS may still hold records. */
        return c->state != ST_CLOSED && (n == room || c->tx->read_until_again);
    }
    if (st == PC_TX_AGAIN)
        c->read_wants_out = (c->tx->want & EPOLLOUT) != 0;
    else if (st == PC_TX_EOF)
        closef(c, PULSARC_ERR_DISCONNECTED, "%s closed the connection%s", NULL);
    else
        close_tx_error(c);
    return 0;
}

/*
 * Reads until the socket is drained, handing each consumer what the reads
 * brought (input_done) every HANDOFF_BYTES and at the end. A large entry
 * is read on its own, and handing it over per read woke the receiving
 * thread, which on a shared core then preempted this one, entry by entry;
 * handing over a whole drain at once let the messages waiting for it grow
 * out of the cache. A closed connection's consumers were flushed as it
 * closed; the list is empty then.
 */
static void read_input(pc_conn_t *c) {
    c->read_wants_out = 0;
    size_t got = 0;
    for (;;) {
        int more = read_some(c, &got);
        if (more && got < HANDOFF_BYTES)
            continue;
        input_done(c);
        got = 0;
        if (!more || c->state == ST_CLOSED) /* a consumer's hand-off may yet close it */
            return;
    }
}

/* ---------- connecting ---------- */

static void set_socket_options(int fd) {
    int one = 1, idle = 60, cnt = 10, intvl = 6;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
}

/* Drives the TLS handshake; sends CONNECT once it is done. */
static void tls_step(pc_conn_t *c) {
    pc_tx_status_t st = pc_tx_handshake(c->tx);
    if (st == PC_TX_OK) {
        pc_io_mod(c->loop, &c->io, EPOLLIN);
        send_connect(c);
    } else if (st == PC_TX_AGAIN) {
        pc_io_mod(c->loop, &c->io, c->tx->want);
    } else if (st == PC_TX_EOF) {
        closef(c, PULSARC_ERR_TLS, "%s closed the connection during the TLS handshake%s", NULL);
    } else {
        close_tx_error(c);
    }
}

static void start_transport(pc_conn_t *c) {
    char err[300] = "out of memory";
    if (c->opts.tls)
        c->tx = pc_transport_tls_new(c->opts.tls, c->fd, c->host, err, sizeof err);
    else
        c->tx = pc_transport_tcp_new(c->fd);
    if (!c->tx) {
        closef(c, c->opts.tls ? PULSARC_ERR_TLS : PULSARC_ERR_NOMEM, "%s: %s", err);
        return;
    }
    if (c->opts.tls) {
        c->state = ST_TLS;
        tls_step(c);
    } else {
        pc_io_mod(c->loop, &c->io, EPOLLIN);
        send_connect(c);
    }
}

static void on_tcp_connected(pc_conn_t *c) {
    int soerr = 0;
    socklen_t len = sizeof soerr;
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
    if (soerr) {
        try_next_addr(c, strerror(soerr));
        return;
    }
    set_socket_options(c->fd);
    start_transport(c);
}

static void conn_on_io(void *arg, uint32_t events) {
    pc_conn_t *c = arg;
    pc_conn_ref(c);
    if (c->state == ST_CONNECTING) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            on_tcp_connected(c);
    } else if (c->state == ST_TLS) {
        tls_step(c);
    } else {
        /* Both directions on any event: a TLS read may wait on writability
         * and a TLS write on readability; for TCP the extra call is cheap. */
        read_input(c);
        if (c->state != ST_CLOSED)
            flush_out(c);
    }
    pc_conn_unref(c);
}

static int open_socket(pc_conn_t *c, const struct addrinfo *ai) {
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        return -e;
    }
    c->fd = fd;
    if (pc_io_add(c->loop, &c->io, fd, EPOLLOUT, conn_on_io, c)) {
        close(fd);
        c->fd = -1;
        return -EIO;
    }
    return 0;
}

static void try_next_addr(pc_conn_t *c, const char *last_error) {
    if (c->fd >= 0) {
        pc_io_del(c->loop, &c->io);
        close(c->fd);
        c->fd = -1;
    }
    while (c->next_addr) {
        const struct addrinfo *ai = c->next_addr;
        c->next_addr = ai->ai_next;
        int rc = open_socket(c, ai);
        if (rc == 0) {
            c->state = ST_CONNECTING;
            return;
        }
        last_error = strerror(-rc);
    }
    char m[512];
    snprintf(m, sizeof m, "could not connect to %s: %s", c->peer,
             last_error ? last_error : "no address");
    pc_conn_close(c, PULSARC_ERR_CONNECT, m);
}

static void on_resolved(void *arg, struct addrinfo *res, const char *error) {
    pc_conn_t *c = arg;
    if (c->state != ST_RESOLVING) {
        if (res)
            freeaddrinfo(res);
    } else if (!res) {
        char m[512];
        snprintf(m, sizeof m, "could not resolve host '%s': %s", c->host, error);
        pc_conn_close(c, PULSARC_ERR_RESOLVE, m);
    } else {
        c->addrs = c->next_addr = res;
        try_next_addr(c, NULL);
    }
    pc_conn_unref(c);
}

static void connect_timeout(void *arg) {
    pc_conn_t *c = arg;
    char m[400];
    snprintf(m, sizeof m, "connecting to %s timed out after %d ms%s", c->peer,
             c->opts.connect_timeout_ms,
             c->auth_waiting ? " (waiting for the authentication provider's credentials)" : "");
    pc_conn_close(c, PULSARC_ERR_TIMEOUT, m);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void copy_opts(pc_conn_t *c, const pc_conn_opts_t *o) {
    c->opts = *o; /* auth and tls stay owned by the client */
    c->opts.client_version = strdup(o->client_version ? o->client_version : "pulsarc");
}

pc_conn_t *pc_conn_new(pc_loop_t *loop, const pc_conn_opts_t *opts, const char *host,
                       uint16_t port, const char *proxy_to) {
    pc_conn_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->refs = 1;
    c->loop = loop;
    c->fd = -1;
    c->io.fd = -1;
    c->state = ST_RESOLVING;
    c->max_message_size = PC_DEFAULT_MAX_MESSAGE_SIZE;
    c->protocol_version = 0;
    copy_opts(c, opts);
    snprintf(c->host, sizeof c->host, "%s", host);
    c->port = port;
    snprintf(c->peer, sizeof c->peer, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
    c->proxy_to = dup_or_null(proxy_to);
    pc_buf_init(&c->rbuf, PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING + 8);
    c->pb = pc_arena_allocator(&c->arena);
    pc_wq_init(&c->wq);
    pc_timer_init(&c->connect_timer, connect_timeout, c);
    pc_timer_init(&c->keepalive_timer, keepalive_tick, c);
    pc_timer_init(&c->fail_timer, on_write_failed, c);
    if (opts->connect_timeout_ms > 0)
        pc_timer_start(loop, &c->connect_timer, opts->connect_timeout_ms);
    pc_conn_ref(c); /* held by the resolver until on_resolved */
    pc_resolve_start(loop, c->host, port, on_resolved, c);
    return c;
}
