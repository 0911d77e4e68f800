/* `vmc` adapter: OSC pose streams over UDP — the VMC protocol in (performers such as VSeeFace,
 * Warudo, Virtual Motion Capture, ALVR), VMC or Virtual Motion Tracker (VMT) out (issue 21).
 * One UDP socket for both directions (vmc.h: vmc_ingress.c, vmc_egress.c).
 *
 * Config keys (besides the common name/type/frame/rename/rate_hz/include/exclude):
 *   profile: vmc | vmt          egress format (default vmc)
 *   bind: "host:port"           where VMC senders reach us (default "0.0.0.0:39539"); egress is
 *                               sent from this socket too; a host name is resolved at start
 *                               without blocking, the socket opens once it resolves
 *   destinations: [host:port]   where egress goes (default none: receive only); host names
 *                               resolve at start without blocking (core/net/udp_dests.h), each
 *                               inactive until its name resolves
 *   mtu: 1200                   largest datagram we send (256..65507)
 *   max_bundle_depth: 8         nested OSC bundles accepted (1..64)
 *   max_devices: 64             hmd/con/tra entities of this adapter alive at once (1..4096)
 *   skeleton: "take/"           profile vmc: the entity-name prefix of the bones
 *                               (default: the prefix of the first ".../Hips" entity seen)
 *   bones: {LeftUpperLeg: LeftUpLeg, ...}   profile vmc: HumanBodyBones name -> the last segment
 *                               of the entity names that carry it (default: the bone's own name)
 *   trackers: [{match: glob, index: N}]   profile vmt: fixed tracker indices (0..57)
 * frame defaults to the preset `unity` (left-handed, Y up, metres) when `frame:` is absent (the
 * default_frame of xg_vmc_ops, applied by the gateway). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/transport.h"
#include "adapters/vmc/vmc.h"
#include "adapters/vmc/vmc_adapter_priv.h"
#include "core/clock/clock.h"
#include "core/net/ingress_budget.h"
#include "core/net/net.h"
#include "core/net/resolve.h"
#include "core/net/udp_dests.h"
#include "core/net/timer.h"
#include "core/net/udp_endpoint.h"
#include "mappings/frame.h"

#define VMC_RBUF 65536

static int vmca_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct vmca *r = calloc(1, sizeof *r);
    if (!r) return -ENOMEM;
    a->priv = r;
    r->rx.fd = -1;
    return vmc_conf_read(r, a, conf, err);
}

static void send_all(void *user, const uint8_t *buf, size_t len)
{
    struct xg_adapter *a = user;
    struct vmca *r = a->priv;
    for (int i = 0; i < r->dests.n; i++) {
        const struct xg_udp_dest *d = &r->dests.d[i];
        if (!d->active) continue; /* a name not resolved (yet) gets nothing */
        int e = -xg_udp_send(r->rx.fd, buf, len, (const struct sockaddr *)&d->ss, d->len, false);
        if (e) {
            r->send_errors++;
            a->errors++;
            if (r->send_errors == 1 || r->send_errors % 1000 == 0)
                XG_WARN(a->name, "send to %s: %s (%llu send errors)", d->str, strerror(e),
                        (unsigned long long)r->send_errors);
        }
    }
}

/* One datagram (core/net/udp_endpoint.h reads them while the budget lasts: OSC messages and bytes;
 * the rest waits for the next pass of the loop). Its cost: the messages read and the malformed
 * elements rejected. */
static int rx_datagram(void *arg, uint8_t *p, size_t n, const struct sockaddr *from,
                       socklen_t from_len)
{
    struct xg_adapter *a = arg;
    struct vmca *r = a->priv;
    (void)from_len;
    char peer[64];
    xg_net_addr_str(from, peer, sizeof peer);
    uint64_t work = r->in.messages + a->drops;
    vmc_ingress_datagram(&r->in, p, n, peer, xg_clock_mono_ns());
    return (int)(r->in.messages + a->drops - work);
}

static void sweep_cb(void *arg)
{
    struct xg_adapter *a = arg;
    struct vmca *r = a->priv;
    vmc_ingress_sweep(&r->in);
}

/* Open the socket on the (resolved) bind address and start resolving the destinations. */
static int open_socket(void *arg)
{
    struct xg_adapter *a = arg;
    struct vmca *r = a->priv;
    struct xg_error err = {0};
    struct xg_udp_endpoint_conf uc = {.bind = (struct sockaddr *)&r->bind.ss,
                                      .bind_len = r->bind.len,
                                      .ttl = -1,
                                      .rcvbuf = XG_UDP_RCVBUF_DEFAULT};
    int fd = xg_udp_endpoint_open(&uc, &r->bound_port, &err);
    if (fd < 0) {
        XG_ERR(a->name, "%s", err.msg);
        return fd;
    }
    if (xg_udp_rx_start(&r->rx, a->base, fd, VMC_RBUF, rx_datagram, a, &r->budget) < 0)
        return -ENOMEM;
    r->sweep = xg_timer_new(a->base, sweep_cb, a);
    if (!r->sweep || xg_timer_every(r->sweep, 1000000) < 0) return -ENOMEM;
    r->out.send = send_all;
    r->out.send_user = a;
    r->out.start_ns = xg_clock_mono_ns();
    /* names: resolved without blocking, sent to once they resolve */
    xg_udp_dests_start(&r->dests, a->base, a->name, r->bind.ss.ss_family);
    char dests[256];
    xg_udp_dests_str(&r->dests, ", ", false, dests, sizeof dests);
    char bs[64];
    xg_net_addr_str((struct sockaddr *)&r->bind.ss, bs, sizeof bs);
    XG_INFO(a->name, "OSC (VMC protocol in) on %s (port %u), frame %s, sending %s to %s at %g Hz",
            bs, r->bound_port, a->frame->name,
            r->out.profile == VMC_PROFILE_VMT ? "VMT /VMT/Room/Unity" : "VMC",
            r->dests.n ? dests : "nobody (receive only)", a->rate_hz);
    return 0;
}

static int vmca_start(struct xg_adapter *a)
{
    struct vmca *r = a->priv;
    /* a bind name is resolved first without blocking: the socket opens once it resolves */
    return xg_udp_bind_start(&r->bind, a->base, a->name, open_socket, a);
}

static void vmca_drain(struct xg_adapter *a)
{
    struct vmca *r = a->priv;
    if (r->rx.fd < 0 || !xg_udp_dests_active(&r->dests))
        r->out.send = NULL; /* the dirty set is only emptied */
    vmc_egress_drain(&r->out, xg_clock_mono_ns());
}

static void vmca_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct vmca *r = a->priv;
    const struct vmc_ingress *in = &r->in;
    const struct vmc_egress *out = &r->out;
    st->state = r->rx.fd >= 0 ? (in->datagrams ? "streaming" : "listening") : "stopped";
    char dests[sizeof st->peer];
    xg_udp_dests_str(&r->dests, ",", true, dests, sizeof dests);
    snprintf(st->peer, sizeof st->peer, "udp:%u ->%s%s", r->bound_port, r->dests.n ? " " : "",
             dests);
    xg_status_id(st, "port", r->bound_port);
    xg_status_counter(st, "datagrams_in", (double)in->datagrams);
    xg_status_counter(st, "messages_in", (double)in->messages);
    xg_status_counter(st, "bone_messages_in", (double)in->bone_msgs);
    xg_status_counter(st, "root_messages_in", (double)in->root_msgs);
    xg_status_counter(st, "device_messages_in", (double)in->device_msgs);
    xg_status_counter(st, "messages_ignored", (double)in->ignored);
    xg_status_gauge(st, "devices", (double)in->dev.n_used);
    xg_status_counter(st, "superseded", (double)in->superseded);
    xg_ingress_status(&r->budget, st);
    for (int i = 0; i < VMC_R_COUNT; i++)
        xg_status_counter(st, vmc_reason_names[i], (double)in->reasons[i]);
    xg_status_counter(st, "datagrams_out", (double)out->datagrams_out);
    xg_status_counter(st, "messages_out", (double)out->messages_out);
    xg_status_counter(st, "bones_out", (double)out->bones_out);
    xg_status_counter(st, "devices_out", (double)out->devices_out);
    xg_status_counter(st, "trackers_out", (double)out->trackers_out);
    xg_status_counter(st, "vmt_no_index", (double)out->no_index);
    xg_status_counter(st, "oversize", (double)out->oversize);
    xg_status_counter(st, "send_errors", (double)r->send_errors);
    xg_status_counter(st, "controls_not_carried", (double)out->controls.not_carried);
    /* host names: their resolution (destinations_unresolved, dns_failures, last_error) */
    xg_udp_dests_status(&r->dests, r->bind.res, xg_udp_bind_named(&r->bind), st);
    st->state = xg_udp_bind_state(&r->bind, r->rx.fd >= 0, st->state, st);
}

static void vmca_stop(struct xg_adapter *a)
{
    struct vmca *r = a->priv;
    if (!r) return;
    r->out.send = NULL;
    xg_udp_bind_stop(&r->bind);
    xg_udp_dests_stop(&r->dests);
    xg_timer_free(r->sweep);
    r->sweep = NULL;
    xg_udp_rx_close(&r->rx);
}

static void vmca_destroy(struct xg_adapter *a)
{
    struct vmca *r = a->priv;
    if (!r) return;
    vmca_stop(a);
    vmc_ingress_free(&r->in);
    vmc_egress_free(&r->out);
    free(r);
    a->priv = NULL;
}

static void vmca_entity_event(struct xg_adapter *a, const struct xg_entity *e, bool added)
{
    struct vmca *r = a->priv;
    if (!added && r) vmc_egress_entity_gone(&r->out, e);
}

const struct xg_adapter_ops xg_vmc_ops = {
    .type = "vmc",
    .is_sink = true,
    .default_frame = "unity",
    .whole_frames = true, /* one frame per drain: not sliced (core/table/egress_pass.h) */
    .create = vmca_create,
    .start = vmca_start,
    .drain = vmca_drain,
    .status = vmca_status,
    .stop = vmca_stop,
    .destroy = vmca_destroy,
    .entity_event = vmca_entity_event,
};
