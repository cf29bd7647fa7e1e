/*
 * Design notes: what every verb that talks to a broker needs around the
 * client: building it from the layered configuration, clocks, and a quiet
 * way to stop on Ctrl-C.
 *
 *  - A client error that comes from a configured value (a bad URL) is
 *    reported with that value's origin, so the user knows which flag, file
 *    line or variable to fix; those exit with CLI_EXIT_USAGE.
 *  - SIGINT/SIGTERM only set a flag: loops wait in slices (receive
 *    timeouts, sleeps to deadlines) and check it, so a run interrupted by
 *    the user still flushes, closes and prints its summary. A second
 *    signal kills as usual (SA_RESETHAND).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

void cli_trap_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND; /* no SA_RESTART: blocking calls return early */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cli_interrupted(void) {
    return interrupted;
}

uint64_t cli_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cli_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int is_config_error(pulsarc_err_t e) {
    return e == PULSARC_ERR_BAD_URL || e == PULSARC_ERR_BAD_CONFIG ||
           e == PULSARC_ERR_UNKNOWN_CONFIG || e == PULSARC_ERR_INVALID_ARG ||
           e == PULSARC_ERR_UNSUPPORTED;
}

int cli_open_client(const cli_common_t *c, const cli_settings_t *defaults, cli_config_t *cfg,
                    pulsarc_client_t **client) {
    int rc = cli_config_build(c, defaults, NULL, stderr, cfg);
    if (rc)
        return rc;
    char url[512], origin[512];
    const char *o = cli_config_origin(cfg, "serviceUrl");
    snprintf(origin, sizeof origin, "%s", o ? o : "the default");
    if (!*cli_config_get(cfg, "serviceUrl", url, sizeof url)) {
        cli_config_free(cfg);
        return cli_usage(c->prog, "no broker URL: give --service-url, set $PULSAR_SERVICE_URL, "
                                  "or brokerServiceUrl in client.conf");
    }
    char err[512];
    pulsarc_err_t e = pulsarc_client_new(cfg->conf, client, err, sizeof err);
    if (e == PULSARC_OK)
        return 0;
    cli_config_free(cfg);
    return cli_fail(c->prog, is_config_error(e) ? CLI_EXIT_USAGE : CLI_EXIT_RUNTIME,
                    "cannot create the client: %s (serviceUrl '%s' from %s)", err, url, origin);
}
