/* Host name resolution off the loop thread. */
#ifndef PC_RESOLVE_H
#define PC_RESOLVE_H
#include <netdb.h>
#include <stdint.h>
#include "net/loop.h"

/*
 * Resolves host:port on a short-lived thread and calls cb on the loop
 * thread, exactly once: res (owned by cb, freeaddrinfo) or NULL with error.
 */
typedef void (*pc_resolve_cb)(void *arg, struct addrinfo *res, const char *error);
void pc_resolve_start(pc_loop_t *loop, const char *host, uint16_t port, pc_resolve_cb cb,
                      void *arg);
#endif
