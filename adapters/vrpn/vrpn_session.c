/* Socket-free VRPN session (vrpn_session.h): cookie exchange, handshake burst, reassembly of TCP
 * messages, UDP datagrams, the connection request and its resends, deadlines and client pings.
 * Dispatch of single messages by sender/type id is in vrpn_session_dispatch.c. */
#include "adapters/vrpn/vrpn_session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vrpn/vrpn_session_priv.h"
#include "core/util/wire.h"

int vrpn_sess_fail(struct vrpn_session *s, enum vrpn_err_kind kind, const char *where, int code,
                   const char *fmt, ...)
{
    struct vrpn_session_error *e = &s->error;
    e->kind = kind;
    e->rule = VRPN_RULE_CLOSE;
    e->where = s->role == VRPN_ROLE_CLIENT ? where : "";
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    vrpn_session_close(s);
    return code;
}

int vrpn_sess_send(struct vrpn_session *s, const uint8_t *buf, size_t len)
{
    if (!len) return 0;
    return s->ops.send(s->ctx, buf, len) < 0 ? -ECONNABORTED : 0;
}

int vrpn_sess_emit(struct vrpn_session *s, const struct vrpn_event *ev)
{
    if (!s->ops.event) return 0;
    return s->ops.event(s->ctx, ev) < 0 ? -ECONNABORTED : 0;
}

int vrpn_sess_ignore(struct vrpn_session *s, const char *reason)
{
    s->stats.ignored++;
    struct vrpn_event ev = {.kind = VRPN_EV_IGNORED, .reason = reason};
    return vrpn_sess_emit(s, &ev);
}

struct vrpn_header vrpn_session_header(const struct vrpn_session *s, int64_t now)
{
    struct vrpn_header h = {0};
    int64_t w = s->ops.wall_ns ? s->ops.wall_ns(s->ctx, now) : now;
    vrpn_header_set_wall_ns(&h, w > 0 ? w : 0);
    return h;
}

void vrpn_session_init(struct vrpn_session *s, enum vrpn_role role,
                       const struct vrpn_session_ops *ops, void *ctx, int64_t timeout_ns)
{
    memset(s, 0, sizeof *s);
    s->role = role;
    s->ops = *ops;
    s->ctx = ctx;
    s->timeout_ns = timeout_ns;
    vrpn_id_map_init(&s->ids);
}

void vrpn_session_free(struct vrpn_session *s)
{
    vrpn_session_close(s);
    vrpn_id_map_free(&s->ids);
    free(s->in);
    s->in = NULL;
    s->in_cap = 0;
    free(s->ping);
    s->ping = NULL;
    s->n_ping = 0;
}

void vrpn_session_close(struct vrpn_session *s)
{
    s->state = VRPN_SESS_IDLE;
    s->in_len = 0;
    s->request_len = 0;
}

int vrpn_session_start(struct vrpn_session *s, enum vrpn_mode mode, int64_t now)
{
    vrpn_session_close(s);
    vrpn_id_map_free(&s->ids);
    vrpn_id_map_init(&s->ids);
    free(s->ping);
    s->ping = NULL;
    s->n_ping = 0;
    s->mode = mode;
    s->seq = 0;
    s->udp_port = 0;
    s->udp_host[0] = '\0';
    s->n_own_senders = 0;
    s->phase_start_ns = now;
    s->cookie_ns = 0;
    s->last_request_ns = 0;
    if (vrpn_id_map_register(&s->ids, VRPN_ID_SENDER, VRPN_NAME_CONTROL, NULL) < 0) return -ENOMEM;
    int n = s->role == VRPN_ROLE_CLIENT ? VRPN_T_CLIENT_COUNT : VRPN_T_COUNT;
    for (int i = 0; i < n; i++)
        if (vrpn_id_map_register(&s->ids, VRPN_ID_TYPE, vrpn_std_types[i], NULL) != i)
            return -ENOMEM;
    if (mode == VRPN_MODE_UDP) s->state = VRPN_SESS_CALLBACK;
    return 0;
}

void vrpn_session_set_udp(struct vrpn_session *s, const char *host, uint16_t port)
{
    snprintf(s->udp_host, sizeof s->udp_host, "%s", host);
    s->udp_port = port;
}

static int send_request(struct vrpn_session *s, int64_t now)
{
    if (!s->ops.send_request || !s->request_len) return 0;
    if (s->ops.send_request(s->ctx, s->request, s->request_len) < 0) return 0; /* retried */
    s->stats.requests++;
    s->last_request_ns = now;
    return 0;
}

int vrpn_session_request(struct vrpn_session *s, const char *host, uint16_t tcp_port, int64_t now,
                         struct xg_error *err)
{
    struct xg_writer w;
    xg_writer_init(&w, s->request, sizeof s->request);
    s->request_len = 0;
    int rc = vrpn_lob_encode(&w, host, tcp_port, err);
    if (rc < 0) return rc;
    s->request_len = w.len;
    return send_request(s, now);
}

int vrpn_session_connected(struct vrpn_session *s, int64_t now)
{
    /* a client waits timeout_ns for the cookie from now; a server's one deadline covers the
     * call-back connect and the cookie (a peer cannot hold a slot longer) */
    if (s->role == VRPN_ROLE_CLIENT || s->state == VRPN_SESS_IDLE) s->phase_start_ns = now;
    s->state = VRPN_SESS_COOKIE;
    s->request_len = 0; /* no more connection requests */
    s->in_len = 0;
    uint8_t ck[VRPN_COOKIE_SIZE];
    struct xg_writer w;
    xg_writer_init(&w, ck, sizeof ck);
    vrpn_cookie_encode(&w, 0, NULL);
    return vrpn_sess_send(s, ck, w.len); /* both sides send the cookie at once (§4) */
}

/* The handshake burst after the peer's cookie (§6.1 step 3, §6.3). */
static int send_handshake(struct vrpn_session *s, int64_t now)
{
    size_t names = (size_t)vrpn_id_map_count(&s->ids, VRPN_ID_SENDER) +
                   (size_t)vrpn_id_map_count(&s->ids, VRPN_ID_TYPE);
    size_t cap = (names + 1) * (VRPN_HEADER_SIZE + 4 + VRPN_CNAME_MAX + 8) + 256;
    uint8_t *buf = malloc(cap);
    if (!buf) return vrpn_sess_fail(s, VRPN_ERR_LOCAL, "tcp", -ENOMEM, "out of memory");
    struct xg_writer w;
    xg_writer_init(&w, buf, cap);
    struct vrpn_header h = vrpn_session_header(s, now);
    struct xg_error err = {0};
    int rc = 0;
    if (s->mode == VRPN_MODE_UDP && s->udp_port)
        rc = vrpn_encode_udp_description(&w, &h, &s->seq, s->udp_port, s->udp_host, &err);
    if (rc >= 0) rc = vrpn_id_map_encode_descriptions(&s->ids, &w, &h, &s->seq, &err);
    if (rc < 0) {
        free(buf);
        return vrpn_sess_fail(s, VRPN_ERR_LOCAL, "tcp", rc, "cannot encode the handshake: %s",
                              err.msg);
    }
    rc = vrpn_sess_send(s, buf, w.len);
    free(buf);
    return rc;
}

static int on_cookie(struct vrpn_session *s, const uint8_t *p, int64_t now)
{
    struct vrpn_cookie ck;
    struct xg_error err = {0};
    if (vrpn_cookie_decode(p, VRPN_COOKIE_SIZE, &ck, &err) < 0) {
        if (s->role == VRPN_ROLE_CLIENT)
            return vrpn_sess_fail(s, VRPN_ERR_INPUT, "cookie", err.code, "%s", err.msg);
        char hex[2 * VRPN_COOKIE_SIZE + 1];
        for (int i = 0; i < VRPN_COOKIE_SIZE; i++)
            snprintf(hex + 2 * i, 3, "%02x", p[i]);
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "cookie", err.code, "cookie: %s (bytes %s)",
                              err.msg, hex);
    }
    struct vrpn_event ev = {
        .kind = VRPN_EV_COOKIE, .minor = ck.minor, .minor_differs = ck.minor_differs};
    int rc = vrpn_sess_emit(s, &ev);
    if (rc < 0) return rc;
    s->state = VRPN_SESS_STREAMING;
    s->cookie_ns = now;
    s->n_own_senders = vrpn_id_map_count(&s->ids, VRPN_ID_SENDER);
    if (s->role == VRPN_ROLE_CLIENT && s->n_own_senders > 1) {
        s->ping = calloc((size_t)s->n_own_senders, sizeof *s->ping);
        if (!s->ping) return vrpn_sess_fail(s, VRPN_ERR_LOCAL, "tcp", -ENOMEM, "out of memory");
        s->n_ping = s->n_own_senders;
    }
    if ((rc = send_handshake(s, now)) < 0) return rc;
    ev = (struct vrpn_event){.kind = VRPN_EV_UP};
    return vrpn_sess_emit(s, &ev);
}

/* Bytes the unit at p (have bytes) needs in all: the cookie, or a header then its message. */
static int unit_need(struct vrpn_session *s, const uint8_t *p, size_t have, size_t *need)
{
    if (s->state == VRPN_SESS_COOKIE) {
        *need = VRPN_COOKIE_SIZE;
        return 0;
    }
    if (have < VRPN_HEADER_SIZE) {
        *need = VRPN_HEADER_SIZE;
        return 0;
    }
    struct xg_error err = {0};
    if (vrpn_stream_check(p, VRPN_HEADER_SIZE, need, &err) < 0) {
        if (s->role == VRPN_ROLE_CLIENT)
            return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", err.code, "%s", err.msg);
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", err.code, "header: %s", err.msg);
    }
    return 0;
}

static int on_unit(struct vrpn_session *s, const uint8_t *p, size_t n, int64_t now)
{
    if (s->state == VRPN_SESS_COOKIE) return on_cookie(s, p, now);
    struct vrpn_msg m;
    struct xg_error err = {0};
    if (vrpn_msg_parse(p, n, &m, &err) < 0) {
        if (s->role == VRPN_ROLE_CLIENT)
            return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", err.code, "%s", err.msg);
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", err.code, "message: %s", err.msg);
    }
    return vrpn_sess_dispatch(s, &m, false, now);
}

static int in_append(struct vrpn_session *s, const uint8_t *p, size_t n)
{
    if (s->in_len + n > s->in_cap) {
        size_t cap = s->in_cap ? s->in_cap : 256;
        while (cap < s->in_len + n)
            cap *= 2;
        if (cap > VRPN_MAX_MESSAGE) cap = VRPN_MAX_MESSAGE;
        uint8_t *q = realloc(s->in, cap);
        if (!q) return vrpn_sess_fail(s, VRPN_ERR_LOCAL, "tcp", -ENOMEM, "out of memory");
        s->in = q;
        s->in_cap = cap;
    }
    memcpy(s->in + s->in_len, p, n);
    s->in_len += n;
    return 0;
}

int vrpn_session_feed(struct vrpn_session *s, const uint8_t *buf, size_t len, int64_t now)
{
    for (;;) {
        if (s->state != VRPN_SESS_COOKIE && s->state != VRPN_SESS_STREAMING)
            return len ? -EINVAL : 0;
        bool from_in = s->in_len != 0;
        const uint8_t *p = from_in ? s->in : buf;
        size_t have = from_in ? s->in_len : len;
        if (!have) return 0;
        size_t need = 0;
        int rc = unit_need(s, p, have, &need);
        if (rc < 0) return rc;
        if (have < need) {
            if (!len) return 0;
            /* complete the buffered unit as far as the input goes (the header first, then the
             * message it announces), or keep a short tail for the next read */
            size_t take = from_in ? need - s->in_len : len;
            if (take > len) take = len;
            if ((rc = in_append(s, buf, take)) < 0) return rc;
            buf += take;
            len -= take;
            continue;
        }
        if (from_in)
            s->in_len = 0; /* p stays valid: the buffer is only reused by a later append */
        else {
            buf += need;
            len -= need;
        }
        if ((rc = on_unit(s, p, need, now)) < 0) return rc;
    }
}

int vrpn_session_feed_datagram(struct vrpn_session *s, const uint8_t *dg, size_t len, int64_t now)
{
    if (s->state != VRPN_SESS_STREAMING)
        return vrpn_sess_ignore(s, "UDP datagram before the handshake"); /* ids unknown */
    s->stats.datagrams++;
    size_t off = 0;
    struct vrpn_msg m;
    struct xg_error err = {0};
    int rc;
    while ((rc = vrpn_datagram_next(dg, len, &off, &m, &err)) == 1) {
        if ((rc = vrpn_sess_dispatch(s, &m, true, now)) < 0) return rc;
    }
    if (rc < 0) return vrpn_sess_fail(s, VRPN_ERR_INPUT, "udp", rc, "%s", err.msg);
    return 0;
}

int vrpn_session_eof(struct vrpn_session *s)
{
    size_t left = s->in_len;
    if (!left) return 0;
    bool client = s->role == VRPN_ROLE_CLIENT;
    if (s->state == VRPN_SESS_COOKIE) {
        if (client)
            return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", -EMSGSIZE,
                                  "vrpn cookie: %zu bytes at EOF, need %d", left, VRPN_COOKIE_SIZE);
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", -EMSGSIZE,
                              "truncated cookie: %zu of %d bytes before EOF", left,
                              VRPN_COOKIE_SIZE);
    }
    if (left < VRPN_HEADER_SIZE) {
        if (client)
            return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", -EMSGSIZE,
                                  "vrpn header: truncated, %zu bytes at EOF, need %d", left,
                                  VRPN_HEADER_SIZE);
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", -EMSGSIZE,
                              "truncated header: %zu of %d bytes before EOF", left,
                              VRPN_HEADER_SIZE);
    }
    if (client)
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", -EMSGSIZE,
                              "vrpn message: truncated, %zu bytes at EOF", left);
    return vrpn_sess_fail(s, VRPN_ERR_INPUT, "tcp", -EMSGSIZE,
                          "truncated message: %zu bytes before EOF, length %" PRIu32, left,
                          xg_load_be32(s->in));
}

/* One ping per unanswered device of ours, at most one a second each (§7); VRPN_EV_NOPONG for a
 * device unanswered for 3 s. */
static int send_pings(struct vrpn_session *s, int64_t now)
{
    if (s->n_ping < 2) return 0;
    uint8_t *buf = malloc((size_t)s->n_ping * VRPN_HEADER_SIZE);
    if (!buf) return 0; /* tried again at the next tick */
    struct xg_writer w;
    xg_writer_init(&w, buf, (size_t)s->n_ping * VRPN_HEADER_SIZE);
    int warn = 0;
    for (int id = 1; id < s->n_ping; id++) {
        struct vrpn_ping_state *p = &s->ping[id];
        if (p->ponged) continue;
        if (!p->start_ns) p->start_ns = now;
        if (!p->warned && now - p->start_ns >= VRPN_SESSION_NOPONG_NS) {
            p->warned = p->warn_due = true;
            warn++;
        }
        if (p->last_ns && now - p->last_ns < VRPN_SESSION_PING_INTERVAL_NS - 1000000) continue;
        struct vrpn_header h = vrpn_session_header(s, now);
        h.sender = id;
        h.type = VRPN_T_PING;
        if (vrpn_encode_message(&w, &h, &s->seq, NULL, 0, NULL) == 0) {
            p->last_ns = now;
            s->stats.pings++;
        }
    }
    int rc = vrpn_sess_send(s, buf, w.len);
    free(buf);
    for (int id = 1; rc == 0 && warn && id < s->n_ping; id++) {
        if (!s->ping[id].warn_due) continue;
        s->ping[id].warn_due = false;
        struct vrpn_event ev = {.kind = VRPN_EV_NOPONG,
                                .sender_local = id,
                                .sender = vrpn_id_map_name(&s->ids, VRPN_ID_SENDER, id)};
        rc = vrpn_sess_emit(s, &ev);
    }
    return rc;
}

int vrpn_session_tick(struct vrpn_session *s, int64_t now)
{
    switch (s->state) {
    case VRPN_SESS_CALLBACK:
        if (now - s->phase_start_ns >= s->timeout_ns)
            return vrpn_sess_fail(s, VRPN_ERR_NO_CALLBACK, "tcp", -ETIMEDOUT,
                                  "no call-back within %.1f s", (double)s->timeout_ns * 1e-9);
        if (s->request_len && now - s->last_request_ns >= VRPN_SESSION_REQUEST_RESEND_NS)
            return send_request(s, now);
        return 0;
    case VRPN_SESS_COOKIE:
        if (now - s->phase_start_ns >= s->timeout_ns)
            return vrpn_sess_fail(s, VRPN_ERR_NO_COOKIE, "cookie", -ETIMEDOUT,
                                  "no VRPN cookie within %.1f s", (double)s->timeout_ns * 1e-9);
        return 0;
    case VRPN_SESS_STREAMING:
        /* first pings shortly after the handshake, once the server's descriptions are in and
         * echoed (mainline's remotes ping from their first mainloop, §7) */
        if (s->role == VRPN_ROLE_CLIENT && now - s->cookie_ns >= VRPN_SESSION_FIRST_PING_NS)
            return send_pings(s, now);
        return 0;
    default:
        return 0;
    }
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

int64_t vrpn_session_deadline(const struct vrpn_session *s)
{
    int64_t d = INT64_MAX;
    switch (s->state) {
    case VRPN_SESS_CALLBACK:
        d = s->phase_start_ns + s->timeout_ns;
        if (s->request_len) d = min64(d, s->last_request_ns + VRPN_SESSION_REQUEST_RESEND_NS);
        return d;
    case VRPN_SESS_COOKIE:
        return s->phase_start_ns + s->timeout_ns;
    case VRPN_SESS_STREAMING:
        for (int id = 1; id < s->n_ping; id++) {
            const struct vrpn_ping_state *p = &s->ping[id];
            if (p->ponged) continue;
            if (!p->start_ns) return s->cookie_ns + VRPN_SESSION_FIRST_PING_NS;
            d = min64(d, p->last_ns + VRPN_SESSION_PING_INTERVAL_NS - 1000000);
            if (!p->warned) d = min64(d, p->start_ns + VRPN_SESSION_NOPONG_NS);
        }
        return d;
    default:
        return d;
    }
}
