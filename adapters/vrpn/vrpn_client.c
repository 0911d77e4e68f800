/* `vrpn-client` adapter: a client of VRPN servers (mocap rigs: OptiTrack Motive, Vicon Tracker,
 * ART DTrack, the stock vrpn_server...), byte-compatible with mainline VRPN 07.38's remotes
 * (VRPN has no written specification: "§n" below are sections of the project's VRPN wire notes;
 * the behaviour is documented in docs/adapters/vrpn.md).
 *
 * Config keys: devices (required: a list of VRPN names, or one name: "Tracker0@host[:port]" and
 * "Tracker0@x-vrpn://host[:port]" connect in UDP+TCP mode, "Tracker0@tcp://host[:port]" TCP-only;
 * port 3883 by default), connect_timeout_ms (5000: TCP connect, call-back wait and cookie wait),
 * max_sensors (1024 per tracker). Devices with the same mode, host and port share one connection
 * (as mainline's connection manager does). `frame:` defaults to the gateway's identity; Z-up rigs
 * want `frame: vrpn-zup`.
 *
 * Per connection (§6): TCP-only connects to the server; UDP+TCP binds a TCP listen socket and a
 * UDP data socket on the local address that routes to the server, sends the connection request
 * "<ip> <port>\0" to the server's UDP port (again every 2 s) and waits for the server to connect
 * back. Then both send the cookie; after the server's cookie is accepted the client sends [its
 * UDP_DESCRIPTION in UDP+TCP mode], SENDER_DESCRIPTIONs (VRPN Control, then the devices in config
 * order) and TYPE_DESCRIPTIONs (the 23 types a mainline client registers, in its order), echoes
 * every name the server describes that it does not know (§6.2), and pings each device once per
 * second until it is ponged (§7). It never answers pings. Reports arrive over TCP and, in UDP+TCP
 * mode, as UDP datagrams of one or more messages on the data socket, accepted only from the
 * server's address (the call-back's source) and, once its first datagram was read, from that
 * source port (the server sends from a data socket, not its announced port); datagrams from
 * anyone else are dropped, counted (udp_foreign_dropped) and logged through a rate limiter.
 *
 * Entities: tracker sensor s of device D is "<adapter>/<D>/<s>" (kind rigid_body); Pos_Quat gives
 * the pose (the entity carries the sensor number as xg_entity.source_sensor), Velocity the velocity
 * and the angular velocity log(vel_quat)/vel_quat_dt (vel_quat is a world-frame rotation increment:
 * q(t+dt) = vel_quat ⊗ q(t), §8.1, §10); without Velocity the table estimates. Capture times are
 * the message timevals mapped to the gateway clock per device (struct xg_time_map). Buttons (Change
 * and States) and analog channels become buttons[] and analogs[] of the device's first tracker
 * entity; a device that has no tracker entity (yet) gets a controller entity "<adapter>/<D>" at the
 * origin, kept alive while connected (a sample every stale_ms / 2, at most 1 s apart, so that a
 * silent, connected device is never STALE) and replaced by the tracker entity (state carried over)
 * when the first tracker report arrives. Dial d accumulates its deltas (revolutions) into
 * analogs[64 + d].
 *
 * Bad input from a server (bad cookie, truncated or bad header length, wrong body size, an
 * unknown system type, an id outside 0..1999, a bad description) closes that connection with one
 * log line naming the peer, the field and the value, marks its entities inactive and reconnects
 * after a backoff (0.5 s doubling to 10 s, ±25 % jitter, reset once the connection streams).
 * Each connection's name resolution, TCP connect (TCP-only), backoff and state are a
 * core/net/transport_client.h client; in UDP+TCP mode the attempt itself (call-back listener, UDP
 * socket, connection request) is this file's (ops.resolved).
 * Messages of types or senders the server never described are ignored, as mainline does (§5.3),
 * as are messages of devices not configured (§6.5).
 *
 * The protocol of each connection (cookie, handshake, descriptions and echoes, dispatch, the
 * connection request and its resends, deadlines, pings) is its socket-free session
 * (vrpn_session.h); this file and vrpn_client_udp.c are the glue: bytes from the sockets into the
 * session, its bytes out, its events into the table and the log. */
#include <arpa/inet.h>
#include <errno.h>
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
#include "adapters/vrpn/vrpn_client.h"
#include "adapters/vrpn/vrpn_client_priv.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/transport_client.h"
#include "core/clock/time_map.h"
#include "mappings/frame.h"

/* ---- session glue (vrpn_session.h) ---- */

static int sess_send(void *ctx, const uint8_t *buf, size_t len)
{
    struct vconn *c = ctx;
    if (!c->bev) return -1;
    xg_tcp_write(c->bev, buf, len);
    return 0;
}

static int64_t sess_wall(void *ctx, int64_t mono)
{
    (void)ctx;
    return xg_clock_mono_to_wall_ns(mono);
}

static int sess_event(void *ctx, const struct vrpn_event *ev);

/* ---- entities ---- */

static struct xg_entity_key sensor_key(const struct vdev *d, int s, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%d", d->name, s);
    /* the sensor number travels with the entity: a vrpn-server relaying it keeps it */
    return (struct xg_entity_key){
        .source = buf, .kind = XG_KIND_RIGID_BODY, .has_sensor = true, .sensor = s};
}

/* Table id of the entity carrying the device's controls, creating the controller entity when the
 * device has no tracker entity. 0 on failure. */
static uint32_t control_entity(struct xg_adapter *a, struct vdev *d)
{
    if (d->first_sensor >= 0 && d->sensors[d->first_sensor].id &&
        xg_table_get(a->table, d->sensors[d->first_sensor].id))
        return d->sensors[d->first_sensor].id;
    if (d->ctl_id && xg_table_get(a->table, d->ctl_id)) return d->ctl_id;
    int64_t now = xg_clock_mono_ns();
    if (now <= d->ctl_last_t) now = d->ctl_last_t + 1;
    struct xg_sample s = {.capture_ns = now,
                          .receive_ns = now,
                          .flags = XG_SAMPLE_POSE,
                          .orientation = XG_QUAT_IDENTITY};
    xg_frame_sample_in(a->frame, &s);
    struct xg_entity_key key = {
        .source = d->name, .kind = XG_KIND_CONTROLLER, .controls_only = true};
    uint32_t id = 0;
    if (xg_table_update(a->table, a, &key, &s, &id) < 0) return 0;
    d->ctl_last_t = now;
    d->ctl_id = id;
    /* restore the known control state (after an expiry) */
    for (int i = 0; i < d->n_buttons; i++)
        xg_table_set_button(a->table, id, i, d->buttons[i]);
    for (int i = 0; i < d->n_analogs; i++)
        xg_table_set_analog(a->table, id, i, d->analogs[i]);
    return id;
}

static void set_button(struct xg_adapter *a, struct vdev *d, int index, bool pressed)
{
    if (index < 0 || index >= XG_MAX_BUTTONS) return;
    d->buttons[index] = pressed;
    if (index >= d->n_buttons) d->n_buttons = index + 1;
    uint32_t id = control_entity(a, d);
    if (id) xg_table_set_button(a->table, id, index, pressed);
}

static void set_analog(struct xg_adapter *a, struct vdev *d, int index, double v)
{
    if (index < 0 || index >= XG_MAX_ANALOGS || !isfinite(v)) return;
    d->analogs[index] = v;
    if (index >= d->n_analogs) d->n_analogs = index + 1;
    uint32_t id = control_entity(a, d);
    if (id) xg_table_set_analog(a->table, id, index, v);
}

/* A tracker entity now exists: it carries the controls from now on. */
static void adopt_controls(struct xg_adapter *a, struct vdev *d, int s)
{
    d->first_sensor = s;
    uint32_t id = d->sensors[s].id;
    for (int i = 0; i < d->n_buttons; i++)
        xg_table_set_button(a->table, id, i, d->buttons[i]);
    for (int i = 0; i < d->n_analogs; i++)
        xg_table_set_analog(a->table, id, i, d->analogs[i]);
    if (d->ctl_id) {
        xg_table_remove(a->table, d->ctl_id);
        d->ctl_id = 0;
    }
}

static struct sensor *get_sensor(struct xg_adapter *a, struct vclient *v, struct vdev *d, int s)
{
    if (s < 0) return NULL;
    if (s >= v->max_sensors) {
        if (!d->sensors_warned) {
            d->sensors_warned = true;
            XG_WARN(a->name,
                    "peer %s: device '%s': sensor %d above max_sensors (%" PRId64 "): "
                    "its reports are dropped",
                    d->conn->peer, d->name, s, v->max_sensors);
        }
        return NULL;
    }
    if (s >= d->n_sensors) {
        int n = d->n_sensors ? d->n_sensors : 4;
        while (n <= s)
            n *= 2;
        if (n > v->max_sensors) n = (int)v->max_sensors;
        struct sensor *ns = realloc(d->sensors, (size_t)n * sizeof *ns);
        if (!ns) return NULL;
        memset(ns + d->n_sensors, 0, (size_t)(n - d->n_sensors) * sizeof *ns);
        d->sensors = ns;
        d->n_sensors = n;
    }
    return &d->sensors[s];
}

static void on_pos_quat(struct xg_adapter *a, struct vdev *d, const struct vrpn_header *h,
                        const struct vrpn_pos_quat *pq, int64_t rx)
{
    struct vclient *v = a->priv;
    struct sensor *sn = get_sensor(a, v, d, pq->sensor);
    if (!sn) {
        a->drops++;
        return;
    }
    int64_t src = vrpn_header_wall_ns(h);
    /* older than the last report: reordered (dropped), or the server's clock stepped back (a
     * sim-time reset, an NTP step): dropped until the mapping confirms the step (issue 30) */
    bool older = sn->last_src && src < sn->last_src;
    if (older && src > sn->last_src - XG_TIME_STEP_BEHIND_NS) {
        a->drops++;
        return;
    }
    uint64_t steps = d->tmap.steps;
    int64_t t = xg_adapter_map_time(a, &d->tmap, src, rx, d->name);
    if (older && d->tmap.steps == steps) {
        a->drops++;
        return;
    }
    /* a timestamp far ahead of the server's clock is held by the mapping until confirmed: it
     * is applied, but is not the reference for "older" (or one wild timeval would make every
     * later report look old and freeze the sensor) */
    bool held = d->tmap.cand_n > 0;
    if (t <= sn->last_t) t = sn->last_t + 1; /* same timeval, or a burst read at once */
    struct xg_sample s = {.capture_ns = t,
                          .receive_ns = rx,
                          .flags = XG_SAMPLE_POSE,
                          .position = pq->pos,
                          .orientation = pq->quat};
    xg_frame_sample_in(a->frame, &s);
    int rc = -ENOENT;
    if (sn->id) rc = xg_table_push(a->table, sn->id, &s);
    bool created = false;
    if (rc == -ENOENT) {
        char src_name[VRPN_CNAME_MAX + 16];
        struct xg_entity_key key = sensor_key(d, pq->sensor, src_name, sizeof src_name);
        rc = xg_table_update(a->table, a, &key, &s, &sn->id);
        created = rc == 0;
    }
    if (rc == 0) {
        a->samples_in++;
        sn->last_t = t;
        if (!held) sn->last_src = src;
        if (d->first_sensor < 0 || (created && d->first_sensor == pq->sensor))
            adopt_controls(a, d, pq->sensor);
    } else {
        a->drops++;
    }
}

static void on_velocity(struct xg_adapter *a, struct vdev *d, const struct vrpn_tracker_rate *r)
{
    if (r->sensor >= d->n_sensors || !d->sensors[r->sensor].id) return; /* no pose yet */
    struct sensor *sn = &d->sensors[r->sensor];
    struct xg_sample s = {.capture_ns = sn->last_t,
                          .receive_ns = xg_clock_mono_ns(),
                          .flags = XG_SAMPLE_VELOCITY,
                          .velocity = r->vec};
    /* vel_quat is the rotation increment over vel_quat_dt seconds (§8.1, §10) */
    if (vrpn_client_angular_velocity(r->quat, r->quat_dt, &s.angular_velocity))
        s.flags |= XG_SAMPLE_ANGULAR_VELOCITY;
    xg_frame_sample_in(a->frame, &s);
    if (xg_table_push(a->table, sn->id, &s) < 0) a->drops++;
}

/* ---- message dispatch (TCP and UDP) ---- */

void vrpn_cli_bad_input(struct vconn *c, const char *where, const char *msg)
{
    struct xg_adapter *a = c->a;
    struct vclient *v = a->priv;
    c->bad_messages++;
    a->errors++;
    XG_WARN_PEER(&v->lim_bad, a->name, "bad input from %s (%s): %s; closing the connection",
                 c->peer, where, msg);
    char why[VRPN_SESSION_MSG_MAX + 128];
    snprintf(why, sizeof why, "bad input (%s): %s", where, msg);
    vrpn_cli_close_conn(c, why);
}

void vrpn_cli_session_failed(struct vconn *c, const char *where)
{
    const struct vrpn_session_error *e = vrpn_session_error(&c->sess);
    struct xg_adapter *a = c->a;
    struct vclient *v = a->priv;
    char why[200];
    switch (e->kind) {
    case VRPN_ERR_NO_CALLBACK: {
        snprintf(why, sizeof why, "peer %s: no call-back within %.1f s of the connection request",
                 c->peer, (double)v->connect_timeout_ns * 1e-9);
        uint32_t attempt = xg_tclient_attempts(c->tc) + 1;
        if (xg_tclient_log_attempt(attempt))
            XG_WARN(a->name, "%s (attempt %" PRIu32 ")", why, attempt);
        vrpn_cli_close_conn(c, why);
        return;
    }
    case VRPN_ERR_NO_COOKIE:
        XG_WARN(a->name, "peer %s: no VRPN cookie within %.1f s; closing the connection", c->peer,
                (double)v->connect_timeout_ns * 1e-9);
        c->bad_messages++;
        vrpn_cli_close_conn(c, "no VRPN cookie");
        return;
    case VRPN_ERR_LOCAL:
        XG_ERR(a->name, "peer %s: %s", c->peer, e->msg);
        vrpn_cli_close_conn(c, e->msg);
        return;
    default:
        vrpn_cli_bad_input(c, where ? where : e->where, e->msg);
    }
}

static void mark_streaming(struct vconn *c)
{
    if (ST(c) == XG_TC_HANDSHAKE) {
        xg_tclient_streaming(c->tc);
        XG_INFO(c->a->name, "peer %s: streaming", c->peer);
    }
}

static struct vdev *dev_of(struct vconn *c, int32_t local_sender)
{
    for (int i = 0; i < c->n_devs; i++)
        if (c->devs[i]->local_id == local_sender) return c->devs[i];
    return NULL;
}

/* A device report of the server (VRPN_EV_MESSAGE): into the table. */
static void on_report(struct vconn *c, struct vdev *d, const struct vrpn_event *ev)
{
    struct xg_adapter *a = c->a;
    const struct vrpn_body *b = ev->body;
    switch (b->kind) {
    case VRPN_BODY_POS_QUAT:
        on_pos_quat(a, d, ev->hdr, &b->u.pos_quat, ev->rx_ns);
        break;
    case VRPN_BODY_VELOCITY:
        on_velocity(a, d, &b->u.rate);
        break;
    case VRPN_BODY_BUTTON_CHANGE:
        set_button(a, d, b->u.button.button, b->u.button.state != 0);
        break;
    case VRPN_BODY_BUTTON_STATES:
        for (int i = 0; i < b->u.states.count; i++)
            set_button(a, d, i, b->u.states.states[i] != 0);
        break;
    case VRPN_BODY_ANALOG:
        for (int i = 0; i < b->u.analog.count; i++)
            set_analog(a, d, i, b->u.analog.channels[i]);
        break;
    case VRPN_BODY_DIAL:
        if (b->u.dial.dial >= 0 && b->u.dial.dial < XG_MAX_ANALOGS - DIAL_ANALOG_BASE) {
            int idx = DIAL_ANALOG_BASE + b->u.dial.dial;
            double cur = idx < d->n_analogs ? d->analogs[idx] : 0.0;
            set_analog(a, d, idx, cur + b->u.dial.delta);
        }
        break;
    case VRPN_BODY_TEXT:
        XG_DEBUG(a->name, "peer %s: '%s' says (severity %u): %s", c->peer, d->name,
                 b->u.text.severity, b->u.text.text);
        break;
    default:
        break; /* acceleration */
    }
    mark_streaming(c);
}

/* The session's events (vrpn_session.h): logs, table updates, the transport's state. */
static int sess_event(void *ctx, const struct vrpn_event *ev)
{
    struct vconn *c = ctx;
    struct xg_adapter *a = c->a;
    struct vdev *d;
    switch (ev->kind) {
    case VRPN_EV_COOKIE:
        if (ev->minor_differs)
            XG_INFO(a->name,
                    "peer %s: server speaks VRPN 07.%02d, we speak 07.38 (not normally a "
                    "problem)",
                    c->peer, ev->minor);
        break;
    case VRPN_EV_UDP_DESCRIPTION:
        XG_DEBUG(a->name, "peer %s: server UDP port %u at %s", c->peer, ev->udp_port, ev->name);
        break;
    case VRPN_EV_MESSAGE:
        if ((d = dev_of(c, ev->sender_local))) on_report(c, d, ev);
        break;
    case VRPN_EV_PONG:
        if (ev->first) XG_DEBUG(a->name, "peer %s: '%s' answered", c->peer, ev->sender);
        mark_streaming(c);
        break;
    case VRPN_EV_NOPONG: {
        /* the names the server described are the devices it serves (plus its control
         * sender): list them, so that a misspelt name can be corrected from the log */
        char offered[400];
        struct vclient *v = a->priv;
        int n = vrpn_id_map_described_names(vrpn_session_ids(&c->sess), VRPN_ID_SENDER,
                                            VRPN_NAME_CONTROL, offered, sizeof offered);
        XG_WARN_PEER(&v->lim_nopong, a->name,
                     "peer %s: no response from server for >= 3 seconds to pings of '%s' (is "
                     "the device name right? %s%s)",
                     c->peer, ev->sender,
                     n ? "the server offers: " : "the server describes no devices", offered);
        break;
    }
    default:
        break; /* descriptions (echoed by the session), log requests, ignored messages */
    }
    return 0;
}

/* ---- TCP ---- */

/* Everything buffered on the connection into the session (any split: it reassembles). Returns
 * false if the connection was closed. */
static bool feed_input(struct vconn *c)
{
    int64_t rx = xg_clock_mono_ns();
    enum vrpn_sess_state st = vrpn_session_state(&c->sess);
    if (st != VRPN_SESS_COOKIE && st != VRPN_SESS_STREAMING) return true;
    for (;;) {
        size_t n;
        const uint8_t *p = xg_tcp_in_peek(c->bev, &n);
        if (!p) return true;
        int rc = vrpn_session_feed(&c->sess, p, n, rx);
        if (rc < 0) {
            vrpn_cli_session_failed(c, NULL);
            return false;
        }
        xg_tcp_in_drain(c->bev, n);
    }
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    xg_tserver_read_more(bev); /* a whole frame per pass, not 4 KiB of it */
    feed_input(arg);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct vconn *c = arg;
    struct xg_adapter *a = c->a;
    char why[200];
    if (what & XG_TCP_EOF) {
        if (!feed_input(c)) return;
        (void)bev;
        if (vrpn_session_eof(&c->sess) < 0) {
            vrpn_cli_session_failed(c, "tcp");
            return;
        }
        XG_WARN(a->name, "%s closed the connection; reconnecting", c->peer);
        snprintf(why, sizeof why, "%s closed the connection", c->peer);
        vrpn_cli_close_conn(c, why);
        return;
    }
    if (what & XG_TCP_ERROR) {
        int e = errno;
        snprintf(why, sizeof why, "connection to %s lost: %s", c->peer, strerror(e));
        XG_WARN(a->name, "%s", why);
        vrpn_cli_close_conn(c, why);
    }
}

void vrpn_cli_setup_bev(struct vconn *c)
{
    struct xg_tcp_conf tc = {
        .read = read_cb, .event = event_cb, .arg = c, .read_max = VRPN_MAX_MESSAGE + 65536};
    xg_tcp_start(c->bev, &tc);
    vrpn_session_connected(&c->sess, xg_clock_mono_ns()); /* our cookie (§4) */
}

/* ---- connection life cycle ---- */

/* Close the connection (or the attempt); with `why` (already logged) reconnect after a backoff,
 * without only clean up (stop, or a failed attempt the transport reports). */
void vrpn_cli_close_conn(struct vconn *c, const char *why)
{
    struct xg_adapter *a = c->a;
    bool was_up = c->tc && (ST(c) == XG_TC_HANDSHAKE || ST(c) == XG_TC_STREAMING);
    if (c->bev) {
        xg_tcp_free(c->bev);
        c->bev = NULL;
    }
    if (c->lis) {
        xg_net_listener_free(c->lis);
        c->lis = NULL;
    }
    xg_udp_rx_close(&c->udp);
    vrpn_session_close(&c->sess);
    int64_t now = xg_clock_mono_ns();
    for (int i = 0; i < c->n_devs; i++) {
        struct vdev *d = c->devs[i];
        xg_time_map_reset(&d->tmap);
        for (int k = 0; k < d->n_sensors; k++)
            d->sensors[k].last_src = 0;
        if (!was_up) continue; /* failed attempts do not keep dead entities alive */
        struct xg_sample s = {.capture_ns = now, .receive_ns = now, .flags = XG_SAMPLE_INACTIVE};
        for (int k = 0; k < d->n_sensors; k++)
            if (d->sensors[k].id) xg_table_push(a->table, d->sensors[k].id, &s);
        if (d->ctl_id) xg_table_push(a->table, d->ctl_id, &s);
    }
    if (why && c->tc) xg_tclient_closed(c->tc, why);
}

/* A new attempt: a fresh session (sequence numbers, id map with VRPN Control, the mainline
 * client's types) and our devices as senders 1..n, as a mainline client. */
static int attempt_begin(struct vconn *c, const struct sockaddr *sa, socklen_t len)
{
    memcpy(&c->addr, sa, len);
    c->addrlen = len;
    snprintf(c->peer, sizeof c->peer, "%s", xg_tclient_peer(c->tc));
    int rc = vrpn_session_start(&c->sess, c->tcp_only ? VRPN_MODE_TCP : VRPN_MODE_UDP,
                                xg_clock_mono_ns());
    for (int i = 0; rc == 0 && i < c->n_devs; i++) {
        int id = vrpn_id_map_register(vrpn_session_ids(&c->sess), VRPN_ID_SENDER, c->devs[i]->name,
                                      NULL);
        if (id < 0) rc = id;
        c->devs[i]->local_id = id;
    }
    return rc;
}

/* UDP+TCP: the name resolved (core/net/transport_client.h): request the call-back. */
static int on_resolved(void *arg, const struct sockaddr *sa, socklen_t len, char *why,
                       size_t why_size)
{
    struct vconn *c = arg;
    int rc = attempt_begin(c, sa, len);
    if (rc < 0) snprintf(why, why_size, "out of memory");
    if (rc == 0) rc = vrpn_cli_start_callback(c, why, why_size);
    if (rc < 0) vrpn_cli_close_conn(c, NULL);
    return rc;
}

/* TCP-only: connected (core/net/transport_client.h): the cookie exchange starts. */
static void on_connected(void *arg, struct bufferevent *bev, struct xg_tls_session *tls)
{
    struct vconn *c = arg;
    socklen_t len;
    const struct sockaddr *sa = xg_tclient_addr(c->tc, &len);
    (void)tls;
    c->bev = bev;
    if (attempt_begin(c, sa, len) < 0) {
        vrpn_cli_close_conn(c, "out of memory");
        return;
    }
    vrpn_cli_setup_bev(c);
}

/* Every 100 ms (stale_ms / 4 when shorter, at least 10 ms): connection request resends and
 * call-back timeout, cookie timeout, pings, controller-entity keepalive. */
static void tick_cb(void *arg)
{
    struct vconn *c = arg;
    struct xg_adapter *a = c->a;
    int64_t now = xg_clock_mono_ns();
    /* connection request resends and the call-back wait, the cookie wait, pings (§6.3, §7) */
    if (vrpn_session_tick(&c->sess, now) < 0) {
        vrpn_cli_session_failed(c, NULL);
        return;
    }
    if (ST(c) != XG_TC_HANDSHAKE && ST(c) != XG_TC_STREAMING) return;
    /* controller entities: a sample well within stale_ms while the connection streams (not
     * while a reconnect waits for its cookie: the entity stays inactive, then stale) */
    int64_t keep = xg_table_params(a->table)->stale_ns / 2;
    if (keep > XG_NS_PER_S) keep = XG_NS_PER_S;
    for (int i = 0; i < c->n_devs && ST(c) == XG_TC_STREAMING; i++) {
        struct vdev *d = c->devs[i];
        if (!d->ctl_id || now - d->ctl_last_t < keep) continue;
        struct xg_sample s = {.capture_ns = now,
                              .receive_ns = now,
                              .flags = XG_SAMPLE_POSE,
                              .orientation = XG_QUAT_IDENTITY};
        xg_frame_sample_in(a->frame, &s);
        if (xg_table_push(a->table, d->ctl_id, &s) == 0)
            d->ctl_last_t = now;
        else
            control_entity(a, d);
    }
}

/* ---- ops ---- */

static int client_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct vclient *v = calloc(1, sizeof *v);
    if (!v) return -ENOMEM;
    a->priv = v;
    int64_t cto_ms;
    int rc;
    if ((rc = xg_conf_int(conf, "connect_timeout_ms", 5000, 100, 600000, &cto_ms, err)) ||
        (rc = xg_conf_int(conf, "max_sensors", 1024, 1, 65536, &v->max_sensors, err)))
        return rc;
    v->connect_timeout_ns = cto_ms * XG_NS_PER_MS;
    const struct xg_conf *devs = xg_conf_get(conf, "devices");
    if (!devs)
        return xg_conf_error(err, conf, -EINVAL,
                             "vrpn-client: 'devices' is required (a list of VRPN names such as "
                             "Tracker0@host:3883 or Tracker0@tcp://host:3883)");
    if (devs->type == XG_CONF_SCALAR) {
        if ((rc = vrpn_cli_add_device(a, v, devs, devs->value ? devs->value : "", err))) return rc;
    } else {
        if ((rc = xg_conf_expect(devs, XG_CONF_SEQ, "devices", err))) return rc;
        if (!devs->n_items) return xg_conf_error(err, devs, -EINVAL, "devices: the list is empty");
        for (size_t i = 0; i < devs->n_items; i++) {
            const struct xg_conf *it = devs->items[i];
            if ((rc = xg_conf_expect(it, XG_CONF_SCALAR, "devices item", err))) return rc;
            if ((rc = vrpn_cli_add_device(a, v, it, it->value ? it->value : "", err))) return rc;
        }
    }
    for (int i = 0; i < v->n_conns; i++)
        if (v->conns[i]->n_devs + 1 > VRPN_MAX_SENDERS)
            return xg_conf_error(err, devs, -EINVAL, "devices: too many on %s", v->conns[i]->peer);
    return 0;
}

static int client_start(struct xg_adapter *a)
{
    struct vclient *v = a->priv;
    v->tcs = calloc((size_t)v->n_conns + 1, sizeof *v->tcs);
    if (!v->tcs) return -ENOMEM;
    for (int i = 0; i < v->n_conns; i++) {
        struct vconn *c = v->conns[i];
        /* UDP+TCP mode needs an IPv4 server (the connection request names an IPv4 address) */
        struct xg_tclient_conf tcc = {.component = a->name,
                                      .host = c->host,
                                      .port = c->port,
                                      .family = c->tcp_only ? AF_UNSPEC : AF_INET,
                                      .peer_prefix = c->tcp_only ? "tcp://" : NULL,
                                      .connect_timeout_ns = v->connect_timeout_ns};
        struct xg_tclient_ops ops = {.connected = c->tcp_only ? on_connected : NULL,
                                     .resolved = c->tcp_only ? NULL : on_resolved};
        struct vrpn_session_ops so = {.send = sess_send,
                                      .send_request = vrpn_cli_send_request,
                                      .event = sess_event,
                                      .wall_ns = sess_wall};
        vrpn_session_init(&c->sess, VRPN_ROLE_CLIENT, &so, c, v->connect_timeout_ns);
        c->sess_ready = true;
        c->tc = v->tcs[i] = xg_tclient_new(a->base, &tcc, &ops, c);
        c->tick = xg_timer_new(a->base, tick_cb, c);
        if (!c->tc || !c->tick) return -ENOMEM;
        /* 100 ms, shorter for a short stale_ms (the controller keepalive), not below 10 ms */
        int64_t period = xg_table_params(a->table)->stale_ns / 4;
        if (period > 100 * XG_NS_PER_MS) period = 100 * XG_NS_PER_MS;
        if (period < 10 * XG_NS_PER_MS) period = 10 * XG_NS_PER_MS;
        xg_timer_every(c->tick, (uint64_t)(period / 1000));
        xg_tclient_start(c->tc);
    }
    v->started = true;
    return 0;
}

static void client_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct vclient *v = a->priv;
    uint64_t sum[11] = {0};
    size_t off = 0;
    st->peer[0] = '\0';
    st->state = "stopped";
    if (v->tcs) xg_tclient_status(v->tcs, v->n_conns, st);
    for (int i = 0; i < v->n_conns; i++) {
        const struct vconn *c = v->conns[i];
        const struct vrpn_session_stats *ss = vrpn_session_stats(&c->sess);
        const uint64_t vals[11] = {ss->messages,  c->bad_messages, ss->tcp_reports, ss->udp_reports,
                                   ss->datagrams, ss->ignored,     ss->pings,       ss->pongs,
                                   ss->requests,  ss->echoes,      c->udp_foreign};
        for (int k = 0; k < 11; k++)
            sum[k] += vals[k];
        if (off < sizeof st->peer) {
            int n = snprintf(st->peer + off, sizeof st->peer - off, "%s%s", i ? "," : "",
                             c->tc ? xg_tclient_peer(c->tc) : c->peer);
            if (n > 0) off += (size_t)n;
        }
    }
    static const char *const names[11] = {"messages",
                                          "bad_messages",
                                          "tcp_reports",
                                          "udp_reports",
                                          "datagrams",
                                          "ignored",
                                          "pings",
                                          "pongs",
                                          "connection_requests",
                                          "echoed_descriptions",
                                          "udp_foreign_dropped"};
    for (int k = 0; k < 11; k++)
        xg_status_counter(st, names[k], (double)sum[k]);
    int streaming = 0, sensors = 0;
    for (int i = 0; i < v->n_conns; i++)
        streaming += v->conns[i]->tc && ST(v->conns[i]) == XG_TC_STREAMING;
    for (int i = 0; i < v->n_devs; i++)
        for (int k = 0; k < v->devs[i]->n_sensors; k++)
            sensors += v->devs[i]->sensors[k].id != 0;
    xg_status_gauge(st, "connections", v->n_conns);
    xg_status_gauge(st, "connections_streaming", streaming);
    xg_status_gauge(st, "devices", v->n_devs);
    xg_status_gauge(st, "sensors", sensors);
    xg_ingress_status(&v->udp_budget, st);
}

static void client_stop(struct xg_adapter *a)
{
    struct vclient *v = a->priv;
    if (!v) return;
    for (int i = 0; i < v->n_conns; i++) {
        struct vconn *c = v->conns[i];
        xg_tclient_stop(c->tc);
        xg_timer_free(c->tick);
        c->tick = NULL;
        vrpn_cli_close_conn(c, NULL);
    }
}

static void client_destroy(struct xg_adapter *a)
{
    struct vclient *v = a->priv;
    if (!v) return;
    client_stop(a);
    for (int i = 0; i < v->n_conns; i++) {
        struct vconn *c = v->conns[i];
        if (c->sess_ready) vrpn_session_free(&c->sess);
        xg_tclient_free(c->tc);
        free(c->devs);
        free(c);
    }
    for (int i = 0; i < v->n_devs; i++) {
        free(v->devs[i]->sensors);
        free(v->devs[i]);
    }
    free(v->conns);
    free(v->tcs);
    free(v->devs);
    free(v);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_vrpn_client_ops = {
    .type = "vrpn-client",
    .is_sink = false,
    .create = client_create,
    .start = client_start,
    .status = client_status,
    .stop = client_stop,
    .destroy = client_destroy,
};
