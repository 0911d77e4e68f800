/* `vrpn-server` adapter: serves the entity table to VRPN clients as trackers (wire-rules.md §4–§8),
 * in TCP-only and UDP+TCP modes, byte-compatible with mainline VRPN 07.38's vrpn_server.
 *
 * Config keys: listen ("0.0.0.0:3883": TCP listen socket and UDP connection-request socket on the
 * same address and port), max_clients (64, both modes together), max_output_bytes (256 KiB: while
 * a client's unsent TCP output is above it, reports for it are skipped (counted per report) and
 * once it drains it gets the newest pose of each sensor it missed, once: never a pose it already
 * has; skipped reports superseded meanwhile are counted as coalesced; a client that stays above it
 * for slow_timeout_ms (2000), or whose output passes 2x the bound, is dropped and counted; so a
 * client costs at most 2x the bound plus one tick), handshake_timeout_ms (10000: a session must be
 * streaming this long after it was accepted or its call-back started, else it is closed and
 * counted: a pending call-back or a client trickling its cookie holds a slot no longer),
 * tracker_name (template, "{origin}"), trackers (list of {match: GLOB, tracker: TEMPLATE, sensor:
 * N}: the first rule whose glob matches the entity name decides the tracker and optionally a fixed
 * sensor number), send_velocity (false), send_all (false: each tick sends the sensors updated since
 * the last one; true: every sensor every tick), plus the sink keys rate_hz / include / exclude and
 * frame (default identity: the internal Y-up frame; Z-up clients want `frame: vrpn-zup`).
 * Templates: {origin} = the name of the entity's origin adapter, {kind} = the entity kind, {name} =
 * the whole entity name.
 *
 * Sensor numbers: per tracker, an entity name gets a number the first time it is seen: a rule's
 * fixed sensor; else, for an entity that carries its source's sensor number
 * (xg_entity.source_sensor, e.g. vrpn-client's "<D>/<s>"), that number, taking it from a departed
 * name if need be; else (or when a live entity holds it or a rule reserves it: one warning) the
 * lowest number not in use or reserved. Names that appear together (e.g. at start-up) are numbered
 * source-numbered ones first, then the rest, each in natural (numeric-aware) name order
 * (vrpn_sensor_map.h). The name keeps it while its entity lives and, once the entity expired or was
 * removed, while the name is among the DEPARTED_MAX (1024) most recently departed ones, so a source
 * that restarts and brings back the same names gets the same numbers; older departed names are
 * forgotten and their numbers given out again (vrpn_names.h), so per-name state is bounded by the
 * live entities + 1024 however many names come and go. A sensor whose entity is gone is not
 * reported.
 *
 * Per connection (§6): both sides send the cookie at once; after the client's cookie we send
 * [UDP_DESCRIPTION when we called the client back] + SENDER_DESCRIPTIONs ("VRPN Control", then
 * the trackers) + TYPE_DESCRIPTIONs (ids 0..17 exactly as the stock vrpn_server describes them for
 * a tracker, then the button and analog types), a Button States per tracker with buttons, then on
 * each tick (rate_hz) a Pos_Quat and a Velocity per updated sensor, predicted to the send time and
 * stamped with it (a new or recovering client first gets every sensor). Velocity carries the
 * linear velocity and the world-frame rotation increment exp(ω·dt) over dt = 0.1 s (shorter for
 * spins above π/2 per 0.1 s). Pos_Quat/Velocity/Analog go over UDP once the client's
 * UDP_DESCRIPTION has arrived (datagrams of at most 1472 bytes), otherwise over TCP. Buttons and
 * analogs of an entity (dials from vrpn-client at analogs[64 + d]) are served under its tracker's
 * name when no other live entity's are, else as a device named after the entity (extras_tracker();
 * Button Change per changed button, Button States at connect and before each pong).
 * Descriptions the client sends are mapped and names new to us are described back (echo, §6.2);
 * pings from a tracker name we serve get one pong (§7), others none. A client message that breaks
 * the rules (bad cookie, length < 24 or oversized, wrong body size, a type or sender id it never
 * described, a bad description or unknown system type, a truncated message at EOF) closes that
 * connection with one log line naming the peer, the field and the value. What clients send over
 * UDP is read and discarded (mainline clients send none).
 *
 * UDP connection requests (§6.3, vrpn_callback.h): the host must be a numeric IPv4 address (a name
 * is never resolved: a resolver call would block the reactor); a request naming the server's own
 * port on its listen address or any local address is refused (no self-calls); one session per
 * call-back address and port (spelling variants such as 127.1 compare equal once parsed);
 * call-backs not streaming yet hold at most half of max_clients. Every log line a peer can trigger
 * goes through a rate limiter per kind (core/log.h). */
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
#include "core/adapter.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/net.h"
#include "core/udp_batch.h"
#include "mappings/frame.h"

#define MAX_TRACKERS 1000
#define MAX_CTL_DEVICES 500 /* device names made for entities' controls (the rest: trackers) */
#define VEL_QUAT_DT 0.1     /* s: the interval of the Velocity message's rotation increment */
#define POS_QUAT_LEN 64
#define VELOCITY_LEN 72
#define REPORT_WIRE (VRPN_HEADER_SIZE + POS_QUAT_LEN + VRPN_HEADER_SIZE + VELOCITY_LEN)

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
enum {
    T_POS_QUAT = 4,
    T_VELOCITY = 5,
    T_SET_RATE = 13,
    T_TEXT = 15,
    T_PING = 16,
    T_PONG = 17,
    T_BUTTON_CHANGE = 18,
    T_BUTTON_STATES = 19,
    T_BUTTON_ADMIN = 20,
    T_ANALOG = 22
};
#define N_OUR_TYPES ((int)(sizeof our_types / sizeof our_types[0]))

struct rule {
    char *match;
    char *tracker;  /* template, NULL = tracker_name */
    int64_t sensor; /* -1 = automatic */
};

struct tracker {
    char name[VRPN_CNAME_MAX];
    struct vrpn_bitset used; /* sensor numbers in use or reserved */
    int extras_slot;         /* the slot whose buttons/analogs this tracker serves, -1 = none */
    int n_btn;               /* buttons known (states last sent) */
    uint8_t btn[VRPN_MAX_BUTTONS];
};

struct report {
    int tracker, sensor, slot; /* slot: the entity's name index (s->names) */
    uint8_t pq[POS_QUAT_LEN];
    uint8_t vel[VELOCITY_LEN];
};

struct xmsg {                /* a button or analog message of a tracker: body in reports.xb */
    int tracker, type, slot; /* slot: the entity's name index */
    size_t off, len;
};

struct reports {
    struct report *v;
    size_t n, cap;
    struct xmsg *x;
    size_t xn, xcap;
    uint8_t *xb;
    size_t xblen, xbcap;
};

enum conn_state { C_CONNECTING, C_COOKIE, C_STREAMING };

struct conn {
    struct xg_adapter *a;
    struct bufferevent *bev;
    struct event *deadline; /* the handshake (call-back connect + cookie) must end by then */
    char peer[64];
    enum conn_state state;
    bool callback; /* we connected back after a UDP connection request (UDP+TCP mode) */
    struct sockaddr_in cb_addr; /* the call-back target (callback connections) */
    struct vrpn_id_map map;
    int32_t *tsender; /* our sender id of each tracker on this connection */
    int n_tsender;
    uint32_t tcp_seq, udp_seq;
    int udp_fd;                     /* our UDP socket for this connection (-1 = none) */
    struct event *udp_ev;           /* reads (and discards) what the client sends to it */
    uint16_t udp_port;              /* its port (announced in callback mode) */
    char udp_host[64];              /* its address */
    struct sockaddr_storage udp_to; /* the client's announced UDP address */
    socklen_t udp_to_len;
    bool udp_ok; /* client's UDP_DESCRIPTION received: low-latency reports go over UDP */
    uint8_t dgram[VRPN_UDP_MAX];
    size_t dlen;
    bool need_full;             /* new client: every sensor on the next drain */
    struct vrpn_bitset pending; /* name slots skipped while above max_output_bytes */
    int n_pending;              /* bits set in pending */
    int64_t slow_since;         /* 0 = not above the bound */
    struct conn *next;
};

struct vrpn_server {
    char listen[256];
    int64_t max_clients, max_output, slow_timeout_ms, handshake_ms;
    bool send_velocity, send_all;
    char *tracker_name;
    struct rule *rules;
    size_t n_rules;
    struct evconnlistener *lis;
    int udp_fd;
    struct event *udp_ev;
    char bound[128];
    struct conn *conns;
    int n_conns;
    struct tracker *trackers;
    int n_trackers;
    int n_ctl_devices;                /* trackers made as device names for entities' controls */
    struct vrpn_names names;          /* entity name -> (tracker, sensor) */
    struct sockaddr_storage bound_ss; /* our TCP listen address (call-back self checks) */
    /* peer-triggered log lines, one limiter per kind (core/log.h) */
    struct xg_log_limit lim_bad, lim_refused, lim_request, lim_callback, lim_slow, lim_session,
        lim_conflict, lim_ctl, lim_no_ctl; /* sensor conflicts; controls served / not served */
    struct {
        uint32_t id;
        int slot;
    } * by_eslot; /* indexed by the table's entity slot */
    size_t n_by_eslot;
    bool members_dirty;
    const struct xg_entity **newv; /* entities to number (assign_new) */
    size_t n_new, cap_new;
    struct reports dirty, full;
    uint8_t *scratch;
    size_t scratch_cap;
    uint64_t accepted, refused, callbacks, callback_failures, lob_rejected, lob_duplicates,
        lob_self, lob_names, dropped_slow, bad_input, reports_tcp, reports_udp, reports_skipped,
        drains_skipped, reports_coalesced, pongs, bytes_out, unmapped;
    struct xg_udp_batch ubatch; /* one client's datagrams of a drain, one sendmmsg */
};

/* departed names whose sensor numbers are kept (a source that restarts gets its numbers back) */
#define DEPARTED_MAX 1024

/* ---- helpers ---- */

static struct vrpn_header now_header(int64_t mono_ns)
{
    struct vrpn_header h = {0};
    int64_t w = xg_clock_mono_to_wall_ns(mono_ns);
    vrpn_header_set_wall_ns(&h, w > 0 ? w : 0);
    return h;
}

/* ---- connections ---- */

static size_t out_len(const struct conn *c)
{
    return c->bev ? evbuffer_get_length(bufferevent_get_output(c->bev)) : 0;
}

static void conn_free(struct vrpn_server *s, struct conn *c)
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
    conn_free(s, c);
}

/* Queue bytes on the TCP connection; drops the client when its unsent output is already past 2x
 * max_output_bytes (so a client costs at most that plus one tick of reports). Returns false if
 * the connection is gone. */
static bool conn_write(struct xg_adapter *a, struct conn *c, const void *p, size_t n)
{
    struct vrpn_server *s = a->priv;
    if (out_len(c) > (size_t)s->max_output * 2) {
        XG_WARN_PEER(&s->lim_slow, a->name,
                     "client %s: %zu bytes unsent (above 2 x max_output_bytes %" PRId64
                     "): dropping the slow client",
                     c->peer, out_len(c), s->max_output);
        s->dropped_slow++;
        a->drops++;
        conn_free(s, c);
        return false;
    }
    if (bufferevent_write(c->bev, p, n) < 0) {
        a->errors++;
        conn_free(s, c);
        return false;
    }
    s->bytes_out += n;
    return true;
}

/* Register tracker t's name on connection c (cached); returns our sender id or -1. If `describe`
 * and the name is new on this connection, a SENDER_DESCRIPTION is appended to w. */
static int conn_tracker_sender(struct xg_adapter *a, struct conn *c, int t, struct xg_writer *w,
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
        if (conn_tracker_sender(a, c, t, NULL, NULL) < 0) return -ENOMEM;
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
    int sender = conn_tracker_sender(a, c, t, NULL, NULL);
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
        conn_free(s, c);
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
        conn_free(s, c);
        return false;
    }
    c->state = C_STREAMING;
    c->need_full = true;
    event_del(c->deadline);
    bool ok = conn_write(a, c, buf, w.len);
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
                    return conn_write(a, c, b, w.len);
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
            if (conn_tracker_sender(a, c, t, NULL, NULL) != ls) continue;
            uint8_t b[2 * VRPN_HEADER_SIZE + 8 + 4 * VRPN_MAX_BUTTONS];
            struct xg_writer w;
            xg_writer_init(&w, b, sizeof b);
            struct vrpn_header h = now_header(xg_clock_mono_ns());
            encode_states(a, c, t, &w, h); /* button servers send States before the pong */
            h.sender = ls;
            h.type = T_PONG;
            vrpn_encode_message(&w, &h, &c->tcp_seq, NULL, 0, NULL);
            s->pongs++;
            return conn_write(a, c, b, w.len);
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
        if (!conn_write(a, c, ck, w.len)) return;
        XG_DEBUG(a->name, "client %s: called back", c->peer);
        return;
    }
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))) return;
    if (c->state == C_CONNECTING) {
        XG_WARN_PEER(&s->lim_callback, a->name, "call-back to %s failed: %s", c->peer,
                     evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        s->callback_failures++;
        conn_free(s, c);
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
    conn_free(s, c);
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
    conn_free(s, c);
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
        conn_free(s, c);
        return NULL;
    }
    bufferevent_setcb(bev, read_cb, NULL, event_cb, a);
    bufferevent_setwatermark(bev, EV_READ, 0, 2 * VRPN_MAX_MESSAGE);
    bufferevent_enable(bev, EV_READ | EV_WRITE);
    return c;
}

static void accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
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
    if (!conn_write(a, c, ck, w.len)) return;
    XG_DEBUG(a->name, "client %s connected over TCP", peer);
}

/* A UDP connection request "<host> <port>\0" (§6.3): call the client back over TCP. Numeric
 * hosts only (a name is never resolved: that would block the reactor); never the server itself;
 * one session (connecting or connected) per call-back address and port. */
static void lob_read_cb(evutil_socket_t fd, short what, void *arg)
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
            conn_free(s, c);
        }
    }
}

/* ---- trackers and sensors ---- */

static int tracker_find_or_add(struct xg_adapter *a, const char *name)
{
    struct vrpn_server *s = a->priv;
    for (int t = 0; t < s->n_trackers; t++)
        if (!strcmp(s->trackers[t].name, name)) return t;
    if (s->n_trackers >= MAX_TRACKERS || !name[0] || strlen(name) >= VRPN_CNAME_MAX) return -EINVAL;
    struct tracker *nt = realloc(s->trackers, (size_t)(s->n_trackers + 1) * sizeof *nt);
    if (!nt) return -ENOMEM;
    s->trackers = nt;
    int t = s->n_trackers++;
    memset(&nt[t], 0, sizeof nt[t]);
    nt[t].extras_slot = -1;
    memcpy(nt[t].name, name, strlen(name) + 1); /* checked: < VRPN_CNAME_MAX */
    /* reserve the fixed sensors of rules naming this tracker literally */
    for (size_t i = 0; i < s->n_rules; i++)
        if (s->rules[i].sensor >= 0 && s->rules[i].tracker && !strcmp(s->rules[i].tracker, name))
            vrpn_bitset_set(&nt[t].used, s->rules[i].sensor);
    /* describe it to every streaming connection (§6.2: descriptions may come late) */
    struct vrpn_header h = now_header(xg_clock_mono_ns());
    struct conn *next;
    for (struct conn *c = s->conns; c; c = next) {
        next = c->next;
        uint8_t b[VRPN_HEADER_SIZE + 4 + VRPN_CNAME_MAX + 8];
        struct xg_writer w;
        xg_writer_init(&w, b, sizeof b);
        conn_tracker_sender(a, c, t, c->state == C_STREAMING ? &w : NULL, &h);
        if (w.len) conn_write(a, c, b, w.len);
    }
    XG_INFO(a->name, "serving tracker '%s'", name);
    return t;
}

static int eslot_set(struct vrpn_server *s, const struct xg_entity *e, int slot)
{
    if (e->slot >= s->n_by_eslot) {
        size_t n = s->n_by_eslot ? s->n_by_eslot : 64;
        while (n <= e->slot)
            n *= 2;
        void *v = realloc(s->by_eslot, n * sizeof *s->by_eslot);
        if (!v) return -ENOMEM;
        s->by_eslot = v;
        memset(&s->by_eslot[s->n_by_eslot], 0, (n - s->n_by_eslot) * sizeof *s->by_eslot);
        s->n_by_eslot = n;
    }
    s->by_eslot[e->slot].id = e->id;
    s->by_eslot[e->slot].slot = slot;
    return 0;
}

/* A departed name was forgotten (vrpn_names_forget_fn): its sensor number is free again (unless
 * a rule reserves it), and its tracker no longer serves that name's buttons/analogs. */
static void name_forgotten(void *user, int i, int t, int sensor)
{
    struct vrpn_server *s = user;
    struct tracker *tr = &s->trackers[t];
    bool reserved = false;
    for (size_t k = 0; k < s->n_rules && !reserved; k++)
        reserved = s->rules[k].sensor == sensor && s->rules[k].tracker &&
                   !strcmp(s->rules[k].tracker, tr->name);
    if (!reserved) vrpn_bitset_clear(&tr->used, sensor);
    for (int k = 0; k < s->n_trackers; k++) /* its tracker, or the device named after it */
        if (s->trackers[k].extras_slot == i) s->trackers[k].extras_slot = -1;
}

/* The slot of entity e, creating it (tracker + sensor) if its name is new. -1 if unmappable. */
static int slot_of(struct xg_adapter *a, const struct xg_entity *e)
{
    struct vrpn_server *s = a->priv;
    if (e->slot < s->n_by_eslot && s->by_eslot[e->slot].id == e->id)
        return s->by_eslot[e->slot].slot;
    int i = vrpn_names_find(&s->names, e->name);
    if (i < 0) {
        const struct rule *r = NULL;
        for (size_t k = 0; k < s->n_rules && !r; k++)
            if (fnmatch(s->rules[k].match, e->name, 0) == 0) r = &s->rules[k];
        char tname[256];
        vrpn_sensor_map_expand(r && r->tracker ? r->tracker : s->tracker_name,
                               xg_table_adapter_name(a->table, e->origin), e, tname, sizeof tname);
        int t = tracker_find_or_add(a, tname);
        if (t < 0) {
            if (!s->unmapped++)
                XG_WARN(a->name,
                        "entity %s: tracker name '%s' is empty, too long (max %d) or "
                        "one too many (max %d): not served",
                        e->name, tname, VRPN_CNAME_MAX - 1, MAX_TRACKERS);
            return -1;
        }
        struct tracker *tr = &s->trackers[t];
        bool pinned = r && r->sensor >= 0;
        int64_t sensor = -1, want = pinned ? r->sensor : e->source_sensor;
        int holder = -1;
        if (e->controls_only && !pinned) /* no pose at the source: controls, no sensor */
            goto add;
        if (want >= 0) { /* a rule's fixed number, else the source's own (a VRPN relay) */
            holder = vrpn_names_holder(&s->names, t, (int)want);
            if (holder >= 0 && s->names.slots[holder].departed && !pinned) {
                /* live entities win over numbers remembered for departed names */
                vrpn_names_forget(&s->names, holder, name_forgotten, s);
                holder = -1;
            }
            if (holder < 0 && (pinned || !vrpn_bitset_get(&tr->used, want))) sensor = want;
        }
        if (sensor < 0)
            for (sensor = 0; vrpn_bitset_get(&tr->used, sensor); sensor++) {}
        if (want >= 0 && sensor != want)
            XG_WARN_PEER(
                &s->lim_conflict, a->name,
                "entity %s: sensor %" PRId64 " of tracker '%s' (%s) is %s%s%s: serving it "
                "as sensor %" PRId64,
                e->name, want, tname, pinned ? "its trackers: rule" : "its source's number",
                holder >= 0 ? "held by '" : "reserved by a trackers: rule",
                holder >= 0 ? s->names.slots[holder].name : "", holder >= 0 ? "'" : "", sensor);
        if (sensor > INT32_MAX || vrpn_bitset_set(&tr->used, sensor) < 0) return -1;
    add:
        i = vrpn_names_add(&s->names, e->name, t, (int)sensor, e->id);
        if (i < 0) {
            vrpn_bitset_clear(&tr->used, sensor);
            return -1;
        }
        XG_DEBUG(a->name, "entity %s -> tracker '%s' sensor %d", e->name, tname, (int)sensor);
    }
    vrpn_names_live(&s->names, i, e->id); /* a departed name that is back keeps its number */
    eslot_set(s, e, i);
    return i;
}

static int collect_new(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct xg_adapter *a = user;
    struct vrpn_server *s = a->priv;
    (void)pose;
    if (e->slot < s->n_by_eslot && s->by_eslot[e->slot].id == e->id) return 0;
    if (s->n_new == s->cap_new) {
        size_t nc = s->cap_new ? s->cap_new * 2 : 64;
        const struct xg_entity **v = realloc(s->newv, nc * sizeof *v);
        if (!v) return 1;
        s->newv = v;
        s->cap_new = nc;
    }
    s->newv[s->n_new++] = e;
    return 0;
}

/* Number the entities that appeared since the last time: those carrying their source's sensor
 * number first, then the others, each group in natural name order (vrpn_sensor_map_order). */
static void assign_new(struct xg_adapter *a, int64_t now)
{
    struct vrpn_server *s = a->priv;
    s->members_dirty = false;
    s->n_new = 0;
    xg_table_foreach(a->table, a->index, now, collect_new, a);
    if (!s->n_new) return;
    qsort(s->newv, s->n_new, sizeof *s->newv, vrpn_sensor_map_order);
    for (size_t k = 0; k < s->n_new; k++)
        slot_of(a, s->newv[k]); /* no entity is removed meanwhile: the pointers hold */
    s->n_new = 0;
}

/* ---- egress ---- */

static int x_add(struct reports *r, int tracker, int slot, int type, const struct vrpn_body *b)
{
    size_t need = 8 + 8 * VRPN_MAX_ANALOG + 4 * VRPN_MAX_BUTTONS;
    if (r->xbcap - r->xblen < need) {
        size_t nc = (r->xbcap ? r->xbcap * 2 : 8192) + need;
        uint8_t *nb = realloc(r->xb, nc);
        if (!nb) return -ENOMEM;
        r->xb = nb;
        r->xbcap = nc;
    }
    if (r->xn == r->xcap) {
        size_t nc = r->xcap ? r->xcap * 2 : 32;
        struct xmsg *nx = realloc(r->x, nc * sizeof *nx);
        if (!nx) return -ENOMEM;
        r->x = nx;
        r->xcap = nc;
    }
    struct xg_writer w;
    xg_writer_init(&w, r->xb + r->xblen, r->xbcap - r->xblen);
    if (vrpn_body_encode(&w, b, NULL) < 0) return -EINVAL;
    r->x[r->xn++] = (struct xmsg){
        .tracker = tracker, .type = type, .slot = slot, .off = r->xblen, .len = w.len};
    r->xblen += w.len;
    return 0;
}

static void states_body(struct vrpn_body *b, int n, const uint8_t *st)
{
    b->kind = VRPN_BODY_BUTTON_STATES;
    b->u.states.count = n;
    for (int k = 0; k < n; k++)
        b->u.states.states[k] = st[k] ? 1 : 0;
}

/* The tracker (VRPN device name) that serves the buttons and analogs of entity e (name i): its
 * own tracker's name unless another live entity's controls are served there, else a device named
 * after the entity (described to clients like a tracker). Decided once per name and kept while the
 * name is remembered. -1 when there is none (one warning says why). */
static int extras_tracker(struct xg_adapter *a, const struct xg_entity *e, int i)
{
    struct vrpn_server *s = a->priv;
    struct vrpn_name *nm = &s->names.slots[i];
    if (nm->ctl >= 0 && s->trackers[nm->ctl].extras_slot == i) return nm->ctl;
    int t = nm->tracker, cur = s->trackers[t].extras_slot;
    if (cur >= 0 && cur != i && s->names.slots[cur].id != 0) {
        int own = -1, n = s->n_trackers;
        for (int k = 0; k < n && own < 0; k++)
            if (!strcmp(s->trackers[k].name, e->name)) own = k;
        if (own < 0 && s->n_ctl_devices < MAX_CTL_DEVICES) {
            own = tracker_find_or_add(a, e->name); /* may move s->trackers, not s->names */
            s->n_ctl_devices += own >= 0;
        }
        int other = own >= 0 ? s->trackers[own].extras_slot : -1;
        if (own < 0 || (other >= 0 && other != i && s->names.slots[other].id != 0)) {
            if (nm->ctl != -2)
                XG_WARN_PEER(&s->lim_no_ctl, a->name,
                             "entity %s: buttons/analogs not served: tracker '%s' serves those of "
                             "'%s', and a VRPN device named '%s' %s",
                             e->name, s->trackers[t].name, s->names.slots[cur].name, e->name,
                             own >= 0 ? "serves another entity's"
                             : s->n_ctl_devices >= MAX_CTL_DEVICES
                                 ? "would be one too many (at most 500 such devices)"
                                 : "is not possible (1..99 bytes, at most 1000 names)");
            nm->ctl = -2;
            return -1;
        }
        t = own;
    }
    if (nm->ctl != t)
        XG_INFO_PEER(&s->lim_ctl, a->name, "entity %s: buttons/analogs served as VRPN device '%s'",
                     e->name, s->trackers[t].name);
    s->trackers[t].extras_slot = i;
    nm->ctl = t;
    return t;
}

/* Buttons and analogs of entity e (name i), served under the device name extras_tracker() picks:
 * Button Change for each button that changed (dirty pass), Button States (full refresh), Analog
 * Channel (both). */
static void add_extras(struct reports *r, struct xg_adapter *a, const struct xg_entity *e, int i,
                       bool full)
{
    struct vrpn_server *s = a->priv;
    if (e->n_buttons <= 0 && e->n_analogs <= 0) return;
    int t = extras_tracker(a, e, i);
    if (t < 0) return;
    struct tracker *tr = &s->trackers[t];
    static struct vrpn_body b; /* ~3 KiB; single-threaded reactor */
    int nb = e->buttons ? (e->n_buttons < VRPN_MAX_BUTTONS ? e->n_buttons : VRPN_MAX_BUTTONS) : 0;
    if (nb > 0 && full) {
        states_body(&b, nb, e->buttons);
        x_add(r, t, i, T_BUTTON_STATES, &b);
    } else if (nb > 0) {
        for (int k = 0; k < nb; k++) {
            uint8_t st = e->buttons[k] ? 1 : 0;
            if (k < tr->n_btn && tr->btn[k] == st) continue;
            tr->btn[k] = st;
            b.kind = VRPN_BODY_BUTTON_CHANGE;
            b.u.button.button = k;
            b.u.button.state = st;
            x_add(r, t, i, T_BUTTON_CHANGE, &b);
        }
        if (nb > tr->n_btn) tr->n_btn = nb;
    }
    int na = e->analogs ? (e->n_analogs < VRPN_MAX_ANALOG ? e->n_analogs : VRPN_MAX_ANALOG) : 0;
    if (na > 0) {
        b.kind = VRPN_BODY_ANALOG;
        b.u.analog.count = na;
        for (int k = 0; k < na; k++)
            b.u.analog.channels[k] = e->analogs[k];
        x_add(r, t, i, T_ANALOG, &b);
    }
}

static int add_report(struct reports *r, struct xg_adapter *a, const struct xg_entity *e,
                      const struct xg_pose *pose_in)
{
    struct vrpn_server *s = a->priv;
    int i = slot_of(a, e);
    if (i < 0) return 0;
    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 64;
        struct report *v = realloc(r->v, nc * sizeof *v);
        if (!v) return 1;
        r->v = v;
        r->cap = nc;
    }
    struct report *rep = &r->v[r->n];
    rep->tracker = s->names.slots[i].tracker;
    rep->sensor = s->names.slots[i].sensor;
    rep->slot = i;
    if (rep->sensor < 0) { /* controls only (no pose at the source): no tracker report */
        add_extras(r, a, e, i, r == &s->full);
        return 0;
    }
    struct xg_pose p = *pose_in;
    xg_frame_pose_out(a->frame, &p);
    struct vrpn_body b = {.kind = VRPN_BODY_POS_QUAT};
    b.u.pos_quat.sensor = rep->sensor;
    b.u.pos_quat.pos = p.position;
    b.u.pos_quat.quat = xg_quat_normalize(p.orientation);
    struct xg_writer w;
    xg_writer_init(&w, rep->pq, sizeof rep->pq);
    if (vrpn_body_encode(&w, &b, NULL) < 0 || w.len != POS_QUAT_LEN) return 0;
    /* Velocity: linear velocity and the rotation increment exp(ω·dt) over dt (world frame:
     * q(t+dt) = inc ⊗ q(t)); dt = 0.1 s, shortened so that the increment stays below π/2 */
    double wn = xg_vec3_norm(p.angular_velocity);
    double dt = VEL_QUAT_DT;
    if (wn * dt > M_PI / 2) dt = (M_PI / 2) / wn;
    b.kind = VRPN_BODY_VELOCITY;
    b.u.rate.sensor = rep->sensor;
    b.u.rate.vec = p.velocity;
    b.u.rate.quat = xg_quat_exp(xg_vec3_scale(p.angular_velocity, dt));
    b.u.rate.quat_dt = dt;
    xg_writer_init(&w, rep->vel, sizeof rep->vel);
    if (vrpn_body_encode(&w, &b, NULL) < 0 || w.len != VELOCITY_LEN) return 0;
    r->n++;
    a->samples_out++;
    add_extras(r, a, e, i, r == &s->full);
    return 0;
}

static int visit_dirty(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct xg_adapter *a = user;
    struct vrpn_server *s = a->priv;
    return add_report(&s->dirty, a, e, pose);
}

static int visit_none(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    (void)user;
    (void)e;
    (void)pose;
    return 0;
}

static int visit_full(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct xg_adapter *a = user;
    struct vrpn_server *s = a->priv;
    return add_report(&s->full, a, e, pose);
}

/* Hand a client's queued bytes to the kernel now (one write per client per drain) instead of on
 * the next loop pass, when libevent would first poll the socket for writability: this drain's
 * output leaves before the next sink runs. What the socket does not take stays queued in the
 * bufferevent, which writes it when the socket is writable. Plain socket bufferevents only. */
static void tcp_flush_now(struct bufferevent *bev)
{
    evutil_socket_t fd = bufferevent_getfd(bev);
    struct evbuffer *out = bufferevent_get_output(bev);
    if (fd >= 0 && evbuffer_get_length(out)) (void)evbuffer_write(out, fd);
}

/* Close the client's open datagram: it joins this drain's batch (sent by udp_send). */
static void udp_flush(struct xg_adapter *a, struct conn *c)
{
    struct vrpn_server *s = a->priv;
    if (!c->dlen) return;
    xg_udp_batch_add(&s->ubatch, c->udp_fd, (struct sockaddr *)&c->udp_to, c->udp_to_len, c->dgram,
                     c->dlen, 0);
    c->dlen = 0;
}

/* Hand the client's datagrams of this drain to the kernel: one sendmmsg per 16. */
static void udp_send(struct xg_adapter *a, struct conn *c)
{
    struct vrpn_server *s = a->priv;
    udp_flush(a, c);
    xg_udp_batch_send(&s->ubatch);
}

/* Send reports to one client (only those of the name slots in `only`, when not NULL). Returns
 * false if it was dropped. */
static bool conn_send(struct xg_adapter *a, struct conn *c, const struct reports *r,
                      const struct vrpn_bitset *only, int64_t now)
{
    struct vrpn_server *s = a->priv;
    struct vrpn_header h = now_header(now);
    size_t need = r->n * REPORT_WIRE + r->xn * (VRPN_HEADER_SIZE + 8) + r->xblen;
    if (s->scratch_cap < need) {
        uint8_t *nb = realloc(s->scratch, need);
        if (!nb) return true;
        s->scratch = nb;
        s->scratch_cap = need;
    }
    struct xg_writer w;
    xg_writer_init(&w, s->scratch, s->scratch_cap);
    for (size_t k = 0; k < r->n; k++) {
        const struct report *rep = &r->v[k];
        if (only && !vrpn_bitset_get(only, rep->slot)) continue;
        int sender = conn_tracker_sender(a, c, rep->tracker, NULL, NULL);
        if (sender < 0) continue;
        h.sender = sender;
        for (int m = 0; m < (s->send_velocity ? 2 : 1); m++) {
            h.type = m ? T_VELOCITY : T_POS_QUAT;
            const uint8_t *body = m ? rep->vel : rep->pq;
            size_t bl = m ? VELOCITY_LEN : POS_QUAT_LEN;
            if (c->udp_ok) {
                if (c->dlen + VRPN_HEADER_SIZE + bl > sizeof c->dgram) udp_flush(a, c);
                struct xg_writer dw;
                xg_writer_init(&dw, c->dgram + c->dlen, sizeof c->dgram - c->dlen);
                if (vrpn_encode_message(&dw, &h, &c->udp_seq, body, bl, NULL) == 0)
                    c->dlen += dw.len;
                s->reports_udp++;
            } else {
                vrpn_encode_message(&w, &h, &c->tcp_seq, body, bl, NULL);
                s->reports_tcp++;
            }
        }
    }
    for (size_t k = 0; k < r->xn; k++) {
        const struct xmsg *x = &r->x[k];
        if (only && !vrpn_bitset_get(only, x->slot)) continue;
        int sender = conn_tracker_sender(a, c, x->tracker, NULL, NULL);
        if (sender < 0) continue;
        h.sender = sender;
        h.type = x->type;
        if (c->udp_ok && x->type == T_ANALOG) { /* low latency (§6.4) */
            if (c->dlen + VRPN_HEADER_SIZE + x->len + 8 > sizeof c->dgram) udp_flush(a, c);
            struct xg_writer dw;
            xg_writer_init(&dw, c->dgram + c->dlen, sizeof c->dgram - c->dlen);
            if (vrpn_encode_message(&dw, &h, &c->udp_seq, r->xb + x->off, x->len, NULL) == 0)
                c->dlen += dw.len;
        } else
            vrpn_encode_message(&w, &h, &c->tcp_seq, r->xb + x->off, x->len, NULL);
    }
    if (c->udp_ok) udp_send(a, c);
    if (w.len) {
        if (!conn_write(a, c, s->scratch, w.len)) return false;
        tcp_flush_now(c->bev);
    }
    return true;
}

/* A drain skipped for client c (above max_output_bytes): its reports are counted; each one's name
 * slot is remembered so that the client resumes with the newest state of exactly those sensors
 * (never a pose it already has); a report whose sensor was already pending is coalesced. */
static void conn_skip(struct vrpn_server *s, struct conn *c, const struct reports *r)
{
    s->drains_skipped++;
    s->reports_skipped += r->n;
    if (c->need_full) { /* its first refresh is still due: it gets every sensor anyway */
        s->reports_coalesced += r->n;
        return;
    }
    for (size_t k = 0; k < r->n; k++)
        if (vrpn_bitset_get(&c->pending, r->v[k].slot))
            s->reports_coalesced++;
        else if (vrpn_bitset_set(&c->pending, r->v[k].slot) == 0)
            c->n_pending++;
        else
            c->need_full = true;       /* out of memory: fall back to a full refresh */
    for (size_t k = 0; k < r->xn; k++) /* buttons/analogs: the newest states follow */
        if (!vrpn_bitset_get(&c->pending, r->x[k].slot) &&
            vrpn_bitset_set(&c->pending, r->x[k].slot) == 0)
            c->n_pending++;
}

/* Client c is below the bound again after skipped drains: this drain's sensors join the pending
 * ones (a skipped report superseded by this drain's is coalesced), then c gets the newest state of
 * every pending sensor, predicted to now, once. */
static void conn_resume(struct xg_adapter *a, struct conn *c, const struct reports *dirty,
                        const struct reports *full, int64_t now)
{
    struct vrpn_server *s = a->priv;
    for (size_t k = 0; k < dirty->n; k++)
        if (vrpn_bitset_get(&c->pending, dirty->v[k].slot))
            s->reports_coalesced++;
        else
            (void)vrpn_bitset_set(&c->pending, dirty->v[k].slot);
    for (size_t k = 0; k < dirty->xn; k++)
        (void)vrpn_bitset_set(&c->pending, dirty->x[k].slot);
    struct vrpn_bitset only = c->pending;
    c->pending = (struct vrpn_bitset){0};
    c->n_pending = 0;
    conn_send(a, c, full, &only, now); /* may free c */
    free(only.b);
}

static void server_drain(struct xg_adapter *a)
{
    struct vrpn_server *s = a->priv;
    int64_t now = xg_clock_mono_ns();
    if (s->members_dirty) assign_new(a, now);
    s->dirty.n = s->dirty.xn = s->dirty.xblen = 0;
    s->full.n = s->full.xn = s->full.xblen = 0;
    if (s->send_all) { /* every sensor every tick, predicted to now */
        xg_table_drain(a->table, a->index, now, visit_none, a);
        xg_table_foreach(a->table, a->index, now, visit_dirty, a);
    } else
        xg_table_drain(a->table, a->index, now, visit_dirty, a);
    bool full_built = false;
    struct conn *next;
    for (struct conn *c = s->conns; c; c = next) {
        next = c->next;
        if (c->state != C_STREAMING) continue;
        if (!c->udp_ok && out_len(c) > (size_t)s->max_output) {
            /* slow TCP client: skip (coalesce), resume with the newest state once it drains */
            if (!c->slow_since) c->slow_since = now;
            conn_skip(s, c, &s->dirty);
            if (now - c->slow_since > s->slow_timeout_ms * XG_NS_PER_MS) {
                XG_WARN_PEER(&s->lim_slow, a->name,
                             "client %s: %zu bytes unsent for more than %" PRId64
                             " ms (max_output_bytes %" PRId64 "): dropping the slow client",
                             c->peer, out_len(c), s->slow_timeout_ms, s->max_output);
                s->dropped_slow++;
                a->drops++;
                conn_free(s, c);
            }
            continue;
        }
        c->slow_since = 0;
        if ((c->need_full || c->n_pending) && !full_built) {
            xg_table_foreach(a->table, a->index, now, visit_full, a);
            full_built = true;
        }
        if (c->need_full) {
            c->need_full = false;
            c->n_pending = 0;
            if (c->pending.b) memset(c->pending.b, 0, c->pending.bits / 8);
            if (s->full.n || s->full.xn) conn_send(a, c, &s->full, NULL, now);
        } else if (c->n_pending)
            conn_resume(a, c, &s->dirty, &s->full, now);
        else if (s->dirty.n || s->dirty.xn)
            conn_send(a, c, &s->dirty, NULL, now);
    }
}

static void server_entity_event(struct xg_adapter *a, const struct xg_entity *e, bool added)
{
    struct vrpn_server *s = a->priv;
    if (added && (e->sink_mask & (UINT64_C(1) << a->index))) s->members_dirty = true;
    if (!added) {
        if (e->slot < s->n_by_eslot && s->by_eslot[e->slot].id == e->id) {
            vrpn_names_depart(&s->names, s->by_eslot[e->slot].slot, name_forgotten, s);
            s->by_eslot[e->slot].id = 0;
        }
    }
}

/* ---- ops ---- */

static int parse_rules(struct vrpn_server *s, const struct xg_conf *node, struct xg_error *err)
{
    if (!node) return 0;
    int rc = xg_conf_expect(node, XG_CONF_SEQ, "trackers", err);
    if (rc) return rc;
    s->rules = calloc(node->n_items + 1, sizeof *s->rules);
    if (!s->rules) return -ENOMEM;
    for (size_t i = 0; i < node->n_items; i++) {
        const struct xg_conf *it = node->items[i];
        if ((rc = xg_conf_expect(it, XG_CONF_MAP, "trackers item", err))) return rc;
        const char *match, *tracker;
        struct rule *r = &s->rules[s->n_rules++];
        r->sensor = -1;
        if ((rc = xg_conf_string(it, "match", NULL, &match, err)) ||
            (rc = xg_conf_string(it, "tracker", NULL, &tracker, err)) ||
            (rc = xg_conf_int(it, "sensor", -1, 0, INT32_MAX, &r->sensor, err)))
            return rc;
        if (!match || !match[0])
            return xg_conf_error(err, it, -EINVAL, "trackers: every rule needs 'match: GLOB'");
        if (tracker && (!tracker[0] || strlen(tracker) >= VRPN_CNAME_MAX))
            return xg_conf_error(err, xg_conf_get(it, "tracker"), -EINVAL,
                                 "trackers: tracker '%s' must be 1..%d characters", tracker,
                                 VRPN_CNAME_MAX - 1);
        r->match = strdup(match);
        r->tracker = tracker ? strdup(tracker) : NULL;
        if (!r->match || (tracker && !r->tracker)) return -ENOMEM;
    }
    return 0;
}

static int server_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct vrpn_server *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    a->priv = s;
    s->udp_fd = -1;
    s->members_dirty = true;
    if (vrpn_names_init(&s->names, DEPARTED_MAX) < 0) return -ENOMEM;
    if (xg_udp_batch_init(&s->ubatch, VRPN_UDP_MAX) < 0) return -ENOMEM;
    const char *listen, *tname;
    int rc;
    if ((rc = xg_conf_string(conf, "listen", "0.0.0.0:3883", &listen, err)) ||
        (rc = xg_conf_int(conf, "max_clients", 64, 1, 4096, &s->max_clients, err)) ||
        (rc = xg_conf_int(conf, "max_output_bytes", 256 * 1024, 4096, INT64_C(1) << 30,
                          &s->max_output, err)) ||
        (rc = xg_conf_int(conf, "slow_timeout_ms", 2000, 0, 3600000, &s->slow_timeout_ms, err)) ||
        (rc = xg_conf_int(conf, "handshake_timeout_ms", 10000, 100, 600000, &s->handshake_ms,
                          err)) ||
        (rc = xg_conf_string(conf, "tracker_name", "{origin}", &tname, err)) ||
        (rc = xg_conf_bool(conf, "send_velocity", false, &s->send_velocity, err)) ||
        (rc = xg_conf_bool(conf, "send_all", false, &s->send_all, err)) ||
        (rc = parse_rules(s, xg_conf_get(conf, "trackers"), err)))
        return rc;
    char host[200];
    int port = -1;
    if (strlen(listen) >= sizeof s->listen ||
        xg_net_split_hostport(listen, host, sizeof host, &port, 3883) < 0 || port < 0 ||
        port > 65535)
        return xg_conf_error(err, xg_conf_get(conf, "listen"), -EINVAL,
                             "listen: '%s' is not host:port", listen);
    if (!tname[0] || strlen(tname) >= VRPN_CNAME_MAX)
        return xg_conf_error(err, xg_conf_get(conf, "tracker_name"), -EINVAL,
                             "tracker_name: '%s' must be 1..%d characters", tname,
                             VRPN_CNAME_MAX - 1);
    snprintf(s->listen, sizeof s->listen, "%s", listen);
    s->tracker_name = strdup(tname);
    if (!s->tracker_name) return -ENOMEM;
    return 0;
}

static int server_start(struct xg_adapter *a)
{
    struct vrpn_server *s = a->priv;
    struct sockaddr_storage ss;
    socklen_t len;
    struct xg_error err = {0};
    int rc = xg_net_parse_addr(s->listen, "0.0.0.0", 3883, &ss, &len, &err);
    if (rc < 0) {
        XG_ERR(a->name, "listen: %s", err.msg);
        return rc;
    }
    bool any_port = xg_net_addr_port((struct sockaddr *)&ss) == 0;
    for (int attempt = 0; attempt < (any_port ? 20 : 1); attempt++) {
        if (any_port) ((struct sockaddr_in *)&ss)->sin_port = 0; /* same offset for v6 */
        s->lis = xg_net_listener_new_bind(a->base, accept_cb, a,
                                          LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
                                              LEV_OPT_CLOSE_ON_EXEC,
                                          64, (struct sockaddr *)&ss, (int)len, a->name);
        if (!s->lis) {
            int e = EVUTIL_SOCKET_ERROR();
            XG_ERR(a->name, "cannot listen on %s (TCP): %s", s->listen,
                   evutil_socket_error_to_string(e));
            return e > 0 ? -e : -EADDRINUSE;
        }
        struct sockaddr_storage b;
        socklen_t bl = sizeof b;
        getsockname(evconnlistener_get_fd(s->lis), (struct sockaddr *)&b, &bl);
        s->udp_fd = xg_net_udp_bind((struct sockaddr *)&b, bl, NULL, &err);
        if (s->udp_fd >= 0) {
            xg_net_addr_str((struct sockaddr *)&b, s->bound, sizeof s->bound);
            memcpy(&s->bound_ss, &b, bl < sizeof b ? bl : sizeof b);
            break;
        }
        xg_net_listener_free(s->lis);
        s->lis = NULL;
    }
    if (s->udp_fd < 0) {
        XG_ERR(a->name, "cannot listen on %s (UDP): %s", s->listen, err.msg);
        return -EADDRINUSE;
    }
    s->udp_ev = event_new(a->base, s->udp_fd, EV_READ | EV_PERSIST, lob_read_cb, a);
    if (!s->udp_ev || event_add(s->udp_ev, NULL)) return -ENOMEM;
    XG_INFO(a->name, "VRPN server listening on %s (TCP and UDP), frame %s", s->bound,
            a->frame->name);
    return 0;
}

static void server_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct vrpn_server *s = a->priv;
    st->state = s->lis ? "listening" : "stopped";
    snprintf(st->peer, sizeof st->peer, "%.127s", s->bound[0] ? s->bound : s->listen);
    int udp = 0, sensors = 0;
    for (const struct conn *c = s->conns; c; c = c->next)
        udp += c->udp_ok;
    for (int i = 0; i < s->names.n_slots; i++)
        sensors += s->names.slots[i].id != 0 && s->names.slots[i].sensor >= 0;
    xg_status_gauge(st, "clients", (double)s->n_conns);
    xg_status_gauge(st, "clients_udp", (double)udp);
    xg_status_gauge(st, "trackers", (double)s->n_trackers);
    xg_status_gauge(st, "controls_devices", (double)s->n_ctl_devices);
    xg_status_gauge(st, "sensors", (double)sensors);
    xg_status_gauge(st, "sensor_names", (double)vrpn_names_count(&s->names));
    xg_status_counter(st, "clients_accepted", (double)s->accepted);
    xg_status_counter(st, "callbacks", (double)s->callbacks);
    xg_status_counter(st, "callback_failures", (double)s->callback_failures);
    xg_status_counter(st, "clients_refused", (double)s->refused);
    xg_status_counter(st, "clients_dropped_slow", (double)s->dropped_slow);
    xg_status_counter(st, "bad_input", (double)s->bad_input);
    xg_status_counter(st, "requests_rejected", (double)s->lob_rejected);
    xg_status_counter(st, "requests_duplicate", (double)s->lob_duplicates);
    xg_status_counter(st, "requests_self", (double)s->lob_self);
    xg_status_counter(st, "requests_not_numeric", (double)s->lob_names);
    xg_status_counter(st, "reports_tcp", (double)s->reports_tcp);
    xg_status_counter(st, "reports_udp", (double)s->reports_udp);
    xg_status_counter(st, "reports_skipped", (double)s->reports_skipped);
    xg_status_counter(st, "drains_skipped", (double)s->drains_skipped);
    xg_status_counter(st, "reports_coalesced", (double)s->reports_coalesced);
    xg_status_counter(st, "datagrams", (double)s->ubatch.datagrams);
    xg_status_counter(st, "udp_sends", (double)s->ubatch.calls);
    xg_status_counter(st, "udp_errors", (double)s->ubatch.errors);
    xg_status_counter(st, "pongs", (double)s->pongs);
    xg_status_counter(st, "bytes_out", (double)(s->bytes_out + s->ubatch.bytes));
}

static void server_stop(struct xg_adapter *a)
{
    struct vrpn_server *s = a->priv;
    if (!s) return;
    if (s->lis) {
        xg_net_listener_free(s->lis);
        s->lis = NULL;
    }
    if (s->udp_ev) {
        event_free(s->udp_ev);
        s->udp_ev = NULL;
    }
    if (s->udp_fd >= 0) {
        close(s->udp_fd);
        s->udp_fd = -1;
    }
    while (s->conns)
        conn_free(s, s->conns);
}

static void server_destroy(struct xg_adapter *a)
{
    struct vrpn_server *s = a->priv;
    if (!s) return;
    server_stop(a);
    for (size_t i = 0; i < s->n_rules; i++) {
        free(s->rules[i].match);
        free(s->rules[i].tracker);
    }
    free(s->rules);
    for (int t = 0; t < s->n_trackers; t++)
        free(s->trackers[t].used.b);
    free(s->trackers);
    vrpn_names_free(&s->names);
    free(s->by_eslot);
    free(s->newv);
    free(s->dirty.v);
    free(s->full.v);
    free(s->dirty.x);
    free(s->full.x);
    free(s->dirty.xb);
    free(s->full.xb);
    free(s->scratch);
    free(s->tracker_name);
    xg_udp_batch_free(&s->ubatch);
    free(s);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_vrpn_server_ops = {
    .type = "vrpn-server",
    .is_sink = true,
    .create = server_create,
    .start = server_start,
    .drain = server_drain,
    .status = server_status,
    .stop = server_stop,
    .destroy = server_destroy,
    .entity_event = server_entity_event,
};
