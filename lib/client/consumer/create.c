/*
 * Design notes: pulsarc_consumer_new picks the kind of consumer a topic
 * needs: a multi-topic consumer over the topic and its retry topic
 * (retryEnable), one over the partitions of a partitioned topic, a
 * zero-queue consumer (receiverQueueSize 0, one plain topic only, as with
 * the Java client), or a single-topic consumer. Runs on the application
 * thread; the kinds themselves live in single.c, multi_topic.c and
 * zero_queue.c.
 */
#include <stdio.h>

#include "client/consumer/single.h"
#include "core/err.h"

/* A partitioned topic gets a multi-topic consumer; *handled = 0 otherwise. */
static pulsarc_err_t new_if_partitioned(pulsarc_client_t *cl, const char *topic, const char *sub,
                                        const pulsarc_conf_t *conf, pulsarc_consumer_t **cp,
                                        int *handled, char *errstr, size_t errlen) {
    pc_topic_t t;
    int parts = 0;
    *handled = 0;
    if (pc_client_parse_topic(cl, topic, &t, NULL, 0) || t.partition >= 0)
        return PULSARC_OK; /* the plain path reports bad names */
    pulsarc_err_t err = pulsarc_client_partitions(cl, t.full, &parts, errstr, errlen);
    if (err || parts == 0)
        return err;
    *handled = 1;
    if (pc_conf_int(conf, PC_PROP_RECEIVER_QUEUE_SIZE) == 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "receiverQueueSize 0 needs a non-partitioned topic: '%s' has %d partitions",
                         t.full, parts);
    return pulsarc_consumer_new_multi(cl, &topic, 1, sub, conf, cp, errstr, errlen);
}

/* retryEnable: the topic and its retry topic behind one handle, sharing letter topics. */
static pulsarc_err_t new_with_retry(pulsarc_client_t *cl, const char *topic, const char *sub,
                                  const pulsarc_conf_t *conf, pulsarc_consumer_t **cp, int *handled,
                                  char *errstr, size_t errlen) {
    *handled = 0;
    if (!pc_conf_int(conf, PC_PROP_RETRY_ENABLE))
        return PULSARC_OK;
    if (pc_conf_int(conf, PC_PROP_RECEIVER_QUEUE_SIZE) == 0)
        return pc_seterr(errstr, errlen, PULSARC_ERR_BAD_CONFIG,
                         "receiverQueueSize 0 cannot be combined with retryEnable (the topic and "
                         "its retry topic are two topics behind one handle)");
    pc_single_t *probe;
    pulsarc_err_t err = pc_single_prepare(cl, topic, sub, conf, &probe, errstr, errlen);
    if (err)
        return err;
    char retry[PC_TOPIC_MAX], dlq[PC_TOPIC_MAX];
    snprintf(retry, sizeof retry, "%s", pc_dlq_retry_topic(probe));
    snprintf(dlq, sizeof dlq, "%s-%s-DLQ", probe->base.topic.base, sub);
    pc_consumer_unref(&probe->base);
    pulsarc_conf_t *copy = conf ? pulsarc_conf_dup(conf) : pulsarc_conf_new();
    if (!copy)
        return pc_seterr(errstr, errlen, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_conf_set(copy, "deadLetterPolicy.retryLetterTopic", retry, NULL, 0);
    if (!*pc_conf_str(conf, PC_PROP_DLQ_TOPIC))
        pulsarc_conf_set(copy, "deadLetterPolicy.deadLetterTopic", dlq, NULL, 0);
    const char *topics[2] = {topic, retry};
    *handled = 1;
    err = pulsarc_consumer_new_multi(cl, topics, 2, sub, copy, cp, errstr, errlen);
    pulsarc_conf_destroy(copy);
    return err;
}

pulsarc_err_t pulsarc_consumer_new(pulsarc_client_t *cl, const char *topic, const char *sub,
                                   const pulsarc_conf_t *conf, pulsarc_consumer_t **cp,
                                   char *errstr, size_t errlen) {
    if (!cl || !topic || !sub || !cp || !*sub)
        return pc_seterr(errstr, errlen, PULSARC_ERR_INVALID_ARG,
                         "client, topic, a non-empty subscription and consumerp are required");
    *cp = NULL;
    int handled = 0;
    pulsarc_err_t err = new_with_retry(cl, topic, sub, conf, cp, &handled, errstr, errlen);
    if (handled || err)
        return err;
    err = new_if_partitioned(cl, topic, sub, conf, cp, &handled, errstr, errlen);
    if (handled || err)
        return err;
    if (pc_conf_int(conf, PC_PROP_RECEIVER_QUEUE_SIZE) == 0)
        return pc_zero_queue_new(cl, topic, sub, conf, cp, errstr, errlen);
    pc_single_t *c;
    err = pc_single_prepare(cl, topic, sub, conf, &c, errstr, errlen);
    if (err)
        return err;
    if ((err = pc_single_start(c, 1, errstr, errlen))) {
        pc_consumer_unref(&c->base);
        return err;
    }
    *cp = &c->base;
    return PULSARC_OK;
}
