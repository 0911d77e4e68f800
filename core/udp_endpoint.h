/* The UDP socket of a datagram adapter (rtp, vmc), set up one way: bound non-blocking and
 * close-on-exec; a unicast address bound exclusively (no SO_REUSEADDR: a second gateway cannot
 * silently take part of the datagrams), a multicast group shared and joined on an interface
 * (xg_net_udp_bind, core/net.h); the multicast TTL and outgoing interface for sending to groups;
 * a receive buffer large enough for a burst (requested; the kernel caps it at
 * net.core.rmem_max); and the port actually bound (port 0 picks one). */
#ifndef XG_UDP_ENDPOINT_H
#define XG_UDP_ENDPOINT_H

#include <stdint.h>
#include <sys/socket.h>

#include "core/error.h"

/** Receive buffer requested by default (bytes): ~700 datagrams of 1.5 KB, a few frames of a
 *  large rig at once. */
#define XG_UDP_RCVBUF_DEFAULT (1 << 20)

/** How to set the socket up. */
struct xg_udp_endpoint_conf {
    const struct sockaddr *bind; /* local address (a multicast group: bound and joined) */
    socklen_t bind_len;
    const char *iface; /* IPv4 interface address for the group join and for sending to groups
                          (IP_MULTICAST_IF), or NULL for the kernel's choice */
    int ttl;           /* IPv4 multicast TTL 0..255, or -1 for the kernel's default (1) */
    int rcvbuf;        /* SO_RCVBUF bytes to request, 0 for the kernel's default */
};

/** Open the socket. Returns the fd and the bound port in *port (host order), or a negative errno
 *  with err naming the address and the step (-EADDRINUSE says another program holds the port;
 *  -EINVAL for an interface that is not an IPv4 address). A receive buffer the kernel refuses
 *  or caps is not an error. */
int xg_udp_endpoint_open(const struct xg_udp_endpoint_conf *c, uint16_t *port,
                         struct xg_error *err);

#endif
