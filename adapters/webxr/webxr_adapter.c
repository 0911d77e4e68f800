/* `type: webxr` — a headset's WebXR session as a source (docs/adapters/webxr.md).
 *
 * The inspector page's XR session (immersive-vr or immersive-ar) opens one WebSocket (RFC 6455)
 * per session to this adapter's own listener and sends, every XR frame, the viewer pose, each
 * input source's grip pose, buttons and axes, and the 25 joints of each tracked hand
 * (webxr_codec.h). The listener is the adapter's own port, not the admin server's: libevent 2.1's
 * evhttp cannot hand an accepted connection over to another protocol (it keeps owning the
 * connection and its bufferevent after a reply), so the adapter listens with
 * core/net/transport_server and takes the admin server's TLS certificate and key (admin.tls) and
 * its bearer token (admin.token_file, as `?token=` or `Authorization: Bearer`). The page finds the
 * port in /api/adapters (this adapter's `port`).
 *
 * Keys: listen ("127.0.0.1:0"), max_clients (8), max_message_bytes (16384), max_messages_per_s
 * (1000), handshake_timeout_ms (5000), ping_ms (1000).
 *
 * A connection: the HTTP upgrade request (8 KiB at most, within handshake_timeout_ms; a GET
 * without `Upgrade` gets a short text page, so a headset's browser can be shown the certificate
 * once), then WebSocket frames through libwslay fed from the bufferevent. HELLO names the session
 * (or the adapter assigns `s1`, `s2`...), WELCOME answers with the name in use, PINGs (5 at
 * 100 ms, then one per ping_ms) give the clock offset, FRAMEs go into the table. A bad message,
 * a text message, a message above max_message_bytes or more than max_messages_per_s messages in
 * one second close the connection with one rate-limited line naming peer, field and value. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/webxr/webxr_priv.h"
#include "core/clock/clock.h"
#include "core/net/tls.h"
#include "core/net/transport.h"

#define HEAD_MAX 8192

enum conn_state { HANDSHAKE, OPEN, CLOSING };

struct webxr;

struct conn {
    struct webxr *x;
    struct bufferevent *bev;
    char peer[64];
    enum conn_state state;
    wslay_event_context_ptr ws;
    struct xg_timer *timer; /* handshake deadline, then the PING timer (core/net/timer.h) */
    char session[WEBXR_SESSION_MAX + 1];
    bool hello;
    int pings_fast;       /* PINGs left at 100 ms */
    int64_t last_pong_ns; /* gateway time of the last PONG (or of HELLO) */
    struct webxr_clock clock;
    struct webxr_ids ids;
    int64_t rate_window_ns;
    int64_t rate_count;
    char close_reason[200];
    bool rejected;      /* a close is queued for a broken rule: read nothing more */
    uint64_t msg_bytes; /* payload of the message being received, over its frames */
    struct conn *next, **prevp;
};

struct webxr {
    struct xg_adapter *a;
    const char *listen;
    int64_t max_clients, max_message, max_rate, handshake_ms, ping_ms;
    struct xg_tls_ctx *tls;
    struct xg_tserver *ts;
    struct conn *conns;
    int n_conns;
    uint32_t next_session;
    uint64_t sessions, frames, bad, closed_rate, handshakes_failed;
    struct xg_log_limit lim_bad, lim_hs, lim_sess, lim_gone;
    int64_t lat_ns[128]; /* receive − capture of the last frames (ring), for the latency gauge */
    unsigned n_lat, next_lat;
    int64_t rtt_ns;       /* the smallest round trip of the newest connection's clock estimate */
    struct webxr_msg msg; /* decode buffer (a FRAME is large) */
};

static void conn_free(struct conn *c)
{
    struct webxr *x = c->x;
    if ((*c->prevp = c->next)) c->next->prevp = c->prevp;
    x->n_conns--;
    if (c->ws) wslay_event_context_free(c->ws);
    xg_timer_free(c->timer);
    if (c->bev) xg_tcp_free(c->bev);
    if (c->state != HANDSHAKE && c->session[0])
        XG_INFO_PEER(&x->lim_sess, x->a->name, "peer %s: session %s ended%s%s", c->peer, c->session,
                     c->close_reason[0] ? ": " : "", c->close_reason);
    free(c);
}

/* Close after what is queued has been written (the write callback frees it). */
static void conn_close_later(struct conn *c)
{
    c->state = CLOSING;
    xg_tcp_pause(c->bev, false);
    if (!xg_tcp_unsent(c->bev)) {
        conn_free(c);
        return;
    }
    /* a peer that does not read what is left (the close frame) is not waited for long */
    if (c->timer) xg_timer_once(c->timer, 2000000);
}

/* A bad message or rule broken: one line naming peer and reason, a close frame with `code`. */
static void conn_reject(struct conn *c, uint16_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void conn_reject(struct conn *c, uint16_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->close_reason, sizeof c->close_reason, fmt, ap);
    va_end(ap);
    c->x->bad++;
    c->x->a->errors++;
    c->rejected = true;
    XG_WARN_PEER(&c->x->lim_bad, c->x->a->name, "peer %s%s%s: %s: closing the connection", c->peer,
                 c->session[0] ? " session " : "", c->session, c->close_reason);
    /* sent by ws_pump() after the wslay call this runs in */
    if (c->ws && !wslay_event_get_close_sent(c->ws))
        wslay_event_queue_close(c->ws, code, (const uint8_t *)"bad message", 11);
}

static void ws_pump(struct conn *c);

static void queue_binary(struct conn *c, const uint8_t *p, size_t n)
{
    struct wslay_event_msg m = {.opcode = WSLAY_BINARY_FRAME, .msg = p, .msg_length = n};
    wslay_event_queue_msg(c->ws, &m);
}

static void send_ping(struct conn *c)
{
    uint8_t buf[8];
    uint32_t seq = ++c->clock.seq;
    size_t n = webxr_encode_ping(buf, sizeof buf, seq);
    c->clock.sent_seq[seq & 7u] = seq;
    c->clock.sent_ns[seq & 7u] = xg_clock_mono_ns();
    queue_binary(c, buf, n);
}

static void arm_ping(struct conn *c)
{
    int64_t ms = c->pings_fast > 0 ? 100 : c->x->ping_ms;
    xg_timer_once(c->timer, (uint64_t)ms * 1000);
}

static void handle_msg(struct conn *c, const uint8_t *p, size_t n, int64_t now)
{
    struct webxr *x = c->x;
    struct xg_error err = {0};
    struct webxr_msg *m = &x->msg;
    if (webxr_decode(p, n, m, &err)) {
        conn_reject(c, WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA, "%s", err.msg);
        return;
    }
    if (m->type == WEBXR_MSG_HELLO) {
        if (c->hello) {
            conn_reject(c, WSLAY_CODE_POLICY_VIOLATION, "a second hello (one session per socket)");
            return;
        }
        c->hello = true;
        c->last_pong_ns = now;
        if (m->session[0])
            snprintf(c->session, sizeof c->session, "%s", m->session);
        else
            snprintf(c->session, sizeof c->session, "s%u", ++x->next_session);
        /* the same session on another socket: the page reconnected before the gateway saw
         * the old socket go (a headset that left the network): the new one takes over */
        for (struct conn *o = x->conns; o; o = o->next) {
            if (o == c || !o->hello || o->state != OPEN || strcmp(o->session, c->session)) continue;
            XG_INFO_PEER(&x->lim_gone, x->a->name, "peer %s session %s: taken over by peer %s",
                         o->peer, o->session, c->peer);
            snprintf(o->close_reason, sizeof o->close_reason, "taken over by peer %s", c->peer);
            o->rejected = true; /* read nothing more from it: its entities are the new socket's */
            wslay_event_queue_close(o->ws, WSLAY_CODE_NORMAL_CLOSURE, NULL, 0);
            ws_pump(o);
            break;
        }
        x->sessions++;
        uint8_t buf[3 + WEBXR_SESSION_MAX];
        queue_binary(c, buf, webxr_encode_welcome(buf, sizeof buf, c->session));
        XG_INFO_PEER(&x->lim_sess, x->a->name, "peer %s: session %s started (entities %s/%s/...)",
                     c->peer, c->session, x->a->name, c->session);
        c->pings_fast = 5;
        send_ping(c);
        arm_ping(c);
        return;
    }
    if (!c->hello) {
        conn_reject(c, WSLAY_CODE_POLICY_VIOLATION, "message type 0x%02x before hello", m->type);
        return;
    }
    if (m->type == WEBXR_MSG_PONG) {
        if (webxr_clock_pong(&c->clock, m->seq, m->page_ms, now)) {
            x->rtt_ns = c->clock.best_rtt_ns;
            c->last_pong_ns = now;
        }
        return;
    }
    x->frames++;
    int64_t t = webxr_clock_map(x->a, &c->clock, m->frame.time_ms, now, c->peer);
    webxr_ingest(x->a, c->session, &c->ids, &m->frame, t, now);
    if (c->clock.best_rtt_ns) {
        x->lat_ns[x->next_lat] = now - t;
        x->next_lat = (x->next_lat + 1) % 128;
        if (x->n_lat < 128) x->n_lat++;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* ---- wslay callbacks ---- */

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *u)
{
    struct conn *c = u;
    (void)flags;
    if (c->rejected) { /* nothing more is read from a peer that broke a rule */
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    size_t n = xg_tcp_in_read(c->bev, buf, len);
    if (!n) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
    }
    return (ssize_t)n;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
                       void *u)
{
    struct conn *c = u;
    (void)flags;
    if (xg_tcp_write(c->bev, data, len)) {
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
    }
    return (ssize_t)len;
}

static void ws_frame_start(wslay_event_context_ptr ctx,
                           const struct wslay_event_on_frame_recv_start_arg *arg, void *u)
{
    struct conn *c = u;
    (void)ctx;
    if (arg->opcode >= 8 || c->rejected) return; /* control frames: wslay bounds them (125) */
    if (arg->opcode != WSLAY_CONTINUATION_FRAME) c->msg_bytes = 0;
    c->msg_bytes += arg->payload_length;
    if (c->msg_bytes > (uint64_t)c->x->max_message)
        conn_reject(c, WSLAY_CODE_MESSAGE_TOO_BIG,
                    "message payload_length %llu > max_message_bytes %lld",
                    (unsigned long long)c->msg_bytes, (long long)c->x->max_message);
}

static void ws_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
                   void *u)
{
    struct conn *c = u;
    int64_t now = xg_clock_mono_ns();
    if (c->state != OPEN || c->rejected || wslay_event_get_close_sent(ctx)) return;
    if (arg->opcode == WSLAY_CONNECTION_CLOSE) {
        if (!c->close_reason[0])
            snprintf(c->close_reason, sizeof c->close_reason, "closed by the page (code %u)",
                     arg->status_code);
        return;
    }
    if (arg->opcode != WSLAY_BINARY_FRAME) {
        if (arg->opcode == WSLAY_TEXT_FRAME)
            conn_reject(c, WSLAY_CODE_UNSUPPORTED_DATA,
                        "text message of %zu bytes (only binary messages are defined)",
                        arg->msg_length);
        return; /* ping/pong: wslay answers pings itself */
    }
    if (now - c->rate_window_ns >= INT64_C(1000000000)) {
        c->rate_window_ns = now;
        c->rate_count = 0;
    }
    if (++c->rate_count > c->x->max_rate) {
        c->x->closed_rate++;
        conn_reject(c, WSLAY_CODE_POLICY_VIOLATION,
                    "%lld messages within 1 s > max_messages_per_s %lld", (long long)c->rate_count,
                    (long long)c->x->max_rate);
        return;
    }
    handle_msg(c, arg->msg, arg->msg_length, now);
}

/* Run wslay on what arrived; close when it wants neither reading nor writing. */
static void ws_pump(struct conn *c)
{
    if (wslay_event_recv(c->ws) || wslay_event_send(c->ws)) {
        if (!c->close_reason[0])
            snprintf(c->close_reason, sizeof c->close_reason, "WebSocket error");
        conn_close_later(c);
        return;
    }
    if (wslay_event_get_close_sent(c->ws) ||
        (!wslay_event_want_read(c->ws) && !wslay_event_want_write(c->ws)))
        conn_close_later(c);
}

/* ---- the opening handshake ---- */

static void http_reply(struct conn *c, const char *status, const char *extra, const char *body)
{
    xg_tcp_printf(c->bev,
                  "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                  "X-Content-Type-Options: nosniff\r\n%sConnection: close\r\n"
                  "Content-Length: %zu\r\n\r\n%s",
                  status, extra, strlen(body), body);
}

static void handshake(struct conn *c)
{
    struct webxr *x = c->x;
    long end = xg_tcp_in_find(c->bev, "\r\n\r\n", 4);
    if (end < 0 || (size_t)end + 4 > HEAD_MAX) {
        if (end >= 0 || xg_tcp_in_len(c->bev) > HEAD_MAX) {
            x->handshakes_failed++;
            XG_WARN_PEER(&x->lim_hs, x->a->name,
                         "peer %s: request head above %d bytes: closing the connection", c->peer,
                         HEAD_MAX);
            http_reply(c, "431 Request Header Fields Too Large", "", "request head too large\n");
            conn_close_later(c);
        }
        return;
    }
    size_t hl = (size_t)end + 4;
    char head[HEAD_MAX + 1];
    xg_tcp_in_read(c->bev, head, hl);
    head[hl] = '\0';
    struct webxr_upgrade u;
    struct xg_error err = {0};
    if (webxr_upgrade_parse(head, hl, &u, &err)) {
        if (!strncmp(head, "GET ", 4) && !strcasestr(head, "\nupgrade:")) {
            /* a browser opened the adapter's URL: say what it is (and the certificate is now
             * accepted for this port) */
            http_reply(c, "200 OK", "",
                       "xrgate webxr adapter: this port takes the inspector's WebXR stream.\n"
                       "Go back to the inspector page and press Enter VR / Enter AR.\n");
        } else {
            x->handshakes_failed++;
            XG_WARN_PEER(&x->lim_hs, x->a->name, "peer %s: WebSocket handshake: %s: answered 400",
                         c->peer, err.msg);
            http_reply(c, "400 Bad Request", "", "not a WebSocket upgrade request\n");
        }
        conn_close_later(c);
        return;
    }
    /* the admin token as it is now (a reload changes it in place) */
    const char *token = x->a->admin_token ? x->a->admin_token : "";
    if (token[0] && !webxr_token_equal(u.token, token)) {
        x->handshakes_failed++;
        XG_WARN_PEER(&x->lim_hs, x->a->name, "peer %s: WebSocket handshake: token %s: answered 401",
                     c->peer, u.token[0] ? "wrong" : "missing (?token= or Authorization: Bearer)");
        http_reply(c, "401 Unauthorized", "WWW-Authenticate: Bearer\r\n", "token required\n");
        conn_close_later(c);
        return;
    }
    char accept[40];
    webxr_accept_key(u.key, accept, sizeof accept);
    xg_tcp_printf(c->bev,
                  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
                  accept);
    static const struct wslay_event_callbacks cbs = {
        .recv_callback = ws_recv,
        .send_callback = ws_send,
        .on_frame_recv_start_callback = ws_frame_start,
        .on_msg_recv_callback = ws_msg,
    };
    if (wslay_event_context_server_init(&c->ws, &cbs, c)) {
        XG_WARN(x->a->name, "peer %s: out of memory for the WebSocket", c->peer);
        conn_close_later(c);
        return;
    }
    /* max_message_bytes is checked in ws_frame_start (to say so in the log); wslay's own bound
     * (it closes with 1009 silently) stays above it as a backstop */
    wslay_event_config_set_max_recv_msg_length(c->ws, (uint64_t)x->max_message * 2 + 1024);
    xg_timer_stop(c->timer);
    c->state = OPEN;
    ws_pump(c);
}

/* ---- bufferevent callbacks ---- */

static void read_cb(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    (void)bev;
    if (c->state == HANDSHAKE)
        handshake(c);
    else if (c->state == OPEN)
        ws_pump(c);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    if (c->state == CLOSING && !xg_tcp_unsent(bev)) conn_free(c);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct conn *c = arg;
    (void)bev;
    if (!c->close_reason[0])
        snprintf(c->close_reason, sizeof c->close_reason, "%s",
                 (what & XG_TCP_EOF) ? "the page closed the connection" : "connection error");
    conn_free(c);
}

static void timer_cb(void *arg)
{
    struct conn *c = arg;
    if (c->state == HANDSHAKE) {
        c->x->handshakes_failed++;
        XG_WARN_PEER(&c->x->lim_hs, c->x->a->name,
                     "peer %s: no WebSocket handshake within handshake_timeout_ms %lld: closing",
                     c->peer, (long long)c->x->handshake_ms);
        conn_free(c);
        return;
    }
    if (c->state == CLOSING) {
        conn_free(c);
        return;
    }
    if (c->state != OPEN || !c->hello) return;
    int64_t quiet = xg_clock_mono_ns() - c->last_pong_ns;
    if (quiet > c->x->ping_ms * INT64_C(10000000)) {
        /* a half-open connection (the headset left the network): no answer to 10 PINGs */
        XG_INFO_PEER(&c->x->lim_gone, c->x->a->name,
                     "peer %s session %s: no answer to PINGs for %lld ms: closing", c->peer,
                     c->session, (long long)(quiet / 1000000));
        snprintf(c->close_reason, sizeof c->close_reason, "no answer to PINGs");
        wslay_event_queue_close(c->ws, WSLAY_CODE_GOING_AWAY, NULL, 0);
        ws_pump(c);
        return;
    }
    if (c->pings_fast > 0) c->pings_fast--;
    send_ping(c);
    arm_ping(c);
    ws_pump(c);
}

static int ts_clients(void *arg)
{
    return ((struct webxr *)arg)->n_conns;
}

static int ts_accepted(void *arg, struct bufferevent *bev, struct xg_tls_session *tls,
                       const char *peer)
{
    struct webxr *x = arg;
    (void)tls;
    struct conn *c = calloc(1, sizeof *c);
    if (!c) return -ENOMEM;
    c->timer = xg_timer_new(x->a->base, timer_cb, c);
    if (!c->timer) {
        free(c);
        return -ENOMEM;
    }
    c->x = x;
    c->bev = bev;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    if ((c->next = x->conns)) c->next->prevp = &c->next;
    x->conns = c;
    c->prevp = &x->conns;
    x->n_conns++;
    xg_timer_once(c->timer, (uint64_t)x->handshake_ms * 1000);
    struct xg_tcp_conf tc = {.read = read_cb, .written = write_cb, .event = event_cb, .arg = c};
    xg_tcp_start(bev, &tc);
    return 0;
}

/* ---- adapter ops ---- */

static int webxr_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct webxr *x = calloc(1, sizeof *x);
    if (!x) return xg_error_set(err, -ENOMEM, "out of memory");
    a->priv = x;
    x->a = a;
    int rc;
    if ((rc = xg_conf_string(conf, "listen", "127.0.0.1:0", &x->listen, err)) ||
        (rc = xg_conf_int(conf, "max_clients", 8, 1, 1024, &x->max_clients, err)) ||
        (rc = xg_conf_int(conf, "max_message_bytes", 16384, 64, 1 << 20, &x->max_message, err)) ||
        (rc = xg_conf_int(conf, "max_messages_per_s", 1000, 1, 100000, &x->max_rate, err)) ||
        (rc = xg_conf_int(conf, "handshake_timeout_ms", 5000, 10, 600000, &x->handshake_ms, err)) ||
        (rc = xg_conf_int(conf, "ping_ms", 1000, 100, 60000, &x->ping_ms, err)))
        return rc;
    return 0;
}

static int webxr_start(struct xg_adapter *a)
{
    struct webxr *x = a->priv;
    struct xg_error err = {0};
    if (a->admin_tls_cert && a->admin_tls_cert[0] && !x->tls) {
        struct xg_tls_conf tc = {
            .server = true, .cert = a->admin_tls_cert, .key = a->admin_tls_key};
        x->tls = xg_tls_ctx_new(&tc, &err);
        if (!x->tls) {
            XG_ERR(a->name, "admin.tls: %s", err.msg);
            return err.code ? err.code : -EINVAL;
        }
    }
    static const struct xg_tserver_ops ops = {.clients = ts_clients, .accepted = ts_accepted};
    struct xg_tserver_conf tc = {.component = a->name,
                                 .listen = x->listen,
                                 .default_port = 0,
                                 .max_clients = x->max_clients,
                                 .max_output = 1 << 20,
                                 .slow_timeout_ms = 5000,
                                 .tls = x->tls};
    if (!x->ts && !(x->ts = xg_tserver_new(a->base, &tc, &ops, x))) return -ENOMEM;
    int rc = xg_tserver_start(x->ts, &err);
    if (rc) {
        XG_ERR(a->name, "%s", err.msg);
        return rc;
    }
    XG_INFO(a->name, "WebXR sessions on %s://%s/%s", x->tls ? "wss" : "ws", xg_tserver_bound(x->ts),
            a->admin_token && a->admin_token[0] ? " (admin token required)" : "");
    return 0;
}

static void webxr_stop(struct xg_adapter *a)
{
    struct webxr *x = a->priv;
    if (!x) return;
    while (x->conns)
        conn_free(x->conns);
    if (x->ts) xg_tserver_stop(x->ts);
}

static void webxr_destroy(struct xg_adapter *a)
{
    struct webxr *x = a->priv;
    if (!x) return;
    webxr_stop(a);
    xg_tserver_free(x->ts);
    xg_tls_ctx_free(x->tls);
    free(x);
    a->priv = NULL;
}

static void webxr_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct webxr *x = a->priv;
    bool on = x && x->ts && xg_tserver_listening(x->ts);
    st->state = on ? (x->n_conns ? "streaming" : "listening") : "stopped";
    if (!x) return;
    if (on) {
        snprintf(st->peer, sizeof st->peer, "%s", xg_tserver_bound(x->ts));
        socklen_t len = 0;
        const struct sockaddr *sa = xg_tserver_addr(x->ts, &len);
        int port = 0;
        if (sa && sa->sa_family == AF_INET)
            port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
        if (sa && sa->sa_family == AF_INET6)
            port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
        xg_status_id(st, "port", port);
        xg_status_gauge(st, "tls", x->tls ? 1 : 0);
    }
    xg_status_gauge(st, "clients", x->n_conns);
    xg_status_counter(st, "sessions", (double)x->sessions);
    xg_status_counter(st, "frames", (double)x->frames);
    xg_status_counter(st, "bad_messages", (double)x->bad);
    xg_status_counter(st, "closed_rate", (double)x->closed_rate);
    xg_status_counter(st, "handshakes_failed", (double)x->handshakes_failed);
    if (x->n_lat) {
        /* page -> table: XRFrame time (gateway clock, through the ping offset) to the table */
        int64_t v[128];
        memcpy(v, x->lat_ns, x->n_lat * sizeof v[0]);
        qsort(v, x->n_lat, sizeof v[0], cmp_i64);
        xg_status_gauge(st, "latency_ms_p50", (double)v[x->n_lat / 2] / 1e6);
        xg_status_gauge(st, "latency_ms_max", (double)v[x->n_lat - 1] / 1e6);
        xg_status_gauge(st, "clock_rtt_ms", (double)x->rtt_ns / 1e6);
    }
    if (x->ts) xg_tserver_status(x->ts, st);
}

const struct xg_adapter_ops xg_webxr_ops = {
    .type = "webxr",
    .create = webxr_create,
    .start = webxr_start,
    .status = webxr_status,
    .stop = webxr_stop,
    .destroy = webxr_destroy,
};
