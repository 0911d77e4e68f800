/* Unit tests for gateway/calib.c's ingest hook (docs/calibration.md "Applying"): with a result in
 * force every sample of apply_to's entities enters the table moved by Y (position, orientation,
 * velocity, angular velocity) with its capture time minus the time offset, the reference
 * adapter's samples are untouched; while collecting, the target's samples are recorded as the
 * target system sent them (before Y) and the reference's as the table gets them; after reset
 * nothing is applied. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/clock/clock.h"
#include "gateway/calib_int.h"
#include "gateway/gateway.h"

#define MS INT64_C(1000000)

static const char *const CONF =
    "gateway: {admin: {listen: \"off\"}}\n"
    "adapters:\n"
    "  - {name: mocap, type: vmc, bind: \"127.0.0.1:0\"}\n"
    "  - {name: quest, type: vmc, bind: \"127.0.0.1:0\"}\n"
    "calibrations:\n"
    "  - {name: head, reference: mocap/tra/wand, target: quest/hmd/head, apply_to: quest}\n";

static void close_vec(struct xg_vec3 a, struct xg_vec3 b)
{
    assert_true(xg_vec3_norm(xg_vec3_sub(a, b)) < 1e-12);
}

static int index_of(struct xg_gateway *gw, const char *name)
{
    for (int i = 0; i < gw->n_adapters; i++)
        if (gw->adapters[i] && !strcmp(gw->adapters[i]->a.name, name)) return i;
    return -1;
}

static struct xg_sample sample(int64_t t_ns)
{
    return (struct xg_sample){
        .capture_ns = t_ns,
        .receive_ns = t_ns,
        .flags = XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY,
        .position = {0.1, 1.5, -0.3},
        .orientation = xg_quat_from_axis_angle((struct xg_vec3){1, 0, 1}, 0.4),
        .velocity = {0.5, 0, -0.2},
        .angular_velocity = {0, 1.5, 0.3}};
}

static void test_apply_and_collect(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = CONF, .config_name = "t.yaml"};
    assert_int_equal(xg_gateway_load(&gw, &o, &err), 0);
    assert_int_equal(xg_calib_start(&gw), 0);
    struct xg_calib *c = xg_calib_find(gw.calib, "head");
    assert_non_null(c);
    assert_true(c->collecting && !c->have);
    int mocap = index_of(&gw, "mocap"), quest = index_of(&gw, "quest");
    assert_int_equal(c->apply_index, quest);
    struct xg_entity_key head = {.source = "hmd/head"}, wand = {.source = "tra/wand"};
    struct xg_entity_key ctl = {.source = "con/ctl"};

    /* collecting: both streams are recorded, nothing is moved */
    const int64_t t0 = xg_clock_mono_ns();
    struct xg_sample s = sample(t0);
    uint32_t id_head, id_wand, id_ctl;
    assert_int_equal(xg_table_update_origin(gw.table, quest, &head, &s, &id_head), 0);
    assert_int_equal(xg_table_update_origin(gw.table, mocap, &wand, &s, &id_wand), 0);
    assert_int_equal(c->tgt.n, 1);
    assert_int_equal(c->ref.n, 1);
    close_vec(xg_entity_last(xg_table_get(gw.table, id_head))->position, s.position);

    /* a result in force: every quest entity is moved, mocap's are not */
    c->res.y = (struct xg_calib_xf){{0.8, -0.2, 1.5},
                                    xg_quat_from_axis_angle((struct xg_vec3){0.1, 1, 0.2}, 0.7)};
    c->res.time_offset_s = 0.020;
    c->have = true;
    c->state = XG_CALIB_SOLVED;
    s = sample(t0 + 100 * MS);
    assert_int_equal(xg_table_update_origin(gw.table, quest, &head, &s, NULL), 0);
    assert_int_equal(xg_table_update_origin(gw.table, quest, &ctl, &s, &id_ctl), 0);
    assert_int_equal(xg_table_update_origin(gw.table, mocap, &wand, &s, NULL), 0);
    for (int k = 0; k < 2; k++) {
        const struct xg_sample *l = xg_entity_last(xg_table_get(gw.table, k ? id_ctl : id_head));
        close_vec(l->position, xg_calib_xf_point(&c->res.y, s.position));
        assert_true(xg_quat_angle_between(l->orientation, xg_quat_mul(c->res.y.q, s.orientation)) <
                    1e-9);
        close_vec(l->velocity, xg_quat_rotate(c->res.y.q, s.velocity));
        close_vec(l->angular_velocity, xg_quat_rotate(c->res.y.q, s.angular_velocity));
        assert_true(l->capture_ns == s.capture_ns - 20 * MS);
    }
    const struct xg_sample *w = xg_entity_last(xg_table_get(gw.table, id_wand));
    close_vec(w->position, s.position);
    assert_true(w->capture_ns == s.capture_ns);
    /* the target is recorded as its system sent it, before Y */
    assert_int_equal(c->tgt.n, 2);
    close_vec(c->tgt.s[1].p, s.position);
    assert_true(c->tgt.s[1].t_ns == s.capture_ns);

    /* reset: nothing applied any more, collecting again */
    xg_calib_reset(gw.calib, c);
    assert_false(c->have);
    assert_int_equal(c->state, XG_CALIB_COLLECTING);
    s = sample(t0 + 200 * MS);
    assert_int_equal(xg_table_update_origin(gw.table, quest, &head, &s, NULL), 0);
    close_vec(xg_entity_last(xg_table_get(gw.table, id_head))->position, s.position);
    xg_gateway_free(&gw);
}

static void test_no_calibrations_no_hook(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text =
                                    "gateway: {admin: {listen: \"off\"}}\n"
                                    "adapters:\n"
                                    "  - {name: quest, type: vmc, bind: \"127.0.0.1:0\"}\n",
                                .config_name = "t.yaml"};
    assert_int_equal(xg_gateway_load(&gw, &o, &err), 0);
    assert_int_equal(xg_calib_start(&gw), 0);
    assert_null(gw.calib);
    char *j = xg_calib_json(&gw);
    assert_string_equal(j, "{\"calibrations\":[],\"state_file\":null}");
    free(j);
    xg_gateway_free(&gw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_and_collect),
        cmocka_unit_test(test_no_calibrations_no_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
