/* `vrpn-client` UDP+TCP mode (vrpn_client_priv.h; behaviour at the top of vrpn_client.c): the
 * connection request to the server, the call-back listener it connects to and the UDP data socket
 * whose datagrams are accepted from the server only (wire rules §6.3). */

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
#include "mappings/frame.h"

/* ---- UDP+TCP: call-back and data datagrams ---- */

/* Is a datagram from the server? Its address must be the server's (the call-back's source), and
 * once the server's first datagram was read, its port too (the server sends from one data socket
 * per connection, not from its announced port: §6.3). */
static bool udp_from_server(const struct vconn *c, const struct sockaddr_storage *from)
{
    const struct sockaddr_in *f = (const struct sockaddr_in *)from;
    return from->ss_family == AF_INET && f->sin_addr.s_addr == c->srv_ip.s_addr &&
           (!c->srv_udp_port || f->sin_port == c->srv_udp_port);
}

/* One datagram on the data socket (core/net/udp_endpoint.h reads them while the budget lasts:
 * messages and bytes; the rest waits for the next pass of the loop). Its cost: the VRPN
 * messages it held (at least 1); -1 when the connection closed. */
static int udp_datagram(void *arg, uint8_t *dg, size_t r, const struct sockaddr *fromsa,
                        socklen_t fl)
{
    struct vconn *c = arg;
    struct vclient *v = c->a->priv;
    struct sockaddr_storage from;
    memcpy(&from, fromsa, fl);
    uint64_t msgs = vrpn_session_stats(&c->sess)->messages;
    if (!udp_from_server(c, &from)) {
        char fs[64], ss[64];
        struct sockaddr_in srv = {
            .sin_family = AF_INET, .sin_addr = c->srv_ip, .sin_port = c->srv_udp_port};
        if (c->srv_udp_port)
            xg_net_addr_str((struct sockaddr *)&srv, ss, sizeof ss);
        else
            inet_ntop(AF_INET, &c->srv_ip, ss, sizeof ss);
        c->udp_foreign++;
        c->a->drops++;
        XG_WARN_PEER(&v->lim_foreign, c->a->name,
                     "peer %s: UDP datagram of %zu bytes from %s, not from the server (%s): "
                     "dropped",
                     c->peer, r, xg_net_addr_str((struct sockaddr *)&from, fs, sizeof fs), ss);
        return 1;
    }
    bool up = vrpn_session_state(&c->sess) == VRPN_SESS_STREAMING;
    int rc = vrpn_session_feed_datagram(&c->sess, dg, (size_t)r, xg_clock_mono_ns());
    uint64_t more = vrpn_session_stats(&c->sess)->messages - msgs; /* its cost */
    if (rc < 0) {
        char where[96], fs[64];
        snprintf(where, sizeof where, "udp datagram from %s",
                 xg_net_addr_str((struct sockaddr *)&from, fs, sizeof fs));
        vrpn_cli_session_failed(c, where);
        return -1;
    }
    /* data before the handshake is dropped by the session (the ids are unknown) */
    if (up && !c->srv_udp_port) c->srv_udp_port = ((struct sockaddr_in *)&from)->sin_port;
    if (c->udp.fd < 0) return -1; /* closed meanwhile */
    return more > 1 ? (int)more : 1;
}

static void accept_cb(struct evconnlistener *lis, int fd, struct sockaddr *sa, int salen, void *arg)
{
    struct vconn *c = arg;
    struct xg_adapter *a = c->a;
    (void)lis;
    (void)salen;
    if (c->bev) { /* one call-back per attempt */
        xg_tcp_close_fd(fd);
        return;
    }
    char from[64];
    xg_net_addr_str(sa, from, sizeof from);
    if (sa->sa_family == AF_INET) /* the server's address: its UDP data comes from there */
        c->srv_ip = ((const struct sockaddr_in *)sa)->sin_addr;
    c->bev = xg_tcp_wrap(a->base, fd);
    if (!c->bev) {
        xg_tcp_close_fd(fd);
        vrpn_cli_close_conn(c, "out of memory");
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    xg_net_listener_free(c->lis); /* no further call-backs */
    c->lis = NULL;
    xg_tclient_handshake(c->tc);
    XG_INFO(a->name, "peer %s called back from %s", c->peer, from);
    vrpn_cli_setup_bev(c);
}

/* ops.send_request: the connection request from a fresh UDP socket (§6.3). */
int vrpn_cli_send_request(void *ctx, const uint8_t *buf, size_t len)
{
    struct vconn *c = ctx;
    int rc = xg_udp_send_once(buf, len, (struct sockaddr *)&c->addr, c->addrlen);
    if (rc < 0)
        XG_DEBUG(c->a->name, "peer %s: connection request not sent: %s", c->peer, strerror(-rc));
    return rc;
}

/* Local IPv4 address that routes to the server. */
static int route_local_ip(struct vconn *c, struct sockaddr_in *out)
{
    socklen_t l = sizeof *out;
    return xg_udp_route_local((struct sockaddr *)&c->addr, c->addrlen, (struct sockaddr *)out, &l);
}

/* UDP+TCP attempt: call-back listener and UDP data socket on the local address that routes to
 * the server, then the connection request. 0, or -errno with the reason in why. */
int vrpn_cli_start_callback(struct vconn *c, char *why, size_t why_size)
{
    struct xg_adapter *a = c->a;
    struct vclient *v = a->priv;
    struct sockaddr_in local;
    int rc = route_local_ip(c, &local);
    if (rc < 0) {
        snprintf(why, why_size, "no route: %s", strerror(-rc));
        return rc;
    }
    inet_ntop(AF_INET, &local.sin_addr, c->local_ip, sizeof c->local_ip);
    local.sin_port = 0;
    c->srv_ip = ((const struct sockaddr_in *)&c->addr)->sin_addr; /* until the call-back */
    c->srv_udp_port = 0;
    c->lis = xg_net_listener_new_bind(a->base, accept_cb, c,
                                      XG_NET_LISTEN_CLOSE_ON_FREE | XG_NET_LISTEN_CLOSE_ON_EXEC, 4,
                                      (struct sockaddr *)&local, sizeof local, a->name);
    if (!c->lis) {
        snprintf(why, why_size, "cannot listen for the call-back on %s: %s", c->local_ip,
                 strerror(errno));
        return -EIO;
    }
    struct sockaddr_in b;
    socklen_t bl = sizeof b;
    getsockname(xg_net_listener_fd(c->lis), (struct sockaddr *)&b, &bl);
    c->listen_port = ntohs(b.sin_port);
    struct xg_error err = {0};
    int fd = xg_udp_bind_local((struct sockaddr *)&local, sizeof local, &err);
    if (fd < 0) {
        snprintf(why, why_size, "UDP data socket: %s", err.msg);
        return -EIO;
    }
    bl = sizeof b;
    getsockname(fd, (struct sockaddr *)&b, &bl);
    c->udp_port = ntohs(b.sin_port);
    if (xg_udp_rx_start(&c->udp, a->base, fd, 65536, udp_datagram, c, &v->udp_budget) < 0)
        return -ENOMEM;
    vrpn_session_set_udp(&c->sess, c->local_ip, c->udp_port); /* our UDP_DESCRIPTION */
    if (vrpn_session_request(&c->sess, c->local_ip, c->listen_port, xg_clock_mono_ns(), &err) < 0) {
        XG_ERR(a->name, "peer %s: %s", c->peer, err.msg);
        snprintf(why, why_size, "cannot encode the connection request");
        return -EINVAL;
    }
    return 0;
}
