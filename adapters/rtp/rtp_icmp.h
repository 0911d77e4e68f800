/* ICMP errors on the RTP adapter's UDP socket. Linux reports an ICMP "port unreachable" (nothing
 * listens at a destination) to an unconnected UDP socket only with IP_RECVERR / IPV6_RECVERR
 * (ip(7), ipv6(7)); the errors are then queued on the socket (readable as MSG_ERRQUEUE, and
 * the socket polls readable until they are read). */
#ifndef XG_RTP_ICMP_H
#define XG_RTP_ICMP_H

#include <sys/socket.h>

/** Ask for ICMP errors on fd (family AF_INET or AF_INET6). Returns 0 or -errno. */
int rtp_icmp_enable(int fd, int family);

/** Called for each "destination unreachable" read from the queue: `dst` is the address the
 *  packet had been sent to, `err` the errno the ICMP message maps to (ECONNREFUSED for port
 *  unreachable, EHOSTUNREACH, ENETUNREACH). */
typedef void (*rtp_icmp_fn)(void *user, const struct sockaddr *dst, socklen_t len, int err);

/** Read fd's whole error queue without blocking; calls fn per unreachable error (others are
 *  discarded). Returns the number of unreachable errors. */
int rtp_icmp_drain(int fd, rtp_icmp_fn fn, void *user);

#endif
