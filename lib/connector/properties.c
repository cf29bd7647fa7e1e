/*
 * Design notes: the Java .properties syntax (java.util.Properties.load),
 * read from memory, no I/O.
 *
 *  - Natural lines end at \n, \r or \r\n. Blank lines and lines whose first
 *    non-blank character is # or ! are skipped (only at the start of an
 *    entry: a continuation line starting with # is data).
 *  - A line ending in an odd number of backslashes continues on the next;
 *    the backslash, the line end and the next line's leading blanks go.
 *  - The key ends at the first unescaped '=', ':' or blank; blanks, at most
 *    one '=' or ':', and blanks again separate it from the value. Trailing
 *    blanks of the value are kept, as Java keeps them.
 *  - Escapes: \t \n \r \f, \uXXXX (UTF-16 units; a surrogate pair becomes
 *    one code point, a lone surrogate U+FFFD), and \c for any other c.
 *    Java reads bytes as ISO-8859-1; pulsarc takes them as UTF-8, the
 *    encoding of every file it will meet, and writes \u escapes as UTF-8.
 *
 * Entries are unescaped into one heap buffer per entry (as long as the raw
 * entry, which is never shorter than its unescaped form), so nothing is
 * bounded but the input.
 */
#include <stdlib.h>
#include <string.h>

#include "connector/config_int.h"
#include "core/err.h"

typedef struct reader {
    const char *p, *end;
    int line;
} reader_t;

static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\f';
}

static int is_eol(char c) {
    return c == '\n' || c == '\r';
}

static void skip_blanks(reader_t *r) {
    while (r->p < r->end && is_blank(*r->p))
        r->p++;
}

/* Consumes one line end (\r\n counts once). */
static void skip_eol(reader_t *r) {
    if (r->p < r->end && *r->p == '\r')
        r->p++;
    if (r->p < r->end && *r->p == '\n')
        r->p++;
    r->line++;
}

static void skip_line(reader_t *r) {
    while (r->p < r->end && !is_eol(*r->p))
        r->p++;
    skip_eol(r);
}

/* Appends one natural line to out; returns 1 if it continues on the next. */
static int take_segment(reader_t *r, char *out, size_t *n) {
    const char *start = r->p;
    while (r->p < r->end && !is_eol(*r->p))
        r->p++;
    size_t len = (size_t)(r->p - start), slashes = 0;
    while (slashes < len && start[len - 1 - slashes] == '\\')
        slashes++;
    int more = slashes % 2 == 1;
    memcpy(out + *n, start, len - (size_t)more);
    *n += len - (size_t)more;
    if (r->p < r->end)
        skip_eol(r);
    return more;
}

/* The raw logical line starting at r->p, NUL-terminated into out. */
static void take_logical_line(reader_t *r, char *out) {
    size_t n = 0;
    while (take_segment(r, out, &n) && r->p < r->end)
        skip_blanks(r);
    out[n] = '\0';
}

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Reads XXXX after "\u"; -1 if malformed. */
static long read_u4(const char *s) {
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(s[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

static size_t put_utf8(char *o, unsigned long cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/*
 * Decodes XXXX after "\u" (and a following \uXXXX low surrogate) at s, of
 * which avail bytes belong to the text; *used: bytes consumed; -1 if malformed.
 */
static long decode_u(const char *s, size_t avail, size_t *used) {
    long hi = avail >= 4 ? read_u4(s) : -1;
    *used = 4;
    if (hi < 0xD800 || hi > 0xDFFF)
        return hi;
    if (hi <= 0xDBFF && avail >= 10 && s[4] == '\\' && s[5] == 'u') {
        long lo = read_u4(s + 6);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            *used = 10;
            return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
        }
    }
    return 0xFFFD;
}

/* Unescapes [s, s+n) into out (NUL-terminated); -1 on a malformed \u. */
static int unescape(const char *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            out[o++] = s[i];
            continue;
        }
        if (++i == n)
            break; /* a lone trailing backslash (end of input) is dropped */
        char c = s[i];
        if (c == 'u') {
            size_t used;
            long cp = decode_u(s + i + 1, n - i - 1, &used);
            if (cp < 0)
                return -1;
            o += put_utf8(out + o, (unsigned long)cp);
            i += used;
            continue;
        }
        out[o++] = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 'f' ? '\f' : c;
    }
    out[o] = '\0';
    return 0;
}

/* Length of the raw key at the start of s. */
static size_t key_length(const char *s) {
    size_t i = 0;
    while (s[i] && s[i] != '=' && s[i] != ':' && !is_blank(s[i]))
        i += s[i] == '\\' && s[i + 1] ? 2 : 1;
    return i;
}

/* Offset of the raw value after the key and its separator. */
static size_t value_start(const char *s, size_t i) {
    while (is_blank(s[i]))
        i++;
    if (s[i] == '=' || s[i] == ':')
        i++;
    while (is_blank(s[i]))
        i++;
    return i;
}

static pulsarc_err_t emit(const char *raw, int line, pc_properties_cb cb, void *opaque, char *e,
                          size_t el) {
    size_t n = strlen(raw), klen = key_length(raw), vstart = value_start(raw, klen);
    char *key = malloc(n + 2), *value = malloc(n + 2);
    pulsarc_err_t err = PULSARC_OK;
    if (!key || !value)
        err = pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    else if (unescape(raw, klen, key) || unescape(raw + vstart, n - vstart, value))
        err = pc_seterr(e, el, PULSARC_ERR_BAD_CONFIG, "line %d: malformed \\uxxxx escape", line);
    else
        err = cb(opaque, key, value, line, e, el);
    free(key);
    free(value);
    return err;
}

pulsarc_err_t pc_properties_parse(const char *text, size_t len, pc_properties_cb cb,
                                  void *opaque, char *e, size_t el) {
    reader_t r = {text, text + len, 1};
    char *raw = malloc(len + 1);
    if (!raw)
        return pc_seterr(e, el, PULSARC_ERR_NOMEM, "out of memory");
    pulsarc_err_t err = PULSARC_OK;
    while (!err && r.p < r.end) {
        skip_blanks(&r);
        if (r.p == r.end)
            break;
        if (is_eol(*r.p) || *r.p == '#' || *r.p == '!') {
            skip_line(&r);
            continue;
        }
        int line = r.line;
        take_logical_line(&r, raw);
        err = emit(raw, line, cb, opaque, e, el);
    }
    free(raw);
    return err;
}
