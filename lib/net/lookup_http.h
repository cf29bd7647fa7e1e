/* Lookups over the brokers' REST API, for http:// and https:// service URLs. */
#ifndef PC_LOOKUP_HTTP_H
#define PC_LOOKUP_HTTP_H
#include "net/lookup_service.h"

/* Loop thread only; each calls cb exactly once, on the loop thread. */
void pc_lookup_http_topic(pc_lookup_svc_t *s, const char *topic, pc_lookup_cb cb, void *arg);
void pc_lookup_http_partitions(pc_lookup_svc_t *s, const char *topic, pc_partitions_cb cb, void *arg);
void pc_lookup_http_namespace_topics(pc_lookup_svc_t *s, const char *ns, pc_topics_cb cb, void *arg);
#endif
