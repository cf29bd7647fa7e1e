/*
 * Design notes: dead-letter and retry-letter topics, as the Java client has
 * them. A message delivered with redelivery_count >= maxRedeliverCount is a
 * dead-letter candidate: a copy of it is kept (the application owns and may
 * free the delivered one). When a negative ack or an ack timeout would
 * redeliver it once more, it is published to the dead-letter topic instead
 * (properties REAL_TOPIC and ORIGIN_MESSAGE_ID, key kept) and the original
 * is acked; if publishing fails it is redelivered as usual. Publishing
 * blocks, so it runs on the client's callback thread, never on the io
 * thread. The retry topic (retryEnable) works the same way on the
 * application's call to pulsarc_consumer_reconsume_later().
 *
 * Threads: candidates live on the io thread; the dead-letter producers are
 * created and used on the callback thread (or the application's, for
 * reconsume_later) under dlq_lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/consumer/single.h"
#include "core/err.h"

typedef struct pc_dlq_cand {
    struct pc_dlq_cand *next;
    pulsarc_msg_t *copy;      /* owned */
} pc_dlq_cand_t;

struct pc_dlq {
    int max_redeliver;
    char dlq_topic[PC_TOPIC_MAX];
    char retry_topic[PC_TOPIC_MAX];
    int retry_enabled;
    pc_dlq_cand_t *cands;      /* io thread */
    pthread_mutex_t lock;      /* guards the producers */
    pulsarc_producer_t *dlq_producer, *retry_producer;
};

/* ---------- configuration ---------- */

static void default_name(char *out, const char *conf_value, const pc_single_t *c, const char *suffix) {
    if (*conf_value)
        snprintf(out, PC_TOPIC_MAX, "%s", conf_value);
    else
        snprintf(out, PC_TOPIC_MAX, "%s-%s-%s", c->base.topic.base, c->base.sub, suffix);
}

pulsarc_err_t pc_dlq_configure(pc_single_t *c, const pulsarc_conf_t *conf) {
    int max = (int)pc_conf_int(conf, PC_PROP_DLQ_MAX_REDELIVER);
    int retry = (int)pc_conf_int(conf, PC_PROP_RETRY_ENABLE);
    if (max <= 0 && !retry)
        return PULSARC_OK;
    pc_dlq_t *d = calloc(1, sizeof *d);
    if (!d)
        return PULSARC_ERR_NOMEM;
    d->max_redeliver = max > 0 ? max : 16;
    d->retry_enabled = retry;
    default_name(d->dlq_topic, pc_conf_str(conf, PC_PROP_DLQ_TOPIC), c, "DLQ");
    default_name(d->retry_topic, pc_conf_str(conf, PC_PROP_RETRY_TOPIC), c, "RETRY");
    pthread_mutex_init(&d->lock, NULL);
    c->dlq = d;
    return PULSARC_OK;
}

const char *pc_dlq_retry_topic(const pc_single_t *c) {
    return c->dlq && c->dlq->retry_enabled ? c->dlq->retry_topic : NULL;
}

/* ---------- candidates (io thread) ---------- */

/* An owned copy of a received message (payload, keys, properties, id). */
static pulsarc_msg_t *copy_msg(const pulsarc_msg_t *m) {
    pulsarc_msg_t *c = pulsarc_msg_new();
    if (!c || pulsarc_msg_set_payload(c, m->data, m->len, PULSARC_MSG_F_COPY))
        goto fail;
    if (m->key && (m->key_b64 ? pulsarc_msg_set_key_bytes(c, m->key_bin, m->key_bin_len)
                              : pulsarc_msg_set_key(c, m->key)))
        goto fail;
    if (m->ordering_key && pulsarc_msg_set_ordering_key(c, m->ordering_key, m->ordering_key_len))
        goto fail;
    for (size_t i = 0; i < m->nprops; i++)
        if (pulsarc_msg_set_property(c, m->props[i].name, m->props[i].value))
            goto fail;
    c->event_time = m->event_time;
    c->id = m->id;
    return c;
fail:
    pulsarc_msg_destroy(c);
    return NULL;
}

void pc_dlq_on_delivered(pc_single_t *c, const pulsarc_msg_t *first) {
    pc_dlq_t *d = c->dlq;
    if (!d || !pc_consumer_is_shared(&c->base))
        return; /* selective redelivery, and so dead-lettering, needs Shared or Key_Shared */
    for (const pulsarc_msg_t *m = first; m; m = m->next) {
        if (pulsarc_msg_redelivery_count(m) < (uint32_t)d->max_redeliver)
            continue;
        pc_dlq_cand_t *k = calloc(1, sizeof *k);
        if (k && (k->copy = copy_msg(m))) {
            k->next = d->cands;
            d->cands = k;
        } else {
            free(k);
        }
    }
}

static int same_entry(const pulsarc_msgid_t *a, const pulsarc_msgid_t *b) {
    return a->ledger_id == b->ledger_id && a->entry_id == b->entry_id && a->partition == b->partition;
}

/* Moves the candidates of entry id into *out; 1 if there were any. */
static int take_entry(pc_dlq_t *d, const pulsarc_msgid_t *id, pc_dlq_cand_t **out) {
    int found = 0;
    for (pc_dlq_cand_t **pp = &d->cands; *pp;) {
        pc_dlq_cand_t *k = *pp;
        if (!same_entry(&k->copy->id, id)) {
            pp = &k->next;
            continue;
        }
        *pp = k->next;
        k->next = *out;
        *out = k;
        found = 1;
    }
    return found;
}

/* ---------- publishing (callback or application thread) ---------- */

static pulsarc_producer_t *producer_for(pc_single_t *c, pulsarc_producer_t **slot, const char *topic,
                                        char *e, size_t el) {
    if (*slot)
        return *slot;
    const char *kv[][2] = {{"batchingEnabled", "false"}, {"chunkingEnabled", "true"}};
    pulsarc_conf_t *conf = pulsarc_conf_new();
    for (size_t i = 0; conf && i < 2; i++)
        pulsarc_conf_set(conf, kv[i][0], kv[i][1], NULL, 0);
    if (pulsarc_producer_new(c->base.client, topic, conf, slot, e, el) == PULSARC_OK)
        pc_client_unregister(c->base.client, (pc_handle_t *)*slot); /* ours: closed with the consumer */
    pulsarc_conf_destroy(conf);
    return *slot;
}

/* Publishes msg (owned, consumed) with the letter-topic properties; 0 on success. */
static pulsarc_err_t publish(pc_single_t *c, pulsarc_producer_t **slot, const char *topic,
                             pulsarc_msg_t *msg, const pulsarc_msgid_t *origin) {
    char idtext[80];
    pulsarc_msgid_format(origin, idtext, sizeof idtext);
    if (!pulsarc_msg_property(msg, "REAL_TOPIC"))
        pulsarc_msg_set_property(msg, "REAL_TOPIC", c->base.topic.full);
    if (!pulsarc_msg_property(msg, "ORIGIN_MESSAGE_ID"))
        pulsarc_msg_set_property(msg, "ORIGIN_MESSAGE_ID", idtext);
    pthread_mutex_lock(&c->dlq->lock);
    pulsarc_producer_t *p = producer_for(c, slot, topic, NULL, 0);
    pulsarc_err_t err = p ? pulsarc_producer_send(p, msg, NULL) : PULSARC_ERR_CONNECT;
    pthread_mutex_unlock(&c->dlq->lock);
    return err;
}

typedef struct dlq_job {
    pc_cb_item_t item;
    pc_single_t *c;
    pc_dlq_cand_t *cands;
} dlq_job_t;

static void run_dlq_job(pc_cb_item_t *it) {
    dlq_job_t *j = (dlq_job_t *)it;
    pc_single_t *c = j->c;
    while (j->cands) {
        pc_dlq_cand_t *k = j->cands;
        j->cands = k->next;
        pulsarc_msgid_t id = k->copy->id;
        if (publish(c, &c->dlq->dlq_producer, c->dlq->dlq_topic, k->copy, &id) == PULSARC_OK)
            pulsarc_consumer_ack_id(&c->base, &id);
        else
            pulsarc_consumer_nack_id(&c->base, &id); /* dead-lettering failed: try again later */
        pulsarc_msg_destroy(k->copy);
        free(k);
    }
    pc_consumer_unref(&c->base);
    free(j);
}

/* Removes from ids the entries sent to the dead-letter topic instead; returns how many remain. */
static size_t filter(pc_single_t *c, pulsarc_msgid_t *ids, size_t n) {
    pc_dlq_t *d = c->dlq;
    if (!d || !d->cands)
        return n;
    pc_dlq_cand_t *taken = NULL;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (!take_entry(d, &ids[i], &taken))
            ids[kept++] = ids[i];
    if (taken) {
        dlq_job_t *j = calloc(1, sizeof *j);
        if (!j)
            return n; /* cannot dead-letter now; redeliver everything */
        j->item.run = run_dlq_job;
        j->c = c;
        j->cands = taken;
        pc_consumer_ref(&c->base);
        pc_cbq_push(&c->base.client->cbq, &j->item);
    }
    return kept;
}

/*
 * A chunked message is due as its last chunk (the id the application saw);
 * it is dead-lettered as one message, or redelivered as all its chunks, so
 * that it comes back whole.
 */
void pc_dlq_redeliver_due(void *owner, const pulsarc_msgid_t *ids, size_t n) {
    pc_single_t *c = owner;
    /* The sweep's own buffer: dead-lettered entries are taken out of it. */
    size_t left = filter(c, (pulsarc_msgid_t *)ids, n);
    if (!left) /* 0 would mean "redeliver all": never send that for nothing */
        return;
    pulsarc_msgid_t *all;
    size_t nall = pc_chunks_expand(&c->chunks, ids, left, &all);
    pc_single_redeliver(c, all ? all : ids, nall);
    free(all);
}

/* ---------- retry topic ---------- */

pulsarc_err_t pulsarc_consumer_reconsume_later(pulsarc_consumer_t *c, const pulsarc_msg_t *msg,
                                               uint64_t delay_ms) {
    if (!c || !msg || !msg->entry)
        return PULSARC_ERR_INVALID_ARG;
    pc_single_t *owner = msg->rx_owner ? pc_single_of(msg->rx_owner) : c->ops->route(c, &msg->id, msg);
    pc_dlq_t *d = owner ? owner->dlq : NULL;
    if (!d || !d->retry_enabled)
        return PULSARC_ERR_STATE; /* needs retryEnable=true */
    const char *times = pulsarc_msg_property(msg, "RECONSUMETIMES");
    int n = (times ? atoi(times) : 0) + 1;
    pulsarc_msg_t *copy = copy_msg(msg);
    if (!copy)
        return PULSARC_ERR_NOMEM;
    char buf[32];
    snprintf(buf, sizeof buf, "%d", n);
    pulsarc_msg_set_property(copy, "RECONSUMETIMES", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)delay_ms);
    pulsarc_msg_set_property(copy, "DELAY_TIME", buf);
    int dead = n > d->max_redeliver;
    if (!dead && delay_ms)
        pulsarc_msg_set_deliver_after(copy, delay_ms);
    pulsarc_err_t err = dead ? publish(owner, &d->dlq_producer, d->dlq_topic, copy, &msg->id)
                             : publish(owner, &d->retry_producer, d->retry_topic, copy, &msg->id);
    pulsarc_msg_destroy(copy);
    return err ? err : pulsarc_consumer_ack(c, msg);
}

/* ---------- teardown ---------- */

void pc_dlq_close(pc_single_t *c) {
    pc_dlq_t *d = c->dlq;
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    pulsarc_producer_t *a = d->dlq_producer, *b = d->retry_producer;
    d->dlq_producer = d->retry_producer = NULL;
    pthread_mutex_unlock(&d->lock);
    pulsarc_producer_destroy(a);
    pulsarc_producer_destroy(b);
}

void pc_dlq_free(pc_single_t *c) {
    pc_dlq_t *d = c->dlq;
    if (!d)
        return;
    while (d->cands) {
        pc_dlq_cand_t *k = d->cands;
        d->cands = k->next;
        pulsarc_msg_destroy(k->copy);
        free(k);
    }
    pthread_mutex_destroy(&d->lock);
    free(d);
    c->dlq = NULL;
}
