/*
 * Design notes: `pulsarc`, the command-line tool. This file only picks the
 * verb and prints the overview; each verb parses its own flags (options.c)
 * and owns its help, so `pulsarc VERB --help` is always complete.
 *
 * The overview documents what every verb shares: where configuration comes
 * from and in which precedence, the environment variables, how client.conf
 * keys map, and the exit codes (0 ok, 1 runtime error, 2 usage error).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} verb_t;

static const verb_t verbs[] = {
    {"produce", cli_cmd_produce, "send messages from arguments, files or stdin"},
    {"consume", cli_cmd_consume, "receive messages on a subscription and print them"},
    {"read", cli_cmd_read, "read a topic from a message id, earliest or latest (no subscription kept)"},
    {"perf", cli_cmd_perf, "load generators: perf produce, perf consume (rates, latency histogram)"},
    {"table", cli_cmd_table, "SQL table options: table write (stdin rows), table read (JSON rows)"},
    {"tableview", cli_cmd_tableview, "the latest value of every key of a topic (compacted view), sorted"},
    {"admin", cli_cmd_admin, "topics, subscriptions, tenants, namespaces over the HTTP admin API"},
};

static void print_overview(FILE *out) {
    fprintf(out, "Usage: pulsarc VERB [flags] [arguments]\n\n"
                 "An Apache Pulsar command-line client (pulsarc %s).\n\nVerbs:\n",
            pulsarc_version());
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        fprintf(out, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(out, "  %-9s %s\n", "help", "this text; 'pulsarc help VERB' = 'pulsarc VERB --help'");
    fprintf(out, "  %-9s %s\n", "version", "print the version");
    fprintf(out, "\nConnection flags, taken by every verb:\n");
    cli_print_opts(cli_conn_opts, out);
    fputs("\nConfiguration, highest precedence first:\n"
          "  1. flags (the last of repeated flags wins; -C/--conf KEY=VALUE sets any key)\n"
          "  2. environment: PULSAR_SERVICE_URL (serviceUrl), PULSAR_ADMIN_URL (webServiceUrl)\n"
          "  3. client.conf: the file of --client-conf, else of $PULSAR_CLIENT_CONF\n"
          "  4. defaults\n"
          "client.conf uses the Java client's format and keys: brokerServiceUrl (or\n"
          "serviceUrl), webServiceUrl, authPlugin, authParams, tlsTrustCertsFilePath,\n"
          "tlsAllowInsecureConnection, tlsEnableHostnameVerification, tlsCertificateFilePath,\n"
          "tlsKeyFilePath, and every pulsarc key (docs/CONFIGURATION.md). Empty values are\n"
          "ignored; Java-only keys (key stores, providers) are skipped with a warning when\n"
          "set; any other key is an error naming file:line.\n"
          "\nExit status: 0 success, 1 runtime error, 2 usage or configuration error.\n",
          out);
}

static const verb_t *find_verb(const char *name) {
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        if (!strcmp(verbs[i].name, name))
            return &verbs[i];
    return NULL;
}

/* `pulsarc help [VERB...]`: the verb's own --help. */
static int help(int argc, char **argv) {
    if (argc < 1) {
        print_overview(stdout);
        return CLI_EXIT_OK;
    }
    const verb_t *v = find_verb(argv[0]);
    if (!v)
        return cli_usage("pulsarc", "unknown verb '%s'", argv[0]);
    char *args[8];
    int n = 0;
    for (int i = 1; i < argc && n < 6; i++)
        args[n++] = argv[i];
    args[n++] = (char *)"--help";
    args[n] = NULL;
    return v->run(n, args);
}

int main(int argc, char **argv) {
    if (argc < 2)
        return print_overview(stderr), CLI_EXIT_USAGE;
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help"))
        return print_overview(stdout), CLI_EXIT_OK;
    if (!strcmp(name, "help"))
        return help(argc - 2, argv + 2);
    if (!strcmp(name, "version") || !strcmp(name, "--version"))
        return printf("pulsarc %s\n", pulsarc_version()), CLI_EXIT_OK;
    const verb_t *v = find_verb(name);
    if (!v)
        return cli_usage("pulsarc", "unknown verb '%s'", name);
    return v->run(argc - 2, argv + 2);
}
