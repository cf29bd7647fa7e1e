/*
 * Pulsar frame codec: bytes in, commands out, and back. No I/O, no threads.
 *
 *   simple:  [total:4][cmdlen:4][BaseCommand]
 *   payload: [total:4][cmdlen:4][BaseCommand]
 *            ([0x0e02][bemlen:4][BrokerEntryMetadata])?   broker -> client only
 *            ([0x0e01][crc32c:4])?                         CRC over the rest
 *            [metalen:4][MessageMetadata][payload]
 */
#ifndef PC_FRAME_H
#define PC_FRAME_H
#include <stddef.h>
#include <stdint.h>

#include "PulsarApi.pb-c.h"
#include "core/buf.h"
#include "pulsarc.h"

#define PC_MAGIC_CRC32C 0x0e01
#define PC_MAGIC_BROKER_ENTRY_METADATA 0x0e02
/* Default broker max message size and the header slack brokers allow. */
#define PC_DEFAULT_MAX_MESSAGE_SIZE (5 * 1024 * 1024)
#define PC_FRAME_PADDING (10 * 1024)
/* The most a broker's CONNECTED may raise the frame limit to: the receive
 * buffer grows to that size, so a claim of 2 GiB must not be taken as is. */
#define PC_MAX_MESSAGE_SIZE_CEILING ((size_t)128 << 20)

typedef Pulsar__Proto__BaseCommand pc_cmd_t;

/* One decoded frame. Pointers reference the input bytes. */
typedef struct pc_frame {
    pc_cmd_t *cmd;               /* owned: free with pc_frame_clear() */
    ProtobufCAllocator *alloc;   /* what cmd was unpacked with (NULL: malloc) */
    int fast;                    /* cmd came from a pc_fast_*_cmd decoder (core/pbfast.h) */
    int has_payload;             /* the frame had a payload section */
    const uint8_t *bem;          /* raw BrokerEntryMetadata, or NULL */
    size_t bem_len;
    int has_checksum;
    int checksum_ok;             /* 1 when there was no checksum or it matched */
    const uint8_t *meta;         /* raw MessageMetadata bytes */
    size_t meta_len;
    const uint8_t *payload;
    size_t payload_len;
    /*
     * The reader's buffer when the frame starts at its front (set by the
     * reader, not the parser; NULL otherwise): the handler may take the
     * frame's bytes with pc_frame_adopt instead of copying them.
     */
    pc_buf_t *source;
    size_t frame_len; /* bytes of the frame at source's front */
} pc_frame_t;

/*
 * Swaps the buffer holding f (f->source) with *mine, which must hold no
 * bytes (len 0): *mine gets the frame, at its front, frame_len long, and
 * the source gets mine's memory with whatever followed the frame moved to
 * its front (what the reader would have moved there anyway). So a large
 * payload changes hands instead of being copied, and nothing is allocated
 * while both buffers are big enough. 0 on success; -1 (nothing changed)
 * when f has no source, or mine holds more than the source may (its
 * limit), or the bytes after the frame do not fit in mine.
 */
int pc_frame_adopt(const pc_frame_t *f, pc_buf_t *mine);

/*
 * Parses one frame from buf. Returns the bytes consumed (> 0) with *out
 * filled, 0 when buf holds no complete frame yet, or a negative
 * pulsarc_err_t (MALFORMED, FRAME_TOO_BIG) with a reason in errstr, after
 * which the stream cannot be resynchronised. A CRC mismatch is not a
 * stream error: the frame is returned with checksum_ok = 0.
 * max_frame bounds the total size (the 4-byte length prefix excluded).
 */
long pc_frame_parse(const uint8_t *buf, size_t len, size_t max_frame, pc_frame_t *out,
                    char *errstr, size_t errlen);
/* The same, unpacking the command with alloc (e.g. a per-connection arena). */
long pc_frame_parse_with(const uint8_t *buf, size_t len, size_t max_frame, ProtobufCAllocator *alloc,
                         pc_frame_t *out, char *errstr, size_t errlen);
void pc_frame_clear(pc_frame_t *f);

/* Appends a simple command frame. cmd->type and its sub-message must be set. */
pulsarc_err_t pc_frame_encode(pc_buf_t *out, const pc_cmd_t *cmd);
/*
 * Appends a payload command frame (SEND, or MESSAGE for test peers) with the
 * CRC32C always present. meta is serialised here; payload may be empty.
 */
pulsarc_err_t pc_frame_encode_payload(pc_buf_t *out, const pc_cmd_t *cmd,
                                      const Pulsar__Proto__MessageMetadata *meta,
                                      const void *payload, size_t payload_len);
/*
 * The same frame without its payload's bytes: everything up to them, with
 * the size and the CRC32C already counting them. The caller sends the
 * payload right after (a producer sends it from the message's own buffer).
 */
pulsarc_err_t pc_frame_encode_payload_head(pc_buf_t *out, const pc_cmd_t *cmd,
                                           const Pulsar__Proto__MessageMetadata *meta,
                                           const void *payload, size_t payload_len);
/* Same, with the metadata already serialised (resends, replay corpora). */
pulsarc_err_t pc_frame_encode_payload_raw(pc_buf_t *out, const pc_cmd_t *cmd,
                                          const uint8_t *meta, size_t meta_len,
                                          const void *payload, size_t payload_len);

/* Human name of a command type, e.g. "SEND_RECEIPT". */
const char *pc_cmd_name(int type);
#endif
