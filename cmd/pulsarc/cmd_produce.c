/*
 * Design notes: `pulsarc produce` — messages from arguments (-m), whole
 * files (-f) or the lines of files or stdin (-l; the default when no
 * source is given), each sent --count times, optionally paced to --rate.
 *
 *  - Every payload is loaded before the first send: --count repeats them,
 *    and a bad -f path is a usage error before anything reaches the topic.
 *  - Sends are asynchronous (batching works, the rate is not limited by
 *    round trips); the payload is borrowed because it lives until the end.
 *    The queue blocks when full (blockIfQueueFull defaults to true here)
 *    instead of failing messages.
 *  - The id of each message is printed by its send callback, on the
 *    client's callback thread, in send order (one producer, one topic). The
 *    main thread prints nothing to stdout, so lines never interleave; it
 *    waits until every callback has run, not only until flush returns,
 *    because callbacks run after the receipts flush waits for.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct produce_opts {
    cli_list_t messages, files, lines, props;
    const char *key;
    int64_t count, deliver_after;
    double rate;
    int quiet;
} produce_opts_t;

#define OFF(f) offsetof(produce_opts_t, f)
static const cli_opt_t produce_flags[] = {
    {"-m,--message", CLI_LIST, "TEXT", OFF(messages), NULL, NULL, 0, 0,
     "a message (repeatable)"},
    {"-f,--file", CLI_LIST, "PATH", OFF(files), NULL, NULL, 0, 0,
     "one message holding the whole file (repeatable; - is stdin)"},
    {"-l,--lines", CLI_LIST, "PATH", OFF(lines), NULL, NULL, 0, 0,
     "one message per line of the file (repeatable; - is stdin)"},
    {"-n,--count", CLI_INT, "N", OFF(count), NULL, NULL, 1, INT64_MAX,
     "send the messages N times over (default 1)"},
    {"-r,--rate", CLI_NUM, "PER_SECOND", OFF(rate), NULL, NULL, 0, 0,
     "messages per second; 0 = as fast as possible (default 0)"},
    {"-k,--key", CLI_STR, "KEY", OFF(key), NULL, NULL, 0, 0, "partition key of every message"},
    {"-p,--property", CLI_LIST, "NAME=VALUE", OFF(props), NULL, NULL, 0, 0,
     "a property of every message (repeatable)"},
    {"--deliver-after", CLI_INT, "MS", OFF(deliver_after), NULL, NULL, 0, INT64_MAX,
     "delayed delivery, ms from now (Shared/Key_Shared subscriptions)"},
    {"-z,--compression", CLI_CONF, "CODEC", 0, "compressionType", NULL, 0, 0,
     "NONE, LZ4, ZLIB, ZSTD or SNAPPY"},
    {"--disable-batching", CLI_CONF_SET, NULL, 0, "batchingEnabled", "false", 0, 0,
     "send every message as its own entry"},
    {"--producer-name", CLI_CONF, "NAME", 0, "producerName", NULL, 0, 0, "producer name"},
    {"-q,--quiet", CLI_SWITCH, NULL, OFF(quiet), NULL, NULL, 0, 0,
     "do not print the id of each message"},
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};
#undef OFF

static const cli_spec_t produce_spec = {
    "pulsarc produce", "[flags] TOPIC",
    "Sends messages to TOPIC and prints the id of each (ledger:entry:partition[:batch])\n"
    "on stdout, in order. Sources are read in this order: -m, then -f, then -l; with\n"
    "none, the lines of stdin are sent. A summary goes to stderr.",
    produce_flags, 1,
};

/* ---- payloads ------------------------------------------------------------ */

typedef struct payload {
    char *data;
    size_t len;
} payload_t;

typedef struct payloads {
    payload_t *v;
    size_t n, cap;
} payloads_t;

static int payload_add(payloads_t *p, const char *data, size_t len) {
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        payload_t *v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return -1;
        p->v = v, p->cap = cap;
    }
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return -1;
    memcpy(copy, data, len);
    p->v[p->n++] = (payload_t){copy, len};
    return 0;
}

static void payloads_free(payloads_t *p) {
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i].data);
    free(p->v);
}

static FILE *open_source(const char *path) {
    return strcmp(path, "-") ? fopen(path, "rb") : stdin;
}

static int load_file(payloads_t *out, const char *path) {
    FILE *f = open_source(path);
    if (!f)
        return -1;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[65536];
    int rc = 0;
    while (!rc && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n > cap) {
            char *nb = realloc(buf, cap = (len + n) * 2);
            rc = nb ? 0 : -1;
            buf = nb ? nb : buf;
        }
        if (!rc)
            memcpy(buf + len, chunk, n), len += n;
    }
    rc = rc || ferror(f) ? -1 : payload_add(out, buf ? buf : "", len);
    free(buf);
    if (f != stdin)
        fclose(f);
    return rc;
}

static int load_lines(payloads_t *out, const char *path) {
    FILE *f = open_source(path);
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while (!rc && (n = getline(&line, &cap, f)) >= 0) {
        if (n && line[n - 1] == '\n')
            line[--n] = '\0';
        if (n && line[n - 1] == '\r')
            line[--n] = '\0';
        rc = payload_add(out, line, (size_t)n);
    }
    rc = rc || ferror(f) ? -1 : 0;
    free(line);
    if (f != stdin)
        fclose(f);
    return rc;
}

static int load_all(const produce_opts_t *o, payloads_t *out) {
    for (size_t i = 0; i < o->messages.n; i++)
        if (payload_add(out, o->messages.v[i], strlen(o->messages.v[i])))
            return cli_fail(produce_spec.prog, CLI_EXIT_RUNTIME, "out of memory");
    for (size_t i = 0; i < o->files.n; i++)
        if (load_file(out, o->files.v[i]))
            return cli_usage(produce_spec.prog, "--file '%s': %s", o->files.v[i],
                             strerror(errno));
    for (size_t i = 0; i < o->lines.n; i++)
        if (load_lines(out, o->lines.v[i]))
            return cli_usage(produce_spec.prog, "--lines '%s': %s", o->lines.v[i],
                             strerror(errno));
    if (!o->messages.n && !o->files.n && !o->lines.n && load_lines(out, "-"))
        return cli_fail(produce_spec.prog, CLI_EXIT_RUNTIME, "stdin: %s", strerror(errno));
    return 0;
}

/* ---- properties ---------------------------------------------------------- */

static int check_props(const cli_list_t *props) {
    for (size_t i = 0; i < props->n; i++) {
        const char *eq = strchr(props->v[i], '=');
        if (!eq || eq == props->v[i])
            return cli_usage(produce_spec.prog, "--property '%s': expected NAME=VALUE",
                             props->v[i]);
    }
    return 0;
}

static void set_props(pulsarc_msg_t *m, const cli_list_t *props) {
    for (size_t i = 0; i < props->n; i++) {
        const char *eq = strchr(props->v[i], '=');
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - props->v[i]), props->v[i]);
        pulsarc_msg_set_property(m, name, eq + 1);
    }
}

/* ---- sending ------------------------------------------------------------- */

/* Outcomes, filled by send callbacks on the callback thread. */
typedef struct tally {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t done, failed;
    pulsarc_err_t first_err;
    int quiet;
} tally_t;

static void on_sent(pulsarc_producer_t *p, pulsarc_err_t err, const pulsarc_msgid_t *id,
                    pulsarc_msg_t *msg, void *opaque) {
    (void)p, (void)msg;
    tally_t *t = opaque;
    char text[64];
    if (!err && !t->quiet && pulsarc_msgid_format(id, text, sizeof text) == PULSARC_OK)
        printf("%s\n", text);
    pthread_mutex_lock(&t->lock);
    t->done++;
    if (err && !t->failed++)
        t->first_err = err;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

static void wait_all(tally_t *t, uint64_t submitted) {
    pthread_mutex_lock(&t->lock);
    while (t->done < submitted)
        pthread_cond_wait(&t->cond, &t->lock);
    pthread_mutex_unlock(&t->lock);
}

static pulsarc_msg_t *build_msg(const produce_opts_t *o, const payload_t *pl) {
    pulsarc_msg_t *m = pulsarc_msg_new();
    if (!m)
        return NULL;
    pulsarc_msg_set_payload(m, pl->data, pl->len, PULSARC_MSG_F_BORROW);
    if (o->key)
        pulsarc_msg_set_key(m, o->key);
    set_props(m, &o->props);
    if (o->deliver_after)
        pulsarc_msg_set_deliver_after(m, (uint64_t)o->deliver_after);
    return m;
}

/* Waits for the next slot of the schedule; 0 when interrupted instead. */
static int pace(cli_pacer_t *p) {
    while (!cli_pacer_wait(p, 0))
        if (cli_interrupted())
            return 0;
    return 1;
}

/* Sends everything; returns how many sends were submitted. */
static uint64_t send_all(pulsarc_producer_t *prod, const produce_opts_t *o,
                         const payloads_t *pls, tally_t *t) {
    cli_pacer_t pacer;
    cli_pacer_init(&pacer, o->rate);
    uint64_t submitted = 0;
    for (int64_t round = 0; round < o->count; round++) {
        for (size_t i = 0; i < pls->n; i++) {
            if (cli_interrupted() || !pace(&pacer))
                return submitted;
            pulsarc_msg_t *m = build_msg(o, &pls->v[i]);
            if (!m)
                return submitted;
            submitted++;
            pulsarc_producer_send_async(prod, m, on_sent, t); /* cb reports any failure */
        }
    }
    return submitted;
}

static int report(const char *topic, uint64_t submitted, const tally_t *t) {
    fprintf(stderr, "%s: %llu message(s) sent to %s", produce_spec.prog,
            (unsigned long long)(submitted - t->failed), topic);
    if (!t->failed) {
        fputs(cli_interrupted() ? " (interrupted)\n" : "\n", stderr);
        return cli_interrupted() ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
    }
    fprintf(stderr, ", %llu failed (first error: %s)\n", (unsigned long long)t->failed,
            pulsarc_strerror(t->first_err));
    return CLI_EXIT_RUNTIME;
}

static int produce(const produce_opts_t *o, const cli_common_t *c, const payloads_t *pls) {
    cli_settings_t defaults = {0};
    cli_settings_add(&defaults, "blockIfQueueFull", "true", "produce default");
    cli_config_t cfg;
    pulsarc_client_t *client;
    int rc = cli_open_client(c, &defaults, &cfg, &client);
    cli_settings_free(&defaults);
    if (rc)
        return rc;
    const char *topic = c->args.v[0];
    pulsarc_producer_t *prod;
    char err[512];
    if (pulsarc_producer_new(client, topic, cfg.conf, &prod, err, sizeof err) != PULSARC_OK) {
        rc = cli_fail(c->prog, CLI_EXIT_RUNTIME, "cannot create a producer on '%s': %s", topic,
                      err);
    } else {
        tally_t t = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, o->quiet};
        uint64_t submitted = send_all(prod, o, pls, &t);
        pulsarc_producer_flush(prod, -1);
        wait_all(&t, submitted);
        fflush(stdout);
        rc = report(pulsarc_producer_topic(prod), submitted, &t);
        pulsarc_producer_destroy(prod);
    }
    pulsarc_client_destroy(client);
    cli_config_free(&cfg);
    return rc;
}

static void opts_free(produce_opts_t *o) {
    cli_list_free(&o->messages), cli_list_free(&o->files);
    cli_list_free(&o->lines), cli_list_free(&o->props);
}

int cli_cmd_produce(int argc, char **argv) {
    produce_opts_t o = {.count = 1};
    cli_common_t c = {0};
    payloads_t pls = {0};
    int rc = cli_parse(&produce_spec, argc, argv, &c, &o);
    if (!rc && c.help)
        cli_print_help(&produce_spec, stdout);
    else if (!rc && !(rc = cli_want_args(&c, 1, 1, "TOPIC")) && !(rc = check_props(&o.props)) &&
             !(rc = load_all(&o, &pls))) {
        cli_trap_signals();
        rc = produce(&o, &c, &pls);
    }
    payloads_free(&pls);
    opts_free(&o);
    cli_common_free(&c);
    return rc;
}
