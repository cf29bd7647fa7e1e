/*
 * Design notes
 *  - One thread, one epoll set, level-triggered, non-blocking sockets. A
 *    "pair" is an accepted client socket plus its upstream socket; each
 *    direction is a "pipe" holding a FIFO of chunks, each with the time it
 *    may leave (now + the delay in force when it was read).
 *  - After every wake-up the thread services every pair: read what the
 *    interest set allows, write every chunk that is due. Interest is then
 *    recomputed: EPOLLIN while the pipe may read (not stalled, under its
 *    byte limit), EPOLLOUT while a due chunk could not be written. Delayed
 *    chunks and the end of a stall are handled by the epoll timeout. Tests
 *    open a handful of connections, so servicing all of them is cheap.
 *  - Broker -> client bytes are cut into whole frames (the 4-byte length
 *    prefix is enough) so that LOOKUP_RESPONSE frames can be rewritten to
 *    point at the proxy; every other frame is forwarded byte for byte.
 *    Client -> broker bytes are forwarded as read.
 *  - Control (cut, stall, delay, budget) is posted under a mutex and the
 *    thread is woken through an eventfd; it is read again after every
 *    epoll_wait, so a setting made before the test writes is in force for
 *    the bytes that write produces. cut_all waits for the thread to
 *    confirm, so a test knows the connections are gone when it returns.
 *  - A cut sets SO_LINGER 0 and closes both sockets: each peer sees a reset,
 *    and whatever was queued in the proxy is lost, as on a real network.
 *  - EOF on one side: the pipe stops reading, drains its queue, then the
 *    whole pair closes (a broker's last ERROR before it hangs up still
 *    reaches the client).
 *  - An orphaned pair has lost its client side (reset) while its upstream
 *    socket stays open, unread and unwritten, for a while: the broker still
 *    sees the old connection, with its producers and consumers, when the
 *    client reconnects through a new one (what a client sees after a
 *    network failure the broker has not noticed yet). Optionally it answers
 *    the broker's PINGs with PONGs, so that a broker checking the old
 *    connection's liveness finds it alive and refuses the newcomer (busy).
 */
#include "proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
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

#define READ_CHUNK (64 * 1024)
#define PIPE_LIMIT (8u << 20) /* stop reading a side with this much queued */
#define MAX_FRAME (PC_DEFAULT_MAX_MESSAGE_SIZE + PC_FRAME_PADDING + 65536)
#define TYPE_LOOKUP_RESPONSE PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP_RESPONSE

typedef struct chunk {
    struct chunk *next;
    int64_t due;
    size_t len, off;
    uint8_t data[];
} chunk_t;

typedef struct ppipe {
    int from, to;
    chunk_t *head, *tail;
    size_t queued;
    int frames;   /* cut into frames, rewrite lookups (broker -> client) */
    int raw;      /* gave up framing (garbage from the peer): forward as is */
    pc_buf_t asmb; /* partial frame (frames mode) */
    int eof;
    _Atomic uint64_t *counter;
} ppipe_t;

typedef struct pair pair_t;
typedef struct pend {
    pair_t *pair;
    int fd;
    uint32_t ev;
} pend_t;

struct pair {
    pair_t *next;
    pend_t c, u;
    ppipe_t up, down;
    int dead;
    int64_t orphan_until; /* client side gone, upstream held open until then; 0: not orphaned */
    int orphan_pongs;     /* the orphan answers the broker's PINGs (looks alive) */
};

typedef struct pstats {
    _Atomic uint64_t accepted, open, cut_events, conns_cut, bytes_up, bytes_down, lookups,
        upfail;
} pstats_t;

struct pc_proxy {
    char host[256];
    int up_port, lfd, ep, evfd, port;
    char url[64];
    pthread_t thr;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* control, under lock */
    int stop;
    uint64_t cut_req, cut_done;
    uint64_t orphan_req, orphan_done;
    int orphan_hold_ms, orphan_pongs;
    uint64_t budget_req, budget_gen;
    int64_t stall_until;
    int delay_ms;
    /* proxy thread only */
    pair_t *pairs;
    uint64_t budget_seen;
    int64_t budget; /* bytes left before a cut, -1: disarmed */
    int cut_now;
    int64_t t_stall;
    int t_delay;
    pstats_t st;
};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------- pipes ---------- */

static void pipe_push(ppipe_t *pp, const uint8_t *data, size_t len, int64_t due) {
    chunk_t *c = malloc(sizeof *c + len);
    if (!c)
        abort(); /* test equipment: out of memory is fatal */
    c->next = NULL;
    c->due = due;
    c->len = len;
    c->off = 0;
    memcpy(c->data, data, len);
    if (pp->tail)
        pp->tail->next = c;
    else
        pp->head = c;
    pp->tail = c;
    pp->queued += len;
}

static void pipe_free(ppipe_t *pp) {
    while (pp->head) {
        chunk_t *c = pp->head;
        pp->head = c->next;
        free(c);
    }
    pp->tail = NULL;
    pp->queued = 0;
    pc_buf_free(&pp->asmb);
}

/* Re-encodes a LOOKUP_RESPONSE with the broker URL pointing at the proxy. */
static int rewrite_lookup(pc_proxy_t *p, const uint8_t *f, size_t len, pc_buf_t *out) {
    pc_frame_t fr;
    char err[256];
    if (pc_frame_parse(f, len, MAX_FRAME, &fr, err, sizeof err) != (long)len)
        return -1;
    Pulsar__Proto__CommandLookupTopicResponse *r = fr.cmd->lookuptopicresponse;
    int rc = -1;
    if (r) {
        char *plain = r->brokerserviceurl;
        if (plain)
            r->brokerserviceurl = p->url;
        rc = pc_frame_encode(out, fr.cmd) == PULSARC_OK ? 0 : -1;
        r->brokerserviceurl = plain;
    }
    pc_frame_clear(&fr);
    if (!rc)
        atomic_fetch_add(&p->st.lookups, 1);
    return rc;
}

/* Moves every complete frame of pp->asmb into the queue. */
static void pipe_frames(pc_proxy_t *p, ppipe_t *pp, int64_t due) {
    pc_buf_t out;
    pc_buf_init(&out, 0);
    size_t off = 0;
    while (pp->asmb.len - off >= 4) {
        const uint8_t *f = pp->asmb.data + off;
        uint64_t total = (uint64_t)pc_rd_u32(f) + 4;
        if (total > MAX_FRAME) {
            pp->raw = 1; /* not a frame stream we understand: forward the rest as is */
            break;
        }
        if (pp->asmb.len - off < total)
            break;
        int lookup = total >= 10 && f[8] == 0x08 && f[9] == TYPE_LOOKUP_RESPONSE;
        if (!lookup || rewrite_lookup(p, f, (size_t)total, &out))
            pc_buf_append(&out, f, (size_t)total);
        off += (size_t)total;
    }
    if (pp->raw) {
        pc_buf_append(&out, pp->asmb.data + off, pp->asmb.len - off);
        off = pp->asmb.len;
    }
    pc_buf_consume(&pp->asmb, off);
    if (out.len)
        pipe_push(pp, out.data, out.len, due);
    pc_buf_free(&out);
}

static int pipe_can_read(const pc_proxy_t *p, const ppipe_t *pp, int64_t now) {
    return !pp->eof && pp->queued < PIPE_LIMIT && now >= p->t_stall;
}

/* Reads once; -1 on a socket error (the pair must close). */
static int pipe_read(pc_proxy_t *p, ppipe_t *pp, int64_t now) {
    uint8_t buf[READ_CHUNK];
    ssize_t n = recv(pp->from, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    if (n == 0) {
        pp->eof = 1;
        return 0;
    }
    int64_t due = now + p->t_delay;
    if (pp->frames && !pp->raw) {
        pc_buf_append(&pp->asmb, buf, (size_t)n);
        pipe_frames(p, pp, due);
    } else {
        pipe_push(pp, buf, (size_t)n, due);
    }
    return 0;
}

/* Writes due chunks; 1 = a due chunk is blocked, 0 = idle, -1 = error. */
static int pipe_write(pc_proxy_t *p, ppipe_t *pp, int64_t now) {
    while (pp->head && pp->head->due <= now && now >= p->t_stall && !p->cut_now) {
        chunk_t *c = pp->head;
        size_t n = c->len - c->off;
        if (p->budget >= 0 && (int64_t)n > p->budget)
            n = (size_t)p->budget;
        ssize_t w = n ? send(pp->to, c->data + c->off, n, MSG_DONTWAIT | MSG_NOSIGNAL) : 0;
        if (w < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 1 : -1;
        c->off += (size_t)w;
        pp->queued -= (size_t)w;
        atomic_fetch_add(pp->counter, (uint64_t)w);
        if (p->budget >= 0 && (p->budget -= w) == 0) {
            p->cut_now = 1;
            p->budget = -1;
        }
        if (c->off == c->len) {
            pp->head = c->next;
            if (!pp->head)
                pp->tail = NULL;
            free(c);
        } else if (w == 0 || (size_t)w < n) {
            return p->cut_now ? 0 : 1;
        }
    }
    return 0;
}

/* ---------- pairs ---------- */

static void set_interest(pc_proxy_t *p, pend_t *e, uint32_t ev) {
    if (e->ev == ev)
        return;
    struct epoll_event x = {.events = ev, .data.ptr = e};
    epoll_ctl(p->ep, EPOLL_CTL_MOD, e->fd, &x);
    e->ev = ev;
}

#define TYPE_PING PULSAR__PROTO__BASE_COMMAND__TYPE__PING

/* An orphan's upstream is readable: answer PINGs if asked to, drop the rest. 1: closed. */
static int orphan_read(pair_t *pr) {
    /* A PONG frame: sizes 9 and 5, then BaseCommand{type=PONG, pong={}}. */
    static const uint8_t pong[] = {0, 0, 0, 9, 0, 0, 0, 5, 0x08, 0x13, 0x9a, 0x01, 0x00};
    uint8_t buf[READ_CHUNK];
    ssize_t n = recv(pr->u.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        return 1;
    if (n < 0)
        return 0;
    ppipe_t *pp = &pr->down;
    pc_buf_append(&pp->asmb, buf, (size_t)n);
    size_t off = 0;
    while (pp->asmb.len - off >= 4) {
        const uint8_t *f = pp->asmb.data + off;
        uint64_t total = (uint64_t)pc_rd_u32(f) + 4;
        if (total > MAX_FRAME)
            return 1;
        if (pp->asmb.len - off < total)
            break;
        if (pr->orphan_pongs && total >= 10 && f[8] == 0x08 && f[9] == TYPE_PING &&
            send(pr->u.fd, pong, sizeof pong, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
            return 1;
        off += (size_t)total;
    }
    pc_buf_consume(&pp->asmb, off);
    return 0;
}

/* Closes what an orphaned pair still holds: its upstream socket. */
static void orphan_close(pc_proxy_t *p, pair_t *pr, int reset) {
    if (reset) {
        struct linger lg = {1, 0};
        setsockopt(pr->u.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    epoll_ctl(p->ep, EPOLL_CTL_DEL, pr->u.fd, NULL);
    close(pr->u.fd);
    pipe_free(&pr->down);
    pr->dead = 1;
    atomic_fetch_sub(&p->st.open, 1);
}

static void pair_close(pc_proxy_t *p, pair_t *pr, int reset) {
    if (pr->orphan_until) {
        orphan_close(p, pr, reset);
        return;
    }
    if (reset) {
        struct linger lg = {1, 0};
        setsockopt(pr->c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        setsockopt(pr->u.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    epoll_ctl(p->ep, EPOLL_CTL_DEL, pr->c.fd, NULL);
    epoll_ctl(p->ep, EPOLL_CTL_DEL, pr->u.fd, NULL);
    close(pr->c.fd);
    close(pr->u.fd);
    pipe_free(&pr->up);
    pipe_free(&pr->down);
    pr->dead = 1;
    atomic_fetch_sub(&p->st.open, 1);
}

/* One pipe's turn: read if allowed, write what is due. -1: close the pair. */
static int pipe_service(pc_proxy_t *p, ppipe_t *pp, int64_t now, int readable, int *blocked) {
    if (readable && pipe_can_read(p, pp, now) && pipe_read(p, pp, now) < 0)
        return -1;
    int w = pipe_write(p, pp, now);
    if (w < 0)
        return -1;
    *blocked = w;
    return pp->eof && !pp->head ? -1 : 0;
}

static void pair_service(pc_proxy_t *p, pair_t *pr, int64_t now) {
    int bup = 0, bdown = 0;
    if (pipe_service(p, &pr->up, now, 1, &bup) < 0 || pipe_service(p, &pr->down, now, 1, &bdown) < 0) {
        pair_close(p, pr, 0);
        return;
    }
    uint32_t cev = (pipe_can_read(p, &pr->up, now) ? EPOLLIN : 0) | (bdown ? EPOLLOUT : 0);
    uint32_t uev = (pipe_can_read(p, &pr->down, now) ? EPOLLIN : 0) | (bup ? EPOLLOUT : 0);
    set_interest(p, &pr->c, cev);
    set_interest(p, &pr->u, uev);
}

static int connect_upstream(const pc_proxy_t *p) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", p->up_port);
    if (getaddrinfo(p->host, port, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

static void pend_init(pc_proxy_t *p, pair_t *pr, pend_t *e, int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    e->pair = pr;
    e->fd = fd;
    e->ev = EPOLLIN;
    struct epoll_event x = {.events = EPOLLIN, .data.ptr = e};
    epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &x);
}

static void pipe_init(ppipe_t *pp, int from, int to, int frames, _Atomic uint64_t *counter) {
    memset(pp, 0, sizeof *pp);
    pp->from = from;
    pp->to = to;
    pp->frames = frames;
    pp->counter = counter;
    pc_buf_init(&pp->asmb, MAX_FRAME + READ_CHUNK);
}

static void accept_one(pc_proxy_t *p, int cfd) {
    atomic_fetch_add(&p->st.accepted, 1);
    int ufd = connect_upstream(p);
    pair_t *pr = ufd >= 0 ? calloc(1, sizeof *pr) : NULL;
    if (!pr) {
        atomic_fetch_add(&p->st.upfail, 1);
        if (ufd >= 0)
            close(ufd);
        close(cfd);
        return;
    }
    fcntl(ufd, F_SETFL, fcntl(ufd, F_GETFL) | O_NONBLOCK);
    pend_init(p, pr, &pr->c, cfd);
    pend_init(p, pr, &pr->u, ufd);
    pipe_init(&pr->up, cfd, ufd, 0, &p->st.bytes_up);
    pipe_init(&pr->down, ufd, cfd, 1, &p->st.bytes_down);
    pr->next = p->pairs;
    p->pairs = pr;
    atomic_fetch_add(&p->st.open, 1);
}

static void accept_all(pc_proxy_t *p) {
    for (;;) {
        int fd = accept4(p->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        accept_one(p, fd);
    }
}

static void reap(pc_proxy_t *p) {
    pair_t **pp = &p->pairs;
    while (*pp) {
        pair_t *pr = *pp;
        if (pr->dead) {
            *pp = pr->next;
            free(pr);
        } else {
            pp = &pr->next;
        }
    }
}

/* Resets every client side; upstream sockets stay open for hold_ms. */
static void orphan_everything(pc_proxy_t *p, int hold_ms, int pongs) {
    atomic_fetch_add(&p->st.cut_events, 1);
    int64_t until = now_ms() + (hold_ms > 0 ? hold_ms : 1);
    for (pair_t *pr = p->pairs; pr; pr = pr->next) {
        if (pr->dead || pr->orphan_until)
            continue;
        struct linger lg = {1, 0};
        setsockopt(pr->c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        epoll_ctl(p->ep, EPOLL_CTL_DEL, pr->c.fd, NULL);
        close(pr->c.fd);
        pipe_free(&pr->up);
        /* The down pipe's queue goes (nobody to deliver it to); its frame
         * assembler stays, positioned on a frame boundary, for orphan_read. */
        while (pr->down.head) {
            chunk_t *ch = pr->down.head;
            pr->down.head = ch->next;
            free(ch);
        }
        pr->down.tail = NULL;
        pr->down.queued = 0;
        set_interest(p, &pr->u, EPOLLIN);
        pr->orphan_until = until;
        pr->orphan_pongs = pongs;
        atomic_fetch_add(&p->st.conns_cut, 1);
    }
}

static void cut_everything(pc_proxy_t *p) {
    atomic_fetch_add(&p->st.cut_events, 1);
    for (pair_t *pr = p->pairs; pr; pr = pr->next) {
        if (!pr->dead) {
            pair_close(p, pr, 1);
            atomic_fetch_add(&p->st.conns_cut, 1);
        }
    }
    reap(p);
    p->cut_now = 0;
}

/* ---------- thread ---------- */

/* Takes the control state posted by the test; 1 when asked to stop. */
static int sync_control(pc_proxy_t *p) {
    pthread_mutex_lock(&p->lock);
    int stop = p->stop;
    uint64_t want_cut = p->cut_req, want_orphan = p->orphan_req;
    int hold = p->orphan_hold_ms, pongs = p->orphan_pongs;
    if (p->budget_gen != p->budget_seen) {
        p->budget_seen = p->budget_gen;
        p->budget = p->budget_req ? (int64_t)p->budget_req : -1;
    }
    p->t_stall = p->stall_until;
    p->t_delay = p->delay_ms;
    pthread_mutex_unlock(&p->lock);
    if (want_orphan != p->orphan_done) {
        orphan_everything(p, hold, pongs);
        pthread_mutex_lock(&p->lock);
        p->orphan_done = want_orphan;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
    }
    if (want_cut != p->cut_done) {
        cut_everything(p);
        pthread_mutex_lock(&p->lock);
        p->cut_done = want_cut;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
    }
    return stop;
}

/* How long epoll may sleep: until the next delayed chunk or the end of a stall. */
static int wait_ms(const pc_proxy_t *p, int64_t now) {
    int64_t next = now + 200;
    if (p->t_stall > now && p->t_stall < next)
        next = p->t_stall;
    for (const pair_t *pr = p->pairs; pr; pr = pr->next) {
        if (pr->orphan_until && !pr->dead && pr->orphan_until < next)
            next = pr->orphan_until;
        if (pr->up.head && pr->up.head->due < next)
            next = pr->up.head->due;
        if (pr->down.head && pr->down.head->due < next)
            next = pr->down.head->due;
    }
    return next > now ? (int)(next - now) : 0;
}

static void *proxy_main(void *arg) {
    pc_proxy_t *p = arg;
    struct epoll_event evs[64];
    while (!sync_control(p)) {
        int n = epoll_wait(p->ep, evs, 64, wait_ms(p, now_ms()));
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == &p->lfd) {
                accept_all(p);
            } else if (evs[i].data.ptr == &p->evfd) {
                uint64_t v;
                if (read(p->evfd, &v, sizeof v) < 0) { /* nothing to do: woken anyway */ }
            }
        }
        /* Settings posted before the bytes now readable were sent apply to them. */
        if (sync_control(p))
            break;
        int64_t now = now_ms();
        for (pair_t *pr = p->pairs; pr; pr = pr->next) {
            if (pr->dead)
                continue;
            if (!pr->orphan_until)
                pair_service(p, pr, now);
            else if (now >= pr->orphan_until || orphan_read(pr))
                orphan_close(p, pr, 0);
        }
        if (p->cut_now)
            cut_everything(p);
        reap(p);
    }
    for (pair_t *pr = p->pairs; pr; pr = pr->next)
        if (!pr->dead)
            pair_close(p, pr, 1);
    reap(p);
    return NULL;
}

/* ---------- API ---------- */

static void wake(pc_proxy_t *p) {
    uint64_t one = 1;
    if (write(p->evfd, &one, sizeof one) < 0) { /* counter saturated: already woken */ }
}

static int listen_loopback(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 128) ||
        getsockname(fd, (struct sockaddr *)&a, &al)) {
        perror("proxy: listen on 127.0.0.1");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static void add_marker(pc_proxy_t *p, int fd, void *marker) {
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = marker};
    epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev);
}

pc_proxy_t *pc_proxy_new(const char *host, int port) {
    pc_proxy_t *p = calloc(1, sizeof *p);
    if (!p || !host || port <= 0 || port > 65535) {
        free(p);
        return NULL;
    }
    snprintf(p->host, sizeof p->host, "%s", host);
    p->up_port = port;
    p->budget = -1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    p->lfd = listen_loopback(&p->port);
    p->ep = epoll_create1(EPOLL_CLOEXEC);
    p->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (p->lfd < 0 || p->ep < 0 || p->evfd < 0) {
        fprintf(stderr, "proxy: set-up failed: %s\n", strerror(errno));
        pc_proxy_destroy(p);
        return NULL;
    }
    snprintf(p->url, sizeof p->url, "pulsar://127.0.0.1:%d", p->port);
    add_marker(p, p->lfd, &p->lfd);
    add_marker(p, p->evfd, &p->evfd);
    if (pthread_create(&p->thr, NULL, proxy_main, p) != 0) {
        p->thr = 0;
        pc_proxy_destroy(p);
        return NULL;
    }
    return p;
}

int pc_proxy_port(const pc_proxy_t *p) { return p ? p->port : -1; }
const char *pc_proxy_url(const pc_proxy_t *p) { return p ? p->url : NULL; }

void pc_proxy_cut_all(pc_proxy_t *p) {
    pthread_mutex_lock(&p->lock);
    uint64_t req = ++p->cut_req;
    wake(p);
    while (p->cut_done < req && !p->stop)
        pthread_cond_wait(&p->cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

void pc_proxy_orphan_all(pc_proxy_t *p, int hold_ms, int answer_pings) {
    pthread_mutex_lock(&p->lock);
    p->orphan_hold_ms = hold_ms;
    p->orphan_pongs = answer_pings;
    uint64_t req = ++p->orphan_req;
    wake(p);
    while (p->orphan_done < req && !p->stop)
        pthread_cond_wait(&p->cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

void pc_proxy_cut_after(pc_proxy_t *p, uint64_t bytes) {
    pthread_mutex_lock(&p->lock);
    p->budget_req = bytes;
    p->budget_gen++;
    pthread_mutex_unlock(&p->lock);
    wake(p);
}

void pc_proxy_stall(pc_proxy_t *p, int ms) {
    pthread_mutex_lock(&p->lock);
    p->stall_until = now_ms() + (ms > 0 ? ms : 0);
    pthread_mutex_unlock(&p->lock);
    wake(p);
}

void pc_proxy_delay(pc_proxy_t *p, int ms) {
    pthread_mutex_lock(&p->lock);
    p->delay_ms = ms > 0 ? ms : 0;
    pthread_mutex_unlock(&p->lock);
    wake(p);
}

void pc_proxy_stats(pc_proxy_t *p, pc_proxy_stats_t *o) {
    o->accepted = atomic_load(&p->st.accepted);
    o->open = atomic_load(&p->st.open);
    o->cut_events = atomic_load(&p->st.cut_events);
    o->conns_cut = atomic_load(&p->st.conns_cut);
    o->bytes_up = atomic_load(&p->st.bytes_up);
    o->bytes_down = atomic_load(&p->st.bytes_down);
    o->lookups_rewritten = atomic_load(&p->st.lookups);
    o->upstream_failures = atomic_load(&p->st.upfail);
}

void pc_proxy_destroy(pc_proxy_t *p) {
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    if (p->thr) {
        wake(p);
        pthread_join(p->thr, NULL);
    }
    if (p->lfd > 0)
        close(p->lfd);
    if (p->ep > 0)
        close(p->ep);
    if (p->evfd > 0)
        close(p->evfd);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p);
}
