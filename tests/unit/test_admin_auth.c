/* Unit tests for gateway/admin_auth: the bearer token rule (RFC 7235 scheme case), the
 * length-exact token comparison (a NUL inside a decoded value is not an end), and the Host check
 * against DNS rebinding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gateway/admin_auth.h"

static void test_bearer(void **state)
{
    (void)state;
    assert_true(xg_admin_bearer_ok("Bearer s3cret", "s3cret"));
    assert_true(xg_admin_bearer_ok("bearer s3cret", "s3cret"));
    assert_true(xg_admin_bearer_ok("BEARER   s3cret", "s3cret"));
    assert_false(xg_admin_bearer_ok(NULL, "s3cret"));
    assert_false(xg_admin_bearer_ok("Bearers3cret", "s3cret"));
    assert_false(xg_admin_bearer_ok("Bearer\ts3cret", "s3cret"));
    assert_false(xg_admin_bearer_ok("Basic s3cret", "s3cret"));
    assert_false(xg_admin_bearer_ok("Bearer s3cre", "s3cret"));
    assert_false(xg_admin_bearer_ok("Bearer s3cretX", "s3cret"));
    assert_false(xg_admin_bearer_ok("Bearer ", "s3cret"));
    assert_false(xg_admin_bearer_ok("Bearer s3cret", ""));
}

static void test_token_equal(void **state)
{
    (void)state;
    assert_true(xg_admin_token_equal("abc", 3, "abc"));
    assert_false(xg_admin_token_equal("abc\0junk", 8, "abc")); /* ?token=abc%00junk */
    assert_false(xg_admin_token_equal("ab", 2, "abc"));
    assert_false(xg_admin_token_equal("", 0, ""));
}

static void test_host(void **state)
{
    (void)state;
    const char *ok[] = {"127.0.0.1",  "127.0.0.1:8080",     "10.1.2.3:80", "[::1]",
                        "[::1]:8080", "[fe80::1]:1",        "localhost",   "LocalHost:8080",
                        "localhost.", "app.localhost:3000", "gw.lan:8080", "GW.LAN"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!xg_admin_host_ok(ok[i], "gw.lan")) fail_msg("refused: %s", ok[i]);
    const char *bad[] = {"evil.example",
                         "evil.example:8080",
                         "127.0.0.1.nip.io",
                         "localhost.evil",
                         "[::1",
                         "[::1]x",
                         "[nothost]:80",
                         "localhost:80x",
                         "localhost:",
                         ":8080",
                         "",
                         "gw.lan.evil",
                         "1.2.3",
                         "xlocalhost"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (xg_admin_host_ok(bad[i], "gw.lan")) fail_msg("allowed: %s", bad[i]);
    assert_true(xg_admin_host_ok(NULL, "127.0.0.1")); /* no Host: not a browser */
    char me[256];
    if (gethostname(me, sizeof me) == 0 && me[0]) {
        me[sizeof me - 1] = '\0';
        assert_true(xg_admin_host_ok(me, "127.0.0.1"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bearer),
        cmocka_unit_test(test_token_equal),
        cmocka_unit_test(test_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
