/* One connection to a broker (TCP or TLS): handshake, auth, keep-alive, request ids, dispatch. */
#ifndef PC_CONN_H
#define PC_CONN_H
#include <stdint.h>

#include "core/frame.h"
#include "net/loop.h"
#include "net/netstats.h"

typedef struct pc_conn pc_conn_t;
struct pc_auth;
struct pc_tls_ctx;
struct pulsarc_conf_s;

typedef struct pc_conn_opts {
    int connect_timeout_ms;   /* TCP + TLS handshake + CONNECT/CONNECTED */
    int keepalive_s;          /* PING interval; an unanswered PING closes */
    const char *client_version;
    struct pc_auth *auth;     /* NULL: no authentication. Owned by the client */
    struct pc_tls_ctx *tls;   /* NULL: plain TCP. Owned by the client */
    int partial_producer;     /* advertise supports_partial_producer (WaitForExclusive) */
    pc_net_counters_t *counters; /* the client's, or NULL: opened/closed/failed */
} pc_conn_opts_t;

/*
 * Application thread (pulsarc_client_new): builds o->auth and, when tls is
 * set (a pulsar+ssl:// URL), o->tls from the configuration. The objects
 * must outlive every connection: free them after the pool.
 */
pulsarc_err_t pc_conn_opts_security(pc_conn_opts_t *o, const struct pulsarc_conf_s *conf, int tls,
                                    char *err, size_t errlen);
void pc_conn_opts_security_free(pc_conn_opts_t *o);

/* Called exactly once: on CONNECTED (err 0) or on failure. */
typedef void (*pc_conn_ready_cb)(void *arg, pc_conn_t *conn, pulsarc_err_t err,
                                 const char *errmsg);
/*
 * Called exactly once per request: with the response frame (err 0, or the
 * broker's error for ERROR replies with its message), on timeout, or when
 * the connection drops (frame NULL).
 */
typedef void (*pc_req_cb)(void *arg, pulsarc_err_t err, const pc_frame_t *frame,
                          const char *errmsg);

/* Producers and consumers attach to receive their unsolicited frames. */
typedef struct pc_conn_handler {
    void (*on_frame)(void *obj, pc_conn_t *conn, const pc_frame_t *frame);
    void (*on_closed)(void *obj, pc_conn_t *conn, pulsarc_err_t why);
    /* Optional: every frame of a run of reads was dispatched (consumers
     * hand what they decoded to the application once per run, not per
     * frame): every 256 KiB read and when the socket is drained. Called
     * only for those that received a frame during that run. */
    void (*on_input_done)(void *obj, pc_conn_t *conn);
} pc_conn_handler_t;

/* All functions below: loop thread only. */

/* Starts connecting to host:port. logical is the broker address the pool keys on. */
pc_conn_t *pc_conn_new(pc_loop_t *loop, const pc_conn_opts_t *opts, const char *host,
                       uint16_t port, const char *proxy_to);
void pc_conn_ref(pc_conn_t *c);
void pc_conn_unref(pc_conn_t *c);
/* Registers a callback for when the handshake completes (at once if it has). */
void pc_conn_when_ready(pc_conn_t *c, pc_conn_ready_cb cb, void *arg);
int pc_conn_is_ready(const pc_conn_t *c);
int pc_conn_is_closed(const pc_conn_t *c);
/* Fails everything pending on it and notifies attached handlers. */
void pc_conn_close(pc_conn_t *c, pulsarc_err_t why, const char *reason);
/* Tells the owner (the pool) when the connection is gone. */
void pc_conn_set_close_hook(pc_conn_t *c, void (*hook)(void *arg, pc_conn_t *c), void *arg);

/* Sends a fire-and-forget command. */
pulsarc_err_t pc_conn_send(pc_conn_t *c, const pc_cmd_t *cmd);
/* Sends an already framed buffer (SEND frames built by a producer). */
pulsarc_err_t pc_conn_send_raw(pc_conn_t *c, const uint8_t *data, size_t len);
/*
 * As pc_conn_send_raw, but a large piece may be written from data itself
 * (small ones are copied): data must stay unchanged until the end of this
 * loop turn, and before its owner frees it sooner it must call
 * pc_conn_copy_borrowed. Resends after a reconnect queue it again.
 */
pulsarc_err_t pc_conn_send_borrowed(pc_conn_t *c, const uint8_t *data, size_t len);
/* Every connection of this thread copies what it borrows: lent memory may
 * be freed after this. Cheap when none borrows (between loop turns). */
void pc_conn_copy_borrowed(void);
/* Sends cmd (whose request_id field must equal id) and routes the reply to cb. */
void pc_conn_request(pc_conn_t *c, const pc_cmd_t *cmd, uint64_t id, int timeout_ms,
                     pc_req_cb cb, void *arg);
/*
 * Completes pending request id now with err (its callback runs before this
 * returns); a reply that comes later is dropped like one after a timeout.
 * Returns 0 when no such request is pending.
 */
int pc_conn_fail_request(pc_conn_t *c, uint64_t id, pulsarc_err_t err, const char *msg);

void pc_conn_attach_producer(pc_conn_t *c, uint64_t id, const pc_conn_handler_t *h, void *obj);
void pc_conn_attach_consumer(pc_conn_t *c, uint64_t id, const pc_conn_handler_t *h, void *obj);
void pc_conn_detach_producer(pc_conn_t *c, uint64_t id);
void pc_conn_detach_consumer(pc_conn_t *c, uint64_t id);
/* Topic-list watchers get their WATCH_TOPIC_UPDATE pushes by watcher id. */
void pc_conn_attach_watcher(pc_conn_t *c, uint64_t id, const pc_conn_handler_t *h, void *obj);
void pc_conn_detach_watcher(pc_conn_t *c, uint64_t id);
/* The broker offers WATCH_TOPIC_LIST (its CONNECTED said supports_topic_watchers). */
int pc_conn_supports_topic_watchers(const pc_conn_t *c);

/* Negotiated values, valid once ready. */
size_t pc_conn_max_message_size(const pc_conn_t *c);
int pc_conn_protocol_version(const pc_conn_t *c);
const char *pc_conn_peer(const pc_conn_t *c); /* "host:port" */
#endif
