/*
 * Unit tests of the connector configuration: every precedence rule (each
 * pair of sources, both load orders), unknown keys, value validation,
 * the .properties syntax, environment and argument loaders, topic
 * resolution and the mapping onto the core client configuration.
 * No broker, no sockets; files only under /tmp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/props.h"
#include "connector/config_int.h"
#include "connector/table_props.h"
#include "pulsarc.h"
#include "pulsarc/connector.h"
#include "pulsarc/source.h"
#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define ck_assert_contains(hay, needle) \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "'%s' does not contain '%s'", (hay), (needle))

static char err[512];

static pulsarc_connector_config_t *cfg_new(void) {
    pulsarc_connector_config_t *c = pulsarc_connector_config_new();
    ck_assert_ptr_nonnull(c);
    err[0] = '\0';
    return c;
}

static const char *get(const pulsarc_connector_config_t *c, const char *key) {
    const char *v = pulsarc_connector_config_get(c, key);
    return v ? v : "(null)";
}

/* ======================================================================== */
/* precedence: one test per pair of sources, in both load orders */

#define TENANT "pulsar.client.defaultTenant"

/* Sets the default tenant to "t<origin>" through the real loader of origin. */
static void load_tenant(pulsarc_connector_config_t *c, int origin) {
    char value[16], file[64], pair[64], env[64], *argv[3];
    snprintf(value, sizeof value, "t%d", origin);
    pulsarc_err_t rc = PULSARC_OK;
    switch (origin) {
    case PULSARC_CONNECTOR_ORIGIN_DEFAULT:
        return; /* the table default, "public" */
    case PULSARC_CONNECTOR_ORIGIN_FILE:
        snprintf(file, sizeof file, "# comment\n%s = %s\n", TENANT, value);
        rc = pulsarc_connector_config_load_properties(c, file, strlen(file), err, sizeof err);
        break;
    case PULSARC_CONNECTOR_ORIGIN_ENV: {
        snprintf(env, sizeof env, "PULSAR_TENANT=%s", value);
        const char *envp[] = {"HOME=/x", env, NULL};
        rc = pulsarc_connector_config_load_env(c, envp, err, sizeof err);
        break;
    }
    case PULSARC_CONNECTOR_ORIGIN_PAIR: {
        snprintf(pair, sizeof pair, "%s=%s", TENANT, value);
        const char *pairs[] = {pair};
        rc = pulsarc_connector_config_load_pairs(c, pairs, 1, err, sizeof err);
        break;
    }
    case PULSARC_CONNECTOR_ORIGIN_ARGS: {
        snprintf(pair, sizeof pair, "--tenant=%s", value);
        argv[0] = "prog";
        argv[1] = pair;
        argv[2] = NULL;
        int argc = 2;
        rc = pulsarc_connector_config_load_args(c, &argc, argv, 0, err, sizeof err);
        break;
    }
    default:
        rc = pulsarc_connector_config_set_tenant(c, value, err, sizeof err);
    }
    ck_assert_msg(rc == PULSARC_OK, "origin %d: %s", origin, err);
}

/* Pairs (weak, strong) of the 6 sources: 15 pairs x 2 orders. */
static void pair_of(int i, int *weak, int *strong, int *strong_first) {
    int k = i / 2, n = 0;
    *strong_first = i % 2;
    for (int a = 0; a < 6; a++)
        for (int b = a + 1; b < 6; b++, n++)
            if (n == k) {
                *weak = a;
                *strong = b;
            }
}

START_TEST(precedence_pair) {
    int weak = 0, strong = 0, strong_first;
    pair_of(_i, &weak, &strong, &strong_first);
    pulsarc_connector_config_t *c = cfg_new();
    load_tenant(c, strong_first ? strong : weak);
    load_tenant(c, strong_first ? weak : strong);
    char want[16];
    if (strong == PULSARC_CONNECTOR_ORIGIN_DEFAULT)
        snprintf(want, sizeof want, "public");
    else
        snprintf(want, sizeof want, "t%d", strong);
    ck_assert_msg(!strcmp(get(c, TENANT), want), "%s over %s (%s first): got %s",
                  pulsarc_connector_origin_name(strong), pulsarc_connector_origin_name(weak),
                  strong_first ? "stronger" : "weaker", get(c, TENANT));
    ck_assert_int_eq(pulsarc_connector_config_origin(c, TENANT), strong);
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(precedence_same_source_last_wins) {
    pulsarc_connector_config_t *c = cfg_new();
    const char *pairs[] = {TENANT "=a", TENANT "=b"};
    ck_assert_int_eq(pulsarc_connector_config_load_pairs(c, pairs, 2, err, sizeof err), 0);
    ck_assert_str_eq(get(c, TENANT), "b");
    const char *text = TENANT "=x\n" TENANT "=y\n";
    ck_assert_int_eq(pulsarc_connector_config_load_properties(c, text, strlen(text), err, sizeof err),
                     0);
    ck_assert_str_eq(get(c, TENANT), "b"); /* the file is weaker than -D */
    char *argv[] = {"p", "--tenant", "c", "--tenant", "d", NULL};
    int argc = 5;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, argv, 0, err, sizeof err), 0);
    ck_assert_str_eq(get(c, TENANT), "d");
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(precedence_builder_conflict) {
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_set(c, TENANT, "a", err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_set(c, TENANT, "a", err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_set(c, TENANT, "b", err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "This option pulsar.client.defaultTenant has been set to value a.");
    ck_assert_str_eq(get(c, TENANT), "a");
    /* a secret's value is not shown */
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.client.authParams", "token:s3cr3t",
                                                  err, sizeof err), 0);
    ck_assert_int_ne(pulsarc_connector_config_set(c, "pulsar.client.authParams", "token:other",
                                                  err, sizeof err), 0);
    ck_assert_ptr_null(strstr(err, "s3cr3t"));
    ck_assert_contains(err, "pulsar.client.authParams");
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(precedence_independent_of_key) {
    /* each key keeps its own origin */
    pulsarc_connector_config_t *c = cfg_new();
    const char *envp[] = {"PULSAR_SERVICE_URL=pulsar://env:6650", "PULSAR_TENANT=envt", NULL};
    ck_assert_int_eq(pulsarc_connector_config_load_env(c, envp, err, sizeof err), 0);
    const char *pairs[] = {"pulsar.client.serviceUrl=pulsar://d:6650"};
    ck_assert_int_eq(pulsarc_connector_config_load_pairs(c, pairs, 1, err, sizeof err), 0);
    ck_assert_str_eq(get(c, "pulsar.client.serviceUrl"), "pulsar://d:6650");
    ck_assert_str_eq(get(c, TENANT), "envt");
    ck_assert_int_eq(pulsarc_connector_config_origin(c, TENANT), PULSARC_CONNECTOR_ORIGIN_ENV);
    ck_assert_int_eq(pulsarc_connector_config_origin(c, "pulsar.client.serviceUrl"),
                     PULSARC_CONNECTOR_ORIGIN_PAIR);
    ck_assert_int_eq(pulsarc_connector_config_origin(c, "nope"), -1);
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(origin_names) {
    ck_assert_str_eq(pulsarc_connector_origin_name(PULSARC_CONNECTOR_ORIGIN_DEFAULT), "default");
    ck_assert_str_eq(pulsarc_connector_origin_name(PULSARC_CONNECTOR_ORIGIN_PAIR), "-D");
    ck_assert_str_eq(pulsarc_connector_origin_name(PULSARC_CONNECTOR_ORIGIN_BUILDER), "builder");
    ck_assert_str_eq(pulsarc_connector_origin_name((pulsarc_connector_origin_t)9), "?");
}
END_TEST

/* ======================================================================== */
/* unknown keys */

START_TEST(unknown_key_set) {
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.client.serviceURL", "x", err,
                                                  sizeof err), PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_contains(err, "'pulsar.client.serviceURL'");
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.source.bogus", "1", err, sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_contains(err, "pulsar.source.bogus");
    ck_assert_ptr_null(pulsarc_connector_config_get(c, "pulsar.source.bogus"));
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(unknown_key_sources) {
    pulsarc_connector_config_t *c = cfg_new();
    const char *text = "pulsar.client.serviceUrl=pulsar://h:6650\n\npulsar.sink.nope=1\n";
    ck_assert_int_eq(pulsarc_connector_config_load_properties(c, text, strlen(text), err,
                                                              sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_str_eq(err, "properties: line 3: unknown configuration key 'pulsar.sink.nope'");
    /* nothing applied: the file fails as a whole */
    ck_assert_ptr_null(pulsarc_connector_config_get(c, "pulsar.client.serviceUrl"));
    const char *pairs[] = {"pulsar.producer.nope=2"};
    ck_assert_int_eq(pulsarc_connector_config_load_pairs(c, pairs, 1, err, sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_contains(err, "'pulsar.producer.nope'");
    char *argv[] = {"p", "--service-url", "pulsar://h:6650", "--bogus", NULL};
    int argc = 4;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, argv, 0, err, sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_str_eq(err, "unknown argument '--bogus'");
    ck_assert_ptr_null(pulsarc_connector_config_get(c, "pulsar.client.serviceUrl"));
    char *argv2[] = {"p", "-Dpulsar.consumer.nope=1", NULL};
    argc = 2;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, argv2, 0, err, sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_contains(err, "'pulsar.consumer.nope'");
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(every_prefix_accepted) {
    static const char *const keys[][2] = {
        {"pulsar.client.operationTimeoutMs", "1000"},
        {"pulsar.admin.adminUrl", "http://h:8080"},
        {"pulsar.source.maxFetchRecords", "10"},
        {"pulsar.sink.deliveryGuarantee", "at-least-once"},
        {"pulsar.producer.batchingMaxMessages", "10"},
        {"pulsar.consumer.receiverQueueSize", "10"},
        {"pulsar.consumer.deadLetterPolicy.maxRedeliverCount", "3"},
    };
    pulsarc_connector_config_t *c = cfg_new();
    for (size_t i = 0; i < NELEM(keys); i++)
        ck_assert_msg(!pulsarc_connector_config_set(c, keys[i][0], keys[i][1], err, sizeof err),
                      "%s: %s", keys[i][0], err);
    pulsarc_connector_config_destroy(c);
}
END_TEST

/* ======================================================================== */
/* value validation */

static const struct bad_value {
    const char *key, *value;
    pulsarc_err_t rc;
    const char *msg;
} bad_values[] = {
    {"pulsar.client.operationTimeoutMs", "ten", PULSARC_ERR_BAD_CONFIG,
     "pulsar.client.operationTimeoutMs: 'ten' is not an integer"},
    {"pulsar.client.operationTimeoutMs", "0", PULSARC_ERR_BAD_CONFIG,
     "pulsar.client.operationTimeoutMs: 0 is outside [1, 3600000]"},
    {"pulsar.source.maxFetchRecords", "99999999999999999999", PULSARC_ERR_BAD_CONFIG,
     "is not an integer"},
    {"pulsar.producer.batchingEnabled", "yes", PULSARC_ERR_BAD_CONFIG,
     "pulsar.producer.batchingEnabled: 'yes' is not true or false"},
    {"pulsar.sink.deliveryGuarantee", "twice", PULSARC_ERR_BAD_CONFIG,
     "pulsar.sink.deliveryGuarantee: 'twice' is not one of exactly-once|at-least-once|none"},
    {"pulsar.producer.compressionType", "gzip", PULSARC_ERR_BAD_CONFIG, "is not one of"},
    {"pulsar.client.serviceUrl", "ftp://h:21", PULSARC_ERR_BAD_CONFIG,
     "pulsar.client.serviceUrl: unknown scheme 'ftp' in service URL 'ftp://h:21'"},
    {"pulsar.client.serviceUrl", "pulsar://", PULSARC_ERR_BAD_CONFIG, "pulsar.client.serviceUrl: "},
    {"pulsar.admin.adminUrl", "pulsar://h:6650", PULSARC_ERR_BAD_CONFIG,
     "needs a http:// or https:// scheme"},
    {"pulsar.client.defaultTenant", "bad tenant", PULSARC_ERR_BAD_CONFIG,
     "pulsar.client.defaultTenant: 'bad tenant' is not a valid tenant name"},
    {"pulsar.client.defaultNamespace", "a/b/c", PULSARC_ERR_BAD_CONFIG, "not a valid namespace"},
    {"pulsar.source.subscriptionNamespace", "", PULSARC_ERR_BAD_CONFIG, "not a valid namespace"},
    {"pulsar.client.authParamMap", "token", PULSARC_ERR_BAD_CONFIG,
     "pulsar.client.authParamMap: entry 1 is not key:value"},
    {"pulsar.client.useKeyStoreTls", "true", PULSARC_ERR_UNSUPPORTED,
     "pulsar.client.useKeyStoreTls: 'true' is not supported by pulsarc"},
    {"pulsar.client.listenerName", "external", PULSARC_ERR_UNSUPPORTED, "not supported by pulsarc"},
    {"pulsar.client.proxyServiceUrl", "pulsar://proxy:6650", PULSARC_ERR_UNSUPPORTED,
     "not supported"},
    {"pulsar.client.initialBackoffIntervalNanos", "10", PULSARC_ERR_BAD_CONFIG, "outside"},
};

START_TEST(value_rejected) {
    const struct bad_value *b = &bad_values[_i];
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_set(c, b->key, b->value, err, sizeof err), b->rc);
    ck_assert_contains(err, b->msg);
    ck_assert_int_eq(pulsarc_connector_config_origin(c, b->key), PULSARC_CONNECTOR_ORIGIN_DEFAULT);
    pulsarc_connector_config_destroy(c);
}
END_TEST

/*
 * The client's table and the connector's read values with the same parser
 * (lib/conf/value.c): a key the connector maps onto a core key is accepted
 * and refused exactly as the core key is, with the same reason.
 */
START_TEST(value_parser_shared) {
    static const struct {
        const char *cc_key, *core_key, *value;
    } cases[] = {
        {"pulsar.client.operationTimeoutMs", "operationTimeoutMs", "0"},
        {"pulsar.client.operationTimeoutMs", "operationTimeoutMs", "12abc"},
        {"pulsar.client.operationTimeoutMs", "operationTimeoutMs", "99999999999999999999"},
        {"pulsar.producer.batchingEnabled", "batchingEnabled", "1"},
        {"pulsar.producer.batchingEnabled", "batchingEnabled", "FALSE"},
        {"pulsar.producer.batchingEnabled", "batchingEnabled", "maybe"},
        {"pulsar.consumer.subscriptionType", "subscriptionType", "key-shared"},
        {"pulsar.consumer.subscriptionType", "subscriptionType", "KEY_SHARED"},
        {"pulsar.consumer.subscriptionType", "subscriptionType", "Sometimes"},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        pulsarc_connector_config_t *c = cfg_new();
        pulsarc_conf_t *core = pulsarc_conf_new();
        char core_err[512] = "";
        err[0] = '\0';
        pulsarc_err_t a = pulsarc_connector_config_set(c, cases[i].cc_key, cases[i].value, err,
                                                       sizeof err);
        pulsarc_err_t b = pulsarc_conf_set(core, cases[i].core_key, cases[i].value, core_err,
                                           sizeof core_err);
        ck_assert_msg(a == b, "%s=%s: connector %d, core %d", cases[i].cc_key, cases[i].value, a, b);
        if (a) /* the same reason after the key's name */
            ck_assert_str_eq(strchr(err, ':'), strchr(core_err, ':'));
        pulsarc_conf_destroy(core);
        pulsarc_connector_config_destroy(c);
    }
}
END_TEST

/* The source builder reads its keys by the connector's table too. */
START_TEST(source_conf_uses_table) {
    pulsarc_source_conf_t *sc = pulsarc_source_conf_new();
    ck_assert_ptr_nonnull(sc);
    ck_assert_int_eq(pulsarc_source_conf_set(sc, "pulsar.source.maxFetchRecords", "0", err,
                                             sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "pulsar.source.maxFetchRecords: 0 is outside [1, 1000000]");
    ck_assert_int_eq(pulsarc_source_conf_set(sc, "pulsar.admin.adminUrl", "pulsar://h:6650", err,
                                             sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_contains(err, "needs a http:// or https:// scheme");
    ck_assert_int_eq(pulsarc_source_conf_set(sc, "pulsar.consumer.subscriptionType", "shared",
                                             err, sizeof err), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set(sc, "pulsar.source.enableMetrics", " 0 ", err,
                                             sizeof err), PULSARC_OK);
    ck_assert_int_eq(pulsarc_source_conf_set(sc, "pulsar.source.bogus", "1", err, sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_contains(err, "pulsar.source.bogus");
    pulsarc_source_conf_destroy(sc);
}
END_TEST

START_TEST(value_canonical) {
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.sink.deliveryGuarantee",
                                                  " AT_LEAST_ONCE ", err, sizeof err), 0);
    ck_assert_str_eq(get(c, "pulsar.sink.deliveryGuarantee"), "at-least-once");
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.producer.batchingEnabled", "FALSE",
                                                  err, sizeof err), 0);
    ck_assert_str_eq(get(c, "pulsar.producer.batchingEnabled"), "false");
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.consumer.subscriptionType",
                                                  "key-shared", err, sizeof err), 0);
    ck_assert_str_eq(get(c, "pulsar.consumer.subscriptionType"), "Key_Shared");
    /* defaults read back; unset keys without default are NULL */
    ck_assert_str_eq(get(c, "pulsar.source.maxFetchTime"), "10000");
    ck_assert_str_eq(get(c, "pulsar.client.tlsHostnameVerificationEnable"), "true");
    ck_assert_ptr_null(pulsarc_connector_config_get(c, "pulsar.client.serviceUrl"));
    /* a default-only key accepts its default */
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.client.useKeyStoreTls", "false", err,
                                                  sizeof err), 0);
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(secret_never_echoed) {
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_ne(pulsarc_connector_config_set(c, "pulsar.client.authParamMap", "tokenXYZ",
                                                  err, sizeof err), 0);
    ck_assert_ptr_null(strstr(err, "tokenXYZ"));
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.client.authParams", "token:a", err,
                                                  sizeof err), 0);
    ck_assert_int_ne(pulsarc_connector_config_set(c, "pulsar.client.authParams", "token:b", err,
                                                  sizeof err), 0);
    ck_assert_ptr_null(strstr(err, "token:a"));
    ck_assert_contains(err, "(secret, not shown)");
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(table_is_consistent) {
    /* every default passes its own validation, every core key exists in the core table */
    pulsarc_conf_t *core = pulsarc_conf_new();
    for (int i = 0; i < PC_CC__COUNT; i++) {
        const pc_prop_t *p = &pc_cc_props[i];
        ck_assert_msg(!strncmp(p->name, "pulsar.", 7), "%s", p->name);
        ck_assert_int_eq(pc_prop_find(&pc_cc_table, p->name), i);
        if (p->defval) {
            pulsarc_connector_config_t *c = cfg_new();
            ck_assert_msg(!pulsarc_connector_config_set(c, p->name, p->defval, err, sizeof err),
                          "default of %s: %s", p->name, err);
            pulsarc_connector_config_destroy(c);
        }
        if (p->target) {
            char buf[256];
            size_t len = sizeof buf;
            ck_assert_msg(pulsarc_conf_get(core, p->target, buf, &len) == PULSARC_OK,
                          "%s maps onto unknown core key %s", p->name, p->target);
        }
        if (p->target && p->type == PC_VALUE_INT) { /* the connector range fits the core's */
            int64_t scale = (p->flags & PC_F_NS_TO_MS) ? 1000000 : 1;
            char v[32];
            snprintf(v, sizeof v, "%lld", (long long)(p->min / scale));
            ck_assert_msg(!pulsarc_conf_set(core, p->target, v, err, sizeof err), "%s min: %s",
                          p->name, err);
            snprintf(v, sizeof v, "%lld", (long long)(p->max / scale));
            ck_assert_msg(!pulsarc_conf_set(core, p->target, v, err, sizeof err), "%s max: %s",
                          p->name, err);
        }
    }
    pulsarc_conf_destroy(core);
}
END_TEST

/*
 * Every table of lib/conf's rows (the client's keys, the connector's, the
 * SQL table options): each key found at its index, each default accepted
 * by its own row, the generated reference listing each key.
 */
START_TEST(every_table_consistent) {
    const pc_prop_table_t *tables[] = {&pc_conf_table, &pc_cc_table, &pc_table_opt_table};
    for (size_t t = 0; t < NELEM(tables); t++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        pc_prop_write_doc(tables[t], f);
        fclose(f);
        for (int i = 0; i < tables[t]->n; i++) {
            const pc_prop_t *p = &tables[t]->rows[i];
            char cell[160];
            int64_t n;
            ck_assert_int_eq(pc_prop_find(tables[t], p->name), i);
            ck_assert_msg(!p->defval || pc_prop_check(p, p->defval, &n, err, sizeof err) == 0,
                          "default of %s: %s", p->name, err);
            snprintf(cell, sizeof cell, "| `%s` |", p->name);
            ck_assert_msg(strstr(text, cell), "%s missing from the reference", p->name);
        }
        free(text);
    }
}
END_TEST

/* ======================================================================== */
/* .properties syntax */

typedef struct kvs {
    char keys[16][128], values[16][128];
    int lines[16];
    int n;
} kvs_t;

static pulsarc_err_t collect(void *opaque, const char *key, const char *value, int line, char *e,
                             size_t el) {
    (void)e;
    (void)el;
    kvs_t *k = opaque;
    ck_assert_int_lt(k->n, 16);
    snprintf(k->keys[k->n], 128, "%s", key);
    snprintf(k->values[k->n], 128, "%s", value);
    k->lines[k->n++] = line;
    return PULSARC_OK;
}

static kvs_t parse(const char *text) {
    kvs_t k;
    memset(&k, 0, sizeof k);
    pulsarc_err_t rc = pc_properties_parse(text, strlen(text), collect, &k, err, sizeof err);
    ck_assert_msg(rc == PULSARC_OK, "%s", err);
    return k;
}

START_TEST(props_separators) {
    kvs_t k = parse("a=1\nb: 2\nc 3\n  d  =  4\ne\nf=\ng==x\nh:=y\n");
    ck_assert_int_eq(k.n, 8);
    const char *want[][2] = {{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"},
                             {"e", ""},  {"f", ""},  {"g", "=x"}, {"h", "=y"}};
    for (int i = 0; i < 8; i++) {
        ck_assert_str_eq(k.keys[i], want[i][0]);
        ck_assert_str_eq(k.values[i], want[i][1]);
    }
}
END_TEST

START_TEST(props_comments_and_blanks) {
    kvs_t k = parse("# hash\n! bang\n   # indented\n\n \t\f\na=1\n#a=2\n");
    ck_assert_int_eq(k.n, 1);
    ck_assert_str_eq(k.values[0], "1");
    ck_assert_int_eq(k.lines[0], 6);
    k = parse("a=1 # not a comment\n");
    ck_assert_str_eq(k.values[0], "1 # not a comment");
}
END_TEST

START_TEST(props_continuations) {
    kvs_t k = parse("a=one \\\n    two\\\n three\nb=x\\\\\nc=y\\\\\\\n  z\n");
    ck_assert_int_eq(k.n, 3);
    ck_assert_str_eq(k.values[0], "one twothree");
    ck_assert_str_eq(k.keys[1], "b");
    ck_assert_str_eq(k.values[1], "x\\");
    ck_assert_str_eq(k.values[2], "y\\z");
    ck_assert_int_eq(k.lines[1], 4);
    ck_assert_int_eq(k.lines[2], 5);
    /* a continuation line starting with # is data; an empty one ends the entry */
    k = parse("a=1\\\n#2\nb=3\\\n\nc=4");
    ck_assert_int_eq(k.n, 3);
    ck_assert_str_eq(k.values[0], "1#2");
    ck_assert_str_eq(k.values[1], "3");
    ck_assert_str_eq(k.values[2], "4");
    /* a backslash at the very end is dropped */
    k = parse("a=end\\");
    ck_assert_str_eq(k.values[0], "end");
}
END_TEST

START_TEST(props_line_ends) {
    kvs_t k = parse("a=1\r\nb=2\rc=3\n\rd=4");
    ck_assert_int_eq(k.n, 4);
    ck_assert_str_eq(k.values[0], "1");
    ck_assert_str_eq(k.values[1], "2");
    ck_assert_str_eq(k.values[2], "3");
    ck_assert_str_eq(k.values[3], "4");
    ck_assert_int_eq(k.lines[3], 5);
    k = parse("a=1\\\r\n  2\r\n");
    ck_assert_str_eq(k.values[0], "12");
}
END_TEST

START_TEST(props_escapes) {
    kvs_t k = parse("k\\=ey\\:x\\ y=v\\tw\\nz\\r\\f\\q\\\\\n"
                    "u=\\u0041\\u00e9\\u20AC\\uD83D\\uDE00\\uD800x\n"
                    "trail=spaces   \n");
    ck_assert_str_eq(k.keys[0], "k=ey:x y");
    ck_assert_str_eq(k.values[0], "v\tw\nz\r\fq\\");
    ck_assert_str_eq(k.values[1], "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdx");
    ck_assert_str_eq(k.values[2], "spaces   "); /* Java keeps trailing blanks */
}
END_TEST

START_TEST(props_malformed_unicode) {
    kvs_t k;
    memset(&k, 0, sizeof k);
    const char *text = "a=1\nb=\\u12G4\n";
    ck_assert_int_eq(pc_properties_parse(text, strlen(text), collect, &k, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "line 2: malformed \\uxxxx escape");
    text = "a=\\u12";
    ck_assert_int_eq(pc_properties_parse(text, strlen(text), collect, &k, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
}
END_TEST

START_TEST(props_not_nul_terminated) {
    kvs_t k;
    memset(&k, 0, sizeof k);
    const char text[] = {'a', '=', '1', '\n', 'b', '=', '2', 'X'};
    ck_assert_int_eq(pc_properties_parse(text, 7, collect, &k, err, sizeof err), 0);
    ck_assert_int_eq(k.n, 2);
    ck_assert_str_eq(k.values[1], "2");
}
END_TEST

START_TEST(props_file) {
    char path[] = "/tmp/pulsarc-cc-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *text = "pulsar.client.serviceUrl = pulsar://a:6650,b:6651\n"
                       "pulsar.producer.batchingMaxMessages: 7\n"
                       "pulsar.client.defaultNamespace ten/ns\n";
    ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_load_properties_file(c, path, err, sizeof err), 0);
    ck_assert_str_eq(get(c, "pulsar.client.serviceUrl"), "pulsar://a:6650,b:6651");
    ck_assert_str_eq(get(c, "pulsar.producer.batchingMaxMessages"), "7");
    ck_assert_str_eq(get(c, TENANT), "ten");
    ck_assert_str_eq(get(c, "pulsar.client.defaultNamespace"), "ns");
    ck_assert_int_eq(pulsarc_connector_config_origin(c, TENANT), PULSARC_CONNECTOR_ORIGIN_FILE);
    /* errors carry the path and the line */
    FILE *f = fopen(path, "w");
    fputs("pulsar.producer.batchingMaxMessages=1\n\npulsar.producer.batchingMaxMessages=x\n", f);
    fclose(f);
    ck_assert_int_eq(pulsarc_connector_config_load_properties_file(c, path, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    char want[128];
    snprintf(want, sizeof want, "%s: line 3: pulsar.producer.batchingMaxMessages: 'x'", path);
    ck_assert_contains(err, want);
    ck_assert_str_eq(get(c, "pulsar.producer.batchingMaxMessages"), "7"); /* unchanged */
    unlink(path);
    ck_assert_int_eq(pulsarc_connector_config_load_properties_file(c, path, err, sizeof err),
                     PULSARC_ERR_IO);
    ck_assert_contains(err, path);
    pulsarc_connector_config_destroy(c);
}
END_TEST

/* ======================================================================== */
/* environment */

START_TEST(env_every_variable) {
    const char *envp[] = {
        "PULSAR_SERVICE_URL=pulsar+ssl://h:6651",
        "PULSAR_ADMIN_URL=https://h:8443",
        "PULSAR_TENANT=t1",
        "PULSAR_NAMESPACE=n1",
        "PULSAR_SUBSCRIPTION_NAMESPACE=books/keeping",
        "PULSAR_AUTH_PLUGIN=token",
        "PULSAR_AUTH_PARAMS=token:abc",
        "PULSAR_TLS_TRUST_CERTS_FILE_PATH=/ca.pem",
        "PULSAR_TLS_CERT_FILE_PATH=/c.pem",
        "PULSAR_TLS_KEY_FILE_PATH=/k.pem",
        "PULSAR_TLS_HOSTNAME_VERIFICATION=false",
        "PULSAR_TLS_ALLOW_INSECURE_CONNECTION=true",
        "PULSAR_SERVICE_URLX=ignored",
        NULL,
    };
    static const char *const want[][2] = {
        {"pulsar.client.serviceUrl", "pulsar+ssl://h:6651"},
        {"pulsar.admin.adminUrl", "https://h:8443"},
        {TENANT, "t1"},
        {"pulsar.client.defaultNamespace", "n1"},
        {"pulsar.source.subscriptionNamespace", "books/keeping"},
        {"pulsar.client.authPluginClassName", "token"},
        {"pulsar.client.authParams", "token:abc"},
        {"pulsar.client.tlsTrustCertsFilePath", "/ca.pem"},
        {"pulsar.client.tlsCertificateFilePath", "/c.pem"},
        {"pulsar.client.tlsKeyFilePath", "/k.pem"},
        {"pulsar.client.tlsHostnameVerificationEnable", "false"},
        {"pulsar.client.tlsAllowInsecureConnection", "true"},
    };
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_load_env(c, envp, err, sizeof err), 0);
    for (size_t i = 0; i < NELEM(want); i++) {
        ck_assert_str_eq(get(c, want[i][0]), want[i][1]);
        ck_assert_int_eq(pulsarc_connector_config_origin(c, want[i][0]), PULSARC_CONNECTOR_ORIGIN_ENV);
    }
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(env_errors_and_empty) {
    pulsarc_connector_config_t *c = cfg_new();
    const char *empty[] = {"PULSAR_SERVICE_URL=", NULL};
    ck_assert_int_eq(pulsarc_connector_config_load_env(c, empty, err, sizeof err), 0);
    ck_assert_ptr_null(pulsarc_connector_config_get(c, "pulsar.client.serviceUrl"));
    const char *bad[] = {"PULSAR_TENANT=ok", "PULSAR_TLS_HOSTNAME_VERIFICATION=maybe", NULL};
    ck_assert_int_eq(pulsarc_connector_config_load_env(c, bad, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "PULSAR_TLS_HOSTNAME_VERIFICATION: "
                          "pulsar.client.tlsHostnameVerificationEnable: 'maybe' is not true or "
                          "false");
    ck_assert_str_eq(get(c, TENANT), "public"); /* atomic */
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(env_process_environment) {
    setenv("PULSAR_SERVICE_URL", "pulsar://from-env:6650", 1);
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_load_env(c, NULL, err, sizeof err), 0);
    ck_assert_str_eq(get(c, "pulsar.client.serviceUrl"), "pulsar://from-env:6650");
    unsetenv("PULSAR_SERVICE_URL");
    pulsarc_connector_config_destroy(c);
}
END_TEST

/* ======================================================================== */
/* arguments and -D pairs */

START_TEST(args_every_option) {
    char *argv[] = {"prog",
                    "--service-url", "pulsar://a:6650",
                    "--admin-url=http://a:8080",
                    "--tenant", "t",
                    "--namespace", "n",
                    "--subscription-namespace=sub",
                    "--auth-plugin", "tls",
                    "--auth-params", "tlsCertFile:/c,tlsKeyFile:/k",
                    "--tls-trust-certs", "/ca",
                    "--tls-cert-file", "/c",
                    "--tls-key-file", "/k",
                    "--no-hostname-verification",
                    "--tls-allow-insecure",
                    "-Dpulsar.source.maxFetchRecords=5",
                    "-D", "pulsar.sink.maxRecommitTimes=2",
                    NULL};
    int argc = (int)NELEM(argv) - 1;
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, argv, 0, err, sizeof err), 0);
    ck_assert_str_eq(get(c, "pulsar.client.serviceUrl"), "pulsar://a:6650");
    ck_assert_str_eq(get(c, "pulsar.admin.adminUrl"), "http://a:8080");
    ck_assert_str_eq(get(c, TENANT), "t");
    ck_assert_str_eq(get(c, "pulsar.client.defaultNamespace"), "n");
    ck_assert_str_eq(get(c, "pulsar.source.subscriptionNamespace"), "sub");
    ck_assert_str_eq(get(c, "pulsar.client.authPluginClassName"), "tls");
    ck_assert_str_eq(get(c, "pulsar.client.authParams"), "tlsCertFile:/c,tlsKeyFile:/k");
    ck_assert_str_eq(get(c, "pulsar.client.tlsTrustCertsFilePath"), "/ca");
    ck_assert_str_eq(get(c, "pulsar.client.tlsCertificateFilePath"), "/c");
    ck_assert_str_eq(get(c, "pulsar.client.tlsKeyFilePath"), "/k");
    ck_assert_str_eq(get(c, "pulsar.client.tlsHostnameVerificationEnable"), "false");
    ck_assert_str_eq(get(c, "pulsar.client.tlsAllowInsecureConnection"), "true");
    ck_assert_str_eq(get(c, "pulsar.source.maxFetchRecords"), "5");
    ck_assert_int_eq(pulsarc_connector_config_origin(c, "pulsar.source.maxFetchRecords"),
                     PULSARC_CONNECTOR_ORIGIN_PAIR);
    ck_assert_str_eq(get(c, "pulsar.sink.maxRecommitTimes"), "2");
    ck_assert_int_eq(pulsarc_connector_config_origin(c, TENANT), PULSARC_CONNECTOR_ORIGIN_ARGS);
    ck_assert_int_eq(argc, (int)NELEM(argv) - 1); /* strict mode leaves argv alone */
    char *again[] = {"p", "--hostname-verification", NULL};
    argc = 2;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, again, 0, err, sizeof err), 0);
    ck_assert_str_eq(get(c, "pulsar.client.tlsHostnameVerificationEnable"), "true");
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(args_errors) {
    pulsarc_connector_config_t *c = cfg_new();
    char *a1[] = {"p", "--service-url", NULL};
    int argc = 2;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, a1, 0, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "--service-url needs a value");
    char *a2[] = {"p", "--tls-allow-insecure=false", NULL};
    argc = 2;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, a2, 0, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "--tls-allow-insecure takes no value");
    char *a3[] = {"p", "--service-url", "ftp://x", NULL};
    argc = 3;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, a3, 0, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_contains(err, "--service-url: pulsar.client.serviceUrl: ");
    char *a4[] = {"p", "-Dnovalue", NULL};
    argc = 2;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, a4, 0, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "-D 'novalue': expected key=value");
    char *a5[] = {"p", "-D", NULL};
    argc = 2;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, a5, 0, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    char *a6[] = {"p", "positional", NULL};
    argc = 2;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, a6, 0, err, sizeof err),
                     PULSARC_ERR_UNKNOWN_CONFIG);
    ck_assert_str_eq(err, "unknown argument 'positional'");
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(args_keep_unknown) {
    char *argv[] = {"prog", "--input", "in.txt", "--namespace=ns", "-v",
                    "-D", "pulsar.source.maxFetchRecords=9", "--", "--tenant", "x", NULL};
    int argc = (int)NELEM(argv) - 1;
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, argv,
                                                        PULSARC_CONNECTOR_ARGS_KEEP_UNKNOWN, err,
                                                        sizeof err), 0);
    ck_assert_int_eq(argc, 7);
    const char *left[] = {"prog", "--input", "in.txt", "-v", "--", "--tenant", "x"};
    for (int i = 0; i < argc; i++)
        ck_assert_str_eq(argv[i], left[i]);
    ck_assert_ptr_null(argv[argc]);
    ck_assert_str_eq(get(c, "pulsar.client.defaultNamespace"), "ns");
    ck_assert_str_eq(get(c, TENANT), "public"); /* after "--": not ours */
    ck_assert_str_eq(get(c, "pulsar.source.maxFetchRecords"), "9");
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(args_properties_file) {
    char path[] = "/tmp/pulsarc-cc-XXXXXX";
    int fd = mkstemp(path);
    const char *text = "pulsar.client.defaultTenant=fromfile\npulsar.client.defaultNamespace=f\n";
    ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    char *argv[] = {"p", "--namespace", "fromargs", "--properties-file", path, NULL};
    int argc = 5;
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, argv, 0, err, sizeof err), 0);
    ck_assert_str_eq(get(c, TENANT), "fromfile");
    ck_assert_int_eq(pulsarc_connector_config_origin(c, TENANT), PULSARC_CONNECTOR_ORIGIN_FILE);
    /* the file, loaded after the argument, still does not override it */
    ck_assert_str_eq(get(c, "pulsar.client.defaultNamespace"), "fromargs");
    unlink(path);
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(pairs_errors) {
    pulsarc_connector_config_t *c = cfg_new();
    const char *p1[] = {"=v"};
    ck_assert_int_eq(pulsarc_connector_config_load_pairs(c, p1, 1, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "-D '=v': expected key=value");
    const char *p2[] = {"pulsar.client.defaultTenant=a b"};
    ck_assert_int_eq(pulsarc_connector_config_load_pairs(c, p2, 1, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG); /* "a b" is not a tenant name */
    const char *p3[] = {"pulsar.producer.producerName=a=b"};
    ck_assert_int_eq(pulsarc_connector_config_load_pairs(c, p3, 1, err, sizeof err), 0);
    ck_assert_str_eq(get(c, "pulsar.producer.producerName"), "a=b");
    pulsarc_connector_config_destroy(c);
}
END_TEST

/* ======================================================================== */
/* tenant, namespace, topics */

START_TEST(namespace_sets_tenant) {
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_set_namespace(c, "acme/orders", err, sizeof err), 0);
    ck_assert_str_eq(get(c, TENANT), "acme");
    ck_assert_str_eq(get(c, "pulsar.client.defaultNamespace"), "orders");
    ck_assert_int_eq(pulsarc_connector_config_set_namespace(c, "bad//x", err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(resolve_topics) {
    pulsarc_connector_config_t *c = cfg_new();
    char buf[256];
    ck_assert_int_eq(pulsarc_connector_config_resolve_topic(c, "t", buf, sizeof buf, err,
                                                            sizeof err), 0);
    ck_assert_str_eq(buf, "persistent://public/default/t");
    ck_assert_int_eq(pulsarc_connector_config_set_namespace(c, "acme/orders", err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_resolve_topic(c, "t-partition-2", buf, sizeof buf,
                                                            err, sizeof err), 0);
    ck_assert_str_eq(buf, "persistent://acme/orders/t-partition-2");
    ck_assert_int_eq(pulsarc_connector_config_resolve_topic(c, "x/y/z", buf, sizeof buf, err,
                                                            sizeof err), 0);
    ck_assert_str_eq(buf, "persistent://x/y/z");
    ck_assert_int_eq(pulsarc_connector_config_resolve_topic(c, "non-persistent://a/b/c", buf,
                                                            sizeof buf, err, sizeof err), 0);
    ck_assert_str_eq(buf, "non-persistent://a/b/c");
    ck_assert_int_eq(pulsarc_connector_config_resolve_topic(c, "a/b", buf, sizeof buf, err,
                                                            sizeof err), PULSARC_ERR_BAD_TOPIC);
    ck_assert_int_eq(pulsarc_connector_config_resolve_topic(c, "t", buf, 8, err, sizeof err),
                     PULSARC_ERR_INVALID_ARG);
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(subscription_namespace) {
    pulsarc_connector_config_t *c = cfg_new();
    char buf[256];
    ck_assert_int_eq(pulsarc_connector_config_subscription_namespace(c, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "public/default");
    ck_assert_int_eq(pulsarc_connector_config_set_tenant(c, "acme", err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_subscription_namespace(c, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "acme/default");
    ck_assert_int_eq(pulsarc_connector_config_set_subscription_namespace(c, "flink", err,
                                                                         sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_subscription_namespace(c, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "acme/flink");
    ck_assert_int_eq(pulsarc_connector_config_bookkeeping_topic(c, "splits", buf, sizeof buf, err,
                                                                sizeof err), 0);
    ck_assert_str_eq(buf, "persistent://acme/flink/splits");
    /* topics still resolve in the default namespace */
    ck_assert_int_eq(pulsarc_connector_config_resolve_topic(c, "t", buf, sizeof buf, err,
                                                            sizeof err), 0);
    ck_assert_str_eq(buf, "persistent://acme/default/t");
    ck_assert_int_eq(pulsarc_connector_config_bookkeeping_topic(c, "a/b", buf, sizeof buf, err,
                                                                sizeof err), PULSARC_ERR_BAD_TOPIC);
    pulsarc_connector_config_destroy(c);
    c = cfg_new();
    const char *envp[] = {"PULSAR_SUBSCRIPTION_NAMESPACE=ops/state", NULL};
    ck_assert_int_eq(pulsarc_connector_config_load_env(c, envp, err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_subscription_namespace(c, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "ops/state");
    ck_assert_int_eq(pulsarc_connector_config_subscription_namespace(c, buf, 4),
                     PULSARC_ERR_INVALID_ARG);
    pulsarc_connector_config_destroy(c);
}
END_TEST

/* ======================================================================== */
/* validation across keys, and the core client configuration */

static const char *core_get(const pulsarc_conf_t *conf, const char *key) {
    static char buf[512];
    size_t len = sizeof buf;
    ck_assert_int_eq(pulsarc_conf_get(conf, key, buf, &len), 0);
    return buf;
}

START_TEST(validate_rules) {
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_validate(c, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_str_eq(err, "Config option pulsar.client.serviceUrl is not provided for pulsar client.");
    ck_assert_int_eq(pulsarc_connector_config_set_service_url(c, "pulsar://a:6650,b:6650,c", err,
                                                              sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_validate(c, err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.client.authParams", "token:x", err,
                                                  sizeof err), 0);
    const char *pairs[] = {"pulsar.client.authParamMap=token:y"};
    ck_assert_int_eq(pulsarc_connector_config_load_pairs(c, pairs, 1, err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_validate(c, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_contains(err, "Conflict config options pulsar.client.authParams and "
                            "pulsar.client.authParamMap were provided");
    pulsarc_connector_config_destroy(c);
    c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_set_service_url(c, "pulsar+ssl://a:6651", err,
                                                              sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.client.tlsCertificateFilePath", "/c",
                                                  err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_validate(c, err, sizeof err), PULSARC_ERR_BAD_CONFIG);
    ck_assert_contains(err, "must be set together");
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(client_conf_mapping) {
    pulsarc_connector_config_t *c = cfg_new();
    const char *pairs[] = {
        "pulsar.client.serviceUrl=pulsar://h:6650",
        "pulsar.producer.batchingMaxMessages=77",
        "pulsar.consumer.receiverQueueSize=55",
        "pulsar.client.initialBackoffIntervalNanos=250000000",
        "pulsar.producer.compressionType=lz4",
        "pulsar.client.authPluginClassName=token",
        "pulsar.client.authParamMap=token:abc",
        "pulsar.consumer.subscriptionName=sub",
        "pulsar.source.allowKeySharedOutOfOrderDelivery=true",
        "pulsar.admin.adminUrl=http://h:8080",
    };
    ck_assert_int_eq(pulsarc_connector_config_load_pairs(c, pairs, NELEM(pairs), err, sizeof err),
                     0);
    ck_assert_int_eq(pulsarc_connector_config_set_namespace(c, "acme/ns", err, sizeof err), 0);
    pulsarc_conf_t *conf = NULL;
    ck_assert_msg(!pulsarc_connector_config_to_client_conf(c, &conf, err, sizeof err), "%s", err);
    ck_assert_str_eq(core_get(conf, "serviceUrl"), "pulsar://h:6650");
    ck_assert_str_eq(core_get(conf, "webServiceUrl"), "http://h:8080");
    ck_assert_str_eq(core_get(conf, "batchingMaxMessages"), "77");
    ck_assert_str_eq(core_get(conf, "receiverQueueSize"), "55");
    ck_assert_str_eq(core_get(conf, "initialBackoffIntervalMs"), "250");
    ck_assert_str_eq(core_get(conf, "maxBackoffIntervalMs"), "60000");
    ck_assert_str_eq(core_get(conf, "compressionType"), "LZ4");
    ck_assert_str_eq(core_get(conf, "authPlugin"), "token");
    ck_assert_str_eq(core_get(conf, "authParams"), "token:abc");
    ck_assert_str_eq(core_get(conf, "subscriptionName"), "sub");
    ck_assert_str_eq(core_get(conf, "keySharedAllowOutOfOrderDelivery"), "true");
    ck_assert_str_eq(core_get(conf, "defaultTenant"), "acme");
    ck_assert_str_eq(core_get(conf, "defaultNamespace"), "ns");
    ck_assert_str_eq(core_get(conf, "tlsHostnameVerificationEnable"), "true");
    ck_assert_str_eq(core_get(conf, "subscriptionInitialPosition"), "Latest");
    pulsarc_conf_destroy(conf);
    pulsarc_connector_config_destroy(c);
}
END_TEST

/* The client looks topics up over HTTP as well: every scheme it takes reaches its serviceUrl. */
START_TEST(client_conf_any_service_url_scheme) {
    static const char *const urls[] = {"pulsar://h:6650", "pulsar+ssl://h:6651",
                                       "http://h1:8080,h2:8080", "https://h:8443"};
    for (size_t i = 0; i < NELEM(urls); i++) {
        pulsarc_connector_config_t *c = cfg_new();
        ck_assert_msg(!pulsarc_connector_config_set_service_url(c, urls[i], err, sizeof err),
                      "%s: %s", urls[i], err);
        pulsarc_conf_t *conf = NULL;
        ck_assert_msg(!pulsarc_connector_config_to_client_conf(c, &conf, err, sizeof err), "%s",
                      err);
        ck_assert_str_eq(core_get(conf, "serviceUrl"), urls[i]);
        pulsarc_conf_destroy(conf);
        pulsarc_connector_config_destroy(c);
    }
}
END_TEST

START_TEST(client_conf_two_keys_one_core_key) {
    /* the v4.0 name, set, beats the current name's default ... */
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_set_service_url(c, "pulsar://h", err, sizeof err), 0);
    const char *pairs[] = {"pulsar.consumer.subscriptionInitialPosition=Earliest"};
    ck_assert_int_eq(pulsarc_connector_config_load_pairs(c, pairs, 1, err, sizeof err), 0);
    pulsarc_conf_t *conf = NULL;
    ck_assert_int_eq(pulsarc_connector_config_to_client_conf(c, &conf, err, sizeof err), 0);
    ck_assert_str_eq(core_get(conf, "subscriptionInitialPosition"), "Earliest");
    pulsarc_conf_destroy(conf);
    /* ... and a stronger source of the other name beats it */
    char *argv[] = {"p", "-Dpulsar.source.initialCursor=Latest", NULL};
    int argc = 2;
    ck_assert_int_eq(pulsarc_connector_config_load_args(c, &argc, argv, 0, err, sizeof err), 0);
    const char *text = "pulsar.consumer.subscriptionInitialPosition=Earliest\n";
    ck_assert_int_eq(pulsarc_connector_config_load_properties(c, text, strlen(text), err,
                                                              sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_set(c, "pulsar.source.initialCursor", "earliest",
                                                  err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_to_client_conf(c, &conf, err, sizeof err), 0);
    ck_assert_str_eq(core_get(conf, "subscriptionInitialPosition"), "Earliest");
    pulsarc_conf_destroy(conf);
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(client_conf_errors) {
    pulsarc_connector_config_t *c = cfg_new();
    pulsarc_conf_t *conf = (pulsarc_conf_t *)1;
    ck_assert_int_eq(pulsarc_connector_config_to_client_conf(c, &conf, err, sizeof err),
                     PULSARC_ERR_BAD_CONFIG);
    ck_assert_ptr_null(conf);
    ck_assert_contains(err, "pulsar.client.serviceUrl is not provided");
    pulsarc_connector_config_destroy(c);
}
END_TEST

START_TEST(hostname_verification_setting) {
    pulsarc_connector_config_t *c = cfg_new();
    ck_assert_int_eq(pulsarc_connector_config_set_service_url(c, "pulsar+ssl://h:6651", err,
                                                              sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_set_hostname_verification(c, 0, err, sizeof err), 0);
    ck_assert_int_eq(pulsarc_connector_config_set_tls_trust_certs(c, "/ca.pem", err, sizeof err),
                     0);
    ck_assert_int_eq(pulsarc_connector_config_set_auth(c, "token", "token:t", err, sizeof err), 0);
    pulsarc_conf_t *conf = NULL;
    ck_assert_int_eq(pulsarc_connector_config_to_client_conf(c, &conf, err, sizeof err), 0);
    ck_assert_str_eq(core_get(conf, "tlsHostnameVerificationEnable"), "false");
    ck_assert_str_eq(core_get(conf, "tlsTrustCertsFilePath"), "/ca.pem");
    ck_assert_str_eq(core_get(conf, "authParams"), "token:t");
    pulsarc_conf_destroy(conf);
    pulsarc_connector_config_destroy(c);
}
END_TEST

/* ======================================================================== */
/* copies and routers */

static const char *route_first(void *opaque, const pulsarc_msg_t *msg,
                               const char *const *partitions, size_t n) {
    (void)opaque;
    (void)msg;
    return n ? partitions[0] : NULL;
}

START_TEST(dup_and_routers) {
    pulsarc_connector_config_t *c = cfg_new();
    int tag = 0;
    ck_assert_int_eq(pulsarc_connector_config_add_router(c, "first", route_first, &tag), 0);
    ck_assert_int_eq(pulsarc_connector_config_add_router(c, "first", route_first, NULL),
                     PULSARC_ERR_STATE);
    ck_assert_int_eq(pulsarc_connector_config_set_tenant(c, "acme", err, sizeof err), 0);
    pulsarc_connector_config_t *d = pulsarc_connector_config_dup(c);
    pulsarc_connector_config_destroy(c);
    ck_assert_str_eq(get(d, TENANT), "acme");
    ck_assert_int_eq(pulsarc_connector_config_origin(d, TENANT), PULSARC_CONNECTOR_ORIGIN_BUILDER);
    pulsarc_connector_router_cb cb = NULL;
    void *opaque = NULL;
    ck_assert_int_eq(pulsarc_connector_config_router(d, "first", &cb, &opaque), 0);
    ck_assert_ptr_eq(opaque, &tag);
    const char *parts[] = {"a", "b"};
    ck_assert_str_eq(cb(opaque, NULL, parts, 2), "a");
    ck_assert_int_eq(pulsarc_connector_config_router(d, "second", &cb, &opaque),
                     PULSARC_ERR_NOT_FOUND);
    pulsarc_connector_config_destroy(d);
    pulsarc_connector_config_destroy(NULL);
}
END_TEST

static Suite *connector_config_suite(void) {
    Suite *s = suite_create("connector_config");
    TCase *t = tcase_create("precedence");
    tcase_add_loop_test(t, precedence_pair, 0, 30);
    tcase_add_test(t, precedence_same_source_last_wins);
    tcase_add_test(t, precedence_builder_conflict);
    tcase_add_test(t, precedence_independent_of_key);
    tcase_add_test(t, origin_names);
    suite_add_tcase(s, t);
    t = tcase_create("keys");
    tcase_add_test(t, unknown_key_set);
    tcase_add_test(t, unknown_key_sources);
    tcase_add_test(t, every_prefix_accepted);
    tcase_add_loop_test(t, value_rejected, 0, (int)NELEM(bad_values));
    tcase_add_test(t, value_canonical);
    tcase_add_test(t, value_parser_shared);
    tcase_add_test(t, source_conf_uses_table);
    tcase_add_test(t, secret_never_echoed);
    tcase_add_test(t, table_is_consistent);
    tcase_add_test(t, every_table_consistent);
    suite_add_tcase(s, t);
    t = tcase_create("properties");
    tcase_add_test(t, props_separators);
    tcase_add_test(t, props_comments_and_blanks);
    tcase_add_test(t, props_continuations);
    tcase_add_test(t, props_line_ends);
    tcase_add_test(t, props_escapes);
    tcase_add_test(t, props_malformed_unicode);
    tcase_add_test(t, props_not_nul_terminated);
    tcase_add_test(t, props_file);
    suite_add_tcase(s, t);
    t = tcase_create("sources");
    tcase_add_test(t, env_every_variable);
    tcase_add_test(t, env_errors_and_empty);
    tcase_add_test(t, env_process_environment);
    tcase_add_test(t, args_every_option);
    tcase_add_test(t, args_errors);
    tcase_add_test(t, args_keep_unknown);
    tcase_add_test(t, args_properties_file);
    tcase_add_test(t, pairs_errors);
    suite_add_tcase(s, t);
    t = tcase_create("resolution");
    tcase_add_test(t, namespace_sets_tenant);
    tcase_add_test(t, resolve_topics);
    tcase_add_test(t, subscription_namespace);
    tcase_add_test(t, validate_rules);
    tcase_add_test(t, client_conf_mapping);
    tcase_add_test(t, client_conf_any_service_url_scheme);
    tcase_add_test(t, client_conf_two_keys_one_core_key);
    tcase_add_test(t, client_conf_errors);
    tcase_add_test(t, hostname_verification_setting);
    tcase_add_test(t, dup_and_routers);
    suite_add_tcase(s, t);
    return s;
}

PC_TEST_MAIN(connector_config_suite)
