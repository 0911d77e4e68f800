/* Unit tests for listening addresses resolved without DNS (core/net/resolve.h
 * xg_resolve_listen_addr): numeric addresses, names in /etc/hosts, and every other name refused
 * at once (never sent to a DNS server: the configured one here never answers, so a lookup would
 * take its timeout). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/net/resolve.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_numeric(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    socklen_t len = 0;
    struct xg_error err = {0};
    assert_int_equal(xg_resolve_listen_addr("127.0.0.1:4000", NULL, 0, &ss, &len, &err), 0);
    assert_int_equal(ss.ss_family, AF_INET);
    assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 4000);
    assert_int_equal(xg_resolve_listen_addr("[::1]:5", NULL, 0, &ss, &len, &err), 0);
    assert_int_equal(ss.ss_family, AF_INET6);
    /* host and port defaults */
    assert_int_equal(xg_resolve_listen_addr(":3883", "0.0.0.0", 0, &ss, &len, &err), 0);
    assert_int_equal(((struct sockaddr_in *)&ss)->sin_addr.s_addr, htonl(INADDR_ANY));
    assert_int_equal(xg_resolve_listen_addr("", "0.0.0.0", 3883, &ss, &len, &err), 0);
    assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 3883);
}

static void test_hosts_name(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    socklen_t len = 0;
    struct xg_error err = {0};
    /* "localhost" is in every /etc/hosts: a loopback address, port kept */
    assert_int_equal(xg_resolve_listen_addr("localhost:4001", NULL, 0, &ss, &len, &err), 0);
    if (ss.ss_family == AF_INET) {
        assert_int_equal(ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24, 127);
        assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 4001);
    } else {
        assert_int_equal(ss.ss_family, AF_INET6);
        assert_true(IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr));
        assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 4001);
    }
}

static void test_other_names_refused_at_once(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    socklen_t len = 0;
    struct xg_error err = {0};
    double t0 = now_s();
    for (int i = 0; i < 20; i++)
        assert_int_equal(xg_resolve_listen_addr("mocap-pc.invalid:3883", NULL, 0, &ss, &len, &err),
                         -EHOSTUNREACH);
    assert_true(now_s() - t0 < 1.0); /* no DNS query, no timeout */
    assert_non_null(strstr(err.msg, "address 'mocap-pc.invalid:3883': 'mocap-pc.invalid' is not "
                                    "in /etc/hosts: a listening address must be numeric or a "
                                    "name in /etc/hosts"));
    assert_int_equal(xg_resolve_listen_addr("bad host!:1", NULL, 0, &ss, &len, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'bad host!' is neither an IP address nor a host name"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numeric),
        cmocka_unit_test(test_hosts_name),
        cmocka_unit_test(test_other_names_refused_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
