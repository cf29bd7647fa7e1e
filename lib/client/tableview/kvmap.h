/*
 * A string key -> byte value map that owns copies of both, for the table
 * view. Not thread-safe: the view guards it with its own lock.
 */
#ifndef PC_KVMAP_H
#define PC_KVMAP_H
#include <stddef.h>

typedef struct pc_kv_entry {
    struct pc_kv_entry *next;
    char *key;   /* owned, NUL-terminated */
    void *value; /* owned, len bytes (never 0: an empty value is a deletion) */
    size_t len;
} pc_kv_entry_t;

typedef struct pc_kvmap {
    pc_kv_entry_t **buckets;
    size_t nbuckets; /* a power of two, or 0 before the first put */
    size_t count;
} pc_kvmap_t;

void pc_kvmap_init(pc_kvmap_t *m);
void pc_kvmap_free(pc_kvmap_t *m);
/* The entry for key, or NULL. Borrowed from the map until its next change. */
const pc_kv_entry_t *pc_kvmap_get(const pc_kvmap_t *m, const char *key);
/* Copies key and value in (len > 0). 0 on success, -1 when out of memory (map unchanged). */
int pc_kvmap_put(pc_kvmap_t *m, const char *key, const void *value, size_t len);
/* 1 when key was there and is now gone, 0 when it was absent. */
int pc_kvmap_remove(pc_kvmap_t *m, const char *key);
/* Calls fn for every entry, in no particular order; stops when fn returns non-zero. */
void pc_kvmap_each(const pc_kvmap_t *m, int (*fn)(const pc_kv_entry_t *e, void *arg), void *arg);
#endif
