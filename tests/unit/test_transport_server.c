/* Unit tests for the slow-client policy of core/transport_server.h (xg_slow_decide and
 * xg_slow_write_ok, pure): send at or below max_output_bytes; above it skip, from the first pass
 * seen above, and drop once it has stayed above for more than slow_timeout_ms; recovering below
 * the bound resets the clock; the hard bound at a write is 2 x max_output_bytes. The adapters'
 * behaviour on sockets is tested in tests/integration/test_slow_clients.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/transport_server.h"

#define MS INT64_C(1000000)
#define MAX 1000

static void test_send_at_or_below(void **state)
{
    (void)state;
    int64_t since = 0;
    assert_int_equal(xg_slow_decide(0, MAX, 2000 * MS, &since, 5 * MS), XG_SLOW_SEND);
    assert_int_equal(xg_slow_decide(MAX, MAX, 2000 * MS, &since, 6 * MS), XG_SLOW_SEND);
    assert_int_equal(since, 0);
}

static void test_skip_then_drop_after_timeout(void **state)
{
    (void)state;
    int64_t since = 0, t0 = 100 * MS;
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t0), XG_SLOW_SKIP);
    assert_int_equal(since, t0); /* the clock starts at the first pass seen above */
    assert_int_equal(xg_slow_decide(5 * MAX / 4, MAX, 2000 * MS, &since, t0 + 1000 * MS),
                     XG_SLOW_SKIP);
    /* exactly slow_timeout_ms above is still a skip; more than that is a drop */
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t0 + 2000 * MS), XG_SLOW_SKIP);
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t0 + 2000 * MS + 1),
                     XG_SLOW_DROP_TIMEOUT);
    assert_int_equal(since, t0);
}

static void test_recovery_resets_the_clock(void **state)
{
    (void)state;
    int64_t since = 0, t0 = 100 * MS;
    assert_int_equal(xg_slow_decide(2 * MAX, MAX, 2000 * MS, &since, t0), XG_SLOW_SKIP);
    assert_int_equal(xg_slow_decide(MAX / 2, MAX, 2000 * MS, &since, t0 + 1500 * MS), XG_SLOW_SEND);
    assert_int_equal(since, 0);
    /* above again: a new clock, not the old one (no drop 500 ms later) */
    int64_t t1 = t0 + 1600 * MS;
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t1), XG_SLOW_SKIP);
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t1 + 500 * MS), XG_SLOW_SKIP);
    assert_int_equal(since, t1);
}

static void test_zero_timeout(void **state)
{
    (void)state;
    /* slow_timeout_ms 0: the first pass above skips, any later pass still above drops */
    int64_t since = 0;
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 0, &since, 10 * MS), XG_SLOW_SKIP);
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 0, &since, 10 * MS + 1), XG_SLOW_DROP_TIMEOUT);
}

static void test_hard_bound_at_write(void **state)
{
    (void)state;
    assert_true(xg_slow_write_ok(0, MAX));
    assert_true(xg_slow_write_ok(2 * MAX, MAX));
    assert_false(xg_slow_write_ok(2 * MAX + 1, MAX));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_at_or_below),
        cmocka_unit_test(test_skip_then_drop_after_timeout),
        cmocka_unit_test(test_recovery_resets_the_clock),
        cmocka_unit_test(test_zero_timeout),
        cmocka_unit_test(test_hard_bound_at_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
