/*
 * Design notes: the admin client, a thin layer over the broker's HTTP admin
 * API (/admin/v2, docs/PROTOCOL.md §13) using libcurl's easy interface.
 *
 *  - One handle = one CURL easy handle (reused, so the connection is kept
 *    alive) + one growing response buffer. Nothing is shared between
 *    handles, so there are no locks; a handle is used by one thread at a
 *    time. curl_global_init runs once, under pthread_once.
 *  - Every call goes through call(): it resets the easy handle, sets every
 *    option afresh (URL, method, body, headers, timeouts, TLS, redirects),
 *    performs, and maps the outcome: transport errors from the CURLcode,
 *    HTTP >= 300 from the status, with the broker's JSON "reason" in errstr.
 *    On success the NUL-terminated body is left in a->resp for the caller.
 *    With several hosts in webServiceUrl a host that refuses or does not
 *    resolve is skipped; the next call starts at the host that answered.
 *  - Paths are built by appending URL-encoded segments (curl_easy_escape)
 *    into a bounded buffer; topic names go through pc_topic_parse so every
 *    short/full form of the client works here too.
 *  - JSON lives in json.c (json-c); this file never looks inside a body.
 *  - A token goes out as "Authorization: Bearer …" together with
 *    "X-Pulsar-Auth-Method-Name: token": without the method name a broker
 *    that allows anonymous access quietly treats a bad or expired token as
 *    the anonymous role; with it, the token provider alone decides (401).
 *  - Redirects (307 to the owner broker) are followed up to
 *    maxLookupRedirects, only to http/https, and keep the Authorization
 *    header: the broker sends us to another broker of the same cluster.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "admin/admin_int.h"
#include "conf/props.h"
#include "core/err.h"
#include "core/topic.h"
#include "core/url.h"

#define ADM_PATH_MAX 8192
#define ADM_BODY_MAX ((size_t)64 << 20) /* a stats answer of a huge topic is well below */

struct pulsarc_admin_s {
    CURL *curl;
    pc_service_url_t url;
    int host;                       /* index into url.hosts of the host in use */
    char base[PC_HOST_MAX + 32];    /* "http://host:port" of that host */
    char *auth;                     /* "Authorization: Bearer …" or NULL */
    char tenant[PC_TOPIC_PART_MAX]; /* defaults for short topic names */
    char ns[PC_TOPIC_PART_MAX];
    long timeout_ms, connect_timeout_ms, max_redirs;
    char *ca_file, *cert_file, *key_file; /* NULL: not set */
    int insecure, verify_host;
    char *resp; /* last response body, NUL-terminated */
    size_t resp_len, resp_cap;
    int resp_too_big, resp_oom;
    char curl_err[CURL_ERROR_SIZE];
};

/* A request path under construction: "/admin/v2/…" plus "?query". */
typedef struct adm_path {
    CURL *curl;
    char s[ADM_PATH_MAX];
    size_t n;
    int bad; /* too long, or out of memory */
} adm_path_t;

/* ---- error mapping ---------------------------------------------------- */

pulsarc_err_t pc_admin_err_from_http(long status) {
    switch (status) {
    case 400: return PULSARC_ERR_INVALID_ARG;
    case 401: return PULSARC_ERR_BROKER_AUTHENTICATION;
    case 403: return PULSARC_ERR_BROKER_AUTHORIZATION;
    case 404: return PULSARC_ERR_NOT_FOUND;
    case 405: return PULSARC_ERR_UNSUPPORTED;
    case 408: case 504: return PULSARC_ERR_TIMEOUT;
    case 409: return PULSARC_ADMIN_ERR_CONFLICT;
    case 412: return PULSARC_ERR_BROKER_NOT_ALLOWED;
    case 429: return PULSARC_ERR_BROKER_TOO_MANY_REQUESTS;
    case 503: return PULSARC_ERR_BROKER_SERVICE_NOT_READY;
    default: return status >= 200 && status < 300 ? PULSARC_OK : PULSARC_ERR_BROKER_UNKNOWN;
    }
}

const char *pc_admin_http_phrase(long status) {
    static const struct { long code; const char *text; } t[] = {
        {301, "Moved Permanently"}, {302, "Found"}, {307, "Temporary Redirect"},
        {400, "Bad Request"}, {401, "Unauthorized"}, {403, "Forbidden"}, {404, "Not Found"},
        {405, "Method Not Allowed"}, {408, "Request Timeout"}, {409, "Conflict"},
        {412, "Precondition Failed"}, {415, "Unsupported Media Type"},
        {429, "Too Many Requests"}, {500, "Internal Server Error"}, {502, "Bad Gateway"},
        {503, "Service Unavailable"}, {504, "Gateway Timeout"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].code == status)
            return t[i].text;
    return "";
}

pulsarc_err_t pc_admin_err_from_curl(int code) {
    switch ((CURLcode)code) {
    case CURLE_OK: return PULSARC_OK;
    case CURLE_UNSUPPORTED_PROTOCOL: case CURLE_URL_MALFORMAT: return PULSARC_ERR_BAD_URL;
    case CURLE_COULDNT_RESOLVE_HOST: case CURLE_COULDNT_RESOLVE_PROXY: return PULSARC_ERR_RESOLVE;
    case CURLE_COULDNT_CONNECT: return PULSARC_ERR_CONNECT;
    case CURLE_OPERATION_TIMEDOUT: return PULSARC_ERR_TIMEOUT;
    case CURLE_OUT_OF_MEMORY: return PULSARC_ERR_NOMEM;
    case CURLE_TOO_MANY_REDIRECTS: return PULSARC_ERR_TOO_MANY_REDIRECTS;
    case CURLE_GOT_NOTHING: case CURLE_SEND_ERROR: case CURLE_RECV_ERROR:
        return PULSARC_ERR_DISCONNECTED;
    case CURLE_SSL_CONNECT_ERROR: case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM: case CURLE_SSL_CIPHER: case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND: case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_CRL_BADFILE: case CURLE_SSL_ISSUER_ERROR: case CURLE_USE_SSL_FAILED:
        return PULSARC_ERR_TLS;
    default: return PULSARC_ERR_IO;
    }
}

/* ---- the handle --------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

static void set_host(pulsarc_admin_t *a, int i) {
    const pc_hostport_t *h = &a->url.hosts[i];
    int v6 = strchr(h->host, ':') != NULL;
    a->host = i;
    snprintf(a->base, sizeof a->base, "%s://%s%s%s:%u", a->url.tls ? "https" : "http",
             v6 ? "[" : "", h->host, v6 ? "]" : "", (unsigned)h->port);
}

/* strdup of conf's value for key when the key exists and is non-empty. */
static char *conf_opt(const pulsarc_conf_t *conf, const char *key) {
    char buf[4096];
    size_t len = sizeof buf;
    if (!conf || pulsarc_conf_get(conf, key, buf, &len) != PULSARC_OK || !buf[0])
        return NULL;
    return strdup(buf);
}

static int conf_flag(const pulsarc_conf_t *conf, const char *key, int dflt) {
    char *v = conf_opt(conf, key);
    int on = v ? (!strcasecmp(v, "true") || !strcmp(v, "1")) : dflt;
    free(v);
    return on;
}

static void read_conf(pulsarc_admin_t *a, const pulsarc_conf_t *conf) {
    a->timeout_ms = (long)pc_conf_int(conf, PC_PROP_OPERATION_TIMEOUT_MS);
    a->connect_timeout_ms = (long)pc_conf_int(conf, PC_PROP_CONNECTION_TIMEOUT_MS);
    a->max_redirs = (long)pc_conf_int(conf, PC_PROP_MAX_LOOKUP_REDIRECTS);
    snprintf(a->tenant, sizeof a->tenant, "%s", pc_conf_str(conf, PC_PROP_DEFAULT_TENANT));
    snprintf(a->ns, sizeof a->ns, "%s", pc_conf_str(conf, PC_PROP_DEFAULT_NAMESPACE));
    /* TLS keys by name, so a build whose table lacks one simply leaves it unset */
    a->ca_file = conf_opt(conf, "tlsTrustCertsFilePath");
    a->cert_file = conf_opt(conf, "tlsCertificateFilePath");
    a->key_file = conf_opt(conf, "tlsKeyFilePath");
    a->insecure = conf_flag(conf, "tlsAllowInsecureConnection", 0);
    a->verify_host = conf_flag(conf, "tlsHostnameVerificationEnable", 1);
}

pulsarc_err_t pulsarc_admin_new(const pulsarc_conf_t *conf, pulsarc_admin_t **out, char *errstr,
                                size_t errlen) {
    if (!out)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "out is required");
    *out = NULL;
    const char *url = pc_conf_str(conf, PC_PROP_WEB_SERVICE_URL);
    if (!*url)
        url = getenv("PULSAR_ADMIN_URL");
    if (!url || !*url)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "webServiceUrl is not set (nor PULSAR_ADMIN_URL)");
    pulsarc_admin_t *a = calloc(1, sizeof *a);
    if (!a)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = pc_service_url_parse(url, &a->url, errstr, errlen);
    if (!err && !a->url.http)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_BAD_URL,
                        "webServiceUrl '%s': the admin URL must be http:// or https://", url);
    pthread_once(&curl_once, curl_init);
    if (!err && (curl_init_rc != CURLE_OK || !(a->curl = curl_easy_init())))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "libcurl initialisation failed");
    if (err) {
        pulsarc_admin_destroy(a);
        return err;
    }
    read_conf(a, conf);
    set_host(a, 0);
    *out = a;
    return PULSARC_OK;
}

/* Frees the Authorization header after wiping the token in it. */
static void free_auth(char *auth) {
    if (auth)
        explicit_bzero(auth, strlen(auth));
    free(auth);
}

void pulsarc_admin_destroy(pulsarc_admin_t *a) {
    if (!a)
        return;
    if (a->curl)
        curl_easy_cleanup(a->curl);
    free_auth(a->auth);
    free(a->ca_file);
    free(a->cert_file);
    free(a->key_file);
    free(a->resp);
    free(a);
}

pulsarc_err_t pulsarc_admin_set_token(pulsarc_admin_t *a, const char *token) {
    if (!a)
        return PULSARC_ERR_INVALID_ARG;
    if (token && strpbrk(token, "\r\n"))
        return PULSARC_ERR_INVALID_ARG; /* would split the header */
    char *h = NULL;
    if (token && *token && asprintf(&h, "Authorization: Bearer %s", token) < 0)
        return PULSARC_ERR_NOMEM;
    free_auth(a->auth);
    a->auth = h;
    return PULSARC_OK;
}

const char *pulsarc_admin_url(const pulsarc_admin_t *a) { return a ? a->base : NULL; }

/* ---- one request -------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t n, void *opaque) {
    pulsarc_admin_t *a = opaque;
    size_t len = size * n;
    if (len > ADM_BODY_MAX - a->resp_len) {
        a->resp_too_big = 1;
        return 0; /* makes curl fail with CURLE_WRITE_ERROR */
    }
    if (a->resp_len + len + 1 > a->resp_cap) {
        size_t cap = a->resp_cap ? a->resp_cap : 4096;
        while (cap < a->resp_len + len + 1)
            cap *= 2;
        char *p = realloc(a->resp, cap);
        if (!p) {
            a->resp_oom = 1;
            return 0;
        }
        a->resp = p;
        a->resp_cap = cap;
    }
    memcpy(a->resp + a->resp_len, data, len);
    a->resp_len += len;
    a->resp[a->resp_len] = '\0';
    return len;
}

static void set_tls(pulsarc_admin_t *a) {
    CURL *h = a->curl;
    struct stat st;
    if (a->ca_file) { /* only these CAs: clear libcurl's built-in bundle and directory */
        int dir = stat(a->ca_file, &st) == 0 && S_ISDIR(st.st_mode); /* openssl rehash form */
        curl_easy_setopt(h, CURLOPT_CAINFO, dir ? NULL : a->ca_file);
        curl_easy_setopt(h, CURLOPT_CAPATH, dir ? a->ca_file : NULL);
    }
    if (a->cert_file)
        curl_easy_setopt(h, CURLOPT_SSLCERT, a->cert_file);
    if (a->key_file)
        curl_easy_setopt(h, CURLOPT_SSLKEY, a->key_file);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, a->insecure ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, a->insecure || !a->verify_host ? 0L : 2L);
}

/* The request headers; NULL when out of memory. */
static struct curl_slist *headers(const pulsarc_admin_t *a, const char *body) {
    const char *h[4];
    size_t n = 0;
    h[n++] = "Accept: application/json";
    if (body)
        h[n++] = "Content-Type: application/json";
    if (a->auth) { /* naming the method: a bad token is a 401, not "anonymous" */
        h[n++] = a->auth;
        h[n++] = "X-Pulsar-Auth-Method-Name: token";
    }
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < n; i++) {
        struct curl_slist *next = curl_slist_append(list, h[i]);
        if (!next) {
            curl_slist_free_all(list);
            return NULL;
        }
        list = next;
    }
    return list;
}

/* Sets every option of one attempt; returns the header list to free (NULL: out of memory). */
static struct curl_slist *setup(pulsarc_admin_t *a, const char *method, const char *url,
                                const char *body) {
    CURL *h = a->curl;
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, a->curl_err);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, a->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, a->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, a->max_redirs);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_UNRESTRICTED_AUTH, a->auth ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "pulsarc/" PULSARC_VERSION_STR);
    set_tls(a);
    struct curl_slist *hdr = headers(a, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    if (strcmp(method, "GET") == 0)
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    else
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    return hdr;
}

/* One attempt against the current host; status is the HTTP code on CURLE_OK. */
static CURLcode attempt(pulsarc_admin_t *a, const char *method, const char *path,
                        const char *body, long *status, char *url, size_t urllen) {
    snprintf(url, urllen, "%s%s", a->base, path);
    a->resp_len = 0;
    a->resp_too_big = a->resp_oom = 0;
    a->curl_err[0] = '\0';
    if (a->resp)
        a->resp[0] = '\0';
    struct curl_slist *hdr = setup(a, method, url, body);
    CURLcode rc = hdr ? curl_easy_perform(a->curl) : CURLE_OUT_OF_MEMORY;
    curl_slist_free_all(hdr);
    *status = 0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, status);
    return rc;
}

static pulsarc_err_t http_error(pulsarc_admin_t *a, const char *method, const char *path,
                                long status, char *errstr, size_t errlen) {
    char reason[512];
    pc_admin_json_reason(a->resp, reason, sizeof reason);
    return pc_seterr(errstr, errlen, pc_admin_err_from_http(status), "%s %s: HTTP %ld %s%s%s",
                     method, path, status, pc_admin_http_phrase(status), reason[0] ? ": " : "",
                     reason);
}

/*
 * Runs method on the built path p with body (JSON text or NULL). On
 * success the response body is in a->resp ("" when empty).
 */
static pulsarc_err_t call(pulsarc_admin_t *a, const char *method, const adm_path_t *p,
                          const char *body, char *errstr, size_t errlen) {
    if (p->bad)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "request path longer than %d bytes", ADM_PATH_MAX - 1);
    const char *path = p->s;
    char url[ADM_PATH_MAX + sizeof a->base];
    long status = 0;
    CURLcode rc = CURLE_OK;
    for (int tries = 0; tries < a->url.nhosts; tries++) {
        rc = attempt(a, method, path, body, &status, url, sizeof url);
        if (rc != CURLE_COULDNT_CONNECT && rc != CURLE_COULDNT_RESOLVE_HOST)
            break;
        set_host(a, (a->host + 1) % a->url.nhosts);
    }
    if (a->resp_too_big || a->resp_oom)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "%s %s: %s", method, url,
                         a->resp_oom ? "out of memory for the response"
                                     : "response larger than the 64 MiB limit");
    if (rc != CURLE_OK)
        return pc_seterr(errstr, errlen, pc_admin_err_from_curl(rc), "%s %s: %s%s%s", method,
                         url, curl_easy_strerror(rc), a->curl_err[0] ? ": " : "", a->curl_err);
    if (status < 200 || status >= 300)
        return http_error(a, method, path, status, errstr, errlen);
    if (!a->resp && !(a->resp = calloc(1, 1)))
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    return PULSARC_OK;
}

/* ---- paths -------------------------------------------------------------- */

static void p_lit(adm_path_t *p, const char *text) {
    size_t len = strlen(text);
    if (p->bad || len >= sizeof p->s - p->n) {
        p->bad = 1;
        return;
    }
    memcpy(p->s + p->n, text, len + 1);
    p->n += len;
}

/* Appends "/" and seg, URL-encoded. */
static void p_seg(adm_path_t *p, const char *seg) {
    char *esc = curl_easy_escape(p->curl, seg, 0);
    p->bad |= esc == NULL;
    p_lit(p, "/");
    p_lit(p, esc ? esc : "");
    curl_free(esc);
}

/* "/admin/v2/{domain}/{tenant}/{ns}/{local}"; partition >= 0 picks that
 * partition of a base name. */
static pulsarc_err_t topic_path(pulsarc_admin_t *a, const char *topic, int partition,
                                adm_path_t *p, char *errstr, size_t errlen) {
    pc_topic_t t;
    pulsarc_err_t err = pc_topic_parse(topic, a->tenant, a->ns, &t, errstr, errlen);
    if (err)
        return err;
    p->curl = a->curl;
    p_lit(p, t.persistent ? "/admin/v2/persistent" : "/admin/v2/non-persistent");
    p_seg(p, t.tenant);
    p_seg(p, t.ns);
    if (partition >= 0 && t.partition < 0) {
        char local[PC_TOPIC_MAX + 32];
        snprintf(local, sizeof local, "%s-partition-%d", t.local, partition);
        p_seg(p, local);
    } else {
        p_seg(p, t.local);
    }
    return PULSARC_OK;
}

/* prefix + "/{tenant}/{ns}" from "tenant/ns". */
static pulsarc_err_t ns_path(pulsarc_admin_t *a, const char *prefix, const char *ns,
                             adm_path_t *p, char *errstr, size_t errlen) {
    const char *slash = ns ? strchr(ns, '/') : NULL;
    if (!slash || slash == ns || !slash[1] || strchr(slash + 1, '/') ||
        (size_t)(slash - ns) >= PC_TOPIC_PART_MAX)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "namespace '%s' is not of the form tenant/namespace", ns ? ns : "(null)");
    char tenant[PC_TOPIC_PART_MAX];
    memcpy(tenant, ns, (size_t)(slash - ns));
    tenant[slash - ns] = '\0';
    p->curl = a->curl;
    p_lit(p, prefix);
    p_seg(p, tenant);
    p_seg(p, slash + 1);
    return PULSARC_OK;
}

/* topic path + "/subscription/{sub}" + tail (literal, may be NULL). */
static pulsarc_err_t sub_path(pulsarc_admin_t *a, const char *topic, const char *sub,
                              const char *tail, adm_path_t *p, char *errstr, size_t errlen) {
    if (!sub || !*sub)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "subscription name is required");
    pulsarc_err_t err = topic_path(a, topic, -1, p, errstr, errlen);
    if (err)
        return err;
    p_lit(p, "/subscription");
    p_seg(p, sub);
    if (tail)
        p_lit(p, tail);
    return PULSARC_OK;
}

#define CHECK_ADMIN(a)                                                                     \
    do {                                                                                   \
        if (!(a))                                                                          \
            return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "admin is required"); \
    } while (0)

/* ---- topics ------------------------------------------------------------- */

pulsarc_err_t pulsarc_admin_create_topic(pulsarc_admin_t *a, const char *topic, char *errstr,
                                         size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = topic_path(a, topic, -1, &p, errstr, errlen);
    return err ? err : call(a, "PUT", &p, NULL, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_create_partitioned_topic(pulsarc_admin_t *a, const char *topic,
                                                     int partitions, char *errstr,
                                                     size_t errlen) {
    CHECK_ADMIN(a);
    if (partitions < 1)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "partitions must be at least 1, not %d", partitions);
    adm_path_t p = {0};
    pulsarc_err_t err = topic_path(a, topic, -1, &p, errstr, errlen);
    p_lit(&p, "/partitions");
    char body[16];
    snprintf(body, sizeof body, "%d", partitions); /* a bare JSON integer */
    return err ? err : call(a, "PUT", &p, body, errstr, errlen);
}

static pulsarc_err_t delete_topic(pulsarc_admin_t *a, const char *topic, int partitioned,
                                  int force, char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = topic_path(a, topic, -1, &p, errstr, errlen);
    if (partitioned)
        p_lit(&p, "/partitions");
    p_lit(&p, force ? "?force=true" : "?force=false");
    return err ? err : call(a, "DELETE", &p, NULL, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_delete_topic(pulsarc_admin_t *a, const char *topic, int force,
                                         char *errstr, size_t errlen) {
    return delete_topic(a, topic, 0, force, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_delete_partitioned_topic(pulsarc_admin_t *a, const char *topic,
                                                     int force, char *errstr, size_t errlen) {
    return delete_topic(a, topic, 1, force, errstr, errlen);
}

/* GET path, then the body as a string list. */
static pulsarc_err_t get_list(pulsarc_admin_t *a, const adm_path_t *path, char ***list,
                              char *errstr, size_t errlen) {
    if (!list)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "list is required");
    *list = NULL;
    pulsarc_err_t err = call(a, "GET", path, NULL, errstr, errlen);
    return err ? err : pc_admin_json_strings(a->resp, list, errstr, errlen);
}

static pulsarc_err_t list_topics(pulsarc_admin_t *a, const char *ns, const char *tail,
                                 char ***list, char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = ns_path(a, "/admin/v2/persistent", ns, &p, errstr, errlen);
    p_lit(&p, tail);
    return err ? err : get_list(a, &p, list, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_list_topics(pulsarc_admin_t *a, const char *ns, char ***list,
                                        char *errstr, size_t errlen) {
    return list_topics(a, ns, "", list, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_list_partitioned_topics(pulsarc_admin_t *a, const char *ns,
                                                    char ***list, char *errstr, size_t errlen) {
    return list_topics(a, ns, "/partitioned", list, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_partition_count(pulsarc_admin_t *a, const char *topic, int *count,
                                            char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    if (!count)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "count is required");
    adm_path_t p = {0};
    pulsarc_err_t err = topic_path(a, topic, -1, &p, errstr, errlen);
    p_lit(&p, "/partitions");
    if (!err)
        err = call(a, "GET", &p, NULL, errstr, errlen);
    return err ? err : pc_admin_json_partitions(a->resp, count, errstr, errlen);
}

/* ---- subscriptions ------------------------------------------------------ */

pulsarc_err_t pulsarc_admin_create_subscription(pulsarc_admin_t *a, const char *topic,
                                                const char *sub, const pulsarc_msgid_t *pos,
                                                char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = sub_path(a, topic, sub, NULL, &p, errstr, errlen);
    if (err)
        return err;
    pulsarc_msgid_t latest = pulsarc_msgid_latest();
    char *body = pc_admin_json_msgid(pos ? pos : &latest);
    if (!body)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    err = call(a, "PUT", &p, body, errstr, errlen);
    free(body);
    return err;
}

pulsarc_err_t pulsarc_admin_delete_subscription(pulsarc_admin_t *a, const char *topic,
                                                const char *sub, int force, char *errstr,
                                                size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = sub_path(a, topic, sub, force ? "?force=true" : "?force=false", &p,
                                 errstr, errlen);
    return err ? err : call(a, "DELETE", &p, NULL, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_list_subscriptions(pulsarc_admin_t *a, const char *topic,
                                               char ***list, char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = topic_path(a, topic, -1, &p, errstr, errlen);
    p_lit(&p, "/subscriptions");
    return err ? err : get_list(a, &p, list, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_reset_cursor_to_id(pulsarc_admin_t *a, const char *topic,
                                               const char *sub, const pulsarc_msgid_t *id,
                                               char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    if (!id || !sub || !*sub)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "sub and id are required");
    adm_path_t p = {0};
    pulsarc_err_t err = topic_path(a, topic, id->partition, &p, errstr, errlen);
    p_lit(&p, "/subscription");
    p_seg(&p, sub);
    p_lit(&p, "/resetcursor");
    pulsarc_msgid_t at = *id;
    at.batch_index = -1; /* the broker resets to an entry */
    char *body = err ? NULL : pc_admin_json_msgid(&at);
    if (!err && !body)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (!err)
        err = call(a, "POST", &p, body, errstr, errlen);
    free(body);
    return err;
}

pulsarc_err_t pulsarc_admin_reset_cursor_to_time(pulsarc_admin_t *a, const char *topic,
                                                 const char *sub, int64_t ms, char *errstr,
                                                 size_t errlen) {
    CHECK_ADMIN(a);
    if (ms < 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "time %lld is negative",
                         (long long)ms);
    char tail[48];
    snprintf(tail, sizeof tail, "/resetcursor/%lld", (long long)ms);
    adm_path_t p = {0};
    pulsarc_err_t err = sub_path(a, topic, sub, tail, &p, errstr, errlen);
    return err ? err : call(a, "POST", &p, NULL, errstr, errlen);
}

/* ---- stats -------------------------------------------------------------- */

pulsarc_err_t pulsarc_admin_topic_stats(pulsarc_admin_t *a, const char *topic,
                                        pulsarc_admin_topic_stats_t **stats, char *errstr,
                                        size_t errlen) {
    CHECK_ADMIN(a);
    if (!stats)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "stats is required");
    *stats = NULL;
    int parts = 0;
    pulsarc_err_t err = pulsarc_admin_partition_count(a, topic, &parts, errstr, errlen);
    adm_path_t p = {0};
    if (!err)
        err = topic_path(a, topic, -1, &p, errstr, errlen);
    p_lit(&p, parts > 0 ? "/partitioned-stats?perPartition=false" : "/stats");
    if (!err)
        err = call(a, "GET", &p, NULL, errstr, errlen);
    return err ? err : pc_admin_json_topic_stats(a->resp, stats, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_subscription_backlog(pulsarc_admin_t *a, const char *topic,
                                                 const char *sub, int64_t *backlog,
                                                 char *errstr, size_t errlen) {
    if (!sub || !backlog)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "sub and backlog are required");
    pulsarc_admin_topic_stats_t *st = NULL;
    pulsarc_err_t err = pulsarc_admin_topic_stats(a, topic, &st, errstr, errlen);
    if (err)
        return err;
    err = pc_seterr(errstr, errlen, PULSARC_ERR_NOT_FOUND, "topic %s has no subscription '%s'",
                    topic, sub);
    for (size_t i = 0; i < st->nsubs; i++) {
        if (strcmp(st->subs[i].name, sub) == 0) {
            *backlog = st->subs[i].msg_backlog;
            err = PULSARC_OK;
            break;
        }
    }
    pulsarc_admin_topic_stats_free(st);
    return err;
}

/* ---- transactions ------------------------------------------------------- */

/* The topic's transaction buffer keeps the transactions aborted on it and
 * those still open; one that committed, or never wrote here, is neither. */
pulsarc_err_t pulsarc_admin_txn_in_buffer(pulsarc_admin_t *a, const char *topic, uint64_t most,
                                          uint64_t least, int *aborted, int *ongoing,
                                          char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    if (!aborted || !ongoing)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "aborted and ongoing are required");
    pc_topic_t t;
    pulsarc_err_t err = pc_topic_parse(topic, a->tenant, a->ns, &t, errstr, errlen);
    if (err)
        return err;
    if (!t.persistent)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "%s: transactions exist on persistent topics only", topic);
    adm_path_t p = {0};
    char ids[48];
    p.curl = a->curl;
    p_lit(&p, "/admin/v3/transactions/transactionInBufferStats");
    p_seg(&p, t.tenant);
    p_seg(&p, t.ns);
    p_seg(&p, t.local);
    snprintf(ids, sizeof ids, "/%llu/%llu", (unsigned long long)most, (unsigned long long)least);
    p_lit(&p, ids);
    err = call(a, "GET", &p, NULL, errstr, errlen);
    return err ? err : pc_admin_json_txn_in_buffer(a->resp, aborted, ongoing, errstr, errlen);
}

/* ---- tenants and namespaces -------------------------------------------- */

static pulsarc_err_t tenant_path(pulsarc_admin_t *a, const char *tenant, adm_path_t *p,
                                 char *errstr, size_t errlen) {
    if (!tenant || !*tenant || strchr(tenant, '/'))
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "bad tenant name '%s'",
                         tenant ? tenant : "(null)");
    p->curl = a->curl;
    p_lit(p, "/admin/v2/tenants");
    p_seg(p, tenant);
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_admin_create_tenant(pulsarc_admin_t *a, const char *tenant,
                                          const char *cluster, char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = tenant_path(a, tenant, &p, errstr, errlen);
    const char *one[] = {cluster, NULL};
    char **all = NULL;
    adm_path_t clusters = {.curl = a->curl};
    p_lit(&clusters, "/admin/v2/clusters");
    if (!err && !cluster)
        err = get_list(a, &clusters, &all, errstr, errlen);
    char *body = err ? NULL : pc_admin_json_tenant_body(cluster ? one : (const char *const *)all);
    if (!err && !body)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    if (!err)
        err = call(a, "PUT", &p, body, errstr, errlen);
    free(body);
    pulsarc_admin_list_free(all);
    return err;
}

pulsarc_err_t pulsarc_admin_delete_tenant(pulsarc_admin_t *a, const char *tenant, char *errstr,
                                          size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = tenant_path(a, tenant, &p, errstr, errlen);
    return err ? err : call(a, "DELETE", &p, NULL, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_create_namespace(pulsarc_admin_t *a, const char *ns, char *errstr,
                                             size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = ns_path(a, "/admin/v2/namespaces", ns, &p, errstr, errlen);
    return err ? err : call(a, "PUT", &p, NULL, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_delete_namespace(pulsarc_admin_t *a, const char *ns, int force,
                                             char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = ns_path(a, "/admin/v2/namespaces", ns, &p, errstr, errlen);
    p_lit(&p, force ? "?force=true" : "?force=false");
    return err ? err : call(a, "DELETE", &p, NULL, errstr, errlen);
}

/* GET or POST /admin/v2/namespaces/{t}/{ns}/{policy}; body NULL: GET. */
static pulsarc_err_t ns_policy(pulsarc_admin_t *a, const char *ns, const char *policy,
                               const char *body, char *errstr, size_t errlen) {
    CHECK_ADMIN(a);
    adm_path_t p = {0};
    pulsarc_err_t err = ns_path(a, "/admin/v2/namespaces", ns, &p, errstr, errlen);
    p_lit(&p, policy);
    return err ? err : call(a, body ? "POST" : "GET", &p, body, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_namespace_set_deduplication(pulsarc_admin_t *a, const char *ns,
                                                        int enabled, char *errstr,
                                                        size_t errlen) {
    return ns_policy(a, ns, "/deduplication", enabled ? "true" : "false", errstr, errlen);
}

pulsarc_err_t pulsarc_admin_namespace_get_deduplication(pulsarc_admin_t *a, const char *ns,
                                                        int *enabled, char *errstr,
                                                        size_t errlen) {
    if (!enabled)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG, "enabled is required");
    pulsarc_err_t err = ns_policy(a, ns, "/deduplication", NULL, errstr, errlen);
    return err ? err : pc_admin_json_bool(a->resp, enabled, errstr, errlen);
}

/* POST a malloc'd body (NULL: out of memory) to a policy and free it. */
static pulsarc_err_t ns_policy_set(pulsarc_admin_t *a, const char *ns, const char *policy,
                                   char *body, char *errstr, size_t errlen) {
    pulsarc_err_t err = body ? ns_policy(a, ns, policy, body, errstr, errlen)
                             : pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    free(body);
    return err;
}

pulsarc_err_t pulsarc_admin_namespace_set_retention(pulsarc_admin_t *a, const char *ns,
                                                    int64_t minutes, int64_t size_mb,
                                                    char *errstr, size_t errlen) {
    return ns_policy_set(a, ns, "/retention", pc_admin_json_retention_body(minutes, size_mb),
                         errstr, errlen);
}

pulsarc_err_t pulsarc_admin_namespace_get_retention(pulsarc_admin_t *a, const char *ns,
                                                    int64_t *minutes, int64_t *size_mb,
                                                    char *errstr, size_t errlen) {
    if (!minutes || !size_mb)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "minutes and size_mb are required");
    pulsarc_err_t err = ns_policy(a, ns, "/retention", NULL, errstr, errlen);
    return err ? err : pc_admin_json_retention(a->resp, minutes, size_mb, errstr, errlen);
}

pulsarc_err_t pulsarc_admin_namespace_set_delayed_delivery(pulsarc_admin_t *a, const char *ns,
                                                           int active, int64_t tick_ms,
                                                           char *errstr, size_t errlen) {
    return ns_policy_set(a, ns, "/delayedDelivery", pc_admin_json_delayed_body(active, tick_ms),
                         errstr, errlen);
}

pulsarc_err_t pulsarc_admin_namespace_get_delayed_delivery(pulsarc_admin_t *a, const char *ns,
                                                           int *active, int64_t *tick_ms,
                                                           char *errstr, size_t errlen) {
    if (!active || !tick_ms)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "active and tick_ms are required");
    pulsarc_err_t err = ns_policy(a, ns, "/delayedDelivery", NULL, errstr, errlen);
    return err ? err : pc_admin_json_delayed_delivery(a->resp, active, tick_ms, errstr, errlen);
}
