/* Configuration reload cost (issue 31): loop time of xg_gateway_reload() on a running
 * 20-adapter gateway (10 synth sources of 3 bodies + head + hands at 120 Hz, 5 vrpn-server and
 * 5 rgmp-server sinks on loopback port 0, admin API off), timed around the call on the reactor's
 * thread (the loop does nothing else meanwhile, so this is the pause every peer sees):
 *
 *   unchanged   the same file again: everything is checked as `--check` checks it, nothing moves
 *   rate        one vrpn-server's rate_hz changed: updated in place
 *   add         one synth added (each repetition starts from the first file again, untimed)
 *   restart     one vrpn-server changed (max_clients): stopped, its index re-created, started
 *   refused     a file with an unknown key: parsed, refused
 *
 * Prints one JSON object: {"adapters": 20, "reload_ms": {"<case>": [per-rep ms...]}}; the
 * figures go to docs/performance.md via tests/bench/run.py. No thresholds here. */
#include <event2/event.h>
#include <unistd.h>

#include "gateway/gateway.h"
#include "tests/bench/bench_util.h"

#define SOURCES 10
#define SINKS 5

static char path[256];

static void write_conf(int rate, bool extra, int max_clients, bool bad)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "gateway:\n  admin:\n    listen: \"off\"\n  log_level: error\nadapters:\n");
    for (int i = 0; i < SOURCES; i++)
        fprintf(f, "  - {name: s%d, type: synth, bodies: 3, rate_hz: 120}\n", i);
    for (int i = 0; i < SINKS; i++)
        fprintf(f,
                "  - {name: v%d, type: vrpn-server, listen: \"127.0.0.1:0\", rate_hz: %d, "
                "max_clients: %d}\n",
                i, i == 0 ? rate : 60, i == 1 ? max_clients : 16);
    for (int i = 0; i < SINKS; i++)
        fprintf(f, "  - {name: r%d, type: rgmp-server, listen: \"127.0.0.1:0\", rate_hz: 60}\n", i);
    if (extra) fprintf(f, "  - {name: extra, type: synth, bodies: 3, rate_hz: 120}\n");
    if (bad) fprintf(f, "  - {name: bad, type: synth, bodiez: 3}\n");
    fclose(f);
}

struct run {
    struct xg_gateway *gw;
    const char *what;
    double ms;
};

/* one reload on the loop (timed inside the callback), then leave the loop */
static void reload_cb(evutil_socket_t fd, short ev, void *arg)
{
    (void)fd;
    (void)ev;
    struct run *r = arg;
    bool ok;
    int64_t t0 = bench_now_ns();
    free(xg_gateway_reload(r->gw, r->what, &ok));
    r->ms = (double)(bench_now_ns() - t0) * 1e-6;
    event_base_loopexit(r->gw->base, NULL);
}

static double timed(struct xg_gateway *gw, const char *what)
{
    struct run r = {gw, what, 0};
    struct timeval tv = {0, 20000}; /* let the sources run a little in between */
    event_base_once(gw->base, -1, EV_TIMEOUT, reload_cb, &r, &tv);
    event_base_dispatch(gw->base);
    return r.ms;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_parse(argc, argv, &o);
    snprintf(path, sizeof path, "/tmp/xrgate-bench-reload-%d.yaml", (int)getpid());
    write_conf(60, false, 16, false);
    struct xg_gateway gw;
    struct xg_gateway_opts opts = {.config_path = path};
    struct xg_error err = {0};
    if (xg_gateway_load(&gw, &opts, &err) || xg_gateway_start(&gw, &err)) {
        fprintf(stderr, "bench_reload: %s\n", err.msg);
        return 1;
    }
    static const char *const cases[] = {"unchanged", "rate", "add", "restart", "refused"};
    enum { N = sizeof cases / sizeof cases[0] };
    int reps = o.quick ? 3 : o.reps * 4;
    double *ms[N];
    for (int c = 0; c < N; c++)
        ms[c] = calloc((size_t)reps, sizeof(double));
    int rate = 60;
    for (int r = 0; r < reps; r++) {
        write_conf(rate, false, 16, false);
        timed(&gw, "reset"); /* back to the first file (untimed) */
        ms[0][r] = timed(&gw, "unchanged");
        rate = rate == 60 ? 90 : 60;
        write_conf(rate, false, 16, false);
        ms[1][r] = timed(&gw, "rate");
        write_conf(rate, true, 16, false);
        ms[2][r] = timed(&gw, "add");
        write_conf(rate, true, 8 + (r & 1), false);
        ms[3][r] = timed(&gw, "restart");
        write_conf(rate, true, 8 + (r & 1), true);
        ms[4][r] = timed(&gw, "refused");
        fprintf(stderr,
                "rep %d: unchanged %.2f ms, rate %.2f, add %.2f, restart %.2f, "
                "refused %.2f\n",
                r, ms[0][r], ms[1][r], ms[2][r], ms[3][r], ms[4][r]);
    }
    printf("{\"adapters\": %d, \"reload_ms\": {", SOURCES + 2 * SINKS);
    for (int c = 0; c < N; c++) {
        printf("%s\"%s\": [", c ? ", " : "", cases[c]);
        for (int r = 0; r < reps; r++)
            printf("%s%.4f", r ? ", " : "", ms[c][r]);
        printf("]");
        free(ms[c]);
    }
    printf("}}\n");
    xg_gateway_free(&gw);
    unlink(path);
    return 0;
}
