/* Causal motion estimation and the rotation predictor that degrades gracefully (issue 23,
 * core/predict_est.h), on synthetic motion through the entity table:
 * - constant angular velocity is predicted near-exactly at 30, 60 and 120 Hz and 33 / 50 / 100 ms
 *   (quality PREDICTED, nothing damped);
 * - a sudden stop does not keep spinning: once the newest interval shows no turn the prediction
 *   holds the orientation (quality DAMPED), where the straight-line fit over the whole 100 ms
 *   window that it replaced kept turning at 7/10 of the old rate;
 * - a reversal is not extrapolated backwards from the old direction;
 * - the estimator reads only the samples it is given (the `bvh` adapter's test_causal_default
 *   shows that a replayed take hands it no later frame);
 * - xg_table_forget_history: no velocity is estimated across a jump the source announces.
 * Figures on real motion belong to the benchmark (bench_bvh_prediction), not here. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/entity_priv.h" /* white-box: reads the entity's internals */
#include "core/predict_est.h"

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

/* Turning at 3 rad/s about Y at 30 Hz, then the joint stops dead: the first sample after the
 * stop repeats the orientation. */
static void test_sudden_stop_does_not_keep_spinning(void **state)
{
    (void)state;
    const struct xg_vec3 w = {0, 3.0, 0};
    struct xg_table *t = new_table();
    uint32_t id = 0;
    int64_t tk = 0;
    struct xg_quat q = Q0;
    for (int k = 0; k < 10; k++) {
        tk = T0 + (int64_t)k * 1000000000 / 30;
        q = spin(w, (double)(tk - T0) * 1e-9);
        id = feed(t, tk, XG_VEC3_ZERO, q);
    }
    /* while turning: predicted, 3 rad/s */
    struct xg_pose p;
    xg_entity_predict(t, id, tk + 33 * MS, &p);
    assert_int_equal(p.quality, XG_QUALITY_PREDICTED);
    assert_true(fabs(xg_quat_angle_between(p.orientation, q) - 3.0 * 0.033) < 1e-9);
    /* stopped */
    tk += 1000000000 / 30;
    id = feed(t, tk, XG_VEC3_ZERO, q);
    const struct xg_entity *e = xg_table_get(t, id);
    assert_true(e->rot_damped);
    assert_true(xg_vec3_norm(e->angular_velocity) == 0);
    for (int64_t h = 10 * MS; h <= 100 * MS; h += 10 * MS) {
        xg_entity_predict(t, id, tk + h, &p);
        assert_int_equal(p.quality, XG_QUALITY_DAMPED);
        assert_true(xg_quat_angle_between(p.orientation, q) < 1e-12);
    }
    /* what the straight-line fit over the 100 ms window (samples at 0, -33, -67, -100 ms, three
     * of them turning) said: slope = 0.7 x 3 rad/s, i.e. it kept spinning */
    double ts[4] = {0, -1.0 / 30, -2.0 / 30, -3.0 / 30}, ang[4] = {0, 0, -0.1, -0.2};
    double st = 0, stt = 0, sa = 0, sta = 0;
    for (int i = 0; i < 4; i++)
        st += ts[i], stt += ts[i] * ts[i], sa += ang[i], sta += ts[i] * ang[i];
    double old = (4 * sta - st * sa) / (4 * stt - st * st);
    assert_float_equal(old, 0.7 * 3.0, 1e-9);
    xg_table_free(t);
}

/* Turning one way, then the newest interval turns back: no extrapolation along the old
 * direction (or along a fit that still points that way). */
static void test_reversal_holds(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    uint32_t id = 0;
    int64_t tk = 0;
    for (int k = 0; k < 8; k++) {
        tk = T0 + (int64_t)k * 1000000000 / 60;
        id = feed(t, tk, XG_VEC3_ZERO, spin((struct xg_vec3){0, 0, 2.0}, (double)k / 60));
    }
    tk += 1000000000 / 60;
    struct xg_quat back = spin((struct xg_vec3){0, 0, 2.0}, 6.5 / 60);
    id = feed(t, tk, XG_VEC3_ZERO, back);
    const struct xg_entity *e = xg_table_get(t, id);
    /* whatever the fit says, it does not turn along +Z any more */
    assert_true(e->angular_velocity.z <= 0);
    struct xg_pose p;
    xg_entity_predict(t, id, tk + 50 * MS, &p);
    struct xg_vec3 d = xg_quat_log(xg_quat_mul(p.orientation, xg_quat_conj(back)));
    assert_true(d.z <= 1e-12);
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
    assert_true(m1.rot_gain > 0.5);
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
    xg_entity_predict(t, id, T0 + 60 * MS, &p);
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
