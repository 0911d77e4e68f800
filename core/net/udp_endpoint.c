/* UDP socket set-up shared by the datagram adapters (udp_endpoint.h). */
#include "core/net/udp_endpoint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "core/net/net.h"

int xg_udp_endpoint_open(const struct xg_udp_endpoint_conf *c, uint16_t *port, struct xg_error *err)
{
    struct in_addr ia;
    if (c->iface && inet_pton(AF_INET, c->iface, &ia) != 1)
        return xg_error_set(err, -EINVAL, "multicast interface '%s' must be an IPv4 address",
                            c->iface);
    int fd = xg_net_udp_bind(c->bind, c->bind_len, c->iface, err);
    if (fd < 0) return fd;
    if (c->rcvbuf > 0) /* best effort: capped at net.core.rmem_max */
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &c->rcvbuf, sizeof c->rcvbuf);
    if (c->bind->sa_family == AF_INET) {
        if (c->ttl >= 0) {
            unsigned char ttl = (unsigned char)(c->ttl > 255 ? 255 : c->ttl);
            setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl);
        }
        if (c->iface) setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ia, sizeof ia);
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        int e = errno;
        close(fd);
        return xg_error_set(err, -e, "udp getsockname: %s", strerror(e));
    }
    *port = (uint16_t)xg_net_addr_port((struct sockaddr *)&ss);
    return fd;
}
