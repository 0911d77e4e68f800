/* Egress cost per update per egress (issue 19 item 3): what one entity update costs each sink
 * between the table and its encoder, i.e. the pose predicted to the send time and converted to the
 * sink's wire frame, with and without the shared prediction of an egress pass and the frame
 * matrices of xg_frame_finalize().
 *
 * 53 entities (moving and turning, velocities reported) are pushed per frame, then four sinks
 * drain them, each converting to its own frame like its adapter would (vrpn-server: vrpn-zup, rtp:
 * gamestate-lh, rgmp-server: LTP_ENU, less: the internal frame) and handing the pose to a
 * consumer that only sums its fields (the encoders are outside this measurement). Variants:
 *   per_sink_ref     every sink drains on its own (xg_table_drain outside a pass: one prediction
 *                    per entity per sink) and converts with the reference frame code (before)
 *   per_sink_matrix  the same with finalized frames (one 3x3 / 4x4 product per field)
 *   pass_ref         one egress pass (core/table/egress_pass.h: rtp and vrpn-server sliced, the
 * others whole) sharing one prediction per entity, reference frame code pass_matrix      the pass
 * with finalized frames (after: what the gateway does now) Timed mode (default): thread-CPU ns per
 * update per egress, per repetition.
 * --callgrind: a fixed number of frames per variant with callgrind's collection switched on
 *   around the drains only (run under `valgrind --tool=callgrind --collect-atstart=no`); each
 *   variant ends in a dump named after it, and tests/bench/run.py divides its instruction count by
 *   the updates x egresses. Also one dump each for 100 000 xg_frame_pose_out calls (reference and
 *   finalized) and 100 000 predictions. */
#include <math.h>

#include "core/table/egress_pass.h"
#include "core/table/entity.h"
#include "mappings/frame.h"
#include "tests/bench/bench_util.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(x) ((void)(x))
#endif

#define E 53
#define SINKS 4
#define FRAME_NS (INT64_C(1000000000) / 240)

enum variant { PER_SINK_REF, PER_SINK_MATRIX, PASS_REF, PASS_MATRIX, N_VARIANTS };
static const char *const variant_names[N_VARIANTS] = {"per_sink_ref", "per_sink_matrix", "pass_ref",
                                                      "pass_matrix"};
static const char *const frame_names[SINKS] = {"vrpn-zup", "gamestate-lh", "LTP_ENU", "yup-rh"};

struct bench {
    struct xg_table *t;
    uint32_t ids[E];
    struct xg_frame ref[SINKS], fast[SINKS];
    const struct xg_frame *frame[SINKS]; /* the variant's */
    int64_t now;
    uint64_t f;
    double acc[SINKS];
    int cur;
};

static int visit(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct bench *b = user;
    (void)e;
    struct xg_pose p = *pose;
    xg_frame_pose_out(b->frame[b->cur], &p);
    b->acc[b->cur] += p.position.x + p.orientation.w + p.velocity.y + p.angular_velocity.z;
    return 0;
}

static void drain(void *user, int sink)
{
    struct bench *b = user;
    b->cur = sink - 1;
    xg_table_drain(b->t, sink, b->now, visit, b);
}

static struct xg_sample sample_at(int i, int64_t t_ns)
{
    double t = (double)t_ns * 1e-9, w = 0.5 + 0.05 * i;
    struct xg_sample s = {.capture_ns = t_ns,
                          .flags =
                              XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY};
    s.position = (struct xg_vec3){sin(w * t) + i, 1.5, cos(w * t)};
    s.velocity = (struct xg_vec3){w * cos(w * t), 0, -w * sin(w * t)};
    s.orientation = xg_quat_from_axis_angle((struct xg_vec3){0, 1, 0}, w * t);
    s.angular_velocity = (struct xg_vec3){0, w, 0};
    return s;
}

static void bench_init(struct bench *b)
{
    memset(b, 0, sizeof *b);
    b->t = xg_table_new(NULL);
    if (!b->t) exit(1);
    for (int k = 1; k <= SINKS; k++)
        xg_table_add_sink(b->t, k, NULL, NULL, NULL);
    for (int k = 0; k < SINKS; k++) {
        struct xg_error err = {0};
        if (xg_frame_preset(frame_names[k], &b->ref[k], &err)) exit(1);
        b->fast[k] = b->ref[k];
        xg_frame_finalize(&b->fast[k]);
    }
    b->now = INT64_C(1000000000000);
    for (int i = 0; i < E; i++) {
        char src[16];
        snprintf(src, sizeof src, "body%d", i);
        struct xg_entity_key key = {.source = src};
        struct xg_sample s = sample_at(i, b->now);
        if (xg_table_update_origin(b->t, 0, &key, &s, &b->ids[i])) exit(1);
    }
}

static void push_frame(struct bench *b)
{
    b->now += FRAME_NS;
    for (int i = 0; i < E; i++) {
        struct xg_sample s = sample_at(i, b->now);
        xg_table_push(b->t, b->ids[i], &s);
    }
}

/* The egress of one frame (the part measured). */
static void egress(struct bench *b, enum variant v)
{
    bool matrix = v == PER_SINK_MATRIX || v == PASS_MATRIX;
    for (int k = 0; k < SINKS; k++)
        b->frame[k] = matrix ? &b->fast[k] : &b->ref[k];
    int64_t send = b->now + 200000; /* drained 0.2 ms after capture */
    if (v == PER_SINK_REF || v == PER_SINK_MATRIX) {
        for (int k = 1; k <= SINKS; k++) {
            b->cur = k - 1;
            xg_table_drain(b->t, k, send, visit, b);
        }
    } else {
        /* as the gateway plans it: vrpn-server and rtp sliced (1, then 32), the others whole */
        struct xg_egress_plan plan = {.due = 0x1e, .sliced = 0x6};
        xg_egress_pass_run(b->t, send, &plan, drain, b, NULL);
    }
}

static double timed(struct bench *b, enum variant v, int ms)
{
    int64_t cpu = 0, end = bench_now_ns() + (int64_t)ms * 1000000;
    uint64_t frames = 0;
    do {
        for (int i = 0; i < 16; i++, frames++) {
            push_frame(b);
            int64_t c0 = bench_thread_cpu_ns();
            egress(b, v);
            cpu += bench_thread_cpu_ns() - c0;
        }
    } while (bench_now_ns() < end);
    return (double)cpu / ((double)frames * E * SINKS);
}

static void callgrind_run(struct bench *b, int frames)
{
    for (int v = 0; v < N_VARIANTS; v++) {
        CALLGRIND_ZERO_STATS;
        for (int f = 0; f < frames; f++) {
            push_frame(b);
            CALLGRIND_TOGGLE_COLLECT;
            egress(b, (enum variant)v);
            CALLGRIND_TOGGLE_COLLECT;
        }
        CALLGRIND_DUMP_STATS_AT(variant_names[v]);
    }
    /* the pieces: one frame conversion (reference, finalized), one prediction */
    struct xg_pose p = {.position = {1, 2, 3}, .orientation = {0.1, 0.2, 0.3, 0.9}};
    for (int m = 0; m < 2; m++) {
        CALLGRIND_ZERO_STATS;
        CALLGRIND_TOGGLE_COLLECT;
        for (int i = 0; i < 100000; i++) {
            struct xg_pose q = p;
            xg_frame_pose_out(m ? &b->fast[0] : &b->ref[0], &q);
            bench_sink(&q);
        }
        CALLGRIND_TOGGLE_COLLECT;
        CALLGRIND_DUMP_STATS_AT(m ? "frame_matrix" : "frame_ref");
    }
    const struct xg_entity *e = xg_table_get(b->t, b->ids[0]);
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < 100000; i++) {
        struct xg_pose q;
        xg_entity_predict_at(b->t, e, b->now + 1000 + i, &q);
        bench_sink(&q);
    }
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("predict");
}

int main(int argc, char **argv)
{
    bool cg = argc > 1 && !strcmp(argv[1], "--callgrind");
    struct bench_opts o;
    bench_parse(cg ? 1 : argc, argv, &o);
    struct bench b;
    bench_init(&b);
    struct bench_json j = {0};
    bench_json_open(&j, NULL);
    bench_json_num(&j, "entities", E);
    bench_json_num(&j, "egresses", SINKS);
    if (cg) {
        int frames = 200;
        callgrind_run(&b, frames);
        bench_json_num(&j, "callgrind_frames", frames);
        bench_json_num(&j, "callgrind_calls", 100000);
#ifdef HAVE_CALLGRIND
        bench_json_num(&j, "callgrind_built", 1);
#else
        bench_json_num(&j, "callgrind_built", 0);
#endif
    } else {
        bench_json_open(&j, "cpu_ns_per_update_egress");
        double r[N_VARIANTS][64];
        int reps = o.reps < 64 ? o.reps : 64;
        for (int k = 0; k < reps; k++) /* interleaved repetitions */
            for (int v = 0; v < N_VARIANTS; v++)
                r[v][k] = timed(&b, (enum variant)v, o.quick ? 30 : o.ms / 2);
        for (int v = 0; v < N_VARIANTS; v++)
            bench_json_arr(&j, variant_names[v], r[v], reps);
        bench_json_close(&j);
    }
    const struct xg_table_stats *st = xg_table_stats(b.t);
    bench_json_num(&j, "predictions_shared", (double)st->predictions_shared);
    bench_json_close(&j);
    for (int k = 0; k < SINKS; k++)
        bench_sink(&b.acc[k]);
    xg_table_free(b.t);
    fprintf(stderr, "egress: done\n");
    return 0;
}
