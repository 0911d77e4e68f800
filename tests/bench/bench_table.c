/* In-process pipeline, latency, prediction and memory figures of the entity table
 * (core/table/entity.h).
 *
 * pipeline      synth-like updates (poses precomputed from xg_synth_pose, so the analytic paths
 *               cost nothing) -> xg_table_push -> xg_table_drain of 4 sinks, one thread, no
 *               sockets. Frames of E entities (50 bodies + head + 2 hands) are pushed, then every
 *               sink drains (as at a rate_hz tick, or a send-on-change wake after a burst).
 *               "table_only": the visitor only reads the pose. "encode": each sink's visitor
 *               encodes the pose like its egress adapter would (VRPN Pos_Quat message, RGMP
 *               FLOAT[7] values, LESS update-entity, game-state Object2) into a per-sink buffer.
 *               Reports entity updates/s in, samples/s out and thread-CPU ns per update.
 * latency       the same "encode" pipeline; every update is time-stamped just before
 *               xg_table_push and every visit measures now - stamp: the in-process table path
 *               (update -> predicted pose handed to the egress encoder), per sink, including
 *               waiting behind the rest of the frame and the sinks drained before it. Sockets are
 *               NOT included (see run.py for loopback figures when server adapters exist).
 * prediction    accuracy against the synth's analytic truth: samples at 90/120/240 Hz, with and
 *               without reported velocities (estimated from history when absent); after every
 *               sample the pose is asked 10..100 ms ahead (xg_entity_predict) and compared with
 *               the truth, as is the held last sample. Deterministic (no noise): one run.
 *               Also predictions/s on one core.
 * estimator     thread-CPU ns per pose push of the velocity estimator alone on a 240 Hz ring of
 *               XG_HISTORY samples with a 100 ms window (a turning, moving joint): the batch pass
 *               over the window (xg_motion_estimate) and the running sums (xg_motion_update,
 *               issue 19 item 2); "ring_only" is the cost of making the samples, to subtract.
 * memory        heap bytes per entity (mallinfo2 before/after creating N entities) and
 *               sizeof(struct xg_entity). */
#include <errno.h>
#include <malloc.h>

#include "adapters/less/less_codec.h"
#include "adapters/rgmp/rgmp_codec.h"
#include "adapters/rtp/rtp.h"
#include "adapters/rtp/gamestate_codec.h"
#include "adapters/synth/synth.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "core/table/entity_priv.h" /* white-box: reads the entity's internals */
#include "core/predict/predict_est.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/bench_weak.h"

#define N_SINKS 4
#define FRAMES 64 /* precomputed frames per entity, replayed with advancing time */
static const char *sink_names[N_SINKS] = {"vrpn", "rgmp", "less", "rtp"};

struct pipe {
    struct xg_table *t;
    int n;
    uint32_t *ids;
    struct xg_sample *frames; /* [FRAMES][n] */
    int nframes;              /* precomputed frames (<= FRAMES) */
    int64_t frame_ns;         /* spacing of frames */
    int64_t now;              /* virtual time of the current frame */
    bool encode, stamp;
    int64_t *stamps; /* per entity id: clock before push */
    double *lat;     /* latency samples (µs) per sink */
    size_t lat_n[N_SINKS], lat_cap;
    int sink;
    uint8_t buf[N_SINKS][1 << 16];
    size_t len[N_SINKS];
    uint32_t vrpn_seq;
    uint64_t visits;
};

static const struct less_schema *less_type_cb(void *user, int64_t typeid)
{
    return less_pose_schema();
}
static int less_entity_cb(void *user, int64_t entity_id, int64_t *typeid)
{
    *typeid = 1;
    return 0;
}
static const struct less_context less_ctx = {
    less_type_cb, less_type_cb, less_entity_cb, less_entity_cb, NULL, NULL, NULL};

static void encode_pose(struct pipe *p, const struct xg_entity *e, const struct xg_pose *pose)
{
    int s = p->sink;
    if (p->len[s] > sizeof p->buf[s] - 512) p->len[s] = 0; /* "sent" */
    struct xg_writer w;
    xg_writer_init(&w, p->buf[s] + p->len[s], sizeof p->buf[s] - p->len[s]);
    /* a protocol whose adapter folder is not built is not encoded (bench_weak.h) */
    if ((s == 0 && !BENCH_HAVE_VRPN) || (s == 2 && !BENCH_HAVE_LESS) || (s == 3 && !BENCH_HAVE_RTP))
        return;
    switch (s) {
    case 0: {
        struct vrpn_body b = {.kind = VRPN_BODY_POS_QUAT};
        b.u.pos_quat = (struct vrpn_pos_quat){
            .sensor = (int32_t)e->id, .pos = pose->position, .quat = pose->orientation};
        struct vrpn_header h = {.sender = 0, .type = 3};
        vrpn_header_set_wall_ns(&h, pose->t_ns + INT64_C(1700000000000000000));
        vrpn_encode_body_message(&w, &h, &p->vrpn_seq, &b, NULL);
        break;
    }
    case 1: {
        const double v[7] = {pose->position.x,    pose->position.y,    pose->position.z,
                             pose->orientation.x, pose->orientation.y, pose->orientation.z,
                             pose->orientation.w};
        for (int k = 0; k < 7; k++)
            xg_write_lef32(&w, (float)v[k]);
        break;
    }
    case 2: {
        struct less_pose lp = {.present = LESS_POSE_BIT(LESS_POSE_POSITION) |
                                          LESS_POSE_BIT(LESS_POSE_ORIENTATION) |
                                          LESS_POSE_BIT(LESS_POSE_VELOCITY) |
                                          LESS_POSE_BIT(LESS_POSE_ANGULAR_VELOCITY),
                               .position = pose->position,
                               .velocity = pose->velocity,
                               .orientation = pose->orientation,
                               .angular_velocity = pose->angular_velocity};
        struct less_pose_props pp;
        less_pose_to_props(&lp, lp.present, &pp);
        struct less_comp_values cv = {0, pp.list};
        struct less_msg m = {.code = LESS_MSG_UPDATE_ENTITY};
        m.u.update_entity.entity_id = e->id;
        m.u.update_entity.components = (struct less_comp_values_list){&cv, 1};
        less_encode_msg(&w, &less_ctx, &m, NULL);
        break;
    }
    default: {
        struct rtp_gs_object o = {.type = RTP_GS_OBJECT2, .tag = RTP_GS_TAG_OBJECT2};
        struct rtp_gs_object2 *ob = &o.u.object2;
        ob->object_id = e->id;
        ob->time = (uint16_t)(pose->t_ns / 1000000);
        ob->loc = (struct rtp_gs_loc2){
            {(float)pose->position.x, (float)pose->position.y, (float)pose->position.z},
            {(float)pose->velocity.x, (float)pose->velocity.y, (float)pose->velocity.z}};
        rtp_gs_ijk_from_quat(pose->orientation, ob->rot.s);
        struct xg_quat e1 = xg_quat_integrate(pose->orientation, pose->angular_velocity, 1.0);
        rtp_gs_ijk_from_quat(e1, ob->rot.e);
        ob->scale = (struct rtp_gs_loc2){{1, 1, 1}, {0, 0, 0}};
        ob->active = true;
        rtp_gs_encode_object(&w, &o, NULL);
        break;
    }
    }
    p->len[s] += w.len;
}

static int visit(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct pipe *p = user;
    p->visits++;
    if (p->encode) encode_pose(p, e, pose);
    if (p->stamp) {
        int64_t now = bench_now_ns();
        size_t *n = &p->lat_n[p->sink];
        if (*n < p->lat_cap)
            p->lat[(size_t)p->sink * p->lat_cap + (*n)++] =
                (double)(now - p->stamps[e->id]) / 1000.0;
    }
    return 0;
}

static void pipe_init(struct pipe *p, int n, double rate_hz, int nframes)
{
    memset(p, 0, sizeof *p);
    p->nframes = nframes;
    p->t = xg_table_new(NULL);
    p->n = n;
    p->ids = calloc((size_t)n, sizeof *p->ids);
    p->frames = calloc((size_t)n * (size_t)nframes, sizeof *p->frames);
    p->stamps = calloc((size_t)n + 16, sizeof *p->stamps);
    if (!p->t || !p->ids || !p->frames || !p->stamps) exit(1);
    p->frame_ns = (int64_t)(1e9 / rate_hz);
    xg_table_set_adapter_name(p->t, 0, "synth");
    for (int s = 0; s < N_SINKS; s++) {
        xg_table_set_adapter_name(p->t, 1 + s, sink_names[s]);
        xg_table_add_sink(p->t, 1 + s, NULL, NULL, NULL);
    }
    for (int f = 0; f < nframes; f++) {
        for (int i = 0; i < n; i++) {
            struct xg_sample *s = &p->frames[(size_t)f * (size_t)n + (size_t)i];
            double t = (double)f / rate_hz;
            s->flags = XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY;
            xg_synth_pose(i % 1000, t, &s->position, &s->orientation);
            xg_synth_velocity(i % 1000, t, &s->velocity, &s->angular_velocity);
        }
    }
    p->now = INT64_C(1000000000);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "body%d", i);
        struct xg_entity_key key = {.source = name, .kind = XG_KIND_RIGID_BODY};
        struct xg_sample s = p->frames[i];
        s.capture_ns = p->now;
        if (xg_table_update_origin(p->t, 0, &key, &s, &p->ids[i])) {
            fprintf(stderr, "bench_table: update failed\n");
            exit(1);
        }
    }
}

static void pipe_free(struct pipe *p)
{
    xg_table_free(p->t);
    free(p->ids);
    free(p->frames);
    free(p->stamps);
    free(p->lat);
}

/* One frame: push every entity, then drain every sink. */
static void pipe_frame(struct pipe *p, uint64_t f)
{
    p->now += p->frame_ns;
    const struct xg_sample *fr = &p->frames[(size_t)(f % (uint64_t)p->nframes) * (size_t)p->n];
    for (int i = 0; i < p->n; i++) {
        struct xg_sample s = fr[i];
        s.capture_ns = p->now;
        if (p->stamp) p->stamps[p->ids[i]] = bench_now_ns();
        xg_table_push(p->t, p->ids[i], &s);
    }
    for (int k = 0; k < N_SINKS; k++) {
        p->sink = k;
        xg_table_drain(p->t, 1 + k, p->now, visit, p);
    }
}

/* Run frames for ms; returns updates/s and stores CPU ns per update. */
static double pipe_run(struct pipe *p, int ms, double *cpu_ns_per_update, double *out_per_s)
{
    uint64_t f = 0, v0 = p->visits;
    int64_t c0 = bench_thread_cpu_ns(), t0 = bench_now_ns(), end = t0 + (int64_t)ms * 1000000, t;
    do {
        for (int i = 0; i < 16; i++)
            pipe_frame(p, f++);
        t = bench_now_ns();
    } while (t < end);
    int64_t c1 = bench_thread_cpu_ns();
    double updates = (double)f * p->n;
    *cpu_ns_per_update = (double)(c1 - c0) / updates;
    *out_per_s = (double)(p->visits - v0) * 1e9 / (double)(t - t0);
    return updates * 1e9 / (double)(t - t0);
}

/* ---- prediction accuracy ---- */

struct pred_acc {
    double hold_pos, pred_pos, hold_rot, pred_rot; /* means */
    double hold_pos_p95, pred_pos_p95, hold_rot_p95, pred_rot_p95;
};

static int cmp(const void *a, const void *b)
{
    return bench_cmp_double(a, b);
}

static void prediction_run(double rate_hz, bool velocities, double horizon_ms, double seconds,
                           struct pred_acc *out)
{
    struct xg_table *t = xg_table_new(NULL);
    xg_table_set_adapter_name(t, 0, "synth");
    const int n = 8; /* head, two hands, five bodies */
    uint32_t ids[8];
    size_t cap = (size_t)(seconds * rate_hz + 2) * n, m = 0;
    double *hp = malloc(cap * sizeof *hp), *pp = malloc(cap * sizeof *pp),
           *hr = malloc(cap * sizeof *hr), *pr = malloc(cap * sizeof *pr);
    if (!t || !hp || !pp || !hr || !pr) exit(1);
    const double warm = 0.5; /* let velocity estimation fill its window */
    int64_t t0 = INT64_C(1000000000);
    long steps = (long)((seconds + warm) * rate_hz);
    double h = horizon_ms / 1000.0;
    for (long k = 0; k <= steps; k++) {
        double ts = (double)k / rate_hz;
        int64_t ns = t0 + (int64_t)llround(ts * 1e9);
        for (int i = 0; i < n; i++) {
            struct xg_sample s = {.capture_ns = ns, .flags = XG_SAMPLE_POSE};
            xg_synth_pose(i, ts, &s.position, &s.orientation);
            if (velocities) {
                s.flags |= XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY;
                xg_synth_velocity(i, ts, &s.velocity, &s.angular_velocity);
            }
            if (k == 0) {
                char name[16];
                snprintf(name, sizeof name, "e%d", i);
                struct xg_entity_key key = {.source = name};
                xg_table_update_origin(t, 0, &key, &s, &ids[i]);
            } else {
                xg_table_push(t, ids[i], &s);
            }
            if (ts < warm || m >= cap) continue;
            struct xg_pose pose;
            xg_entity_predict(t, ids[i], ns + (int64_t)llround(h * 1e9), &pose);
            struct xg_vec3 tp;
            struct xg_quat tq;
            xg_synth_pose(i, ts + h, &tp, &tq);
            hp[m] = xg_vec3_norm(xg_vec3_sub(s.position, tp));
            pp[m] = xg_vec3_norm(xg_vec3_sub(pose.position, tp));
            hr[m] = xg_quat_angle_between(s.orientation, tq) * 180.0 / M_PI;
            pr[m] = xg_quat_angle_between(pose.orientation, tq) * 180.0 / M_PI;
            m++;
        }
    }
    double *arr[4] = {hp, pp, hr, pr}, mean[4], p95[4];
    for (int a = 0; a < 4; a++) {
        double sum = 0;
        for (size_t i = 0; i < m; i++)
            sum += arr[a][i];
        mean[a] = m ? sum / (double)m : NAN;
        qsort(arr[a], m, sizeof(double), cmp);
        p95[a] = bench_quantile_sorted(arr[a], m, 0.95);
    }
    *out = (struct pred_acc){mean[0], mean[1], mean[2], mean[3], p95[0], p95[1], p95[2], p95[3]};
    free(hp);
    free(pp);
    free(hr);
    free(pr);
    xg_table_free(t);
}

static double predictions_per_s(int ms)
{
    struct pipe p;
    pipe_init(&p, 53, 120, FRAMES);
    for (uint64_t f = 0; f < 8; f++)
        pipe_frame(&p, f);
    uint64_t n = 0;
    struct xg_pose pose;
    double acc = 0;
    int64_t t0 = bench_now_ns(), end = t0 + (int64_t)ms * 1000000, t;
    do {
        for (int r = 0; r < 64; r++)
            for (int i = 0; i < p.n; i++) {
                xg_entity_predict(p.t, p.ids[i], p.now + (r + 1) * 1000000, &pose);
                acc += pose.position.x;
            }
        n += 64 * (uint64_t)p.n;
        t = bench_now_ns();
    } while (t < end);
    bench_sink(&acc);
    pipe_free(&p);
    return (double)n * 1e9 / (double)(t - t0);
}

/* ---- estimator cost ---- */

/* thread-CPU ns per push of the estimator: mode 0 the history alone (the samples' own cost: the
 * compact history's encoding, core/table/history.h), 1 the batch pass (xg_motion_estimate), 2 the
 * running sums (xg_motion_update) */
static double estimator_ns_per_push(int ms, int mode)
{
    static struct xg_history ring;
    xg_history_clear(&ring);
    struct xg_motion_acc acc;
    memset(&acc, 0, sizeof acc);
    uint64_t k = 0;
    double sink = 0;
    int64_t c0 = bench_thread_cpu_ns(), end = bench_now_ns() + (int64_t)ms * 1000000;
    do {
        for (int i = 0; i < 1024; i++, k++) {
            struct xg_hist ev;
            double ts = (double)k / 240;
            int64_t t_ns = INT64_C(1000000000) + (int64_t)k * 4166667 + (int64_t)(k % 3) * 100000;
            struct xg_vec3 p = {sin(ts), 1 + 0.1 * cos(3 * ts), 0.2 * ts};
            struct xg_quat q = xg_quat_exp((struct xg_vec3){0.3 * sin(ts), 2 * sin(0.5 * ts), 0.1});
            bool evicted = xg_history_push(&ring, t_ns, p, q, &ev);
            struct xg_motion_est m = {.n_used = 0};
            if (mode == 0)
                m.velocity = p, m.fit_angular_velocity = p;
            else if (mode == 2)
                xg_motion_update(&acc, &ring, evicted ? &ev : NULL, 100 * INT64_C(1000000), &m);
            else
                xg_motion_estimate(&ring, 100 * INT64_C(1000000), &m);
            sink += m.velocity.x + m.fit_angular_velocity.y;
        }
    } while (bench_now_ns() < end);
    int64_t c1 = bench_thread_cpu_ns();
    bench_sink(&sink);
    return (double)(c1 - c0) / (double)k;
}

/* ---- memory ---- */

static double heap_bytes_per_entity(int n)
{
    struct mallinfo2 a = mallinfo2();
    struct pipe p;
    pipe_init(&p, n, 60, 1);
    struct mallinfo2 b = mallinfo2();
    /* the pipe's own arrays are not the table's */
    size_t own = (size_t)n * sizeof *p.ids + (size_t)n * sizeof *p.frames +
                 ((size_t)n + 16) * sizeof *p.stamps;
    double per = ((double)(b.uordblks + b.hblkhd) - (double)(a.uordblks + a.hblkhd) - (double)own) /
                 (double)n;
    pipe_free(&p);
    return per;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_parse(argc, argv, &o);
    if (!BENCH_HAVE_SYNTH) {
        fprintf(stderr, "bench_table: needs the synth adapter (adapters/synth) in the build\n");
        return 1;
    }
    int n = 53;
    double *ups = calloc((size_t)o.reps, sizeof(double)), *cpu = calloc((size_t)o.reps, 8),
           *outs = calloc((size_t)o.reps, 8);
    if (!ups || !cpu || !outs) return 1;
    struct bench_json j = {.first = {true}};
    bench_json_open(&j, NULL);
    bench_json_num(&j, "entities", n);
    bench_json_num(&j, "sinks", N_SINKS);

    /* pipeline: table only, then with encoding */
    for (int enc = 0; enc < 2; enc++) {
        struct pipe p;
        pipe_init(&p, n, 240, FRAMES);
        p.encode = enc == 1;
        for (int r = 0; r < o.reps; r++)
            ups[r] = pipe_run(&p, o.ms, &cpu[r], &outs[r]);
        bench_json_open(&j, enc ? "pipeline_encode" : "pipeline_table_only");
        bench_json_arr(&j, "updates_per_s", ups, o.reps);
        bench_json_arr(&j, "samples_out_per_s", outs, o.reps);
        bench_json_arr(&j, "cpu_ns_per_update", cpu, o.reps);
        bench_json_close(&j);
        pipe_free(&p);
        fprintf(stderr, "table: pipeline %s done\n", enc ? "encode" : "table-only");
    }

    /* latency: in-process, per sink; percentiles per repetition */
    {
        struct pipe p;
        pipe_init(&p, n, 240, FRAMES);
        p.encode = true;
        p.stamp = true;
        p.lat_cap = 1 << 20;
        p.lat = malloc(sizeof(double) * N_SINKS * p.lat_cap);
        if (!p.lat) return 1;
        static const double qs[5] = {0.5, 0.9, 0.99, 0.999, 1.0};
        static const char *qn[5] = {"p50", "p90", "p99", "p999", "max"};
        double *res = calloc((size_t)N_SINKS * 5 * (size_t)o.reps, sizeof(double));
        if (!res) return 1;
        for (int r = 0; r < o.reps; r++) {
            memset(p.lat_n, 0, sizeof p.lat_n);
            double c, x;
            pipe_run(&p, o.ms, &c, &x);
            for (int s = 0; s < N_SINKS; s++) {
                double *v = p.lat + (size_t)s * p.lat_cap;
                qsort(v, p.lat_n[s], sizeof *v, cmp);
                for (int q = 0; q < 5; q++)
                    res[((size_t)s * 5 + (size_t)q) * (size_t)o.reps + (size_t)r] =
                        bench_quantile_sorted(v, p.lat_n[s], qs[q]);
            }
        }
        bench_json_open(&j, "latency_us");
        for (int s = 0; s < N_SINKS; s++) {
            bench_json_open(&j, sink_names[s]);
            for (int q = 0; q < 5; q++)
                bench_json_arr(&j, qn[q], res + ((size_t)s * 5 + (size_t)q) * (size_t)o.reps,
                               o.reps);
            bench_json_close(&j);
        }
        bench_json_close(&j);
        free(res);
        pipe_free(&p);
        fprintf(stderr, "table: latency done\n");
    }

    /* prediction accuracy grid (deterministic) and cost */
    {
        static const double rates[3] = {90, 120, 240};
        static const double horizons[4] = {10, 20, 50, 100};
        double secs = o.quick ? 1.0 : 4.0;
        bench_json_open(&j, "prediction");
        for (int ri = 0; ri < 3; ri++)
            for (int v = 0; v < 2; v++)
                for (int hi = 0; hi < 4; hi++) {
                    struct pred_acc a;
                    prediction_run(rates[ri], v == 1, horizons[hi], secs, &a);
                    char key[64];
                    snprintf(key, sizeof key, "%g_hz_%s_%g_ms", rates[ri],
                             v ? "reported_vel" : "estimated_vel", horizons[hi]);
                    bench_json_open(&j, key);
                    bench_json_num(&j, "rate_hz", rates[ri]);
                    bench_json_num(&j, "reported_velocity", v);
                    bench_json_num(&j, "horizon_ms", horizons[hi]);
                    bench_json_num(&j, "hold_pos_err_m", a.hold_pos);
                    bench_json_num(&j, "pred_pos_err_m", a.pred_pos);
                    bench_json_num(&j, "hold_rot_err_deg", a.hold_rot);
                    bench_json_num(&j, "pred_rot_err_deg", a.pred_rot);
                    bench_json_num(&j, "hold_pos_err_p95_m", a.hold_pos_p95);
                    bench_json_num(&j, "pred_pos_err_p95_m", a.pred_pos_p95);
                    bench_json_num(&j, "hold_rot_err_p95_deg", a.hold_rot_p95);
                    bench_json_num(&j, "pred_rot_err_p95_deg", a.pred_rot_p95);
                    bench_json_close(&j);
                }
        bench_json_close(&j);
        for (int r = 0; r < o.reps; r++)
            ups[r] = predictions_per_s(o.ms);
        bench_json_arr(&j, "predictions_per_s", ups, o.reps);
        fprintf(stderr, "table: prediction done\n");
    }

    /* estimator cost per push: batch pass vs running sums */
    {
        bench_json_open(&j, "estimator_cpu_ns_per_push");
        static const char *modes[3] = {"ring_only", "batch", "incremental"};
        for (int mode = 0; mode < 3; mode++) {
            for (int r = 0; r < o.reps; r++)
                ups[r] = estimator_ns_per_push(o.ms, mode);
            bench_json_arr(&j, modes[mode], ups, o.reps);
        }
        bench_json_close(&j);
        fprintf(stderr, "table: estimator done\n");
    }

    /* memory */
    {
        int big = o.quick ? 1000 : 10000;
        bench_json_num(&j, "heap_entities", big);
        bench_json_num(&j, "heap_bytes_per_entity", heap_bytes_per_entity(big));
        bench_json_num(&j, "sizeof_entity", (double)sizeof(struct xg_entity));
    }
    bench_json_close(&j);
    free(ups);
    free(cpu);
    free(outs);
    return 0;
}
