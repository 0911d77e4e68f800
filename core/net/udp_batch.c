/* Batched UDP egress (udp_batch.h). */
#include "core/net/udp_batch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

int xg_udp_batch_init(struct xg_udp_batch *b, size_t max_len)
{
    b->d = malloc(XG_UDP_BATCH * max_len);
    if (!b->d) return -ENOMEM;
    b->max_len = max_len;
    b->n = 0;
    b->fd = -1;
    b->last_tag = -1;
    return 0;
}

void xg_udp_batch_free(struct xg_udp_batch *b)
{
    free(b->d);
    b->d = NULL;
    b->n = 0;
}

static bool icmp_errno(int e)
{
    return e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH;
}

static bool same_dest(const struct xg_udp_batch *b, int i, int j)
{
    return b->to_len[i] == b->to_len[j] && !memcmp(&b->to[i], &b->to[j], b->to_len[i]);
}

void xg_udp_batch_send(struct xg_udp_batch *b)
{
    struct mmsghdr m[XG_UDP_BATCH];
    struct iovec iov[XG_UDP_BATCH];
    int idx[XG_UDP_BATCH]; /* m[k] carries datagram idx[k] */
    bool drop[XG_UDP_BATCH] = {false};
    int n = b->n;
    b->n = 0;
    bool retried = false; /* the datagram at `done` was retried after an ICMP error */
    int done = 0;         /* datagrams handled (sent or dropped) */
    while (done < n) {
        int k = 0;
        for (int i = done; i < n; i++) {
            if (drop[i]) continue;
            iov[k].iov_base = b->d + (size_t)i * b->max_len;
            iov[k].iov_len = b->len[i];
            memset(&m[k], 0, sizeof m[k]);
            m[k].msg_hdr.msg_name = &b->to[i];
            m[k].msg_hdr.msg_namelen = b->to_len[i];
            m[k].msg_hdr.msg_iov = &iov[k];
            m[k].msg_hdr.msg_iovlen = 1;
            idx[k++] = i;
        }
        if (!k) break;
        int r = sendmmsg(b->fd, m, (unsigned)k, 0);
        b->calls++;
        if (r < 0 && errno == EINTR) continue;
        if (r > 0) {
            for (int j = 0; j < r; j++)
                b->bytes += b->len[idx[j]];
            b->datagrams += (uint64_t)r;
            done = r < k ? idx[r] : n; /* a partial send: go on with the next one */
            retried = false;
            continue;
        }
        int e = r < 0 ? errno : EIO, f = idx[0];
        if (b->retry_icmp && icmp_errno(e) && !retried) {
            retried = true; /* the error belonged to an earlier datagram: send this one again */
            done = f;
            continue;
        }
        retried = false;
        b->last_errno = e;
        b->last_tag = b->tag[f];
        for (int i = f; i < n; i++) /* this one and the later ones to the same destination */
            if (!drop[i] && same_dest(b, i, f)) {
                drop[i] = true;
                b->errors++;
            }
        done = f + 1;
    }
}

void xg_udp_batch_add(struct xg_udp_batch *b, int fd, const struct sockaddr *to, socklen_t to_len,
                      const void *p, size_t n, int tag)
{
    if (n > b->max_len || !b->d || to_len > sizeof b->to[0]) {
        b->errors++;
        b->last_errno = EMSGSIZE;
        b->last_tag = tag;
        return;
    }
    if (b->n == XG_UDP_BATCH || (b->n && b->fd != fd)) xg_udp_batch_send(b);
    int i = b->n++;
    b->fd = fd;
    memcpy(b->d + (size_t)i * b->max_len, p, n);
    b->len[i] = n;
    memcpy(&b->to[i], to, to_len);
    b->to_len[i] = to_len;
    b->tag[i] = tag;
}
