/*
 * Design notes: sending at a fixed rate without busy-waiting.
 *
 * Event i is due at start + i/rate, computed from the start every time
 * rather than by adding intervals, so rounding never accumulates and a
 * slow send (a full queue, a reconnect) is made up for by sending at once
 * until the schedule is met again: the offered load is the rate asked
 * for, which is what latency figures must be measured against. Waiting is
 * clock_nanosleep(TIMER_ABSTIME) on CLOCK_MONOTONIC: the thread sleeps in
 * the kernel to the exact deadline, and a signal (Ctrl-C) cuts it short.
 */
#include <errno.h>
#include <time.h>

#include "cli.h"

void cli_pacer_init(cli_pacer_t *p, double rate) {
    p->rate = rate;
    p->start_ns = cli_now_ns();
    p->issued = 0;
}

uint64_t cli_pacer_next(const cli_pacer_t *p) {
    if (p->rate <= 0)
        return 0;
    return p->start_ns + (uint64_t)((double)p->issued * 1e9 / p->rate);
}

void cli_sleep_until(uint64_t t_ns) {
    struct timespec ts = {(time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u)};
    /* EINTR: a signal arrived; the caller checks cli_interrupted(). */
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

int cli_pacer_wait(cli_pacer_t *p, uint64_t limit_ns) {
    uint64_t due = cli_pacer_next(p);
    if (due > cli_now_ns()) {
        if (limit_ns && limit_ns < due) {
            cli_sleep_until(limit_ns);
            return cli_now_ns() >= due;
        }
        cli_sleep_until(due);
        if (cli_now_ns() < due)
            return 0; /* woken early by a signal */
    }
    p->issued++;
    return 1;
}
