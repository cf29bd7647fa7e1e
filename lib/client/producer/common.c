/*
 * Design notes: what every producer kind shares and does once, on the
 * application thread that creates it: the handle's setup (name, topic,
 * reference count, ops) and the configuration, read and checked before
 * anything is created so that a bad option fails the same way whatever
 * the topic's kind. Also the handle's pool of send items (any thread,
 * under the pool's own leaf lock): a message sent through the handle takes
 * its item there and the thread that completes it gives it back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/producer/producer_int.h"
#include "core/err.h"

void pc_producer_base_init(pulsarc_producer_t *p, const pc_producer_ops_t *ops,
                           pulsarc_client_t *c, const pc_topic_t *topic,
                           const pulsarc_conf_t *conf) {
    p->ops = ops;
    p->client = c;
    atomic_init(&p->refs, 1);
    p->topic = *topic;
    snprintf(p->name, sizeof p->name, "%s", pc_conf_str(conf, PC_PROP_PRODUCER_NAME));
    p->user_named = p->name[0] != '\0';
    pthread_mutex_init(&p->items.lock, NULL);
    p->items.free = NULL;
    p->items.n = 0;
    int64_t pending = pc_conf_int(conf, PC_PROP_MAX_PENDING_MESSAGES);
    p->items.max = pending < INT32_MAX / 2 ? (int)(2 * pending) : INT32_MAX;
    pc_op_init(&p->flushes_out);
    pc_op_done(&p->flushes_out, PULSARC_OK, NULL); /* none out: a completed countdown */
}

void pc_producer_base_clear(pulsarc_producer_t *p) {
    for (send_item_t *it = p->items.free, *next; it; it = next) {
        next = it->next;
        free(it);
    }
    p->items.free = NULL;
    p->items.n = 0;
    pthread_mutex_destroy(&p->items.lock);
    pc_op_destroy(&p->flushes_out);
}

send_item_t *pc_item_get(pulsarc_producer_t *p) {
    pc_item_pool_t *pool = &p->items;
    pthread_mutex_lock(&pool->lock);
    send_item_t *it = pool->free;
    if (it) {
        pool->free = it->next;
        pool->n--;
    }
    pthread_mutex_unlock(&pool->lock);
    if (it)
        memset(it, 0, sizeof *it);
    else if ((it = calloc(1, sizeof *it)) == NULL)
        return NULL;
    it->pool = pool;
    return it;
}

/* Under the pool's lock: keeps it if there is room (1), else 0. */
static int keep_item(pc_item_pool_t *pool, send_item_t *it) {
    if (pool->n >= pool->max)
        return 0;
    it->next = pool->free;
    pool->free = it;
    pool->n++;
    return 1;
}

void pc_item_put(send_item_t *it) {
    pc_item_pool_t *pool = it->pool;
    if (pool) {
        pthread_mutex_lock(&pool->lock);
        int kept = keep_item(pool, it);
        pthread_mutex_unlock(&pool->lock);
        if (kept)
            return;
    }
    free(it);
}

void pc_item_put_chain(send_item_t *first) {
    send_item_t *it = first;
    while (it) {
        pc_item_pool_t *pool = it->pool;
        if (!pool) {
            send_item_t *next = it->next;
            free(it);
            it = next;
            continue;
        }
        send_item_t *spill = NULL; /* what the pool had no room for, freed after the lock */
        pthread_mutex_lock(&pool->lock);
        while (it && it->pool == pool) { /* a run of items of this pool */
            send_item_t *next = it->next;
            if (!keep_item(pool, it)) {
                it->next = spill;
                spill = it;
            }
            it = next;
        }
        pthread_mutex_unlock(&pool->lock);
        while (spill) {
            send_item_t *next = spill->next;
            free(spill);
            spill = next;
        }
    }
}

static void read_settings(pc_producer_settings_t *s, const pulsarc_conf_t *conf) {
    s->send_timeout_ms = (int)pc_conf_int(conf, PC_PROP_SEND_TIMEOUT_MS);
    s->max_pending = (int)pc_conf_int(conf, PC_PROP_MAX_PENDING_MESSAGES);
    s->block_if_full = (int)pc_conf_int(conf, PC_PROP_BLOCK_IF_QUEUE_FULL);
    s->batching = (int)pc_conf_int(conf, PC_PROP_BATCHING_ENABLED);
    s->batch_delay_us = pc_conf_int(conf, PC_PROP_BATCHING_MAX_DELAY_US);
    s->key_based_batches = pc_conf_int(conf, PC_PROP_BATCHER_BUILDER) == 1;
    s->batch_max_msgs = (int)pc_conf_int(conf, PC_PROP_BATCHING_MAX_MESSAGES);
    s->batch_max_bytes = (size_t)pc_conf_int(conf, PC_PROP_BATCHING_MAX_BYTES);
    s->codec = (pc_codec_t)pc_conf_int(conf, PC_PROP_COMPRESSION_TYPE);
    s->chunking = (int)pc_conf_int(conf, PC_PROP_CHUNKING_ENABLED);
    s->chunk_max = pc_conf_int(conf, PC_PROP_CHUNK_MAX_MESSAGE_SIZE);
    s->access_mode = (int)pc_conf_int(conf, PC_PROP_ACCESS_MODE);
    s->initial_seq = pc_conf_int(conf, PC_PROP_INITIAL_SEQUENCE_ID);
}

static pulsarc_err_t check_settings(const pc_producer_settings_t *s, const pc_topic_t *topic,
                                    char *errstr, size_t errlen) {
    if (!pc_codec_available(s->codec))
        return pc_seterr(errstr, errlen, PULSARC_ERR_UNSUPPORTED,
                         "compressionType %s is not built into this library", pc_codec_name(s->codec));
    if (s->chunking && s->batching) /* the Java client refuses the pair too */
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "chunkingEnabled needs batchingEnabled=false");
    if (s->chunking && !topic->persistent)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "chunking works on persistent topics only, not %s", topic->full);
    return PULSARC_OK;
}

pulsarc_err_t pc_producer_settings_read(pc_producer_settings_t *s, const pulsarc_conf_t *conf,
                                        const pc_topic_t *topic, char *errstr, size_t errlen) {
    read_settings(s, conf);
    pulsarc_err_t err = check_settings(s, topic, errstr, errlen);
    if (err)
        return err;
    pc_schema_t schema; /* each producer builds its own; this only checks */
    err = pc_schema_from_conf(&schema, conf, errstr, errlen);
    pc_schema_clear(&schema);
    return err;
}
