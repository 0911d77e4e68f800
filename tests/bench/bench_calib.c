/* Space calibration accuracy and solve time (core/calib_solve.h, docs/calibration.md): the
 * synthetic scene of tests/unit/calib_synth.h (an object waved about every axis, reference 120
 * Hz, target 90 Hz, hidden Y and X, 20 ms delay, 1 mm / 0.2° Gaussian noise per axis) solved for
 * `reps` noise realisations (seeds 1..reps) at 10 s and 20 s of motion; per run the errors of Y
 * and X (mm, degrees), of the time offset (ms), the residuals and the solve time (ms, thread CPU).
 * Also the time of a drift check (xg_calib_residuals, 500 pairs of 5 s; fastest run) and whether a
 * yaw-only motion is reported unobservable (and which axes).
 *
 * Usage: bench_calib [--reps N] [--ms M] [--quick]. Prints one JSON object (arrays: one value per
 * run) on stdout. */
#include <errno.h>

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
    synth_scene(10, 2, 0.020, 0.001, 0.2 * DEG, INT64_C(1000000000000), ref, &nr, tgt, &nt);
    struct xg_calib_result res;
    int rc = xg_calib_solve(ref, nr, tgt, nt, NULL, &res);
    printf(" \"yaw_only\": {\"unobservable\": \"%s%s%s\", \"answered\": %s}\n}\n",
           (res.unobservable & XG_CALIB_UNOBS_X) ? "pitch " : "",
           (res.unobservable & XG_CALIB_UNOBS_Y) ? "yaw " : "",
           (res.unobservable & XG_CALIB_UNOBS_Z) ? "roll " : "", rc == -EDOM ? "false" : "true");
    return 0;
}
