/* The core UDP endpoint's reading and single sends (udp_endpoint.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/net/net.h"
#include "core/net/udp_endpoint.h"

int xg_udp_bind_local(const struct sockaddr *sa, socklen_t len, struct xg_error *err)
{
    return xg_net_udp_bind(sa, len, NULL, err);
}

static void rx_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_udp_rx *rx = arg;
    struct xg_ingress_budget *b = rx->budget;
    (void)what;
    xg_ingress_begin(b);
    while (xg_ingress_more(b)) {
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fd, rx->buf, rx->cap, rx->flags, (struct sockaddr *)&from, &fl);
        if (n < 0) {
            if (rx->on_err) rx->on_err(rx->arg, fd, errno);
            break;
        }
        rx->datagrams++;
        rx->bytes += (uint64_t)n;
        int msgs = rx->fn(rx->arg, rx->buf, (size_t)n, (struct sockaddr *)&from, fl);
        if (msgs < 0) return; /* rx may be gone */
        xg_ingress_charge(b, (size_t)n, (size_t)msgs);
    }
    if (rx->on_done) rx->on_done(rx->arg);
}

int xg_udp_rx_start(struct xg_udp_rx *rx, struct event_base *base, int fd, size_t cap,
                    xg_udp_rx_fn fn, void *arg, struct xg_ingress_budget *shared)
{
    rx->fd = fd;
    rx->cap = cap;
    rx->fn = fn;
    rx->arg = arg;
    rx->budget = shared ? shared : &rx->own;
    rx->buf = malloc(cap);
    rx->ev = rx->buf ? event_new(base, fd, EV_READ | EV_PERSIST, rx_cb, rx) : NULL;
    if (!rx->ev || event_add(rx->ev, NULL)) {
        xg_udp_rx_close(rx);
        return -ENOMEM;
    }
    return 0;
}

void xg_udp_rx_close(struct xg_udp_rx *rx)
{
    if (rx->ev) event_free(rx->ev);
    if (rx->fn && rx->fd >= 0) close(rx->fd); /* set by xg_udp_rx_start */
    free(rx->buf);
    memset(rx, 0, sizeof *rx);
    rx->fd = -1;
}

static struct ip_mreq group_mreq(const struct sockaddr *g, const char *iface)
{
    struct ip_mreq mr = {.imr_multiaddr = ((const struct sockaddr_in *)g)->sin_addr};
    mr.imr_interface.s_addr = htonl(INADDR_ANY);
    if (iface) inet_pton(AF_INET, iface, &mr.imr_interface);
    return mr;
}

int xg_udp_group_join(int fd, const struct sockaddr *g, const char *iface)
{
    struct ip_mreq mr = group_mreq(g, iface);
    return setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr) < 0 ? -errno : 0;
}

int xg_udp_group_open(const struct sockaddr *g, const char *iface, const char **step)
{
    struct ip_mreq mr = group_mreq(g, iface);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    *step = "socket";
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        *step = "bind";
        if (bind(fd, g, sizeof(struct sockaddr_in)) == 0) {
            *step = "join";
            if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr) == 0) return fd;
        }
    }
    int e = errno;
    if (fd >= 0) close(fd);
    return -e;
}

int xg_udp_send(int fd, const void *p, size_t n, const struct sockaddr *to, socklen_t to_len,
                bool retry_icmp)
{
    ssize_t r = sendto(fd, p, n, 0, to, to_len);
    if (r < 0 && retry_icmp &&
        (errno == ECONNREFUSED || errno == EHOSTUNREACH ||
         errno == ENETUNREACH)) /* an earlier datagram's ICMP error */
        r = sendto(fd, p, n, 0, to, to_len);
    return r < 0 ? -errno : 0;
}

int xg_udp_send_once(const void *p, size_t n, const struct sockaddr *to, socklen_t to_len)
{
    int fd = socket(to->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    ssize_t r = sendto(fd, p, n, 0, to, to_len);
    int e = errno;
    close(fd);
    return r < 0 ? -e : 0;
}

int xg_udp_route_local(const struct sockaddr *to, socklen_t to_len, struct sockaddr *out,
                       socklen_t *out_len)
{
    int fd = socket(to->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int rc = 0;
    if (connect(fd, to, to_len) < 0 || getsockname(fd, out, out_len) < 0) rc = -errno;
    close(fd);
    return rc;
}

bool xg_udp_addr_is_local(const struct sockaddr *a, socklen_t len)
{
    if (len > sizeof(struct sockaddr_storage)) return false;
    int fd = socket(a->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    struct sockaddr_storage ss;
    memcpy(&ss, a, len);
    if (ss.ss_family == AF_INET) ((struct sockaddr_in *)&ss)->sin_port = 0;
    if (ss.ss_family == AF_INET6) ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
    bool local = bind(fd, (struct sockaddr *)&ss, len) == 0;
    close(fd);
    return local;
}
