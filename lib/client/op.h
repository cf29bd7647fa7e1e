/*
 * One operation: something a caller waits on or is called back for, with
 * one outcome (an error code and a message). Every result the client hands
 * across threads goes through it: the loop (or whichever thread finishes
 * the work) completes it once; the caller either waits for it or is called
 * back through the client's callback queue, never both.
 *
 *   sync = async + one wait: start the work with the op, then pc_op_wait.
 *   cancel on close: whoever keeps the list of pending work completes each
 *     op with PULSARC_ERR_CLOSED; the first completion wins, so a late
 *     answer from the broker is dropped.
 *   callbacks: pc_op_call_back makes completion queue the callback on a
 *     pc_cbq_t, which runs it on the callback thread (or in
 *     pulsarc_client_poll) with no library lock held. A queue shut down
 *     by client close refuses it; the completer learns so from
 *     pc_op_done and answers its caller CLOSED instead.
 *
 * An op can wait for several parts (pc_op_add): it completes when the last
 * part reports; its error is the first one reported. That is a countdown
 * (closing n handles at once, the sends and acks still running in a
 * transaction) expressed as the same wait.
 *
 * How the producer and consumer map onto it:
 *   send receipt: sync send is one op on the sender's stack, completed by
 *     the loop from SEND_RECEIPT / SEND_ERROR / the send timeout, or by close
 *     for what is still queued; the message id travels beside it in the send
 *     item. An async send's outcome takes the same completion path as an
 *     op's callback form, the client's callback queue, but the send item
 *     itself is what travels there: a receipt completes a chain of them with
 *     one push, and an op per pending message would add a mutex, a condition
 *     variable and its message buffer to each of maxPendingMessages items.
 *   receive: a receive (sync or receive_async, every consumer kind) that
 *     finds the queue empty is an op in the consumer's line of receivers;
 *     the io thread's append pops the oldest and hands it the message (in
 *     the embedding pc_receive_t, its permit owed as if taken), then
 *     completes it; a sync receive is pc_op_queue_wait with its deadline,
 *     receive_async the callback form; close and end of topic fail the
 *     line. A receive that finds a message queued takes it without an op.
 *     A listener is one completion per message outside this type; batch
 *     receive waits on the queue's condition for "full or timeout".
 *   ack receipt: one op per acknowledgement that asks for the broker's
 *     ACK_RESPONSE (transactional acks); n acks sent together are one op of
 *     n parts when only the first error matters, n ops when each id's
 *     outcome is wanted.
 *   seek: one op completed by the SEEK reply, or DISCONNECTED / CLOSED when
 *     the connection or the consumer goes first.
 *   pending slot, memory budget: a blocked sender's op waits in a
 *     pc_op_queue_t; whoever frees a slot (bytes) reserves it for the oldest
 *     waiter and completes its op; the deadline is the send timeout; close
 *     fails the line with CLOSED.
 *   flush: an op in the producer's flush line, completed once everything
 *     enqueued before it has its outcome; flush_async is its callback form
 *     (one part per partition), the sync flush waits on it.
 *   close: the producer's and the single consumer's close post the close and
 *     wait on the handle's close op, completed when the loop reached CLOSED;
 *     waiting for the last queued send callback is a line completed by it,
 *     and for the flush_async callbacks still out a countdown op (pc_op_add
 *     per flush, one part done per callback run); a consumer's close waits
 *     for its receive_async callbacks in a line the last one completes.
 *
 * Threads: any. The op lives where its owner puts it (a blocked caller's
 * stack is fine: the caller cannot return before the completion has let
 * go of the lock).
 */
#ifndef PC_OP_H
#define PC_OP_H
#include <pthread.h>
#include <time.h>

#include "client/cbq.h"
#include "pulsarc.h"

typedef struct pc_op pc_op_t;
typedef void (*pc_op_fn)(pc_op_t *op, void *arg);

struct pc_op {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int parts;               /* completions still owed */
    int done;
    pulsarc_err_t err;       /* the first error reported */
    char errmsg[512];
    pc_cbq_t *cbq;           /* callback form: where completion queues fn */
    pc_op_fn fn;
    void *fn_arg;
    pc_cb_item_t item;
    struct pc_op *qnext;     /* in a pc_op_queue_t, under its owner's lock */
};

/* A pending op of one part, in the waiting form. Any thread. */
void pc_op_init(pc_op_t *op);
void pc_op_destroy(pc_op_t *op);
/*
 * Callback form: completion queues fn(op, arg) on q instead of waking
 * waiters. fn runs with no library lock held and may destroy and free op.
 * Set before the op can complete; nobody may wait on such an op.
 */
void pc_op_call_back(pc_op_t *op, pc_cbq_t *q, pc_op_fn fn, void *arg);
/*
 * n more parts owed before completion. On a completed op (waiting form
 * only) this opens it again, keeping its first error: a countdown that
 * reached zero and gets new work.
 */
void pc_op_add(pc_op_t *op, int n);
/*
 * One part done with err (msg may be NULL). The first error is kept; the
 * last part completes the op. Reports after completion are ignored. Any
 * thread. Returns 1 only in the callback form, when this call completed
 * the op and the callback queue refused the callback (the client closed):
 * it will never run, and the caller owns op and what fn would have
 * released; 0 otherwise.
 */
int pc_op_done(pc_op_t *op, pulsarc_err_t err, const char *msg);
/* Blocks until completion; returns the op's error and copies its message to errstr. */
pulsarc_err_t pc_op_wait(pc_op_t *op, char *errstr, size_t errlen);
/* Blocks until completion or timeout_ms (<0: forever); 1 when completed. */
int pc_op_wait_for(pc_op_t *op, int timeout_ms);
/* Blocks until completion or the CLOCK_MONOTONIC deadline dl (NULL: forever); 1 when completed. */
int pc_op_wait_until(pc_op_t *op, const struct timespec *dl);
/* The error reported so far (the first), and its message when errstr is given. */
pulsarc_err_t pc_op_result(pc_op_t *op, char *errstr, size_t errlen);

/*
 * A line of ops waiting for something a thread hands out (a message to a
 * receiver, a pending slot or memory budget to a sender): first come, first
 * served, so whoever frees one thing wakes exactly one waiter, the oldest,
 * and hands it over. The queue belongs to its owner and is touched only
 * under the owner's lock; an op's own lock is taken only to complete it.
 * The giver pops an op under the owner's lock and may complete it after
 * letting go of that lock. Cancel on close is pc_op_queue_complete_all.
 */
typedef struct pc_op_queue {
    pc_op_t *head, *tail;
} pc_op_queue_t;

/* Owner's lock held for all of these. */
void pc_op_queue_push(pc_op_queue_t *q, pc_op_t *op);
pc_op_t *pc_op_queue_pop(pc_op_queue_t *q);
/* 1 when op was queued and is now taken off; 0 when a giver already popped it. */
int pc_op_queue_remove(pc_op_queue_t *q, pc_op_t *op);
/*
 * Pops every op and completes each with err (msg may be NULL): cancel on
 * close with CLOSED, or, with PULSARC_OK, the hand-over's second half: a
 * giver pops waiters into a local queue under the owner's lock, reserving
 * for each, and completes that queue after letting go of the lock.
 */
void pc_op_queue_complete_all(pc_op_queue_t *q, pulsarc_err_t err, const char *msg);

/*
 * The one way to wait in line: queues op on q, lets go of *lock while it
 * waits (driving the loop in loop mode, as every wait does), and takes it
 * again before returning. Returns 1 when the op completed (its outcome is
 * in the op and whatever embeds it), 0 when dl passed first: the op is
 * then off the queue and nobody will complete it. A giver that popped it
 * just before the deadline wins: the wait goes on for that completion.
 */
int pc_op_queue_wait(pc_op_queue_t *q, pc_op_t *op, pthread_mutex_t *lock,
                     const struct timespec *dl);
#endif
