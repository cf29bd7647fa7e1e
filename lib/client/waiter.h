/*
 * The former name of a one-part op in the waiting form (client/op.h),
 * kept for the producer and consumer code that still spells it so; new
 * code uses pc_op_t directly.
 */
#ifndef PC_WAITER_H
#define PC_WAITER_H
#include "client/op.h"

typedef pc_op_t pc_waiter_t;

static inline void pc_waiter_init(pc_waiter_t *w) { pc_op_init(w); }
static inline void pc_waiter_destroy(pc_waiter_t *w) { pc_op_destroy(w); }
/* Completes the waiter (first call wins); msg may be NULL. Any thread. */
static inline void pc_waiter_done(pc_waiter_t *w, pulsarc_err_t err, const char *msg) {
    pc_op_done(w, err, msg);
}
static inline pulsarc_err_t pc_waiter_wait(pc_waiter_t *w, char *errstr, size_t errlen) {
    return pc_op_wait(w, errstr, errlen);
}
#endif
