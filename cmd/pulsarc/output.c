/*
 * Design notes: how received messages are printed.
 *
 *  - raw: the payload bytes as they are, then a newline (for pipes).
 *  - hex: a header line with the id, then a canonical hex dump (offset,
 *    16 bytes, printable characters), for binary payloads read by people.
 *  - json: one object per line (NDJSON) with the id and metadata, for
 *    scripts. A payload that is well-formed UTF-8 is "payload" (a JSON
 *    string); any other payload is "payload_base64" instead, so no byte is
 *    ever lost or mangled. Keys and property values are always strings:
 *    ill-formed UTF-8 in them becomes U+FFFD, as JSON text must be Unicode.
 *
 * JSON escaping follows RFC 8259: '"', '\\' and the C0 controls are
 * escaped (short forms where they exist, else \u00XX); DEL and everything
 * above passes through; U+2028/U+2029 are escaped too so the output is
 * also safe to paste into JavaScript.
 */
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

int cli_format_parse(const char *name, cli_format_t *f) {
    static const struct {
        const char *name;
        cli_format_t f;
    } names[] = {{"raw", CLI_FMT_RAW}, {"hex", CLI_FMT_HEX}, {"json", CLI_FMT_JSON}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcasecmp(name, names[i].name)) {
            *f = names[i].f;
            return 0;
        }
    return -1;
}

/* ---- UTF-8 --------------------------------------------------------------- */

/*
 * Length of the well-formed UTF-8 sequence at s (n bytes left), or 0.
 * *cp receives the code point. Rejects overlong forms, surrogates and
 * values above U+10FFFF (RFC 3629).
 */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp) {
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (!len || len > n || s[0] > 0xF4)
        return 0;
    uint32_t c = s[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    static const uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < min_for_len[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

int cli_utf8_valid(const void *data, size_t len) {
    const unsigned char *s = data;
    uint32_t cp;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_seq(s + i, len - i, &cp);
        if (!n)
            return 0;
        i += n;
    }
    return 1;
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_escape_ascii(FILE *out, unsigned char c) {
    switch (c) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\b': fputs("\\b", out); break;
    case '\f': fputs("\\f", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
        if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
}

void cli_json_string(FILE *out, const void *data, size_t len) {
    const unsigned char *s = data;
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_seq(s + i, len - i, &cp);
        if (!n) {
            fputs("\\ufffd", out); /* one replacement per ill-formed byte */
            i++;
        } else if (n == 1) {
            json_escape_ascii(out, s[i++]);
        } else if (cp == 0x2028 || cp == 0x2029) {
            fprintf(out, "\\u%04x", (unsigned)cp);
            i += n;
        } else {
            fwrite(s + i, 1, n, out);
            i += n;
        }
    }
    fputc('"', out);
}

static void json_cstr(FILE *out, const char *s) {
    if (s)
        cli_json_string(out, s, strlen(s));
    else
        fputs("null", out);
}

/* ---- base64 and hex ------------------------------------------------------ */

void cli_base64(FILE *out, const void *data, size_t len) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = data;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < len)
            v |= s[i + 2];
        fputc(tab[v >> 18], out);
        fputc(tab[(v >> 12) & 63], out);
        fputc(i + 1 < len ? tab[(v >> 6) & 63] : '=', out);
        fputc(i + 2 < len ? tab[v & 63] : '=', out);
    }
}

static void hexdump_line(FILE *out, const unsigned char *s, size_t off, size_t n) {
    fprintf(out, "%08zx ", off);
    for (size_t i = 0; i < 16; i++) {
        if (i == 8)
            fputc(' ', out);
        if (i < n)
            fprintf(out, " %02x", s[i]);
        else
            fputs("   ", out);
    }
    fputs("  |", out);
    for (size_t i = 0; i < n; i++)
        fputc(s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '.', out);
    fputs("|\n", out);
}

void cli_hexdump(FILE *out, const void *data, size_t len) {
    const unsigned char *s = data;
    for (size_t off = 0; off < len; off += 16)
        hexdump_line(out, s + off, off, len - off < 16 ? len - off : 16);
    fprintf(out, "%08zx\n", len);
}

/* ---- messages ------------------------------------------------------------ */

static void json_properties(FILE *out, const pulsarc_msg_t *m) {
    size_t n = pulsarc_msg_property_count(m);
    fputc('{', out);
    for (size_t i = 0; i < n; i++) {
        const char *k, *v;
        if (pulsarc_msg_property_at(m, i, &k, &v) != PULSARC_OK)
            continue;
        fputs(i ? "," : "", out);
        json_cstr(out, k);
        fputc(':', out);
        json_cstr(out, v);
    }
    fputc('}', out);
}

static void json_payload(FILE *out, const pulsarc_msg_t *m) {
    const void *p = pulsarc_msg_payload(m);
    size_t len = pulsarc_msg_len(m);
    if (cli_utf8_valid(p, len)) {
        fputs(",\"payload\":", out);
        cli_json_string(out, p, len);
    } else {
        fputs(",\"payload_base64\":\"", out);
        cli_base64(out, p, len);
        fputc('"', out);
    }
}

static void print_json(FILE *out, const pulsarc_msg_t *m, const char *id) {
    fprintf(out, "{\"id\":\"%s\",\"topic\":", id);
    json_cstr(out, pulsarc_msg_topic(m));
    fputs(",\"key\":", out);
    json_cstr(out, pulsarc_msg_key(m));
    fputs(",\"properties\":", out);
    json_properties(out, m);
    fprintf(out,
            ",\"publish_time\":%" PRIu64 ",\"event_time\":%" PRIu64 ",\"sequence_id\":%" PRId64
            ",\"redelivery_count\":%" PRIu32 ",\"producer\":",
            pulsarc_msg_publish_time(m), pulsarc_msg_event_time(m), pulsarc_msg_sequence_id(m),
            pulsarc_msg_redelivery_count(m));
    json_cstr(out, pulsarc_msg_producer_name(m));
    fprintf(out, ",\"size\":%zu", pulsarc_msg_len(m));
    json_payload(out, m);
    fputs("}\n", out);
}

void cli_print_msg(FILE *out, cli_format_t f, const pulsarc_msg_t *m) {
    char id[64] = "?";
    pulsarc_msgid_t mid = pulsarc_msg_id(m);
    pulsarc_msgid_format(&mid, id, sizeof id);
    switch (f) {
    case CLI_FMT_RAW:
        fwrite(pulsarc_msg_payload(m), 1, pulsarc_msg_len(m), out);
        fputc('\n', out);
        break;
    case CLI_FMT_HEX:
        fprintf(out, "message %s, %zu bytes\n", id, pulsarc_msg_len(m));
        cli_hexdump(out, pulsarc_msg_payload(m), pulsarc_msg_len(m));
        break;
    case CLI_FMT_JSON:
        print_json(out, m, id);
        break;
    }
}
