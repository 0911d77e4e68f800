/* Datagrams to one UDP destination, queued during a drain and handed to the kernel with one
 * sendmmsg(2) call (or a few: at most VRPN_UDP_BATCH per call) instead of one sendto(2) each. */
#ifndef XG_VRPN_UDP_BATCH_H
#define XG_VRPN_UDP_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "adapters/vrpn/vrpn_codec.h"

#define VRPN_UDP_BATCH 16 /**< datagrams per sendmmsg call */

/** Queued datagrams (each at most VRPN_UDP_MAX bytes) and what sending them did. Zero it to
 *  start; it owns no heap memory. */
struct vrpn_udp_batch {
    uint8_t d[VRPN_UDP_BATCH][VRPN_UDP_MAX];
    size_t len[VRPN_UDP_BATCH];
    int n;                                    /**< datagrams queued */
    uint64_t datagrams, bytes, errors, calls; /**< sent, their bytes, not sent, syscalls */
};

/** Queue a copy of datagram p (n <= VRPN_UDP_MAX bytes, else it is counted as an error) for
 *  fd/to; when the batch is full it is sent first (vrpn_udp_batch_send). */
void vrpn_udp_batch_add(struct vrpn_udp_batch *b, int fd, const struct sockaddr *to,
                        socklen_t to_len, const void *p, size_t n);

/** Send every queued datagram to `to` over fd with sendmmsg(2), retrying on EINTR and after a
 *  partial send; a datagram the kernel refuses (e.g. ENOBUFS, ECONNREFUSED) and the ones after it
 *  are counted in `errors` and dropped (UDP never waits). Empties the batch. */
void vrpn_udp_batch_send(struct vrpn_udp_batch *b, int fd, const struct sockaddr *to,
                         socklen_t to_len);

#endif
