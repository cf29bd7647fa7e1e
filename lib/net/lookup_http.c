/*
 * Design notes: lookups for an http:// or https:// service URL, answered by
 * the brokers' REST API instead of the binary protocol:
 *  - where a topic lives: GET /lookup/v2/topic/{domain}/{tenant}/{ns}/{local};
 *    a broker that does not own the topic answers 307 to one that does,
 *    followed up to maxLookupRedirects. The answer's brokerUrl (http) or
 *    brokerUrlTls (https) is where the binary connection then goes, exactly
 *    as for a binary LOOKUP answer;
 *  - partition count: GET /admin/v2/{domain}/{tenant}/{ns}/{local}/partitions
 *    ?checkAllowAutoCreation=true (a topic auto-creation would make counts as
 *    it would be made, as over the binary protocol, not as 404);
 *  - topics of a namespace: GET /admin/v2/namespaces/{tenant}/{ns}/topics?mode=PERSISTENT.
 * libcurl's easy interface blocks, so each request is a job on its own
 * detached thread, like name resolution (resolve.c); the result goes back
 * with pc_loop_post_held(), whose hold keeps the loop from exiting before
 * it arrives, so each callback runs exactly once, on the loop thread. The
 * job owns copies of everything it reads; the thread touches nothing else.
 * A service URL of several hosts: the job starts at the next one
 * (round-robin) and, when one cannot be reached (refused, unresolvable,
 * connect timeout, TLS handshake), tries the others in turn on its thread.
 * For https the client's TLS settings apply (trust file, insecure, host-name
 * check, client certificate). Credentials are the client's: a token goes out
 * as "Authorization: Bearer" with "X-Pulsar-Auth-Method-Name: token" (so a
 * broker that allows anonymous access still checks it), fetched on the loop
 * thread, where the providers run, and wiped with the job; TLS
 * authentication presents the provider's certificate. Bodies are bounded
 * (HTTP_BODY_MAX); JSON is read with json-c, the admin client's parser.
 */
#include "net/lookup_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/props.h"
#include "core/err.h"
#include "core/topic.h"
#include "net/auth_plugin.h"

#if PULSARC_WITH_CURL
#include <curl/curl.h>
#include <json-c/json.h>
#include <pthread.h>

#define HTTP_BODY_MAX ((size_t)16 << 20) /* a namespace's topic list stays far below */

typedef enum { JOB_TOPIC, JOB_PARTITIONS, JOB_NS_TOPICS } job_kind_t;

typedef struct http_job {
    pc_loop_t *loop;
    job_kind_t kind;
    /* request (copied: the thread reads only these) */
    char base[PC_HOST_MAX + 32]; /* scheme://host:port being asked */
    char bases[PC_URL_MAX_HOSTS][PC_HOST_MAX + 32]; /* every host, from the one to ask first */
    int nbases;
    int tls;
    pc_topic_t topic;            /* JOB_TOPIC, JOB_PARTITIONS */
    char ns[2 * PC_TOPIC_PART_MAX + 2];
    long timeout_ms, max_redirs;
    char *ca_file, *cert_file, *key_file;
    int insecure, verify_host;
    char *auth_header; /* "Authorization: Bearer ..." or NULL; wiped when freed */
    /* response */
    char *body;
    size_t body_len, body_cap;
    int body_too_big;
    pulsarc_err_t err;
    char msg[256];
    pc_broker_addr_t addr;
    int partitions;
    char **topics;
    size_t ntopics;
    /* caller */
    pc_lookup_cb cb;
    pc_partitions_cb pcb;
    pc_topics_cb tcb;
    void *arg;
} http_job_t;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

static char *dup_or_null(const char *s) { return s && *s ? strdup(s) : NULL; }

static void job_free(http_job_t *j) {
    for (size_t i = 0; i < j->ntopics; i++)
        free(j->topics[i]);
    free(j->topics);
    free(j->body);
    free(j->ca_file);
    free(j->cert_file);
    free(j->key_file);
    if (j->auth_header)
        pc_auth_wipe((uint8_t *)j->auth_header, strlen(j->auth_header));
    free(j);
}

static void fail(http_job_t *j, pulsarc_err_t err, const char *fmt, const char *detail) {
    j->err = err;
    snprintf(j->msg, sizeof j->msg, fmt, detail);
}

/* ---- loop thread: hand the result to the caller ---- */

static void deliver(void *arg) {
    http_job_t *j = arg;
    const char *msg = j->err ? j->msg : NULL;
    switch (j->kind) {
    case JOB_TOPIC:
        j->cb(j->arg, j->err, msg, j->err ? NULL : &j->addr);
        break;
    case JOB_PARTITIONS:
        j->pcb(j->arg, j->err, msg, j->err ? 0 : j->partitions);
        break;
    case JOB_NS_TOPICS:
        j->tcb(j->arg, j->err, msg, j->err ? NULL : j->topics, j->err ? 0 : j->ntopics);
        break;
    }
    pc_loop_unref(j->loop);
    job_free(j);
}

/* ---- the job's thread ---- */

static size_t on_body(void *p, size_t sz, size_t n, void *u) {
    http_job_t *j = u;
    size_t len = sz * n;
    if (j->body_len + len > HTTP_BODY_MAX) {
        j->body_too_big = 1;
        return 0;
    }
    if (j->body_len + len + 1 > j->body_cap) { /* doubling: few copies for a long answer */
        size_t cap = j->body_cap ? j->body_cap : 4096;
        while (cap < j->body_len + len + 1)
            cap *= 2;
        char *b = realloc(j->body, cap);
        if (!b)
            return 0;
        j->body = b;
        j->body_cap = cap;
    }
    memcpy(j->body + j->body_len, p, len);
    j->body_len += len;
    j->body[j->body_len] = '\0';
    return len;
}

/* Appends the URL-escaped segments "/a/b/..." to path; 0 on success. */
static int append_escaped(CURL *h, char *path, size_t cap, const char *seg) {
    char *e = curl_easy_escape(h, seg, 0);
    if (!e)
        return -1;
    size_t used = strlen(path);
    int n = snprintf(path + used, cap - used, "/%s", e);
    curl_free(e);
    return n < 0 || (size_t)n >= cap - used ? -1 : 0;
}

static int build_url(CURL *h, http_job_t *j, char *url, size_t cap) {
    const pc_topic_t *t = &j->topic;
    const char *domain = t->persistent ? "persistent" : "non-persistent";
    switch (j->kind) {
    case JOB_TOPIC:
        snprintf(url, cap, "%s/lookup/v2/topic/%s", j->base, domain);
        return append_escaped(h, url, cap, t->tenant) || append_escaped(h, url, cap, t->ns) ||
               append_escaped(h, url, cap, t->local);
    case JOB_PARTITIONS:
        snprintf(url, cap, "%s/admin/v2/%s", j->base, domain);
        if (append_escaped(h, url, cap, t->tenant) || append_escaped(h, url, cap, t->ns) ||
            append_escaped(h, url, cap, t->local))
            return -1;
        break;
    case JOB_NS_TOPICS:
        snprintf(url, cap, "%s/admin/v2/namespaces/%s/topics?mode=PERSISTENT", j->base, j->ns);
        return strlen(url) + 1 >= cap ? -1 : 0;
    }
    size_t used = strlen(url);
    /* As the binary PARTITIONED_METADATA: a topic that auto-creation would
     * make answers 0 (or its new partition count) instead of 404. */
    return snprintf(url + used, cap - used, "/partitions?checkAllowAutoCreation=true") >= (int)(cap - used)
               ? -1
               : 0;
}

static void set_options(CURL *h, http_job_t *j, const char *url, struct curl_slist *hdr) {
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, j);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, j->timeout_ms);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, j->max_redirs);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_USERAGENT, "pulsarc/" PULSARC_VERSION_STR);
    if (j->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, j->ca_file);
    if (j->cert_file && j->key_file) {
        curl_easy_setopt(h, CURLOPT_SSLCERT, j->cert_file);
        curl_easy_setopt(h, CURLOPT_SSLKEY, j->key_file);
    }
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, j->insecure ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, j->insecure || !j->verify_host ? 0L : 2L);
    if (hdr) {
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        /* redirects stay inside the cluster: the owner needs the token too */
        curl_easy_setopt(h, CURLOPT_UNRESTRICTED_AUTH, 1L);
    }
}

static pulsarc_err_t from_curl(CURLcode rc) {
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
        return PULSARC_ERR_RESOLVE;
    case CURLE_COULDNT_CONNECT:
        return PULSARC_ERR_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return PULSARC_ERR_TIMEOUT;
    case CURLE_TOO_MANY_REDIRECTS:
        return PULSARC_ERR_TOO_MANY_REDIRECTS;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
        return PULSARC_ERR_TLS;
    default:
        return PULSARC_ERR_IO;
    }
}

static pulsarc_err_t from_status(long code) {
    if (code == 401)
        return PULSARC_ERR_BROKER_AUTHENTICATION;
    if (code == 403)
        return PULSARC_ERR_BROKER_AUTHORIZATION;
    if (code == 404)
        return PULSARC_ERR_BROKER_TOPIC_NOT_FOUND;
    if (code == 429)
        return PULSARC_ERR_BROKER_TOO_MANY_REQUESTS;
    if (code == 503)
        return PULSARC_ERR_BROKER_SERVICE_NOT_READY;
    return PULSARC_ERR_BROKER_UNKNOWN;
}

/* The broker's URL for the binary connection, from the lookup answer. */
static void parse_topic(http_job_t *j, json_object *root) {
    json_object *v = NULL;
    const char *key = j->tls ? "brokerUrlTls" : "brokerUrl";
    pc_service_url_t u;
    char why[200];
    if (!json_object_object_get_ex(root, key, &v) || !json_object_is_type(v, json_type_string) ||
        pc_service_url_parse(json_object_get_string(v), &u, why, sizeof why) || u.http) {
        fail(j, PULSARC_ERR_PROTOCOL, "HTTP lookup answer without a usable %s", key);
        return;
    }
    snprintf(j->addr.host, sizeof j->addr.host, "%s", u.hosts[0].host);
    j->addr.port = u.hosts[0].port;
}

static void parse_partitions(http_job_t *j, json_object *root) {
    json_object *v = NULL;
    if (!json_object_object_get_ex(root, "partitions", &v) || !json_object_is_type(v, json_type_int) ||
        json_object_get_int(v) < 0) {
        fail(j, PULSARC_ERR_PROTOCOL, "%s", "partition metadata answer without \"partitions\"");
        return;
    }
    j->partitions = json_object_get_int(v);
}

static void parse_topics(http_job_t *j, json_object *root) {
    if (!json_object_is_type(root, json_type_array)) {
        fail(j, PULSARC_ERR_PROTOCOL, "%s", "namespace topics answer is not a JSON array");
        return;
    }
    size_t n = json_object_array_length(root);
    j->topics = calloc(n ? n : 1, sizeof *j->topics);
    if (!j->topics) {
        fail(j, PULSARC_ERR_NOMEM, "%s", "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(root, i);
        if (!json_object_is_type(e, json_type_string)) {
            fail(j, PULSARC_ERR_PROTOCOL, "%s", "namespace topics answer holds a non-string");
            return;
        }
        if (!(j->topics[j->ntopics] = strdup(json_object_get_string(e)))) {
            fail(j, PULSARC_ERR_NOMEM, "%s", "out of memory");
            return;
        }
        j->ntopics++;
    }
}

/* "HTTP lookup answered HTTP 412: <the broker's reason>" (the JSON body's
 * "reason", as the brokers' REST API explains a refusal), cut to fit. */
static void fail_status(http_job_t *j, long code) {
    json_object *root = j->body ? json_tokener_parse(j->body) : NULL, *reason = NULL;
    const char *why = root && json_object_object_get_ex(root, "reason", &reason) ? json_object_get_string(reason) : NULL;
    j->err = from_status(code);
    snprintf(j->msg, sizeof j->msg, "HTTP lookup answered HTTP %ld%s%.200s", code, why ? ": " : "", why ? why : "");
    json_object_put(root);
}

/* Whether curl's failure means the host could not be reached at all (so another may answer). */
static int unreachable(CURLcode rc) {
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_OPERATION_TIMEDOUT ||
           rc == CURLE_SSL_CONNECT_ERROR;
}

static CURLcode run_request_at(http_job_t *j);

static void run_request(http_job_t *j) {
    if (curl_init_rc != CURLE_OK) {
        fail(j, PULSARC_ERR_IO, "libcurl initialisation failed: %s", curl_easy_strerror(curl_init_rc));
        return;
    }
    CURLcode rc = CURLE_OK;
    for (int i = 0; i < j->nbases; i++) {
        memcpy(j->base, j->bases[i], sizeof j->base);
        j->err = PULSARC_OK;
        j->body_len = 0;
        j->body_too_big = 0;
        if (j->body)
            j->body[0] = '\0';
        rc = run_request_at(j);
        if (!unreachable(rc))
            break;
    }
    if (j->err && j->nbases > 1 && unreachable(rc)) {
        char last[sizeof j->msg];
        memcpy(last, j->msg, sizeof last);
        snprintf(j->msg, sizeof j->msg, "none of the %d hosts of the service URL could be reached; the last, %.60s: %s",
                 j->nbases, j->base, last);
    }
}

/* One request to j->base; the curl result (CURLE_OK for an answer, good or bad). */
static CURLcode run_request_at(http_job_t *j) {
    CURL *h = curl_easy_init();
    char url[4 * PC_TOPIC_MAX];
    if (!h || build_url(h, j, url, sizeof url)) {
        fail(j, h ? PULSARC_ERR_BAD_TOPIC : PULSARC_ERR_NOMEM, "%s",
             h ? "topic name too long for an HTTP lookup" : "out of memory");
        if (h)
            curl_easy_cleanup(h);
        return CURLE_OK;
    }
    struct curl_slist *hdr = NULL;
    if (j->auth_header) {
        struct curl_slist *h1 = curl_slist_append(NULL, j->auth_header);
        hdr = h1 ? curl_slist_append(h1, "X-Pulsar-Auth-Method-Name: token") : NULL;
        if (!hdr) {
            curl_slist_free_all(h1);
            curl_easy_cleanup(h);
            fail(j, PULSARC_ERR_NOMEM, "%s", "out of memory");
            return CURLE_OK;
        }
    }
    set_options(h, j, url, hdr);
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdr);
    if (j->body_too_big) {
        fail(j, PULSARC_ERR_PROTOCOL, "HTTP lookup answer above %s", "16 MiB");
        return CURLE_OK;
    }
    if (rc != CURLE_OK) {
        fail(j, from_curl(rc), "HTTP lookup failed: %s", curl_easy_strerror(rc));
        return rc;
    }
    if (code != 200) {
        fail_status(j, code);
        return CURLE_OK;
    }
    json_object *root = json_tokener_parse(j->body ? j->body : "");
    if (!root) {
        fail(j, PULSARC_ERR_PROTOCOL, "%s", "HTTP lookup answer is not JSON");
        return CURLE_OK;
    }
    if (j->kind == JOB_TOPIC)
        parse_topic(j, root);
    else if (j->kind == JOB_PARTITIONS)
        parse_partitions(j, root);
    else
        parse_topics(j, root);
    json_object_put(root);
    return CURLE_OK;
}

static void *job_main(void *arg) {
    http_job_t *j = arg;
    run_request(j);
    pc_loop_post_held(j->loop, deliver, j);
    return NULL;
}

/* ---- loop thread: start a job ---- */

/* The client's credentials for this request: a bearer token, or the TLS
 * provider's certificate (which takes the place of tlsCertificateFilePath). */
static void take_credentials(http_job_t *j, pc_auth_t *a) {
    if (a->tls_cert && a->tls_key) {
        free(j->cert_file);
        free(j->key_file);
        j->cert_file = strdup(a->tls_cert);
        j->key_file = strdup(a->tls_key);
    }
    if (strcmp(a->method, "token") != 0)
        return;
    uint8_t *data = NULL;
    size_t len = 0;
    pulsarc_err_t e = a->credentials(a, &data, &len, j->msg, sizeof j->msg);
    if (e) {
        j->err = e;
        return;
    }
    static const char prefix[] = "Authorization: Bearer ";
    j->auth_header = malloc(sizeof prefix + len);
    if (j->auth_header) {
        memcpy(j->auth_header, prefix, sizeof prefix - 1);
        memcpy(j->auth_header + sizeof prefix - 1, data, len);
        j->auth_header[sizeof prefix - 1 + len] = '\0';
    } else {
        fail(j, PULSARC_ERR_NOMEM, "%s", "out of memory");
    }
    pc_auth_wipe(data, len);
}

static http_job_t *job_new(pc_lookup_svc_t *s, job_kind_t kind, const char *name, void *arg) {
    http_job_t *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->kind = kind;
    j->arg = arg;
    j->loop = s->loop;
    const char *scheme = s->url.tls ? "https" : "http";
    for (int i = 0; i < s->url.nhosts; i++) {
        const pc_hostport_t *hp = pc_lookup_service_host(s);
        if (strchr(hp->host, ':'))
            snprintf(j->bases[i], sizeof j->bases[i], "%s://[%s]:%u", scheme, hp->host, hp->port);
        else
            snprintf(j->bases[i], sizeof j->bases[i], "%s://%s:%u", scheme, hp->host, hp->port);
    }
    /* The next request starts one host further on: round-robin as before. */
    s->next_host -= (unsigned)s->url.nhosts - 1;
    j->nbases = s->url.nhosts;
    memcpy(j->base, j->bases[0], sizeof j->base);
    j->tls = s->url.tls;
    j->timeout_ms = s->op_timeout_ms > 0 ? s->op_timeout_ms : 30000;
    j->max_redirs = s->max_redirects;
    const pulsarc_conf_t *c = s->conf;
    j->ca_file = dup_or_null(pc_conf_str(c, PC_PROP_TLS_TRUST_CERTS_FILE_PATH));
    j->cert_file = dup_or_null(pc_conf_str(c, PC_PROP_TLS_CERT_FILE));
    j->key_file = dup_or_null(pc_conf_str(c, PC_PROP_TLS_KEY_FILE));
    j->insecure = pc_conf_int(c, PC_PROP_TLS_ALLOW_INSECURE) != 0;
    j->verify_host = pc_conf_int(c, PC_PROP_TLS_HOSTNAME_VERIFICATION) != 0;
    if (s->auth)
        take_credentials(j, s->auth);
    if (!j->err && kind == JOB_NS_TOPICS) {
        snprintf(j->ns, sizeof j->ns, "%s", name);
    } else if (!j->err && pc_topic_parse(name, NULL, NULL, &j->topic, j->msg, sizeof j->msg)) {
        j->err = PULSARC_ERR_BAD_TOPIC;
    }
    return j;
}

static void job_start(http_job_t *j) {
    pthread_once(&curl_once, curl_init);
    pc_loop_ref(j->loop);
    pc_loop_hold(j->loop);
    if (j->err) { /* nothing to ask: answer through the loop all the same */
        pc_loop_post_held(j->loop, deliver, j);
        return;
    }
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, job_main, j)) {
        fail(j, PULSARC_ERR_NOMEM, "%s", "could not start an HTTP lookup thread");
        pc_loop_post_held(j->loop, deliver, j);
    }
    pthread_attr_destroy(&attr);
}

void pc_lookup_http_topic(pc_lookup_svc_t *s, const char *topic, pc_lookup_cb cb, void *arg) {
    http_job_t *j = job_new(s, JOB_TOPIC, topic, arg);
    if (!j) {
        cb(arg, PULSARC_ERR_NOMEM, "out of memory", NULL);
        return;
    }
    j->cb = cb;
    job_start(j);
}

void pc_lookup_http_partitions(pc_lookup_svc_t *s, const char *topic, pc_partitions_cb cb, void *arg) {
    http_job_t *j = job_new(s, JOB_PARTITIONS, topic, arg);
    if (!j) {
        cb(arg, PULSARC_ERR_NOMEM, "out of memory", 0);
        return;
    }
    j->pcb = cb;
    job_start(j);
}

void pc_lookup_http_namespace_topics(pc_lookup_svc_t *s, const char *ns, pc_topics_cb cb, void *arg) {
    http_job_t *j = job_new(s, JOB_NS_TOPICS, ns, arg);
    if (!j) {
        cb(arg, PULSARC_ERR_NOMEM, "out of memory", NULL, 0);
        return;
    }
    j->tcb = cb;
    job_start(j);
}

#else /* !PULSARC_WITH_CURL: the client refuses http:// service URLs at creation */

void pc_lookup_http_topic(pc_lookup_svc_t *s, const char *topic, pc_lookup_cb cb, void *arg) {
    (void)s;
    (void)topic;
    cb(arg, PULSARC_ERR_UNSUPPORTED, "HTTP lookup needs libcurl (built with WITH_CURL=0)", NULL);
}

void pc_lookup_http_partitions(pc_lookup_svc_t *s, const char *topic, pc_partitions_cb cb, void *arg) {
    (void)s;
    (void)topic;
    cb(arg, PULSARC_ERR_UNSUPPORTED, "HTTP lookup needs libcurl (built with WITH_CURL=0)", 0);
}

void pc_lookup_http_namespace_topics(pc_lookup_svc_t *s, const char *ns, pc_topics_cb cb, void *arg) {
    (void)s;
    (void)ns;
    cb(arg, PULSARC_ERR_UNSUPPORTED, "HTTP lookup needs libcurl (built with WITH_CURL=0)", NULL, 0);
}
#endif
