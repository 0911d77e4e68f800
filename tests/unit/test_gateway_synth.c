/* Unit tests for the synth adapter (named test_gateway_* because it runs a whole gateway): analytic
 * paths (determinism, velocities consistent with the motion, heads/hands where a person would have
 * them), and the adapter running on a real reactor with noise and dropouts. */
#include <event2/event.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: builds or reads entities' internals */
#include "adapters/synth/synth.h"
#include "core/clock/clock.h"
#include "gateway/gateway.h"

static void test_paths(void **state)
{
    (void)state;
    for (int which = 0; which < XG_SYNTH_BODY0 + 5; which++) {
        for (double t = 0; t < 20; t += 1.7) {
            struct xg_vec3 p, p2, v, w;
            struct xg_quat q, q2;
            xg_synth_pose(which, t, &p, &q);
            xg_synth_pose(which, t, &p2, &q2);
            assert_memory_equal(&p, &p2, sizeof p); /* deterministic */
            assert_float_equal(xg_quat_dot(q, q), 1.0, 1e-12);
            xg_synth_velocity(which, t, &v, &w);
            /* velocities explain 1 ms of motion to second order */
            xg_synth_pose(which, t + 1e-3, &p2, &q2);
            struct xg_vec3 dp = xg_vec3_sub(p2, xg_vec3_add(p, xg_vec3_scale(v, 1e-3)));
            assert_true(xg_vec3_norm(dp) < 1e-5);
            assert_true(xg_quat_angle_between(q2, xg_quat_integrate(q, w, 1e-3)) < 1e-5);
            assert_true(xg_vec3_norm(v) < 5.0 && xg_vec3_norm(w) < 10.0);
        }
    }
    /* a person: head at standing height, hands below and to the sides */
    struct xg_vec3 h, l, r;
    struct xg_quat q;
    xg_synth_pose(XG_SYNTH_HEAD, 3.0, &h, &q);
    xg_synth_pose(XG_SYNTH_LEFT_HAND, 3.0, &l, &q);
    xg_synth_pose(XG_SYNTH_RIGHT_HAND, 3.0, &r, &q);
    assert_true(h.y > 1.6 && h.y < 1.8);
    assert_true(l.y < h.y && r.y < h.y);
    assert_true(l.x < h.x && r.x > h.x);
    /* rigid bodies spin at a constant angular velocity */
    struct xg_vec3 v0, w0, v1, w1;
    xg_synth_velocity(XG_SYNTH_BODY0 + 2, 1.0, &v0, &w0);
    xg_synth_velocity(XG_SYNTH_BODY0 + 2, 7.0, &v1, &w1);
    assert_true(xg_vec3_norm(xg_vec3_sub(w0, w1)) < 1e-6);
}

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
    event_base_loopexit(arg, NULL);
}

static void run_for(struct xg_gateway *gw, int ms)
{
    struct event *ev = evtimer_new(gw->base, stop_cb, gw->base);
    struct timeval tv = {0, ms * 1000};
    evtimer_add(ev, &tv);
    event_base_dispatch(gw->base);
    event_free(ev);
}

/* Mean distance of body0's history in entity e from the synth's analytic path, for a synth
 * clock that started at t0_ns. */
static double mean_offset(const struct xg_entity *e, int64_t t0_ns)
{
    double off = 0;
    const unsigned n = xg_history_count(&e->hist);
    for (unsigned k = 0; k < n; k++) {
        struct xg_vec3 p;
        struct xg_quat q;
        struct xg_hist h = xg_history_at(&e->hist, k);
        xg_synth_pose(XG_SYNTH_BODY0, (double)(h.t_ns - t0_ns) * 1e-9, &p, &q);
        off += xg_vec3_norm(xg_vec3_sub(p, h.p));
    }
    return off / n;
}

/* The start of the synth clock behind e's samples, searched in [from, from + 100 ms] (10 us
 * steps): each synth adapter starts its clock in its start(), after the gateway's started_ns and
 * after the adapters before it, by microseconds, or by milliseconds on a loaded machine. */
static int64_t synth_clock_start(const struct xg_entity *e, int64_t from)
{
    int64_t best = from;
    double best_off = mean_offset(e, from);
    for (int64_t t = from; t <= from + 100000000; t += 10000) {
        double off = mean_offset(e, t);
        if (off < best_off) best_off = off, best = t;
    }
    return best;
}

static void test_adapter_noise_dropout(void **state)
{
    (void)state;
    const char *text = "gateway: {admin: {listen: \"off\"}}\n"
                       "adapters:\n"
                       "  - {name: clean, type: synth, rate_hz: 200, bodies: 2}\n"
                       "  - {name: noisy, type: synth, rate_hz: 200, bodies: 2, head: false,\n"
                       "     hands: false, noise_mm: 5, dropout: 0.5, send_velocity: false}\n";
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = text, .config_name = "t.yaml"};
    assert_int_equal(xg_gateway_load(&gw, &o, &err), 0);
    assert_int_equal(xg_gateway_start(&gw, &err), 0);
    /* until each clean entity has 80 samples (0.4 s at 200 Hz here; longer on a loaded
     * machine, which stretches the synth's ticks but not what is counted), at most 10 s */
    const struct xg_table_stats *st = xg_table_stats(gw.table);
    const int64_t deadline = xg_clock_mono_ns() + 10 * 1000000000LL;
    while (st->samples_in[0] < 5 * 80 && xg_clock_mono_ns() < deadline)
        run_for(&gw, 20);
    double clean = (double)st->samples_in[0] / 5.0, noisy = (double)st->samples_in[1] / 2.0;
    assert_true(clean >= 80);
    /* half of the noisy samples are dropped (binomial; generous bounds) */
    assert_true(noisy > 0.25 * clean && noisy < 0.75 * clean);
    const struct xg_entity *c = xg_table_find(gw.table, "clean/body0");
    const struct xg_entity *n = xg_table_find(gw.table, "noisy/body0");
    assert_non_null(c);
    assert_non_null(n);
    assert_string_equal(xg_kind_name(xg_table_find(gw.table, "clean/head")->kind), "head");
    assert_null(xg_table_find(gw.table, "noisy/head"));
    assert_false(c->velocity_estimated);
    assert_true(n->velocity_estimated);
    /* noise: the noisy body is off its analytic path by millimetres; the clean one is on it
     * (each against the truth on its own clock, found from its samples: 10 us x < 5 m/s) */
    int64_t t0_clean = synth_clock_start(c, gw.started_ns);
    assert_true(mean_offset(c, t0_clean) < 1e-4);
    double off = mean_offset(n, synth_clock_start(n, t0_clean));
    assert_true(off > 2e-3 && off < 3e-2); /* 5 mm per axis: mean 3D offset ≈ 8 mm */
    xg_gateway_free(&gw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_adapter_noise_dropout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
