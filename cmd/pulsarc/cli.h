/*
 * Design notes: the pieces the `pulsarc` command-line tool shares between
 * its verbs. Nothing here is public API; the tool uses only pulsarc.h (and
 * pulsarc/admin.h) like any other application would.
 *
 *  - Every verb describes its flags in a table of cli_opt_t; one parser
 *    (options.c) reads them, one printer writes --help from the same table,
 *    so help and behaviour cannot drift apart.
 *  - Flags that are configuration keys are not applied while parsing: they
 *    are recorded, in command-line order, as settings with their origin
 *    (the flag as typed). config.c layers them over client.conf and the
 *    environment, and every later error can say which flag (or file:line,
 *    or variable) a bad value came from.
 *  - Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error.
 */
#ifndef PULSARC_CLI_H
#define PULSARC_CLI_H

#include <pulsarc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_RUNTIME = 1, CLI_EXIT_USAGE = 2 };

/* ---- growable lists ------------------------------------------------------ */

/* Strings borrowed from argv (or owned by whoever filled the list). */
typedef struct cli_list {
    const char **v;
    size_t n, cap;
} cli_list_t;
int cli_list_add(cli_list_t *l, const char *s);
void cli_list_free(cli_list_t *l);

/* One configuration setting and where it came from ("--rate", "f.conf:3"). */
typedef struct cli_setting {
    char *key, *value, *origin; /* owned */
} cli_setting_t;
typedef struct cli_settings {
    cli_setting_t *v;
    size_t n, cap;
} cli_settings_t;
int cli_settings_add(cli_settings_t *s, const char *key, const char *value, const char *origin);
void cli_settings_free(cli_settings_t *s);

/* ---- flags --------------------------------------------------------------- */

typedef enum cli_kind {
    CLI_SWITCH,   /* no value: the int field becomes 1 */
    CLI_INT,      /* int64_t field, within [min, max] */
    CLI_NUM,      /* double field, >= 0 */
    CLI_STR,      /* const char * field (borrowed from argv) */
    CLI_LIST,     /* repeatable: appended to a cli_list_t field */
    CLI_CONF,     /* the value is configuration key `key` */
    CLI_CONF_SET, /* no value: configuration key `key` := `fixed` */
    CLI_CONF_KV,  /* "key=value" for any configuration key */
    CLI_HELP      /* prints help */
} cli_kind_t;

typedef struct cli_opt {
    const char *names; /* spellings, comma-separated: "-r,--rate" */
    cli_kind_t kind;
    const char *arg;   /* the value's name in help ("N"); NULL for switches */
    size_t off;        /* field offset in the verb's options struct */
    const char *key;   /* CLI_CONF, CLI_CONF_SET: configuration key */
    const char *fixed; /* CLI_CONF_SET: its value */
    int64_t min, max;  /* CLI_INT range */
    const char *help;
} cli_opt_t;

/* What every verb has: configuration flags and positional arguments. */
typedef struct cli_common {
    const char *prog;           /* "pulsarc produce", for messages */
    const char *client_conf;    /* --client-conf */
    cli_settings_t flags;       /* configuration from flags, in order */
    cli_list_t args;            /* positional arguments */
    int help;
    uint64_t seen;              /* bit i: verb option i was given */
} cli_common_t;

/* A verb's flags and help text. */
typedef struct cli_spec {
    const char *prog;     /* "pulsarc produce" */
    const char *usage;    /* "[flags] TOPIC" */
    const char *summary;  /* one paragraph, printed by --help */
    const cli_opt_t *opts; /* terminated by an entry with names == NULL */
    int conn;             /* 1: also takes the connection flags */
} cli_spec_t;

/*
 * Parses argv (without the verb words) into common and the verb's struct
 * at base. Returns 0, or CLI_EXIT_USAGE after printing the reason (which
 * names the flag and the value).
 */
int cli_parse(const cli_spec_t *spec, int argc, char **argv, cli_common_t *common, void *base);
void cli_common_free(cli_common_t *common);
/* Writes the verb's --help (usage, summary, its flags, connection flags). */
void cli_print_help(const cli_spec_t *spec, FILE *out);
/* Writes the flags of a table, one per line, as --help does. */
void cli_print_opts(const cli_opt_t *tab, FILE *out);
/* Parses "N", "N.N", with optional unit-free suffix check; 0 on success. */
int cli_parse_int(const char *s, int64_t min, int64_t max, int64_t *out);
int cli_parse_num(const char *s, double *out);
/* Prints "PROG: message" on stderr and returns code. */
int cli_fail(const char *prog, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A usage error: the message plus a pointer to --help; returns CLI_EXIT_USAGE. */
int cli_usage(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Requires exactly between lo and hi positional arguments, named `what`. */
int cli_want_args(const cli_common_t *c, size_t lo, size_t hi, const char *what);

/* ---- configuration (config.c) -------------------------------------------- */

typedef const char *(*cli_getenv_fn)(const char *name);

/* The effective configuration and the origin of every value in it. */
typedef struct cli_config {
    pulsarc_conf_t *conf;
    cli_settings_t applied; /* every layer, in the order applied */
} cli_config_t;

/*
 * Builds the configuration in precedence order: pulsarc defaults <
 * defaults (the verb's, may be NULL) < client.conf (--client-conf, else
 * $PULSAR_CLIENT_CONF) < environment ($PULSAR_SERVICE_URL,
 * $PULSAR_ADMIN_URL) < flags. env may be NULL (getenv). Warnings go to
 * warn (may be NULL). Returns 0 or an exit code after printing why.
 */
int cli_config_build(const cli_common_t *c, const cli_settings_t *defaults, cli_getenv_fn env,
                     FILE *warn, cli_config_t *out);
void cli_config_free(cli_config_t *cfg);
/* Where key's effective value came from, or NULL when it is the default. */
const char *cli_config_origin(const cli_config_t *cfg, const char *key);
/* The effective value of key (empty when unset); buf of len bytes. */
const char *cli_config_get(const cli_config_t *cfg, const char *key, char *buf, size_t len);
/*
 * Reads a Java client.conf into settings with pulsarc keys. Unknown keys
 * fail with "path:line" in err; Java keys pulsarc does not support are
 * skipped, with a warning when their value asks for something.
 */
int cli_clientconf_load(const char *path, cli_settings_t *out, FILE *warn, char *err,
                        size_t errlen);
/* The configuration key a client.conf key maps to (NULL: unknown). */
const char *cli_clientconf_key(const char *java_key);

/* ---- sessions (session.c) ------------------------------------------------- */

/* Builds the configuration and a client; prints why on failure. */
int cli_open_client(const cli_common_t *c, const cli_settings_t *defaults, cli_config_t *cfg,
                    pulsarc_client_t **client);
/* SIGINT/SIGTERM set a flag instead of killing the process. */
void cli_trap_signals(void);
int cli_interrupted(void);
/* Monotonic and wall clocks. */
uint64_t cli_now_ns(void);
uint64_t cli_wall_ms(void);

/* ---- pacing (pacer.c) ----------------------------------------------------- */

/*
 * Fixed-rate schedule: event i is due at start + i / rate. Waiting sleeps
 * with clock_nanosleep to the absolute deadline (no busy-wait, no drift);
 * a sender that fell behind sends at once until it catches up.
 */
typedef struct cli_pacer {
    double rate;       /* events per second; 0 = unlimited */
    uint64_t start_ns; /* CLOCK_MONOTONIC */
    uint64_t issued;
} cli_pacer_t;
void cli_pacer_init(cli_pacer_t *p, double rate);
/* Deadline of the next event (ns, CLOCK_MONOTONIC); 0 when unlimited. */
uint64_t cli_pacer_next(const cli_pacer_t *p);
/* Sleeps until the next event is due, or until limit_ns if earlier. 1: due. */
int cli_pacer_wait(cli_pacer_t *p, uint64_t limit_ns);
/* Sleeps until the absolute CLOCK_MONOTONIC time t_ns. */
void cli_sleep_until(uint64_t t_ns);

/* ---- latency histogram (histogram.c) -------------------------------------- */

/*
 * Log-linear buckets as HdrHistogram lays them out: exact below 64, then
 * 32 sub-buckets per power of two (relative error < 3.2%). Values are
 * microseconds up to 2^40 (about 12 days); larger values are clamped.
 */
#define CLI_HIST_SUB_BITS 5
#define CLI_HIST_BUCKETS ((40 - CLI_HIST_SUB_BITS + 2) << CLI_HIST_SUB_BITS)
typedef struct cli_hist {
    uint64_t counts[CLI_HIST_BUCKETS];
    uint64_t total, min, max;
    double sum;
} cli_hist_t;
void cli_hist_reset(cli_hist_t *h);
void cli_hist_record(cli_hist_t *h, uint64_t v);
void cli_hist_merge(cli_hist_t *into, const cli_hist_t *from);
/* Value at quantile q in [0,1]: the highest value of its bucket, capped at max. */
uint64_t cli_hist_quantile(const cli_hist_t *h, double q);
double cli_hist_mean(const cli_hist_t *h);
/* Index and inclusive bounds of a value's bucket. */
size_t cli_hist_index(uint64_t v);
uint64_t cli_hist_lower(size_t idx);
uint64_t cli_hist_upper(size_t idx);
/* "mean 1.234 p50 ... max ..." in milliseconds, into buf. */
void cli_hist_summary(const cli_hist_t *h, char *buf, size_t len);
/* Percentile table and a bar chart per power of two, in milliseconds. */
void cli_hist_print(const cli_hist_t *h, FILE *out);

/* ---- output (output.c) ---------------------------------------------------- */

typedef enum cli_format { CLI_FMT_RAW, CLI_FMT_HEX, CLI_FMT_JSON } cli_format_t;
/* 0 and *f set, or -1 for an unknown name. */
int cli_format_parse(const char *name, cli_format_t *f);
/* 1 if s[0..len) is well-formed UTF-8 (no overlongs, surrogates, > U+10FFFF). */
int cli_utf8_valid(const void *s, size_t len);
/* Writes s as a quoted JSON string; ill-formed UTF-8 bytes become U+FFFD. */
void cli_json_string(FILE *out, const void *s, size_t len);
void cli_base64(FILE *out, const void *data, size_t len);
void cli_hexdump(FILE *out, const void *data, size_t len);
/* Writes msg in format f, ending with a newline. */
void cli_print_msg(FILE *out, cli_format_t f, const pulsarc_msg_t *msg);

/* ---- verbs ---------------------------------------------------------------- */

int cli_cmd_produce(int argc, char **argv);
int cli_cmd_consume(int argc, char **argv);
int cli_cmd_read(int argc, char **argv);
int cli_cmd_perf(int argc, char **argv);
int cli_cmd_admin(int argc, char **argv);
int cli_cmd_table(int argc, char **argv);
int cli_cmd_tableview(int argc, char **argv);
/* The connection flags every verb takes, for the global help. */
extern const cli_opt_t cli_conn_opts[];

/* ---- --metrics-port (metrics_http.c) --------------------------------------- */

typedef struct cli_metrics_server cli_metrics_server_t;
/* Serves client's metrics on 127.0.0.1:port (0: any free port) until
 * cli_metrics_stop; port < 0: does nothing (*out NULL). 0 or an exit code. */
int cli_metrics_serve(const char *prog, pulsarc_client_t *client, int64_t port,
                      cli_metrics_server_t **out);
/* Stops serving and frees s (NULL is a no-op); before the client is destroyed. */
void cli_metrics_stop(cli_metrics_server_t *s);

#endif
