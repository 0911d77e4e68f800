/* `vrpn-server` adapter: serves the entity table to VRPN clients as trackers (wire-rules.md §4–§8),
 * in TCP-only and UDP+TCP modes, byte-compatible with mainline VRPN 07.38's vrpn_server.
 *
 * Config keys: listen ("0.0.0.0:3883": TCP listen socket and UDP connection-request socket on the
 * same address and port), max_clients (64, both modes together), max_output_bytes (256 KiB: while
 * a client's unsent TCP output is above it, reports for it are skipped (counted per report) and
 * once it drains it gets the newest pose of each sensor it missed, once: never a pose it already
 * has; skipped reports superseded meanwhile are counted as coalesced; a client that stays above it
 * for slow_timeout_ms (2000), or whose output passes 2x the bound, is dropped and counted; so a
 * client costs at most 2x the bound plus one tick: the slow-client policy of every TCP server,
 * core/net/transport_server.h, which also owns the listener and the client cap),
 * handshake_timeout_ms (10000: a session must be streaming this long after it was accepted or its
 * call-back started, else it is closed and counted: a pending call-back or a client trickling its
 * cookie holds a slot no longer), tracker_name (template, "{origin}"), trackers (list of {match:
 * GLOB, tracker: TEMPLATE, sensor: N}: the first rule whose glob matches the entity name decides
 * the tracker and optionally a fixed sensor number), send_velocity (false), send_all (false: each
 * tick sends the sensors updated since the last one; true: every sensor every tick), plus the sink
 * keys rate_hz / include / exclude and frame (default identity: the internal Y-up frame; Z-up
 * clients want `frame: vrpn-zup`). Templates (core/table/names.h, the one engine): {origin} =
 * {adapter} = the name of the entity's origin adapter, {source} = the name past "<adapter>/",
 * {kind} = the entity kind, {name} = the whole entity name.
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
 * the trackers) + TYPE_DESCRIPTIONs (vrpn_std_types[]: ids 0..17 exactly as the stock vrpn_server
 * describes them for a tracker, then the analog, button and dial types as a mainline client
 * registers them, and "vrpn_Button Alert"), a Button States per tracker with buttons, then on
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
 * goes through a rate limiter per kind (core/util/log.h). */

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
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/table/names.h"
#include "core/net/net.h"
#include "mappings/frame.h"

/* ---- ops ---- */

static int server_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct vrpn_server *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    a->priv = s;
    s->lob.fd = -1;
    s->members_dirty = true;
    if (vrpn_names_init(&s->names, DEPARTED_MAX) < 0) return -ENOMEM;
    if (xg_udp_batch_init(&s->ubatch, VRPN_UDP_MAX) < 0) return -ENOMEM;
    return vrpn_srv_conf_read(a, s, conf, err);
}

static int server_start(struct xg_adapter *a)
{
    struct vrpn_server *s = a->priv;
    struct xg_error err = {0};
    if (!s->ts) {
        struct xg_tserver_conf tsc = {.component = a->name,
                                      .listen = s->listen,
                                      .default_port = 3883,
                                      .max_clients = s->max_clients,
                                      .max_output = s->max_output,
                                      .slow_timeout_ms = s->slow_timeout_ms};
        struct xg_tserver_ops ops = {.clients = vrpn_srv_clients, .accepted = vrpn_srv_accepted};
        if (!(s->ts = xg_tserver_new(a->base, &tsc, &ops, a))) return -ENOMEM;
    }
    /* port 0: any free TCP port whose UDP port is free too */
    char host[256];
    int port = 3883, rc = 0, fd = -1;
    bool any_port =
        xg_net_split_hostport(s->listen, host, sizeof host, &port, 3883) == 0 && port == 0;
    for (int attempt = 0; attempt < (any_port ? 20 : 1); attempt++) {
        if ((rc = xg_tserver_start(s->ts, &err)) < 0) {
            XG_ERR(a->name, "%s (TCP)", err.msg);
            return rc;
        }
        socklen_t bl;
        const struct sockaddr *b = xg_tserver_addr(s->ts, &bl);
        fd = xg_udp_bind_local(b, bl, &err);
        if (fd >= 0) {
            snprintf(s->bound, sizeof s->bound, "%s", xg_tserver_bound(s->ts));
            memcpy(&s->bound_ss, b, bl < sizeof s->bound_ss ? bl : sizeof s->bound_ss);
            break;
        }
        xg_tserver_stop(s->ts);
    }
    if (fd < 0) {
        XG_ERR(a->name, "cannot listen on %s (UDP): %s", s->listen, err.msg);
        return -EADDRINUSE;
    }
    s->lob.flags = MSG_TRUNC; /* an oversize request is known by its length */
    if (xg_udp_rx_start(&s->lob, a->base, fd, VRPN_LOB_MAX + 64, vrpn_srv_lob_datagram, a,
                        &s->lob_budget) < 0)
        return -ENOMEM;
    XG_INFO(a->name, "VRPN server listening on %s (TCP and UDP), frame %s", s->bound,
            a->frame->name);
    return 0;
}

static void server_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct vrpn_server *s = a->priv;
    st->state = xg_tserver_listening(s->ts) ? "listening" : "stopped";
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
    xg_tserver_status(s->ts, st); /* clients_accepted/refused/dropped_slow, drains_skipped */
    xg_status_counter(st, "callbacks", (double)s->callbacks);
    xg_status_counter(st, "callback_failures", (double)s->callback_failures);
    xg_status_counter(st, "bad_input", (double)s->bad_input);
    xg_status_counter(st, "requests_rejected", (double)s->lob_rejected);
    xg_status_counter(st, "requests_duplicate", (double)s->lob_duplicates);
    xg_status_counter(st, "requests_self", (double)s->lob_self);
    xg_status_counter(st, "requests_not_numeric", (double)s->lob_names);
    xg_status_counter(st, "reports_tcp", (double)s->reports_tcp);
    xg_status_counter(st, "reports_udp", (double)s->reports_udp);
    xg_status_counter(st, "reports_skipped", (double)s->reports_skipped);
    xg_status_counter(st, "reports_coalesced", (double)s->reports_coalesced);
    xg_status_counter(st, "datagrams", (double)s->ubatch.datagrams);
    xg_status_counter(st, "udp_sends", (double)s->ubatch.calls);
    xg_status_counter(st, "udp_errors", (double)s->ubatch.errors);
    xg_status_counter(st, "pongs", (double)s->pongs);
    xg_status_counter(st, "bytes_out", (double)(xg_tserver_bytes_out(s->ts) + s->ubatch.bytes));
}

static void server_stop(struct xg_adapter *a)
{
    struct vrpn_server *s = a->priv;
    if (!s) return;
    xg_tserver_stop(s->ts);
    xg_udp_rx_close(&s->lob);
    while (s->conns)
        vrpn_srv_conn_free(s, s->conns);
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
    xg_table_sink_slots_clear(a->table, a->index); /* indices into s->names */
    vrpn_names_free(&s->names);
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
    xg_tserver_free(s->ts);
    free(s);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_vrpn_server_ops = {
    .type = "vrpn-server",
    .is_sink = true,
    .create = server_create,
    .start = server_start,
    .drain = vrpn_srv_drain,
    .status = server_status,
    .stop = server_stop,
    .destroy = server_destroy,
    .entity_event = vrpn_srv_entity_event,
};
