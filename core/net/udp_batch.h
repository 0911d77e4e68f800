/* Batched UDP egress: datagrams queued during a drain (to one or several destinations) and
 * handed to the kernel with one sendmmsg(2) call per XG_UDP_BATCH datagrams instead of one
 * sendto(2) each. Used by vrpn-server, the RTP adapter and LESS over UDP. */
#ifndef XG_UDP_BATCH_H
#define XG_UDP_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define XG_UDP_BATCH 16 /**< datagrams per sendmmsg call */

/** Queued datagrams and what sending them did. Zero it, then xg_udp_batch_init(); release with
 *  xg_udp_batch_free(). Each queued datagram is a copy (its buffer may be reused at once). */
struct xg_udp_batch {
    uint8_t *d;                               /**< XG_UDP_BATCH slots of max_len bytes (owned) */
    size_t max_len;                           /**< largest datagram accepted, bytes */
    size_t len[XG_UDP_BATCH];                 /**< length of each queued datagram */
    struct sockaddr_storage to[XG_UDP_BATCH]; /**< its destination */
    socklen_t to_len[XG_UDP_BATCH];
    int tag[XG_UDP_BATCH]; /**< caller's label (e.g. destination index) */
    int fd;                /**< socket of the queued datagrams */
    int n;                 /**< datagrams queued */
    /** Retry a datagram once when the send fails with ECONNREFUSED, EHOSTUNREACH or
     *  ENETUNREACH: with IP_RECVERR such an error is pending from an earlier datagram (an ICMP
     *  error), not about this one. */
    bool retry_icmp;
    uint64_t datagrams, bytes, errors, calls; /**< sent, their bytes, not sent, syscalls */
    int last_errno, last_tag; /**< errno and tag of the last datagram not sent (0, -1 if none) */
};

/** Allocate room for XG_UDP_BATCH datagrams of at most max_len bytes. 0 or -ENOMEM. */
int xg_udp_batch_init(struct xg_udp_batch *b, size_t max_len);

/** Free the storage (queued datagrams are dropped, not sent). Safe on a zeroed batch. */
void xg_udp_batch_free(struct xg_udp_batch *b);

/** Queue a copy of datagram p (n <= max_len bytes, else it is counted in `errors`, last_errno
 *  EMSGSIZE) for fd/to, labelled `tag`. When the batch is full, or holds datagrams of another
 *  socket, it is sent first (xg_udp_batch_send). */
void xg_udp_batch_add(struct xg_udp_batch *b, int fd, const struct sockaddr *to, socklen_t to_len,
                      const void *p, size_t n, int tag);

/** Send every queued datagram, in order, with sendmmsg(2), retrying on EINTR and after a partial
 *  send. A datagram the kernel refuses (e.g. ENOBUFS, ECONNREFUSED) is counted in `errors` and
 *  dropped together with the later ones to the same destination (UDP never waits); datagrams to
 *  other destinations are still sent. Empties the batch. */
void xg_udp_batch_send(struct xg_udp_batch *b);

#endif
