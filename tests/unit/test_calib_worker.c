/* Unit tests for the calibration solver's worker thread (gateway/calib_worker.h,
 * docs/calibration.md "Solving off the event loop"): the 1 s tick only snapshots and submits, the
 * result is applied when the event loop delivers it (not inside the tick); while a solve is in
 * flight the loop keeps running its other events and no second solve of the same calibration is
 * submitted; a result that arrives after a reset (or start) is discarded, one of a calibration a
 * reload changed is cancelled; freeing the gateway with a solve waiting or running joins the
 * thread and leaks nothing (run under the sanitizer build). The snapshot is the synthetic scene of
 * tests/unit/calib_synth.h written straight into the calibration's rings. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "core/clock.h"
#include "gateway/calib_int.h"
#include "gateway/gateway.h"
#include "tests/unit/calib_synth.h"

#define DEG (M_PI / 180)
#define NMAX 2500

static const char *const CONF =
    "gateway: {admin: {listen: \"off\"}}\n"
    "adapters:\n"
    "  - {name: mocap, type: vmc, bind: \"127.0.0.1:0\"}\n"
    "  - {name: quest, type: vmc, bind: \"127.0.0.1:0\"}\n"
    "calibrations:\n"
    "  - {name: head, reference: mocap/tra/wand, target: quest/hmd/head, apply_to: quest}\n";

static struct xg_calib_sample ref[NMAX], tgt[NMAX];

/* 10 s of the synthetic scene into c's rings, as the ingest hook would have recorded them */
static void fill(struct xg_calib *c, uint64_t seed)
{
    size_t nr, nt;
    synth_scene_seed(seed, 10, 7, 0.020, 0.001, 0.2 * DEG, xg_clock_mono_ns(), ref, &nr, tgt, &nt);
    assert_true(nr <= c->ref.cap && nt <= c->tgt.cap);
    memcpy(c->ref.s, ref, nr * sizeof *ref);
    memcpy(c->tgt.s, tgt, nt * sizeof *tgt);
    c->ref.n = c->ref.head = nr;
    c->tgt.n = c->tgt.head = nt;
    c->pushed += nr + nt;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (*(int *)arg)++;
}

/* run the loop until the calibration's solve came back (bounded: 120 s) */
static void run_until_delivered(struct xg_gateway *gw, struct xg_calib *c)
{
    int64_t until = xg_clock_mono_ns() + INT64_C(120000000000);
    while (c->job && xg_clock_mono_ns() < until)
        event_base_loop(gw->base, EVLOOP_ONCE);
    assert_int_equal(c->job, 0);
}

/* the loop runs `n` turns of a 2 ms timer: it is not blocked */
static void loop_serves(struct xg_gateway *gw, int n)
{
    int ticks = 0;
    struct event *t = event_new(gw->base, -1, EV_PERSIST, on_tick, &ticks);
    struct timeval tv = {0, 2000};
    assert_non_null(t);
    event_add(t, &tv);
    while (ticks < n)
        event_base_loop(gw->base, EVLOOP_ONCE);
    event_free(t);
}

static void load(struct xg_gateway *gw, const char *conf)
{
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = conf, .config_name = "t.yaml"};
    assert_int_equal(xg_gateway_load(gw, &o, &err), 0);
}

static void test_solve_in_worker_then_reset_discards(void **state)
{
    (void)state;
    struct xg_gateway gw;
    load(&gw, CONF);
    assert_int_equal(xg_calib_start(&gw), 0);
    struct xg_calib *c = xg_calib_find(gw.calib, "head");
    assert_non_null(c);
    assert_null(gw.calib->worker); /* no thread before the first solve */

    /* the tick only submits: nothing is applied until the loop delivers the result */
    fill(c, 1);
    xg_calib_tick(gw.calib);
    assert_true(c->job != 0);
    assert_non_null(gw.calib->worker);
    assert_false(c->have);
    assert_int_equal(c->solves, 0);
    assert_int_equal(c->state, XG_CALIB_COLLECTING);
    run_until_delivered(&gw, c);
    assert_true(c->have);
    assert_int_equal(c->state, XG_CALIB_SOLVED);
    assert_int_equal(c->solves, 1);
    assert_false(c->collecting);
    assert_true(c->solve_ms > 0);
    struct xg_calib_xf y = synth_y();
    double m, rad;
    synth_err(&c->res.y, &y, &m, &rad);
    assert_true(m < 0.002 && rad < 0.2 * DEG);
    assert_int_equal(xg_calib_worker_pending(gw.calib->worker), 0);

    /* start again; a solve held in flight: the loop keeps serving, no second one is submitted */
    xg_calib_begin(c);
    xg_calib_worker_hold(gw.calib->worker, true);
    fill(c, 2);
    xg_calib_tick(gw.calib);
    uint64_t job = c->job;
    assert_true(job != 0);
    loop_serves(&gw, 20);
    c->pushed++; /* new samples: a solve would be due again */
    xg_calib_tick(gw.calib);
    assert_int_equal(c->job, job);
    assert_int_equal(xg_calib_worker_pending(gw.calib->worker), 1);
    assert_int_equal(c->solves, 1);

    /* reset while it is in flight: the late result is discarded, nothing applied */
    xg_calib_reset(gw.calib, c);
    assert_false(c->have);
    xg_calib_worker_hold(gw.calib->worker, false);
    run_until_delivered(&gw, c);
    assert_false(c->have);
    assert_int_equal(c->discarded, 1);
    assert_int_equal(c->solves, 1);
    assert_int_equal(c->state, XG_CALIB_COLLECTING);
    assert_true(c->collecting);

    /* and the next collection solves again */
    fill(c, 3);
    xg_calib_tick(gw.calib);
    assert_true(c->job != 0);
    run_until_delivered(&gw, c);
    assert_true(c->have);
    assert_int_equal(c->solves, 2);
    xg_gateway_free(&gw);
}

static void test_reload_and_free_in_flight(void **state)
{
    (void)state;
    struct xg_gateway gw, cand;
    load(&gw, CONF);
    assert_int_equal(xg_calib_start(&gw), 0);
    struct xg_calib *c = xg_calib_find(gw.calib, "head");
    fill(c, 4);
    xg_calib_tick(gw.calib);
    assert_true(c->job != 0);
    run_until_delivered(&gw, c);

    /* a reload that changes the entry while its solve waits: that solve is dropped; the worker
     * goes on with the new set */
    xg_calib_begin(c);
    xg_calib_worker_hold(gw.calib->worker, true);
    fill(c, 5);
    xg_calib_tick(gw.calib);
    assert_true(c->job != 0);
    struct xg_calib_worker *w = gw.calib->worker;
    assert_int_equal(xg_calib_worker_pending(w), 1);
    char changed[1024];
    snprintf(changed, sizeof changed, "%.*s, collect_s: 6}\n", (int)strlen(CONF) - 2, CONF);
    load(&cand, changed);
    xg_calib_reload(&gw, &cand);
    xg_gateway_free(&cand);
    assert_ptr_equal(gw.calib->worker, w);
    assert_int_equal(xg_calib_worker_pending(w), 0);
    c = xg_calib_find(gw.calib, "head");
    assert_non_null(c);
    assert_true(c->collect_s == 6);
    assert_int_equal(c->job, 0);

    /* freed with one solve waiting (held): joined, nothing leaks */
    fill(c, 6);
    xg_calib_tick(gw.calib);
    assert_true(c->job != 0);
    assert_int_equal(xg_calib_worker_pending(w), 1);
    xg_gateway_free(&gw);

    /* freed while a solve runs: joined after it */
    load(&gw, CONF);
    assert_int_equal(xg_calib_start(&gw), 0);
    c = xg_calib_find(gw.calib, "head");
    fill(c, 7);
    xg_calib_tick(gw.calib);
    assert_true(c->job != 0);
    xg_gateway_free(&gw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solve_in_worker_then_reset_discards),
        cmocka_unit_test(test_reload_and_free_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
