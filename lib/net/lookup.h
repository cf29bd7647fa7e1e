/*
 * Topic lookup, partition metadata and the topics of a namespace: over the
 * binary protocol here (lookup.c), or handed to lookup_http.c for an
 * http(s):// service URL. The service and answer types are in
 * lookup_service.h, below both.
 */
#ifndef PC_LOOKUP_H
#define PC_LOOKUP_H
#include "net/lookup_service.h"

/* Loop thread only; each calls cb exactly once. */
void pc_lookup_topic(pc_lookup_svc_t *s, const char *topic, pc_lookup_cb cb, void *arg);
void pc_lookup_partitions(pc_lookup_svc_t *s, const char *topic, pc_partitions_cb cb, void *arg);
/* GET_TOPICS_OF_NAMESPACE for "tenant/ns" (persistent topics). */
void pc_lookup_namespace_topics(pc_lookup_svc_t *s, const char *ns, pc_topics_cb cb, void *arg);
#endif
