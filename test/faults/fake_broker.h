/*
 * A scripted fake Pulsar broker for tests (no JVM): it listens on
 * 127.0.0.1 (a free port) and answers on its own thread, just well enough
 * for one client's producers and consumers, and does on demand what a real
 * broker will not: fail a command with any ServerError, redirect lookups
 * forever (to itself or to another fake broker), never answer, ignore
 * PING, close producers or consumers, and
 * push MESSAGE frames with an unknown codec, a corrupt payload or a bad
 * checksum. Every call is thread-safe.
 *
 * Default behaviour: CONNECT -> CONNECTED; PARTITIONED_METADATA -> 0
 * partitions; LOOKUP -> Connect to this broker; PRODUCER -> PRODUCER_SUCCESS;
 * SEND -> SEND_RECEIPT (ledger 7, growing entry ids); SUBSCRIBE,
 * CLOSE_PRODUCER, CLOSE_CONSUMER, UNSUBSCRIBE, SEEK -> SUCCESS; FLOW adds
 * permits and releases queued messages; ACK is recorded; PING -> PONG;
 * GET_LAST_MESSAGE_ID -> the last pushed id. CONNECTED does not offer
 * topic-list watchers unless pc_fb_set_topics asks for it.
 */
#ifndef PC_TEST_FAKE_BROKER_H
#define PC_TEST_FAKE_BROKER_H
#include <stddef.h>
#include <stdint.h>

typedef struct pc_fb pc_fb_t;

#define PC_FB_MAX_TYPE 128

/* What a rule does to a matching command. */
typedef enum pc_fb_action {
    PC_FB_ERROR = 1,    /* the command's error reply (ERROR, SEND_ERROR, or a Failed lookup) */
    PC_FB_IGNORE = 2,   /* read it, say nothing */
    PC_FB_REDIRECT = 3, /* LOOKUP only: Redirect to this broker again */
    PC_FB_CLOSE = 4,       /* close the connection at once, unanswered */
    PC_FB_GARBAGE = 5,     /* answer with bytes that are no command (the connection stays) */
    PC_FB_REPLY_CLOSE = 6, /* answer as usual, then close the connection */
    PC_FB_DEEP = 7,        /* SEND only: a SEND_RECEIPT whose message id nests server_error
                           levels deep (first_chunk_message_id), hand-encoded */
} pc_fb_action_t;

/*
 * Adds a rule for commands of BaseCommand type `type` (e.g.
 * PULSAR__PROTO__BASE_COMMAND__TYPE__LOOKUP): the first `skip` matching
 * commands are handled normally, the next `count` (-1: all) get `action`.
 * For PC_FB_ERROR, server_error is the wire ServerError and message the
 * text sent with it. Rules are tried in the order added; the first that
 * applies wins. Returns the rule's index.
 */
int pc_fb_rule(pc_fb_t *fb, int type, pc_fb_action_t action, int server_error,
               const char *message, int skip, int count);
/* Removes every rule: the broker behaves normally from now on. */
void pc_fb_clear_rules(pc_fb_t *fb);

/* Global modes. */
void pc_fb_set_silent(pc_fb_t *fb, int on);  /* accept and read, never write anything */
void pc_fb_set_no_pong(pc_fb_t *fb, int on); /* answer everything but PING */
/* Pushed messages wait for the next SEEK of their consumer, then go out
 * right before its SUCCESS, in the same write (and no CLOSE_CONSUMER). */
void pc_fb_set_hold_until_seek(pc_fb_t *fb, int on);
/* PARTITIONED_METADATA answers n partitions (default 0), however absurd. */
void pc_fb_set_partitions(pc_fb_t *fb, uint32_t n);
/* Where PC_FB_REDIRECT sends a lookup (another fake broker's URL); NULL or "": this broker. */
void pc_fb_set_redirect_url(pc_fb_t *fb, const char *url);
/* CONNECTED announces max_message_size n (default 0: 5 MiB), however large. */
void pc_fb_set_max_message_size(pc_fb_t *fb, int32_t n);

/*
 * GET_TOPICS_OF_NAMESPACE answers topics (copied); with offer_watchers 1,
 * CONNECTED sets supports_topic_watchers and WATCH_TOPIC_LIST is answered
 * with the same list (without, it gets a plain SUCCESS). offer_watchers 2:
 * a broker that gets it wrong, the flag set and a plain SUCCESS answer.
 */
void pc_fb_set_topics(pc_fb_t *fb, const char *const *topics, size_t n, int offer_watchers);
/*
 * Pushes WATCH_TOPIC_UPDATE to the last watcher: `name` as the one new
 * topic, or, with copies > 1, "<name>0" .. "<name><copies-1>"; with
 * wrong_id, to a watcher id the client never sent.
 */
void pc_fb_topic_update(pc_fb_t *fb, const char *name, size_t copies, int wrong_id);
/* Consumers subscribed to topic and not closed (their connection neither). */
int pc_fb_open_consumers(pc_fb_t *fb, const char *topic);

/* Broker-initiated events to every producer / consumer currently open. */
void pc_fb_close_producers(pc_fb_t *fb);
void pc_fb_close_consumers(pc_fb_t *fb);
/* Resets every client connection now. */
void pc_fb_drop_connections(pc_fb_t *fb);

/* How a pushed message is spoiled. */
typedef enum pc_fb_spoil {
    PC_FB_GOOD = 0,
    PC_FB_BAD_CHECKSUM = 1,  /* CRC32C field does not match */
    PC_FB_UNKNOWN_CODEC = 2, /* compression = 99 */
    PC_FB_CORRUPT_LZ4 = 3,   /* compression = LZ4, payload is not LZ4 */
    PC_FB_BAD_METADATA = 4,  /* MessageMetadata bytes that do not parse */
    PC_FB_HUGE_BATCH = 5,    /* a batch claiming a billion messages in the payload's few bytes */
} pc_fb_spoil_t;

/*
 * Queues one MESSAGE (payload copied) for the consumer subscribed most
 * recently; it is sent as FLOW permits allow. Returns its entry id.
 */
int64_t pc_fb_push(pc_fb_t *fb, const void *payload, size_t len, pc_fb_spoil_t spoil);

/* Counters, as of the call. */
typedef struct pc_fb_stats {
    uint64_t conns;             /* connections accepted */
    uint64_t conns_closed;      /* connections that ended (either side) */
    uint64_t cmds[PC_FB_MAX_TYPE]; /* commands received, by BaseCommand type */
    uint64_t permits;           /* FLOW permits received in total */
    uint64_t msgs_sent;         /* MESSAGE frames written */
    uint64_t msgs_queued;       /* pushed but not sent yet */
    uint64_t acked;             /* message ids acked without a validation error */
    uint64_t validation_acks;   /* ACKs carrying validation_error */
    int last_validation_error;  /* its value, -1 if none */
    uint64_t sends;             /* SEND frames (messages produced) */
    uint64_t errors_sent;       /* rule-made error replies */
} pc_fb_stats_t;
void pc_fb_stats(pc_fb_t *fb, pc_fb_stats_t *out);
/* 1 when entry `entry` was acked with validation error `why` (or any when why < 0). */
int pc_fb_validation_acked(pc_fb_t *fb, int64_t entry, int why);

/* Waits up to timeout_ms until cmds[type] >= n; returns 1 when reached. */
int pc_fb_wait_cmds(pc_fb_t *fb, int type, uint64_t n, int timeout_ms);

pc_fb_t *pc_fb_new(void);
int pc_fb_port(const pc_fb_t *fb);
/* "pulsar://127.0.0.1:<port>". Borrowed from fb. */
const char *pc_fb_url(const pc_fb_t *fb);
void pc_fb_destroy(pc_fb_t *fb);
#endif
