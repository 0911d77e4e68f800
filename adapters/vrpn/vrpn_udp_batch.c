/* Batched UDP egress for vrpn-server (vrpn_udp_batch.h). */
#include "adapters/vrpn/vrpn_udp_batch.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

void vrpn_udp_batch_send(struct vrpn_udp_batch *b, int fd, const struct sockaddr *to,
                         socklen_t to_len)
{
    struct mmsghdr m[VRPN_UDP_BATCH];
    struct iovec iov[VRPN_UDP_BATCH];
    int n = b->n;
    b->n = 0;
    if (n <= 0) return;
    memset(m, 0, sizeof m[0] * (size_t)n);
    for (int i = 0; i < n; i++) {
        iov[i].iov_base = b->d[i];
        iov[i].iov_len = b->len[i];
        m[i].msg_hdr.msg_name = (void *)to;
        m[i].msg_hdr.msg_namelen = to_len;
        m[i].msg_hdr.msg_iov = &iov[i];
        m[i].msg_hdr.msg_iovlen = 1;
    }
    int done = 0;
    while (done < n) {
        int r = sendmmsg(fd, m + done, (unsigned)(n - done), 0);
        b->calls++;
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { /* this datagram is refused: drop it and the rest */
            b->errors += (uint64_t)(n - done);
            return;
        }
        for (int i = done; i < done + r; i++)
            b->bytes += b->len[i];
        b->datagrams += (uint64_t)r;
        done += r;
    }
}

void vrpn_udp_batch_add(struct vrpn_udp_batch *b, int fd, const struct sockaddr *to,
                        socklen_t to_len, const void *p, size_t n)
{
    if (n > VRPN_UDP_MAX) {
        b->errors++;
        return;
    }
    if (b->n == VRPN_UDP_BATCH) vrpn_udp_batch_send(b, fd, to, to_len);
    memcpy(b->d[b->n], p, n);
    b->len[b->n++] = n;
}
