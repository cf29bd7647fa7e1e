/*
 * What the bench programs that drive the public API share: clocks, the
 * process's memory from /proc, and filling a configuration from key/value
 * pairs. Header-only (static inline): each program takes what it uses.
 */
#ifndef PC_BENCH_UTIL_H
#define PC_BENCH_UTIL_H
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "pulsarc.h"

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double tv_s(struct timeval tv) { return (double)tv.tv_sec + tv.tv_usec / 1e6; }

/* A "VmXXX:" line of /proc/self/status in MB (0 when unreadable). */
static inline double proc_status_mb(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = 0;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && sscanf(line + n, " %lf", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb / 1024;
}

/* A new configuration with every pair of kv[][2] set; NULL (err says why) on a bad one. */
static inline pulsarc_conf_t *conf_from_pairs(const char *const (*kv)[2], size_t n, char *err,
                                              size_t el) {
    pulsarc_conf_t *c = pulsarc_conf_new();
    for (size_t i = 0; c && i < n; i++)
        if (pulsarc_conf_set(c, kv[i][0], kv[i][1], err, el)) {
            pulsarc_conf_destroy(c);
            return NULL;
        }
    return c;
}

/* Extra properties given as "key=value" on the command line (--conf), set
 * on c after the program's own; -1 (err says why) on a malformed or
 * refused one. */
#define BENCH_MAX_EXTRA 16
static inline int conf_set_extra(pulsarc_conf_t *c, const char *const *kv, int n, char *err,
                                 size_t el) {
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(kv[i], '=');
        char key[128];
        if (!eq || eq == kv[i] || (size_t)(eq - kv[i]) >= sizeof key) {
            snprintf(err, el, "--conf wants key=value, not '%s'", kv[i]);
            return -1;
        }
        memcpy(key, kv[i], (size_t)(eq - kv[i]));
        key[eq - kv[i]] = '\0';
        if (pulsarc_conf_set(c, key, eq + 1, err, el))
            return -1;
    }
    return 0;
}
#endif
