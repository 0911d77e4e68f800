/* Space calibration accuracy and solve time (core/calib/calib_solve.h, docs/calibration.md): the
 * synthetic scene of tests/unit/calib_synth.h (an object waved about every axis, reference 120
 * Hz, target 90 Hz, hidden Y and X, 20 ms delay, 1 mm / 0.2° Gaussian noise per axis) solved for
 * `reps` noise realisations (seeds 1..reps) at 10 s and 20 s of motion; per run the errors of Y
 * and X (mm, degrees), of the time offset (ms), the residuals and the solve time (ms, thread CPU).
 * Also the time of a drift check (xg_calib_residuals, 500 pairs of 5 s; fastest run) and whether a
 * yaw-only motion is reported unobservable (and which axes).
 * And the event loop while a solve runs in the solver thread (gateway/calib_worker.h): a gateway
 * with one calibration whose rings hold 20 s of the scene, a 1 ms timer on its loop; from the tick
 * that snapshots and submits the solve to the delivery (result applied, logged, the state file
 * serialised) and the state file's write in the thread (temporary file, fsync, rename) the
 * timer's worst lateness (loop_stall.stall_ms), the same timer's worst
 * lateness over 50 ms of an idle loop before (idle_ms: the timer's own granularity), the tick's
 * time (tick_ms: the snapshot), the solve's wall time in the thread (solve_ms: what the loop
 * was held for when the solve ran on it), the result's handling on the loop (apply_ms: applied,
 * logged, the state file serialised and queued) and the write's wall time in the thread
 * (write_ms: what the loop was held for when it wrote and fsync'd the file itself).
 *
 * Usage: bench_calib [--reps N] [--ms M] [--quick]. Prints one JSON object (arrays: one value per
 * run) on stdout. */
#include <errno.h>
#include <event2/event.h>
#include <unistd.h>

#include "core/clock/clock.h"
#include "core/util/log.h"
#include "gateway/calib_int.h"
#include "gateway/gateway.h"
#include "tests/bench/bench_util.h"
#include "tests/unit/calib_synth.h"

#define NMAX 2500
#define DEG (M_PI / 180)

static struct xg_calib_sample ref[NMAX], tgt[NMAX];

static void arr(const char *key, const double *v, int n, bool last)
{
    printf("  \"%s\": [", key);
    for (int i = 0; i < n; i++)
        printf("%s%.6g", i ? ", " : "", v[i]);
    printf("]%s\n", last ? "" : ",");
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_calib: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

struct stall {
    struct event *ev;
    int64_t expected;
    double worst_ms;
};

static void stall_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct stall *st = arg;
    int64_t now = xg_clock_mono_ns();
    double late = (double)(now - st->expected) * 1e-6;
    if (late > st->worst_ms) st->worst_ms = late;
    st->expected = now + 1000000;
    struct timeval tv = {0, 1000};
    evtimer_add(st->ev, &tv);
}

/* one solve of 20 s of the scene through a gateway's calibration and its solver thread: the
 * loop's worst stall (ms) while it is in flight, and idle before; the tick and the solve (ms) */
static void loop_stall(uint64_t seed, const char *dir, double *stall, double *idle, double *tick,
                       double *solve, double *apply, double *write)
{
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts go = {
        .config_text = "gateway: {admin: {listen: \"off\"}}\n"
                       "adapters:\n"
                       "  - {name: mocap, type: vmc, bind: \"127.0.0.1:0\"}\n"
                       "  - {name: quest, type: vmc, bind: \"127.0.0.1:0\"}\n"
                       "calibrations:\n"
                       "  - {name: head, reference: mocap/tra/wand, target: quest/hmd/head}\n",
        .config_name = "bench.yaml"};
    if (xg_gateway_load(&gw, &go, &err) || xg_calib_start(&gw)) die("gateway: %s", err.msg);
    snprintf(gw.calib->state_file, sizeof gw.calib->state_file, "%s/state.json", dir);
    struct xg_calib *c = gw.calib->items[0];
    size_t nr, nt;
    synth_scene_seed(seed, 20, 7, 0.020, 0.001, 0.2 * DEG, xg_clock_mono_ns(), ref, &nr, tgt, &nt);
    memcpy(c->ref.s, ref, nr * sizeof *ref);
    memcpy(c->tgt.s, tgt, nt * sizeof *tgt);
    c->ref.n = c->ref.head = nr;
    c->tgt.n = c->tgt.head = nt;
    c->pushed = nr + nt;
    struct stall st = {0};
    if (!(st.ev = evtimer_new(gw.base, stall_cb, &st))) die("evtimer_new");
    struct timeval tv = {0, 1000};
    int64_t t0 = xg_clock_mono_ns();
    st.expected = t0 + 1000000;
    evtimer_add(st.ev, &tv);
    while (xg_clock_mono_ns() - t0 < 50000000)
        event_base_loop(gw.base, EVLOOP_ONCE);
    *idle = st.worst_ms;
    st.worst_ms = 0;
    t0 = xg_clock_mono_ns();
    xg_calib_tick(gw.calib);
    *tick = (double)(xg_clock_mono_ns() - t0) * 1e-6;
    if (!c->job) die("no solve submitted");
    while (c->job)
        event_base_loop(gw.base, EVLOOP_ONCE);
    if (!c->have) die("the scene did not solve: %s", c->last_why);
    while (gw.calib->writes_queued)
        event_base_loop(gw.base, EVLOOP_ONCE);
    if (gw.calib->write_failures) die("the state file was not written");
    *write = gw.calib->write_ms;
    *stall = st.worst_ms;
    *solve = c->solve_ms;
    *apply = c->apply_ms;
    event_free(st.ev);
    xg_gateway_free(&gw);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_parse(argc, argv, &o);
    int reps = o.quick ? 2 : o.reps < 10 ? 10 : o.reps;
    static const double secs[2] = {10, 20};
    printf("{\n");
    for (int s = 0; s < 2; s++) {
        double ym[64], yd[64], xm[64], xd[64], off[64], rm[64], rd[64], ms[64];
        int n = 0, fails = 0;
        for (int r = 0; r < reps && r < 64; r++) {
            size_t nr, nt;
            synth_scene_seed((uint64_t)r + 1, secs[s], 7, 0.020, 0.001, 0.2 * DEG,
                             INT64_C(1000000000000), ref, &nr, tgt, &nt);
            struct xg_calib_result res;
            int64_t t0 = bench_thread_cpu_ns();
            int rc = xg_calib_solve(ref, nr, tgt, nt, NULL, &res);
            double t = (double)(bench_thread_cpu_ns() - t0) * 1e-6;
            if (rc) {
                fails++;
                continue;
            }
            struct xg_calib_xf y = synth_y(), x = synth_x();
            double em, er;
            synth_err(&res.y, &y, &em, &er);
            ym[n] = em * 1e3;
            yd[n] = er / DEG;
            synth_err(&res.x, &x, &em, &er);
            xm[n] = em * 1e3;
            xd[n] = er / DEG;
            off[n] = fabs(res.time_offset_s - 0.020) * 1e3;
            rm[n] = res.residual_m * 1e3;
            rd[n] = res.residual_rad / DEG;
            ms[n] = t;
            n++;
            fprintf(stderr,
                    "bench_calib: %.0f s seed %d: Y %.3f mm %.4f deg, X %.3f mm %.4f deg, "
                    "offset %.3f ms, %.1f ms\n",
                    secs[s], r + 1, ym[n - 1], yd[n - 1], xm[n - 1], xd[n - 1], off[n - 1], t);
        }
        printf(" \"waved_%.0fs\": {\n  \"failures\": %d,\n", secs[s], fails);
        arr("y_mm", ym, n, false);
        arr("y_deg", yd, n, false);
        arr("x_mm", xm, n, false);
        arr("x_deg", xd, n, false);
        arr("offset_err_ms", off, n, false);
        arr("residual_mm", rm, n, false);
        arr("residual_deg", rd, n, false);
        arr("solve_ms", ms, n, true);
        printf(" },\n");
    }
    size_t nr, nt;
    /* a drift check (mode continuous): residuals of 500 pairs of the newest 5 s */
    synth_scene(5, 7, 0.020, 0.001, 0.2 * DEG, INT64_C(1000000000000), ref, &nr, tgt, &nt);
    struct xg_calib_result sol;
    memset(&sol, 0, sizeof sol);
    sol.y = synth_y();
    sol.x = synth_x();
    sol.time_offset_s = 0.020;
    double rm, rr, best = 1e9;
    size_t np;
    for (int r = 0; r < reps; r++) {
        int64_t t0 = bench_thread_cpu_ns();
        xg_calib_residuals(ref, nr, tgt, nt, &sol, 500, &rm, &rr, &np);
        double t = (double)(bench_thread_cpu_ns() - t0) * 1e-6;
        if (t < best) best = t;
    }
    printf(" \"drift_check_ms\": %.4f,\n", best);
    {
        double stall[64], idle[64], tick[64], solve[64], apply[64], write[64];
        char dir[] = "/tmp/bench_calib_XXXXXX", file[64];
        if (!mkdtemp(dir)) die("mkdtemp");
        xg_log_set_level(XG_LOG_WARN);
        int n = reps < 64 ? reps : 64;
        for (int r = 0; r < n; r++) {
            loop_stall((uint64_t)r + 1, dir, &stall[r], &idle[r], &tick[r], &solve[r], &apply[r],
                       &write[r]);
            fprintf(stderr,
                    "bench_calib: solver thread, seed %d: loop stall %.2f ms (idle %.2f), tick "
                    "%.3f ms, solve %.1f ms, apply %.2f ms, write %.2f ms\n",
                    r + 1, stall[r], idle[r], tick[r], solve[r], apply[r], write[r]);
        }
        snprintf(file, sizeof file, "%s/state.json", dir);
        unlink(file);
        rmdir(dir);
        printf(" \"loop_stall\": {\n");
        arr("stall_ms", stall, n, false);
        arr("idle_ms", idle, n, false);
        arr("tick_ms", tick, n, false);
        arr("solve_ms", solve, n, false);
        arr("apply_ms", apply, n, false);
        arr("write_ms", write, n, true);
        printf(" },\n");
    }
    synth_scene(10, 2, 0.020, 0.001, 0.2 * DEG, INT64_C(1000000000000), ref, &nr, tgt, &nt);
    struct xg_calib_result res;
    int rc = xg_calib_solve(ref, nr, tgt, nt, NULL, &res);
    printf(" \"yaw_only\": {\"unobservable\": \"%s%s%s\", \"answered\": %s}\n}\n",
           (res.unobservable & XG_CALIB_UNOBS_X) ? "pitch " : "",
           (res.unobservable & XG_CALIB_UNOBS_Y) ? "yaw " : "",
           (res.unobservable & XG_CALIB_UNOBS_Z) ? "roll " : "", rc == -EDOM ? "false" : "true");
    return 0;
}
