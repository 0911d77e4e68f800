/* ICMP errors on a UDP socket: IP_RECVERR and the error queue (core/net/udp_endpoint.h). */
#include "core/net/udp_endpoint.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>

int xg_udp_icmp_enable(int fd, int family)
{
    int on = 1;
    int rc = family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &on, sizeof on)
                                : setsockopt(fd, IPPROTO_IP, IP_RECVERR, &on, sizeof on);
    return rc ? -errno : 0;
}

int xg_udp_icmp_drain(int fd, xg_udp_icmp_fn fn, void *user)
{
    int n = 0;
    for (int guard = 0; guard < 256; guard++) {
        unsigned char data[64];
        union {
            struct cmsghdr align;
            unsigned char buf[512];
        } ctl;
        struct sockaddr_storage dst;
        struct iovec iov = {data, sizeof data};
        struct msghdr m = {.msg_name = &dst,
                           .msg_namelen = sizeof dst,
                           .msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = ctl.buf,
                           .msg_controllen = sizeof ctl.buf};
        if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) break; /* EAGAIN: queue empty */
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            bool v4 = c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR;
            bool v6 = c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR;
            if (!v4 && !v6) continue;
            struct sock_extended_err ee;
            memcpy(&ee, CMSG_DATA(c), sizeof ee);
            bool icmp = ee.ee_origin == SO_EE_ORIGIN_ICMP || ee.ee_origin == SO_EE_ORIGIN_ICMP6;
            if (!icmp || (ee.ee_errno != ECONNREFUSED && ee.ee_errno != EHOSTUNREACH &&
                          ee.ee_errno != ENETUNREACH))
                continue;
            n++;
            if (fn) fn(user, (const struct sockaddr *)&dst, m.msg_namelen, (int)ee.ee_errno);
        }
    }
    return n;
}
