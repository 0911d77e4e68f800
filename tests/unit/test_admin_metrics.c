/* Unit tests for gateway/admin_metrics: how an adapter's status values become Prometheus
 * families (docs/metrics.md) and which states count as up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/admin_metrics.h"

static const char *fam(const char *name, enum xg_status_kind kind)
{
    static char buf[128];
    return xg_metrics_adapter_family(name, kind, buf, sizeof buf) ? buf : NULL;
}

static void test_counter_names(void **state)
{
    (void)state;
    assert_string_equal(fam("packets_in", XG_STATUS_COUNTER), "xrgate_adapter_packets_in_total");
    assert_string_equal(fam("bytes_out", XG_STATUS_COUNTER), "xrgate_adapter_out_bytes_total");
    assert_string_equal(fam("bytes_in", XG_STATUS_COUNTER), "xrgate_adapter_in_bytes_total");
    assert_string_equal(fam("drop_limit", XG_STATUS_COUNTER), "xrgate_adapter_drop_limit_total");
    /* the gateway's own xrgate_adapter_errors_total; names already ending in _total */
    assert_null(fam("errors", XG_STATUS_COUNTER));
    assert_null(fam("ticks_total", XG_STATUS_COUNTER));
}

static void test_gauge_names(void **state)
{
    (void)state;
    assert_string_equal(fam("clients", XG_STATUS_GAUGE), "xrgate_adapter_clients");
    assert_string_equal(fam("frame_rate_hz", XG_STATUS_GAUGE), "xrgate_adapter_frame_rate_hertz");
    assert_null(fam("up", XG_STATUS_GAUGE));
    assert_null(fam("info", XG_STATUS_GAUGE));
}

static void test_ids_and_bad_names(void **state)
{
    (void)state;
    assert_null(fam("ssrc", XG_STATUS_ID)); /* a label of xrgate_adapter_info */
    assert_null(fam("port", XG_STATUS_ID));
    assert_null(fam("Packets", XG_STATUS_COUNTER));
    assert_null(fam("2xx", XG_STATUS_COUNTER));
    assert_null(fam("a-b", XG_STATUS_GAUGE));
    assert_null(fam("", XG_STATUS_GAUGE));
    char small[16];
    assert_false(xg_metrics_adapter_family("packets_in", XG_STATUS_COUNTER, small, sizeof small));
}

static void test_up_states(void **state)
{
    (void)state;
    for (const char *const *s =
             (const char *const[]){"streaming", "listening", "running", "playing", NULL};
         *s; s++)
        assert_true(xg_metrics_state_up(*s));
    for (const char *const *s = (const char *const[]){"connecting", "handshake", "backoff",
                                                      "stopped", "done", "idle", "error", NULL};
         *s; s++)
        assert_false(xg_metrics_state_up(*s));
    assert_false(xg_metrics_state_up(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_names),
        cmocka_unit_test(test_gauge_names),
        cmocka_unit_test(test_ids_and_bad_names),
        cmocka_unit_test(test_up_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
