/*
 * Design notes: what every file of a source calls (source.c, split.c,
 * source_txn.c, source_fetch.c), kept below all of them so none has to
 * call up into the source's lifecycle for it: the clock its timers and
 * deadlines run on, its log (the application's callback, or stderr for
 * warnings), and whether its subscription is Shared or Key_Shared, the
 * question about the configuration they all ask. Called on the thread
 * that uses the source.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "connector/source_int.h"

uint64_t pc_source_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void pc_source_log(const pulsarc_source_t *src, pulsarc_source_log_level_t level,
                   const char *fmt, ...) {
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (src->conf.log_cb)
        src->conf.log_cb(src->conf.log_opaque, level, line);
    else if (level == PULSARC_SOURCE_LOG_WARN)
        fprintf(stderr, "pulsarc source: %s\n", line);
}

int pc_source_shared(const pulsarc_source_t *src) {
    return src->conf.sub_type == PC_SUB_SHARED || src->conf.sub_type == PC_SUB_KEY_SHARED;
}
