/* Causal motion estimation (core/predict/predict_est.c: the fit) and how far the table extrapolates
 * it (core/predict/predict_rot.c: xg_rot_update, called by core/table/entity.c with the fit), on
 * synthetic motion through the entity table:
 * - constant angular velocity is predicted near-exactly at 30, 60 and 120 Hz and 33 / 50 / 100 ms
 *   (quality PREDICTED, nothing damped);
 * - a sudden stop does not keep spinning: once the newest interval shows no turn the prediction
 *   holds the orientation (quality DAMPED); at 120 Hz the fit still turns fast there (asserted),
 *   so the hold is the direction rule's (xg_rot_decide: the newest interval did not turn along
 *   the fit);
 * - a reversal is not extrapolated along the old direction: the fit still points that way
 *   (asserted), the direction rule holds;
 * - the estimator reads only the samples it is given (the `bvh` adapter's test_causal_default
 *   shows that a replayed take hands it no later frame), and its estimate is theirs;
 * - xg_table_forget_history: no velocity is estimated across a jump the source announces.
 * A slow noisy source that is still (the hold threshold) and the learned gain are
 * test_predict_rot's. Figures on real motion belong to the benchmark (bench_bvh_prediction, and
 * its guard under ctest, bench/prediction_guard), not here. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: reads the entity's internals */
#include "core/predict/predict_est.h"
#include "core/predict/predict_rot.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)

static uint32_t feed(struct xg_table *t, int64_t t_ns, struct xg_vec3 p, struct xg_quat q)
{
    struct xg_entity_key key = {.source = "j", .kind = XG_KIND_JOINT};
    struct xg_sample s = {.capture_ns = t_ns,
                          .receive_ns = t_ns,
                          .flags = XG_SAMPLE_POSE,
                          .position = p,
                          .orientation = q};
    uint32_t id = 0;
    assert_int_equal(xg_table_update_origin(t, 0, &key, &s, &id), 0);
    return id;
}

static struct xg_table *new_table(void)
{
    struct xg_table *t = xg_table_new(NULL); /* 100 ms window and horizon */
    assert_non_null(t);
    assert_int_equal(xg_table_set_adapter_name(t, 0, "src"), 0);
    return t;
}

static const struct xg_quat Q0 = {0.1, 0.2, -0.3, 0.927362};

static struct xg_quat spin(struct xg_vec3 w, double t_s)
{
    return xg_quat_normalize(
        xg_quat_mul(xg_quat_exp(xg_vec3_scale(w, t_s)), xg_quat_normalize(Q0)));
}

static void test_constant_angular_velocity_exact(void **state)
{
    (void)state;
    const struct xg_vec3 w = {0.5, 2.0, -1.0}; /* rad/s, |w| = 2.29 */
    const int rates[] = {30, 60, 120};
    const int64_t horizons[] = {33 * MS, 50 * MS, 100 * MS};
    for (int r = 0; r < 3; r++) {
        struct xg_table *t = new_table();
        uint32_t id = 0;
        int64_t last = 0;
        for (int k = 0; k < 12; k++) {
            last = T0 + (int64_t)k * 1000000000 / rates[r];
            id =
                feed(t, last, (struct xg_vec3){0.1 * k, 1, 0}, spin(w, (double)(last - T0) * 1e-9));
        }
        const struct xg_entity *e = xg_table_get(t, id);
        assert_false(e->rot_damped);
        assert_true(xg_vec3_norm(xg_vec3_sub(e->angular_velocity, w)) < 1e-9);
        for (int h = 0; h < 3; h++) {
            struct xg_pose p;
            assert_int_equal(xg_entity_predict(t, id, last + horizons[h], &p), 0);
            assert_int_equal(p.quality, XG_QUALITY_PREDICTED);
            struct xg_quat want = spin(w, (double)(last + horizons[h] - T0) * 1e-9);
            assert_true(xg_quat_angle_between(p.orientation, want) < 1e-9);
        }
        xg_table_free(t);
    }
}

/* The angular velocity the estimator fitted to the entity's history as it stands (product code:
 * xg_motion_estimate over the table's window), to show which rule decided. */
static struct xg_vec3 fitted(const struct xg_entity *e)
{
    struct xg_motion_est m;
    xg_motion_estimate(&e->hist, 100 * MS, &m);
    assert_true(m.n_used >= 2);
    return m.fit_angular_velocity;
}

/* Turning at 8 rad/s about Y, then the joint stops dead: the first sample after the stop repeats
 * the orientation. At 120 Hz the fit still carries most of the turn (the samples before the stop
 * weigh in), well above the hold threshold: only the direction rule (xg_rot_decide, the newest
 * interval did not turn along the fit) holds it; at 30 Hz the fit is nearly the newest interval
 * (0 rad/s) and both rules agree. */
static void test_sudden_stop_does_not_keep_spinning(void **state)
{
    (void)state;
    const struct xg_vec3 w = {0, 8.0, 0};
    const int rates[] = {30, 120};
    for (int r = 0; r < 2; r++) {
        struct xg_table *t = new_table();
        uint32_t id = 0;
        int64_t tk = 0;
        struct xg_quat q = Q0;
        for (int k = 0; k < 12; k++) {
            tk = T0 + (int64_t)k * 1000000000 / rates[r];
            q = spin(w, (double)(tk - T0) * 1e-9);
            id = feed(t, tk, XG_VEC3_ZERO, q);
        }
        /* while turning: predicted, 8 rad/s */
        struct xg_pose p;
        assert_int_equal(xg_entity_predict(t, id, tk + 33 * MS, &p), 0);
        assert_int_equal(p.quality, XG_QUALITY_PREDICTED);
        assert_float_equal(xg_quat_angle_between(p.orientation, q), 8.0 * 0.033, 1e-9);
        /* stopped */
        tk += 1000000000 / rates[r];
        id = feed(t, tk, XG_VEC3_ZERO, q);
        const struct xg_entity *e = xg_table_get(t, id);
        if (rates[r] == 120) /* the fit still turns along +Y, faster than any hold threshold */
            assert_true(fitted(e).y > XG_ROT_HOLD_BELOW);
        assert_true(e->rot_damped);
        assert_true(e->has_angular_velocity);
        assert_true(xg_vec3_norm(e->angular_velocity) == 0);
        for (int64_t h = 10 * MS; h <= 100 * MS; h += 10 * MS) {
            assert_int_equal(xg_entity_predict(t, id, tk + h, &p), 0);
            assert_int_equal(p.quality, XG_QUALITY_DAMPED);
            assert_true(xg_quat_angle_between(p.orientation, q) < 1e-12);
        }
        xg_table_free(t);
    }
}

/* Turning one way at 8 rad/s about Z at 120 Hz, then the newest interval turns back by 0.01 rad:
 * the fit over the window still points along +Z (asserted), the newest interval against it: the
 * direction rule holds the orientation (DAMPED, exactly the newest sample), where extrapolating
 * the fit would carry on along the old direction. */
static void test_reversal_holds(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    const struct xg_vec3 w = {0, 0, 8.0};
    uint32_t id = 0;
    int64_t tk = 0;
    for (int k = 0; k < 12; k++) {
        tk = T0 + (int64_t)k * 1000000000 / 120;
        id = feed(t, tk, XG_VEC3_ZERO, spin(w, (double)k / 120));
    }
    tk += 1000000000 / 120;
    struct xg_quat back = spin(w, 11.0 / 120 - 0.01 / 8.0);
    id = feed(t, tk, XG_VEC3_ZERO, back);
    const struct xg_entity *e = xg_table_get(t, id);
    assert_true(fitted(e).z > XG_ROT_HOLD_BELOW); /* the fit: still the old direction */
    assert_true(e->rot_damped);
    assert_true(xg_vec3_norm(e->angular_velocity) == 0);
    for (int64_t h = 5 * MS; h <= 100 * MS; h += 5 * MS) {
        struct xg_pose p;
        assert_int_equal(xg_entity_predict(t, id, tk + h, &p), 0);
        assert_int_equal(p.quality, XG_QUALITY_DAMPED);
        assert_true(xg_quat_angle_between(p.orientation, back) < 1e-12);
    }
    xg_table_free(t);
}

/* The estimator itself reads only the n samples it is given: a ring whose slots past the newest
 * hold a "future" sample gives the same answer as one whose slots are empty. */
static void test_estimator_reads_only_given_samples(void **state)
{
    (void)state;
    struct xg_history ring, ring2;
    xg_history_clear(&ring);
    for (unsigned i = 0; i < 6; i++) {
        double ts = i / 60.0;
        xg_history_push(&ring, T0 + (int64_t)i * 1000000000 / 60, (struct xg_vec3){ts * ts, ts, 0},
                        spin((struct xg_vec3){0, 1 + ts, 0}, ts), NULL);
    }
    memcpy(&ring2, &ring, sizeof ring);
    /* the future: the ring's slot 6, written but not among the 6 samples it holds */
    ring2.e[6].t = ring2.e[5].t + 1000000000 / 60;
    ring2.e[6].p[0] = ring2.e[6].p[1] = ring2.e[6].p[2] = 5;
    struct xg_motion_est m1, m2;
    memset(&m1, 0, sizeof m1);
    memset(&m2, 0, sizeof m2);
    xg_motion_estimate(&ring, 100 * MS, &m1);
    xg_motion_estimate(&ring2, 100 * MS, &m2);
    assert_memory_equal(&m1, &m2, sizeof m1);
    assert_int_equal(m1.n_used, 6);
    /* and it is the estimate of the 6 samples: position t^2, t (the quadratic fit is exact),
     * rotation about Y by (1 + t) t, turning at 1 + 2 t rad/s at the newest (t = 5/60 s; the fit
     * weighs mostly the newest interval, whose mean rate is 1 + 2 t - 1/60, and the ones before) */
    const double tn = 5.0 / 60;
    assert_float_equal(m1.velocity.x, 2 * tn, 1e-9);
    assert_float_equal(m1.velocity.y, 1, 1e-9);
    assert_float_equal(m1.velocity.z, 0, 1e-9);
    assert_float_equal(m1.fit_angular_velocity.y, 1 + 2 * tn, 0.04);
    assert_float_equal(m1.fit_angular_velocity.x, 0, 1e-9);
    assert_float_equal(m1.fit_angular_velocity.z, 0, 1e-9);
    assert_int_equal(m1.prev_t_ns, T0 + 4 * (int64_t)1000000000 / 60);
}

/* xg_table_forget_history: the next sample starts a new history (nothing estimated from one
 * sample: the pose is held), the one after estimates from those two only; unknown ids. */
static void test_forget_history(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    uint32_t id = 0;
    for (int k = 0; k < 5; k++)
        id = feed(t, T0 + k * 10 * MS, (struct xg_vec3){k * 0.01, 0, 0}, XG_QUAT_IDENTITY);
    assert_int_equal(xg_table_forget_history(t, id), 0);
    assert_int_equal(xg_table_forget_history(t, id + 1000), -ENOENT);
    feed(t, T0 + 50 * MS, (struct xg_vec3){-3, 0, 0}, XG_QUAT_IDENTITY); /* the jump */
    const struct xg_entity *e = xg_table_get(t, id);
    assert_int_equal(xg_history_count(&e->hist), 1);
    assert_false(e->has_velocity);
    struct xg_pose p;
    assert_int_equal(xg_entity_predict(t, id, T0 + 60 * MS, &p), 0);
    assert_int_equal(p.quality, XG_QUALITY_HELD);
    assert_float_equal(p.position.x, -3, 0);
    feed(t, T0 + 60 * MS, (struct xg_vec3){-2.99, 0, 0}, XG_QUAT_IDENTITY);
    assert_true(e->has_velocity);
    assert_float_equal(e->velocity.x, 1.0, 1e-9); /* not -300 m/s across the jump */
    xg_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_angular_velocity_exact),
        cmocka_unit_test(test_sudden_stop_does_not_keep_spinning),
        cmocka_unit_test(test_reversal_holds),
        cmocka_unit_test(test_estimator_reads_only_given_samples),
        cmocka_unit_test(test_forget_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
