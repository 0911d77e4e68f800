/* Unit tests for the adapter registry (gateway/registry.c): the startup check of every adapter
 * type's ops (mandatory ops, drain exactly for sinks, valid defaults) and the per-type defaults
 * of `rate_hz` and `frame` that the gateway applies before create() (core/adapter/adapter.h). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/gateway.h"

static int noop_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    (void)a;
    (void)conf;
    (void)err;
    return 0;
}
static int noop_start(struct xg_adapter *a)
{
    (void)a;
    return 0;
}
static void noop_drain(struct xg_adapter *a)
{
    (void)a;
}
static void noop_status(const struct xg_adapter *a, struct xg_status *out)
{
    (void)a;
    (void)out;
}
static void noop_stop(struct xg_adapter *a)
{
    (void)a;
}

/* a complete source type; each case below breaks one thing of a copy */
static const struct xg_adapter_ops good = {
    .type = "broken",
    .create = noop_create,
    .start = noop_start,
    .status = noop_status,
    .stop = noop_stop,
    .destroy = noop_stop,
};

static void expect_msg(const struct xg_adapter_ops *ops, const char *msg)
{
    struct xg_error err = {0};
    assert_int_equal(xg_registry_check_ops(ops, &err), -EINVAL);
    assert_string_equal(err.msg, msg);
}

static void test_check_ops(void **state)
{
    (void)state;
    struct xg_error err = {0};
    assert_int_equal(xg_registry_check_ops(&good, &err), 0);
    /* every registered type passes (xg_gateway_load runs this first) */
    assert_int_equal(xg_registry_check(&err), 0);

    struct xg_adapter_ops o = good;
    o.start = NULL;
    expect_msg(&o, "adapter type 'broken': missing op 'start'");
    o = good;
    o.create = NULL;
    expect_msg(&o, "adapter type 'broken': missing op 'create'");
    o = good;
    o.stop = NULL;
    expect_msg(&o, "adapter type 'broken': missing op 'stop'");
    o = good;
    o.destroy = NULL;
    expect_msg(&o, "adapter type 'broken': missing op 'destroy'");
    o = good;
    o.status = NULL;
    expect_msg(&o, "adapter type 'broken': missing op 'status'");
    o = good;
    o.is_sink = true; /* a sink needs drain */
    expect_msg(&o, "adapter type 'broken': missing op 'drain' (it is a sink)");
    o.drain = noop_drain;
    assert_int_equal(xg_registry_check_ops(&o, &err), 0);
    o.is_sink = false; /* drain only for sinks */
    expect_msg(&o, "adapter type 'broken': op 'drain' set but the type is not a sink");
    o = good;
    o.type = NULL;
    expect_msg(&o, "adapter ops without a type name");
    o = good;
    o.default_rate_hz = 30; /* only sinks have a rate */
    expect_msg(&o, "adapter type 'broken': default_rate_hz set but the type is not a sink");
    o.is_sink = true;
    o.drain = noop_drain;
    assert_int_equal(xg_registry_check_ops(&o, &err), 0);
    o.default_rate_hz = -1;
    expect_msg(&o, "adapter type 'broken': default_rate_hz -1 is not >= 0");
    o.default_rate_hz = NAN;
    assert_int_equal(xg_registry_check_ops(&o, &err), -EINVAL);
    o = good;
    o.default_frame = "unity";
    assert_int_equal(xg_registry_check_ops(&o, &err), 0);
    o.default_frame = "no-such-preset";
    memset(&err, 0, sizeof err);
    assert_int_equal(xg_registry_check_ops(&o, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "adapter type 'broken': default_frame: unknown frame preset "
                                    "'no-such-preset'"));
}

static const struct xg_adapter *find(const struct xg_gateway *gw, const char *name)
{
    for (int i = 0; i < gw->n_adapters; i++)
        if (!strcmp(gw->adapters[i]->a.name, name)) return &gw->adapters[i]->a;
    return NULL;
}

/* the defaults of docs/configuration.md's table reach a->rate_hz / a->frame; explicit keys win */
static void test_defaults_applied(void **state)
{
    (void)state;
    const char *text = "gateway: {admin: {listen: \"off\"}}\n"
                       "adapters:\n"
                       "  - {name: r, type: rtp, bind: \"127.0.0.1:0\"}\n"
                       "  - {name: r2, type: rtp, bind: \"127.0.0.1:0\", rate_hz: 30, frame: "
                       "yup-rh}\n"
                       "  - {name: v, type: vmc}\n"
                       "  - {name: g, type: rgmp-server, listen: \"127.0.0.1:0\"}\n"
                       "  - {name: l, type: less, mode: listen, listen: \"127.0.0.1:0\",\n"
                       "     signature: none}\n"
                       "  - {name: s, type: synth}\n";
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = text, .config_name = "t.yaml"};
    int rc = xg_gateway_load(&gw, &o, &err);
    if (rc) fail_msg("load: %s", err.msg);
    const struct {
        const char *name, *frame;
        double rate;
    } want[] = {
        {"r", "gamestate-lh", 90.0}, {"r2", "yup-rh", 30.0}, {"v", "unity", 60.0},
        {"g", "LTP_ENU", 60.0},      {"l", "yup-rh", 60.0},  {"s", "yup-rh", 0.0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct xg_adapter *a = find(&gw, want[i].name);
        assert_non_null(a);
        assert_string_equal(a->frame->name, want[i].frame);
        assert_float_equal(a->rate_hz, want[i].rate, 0.0);
    }
    xg_gateway_free(&gw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_ops),
        cmocka_unit_test(test_defaults_applied),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
