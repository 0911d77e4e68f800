/* Unit tests for core/util/log: one line per event whatever the message holds (control characters,
 * bytes that are not UTF-8) in text and JSON, and the rate limiter for peer-triggered lines. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/util/log.h"
#include "test_util.h"

static char captured[16384];

/* stderr of fn(arg) into `captured` (tests/unit/test_util.h) */
#define capture(fn, arg) xg_test_capture_stderr(fn, arg, captured, sizeof captured)
#define count_lines xg_test_count_lines

static void log_hostile(void *arg)
{
    (void)arg;
    /* a peer-supplied device_type with a newline that forges a second log line, a carriage
     * return, an escape sequence and a byte that is not UTF-8 */
    XG_WARN("suit\nfake", "device_type '%s' unknown",
            "glove\n2026-01-01T00:00:00.000Z error [admin] forged\r\x1b[31m\xff");
}

static void test_text_escapes_control_and_non_utf8(void **state)
{
    (void)state;
    xg_log_set_json(false);
    capture(log_hostile, NULL);
    assert_int_equal(count_lines(captured), 1);
    assert_non_null(strstr(captured, "[suit\\nfake] device_type 'glove\\n2026-01-01T00:00:00.000Z "
                                     "error [admin] forged\\r\\x1b[31m\\xff' unknown\n"));
}

static void test_json_stays_valid(void **state)
{
    (void)state;
    xg_log_set_json(true);
    capture(log_hostile, NULL);
    xg_log_set_json(false);
    assert_int_equal(count_lines(captured), 1);
    json_error_t e;
    json_t *j = json_loads(captured, JSON_REJECT_DUPLICATES, &e);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "component")), "suit\nfake");
    assert_string_equal(json_string_value(json_object_get(j, "msg")),
                        "device_type 'glove\n2026-01-01T00:00:00.000Z error [admin] "
                        "forged\r\\x1b[31m\\xff' unknown");
    json_decref(j);
}

static void log_utf8(void *arg)
{
    (void)arg;
    XG_INFO("rig", "body 'Körper→ü😀' ok");
}

static void test_utf8_passes_unchanged(void **state)
{
    (void)state;
    capture(log_utf8, NULL);
    assert_non_null(strstr(captured, "[rig] body 'Körper→ü😀' ok\n"));
}

static void log_flood(void *arg)
{
    struct xg_log_limit *lim = arg;
    for (int i = 0; i < 1000; i++)
        XG_WARN_PEER(lim, "less", "peer 127.0.0.1:%d: bad signature", 40000 + i);
}

static void test_limiter_bounds_a_flood(void **state)
{
    (void)state;
    struct xg_log_limit lim = {0};
    uint64_t before = xg_log_suppressed_total();
    capture(log_flood, &lim);
    assert_int_equal(count_lines(captured), XG_LOG_LIMIT_BURST);
    assert_non_null(strstr(captured, "127.0.0.1:40000: bad signature\n"));
    assert_null(strstr(captured, "127.0.0.1:40005"));
    assert_int_equal(lim.suppressed, 1000 - XG_LOG_LIMIT_BURST);
    assert_int_equal(xg_log_suppressed_total() - before, 1000 - XG_LOG_LIMIT_BURST);

    /* the next window: the first line carries the summary of what was held back */
    lim.window_start_ns -= XG_LOG_LIMIT_INTERVAL_NS;
    capture(log_flood, &lim);
    assert_int_equal(count_lines(captured), XG_LOG_LIMIT_BURST);
    assert_non_null(strstr(captured, "127.0.0.1:40000: bad signature (995 similar lines "
                                     "suppressed in the last "));
    assert_non_null(strstr(captured, "127.0.0.1:40001: bad signature\n"));
}

static void log_below_threshold(void *arg)
{
    struct xg_log_limit *lim = arg;
    for (int i = 0; i < 20; i++)
        XG_INFO_PEER(lim, "less", "hidden %d", i);
}

static void test_limiter_ignores_hidden_levels(void **state)
{
    (void)state;
    struct xg_log_limit lim = {0};
    xg_log_set_level(XG_LOG_WARN);
    capture(log_below_threshold, &lim);
    xg_log_set_level(XG_LOG_INFO);
    assert_string_equal(captured, "");
    assert_int_equal(lim.suppressed, 0);
    assert_int_equal(lim.in_window, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_escapes_control_and_non_utf8),
        cmocka_unit_test(test_json_stays_valid),
        cmocka_unit_test(test_utf8_passes_unchanged),
        cmocka_unit_test(test_limiter_bounds_a_flood),
        cmocka_unit_test(test_limiter_ignores_hidden_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
