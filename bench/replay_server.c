/*
 * replay_server — a broker-free Pulsar endpoint on 127.0.0.1 that streams a
 * pre-encoded corpus as fast as FLOW permits allow, so the client under
 * test is the bottleneck.
 *
 * Design notes
 *  - One thread, one epoll set, non-blocking sockets, level-triggered.
 *    EPOLLOUT is armed only while there is something to send and the last
 *    send() would block (or the per-wake-up send budget ran out).
 *  - Protocol: just enough for a consumer. CONNECT -> CONNECTED
 *    (max_message_size 5 MiB); PARTITIONED_METADATA -> 0 partitions;
 *    LOOKUP -> Connect to ourselves, authoritative; SUBSCRIBE,
 *    CLOSE_CONSUMER, UNSUBSCRIBE -> SUCCESS; PING -> PONG; FLOW adds
 *    permits; ACK and REDELIVER are counted. Anything else is counted and
 *    ignored. Incoming frames go through the library's pc_frame_parse and
 *    replies through pc_frame_encode: the server is test equipment and may
 *    share the client's codec.
 *  - Data path: the corpus ring (bench/corpus.c) is built once. A
 *    subscribing connection gets a private copy (ids are patched in place,
 *    and two connections must not patch each other's bytes in flight). A
 *    send "window" is a run of consecutive ring frames, never wrapping,
 *    at most SEND_WINDOW bytes. Per frame, the only work is writing three
 *    10-byte varints (consumer id, ledger, entry) and permit accounting:
 *    O(1), no encoding, no CRC. A frame is patched only when it enters a
 *    window and the next window starts only after the previous one was
 *    fully accepted by the kernel, so bytes in flight are never touched.
 *  - Permits are in messages. A batch entry of k messages consumes k
 *    permits; like the broker we send while permits > 0 and may overshoot
 *    with the last batch (permits go negative and later FLOWs repay it).
 *  - Ids: one ledger, entry ids advance globally from 0 for the life of
 *    the process (across connections and resubscribes), so acks and
 *    redeliveries name distinct positions.
 *  - Control replies queue in a per-connection buffer and go out between
 *    windows, so they never split a data frame.
 *  - --messages N stops streaming once N messages were sent in total and
 *    keeps every connection open. SIGINT/SIGTERM print the stats and exit.
 *  - Producers too, so a producer's own cost can be measured without a
 *    broker's: PRODUCER -> PRODUCER_SUCCESS (a generated name, no earlier
 *    sequence id), every SEND -> SEND_RECEIPT at once (same sequence ids,
 *    the next entry id), CLOSE_PRODUCER -> SUCCESS. Payloads are not
 *    looked at; entries and messages received are counted.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <arpa/inet.h>

#include "PulsarApi.pb-c.h"
#include "core/buf.h"
#include "core/frame.h"
#include "corpus.h"

#define SEND_WINDOW (512 * 1024) /* bytes handed to one send() at most */
#define SENDS_PER_WAKE 32        /* then look at input again */
#define READ_CHUNK (64 * 1024)
#define LEDGER_ID 4242
#define SERVER_VERSION "pulsarc-replay-0.1"

typedef struct conn {
    int fd;
    int want_out; /* EPOLLOUT currently armed */
    pc_buf_t in, ctl;
    size_t ctl_off;
    /* streaming */
    int active;
    uint64_t consumer_id;
    int64_t permits;
    uint8_t *ring; /* private copy of the corpus ring, or NULL */
    size_t next_frame;
    const uint8_t *wptr; /* unsent part of the current window */
    size_t wleft;
} conn_t;

typedef struct stats {
    uint64_t conns, frames, msgs, bytes, sends, eagain;
    uint64_t flows, permits, ack_cmds, acked_ids, ack_rejects, redeliver, pings, other;
    uint64_t producers, sent_entries, sent_msgs;
    double first_send, last_send;
} stats_t;

typedef struct server {
    int ep, lfd, port;
    uint64_t limit; /* 0: no limit */
    uint64_t next_entry;
    bc_ring_t ring;
    stats_t st;
    char url[64];
    struct rusage ru0;
    double t0;
} server_t;

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig) {
    (void)sig;
    stop_flag = 1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---------- connections ---------- */

static void conn_free(server_t *s, conn_t *c) {
    epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    pc_buf_free(&c->in);
    pc_buf_free(&c->ctl);
    free(c->ring);
    free(c);
}

static void set_out(server_t *s, conn_t *c, int on) {
    if (c->want_out == on)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_out = on;
}

static void accept_conns(server_t *s) {
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn_t *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        pc_buf_init(&c->in, PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING + 8);
        pc_buf_init(&c->ctl, 0);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev);
        s->st.conns++;
    }
}

/* ---------- replies ---------- */

static void reply(conn_t *c, pc_cmd_t *cmd) {
    if (pc_frame_encode(&c->ctl, cmd) != PULSARC_OK)
        fprintf(stderr, "replay: cannot encode %s\n", pc_cmd_name(cmd->type));
}

static void reply_success(conn_t *c, uint64_t request_id) {
    Pulsar__Proto__CommandSuccess ok = PULSAR__PROTO__COMMAND_SUCCESS__INIT;
    ok.request_id = request_id;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SUCCESS;
    cmd.success = &ok;
    reply(c, &cmd);
}

static void on_connect(conn_t *c, const Pulsar__Proto__CommandConnect *in) {
    Pulsar__Proto__CommandConnected cd = PULSAR__PROTO__COMMAND_CONNECTED__INIT;
    cd.server_version = SERVER_VERSION;
    cd.has_protocol_version = 1;
    cd.protocol_version = in->has_protocol_version && in->protocol_version < 21 ? in->protocol_version : 21;
    cd.has_max_message_size = 1;
    cd.max_message_size = PC_DEFAULT_MAX_MESSAGE_SIZE;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECTED;
    cmd.connected = &cd;
    reply(c, &cmd);
}

static void on_partitions(conn_t *c, const Pulsar__Proto__CommandPartitionedTopicMetadata *in) {
    Pulsar__Proto__CommandPartitionedTopicMetadataResponse r =
        PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__INIT;
    r.request_id = in->request_id;
    r.has_partitions = 1;
    r.partitions = 0;
    r.has_response = 1;
    r.response = PULSAR__PROTO__COMMAND_PARTITIONED_TOPIC_METADATA_RESPONSE__LOOKUP_TYPE__Success;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA_RESPONSE;
    cmd.partitionmetadataresponse = &r;
    reply(c, &cmd);
}

static void on_lookup(server_t *s, conn_t *c, const Pulsar__Proto__CommandLookupTopic *in) {
    Pulsar__Proto__CommandLookupTopicResponse r = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__INIT;
    r.request_id = in->request_id;
    r.brokerserviceurl = s->url;
    r.has_response = 1;
    r.response = PULSAR__PROTO__COMMAND_LOOKUP_TOPIC_RESPONSE__LOOKUP_TYPE__Connect;
    r.has_authoritative = 1;
    r.authoritative = 1;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE;
    cmd.lookuptopicresponse = &r;
    reply(c, &cmd);
}

static void on_ping(conn_t *c) {
    Pulsar__Proto__CommandPong pong = PULSAR__PROTO__COMMAND_PONG__INIT;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PONG;
    cmd.pong = &pong;
    reply(c, &cmd);
}

/* ---------- consumers ---------- */

static void on_subscribe(server_t *s, conn_t *c, const Pulsar__Proto__CommandSubscribe *in) {
    if (c->active && c->consumer_id != in->consumer_id)
        fprintf(stderr, "replay: connection replaces consumer %llu by %llu (one per connection)\n",
                (unsigned long long)c->consumer_id, (unsigned long long)in->consumer_id);
    if (!c->ring && (c->ring = malloc(s->ring.len)) != NULL)
        memcpy(c->ring, s->ring.data, s->ring.len);
    if (!c->ring) {
        fprintf(stderr, "replay: out of memory for a ring copy\n");
        return;
    }
    c->active = 1;
    c->consumer_id = in->consumer_id;
    c->permits = 0;
    reply_success(c, in->request_id);
}

static void on_close_consumer(conn_t *c, uint64_t consumer_id, uint64_t request_id) {
    if (c->active && c->consumer_id == consumer_id) {
        c->active = 0;
        c->permits = 0;
    }
    reply_success(c, request_id);
}

static void on_flow(server_t *s, conn_t *c, const Pulsar__Proto__CommandFlow *in) {
    s->st.flows++;
    s->st.permits += in->messagepermits;
    if (c->active && c->consumer_id == in->consumer_id)
        c->permits += in->messagepermits;
}

static void on_ack(server_t *s, const Pulsar__Proto__CommandAck *in) {
    s->st.ack_cmds++;
    s->st.acked_ids += in->n_message_id;
    if (in->has_validation_error)
        s->st.ack_rejects++;
}

/* ---------- producers ---------- */

static void on_producer(server_t *s, conn_t *c, const Pulsar__Proto__CommandProducer *in) {
    char name[64];
    snprintf(name, sizeof name, "replay-%llu", (unsigned long long)++s->st.producers);
    Pulsar__Proto__CommandProducerSuccess ok = PULSAR__PROTO__COMMAND_PRODUCER_SUCCESS__INIT;
    ok.request_id = in->request_id;
    ok.producer_name = in->producer_name && *in->producer_name ? in->producer_name : name;
    ok.has_last_sequence_id = 1;
    ok.last_sequence_id = -1;
    ok.has_schema_version = 1; /* empty, as a broker answers for BYTES; Java requires the field */
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER_SUCCESS;
    cmd.producer_success = &ok;
    reply(c, &cmd);
}

static void on_send(server_t *s, conn_t *c, const Pulsar__Proto__CommandSend *in) {
    Pulsar__Proto__MessageIdData id = PULSAR__PROTO__MESSAGE_ID_DATA__INIT;
    id.ledgerid = LEDGER_ID;
    id.entryid = s->next_entry++;
    Pulsar__Proto__CommandSendReceipt r = PULSAR__PROTO__COMMAND_SEND_RECEIPT__INIT;
    r.producer_id = in->producer_id;
    r.sequence_id = in->sequence_id;
    r.message_id = &id;
    if (in->has_highest_sequence_id) {
        r.has_highest_sequence_id = 1;
        r.highest_sequence_id = in->highest_sequence_id;
    }
    s->st.sent_entries++;
    s->st.sent_msgs += in->has_num_messages ? (uint64_t)in->num_messages : 1;
    pc_cmd_t cmd = PULSAR__PROTO__BASE_COMMAND__INIT;
    cmd.type = PULSAR__PROTO__BASE_COMMAND__TYPE__SEND_RECEIPT;
    cmd.send_receipt = &r;
    reply(c, &cmd);
}

static void dispatch(server_t *s, conn_t *c, const pc_cmd_t *cmd) {
    switch (cmd->type) {
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CONNECT: on_connect(c, cmd->connect); break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PARTITIONED_METADATA: on_partitions(c, cmd->partitionmetadata); break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP: on_lookup(s, c, cmd->lookuptopic); break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SUBSCRIBE: on_subscribe(s, c, cmd->subscribe); break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__FLOW: on_flow(s, c, cmd->flow); break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__ACK: on_ack(s, cmd->ack); break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PING: s->st.pings++; on_ping(c); break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PONG: break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_CONSUMER:
        on_close_consumer(c, cmd->close_consumer->consumer_id, cmd->close_consumer->request_id);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__UNSUBSCRIBE:
        on_close_consumer(c, cmd->unsubscribe->consumer_id, cmd->unsubscribe->request_id);
        break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__REDELIVER_UNACKNOWLEDGED_MESSAGES: s->st.redeliver++; break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__PRODUCER: on_producer(s, c, cmd->producer); break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__SEND: on_send(s, c, cmd->send); break;
    case PULSAR__PROTO__BASE_COMMAND__TYPE__CLOSE_PRODUCER:
        reply_success(c, cmd->close_producer->request_id);
        break;
    default:
        if (s->st.other++ < 5)
            fprintf(stderr, "replay: ignoring %s\n", pc_cmd_name(cmd->type));
        break;
    }
}

/* Parses and handles every complete frame in c->in; -1 on a broken stream. */
static int handle_input(server_t *s, conn_t *c) {
    size_t off = 0;
    int rc = 0;
    while (off < c->in.len) {
        pc_frame_t f;
        char err[256];
        long n = pc_frame_parse(c->in.data + off, c->in.len - off,
                                PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING, &f, err, sizeof err);
        if (n == 0)
            break;
        if (n < 0) {
            fprintf(stderr, "replay: bad frame from client: %s\n", err);
            rc = -1;
            break;
        }
        dispatch(s, c, f.cmd);
        pc_frame_clear(&f);
        off += (size_t)n;
    }
    pc_buf_consume(&c->in, off);
    return rc;
}

/* Reads what is there; -1 when the peer closed or the stream broke. */
static int read_input(server_t *s, conn_t *c) {
    for (;;) {
        if (pc_buf_reserve(&c->in, READ_CHUNK))
            return -1;
        ssize_t n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len, 0);
        if (n > 0) {
            c->in.len += (size_t)n;
            if (handle_input(s, c))
                return -1;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return -1;
    }
}

/* ---------- data path ---------- */

/* Starts the next window of frames if permits and the limit allow it. */
static void fill_window(server_t *s, conn_t *c) {
    if (!c->active || !c->ring || c->permits <= 0 || (s->limit && s->st.msgs >= s->limit))
        return;
    const bc_frame_t *fr = s->ring.frames;
    size_t i = c->next_frame, start = i;
    size_t bytes = 0;
    while (i < s->ring.nframes && c->permits > 0 && bytes < SEND_WINDOW &&
           !(s->limit && s->st.msgs >= s->limit)) {
        bc_frame_set_ids(c->ring, &fr[i], c->consumer_id, LEDGER_ID, s->next_entry++);
        c->permits -= fr[i].msgs;
        s->st.msgs += fr[i].msgs;
        s->st.frames++;
        bytes += fr[i].len;
        i++;
    }
    c->next_frame = i == s->ring.nframes ? 0 : i;
    c->wptr = c->ring + fr[start].off;
    c->wleft = bytes;
    if (s->limit && s->st.msgs >= s->limit)
        fprintf(stderr, "replay: reached %llu messages; streaming stops, connections stay open\n",
                (unsigned long long)s->st.msgs);
}

/* Sends from p; returns bytes sent, 0 when the socket is full, -1 on error. */
static ssize_t send_some(server_t *s, conn_t *c, const uint8_t *p, size_t n) {
    ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    s->st.sends++;
    if (w >= 0)
        return w;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        s->st.eagain++;
        return 0;
    }
    return -1;
}

/* One step of output: control first (between windows), then data. 1 = sent
 * something, 0 = blocked or idle (*blocked tells which), -1 = error. */
static int output_step(server_t *s, conn_t *c, int *blocked) {
    if (c->wleft == 0 && c->ctl_off < c->ctl.len) {
        ssize_t w = send_some(s, c, c->ctl.data + c->ctl_off, c->ctl.len - c->ctl_off);
        if (w < 0)
            return -1;
        c->ctl_off += (size_t)w;
        if (c->ctl_off == c->ctl.len)
            c->ctl_off = c->ctl.len = 0;
        *blocked = w == 0;
        return w > 0;
    }
    if (c->wleft == 0)
        fill_window(s, c);
    if (c->wleft == 0)
        return 0;
    ssize_t w = send_some(s, c, c->wptr, c->wleft);
    if (w < 0)
        return -1;
    if (w > 0) {
        double t = now_s();
        if (s->st.bytes == 0)
            s->st.first_send = t;
        s->st.last_send = t;
    }
    c->wptr += w;
    c->wleft -= (size_t)w;
    s->st.bytes += (uint64_t)w;
    *blocked = w == 0;
    return w > 0;
}

/* Pushes output until blocked, idle or out of budget; -1 on error. */
static int pump_output(server_t *s, conn_t *c) {
    int blocked = 0;
    for (int i = 0; i < SENDS_PER_WAKE; i++) {
        int r = output_step(s, c, &blocked);
        if (r < 0)
            return -1;
        if (r == 0) {
            set_out(s, c, blocked);
            return 0;
        }
    }
    set_out(s, c, 1); /* budget used up: come back after looking at input */
    return 0;
}

/* ---------- set-up and main loop ---------- */

static int listen_on(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 64)) {
        perror("replay: listen on 127.0.0.1");
        return -1;
    }
    return fd;
}

static void on_conn_event(server_t *s, conn_t *c, uint32_t events) {
    int bad = (events & (EPOLLERR | EPOLLHUP)) != 0 && !(events & EPOLLIN);
    if (!bad && (events & EPOLLIN))
        bad = read_input(s, c) < 0;
    if (!bad)
        bad = pump_output(s, c) < 0;
    if (bad)
        conn_free(s, c);
}

static void run(server_t *s) {
    struct epoll_event evs[64];
    while (!stop_flag) {
        int n = epoll_wait(s->ep, evs, 64, 1000);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == NULL)
                accept_conns(s);
            else
                on_conn_event(s, evs[i].data.ptr, evs[i].events);
        }
    }
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + tv.tv_usec / 1e6; }

static void print_stats(server_t *s) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double user = tv_s(ru.ru_utime) - tv_s(s->ru0.ru_utime);
    double sys = tv_s(ru.ru_stime) - tv_s(s->ru0.ru_stime);
    double stream = s->st.last_send > s->st.first_send ? s->st.last_send - s->st.first_send : 0;
    const stats_t *t = &s->st;
    fprintf(stderr,
            "replay-stats: corpus=%s conns=%llu frames=%llu msgs=%llu bytes=%llu sends=%llu "
            "eagain=%llu flows=%llu permits=%llu ack_cmds=%llu acked_ids=%llu ack_rejects=%llu "
            "redeliver=%llu pings=%llu other=%llu producers=%llu sent_entries=%llu sent_msgs=%llu "
            "stream_s=%.3f user_s=%.3f sys_s=%.3f busy_pct=%.1f gbps=%.3f\n",
            s->ring.spec->name, (unsigned long long)t->conns, (unsigned long long)t->frames,
            (unsigned long long)t->msgs, (unsigned long long)t->bytes, (unsigned long long)t->sends,
            (unsigned long long)t->eagain, (unsigned long long)t->flows, (unsigned long long)t->permits,
            (unsigned long long)t->ack_cmds, (unsigned long long)t->acked_ids,
            (unsigned long long)t->ack_rejects, (unsigned long long)t->redeliver,
            (unsigned long long)t->pings, (unsigned long long)t->other,
            (unsigned long long)t->producers, (unsigned long long)t->sent_entries,
            (unsigned long long)t->sent_msgs, stream, user, sys,
            stream > 0 ? 100.0 * (user + sys) / stream : 0.0, stream > 0 ? t->bytes / stream / 1e9 : 0.0);
}

static void usage(void) {
    fprintf(stderr,
            "usage: replay_server [--port P (6655)] [--corpus NAME (batch100x1000)]\n"
            "                     [--messages N (0 = unlimited)] [--ring-bytes B (8 MiB)]\n"
            "corpora:\n");
    bc_spec_print_all(stderr);
}

static int parse_args(int argc, char **argv, int *port, const bc_spec_t **spec, uint64_t *limit,
                      size_t *ring_bytes) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--port") && v)
            *port = atoi(v);
        else if (!strcmp(a, "--corpus") && v)
            *spec = bc_spec_find(v);
        else if (!strcmp(a, "--messages") && v)
            *limit = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--ring-bytes") && v)
            *ring_bytes = strtoull(v, NULL, 10);
        else
            return -1;
        i++;
        if (!*spec) {
            fprintf(stderr, "replay: unknown corpus %s\n", v);
            return -1;
        }
    }
    return *port > 0 && *port < 65536 ? 0 : -1;
}

int main(int argc, char **argv) {
    static server_t s;
    int port = 6655;
    const bc_spec_t *spec = bc_spec_find("batch100x1000");
    size_t ring_bytes = 8u << 20;
    char err[256];
    if (parse_args(argc, argv, &port, &spec, &s.limit, &ring_bytes)) {
        usage();
        return 2;
    }
    if (bc_ring_build(&s.ring, spec, ring_bytes, err, sizeof err)) {
        fprintf(stderr, "replay: %s\n", err);
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if ((s.lfd = listen_on(port)) < 0)
        return 1;
    s.ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(s.ep, EPOLL_CTL_ADD, s.lfd, &ev);
    snprintf(s.url, sizeof s.url, "pulsar://127.0.0.1:%d", port);
    getrusage(RUSAGE_SELF, &s.ru0);
    fprintf(stderr,
            "replay: listening on 127.0.0.1:%d corpus=%s frames=%zu ring_bytes=%zu msgs_per_pass=%llu "
            "batch_bytes=%llu wire_payload=%llu limit=%llu\n",
            port, spec->name, s.ring.nframes, s.ring.len, (unsigned long long)s.ring.msgs,
            (unsigned long long)s.ring.batch_bytes, (unsigned long long)s.ring.wire_payload,
            (unsigned long long)s.limit);
    run(&s);
    print_stats(&s);
    bc_ring_free(&s.ring);
    return 0;
}
