/* Unit tests for core/table/history (the compact pose history): order and eviction of the ring,
 * the precision of what it gives back (times exact, positions within 2^-41 m, orientations
 * within 1e-12 rad, velocities within binary16), samples around a time, and the rebases: a
 * move past 128 m or a gap past 2.1 s keeps every sample (coarser only while the jump is in the
 * ring, exact again after it). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/history.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(5000) * 1000 * MS)
#define P_EXACT 4.6e-13 /* half a position unit (2^-41 m) */

static struct xg_vec3 pos_of(int k)
{
    return (struct xg_vec3){0.37 * k + 0.001 * k * k, -1.25 + 0.013 * k, 3.5 - 0.02 * k};
}

static struct xg_quat quat_of(int k)
{
    return xg_quat_exp((struct xg_vec3){0.3 * sin(0.1 * k), 1.2 - 0.05 * k, 0.07 * k});
}

static void test_entry_is_compact(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct xg_hist_entry), 52);
    assert_true(sizeof(struct xg_history) <= 40 + XG_HISTORY * 52);
}

static void test_ring_order_eviction_precision(void **state)
{
    (void)state;
    static struct xg_history h;
    xg_history_clear(&h);
    assert_int_equal(xg_history_count(&h), 0);
    const int n = XG_HISTORY + 7;
    for (int k = 0; k < n; k++) {
        struct xg_hist ev;
        memset(&ev, 0, sizeof ev);
        int64_t t = T0 + k * 4166667 + k % 3; /* ns-level times */
        bool evicted = xg_history_push(&h, t, pos_of(k), quat_of(k), &ev);
        xg_history_set_velocity(&h, (struct xg_vec3){k, -0.5 * k, 0.1},
                                (struct xg_vec3){0.25, 2.0 + k, -3});
        assert_int_equal(evicted, k >= XG_HISTORY);
        if (evicted) { /* the oldest sample, decoded */
            int o = k - XG_HISTORY;
            assert_int_equal(ev.t_ns, T0 + o * 4166667 + o % 3);
            assert_true(xg_vec3_norm(xg_vec3_sub(ev.p, pos_of(o))) < 2 * P_EXACT);
        }
    }
    assert_int_equal(xg_history_count(&h), XG_HISTORY);
    for (unsigned k = 0; k < XG_HISTORY; k++) { /* k = 0 is the newest */
        int i = n - 1 - (int)k;
        struct xg_hist s = xg_history_at(&h, k);
        assert_int_equal(s.t_ns, T0 + i * 4166667 + i % 3);
        assert_int_equal(xg_history_time(&h, k), s.t_ns);
        assert_true(fabs(s.p.x - pos_of(i).x) < P_EXACT);
        assert_true(fabs(s.p.y - pos_of(i).y) < P_EXACT);
        assert_true(fabs(s.p.z - pos_of(i).z) < P_EXACT);
        assert_true(xg_quat_angle_between(s.q, quat_of(i)) < 1e-12);
        /* binary16: exact for these, as for most small integers and halves */
        assert_float_equal(s.v[0], i, 0);
        assert_float_equal(s.v[1], -0.5 * i, 0);
        assert_float_equal(s.v[2], 0.1, 5e-4 * 0.1);
        assert_float_equal(s.w[1], 2.0 + i, 0);
        struct xg_hist pose = xg_history_pose_at(&h, k);
        assert_int_equal(pose.t_ns, s.t_ns);
        assert_float_equal(pose.v[0], 0, 0);
    }
    xg_history_clear(&h);
    assert_int_equal(xg_history_count(&h), 0);
}

static void test_around(void **state)
{
    (void)state;
    static struct xg_history h;
    xg_history_clear(&h);
    struct xg_hist a, b;
    assert_int_equal(xg_history_around(&h, T0, &a, &b), XG_HISTORY_NONE);
    for (int k = 0; k < 5; k++)
        xg_history_push(&h, T0 + k * 10 * MS, pos_of(k), quat_of(k), NULL);
    assert_int_equal(xg_history_around(&h, T0 + 20 * MS, &a, &b), XG_HISTORY_AT);
    assert_int_equal(a.t_ns, T0 + 20 * MS);
    assert_int_equal(xg_history_around(&h, T0 + 25 * MS, &a, &b), XG_HISTORY_BETWEEN);
    assert_int_equal(a.t_ns, T0 + 20 * MS);
    assert_int_equal(b.t_ns, T0 + 30 * MS);
    assert_int_equal(xg_history_around(&h, T0 - 1, &a, &b), XG_HISTORY_BEFORE);
    assert_int_equal(a.t_ns, T0);
    assert_int_equal(xg_history_around(&h, T0 + 41 * MS, &a, &b), XG_HISTORY_AFTER);
    assert_int_equal(a.t_ns, T0 + 40 * MS);
}

/* Travelling far (past the 128 m of one base): every rebase is exact. */
static void test_long_travel_stays_exact(void **state)
{
    (void)state;
    static struct xg_history h;
    xg_history_clear(&h);
    int last = 0;
    for (int k = 0; k < 5000; k++) { /* 4 m per sample (a rebase every 32): 20 km */
        struct xg_vec3 p = {4.0 * k + 1e-3 / 3, -0.7 * k, 0.5};
        xg_history_push(&h, T0 + k * 4 * MS, p, quat_of(k), NULL);
        last = k;
    }
    assert_int_equal(h.pshift, 0);
    for (unsigned k = 0; k < XG_HISTORY; k++) {
        int i = last - (int)k;
        struct xg_hist s = xg_history_at(&h, k);
        assert_true(fabs(s.p.x - (4.0 * i + 1e-3 / 3)) < 1e-11); /* |x| ~ 2e4: double's own */
        assert_true(fabs(s.p.y - -0.7 * i) < 1e-11);
        assert_int_equal(s.t_ns, T0 + i * 4 * MS);
    }
}

/* A jump across the whole position bound and a 10 s gap stay in the ring: coarser offsets
 * while they are in it (the newest always exact; samples that shared the ring with them keep
 * that precision), exact again once those have left. */
static void test_jump_and_gap_kept(void **state)
{
    (void)state;
    static struct xg_history h;
    xg_history_clear(&h);
    xg_history_push(&h, T0, (struct xg_vec3){1e6, 1e6, -1e6}, quat_of(0), NULL);
    xg_history_push(&h, T0 + 10000 * MS, (struct xg_vec3){-1e6, 0.125, 1e6}, quat_of(1), NULL);
    assert_int_equal(xg_history_count(&h), 2);
    assert_true(h.pshift > 0 && h.tshift > 0);
    struct xg_hist s = xg_history_at(&h, 0);
    assert_int_equal(s.t_ns, T0 + 10000 * MS); /* the newest: exact */
    assert_float_equal(s.p.x, -1e6, 0);
    assert_float_equal(s.p.y, 0.125, 0);
    s = xg_history_at(&h, 1);
    assert_true(llabs(s.t_ns - T0) <= 2); /* 10 s in 31 bits: a few ns */
    assert_float_equal(s.p.x, 1e6, 2e-8); /* 2e6 m in 47 bits: 15 nm */
    assert_float_equal(s.p.z, -1e6, 2e-8);
    for (int k = 2; k < XG_HISTORY + 2; k++) {
        xg_history_push(&h, T0 + 10000 * MS + k * MS, pos_of(k), quat_of(k), NULL);
        s = xg_history_at(&h, 1); /* shares the ring with the jump: 15 nm */
        if (k > 2) assert_true(xg_vec3_norm(xg_vec3_sub(s.p, pos_of(k - 1))) < 3e-8);
    }
    assert_int_equal(h.pshift, 0); /* the jump has left the ring */
    assert_int_equal(h.tshift, 0);
    for (int k = XG_HISTORY + 2; k < 2 * XG_HISTORY + 2; k++)
        xg_history_push(&h, T0 + 10000 * MS + k * MS, pos_of(k), quat_of(k), NULL);
    for (unsigned k = 0; k < XG_HISTORY; k++) {
        int i = 2 * XG_HISTORY + 1 - (int)k;
        s = xg_history_at(&h, k);
        assert_int_equal(s.t_ns, T0 + 10000 * MS + i * MS);
        assert_true(xg_vec3_norm(xg_vec3_sub(s.p, pos_of(i))) < 2 * P_EXACT);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_is_compact),
        cmocka_unit_test(test_ring_order_eviction_precision),
        cmocka_unit_test(test_around),
        cmocka_unit_test(test_long_travel_stays_exact),
        cmocka_unit_test(test_jump_and_gap_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
