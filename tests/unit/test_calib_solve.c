/* Unit tests for core/calib/calib_solve (the space calibration solver, docs/calibration.md): an
 * object waved about every axis for 10 s with 1 mm / 0.2° noise per axis and a 20 ms delay gives Y
 * and X within 2 mm and 0.2° and the time offset within 2 ms; a yaw-only motion is reported as
 * unobservable (yaw) with no transform; noise-free data is solved to micrometres; bad input (NaN
 * samples, too little data, no motion) is refused with the documented errors. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calib_synth.h"
#include "core/calib/calib_linalg.h"

#define DEG (M_PI / 180)
#define NMAX 4000
#define T0 (INT64_C(7000) * 1000000000)

static struct xg_calib_sample ref[NMAX], tgt[NMAX];
static size_t n_ref, n_tgt;

static void test_linalg(void **state)
{
    (void)state;
    double a[9] = {4, 1, 0, 1, 3, 0.5, 0, 0.5, 2}, val[3], vec[9];
    double a0[9];
    memcpy(a0, a, sizeof a);
    assert_int_equal(xg_la_eigen_sym(3, a, val, vec), 0);
    assert_true(val[0] <= val[1] && val[1] <= val[2]);
    for (int j = 0; j < 3; j++) /* A v = λ v */
        for (int i = 0; i < 3; i++) {
            double s = 0;
            for (int k = 0; k < 3; k++)
                s += a0[i * 3 + k] * vec[k * 3 + j];
            assert_true(fabs(s - val[j] * vec[i * 3 + j]) < 1e-12);
        }
    double m[3][3], r[3][3], rt[3][3];
    xg_quat_to_mat3(xg_quat_from_axis_angle((struct xg_vec3){1, 2, 3}, 1.1), r);
    double sym[3][3] = {{2, 0.1, 0}, {0.1, 2.5, 0.2}, {0, 0.2, 3}}; /* m = r·sym: polar factor r */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            m[i][j] = 0;
            for (int k = 0; k < 3; k++)
                m[i][j] += r[i][k] * sym[k][j];
        }
    assert_int_equal(xg_la_nearest_rotation(m, rt), 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_true(fabs(rt[i][j] - r[i][j]) < 1e-9);
    double sing[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 0}};
    assert_int_equal(xg_la_nearest_rotation(sing, rt), -EDOM);
    double nan9[9] = {NAN};
    assert_int_equal(xg_la_eigen_sym(3, nan9, val, vec), -EINVAL);
}

static void test_waved_every_axis(void **state)
{
    (void)state;
    synth_scene(10, 7, 0.020, 0.001, 0.2 * DEG, T0, ref, &n_ref, tgt, &n_tgt);
    struct xg_calib_result r;
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), 0);
    struct xg_calib_xf y = synth_y(), x = synth_x();
    double em, er;
    synth_err(&r.y, &y, &em, &er);
    print_message("Y: %.3f mm %.4f deg; ", em * 1e3, er / DEG);
    assert_true(em < 0.002);
    assert_true(er < 0.2 * DEG);
    synth_err(&r.x, &x, &em, &er);
    print_message("X: %.3f mm %.4f deg; offset %.3f ms; residual %.2f mm %.3f deg, %zu pairs\n",
                  em * 1e3, er / DEG, r.time_offset_s * 1e3, r.residual_m * 1e3,
                  r.residual_rad / DEG, r.pairs);
    assert_true(em < 0.002);
    assert_true(er < 0.2 * DEG);
    assert_true(fabs(r.time_offset_s - 0.020) < 0.002);
    assert_int_equal(r.unobservable, 0);
    assert_true(r.pairs >= 1000);
    /* the residual is the noise: a few mm and tenths of a degree, not zero, not large */
    assert_true(r.residual_m > 0.001 && r.residual_m < 0.006);
    assert_true(r.residual_rad > 0.1 * DEG && r.residual_rad < 1.0 * DEG);
    for (int k = 0; k < 3; k++)
        assert_true(r.spread_rad[k] > 10 * DEG);
    /* drift check on the same data: the same residual */
    double rm, rr;
    size_t np;
    assert_int_equal(xg_calib_residuals(ref, n_ref, tgt, n_tgt, &r, 500, &rm, &rr, &np), 0);
    assert_true(fabs(rm - r.residual_m) < 0.001 && np > 350 && np <= 500);
}

static void test_noise_free(void **state)
{
    (void)state; /* no noise: exact up to interpolation (SLERP between samples) */
    synth_scene(10, 7, 0.020, 0, 0, T0, ref, &n_ref, tgt, &n_tgt);
    struct xg_calib_result r;
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), 0);
    struct xg_calib_xf y = synth_y(), x = synth_x();
    double em, er, xm, xr;
    synth_err(&r.y, &y, &em, &er);
    synth_err(&r.x, &x, &xm, &xr);
    print_message("noise free: Y %.2g m %.2g rad, X %.2g m %.2g rad, offset %.3g s\n", em, er, xm,
                  xr, r.time_offset_s - 0.020);
    assert_true(em < 1e-4 && er < 1e-4 && xm < 1e-4 && xr < 1e-4);
    assert_true(fabs(r.time_offset_s - 0.020) < 1e-4);
    assert_true(r.residual_m < 1e-4 && r.residual_rad < 1e-4);
}

static void test_negative_delay(void **state)
{
    (void)state;
    synth_scene(10, 7, -0.035, 0.001, 0.2 * DEG, T0, ref, &n_ref, tgt, &n_tgt);
    double off, peak; /* the coarse estimate (cross-correlation alone) */
    assert_int_equal(xg_calib_time_offset(ref, n_ref, tgt, n_tgt, NULL, &off, &peak), 0);
    assert_true(fabs(off + 0.035) < 0.025);
    assert_true(peak > 0.9);
    struct xg_calib_result r; /* refined with the rotations */
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), 0);
    assert_true(fabs(r.time_offset_s + 0.035) < 0.002);
}

static void test_yaw_only_is_unobservable(void **state)
{
    (void)state;
    synth_scene(10, 2, 0.020, 0.001, 0.2 * DEG, T0, ref, &n_ref, tgt, &n_tgt);
    struct xg_calib_result r;
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), -EDOM);
    /* yaw (about the up axis y) cannot be told; pitch and roll can */
    assert_int_equal(r.unobservable, XG_CALIB_UNOBS_Y);
    assert_true(r.spread_rad[1] > 20 * DEG);
    assert_true(r.spread_rad[0] < 2 * DEG && r.spread_rad[2] < 2 * DEG);
    /* no transform is answered */
    assert_true(r.y.q.w == 1 && r.y.t.x == 0 && r.x.q.w == 1);
}

static void test_no_motion_and_bad_input(void **state)
{
    (void)state;
    struct xg_calib_result r;
    /* nothing, too little */
    assert_int_equal(xg_calib_solve(ref, 0, tgt, 0, NULL, &r), -EAGAIN);
    assert_int_equal(xg_calib_solve(NULL, 5, tgt, 0, NULL, &r), -EINVAL);
    synth_scene(3, 7, 0.020, 0.001, 0.2 * DEG, T0, ref, &n_ref, tgt, &n_tgt);
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), -EAGAIN); /* 3 s < 4 s */
    /* an object that does not move: no time offset to find */
    synth_scene(10, 0, 0.020, 0.001, 0.2 * DEG, T0, ref, &n_ref, tgt, &n_tgt);
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), -EAGAIN);
    /* NaN samples are skipped: a few of them do not change the answer */
    synth_scene(10, 7, 0.020, 0.001, 0.2 * DEG, T0, ref, &n_ref, tgt, &n_tgt);
    for (size_t i = 0; i < n_ref; i += 97)
        ref[i].p.x = NAN;
    for (size_t i = 0; i < n_tgt; i += 89)
        tgt[i].q.w = NAN;
    tgt[5].q = (struct xg_quat){0, 0, 0, 0};
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), 0);
    struct xg_calib_xf y = synth_y();
    double em, er;
    synth_err(&r.y, &y, &em, &er);
    assert_true(em < 0.002 && er < 0.2 * DEG);
    /* all NaN: nothing to solve from */
    for (size_t i = 0; i < n_ref; i++)
        ref[i].q.x = NAN;
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), -EAGAIN);
    /* times going backwards are skipped, not trusted */
    synth_scene(10, 7, 0.020, 0.001, 0.2 * DEG, T0, ref, &n_ref, tgt, &n_tgt);
    for (size_t i = 0; i + 1 < n_ref; i += 50)
        ref[i + 1].t_ns = ref[i].t_ns - 5000000;
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), 0);
}

static void test_streams_that_do_not_overlap(void **state)
{
    (void)state;
    synth_scene(10, 7, 0.020, 0.001, 0.2 * DEG, T0, ref, &n_ref, tgt, &n_tgt);
    for (size_t j = 0; j < n_tgt; j++)
        tgt[j].t_ns += INT64_C(30) * 1000000000;
    struct xg_calib_result r;
    assert_int_equal(xg_calib_solve(ref, n_ref, tgt, n_tgt, NULL, &r), -EAGAIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linalg),
        cmocka_unit_test(test_waved_every_axis),
        cmocka_unit_test(test_noise_free),
        cmocka_unit_test(test_negative_delay),
        cmocka_unit_test(test_yaw_only_is_unobservable),
        cmocka_unit_test(test_no_motion_and_bad_input),
        cmocka_unit_test(test_streams_that_do_not_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
