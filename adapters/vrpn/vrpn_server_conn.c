/* `vrpn-server` connections (vrpn_server_priv.h; behaviour at the top of vrpn_server.c): the TCP
 * listener and UDP connection requests with their call-backs, the handshake (cookie, descriptions,
 * UDP_DESCRIPTION), the client messages we accept (wire rules §6–§7) and the handshake deadline. */

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
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

#include "adapters/vrpn/vrpn_callback.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "adapters/vrpn/vrpn_names.h"
#include "adapters/vrpn/vrpn_sensor_map.h"
#include "adapters/vrpn/vrpn_server_priv.h"
#include "core/adapter.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/net.h"
#include "mappings/frame.h"

/* Our types, registered in this order on every connection (ids 0..17 as in mainline's s2c). */
static const char *const our_types[] = {
    VRPN_TYPE_GOT_FIRST_CONNECTION,
    VRPN_TYPE_GOT_CONNECTION,
    VRPN_TYPE_DROPPED_CONNECTION,
    VRPN_TYPE_DROPPED_LAST_CONNECTION,
    VRPN_TYPE_POS_QUAT,
    VRPN_TYPE_VELOCITY,
    VRPN_TYPE_ACCELERATION,
    "vrpn_Tracker To_Room",
    "vrpn_Tracker Unit_To_Sensor",
    "vrpn_Tracker Request_Tracker_To_Room",
    "vrpn_Tracker Request_Unit_To_Sensor",
    "vrpn_Tracker Workspace",
    "vrpn_Tracker Request_Tracker_Workspace",
    "vrpn_Tracker set_update_rate",
    "vrpn_Tracker Reset_Origin",
    VRPN_TYPE_TEXT,
    VRPN_TYPE_PING,
    VRPN_TYPE_PONG,
    VRPN_TYPE_BUTTON_CHANGE,
    VRPN_TYPE_BUTTON_STATES,
    "vrpn_Button Admin",
    "vrpn_Button Alert",
    VRPN_TYPE_ANALOG_CHANNEL,
};
#define N_OUR_TYPES ((int)(sizeof our_types / sizeof our_types[0]))
/* ---- connections ---- */

size_t vrpn_srv_out_len(const struct conn *c)
{
    return c->bev ? evbuffer_get_length(bufferevent_get_output(c->bev)) : 0;
}

void vrpn_srv_conn_free(struct vrpn_server *s, struct conn *c)
{
    for (struct conn **pp = &s->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    if (c->bev) bufferevent_free(c->bev);
    if (c->deadline) event_free(c->deadline);
    if (c->udp_ev) event_free(c->udp_ev);
    if (c->udp_fd >= 0) close(c->udp_fd);
    vrpn_id_map_free(&c->map);
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

/* Queue bytes on the TCP connection; drops the client when its unsent output is already past 2x
 * max_output_bytes (so a client costs at most that plus one tick of reports). Returns false if
 * the connection is gone. */
bool vrpn_srv_conn_write(struct xg_adapter *a, struct conn *c, const void *p, size_t n)
{
    struct vrpn_server *s = a->priv;
    if (vrpn_srv_out_len(c) > (size_t)s->max_output * 2) {
        XG_WARN_PEER(&s->lim_slow, a->name,
                     "client %s: %zu bytes unsent (above 2 x max_output_bytes %" PRId64
                     "): dropping the slow client",
                     c->peer, vrpn_srv_out_len(c), s->max_output);
        s->dropped_slow++;
        a->drops++;
        vrpn_srv_conn_free(s, c);
        return false;
    }
    if (bufferevent_write(c->bev, p, n) < 0) {
        a->errors++;
        vrpn_srv_conn_free(s, c);
        return false;
    }
    s->bytes_out += n;
    return true;
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
    int before = vrpn_id_map_count(&c->map, VRPN_ID_SENDER);
    int id = vrpn_id_map_register(&c->map, VRPN_ID_SENDER, s->trackers[t].name, NULL);
    if (id < 0) return -1;
    c->tsender[t] = id;
    if (w && id >= before)
        vrpn_encode_description(w, h, &c->tcp_seq, VRPN_SENDER_DESCRIPTION, id, s->trackers[t].name,
                                NULL);
    return id;
}

static int conn_init_map(struct xg_adapter *a, struct conn *c)
{
    struct vrpn_server *s = a->priv;
    vrpn_id_map_init(&c->map);
    if (vrpn_id_map_register(&c->map, VRPN_ID_SENDER, VRPN_NAME_CONTROL, NULL) < 0) return -ENOMEM;
    for (int t = 0; t < s->n_trackers; t++)
        if (vrpn_srv_conn_tracker_sender(a, c, t, NULL, NULL) < 0) return -ENOMEM;
    for (int i = 0; i < N_OUR_TYPES; i++)
        if (vrpn_id_map_register(&c->map, VRPN_ID_TYPE, our_types[i], NULL) != i) return -ENOMEM;
    return 0;
}

static void udp_conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
    /* clients normally send no UDP (§6.3); read and discard */
    (void)what;
    (void)arg;
    uint8_t b[2048];
    for (int i = 0; i < 64; i++)
        if (recv(fd, b, sizeof b, 0) < 0) break;
}

/* Our UDP socket for a connection, bound to the local address of its TCP connection. */
static int conn_open_udp(struct xg_adapter *a, struct conn *c)
{
    struct sockaddr_storage ss;
    socklen_t l = sizeof ss;
    if (getsockname(bufferevent_getfd(c->bev), (struct sockaddr *)&ss, &l) < 0) return -errno;
    if (ss.ss_family != AF_INET) return -EAFNOSUPPORT;
    ((struct sockaddr_in *)&ss)->sin_port = 0;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (bind(fd, (struct sockaddr *)&ss, l) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    l = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &l);
    c->udp_fd = fd;
    c->udp_port = (uint16_t)xg_net_addr_port((struct sockaddr *)&ss);
    inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, c->udp_host, sizeof c->udp_host);
    c->udp_ev = event_new(a->base, fd, EV_READ | EV_PERSIST, udp_conn_read_cb, c);
    if (c->udp_ev) event_add(c->udp_ev, NULL);
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
    vrpn_encode_body_message(w, &h, &c->tcp_seq, &b, NULL);
}

/* The client's cookie was accepted: send our handshake burst (§6.1 step 3, §6.3), then a Button
 * States for every tracker with buttons (mainline's "got connection" handler, §6.1 step 4). */
static bool conn_handshake(struct xg_adapter *a, struct conn *c)
{
    struct vrpn_server *s = a->priv;
    size_t names = (size_t)vrpn_id_map_count(&c->map, VRPN_ID_SENDER) +
                   (size_t)vrpn_id_map_count(&c->map, VRPN_ID_TYPE);
    size_t cap = (names + 1) * (VRPN_HEADER_SIZE + 4 + VRPN_CNAME_MAX + 8) + 256 +
                 (size_t)s->n_trackers * (VRPN_HEADER_SIZE + 8 + 4 * VRPN_MAX_BUTTONS);
    uint8_t *buf = malloc(cap);
    if (!buf) {
        a->errors++;
        vrpn_srv_conn_free(s, c);
        return false;
    }
    struct xg_writer w;
    xg_writer_init(&w, buf, cap);
    struct vrpn_header h = now_header(xg_clock_mono_ns());
    struct xg_error err = {0};
    int rc = 0;
    if (c->callback && c->udp_fd >= 0)
        rc = vrpn_encode_udp_description(&w, &h, &c->tcp_seq, c->udp_port, c->udp_host, &err);
    if (rc >= 0) rc = vrpn_id_map_encode_descriptions(&c->map, &w, &h, &c->tcp_seq, &err);
    for (int t = 0; rc >= 0 && t < s->n_trackers; t++)
        encode_states(a, c, t, &w, h);
    if (rc < 0) {
        XG_ERR(a->name, "client %s: handshake: %s", c->peer, err.msg);
        free(buf);
        a->errors++;
        vrpn_srv_conn_free(s, c);
        return false;
    }
    c->state = C_STREAMING;
    c->need_full = true;
    event_del(c->deadline);
    bool ok = vrpn_srv_conn_write(a, c, buf, w.len);
    free(buf);
    if (ok)
        XG_INFO_PEER(&s->lim_session, a->name, "client %s: VRPN session up (%s, %d/%" PRId64 ")",
                     c->peer, c->callback ? "UDP+TCP" : "TCP", s->n_conns, s->max_clients);
    return ok;
}

static const char *type_name_of(const struct conn *c, int local)
{
    const char *n = vrpn_id_map_name(&c->map, VRPN_ID_TYPE, local);
    return n ? n : "?";
}

/* Handle one message from a client. Returns false if the connection was closed. */
static bool conn_message(struct xg_adapter *a, struct conn *c, const struct vrpn_msg *m)
{
    struct vrpn_server *s = a->priv;
    struct xg_error err = {0};
    char what[2 * XG_ERROR_MAX + 256];
    if (m->hdr.type < 0) {
        struct vrpn_system_msg sm;
        if (vrpn_system_decode(m, &sm, &err) < 0) {
            snprintf(what, sizeof what, "system message: %s", err.msg);
            conn_bad(a, c, what);
            return false;
        }
        if (sm.type == VRPN_SENDER_DESCRIPTION || sm.type == VRPN_TYPE_DESCRIPTION) {
            enum vrpn_id_kind k =
                sm.type == VRPN_SENDER_DESCRIPTION ? VRPN_ID_SENDER : VRPN_ID_TYPE;
            bool is_new = false;
            int local = vrpn_id_map_describe(&c->map, k, sm.id, sm.name, &is_new, &err);
            if (local < 0) {
                snprintf(what, sizeof what, "%s description of id %" PRId32 " '%s': %s",
                         k == VRPN_ID_SENDER ? "sender" : "type", sm.id, sm.name, err.msg);
                conn_bad(a, c, what);
                return false;
            }
            if (is_new) { /* describe it back with our id (§6.2) */
                uint8_t b[VRPN_HEADER_SIZE + 4 + VRPN_CNAME_MAX + 8];
                struct xg_writer w;
                xg_writer_init(&w, b, sizeof b);
                struct vrpn_header h = now_header(xg_clock_mono_ns());
                if (vrpn_encode_description(&w, &h, &c->tcp_seq, sm.type, local, sm.name, NULL) ==
                    0)
                    return vrpn_srv_conn_write(a, c, b, w.len);
            }
        } else if (sm.type == VRPN_UDP_DESCRIPTION) {
            struct sockaddr_in sin; /* numeric only: resolving a name would block the reactor */
            if (vrpn_callback_target(sm.name, sm.udp_port, &sin) < 0) {
                snprintf(what, sizeof what,
                         "UDP description: host '%s' is not a numeric IPv4 address", sm.name);
                conn_bad(a, c, what);
                return false;
            }
            memcpy(&c->udp_to, &sin, sizeof sin);
            c->udp_to_len = sizeof sin;
            if (c->udp_fd < 0 && conn_open_udp(a, c) < 0) {
                XG_WARN_PEER(&s->lim_session, a->name,
                             "client %s: no UDP socket; reports stay on TCP", c->peer);
                return true;
            }
            c->udp_ok = true;
            XG_INFO_PEER(&s->lim_session, a->name, "client %s: reports over UDP to %s:%u", c->peer,
                         sm.name, (unsigned)sm.udp_port);
        }
        /* log description (we never log) and disconnect (log files only): ignored */
        return true;
    }
    int lt = vrpn_id_map_to_local(&c->map, VRPN_ID_TYPE, m->hdr.type, &err);
    if (lt < 0) {
        snprintf(what, sizeof what, "message type id %" PRId32 " %s", m->hdr.type,
                 lt == -ENOENT ? "was never described" : err.msg);
        conn_bad(a, c, what);
        return false;
    }
    int ls = vrpn_id_map_to_local(&c->map, VRPN_ID_SENDER, m->hdr.sender, &err);
    if (ls < 0) {
        snprintf(what, sizeof what, "message sender id %" PRId32 " (type '%s') %s", m->hdr.sender,
                 type_name_of(c, lt), ls == -ENOENT ? "was never described" : err.msg);
        conn_bad(a, c, what);
        return false;
    }
    const char *tname = type_name_of(c, lt);
    enum vrpn_body_kind kind = vrpn_body_kind_of(tname);
    size_t want = SIZE_MAX;
    if (lt == T_SET_RATE || lt == T_BUTTON_ADMIN)
        want = 8;
    else if (lt >= 9 && lt <= 14 && lt != 11 && lt != T_SET_RATE)
        want = 0; /* the tracker requests and Reset_Origin */
    if (want != SIZE_MAX && m->body_len != want) {
        snprintf(what, sizeof what, "'%s' body is %zu bytes, expected %zu", tname, m->body_len,
                 want);
        conn_bad(a, c, what);
        return false;
    }
    if (kind != VRPN_BODY_UNKNOWN) {
        struct vrpn_body body;
        if (vrpn_body_decode(kind, m->body, m->body_len, &body, &err) < 0) {
            snprintf(what, sizeof what, "body: %s", err.msg);
            conn_bad(a, c, what);
            return false;
        }
    }
    if (lt == T_PING) {
        for (int t = 0; t < s->n_trackers; t++) {
            if (vrpn_srv_conn_tracker_sender(a, c, t, NULL, NULL) != ls) continue;
            uint8_t b[2 * VRPN_HEADER_SIZE + 8 + 4 * VRPN_MAX_BUTTONS];
            struct xg_writer w;
            xg_writer_init(&w, b, sizeof b);
            struct vrpn_header h = now_header(xg_clock_mono_ns());
            encode_states(a, c, t, &w, h); /* button servers send States before the pong */
            h.sender = ls;
            h.type = T_PONG;
            vrpn_encode_message(&w, &h, &c->tcp_seq, NULL, 0, NULL);
            s->pongs++;
            return vrpn_srv_conn_write(a, c, b, w.len);
        }
        /* a ping for a name we do not serve: no pong (§7) */
    }
    return true;
}

/* The connection of a bufferevent (callbacks get the adapter as their argument). */
static struct conn *conn_of(struct vrpn_server *s, struct bufferevent *bev)
{
    for (struct conn *c = s->conns; c; c = c->next)
        if (c->bev == bev) return c;
    return NULL;
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    struct xg_adapter *a = arg;
    struct vrpn_server *s = a->priv;
    struct conn *c = conn_of(s, bev);
    if (!c) return;
    struct evbuffer *in = bufferevent_get_input(bev);
    char what[2 * XG_ERROR_MAX + 256];
    for (;;) {
        size_t len = evbuffer_get_length(in);
        struct xg_error err = {0};
        if (c->state == C_COOKIE) {
            if (len < VRPN_COOKIE_SIZE) return;
            const uint8_t *p = evbuffer_pullup(in, VRPN_COOKIE_SIZE);
            struct vrpn_cookie ck;
            if (vrpn_cookie_decode(p, VRPN_COOKIE_SIZE, &ck, &err) < 0) {
                char hex[2 * VRPN_COOKIE_SIZE + 1];
                for (int i = 0; i < VRPN_COOKIE_SIZE; i++)
                    snprintf(hex + 2 * i, 3, "%02x", p[i]);
                snprintf(what, sizeof what, "cookie: %s (bytes %s)", err.msg, hex);
                conn_bad(a, c, what);
                return;
            }
            if (ck.minor_differs)
                XG_INFO_PEER(&s->lim_session, a->name,
                             "client %s speaks VRPN 07.%02d (we speak 07.38): continuing", c->peer,
                             ck.minor);
            evbuffer_drain(in, VRPN_COOKIE_SIZE);
            if (!conn_handshake(a, c)) return;
            continue;
        }
        if (c->state != C_STREAMING || len == 0) return;
        size_t have = len < VRPN_HEADER_SIZE ? len : VRPN_HEADER_SIZE, ws = 0;
        const uint8_t *p = evbuffer_pullup(in, (ssize_t)have);
        int rc = vrpn_stream_check(p, have, &ws, &err);
        if (rc < 0) {
            snprintf(what, sizeof what, "header: %s", err.msg);
            conn_bad(a, c, what);
            return;
        }
        if (have < VRPN_HEADER_SIZE || ws > len) return;
        p = evbuffer_pullup(in, (ssize_t)ws);
        struct vrpn_msg m;
        if (vrpn_msg_parse(p, ws, &m, &err) < 0) {
            snprintf(what, sizeof what, "message: %s", err.msg);
            conn_bad(a, c, what);
            return;
        }
        if (!conn_message(a, c, &m)) return;
        evbuffer_drain(in, ws);
    }
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct xg_adapter *a = arg;
    struct vrpn_server *s = a->priv;
    struct conn *c = conn_of(s, bev);
    if (!c) return;
    if (what & BEV_EVENT_CONNECTED) {
        /* we called the client back (UDP+TCP mode): cookie now, our UDP socket for its
         * UDP_DESCRIPTION */
        int one = 1;
        setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->state = C_COOKIE;
        if (conn_open_udp(a, c) < 0)
            XG_WARN_PEER(&s->lim_session, a->name, "client %s: no UDP socket; reports stay on TCP",
                         c->peer);
        uint8_t ck[VRPN_COOKIE_SIZE];
        struct xg_writer w;
        xg_writer_init(&w, ck, sizeof ck);
        vrpn_cookie_encode(&w, 0, NULL);
        if (!vrpn_srv_conn_write(a, c, ck, w.len)) return;
        XG_DEBUG(a->name, "client %s: called back", c->peer);
        return;
    }
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))) return;
    if (c->state == C_CONNECTING) {
        XG_WARN_PEER(&s->lim_callback, a->name, "call-back to %s failed: %s", c->peer,
                     evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        s->callback_failures++;
        vrpn_srv_conn_free(s, c);
        return;
    }
    size_t left = evbuffer_get_length(bufferevent_get_input(bev));
    if (left && (what & BEV_EVENT_EOF)) {
        char msg[160];
        if (c->state == C_COOKIE)
            snprintf(msg, sizeof msg, "truncated cookie: %zu of %d bytes before EOF", left,
                     VRPN_COOKIE_SIZE);
        else if (left < VRPN_HEADER_SIZE)
            snprintf(msg, sizeof msg, "truncated header: %zu of %d bytes before EOF", left,
                     VRPN_HEADER_SIZE);
        else {
            const uint8_t *p = evbuffer_pullup(bufferevent_get_input(bev), VRPN_HEADER_SIZE);
            snprintf(msg, sizeof msg, "truncated message: %zu bytes before EOF, length %" PRIu32,
                     left, xg_load_be32(p));
        }
        conn_bad(a, c, msg);
        return;
    }
    XG_INFO_PEER(&s->lim_session, a->name, "client %s disconnected", c->peer);
    vrpn_srv_conn_free(s, c);
}

/* The handshake deadline passed: a call-back still connecting, or a client whose cookie has
 * not arrived (a peer trickling bytes cannot hold its slot longer than this). */
static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    struct xg_adapter *a = c->a;
    struct vrpn_server *s = a->priv;
    (void)fd;
    (void)what;
    if (c->state == C_STREAMING) return;
    if (c->state == C_CONNECTING) {
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

static struct conn *conn_new(struct xg_adapter *a, struct bufferevent *bev, const char *peer)
{
    struct vrpn_server *s = a->priv;
    struct conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->udp_fd = -1;
    c->a = a;
    c->bev = bev;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->next = s->conns;
    s->conns = c;
    s->n_conns++;
    struct timeval tmo = xg_ns_to_timeval(s->handshake_ms * XG_NS_PER_MS);
    c->deadline = evtimer_new(a->base, deadline_cb, c);
    if (!c->deadline || evtimer_add(c->deadline, &tmo) < 0 || conn_init_map(a, c) < 0) {
        c->bev = NULL;
        vrpn_srv_conn_free(s, c);
        return NULL;
    }
    bufferevent_setcb(bev, read_cb, NULL, event_cb, a);
    bufferevent_setwatermark(bev, EV_READ, 0, 2 * VRPN_MAX_MESSAGE);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
    return c;
}

void vrpn_srv_accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                        int salen, void *arg)
{
    struct xg_adapter *a = arg;
    struct vrpn_server *s = a->priv;
    (void)lis;
    (void)salen;
    char peer[64];
    xg_net_addr_str(sa, peer, sizeof peer);
    if (s->n_conns >= s->max_clients) {
        XG_WARN_PEER(&s->lim_refused, a->name,
                     "client %s refused: max_clients (%" PRId64 ") reached", peer, s->max_clients);
        s->refused++;
        evutil_closesocket(fd);
        return;
    }
    struct bufferevent *bev = bufferevent_socket_new(a->base, fd, BEV_OPT_CLOSE_ON_FREE);
    struct conn *c = bev ? conn_new(a, bev, peer) : NULL;
    if (!c) {
        if (bev)
            bufferevent_free(bev);
        else
            evutil_closesocket(fd);
        a->errors++;
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    s->accepted++;
    c->state = C_COOKIE;
    uint8_t ck[VRPN_COOKIE_SIZE];
    struct xg_writer w;
    xg_writer_init(&w, ck, sizeof ck);
    vrpn_cookie_encode(&w, 0, NULL);
    if (!vrpn_srv_conn_write(a, c, ck, w.len)) return;
    XG_DEBUG(a->name, "client %s connected over TCP", peer);
}

/* A UDP connection request "<host> <port>\0" (§6.3): call the client back over TCP. Numeric
 * hosts only (a name is never resolved: that would block the reactor); never the server itself;
 * one session (connecting or connected) per call-back address and port. */
void vrpn_srv_lob_read_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_adapter *a = arg;
    struct vrpn_server *s = a->priv;
    (void)what;
    for (int i = 0; i < 64; i++) {
        uint8_t b[VRPN_LOB_MAX + 64];
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fd, b, sizeof b, MSG_TRUNC, (struct sockaddr *)&from, &fl);
        if (n < 0) return;
        char peer[64];
        xg_net_addr_str((struct sockaddr *)&from, peer, sizeof peer);
        struct vrpn_lob lob;
        struct xg_error err = {0};
        if ((size_t)n > VRPN_LOB_MAX || vrpn_lob_decode(b, (size_t)n, &lob, &err) < 0) {
            if ((size_t)n > VRPN_LOB_MAX)
                xg_error_set(&err, -EPROTO, "datagram of %zd bytes, above %d", n, VRPN_LOB_MAX);
            s->lob_rejected++;
            XG_WARN_PEER(&s->lim_request, a->name, "connection request from %s: %s: ignored", peer,
                         err.msg);
            continue;
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
            continue;
        }
        xg_net_addr_str((struct sockaddr *)&to, target, sizeof target);
        if (vrpn_callback_is_self(&to, (struct sockaddr *)&s->bound_ss)) {
            s->lob_rejected++;
            s->lob_self++;
            XG_WARN_PEER(&s->lim_request, a->name,
                         "connection request from %s: call-back %s ('%s') is this server itself: "
                         "ignored",
                         peer, target, lob.host);
            continue;
        }
        bool dup = false; /* duplicate suppression: one session per call-back address */
        int64_t pending = 0;
        for (struct conn *c = s->conns; c && !dup; c = c->next) {
            dup = c->callback && c->cb_addr.sin_port == to.sin_port &&
                  c->cb_addr.sin_addr.s_addr == to.sin_addr.s_addr;
            pending += c->callback && c->state != C_STREAMING;
        }
        if (dup) {
            s->lob_duplicates++;
            continue;
        }
        /* spoofed requests may hold at most half the slots (until handshake_timeout_ms) */
        int64_t max_pending = s->max_clients > 1 ? s->max_clients / 2 : 1;
        if (s->n_conns >= s->max_clients || pending >= max_pending) {
            XG_WARN_PEER(
                &s->lim_refused, a->name,
                "connection request from %s (call back %s) refused: %s (%" PRId64 ") reached", peer,
                target, pending >= max_pending ? "pending call-backs" : "max_clients",
                pending >= max_pending ? max_pending : s->max_clients);
            s->refused++;
            continue;
        }
        struct bufferevent *bev = bufferevent_socket_new(a->base, -1, BEV_OPT_CLOSE_ON_FREE);
        struct conn *c = bev ? conn_new(a, bev, target) : NULL;
        if (!c) {
            if (bev) bufferevent_free(bev);
            a->errors++;
            continue;
        }
        c->callback = true;
        c->state = C_CONNECTING;
        c->cb_addr = to;
        s->callbacks++;
        XG_DEBUG(a->name, "connection request from %s: calling back %s", peer, target);
        if (bufferevent_socket_connect(bev, (struct sockaddr *)&to, (int)sizeof to) < 0) {
            XG_WARN_PEER(&s->lim_callback, a->name, "call-back to %s failed", target);
            s->callback_failures++;
            vrpn_srv_conn_free(s, c);
        }
    }
}
