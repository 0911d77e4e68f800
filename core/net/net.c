#include "core/net/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int xg_net_split_hostport(const char *text, char *host, size_t host_size, int *port, int def_port)
{
    const char *p = text, *colon;
    char h[256] = "";
    if (!text) return -EINVAL;
    if (*p == '[') {
        const char *rb = strchr(p, ']');
        if (!rb) return -EINVAL;
        snprintf(h, sizeof h, "%.*s", (int)(rb - p - 1), p + 1);
        colon = rb[1] == ':' ? rb + 1 : NULL;
        if (rb[1] && rb[1] != ':') return -EINVAL;
    } else {
        colon = strrchr(p, ':');
        if (colon && strchr(p, ':') != colon) return -EINVAL; /* bare IPv6 needs brackets */
        bool all_digits = *p != '\0';
        for (const char *q = p; *q; q++)
            if (*q < '0' || *q > '9') all_digits = false;
        if (!colon && all_digits) { /* just a port */
            colon = p - 1;
        } else {
            size_t n = colon ? (size_t)(colon - p) : strlen(p);
            snprintf(h, sizeof h, "%.*s", (int)n, p);
        }
    }
    long pv = def_port;
    if (colon) {
        char *end;
        pv = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end) return -EINVAL;
    }
    if (pv < 0 || pv > 65535) return -EINVAL;
    snprintf(host, host_size, "%s", h);
    *port = (int)pv;
    return 0;
}

int xg_net_parse_addr(const char *text, const char *def_host, int def_port,
                      struct sockaddr_storage *ss, socklen_t *len, struct xg_error *err)
{
    char host[256];
    int port;
    if (xg_net_split_hostport(text, host, sizeof host, &port, def_port) || port < 0)
        return xg_error_set(err, -EINVAL, "address '%s' must be host:port", text ? text : "");
    if (!host[0]) snprintf(host, sizeof host, "%s", def_host ? def_host : "0.0.0.0");
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_flags = AI_NUMERICSERV}, *res = NULL;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc || !res)
        return xg_error_set(err, -EHOSTUNREACH, "address '%s': cannot resolve '%s': %s", text, host,
                            gai_strerror(rc));
    memset(ss, 0, sizeof *ss);
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = (socklen_t)res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static bool host_name_ok(const char *h)
{
    size_t n = strlen(h), label = 0;
    if (!n || n > 253 || h[0] == '.' || h[0] == '-') return false;
    for (const char *q = h; *q; q++) {
        if (*q == '.') {
            if (!label) return false;
            label = 0;
            continue;
        }
        bool ok = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                  (*q >= '0' && *q <= '9') || *q == '-' || *q == '_';
        if (!ok || ++label > 63) return false;
    }
    return true;
}

int xg_net_parse_numeric(const char *text, const char *def_host, int def_port,
                         struct sockaddr_storage *ss, socklen_t *len, char *host, size_t host_size,
                         int *port, struct xg_error *err)
{
    char h[256];
    int p;
    if (xg_net_split_hostport(text, h, sizeof h, &p, def_port) || p < 0)
        return xg_error_set(err, -EINVAL, "address '%s' must be host:port", text ? text : "");
    if (!h[0]) snprintf(h, sizeof h, "%s", def_host ? def_host : "0.0.0.0");
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV},
                    *res = NULL;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", p);
    if (getaddrinfo(h, ps, &hints, &res) == 0 && res) {
        memset(ss, 0, sizeof *ss);
        memcpy(ss, res->ai_addr, res->ai_addrlen);
        *len = (socklen_t)res->ai_addrlen;
        freeaddrinfo(res);
        return 0;
    }
    if (res) freeaddrinfo(res);
    if (!host_name_ok(h) || strlen(h) >= host_size)
        return xg_error_set(err, -EINVAL,
                            "address '%s': '%s' is neither an IP address nor a host name", text, h);
    snprintf(host, host_size, "%s", h);
    *port = p;
    return 1;
}

char *xg_net_addr_str(const struct sockaddr *sa, char *buf, size_t size)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof ip);
        snprintf(buf, size, "%s:%d", ip, ntohs(s4->sin_port));
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof ip);
        snprintf(buf, size, "[%s]:%d", ip, ntohs(s6->sin6_port));
    } else {
        snprintf(buf, size, "?");
    }
    return buf;
}

int xg_net_addr_port(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) return ntohs(((const struct sockaddr_in *)sa)->sin_port);
    if (sa->sa_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    return -1;
}

bool xg_net_addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family) return false;
    if (a->sa_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    if (a->sa_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
        return x->sin6_port == y->sin6_port &&
               !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr);
    }
    return false;
}

int xg_net_udp_bind(const struct sockaddr *sa, socklen_t len, const char *iface,
                    struct xg_error *err)
{
    char as[64];
    int fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return xg_error_set(err, -errno, "udp socket: %s", strerror(errno));
    bool mcast = sa->sa_family == AF_INET &&
                 IN_MULTICAST(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
    /* Unicast ports are bound exclusively: with SO_REUSEADDR a second process (e.g. a second
     * gateway) could bind the same UDP port and silently take part of its datagrams. Only a
     * multicast group is shared, so that several receivers on one host can join it. */
    if (mcast) {
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    }
    struct sockaddr_in any;
    const struct sockaddr *bind_sa = sa;
    socklen_t bind_len = len;
    if (mcast) {
        memset(&any, 0, sizeof any);
        any.sin_family = AF_INET;
        any.sin_port = ((const struct sockaddr_in *)sa)->sin_port;
        any.sin_addr.s_addr = htonl(INADDR_ANY);
        bind_sa = (const struct sockaddr *)&any;
        bind_len = sizeof any;
    }
    if (bind(fd, bind_sa, bind_len) < 0) {
        int e = errno;
        close(fd);
        return xg_error_set(err, -e, "udp bind %s: %s%s", xg_net_addr_str(sa, as, sizeof as),
                            strerror(e),
                            e == EADDRINUSE ? " (another program, or another gateway, has bound "
                                              "this UDP port)"
                                            : "");
    }
    if (mcast) {
        struct ip_mreq mr = {.imr_multiaddr = ((const struct sockaddr_in *)sa)->sin_addr};
        mr.imr_interface.s_addr = htonl(INADDR_ANY);
        if (iface && inet_pton(AF_INET, iface, &mr.imr_interface) != 1) {
            close(fd);
            return xg_error_set(err, -EINVAL, "multicast interface '%s' must be an IPv4 address",
                                iface);
        }
        if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr) < 0) {
            int e = errno;
            close(fd);
            return xg_error_set(err, -e, "join multicast %s: %s",
                                xg_net_addr_str(sa, as, sizeof as), strerror(e));
        }
    }
    return fd;
}

int64_t xg_backoff_next(struct xg_backoff *b)
{
    int64_t init = b->initial_ns > 0 ? b->initial_ns : INT64_C(500000000);
    int64_t max = b->max_ns > 0 ? b->max_ns : INT64_C(10000000000);
    if (b->current_ns <= 0) b->current_ns = init;
    if (!b->rng) b->rng = UINT64_C(0x9E3779B97F4A7C15);
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    double j = 0.75 + 0.5 * (double)(b->rng >> 11) * 0x1.0p-53; /* [0.75, 1.25) */
    int64_t d = (int64_t)((double)b->current_ns * j);
    b->current_ns = b->current_ns * 2 > max ? max : b->current_ns * 2;
    b->attempts++;
    return d;
}

void xg_backoff_reset(struct xg_backoff *b)
{
    b->current_ns = 0;
    b->attempts = 0;
}
