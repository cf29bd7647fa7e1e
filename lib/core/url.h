/* Service URLs: pulsar://h1:6650,h2:6650, pulsar+ssl://…, http(s)://… */
#ifndef PC_URL_H
#define PC_URL_H
#include <stddef.h>
#include <stdint.h>
#include "pulsarc.h"

#define PC_URL_MAX_HOSTS 16
#define PC_HOST_MAX 256

typedef struct pc_hostport {
    char host[PC_HOST_MAX]; /* without brackets for IPv6 literals */
    uint16_t port;
} pc_hostport_t;

typedef struct pc_service_url {
    int tls;  /* pulsar+ssl:// or https:// */
    int http; /* http:// or https:// (admin / HTTP lookup) */
    int nhosts;
    pc_hostport_t hosts[PC_URL_MAX_HOSTS];
} pc_service_url_t;

/*
 * Parses a service URL. Schemes: pulsar, pulsar+ssl, http, https. Several
 * comma-separated hosts, each host[:port] or [v6]:port; default port 6650 /
 * 6651 / 80 / 443 by scheme; a trailing '/' is allowed, any other path is
 * not. On error returns PULSARC_ERR_BAD_URL (or INVALID_ARG for NULL) and
 * writes a reason naming the problem into errstr.
 */
pulsarc_err_t pc_service_url_parse(const char *url, pc_service_url_t *out, char *errstr,
                                   size_t errlen);

/* Parses "host:port" as LOOKUP returns inside a pulsar:// URL. */
pulsarc_err_t pc_hostport_parse(const char *s, uint16_t default_port, pc_hostport_t *out,
                                char *errstr, size_t errlen);
#endif
