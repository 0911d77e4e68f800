/* The rtp adapter's session description and what backs it: the default SSRC and session id
 * (the same in the daemon and in `xrgate --sdp NAME`), the SDP text, and the multicast group
 * socket that receives on the address the SDP advertises.
 *
 * SDP (RFC 8866; the media description of wire-rules §6):
 *   c=  the multicast group when the session uses one (bind is a group, or the first IPv4
 *       multicast destination), else the unicast address below;
 *   o=  always a unicast address (RFC 8866 §5.2): sdp_address, else the bind address unless it is
 *       a wildcard or a group, else `interface`, else the first non-loopback IPv4 interface
 *       address, else 127.0.0.1;
 *   m=  the port peers reach us on: the destination group's port (bound and joined by
 *       rtpa_group_open) or the bound port (the configured one before start());
 *   a=recvonly (RFC 3264 §5.1) and no a=ssrc when the adapter has no destinations (it sends no
 *       RTP), else a=sendrecv and a=ssrc:<ssrc> cname:<cname>; a=ssrc is also left out when the
 *       SSRC is random (srtp without ssrc:), since it changes at every start. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adapters/rtp/rtp.h"
#include "adapters/rtp/rtp_adapter.h"

bool rtpa_is_multicast(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return IN_MULTICAST(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_MULTICAST(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return false;
}

/* FNV-1a 64 over the NUL-separated parts */
static uint64_t fnv1a64(const char *const *parts, int n)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (int i = 0; i < n; i++)
        for (const char *p = parts[i] ? parts[i] : "";; p++) {
            h ^= (uint8_t)*p;
            h *= UINT64_C(1099511628211);
            if (!*p) break;
        }
    return h;
}

uint32_t rtpa_default_ssrc(const char *gateway_id, const char *name)
{
    const char *parts[] = {"xrgate-rtp-ssrc", gateway_id, name};
    uint64_t h = fnv1a64(parts, 3);
    return (uint32_t)(h ^ (h >> 32));
}

uint64_t rtpa_default_session_id(const char *gateway_id, const char *name)
{
    const char *parts[] = {"xrgate-rtp-session", gateway_id, name};
    return fnv1a64(parts, 3) >> 2;
}

const struct sockaddr *rtpa_dest_group(const struct rtpa *r)
{
    if (rtpa_is_multicast((const struct sockaddr *)&r->bind.ss)) return NULL;
    for (int i = 0; i < r->dests.n; i++)
        if (r->dests.d[i].active && r->dests.d[i].ss.ss_family == AF_INET &&
            rtpa_is_multicast((const struct sockaddr *)&r->dests.d[i].ss))
            return (const struct sockaddr *)&r->dests.d[i].ss;
    return NULL;
}

int rtpa_group_open(struct xg_adapter *a)
{
    struct rtpa *r = a->priv;
    const struct sockaddr *g = rtpa_dest_group(r);
    if (!g) return 0;
    char gs[64];
    xg_net_addr_str(g, gs, sizeof gs);
    const struct sockaddr_in *bin = (const struct sockaddr_in *)&r->bind.ss;
    const char *iface = r->has_iface ? r->iface : NULL;
    if (bin->sin_family == AF_INET && bin->sin_addr.s_addr == htonl(INADDR_ANY) &&
        r->bound_port == xg_net_addr_port(g)) {
        /* the bound socket already has the group's port on every address (exclusively): join
         * the group there */
        int e = -xg_udp_group_join(r->rx.fd, g, iface);
        if (e) {
            XG_ERR(a->name, "multicast destination (the SDP's c= and m=): join %s: %s", gs,
                   strerror(e));
            return -e;
        }
        XG_INFO(a->name, "joined the destination group %s on the bound socket", gs);
        return 0;
    }
    /* a socket bound to the group address itself: it gets only the group's datagrams, and it
     * does not collide with a unicast bind on the same port; shared (SO_REUSEADDR) with other
     * receivers of the group on this host */
    const char *step = NULL;
    int fd = xg_udp_group_open(g, iface, &step);
    if (fd < 0) {
        int e = -fd;
        XG_ERR(a->name, "multicast destination (the SDP's c= and m=): %s %s: %s", step, gs,
               strerror(e));
        return -e;
    }
    if (rtpa_rx_start(a, &r->grx, fd) < 0) return -ENOMEM;
    XG_INFO(a->name, "receiving on the destination group %s too (joined%s%s)", gs,
            r->has_iface ? " on " : "", r->has_iface ? r->iface : "");
    return 0;
}

void rtpa_group_close(struct rtpa *r)
{
    xg_udp_rx_close(&r->grx);
}

/* host part of an address ("239.1.2.3", "::1") into out */
static void host_of(const struct sockaddr *sa, char *out, size_t cap)
{
    char hp[64];
    int port;
    xg_net_addr_str(sa, hp, sizeof hp);
    if (xg_net_split_hostport(hp, out, cap, &port, 0) < 0) snprintf(out, cap, "%s", hp);
}

/* The unicast address of o= (and of c= without a group). */
static void unicast_addr(const struct rtpa *r, char *out, size_t cap)
{
    if (r->sdp_address[0]) {
        snprintf(out, cap, "%s", r->sdp_address);
        return;
    }
    if (r->bind.ss.ss_family == AF_UNSPEC) { /* a bind host name not resolved (yet) */
        snprintf(out, cap, "%s", r->bind.host);
        return;
    }
    host_of((const struct sockaddr *)&r->bind.ss, out, cap);
    if (strcmp(out, "0.0.0.0") && strcmp(out, "::") &&
        !rtpa_is_multicast((const struct sockaddr *)&r->bind.ss))
        return;
    if (r->has_iface) { /* the interface the group is joined and sent on */
        snprintf(out, cap, "%s", r->iface);
        return;
    }
    out[0] = 0;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i && !out[0]; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)i->ifa_addr;
                if ((ntohl(in->sin_addr.s_addr) >> 24) != 127)
                    inet_ntop(AF_INET, &in->sin_addr, out, (socklen_t)cap);
            }
        freeifaddrs(ifs);
    }
    if (!out[0]) snprintf(out, cap, "127.0.0.1");
}

int rtpa_sdp(const struct xg_adapter *a, char *buf, size_t size)
{
    const struct rtpa *r = a->priv;
    if (!r) return -EINVAL;
    char conn[256], origin[256];
    unicast_addr(r, origin, sizeof origin);
    snprintf(conn, sizeof conn, "%s", origin);
    int port = r->bound_port ? r->bound_port
               : r->bind.ss.ss_family == AF_UNSPEC
                   ? r->bind.port
                   : xg_net_addr_port((struct sockaddr *)&r->bind.ss);
    const struct sockaddr *dgroup = rtpa_dest_group(r);
    if (rtpa_is_multicast((const struct sockaddr *)&r->bind.ss)) {
        host_of((const struct sockaddr *)&r->bind.ss, conn, sizeof conn);
    } else if (dgroup) {
        host_of(dgroup, conn, sizeof conn);
        port = xg_net_addr_port(dgroup);
    }
    if (port <= 0) return -EINVAL; /* ephemeral port before start(): unknown yet */
    bool sends = r->dests.n > 0;
    struct rtp_sdp_params p = {.session_name = a->name,
                               .session_id = r->session_id,
                               .origin_addr = origin,
                               .conn_addr = conn,
                               .ttl = (uint8_t)(r->ttl ? r->ttl : 1),
                               .port = (uint16_t)port,
                               .pt = (uint8_t)r->pt,
                               .pli = true,
                               .cname = sends && !r->ssrc_random ? r->cname : NULL,
                               .ssrc = r->ssrc,
                               .direction = sends ? "sendrecv" : "recvonly"};
    size_t len = 0;
    struct xg_error err = {0};
    int rc = rtp_sdp_write(buf, size, &p, &len, &err);
    if (rc) return rc;
    /* SRTP: RTP/SAVPF and a=crypto with our sending key (RFC 4568): the SDP is then a secret */
    if (r->srtp.enabled && (rc = xg_srtp_sdp_secure(buf, size, &len, &r->srtp.local))) {
        explicit_bzero(buf, size);
        if (size) buf[0] = '\0';
        return rc;
    }
    return (int)len;
}
