/* Unit tests for the calibration solver's worker thread (gateway/calib_worker.h,
 * docs/calibration.md "Solving off the event loop"): the 1 s tick only snapshots and submits, the
 * result is applied when the event loop delivers it (not inside the tick); while a solve is in
 * flight the loop keeps running its other events and no second solve of the same calibration is
 * submitted; a result that arrives after a reset (or start) is discarded, one of a calibration a
 * reload changed is cancelled; freeing the gateway with a solve waiting or running joins the
 * thread and leaks nothing (run under the sanitizer build). The state file is written by the
 * worker, not on the loop: a result's write blocked in the thread (its temporary file a FIFO
 * nobody reads yet) leaves the loop serving and the file absent, then its bytes are the result;
 * an error of the write is counted on the loop; a write queued while the worker is held is not
 * done by the loop, is done on release, and writes happen in order (the last one wins); freeing
 * the gateway with a write queued completes it; a reload while a write is queued loads the queued
 * contents, not the older file. The snapshot is the synthetic scene of
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
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock/clock.h"
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

/* a fresh directory for a state file (removed by rm_dir) */
static void mk_dir(char *dir, size_t n, char *file, size_t fn)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, n, "%s/xg_calibw_XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(dir));
    snprintf(file, fn, "%s/t.yaml.calibration.json", dir);
}

static void rm_dir(const char *dir, const char *file)
{
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    unlink(file);
    unlink(tmp);
    assert_int_equal(rmdir(dir), 0);
}

/* run the loop until no write of the set is queued (bounded: 60 s) */
static void run_until_written(struct xg_gateway *gw)
{
    int64_t until = xg_clock_mono_ns() + INT64_C(60000000000);
    while (gw->calib->writes_queued && xg_clock_mono_ns() < until)
        event_base_loop(gw->base, EVLOOP_ONCE);
    assert_int_equal(gw->calib->writes_queued, 0);
}

/* the file's calibrations: 1 when `name` is in it with `y`'s position, 0 when absent */
static int file_has(const char *file, const char *name, const struct xg_calib_xf *y)
{
    json_error_t je;
    json_t *root = json_load_file(file, 0, &je);
    assert_non_null(root);
    assert_int_equal(json_integer_value(json_object_get(root, "version")), 1);
    json_t *all = json_object_get(root, "calibrations");
    assert_true(json_is_object(all));
    json_t *e = json_object_get(all, name);
    if (e) {
        json_t *p = json_object_get(json_object_get(e, "transform"), "position");
        assert_true(fabs(json_real_value(json_array_get(p, 0)) - y->t.x) < 1e-9);
        assert_true(fabs(json_real_value(json_array_get(p, 2)) - y->t.z) < 1e-9);
    }
    json_decref(root);
    return e != NULL;
}

static void test_state_file_written_by_worker(void **state)
{
    (void)state;
    char dir[600], file[700], tmp[800];
    mk_dir(dir, sizeof dir, file, sizeof file);
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    struct xg_gateway gw;
    load(&gw, CONF);
    assert_int_equal(xg_calib_start(&gw), 0);
    snprintf(gw.calib->state_file, sizeof gw.calib->state_file, "%s", file);
    struct xg_calib *c = xg_calib_find(gw.calib, "head");

    /* the temporary file is a FIFO nobody reads: the worker's write blocks in open(); the loop
     * has applied the result and goes on serving, and no state file exists */
    assert_int_equal(mkfifo(tmp, 0600), 0);
    fill(c, 8);
    xg_calib_tick(gw.calib);
    run_until_delivered(&gw, c);
    assert_true(c->have);
    assert_int_equal(gw.calib->writes_queued, 1);
    loop_serves(&gw, 20);
    assert_int_equal(access(file, F_OK), -1);
    assert_int_equal(gw.calib->writes + gw.calib->write_failures, 0);
    /* reading it lets the write go on: its bytes are the state file's contents; fsync of a
     * FIFO fails (EINVAL), and that error comes back to the loop and is counted */
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    char buf[8192];
    size_t n = 0;
    for (ssize_t k; n < sizeof buf - 1 && (k = read(fd, buf + n, sizeof buf - 1 - n)) > 0;)
        n += (size_t)k;
    close(fd);
    buf[n] = '\0';
    json_error_t je;
    json_t *root = json_loads(buf, 0, &je);
    assert_non_null(root);
    assert_non_null(json_object_get(json_object_get(root, "calibrations"), "head"));
    json_decref(root);
    run_until_written(&gw);
    assert_int_equal(gw.calib->write_failures, 1);
    assert_int_equal(gw.calib->writes, 0);
    assert_int_equal(access(tmp, F_OK), -1); /* removed after the failure */
    assert_int_equal(access(file, F_OK), -1);

    /* the next writes succeed: a reset (a file without the result), a new result */
    xg_calib_reset(gw.calib, c);
    run_until_written(&gw);
    assert_int_equal(gw.calib->writes, 1);
    assert_int_equal(file_has(file, "head", NULL), 0);
    fill(c, 9);
    xg_calib_tick(gw.calib);
    run_until_delivered(&gw, c);
    run_until_written(&gw);
    assert_int_equal(gw.calib->writes, 2);
    struct xg_calib_xf y = c->res.y;
    assert_int_equal(file_has(file, "head", &y), 1);
    /* a reset while the worker is held: the loop does not write, the old file stays; on release
     * the worker writes the new contents */
    xg_calib_worker_hold(gw.calib->worker, true);
    xg_calib_reset(gw.calib, c);
    assert_int_equal(gw.calib->writes_queued, 1);
    loop_serves(&gw, 20);
    assert_int_equal(file_has(file, "head", &y), 1); /* not written by the loop */
    xg_calib_worker_hold(gw.calib->worker, false);
    run_until_written(&gw);
    assert_int_equal(gw.calib->writes, 3);
    assert_int_equal(file_has(file, "head", NULL), 0);

    /* freed with a solve and a write waiting (held): the solve is dropped, the write done */
    fill(c, 10);
    xg_calib_tick(gw.calib);
    run_until_delivered(&gw, c);
    run_until_written(&gw);
    assert_int_equal(file_has(file, "head", &c->res.y), 1);
    xg_calib_worker_hold(gw.calib->worker, true);
    xg_calib_reset(gw.calib, c);
    fill(c, 11);
    xg_calib_tick(gw.calib);
    assert_true(c->job != 0);
    assert_int_equal(xg_calib_worker_pending(gw.calib->worker), 2);
    xg_gateway_free(&gw);
    assert_int_equal(file_has(file, "head", NULL), 0);
    rm_dir(dir, file);
}

/* read the FIFO `tmp` to its end: the worker's blocked write goes on */
static void drain(const char *tmp)
{
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    char buf[4096];
    while (read(fd, buf, sizeof buf) > 0) {}
    close(fd);
}

/* a reload while a result's write is still queued loads that result, not the older file */
static void test_reload_with_write_queued(void **state)
{
    (void)state;
    char dir[600], file[700], tmp[800];
    mk_dir(dir, sizeof dir, file, sizeof file);
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    struct xg_gateway gw, cand;
    load(&gw, CONF);
    assert_int_equal(xg_calib_start(&gw), 0);
    snprintf(gw.calib->state_file, sizeof gw.calib->state_file, "%s", file);
    struct xg_calib *c = xg_calib_find(gw.calib, "head");
    assert_int_equal(mkfifo(tmp, 0600), 0); /* the write blocks until drained */
    fill(c, 12);
    xg_calib_tick(gw.calib);
    run_until_delivered(&gw, c);
    struct xg_calib_xf y = c->res.y;
    assert_int_equal(gw.calib->writes_queued, 1);
    char changed[1024];
    snprintf(changed, sizeof changed, "%.*s, collect_s: 6}\n", (int)strlen(CONF) - 2, CONF);
    load(&cand, changed);
    xg_calib_reload(&gw, &cand); /* a new entry: loaded from the queued contents */
    xg_gateway_free(&cand);
    c = xg_calib_find(gw.calib, "head");
    assert_true(c->collect_s == 6);
    assert_true(c->have);
    assert_int_equal(c->state, XG_CALIB_APPLIED);
    assert_true(fabs(c->res.y.t.x - y.t.x) < 1e-9);
    assert_int_equal(gw.calib->writes_queued, 1); /* carried over */
    drain(tmp);
    run_until_written(&gw);
    assert_int_equal(gw.calib->write_failures, 1); /* fsync of a FIFO: EINVAL */
    assert_null(gw.calib->latest);
    xg_gateway_free(&gw);
    rm_dir(dir, file);
}

static int delivered_writes;

static void count_writes(void *user, const struct xg_calib_job *j)
{
    (void)user;
    assert_int_equal(j->kind, XG_CALIB_JOB_WRITE);
    assert_int_equal(j->rc, 0);
    delivered_writes++;
}

/* writes are done in the order they were queued: the last one wins */
static void test_writes_in_order(void **state)
{
    (void)state;
    char dir[600], file[700];
    mk_dir(dir, sizeof dir, file, sizeof file);
    struct event_base *base = event_base_new();
    assert_non_null(base);
    struct xg_calib_worker *w = xg_calib_worker_new(base, count_writes, NULL);
    assert_non_null(w);
    xg_calib_worker_hold(w, true);
    for (int i = 0; i < 5; i++) {
        char *d = malloc(16);
        assert_non_null(d);
        int len = snprintf(d, 16, "{\"n\": %d}", i);
        assert_true(xg_calib_worker_write(w, file, d, (size_t)len) > 0);
    }
    assert_int_equal(xg_calib_worker_pending(w), 5);
    assert_int_equal(access(file, F_OK), -1);
    delivered_writes = 0;
    xg_calib_worker_free(w); /* completes the held writes, in order, and reports them */
    assert_int_equal(delivered_writes, 5);
    json_error_t je;
    json_t *root = json_load_file(file, 0, &je);
    assert_non_null(root);
    assert_int_equal(json_integer_value(json_object_get(root, "n")), 4);
    json_decref(root);
    event_base_free(base);
    rm_dir(dir, file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solve_in_worker_then_reset_discards),
        cmocka_unit_test(test_reload_and_free_in_flight),
        cmocka_unit_test(test_state_file_written_by_worker),
        cmocka_unit_test(test_writes_in_order),
        cmocka_unit_test(test_reload_with_write_queued),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
