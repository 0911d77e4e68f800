/* VRPN 07.38 wire codec; see vrpn_codec.h. */
#include "adapters/vrpn/vrpn_codec.h"

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

static int wr_fail(struct xg_writer *w, struct xg_error *err, const char *what)
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
    if (xg_write_bytes(w, c, sizeof c)) return wr_fail(w, err, "cookie");
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
        return wr_fail(w, err, "message");
    }
    xg_write_be32(w, length);
    xg_write_be32(w, h->tv_sec);
    xg_write_be32(w, h->tv_usec);
    xg_write_be32(w, (uint32_t)h->sender);
    xg_write_be32(w, (uint32_t)h->type);
    xg_write_be32(w, seq ? *seq : h->seq);
    if (body_len) xg_write_bytes(w, body, body_len);
    xg_write_zeros(w, total - length);
    if (w->err) return wr_fail(w, err, "message");
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

static int check_name(const char *name, const char *what, struct xg_error *err)
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
    int rc = check_name(name, system_name(type), err);
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
    int rc = check_name(host, "UDP_DESCRIPTION host", err);
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
    if (xg_write_bytes(w, buf, (size_t)len + 1)) return wr_fail(w, err, "connection request");
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

/* ---- bodies ---- */

static const struct {
    enum vrpn_body_kind kind;
    const char *name;
} kind_names[] = {
    {VRPN_BODY_POS_QUAT, VRPN_TYPE_POS_QUAT},
    {VRPN_BODY_VELOCITY, VRPN_TYPE_VELOCITY},
    {VRPN_BODY_ACCELERATION, VRPN_TYPE_ACCELERATION},
    {VRPN_BODY_BUTTON_CHANGE, VRPN_TYPE_BUTTON_CHANGE},
    {VRPN_BODY_BUTTON_STATES, VRPN_TYPE_BUTTON_STATES},
    {VRPN_BODY_ANALOG, VRPN_TYPE_ANALOG_CHANNEL},
    {VRPN_BODY_DIAL, VRPN_TYPE_DIAL},
    {VRPN_BODY_PING, VRPN_TYPE_PING},
    {VRPN_BODY_PONG, VRPN_TYPE_PONG},
    {VRPN_BODY_TEXT, VRPN_TYPE_TEXT},
};

const char *const vrpn_std_types[VRPN_T_COUNT] = {
    [VRPN_T_GOT_FIRST_CONNECTION] = VRPN_TYPE_GOT_FIRST_CONNECTION,
    [VRPN_T_GOT_CONNECTION] = VRPN_TYPE_GOT_CONNECTION,
    [VRPN_T_DROPPED_CONNECTION] = VRPN_TYPE_DROPPED_CONNECTION,
    [VRPN_T_DROPPED_LAST_CONNECTION] = VRPN_TYPE_DROPPED_LAST_CONNECTION,
    [VRPN_T_POS_QUAT] = VRPN_TYPE_POS_QUAT,
    [VRPN_T_VELOCITY] = VRPN_TYPE_VELOCITY,
    [VRPN_T_ACCELERATION] = VRPN_TYPE_ACCELERATION,
    [VRPN_T_TO_ROOM] = "vrpn_Tracker To_Room",
    [VRPN_T_UNIT_TO_SENSOR] = "vrpn_Tracker Unit_To_Sensor",
    [VRPN_T_REQUEST_TO_ROOM] = "vrpn_Tracker Request_Tracker_To_Room",
    [VRPN_T_REQUEST_UNIT_TO_SENSOR] = "vrpn_Tracker Request_Unit_To_Sensor",
    [VRPN_T_WORKSPACE] = "vrpn_Tracker Workspace",
    [VRPN_T_REQUEST_WORKSPACE] = "vrpn_Tracker Request_Tracker_Workspace",
    [VRPN_T_SET_UPDATE_RATE] = "vrpn_Tracker set_update_rate",
    [VRPN_T_RESET_ORIGIN] = "vrpn_Tracker Reset_Origin",
    [VRPN_T_TEXT] = VRPN_TYPE_TEXT,
    [VRPN_T_PING] = VRPN_TYPE_PING,
    [VRPN_T_PONG] = VRPN_TYPE_PONG,
    [VRPN_T_ANALOG] = VRPN_TYPE_ANALOG_CHANNEL,
    [VRPN_T_BUTTON_CHANGE] = VRPN_TYPE_BUTTON_CHANGE,
    [VRPN_T_BUTTON_STATES] = VRPN_TYPE_BUTTON_STATES,
    [VRPN_T_BUTTON_ADMIN] = "vrpn_Button Admin",
    [VRPN_T_DIAL] = VRPN_TYPE_DIAL,
    [VRPN_T_BUTTON_ALERT] = "vrpn_Button Alert",
};

enum vrpn_body_kind vrpn_body_kind_of(const char *type_name)
{
    if (!type_name) return VRPN_BODY_UNKNOWN;
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (strcmp(type_name, kind_names[i].name) == 0) return kind_names[i].kind;
    return VRPN_BODY_UNKNOWN;
}

const char *vrpn_body_type_name(enum vrpn_body_kind kind)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (kind_names[i].kind == kind) return kind_names[i].name;
    return NULL;
}

bool vrpn_body_low_latency(enum vrpn_body_kind kind)
{
    return kind == VRPN_BODY_POS_QUAT || kind == VRPN_BODY_VELOCITY ||
           kind == VRPN_BODY_ACCELERATION || kind == VRPN_BODY_ANALOG;
}

static int body_size_error(enum vrpn_body_kind kind, size_t len, size_t want, struct xg_error *err)
{
    return xg_error_set(err, -EPROTO, "vrpn %s: body of %zu bytes, want %zu",
                        vrpn_body_type_name(kind), len, want);
}

static struct xg_vec3 read_vec3(struct xg_reader *r)
{
    struct xg_vec3 v;
    v.x = xg_read_bef64(r);
    v.y = xg_read_bef64(r);
    v.z = xg_read_bef64(r);
    return v;
}

static struct xg_quat read_quat(struct xg_reader *r)
{
    struct xg_quat q;
    q.x = xg_read_bef64(r);
    q.y = xg_read_bef64(r);
    q.z = xg_read_bef64(r);
    q.w = xg_read_bef64(r);
    return q;
}

static int check_sensor(enum vrpn_body_kind kind, int32_t sensor, struct xg_error *err)
{
    if (sensor < 0)
        return xg_error_set(err, -EPROTO, "vrpn %s: negative sensor %d", vrpn_body_type_name(kind),
                            sensor);
    return 0;
}

int vrpn_body_decode(enum vrpn_body_kind kind, const uint8_t *body, size_t len,
                     struct vrpn_body *out, struct xg_error *err)
{
    struct xg_reader r;
    xg_reader_init(&r, body, len);
    out->kind = kind;
    switch (kind) {
    case VRPN_BODY_POS_QUAT: {
        if (len != 64) return body_size_error(kind, len, 64, err);
        struct vrpn_pos_quat *pq = &out->u.pos_quat;
        pq->sensor = (int32_t)xg_read_be32(&r);
        pq->filler = (int32_t)xg_read_be32(&r);
        pq->pos = read_vec3(&r);
        pq->quat = read_quat(&r);
        return check_sensor(kind, pq->sensor, err);
    }
    case VRPN_BODY_VELOCITY:
    case VRPN_BODY_ACCELERATION: {
        if (len != 72) return body_size_error(kind, len, 72, err);
        struct vrpn_tracker_rate *tr = &out->u.rate;
        tr->sensor = (int32_t)xg_read_be32(&r);
        tr->filler = (int32_t)xg_read_be32(&r);
        tr->vec = read_vec3(&r);
        tr->quat = read_quat(&r);
        tr->quat_dt = xg_read_bef64(&r);
        return check_sensor(kind, tr->sensor, err);
    }
    case VRPN_BODY_BUTTON_CHANGE:
        if (len != 8) return body_size_error(kind, len, 8, err);
        out->u.button.button = (int32_t)xg_read_be32(&r);
        out->u.button.state = (int32_t)xg_read_be32(&r);
        return 0;
    case VRPN_BODY_BUTTON_STATES: {
        int32_t n = (int32_t)xg_read_be32(&r);
        if (r.err) return body_size_error(kind, len, 4, err);
        if (n < 0 || n > VRPN_MAX_BUTTONS)
            return xg_error_set(err, -EPROTO, "vrpn %s: button count %d out of range 0..%d",
                                vrpn_body_type_name(kind), n, VRPN_MAX_BUTTONS);
        if (len != 4 + 4 * (size_t)n) return body_size_error(kind, len, 4 + 4 * (size_t)n, err);
        out->u.states.count = n;
        for (int32_t i = 0; i < n; i++)
            out->u.states.states[i] = (int32_t)xg_read_be32(&r);
        return 0;
    }
    case VRPN_BODY_ANALOG: {
        double dn = xg_read_bef64(&r);
        if (r.err) return body_size_error(kind, len, 8, err);
        if (!(dn >= 0 && dn <= VRPN_MAX_ANALOG) || dn != floor(dn))
            return xg_error_set(err, -EPROTO,
                                "vrpn %s: channel count %g is not an integer in "
                                "0..%d",
                                vrpn_body_type_name(kind), dn, VRPN_MAX_ANALOG);
        int32_t n = (int32_t)dn;
        if (len != 8 * ((size_t)n + 1)) return body_size_error(kind, len, 8 * ((size_t)n + 1), err);
        out->u.analog.count = n;
        for (int32_t i = 0; i < n; i++)
            out->u.analog.channels[i] = xg_read_bef64(&r);
        return 0;
    }
    case VRPN_BODY_DIAL:
        if (len != 12) return body_size_error(kind, len, 12, err);
        out->u.dial.delta = xg_read_bef64(&r);
        out->u.dial.dial = (int32_t)xg_read_be32(&r);
        return 0;
    case VRPN_BODY_PING:
    case VRPN_BODY_PONG:
        if (len != 0) return body_size_error(kind, len, 0, err);
        return 0;
    case VRPN_BODY_TEXT: {
        if (len < 9 || len > VRPN_TEXT_PAYLOAD)
            return xg_error_set(err, -EPROTO, "vrpn %s: body of %zu bytes, want 9..%d",
                                vrpn_body_type_name(kind), len, VRPN_TEXT_PAYLOAD);
        out->u.text.severity = xg_read_be32(&r);
        out->u.text.level = xg_read_be32(&r);
        size_t avail = len - 8;
        const uint8_t *s = xg_read_bytes(&r, avail);
        const uint8_t *nul = memchr(s, '\0', avail);
        if (!nul)
            return xg_error_set(err, -EPROTO, "vrpn %s: string of %zu bytes has no NUL",
                                vrpn_body_type_name(kind), avail);
        memcpy(out->u.text.text, s, (size_t)(nul - s) + 1);
        return 0;
    }
    case VRPN_BODY_UNKNOWN:
    default:
        return xg_error_set(err, -EINVAL, "vrpn: cannot decode a body of unknown kind %d",
                            (int)kind);
    }
}

static void write_vec3(struct xg_writer *w, struct xg_vec3 v)
{
    xg_write_bef64(w, v.x);
    xg_write_bef64(w, v.y);
    xg_write_bef64(w, v.z);
}

static void write_quat(struct xg_writer *w, struct xg_quat q)
{
    xg_write_bef64(w, q.x);
    xg_write_bef64(w, q.y);
    xg_write_bef64(w, q.z);
    xg_write_bef64(w, q.w);
}

int vrpn_body_encode(struct xg_writer *w, const struct vrpn_body *b, struct xg_error *err)
{
    const char *what = vrpn_body_type_name(b->kind);
    switch (b->kind) {
    case VRPN_BODY_POS_QUAT:
        if (b->u.pos_quat.sensor < 0)
            return xg_error_set(err, -EINVAL, "vrpn %s: negative sensor %d", what,
                                b->u.pos_quat.sensor);
        xg_write_be32(w, (uint32_t)b->u.pos_quat.sensor);
        xg_write_be32(w, (uint32_t)b->u.pos_quat.sensor);
        write_vec3(w, b->u.pos_quat.pos);
        write_quat(w, b->u.pos_quat.quat);
        break;
    case VRPN_BODY_VELOCITY:
    case VRPN_BODY_ACCELERATION:
        if (b->u.rate.sensor < 0)
            return xg_error_set(err, -EINVAL, "vrpn %s: negative sensor %d", what,
                                b->u.rate.sensor);
        xg_write_be32(w, (uint32_t)b->u.rate.sensor);
        xg_write_be32(w, (uint32_t)b->u.rate.sensor);
        write_vec3(w, b->u.rate.vec);
        write_quat(w, b->u.rate.quat);
        xg_write_bef64(w, b->u.rate.quat_dt);
        break;
    case VRPN_BODY_BUTTON_CHANGE:
        xg_write_be32(w, (uint32_t)b->u.button.button);
        xg_write_be32(w, (uint32_t)b->u.button.state);
        break;
    case VRPN_BODY_BUTTON_STATES:
        if (b->u.states.count < 0 || b->u.states.count > VRPN_MAX_BUTTONS)
            return xg_error_set(err, -EINVAL, "vrpn %s: button count %d out of range 0..%d", what,
                                b->u.states.count, VRPN_MAX_BUTTONS);
        xg_write_be32(w, (uint32_t)b->u.states.count);
        for (int32_t i = 0; i < b->u.states.count; i++)
            xg_write_be32(w, (uint32_t)b->u.states.states[i]);
        break;
    case VRPN_BODY_ANALOG:
        if (b->u.analog.count < 0 || b->u.analog.count > VRPN_MAX_ANALOG)
            return xg_error_set(err, -EINVAL, "vrpn %s: channel count %d out of range 0..%d", what,
                                b->u.analog.count, VRPN_MAX_ANALOG);
        xg_write_bef64(w, (double)b->u.analog.count);
        for (int32_t i = 0; i < b->u.analog.count; i++)
            xg_write_bef64(w, b->u.analog.channels[i]);
        break;
    case VRPN_BODY_DIAL:
        xg_write_bef64(w, b->u.dial.delta);
        xg_write_be32(w, (uint32_t)b->u.dial.dial);
        break;
    case VRPN_BODY_PING:
    case VRPN_BODY_PONG:
        break;
    case VRPN_BODY_TEXT: {
        size_t n = strnlen(b->u.text.text, VRPN_TEXT_MAX);
        if (n >= VRPN_TEXT_MAX)
            return xg_error_set(err, -EINVAL, "vrpn %s: text longer than %d characters", what,
                                VRPN_TEXT_MAX - 1);
        xg_write_be32(w, b->u.text.severity);
        xg_write_be32(w, b->u.text.level);
        xg_write_bytes(w, b->u.text.text, n);
        xg_write_zeros(w, VRPN_TEXT_PAYLOAD - 8 - n);
        break;
    }
    case VRPN_BODY_UNKNOWN:
    default:
        return xg_error_set(err, -EINVAL, "vrpn: cannot encode a body of unknown kind %d",
                            (int)b->kind);
    }
    if (w->err) return wr_fail(w, err, what);
    return 0;
}

int vrpn_encode_body_message(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                             const struct vrpn_body *b, struct xg_error *err)
{
    uint8_t body[VRPN_TEXT_PAYLOAD + 8]; /* the largest body: text (analog 1032, states 1028) */
    struct xg_writer bw;
    xg_writer_init(&bw, body, sizeof body);
    int rc = vrpn_body_encode(&bw, b, err);
    if (rc) return rc;
    return vrpn_encode_message(w, h, seq, body, bw.len, err);
}

/* ---- id maps ---- */

static const char *kind_label(enum vrpn_id_kind kind)
{
    return kind == VRPN_ID_SENDER ? "sender" : "type";
}

static int kind_max(enum vrpn_id_kind kind)
{
    return kind == VRPN_ID_SENDER ? VRPN_MAX_SENDERS : VRPN_MAX_TYPES;
}

void vrpn_id_map_init(struct vrpn_id_map *m)
{
    for (int k = 0; k < 2; k++) {
        struct vrpn_id_table *t = &m->t[k];
        t->names = NULL;
        t->n_local = 0;
        t->cap = 0;
        for (int i = 0; i < VRPN_MAX_TYPES; i++) {
            t->remote_to_local[i] = -1;
            t->local_to_remote[i] = -1;
        }
    }
}

void vrpn_id_map_free(struct vrpn_id_map *m)
{
    for (int k = 0; k < 2; k++)
        free(m->t[k].names);
    vrpn_id_map_init(m);
}

int vrpn_id_map_find(const struct vrpn_id_map *m, enum vrpn_id_kind kind, const char *name)
{
    if ((unsigned)kind > 1 || !name) return -ENOENT;
    const struct vrpn_id_table *t = &m->t[kind];
    for (int i = 0; i < t->n_local; i++)
        if (strcmp(t->names[i], name) == 0) return i;
    return -ENOENT;
}

const char *vrpn_id_map_name(const struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t local)
{
    if ((unsigned)kind > 1 || local < 0 || local >= m->t[kind].n_local) return NULL;
    return m->t[kind].names[local];
}

int vrpn_id_map_count(const struct vrpn_id_map *m, enum vrpn_id_kind kind)
{
    return (unsigned)kind > 1 ? 0 : m->t[kind].n_local;
}

int vrpn_id_map_register(struct vrpn_id_map *m, enum vrpn_id_kind kind, const char *name,
                         struct xg_error *err)
{
    if ((unsigned)kind > 1)
        return xg_error_set(err, -EINVAL, "vrpn id map: bad kind %d", (int)kind);
    int rc = check_name(name, kind_label(kind), err);
    if (rc) return rc;
    int id = vrpn_id_map_find(m, kind, name);
    if (id >= 0) return id;
    struct vrpn_id_table *t = &m->t[kind];
    if (t->n_local >= kind_max(kind))
        return xg_error_set(err, -ENOSPC, "vrpn id map: more than %d %s names, cannot add '%s'",
                            kind_max(kind), kind_label(kind), name);
    if (t->n_local == t->cap) {
        int ncap = t->cap ? t->cap * 2 : 16;
        if (ncap > kind_max(kind)) ncap = kind_max(kind);
        void *p = realloc(t->names, (size_t)ncap * sizeof t->names[0]);
        if (!p) return xg_error_set(err, -ENOMEM, "vrpn id map: out of memory");
        t->names = p;
        t->cap = (uint16_t)ncap;
    }
    id = t->n_local++;
    memset(t->names[id], 0, sizeof t->names[id]);
    strcpy(t->names[id], name);
    return id;
}

int vrpn_id_map_describe(struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t remote_id,
                         const char *name, bool *is_new, struct xg_error *err)
{
    if (is_new) *is_new = false;
    if ((unsigned)kind > 1)
        return xg_error_set(err, -EINVAL, "vrpn id map: bad kind %d", (int)kind);
    if (remote_id < 0 || remote_id >= kind_max(kind))
        return xg_error_set(err, -EPROTO, "vrpn %s description: remote id %d out of range 0..%d",
                            kind_label(kind), remote_id, kind_max(kind) - 1);
    if (check_name(name, kind_label(kind), err))
        return xg_error_set(err, -EPROTO,
                            "vrpn %s description: remote id %d has a name of bad "
                            "length (1..%d)",
                            kind_label(kind), remote_id, VRPN_CNAME_MAX - 1);
    int local = vrpn_id_map_find(m, kind, name);
    if (local < 0) {
        local = vrpn_id_map_register(m, kind, name, err);
        if (local < 0) return local;
        if (is_new) *is_new = true;
    }
    struct vrpn_id_table *t = &m->t[kind];
    int old_local = t->remote_to_local[remote_id];
    if (old_local >= 0 && t->local_to_remote[old_local] == remote_id)
        t->local_to_remote[old_local] = -1;
    int old_remote = t->local_to_remote[local];
    if (old_remote >= 0 && old_remote != remote_id && t->remote_to_local[old_remote] == local)
        t->remote_to_local[old_remote] = -1;
    t->remote_to_local[remote_id] = (int16_t)local;
    t->local_to_remote[local] = (int16_t)remote_id;
    return local;
}

int vrpn_id_map_to_local(const struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t remote_id,
                         struct xg_error *err)
{
    if ((unsigned)kind > 1)
        return xg_error_set(err, -EINVAL, "vrpn id map: bad kind %d", (int)kind);
    if (remote_id < 0 || remote_id >= kind_max(kind))
        return xg_error_set(err, -EPROTO, "vrpn header: %s id %d out of range 0..%d",
                            kind_label(kind), remote_id, kind_max(kind) - 1);
    int local = m->t[kind].remote_to_local[remote_id];
    if (local < 0)
        return xg_error_set(err, -ENOENT, "vrpn header: %s id %d was never described",
                            kind_label(kind), remote_id);
    return local;
}

int vrpn_id_map_to_remote(const struct vrpn_id_map *m, enum vrpn_id_kind kind, int32_t local_id)
{
    if ((unsigned)kind > 1 || local_id < 0 || local_id >= m->t[kind].n_local) return -ENOENT;
    int r = m->t[kind].local_to_remote[local_id];
    return r >= 0 ? r : -ENOENT;
}

int vrpn_id_map_encode_descriptions(const struct vrpn_id_map *m, struct xg_writer *w,
                                    const struct vrpn_header *h, uint32_t *seq,
                                    struct xg_error *err)
{
    static const int32_t sys[2] = {VRPN_SENDER_DESCRIPTION, VRPN_TYPE_DESCRIPTION};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < m->t[k].n_local; i++) {
            int rc = vrpn_encode_description(w, h, seq, sys[k], i, m->t[k].names[i], err);
            if (rc) return rc;
        }
    return 0;
}

int vrpn_id_map_described_names(const struct vrpn_id_map *m, enum vrpn_id_kind kind,
                                const char *skip, char *buf, size_t size)
{
    if (!size) return 0;
    buf[0] = '\0';
    if ((unsigned)kind > 1) return 0;
    const struct vrpn_id_table *t = &m->t[kind];
    size_t len = 0;
    int listed = 0;
    for (int l = 0; l < t->n_local; l++) {
        if (t->local_to_remote[l] < 0 || (skip && !strcmp(t->names[l], skip))) continue;
        /* room for this name and, should another follow that does not fit, ", ..." */
        size_t need = (listed ? 2 : 0) + strlen(t->names[l]) + 2;
        if (len + need + 5 >= size) {
            if (len + 5 < size) memcpy(buf + len, ", ...", 6);
            return listed;
        }
        len += (size_t)snprintf(buf + len, size - len, "%s'%s'", listed ? ", " : "", t->names[l]);
        listed++;
    }
    return listed;
}
