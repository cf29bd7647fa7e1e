/*
 * Unit tests of the command-line tool's pure parts, with no broker: flag
 * parsing and its errors, configuration precedence (flags > environment >
 * client.conf > defaults) with origins, Java client.conf reading, JSON
 * string escaping and UTF-8 checks, base64, and the latency histogram.
 *
 * The tool's sources are compiled into this program directly (the Makefile
 * links unit tests with the library only); environment lookups go through
 * a fake so the tests never depend on the caller's shell.
 */
#include "../../cmd/pulsarc/config.c"
#include "../../cmd/pulsarc/histogram.c"
#include "../../cmd/pulsarc/options.c"
#include "../../cmd/pulsarc/output.c"

#include <unistd.h>

#include "testutil.h"

/* ---- helpers ------------------------------------------------------------- */

static const char *fake_env[8][2];

static const char *env_get(const char *name) {
    for (int i = 0; i < 8 && fake_env[i][0]; i++)
        if (!strcmp(fake_env[i][0], name))
            return fake_env[i][1];
    return NULL;
}

static void env_set(const char *name, const char *value) {
    int i = 0;
    while (i < 7 && fake_env[i][0] && strcmp(fake_env[i][0], name))
        i++;
    fake_env[i][0] = name, fake_env[i][1] = value;
}

static void env_clear(void) {
    memset(fake_env, 0, sizeof fake_env);
}

/* Writes text to a new temporary file; returns its path (static buffer per slot). */
static const char *write_conf(int slot, const char *text) {
    static char paths[4][64];
    snprintf(paths[slot], sizeof paths[slot], "/tmp/pulsarc-cli-test-%d-%d.conf", (int)getpid(),
             slot);
    FILE *f = fopen(paths[slot], "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return paths[slot];
}

/* Runs parse with stderr captured into err (NUL-terminated). */
static char captured[4096];
static int saved_stderr = -1;

static void capture_begin(void) {
    fflush(stderr);
    saved_stderr = dup(2);
    FILE *t = tmpfile();
    dup2(fileno(t), 2);
    fclose(t); /* fd 2 keeps the file open */
}

static const char *capture_end(void) {
    fflush(stderr);
    lseek(2, 0, SEEK_SET);
    ssize_t n = read(2, captured, sizeof captured - 1);
    captured[n > 0 ? n : 0] = '\0';
    dup2(saved_stderr, 2);
    close(saved_stderr);
    return captured;
}

typedef struct test_opts {
    double rate;
    int64_t count;
    const char *name;
    cli_list_t items;
    int flag;
} test_opts_t;

static const cli_opt_t test_flags[] = {
    {"-r,--rate", CLI_NUM, "R", offsetof(test_opts_t, rate), NULL, NULL, 0, 0, "rate"},
    {"-n,--count", CLI_INT, "N", offsetof(test_opts_t, count), NULL, NULL, 1, 10, "count"},
    {"--name", CLI_STR, "S", offsetof(test_opts_t, name), NULL, NULL, 0, 0, "name"},
    {"-m", CLI_LIST, "M", offsetof(test_opts_t, items), NULL, NULL, 0, 0, "item"},
    {"-db,--flag", CLI_SWITCH, NULL, offsetof(test_opts_t, flag), NULL, NULL, 0, 0, "flag"},
    {"-t,--type", CLI_CONF, "T", 0, "subscriptionType", NULL, 0, 0, "type"},
    {"--no-batch", CLI_CONF_SET, NULL, 0, "batchingEnabled", "false", 0, 0, "nb"},
    {NULL, 0, NULL, 0, NULL, NULL, 0, 0, NULL},
};
static const cli_spec_t test_spec = {"pulsarc test", "[flags] X", "summary", test_flags, 1};

/* Parses a NULL-terminated argument list. */
static int parse(cli_common_t *c, test_opts_t *o, const char *const *args) {
    int argc = 0;
    while (args[argc])
        argc++;
    memset(c, 0, sizeof *c);
    memset(o, 0, sizeof *o);
    return cli_parse(&test_spec, argc, (char **)args, c, o);
}

static const char *conf_value(cli_config_t *cfg, const char *key) {
    static char buf[512];
    return cli_config_get(cfg, key, buf, sizeof buf);
}

/* ---- flag parsing -------------------------------------------------------- */

START_TEST(flags_basic_forms) {
    cli_common_t c;
    test_opts_t o;
    const char *args[] = {"-r", "2.5", "--count=3", "--name", "-x", "-m", "a", "-m", "b",
                          "-db", "topic", "--", "--rate", NULL};
    ck_assert_int_eq(parse(&c, &o, args), 0);
    ck_assert(o.rate == 2.5);
    ck_assert_int_eq(o.count, 3);
    ck_assert_str_eq(o.name, "-x"); /* a value may start with '-' */
    ck_assert_uint_eq(o.items.n, 2);
    ck_assert_str_eq(o.items.v[1], "b");
    ck_assert_int_eq(o.flag, 1);
    ck_assert_uint_eq(c.args.n, 2);
    ck_assert_str_eq(c.args.v[0], "topic");
    ck_assert_str_eq(c.args.v[1], "--rate"); /* after "--" */
    cli_list_free(&o.items);
    cli_common_free(&c);
}
END_TEST

START_TEST(flags_errors_name_flag_and_value) {
    static const struct {
        const char *args[4];
        const char *expect;
    } cases[] = {
        {{"--rate", "fast", NULL}, "--rate 'fast'"},
        {{"-r", "-1", NULL}, "-r '-1'"},
        {{"--count", "11", NULL}, "--count '11': expected an integer in 1..10"},
        {{"-n", "3x", NULL}, "-n '3x'"},
        {{"--bogus", NULL}, "unknown flag '--bogus'"},
        {{"--name", NULL}, "--name needs a value"},
        {{"--flag=1", NULL}, "--flag takes no value"},
        {{"-C", "novalue", NULL}, "-C 'novalue': expected KEY=VALUE"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cli_common_t c;
        test_opts_t o;
        capture_begin();
        int rc = parse(&c, &o, cases[i].args);
        const char *err = capture_end();
        ck_assert_int_eq(rc, CLI_EXIT_USAGE);
        ck_assert_msg(strstr(err, cases[i].expect), "case %zu: '%s' lacks '%s'", i, err,
                      cases[i].expect);
        ck_assert_msg(strstr(err, "pulsarc test"), "program name missing: %s", err);
        cli_common_free(&c);
    }
}
END_TEST

START_TEST(flags_record_conf_settings_in_order) {
    cli_common_t c;
    test_opts_t o;
    const char *args[] = {"-t", "Shared", "--no-batch", "-C", "receiverQueueSize=7",
                          "--conf=subscriptionType=Failover", NULL};
    ck_assert_int_eq(parse(&c, &o, args), 0);
    ck_assert_uint_eq(c.flags.n, 4);
    ck_assert_str_eq(c.flags.v[0].key, "subscriptionType");
    ck_assert_str_eq(c.flags.v[0].origin, "-t Shared");
    ck_assert_str_eq(c.flags.v[1].value, "false");
    ck_assert_str_eq(c.flags.v[2].key, "receiverQueueSize");
    ck_assert_str_eq(c.flags.v[2].value, "7");
    cli_config_t cfg;
    env_clear();
    ck_assert_int_eq(cli_config_build(&c, NULL, env_get, NULL, &cfg), 0);
    ck_assert_str_eq(conf_value(&cfg, "subscriptionType"), "Failover"); /* last wins */
    ck_assert_str_eq(cli_config_origin(&cfg, "subscriptionType"),
                     "--conf subscriptionType=Failover");
    ck_assert_str_eq(conf_value(&cfg, "batchingEnabled"), "false");
    cli_config_free(&cfg);
    cli_common_free(&c);
}
END_TEST

START_TEST(flags_bad_conf_values_name_the_flag) {
    static const struct {
        const char *args[4];
        const char *expect;
    } cases[] = {
        {{"-t", "Sometimes", NULL}, "-t Sometimes: subscriptionType: 'Sometimes'"},
        {{"-C", "nosuchKey=1", NULL}, "-C nosuchKey=1: unknown configuration key 'nosuchKey'"},
        {{"-C", "receiverQueueSize=lots", NULL}, "-C receiverQueueSize=lots"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cli_common_t c;
        test_opts_t o;
        cli_config_t cfg;
        ck_assert_int_eq(parse(&c, &o, cases[i].args), 0);
        env_clear();
        capture_begin();
        int rc = cli_config_build(&c, NULL, env_get, NULL, &cfg);
        const char *err = capture_end();
        ck_assert_int_eq(rc, CLI_EXIT_USAGE);
        ck_assert_msg(strstr(err, cases[i].expect), "case %zu: '%s' lacks '%s'", i, err,
                      cases[i].expect);
        cli_common_free(&c);
    }
}
END_TEST

/* ---- precedence ---------------------------------------------------------- */

static int build(const char *const *args, const cli_settings_t *defaults, cli_config_t *cfg) {
    cli_common_t c;
    test_opts_t o;
    ck_assert_int_eq(parse(&c, &o, args), 0);
    int rc = cli_config_build(&c, defaults, env_get, NULL, cfg);
    cli_common_free(&c);
    return rc;
}

START_TEST(precedence_defaults_file_env_flags) {
    const char *path = write_conf(0, "brokerServiceUrl=pulsar://file:6650/\n"
                                     "webServiceUrl=http://file:8080/\n"
                                     "operationTimeoutMs=1234\n"
                                     "blockIfQueueFull=false\n");
    cli_settings_t defaults = {0};
    cli_settings_add(&defaults, "blockIfQueueFull", "true", "verb default");
    cli_settings_add(&defaults, "maxPendingMessages", "77", "verb default");
    cli_config_t cfg;
    env_clear();
    const char *file_only[] = {"--client-conf", path, NULL};
    ck_assert_int_eq(build(file_only, &defaults, &cfg), 0);
    ck_assert_str_eq(conf_value(&cfg, "serviceUrl"), "pulsar://file:6650/");
    ck_assert_str_eq(conf_value(&cfg, "operationTimeoutMs"), "1234");
    ck_assert_str_eq(conf_value(&cfg, "blockIfQueueFull"), "false"); /* file > verb default */
    ck_assert_str_eq(conf_value(&cfg, "maxPendingMessages"), "77");  /* verb default > ours */
    ck_assert_ptr_nonnull(strstr(cli_config_origin(&cfg, "serviceUrl"), ":1 (brokerServiceUrl)"));
    ck_assert_ptr_null(cli_config_origin(&cfg, "connectionTimeoutMs"));
    cli_config_free(&cfg);

    env_set("PULSAR_SERVICE_URL", "pulsar://env:6650");
    ck_assert_int_eq(build(file_only, &defaults, &cfg), 0);
    ck_assert_str_eq(conf_value(&cfg, "serviceUrl"), "pulsar://env:6650"); /* env > file */
    ck_assert_str_eq(conf_value(&cfg, "webServiceUrl"), "http://file:8080/");
    ck_assert_str_eq(cli_config_origin(&cfg, "serviceUrl"), "$PULSAR_SERVICE_URL");
    cli_config_free(&cfg);

    const char *with_flag[] = {"--client-conf", path, "-u", "pulsar://flag:6650", NULL};
    env_set("PULSAR_ADMIN_URL", "http://env:8080");
    ck_assert_int_eq(build(with_flag, &defaults, &cfg), 0);
    ck_assert_str_eq(conf_value(&cfg, "serviceUrl"), "pulsar://flag:6650"); /* flag > env */
    ck_assert_str_eq(conf_value(&cfg, "webServiceUrl"), "http://env:8080");
    ck_assert_str_eq(cli_config_origin(&cfg, "serviceUrl"), "-u pulsar://flag:6650");
    cli_config_free(&cfg);
    cli_settings_free(&defaults);
    unlink(path);
}
END_TEST

START_TEST(precedence_conf_path_flag_over_env) {
    const char *a = write_conf(0, "serviceUrl=pulsar://a:1\n");
    const char *b = write_conf(1, "serviceUrl=pulsar://b:1\n");
    cli_config_t cfg;
    env_clear();
    env_set("PULSAR_CLIENT_CONF", a);
    const char *none[] = {NULL};
    ck_assert_int_eq(build(none, NULL, &cfg), 0);
    ck_assert_str_eq(conf_value(&cfg, "serviceUrl"), "pulsar://a:1");
    cli_config_free(&cfg);
    const char *flag[] = {"--client-conf", b, NULL};
    ck_assert_int_eq(build(flag, NULL, &cfg), 0);
    ck_assert_str_eq(conf_value(&cfg, "serviceUrl"), "pulsar://b:1");
    cli_config_free(&cfg);
    env_set("PULSAR_CLIENT_CONF", "");
    ck_assert_int_eq(build(none, NULL, &cfg), 0); /* empty variable: no file */
    ck_assert_str_eq(conf_value(&cfg, "serviceUrl"), "");
    cli_config_free(&cfg);
    unlink(a), unlink(b);
}
END_TEST

START_TEST(precedence_missing_conf_file_names_path) {
    cli_config_t cfg;
    env_clear();
    const char *args[] = {"--client-conf", "/nonexistent/client.conf", NULL};
    capture_begin();
    int rc = build(args, NULL, &cfg);
    const char *err = capture_end();
    ck_assert_int_eq(rc, CLI_EXIT_USAGE);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/client.conf"));
}
END_TEST

/* ---- client.conf --------------------------------------------------------- */

/* The keys and values of Java's stock conf/client.conf (comments left out). */
static const char STOCK_CONF[] =
    "webServiceUrl=http://localhost:8080/\n"
    "brokerServiceUrl=pulsar://localhost:6650/\n"
    "authPlugin=\nauthParams=\n"
    "tlsAllowInsecureConnection=false\n"
    "tlsEnableHostnameVerification=false\n"
    "tlsTrustCertsFilePath=\ntlsCertificateFilePath=\ntlsKeyFilePath=\n"
    "useKeyStoreTls=false\ntlsTrustStoreType=JKS\ntlsTrustStorePath=\n"
    "tlsTrustStorePassword=\ntlsKeyStoreType=JKS\ntlsKeyStorePath=\n"
    "tlsKeyStorePassword=\nwebserviceTlsProvider=\n";

START_TEST(clientconf_stock_file_loads_silently) {
    const char *path = write_conf(0, STOCK_CONF);
    cli_settings_t s = {0};
    char err[512] = "", *warn_buf = NULL;
    size_t warn_len = 0;
    FILE *warn = open_memstream(&warn_buf, &warn_len);
    ck_assert_int_eq(cli_clientconf_load(path, &s, warn, err, sizeof err), 0);
    fclose(warn);
    ck_assert_uint_eq(warn_len, 0);
    ck_assert_uint_eq(s.n, 4);
    ck_assert_str_eq(s.v[1].key, "serviceUrl");
    ck_assert_str_eq(s.v[3].key, "tlsHostnameVerificationEnable");
    ck_assert_str_eq(s.v[3].value, "false");
    free(warn_buf);
    cli_settings_free(&s);
    unlink(path);
}
END_TEST

START_TEST(clientconf_syntax) {
    const char *path = write_conf(0, "# comment\n"
                                     "! also a comment\n"
                                     "   \n"
                                     "serviceUrl : pulsar://h1:6650,\\\n"
                                     "             h2:6650\n"
                                     "operationTimeoutMs 4000\n"
                                     "authParams=token:a\\=b  \r\n");
    cli_settings_t s = {0};
    char err[512] = "";
    ck_assert_int_eq(cli_clientconf_load(path, &s, NULL, err, sizeof err), 0);
    ck_assert_uint_eq(s.n, 3);
    ck_assert_str_eq(s.v[0].value, "pulsar://h1:6650,h2:6650");
    ck_assert_ptr_nonnull(strstr(s.v[0].origin, ":4 (serviceUrl)"));
    ck_assert_str_eq(s.v[1].key, "operationTimeoutMs");
    ck_assert_str_eq(s.v[1].value, "4000");
    ck_assert_ptr_nonnull(strstr(s.v[1].origin, ":6 "));
    ck_assert_str_eq(s.v[2].value, "token:a=b");
    cli_settings_free(&s);
    unlink(path);
}
END_TEST

START_TEST(clientconf_unknown_key_is_error_at_line) {
    const char *path = write_conf(0, "serviceUrl=pulsar://x:1\n\nbrokerServiceURL=pulsar://y\n");
    cli_settings_t s = {0};
    char err[512] = "", want[600];
    ck_assert_int_eq(cli_clientconf_load(path, &s, NULL, err, sizeof err), CLI_EXIT_USAGE);
    snprintf(want, sizeof want, "%s:3: unknown key 'brokerServiceURL'", path);
    ck_assert_str_eq(err, want);
    cli_settings_free(&s);
    unlink(path);
}
END_TEST

START_TEST(clientconf_java_only_keys_warn_when_set) {
    const char *path = write_conf(0, "useKeyStoreTls=true\nnumIoThreads=4\nuseTls=false\n");
    cli_settings_t s = {0};
    char err[512] = "", *warn_buf = NULL;
    size_t warn_len = 0;
    FILE *warn = open_memstream(&warn_buf, &warn_len);
    ck_assert_int_eq(cli_clientconf_load(path, &s, warn, err, sizeof err), 0);
    fclose(warn);
    ck_assert_uint_eq(s.n, 0);
    ck_assert_ptr_nonnull(strstr(warn_buf, ":1: 'useKeyStoreTls' is not supported"));
    ck_assert_ptr_nonnull(strstr(warn_buf, ":2: 'numIoThreads'"));
    ck_assert_ptr_null(strstr(warn_buf, "useTls"));
    free(warn_buf);
    unlink(path);
}
END_TEST

START_TEST(clientconf_bad_value_names_file_line) {
    const char *path = write_conf(0, "\ntlsAllowInsecureConnection=maybe\n");
    cli_config_t cfg;
    env_clear();
    const char *args[] = {"--client-conf", path, NULL};
    capture_begin();
    int rc = build(args, NULL, &cfg);
    const char *err = capture_end();
    ck_assert_int_eq(rc, CLI_EXIT_USAGE);
    char want[600];
    snprintf(want, sizeof want, "%s:2 (tlsAllowInsecureConnection):", path);
    ck_assert_msg(strstr(err, want) && strstr(err, "maybe"), "got: %s", err);
    unlink(path);
}
END_TEST

/* ---- JSON and UTF-8 ------------------------------------------------------ */

static const char *json_of(const void *s, size_t len) {
    static char out[1024];
    FILE *f = fmemopen(out, sizeof out, "w");
    cli_json_string(f, s, len);
    fclose(f);
    return out;
}

START_TEST(json_escapes) {
    ck_assert_str_eq(json_of("", 0), "\"\"");
    ck_assert_str_eq(json_of("plain", 5), "\"plain\"");
    ck_assert_str_eq(json_of("a\"b\\c/", 6), "\"a\\\"b\\\\c/\"");
    ck_assert_str_eq(json_of("\n\r\t\b\f", 5), "\"\\n\\r\\t\\b\\f\"");
    ck_assert_str_eq(json_of("\x01\x1f", 2), "\"\\u0001\\u001f\"");
    ck_assert_str_eq(json_of("a\0b", 3), "\"a\\u0000b\"");
    ck_assert_str_eq(json_of("\x7f", 1), "\"\x7f\"");
    ck_assert_str_eq(json_of("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 12),
                     "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    ck_assert_str_eq(json_of("\xe2\x80\xa8", 3), "\"\\u2028\"");
}
END_TEST

START_TEST(json_replaces_ill_formed_utf8) {
    ck_assert_str_eq(json_of("a\xff", 2), "\"a\\ufffd\"");
    ck_assert_str_eq(json_of("\xc0\x80", 2), "\"\\ufffd\\ufffd\"");         /* overlong NUL */
    ck_assert_str_eq(json_of("\xed\xa0\x80", 3), "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
    ck_assert_str_eq(json_of("\xf4\x90\x80\x80", 4),
                     "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* above U+10FFFF */
    ck_assert_str_eq(json_of("\xe2\x82", 2), "\"\\ufffd\\ufffd\"");    /* truncated */
    ck_assert_str_eq(json_of("\x80x", 2), "\"\\ufffdx\"");             /* lone continuation */
}
END_TEST

START_TEST(utf8_validity) {
    ck_assert(cli_utf8_valid("", 0));
    ck_assert(cli_utf8_valid("abc", 3));
    ck_assert(cli_utf8_valid("\xf4\x8f\xbf\xbf", 4)); /* U+10FFFF */
    ck_assert(cli_utf8_valid("\xef\xbf\xbd", 3));
    ck_assert(!cli_utf8_valid("\xe0\x80\x80", 3));
    ck_assert(!cli_utf8_valid("\xf5\x80\x80\x80", 4));
    ck_assert(!cli_utf8_valid("\xc3", 1));
    ck_assert(!cli_utf8_valid("a\xfe", 2));
}
END_TEST

static const char *b64_of(const char *s) {
    static char out[128];
    FILE *f = fmemopen(out, sizeof out, "w");
    cli_base64(f, s, strlen(s));
    fclose(f);
    return out;
}

START_TEST(base64_vectors) {
    ck_assert_str_eq(b64_of(""), "");
    ck_assert_str_eq(b64_of("f"), "Zg==");
    ck_assert_str_eq(b64_of("fo"), "Zm8=");
    ck_assert_str_eq(b64_of("foo"), "Zm9v");
    ck_assert_str_eq(b64_of("foob"), "Zm9vYg==");
    ck_assert_str_eq(b64_of("fooba"), "Zm9vYmE=");
    ck_assert_str_eq(b64_of("foobar"), "Zm9vYmFy");
}
END_TEST

START_TEST(format_names) {
    cli_format_t f;
    ck_assert_int_eq(cli_format_parse("json", &f), 0);
    ck_assert_int_eq(f, CLI_FMT_JSON);
    ck_assert_int_eq(cli_format_parse("HEX", &f), 0);
    ck_assert_int_eq(f, CLI_FMT_HEX);
    ck_assert_int_eq(cli_format_parse("yaml", &f), -1);
}
END_TEST

/* ---- histogram ----------------------------------------------------------- */

START_TEST(hist_buckets_are_contiguous) {
    for (size_t i = 0; i + 1 < CLI_HIST_BUCKETS && cli_hist_upper(i) < (1ull << 40) - 1; i++) {
        ck_assert_uint_eq(cli_hist_upper(i) + 1, cli_hist_lower(i + 1));
        ck_assert_uint_eq(cli_hist_index(cli_hist_lower(i)), i);
        ck_assert_uint_eq(cli_hist_index(cli_hist_upper(i)), i);
        uint64_t lo = cli_hist_lower(i), width = cli_hist_upper(i) - lo + 1;
        ck_assert(lo < 64 ? width == 1 : width * 32 <= lo);
    }
    ck_assert_uint_lt(cli_hist_index(UINT64_MAX), CLI_HIST_BUCKETS);
}
END_TEST

START_TEST(hist_quantiles) {
    static cli_hist_t h;
    cli_hist_reset(&h);
    for (uint64_t v = 1; v <= 10000; v++)
        cli_hist_record(&h, v);
    ck_assert_uint_eq(h.total, 10000);
    ck_assert_uint_eq(h.min, 1);
    ck_assert_uint_eq(h.max, 10000);
    ck_assert(fabs(cli_hist_mean(&h) - 5000.5) < 1e-6);
    static const double qs[] = {0.5, 0.95, 0.99, 0.999};
    for (size_t i = 0; i < 4; i++) {
        double exact = qs[i] * 10000, got = (double)cli_hist_quantile(&h, qs[i]);
        ck_assert_msg(got >= exact && got <= exact * 1.0325, "q%g: %g vs %g", qs[i], got, exact);
    }
    ck_assert_uint_eq(cli_hist_quantile(&h, 1.0), 10000);
    static cli_hist_t g;
    cli_hist_reset(&g);
    cli_hist_record(&g, 5000000);
    cli_hist_merge(&h, &g);
    ck_assert_uint_eq(h.total, 10001);
    ck_assert_uint_eq(h.max, 5000000);
    ck_assert_uint_eq(cli_hist_quantile(&h, 1.0), 5000000);
}
END_TEST

START_TEST(hist_print_shows_percentiles) {
    static cli_hist_t h;
    cli_hist_reset(&h);
    for (int i = 0; i < 100; i++)
        cli_hist_record(&h, 1000 + (uint64_t)i * 10);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_hist_print(&h, f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "p99.9"));
    ck_assert_ptr_nonnull(strstr(buf, "histogram"));
    ck_assert_ptr_nonnull(strstr(buf, "100.000%"));
    free(buf);
}
END_TEST

static Suite *cli_suite(void) {
    Suite *s = suite_create("cli");
    TCase *t = tcase_create("options");
    tcase_add_test(t, flags_basic_forms);
    tcase_add_test(t, flags_errors_name_flag_and_value);
    tcase_add_test(t, flags_record_conf_settings_in_order);
    tcase_add_test(t, flags_bad_conf_values_name_the_flag);
    tcase_add_test(t, precedence_defaults_file_env_flags);
    tcase_add_test(t, precedence_conf_path_flag_over_env);
    tcase_add_test(t, precedence_missing_conf_file_names_path);
    tcase_add_test(t, clientconf_stock_file_loads_silently);
    tcase_add_test(t, clientconf_syntax);
    tcase_add_test(t, clientconf_unknown_key_is_error_at_line);
    tcase_add_test(t, clientconf_java_only_keys_warn_when_set);
    tcase_add_test(t, clientconf_bad_value_names_file_line);
    suite_add_tcase(s, t);
    TCase *o = tcase_create("output");
    tcase_add_test(o, json_escapes);
    tcase_add_test(o, json_replaces_ill_formed_utf8);
    tcase_add_test(o, utf8_validity);
    tcase_add_test(o, base64_vectors);
    tcase_add_test(o, format_names);
    tcase_add_test(o, hist_buckets_are_contiguous);
    tcase_add_test(o, hist_quantiles);
    tcase_add_test(o, hist_print_shows_percentiles);
    suite_add_tcase(s, o);
    return s;
}

PC_TEST_MAIN(cli_suite)
