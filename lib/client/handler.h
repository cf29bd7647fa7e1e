/*
 * What producers and consumers share: find the topic's broker, get a
 * connection, create the resource there (PRODUCER / SUBSCRIBE), retry with
 * backoff within the creation deadline, and once created reconnect forever
 * when the connection drops or the broker closes the resource.
 *
 * Two delay schedules: `backoff` paces attempts that fail to (re)create the
 * resource and starts over once one succeeds; `flap` paces reconnects after
 * losing a created resource and starts over only once the resource has
 * stayed up for PC_HANDLER_HEALTHY_MS or carried traffic (a send receipt, a
 * message: the owner calls pc_handler_proved), so a broker that accepts and
 * then drops us at once is retried on a doubling schedule, not in a tight
 * loop, while a working producer that loses its topic to one unload after
 * another reconnects after the initial delay every time.
 *
 * Lookup, connection, create command and the backoff between failed
 * attempts are the reconnecting request's (client/request.h); this adds
 * what only a created resource has: the reconnect after losing it, the
 * `flap` schedule, partial create replies and the create abandoned when
 * the broker closes us before answering it.
 *
 * Waiting for the resource: a request the owner can only send while the
 * resource is created (a consumer's seek or last-message-id) and that
 * finds it reconnecting is parked on the handler (pc_handler_wait). It is
 * run when the resource is created again, in the order parked, or failed:
 * with TIMEOUT at its own deadline, with the handler's error when the
 * handler gives up, with CLOSED when the owner stops it.
 */
#ifndef PC_HANDLER_H
#define PC_HANDLER_H
#include "client/request.h"

/* How long a created resource must stay up before a loss counts as isolated. */
#define PC_HANDLER_HEALTHY_MS 2000

typedef enum { PC_H_CONNECTING, PC_H_READY, PC_H_CLOSING, PC_H_CLOSED } pc_hstate_t;

typedef struct pc_handler pc_handler_t;
typedef struct pc_handler_wait pc_handler_wait_t;

/*
 * One parked request, embedded in the caller's object, which must stay
 * valid (and keep the owner alive) until run or fail has been called.
 * Exactly one of them is called, once, on the loop thread; run may park
 * the request again.
 */
struct pc_handler_wait {
    void (*run)(pc_handler_wait_t *w);
    void (*fail)(pc_handler_wait_t *w, pulsarc_err_t err, const char *msg);
    /* the handler's */
    pc_handler_t *h;
    pc_timer_t timer;
    pc_handler_wait_t *next;
};

typedef struct pc_handler_ops {
    /* Sends the create command on conn; its reply must go to pc_handler_created. */
    void (*send_create)(pc_handler_t *h, pc_conn_t *conn);
    /* Sends the fire-and-forget close command (after a timeout, or a late success). */
    void (*send_close)(pc_handler_t *h, pc_conn_t *conn);
    /* Created (again): the owner attaches to conn and resumes. */
    void (*on_ready)(pc_handler_t *h, pc_conn_t *conn, const pc_frame_t *reply);
    /* Gave up: the first creation failed for good, or a final error after it. */
    void (*on_failed)(pc_handler_t *h, pulsarc_err_t err, const char *msg);
    /* Errors that end the resource even after it was created (may be NULL). */
    int (*is_final)(pulsarc_err_t err);
    /* The owner's reference count (callbacks hold one while in flight). */
    void (*ref)(pc_handler_t *h);
    void (*unref)(pc_handler_t *h);
} pc_handler_ops_t;

struct pc_handler {
    pc_request_t req;        /* first: the trace names the handler by this address */
    const pc_handler_ops_t *ops;
    pulsarc_client_t *client;
    const char *topic;       /* borrowed from the owner */
    pc_hstate_t state;
    pc_conn_t *conn;         /* attached connection when READY */
    pc_conn_t *creating;     /* connection the create command is in flight on */
    uint64_t create_req;     /* its request id */
    int created_once;
    uint64_t epoch;          /* bumped on every create attempt */
    int lost_in_create;      /* the broker closed us before answering the create */
    pc_backoff_t flap;       /* losses after creation; reset after a healthy period */
    int64_t ready_at;        /* when the resource was last created */
    int proved;              /* traffic flowed since then */
    /*
     * Set by owners whose create reply can be partial (PRODUCER_SUCCESS with
     * producer_ready=false, WaitForExclusive); NULL otherwise. On such a
     * reply the request stays pending: the connection calls
     * pc_handler_created again with the final reply for the same request id.
     */
    int (*is_partial)(const pc_frame_t *reply);
    int conn_flags;          /* PC_CONN_F_*: what kind of pooled connection to use */
    pc_handler_wait_t *waiting; /* parked requests, oldest first */
};

/* Any thread, before the loop sees it. */
void pc_handler_init(pc_handler_t *h, const pc_handler_ops_t *ops, pulsarc_client_t *c,
                     const char *topic);
/* Loop thread: begin the first creation (deadline: operationTimeoutMs). */
void pc_handler_start(pc_handler_t *h);
/*
 * Loop thread, from send_create: sends the create command `cmd` (request
 * id `id`) on conn with its reply going to pc_handler_created.
 */
void pc_handler_request_create(pc_handler_t *h, pc_conn_t *conn, const pc_cmd_t *cmd, uint64_t id,
                               int timeout_ms);
/* Loop thread: the reply callback of the create request. */
void pc_handler_created(void *arg, pulsarc_err_t err, const pc_frame_t *f, const char *msg);
/*
 * Loop thread: the connection dropped or the broker closed us; reconnect
 * later. A create in flight is abandoned at once (the broker that closed
 * us may never answer it) and retried.
 */
void pc_handler_lost(pc_handler_t *h);
/* Loop thread: the resource carried traffic since its creation (cheap; call on each). */
static inline void pc_handler_proved(pc_handler_t *h) { h->proved = 1; }
/*
 * Loop thread: stop reconnecting; returns the attached connection (now
 * owned by the caller to send its close on) or NULL. State becomes CLOSING.
 */
pc_conn_t *pc_handler_stop(pc_handler_t *h);

/*
 * Loop thread: parks w (run and fail set) until the resource is created
 * again, failing it with TIMEOUT at deadline_ms (pc_now_ms clock). The
 * owner decides when a request must wait; the handler decides when it
 * goes: right after on_ready, or failed after on_failed or on stop.
 */
void pc_handler_wait(pc_handler_t *h, pc_handler_wait_t *w, int64_t deadline_ms);
/* Loop thread: fails every parked request now (err is never OK). */
void pc_handler_fail_waiting(pc_handler_t *h, pulsarc_err_t err, const char *msg);
#endif
