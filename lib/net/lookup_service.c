/*
 * Design notes: the service URL's hosts, taken round-robin by every lookup
 * whichever way it goes (lookup.c, lookup_http.c), so consecutive
 * operations start at consecutive hosts. The counter lives in the service
 * (lookup_service.h). Loop thread only, like the service.
 */
#include "net/lookup_service.h"

const pc_hostport_t *pc_lookup_service_host(pc_lookup_svc_t *s) {
    const pc_hostport_t *h = &s->url.hosts[s->next_host % (unsigned)s->url.nhosts];
    s->next_host++;
    return h;
}
