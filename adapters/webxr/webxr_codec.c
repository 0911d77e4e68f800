/* The webxr adapter's binary messages and the WebSocket opening handshake (webxr_codec.h). */
#include "adapters/webxr/webxr_codec.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <mbedtls/base64.h>
#include <mbedtls/sha1.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/util/wire.h"

const char *const webxr_joint_names[WEBXR_JOINTS] = {
    "wrist",
    "thumb-metacarpal",
    "thumb-phalanx-proximal",
    "thumb-phalanx-distal",
    "thumb-tip",
    "index-finger-metacarpal",
    "index-finger-phalanx-proximal",
    "index-finger-phalanx-intermediate",
    "index-finger-phalanx-distal",
    "index-finger-tip",
    "middle-finger-metacarpal",
    "middle-finger-phalanx-proximal",
    "middle-finger-phalanx-intermediate",
    "middle-finger-phalanx-distal",
    "middle-finger-tip",
    "ring-finger-metacarpal",
    "ring-finger-phalanx-proximal",
    "ring-finger-phalanx-intermediate",
    "ring-finger-phalanx-distal",
    "ring-finger-tip",
    "pinky-finger-metacarpal",
    "pinky-finger-phalanx-proximal",
    "pinky-finger-phalanx-intermediate",
    "pinky-finger-phalanx-distal",
    "pinky-finger-tip",
};

const int8_t webxr_joint_parent[WEBXR_JOINTS] = {-1, 0,  1,  2,  3,   /* thumb */
                                                 0,  5,  6,  7,  8,   /* index */
                                                 0,  10, 11, 12, 13,  /* middle */
                                                 0,  15, 16, 17, 18,  /* ring */
                                                 0,  20, 21, 22, 23}; /* pinky */

bool webxr_session_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > WEBXR_SESSION_MAX) return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-') return false;
    return true;
}

static int truncated(struct xg_error *err, const struct xg_reader *r, const char *what)
{
    return xg_error_set(err, -EMSGSIZE, "%s truncated: message of %zu bytes", what, r->len);
}

static int read_pose(struct xg_reader *r, struct webxr_pose *p, const char *what, int idx,
                     struct xg_error *err)
{
    static const char *const comp[7] = {"px", "py", "pz", "qx", "qy", "qz", "qw"};
    double v[7];
    for (int i = 0; i < 7; i++) {
        v[i] = xg_read_lef32(r);
        if (r->err) return truncated(err, r, what);
        if (!isfinite(v[i]) || (i < 3 && fabs(v[i]) > 1e5))
            return xg_error_set(err, -EPROTO, "%s %d %s %g is not a position/rotation value", what,
                                idx, comp[i], v[i]);
    }
    double n = sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5] + v[6] * v[6]);
    if (n < 0.5 || n > 2.0)
        return xg_error_set(err, -EPROTO, "%s %d quaternion norm %g is not near 1", what, idx, n);
    for (int i = 0; i < 3; i++)
        p->p[i] = v[i];
    for (int i = 0; i < 4; i++)
        p->q[i] = v[3 + i] / n;
    return 0;
}

static int decode_source(struct xg_reader *r, int idx, struct webxr_source *s, struct xg_error *err)
{
    s->handedness = xg_read_u8(r);
    uint8_t flags = xg_read_u8(r);
    s->n_buttons = xg_read_u8(r);
    s->n_axes = xg_read_u8(r);
    if (r->err) return truncated(err, r, "source header");
    if (s->handedness > 2)
        return xg_error_set(err, -EPROTO, "source %d handedness %u (0 none, 1 left, 2 right)", idx,
                            s->handedness);
    if (flags & ~3u)
        return xg_error_set(err, -EPROTO, "source %d flags 0x%02x (only bits 0-1 defined)", idx,
                            flags);
    if (s->n_buttons > WEBXR_MAX_BUTTONS)
        return xg_error_set(err, -EPROTO, "source %d n_buttons %u > %d", idx, s->n_buttons,
                            WEBXR_MAX_BUTTONS);
    if (s->n_axes > WEBXR_MAX_AXES)
        return xg_error_set(err, -EPROTO, "source %d n_axes %u > %d", idx, s->n_axes,
                            WEBXR_MAX_AXES);
    s->has_grip = flags & 1;
    s->has_hand = flags & 2;
    if (s->has_grip) {
        int rc = read_pose(r, &s->grip, "source grip", idx, err);
        if (rc) return rc;
    }
    for (int b = 0; b < s->n_buttons; b++) {
        uint8_t bits = xg_read_u8(r);
        double v = xg_read_lef32(r);
        if (r->err) return truncated(err, r, "buttons");
        if (bits & ~3u)
            return xg_error_set(err, -EPROTO, "source %d button %d bits 0x%02x", idx, b, bits);
        if (!isfinite(v) || v < -1.0 || v > 1.0)
            return xg_error_set(err, -EPROTO, "source %d button %d value %g outside [0, 1]", idx, b,
                                v);
        s->pressed[b] = bits & 1;
        s->touched[b] = bits & 2;
        s->value[b] = v;
    }
    for (int a = 0; a < s->n_axes; a++) {
        double v = xg_read_lef32(r);
        if (r->err) return truncated(err, r, "axes");
        if (!isfinite(v) || fabs(v) > 1.0)
            return xg_error_set(err, -EPROTO, "source %d axis %d value %g outside [-1, 1]", idx, a,
                                v);
        s->axes[a] = v;
    }
    if (s->has_hand) {
        for (int j = 0; j < WEBXR_JOINTS; j++) {
            struct webxr_joint *jt = &s->joints[j];
            uint8_t valid = xg_read_u8(r);
            if (r->err) return truncated(err, r, "hand joints");
            if (valid > 1)
                return xg_error_set(err, -EPROTO, "source %d joint %s valid %u (0 or 1)", idx,
                                    webxr_joint_names[j], valid);
            int rc = read_pose(r, &jt->pose, "hand joint of source", idx, err);
            if (rc) return rc;
            jt->radius = xg_read_lef32(r);
            if (r->err) return truncated(err, r, "hand joints");
            if (!isfinite(jt->radius) || jt->radius < 0 || jt->radius > 1)
                return xg_error_set(err, -EPROTO, "source %d joint %s radius %g outside [0, 1] m",
                                    idx, webxr_joint_names[j], jt->radius);
            jt->valid = valid;
        }
    }
    return 0;
}

static int decode_frame(struct xg_reader *r, struct webxr_frame *f, struct xg_error *err)
{
    uint8_t flags = xg_read_u8(r);
    f->n_sources = xg_read_u8(r);
    f->time_ms = xg_read_lef64(r);
    if (r->err) return truncated(err, r, "frame header");
    if (flags & ~1u)
        return xg_error_set(err, -EPROTO, "frame flags 0x%02x (only bit 0 defined)", flags);
    if (f->n_sources > WEBXR_MAX_SOURCES)
        return xg_error_set(err, -EPROTO, "frame n_sources %u > %d", f->n_sources,
                            WEBXR_MAX_SOURCES);
    if (!isfinite(f->time_ms) || f->time_ms < 0 || f->time_ms > 1e12)
        return xg_error_set(err, -EPROTO, "frame time %g ms is not a page clock time", f->time_ms);
    f->has_viewer = flags & 1;
    int rc = read_pose(r, &f->viewer, "viewer pose", 0, err);
    if (rc) return rc;
    for (int i = 0; i < f->n_sources; i++)
        if ((rc = decode_source(r, i, &f->sources[i], err))) return rc;
    return 0;
}

int webxr_decode(const uint8_t *buf, size_t len, struct webxr_msg *m, struct xg_error *err)
{
    struct xg_reader r;
    xg_reader_init(&r, buf, len);
    m->type = xg_read_u8(&r);
    if (r.err) return xg_error_set(err, -EMSGSIZE, "empty message");
    int rc = 0;
    switch (m->type) {
    case WEBXR_MSG_HELLO: {
        uint8_t ver = xg_read_u8(&r), n = xg_read_u8(&r);
        if (r.err) return truncated(err, &r, "hello");
        if (ver != WEBXR_VERSION)
            return xg_error_set(err, -EPROTO, "hello version %u (this gateway speaks %d)", ver,
                                WEBXR_VERSION);
        if (n > WEBXR_SESSION_MAX)
            return xg_error_set(err, -EPROTO, "hello session name length %u > %d", n,
                                WEBXR_SESSION_MAX);
        if (xg_read_copy(&r, m->session, n)) return truncated(err, &r, "hello");
        m->session[n] = '\0';
        if (n && !webxr_session_name_ok(m->session))
            return xg_error_set(err, -EPROTO,
                                "hello session name \"%.32s\" is not 1-32 of [A-Za-z0-9_-]",
                                m->session);
        break;
    }
    case WEBXR_MSG_FRAME:
        rc = decode_frame(&r, &m->frame, err);
        break;
    case WEBXR_MSG_PONG:
        m->seq = xg_read_le32(&r);
        m->page_ms = xg_read_lef64(&r);
        if (r.err) return truncated(err, &r, "pong");
        if (!isfinite(m->page_ms))
            return xg_error_set(err, -EPROTO, "pong page time %g ms", m->page_ms);
        break;
    default:
        return xg_error_set(err, -EPROTO, "message type 0x%02x unknown (0x01-0x03)", m->type);
    }
    if (rc) return rc;
    if (xg_reader_left(&r))
        return xg_error_set(err, -EPROTO, "message type 0x%02x: %zu trailing bytes", m->type,
                            xg_reader_left(&r));
    return 0;
}

size_t webxr_encode_welcome(uint8_t *out, size_t cap, const char *session)
{
    struct xg_writer w;
    size_t n = strlen(session);
    if (n > WEBXR_SESSION_MAX) n = WEBXR_SESSION_MAX;
    xg_writer_init(&w, out, cap);
    xg_write_u8(&w, WEBXR_MSG_WELCOME);
    xg_write_u8(&w, WEBXR_VERSION);
    xg_write_u8(&w, (uint8_t)n);
    xg_write_bytes(&w, session, n);
    return w.err ? 0 : w.len;
}

size_t webxr_encode_ping(uint8_t *out, size_t cap, uint32_t seq)
{
    struct xg_writer w;
    xg_writer_init(&w, out, cap);
    xg_write_u8(&w, WEBXR_MSG_PING);
    xg_write_le32(&w, seq);
    return w.err ? 0 : w.len;
}

static void write_f32(struct xg_writer *w, double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    xg_write_le32(w, u);
}

static void write_pose(struct xg_writer *w, const struct webxr_pose *p)
{
    for (int i = 0; i < 3; i++)
        write_f32(w, p->p[i]);
    for (int i = 0; i < 4; i++)
        write_f32(w, p->q[i]);
}

size_t webxr_encode_frame(uint8_t *out, size_t cap, const struct webxr_frame *f)
{
    struct xg_writer w;
    xg_writer_init(&w, out, cap);
    xg_write_u8(&w, WEBXR_MSG_FRAME);
    xg_write_u8(&w, f->has_viewer ? 1 : 0);
    xg_write_u8(&w, f->n_sources);
    uint64_t t;
    memcpy(&t, &f->time_ms, 8);
    xg_write_le64(&w, t);
    write_pose(&w, &f->viewer);
    for (int i = 0; i < f->n_sources && i < WEBXR_MAX_SOURCES; i++) {
        const struct webxr_source *s = &f->sources[i];
        xg_write_u8(&w, s->handedness);
        xg_write_u8(&w, (uint8_t)((s->has_grip ? 1 : 0) | (s->has_hand ? 2 : 0)));
        xg_write_u8(&w, s->n_buttons);
        xg_write_u8(&w, s->n_axes);
        if (s->has_grip) write_pose(&w, &s->grip);
        for (int b = 0; b < s->n_buttons && b < WEBXR_MAX_BUTTONS; b++) {
            xg_write_u8(&w, (uint8_t)((s->pressed[b] ? 1 : 0) | (s->touched[b] ? 2 : 0)));
            write_f32(&w, s->value[b]);
        }
        for (int a = 0; a < s->n_axes && a < WEBXR_MAX_AXES; a++)
            write_f32(&w, s->axes[a]);
        if (s->has_hand)
            for (int j = 0; j < WEBXR_JOINTS; j++) {
                xg_write_u8(&w, s->joints[j].valid ? 1 : 0);
                write_pose(&w, &s->joints[j].pose);
                write_f32(&w, s->joints[j].radius);
            }
    }
    return w.err ? 0 : w.len;
}

/* ---- handshake ---- */

/* The value of header `name` in `head` (case-insensitive name), trimmed, into out; false if
 * absent. */
static bool header(const char *head, size_t len, const char *name, char *out, size_t size)
{
    size_t nl = strlen(name);
    const char *p = memchr(head, '\n', len), *end = head + len;
    while (p && p + 1 < end) {
        const char *line = p + 1;
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol) break;
        if ((size_t)(eol - line) > nl && line[nl] == ':' && !strncasecmp(line, name, nl)) {
            const char *v = line + nl + 1, *e = eol;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
                e--;
            size_t n = (size_t)(e - v);
            if (n >= size) n = size - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
        p = eol;
    }
    return false;
}

/* Does the comma-separated list `list` contain `word` (case-insensitive)? */
static bool has_token(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',' || *p == '\t')
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > p && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if ((size_t)(t - p) == wl && !strncasecmp(p, word, wl)) return true;
        p = e;
    }
    return false;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decode the value of `key` in the query `q` (up to '#' or the end) into out. */
static void query_param(const char *q, const char *key, char *out, size_t size)
{
    size_t kl = strlen(key);
    out[0] = '\0';
    while (q && *q) {
        if (!strncmp(q, key, kl) && q[kl] == '=') {
            const char *v = q + kl + 1;
            size_t n = 0;
            while (*v && *v != '&' && n + 1 < size) {
                int c = (unsigned char)*v;
                if (c == '%' && v[1] && v[2] && hexval(v[1]) >= 0 && hexval(v[2]) >= 0) {
                    c = hexval(v[1]) * 16 + hexval(v[2]);
                    v += 2;
                } else if (c == '+') {
                    c = ' ';
                }
                out[n++] = (char)c;
                v++;
            }
            out[n] = '\0';
            return;
        }
        q = strchr(q, '&');
        if (q) q++;
    }
}

int webxr_upgrade_parse(const char *head, size_t len, struct webxr_upgrade *u, struct xg_error *err)
{
    char line[512], v[256];
    memset(u, 0, sizeof *u);
    const char *eol = memchr(head, '\n', len);
    size_t ll = eol ? (size_t)(eol - head) : len;
    if (ll && head[ll - 1] == '\r') ll--;
    if (ll >= sizeof line)
        return xg_error_set(err, -EPROTO, "request line of %zu bytes is too long", ll);
    memcpy(line, head, ll);
    line[ll] = '\0';
    char *target = strchr(line, ' ');
    char *proto = target ? strchr(target + 1, ' ') : NULL;
    if (!target || !proto || strncmp(line, "GET ", 4) || strcmp(proto + 1, "HTTP/1.1"))
        return xg_error_set(err, -EPROTO, "request line \"%.80s\" is not \"GET <path> HTTP/1.1\"",
                            line);
    *proto = '\0';
    target++;
    char *query = strchr(target, '?');
    if (query) *query++ = '\0';
    snprintf(u->path, sizeof u->path, "%s", target);
    query_param(query, "token", u->token, sizeof u->token);
    if (!header(head, len, "Upgrade", v, sizeof v) || !has_token(v, "websocket"))
        return xg_error_set(err, -EPROTO, "header Upgrade \"%.60s\" is not \"websocket\"",
                            header(head, len, "Upgrade", v, sizeof v) ? v : "(absent)");
    if (!header(head, len, "Connection", v, sizeof v) || !has_token(v, "upgrade"))
        return xg_error_set(err, -EPROTO, "header Connection \"%.60s\" has no \"Upgrade\"",
                            header(head, len, "Connection", v, sizeof v) ? v : "(absent)");
    if (!header(head, len, "Sec-WebSocket-Version", v, sizeof v) || strcmp(v, "13"))
        return xg_error_set(err, -EPROTO, "header Sec-WebSocket-Version \"%.20s\" is not 13",
                            header(head, len, "Sec-WebSocket-Version", v, sizeof v) ? v
                                                                                    : "(absent)");
    unsigned char raw[32];
    size_t rawlen = 0;
    if (!header(head, len, "Sec-WebSocket-Key", u->key, sizeof u->key) ||
        mbedtls_base64_decode(raw, sizeof raw, &rawlen, (const unsigned char *)u->key,
                              strlen(u->key)) ||
        rawlen != 16)
        return xg_error_set(err, -EPROTO,
                            "header Sec-WebSocket-Key \"%.40s\" is not 16 bytes in base64",
                            u->key[0] ? u->key : "(absent)");
    if (!u->token[0] && header(head, len, "Authorization", v, sizeof v) &&
        !strncasecmp(v, "Bearer ", 7)) {
        const char *t = v + 7;
        while (*t == ' ')
            t++;
        snprintf(u->token, sizeof u->token, "%s", t);
    }
    return 0;
}

int webxr_accept_key(const char *key, char *out, size_t size)
{
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    char buf[128];
    unsigned char sha[20];
    size_t olen = 0;
    int n = snprintf(buf, sizeof buf, "%s%s", key, guid);
    if (n < 0 || (size_t)n >= sizeof buf) return -EINVAL;
    if (mbedtls_sha1_ret((const unsigned char *)buf, (size_t)n, sha)) return -EINVAL;
    if (mbedtls_base64_encode((unsigned char *)out, size, &olen, sha, sizeof sha)) return -EINVAL;
    return 0;
}

bool webxr_token_equal(const char *given, const char *want)
{
    size_t gl = strlen(given), wl = strlen(want);
    unsigned char diff = (unsigned char)(gl != wl);
    for (size_t i = 0; i < wl; i++)
        diff |= (unsigned char)(want[i] ^ (i < gl ? given[i] : 0));
    return diff == 0;
}
