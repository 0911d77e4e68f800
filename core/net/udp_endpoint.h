/* The core UDP endpoint: the one way an adapter opens, reads and writes a UDP socket (adapters
 * never call socket/recvfrom/sendto/sendmmsg/event_new themselves; ctest static/adapter_io).
 * Names are resolved first without blocking (xg_udp_bind / xg_udp_dests, core/net/udp_dests.h);
 * batched sends go through core/net/udp_batch.h; this header has the rest:
 *   - opening: xg_udp_endpoint_open (below), xg_udp_bind_local (a plain unicast bind);
 *   - receiving: struct xg_udp_rx reads a socket's datagrams when it is readable, while its
 *     budget lasts (datagrams, bytes and the messages they held: struct xg_ingress_budget,
 *     core/net/ingress_budget.h), handing each to the adapter's callback with its sender;
 *   - sending one datagram: xg_udp_send (with the ICMP retry), xg_udp_send_once;
 *   - ICMP errors: xg_udp_icmp_enable / xg_udp_icmp_drain (IP_RECVERR, the error queue);
 *   - addresses: xg_udp_route_local, xg_udp_addr_is_local;
 *   - close: xg_udp_rx_close.
 *
 * Set-up of a datagram adapter's socket (rtp, vmc) is done one way: bound non-blocking and
 * close-on-exec; a unicast address bound exclusively (no SO_REUSEADDR: a second gateway cannot
 * silently take part of the datagrams), a multicast group shared and joined on an interface
 * (xg_net_udp_bind, core/net/net.h); the multicast TTL and outgoing interface for sending to
 * groups; a receive buffer large enough for a burst (requested; the kernel caps it at
 * net.core.rmem_max); and the port actually bound (port 0 picks one). */
#ifndef XG_UDP_ENDPOINT_H
#define XG_UDP_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/util/error.h"
#include "core/net/ingress_budget.h"

struct event;
struct event_base;

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

/** A plain unicast UDP socket bound to `sa` (port 0 picks one): non-blocking, close-on-exec,
 *  exclusive (xg_net_udp_bind). Returns the fd, or a negative errno with err saying why. */
int xg_udp_bind_local(const struct sockaddr *sa, socklen_t len, struct xg_error *err);

/** Called for each datagram read: p holds min(n, the endpoint's capacity) bytes; n is the
 *  datagram's length (larger than the capacity only with MSG_TRUNC in flags); from is its
 *  sender. Returns the number of messages the datagram held (its cost in the budget; 0 counts
 *  as 1), or a negative value to end this wake-up at once: the endpoint is then not touched
 *  again (the callback may have closed and freed it). */
typedef int (*xg_udp_rx_fn)(void *arg, uint8_t *p, size_t n, const struct sockaddr *from,
                            socklen_t from_len);

/** Called when a read fails (EAGAIN: nothing left, or an error such as a pending ICMP error)
 *  with the socket and the errno; the wake-up then ends. NULL: nothing to do. */
typedef void (*xg_udp_rx_err_fn)(void *arg, int fd, int err);

/** A socket's receive side. Zero it, then xg_udp_rx_start(); xg_udp_rx_close() to end. */
struct xg_udp_rx {
    int fd;                  /**< the socket (owned once started: closed by xg_udp_rx_close) */
    struct event *ev;        /**< its read event (core internal) */
    uint8_t *buf;            /**< receive buffer of cap bytes (owned) */
    size_t cap;              /**< largest datagram read whole, bytes */
    int flags;               /**< recvfrom flags, e.g. MSG_TRUNC to learn an oversize length */
    xg_udp_rx_fn fn;         /**< per datagram */
    xg_udp_rx_err_fn on_err; /**< per failed read, or NULL */
    /** End of each wake-up (after on_err), unless fn returned a negative value; or NULL. */
    void (*on_done)(void *arg);
    void *arg;                        /**< for fn and on_err */
    struct xg_ingress_budget own;     /**< the budget, unless `budget` points at a shared one */
    struct xg_ingress_budget *budget; /**< budget charged (&own, or one shared by sockets) */
    uint64_t datagrams, bytes;        /**< read since start, and their bytes */
};

/** Start reading fd (which rx then owns) on base: each wake-up reads datagrams of at most cap
 *  bytes while the budget lasts (`shared`, or rx's own when NULL; xg_ingress_budget rules: one
 *  datagram at least, the rest on the next pass of the loop). Set rx->flags, rx->on_err and
 *  rx->own.max_* before or after. 0, or -ENOMEM (fd is then closed too). */
int xg_udp_rx_start(struct xg_udp_rx *rx, struct event_base *base, int fd, size_t cap,
                    xg_udp_rx_fn fn, void *arg, struct xg_ingress_budget *shared);

/** Stop reading, close the socket and free the buffer; rx is zeroed with fd -1. Safe on a
 *  zeroed or already closed rx (fd 0 of a zeroed struct is not closed unless started). */
void xg_udp_rx_close(struct xg_udp_rx *rx);

/** A UDP socket bound to the IPv4 multicast group address `g` itself (it gets only the group's
 *  datagrams and does not collide with a unicast bind of the port), shared with other receivers
 *  on this host (SO_REUSEADDR), joined on `iface` (dotted IPv4, NULL for any). Returns the fd,
 *  or a negative errno with *step naming what failed ("socket", "bind", "join"). */
int xg_udp_group_open(const struct sockaddr *g, const char *iface, const char **step);

/** Join the IPv4 multicast group `g` on socket fd, on `iface` (dotted IPv4, NULL for any).
 *  0, or a negative errno. */
int xg_udp_group_join(int fd, const struct sockaddr *g, const char *iface);

/** Send one datagram from fd to `to` (NULL on a connected socket). With retry_icmp, a send
 *  failing with ECONNREFUSED, EHOSTUNREACH or ENETUNREACH is tried once more (with IP_RECVERR
 *  that error is an earlier datagram's ICMP error, not this one's). 0, or a negative errno. */
int xg_udp_send(int fd, const void *p, size_t n, const struct sockaddr *to, socklen_t to_len,
                bool retry_icmp);

/** Send one datagram to `to` from a fresh IPv4/IPv6 UDP socket closed right after (a request to a
 *  server whose answer comes another way). 0, or a negative errno. */
int xg_udp_send_once(const void *p, size_t n, const struct sockaddr *to, socklen_t to_len);

/** The local address the kernel routes to `to` from (a connected UDP socket, nothing sent) into
 *  *out (out_len bytes of room, set to the length). 0, or a negative errno. */
int xg_udp_route_local(const struct sockaddr *to, socklen_t to_len, struct sockaddr *out,
                       socklen_t *out_len);

/** Is `a` (its address; the port is ignored) one of this host's addresses? Asked of the kernel
 *  (a UDP socket bound to it). */
bool xg_udp_addr_is_local(const struct sockaddr *a, socklen_t len);

/** Ask for ICMP errors on fd (IP_RECVERR / IPV6_RECVERR for family AF_INET / AF_INET6): Linux
 *  reports "destination unreachable" to an unconnected UDP socket only then, queued on the socket
 *  (readable as MSG_ERRQUEUE; the socket polls readable until they are read). 0 or -errno. */
int xg_udp_icmp_enable(int fd, int family);

/** Called for each "destination unreachable" read from the queue: `dst` is the address the
 *  datagram had been sent to, `err` the errno the ICMP message maps to (ECONNREFUSED for port
 *  unreachable, EHOSTUNREACH, ENETUNREACH). */
typedef void (*xg_udp_icmp_fn)(void *user, const struct sockaddr *dst, socklen_t len, int err);

/** Read fd's whole error queue without blocking; calls fn per unreachable error (others are
 *  discarded). Returns the number of unreachable errors. */
int xg_udp_icmp_drain(int fd, xg_udp_icmp_fn fn, void *user);

#endif
