/*
 * Design notes
 *  - One thread, one epoll set, non-blocking sockets. One mutex guards all
 *    broker state; the thread holds it while it handles an event, test
 *    calls take it briefly and wake the thread through an eventfd when
 *    they leave work for it (pushes, closes, drops).
 *  - Frames are decoded with the library's pc_frame_parse and written with
 *    pc_frame_encode / pc_frame_encode_payload: this is test equipment and
 *    may share the client's codec (as bench/replay_server.c does).
 *  - Replies queue in a per-connection output buffer; EPOLLOUT is armed
 *    only while that buffer cannot be written out.
 *  - Rules: each command first goes through the rule list (type, skip,
 *    count, action); the default handler runs when no rule applies. An
 *    error reply has the shape the command expects: a Failed lookup
 *    response for LOOKUP / PARTITIONED_METADATA, SEND_ERROR for SEND,
 *    ERROR{request_id} for the rest. PC_FB_DEEP answers a SEND with a
 *    receipt nested thousands deep, written by hand (not pc_frame_encode).
 *  - One consumer at a time receives pushed messages: the one subscribed
 *    most recently. Its permits start at 0 on every SUBSCRIBE, as on a
 *    real broker; queued messages leave only while permits last. Pushed
 *    messages are sent once (no redelivery).
 *  - request_id is found generically: the body sub-message of a
 *    BaseCommand is the field numbered like its type, and its "request_id"
 *    field is looked up by name in the protobuf-c descriptor.
 */
#include "fake_broker.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "core/buf.h"
#include "core/frame.h"
#include "pb_backwards.h"

#define MAX_RULES 32
#define MAX_IDS 32
#define MAX_VACKS 256
#define MSG_LEDGER 7
#define RECEIPT_LEDGER 8
#define MAX_FRAME (PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING)
#define T(x) PULSAR__PROTO__BASE_COMMAND__TYPE__##x

typedef struct rule {
    int type, action, server_error, skip, count;
    char message[256];
    int seen, applied;
} rule_t;

typedef struct fconn {
    struct fconn *next;
    int fd, dead;
    uint32_t ev;
    pc_buf_t in, out;
    uint64_t producers[MAX_IDS], consumers[MAX_IDS];
    int nprod, ncons;
} fconn_t;

typedef struct qmsg {
    struct qmsg *next;
    int64_t entry;
    int spoil;
    size_t len;
    uint8_t data[];
} qmsg_t;

typedef struct vack {
    int64_t entry;
    int why;
} vack_t;

struct pc_fb {
    int lfd, ep, evfd, port;
    char url[64];
    char redirect_url[64]; /* where PC_FB_REDIRECT sends lookups ("": this broker) */
    pthread_t thr;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop, silent, no_pong;
    int hold_until_seek; /* pushed messages wait for a SEEK (pc_fb_set_hold_until_seek) */
    uint32_t partitions; /* what PARTITIONED_METADATA answers (0: not partitioned) */
    int32_t max_message_size; /* what CONNECTED announces (0: the 5 MiB default) */
    int want_close_prod, want_close_cons, want_drop;
    /* topic listing and the topic-list watcher (pc_fb_set_topics) */
    char **topics;
    size_t ntopics;
    int has_topics, offer_watchers;
    fconn_t *watch_conn;     /* where the last WATCH_TOPIC_LIST came from */
    uint64_t watcher_id;
    char update_name[64];    /* a push asked for by pc_fb_topic_update, made by the thread */
    size_t update_copies;
    int update_wrong_id, want_update;
    /* which topic each open consumer is on (pc_fb_open_consumers) */
    struct {
        fconn_t *conn;
        uint64_t id;
        char topic[128];
    } subs[MAX_IDS];
    int nsubs;
    rule_t rules[MAX_RULES];
    int nrules;
    fconn_t *conns;
    /* the consumer that gets pushed messages */
    fconn_t *cur;
    uint64_t cur_consumer;
    int64_t permits;
    qmsg_t *qhead, *qtail;
    int64_t next_entry, next_receipt;
    uint64_t next_producer_name, next_req;
    vack_t vacks[MAX_VACKS];
    int nvacks;
    pc_fb_stats_t st;
};

/* ---------- output ---------- */

static void conn_set_ev(pc_fb_t *fb, fconn_t *c, uint32_t ev) {
    if (c->ev == ev)
        return;
    struct epoll_event x = {.events = ev, .data.ptr = c};
    epoll_ctl(fb->ep, EPOLL_CTL_MOD, c->fd, &x);
    c->ev = ev;
}

static void conn_flush(pc_fb_t *fb, fconn_t *c) {
    while (!c->dead && c->out.len) {
        ssize_t w = send(c->fd, c->out.data, c->out.len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            break;
        if (w <= 0) {
            c->dead = 1;
            return;
        }
        pc_buf_consume(&c->out, (size_t)w);
    }
    conn_set_ev(fb, c, EPOLLIN | (c->out.len ? EPOLLOUT : 0));
}

static void put(fconn_t *c, pc_cmd_t *cmd) {
    if (pc_frame_encode(&c->out, cmd) != PULSARC_OK)
        fprintf(stderr, "fake_broker: cannot encode %s\n", pc_cmd_name(cmd->type));
}

/* ---------- generic replies ---------- */

static int body_u64(const pc_cmd_t *cmd, const char *name, uint64_t *out) {
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(&pulsar__proto__base_command__descriptor, (unsigned)cmd->type);
    if (!fd || fd->type != PROTOBUF_C_TYPE_MESSAGE)
        return 0;
    const ProtobufCMessage *body = *(ProtobufCMessage *const *)((const char *)cmd + fd->offset);
    if (!body)
        return 0;
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(body->descriptor, name);
    if (!f || f->type != PROTOBUF_C_TYPE_UINT64)
        return 0;
    *out = *(const uint64_t *)((const char *)body + f->offset);
    return 1;
}

static void reply_success(fconn_t *c, uint64_t rid) {
    Pulsar__Proto__CommandSuccess ok = PULSAR__PROTO__COMMAND_SUCCESS__INIT;
    ok.request_id = rid;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(SUCCESS);
    cmd.success = &ok;
    put(c, &cmd);
}

static void reply_lookup(pc_fb_t *fb, fconn_t *c, uint64_t rid, int response, int error,
                         const char *msg) {
    Pulsar__Proto__CommandLookupTopicResponse r = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__INIT;
    r.request_id = rid;
    r.has_response = 1;
    r.response = response;
    if (response != PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Failed) {
        r.brokerserviceurl =
            response == PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Redirect && fb->redirect_url[0]
                ? fb->redirect_url
                : fb->url;
        r.has_authoritative = 1;
        r.authoritative = response == PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Connect;
    } else {
        r.has_error = 1;
        r.error = error;
        r.message = (char *)msg;
    }
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(LOOKUP_RESPONSE);
    cmd.lookuptopicresponse = &r;
    put(c, &cmd);
}

static void reply_partitions(fconn_t *c, uint64_t rid, int failed, int error, const char *msg) {
    Pulsar__Proto__CommandPartitionedTopicMetadataResponse r =
        PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__INIT;
    r.request_id = rid;
    r.has_response = 1;
    r.response = failed ? PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__LOOKUP_TYPE__Failed
                        : PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__LOOKUP_TYPE__Success;
    if (failed) {
        r.has_error = 1;
        r.error = error;
        r.message = (char *)msg;
    } else {
        r.has_partitions = 1;
        r.partitions = 0;
    }
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(PARTITIONED_METADATA_RESPONSE);
    cmd.partitionmetadataresponse = &r;
    put(c, &cmd);
}

/* A successful answer with n partitions (any count, for tests of absurd ones). */
static void reply_partition_count(fconn_t *c, uint64_t rid, uint32_t n) {
    Pulsar__Proto__CommandPartitionedTopicMetadataResponse r =
        PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__INIT;
    r.request_id = rid;
    r.has_response = 1;
    r.response = PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__LOOKUP_TYPE__Success;
    r.has_partitions = 1;
    r.partitions = n;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(PARTITIONED_METADATA_RESPONSE);
    cmd.partitionmetadataresponse = &r;
    put(c, &cmd);
}

static void reply_send_error(fconn_t *c, const Pulsar__Proto__CommandSend *s, int error,
                             const char *msg) {
    Pulsar__Proto__CommandSendError e = PULSAR__PROTO__COMMAND_SEND_ERROR__INIT;
    e.producer_id = s->producer_id;
    e.sequence_id = s->sequence_id;
    e.error = error;
    e.message = (char *)msg;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(SEND_ERROR);
    cmd.send_error = &e;
    put(c, &cmd);
}

static void reply_error(pc_fb_t *fb, fconn_t *c, const pc_cmd_t *in, int error, const char *msg) {
    uint64_t rid = 0;
    body_u64(in, "request_id", &rid);
    fb->st.errors_sent++;
    if (in->type == T(LOOKUP)) {
        reply_lookup(fb, c, rid, PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Failed,
                     error, msg);
    } else if (in->type == T(PARTITIONED_METADATA)) {
        reply_partitions(c, rid, 1, error, msg);
    } else if (in->type == T(SEND)) {
        reply_send_error(c, in->send, error, msg);
    } else {
        Pulsar__Proto__CommandError e = PULSAR__PROTO__COMMAND_ERROR__INIT;
        e.request_id = rid;
        e.error = error;
        e.message = (char *)msg;
        pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
        cmd.type = T(ERROR);
        cmd.error = &e;
        put(c, &cmd);
    }
}

/* ---------- pushed messages ---------- */

static uint64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Encodes q as a MESSAGE for the current consumer, spoiled as asked. */
static void encode_message(pc_fb_t *fb, const qmsg_t *q, pc_buf_t *out) {
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    id.ledgerid = MSG_LEDGER;
    id.entryid = (uint64_t)q->entry;
    Pulsar__Proto__CommandMessage m = PULSAR__PROTO__COMMAND_MESSAGE__INIT;
    m.consumer_id = fb->cur_consumer;
    m.message_id = &id;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(MESSAGE);
    cmd.message = &m;
    Pulsar__Proto__MessageMetadata md = PULSAR__PROTO__MESSAGE_METADATA__INIT;
    md.producer_name = "fake-producer";
    md.sequence_id = (uint64_t)q->entry;
    md.publish_time = wall_ms();
    if (q->spoil == PC_FB_UNKNOWN_CODEC || q->spoil == PC_FB_CORRUPT_LZ4) {
        md.has_compression = 1;
        md.compression = q->spoil == PC_FB_UNKNOWN_CODEC ? 99 : PULSAR__PROTO__COMPRESSION_TYPE__LZ4;
        md.has_uncompressed_size = 1;
        md.uncompressed_size = (uint32_t)q->len * 2 + 16;
    }
    if (q->spoil == PC_FB_HUGE_BATCH) {
        md.has_num_messages_in_batch = 1;
        md.num_messages_in_batch = 1000000000;
    }
    size_t start = out->len;
    if (q->spoil == PC_FB_BAD_METADATA) {
        static const uint8_t junk[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01};
        pc_frame_encode_payload_raw(out, &cmd, junk, sizeof junk, q->data, q->len);
    } else {
        pc_frame_encode_payload(out, &cmd, &md, q->data, q->len);
    }
    if (q->spoil == PC_FB_BAD_CHECKSUM) {
        uint32_t cmdlen = pc_rd_u32(out->data + start + 4);
        out->data[start + 8 + cmdlen + 2] ^= 0x5a; /* first CRC byte, after the 0x0e01 magic */
    }
}

/* Queued messages, as permits allow, into the current consumer's output (not written yet). */
static void put_queued(pc_fb_t *fb) {
    while (fb->qhead && fb->permits > 0) {
        qmsg_t *q = fb->qhead;
        fb->qhead = q->next;
        if (!fb->qhead)
            fb->qtail = NULL;
        encode_message(fb, q, &fb->cur->out);
        fb->permits--;
        fb->st.msgs_sent++;
        fb->st.msgs_queued--;
        free(q);
    }
}

/* Sends queued messages while the current consumer has permits. */
static void pump_messages(pc_fb_t *fb) {
    if (!fb->cur || fb->cur->dead || fb->silent || fb->hold_until_seek)
        return;
    put_queued(fb);
    conn_flush(fb, fb->cur);
}

/* SUCCESS; what was held for it goes first, in the same write. */
static void on_seek(pc_fb_t *fb, fconn_t *c, const Pulsar__Proto__CommandSeek *in) {
    if (fb->hold_until_seek && fb->cur == c) {
        fb->hold_until_seek = 0;
        put_queued(fb);
    }
    reply_success(c, in->request_id);
}

/* ---------- default handlers ---------- */

static void on_connect(fconn_t *c, const Pulsar__Proto__CommandConnect *in, int32_t max_message_size,
                       int watchers) {
    Pulsar__Proto__CommandConnected cd = PULSAR__PROTO__COMMAND_CONNECTED__INIT;
    Pulsar__Proto__FeatureFlags ff = PULSAR__PROTO__FEATURE_FLAGS__INIT;
    ff.has_supports_topic_watchers = 1;
    ff.supports_topic_watchers = watchers;
    cd.feature_flags = &ff;
    cd.server_version = "pulsarc-fake-broker";
    cd.has_protocol_version = 1;
    cd.protocol_version = in->has_protocol_version && in->protocol_version < 20 ? in->protocol_version : 20;
    cd.has_max_message_size = 1;
    cd.max_message_size = max_message_size ? max_message_size : PC_DEFAULT_MAX_MESSAGE_SIZE;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(CONNECTED);
    cmd.connected = &cd;
    put(c, &cmd);
}

static void add_id(uint64_t *ids, int *n, uint64_t id) {
    for (int i = 0; i < *n; i++)
        if (ids[i] == id)
            return;
    if (*n < MAX_IDS)
        ids[(*n)++] = id;
}

static void del_id(uint64_t *ids, int *n, uint64_t id) {
    for (int i = 0; i < *n; i++)
        if (ids[i] == id)
            ids[i--] = ids[--(*n)];
}

static void on_producer(pc_fb_t *fb, fconn_t *c, const Pulsar__Proto__CommandProducer *in) {
    char name[64];
    snprintf(name, sizeof name, "fake-%llu", (unsigned long long)++fb->next_producer_name);
    Pulsar__Proto__CommandProducerSuccess ok = PULSAR__PROTO__COMMAND_PRODUCER_SUCCESS__INIT;
    ok.request_id = in->request_id;
    ok.producer_name = in->producer_name && *in->producer_name ? in->producer_name : name;
    ok.has_last_sequence_id = 1;
    ok.last_sequence_id = -1;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(PRODUCER_SUCCESS);
    cmd.producer_success = &ok;
    put(c, &cmd);
    add_id(c->producers, &c->nprod, in->producer_id);
}

static void on_send(pc_fb_t *fb, fconn_t *c, const Pulsar__Proto__CommandSend *in) {
    fb->st.sends += in->has_num_messages ? (uint64_t)in->num_messages : 1;
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    id.ledgerid = RECEIPT_LEDGER;
    id.entryid = (uint64_t)fb->next_receipt++;
    Pulsar__Proto__CommandSendReceipt r = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    r.producer_id = in->producer_id;
    r.sequence_id = in->sequence_id;
    r.message_id = &id;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(SEND_RECEIPT);
    cmd.send_receipt = &r;
    put(c, &cmd);
}

/* Forgets consumer id on conn c (any id: all of c's; c NULL: everyone's). */
static void subs_forget(pc_fb_t *fb, fconn_t *c, uint64_t id, int any_id) {
    for (int i = 0; i < fb->nsubs; i++)
        if (!c || (fb->subs[i].conn == c && (any_id || fb->subs[i].id == id)))
            fb->subs[i--] = fb->subs[--fb->nsubs];
}

static void on_subscribe(pc_fb_t *fb, fconn_t *c, const Pulsar__Proto__CommandSubscribe *in) {
    subs_forget(fb, c, in->consumer_id, 0);
    if (fb->nsubs < MAX_IDS) {
        fb->subs[fb->nsubs].conn = c;
        fb->subs[fb->nsubs].id = in->consumer_id;
        snprintf(fb->subs[fb->nsubs].topic, sizeof fb->subs[0].topic, "%s", in->topic);
        fb->nsubs++;
    }
    add_id(c->consumers, &c->ncons, in->consumer_id);
    fb->cur = c;
    fb->cur_consumer = in->consumer_id;
    fb->permits = 0;
    reply_success(c, in->request_id);
}

static void on_ack(pc_fb_t *fb, const Pulsar__Proto__CommandAck *in) {
    for (size_t i = 0; i < in->n_message_id; i++) {
        if (!in->has_validation_error) {
            fb->st.acked++;
            continue;
        }
        fb->st.validation_acks++;
        fb->st.last_validation_error = (int)in->validation_error;
        if (fb->nvacks < MAX_VACKS)
            fb->vacks[fb->nvacks++] = (vack_t){(int64_t)in->message_id[i]->entryid, (int)in->validation_error};
    }
}

static void on_close_resource(pc_fb_t *fb, fconn_t *c, const pc_cmd_t *cmd) {
    uint64_t rid = 0, id = 0;
    body_u64(cmd, "request_id", &rid);
    if (cmd->type == T(CLOSE_PRODUCER) && body_u64(cmd, "producer_id", &id)) {
        del_id(c->producers, &c->nprod, id);
    } else if (body_u64(cmd, "consumer_id", &id)) {
        del_id(c->consumers, &c->ncons, id);
        subs_forget(fb, c, id, 0);
        if (fb->cur == c && fb->cur_consumer == id)
            fb->cur = NULL;
    }
    reply_success(c, rid);
}

static void on_pong_wanted(pc_fb_t *fb, fconn_t *c) {
    if (fb->no_pong)
        return;
    Pulsar__Proto__CommandPong pong = PULSAR__PROTO__COMMAND_PONG__INIT;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(PONG);
    cmd.pong = &pong;
    put(c, &cmd);
}

static void reply_topics(pc_fb_t *fb, fconn_t *c, uint64_t rid) {
    Pulsar__Proto__CommandGetTopicsOfNamespaceResponse r =
        PULSAR__PROTO__COMMAND_GET_TOPICS_OF_NAMESPACE_RESPONSE__INIT;
    r.request_id = rid;
    r.topics = fb->topics;
    r.n_topics = fb->ntopics;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(GET_TOPICS_OF_NAMESPACE_RESPONSE);
    cmd.gettopicsofnamespaceresponse = &r;
    put(c, &cmd);
}

static void on_watch(pc_fb_t *fb, fconn_t *c, const Pulsar__Proto__CommandWatchTopicList *in) {
    fb->watch_conn = c;
    fb->watcher_id = in->watcher_id;
    Pulsar__Proto__CommandWatchTopicListSuccess ok = PULSAR__PROTO__COMMAND_WATCH_TOPIC_LIST_SUCCESS__INIT;
    ok.request_id = in->request_id;
    ok.watcher_id = in->watcher_id;
    ok.topic = fb->topics;
    ok.n_topic = fb->ntopics;
    ok.topics_hash = "0";
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(WATCH_TOPIC_LIST_SUCCESS);
    cmd.watchtopiclistsuccess = &ok;
    put(c, &cmd);
}

/* WATCH_TOPIC_UPDATE naming update_copies new topics to the last watcher (or another id). */
static void push_topic_update(pc_fb_t *fb) {
    fconn_t *c = fb->watch_conn;
    size_t n = fb->update_copies;
    char **names = calloc(n ? n : 1, sizeof *names);
    size_t made = 0;
    while (names && made < n) {
        char one[96];
        if (n == 1)
            snprintf(one, sizeof one, "%s", fb->update_name);
        else
            snprintf(one, sizeof one, "%s%zu", fb->update_name, made);
        if (!(names[made] = strdup(one)))
            break;
        made++;
    }
    Pulsar__Proto__CommandWatchTopicUpdate u = PULSAR__PROTO__COMMAND_WATCH_TOPIC_UPDATE__INIT;
    u.watcher_id = fb->watcher_id + (fb->update_wrong_id ? 1000 : 0);
    u.new_topics = names;
    u.n_new_topics = made;
    u.topics_hash = "1";
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = T(WATCH_TOPIC_UPDATE);
    cmd.watchtopicupdate = &u;
    if (c && !c->dead) {
        put(c, &cmd);
        conn_flush(fb, c);
    }
    for (size_t i = 0; i < made; i++)
        free(names[i]);
    free(names);
}

static void handle_default(pc_fb_t *fb, fconn_t *c, const pc_cmd_t *cmd) {
    uint64_t rid = 0;
    switch (cmd->type) {
    case T(CONNECT): on_connect(c, cmd->connect, fb->max_message_size, fb->offer_watchers); break;
    case T(GET_TOPICS_OF_NAMESPACE):
        if (fb->has_topics)
            reply_topics(fb, c, cmd->gettopicsofnamespace->request_id);
        else
            reply_success(c, cmd->gettopicsofnamespace->request_id);
        break;
    case T(WATCH_TOPIC_LIST):
        if (fb->offer_watchers == 1)
            on_watch(fb, c, cmd->watchtopiclist);
        else
            reply_success(c, cmd->watchtopiclist->request_id);
        break;
    case T(PARTITIONED_METADATA): reply_partition_count(c, cmd->partitionmetadata->request_id, fb->partitions); break;
    case T(LOOKUP):
        reply_lookup(fb, c, cmd->lookuptopic->request_id,
                     PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Connect, 0, NULL);
        break;
    case T(PRODUCER): on_producer(fb, c, cmd->producer); break;
    case T(SEND): on_send(fb, c, cmd->send); break;
    case T(SUBSCRIBE): on_subscribe(fb, c, cmd->subscribe); break;
    case T(FLOW):
        fb->st.permits += cmd->flow->messagepermits;
        if (fb->cur == c && fb->cur_consumer == cmd->flow->consumer_id)
            fb->permits += cmd->flow->messagepermits;
        break;
    case T(ACK): on_ack(fb, cmd->ack); break;
    case T(SEEK): on_seek(fb, c, cmd->seek); break;
    case T(PING): on_pong_wanted(fb, c); break;
    case T(CLOSE_PRODUCER):
    case T(CLOSE_CONSUMER):
    case T(UNSUBSCRIBE): on_close_resource(fb, c, cmd); break;
    default:
        if (body_u64(cmd, "request_id", &rid))
            reply_success(c, rid);
        break;
    }
}

/* ---------- hostile replies ---------- */

/*
 * SEND_RECEIPT for `in` whose message id holds an id `depth` levels deep,
 * each a valid MessageIdData: what protobuf's definitions allow and an
 * unbounded recursive unpack cannot survive. Encoded by hand: protobuf-c's
 * pack recurses too.
 */
static void reply_deep_receipt(pc_fb_t *fb, fconn_t *c, const Pulsar__Proto__CommandSend *in, int depth) {
    size_t cap = (size_t)(depth > 0 ? depth : 1) * 16 + 64, end = cap;
    pb_backwards_t b = {malloc(cap), cap, 0, 0};
    if (!b.buf)
        return;
    for (int i = 0; i < depth; i++) {
        if (i)
            pbb_wrap(&b, 7, end - b.pos); /* first_chunk_message_id */
        pbb_uint(&b, 2, (uint64_t)fb->next_receipt); /* entryid */
        pbb_uint(&b, 1, RECEIPT_LEDGER);             /* ledgerid */
    }
    pbb_wrap(&b, 3, end - b.pos); /* CommandSendReceipt.message_id */
    pbb_uint(&b, 2, in->sequence_id);
    pbb_uint(&b, 1, in->producer_id);
    pbb_wrap(&b, T(SEND_RECEIPT), end - b.pos); /* BaseCommand.send_receipt */
    pbb_uint(&b, 1, T(SEND_RECEIPT));
    size_t cmdlen = end - b.pos;
    if (!b.full && pc_buf_reserve(&c->out, 8 + cmdlen) == PULSARC_OK) {
        pc_buf_put_u32(&c->out, (uint32_t)(4 + cmdlen));
        pc_buf_put_u32(&c->out, (uint32_t)cmdlen);
        pc_buf_append(&c->out, b.buf + b.pos, cmdlen);
    }
    free(b.buf);
}

/* ---------- rules ---------- */

/* A well-sized frame whose command bytes are not a BaseCommand. */
static void put_garbage(fconn_t *c) {
    static const uint8_t junk[] = {0, 0, 0, 12, 0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff};
    pc_buf_append(&c->out, junk, sizeof junk);
}

/* The rule that takes this command, or NULL. Counts what it sees. */
static rule_t *match_rule(pc_fb_t *fb, int type) {
    for (int i = 0; i < fb->nrules; i++) {
        rule_t *r = &fb->rules[i];
        if (r->type != type)
            continue;
        if (r->seen++ < r->skip)
            return NULL;
        if (r->count >= 0 && r->applied >= r->count)
            continue;
        r->applied++;
        return r;
    }
    return NULL;
}

static void dispatch(pc_fb_t *fb, fconn_t *c, const pc_cmd_t *cmd) {
    if (cmd->type >= 0 && cmd->type < PC_FB_MAX_TYPE)
        fb->st.cmds[cmd->type]++;
    if (fb->silent)
        return;
    rule_t *r = match_rule(fb, cmd->type);
    if (!r) {
        handle_default(fb, c, cmd);
    } else if (r->action == PC_FB_ERROR) {
        reply_error(fb, c, cmd, r->server_error, r->message);
    } else if (r->action == PC_FB_REDIRECT && cmd->type == T(LOOKUP)) {
        reply_lookup(fb, c, cmd->lookuptopic->request_id,
                     PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Redirect, 0, NULL);
    } else if (r->action == PC_FB_DEEP && cmd->type == T(SEND)) {
        reply_deep_receipt(fb, c, cmd->send, r->server_error);
    } else if (r->action == PC_FB_CLOSE) {
        c->dead = 1; /* reap() closes it, unanswered */
    } else if (r->action == PC_FB_GARBAGE) {
        put_garbage(c);
    } else if (r->action == PC_FB_REPLY_CLOSE) {
        handle_default(fb, c, cmd);
        conn_flush(fb, c); /* the reply leaves before the close */
        c->dead = 1;
    } else if (cmd->type == T(PRODUCER)) { /* PC_FB_IGNORE */
        /* Unanswered, yet open as far as broker-initiated closes go: a real
         * broker's unload reaches a producer still being created too. */
        add_id(c->producers, &c->nprod, cmd->producer->producer_id);
    } else if (cmd->type == T(SUBSCRIBE)) {
        add_id(c->consumers, &c->ncons, cmd->subscribe->consumer_id);
    } /* other PC_FB_IGNORE: nothing */
}

/* ---------- connections ---------- */

static void conn_close(pc_fb_t *fb, fconn_t *c, int reset) {
    if (c->fd < 0)
        return;
    if (reset) {
        struct linger lg = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    epoll_ctl(fb->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->dead = 1;
    if (fb->cur == c)
        fb->cur = NULL;
    if (fb->watch_conn == c)
        fb->watch_conn = NULL;
    subs_forget(fb, c, 0, 1);
    fb->st.conns_closed++;
}

static void reap(pc_fb_t *fb) {
    fconn_t **pp = &fb->conns;
    while (*pp) {
        fconn_t *c = *pp;
        if (c->dead) {
            conn_close(fb, c, 0);
            *pp = c->next;
            pc_buf_free(&c->in);
            pc_buf_free(&c->out);
            free(c);
        } else {
            pp = &c->next;
        }
    }
}

static void accept_all(pc_fb_t *fb) {
    for (;;) {
        int fd = accept4(fb->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        fconn_t *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fd = fd;
        c->ev = EPOLLIN;
        pc_buf_init(&c->in, MAX_FRAME + 8 + 65536);
        pc_buf_init(&c->out, 0);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(fb->ep, EPOLL_CTL_ADD, fd, &ev);
        c->next = fb->conns;
        fb->conns = c;
        fb->st.conns++;
    }
}

/* Handles every complete frame; a broken stream closes the connection. */
static void handle_input(pc_fb_t *fb, fconn_t *c) {
    size_t off = 0;
    while (!c->dead && off < c->in.len) {
        pc_frame_t f;
        char err[256];
        long n = pc_frame_parse(c->in.data + off, c->in.len - off, MAX_FRAME, &f, err, sizeof err);
        if (n == 0)
            break;
        if (n < 0) {
            fprintf(stderr, "fake_broker: bad frame from client: %s\n", err);
            c->dead = 1;
            break;
        }
        dispatch(fb, c, f.cmd);
        pc_frame_clear(&f);
        off += (size_t)n;
    }
    pc_buf_consume(&c->in, off);
}

static void read_input(pc_fb_t *fb, fconn_t *c) {
    for (;;) {
        if (pc_buf_reserve(&c->in, 65536)) {
            c->dead = 1;
            return;
        }
        ssize_t n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len, MSG_DONTWAIT);
        if (n > 0) {
            c->in.len += (size_t)n;
            handle_input(fb, c);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        c->dead = 1;
        return;
    }
}

/* ---------- broker-initiated events ---------- */

static void close_resources(pc_fb_t *fb, int producers) {
    for (fconn_t *c = fb->conns; c; c = c->next) {
        int n = producers ? c->nprod : c->ncons;
        for (int i = 0; i < n && !c->dead; i++) {
            pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
            Pulsar__Proto__CommandCloseProducer cp = PULSAR__PROTO__COMMAND_CLOSE_PRODUCER__INIT;
            Pulsar__Proto__CommandCloseConsumer cc = PULSAR__PROTO__COMMAND_CLOSE_CONSUMER__INIT;
            if (producers) {
                cp.producer_id = c->producers[i];
                cp.request_id = ++fb->next_req + (1ull << 40);
                cmd.type = T(CLOSE_PRODUCER);
                cmd.close_producer = &cp;
            } else {
                cc.consumer_id = c->consumers[i];
                cc.request_id = ++fb->next_req + (1ull << 40);
                cmd.type = T(CLOSE_CONSUMER);
                cmd.close_consumer = &cc;
                if (fb->cur == c && fb->cur_consumer == cc.consumer_id)
                    fb->cur = NULL;
            }
            put(c, &cmd);
        }
        if (producers) {
            c->nprod = 0;
        } else {
            c->ncons = 0;
            subs_forget(fb, c, 0, 1);
        }
        conn_flush(fb, c);
    }
}

static void run_requests(pc_fb_t *fb) {
    if (fb->want_close_prod)
        close_resources(fb, 1);
    if (fb->want_close_cons)
        close_resources(fb, 0);
    if (fb->want_drop)
        for (fconn_t *c = fb->conns; c; c = c->next)
            conn_close(fb, c, 1);
    if (fb->want_update)
        push_topic_update(fb);
    fb->want_close_prod = fb->want_close_cons = fb->want_drop = fb->want_update = 0;
    pump_messages(fb);
}

/* ---------- thread ---------- */

static void on_event(pc_fb_t *fb, void *ptr, uint32_t events) {
    if (ptr == &fb->lfd) {
        accept_all(fb);
        return;
    }
    if (ptr == &fb->evfd) {
        uint64_t v;
        if (read(fb->evfd, &v, sizeof v) < 0) { /* spurious wake-up */ }
        return;
    }
    fconn_t *c = ptr;
    if (c->dead)
        return;
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        read_input(fb, c);
    if (!c->dead)
        conn_flush(fb, c);
}

static void *fb_main(void *arg) {
    pc_fb_t *fb = arg;
    struct epoll_event evs[32];
    pthread_mutex_lock(&fb->lock);
    while (!fb->stop) {
        pthread_mutex_unlock(&fb->lock);
        int n = epoll_wait(fb->ep, evs, 32, 100);
        pthread_mutex_lock(&fb->lock);
        for (int i = 0; i < n; i++)
            on_event(fb, evs[i].data.ptr, evs[i].events);
        run_requests(fb);
        for (fconn_t *c = fb->conns; c; c = c->next)
            if (!c->dead && c->out.len)
                conn_flush(fb, c);
        reap(fb);
        pthread_cond_broadcast(&fb->cond);
    }
    for (fconn_t *c = fb->conns; c; c = c->next)
        c->dead = 1;
    reap(fb);
    pthread_mutex_unlock(&fb->lock);
    return NULL;
}

/* ---------- API ---------- */

static void wake(pc_fb_t *fb) {
    uint64_t one = 1;
    if (write(fb->evfd, &one, sizeof one) < 0) { /* counter full: already awake */ }
}

static int listen_loopback(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 64) ||
        getsockname(fd, (struct sockaddr *)&a, &al)) {
        perror("fake_broker: listen on 127.0.0.1");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

pc_fb_t *pc_fb_new(void) {
    pc_fb_t *fb = calloc(1, sizeof *fb);
    if (!fb)
        return NULL;
    pthread_mutex_init(&fb->lock, NULL);
    pthread_cond_init(&fb->cond, NULL);
    fb->st.last_validation_error = -1;
    fb->lfd = listen_loopback(&fb->port);
    fb->ep = epoll_create1(EPOLL_CLOEXEC);
    fb->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    snprintf(fb->url, sizeof fb->url, "pulsar://127.0.0.1:%d", fb->port);
    struct epoll_event e1 = {.events = EPOLLIN, .data.ptr = &fb->lfd};
    struct epoll_event e2 = {.events = EPOLLIN, .data.ptr = &fb->evfd};
    if (fb->lfd < 0 || fb->ep < 0 || fb->evfd < 0 || epoll_ctl(fb->ep, EPOLL_CTL_ADD, fb->lfd, &e1) ||
        epoll_ctl(fb->ep, EPOLL_CTL_ADD, fb->evfd, &e2) || pthread_create(&fb->thr, NULL, fb_main, fb)) {
        fb->thr = 0;
        pc_fb_destroy(fb);
        return NULL;
    }
    return fb;
}

int pc_fb_port(const pc_fb_t *fb) { return fb->port; }
const char *pc_fb_url(const pc_fb_t *fb) { return fb->url; }

int pc_fb_rule(pc_fb_t *fb, int type, pc_fb_action_t action, int server_error, const char *message,
               int skip, int count) {
    pthread_mutex_lock(&fb->lock);
    int i = fb->nrules < MAX_RULES ? fb->nrules++ : -1;
    if (i >= 0) {
        rule_t *r = &fb->rules[i];
        memset(r, 0, sizeof *r);
        r->type = type;
        r->action = action;
        r->server_error = server_error;
        r->skip = skip;
        r->count = count;
        snprintf(r->message, sizeof r->message, "%s", message ? message : "");
    }
    pthread_mutex_unlock(&fb->lock);
    return i;
}

void pc_fb_clear_rules(pc_fb_t *fb) {
    pthread_mutex_lock(&fb->lock);
    fb->nrules = 0;
    pthread_mutex_unlock(&fb->lock);
}

static void set_flag(pc_fb_t *fb, int *flag, int v) {
    pthread_mutex_lock(&fb->lock);
    *flag = v;
    pthread_mutex_unlock(&fb->lock);
    wake(fb);
}

void pc_fb_set_silent(pc_fb_t *fb, int on) { set_flag(fb, &fb->silent, on); }
void pc_fb_set_no_pong(pc_fb_t *fb, int on) { set_flag(fb, &fb->no_pong, on); }
void pc_fb_set_hold_until_seek(pc_fb_t *fb, int on) { set_flag(fb, &fb->hold_until_seek, on); }
void pc_fb_set_max_message_size(pc_fb_t *fb, int32_t n) {
    pthread_mutex_lock(&fb->lock);
    fb->max_message_size = n;
    pthread_mutex_unlock(&fb->lock);
}
void pc_fb_set_redirect_url(pc_fb_t *fb, const char *url) {
    pthread_mutex_lock(&fb->lock);
    snprintf(fb->redirect_url, sizeof fb->redirect_url, "%s", url ? url : "");
    pthread_mutex_unlock(&fb->lock);
}
void pc_fb_set_partitions(pc_fb_t *fb, uint32_t n) {
    pthread_mutex_lock(&fb->lock);
    fb->partitions = n;
    pthread_mutex_unlock(&fb->lock);
}
void pc_fb_set_topics(pc_fb_t *fb, const char *const *topics, size_t n, int offer_watchers) {
    pthread_mutex_lock(&fb->lock);
    for (size_t i = 0; i < fb->ntopics; i++)
        free(fb->topics[i]);
    free(fb->topics);
    fb->topics = calloc(n ? n : 1, sizeof *fb->topics);
    fb->ntopics = 0;
    for (size_t i = 0; fb->topics && i < n; i++)
        if ((fb->topics[fb->ntopics] = strdup(topics[i])))
            fb->ntopics++;
    fb->has_topics = 1;
    fb->offer_watchers = offer_watchers;
    pthread_mutex_unlock(&fb->lock);
}
void pc_fb_topic_update(pc_fb_t *fb, const char *name, size_t copies, int wrong_id) {
    pthread_mutex_lock(&fb->lock);
    snprintf(fb->update_name, sizeof fb->update_name, "%s", name);
    fb->update_copies = copies;
    fb->update_wrong_id = wrong_id;
    fb->want_update = 1;
    pthread_mutex_unlock(&fb->lock);
    wake(fb);
}
int pc_fb_open_consumers(pc_fb_t *fb, const char *topic) {
    pthread_mutex_lock(&fb->lock);
    int n = 0;
    for (int i = 0; i < fb->nsubs; i++)
        n += strcmp(fb->subs[i].topic, topic) == 0;
    pthread_mutex_unlock(&fb->lock);
    return n;
}
void pc_fb_close_producers(pc_fb_t *fb) { set_flag(fb, &fb->want_close_prod, 1); }
void pc_fb_close_consumers(pc_fb_t *fb) { set_flag(fb, &fb->want_close_cons, 1); }
void pc_fb_drop_connections(pc_fb_t *fb) { set_flag(fb, &fb->want_drop, 1); }

int64_t pc_fb_push(pc_fb_t *fb, const void *payload, size_t len, pc_fb_spoil_t spoil) {
    qmsg_t *q = malloc(sizeof *q + len);
    if (!q)
        return -1;
    q->next = NULL;
    q->spoil = spoil;
    q->len = len;
    if (len)
        memcpy(q->data, payload, len);
    pthread_mutex_lock(&fb->lock);
    q->entry = fb->next_entry++;
    if (fb->qtail)
        fb->qtail->next = q;
    else
        fb->qhead = q;
    fb->qtail = q;
    fb->st.msgs_queued++;
    int64_t entry = q->entry;
    pthread_mutex_unlock(&fb->lock);
    wake(fb);
    return entry;
}

void pc_fb_stats(pc_fb_t *fb, pc_fb_stats_t *out) {
    pthread_mutex_lock(&fb->lock);
    *out = fb->st;
    pthread_mutex_unlock(&fb->lock);
}

int pc_fb_validation_acked(pc_fb_t *fb, int64_t entry, int why) {
    pthread_mutex_lock(&fb->lock);
    int found = 0;
    for (int i = 0; i < fb->nvacks && !found; i++)
        found = fb->vacks[i].entry == entry && (why < 0 || fb->vacks[i].why == why);
    pthread_mutex_unlock(&fb->lock);
    return found;
}

int pc_fb_wait_cmds(pc_fb_t *fb, int type, uint64_t n, int timeout_ms) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&fb->lock);
    int rc = 0;
    while (!(type >= 0 && type < PC_FB_MAX_TYPE && fb->st.cmds[type] >= n) && rc == 0)
        rc = pthread_cond_timedwait(&fb->cond, &fb->lock, &dl);
    int ok = type >= 0 && type < PC_FB_MAX_TYPE && fb->st.cmds[type] >= n;
    pthread_mutex_unlock(&fb->lock);
    return ok;
}

void pc_fb_destroy(pc_fb_t *fb) {
    if (!fb)
        return;
    pthread_mutex_lock(&fb->lock);
    fb->stop = 1;
    pthread_mutex_unlock(&fb->lock);
    if (fb->thr) {
        wake(fb);
        pthread_join(fb->thr, NULL);
    } else {
        for (fconn_t *c = fb->conns; c; c = c->next)
            c->dead = 1;
        reap(fb);
    }
    while (fb->qhead) {
        qmsg_t *q = fb->qhead;
        fb->qhead = q->next;
        free(q);
    }
    for (size_t i = 0; i < fb->ntopics; i++)
        free(fb->topics[i]);
    free(fb->topics);
    if (fb->lfd > 0)
        close(fb->lfd);
    if (fb->ep > 0)
        close(fb->ep);
    if (fb->evfd > 0)
        close(fb->evfd);
    pthread_mutex_destroy(&fb->lock);
    pthread_cond_destroy(&fb->cond);
    free(fb);
}
