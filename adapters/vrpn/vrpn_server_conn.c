/* `vrpn-server` connections (vrpn_server_priv.h; behaviour at the top of vrpn_server.c): TCP
 * clients the transport accepted (core/net/transport_server.h: listener, max_clients, read cap,
 * output bound) and UDP connection requests with their call-backs, and the glue between each
 * connection's bufferevent and its socket-free session (vrpn_session.h: cookie, handshake burst,
 * descriptions, dispatch, wire rules §6-§7): the session's events (Button States after the burst,
 * the client's UDP_DESCRIPTION, pongs to pings) and the handshake deadline timer. */

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/transport.h"
#include "adapters/vrpn/vrpn_callback.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "adapters/vrpn/vrpn_names.h"
#include "adapters/vrpn/vrpn_sensor_map.h"
#include "adapters/vrpn/vrpn_server_priv.h"
#include "adapters/vrpn/vrpn_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "mappings/frame.h"

/* ---- connections ---- */

void vrpn_srv_conn_free(struct vrpn_server *s, struct conn *c)
{
    for (struct conn **pp = &s->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    if (c->bev) xg_tcp_free(c->bev);
    xg_timer_free(c->deadline);
    xg_udp_rx_close(&c->udp);
    vrpn_session_free(&c->sess);
    free(c->tsender);
    free(c->pending.b);
    free(c);
    s->n_conns--;
}

/* Close a connection because of bad input: one log line naming peer, field and value. */
static void conn_bad(struct xg_adapter *a, struct conn *c, const char *what)
{
    struct vrpn_server *s = a->priv;
    XG_WARN_PEER(&s->lim_bad, a->name, "client %s: %s; closing the connection", c->peer, what);
    s->bad_input++;
    a->errors++;
    vrpn_srv_conn_free(s, c);
}

/* Queue bytes on the TCP connection under the transport's hard bound (2x max_output_bytes: a
 * client costs at most that plus one tick of reports). Returns false if the connection is gone. */
bool vrpn_srv_conn_write(struct xg_adapter *a, struct conn *c, const void *p, size_t n)
{
    struct vrpn_server *s = a->priv;
    int rc = xg_tserver_write(s->ts, c->bev, c->peer, p, n);
    if (rc == 0) return true;
    if (rc == -ENOBUFS)
        a->drops++; /* logged and counted (clients_dropped_slow) by the transport */
    else
        a->errors++;
    vrpn_srv_conn_free(s, c);
    return false;
}

/* Register tracker t's name on connection c (cached); returns our sender id or -1. If `describe`
 * and the name is new on this connection, a SENDER_DESCRIPTION is appended to w. */
int vrpn_srv_conn_tracker_sender(struct xg_adapter *a, struct conn *c, int t, struct xg_writer *w,
                                 const struct vrpn_header *h)
{
    struct vrpn_server *s = a->priv;
    if (t >= c->n_tsender) {
        int32_t *v = realloc(c->tsender, (size_t)s->n_trackers * sizeof *v);
        if (!v) return -1;
        for (int i = c->n_tsender; i < s->n_trackers; i++)
            v[i] = -1;
        c->tsender = v;
        c->n_tsender = s->n_trackers;
    }
    if (c->tsender[t] >= 0) return c->tsender[t];
    struct vrpn_id_map *map = vrpn_session_ids(&c->sess);
    int before = vrpn_id_map_count(map, VRPN_ID_SENDER);
    int id = vrpn_id_map_register(map, VRPN_ID_SENDER, s->trackers[t].name, NULL);
    if (id < 0) return -1;
    c->tsender[t] = id;
    if (w && id >= before)
        vrpn_encode_description(w, h, vrpn_session_seq(&c->sess), VRPN_SENDER_DESCRIPTION, id,
                                s->trackers[t].name, NULL);
    return id;
}

/* A fresh session: VRPN Control, our types (vrpn_std_types[]) and every tracker as a sender. */
static int conn_start_session(struct xg_adapter *a, struct conn *c, enum vrpn_mode mode)
{
    struct vrpn_server *s = a->priv;
    if (vrpn_session_start(&c->sess, mode, xg_clock_mono_ns()) < 0) return -ENOMEM;
    for (int t = 0; t < s->n_trackers; t++)
        if (vrpn_srv_conn_tracker_sender(a, c, t, NULL, NULL) < 0) return -ENOMEM;
    return 0;
}

/* Clients normally send no UDP (§6.3): read and discard (up to 64 datagrams a wake-up). */
static int udp_conn_datagram(void *arg, uint8_t *p, size_t n, const struct sockaddr *from,
                             socklen_t from_len)
{
    (void)arg;
    (void)p;
    (void)n;
    (void)from;
    (void)from_len;
    return 1;
}

/* Our UDP socket for a connection, bound to the local address of its TCP connection. */
static int conn_open_udp(struct xg_adapter *a, struct conn *c)
{
    struct sockaddr_storage ss;
    socklen_t l = sizeof ss;
    if (getsockname(xg_tcp_fd(c->bev), (struct sockaddr *)&ss, &l) < 0) return -errno;
    if (ss.ss_family != AF_INET) return -EAFNOSUPPORT;
    ((struct sockaddr_in *)&ss)->sin_port = 0;
    struct xg_error err = {0};
    int fd = xg_udp_bind_local((struct sockaddr *)&ss, l, &err);
    if (fd < 0) return fd;
    l = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &l);
    c->udp_port = (uint16_t)xg_net_addr_port((struct sockaddr *)&ss);
    inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, c->udp_host, sizeof c->udp_host);
    c->udp.own.max_datagrams = 64;
    c->udp.own.max_bytes = 64 * 2048 + 1; /* the datagrams, not their bytes, bound a wake-up */
    if (xg_udp_rx_start(&c->udp, a->base, fd, 2048, udp_conn_datagram, c, NULL) < 0) c->udp.fd = -1;
    return 0;
}

/* Append a Button States of tracker t (if it has buttons) to w (TCP, §8.2). */
static void encode_states(struct xg_adapter *a, struct conn *c, int t, struct xg_writer *w,
                          struct vrpn_header h)
{
    struct vrpn_server *s = a->priv;
    const struct tracker *tr = &s->trackers[t];
    if (tr->n_btn <= 0) return;
    static struct vrpn_body b; /* single-threaded reactor */
    b.kind = VRPN_BODY_BUTTON_STATES;
    b.u.states.count = tr->n_btn;
    for (int k = 0; k < tr->n_btn; k++)
        b.u.states.states[k] = tr->btn[k];
    int sender = vrpn_srv_conn_tracker_sender(a, c, t, NULL, NULL);
    if (sender < 0) return;
    h.sender = sender;
    h.type = T_BUTTON_STATES;
    vrpn_encode_body_message(w, &h, vrpn_session_seq(&c->sess), &b, NULL);
}

/* The session sent our handshake burst (§6.1 step 3, §6.3): a Button States for every tracker
 * with buttons (mainline's "got connection" handler, §6.1 step 4). Returns false if c is gone. */
static bool conn_up(struct xg_adapter *a, struct conn *c)
{
    struct vrpn_server *s = a->priv;
    size_t cap = (size_t)s->n_trackers * (VRPN_HEADER_SIZE + 8 + 4 * VRPN_MAX_BUTTONS) + 8;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        a->errors++;
        vrpn_srv_conn_free(s, c);
        return false;
    }
    struct xg_writer w;
    xg_writer_init(&w, buf, cap);
    struct vrpn_header h = vrpn_session_header(&c->sess, xg_clock_mono_ns());
    for (int t = 0; t < s->n_trackers; t++)
        encode_states(a, c, t, &w, h);
    c->need_full = true;
    xg_timer_stop(c->deadline);
    bool ok = !w.len || vrpn_srv_conn_write(a, c, buf, w.len);
    free(buf);
    if (ok)
        XG_INFO_PEER(&s->lim_session, a->name, "client %s: VRPN session up (%s, %d/%" PRId64 ")",
                     c->peer, c->callback ? "UDP+TCP" : "TCP", s->n_conns, s->max_clients);
    return ok;
}

/* The client's UDP_DESCRIPTION (numeric IPv4, checked by the session): low-latency reports go
 * over UDP to it from now on. */
static void conn_udp_description(struct xg_adapter *a, struct conn *c, const struct vrpn_event *ev)
{
    struct vrpn_server *s = a->priv;
    struct sockaddr_in sin;
    if (vrpn_callback_target(ev->name, ev->udp_port, &sin) < 0) return;
    memcpy(&c->udp_to, &sin, sizeof sin);
    c->udp_to_len = sizeof sin;
    if (c->udp.fd < 0 && conn_open_udp(a, c) < 0) {
        XG_WARN_PEER(&s->lim_session, a->name, "client %s: no UDP socket; reports stay on TCP",
                     c->peer);
        return;
    }
    c->udp_ok = true;
    XG_INFO_PEER(&s->lim_session, a->name, "client %s: reports over UDP to %s:%u", c->peer,
                 ev->name, (unsigned)ev->udp_port);
}

/* A ping (§7): Button States (button servers send them before the pong) and a pong from our
 * sender of that name; none for a name we do not serve. Returns false if c is gone. */
static bool conn_ping(struct xg_adapter *a, struct conn *c, int32_t ls)
{
    struct vrpn_server *s = a->priv;
    for (int t = 0; t < s->n_trackers; t++) {
        if (vrpn_srv_conn_tracker_sender(a, c, t, NULL, NULL) != ls) continue;
        uint8_t b[2 * VRPN_HEADER_SIZE + 8 + 4 * VRPN_MAX_BUTTONS];
        struct xg_writer w;
        xg_writer_init(&w, b, sizeof b);
        struct vrpn_header h = vrpn_session_header(&c->sess, xg_clock_mono_ns());
        encode_states(a, c, t, &w, h);
        h.sender = ls;
        h.type = T_PONG;
        vrpn_encode_message(&w, &h, vrpn_session_seq(&c->sess), NULL, 0, NULL);
        s->pongs++;
        return vrpn_srv_conn_write(a, c, b, w.len);
    }
    return true;
}

/* ops.send of a connection's session. */
static int sess_send(void *ctx, const uint8_t *buf, size_t len)
{
    struct conn *c = ctx;
    return vrpn_srv_conn_write(c->a, c, buf, len) ? 0 : -1;
}

static int64_t sess_wall(void *ctx, int64_t mono)
{
    (void)ctx;
    return xg_clock_mono_to_wall_ns(mono);
}

/* The session's events (vrpn_session.h). < 0 when c was freed. */
static int sess_event(void *ctx, const struct vrpn_event *ev)
{
    struct conn *c = ctx;
    struct xg_adapter *a = c->a;
    struct vrpn_server *s = a->priv;
    switch (ev->kind) {
    case VRPN_EV_COOKIE:
        if (ev->minor_differs)
            XG_INFO_PEER(&s->lim_session, a->name,
                         "client %s speaks VRPN 07.%02d (we speak 07.38): continuing", c->peer,
                         ev->minor);
        return 0;
    case VRPN_EV_UP:
        return conn_up(a, c) ? 0 : -1;
    case VRPN_EV_UDP_DESCRIPTION:
        conn_udp_description(a, c, ev);
        return 0;
    case VRPN_EV_MESSAGE:
        if (ev->type_local == T_PING) return conn_ping(a, c, ev->sender_local) ? 0 : -1;
        return 0;
    default:
        return 0; /* descriptions (echoed by the session), log requests (we never log) */
    }
}

/* The session failed (bad input, or out of memory): one log line, and the connection closes. */
static void conn_failed(struct xg_adapter *a, struct conn *c)
{
    const struct vrpn_session_error *e = vrpn_session_error(&c->sess);
    if (e->kind == VRPN_ERR_LOCAL) {
        XG_ERR(a->name, "client %s: %s", c->peer, e->msg);
        a->errors++;
        vrpn_srv_conn_free(a->priv, c);
        return;
    }
    conn_bad(a, c, e->msg);
}

/* The connection of a bufferevent (callbacks get the adapter as their argument). */
static struct conn *conn_of(struct vrpn_server *s, struct bufferevent *bev)
{
    for (struct conn *c = s->conns; c; c = c->next)
        if (c->bev == bev) return c;
    return NULL;
}

/* Everything buffered on c into its session (any split: it reassembles). Returns false if c is
 * gone. */
static bool conn_feed(struct xg_adapter *a, struct conn *c)
{
    int64_t now = xg_clock_mono_ns();
    enum vrpn_sess_state st = vrpn_session_state(&c->sess);
    if (st != VRPN_SESS_COOKIE && st != VRPN_SESS_STREAMING) return true;
    for (;;) {
        size_t n;
        const uint8_t *p = xg_tcp_in_peek(c->bev, &n);
        if (!p) return true;
        int rc = vrpn_session_feed(&c->sess, p, n, now);
        if (rc == -ECONNABORTED) return false; /* freed by a write that failed */
        if (rc < 0) {
            conn_failed(a, c);
            return false;
        }
        xg_tcp_in_drain(c->bev, n);
    }
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    struct xg_adapter *a = arg;
    struct conn *c = conn_of(a->priv, bev);
    if (c) conn_feed(a, c);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct xg_adapter *a = arg;
    struct vrpn_server *s = a->priv;
    struct conn *c = conn_of(s, bev);
    if (!c) return;
    if (what & XG_TCP_CONNECTED) {
        /* we called the client back (UDP+TCP mode): cookie now, our UDP socket for its
         * UDP_DESCRIPTION */
        int one = 1;
        setsockopt(xg_tcp_fd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (conn_open_udp(a, c) < 0)
            XG_WARN_PEER(&s->lim_session, a->name, "client %s: no UDP socket; reports stay on TCP",
                         c->peer);
        else
            vrpn_session_set_udp(&c->sess, c->udp_host, c->udp_port); /* our UDP_DESCRIPTION */
        if (vrpn_session_connected(&c->sess, xg_clock_mono_ns()) < 0) return; /* our cookie */
        XG_DEBUG(a->name, "client %s: called back", c->peer);
        return;
    }
    if (!(what & (XG_TCP_EOF | XG_TCP_ERROR))) return;
    if (vrpn_session_state(&c->sess) == VRPN_SESS_CALLBACK) {
        XG_WARN_PEER(&s->lim_callback, a->name, "call-back to %s failed: %s", c->peer,
                     strerror(errno));
        s->callback_failures++;
        vrpn_srv_conn_free(s, c);
        return;
    }
    if (what & XG_TCP_EOF) {
        if (!conn_feed(a, c)) return;
        if (vrpn_session_eof(&c->sess) < 0) { /* a partial cookie or message */
            conn_failed(a, c);
            return;
        }
    }
    XG_INFO_PEER(&s->lim_session, a->name, "client %s disconnected", c->peer);
    vrpn_srv_conn_free(s, c);
}

/* The handshake deadline passed: a call-back still connecting, or a client whose cookie has
 * not arrived (a peer trickling bytes cannot hold its slot longer than this). */
static void deadline_cb(void *arg)
{
    struct conn *c = arg;
    struct xg_adapter *a = c->a;
    struct vrpn_server *s = a->priv;
    int64_t now = xg_clock_mono_ns();
    if (vrpn_session_tick(&c->sess, now) == 0) {
        enum vrpn_sess_state st = vrpn_session_state(&c->sess);
        if (st == VRPN_SESS_STREAMING || st == VRPN_SESS_IDLE) return;
        /* not due yet (the session's clock started just after this timer): wait for the rest */
        int64_t left = vrpn_session_deadline(&c->sess) - now;
        xg_timer_once(c->deadline, (uint64_t)(left > XG_NS_PER_MS ? left : XG_NS_PER_MS) / 1000);
        return;
    }
    if (vrpn_session_error(&c->sess)->kind == VRPN_ERR_NO_CALLBACK) {
        XG_WARN_PEER(&s->lim_callback, a->name, "call-back to %s: no answer within %" PRId64 " ms",
                     c->peer, s->handshake_ms);
        s->callback_failures++;
    } else {
        XG_WARN_PEER(&s->lim_bad, a->name,
                     "client %s: no VRPN cookie within %" PRId64 " ms; closing the connection",
                     c->peer, s->handshake_ms);
        s->bad_input++;
    }
    vrpn_srv_conn_free(s, c);
}

/* A connection and its session (mode: VRPN_MODE_UDP for a call-back), with the handshake
 * deadline armed. NULL on allocation failure. */
static struct conn *conn_new(struct xg_adapter *a, struct bufferevent *bev, const char *peer,
                             enum vrpn_mode mode)
{
    struct vrpn_server *s = a->priv;
    struct conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->udp.fd = -1;
    c->a = a;
    c->bev = bev;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->next = s->conns;
    s->conns = c;
    s->n_conns++;
    c->deadline = xg_timer_new(a->base, deadline_cb, c);
    struct vrpn_session_ops ops = {.send = sess_send, .event = sess_event, .wall_ns = sess_wall};
    vrpn_session_init(&c->sess, VRPN_ROLE_SERVER, &ops, c, s->handshake_ms * XG_NS_PER_MS);
    c->callback = mode == VRPN_MODE_UDP;
    if (!c->deadline || xg_timer_once(c->deadline, (uint64_t)s->handshake_ms * 1000) < 0 ||
        conn_start_session(a, c, mode) < 0) {
        c->bev = NULL;
        vrpn_srv_conn_free(s, c);
        return NULL;
    }
    xg_tserver_read_cap(bev); /* call-backs too */
    struct xg_tcp_conf tc = {
        .read = read_cb, .event = event_cb, .arg = a, .read_max = 2 * VRPN_MAX_MESSAGE};
    xg_tcp_start(bev, &tc);
    return c;
}

int vrpn_srv_clients(void *arg)
{
    const struct xg_adapter *a = arg;
    const struct vrpn_server *s = a->priv;
    return s->n_conns;
}

int vrpn_srv_accepted(void *arg, struct bufferevent *bev, struct xg_tls_session *tls,
                      const char *peer)
{
    struct xg_adapter *a = arg;
    (void)tls;
    struct conn *c = conn_new(a, bev, peer, VRPN_MODE_TCP);
    if (!c) {
        a->errors++;
        return -ENOMEM;
    }
    if (vrpn_session_connected(&c->sess, xg_clock_mono_ns()) < 0) return 0; /* c, bev freed */
    XG_DEBUG(a->name, "client %s connected over TCP", peer);
    return 0;
}

/* A UDP connection request "<host> <port>\0" (§6.3): call the client back over TCP. Numeric
 * hosts only (a name is never resolved: that would block the reactor); never the server itself;
 * one session (connecting or connected) per call-back address and port. */
int vrpn_srv_lob_datagram(void *arg, uint8_t *b, size_t n, const struct sockaddr *fromsa,
                          socklen_t fl)
{
    struct xg_adapter *a = arg;
    struct vrpn_server *s = a->priv;
    (void)fl; /* read while s->lob_budget lasts (core/net/udp_endpoint.h): one request = one message
               */
    char peer[64];
    xg_net_addr_str(fromsa, peer, sizeof peer);
    struct vrpn_lob lob;
    struct xg_error err = {0};
    if (n > VRPN_LOB_MAX || vrpn_lob_decode(b, n, &lob, &err) < 0) {
        if (n > VRPN_LOB_MAX)
            xg_error_set(&err, -EPROTO, "datagram of %zd bytes, above %d", n, VRPN_LOB_MAX);
        s->lob_rejected++;
        XG_WARN_PEER(&s->lim_request, a->name, "connection request from %s: %s: ignored", peer,
                     err.msg);
        return 1;
    }
    char target[VRPN_CNAME_MAX + 16];
    snprintf(target, sizeof target, "%s:%u", lob.host, (unsigned)lob.tcp_port);
    struct sockaddr_in to;
    if (vrpn_callback_target(lob.host, lob.tcp_port, &to) < 0) {
        s->lob_rejected++;
        s->lob_names++;
        XG_WARN_PEER(&s->lim_request, a->name,
                     "connection request from %s: call-back host '%s' is not a numeric IPv4 "
                     "address (names are not resolved): ignored",
                     peer, lob.host);
        return 1;
    }
    xg_net_addr_str((struct sockaddr *)&to, target, sizeof target);
    if (vrpn_callback_is_self(&to, (struct sockaddr *)&s->bound_ss)) {
        s->lob_rejected++;
        s->lob_self++;
        XG_WARN_PEER(&s->lim_request, a->name,
                     "connection request from %s: call-back %s ('%s') is this server itself: "
                     "ignored",
                     peer, target, lob.host);
        return 1;
    }
    bool dup = false; /* duplicate suppression: one session per call-back address */
    int64_t pending = 0;
    for (struct conn *c = s->conns; c && !dup; c = c->next) {
        dup = c->callback && c->cb_addr.sin_port == to.sin_port &&
              c->cb_addr.sin_addr.s_addr == to.sin_addr.s_addr;
        pending += c->callback && vrpn_session_state(&c->sess) != VRPN_SESS_STREAMING;
    }
    if (dup) {
        s->lob_duplicates++;
        return 1;
    }
    /* spoofed requests may hold at most half the slots (until handshake_timeout_ms) */
    int64_t max_pending = s->max_clients > 1 ? s->max_clients / 2 : 1;
    if (s->n_conns >= s->max_clients || pending >= max_pending) {
        XG_WARN_PEER(&s->lim_refused, a->name,
                     "connection request from %s (call back %s) refused: %s (%" PRId64 ") reached",
                     peer, target, pending >= max_pending ? "pending call-backs" : "max_clients",
                     pending >= max_pending ? max_pending : s->max_clients);
        xg_tserver_count_refused(s->ts);
        return 1;
    }
    struct bufferevent *bev = xg_tcp_new(a->base);
    struct conn *c = bev ? conn_new(a, bev, target, VRPN_MODE_UDP) : NULL;
    if (!c) {
        if (bev) xg_tcp_free(bev);
        a->errors++;
        return 1;
    }
    c->cb_addr = to;
    s->callbacks++;
    XG_DEBUG(a->name, "connection request from %s: calling back %s", peer, target);
    if (xg_tcp_connect(bev, (struct sockaddr *)&to, sizeof to) < 0) {
        XG_WARN_PEER(&s->lim_callback, a->name, "call-back to %s failed", target);
        s->callback_failures++;
        vrpn_srv_conn_free(s, c);
    }
    return 1;
}
