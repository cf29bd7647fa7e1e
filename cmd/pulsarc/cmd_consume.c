/*
 * Design notes: `pulsarc consume` (a durable subscription; messages are
 * acknowledged after they are printed) and `pulsarc read` (a reader from a
 * position; nothing is acknowledged or kept). Both share one loop over a
 * receive function, so count, timeout, formats and Ctrl-C behave the same.
 *
 *  - Waiting happens in slices of at most 250 ms, so Ctrl-C and --timeout
 *    (seconds without a message) are noticed promptly without a timer.
 *  - A message is acknowledged only after it was written out, so a crash
 *    between receive and print redelivers instead of losing it.
 *  - stdout is flushed after every message: consumers are often at the
 *    head of a pipe and the next command should see each message at once.
 *  - The count of messages received goes to stderr, never mixed with them.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

typedef struct recv_opts {
    const char *sub, *start, *format;
    int64_t count, metrics_port;
    double timeout;
    int no_ack, inclusive, until_end, unsubscribe;
} recv_opts_t;

#define OFF(f) offsetof(recv_opts_t, f)
#define COMMON_RECV_FLAGS                                                                     \
    {"-n,--count", CLI_INT, "N", OFF(count), NULL, NULL, 0, INT64_MAX,                        \
     "stop after N messages; 0 = no limit (default 1)"},                                      \
    {"-o,--format", CLI_STR, "FORMAT", OFF(format), NULL, NULL, 0, 0,                          \
     "raw (payload and newline, the default), hex (dump), json (one object per line)"},       \
    {"--timeout", CLI_NUM, "SECONDS", OFF(timeout), NULL, NULL, 0, 0,                          \
     "stop when no message came for this long; 0 = wait forever (default)"},                  \
    {"--receiver-queue-size", CLI_CONF, "N", 0, "receiverQueueSize", NULL, 0, 0,             \
     "messages prefetched from the broker"},                                                  \
    {"--metrics-port", CLI_INT, "PORT", OFF(metrics_port), NULL, NULL, 0, 65535,               \
     "serve Prometheus metrics on 127.0.0.1:PORT while running (0: any free port)"}

static const cli_opt_t consume_flags[] = {
    {"-s,--subscription", CLI_STR, "NAME", OFF(sub), NULL, NULL, 0, 0,
     "subscription name (required)"},
    {"-t,--subscription-type", CLI_CONF, "TYPE", 0, "subscriptionType", NULL, 0, 0,
     "Exclusive (default), Shared, Failover or Key_Shared"},
    {"-p,--subscription-position", CLI_CONF, "POS", 0, "subscriptionInitialPosition", NULL, 0,
     0, "where a new subscription starts: Latest (default) or Earliest"},
    {"--consumer-name", CLI_CONF, "NAME", 0, "consumerName", NULL, 0, 0, "consumer name"},
    {"--no-ack", CLI_SWITCH, NULL, OFF(no_ack), NULL, NULL, 0, 0,
     "do not acknowledge (the messages stay in the backlog)"},
    {"--unsubscribe", CLI_SWITCH, NULL, OFF(unsubscribe), NULL, NULL, 0, 0,
     "delete the subscription when done"},
    COMMON_RECV_FLAGS,
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};

static const cli_opt_t read_flags[] = {
    {"-m,--start-message-id", CLI_STR, "ID", OFF(start), NULL, NULL, 0, 0,
     "earliest, latest (default) or ledger:entry[:partition[:batch]]"},
    {"-i,--inclusive", CLI_SWITCH, NULL, OFF(inclusive), NULL, NULL, 0, 0,
     "read the message at the start id too"},
    {"-e,--until-end", CLI_SWITCH, NULL, OFF(until_end), NULL, NULL, 0, 0,
     "stop after the last message the topic holds"},
    COMMON_RECV_FLAGS,
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};
#undef OFF

static const cli_spec_t consume_spec = {
    "pulsarc consume", "[flags] -s SUBSCRIPTION TOPIC",
    "Subscribes to TOPIC, prints messages as they arrive and acknowledges each after\n"
    "printing it. JSON lines carry id, topic, key, properties, publish_time, event_time,\n"
    "sequence_id, redelivery_count, producer, size, and payload (UTF-8 text) or\n"
    "payload_base64 (any other bytes).",
    consume_flags, 1,
};

static const cli_spec_t read_spec = {
    "pulsarc read", "[flags] TOPIC",
    "Reads TOPIC from a position with a reader (a non-durable subscription: nothing is\n"
    "acknowledged or kept) and prints the messages as 'consume' does.",
    read_flags, 1,
};

/* ---- the shared loop ----------------------------------------------------- */

typedef pulsarc_err_t (*recv_fn)(void *h, pulsarc_msg_t **m, int timeout_ms);

typedef struct loop {
    const char *prog;
    const recv_opts_t *o;
    cli_format_t fmt;
    recv_fn recv;
    void *h;
    pulsarc_consumer_t *ack; /* NULL: no acks */
    pulsarc_reader_t *reader; /* for --until-end */
    uint64_t got;
} loop_t;

static pulsarc_err_t consumer_recv(void *h, pulsarc_msg_t **m, int t) {
    return pulsarc_consumer_receive(h, m, t);
}

static pulsarc_err_t reader_recv(void *h, pulsarc_msg_t **m, int t) {
    return pulsarc_reader_read(h, m, t);
}

/* 1 when --until-end says there is nothing left. */
static int at_end(loop_t *l, int *rc) {
    int avail = 1;
    if (!l->reader || !l->o->until_end)
        return 0;
    pulsarc_err_t e = pulsarc_reader_has_message_available(l->reader, &avail);
    if (e != PULSARC_OK)
        *rc = cli_fail(l->prog, CLI_EXIT_RUNTIME, "has-message-available: %s",
                       pulsarc_strerror(e));
    return e != PULSARC_OK || !avail;
}

static int deliver(loop_t *l, pulsarc_msg_t *m) {
    cli_print_msg(stdout, l->fmt, m);
    fflush(stdout);
    pulsarc_err_t e = l->ack ? pulsarc_consumer_ack(l->ack, m) : PULSARC_OK;
    pulsarc_msg_destroy(m);
    l->got++;
    if (e != PULSARC_OK)
        return cli_fail(l->prog, CLI_EXIT_RUNTIME, "ack failed: %s", pulsarc_strerror(e));
    return 0;
}

/*
 * --until-end asks the broker only once the local queue ran dry (a receive
 * timed out): while messages are queued there is certainly more, and the
 * question costs a round trip.
 */
static int run_loop(loop_t *l) {
    uint64_t idle_since = cli_now_ns(), limit = (uint64_t)(l->o->timeout * 1e9);
    int rc = 0;
    while (!rc && (!l->o->count || l->got < (uint64_t)l->o->count) && !cli_interrupted()) {
        pulsarc_msg_t *m;
        pulsarc_err_t e = l->recv(l->h, &m, 250);
        if (e == PULSARC_OK) {
            rc = deliver(l, m);
            idle_since = cli_now_ns();
        } else if (e == PULSARC_ERR_STATE && l->recv == consumer_recv) {
            /* The only consumer that refuses a timed receive is a zero-queue one. */
            rc = cli_fail(l->prog, CLI_EXIT_USAGE, "--receiver-queue-size 0 (zero queue) receives "
                          "only without a timeout, and this loop needs one to see Ctrl-C and "
                          "--timeout; use 1 or more");
        } else if (e != PULSARC_ERR_NO_MESSAGE) {
            rc = cli_fail(l->prog, CLI_EXIT_RUNTIME, "receive failed: %s", pulsarc_strerror(e));
        } else if (at_end(l, &rc) || (limit && cli_now_ns() - idle_since >= limit)) {
            break;
        }
    }
    fprintf(stderr, "%s: %llu message(s) received%s\n", l->prog, (unsigned long long)l->got,
            cli_interrupted() ? " (interrupted)" : "");
    return rc;
}

/* ---- consume ------------------------------------------------------------- */

static int consume(const recv_opts_t *o, const cli_common_t *c, loop_t *l) {
    cli_config_t cfg;
    pulsarc_client_t *client;
    int rc = cli_open_client(c, NULL, &cfg, &client);
    if (rc)
        return rc;
    pulsarc_consumer_t *cons = NULL;
    cli_metrics_server_t *metrics = NULL;
    char err[512];
    const char *topic = c->args.v[0];
    if (pulsarc_consumer_new(client, topic, o->sub, cfg.conf, &cons, err, sizeof err)) {
        rc = cli_fail(c->prog, CLI_EXIT_RUNTIME, "cannot subscribe '%s' to '%s': %s", o->sub,
                      topic, err);
    } else {
        l->recv = consumer_recv, l->h = cons, l->ack = o->no_ack ? NULL : cons;
        if (!(rc = cli_metrics_serve(c->prog, client, o->metrics_port, &metrics)))
            rc = run_loop(l);
        cli_metrics_stop(metrics);
        if (!rc && o->unsubscribe && pulsarc_consumer_unsubscribe(cons) != PULSARC_OK)
            rc = cli_fail(c->prog, CLI_EXIT_RUNTIME, "unsubscribe failed");
        pulsarc_consumer_destroy(cons);
    }
    pulsarc_client_destroy(client);
    cli_config_free(&cfg);
    return rc;
}

/* Checks what is common to both verbs and fills the loop. */
static int prepare(const cli_spec_t *spec, const cli_common_t *c, const recv_opts_t *o,
                   loop_t *l) {
    int rc = cli_want_args(c, 1, 1, "TOPIC");
    if (rc)
        return rc;
    memset(l, 0, sizeof *l);
    l->prog = spec->prog, l->o = o;
    if (o->format && cli_format_parse(o->format, &l->fmt))
        return cli_usage(spec->prog, "--format '%s': expected raw, hex or json", o->format);
    return 0;
}

int cli_cmd_consume(int argc, char **argv) {
    recv_opts_t o = {.count = 1, .metrics_port = -1};
    cli_common_t c = {0};
    loop_t l;
    int rc = cli_parse(&consume_spec, argc, argv, &c, &o);
    if (!rc && c.help)
        cli_print_help(&consume_spec, stdout);
    else if (!rc && !(rc = prepare(&consume_spec, &c, &o, &l))) {
        if (!o.sub || !*o.sub)
            rc = cli_usage(consume_spec.prog, "missing --subscription NAME");
        else
            cli_trap_signals(), rc = consume(&o, &c, &l);
    }
    cli_common_free(&c);
    return rc;
}

/* ---- read ---------------------------------------------------------------- */

static int parse_start(const char *s, pulsarc_msgid_t *id) {
    if (!s || !strcasecmp(s, "latest"))
        *id = pulsarc_msgid_latest();
    else if (!strcasecmp(s, "earliest"))
        *id = pulsarc_msgid_earliest();
    else if (pulsarc_msgid_parse(s, id) != PULSARC_OK)
        return cli_usage(read_spec.prog,
                         "--start-message-id '%s': expected earliest, latest or "
                         "ledger:entry[:partition[:batch]]",
                         s);
    return 0;
}

static int read_topic(const recv_opts_t *o, const cli_common_t *c, loop_t *l,
                      const pulsarc_msgid_t *start) {
    cli_config_t cfg;
    pulsarc_client_t *client;
    int rc = cli_open_client(c, NULL, &cfg, &client);
    if (rc)
        return rc;
    pulsarc_reader_t *r;
    cli_metrics_server_t *metrics = NULL;
    char err[512];
    const char *topic = c->args.v[0];
    if (pulsarc_reader_new(client, topic, start, o->inclusive, cfg.conf, &r, err, sizeof err)) {
        rc = cli_fail(c->prog, CLI_EXIT_RUNTIME, "cannot read '%s': %s", topic, err);
    } else {
        l->recv = reader_recv, l->h = r, l->reader = r;
        if (!(rc = cli_metrics_serve(c->prog, client, o->metrics_port, &metrics)))
            rc = run_loop(l);
        cli_metrics_stop(metrics);
        pulsarc_reader_destroy(r);
    }
    pulsarc_client_destroy(client);
    cli_config_free(&cfg);
    return rc;
}

int cli_cmd_read(int argc, char **argv) {
    recv_opts_t o = {.count = 1, .metrics_port = -1};
    cli_common_t c = {0};
    loop_t l;
    pulsarc_msgid_t start;
    int rc = cli_parse(&read_spec, argc, argv, &c, &o);
    if (!rc && c.help)
        cli_print_help(&read_spec, stdout);
    else if (!rc && !(rc = prepare(&read_spec, &c, &o, &l)) && !(rc = parse_start(o.start, &start)))
        cli_trap_signals(), rc = read_topic(&o, &c, &l, &start);
    cli_common_free(&c);
    return rc;
}
