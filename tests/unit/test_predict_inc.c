/* The incremental motion estimator (issue 19 item 2, xg_motion_update in
 * core/predict/predict_est.h) against the batch one (xg_motion_estimate) on the same history ring,
 * push by push:
 * - rotation about a fixed axis over 200,000 pushes at jittered 240 Hz (the sums run through many
 *   rebuilds and evictions): velocity and angular velocity equal to the batch up to rounding;
 * - long random runs (rates from 20 to 300 Hz, jitter, gaps longer than the window, a changing
 *   axis with noise across it, histories forgotten): velocity equal up to rounding, the samples
 *   used equal, angular velocity within 0.5 % of |ω| (0.2 % seen);
 * - calls skipped (a source that reported its velocities for a while) and repeated calls with
 *   an unchanged ring give the batch answer. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity.h"
#include "core/predict/predict_est.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)
#define WINDOW (100 * MS)

struct ring {
    struct xg_history h;
    struct xg_hist evicted;
    bool have_evicted;
};

/* as core/table/entity.c writes its history (core/table/history.h) */
static void ring_push(struct ring *r, int64_t t_ns, struct xg_vec3 p, struct xg_quat q)
{
    r->have_evicted = xg_history_push(&r->h, t_ns, p, q, &r->evicted);
}

static uint64_t rng_state = 12345;
static double uniform(void) /* [0, 1) */
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static double rel_err(struct xg_vec3 a, struct xg_vec3 b)
{
    return xg_vec3_norm(xg_vec3_sub(a, b)) / (1e-9 + xg_vec3_norm(b));
}

static void update(struct xg_motion_acc *acc, const struct ring *r, struct xg_motion_est *inc,
                   struct xg_motion_est *ref)
{
    memset(inc, 0, sizeof *inc);
    memset(ref, 0, sizeof *ref);
    xg_motion_update(acc, &r->h, r->have_evicted ? &r->evicted : NULL, WINDOW, inc);
    xg_motion_estimate(&r->h, WINDOW, ref);
}

static void test_fixed_axis_matches_batch(void **state)
{
    (void)state;
    struct ring r = {0};
    struct xg_motion_acc acc = {0};
    const struct xg_vec3 axis = {0.267261, 0.534522, 0.801784};
    const struct xg_quat q0 = xg_quat_normalize((struct xg_quat){0.1, 0.2, -0.3, 0.9});
    int64_t t = T0;
    double worst_v = 0, worst_w = 0;
    for (int k = 0; k < 200000; k++) {
        t += 4166667 + (int64_t)((uniform() - 0.5) * 1e6);
        double ts = (double)(t - T0) * 1e-9;
        /* angle a smooth function of time, axis fixed: exact for the incremental mapping */
        double ang = 3 * sin(0.7 * ts) + 0.5 * ts;
        struct xg_vec3 p = {sin(ts), 1 + 0.1 * cos(3 * ts), 0.01 * ts};
        ring_push(&r, t, p, xg_quat_mul(xg_quat_exp(xg_vec3_scale(axis, ang)), q0));
        struct xg_motion_est inc, ref;
        update(&acc, &r, &inc, &ref);
        assert_int_equal(inc.n_used, ref.n_used);
        if (ref.n_used < 2) continue;
        double ev = rel_err(inc.velocity, ref.velocity);
        double ew = rel_err(inc.fit_angular_velocity, ref.fit_angular_velocity);
        worst_v = ev > worst_v ? ev : worst_v;
        worst_w = ew > worst_w ? ew : worst_w;
    }
    fprintf(stderr, "fixed axis, 200000 pushes: worst relative error v %.3g, w %.3g\n", worst_v,
            worst_w);
    assert_true(worst_v < 1e-8);
    assert_true(worst_w < 1e-8);
}

static void test_random_runs_match_batch(void **state)
{
    (void)state;
    double worst_v = 0, worst_w = 0;
    int rebuilds_forced = 0;
    for (int run = 0; run < 20; run++) {
        struct ring r = {0};
        struct xg_motion_acc acc = {0};
        double rate = 20 + 280 * uniform();
        int64_t t = T0;
        struct xg_vec3 w = {uniform() - 0.5, 3 * uniform(), uniform() - 0.5}, p = {0, 1, 0};
        struct xg_quat q = XG_QUAT_IDENTITY;
        for (int k = 0; k < 5000; k++) {
            double dt = (1 + 0.3 * (uniform() - 0.5)) / rate;
            if (uniform() < 0.002) dt += 0.2; /* a gap longer than the window */
            t += (int64_t)(dt * 1e9) + 1;
            /* the axis wanders, with noise across it */
            w = xg_vec3_add(w, (struct xg_vec3){0.3 * (uniform() - 0.5), 0.3 * (uniform() - 0.5),
                                                0.3 * (uniform() - 0.5)});
            struct xg_vec3 noise = {0.01 * (uniform() - 0.5), 0.01 * (uniform() - 0.5),
                                    0.01 * (uniform() - 0.5)};
            q = xg_quat_normalize(xg_quat_mul(xg_quat_exp(xg_vec3_scale(w, dt)), q));
            p = xg_vec3_add(p, (struct xg_vec3){dt * sin((double)k / 50), 0.001 * uniform(), 0});
            ring_push(&r, t, p, xg_quat_mul(xg_quat_exp(noise), q));
            if (uniform() < 0.001) { /* the source jumped: history forgotten */
                xg_history_clear(&r.h);
                memset(&acc, 0, sizeof acc);
                rebuilds_forced++;
                continue;
            }
            struct xg_motion_est inc, ref;
            update(&acc, &r, &inc, &ref);
            assert_int_equal(inc.n_used, ref.n_used);
            if (ref.n_used < 2) continue;
            double ev = rel_err(inc.velocity, ref.velocity);
            double ew = rel_err(inc.fit_angular_velocity, ref.fit_angular_velocity);
            worst_w = ew > worst_w ? ew : worst_w;
            worst_v = ev > worst_v ? ev : worst_v;
        }
    }
    fprintf(stderr, "random runs: worst relative error v %.3g, w %.3g (%d forgets)\n", worst_v,
            worst_w, rebuilds_forced);
    assert_true(rebuilds_forced > 0);
    assert_true(worst_v < 1e-8);
    assert_true(worst_w < 5e-3);
}

static void test_skipped_and_repeated_calls(void **state)
{
    (void)state;
    struct ring r = {0};
    struct xg_motion_acc acc = {0};
    struct xg_motion_est inc, ref;
    int64_t t = T0;
    for (int k = 0; k < 60; k++) {
        t += 8 * MS + (k % 3) * MS;
        double ts = (double)(t - T0) * 1e-9;
        ring_push(&r, t, (struct xg_vec3){ts * ts, ts, 0},
                  xg_quat_exp((struct xg_vec3){0.3 * ts, 2 * ts, -ts * ts}));
        if (k >= 20 && k < 40) continue; /* not called: reported velocities were in force */
        update(&acc, &r, &inc, &ref);
        if (k == 40) { /* the first call after the gap: rebuilt from the ring, exact */
            assert_true(rel_err(inc.fit_angular_velocity, ref.fit_angular_velocity) < 1e-9);
        }
        assert_true(rel_err(inc.velocity, ref.velocity) < 1e-9);
        /* the same ring again (a sample without a pose): the same answer, nothing added twice */
        struct xg_motion_est again;
        memset(&again, 0, sizeof again);
        xg_motion_update(&acc, &r.h, NULL, WINDOW, &again);
        assert_memory_equal(&again, &inc, sizeof inc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_axis_matches_batch),
        cmocka_unit_test(test_random_runs_match_batch),
        cmocka_unit_test(test_skipped_and_repeated_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
