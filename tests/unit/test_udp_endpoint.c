/* Unit tests for the shared UDP socket set-up of the datagram adapters (core/net/udp_endpoint.h):
 * the bound port, the exclusive unicast bind, the multicast TTL and interface, the receive
 * buffer request (capped by the kernel at net.core.rmem_max), and the errors. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/net/net.h"
#include "core/net/udp_endpoint.h"
#include "tests/unit/test_skip.h"

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static void test_port_and_exclusive(void **state)
{
    (void)state;
    struct sockaddr_in a = loopback(0);
    struct xg_udp_endpoint_conf c = {
        .bind = (struct sockaddr *)&a, .bind_len = sizeof a, .ttl = -1};
    struct xg_error err = {0};
    uint16_t port = 0;
    int fd = xg_udp_endpoint_open(&c, &port, &err);
    assert_true(fd >= 0);
    assert_true(port > 0);
    struct sockaddr_in got;
    socklen_t gl = sizeof got;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&got, &gl), 0);
    assert_int_equal(ntohs(got.sin_port), port);
    /* the same unicast port again: refused, saying why */
    struct sockaddr_in b = loopback(port);
    c.bind = (struct sockaddr *)&b;
    uint16_t p2 = 0;
    assert_int_equal(xg_udp_endpoint_open(&c, &p2, &err), -EADDRINUSE);
    assert_non_null(strstr(err.msg, "another program, or another gateway, has bound"));
    close(fd);
}

static void test_multicast_options(void **state)
{
    (void)state;
    struct sockaddr_in a = loopback(0);
    struct xg_udp_endpoint_conf c = {
        .bind = (struct sockaddr *)&a, .bind_len = sizeof a, .iface = "127.0.0.1", .ttl = 5};
    struct xg_error err = {0};
    uint16_t port = 0;
    int fd = xg_udp_endpoint_open(&c, &port, &err);
    assert_true(fd >= 0);
    unsigned char ttl = 0;
    socklen_t l = sizeof ttl;
    assert_int_equal(getsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, &l), 0);
    assert_int_equal(ttl, 5);
    struct in_addr ia = {0};
    l = sizeof ia;
    assert_int_equal(getsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ia, &l), 0);
    assert_int_equal(ntohl(ia.s_addr), INADDR_LOOPBACK);
    close(fd);
    /* ttl -1: the kernel's default (1) */
    c.ttl = -1;
    c.iface = NULL;
    fd = xg_udp_endpoint_open(&c, &port, &err);
    assert_true(fd >= 0);
    l = sizeof ttl;
    assert_int_equal(getsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, &l), 0);
    assert_int_equal(ttl, 1);
    close(fd);
    /* an interface that is not an IPv4 address: refused before any socket */
    c.iface = "eth0";
    assert_int_equal(xg_udp_endpoint_open(&c, &port, &err), -EINVAL);
    assert_string_equal(err.msg, "multicast interface 'eth0' must be an IPv4 address");
}

static long read_long(const char *path)
{
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

static void test_rcvbuf(void **state)
{
    (void)state;
    long max = read_long("/proc/sys/net/core/rmem_max");
    if (max <= 0) XG_TEST_SKIP("/proc/sys/net/core/rmem_max (a readable positive value)");
    struct sockaddr_in a = loopback(0);
    struct xg_udp_endpoint_conf c = {.bind = (struct sockaddr *)&a,
                                     .bind_len = sizeof a,
                                     .ttl = -1,
                                     .rcvbuf = XG_UDP_RCVBUF_DEFAULT};
    struct xg_error err = {0};
    uint16_t port = 0;
    int fd = xg_udp_endpoint_open(&c, &port, &err);
    assert_true(fd >= 0);
    int got = 0;
    socklen_t l = sizeof got;
    assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &l), 0);
    /* Linux doubles the request (bookkeeping) after capping it at rmem_max (socket(7)) */
    long want = 2 * (XG_UDP_RCVBUF_DEFAULT < max ? XG_UDP_RCVBUF_DEFAULT : max);
    assert_int_equal(got, want);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_port_and_exclusive),
        cmocka_unit_test(test_multicast_options),
        cmocka_unit_test(test_rcvbuf),
    };
    return xg_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
