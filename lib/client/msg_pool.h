/* Spare message structs for pulsarc_msg_new (design notes: msg_pool.c). */
#ifndef PC_MSG_POOL_H
#define PC_MSG_POOL_H
#include "pulsarc.h"

/* A zeroed message struct: a spare, or a new one (NULL: out of memory). */
pulsarc_msg_t *pc_msg_pool_get(void);
/* Takes back a struct whose contents were already freed. Any thread. */
void pc_msg_pool_put(pulsarc_msg_t *m);
/* 1 when spares are kept; 0 under AddressSanitizer or valgrind (plain calloc and free). */
int pc_msg_pool_on(void);

#endif
