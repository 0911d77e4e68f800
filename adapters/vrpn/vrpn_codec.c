/* VRPN 07.38 wire codec; see vrpn_codec.h. This file: the cookie, headers and framing, system
 * messages and the UDP connection request; report bodies are in vrpn_codec_body.c, the
 * sender/type id maps in vrpn_codec_ids.c (shared helpers: vrpn_codec_priv.h). */
#include "adapters/vrpn/vrpn_codec.h"
#include "adapters/vrpn/vrpn_codec_priv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(VRPN_MAX_SENDERS == VRPN_MAX_TYPES, "id tables share one size");
_Static_assert(VRPN_MAX_TYPES <= INT16_MAX, "ids fit int16_t");

/* ---- helpers ---- */

static bool is_host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.';
}

/* Printable rendering of a few bytes for error messages. */
static void show_bytes(char *out, size_t cap, const uint8_t *p, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o < cap ? o : cap - 1] = '\0';
}

int vrpn_wr_fail(struct xg_writer *w, struct xg_error *err, const char *what)
{
    return xg_error_set(err, w->err ? w->err : -EMSGSIZE,
                        "vrpn: output buffer full writing %s (%zu of %zu bytes used)", what, w->len,
                        w->cap);
}

/* ---- cookie ---- */

int vrpn_cookie_encode(struct xg_writer *w, int log_mode, struct xg_error *err)
{
    if (log_mode < 0 || log_mode > 3)
        return xg_error_set(err, -EINVAL, "vrpn cookie: log mode %d out of range 0..3", log_mode);
    uint8_t c[VRPN_COOKIE_SIZE] = {0};
    memcpy(c, VRPN_MAGIC, 16);
    c[16] = ' ';
    c[17] = ' ';
    c[18] = (uint8_t)('0' + log_mode);
    if (xg_write_bytes(w, c, sizeof c)) return vrpn_wr_fail(w, err, "cookie");
    return 0;
}

int vrpn_cookie_decode(const uint8_t *buf, size_t len, struct vrpn_cookie *out,
                       struct xg_error *err)
{
    char shown[VRPN_COOKIE_SIZE * 4 + 1];
    if (len < VRPN_COOKIE_SIZE)
        return xg_error_set(err, -EMSGSIZE, "vrpn cookie: %zu bytes, need %d", len,
                            VRPN_COOKIE_SIZE);
    /* Mainline compares the text through the *last* '.' of the received string with its magic. */
    size_t slen = 0;
    while (slen < VRPN_COOKIE_SIZE && buf[slen])
        slen++;
    size_t last_dot = SIZE_MAX;
    for (size_t i = 0; i < slen; i++)
        if (buf[i] == '.') last_dot = i;
    const size_t plen = sizeof(VRPN_MAGIC_MAJOR_PREFIX) - 1; /* 14 */
    if (last_dot != plen - 1 || memcmp(buf, VRPN_MAGIC_MAJOR_PREFIX, plen) != 0) {
        show_bytes(shown, sizeof shown, buf, slen < 16 ? slen : 16);
        return xg_error_set(err, -EPROTO,
                            "vrpn cookie: version '%s' is not major version 07 ('%s')", shown,
                            VRPN_MAGIC);
    }
    uint8_t mode = buf[18];
    if (mode < '0' || mode > '3') {
        show_bytes(shown, sizeof shown, &mode, 1);
        return xg_error_set(err, -EPROTO,
                            "vrpn cookie: invalid log mode byte '%s' (0x%02x) at "
                            "offset 18, want '0'..'3'",
                            shown, mode);
    }
    if (out) {
        bool digits = buf[14] >= '0' && buf[14] <= '9' && buf[15] >= '0' && buf[15] <= '9';
        out->minor = digits ? (buf[14] - '0') * 10 + (buf[15] - '0') : -1;
        out->minor_differs = memcmp(buf + 14, &VRPN_MAGIC[14], 2) != 0;
        out->log_mode = mode - '0';
    }
    return 0;
}

/* ---- header and framing ---- */

static int check_length(uint32_t length, struct xg_error *err)
{
    if (length < VRPN_HEADER_SIZE)
        return xg_error_set(err, -EPROTO, "vrpn header: length %u < %d", length, VRPN_HEADER_SIZE);
    if (length > VRPN_MAX_MESSAGE || vrpn_padded_size(length) > VRPN_MAX_MESSAGE)
        return xg_error_set(err, -EPROTO, "vrpn header: length %u exceeds the maximum %d", length,
                            VRPN_MAX_MESSAGE);
    return 0;
}

int vrpn_header_decode(const uint8_t *buf, size_t len, struct vrpn_header *h, struct xg_error *err)
{
    struct xg_reader r;
    xg_reader_init(&r, buf, len);
    h->length = xg_read_be32(&r);
    h->tv_sec = xg_read_be32(&r);
    h->tv_usec = xg_read_be32(&r);
    h->sender = (int32_t)xg_read_be32(&r);
    h->type = (int32_t)xg_read_be32(&r);
    h->seq = xg_read_be32(&r);
    if (r.err)
        return xg_error_set(err, -EMSGSIZE, "vrpn header: %zu bytes, need %d", len,
                            VRPN_HEADER_SIZE);
    return check_length(h->length, err);
}

int vrpn_stream_check(const uint8_t *buf, size_t len, size_t *wire_size, struct xg_error *err)
{
    *wire_size = VRPN_HEADER_SIZE;
    if (len < 4) return 0;
    uint32_t length = xg_load_be32(buf);
    int rc = check_length(length, err);
    if (rc) return rc;
    *wire_size = vrpn_padded_size(length);
    return len >= *wire_size ? 1 : 0;
}

static void fill_msg(const uint8_t *buf, const struct vrpn_header *h, struct vrpn_msg *m)
{
    m->hdr = *h;
    m->body = buf + VRPN_HEADER_SIZE;
    m->body_len = h->length - VRPN_HEADER_SIZE;
    m->wire_size = vrpn_padded_size(h->length);
}

int vrpn_msg_parse(const uint8_t *buf, size_t len, struct vrpn_msg *m, struct xg_error *err)
{
    struct vrpn_header h;
    int rc = vrpn_header_decode(buf, len, &h, err);
    if (rc) return rc;
    if (vrpn_padded_size(h.length) > len)
        return xg_error_set(err, -EMSGSIZE,
                            "vrpn message: length %u (padded %zu) but only %zu bytes available",
                            h.length, vrpn_padded_size(h.length), len);
    fill_msg(buf, &h, m);
    return 0;
}

int vrpn_datagram_next(const uint8_t *dg, size_t len, size_t *off, struct vrpn_msg *m,
                       struct xg_error *err)
{
    if (*off >= len) return 0;
    const uint8_t *p = dg + *off;
    size_t left = len - *off;
    struct vrpn_header h;
    int rc = vrpn_header_decode(p, left, &h, err);
    if (rc) return xg_error_prefix(err, "datagram offset %zu: ", *off);
    if (h.length > left)
        return xg_error_set(err, -EMSGSIZE,
                            "datagram offset %zu: vrpn message length %u but only %zu bytes left "
                            "in the %zu-byte datagram",
                            *off, h.length, left, len);
    fill_msg(p, &h, m);
    if (m->wire_size > left)
        m->wire_size = left; /* padding cut by the datagram end: meaningless anyway */
    *off += m->wire_size;
    return 1;
}

int vrpn_encode_message(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                        const void *body, size_t body_len, struct xg_error *err)
{
    if (body_len > VRPN_MAX_MESSAGE - VRPN_HEADER_SIZE ||
        vrpn_padded_size((uint32_t)(body_len + VRPN_HEADER_SIZE)) > VRPN_MAX_MESSAGE)
        return xg_error_set(err, -EMSGSIZE, "vrpn message: body of %zu bytes exceeds the maximum",
                            body_len);
    uint32_t length = (uint32_t)(VRPN_HEADER_SIZE + body_len);
    size_t total = vrpn_padded_size(length);
    if (w->err || w->cap - w->len < total) {
        w->err = -EMSGSIZE;
        return vrpn_wr_fail(w, err, "message");
    }
    xg_write_be32(w, length);
    xg_write_be32(w, h->tv_sec);
    xg_write_be32(w, h->tv_usec);
    xg_write_be32(w, (uint32_t)h->sender);
    xg_write_be32(w, (uint32_t)h->type);
    xg_write_be32(w, seq ? *seq : h->seq);
    if (body_len) xg_write_bytes(w, body, body_len);
    xg_write_zeros(w, total - length);
    if (w->err) return vrpn_wr_fail(w, err, "message");
    if (seq) (*seq)++;
    return 0;
}

/* ---- system messages ---- */

static const char *system_name(int32_t type)
{
    switch (type) {
    case VRPN_SENDER_DESCRIPTION:
        return "SENDER_DESCRIPTION";
    case VRPN_TYPE_DESCRIPTION:
        return "TYPE_DESCRIPTION";
    case VRPN_UDP_DESCRIPTION:
        return "UDP_DESCRIPTION";
    case VRPN_LOG_DESCRIPTION:
        return "LOG_DESCRIPTION";
    case VRPN_DISCONNECT_MESSAGE:
        return "DISCONNECT";
    default:
        return "system message";
    }
}

/* Validate a NUL-terminated string of exactly n bytes (n-1 chars + NUL) at p. */
static bool exact_cstring(const uint8_t *p, size_t n)
{
    return n >= 1 && p[n - 1] == '\0' && memchr(p, '\0', n - 1) == NULL;
}

static int decode_description(const struct vrpn_msg *m, struct vrpn_system_msg *out,
                              struct xg_error *err)
{
    const char *what = system_name(m->hdr.type);
    struct xg_reader r;
    xg_reader_init(&r, m->body, m->body_len);
    if (m->hdr.sender < 0 || m->hdr.sender >= VRPN_MAX_TYPES)
        return xg_error_set(err, -EPROTO, "vrpn %s: id %d out of range 0..%d", what, m->hdr.sender,
                            VRPN_MAX_TYPES - 1);
    uint32_t n = xg_read_be32(&r);
    if (r.err)
        return xg_error_set(err, -EPROTO, "vrpn %s: body of %zu bytes has no name length", what,
                            m->body_len);
    if (n < 1 || n > VRPN_CNAME_MAX)
        return xg_error_set(err, -EPROTO, "vrpn %s: name length %u out of range 1..%d", what, n,
                            VRPN_CNAME_MAX);
    if (m->body_len != 4 + (size_t)n)
        return xg_error_set(err, -EPROTO, "vrpn %s: body of %zu bytes, name length %u wants %u",
                            what, m->body_len, n, 4 + n);
    const uint8_t *name = xg_read_bytes(&r, n);
    if (!exact_cstring(name, n))
        return xg_error_set(err, -EPROTO,
                            "vrpn %s: name of length %u is not NUL-terminated exactly at its end",
                            what, n);
    out->id = m->hdr.sender;
    memcpy(out->name, name, n);
    return 0;
}

int vrpn_system_decode(const struct vrpn_msg *m, struct vrpn_system_msg *out, struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    out->type = m->hdr.type;
    switch (m->hdr.type) {
    case VRPN_SENDER_DESCRIPTION:
    case VRPN_TYPE_DESCRIPTION:
        return decode_description(m, out, err);
    case VRPN_UDP_DESCRIPTION: {
        if (m->hdr.sender < 1 || m->hdr.sender > 65535)
            return xg_error_set(err, -EPROTO, "vrpn UDP_DESCRIPTION: port %d out of range 1..65535",
                                m->hdr.sender);
        if (m->body_len < 2 || m->body_len > VRPN_CNAME_MAX || !exact_cstring(m->body, m->body_len))
            return xg_error_set(err, -EPROTO,
                                "vrpn UDP_DESCRIPTION: body of %zu bytes is not a 1..%d character "
                                "host + NUL",
                                m->body_len, VRPN_CNAME_MAX - 1);
        out->udp_port = (uint16_t)m->hdr.sender;
        memcpy(out->name, m->body, m->body_len);
        return 0;
    }
    case VRPN_LOG_DESCRIPTION: {
        struct xg_reader r;
        xg_reader_init(&r, m->body, m->body_len);
        int32_t lin = (int32_t)xg_read_be32(&r);
        int32_t lout = (int32_t)xg_read_be32(&r);
        if (r.err || lin < 0 || lout < 0 || m->body_len != 8 + (size_t)lin + 1 + (size_t)lout + 1 ||
            !exact_cstring(m->body + 8, (size_t)lin + 1) ||
            !exact_cstring(m->body + 8 + lin + 1, (size_t)lout + 1))
            return xg_error_set(err, -EPROTO,
                                "vrpn LOG_DESCRIPTION: name lengths %d/%d do not match the "
                                "%zu-byte body",
                                lin, lout, m->body_len);
        out->log_mode = m->hdr.sender;
        out->log_in_name = (const char *)m->body + 8;
        out->log_out_name = (const char *)m->body + 8 + lin + 1;
        return 0;
    }
    case VRPN_DISCONNECT_MESSAGE:
        if (m->body_len)
            return xg_error_set(err, -EPROTO, "vrpn DISCONNECT: body of %zu bytes, want 0",
                                m->body_len);
        return 0;
    default:
        return xg_error_set(err, -EPROTO, "vrpn header: unknown system message type %d",
                            m->hdr.type);
    }
}

int vrpn_check_name(const char *name, const char *what, struct xg_error *err)
{
    size_t n = name ? strnlen(name, VRPN_CNAME_MAX) : 0;
    if (n == 0 || n >= VRPN_CNAME_MAX)
        return xg_error_set(err, -EINVAL, "vrpn %s: name length %zu%s out of range 1..%d", what, n,
                            n >= VRPN_CNAME_MAX ? "+" : "", VRPN_CNAME_MAX - 1);
    return 0;
}

int vrpn_encode_description(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                            int32_t type, int32_t id, const char *name, struct xg_error *err)
{
    if (type != VRPN_SENDER_DESCRIPTION && type != VRPN_TYPE_DESCRIPTION)
        return xg_error_set(err, -EINVAL, "vrpn description: type %d is not -1 or -2", type);
    if (id < 0 || id >= VRPN_MAX_TYPES)
        return xg_error_set(err, -EINVAL, "vrpn %s: id %d out of range 0..%d", system_name(type),
                            id, VRPN_MAX_TYPES - 1);
    int rc = vrpn_check_name(name, system_name(type), err);
    if (rc) return rc;
    uint8_t body[4 + VRPN_CNAME_MAX];
    uint32_t n = (uint32_t)strlen(name) + 1;
    xg_store_be32(body, n);
    memcpy(body + 4, name, n);
    struct vrpn_header hh = *h;
    hh.sender = id;
    hh.type = type;
    return vrpn_encode_message(w, &hh, seq, body, 4 + n, err);
}

int vrpn_encode_udp_description(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                                uint16_t udp_port, const char *host, struct xg_error *err)
{
    if (udp_port == 0) return xg_error_set(err, -EINVAL, "vrpn UDP_DESCRIPTION: port 0");
    int rc = vrpn_check_name(host, "UDP_DESCRIPTION host", err);
    if (rc) return rc;
    struct vrpn_header hh = *h;
    hh.sender = udp_port;
    hh.type = VRPN_UDP_DESCRIPTION;
    return vrpn_encode_message(w, &hh, seq, host, strlen(host) + 1, err);
}

int vrpn_encode_log_description(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                                int32_t log_mode, const char *in_name, const char *out_name,
                                struct xg_error *err)
{
    if (!in_name || !out_name)
        return xg_error_set(err, -EINVAL, "vrpn LOG_DESCRIPTION: NULL log name");
    size_t lin = strlen(in_name), lout = strlen(out_name);
    if (lin + lout + 10 > VRPN_MAX_MESSAGE - VRPN_HEADER_SIZE)
        return xg_error_set(err, -EINVAL, "vrpn LOG_DESCRIPTION: names of %zu+%zu bytes too long",
                            lin, lout);
    size_t blen = 8 + lin + 1 + lout + 1;
    uint8_t *body = malloc(blen);
    if (!body) return xg_error_set(err, -ENOMEM, "vrpn LOG_DESCRIPTION: out of memory");
    xg_store_be32(body, (uint32_t)lin);
    xg_store_be32(body + 4, (uint32_t)lout);
    memcpy(body + 8, in_name, lin + 1);
    memcpy(body + 8 + lin + 1, out_name, lout + 1);
    struct vrpn_header hh = *h;
    hh.sender = log_mode;
    hh.type = VRPN_LOG_DESCRIPTION;
    int rc = vrpn_encode_message(w, &hh, seq, body, blen, err);
    free(body);
    return rc;
}

int vrpn_encode_disconnect(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                           struct xg_error *err)
{
    struct vrpn_header hh = *h;
    hh.type = VRPN_DISCONNECT_MESSAGE;
    return vrpn_encode_message(w, &hh, seq, NULL, 0, err);
}

/* ---- connection request ---- */

static bool valid_host(const char *s, size_t n)
{
    if (n == 0 || n >= VRPN_CNAME_MAX) return false;
    for (size_t i = 0; i < n; i++)
        if (!is_host_char(s[i])) return false;
    return true;
}

int vrpn_lob_encode(struct xg_writer *w, const char *host, uint16_t tcp_port, struct xg_error *err)
{
    size_t n = host ? strnlen(host, VRPN_CNAME_MAX) : 0;
    if (!valid_host(host ? host : "", n))
        return xg_error_set(err, -EINVAL,
                            "vrpn connection request: host must be 1..%d letters, digits or dots",
                            VRPN_CNAME_MAX - 1);
    if (tcp_port < 1024)
        return xg_error_set(err, -EINVAL, "vrpn connection request: TCP port %u < 1024", tcp_port);
    char buf[VRPN_LOB_MAX];
    int len = snprintf(buf, sizeof buf, "%s %u", host, (unsigned)tcp_port);
    if (len < 0 || (size_t)len >= sizeof buf)
        return xg_error_set(err, -EINVAL, "vrpn connection request: too long");
    if (xg_write_bytes(w, buf, (size_t)len + 1)) return vrpn_wr_fail(w, err, "connection request");
    return 0;
}

int vrpn_lob_decode(const uint8_t *buf, size_t len, struct vrpn_lob *out, struct xg_error *err)
{
    char shown[64];
    if (len < 2 || len > VRPN_LOB_MAX)
        return xg_error_set(err, -EPROTO, "vrpn connection request: %zu bytes, want 2..%d", len,
                            VRPN_LOB_MAX);
    if (!exact_cstring(buf, len)) {
        show_bytes(shown, sizeof shown, buf, len < 16 ? len : 16);
        return xg_error_set(err, -EPROTO,
                            "vrpn connection request '%s': not one NUL-terminated string of %zu "
                            "bytes",
                            shown, len);
    }
    const char *s = (const char *)buf;
    const char *sp = strchr(s, ' ');
    size_t hlen = sp ? (size_t)(sp - s) : 0;
    if (!sp || !valid_host(s, hlen)) {
        show_bytes(shown, sizeof shown, buf, len - 1 < 40 ? len - 1 : 40);
        return xg_error_set(err, -EPROTO,
                            "vrpn connection request '%s': host is not 1..%d letters, digits or "
                            "dots followed by a space",
                            shown, VRPN_CNAME_MAX - 1);
    }
    const char *p = sp + 1;
    unsigned long port = 0;
    size_t nd = 0;
    for (; p[nd]; nd++) {
        if (p[nd] < '0' || p[nd] > '9' || nd >= 5) {
            nd = 0;
            break;
        }
        port = port * 10 + (unsigned long)(p[nd] - '0');
    }
    if (nd == 0 || port < 1024 || port > 65535) {
        show_bytes(shown, sizeof shown, (const uint8_t *)p, strlen(p) < 20 ? strlen(p) : 20);
        return xg_error_set(err, -EPROTO,
                            "vrpn connection request: TCP port '%s' is not a number in 1024..65535",
                            shown);
    }
    memcpy(out->host, s, hlen);
    out->host[hlen] = '\0';
    out->tcp_port = (uint16_t)port;
    return 0;
}
