/* `less` adapter: LESS peers over TCP (client or server, optionally TLS) and UDP (ack window).
 *
 * Wire rules: draft-ietf-mmox-less-protocol-00 with the xrgate LESS profile (cited "P<n>", see
 * less_codec.h; documented in docs/adapters/less.md).
 * Codec: less_codec.h. Session (socket-free protocol state of one peer): less_session.h with
 * less_session.c (receiving), less_send.c (sending) and less_session_udp.c (acks, re-sends). This
 * file holds the glue (peers = a session + its socket, the session events, TCP sending, the hub,
 * start/stop/status); less_imap.c the id maps; less_tcp.c TCP/TLS; less_udp.c the UDP socket;
 * less_conf.c the configuration.
 *
 * Session (per peer): each side sends connection-control (P5) first, then introduces its pose
 * type (`urn:xrgate:lods:pose:1`, typeid 1); we subscribe to every pose-compatible type the peer
 * introduces (all properties); once the peer subscribes to our type we introduce every entity
 * of the table (split horizon and include/exclude applied by the table) and then update them at
 * rate_hz with poses predicted to the send time; expired/removed entities get remove-entity.
 * request-entity → a fresh introduce-entity; method-invocation / tweak-entity on an entity we
 * relay → method-result 403 (we own no entity; tweaks carry no request id, xrgate answers with
 * request-id -1), on an id we never introduced → 404 (P17).
 *
 * Federation: the `origin` property carries "<gateway id>/<adapter>" of the gateway that first
 * saw the entity; received entities keep it in the table (xg_entity_key.origin_gateway) and an
 * entity is never sent to the peer whose gateway it came from. Our connection-control schema
 * string is "xrgate/<version> gateway=<id>", which tells the peer our gateway id; entities whose
 * origin gateway is our own id are ignored on receipt. Entity ids are renumbered per direction.
 *
 * A listen adapter is also a hub: entities from one of its peers go to its other peers (the
 * table's split horizon is per adapter, so the adapter relays them itself).
 *
 * Errors: a framing/logical error or a bad signature on TCP closes that session with one log
 * line naming the peer, message, field and value; connect mode's resolution, connect, TLS,
 * backoff and state are a core/net/transport_client.h client (a session exists only once
 * connected). On
 * UDP bad packets are dropped and counted (P14).
 *
 * Config keys: mode (connect | listen | udp), connect / listen / bind (+ peer) addresses,
 * key_file + key_id, keys [{id, file}] (rotation: any key verifies, key_id signs), signature
 * (hmac-sha256-64 | none; none off loopback needs tls or insecure: true), tls {cert, key, ca,
 * verify, server_name}, schemas [mapping files], max_peers (16), max_packet (1 MiB),
 * max_output_bytes (4 MiB), slow_timeout_ms (2000), mtu (1200). Relative paths are relative to the
 * config file. Listen mode is a core/net/transport_server.h listener (max_peers, TLS, read cap)
 * with the slow-client policy of every TCP server: while a peer's unsent output is above
 * max_output_bytes its updates are skipped (introduces and removes are not), and once it drains
 * it gets the newest state of each entity it missed, once; above the bound for slow_timeout_ms,
 * or past 2x it at a write, it is dropped. Connect mode drops a peer above max_output_bytes. */
/* Shared declarations: less_adapter_priv.h (less_adapter_io.h: the libevent callbacks). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/transport.h"
#include "adapters/less/less_adapter_io.h"
#include "adapters/less/less_adapter_priv.h"
#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "adapters/less/less_mapping.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/table/egress_controls.h"
#include "core/util/log.h"
#include "core/table/names.h"
#include "core/net/net.h"
#include "core/conf/path.h"
#include "core/net/tls.h"
#include "core/net/transport_client.h"
#include "mappings/frame.h"

static const char *gw_id_of(const struct xg_adapter *a)
{
    return a->gateway_id && a->gateway_id[0] ? a->gateway_id : "xrgate";
}

/* Send the pending messages as one packet (TCP). */
int less_peer_flush(struct less_peer *p)
{
    struct less_adapter *la = p->la;
    if (p->s.closing) return -EPIPE;
    if (la->env.mode == LESS_MODE_UDP) return less_udp_flush(p, false);
    if (!p->s.msg_count || !p->bev) return 0;
    const uint8_t *pkt;
    size_t len;
    int rc = less_session_tcp_packet(&p->s, xg_clock_mono_ns(), &pkt, &len);
    if (rc <= 0) return rc;
    if (la->ts) { /* listen mode: the transport's hard bound (2x max_output_bytes) */
        int wrc = xg_tserver_write(la->ts, p->bev, p->s.addr, pkt, len);
        if (wrc < 0) {
            la->env.a->drops += wrc == -ENOBUFS;
            la->env.a->errors += wrc != -ENOBUFS;
            less_peer_close(p, wrc == -ENOBUFS ? NULL : "write failed; closing");
            return wrc;
        }
    } else if ((int64_t)xg_tcp_unsent(p->bev) > la->max_output) {
        la->env.slow_peer_drops++;
        la->env.a->drops++;
        XG_WARN_PEER(&la->env.lim_closed, la->env.a->name,
                     "peer %s: output buffer over %" PRId64 " bytes (slow peer); closing",
                     p->s.addr, la->max_output);
        less_peer_close(p, NULL);
        return -ENOBUFS;
    } else
        xg_tcp_write(p->bev, pkt, len);
    xg_tserver_flush(p->bev); /* to the kernel now, before the next sink drains (not TLS) */
    la->env.packets_out++;
    return 0;
}

struct visit_ctx {
    struct less_adapter *la;
    struct less_peer *only; /* full refresh for one peer */
    bool introduce;
};

static int visit(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct visit_ctx *vc = user;
    if (vc->la->peers) xg_egress_controls_check(&vc->la->controls, vc->la->env.a->name, e);
    for (struct less_peer *p = vc->la->peers; p; p = p->next) {
        if (vc->only && p != vc->only) continue;
        if (!less_session_ready(&p->s)) continue;
        if (less_echo_toward(&p->s, e)) {
            vc->la->env.echo_suppressed++;
            continue;
        }
        less_send_entity(&p->s, e, pose, vc->introduce);
    }
    return 0;
}

/* ---- hub: the peers of one listen adapter see each other's entities ----
 * The table never gives an adapter its own entities back (split horizon per adapter), so the
 * adapter relays between its peers itself: an entity introduced by peer P goes to every other
 * peer (never back to P, nor toward the gateway it came from). */

void less_hub_relay(struct less_adapter *la, struct less_peer *only)
{
    if (la->env.mode != LESS_MODE_LISTEN || la->n_peers < 2) return;
    int64_t now = xg_clock_mono_ns();
    for (struct less_peer *p = la->peers; p; p = p->next) {
        if (p->s.closing) continue;
        for (size_t i = 0; i < p->s.n_in; i++) {
            struct less_in_ent *ie = &p->s.in[i];
            if (!ie->table_id || ie->ignored || ie->dup_of || (!only && !ie->dirty)) continue;
            if (!only) ie->dirty = false;
            const struct xg_entity *e = xg_table_get(la->env.a->table, ie->table_id);
            if (!e) continue;
            struct xg_pose pose;
            bool predicted = false;
            for (struct less_peer *q = la->peers; q; q = q->next) {
                if (q == p || (only && q != only) || !less_session_ready(&q->s)) continue;
                if (less_echo_toward(&q->s, e)) continue;
                if (!predicted) {
                    xg_entity_predict_at(la->env.a->table, e, now, &pose);
                    predicted = true;
                }
                less_send_entity(&q->s, e, &pose, false);
                la->env.hub_relayed++;
            }
        }
    }
}

/* Entities that left the table without an entity_event to us (our own peers' entities expire
 * or go with their session): remove-entity to the peers that had them. */
static void sweep_gone(struct less_adapter *la)
{
    for (struct less_peer *q = la->peers; q; q = q->next) {
        struct less_session *s = &q->s;
        if (s->closing) continue;
        for (size_t i = s->n_out; i-- > 0;) {
            if (xg_table_get(la->env.a->table, s->out[i].table_id)) continue;
            struct less_msg m = {.code = LESS_MSG_REMOVE_ENTITY};
            m.u.remove_entity.entity_id = s->out[i].wire_id;
            if (less_session_ready(s)) less_queue_msg(s, &m);
            less_out_del(s, s->out[i].table_id);
            la->env.entities_removed++;
        }
    }
}

void less_full_refresh(struct less_peer *p)
{
    struct less_adapter *la = p->la;
    struct visit_ctx vc = {la, p, false};
    xg_table_foreach(la->env.a->table, la->env.a->index, xg_clock_mono_ns(), visit, &vc);
    less_hub_relay(la, p);
    less_peer_flush(p);
}

/* ---- peers ---- */

/* The session's events (less_session_events) */
static void peer_up(void *user)
{
    struct less_peer *p = user;
    if (p->bev) xg_tcp_read_timeout(p->bev, 0); /* the handshake timeout is over */
    if (p->la->tc) xg_tclient_streaming(p->la->tc);
}

static void peer_subscribed(void *user)
{
    less_full_refresh(user);
}

static void peer_flush_event(void *user)
{
    less_peer_flush(user);
}

struct less_peer *less_peer_new(struct less_adapter *la, const char *addr)
{
    struct less_peer *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    struct less_session_events ev = {.user = p,
                                     .up = peer_up,
                                     .subscribed = peer_subscribed,
                                     .flush = peer_flush_event,
                                     .datagram = less_udp_datagram};
    p->la = la;
    less_session_init(&p->s, &la->env, addr, &ev);
    p->next = la->peers;
    la->peers = p;
    la->n_peers++;
    return p;
}

static void peer_free(struct less_peer *p)
{
    struct less_adapter *la = p->la;
    for (struct less_peer **pp = &la->peers; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            la->n_peers--;
            break;
        }
    if (p->bev) xg_tcp_free(p->bev);
    less_session_free(&p->s); /* the peer's entities go away with it */
    free(p);
}

/* Close a session: log, stop its I/O now, free it from the reactor (callers may still hold p). */
void less_peer_close(struct less_peer *p, const char *why)
{
    struct less_adapter *la = p->la;
    if (p->s.closing) return;
    if (why) XG_WARN_PEER(&la->env.lim_closed, la->env.a->name, "peer %s: %s", p->s.addr, why);
    snprintf(la->closed_why, sizeof la->closed_why, "peer %s: %s", p->s.addr, why ? why : "closed");
    p->s.closing = true;
    if (p->bev) xg_tcp_pause(p->bev, true);
    xg_timer_activate(la->sweep);
}

static void sweep_cb(void *arg)
{
    struct less_adapter *la = arg;
    bool reconnect = false;
    for (struct less_peer *p = la->peers, *next; p; p = next) {
        next = p->next;
        if (!p->s.closing) continue;
        peer_free(p);
        reconnect = true;
    }
    if (reconnect && la->env.mode == LESS_MODE_CONNECT && !la->peers)
        xg_tclient_closed(la->tc, la->closed_why);
}

static int udp_open(void *arg);

static int less_start(struct xg_adapter *a)
{
    struct less_adapter *la = a->priv;
    struct xg_error err = {0};
    la->env.gw_id = gw_id_of(a);
    /* the session token lets a UDP peer tell our restart from a re-send of our first packet */
    uint64_t tok =
        (uint64_t)xg_clock_wall_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)la;
    snprintf(la->env.schema_str, sizeof la->env.schema_str,
             "xrgate/%s gateway=%s session=%016" PRIx64, XRGATE_VERSION, la->env.gw_id,
             tok * UINT64_C(0x9E3779B97F4A7C15));
    la->sweep = xg_timer_new(a->base, sweep_cb, la);
    if (!la->sweep) return -ENOMEM;
    int rc;
    if (la->env.mode == LESS_MODE_CONNECT) {
        char host[256];
        int port = 0;
        xg_net_split_hostport(la->target, host, sizeof host, &port, 0); /* checked by create */
        struct xg_tclient_conf tcc = {.component = a->name,
                                      .host = host[0] ? host : "127.0.0.1",
                                      .port = port,
                                      .connect_timeout_ns = LESS_HANDSHAKE_TIMEOUT_S * XG_NS_PER_S,
                                      .tls = la->tls,
                                      .server_name = la->server_name};
        struct xg_tclient_ops ops = {.connected = less_on_connected};
        la->tc = xg_tclient_new(a->base, &tcc, &ops, la);
        if (!la->tc) return -ENOMEM;
        XG_INFO(a->name, "LESS client to %s%s%s", la->target, la->tls ? " over TLS" : "",
                la->signature_none ? " (signature: none)" : "");
        xg_tclient_start(la->tc);
        return 0;
    }
    if (la->env.mode == LESS_MODE_LISTEN) {
        if (!la->ts) {
            struct xg_tserver_conf tsc = {.component = a->name,
                                          .listen = la->target,
                                          .noun = "peer",
                                          .cap_key = "max_peers",
                                          .max_clients = la->max_peers,
                                          .max_output = la->max_output,
                                          .slow_timeout_ms = la->slow_timeout_ms,
                                          .tls = la->tls};
            struct xg_tserver_ops ops = {.clients = less_peers_held, .accepted = less_accepted};
            if (!(la->ts = xg_tserver_new(a->base, &tsc, &ops, la))) return -ENOMEM;
        }
        if ((rc = xg_tserver_start(la->ts, &err)) < 0) {
            XG_ERR(a->name, "%s", err.msg);
            return rc;
        }
        snprintf(la->bound, sizeof la->bound, "%s", xg_tserver_bound(la->ts));
        la->state = "listening";
        XG_INFO(a->name, "LESS server listening on %s%s%s", la->bound, la->tls ? " (TLS)" : "",
                la->signature_none ? " (signature: none)" : "");
        return 0;
    }
    /* UDP: a bind name is resolved first without blocking; the socket opens once it resolves */
    return xg_udp_bind_start(&la->ubind, a->base, a->name, udp_open, la);
}

/* UDP mode: open the socket on the (resolved) bind address, the peer and the timers. */
static int udp_open(void *arg)
{
    struct less_adapter *la = arg;
    struct xg_adapter *a = la->env.a;
    struct xg_error err = {0};
    struct sockaddr_storage ss = la->ubind.ss;
    socklen_t len = la->ubind.len;
    int fd = xg_udp_bind_local((struct sockaddr *)&ss, len, &err);
    if (fd < 0) {
        XG_ERR(a->name, "bind: %s", err.msg);
        return fd;
    }
    if (xg_udp_rx_start(&la->udp, a->base, fd, 65536, less_udp_rx, la, &la->udp_budget))
        return -ENOMEM;
    xg_udp_batch_free(&la->ubatch);
    if (xg_udp_batch_init(&la->ubatch, (size_t)la->env.mtu) < 0) return -ENOMEM;
    struct sockaddr_storage b;
    socklen_t bl = sizeof b;
    if (getsockname(la->udp.fd, (struct sockaddr *)&b, &bl) == 0)
        xg_net_addr_str((struct sockaddr *)&b, la->bound, sizeof la->bound);
    struct less_peer *p = less_peer_new(la, "?");
    if (!p) return -ENOMEM;
    if (la->udp_peer[0]) { /* resolved without blocking, retried with backoff until it does */
        char host[256];
        int port = 0;
        if (xg_net_split_hostport(la->udp_peer, host, sizeof host, &port, 0) < 0 || port <= 0) {
            XG_ERR(a->name, "peer: '%s' must be host:port", la->udp_peer);
            return -EINVAL;
        }
        struct xg_tclient_conf tcc = {.component = a->name,
                                      .host = host[0] ? host : "127.0.0.1",
                                      .port = port,
                                      .family = ss.ss_family};
        struct xg_tclient_ops ops = {.resolved = less_on_udp_peer};
        if (!la->tc && !(la->tc = xg_tclient_new(a->base, &tcc, &ops, la))) return -ENOMEM;
        la->udp_peer_fixed = true;
    }
    la->udp_timer = xg_timer_new(a->base, less_udp_timer_cb, la);
    if (!la->udp_timer || xg_timer_every(la->udp_timer, 20000)) return -ENOMEM;
    la->state = "streaming";
    XG_INFO(a->name, "LESS UDP on %s%s%s", la->bound, la->udp_peer[0] ? " peer " : "",
            la->udp_peer[0] ? la->udp_peer : " (peer: first authentic sender)");
    if (la->tc) xg_tclient_start(la->tc);
    return 0;
}

/* Listen mode, before a drain: the slow-client policy (core/net/transport_server.h) for each peer:
 * skip its updates this drain, or drop it. */
static void slow_peers(struct less_adapter *la, int64_t now)
{
    for (struct less_peer *p = la->peers; p; p = p->next) {
        p->s.skip = false;
        if (!p->bev || !less_session_ready(&p->s)) continue;
        enum xg_slow_verdict v = xg_tserver_egress(la->ts, p->bev, p->s.addr, &p->slow_since, now);
        p->s.skip = v == XG_SLOW_SKIP;
        if (v != XG_SLOW_SEND && v != XG_SLOW_SKIP) {
            la->env.a->drops++;
            less_peer_close(p, NULL); /* logged by the transport */
        }
    }
}

/* Listen mode, after a drain: a peer no longer skipped gets the newest state of each entity
 * whose updates it missed, once. */
static void catch_up(struct less_adapter *la, int64_t now)
{
    for (struct less_peer *p = la->peers; p; p = p->next) {
        struct less_session *s = &p->s;
        if (s->skip || !s->any_pending || !less_session_ready(s)) continue;
        s->any_pending = false;
        for (size_t i = 0; i < s->n_out; i++) {
            if (!s->out[i].pending) continue;
            s->out[i].pending = false;
            const struct xg_entity *e = xg_table_get(la->env.a->table, s->out[i].table_id);
            struct xg_pose pose;
            if (!e) continue;
            xg_entity_predict_at(la->env.a->table, e, now, &pose);
            less_send_entity(s, e, &pose, false); /* an existing entry: s->out is not reallocated */
        }
    }
}

static void less_drain(struct xg_adapter *a)
{
    struct less_adapter *la = a->priv;
    struct visit_ctx vc = {la, NULL, false};
    int64_t now = xg_clock_mono_ns();
    if (la->ts) slow_peers(la, now);
    xg_table_drain(a->table, a->index, now, visit, &vc);
    less_hub_relay(la, NULL);
    if (la->ts) catch_up(la, now);
    sweep_gone(la);
    for (struct less_peer *p = la->peers, *next; p; p = next) {
        next = p->next;
        less_peer_flush(p);
    }
}

static void less_entity_event(struct xg_adapter *a, const struct xg_entity *e, bool added)
{
    struct less_adapter *la = a->priv;
    if (added || !la) return;
    for (struct less_peer *p = la->peers, *next; p; p = next) {
        next = p->next;
        struct less_out_ent *o = less_out_find(&p->s, xg_entity_id(e));
        if (!o) continue;
        struct less_msg m = {.code = LESS_MSG_REMOVE_ENTITY};
        m.u.remove_entity.entity_id = o->wire_id;
        if (less_session_ready(&p->s)) less_queue_msg(&p->s, &m);
        less_out_del(&p->s, xg_entity_id(e));
        la->env.entities_removed++;
        less_peer_flush(p);
    }
}

static void less_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct less_adapter *la = a->priv;
    st->state = la->state;
    if (la->tc) xg_tclient_status(&la->tc, 1, st); /* connect mode; UDP mode's peer by name */
    if (la->env.mode == LESS_MODE_UDP) less_udp_bind_status(la, st); /* a bind by name: its DNS */
    size_t off = 0;
    if (la->env.mode == LESS_MODE_LISTEN || la->env.mode == LESS_MODE_UDP)
        off += (size_t)snprintf(st->peer, sizeof st->peer, "%s", la->bound);
    for (const struct less_peer *p = la->peers; p && off < sizeof st->peer; p = p->next) {
        if (la->env.mode == LESS_MODE_UDP && !p->sslen) continue;
        off += (size_t)snprintf(st->peer + off, sizeof st->peer - off, "%s%s", off ? " " : "",
                                p->s.addr);
    }
    if (la->tc && !la->peers) snprintf(st->peer, sizeof st->peer, "%s", xg_tclient_peer(la->tc));
    xg_status_gauge(st, "peers", la->n_peers);
    xg_status_counter(st, "packets_in", (double)la->env.packets_in);
    if (la->env.mode == LESS_MODE_UDP) xg_ingress_status(&la->udp_budget, st);
    xg_status_counter(st, "packets_out", (double)la->env.packets_out);
    xg_status_counter(st, "controls_not_carried", (double)la->controls.not_carried);
    xg_status_counter(st, "bad_signature", (double)la->env.bad_signature);
    xg_status_counter(st, "framing_errors", (double)la->env.framing_errors);
    if (!la->tc) xg_status_counter(st, "reconnects", 0); /* (connect mode: the transport's) */
    xg_status_counter(st, "refused_peers", (double)xg_tserver_refused(la->ts));
    xg_status_counter(st, "slow_peer_drops",
                      (double)(la->env.slow_peer_drops + xg_tserver_dropped_slow(la->ts)));
    if (la->ts) { /* listen mode: the counters of every TCP server adapter */
        xg_tserver_status(la->ts, st);
        xg_status_counter(st, "updates_skipped", (double)la->env.updates_skipped);
        xg_status_counter(st, "updates_coalesced", (double)la->env.updates_coalesced);
    }
    xg_status_counter(st, "echo_suppressed", (double)la->env.echo_suppressed);
    xg_status_counter(st, "stale_packets", (double)la->env.stale_packets);
    xg_status_counter(st, "duplicates", (double)la->env.duplicates);
    xg_status_counter(st, "resends", (double)la->env.resends);
    if (la->env.mode == LESS_MODE_UDP) /* sendmmsg calls (less_udp.c less_udp_flush) */
        xg_status_counter(st, "udp_sends", (double)la->ubatch.calls);
    xg_status_counter(st, "mesh_duplicates", (double)la->env.duplicates_ignored);
    xg_status_counter(st, "window_full", (double)la->env.window_full);
    xg_status_counter(st, "hub_relayed", (double)la->env.hub_relayed);
    xg_status_counter(st, "refused_403", (double)la->env.refused_403);
    xg_status_counter(st, "not_found_404", (double)la->env.not_found_404);
    xg_status_counter(st, "entities_introduced", (double)la->env.entities_introduced);
    xg_status_counter(st, "entities_removed", (double)la->env.entities_removed);
    xg_status_counter(st, "unknown_requests", (double)la->env.unknown_requests);
    if (la->env.mode == LESS_MODE_UDP)
        xg_status_counter(st, "peer_restarts", (double)la->env.peer_restarts);
}

static void less_stop(struct xg_adapter *a)
{
    struct less_adapter *la = a->priv;
    if (!la) return;
    xg_tclient_stop(la->tc);
    xg_udp_bind_stop(&la->ubind);
    xg_timer_free(la->sweep);
    la->sweep = NULL;
    while (la->peers)
        peer_free(la->peers);
    xg_tserver_stop(la->ts);
    xg_timer_free(la->udp_timer);
    la->udp_timer = NULL;
    xg_udp_rx_close(&la->udp);
    xg_udp_batch_free(&la->ubatch);
    la->state = "stopped";
}

static void less_destroy(struct xg_adapter *a)
{
    struct less_adapter *la = a->priv;
    if (!la) return;
    less_stop(a);
    xg_tclient_free(la->tc);
    xg_tserver_free(la->ts);
    xg_tls_ctx_free(la->tls);
    for (size_t i = 0; i < la->env.n_mappings; i++)
        less_mapping_free(la->env.mappings[i]);
    free(la->env.mappings);
    free(la->env.arena_buf);
    free(la->env.pktbuf);
    free(la);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_less_ops = {
    .type = "less",
    .is_sink = true,
    .whole_frames = true, /* one frame per drain: not sliced (core/table/egress_pass.h) */
    .create = less_create,
    .start = less_start,
    .drain = less_drain,
    .status = less_status,
    .stop = less_stop,
    .destroy = less_destroy,
    .entity_event = less_entity_event,
};
