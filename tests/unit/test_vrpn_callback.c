/* Unit tests for the vrpn-server call-back checks (adapters/vrpn/vrpn_callback.h): a connection
 * request's host is taken only as a numeric IPv4 address (spelling variants parse to the same
 * address, names are refused without being resolved), and a call-back to the server's own
 * listen address and port, or to any local address on that port, is recognised. The adapter's
 * behaviour on sockets is tested in tests/integration/test_vrpn_callback.py. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/vrpn/vrpn_callback.h"

static uint32_t target_of(const char *host)
{
    struct sockaddr_in sin;
    int rc = vrpn_callback_target(host, 4000, &sin);
    if (rc) fail_msg("'%s': %d", host, rc);
    assert_int_equal(sin.sin_family, AF_INET);
    assert_int_equal(ntohs(sin.sin_port), 4000);
    return ntohl(sin.sin_addr.s_addr);
}

static void test_numeric_spellings(void **state)
{
    (void)state;
    /* every inet_aton spelling of 127.0.0.1 is the same target (so duplicates can be found) */
    assert_int_equal(target_of("127.0.0.1"), 0x7f000001u);
    assert_int_equal(target_of("127.1"), 0x7f000001u);
    assert_int_equal(target_of("2130706433"), 0x7f000001u);
    assert_int_equal(target_of("0x7f000001"), 0x7f000001u);
    assert_int_equal(target_of("10.0.0.5"), 0x0a000005u);
}

static void test_names_refused(void **state)
{
    (void)state;
    /* names are never resolved: not even "localhost", nor a black-hole host */
    const char *names[] = {"localhost", "blackhole.invalid", "rig",      "a1.example.com",
                           "",          "1.2.3.4.5",         "300.1.1.1"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct sockaddr_in sin;
        assert_int_equal(vrpn_callback_target(names[i], 4000, &sin), -EINVAL);
    }
    struct sockaddr_in sin;
    assert_int_equal(vrpn_callback_target(NULL, 4000, &sin), -EINVAL);
}

static struct sockaddr_in addr(const char *ip, uint16_t port)
{
    struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons(port)};
    assert_int_equal(inet_pton(AF_INET, ip, &s.sin_addr), 1);
    return s;
}

static void test_self(void **state)
{
    (void)state;
    struct sockaddr_in lis = addr("127.0.0.1", 3883), any = addr("0.0.0.0", 3883);
    struct sockaddr_in t;
    /* the listen address and port itself, in any spelling */
    assert_int_equal(vrpn_callback_target("127.1", 3883, &t), 0);
    assert_true(vrpn_callback_is_self(&t, (struct sockaddr *)&lis));
    /* any local address on that port: loopback range, 0.0.0.0 */
    t = addr("127.0.0.2", 3883);
    assert_true(vrpn_callback_is_self(&t, (struct sockaddr *)&lis));
    t = addr("0.0.0.0", 3883);
    assert_true(vrpn_callback_is_self(&t, (struct sockaddr *)&lis));
    t = addr("127.0.0.1", 3883);
    assert_true(vrpn_callback_is_self(&t, (struct sockaddr *)&any));
    /* another port, or a remote address on our port, is not us */
    t = addr("127.0.0.1", 3884);
    assert_false(vrpn_callback_is_self(&t, (struct sockaddr *)&lis));
    t = addr("192.0.2.7", 3883); /* TEST-NET-1: never an interface address here */
    assert_false(vrpn_callback_is_self(&t, (struct sockaddr *)&lis));
    assert_false(vrpn_callback_is_self(&t, (struct sockaddr *)&any));
    /* a non-IPv4 listen address never matches */
    struct sockaddr_in6 l6 = {.sin6_family = AF_INET6, .sin6_port = htons(3883)};
    t = addr("127.0.0.1", 3883);
    assert_false(vrpn_callback_is_self(&t, (struct sockaddr *)&l6));
}

static void test_local(void **state)
{
    (void)state;
    struct in_addr a;
    inet_pton(AF_INET, "127.9.9.9", &a);
    assert_true(vrpn_callback_addr_is_local(a));
    inet_pton(AF_INET, "0.0.0.0", &a);
    assert_true(vrpn_callback_addr_is_local(a));
    inet_pton(AF_INET, "192.0.2.7", &a);
    assert_false(vrpn_callback_addr_is_local(a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numeric_spellings),
        cmocka_unit_test(test_names_refused),
        cmocka_unit_test(test_self),
        cmocka_unit_test(test_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
