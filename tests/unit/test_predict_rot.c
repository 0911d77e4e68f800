/* core/predict/predict_rot.c through the entity table: how far an estimated angular velocity is
 * extrapolated (docs/prediction.md, "How a pose is predicted"). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: reads the entity's internals */
#include "core/predict/predict_rot.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)

static const int64_t horizons_ms[] = {5, 33, 50, 100};

static struct xg_table *new_table(void)
{
    struct xg_table *t = xg_table_new(NULL); /* defaults: 100 ms horizon */
    assert_non_null(t);
    xg_table_set_adapter_name(t, 0, "src");
    return t;
}

static uint32_t feed(struct xg_table *t, int64_t t_ns, struct xg_quat q)
{
    struct xg_entity_key key = {.source = "j", .kind = XG_KIND_JOINT};
    struct xg_sample s = {.capture_ns = t_ns, .receive_ns = t_ns, .flags = XG_SAMPLE_POSE};
    s.orientation = q;
    uint32_t id = 0;
    assert_int_equal(xg_table_update_origin(t, 0, &key, &s, &id), 0);
    return id;
}

static const struct xg_quat q_start = {0.1825742, 0.3651484, 0.5477226, 0.7302967};

/* A steady spin, slow (below XG_ROT_HOLD_BELOW) or fast, at 30 to 240 Hz: from the third sample
 * on (the first interval whose extrapolation can be checked) every answer up to the horizon is
 * the spin itself, to rounding, and PREDICTED; the published angular velocity is the spin's. */
static void test_constant_spin_exact(void **state)
{
    (void)state;
    const struct xg_vec3 spins[] = {{0.3, -1.0, 0.5}, {4, 2, -3}, {0, 0.2, 0}};
    const int rates[] = {30, 60, 120, 240};
    for (size_t si = 0; si < sizeof spins / sizeof *spins; si++)
        for (size_t ri = 0; ri < sizeof rates / sizeof *rates; ri++) {
            struct xg_table *t = new_table();
            const struct xg_vec3 w = spins[si];
            for (int k = 0; k < 40; k++) {
                int64_t tk = T0 + (int64_t)k * 1000000000 / rates[ri];
                double ts = (double)(tk - T0) * 1e-9;
                uint32_t id = feed(t, tk, xg_quat_integrate(q_start, w, ts));
                if (k < 2) continue;
                const struct xg_entity *e = xg_table_get(t, id);
                assert_true(xg_vec3_norm(xg_vec3_sub(e->angular_velocity, w)) < 1e-9);
                for (size_t h = 0; h < sizeof horizons_ms / sizeof *horizons_ms; h++) {
                    struct xg_pose out;
                    int64_t tq = tk + horizons_ms[h] * MS;
                    assert_int_equal(xg_entity_predict(t, id, tq, &out), 0);
                    assert_int_equal(out.quality, XG_QUALITY_PREDICTED);
                    struct xg_quat truth = xg_quat_integrate(q_start, w, (double)(tq - T0) * 1e-9);
                    assert_true(xg_quat_angle_between(out.orientation, truth) < 1e-9);
                }
            }
            xg_table_free(t);
        }
}

/* A fast turn (6 rad/s, a foot at a strike) that stops dead on a sample: before the stop the
 * turn is extrapolated (PREDICTED); from the first sample whose interval did not turn, every
 * answer is the held orientation (no overshoot past where holding would be: holding is exact
 * now), DAMPED. At 30, 60 and 120 Hz (at 120 Hz the fit's window still holds the turn). */
static void test_sudden_stop_never_overshoots(void **state)
{
    (void)state;
    const int rates[] = {30, 60, 120};
    const struct xg_vec3 w = {0, 6, 1};
    for (size_t ri = 0; ri < sizeof rates / sizeof *rates; ri++) {
        struct xg_table *t = new_table();
        const int stop = rates[ri] / 3; /* the sample at 333 ms is the last one that moved */
        int predicted_before = 0, checked_after = 0;
        for (int k = 0; k < stop + 20; k++) {
            int64_t tk = T0 + (int64_t)k * 1000000000 / rates[ri];
            int ks = k < stop ? k : stop;
            double ts = (double)ks / rates[ri];
            struct xg_quat q = xg_quat_integrate(q_start, w, ts);
            uint32_t id = feed(t, tk, q);
            for (size_t h = 0; h < sizeof horizons_ms / sizeof *horizons_ms; h++) {
                struct xg_pose out;
                assert_int_equal(xg_entity_predict(t, id, tk + horizons_ms[h] * MS, &out), 0);
                if (k >= 2 && k < stop) {
                    predicted_before += out.quality == XG_QUALITY_PREDICTED;
                } else if (k > stop) {
                    /* the truth is q from here on: holding is exact */
                    assert_true(xg_quat_angle_between(out.orientation, q) < 1e-12);
                    assert_int_equal(out.quality, XG_QUALITY_DAMPED);
                    checked_after++;
                }
            }
        }
        assert_true(predicted_before > 0);
        assert_int_equal(checked_after, 19 * 4);
        xg_table_free(t);
    }
}

/* A slow unsteady turn (0.3 degrees of jitter around a fixed orientation, 60 Hz: interval rates
 * up to about 0.6 rad/s that change direction) is held, DAMPED, while a steady turn at the same
 * rate is extrapolated (test_constant_spin_exact, 0.2 rad/s): the hold threshold follows how steady
 * the turn is, not only its rate. */
static void test_slow_jitter_held(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    uint64_t rng = 7;
    int held = 0, n = 0;
    for (int k = 0; k < 60; k++) {
        int64_t tk = T0 + (int64_t)k * 1000000000 / 60;
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        double a = ((double)(rng >> 11) / 9007199254740992.0 * 2 - 1) * 0.3 * M_PI / 180;
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        double b = ((double)(rng >> 11) / 9007199254740992.0 * 2 - 1) * 0.3 * M_PI / 180;
        struct xg_quat q = xg_quat_mul(xg_quat_exp((struct xg_vec3){a, b, 0}), q_start);
        uint32_t id = feed(t, tk, q);
        if (k < 10) continue;
        struct xg_pose out;
        assert_int_equal(xg_entity_predict(t, id, tk + 33 * MS, &out), 0);
        n++;
        if (out.quality == XG_QUALITY_DAMPED) {
            assert_true(xg_quat_angle_between(out.orientation, q) < 1e-12);
            held++;
        }
    }
    assert_int_equal(held, n);
    xg_table_free(t);
}

/* A slow turn through capture noise (1 rad/s about Z at 60 Hz, the orientation off by up to
 * 0.46 degrees each sample): every interval still turns the same way (0.04 to 1.96 rad/s), the fit
 * points along the turn and the learned gain stays well above 0 (both asserted), but the
 * interval rate changes by about half its size from sample to sample: the hold threshold
 * (4 x the rms change, at most XG_ROT_HOLD_BELOW) is above the fitted rate, so every answer holds
 * the newest sample, DAMPED. Without that threshold it would be extrapolated. */
static void test_slow_noisy_turn_held(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    uint64_t rng = 11;
    int n = 0;
    double k_min = 1;
    for (int k = 0; k < 90; k++) {
        int64_t tk = T0 + (int64_t)k * 1000000000 / 60;
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        double noise = ((double)(rng >> 11) / 9007199254740992.0 * 2 - 1) * 0.008;
        struct xg_quat q =
            xg_quat_mul(xg_quat_exp((struct xg_vec3){0, 0, 1.0 * k / 60 + noise}), q_start);
        uint32_t id = feed(t, tk, q);
        if (k < 20) continue;
        const struct xg_entity *e = xg_table_get(t, id);
        k_min = e->rot.k_learned < k_min ? e->rot.k_learned : k_min;
        assert_true(e->rot.pred[2] > 0); /* the fit after the direction rule: along the turn */
        assert_true(e->rot.pred[2] < e->rot.hold_below);
        for (size_t h = 0; h < sizeof horizons_ms / sizeof *horizons_ms; h++) {
            struct xg_pose out;
            assert_int_equal(xg_entity_predict(t, id, tk + horizons_ms[h] * MS, &out), 0);
            assert_int_equal(out.quality, XG_QUALITY_DAMPED);
            assert_true(xg_quat_angle_between(out.orientation, q) < 1e-12);
        }
        n++;
    }
    assert_int_equal(n, 70);
    assert_true(k_min > 0.5); /* the turns came true: the learned gain would extrapolate */
    xg_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_spin_exact),
        cmocka_unit_test(test_sudden_stop_never_overshoots),
        cmocka_unit_test(test_slow_jitter_held),
        cmocka_unit_test(test_slow_noisy_turn_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
