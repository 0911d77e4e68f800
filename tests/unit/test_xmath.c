/* Unit tests for core/util/xmath (quaternions, vectors) and core/clock conversions. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/clock/clock.h"
#include "core/util/xmath.h"

static void assert_quat_near(struct xg_quat a, struct xg_quat b, double tol)
{
    /* q and -q are the same rotation */
    double d = fabs(xg_quat_dot(a, b));
    if (!(1.0 - d <= tol)) {
        print_error("quat (%g %g %g %g) != (%g %g %g %g)\n", a.x, a.y, a.z, a.w, b.x, b.y, b.z,
                    b.w);
        fail();
    }
}

static void test_mul_rotate(void **state)
{
    (void)state;
    /* 90° about Z maps X to Y */
    struct xg_quat qz = xg_quat_from_axis_angle((struct xg_vec3){0, 0, 1}, M_PI / 2);
    struct xg_vec3 v = xg_quat_rotate(qz, (struct xg_vec3){1, 0, 0});
    assert_float_equal(v.x, 0, 1e-12);
    assert_float_equal(v.y, 1, 1e-12);
    assert_float_equal(v.z, 0, 1e-12);
    /* Hamilton order: (qx ⊗ qz) applies qz first, then qx */
    struct xg_quat qx = xg_quat_from_axis_angle((struct xg_vec3){1, 0, 0}, M_PI / 2);
    v = xg_quat_rotate(xg_quat_mul(qx, qz), (struct xg_vec3){1, 0, 0});
    assert_float_equal(v.x, 0, 1e-12);
    assert_float_equal(v.y, 0, 1e-12);
    assert_float_equal(v.z, 1, 1e-12);
    /* conj inverts */
    struct xg_quat id = xg_quat_mul(qz, xg_quat_conj(qz));
    assert_quat_near(id, XG_QUAT_IDENTITY, 1e-15);
    /* normalize of zero is identity, of a scaled quaternion is unit */
    assert_quat_near(xg_quat_normalize((struct xg_quat){0, 0, 0, 0}), XG_QUAT_IDENTITY, 0);
    struct xg_quat n = xg_quat_normalize((struct xg_quat){0, 0, 3, 4});
    assert_float_equal(n.z, 0.6, 1e-15);
    assert_float_equal(n.w, 0.8, 1e-15);
}

static void test_exp_log(void **state)
{
    (void)state;
    struct xg_vec3 r = {0.3, -1.2, 0.7};
    struct xg_quat q = xg_quat_exp(r);
    struct xg_vec3 back = xg_quat_log(q);
    assert_float_equal(back.x, r.x, 1e-12);
    assert_float_equal(back.y, r.y, 1e-12);
    assert_float_equal(back.z, r.z, 1e-12);
    /* log is shortest: -q gives the same rotation vector */
    back = xg_quat_log((struct xg_quat){-q.x, -q.y, -q.z, -q.w});
    assert_float_equal(back.x, r.x, 1e-12);
    /* tiny angles */
    struct xg_vec3 tiny = {1e-10, 0, -2e-10};
    back = xg_quat_log(xg_quat_exp(tiny));
    assert_float_equal(back.x, tiny.x, 1e-20);
    assert_float_equal(back.z, tiny.z, 1e-20);
    /* exp(0) is identity */
    assert_quat_near(xg_quat_exp(XG_VEC3_ZERO), XG_QUAT_IDENTITY, 0);
}

static void test_slerp(void **state)
{
    (void)state;
    struct xg_vec3 axis = {1, 2, -0.5};
    struct xg_quat a = xg_quat_from_axis_angle((struct xg_vec3){0, 1, 0}, 0.4);
    struct xg_quat d = xg_quat_from_axis_angle(axis, 1.0);
    struct xg_quat b = xg_quat_mul(a, d);
    /* halfway is half the angle */
    struct xg_quat h = xg_quat_slerp(a, b, 0.5);
    assert_quat_near(h, xg_quat_mul(a, xg_quat_from_axis_angle(axis, 0.5)), 1e-14);
    assert_quat_near(xg_quat_slerp(a, b, 0), a, 1e-15);
    assert_quat_near(xg_quat_slerp(a, b, 1), b, 1e-15);
    /* extrapolation */
    assert_quat_near(xg_quat_slerp(a, b, 2.0), xg_quat_mul(a, xg_quat_from_axis_angle(axis, 2.0)),
                     1e-14);
    /* shortest arc: b and -b interpolate the same */
    struct xg_quat nb = {-b.x, -b.y, -b.z, -b.w};
    assert_quat_near(xg_quat_slerp(a, nb, 0.3), xg_quat_slerp(a, b, 0.3), 1e-14);
    assert_float_equal(xg_quat_angle_between(a, b), 1.0, 1e-12);
}

static void test_angular_velocity(void **state)
{
    (void)state;
    struct xg_vec3 w = {0.5, -1.0, 2.0}; /* rad/s, world frame */
    struct xg_quat q0 = xg_quat_from_axis_angle((struct xg_vec3){1, 1, 0}, 0.7);
    struct xg_quat q1 = xg_quat_integrate(q0, w, 0.01);
    struct xg_vec3 est = xg_quat_angular_velocity(q0, q1, 0.01);
    assert_float_equal(est.x, w.x, 1e-9);
    assert_float_equal(est.y, w.y, 1e-9);
    assert_float_equal(est.z, w.z, 1e-9);
    /* world frame: q1 = exp(w dt) ⊗ q0, not q0 ⊗ exp(w dt) */
    struct xg_quat body = xg_quat_mul(q0, xg_quat_exp(xg_vec3_scale(w, 0.01)));
    struct xg_vec3 wrong = xg_quat_angular_velocity(q0, body, 0.01);
    assert_true(fabs(wrong.x - w.x) + fabs(wrong.y - w.y) + fabs(wrong.z - w.z) > 0.1);
    est = xg_quat_angular_velocity(q0, q1, 0);
    assert_float_equal(xg_vec3_norm(est), 0, 0);
}

static void test_mat3(void **state)
{
    (void)state;
    struct xg_quat q = xg_quat_normalize((struct xg_quat){0.1, -0.7, 0.3, 0.6});
    double m[3][3];
    xg_quat_to_mat3(q, m);
    assert_float_equal(xg_mat3_det(m), 1.0, 1e-12);
    assert_quat_near(xg_quat_from_mat3(m), q, 1e-14);
    /* matrix and quaternion rotate alike */
    struct xg_vec3 v = {0.3, 2.0, -1.0}, r = xg_quat_rotate(q, v);
    assert_float_equal(m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z, r.x, 1e-12);
    assert_float_equal(m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z, r.z, 1e-12);
    /* 180° rotations (trace −1 branches) */
    struct xg_quat flips[] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
    for (int i = 0; i < 3; i++) {
        xg_quat_to_mat3(flips[i], m);
        assert_quat_near(xg_quat_from_mat3(m), flips[i], 1e-14);
    }
}

/* m·v rotates like the quaternion; the transpose undoes the rotation and swaps m[i][j] */
static void test_mat3_mul_transpose(void **state)
{
    (void)state;
    struct xg_quat q = xg_quat_normalize((struct xg_quat){0.1, -0.7, 0.3, 0.6});
    double m[3][3], t[3][3];
    xg_quat_to_mat3(q, m);
    struct xg_vec3 v = {0.3, 2.0, -1.0}, r = xg_quat_rotate(q, v);
    struct xg_vec3 mv = xg_mat3_mul_vec(m, v);
    assert_float_equal(mv.x, r.x, 1e-12);
    assert_float_equal(mv.y, r.y, 1e-12);
    assert_float_equal(mv.z, r.z, 1e-12);
    xg_mat3_transpose(m, t);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_true(t[i][j] == m[j][i]);
    struct xg_vec3 back = xg_mat3_mul_vec(t, mv);
    assert_float_equal(back.x, v.x, 1e-12);
    assert_float_equal(back.y, v.y, 1e-12);
    assert_float_equal(back.z, v.z, 1e-12);
    /* a non-symmetric matrix: row · vector, not column · vector */
    const double a[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
    struct xg_vec3 av = xg_mat3_mul_vec(a, (struct xg_vec3){1, 0, -1});
    assert_float_equal(av.x, -2, 0);
    assert_float_equal(av.y, -2, 0);
    assert_float_equal(av.z, -2, 0);
    av = xg_mat3_mul_vec(a, (struct xg_vec3){1, 10, 100});
    assert_float_equal(av.x, 321, 0);
    assert_float_equal(av.y, 654, 0);
    assert_float_equal(av.z, 987, 0);
}

/* xg_atan2_nonneg against libm over the first quadrant (the half angles of unit quaternions, and
 * near both ends), within 2 ulp of π/2; the edges (0, 0), an infinite y and NaN */
static void test_atan2_nonneg(void **state)
{
    (void)state;
    double worst = 0;
    for (int i = 0; i <= 200000; i++) {
        double th = 1.5707963267948966 * i / 200000;
        if (i % 3 == 1) th *= 1e-7;
        if (i % 3 == 2) th = 1.5707963267948966 - th * 1e-7;
        const double y = sin(th), x = cos(th) < 0 ? 0 : cos(th);
        const double e = fabs(xg_atan2_nonneg(y, x) - atan2(y, x));
        if (e > worst) worst = e;
        /* scaled arguments (not unit) give the same angle */
        assert_true(fabs(xg_atan2_nonneg(3 * y, 3 * x) - atan2(3 * y, 3 * x)) <= 5e-16);
    }
    assert_true(worst <= 4.5e-16);
    assert_true(xg_atan2_nonneg(0, 0) == 0);
    assert_true(xg_atan2_nonneg(0, 1) == 0);
    assert_true(fabs(xg_atan2_nonneg(1, 0) - 1.5707963267948966) <= 2.3e-16);
    assert_true(fabs(xg_atan2_nonneg(INFINITY, 1) - 1.5707963267948966) <= 2.3e-16);
    assert_true(isnan(xg_atan2_nonneg(NAN, 1)) && isnan(xg_atan2_nonneg(1, NAN)));
}

static void test_clock_conversions(void **state)
{
    (void)state;
    struct timeval tv = xg_ns_to_timeval(INT64_C(1700000000123456789));
    assert_int_equal(tv.tv_sec, 1700000000);
    assert_int_equal(tv.tv_usec, 123456);
    assert_true(xg_timeval_to_ns(tv) == INT64_C(1700000000123456000));
    tv = xg_ns_to_timeval(-1500); /* -1.5 µs → floor to -2 µs = -1 s + 999998 µs */
    assert_int_equal(tv.tv_sec, -1);
    assert_int_equal(tv.tv_usec, 999998);
    /* ms16 wraps at 65536 ms and unwraps near a reference */
    int64_t t = INT64_C(70000) * 1000000 + 5; /* 70 s */
    assert_int_equal(xg_ns_to_ms16(t), 70000 - 65536);
    assert_true(xg_ms16_to_ns(xg_ns_to_ms16(t), t + INT64_C(20000) * 1000000) ==
                INT64_C(70000) * 1000000);
    assert_true(xg_ms16_to_ns(xg_ns_to_ms16(t), t - INT64_C(20000) * 1000000) ==
                INT64_C(70000) * 1000000);
    /* 90 kHz: 1 s = 90000 ticks */
    assert_int_equal(xg_ns_to_rtp90k(INT64_C(1000000000)), 90000);
    int64_t ref = INT64_C(50000000000);
    int64_t back = xg_rtp90k_to_ns(xg_ns_to_rtp90k(ref + 10000000), ref);
    assert_true(llabs(back - (ref + 10000000)) < 12000);
    /* monotonic clock advances, wall clock is after 2020 */
    int64_t m0 = xg_clock_mono_ns(), m1 = xg_clock_mono_ns();
    assert_true(m1 >= m0);
    assert_true(xg_clock_wall_ns() > INT64_C(1577836800) * 1000000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mul_rotate),   cmocka_unit_test(test_exp_log),
        cmocka_unit_test(test_slerp),        cmocka_unit_test(test_angular_velocity),
        cmocka_unit_test(test_mat3),         cmocka_unit_test(test_clock_conversions),
        cmocka_unit_test(test_atan2_nonneg), cmocka_unit_test(test_mat3_mul_transpose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
