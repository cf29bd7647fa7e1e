/*
 * One request to a broker, followed to its answer: look the topic up,
 * get a connection to the broker that owns it, send the request, and on a
 * retriable failure try again after a backoff, giving up at a deadline.
 * Producers and consumers create themselves with it (handler.c), the
 * transaction coordinator client runs its calls with it, and the client
 * asks for partition counts with it.
 *
 * An attempt runs in steps (lookup, connection, reply); each holds a
 * reference on the owner and, when it resumes, asks whether the request is
 * still wanted: one that was closed or completed meanwhile just lets go, so
 * the owner may stop at any moment.
 *
 * Within a run of failed attempts, one that gets further than every
 * earlier one (a lookup answered after connection failures, a request
 * sent after failed lookups) starts the backoff over: the broker has come
 * back, so the delay grown while it was away no longer applies. Stages
 * only rise, so this happens at most twice per run and a broker failing
 * always at the same step is still retried on the doubling schedule.
 *
 * Except when the owner cannot be reached: a lookup named it and the
 * connection to it failed (refused, closed before it was ready, or turned
 * away by the proxy in front of it), or the lookup was answered
 * ServiceNotReady (what a proxy answers when the owner it asks is gone).
 * That is what a broker killed without notice looks like until its
 * ownership lapses: lookups go on naming it for as long as its metadata
 * session lives (tens of seconds), each attempt fails at once, and on the
 * doubling schedule
 * the next attempt after a live broker takes over would be as far away as
 * all the time spent so far. Those failures retry, each with a fresh
 * lookup, on a schedule of their own, from the initial delay doubling to
 * PC_REQUEST_OWNER_MAX_MS, for at most PC_REQUEST_OWNER_TRIES attempts per
 * run of failures; beyond that the ordinary schedule takes over, so an
 * owner that stays unreachable is not asked for every second forever.
 *
 * PULSARC_DEBUG=reconnect traces every step with a monotonic timestamp,
 * the request's address and its topic.
 *
 * Loop thread only, but for pc_request_init and pc_call_init.
 */
#ifndef PC_REQUEST_H
#define PC_REQUEST_H
#include "client/client_int.h"
#include "core/backoff.h"
#include "net/conn.h"

/* How far an attempt got: lookup answered, request sent. */
enum { PC_RSTAGE_NONE = 0, PC_RSTAGE_LOOKED_UP = 1, PC_RSTAGE_SENT = 2 };

/* The cap of the delay after failing to reach an owner a lookup named. */
#define PC_REQUEST_OWNER_MAX_MS 1000
/* Attempts per run of failures on that schedule (about two minutes at the cap). */
#define PC_REQUEST_OWNER_TRIES 120

typedef struct pc_request pc_request_t;

typedef struct pc_request_ops {
    /* Whether attempts are still wanted; a resuming step that finds not lets go. */
    int (*wanted)(pc_request_t *r);
    /*
     * The attempt has a connection: send the request on it. The step's
     * reference passes to the reply, which ends in pc_request_failed or
     * the owner's success, and then in unref.
     */
    void (*send)(pc_request_t *r, pc_conn_t *conn);
    /* Optional: a connection an earlier attempt left that may still be used. */
    pc_conn_t *(*known_conn)(pc_request_t *r);
    /* Optional: an address an earlier lookup found, to connect to without one. */
    const pc_broker_addr_t *(*known_addr)(pc_request_t *r);
    /* Optional: the lookup answered a (before connecting there). */
    void (*looked_up)(pc_request_t *r, const pc_broker_addr_t *a);
    /* Optional: the whole attempt, for requests that are not lookup, connect, send. */
    void (*attempt)(pc_request_t *r);
    /*
     * An attempt failed with err: whether another is worth making (the
     * deadline aside). The place to forget what the attempt used that may
     * be stale.
     */
    int (*retry_after)(pc_request_t *r, pulsarc_err_t err);
    /* No more attempts: err was final or time ran out. */
    void (*on_failed)(pc_request_t *r, pulsarc_err_t err, const char *msg);
    /* The owner's reference count (steps in flight hold one). */
    void (*ref)(pc_request_t *r);
    void (*unref)(pc_request_t *r);
} pc_request_ops_t;

struct pc_request {
    const pc_request_ops_t *ops;
    pulsarc_client_t *client;
    const char *topic;       /* looked up; borrowed from the owner */
    const char *what;        /* what is sent, for the trace ("create", ...) */
    int conn_flags;          /* PC_CONN_F_*: what kind of pooled connection to use */
    int64_t deadline;        /* no retry after it; <0: retry for ever */
    pc_backoff_t backoff;    /* failed attempts; reset by a success */
    pc_backoff_t owner_backoff; /* failed connections to a looked-up owner */
    int owner_tries;         /* attempts on owner_backoff since the last success */
    int stage;               /* PC_RSTAGE_* of the attempt under way */
    int best_stage;          /* furthest stage since the last success */
    pc_timer_t timer;        /* the next attempt */
};

/* Any thread, before the loop sees it. Backoff from initial_ms doubling up to max_ms. */
void pc_request_init(pc_request_t *r, const pc_request_ops_t *ops, pulsarc_client_t *c,
                     const char *topic, int64_t initial_ms, int64_t max_ms);
/* The first attempt, now; retries until timeout_ms from now (<0: for ever). */
void pc_request_start(pc_request_t *r, int timeout_ms);
/* An attempt, now (the retry timer's function). */
void pc_request_attempt(pc_request_t *r);
/* The attempt under way failed: retry after the backoff, or give up (on_failed). */
void pc_request_failed(pc_request_t *r, pulsarc_err_t err, const char *msg);
/*
 * The delay before the next attempt after the one under way failed with
 * err, on the schedule its stage and err call for (the policy above);
 * advances that schedule. No side effect beyond the request's backoff state.
 */
int64_t pc_request_next_delay(pc_request_t *r, pulsarc_err_t err);
/* Another attempt after delay_ms. */
void pc_request_retry_in(pc_request_t *r, int64_t delay_ms);
/* The request succeeded: the next run of failures starts the backoff over. */
void pc_request_succeeded(pc_request_t *r);
/* No attempt from the timer any more (steps in flight find it unwanted). */
void pc_request_stop(pc_request_t *r);

/* PULSARC_DEBUG=reconnect is set (read once). */
int pc_request_tracing(void);
__attribute__((format(printf, 2, 3))) void pc_request_trace(const pc_request_t *r,
                                                            const char *fmt, ...);
#define PC_RTRACE(r, ...)                                                                   \
    do {                                                                                    \
        if (pc_request_tracing())                                                           \
            pc_request_trace(r, __VA_ARGS__);                                               \
    } while (0)

/*
 * A call: a request made for one waiting caller (an op), owned by the loop
 * from pc_call_start on. It lives on the heap and is freed (free_fn) when
 * it has completed and no step holds it any more, so completing it early
 * (a close) never frees memory a pending callback will still read. The
 * caller's op is touched only until completion. Calls start in a list,
 * which is how a close cancels them all.
 */
typedef struct pc_call {
    pc_request_t req;        /* first: a pc_request_t * is a pc_call_t * */
    struct pc_call *next;
    struct pc_call_list *list;
    pc_op_t *op;             /* the caller's; NULL once completed */
    int refs;                /* one while not completed, one per step in flight */
    void (*free_fn)(struct pc_call *call);
} pc_call_t;

/* Defined in client_int.h (the client keeps one); closed: calls starting now fail at once. */
typedef struct pc_call_list pc_call_list_t;

/* Any thread: a call for op; ops must use pc_call_wanted, pc_call_ref and pc_call_unref. */
void pc_call_init(pc_call_t *call, const pc_request_ops_t *ops, pulsarc_client_t *c,
                  const char *topic, int64_t initial_ms, int64_t max_ms, pc_op_t *op,
                  void (*free_fn)(pc_call_t *call));
/* Joins list; 0 (and completed CLOSED) when the list was cancelled already. */
int pc_call_start(pc_call_t *call, pc_call_list_t *list);
/* Completes the caller's op (first outcome wins). */
void pc_call_complete(pc_call_t *call, pulsarc_err_t err, const char *msg);
/* Completes every call in list with err and refuses new ones. */
void pc_call_list_cancel(pc_call_list_t *list, pulsarc_err_t err, const char *msg);
int pc_call_wanted(pc_request_t *r);
void pc_call_ref(pc_request_t *r);
void pc_call_unref(pc_request_t *r);
/* The call failed for good: on_failed of a call's ops. */
void pc_call_failed(pc_request_t *r, pulsarc_err_t err, const char *msg);
#endif
