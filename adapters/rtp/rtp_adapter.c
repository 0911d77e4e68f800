/* `rtp` adapter: game state over RTP (draft-jennings-dispatch-game-state-over-rtp-01, see
 * docs/adapters/rtp.md), both directions on one UDP socket (plus the destination group's socket,
 * rtp_sdp.c).
 *
 * Config keys (besides the common name/type/frame/rename/rate_hz/include/exclude):
 *   bind: "host:port"          local address; a multicast group joins it (default "0.0.0.0:49170");
 *                              a host name is resolved at start without blocking (rtp_dest.c)
 *   interface: "a.b.c.d"       IPv4 interface for the multicast join and for sending to groups
 *   destinations: [host:port]  where egress goes (unicast and/or multicast), default none; host
 *                              names resolve at start without blocking, inactive until then
 *   payload_type: 98           dynamic PT (96..127); packets with another PT are dropped
 *   ssrc: N                    our SSRC (default: derived from gateway.id + the adapter name,
 *                              rtp_adapter.h, so `xrgate --sdp` names it; random with srtp)
 *   refresh_ms: 200            full state re-sent this often (0 = never)
 *   rtcp_interval_ms: 5000     RTCP SR + SDES CNAME about this often: each interval is random in
 *                              [0.5, 1.5) x this (RFC 3550 §6.3.1, rtcp_out.h); 0 = never
 *   mtu: 1200                  largest RTP packet (UDP payload) we send
 *   ttl: 1                     multicast TTL
 *   objects: {kind: Type}      object type per entity kind (head → Head1, left/right_hand → Hand1,
 *                              controller → SixDOF1, others → Object2; also Hand2, Object1,
 *                              ThreeDOF1)
 *   allow_ssrc: [N, ...]       accept RTP only from these SSRCs (default: any)
 *   ssrc_timeout_ms: 5000      an SSRC silent this long is forgotten and its entities removed
 *   max_ssrcs: 64, max_objects: 4096, max_objects_per_ssrc: 1024   ingress state caps
 *   sdp_address: "a.b.c.d"     c= address of the exported SDP (default: see rtp_sdp)
 *   srtp: {suite, key_file, remote_key_file}   SRTP/SRTCP (RFC 3711) with static SDES keys
 *                              (srtp_session.h, xg_srtp_conf_read); absent = plain RTP
 *   allow_fixed_ssrc_with_srtp: false   `srtp` with a fixed `ssrc:` is refused unless true: a
 *                              restart with the same static key, SSRC and a reused seq would
 *                              encrypt new packets with old keystream
 * rate_hz defaults to 90 here (the gateway's generic default is 60) when the key is absent; frame
 * defaults to the preset gamestate-lh (the draft's left-handed Y-up) when `frame:` is absent (both
 * are defaults in xg_rtp_ops that the gateway applies).
 *
 * The session state machine (SSRC table, sequence accounting, RTCP scheduling, FIR/PLI, refresh,
 * SSRC collisions) is rtp_session.c, socket-free; this file and rtp_ingress.c are its glue.
 * RTCP is multiplexed on the RTP port (RFC 5761), as the exported SDP says
 * (a=rtcp-mux). Every RTCP packet sent is a compound that starts with SR (RR before any RTP was
 * sent) + SDES CNAME: the periodic report, the FIR to a new SSRC and the BYE on stop (rtcp_out.h).
 * The SDP (rtp_sdp.c) says what the adapter does: a multicast destination with a unicast bind is
 * advertised as c=/m= and also bound and joined, o= is unicast, receive-only is a=recvonly.
 *
 * Egress object IDs: 1, 2, 3... in the order entities are first sent, kept per entity name while
 * the entity lives (rtp_oids.h: forgotten when the table removes it). Ingress entity names:
 * <adapter>/<ssrc, 8 hex digits>/<Type>-<objectID decimal>. A sender silent for ssrc_timeout_ms (or
 * that sends BYE) is forgotten, its entities removed (they are STALE after entity.stale_ms before
 * that); an object whose entity the table expired is forgotten by the next sweep, so per-SSRC state
 * is bounded by what is alive and by the caps. Bad input is dropped, counted per reason (drop_*
 * counters) and logged through one rate limiter per reason (core/util/log.h: a few lines per 10 s,
 * then a suppressed-count summary); every other line a peer can trigger (new SSRC, BYE, timeout)
 * has its own limiter.
 *
 * SRTP (when `srtp:` is set): every RTP packet is protected once, after packing, and the same
 * bytes go to every destination (a seq protected twice is refused by libsrtp as a replay); RTCP
 * (SR+SDES, FIR, BYE) becomes SRTCP. Objects are packed to mtu minus the SRTP tag so the
 * protected packet still fits mtu. Ingress: after the RTP/RTCP demux, packets carrying our own
 * SSRC from our own socket are ignored, every other one must unprotect with the remote key before
 * it is parsed; failures are dropped and counted as drop_srtp_auth / drop_srtp_replay /
 * drop_srtp_malformed. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/transport.h"
#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtcp_out.h"
#include "adapters/rtp/rtp_adapter.h"
#include "adapters/rtp/rtp.h"
#include "adapters/rtp/rtp_oids.h"
#include "adapters/rtp/srtp_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/udp_endpoint.h"
#include "mappings/frame.h"

static const char *const reason_names[R_COUNT] = {
    "drop_truncated",     "drop_bad_version", "drop_bad_padding", "drop_wrong_pt",
    "drop_ssrc_denied",   "drop_bad_framing", "drop_bad_object",  "drop_bad_value",
    "drop_bad_rtcp",      "drop_limit",       "drop_srtp_auth",   "drop_srtp_replay",
    "drop_srtp_malformed"};

static const struct rtp_session_ops session_ops;

/* ---- helpers ---- */

static uint64_t rand64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != sizeof v)
        v = (uint64_t)xg_clock_wall_ns() * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)getpid();
    return v;
}

/* Bad input: counted per reason, logged through the reason's rate limiter. */
/* Counted first; true when the reason's rate limiter lets a line through (then formatted). */
static bool bad_admit(struct xg_adapter *a, int reason)
{
    struct rtpa *r = a->priv;
    r->reasons[reason]++;
    a->drops++;
    return xg_log_admit(&r->lim_reason[reason], XG_LOG_WARN);
}

static void bad_log(struct xg_adapter *a, const char *peer, int reason, const char *msg)
{
    struct rtpa *r = a->priv;
    xg_log_admitted(&r->lim_reason[reason], XG_LOG_WARN, a->name, "peer %s: %s (dropped; %s)", peer,
                    msg, reason_names[reason]);
}

void rtpa_bad_input(struct xg_adapter *a, const char *peer, int reason, const char *fmt, ...)
{
    if (!bad_admit(a, reason)) return;
    char msg[XG_ERROR_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bad_log(a, peer, reason, msg);
}

/* ---- create ---- */

static int rtpa_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct rtpa *r = calloc(1, sizeof *r);
    if (!r) return -ENOMEM;
    a->priv = r;
    xg_egress_controls_init(&r->controls, 20, 4,
                            "game state's GameControl1 has 20 buttons and two sticks");
    r->rx.fd = r->grx.fd = -1;
    int64_t ssrc;
    int rc = rtpa_conf_read(a, conf, &ssrc, err);
    if (rc) return rc;
    /* SSRC: the configured one; random with srtp (a restart must not reuse keystream); else
     * derived from gateway.id + name, so `xrgate --sdp NAME` names the SSRC the daemon uses */
    r->ssrc_random = ssrc < 0 && r->srtp.enabled;
    r->ssrc = ssrc >= 0         ? (uint32_t)ssrc
              : r->srtp.enabled ? (uint32_t)rand64()
                                : rtpa_default_ssrc(a->gateway_id, a->name);
    r->session_id = rtpa_default_session_id(a->gateway_id, a->name);
    char host[64] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    for (char *p = host; *p; p++)
        if (*p <= ' ' || *p == 0x7f) *p = '_';
    snprintf(r->cname, sizeof r->cname, "xrgate-%s@%s", a->name, host);
    for (char *p = r->cname; *p; p++)
        if (*p <= ' ' || *p == 0x7f) *p = '_';
    r->pkt = malloc((size_t)r->mtu);
    if (!r->pkt) return -ENOMEM;
    /* a drain's packets and the RTCP compounds (up to 512 bytes) leave batched (send_flush) */
    if (xg_udp_batch_init(&r->ubatch, r->mtu > 512 ? (size_t)r->mtu : 512) < 0) return -ENOMEM;
    r->ubatch.retry_icmp = true;
    struct rtp_session_conf sc = {.component = a->name,
                                  .cname = r->cname,
                                  .ssrc = r->ssrc,
                                  .pt = r->pt,
                                  .allow = r->allow,
                                  .n_allow = r->n_allow,
                                  .max_ssrcs = r->max_ssrcs,
                                  .refresh_ns = r->refresh_ms * XG_NS_PER_MS,
                                  .rtcp_interval_ns = r->rtcp_interval_ms * XG_NS_PER_MS,
                                  .ssrc_timeout_ns = r->ssrc_timeout_ms * XG_NS_PER_MS,
                                  .seq = (uint16_t)rand64(),
                                  .ts_offset = (uint32_t)rand64(),
                                  .seed = rand64() | 1,
                                  .ops = &session_ops,
                                  .user = a};
    rtp_session_init(&r->sess, &sc);
    rtp_oids_init(&r->oids);
    return 0;
}

/* ---- egress ---- */

struct send_ctx {
    struct xg_adapter *a;
    struct xg_writer w;
    size_t n_objects; /* objects in the current packet */
    int64_t now_ns;
    uint16_t time1;
    size_t sent;
};

/* SRTP egress: protect (RTP) or protect_rtcp (RTCP) buf[0..*len) in place (capacity cap) with
 * the send session. Returns true when the packet may be sent: SRTP is off, or it is protected.
 * On failure the packet must not be sent; it is counted in a->errors and logged (first one, then
 * every 1000th). Call once per packet, never per destination (libsrtp refuses a repeated seq). */
static bool srtp_out(struct xg_adapter *a, uint8_t *buf, size_t *len, size_t cap, bool rtcp)
{
    struct rtpa *r = a->priv;
    if (!r->srtp.enabled) return true;
    struct xg_error err = {0};
    int rc = r->srtp_tx ? (rtcp ? xg_srtp_protect_rtcp(r->srtp_tx, buf, len, cap, &err)
                                : xg_srtp_protect(r->srtp_tx, buf, len, cap, &err))
                        : xg_error_set(&err, -EINVAL, "SRTP: no send session");
    if (rc == 0) return true;
    r->srtp_send_errors++;
    a->errors++;
    if (r->srtp_send_errors == 1 || r->srtp_send_errors % 1000 == 0)
        XG_WARN(a->name, "%s not sent: %s (%llu SRTP send errors)", rtcp ? "RTCP" : "RTP packet",
                err.msg, (unsigned long long)r->srtp_send_errors);
    return false;
}

/* An ICMP error a packet to a destination came back with (core/net/udp_endpoint.h): one line per
 * kind of event (rate-limited), a counter and, for 2 s, the state "unreachable". */
void rtpa_icmp_cb(void *user, const struct sockaddr *dst, socklen_t len, int err)
{
    struct xg_adapter *a = user;
    struct rtpa *r = a->priv;
    char to[64];
    (void)len;
    xg_net_addr_str(dst, to, sizeof to);
    int64_t now = xg_clock_mono_ns();
    bool news = !r->unreachable_ns || now - r->unreachable_ns >= 2000000000LL;
    r->dest_unreachable++;
    r->unreachable_ns = now;
    if (news) /* once per episode (every packet comes back while nothing listens) */
        XG_WARN_PEER(&r->lim_icmp, a->name,
                     "RTP to %s: %s (ICMP): nothing receives there, the packets to it are lost "
                     "(counted in dest_unreachable)",
                     to, err == ECONNREFUSED ? "port unreachable" : strerror(err));
}

/* Queue a copy of the packet for every destination (tagged with its index); it leaves with the
 * other packets of this drain in send_flush. */
static void send_to_all(struct xg_adapter *a, const uint8_t *buf, size_t len)
{
    struct rtpa *r = a->priv;
    for (int i = 0; i < r->dests.n; i++)
        if (r->dests.d[i].active) /* a name not resolved (yet) gets nothing */
            xg_udp_batch_add(&r->ubatch, r->rx.fd, (struct sockaddr *)&r->dests.d[i].ss,
                             r->dests.d[i].len, buf, len, i);
}

/* Hand the queued packets to core's batch (xg_udp_batch_send, XG_UDP_BATCH a call; udp_sends);
 * a destination that refuses one loses it (send_errors), the others are not affected. */
static void send_flush(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    xg_udp_batch_send(&r->ubatch);
    uint64_t n = r->ubatch.errors - r->batch_errors, old = r->send_errors;
    if (!n) return;
    r->batch_errors = r->ubatch.errors;
    r->send_errors += n;
    a->errors += n;
    int d = r->ubatch.last_tag;
    if (old == 0 || old / 1000 != r->send_errors / 1000)
        XG_WARN(a->name, "send to %s: %s (%llu send errors)",
                d >= 0 && d < r->dests.n ? r->dests.d[d].str : "?", strerror(r->ubatch.last_errno),
                (unsigned long long)r->send_errors);
}

static void packet_begin(struct send_ctx *c)
{
    struct rtpa *r = c->a->priv;
    xg_writer_init(&c->w, r->pkt, r->pack_len); /* room for the SRTP tag up to mtu */
    struct rtp_header h;
    rtp_session_header(&r->sess, c->now_ns, &h);
    rtp_write_header(&c->w, &h, NULL);
    c->n_objects = 0;
}

static void packet_flush(struct send_ctx *c)
{
    struct rtpa *r = c->a->priv;
    if (!c->n_objects) return;
    size_t plain = c->w.len, len = plain;
    bool sent = srtp_out(c->a, r->pkt, &len, (size_t)r->mtu, false); /* once for all dests */
    if (sent) {
        send_to_all(c->a, r->pkt, len);
        r->packets_out++;
        r->octets_out += len;
        r->payload_octets_out += plain - RTP_HEADER_LEN;
    }
    rtp_session_packet_done(&r->sess, sent, plain - RTP_HEADER_LEN);
    r->last_rtp_ts_ns = c->now_ns;
    packet_begin(c);
}

static void put_object(struct send_ctx *c, const struct xg_entity *e,
                       const struct rtp_gs_object *o);

static int send_visit(void *user, const struct xg_entity *e, const struct xg_pose *pose_in)
{
    struct send_ctx *c = user;
    struct xg_adapter *a = c->a;
    struct rtpa *r = a->priv;
    struct xg_pose p = *pose_in;
    xg_frame_pose_out(a->frame, &p);
    struct rtp_oid *od;
    /* egress cache: the entity's object ID record, in this sink's per-entity slot of the table
     * (zeroed when e goes); saves the by-name lookup per sample (8.6 % of the profile at 10 000
     * entities) */
    uint64_t *cached = xg_table_sink_slot(a->table, a->index, e);
    if (cached && *cached) {
        od = (struct rtp_oid *)(uintptr_t)*cached;
    } else {
        if (!(od = rtp_oids_get(&r->oids, xg_entity_name(e)))) return 0;
        if (cached) *cached = (uint64_t)(uintptr_t)od;
    }
    uint64_t oid = od->oid;
    enum xg_kind kind = xg_entity_kind(e) < XG_KIND_COUNT ? xg_entity_kind(e) : XG_KIND_OBJECT;
    bool left = kind == XG_KIND_LEFT_HAND;
    struct rtp_gs_object o;
    rtpa_object_from_pose(&o, r->kind_type[kind], oid, c->time1, left, &p);
    put_object(c, e, &o);
    if (xg_entity_buttons(e, NULL) > 0 || xg_entity_analogs(e, NULL) > 0) {
        xg_egress_controls_check(&((struct rtpa *)c->a->priv)->controls, c->a->name, e);
        rtpa_game_control(&o, e, od, c->time1);
        put_object(c, e, &o);
    }
    return 0;
}

/* Append one object to the packet being built, flushing it first when the object does not fit. */
static void put_object(struct send_ctx *c, const struct xg_entity *e, const struct rtp_gs_object *o)
{
    struct xg_adapter *a = c->a;
    struct rtpa *r = a->priv;
    struct xg_error err = {0};
    int rc = rtp_gs_encode_object(&c->w, o, &err);
    if (rc == -EMSGSIZE && c->n_objects) {
        packet_flush(c);
        rc = rtp_gs_encode_object(&c->w, o, &err);
    }
    if (rc) {
        r->oversize++;
        a->drops++;
        if (r->oversize == 1)
            XG_WARN(a->name, "entity '%s' not sent as %s: %s", xg_entity_name(e),
                    rtp_gs_type_name(o->type), err.msg[0] ? err.msg : strerror(-rc));
        return;
    }
    c->n_objects++;
    c->sent++;
    r->objects_out++;
    a->samples_out++;
}

static void send_ctx_init(struct send_ctx *c, struct xg_adapter *a, int64_t now)
{
    memset(c, 0, sizeof *c);
    c->a = a;
    c->now_ns = now;
    c->time1 = rtp_gs_time1_from_wall_ns(xg_clock_mono_to_wall_ns(now));
    packet_begin(c);
}

static int discard_visit(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    (void)user;
    (void)e;
    (void)pose;
    return 0;
}

static void rtpa_drain(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    int64_t now = xg_clock_mono_ns();
    if (r->rx.fd < 0 || !rtpa_dests_active(r)) {
        xg_table_drain(a->table, a->index, now, discard_visit, NULL);
        return;
    }
    struct send_ctx c;
    send_ctx_init(&c, a, now);
    xg_table_drain(a->table, a->index, now, send_visit, &c);
    packet_flush(&c);
    send_flush(a);
}

/* Full copy of every object we send (periodic refresh, FIR, PLI): the session's full_state. */
static void full_state_cb(void *user, int64_t now)
{
    struct xg_adapter *a = user;
    struct rtpa *r = a->priv;
    if (r->rx.fd < 0 || !rtpa_dests_active(r)) return;
    struct send_ctx c;
    send_ctx_init(&c, a, now);
    xg_table_foreach(a->table, a->index, now, send_visit, &c);
    packet_flush(&c);
    send_flush(a);
    r->full_states++;
}

/* The session's RTCP out (rtp_session.h ops.send): protected once, then to every destination
 * (batched) or to one peer (a FIR to a new sender). */
static int send_cb(void *user, uint8_t *buf, size_t len, size_t cap, bool rtcp,
                   const struct sockaddr *to, socklen_t to_len)
{
    struct xg_adapter *a = user;
    struct rtpa *r = a->priv;
    if (r->rx.fd < 0 || (!to && !rtpa_dests_active(r))) return -ENOTCONN;
    if (!srtp_out(a, buf, &len, cap, rtcp)) return -EIO;
    if (!to) {
        send_to_all(a, buf, len);
        send_flush(a);
        return 0;
    }
    /* a send also returns an ICMP error pending from an earlier packet (IP_RECVERR): that
     * packet was not sent, so it is tried again (the error itself is read from the error
     * queue). The batched sends do the same (udp_batch.h: retry_icmp). */
    int rc = xg_udp_send(r->rx.fd, buf, len, to, to_len, true);
    if (rc < 0) r->send_errors++;
    return rc;
}

static bool bad_admit_cb(void *user, int reason)
{
    return bad_admit(user, reason);
}

static void bad_input_cb(void *user, const char *peer, int reason, const char *msg)
{
    bad_log(user, peer, reason, msg); /* counted by bad_admit_cb */
}

/* After a collision (RFC 3550 §8.2) the new SSRC is ours: egress, SRTP's loopback check and
 * the SDP follow it. */
static void ssrc_changed_cb(void *user, uint32_t old_ssrc, uint32_t new_ssrc)
{
    struct xg_adapter *a = user;
    struct rtpa *r = a->priv;
    (void)old_ssrc;
    r->ssrc = new_ssrc;
}

static const struct rtp_session_ops session_ops = {
    .send = send_cb,
    .object = rtpa_object,
    .full_state = full_state_cb,
    .forget = rtpa_ssrc_forget,
    .sweep = rtpa_obj_sweep,
    .bad_input = bad_input_cb,
    .bad_admit = bad_admit_cb,
    .is_own = rtpa_is_own,
    .ssrc_changed = ssrc_changed_cb,
};

static void tick_cb(void *arg)
{
    struct xg_adapter *a = arg;
    struct rtpa *r = a->priv;
    rtp_session_tick(&r->sess, xg_clock_mono_ns());
    rtpa_arm(a);
}

void rtpa_arm(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    if (!r->tick) return;
    int64_t due = rtp_session_next_deadline(&r->sess);
    if (!due) {
        xg_timer_stop(r->tick);
        return;
    }
    int64_t wait = due - xg_clock_mono_ns();
    if (wait < 0) wait = 0;
    wait += 999; /* round up to µs: never wake before the deadline */
    xg_timer_once(r->tick, (uint64_t)wait / 1000);
}

/* ---- life cycle ---- */

static int rtpa_open(void *arg);

static int rtpa_start(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    struct xg_error err = {0};
    if (r->srtp.enabled && !r->srtp_tx) {
        int rc = xg_srtp_session_new(&r->srtp_tx, XG_SRTP_SEND, &r->srtp.local, &err);
        if (!rc) rc = xg_srtp_session_new(&r->srtp_rx, XG_SRTP_RECV, &r->srtp.remote, &err);
        if (rc) {
            XG_ERR(a->name, "srtp: %s", err.msg);
            return rc;
        }
    }
    return rtpa_bind_start(a, rtpa_open);
}

/* Open the socket on the (resolved) bind address and start the session. */
static int rtpa_open(void *arg)
{
    struct xg_adapter *a = arg;
    struct rtpa *r = a->priv;
    struct xg_error err = {0};
    struct xg_udp_endpoint_conf uc = {.bind = (struct sockaddr *)&r->bind.ss,
                                      .bind_len = r->bind.len,
                                      .iface = r->has_iface ? r->iface : NULL,
                                      .ttl = (int)r->ttl,
                                      .rcvbuf = XG_UDP_RCVBUF_DEFAULT};
    int fd = xg_udp_endpoint_open(&uc, &r->bound_port, &err);
    if (fd < 0) {
        XG_ERR(a->name, "%s", err.msg);
        return fd;
    }
    int ie = xg_udp_icmp_enable(fd, r->bind.ss.ss_family);
    if (ie < 0) XG_DEBUG(a->name, "IP_RECVERR: %s (ICMP unreachable not reported)", strerror(-ie));
    if (rtpa_rx_start(a, &r->rx, fd) < 0) return -ENOMEM;
    r->tick = xg_timer_new(a->base, tick_cb, a);
    if (!r->tick) return -ENOMEM;
    int rc = rtpa_group_open(a);
    if (rc) return rc;
    rtp_session_start(&r->sess, xg_clock_mono_ns());
    rtpa_arm(a);
    rtpa_dests_start(a); /* names: resolved without blocking, sent to once they resolve */
    char dests[256] = "";
    for (int i = 0; i < r->dests.n; i++)
        snprintf(dests + strlen(dests), sizeof dests - strlen(dests), "%s%s", i ? ", " : "",
                 r->dests.d[i].str);
    char bs[64];
    xg_net_addr_str((struct sockaddr *)&r->bind.ss, bs, sizeof bs);
    XG_INFO(a->name,
            "RTP game state on %s (port %u, RTCP muxed), SSRC %08x, PT %d, frame %s, sending to %s "
            "at %g Hz, refresh %lld ms",
            bs, r->bound_port, r->ssrc, r->pt, a->frame->name,
            r->dests.n ? dests : "nobody (receive only)", a->rate_hz, (long long)r->refresh_ms);
    if (r->srtp.enabled)
        XG_INFO(a->name,
                "SRTP %s: sending with key file '%s', receiving with '%s'%s; packets packed to %zu "
                "bytes (mtu %lld)",
                xg_srtp_suite_name(r->srtp.suite), r->srtp.key_path, r->srtp.remote_key_path,
                r->srtp.shared_key ? " (one key for both directions: use one key per sender)" : "",
                r->pack_len, (long long)r->mtu);
    return 0;
}

static void rtpa_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct rtpa *r = a->priv;
    /* unreachable: a destination answered "port unreachable" in the last 2 s */
    bool unreachable = r->unreachable_ns && xg_clock_mono_ns() - r->unreachable_ns < 2000000000LL;
    st->state = r->rx.fd < 0      ? "stopped"
                : unreachable     ? "unreachable"
                : r->sess.n_ssrcs ? "streaming"
                                  : "listening";
    char bs[64];
    struct sockaddr_storage ss = r->bind.ss;
    if (r->bound_port) {
        if (ss.ss_family == AF_INET) ((struct sockaddr_in *)&ss)->sin_port = htons(r->bound_port);
        if (ss.ss_family == AF_INET6)
            ((struct sockaddr_in6 *)&ss)->sin6_port = htons(r->bound_port);
    }
    xg_net_addr_str((struct sockaddr *)&ss, bs, sizeof bs);
    int n = snprintf(st->peer, sizeof st->peer, "%s ->", bs);
    for (int i = 0; i < r->dests.n && n > 0 && (size_t)n < sizeof st->peer; i++)
        n += snprintf(st->peer + n, sizeof st->peer - (size_t)n, "%s%s%s", i ? "," : " ",
                      r->dests.d[i].str, r->dests.d[i].active ? "" : " (unresolved)");
    /* Plain RTP has 34 counters, SRTP 38 (XG_STATUS_MAX_COUNTERS is 40). Were that limit below
     * 36, the 4 SRTP counters would replace drop_truncated and drop_bad_version, which cannot move
     * then (the SRTP check counts such packets as drop_srtp_malformed first), and the diagnostics
     * full_states_coalesced and gse_tags_in. */
    bool srtp = r->srtp.enabled;
    bool all = !srtp || XG_STATUS_MAX_COUNTERS >= 36;
    xg_status_id(st, "port", r->bound_port);
    xg_status_id(st, "ssrc", r->ssrc);
    xg_status_counter(st, "packets_out", (double)r->packets_out);
    xg_status_counter(st, "objects_out", (double)r->objects_out);
    xg_status_counter(st, "full_states", (double)r->full_states);
    if (all) xg_status_counter(st, "full_states_coalesced", (double)r->sess.coalesced);
    xg_status_counter(st, "packets_in", (double)r->sess.packets_in);
    xg_status_counter(st, "objects_in", (double)r->objects_in);
    xg_status_counter(st, "firs_in", (double)r->sess.firs_in);
    xg_status_counter(st, "plis_in", (double)r->sess.plis_in);
    xg_status_counter(st, "firs_out", (double)r->sess.firs_out);
    xg_status_gauge(st, "ssrcs", (double)r->sess.n_ssrcs);
    xg_status_counter(st, "ssrc_timeouts", (double)r->sess.ssrc_timeouts);
    xg_status_gauge(st, "ingress_objects", (double)r->n_objs);
    xg_status_gauge(st, "egress_ids", (double)r->oids.n);
    if (all) xg_status_counter(st, "gse_tags_in", (double)r->sess.gse_tags); /* D1: 3-byte tags */
    for (int i = 0; i < R_COUNT; i++) {
        if (i >= R_SRTP_AUTH && !srtp) continue;
        if ((i == R_TRUNCATED || i == R_VERSION) && !all) continue;
        xg_status_counter(st, reason_names[i], (double)r->reasons[i]);
    }
    /* SRTP failures that are not the peer's: protect errors (packet not sent), key usage limit */
    if (srtp)
        xg_status_counter(st, "srtp_errors", (double)(r->srtp_send_errors + r->srtp_other_errors));
    /* ICMP destination/port unreachable for packets sent (core/net/udp_endpoint.h) */
    xg_status_counter(st, "dest_unreachable", (double)r->dest_unreachable);
    xg_status_counter(st, "controls_not_carried", (double)r->controls.not_carried);
    xg_status_counter(st, "udp_sends", (double)r->ubatch.calls); /* sendmmsg calls (send_flush) */
    /* sequence accounting over every sender (RFC 3550 A.3) and SSRC collisions (§8.2) */
    xg_status_counter(st, "packets_lost", (double)rtp_session_lost(&r->sess));
    xg_status_counter(st, "packets_reordered", (double)rtp_session_reordered(&r->sess));
    xg_status_counter(st, "ssrc_collisions", (double)r->sess.collisions);
    rtpa_dests_status(r, st);          /* host names: their resolution */
    xg_ingress_status(&r->budget, st); /* rx_wakes, rx_yields (core/net/ingress_budget.h) */
}

static void rtpa_stop(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    if (!r) return;
    rtp_session_stop(&r->sess, xg_clock_mono_ns()); /* BYE (compound) when we sent RTP */
    /* the BYE above was the last packet protected: the sessions (and their key copies) go */
    xg_srtp_session_free(r->srtp_tx);
    xg_srtp_session_free(r->srtp_rx);
    r->srtp_tx = r->srtp_rx = NULL;
    xg_udp_rx_close(&r->rx);
    xg_timer_free(r->tick);
    r->tick = NULL;
    rtpa_group_close(r);
    rtpa_resolvers_stop(a);
}

static void rtpa_destroy(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    if (!r) return;
    rtpa_stop(a);
    xg_table_sink_slots_clear(a->table, a->index); /* they point into r->oids */
    rtp_session_free(&r->sess);
    rtp_oids_free(&r->oids);
    xg_srtp_conf_wipe(&r->srtp);
    free(r->pkt);
    xg_udp_batch_free(&r->ubatch);
    free(r);
    a->priv = NULL;
}

/* An entity left the table: its egress object ID goes (rtp_oids.h). */
static void rtpa_entity_event(struct xg_adapter *a, const struct xg_entity *e, bool added)
{
    struct rtpa *r = a->priv;
    if (added || !r) return;
    uint64_t *cached = xg_table_sink_slot(a->table, a->index, e);
    if (cached) *cached = 0; /* the object ID it points to goes now */
    rtp_oids_remove(&r->oids, xg_entity_name(e));
}

const struct xg_adapter_ops xg_rtp_ops = {
    .type = "rtp",
    .is_sink = true,
    .default_rate_hz = 90.0,
    .default_frame = "gamestate-lh",
    .create = rtpa_create,
    .start = rtpa_start,
    .drain = rtpa_drain,
    .status = rtpa_status,
    .stop = rtpa_stop,
    .destroy = rtpa_destroy,
    .sdp = rtpa_sdp,
    .entity_event = rtpa_entity_event,
};
