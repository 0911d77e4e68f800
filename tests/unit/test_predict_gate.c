/* The predictor's confidence gates (core/predict/predict_gate.h, core/predict/predict_rot.h): a
 * sudden stop never overshoots, a constant spin and a constant velocity are extrapolated in full,
 * and a joint whose recent extrapolations removed little of holding's error falls back toward
 * holding, then recovers (docs/prediction.md, "Confidence gating"). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: reads the entity's internals */
#include "core/predict/predict_gate.h"
#include "core/predict/predict_rot.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)

static struct xg_table *new_table(void)
{
    struct xg_table *t = xg_table_new(NULL); /* defaults: 100 ms horizon and window */
    assert_non_null(t);
    xg_table_set_adapter_name(t, 0, "src");
    return t;
}

static uint32_t feed(struct xg_table *t, int64_t t_ns, struct xg_vec3 p, struct xg_quat q)
{
    struct xg_entity_key key = {.source = "body", .kind = XG_KIND_RIGID_BODY};
    struct xg_sample s = {.capture_ns = t_ns, .receive_ns = t_ns, .flags = XG_SAMPLE_POSE};
    s.position = p;
    s.orientation = q;
    uint32_t id = 0;
    assert_int_equal(xg_table_update_origin(t, 0, &key, &s, &id), 0);
    return id;
}

static const struct xg_quat q_start = {0.1825742, 0.3651484, 0.5477226, 0.7302967};

/* A rigid body moving at 1.5 m/s and spinning at 6 rad/s stops dead at a sample. That sample
 * cannot show the stop (it arrived there moving), so its answers go on at the speed it came: at
 * most |v| x horizon beyond the stop, which no causal predictor avoids. From the next sample on
 * (the first interval that did not move) no answer, 5 to 100 ms ahead, lies beyond the stop by
 * more than 1e-9 m or 1e-9 rad (rounding): the fits over the window still carry the motion, but
 * the newest interval did not move, which holds both (XG_VEL_STILL_M, XG_ROT_STILL_RAD). Before
 * the stop the answers are the motion itself within 2 % of the turn and 1 % of the path. */
static void test_sudden_stop_never_overshoots(void **state)
{
    (void)state;
    const int rates[] = {30, 60, 120};
    const struct xg_vec3 v = {1.5, 0, -0.5}, w = {0, 6, 0};
    const int64_t horizons_ms[] = {5, 33, 50, 100};
    for (size_t ri = 0; ri < sizeof rates / sizeof *rates; ri++) {
        struct xg_table *t = new_table();
        const int stop_k = 20;
        const double t_stop = (double)stop_k / rates[ri];
        const struct xg_vec3 p_stop = xg_vec3_scale(v, t_stop);
        const struct xg_quat q_stop = xg_quat_integrate(q_start, w, t_stop);
        for (int k = 0; k < 40; k++) {
            const int64_t tk = T0 + (int64_t)k * 1000000000 / rates[ri];
            const double ts = k < stop_k ? (double)k / rates[ri] : t_stop;
            const uint32_t id =
                feed(t, tk, xg_vec3_scale(v, ts), xg_quat_integrate(q_start, w, ts));
            for (size_t h = 0; h < sizeof horizons_ms / sizeof *horizons_ms; h++) {
                struct xg_pose out;
                xg_entity_predict(t, id, tk + horizons_ms[h] * MS, &out);
                if (k == stop_k) { /* no sample shows the stop yet: as if it went on */
                    const double moved = xg_vec3_norm(v) * (double)horizons_ms[h] * 1e-3;
                    assert_true(xg_vec3_norm(xg_vec3_sub(out.position, p_stop)) <= 1.01 * moved);
                } else if (k > stop_k) {
                    assert_true(xg_vec3_norm(xg_vec3_sub(out.position, p_stop)) < 1e-9);
                    assert_true(xg_quat_angle_between(out.orientation, q_stop) < 1e-9);
                } else if (k >= 4) { /* steady motion: extrapolated (not held) */
                    const double th = ts + (double)horizons_ms[h] * 1e-3;
                    const struct xg_vec3 p_true = xg_vec3_scale(v, th);
                    const double moved = xg_vec3_norm(v) * (double)horizons_ms[h] * 1e-3;
                    assert_true(xg_vec3_norm(xg_vec3_sub(out.position, p_true)) <= 0.01 * moved);
                    const double turn =
                        xg_quat_angle_between(out.orientation, xg_quat_integrate(q_start, w, th));
                    assert_true(turn <= 0.02 * xg_vec3_norm(w) * (double)horizons_ms[h] * 1e-3);
                }
            }
        }
        xg_table_free(t);
    }
}

/* A constant spin (a rigid body, no skeleton) at 30 and 120 Hz is extrapolated within 2 % of the
 * turn over the horizon, and its velocity gate keeps the whole velocity (k = 1). */
static void test_constant_spin_within_2_percent(void **state)
{
    (void)state;
    const int rates[] = {30, 120};
    const struct xg_vec3 w = {2.5, -4, 1}, v = {0.2, 0.1, 0};
    for (size_t ri = 0; ri < 2; ri++) {
        struct xg_table *t = new_table();
        for (int k = 0; k < 60; k++) {
            const int64_t tk = T0 + (int64_t)k * 1000000000 / rates[ri];
            const double ts = (double)k / rates[ri];
            const uint32_t id =
                feed(t, tk, xg_vec3_scale(v, ts), xg_quat_integrate(q_start, w, ts));
            if (k < 6) continue;
            const struct xg_entity *e = xg_table_get(t, id);
            assert_true(fabs(e->vgate.k - 1) < 1e-6);
            struct xg_pose out;
            xg_entity_predict(t, id, tk + 33 * MS, &out);
            const double err =
                xg_quat_angle_between(out.orientation, xg_quat_integrate(q_start, w, ts + 0.033));
            assert_true(err <= 0.02 * xg_vec3_norm(w) * 0.033);
        }
        xg_table_free(t);
    }
}

/* One joint's rotation rule driven directly: each interval turns along the estimate (so the
 * direction check passes and the least-squares gain stays 1) plus a sideways turn 4 x as large,
 * alternating in sign: extrapolating removes 1/17 of holding's error. With the confidence gate the
 * gain falls toward holding (below 0.3 within 20 intervals); without it (rot_gate_tau 0) it stays
 * at 1. Then the turns come true exactly and the gain is back to 1 within 25 intervals (the
 * poor intervals' large errors fade at the gate's forgetting, 0.9 per interval). */
static double drive(double tau, int n_poor, int n_good, double *gain_after_poor)
{
    struct xg_predict_tuning tu = XG_PREDICT_TUNING_DEFAULT;
    tu.rot_gate_tau = tau;
    xg_predict_tuning_set(&tu);
    struct xg_rot_state s;
    xg_rot_reset(&s);
    const double dt = 1.0 / 30, w_in[3] = {5, 0, 0}; /* 5 rad/s: above every hold threshold */
    double gain = 0;
    struct xg_vec3 w_out;
    for (int k = 0; k < n_poor + n_good; k++) {
        const double side = k < n_poor ? (k % 2 ? 4 : -4) * 5 * dt : 0;
        const double d[3] = {5 * dt, side, 0};
        const int64_t t0 = T0 + (int64_t)(k + 1) * 33333333, t1 = T0 + (int64_t)k * 33333333;
        xg_rot_learn(&s, t0, t1, d, dt, XG_ROT_HOLD_BELOW);
        gain = xg_rot_decide(&s, d, w_in, &w_out);
        if (k == n_poor - 1) *gain_after_poor = gain;
    }
    xg_predict_tuning_set(NULL);
    return gain;
}

static void test_falls_back_toward_holding(void **state)
{
    (void)state;
    double poor_on = -1, poor_off = -1;
    const double recovered = drive(0.25, 20, 25, &poor_on);
    drive(0, 20, 0, &poor_off);
    assert_true(poor_on < 0.3);
    assert_true(poor_off > 0.99);
    assert_true(recovered > 0.99);
}

/* The tunables clamp what they are given and NULL restores the defaults. */
static void test_tuning_set(void **state)
{
    (void)state;
    const struct xg_predict_tuning bad = {
        .vel_forget = 2, .rot_hold_scale = -1, .rot_gate_tau = 5, .rot_gate_forget = NAN};
    xg_predict_tuning_set(&bad);
    assert_true(xg_predict_tuning()->vel_forget <= 0.999);
    assert_true(xg_predict_tuning()->rot_hold_scale == 0);
    assert_true(xg_predict_tuning()->rot_gate_tau == 1);
    assert_true(xg_predict_tuning()->rot_gate_forget == 0);
    xg_predict_tuning_set(NULL);
    const struct xg_predict_tuning def = XG_PREDICT_TUNING_DEFAULT;
    assert_true(xg_predict_tuning()->vel_forget == def.vel_forget);
    assert_true(xg_predict_tuning()->rot_gate_tau == def.rot_gate_tau);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sudden_stop_never_overshoots),
        cmocka_unit_test(test_constant_spin_within_2_percent),
        cmocka_unit_test(test_falls_back_toward_holding),
        cmocka_unit_test(test_tuning_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
