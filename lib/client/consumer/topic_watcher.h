/*
 * The topic-list watcher of a regex subscription: one WATCH_TOPIC_LIST on a
 * broker of the namespace, which answers with every topic matching the
 * pattern and then pushes WATCH_TOPIC_UPDATE (topics created, topics
 * deleted) as they happen. It runs on the reconnecting handler
 * (client/handler.h) like a consumer does: after a lost connection the
 * watch is sent again, and the full list in its answer is handed over
 * whole, so the owner reconciles what changed while it was away.
 *
 * A broker that does not offer watchers (CONNECTED without
 * supports_topic_watchers, or one that refuses the command) ends the
 * watcher quietly; the owner's polling goes on either way.
 *
 * Loop thread only: created, fed and stopped on the io thread; its
 * callbacks run there too.
 */
#ifndef PC_TOPIC_WATCHER_H
#define PC_TOPIC_WATCHER_H
#include <stddef.h>

#include "client/client_int.h"

/* Topics one answer or push may name; past it the watcher gives up (polling goes on). */
#define PC_WATCH_MAX_TOPICS 100000

typedef struct pc_topic_watcher pc_topic_watcher_t;

typedef struct pc_topic_watcher_ops {
    /* Every topic the broker says matches, after each (re)established watch. */
    void (*on_list)(void *owner, char *const *topics, size_t n);
    /* Topics created and deleted since, as pushed. */
    void (*on_update)(void *owner, char *const *added, size_t nadded, char *const *deleted,
                      size_t ndeleted);
    /* The watcher holds one reference on its owner until it is freed. */
    void (*owner_ref)(void *owner);
    void (*owner_unref)(void *owner);
} pc_topic_watcher_ops_t;

/*
 * Starts watching namespace ns ("tenant/ns") for topics matching pattern
 * (as the broker's regex sees it), through the broker lookup_topic maps
 * to. NULL when out of memory. The caller owns the result until
 * pc_topic_watcher_stop.
 */
pc_topic_watcher_t *pc_topic_watcher_start(pulsarc_client_t *c, const char *ns, const char *pattern,
                                           const char *lookup_topic,
                                           const pc_topic_watcher_ops_t *ops, void *owner);
/* Stops watching (WATCH_TOPIC_LIST_CLOSE when established) and drops the caller's reference. */
void pc_topic_watcher_stop(pc_topic_watcher_t *w);
/* Established and attached to a connection now (for tests and stats). */
int pc_topic_watcher_is_ready(const pc_topic_watcher_t *w);
#endif
