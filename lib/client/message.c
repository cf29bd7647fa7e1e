/*
 * Design notes: one message type for both directions. An outgoing message
 * is filled by setters on the application's thread and handed to the
 * producer; an incoming one is built by the consumer on the loop thread and
 * handed to the application. Either way exactly one owner at a time, so no
 * locks. The struct of a message the application builds comes from, and
 * goes back to, msg_pool.c: a producer's messages are built on the
 * sending thread and destroyed on the callback thread.
 */
#include "client/message.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/msg_pool.h"
#include "client/rxpool.h"
#include "core/base64.h"

/* A received view's shared fields are its entry's (see message.h). */
static inline const pc_msg_shared_t *shared_of(const pulsarc_msg_t *m) {
    return m->entry ? &m->entry->shared : &m->own;
}

pulsarc_msg_t *pulsarc_msg_new(void) {
    pulsarc_msg_t *m = pc_msg_pool_get();
    if (m) {
        m->id = pulsarc_msgid_earliest();
        m->seq = -1;
    }
    return m;
}

static void free_payload(pulsarc_msg_t *m) {
    if (m->owns_data)
        free(m->data);
    m->data = NULL;
    m->len = 0;
    m->owns_data = 0;
}

/* A message the application built: everything it owns. Kept out of line
 * so dropping a received view, once per message, pays for none of it. */
static __attribute__((noinline)) void destroy_owned(pulsarc_msg_t *m) {
    free_payload(m);
    free(m->key);
    free(m->key_bin);
    free(m->ordering_key);
    for (size_t i = 0; m->repl_clusters && m->repl_clusters[i]; i++)
        free(m->repl_clusters[i]);
    free(m->repl_clusters);
    for (size_t i = 0; i < m->nprops; i++) {
        free(m->props[i].name);
        free(m->props[i].value);
    }
    free(m->props);
    free(m->own.producer_name);
    free(m->own.topic);
    pc_msg_pool_put(m);
}

void pulsarc_msg_destroy(pulsarc_msg_t *m) {
    if (!m)
        return;
    if (m->entry) /* a received view: back to its pool */
        pc_rxmsg_put(m);
    else
        destroy_owned(m);
}

pulsarc_err_t pc_msg_copy_payload(pulsarc_msg_t *m, const void *data, size_t len) {
    if (len > INT32_MAX) /* no Pulsar message (even chunked: int32 totals) can carry it */
        return PULSARC_ERR_MSG_TOO_BIG;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return PULSARC_ERR_NOMEM;
    if (len)
        memcpy(copy, data, len);
    free_payload(m);
    m->data = copy;
    m->len = len;
    m->owns_data = 1;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msg_set_payload(pulsarc_msg_t *m, const void *data, size_t len, int flags) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m || (!data && len))
        return PULSARC_ERR_INVALID_ARG;
    /* Unknown flags, or two ownership rules at once, are a caller's mistake. */
    int owner_flags = !!(flags & PULSARC_MSG_F_COPY) + !!(flags & PULSARC_MSG_F_FREE) +
                      !!(flags & PULSARC_MSG_F_BORROW);
    if (flags & ~(PULSARC_MSG_F_COPY | PULSARC_MSG_F_FREE | PULSARC_MSG_F_BORROW) || owner_flags > 1)
        return PULSARC_ERR_INVALID_ARG;
    if (len > INT32_MAX)
        return PULSARC_ERR_MSG_TOO_BIG;
    if (!(flags & (PULSARC_MSG_F_FREE | PULSARC_MSG_F_BORROW)))
        return pc_msg_copy_payload(m, data, len);
    free_payload(m);
    m->data = (uint8_t *)data;
    m->len = len;
    m->owns_data = (flags & PULSARC_MSG_F_FREE) != 0;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msg_set_key(pulsarc_msg_t *m, const char *key) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m || !key)
        return PULSARC_ERR_INVALID_ARG;
    char *k = strdup(key);
    if (!k)
        return PULSARC_ERR_NOMEM;
    free(m->key);
    m->key = k;
    m->key_b64 = 0;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msg_set_key_bytes(pulsarc_msg_t *m, const void *key, size_t len) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m || (!key && len))
        return PULSARC_ERR_INVALID_ARG;
    char *k = malloc(pc_base64_len(len) + 1);
    if (!k)
        return PULSARC_ERR_NOMEM;
    pc_base64_encode(key, len, k);
    free(m->key);
    m->key = k;
    m->key_b64 = 1;
    return pc_msg_set_bytes(&m->key_bin, &m->key_bin_len, key, len);
}

pulsarc_err_t pc_msg_set_bytes(uint8_t **dst, size_t *dlen, const void *src, size_t n) {
    uint8_t *copy = malloc(n + 1);
    if (!copy)
        return PULSARC_ERR_NOMEM;
    if (n)
        memcpy(copy, src, n);
    copy[n] = 0;
    free(*dst);
    *dst = copy;
    *dlen = n;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msg_set_ordering_key(pulsarc_msg_t *m, const void *key, size_t len) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m || (!key && len))
        return PULSARC_ERR_INVALID_ARG;
    return pc_msg_set_bytes(&m->ordering_key, &m->ordering_key_len, key, len);
}

pulsarc_err_t pulsarc_msg_set_deliver_at(pulsarc_msg_t *m, uint64_t ms) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m)
        return PULSARC_ERR_INVALID_ARG;
    m->deliver_at = ms;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msg_set_deliver_after(pulsarc_msg_t *m, uint64_t ms) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    return pulsarc_msg_set_deliver_at(m, now + ms);
}

pulsarc_err_t pulsarc_msg_set_replication_clusters(pulsarc_msg_t *m, const char *const *clusters,
                                                   size_t n) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m || (!clusters && n))
        return PULSARC_ERR_INVALID_ARG;
    char **list = calloc(n + 1, sizeof *list);
    if (!list)
        return PULSARC_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!clusters[i] || !(list[i] = strdup(clusters[i]))) {
            for (size_t j = 0; j < i; j++)
                free(list[j]);
            free(list);
            return clusters[i] ? PULSARC_ERR_NOMEM : PULSARC_ERR_INVALID_ARG;
        }
    }
    for (size_t i = 0; m->repl_clusters && m->repl_clusters[i]; i++)
        free(m->repl_clusters[i]);
    free(m->repl_clusters);
    m->repl_clusters = list;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msg_disable_replication(pulsarc_msg_t *m) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m)
        return PULSARC_ERR_INVALID_ARG;
    m->repl_disabled = 1;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msg_set_null_value(pulsarc_msg_t *m) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m)
        return PULSARC_ERR_INVALID_ARG;
    m->null_value = 1;
    return PULSARC_OK;
}

const void *pulsarc_msg_key_bytes(const pulsarc_msg_t *m, size_t *len) {
    if (!m || !m->key) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = m->key_b64 ? m->key_bin_len : strlen(m->key);
    return m->key_b64 ? (const void *)m->key_bin : (const void *)m->key;
}

const void *pulsarc_msg_schema_version(const pulsarc_msg_t *m, size_t *len) {
    const pc_msg_shared_t *s = m ? shared_of(m) : NULL;
    if (len)
        *len = s && s->schema_version ? s->schema_version_len : 0;
    return s ? s->schema_version : NULL;
}

const void *pulsarc_msg_ordering_key(const pulsarc_msg_t *m, size_t *len) {
    if (len)
        *len = m ? m->ordering_key_len : 0;
    return m ? m->ordering_key : NULL;
}

int pulsarc_msg_is_null_value(const pulsarc_msg_t *m) { return m ? m->null_value : 0; }
int pulsarc_msg_is_encrypted(const pulsarc_msg_t *m) { return m ? m->undecrypted : 0; }
uint64_t pulsarc_msg_deliver_at(const pulsarc_msg_t *m) { return m ? m->deliver_at : 0; }

static char *dupn(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

pulsarc_err_t pc_msg_add_property(pulsarc_msg_t *m, const char *name, size_t nlen,
                                  const char *value, size_t vlen) {
    if (m->nprops == m->capprops) {
        size_t cap = m->capprops ? m->capprops * 2 : 4;
        pc_prop_kv_t *p = realloc(m->props, cap * sizeof *p);
        if (!p)
            return PULSARC_ERR_NOMEM;
        m->props = p;
        m->capprops = cap;
    }
    char *n = dupn(name, nlen), *v = dupn(value, vlen);
    if (!n || !v) {
        free(n);
        free(v);
        return PULSARC_ERR_NOMEM;
    }
    m->props[m->nprops].name = n;
    m->props[m->nprops].value = v;
    m->nprops++;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msg_set_property(pulsarc_msg_t *m, const char *name, const char *value) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m || !name || !value || !*name)
        return PULSARC_ERR_INVALID_ARG;
    for (size_t i = 0; i < m->nprops; i++) {
        if (strcmp(m->props[i].name, name) == 0) {
            char *v = strdup(value);
            if (!v)
                return PULSARC_ERR_NOMEM;
            free(m->props[i].value);
            m->props[i].value = v;
            return PULSARC_OK;
        }
    }
    return pc_msg_add_property(m, name, strlen(name), value, strlen(value));
}

pulsarc_err_t pulsarc_msg_set_event_time(pulsarc_msg_t *m, uint64_t ms) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m)
        return PULSARC_ERR_INVALID_ARG;
    m->event_time = ms;
    return PULSARC_OK;
}

pulsarc_err_t pulsarc_msg_set_sequence_id(pulsarc_msg_t *m, int64_t seq) {
    if (m && m->entry)
        return PULSARC_ERR_STATE; /* received messages are read-only views */
    if (!m || seq < 0)
        return PULSARC_ERR_INVALID_ARG;
    m->seq = seq;
    m->has_seq = 1;
    return PULSARC_OK;
}

const void *pulsarc_msg_payload(const pulsarc_msg_t *m) { return m ? m->data : NULL; }
size_t pulsarc_msg_len(const pulsarc_msg_t *m) { return m ? m->len : 0; }
const char *pulsarc_msg_key(const pulsarc_msg_t *m) { return m ? m->key : NULL; }
uint64_t pulsarc_msg_publish_time(const pulsarc_msg_t *m) { return m ? shared_of(m)->publish_time : 0; }
uint64_t pulsarc_msg_event_time(const pulsarc_msg_t *m) { return m ? m->event_time : 0; }
int64_t pulsarc_msg_sequence_id(const pulsarc_msg_t *m) { return m ? m->seq : -1; }
uint32_t pulsarc_msg_redelivery_count(const pulsarc_msg_t *m) {
    return m ? shared_of(m)->redelivery_count : 0;
}
const char *pulsarc_msg_producer_name(const pulsarc_msg_t *m) {
    return m ? shared_of(m)->producer_name : NULL;
}
const char *pulsarc_msg_topic(const pulsarc_msg_t *m) { return m ? shared_of(m)->topic : NULL; }
size_t pulsarc_msg_property_count(const pulsarc_msg_t *m) { return m ? m->nprops : 0; }

pulsarc_msgid_t pulsarc_msg_id(const pulsarc_msg_t *m) {
    return m ? m->id : pulsarc_msgid_earliest();
}

const char *pulsarc_msg_property(const pulsarc_msg_t *m, const char *name) {
    if (!m || !name)
        return NULL;
    for (size_t i = 0; i < m->nprops; i++)
        if (strcmp(m->props[i].name, name) == 0)
            return m->props[i].value;
    return NULL;
}

pulsarc_err_t pulsarc_msg_property_at(const pulsarc_msg_t *m, size_t i, const char **name,
                                      const char **value) {
    if (!m || i >= m->nprops)
        return PULSARC_ERR_INVALID_ARG;
    if (name)
        *name = m->props[i].name;
    if (value)
        *value = m->props[i].value;
    return PULSARC_OK;
}

/* ---------- standalone copies ---------- */

static pulsarc_err_t clone_strings(pulsarc_msg_t *d, const pulsarc_msg_t *s) {
    const pc_msg_shared_t *sh = shared_of(s);
    if ((s->key && !(d->key = strdup(s->key))) ||
        (sh->producer_name && !(d->own.producer_name = strdup(sh->producer_name))) ||
        (sh->topic && !(d->own.topic = strdup(sh->topic))))
        return PULSARC_ERR_NOMEM;
    if (s->repl_clusters) {
        size_t n = 0;
        while (s->repl_clusters[n])
            n++;
        return pulsarc_msg_set_replication_clusters(d, (const char *const *)s->repl_clusters, n);
    }
    return PULSARC_OK;
}

static pulsarc_err_t clone_bytes(pulsarc_msg_t *d, const pulsarc_msg_t *s) {
    pulsarc_err_t err = PULSARC_OK;
    if (s->key_bin)
        err = pc_msg_set_bytes(&d->key_bin, &d->key_bin_len, s->key_bin, s->key_bin_len);
    if (!err && s->ordering_key)
        err = pc_msg_set_bytes(&d->ordering_key, &d->ordering_key_len, s->ordering_key,
                               s->ordering_key_len);
    for (size_t i = 0; !err && i < s->nprops; i++)
        err = pc_msg_add_property(d, s->props[i].name, strlen(s->props[i].name), s->props[i].value,
                                  strlen(s->props[i].value));
    if (!err)
        err = pc_msg_copy_payload(d, s->data, s->len);
    return err;
}

pulsarc_msg_t *pulsarc_msg_clone(const pulsarc_msg_t *s) {
    pulsarc_msg_t *d = s ? pulsarc_msg_new() : NULL;
    if (!d)
        return NULL;
    d->key_b64 = s->key_b64;
    d->deliver_at = s->deliver_at;
    d->repl_disabled = s->repl_disabled;
    d->null_value = s->null_value;
    d->undecrypted = s->undecrypted;
    d->event_time = s->event_time;
    d->own.publish_time = shared_of(s)->publish_time;
    d->seq = s->seq;
    d->has_seq = s->has_seq;
    d->id = s->id;
    d->own.redelivery_count = shared_of(s)->redelivery_count;
    d->rx_owner = s->rx_owner; /* compared, never followed: routes acks of the copy */
    d->rx_epoch = s->rx_epoch;
    if (clone_strings(d, s) || clone_bytes(d, s)) {
        pulsarc_msg_destroy(d);
        return NULL;
    }
    return d;
}
