/*
 * Design notes: JSON for the admin client, read and written with json-c
 * (Debian libjson-c-dev), never by hand.
 *
 * Why json-c (0.16 in Debian 12, libjson-c-dev, pkg-config "json-c", MIT):
 * it is in Debian main, so covered by Debian's security support, and core
 * packages depend on it (libcryptsetup, bind9), so it is kept up; upstream
 * still releases (0.17, 0.18). For this code it keeps JSON integers as
 * int64 (ledger and entry ids, INT64_MAX for "latest", byte counters) with
 * no trip through double; its tokener takes a length and reports the error
 * kind and offset; its strict mode rejects trailing garbage. Jansson would
 * also do (int64 as well); cJSON holds numbers as double (ids above 2^53
 * lose digits); yajl is a streaming parser with no upstream release since
 * 2014.
 *
 * Every function here is pure over its arguments: no I/O, no globals, safe
 * from any thread. Readers take the NUL-terminated response text; the NUL
 * is fed to the tokener so that top-level scalars ("true", "12") end.
 * Missing numeric fields read as 0; a field of the wrong type is MALFORMED.
 *
 * Bounds on a response (docs/PROTOCOL_BOUNDS.md), so a hostile or broken
 * server costs bounded memory and stack:
 *   body size      <= 64 MiB (admin.c stops reading past it)
 *   nesting        <= JSON_MAX_DEPTH (32) arrays/objects; Pulsar's deepest
 *                  answer (topic stats: subscription > consumers > consumer
 *                  > metadata) is about 6. json-c's tokener keeps its own
 *                  stack, and frees by recursion no deeper than this.
 *   values         <= JSON_MAX_VALUES (10^6), counted by a scan before
 *                  json-c allocates anything (each value costs it ~50-100
 *                  bytes: "[0,0,...]" of 64 MiB would be ~2 GB); a list of
 *                  100,000 topics is 100,001 values.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "admin/admin_int.h"
#include "core/err.h"

#define JSON_MAX_DEPTH 32
#define JSON_MAX_VALUES 1000000

/*
 * An upper bound on the values in text: every value but the first follows
 * a ',' or ':' or opens right after '['. Brackets inside strings are not
 * structure, so strings (with their escapes) are skipped.
 */
static size_t count_values(const char *p) {
    size_t n = 1;
    for (; *p; p++) {
        if (*p == '"') {
            while (p[1] && p[1] != '"')
                p += p[1] == '\\' && p[2] ? 2 : 1;
            if (!p[1])
                break;
            p++;
        } else if (*p == ',' || *p == ':' || *p == '[' || *p == '{') {
            n++;
        }
    }
    return n;
}

/* Parses body (strict, whole text) into *out; what names it in errors. */
static pulsarc_err_t parse(const char *body, const char *what, json_object **out, char *errstr,
                           size_t errlen) {
    *out = NULL;
    if (!body)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "%s: no response body", what);
    size_t values = count_values(body);
    if (values > JSON_MAX_VALUES)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "%s: JSON with about %zu values, more than the limit of %d", what, values,
                         JSON_MAX_VALUES);
    /* json-c's depth counts a slot beyond the outermost container */
    json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH + 1);
    if (!tok)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    size_t len = strlen(body);
    json_object *o = len < INT32_MAX ? json_tokener_parse_ex(tok, body, (int)len + 1) : NULL;
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t at = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!o && jerr == json_tokener_success) /* the literal null */
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "%s: JSON null", what);
    if (!o)
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "%s: malformed JSON at offset %zu of %zu: %s", what, at, len,
                         json_tokener_error_desc(jerr));
    *out = o;
    return PULSARC_OK;
}

static pulsarc_err_t want_type(json_object *o, json_type t, const char *what, char *errstr,
                               size_t errlen) {
    if (json_object_is_type(o, t))
        return PULSARC_OK;
    return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED, "%s: expected a JSON %s, got %s",
                     what, json_type_to_name(t), json_type_to_name(json_object_get_type(o)));
}

/* obj[key] as int64 into *out (left alone when absent); -1 if not an integer. */
static int get_i64(json_object *obj, const char *key, int64_t *out) {
    json_object *v;
    if (!json_object_object_get_ex(obj, key, &v))
        return 0;
    if (!json_object_is_type(v, json_type_int))
        return -1;
    *out = json_object_get_int64(v);
    return 0;
}

/* Length of the array obj[key] (0 when absent); -1 if not an array. */
static int get_array_len(json_object *obj, const char *key, size_t *out) {
    json_object *v;
    *out = 0;
    if (!json_object_object_get_ex(obj, key, &v))
        return 0;
    if (!json_object_is_type(v, json_type_array))
        return -1;
    *out = json_object_array_length(v);
    return 0;
}

static int blank(const char *s) {
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return 0;
    return 1;
}

/* The first non-blank line of text, trimmed, into out. */
static void first_line(const char *text, char *out, size_t outlen) {
    while (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n')
        text++;
    size_t n = strcspn(text, "\r\n");
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    if (n >= outlen)
        n = outlen - 1;
    memmove(out, text, n); /* text may lie inside out */
    out[n] = '\0';
}

/* obj[key] when it is a non-empty string (borrowed from obj), else NULL. */
static const char *string_field(json_object *obj, const char *key) {
    json_object *v;
    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    const char *s = json_object_get_string(v);
    return s[0] ? s : NULL;
}

/* The text of an HTML page's <title> (Jetty's error pages, e.g. a 401 from
 * the authentication filter) into out; 0 when there is none. */
static int html_title(const char *body, char *out, size_t outlen) {
    const char *t = strstr(body, "<title>"), *end = t ? strstr(t, "</title>") : NULL;
    if (!end)
        return 0;
    t += strlen("<title>");
    size_t n = (size_t)(end - t) < outlen - 1 ? (size_t)(end - t) : outlen - 1;
    memcpy(out, t, n);
    out[n] = '\0';
    first_line(out, out, outlen);
    return out[0] != '\0';
}

void pc_admin_json_reason(const char *body, char *out, size_t outlen) {
    if (!out || outlen == 0)
        return;
    out[0] = '\0';
    if (!body)
        return;
    json_object *o = NULL;
    const char *r = NULL;
    if (parse(body, "reason", &o, NULL, 0) == PULSARC_OK &&
        json_object_is_type(o, json_type_object))
        r = string_field(o, "reason") ? string_field(o, "reason") : string_field(o, "message");
    if (r)
        first_line(r, out, outlen);
    else if (!html_title(body, out, outlen))
        first_line(body, out, outlen);
    json_object_put(o);
}

void pulsarc_admin_list_free(char **list) {
    if (!list)
        return;
    for (char **p = list; *p; p++)
        free(*p);
    free(list);
}

pulsarc_err_t pc_admin_json_strings(const char *body, char ***list, char *errstr,
                                    size_t errlen) {
    json_object *o;
    pulsarc_err_t err = parse(body, "string list", &o, errstr, errlen);
    if (!err)
        err = want_type(o, json_type_array, "string list", errstr, errlen);
    size_t n = err ? 0 : json_object_array_length(o);
    char **out = err ? NULL : calloc(n + 1, sizeof *out);
    if (!err && !out)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !err && i < n; i++) {
        json_object *s = json_object_array_get_idx(o, i);
        if (!json_object_is_type(s, json_type_string))
            err = pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                            "string list: item %zu is a %s, not a string", i,
                            json_type_to_name(json_object_get_type(s)));
        else if (!(out[i] = strdup(json_object_get_string(s))))
            err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    }
    json_object_put(o);
    if (err) {
        pulsarc_admin_list_free(out);
        return err;
    }
    *list = out;
    return PULSARC_OK;
}

pulsarc_err_t pc_admin_json_partitions(const char *body, int *count, char *errstr,
                                       size_t errlen) {
    json_object *o;
    pulsarc_err_t err = parse(body, "partition metadata", &o, errstr, errlen);
    if (!err)
        err = want_type(o, json_type_object, "partition metadata", errstr, errlen);
    int64_t n = -1;
    if (!err && (get_i64(o, "partitions", &n) < 0 || n < 0 || n > INT32_MAX))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                        "partition metadata: no valid \"partitions\" count in %.80s", body);
    json_object_put(o);
    if (!err)
        *count = (int)n;
    return err;
}

static pulsarc_err_t read_sub(json_object *v, const char *name, pulsarc_admin_sub_stats_t *s,
                              char *errstr, size_t errlen) {
    size_t nc = 0;
    if (!json_object_is_type(v, json_type_object) || get_i64(v, "msgBacklog", &s->msg_backlog) ||
        get_i64(v, "backlogSize", &s->backlog_size) ||
        get_i64(v, "unackedMessages", &s->unacked) || get_array_len(v, "consumers", &nc))
        return pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                         "topic stats: subscription '%s' has fields of the wrong type", name);
    s->consumers = (int)nc;
    if (!(s->name = strdup(name)))
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    return PULSARC_OK;
}

static pulsarc_err_t read_subs(json_object *o, pulsarc_admin_topic_stats_t *st, char *errstr,
                               size_t errlen) {
    json_object *subs;
    if (!json_object_object_get_ex(o, "subscriptions", &subs))
        return PULSARC_OK;
    pulsarc_err_t err = want_type(subs, json_type_object, "topic stats: subscriptions", errstr,
                                  errlen);
    if (err)
        return err;
    size_t n = (size_t)json_object_object_length(subs);
    if (n && !(st->subs = calloc(n, sizeof *st->subs)))
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    json_object_object_foreach(subs, name, v) {
        if (err)
            break;
        err = read_sub(v, name, &st->subs[st->nsubs], errstr, errlen);
        st->nsubs += st->subs[st->nsubs].name != NULL;
    }
    return err;
}

pulsarc_err_t pc_admin_json_topic_stats(const char *body, pulsarc_admin_topic_stats_t **stats,
                                        char *errstr, size_t errlen) {
    json_object *o;
    pulsarc_err_t err = parse(body, "topic stats", &o, errstr, errlen);
    if (!err)
        err = want_type(o, json_type_object, "topic stats", errstr, errlen);
    pulsarc_admin_topic_stats_t *st = err ? NULL : calloc(1, sizeof *st);
    if (!err && !st)
        err = pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    size_t np = 0;
    if (!err && (get_i64(o, "msgInCounter", &st->msg_in_counter) ||
                 get_i64(o, "storageSize", &st->storage_size) ||
                 get_i64(o, "backlogSize", &st->backlog_size) ||
                 get_array_len(o, "publishers", &np)))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                        "topic stats: counters of the wrong type");
    if (!err) {
        st->publishers = (int)np;
        err = read_subs(o, st, errstr, errlen);
    }
    json_object_put(o);
    if (err) {
        pulsarc_admin_topic_stats_free(st);
        return err;
    }
    *stats = st;
    return PULSARC_OK;
}

void pulsarc_admin_topic_stats_free(pulsarc_admin_topic_stats_t *st) {
    if (!st)
        return;
    for (size_t i = 0; i < st->nsubs; i++)
        free(st->subs[i].name);
    free(st->subs);
    free(st);
}

/* Parses a policy body; empty means "not set on this namespace". */
static pulsarc_err_t parse_policy(const char *body, const char *what, json_type t,
                                  json_object **o, char *errstr, size_t errlen) {
    *o = NULL;
    if (blank(body))
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOT_FOUND,
                         "no %s policy set on the namespace (the broker default applies)", what);
    pulsarc_err_t err = parse(body, what, o, errstr, errlen);
    return err ? err : want_type(*o, t, what, errstr, errlen);
}

pulsarc_err_t pc_admin_json_bool(const char *body, int *out, char *errstr, size_t errlen) {
    json_object *o;
    pulsarc_err_t err = parse_policy(body, "deduplication", json_type_boolean, &o, errstr,
                                     errlen);
    if (!err)
        *out = json_object_get_boolean(o) ? 1 : 0;
    json_object_put(o);
    return err;
}

pulsarc_err_t pc_admin_json_txn_in_buffer(const char *body, int *aborted, int *ongoing,
                                         char *errstr, size_t errlen) {
    json_object *o, *v;
    pulsarc_err_t err = parse(body, "transaction in buffer", &o, errstr, errlen);
    if (!err)
        err = want_type(o, json_type_object, "transaction in buffer", errstr, errlen);
    if (!err && (!json_object_object_get_ex(o, "aborted", &v) ||
                 !json_object_is_type(v, json_type_boolean)))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                        "transaction in buffer: no boolean \"aborted\" in %.80s", body);
    if (!err) {
        *aborted = json_object_get_boolean(v) ? 1 : 0;
        /* the topic lists a start position only for a transaction still open on it */
        *ongoing = json_object_object_get_ex(o, "startPosition", &v) &&
                   json_object_is_type(v, json_type_string);
    }
    json_object_put(o);
    return err;
}

pulsarc_err_t pc_admin_json_retention(const char *body, int64_t *minutes, int64_t *size_mb,
                                      char *errstr, size_t errlen) {
    json_object *o;
    pulsarc_err_t err = parse_policy(body, "retention", json_type_object, &o, errstr, errlen);
    int64_t m = 0, s = 0;
    if (!err && (get_i64(o, "retentionTimeInMinutes", &m) || get_i64(o, "retentionSizeInMB", &s)))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                        "retention: fields of the wrong type in %.80s", body);
    json_object_put(o);
    if (!err) {
        *minutes = m;
        *size_mb = s;
    }
    return err;
}

pulsarc_err_t pc_admin_json_delayed_delivery(const char *body, int *active, int64_t *tick_ms,
                                             char *errstr, size_t errlen) {
    json_object *o, *a = NULL;
    pulsarc_err_t err = parse_policy(body, "delayed delivery", json_type_object, &o, errstr,
                                     errlen);
    int64_t t = 0;
    if (!err && (get_i64(o, "tickTime", &t) || !json_object_object_get_ex(o, "active", &a) ||
                 !json_object_is_type(a, json_type_boolean)))
        err = pc_seterr(errstr, errlen, PULSARC_ERR_MALFORMED,
                        "delayed delivery: no boolean \"active\" or bad \"tickTime\" in %.80s",
                        body);
    if (!err) {
        *active = json_object_get_boolean(a) ? 1 : 0;
        *tick_ms = t;
    }
    json_object_put(o);
    return err;
}

/* Serialises o (consumed) to a malloc'd string; NULL on OOM. */
static char *emit(json_object *o) {
    const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL;
    char *copy = s ? strdup(s) : NULL;
    json_object_put(o);
    return copy;
}

/* obj[key] = v; v is consumed either way (json-c leaves it to us on failure); 0 on OOM. */
static int put(json_object *obj, const char *key, json_object *v) {
    if (!obj || !v || json_object_object_add(obj, key, v) != 0) {
        json_object_put(v);
        return 0;
    }
    return 1;
}

char *pc_admin_json_msgid(const pulsarc_msgid_t *id) {
    json_object *o = json_object_new_object();
    int ok = put(o, "ledgerId", json_object_new_int64(id->ledger_id)) &&
             put(o, "entryId", json_object_new_int64(id->entry_id)) &&
             put(o, "partitionIndex", json_object_new_int64(id->partition)) &&
             (id->batch_index < 0 ||
              put(o, "batchIndex", json_object_new_int64(id->batch_index)));
    if (!ok) {
        json_object_put(o);
        return NULL;
    }
    return emit(o);
}

char *pc_admin_json_retention_body(int64_t minutes, int64_t size_mb) {
    json_object *o = json_object_new_object();
    if (!put(o, "retentionTimeInMinutes", json_object_new_int64(minutes)) ||
        !put(o, "retentionSizeInMB", json_object_new_int64(size_mb))) {
        json_object_put(o);
        return NULL;
    }
    return emit(o);
}

char *pc_admin_json_delayed_body(int active, int64_t tick_ms) {
    json_object *o = json_object_new_object();
    if (!put(o, "active", json_object_new_boolean(active != 0)) ||
        !put(o, "tickTime", json_object_new_int64(tick_ms))) {
        json_object_put(o);
        return NULL;
    }
    return emit(o);
}

char *pc_admin_json_tenant_body(const char *const *clusters) {
    json_object *o = json_object_new_object(), *arr = json_object_new_array();
    for (size_t i = 0; arr && clusters && clusters[i]; i++) {
        json_object *s = json_object_new_string(clusters[i]);
        if (!s || json_object_array_add(arr, s) != 0) {
            json_object_put(s);
            json_object_put(arr);
            arr = NULL;
        }
    }
    if (!put(o, "allowedClusters", arr) || !put(o, "adminRoles", json_object_new_array())) {
        json_object_put(o);
        return NULL;
    }
    return emit(o);
}
