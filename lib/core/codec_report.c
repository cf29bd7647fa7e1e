/*
 * Design notes: what every codec says the same way when a payload does not
 * inflate to the size its metadata announced. Kept apart from codec.c
 * (the table that calls the codecs) so the codecs never call back up into
 * it. Pure; any thread.
 */
#include "core/codec.h"
#include "core/err.h"

pulsarc_err_t pc_codec_size_mismatch(char *why, size_t whylen, size_t got, size_t expected) {
    return pc_seterr(why, whylen, PULSARC_ERR_COMPRESSION,
                     "yields %zu bytes, uncompressed_size says %zu", got, expected);
}
