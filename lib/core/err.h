/* Internal error helpers. */
#ifndef PC_ERR_H
#define PC_ERR_H
#include <stddef.h>
#include "pulsarc.h"

/* printf into errstr (may be NULL / 0) and return err. */
pulsarc_err_t pc_seterr(char *errstr, size_t errlen, pulsarc_err_t err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Maps a wire ServerError value to the pulsarc enum. */
pulsarc_err_t pc_err_from_server(int server_error);
#endif
