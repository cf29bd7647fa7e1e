/*
 * A fault-injecting TCP proxy for tests: listens on 127.0.0.1 (a free
 * port), connects each accepted client to one upstream broker, and forwards
 * bytes both ways on its own thread. The test drives faults through the
 * calls below; every call is thread-safe.
 *
 * LOOKUP_RESPONSE frames coming back from the broker are rewritten so that
 * brokerServiceUrl (and brokerServiceUrlTls) point at the proxy itself:
 * otherwise a client would look the topic up through the proxy and then
 * connect to the broker directly, and no data would pass the proxy.
 */
#ifndef PC_TEST_PROXY_H
#define PC_TEST_PROXY_H
#include <stdint.h>

typedef struct pc_proxy pc_proxy_t;

typedef struct pc_proxy_stats {
    uint64_t accepted;          /* client connections accepted */
    uint64_t open;              /* connection pairs open now */
    uint64_t cut_events;        /* cut_all / cut_after triggers that fired */
    uint64_t conns_cut;         /* connection pairs closed by those cuts */
    uint64_t bytes_up;          /* client -> broker bytes forwarded */
    uint64_t bytes_down;        /* broker -> client bytes forwarded */
    uint64_t lookups_rewritten; /* LOOKUP_RESPONSE frames pointed at the proxy */
    uint64_t upstream_failures; /* accepted clients whose upstream connect failed */
} pc_proxy_stats_t;

/* Starts a proxy to host:port (upstream). NULL (and a message on stderr) on failure. */
pc_proxy_t *pc_proxy_new(const char *host, int port);
/* The loopback port the proxy listens on. */
int pc_proxy_port(const pc_proxy_t *p);
/* "pulsar://127.0.0.1:<port>", for serviceUrl. Borrowed from p. */
const char *pc_proxy_url(const pc_proxy_t *p);
/* Resets every open connection (RST both sides); returns once they are closed. */
void pc_proxy_cut_all(pc_proxy_t *p);
/* Resets the client side of every open connection but keeps its upstream
 * socket open for hold_ms, then closes it: the broker still holds the old
 * connection while the client reconnects. What the broker sends there is
 * dropped; with answer_pings its PINGs get PONGs, so the old connection
 * passes the broker's liveness checks. Returns once the client sides are
 * closed. */
void pc_proxy_orphan_all(pc_proxy_t *p, int hold_ms, int answer_pings);
/* Arms a one-shot cut: after `bytes` more bytes are forwarded (both
 * directions, all connections), every connection is reset, usually in the
 * middle of a frame. 0 disarms. */
void pc_proxy_cut_after(pc_proxy_t *p, uint64_t bytes);
/* Forwards nothing (and reads nothing) for ms milliseconds from now. */
void pc_proxy_stall(pc_proxy_t *p, int ms);
/* Holds every chunk read for ms milliseconds before forwarding it (0: off). */
void pc_proxy_delay(pc_proxy_t *p, int ms);
void pc_proxy_stats(pc_proxy_t *p, pc_proxy_stats_t *out);
/* Stops the thread, closes everything, frees p. NULL is a no-op. */
void pc_proxy_destroy(pc_proxy_t *p);
#endif
