/* The `bvh` adapter on a real reactor and entity table (no gateway): configuration errors,
 * joint selection and kinds, relative file paths, `start` in seconds and frames, playback
 * timestamps (frame index × frame time / rate on the gateway clock), velocities scaled by the
 * playback factor, the adapter's frame applied, and play-once ending in state "done". */
#include <errno.h>
#include <event2/event.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: builds or reads entities' internals */
#include "adapters/bvh/bvh_fk.h"
#include "adapters/bvh/bvh_parser.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "mappings/conf_yaml.h"
#include "mappings/frame.h"

extern const struct xg_adapter_ops xg_bvh_ops;

#define SMALL XG_SOURCE_DIR "/tests/vectors/bvh/walk_small.bvh"
#define CMU_SCALE (0.0254 / 0.45)

struct rig {
    struct event_base *base;
    struct xg_table *table;
    struct xg_frame frame;
    struct xg_adapter a;
    struct xg_conf *conf;
    bool created, started;
};

/* Create the adapter from the YAML text of its config map (file name `file` for paths). */
static int rig_create(struct rig *r, const char *yaml, const char *file, struct xg_error *err)
{
    memset(r, 0, sizeof *r);
    r->base = event_base_new();
    assert_non_null(r->base);
    struct xg_table_params tp;
    xg_table_params_default(&tp);
    tp.max_horizon_ns = 0;
    r->table = xg_table_new(&tp);
    assert_non_null(r->table);
    xg_frame_identity(&r->frame);
    r->a.ops = &xg_bvh_ops;
    snprintf(r->a.name, sizeof r->a.name, "take");
    r->a.base = r->base;
    r->a.table = r->table;
    r->a.frame = &r->frame;
    assert_int_equal(xg_table_set_adapter_name(r->table, 0, r->a.name), 0);
    r->conf = xg_conf_yaml_parse(yaml, strlen(yaml), file, err);
    assert_non_null(r->conf);
    r->created = true;
    int rc = xg_bvh_ops.create(&r->a, r->conf, err);
    if (rc == 0) rc = xg_conf_check_unused(r->conf, err);
    return rc;
}

static void rig_free(struct rig *r)
{
    if (r->started) xg_bvh_ops.stop(&r->a);
    if (r->created) xg_bvh_ops.destroy(&r->a);
    assert_null(r->a.priv);
    xg_conf_yaml_free(r->conf);
    xg_table_free(r->table);
    event_base_free(r->base);
}

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    event_base_loopexit(arg, NULL);
}

static void run_for(struct rig *r, int ms)
{
    struct event *ev = evtimer_new(r->base, stop_cb, r->base);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(ev, &tv);
    event_base_dispatch(r->base);
    event_free(ev);
}

static double counter(struct rig *r, const char *name, const char **state)
{
    struct xg_status st;
    memset(&st, 0, sizeof st);
    xg_bvh_ops.status(&r->a, &st);
    if (state) *state = st.state;
    for (int i = 0; i < st.n_counters; i++)
        if (!strcmp(st.counters[i].name, name)) return st.counters[i].value;
    fail_msg("no counter %s", name);
    return -1;
}

/* Run the reactor in 5 ms slices until done(r) holds; fails after 10 s. Playback follows the
 * wall clock, which a loaded machine stretches: tests wait for what they check, never assume how
 * much playback a given run time produces. */
static void run_until(struct rig *r, bool (*done)(struct rig *), const char *what)
{
    const int64_t deadline = xg_clock_mono_ns() + 10 * 1000000000LL;
    while (!done(r)) {
        if (xg_clock_mono_ns() > deadline) fail_msg("timed out after 10 s waiting for %s", what);
        run_for(r, 5);
    }
}

static bool past_start_frame(struct rig *r)
{
    return counter(r, "frame", NULL) > 15;
}

static bool finished(struct rig *r)
{
    const char *st;
    counter(r, "frame", &st);
    return !strcmp(st, "done");
}

static bool two_loops(struct rig *r)
{
    return counter(r, "loops", NULL) >= 2;
}

static void expect_create_error(const char *yaml, const char *want)
{
    struct rig r;
    struct xg_error err = {0};
    int rc = rig_create(&r, yaml, "t.yaml", &err);
    if (rc == 0 || !strstr(err.msg, want))
        fail_msg("rc %d, message \"%s\" (want \"%s\")", rc, err.msg, want);
    rig_free(&r);
}

static void test_config_errors(void **state)
{
    (void)state;
    expect_create_error("name: take\n", "t.yaml:1:1: bvh adapter 'take': 'file' is required");
    expect_create_error("file: /nonexistent/w.bvh\n",
                        "t.yaml:1:7: /nonexistent/w.bvh: cannot open");
    expect_create_error("file: " SMALL "\njoints: [Hips, Nose]\n",
                        "t.yaml:2:16: joints: no joint matches 'Nose' in");
    expect_create_error("file: " SMALL "\njoints:\n  Hips: hips\n  Nose: nose\n",
                        "t.yaml:4:3: joints: no joint matches 'Nose' in");
    expect_create_error("file: " SMALL "\njoints: {Hips: {name: h, kind: tail}}\n",
                        "joints: unknown kind 'tail' for joint 'Hips'");
    expect_create_error("file: " SMALL "\njoints: {Hips: x, Head: x}\n",
                        "joints: entity name 'x' used twice");
    expect_create_error("file: " SMALL "\nstart: 2.5\n",
                        "t.yaml:2:8: start: '2.5' is past the end of");
    expect_create_error("file: " SMALL "\nstart: 60f\n", "start: '60f' is past the end");
    expect_create_error("file: " SMALL "\nstart: 1.5f\n", "start: '1.5f' must be a time >= 0");
    expect_create_error("file: " SMALL "\nstart: soon\n", "start: 'soon' is neither seconds");
    expect_create_error("file: " SMALL "\nunits: furlong\n",
                        "t.yaml:2:8: units: 'furlong' is not one of m, cm, mm, in, cmu");
    expect_create_error("file: " SMALL "\nscale: 0\n", "'scale' = 0 is out of range");
    expect_create_error("file: " SMALL "\nrate: -1\n", "'rate' = -1 is out of range");
    expect_create_error("file: " SMALL "\nloops: 3\n", "t.yaml:2:1: unknown key 'loops'");
    expect_create_error("file: " SMALL "\nvelocities: forward\n",
                        "t.yaml:2:13: velocities: 'forward' is not one of causal, central");
    /* a file that parses but has no frames */
    expect_create_error("file: " XG_SOURCE_DIR "/tests/unit/test_bvh_adapter.c\n",
                        "test_bvh_adapter.c: line 1: expected 'HIERARCHY', got '/*'");
}

/* A relative `file` is relative to the configuration file's directory; the default joint set is
 * every ROOT/JOINT with kinds guessed from the names. */
static void test_relative_path_and_default_joints(void **state)
{
    (void)state;
    struct rig r;
    struct xg_error err = {0};
    int rc = rig_create(&r, "file: ../../tests/vectors/bvh/walk_small.bvh\nunits: cm\n",
                        XG_SOURCE_DIR "/conf/examples/x.yaml", &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(xg_bvh_ops.start(&r.a), 0);
    r.started = true;
    const char *st;
    assert_true(counter(&r, "joints", &st) == 6);
    assert_string_equal(st, "playing");
    assert_true(counter(&r, "frame", NULL) == 0); /* the first frame is played at start */
    assert_int_equal(xg_table_count(r.table), 6);
    const struct xg_entity *e = xg_table_find(r.table, "take/Head");
    assert_non_null(e);
    assert_int_equal(e->kind, XG_KIND_HEAD);
    assert_int_equal(xg_table_find(r.table, "take/LeftHand")->kind, XG_KIND_LEFT_HAND);
    assert_int_equal(xg_table_find(r.table, "take/RightHand")->kind, XG_KIND_RIGHT_HAND);
    assert_int_equal(xg_table_find(r.table, "take/Spine")->kind, XG_KIND_JOINT);
    assert_null(xg_table_find(r.table, "take/Head_End"));
    /* units: cm; frame 0 of the file: hips at (0, 16, -10) units */
    const struct xg_entity *h = xg_table_find(r.table, "take/Hips");
    assert_true(fabs(h->last.position.y - 0.16) < 1e-12);
    assert_true(fabs(h->last.position.z + 0.10) < 1e-12);
    rig_free(&r);
}

/* Playback at 2x: sample spacing is frame time / 2 on the gateway clock, every entity's newest
 * sample is the FK of the reported frame (through the adapter's frame: scale 2), and with
 * `velocities: central` velocities are the central differences × 2. */
static void test_timestamps_rate_and_frame(void **state)
{
    (void)state;
    struct bvh_file f;
    struct xg_error err = {0};
    assert_int_equal(bvh_load(SMALL, NULL, &f, &err), 0);
    struct rig r;
    int rc = rig_create(&r,
                        "file: " SMALL "\nrate: 2\nstart: 0.5\nvelocities: central\n"
                        "joints: {Hips: hips, Head_End: {name: top, kind: head}}\n",
                        "t.yaml", &err);
    if (rc) fail_msg("%s", err.msg);
    r.frame.scale = 2.0; /* the adapter's frame: wire units x 2 */
    int64_t t_before = xg_clock_mono_ns();
    assert_int_equal(xg_bvh_ops.start(&r.a), 0);
    r.started = true;
    assert_true(counter(&r, "frame", NULL) == 15); /* 0.5 s at 30 fps */
    run_until(&r, past_start_frame, "a frame after the start frame");
    int64_t t_after = xg_clock_mono_ns();
    long k = (long)counter(&r, "frame", NULL);
    assert_true(k > 15 && k < 59);
    const struct xg_entity *hips = xg_table_find(r.table, "take/hips");
    const struct xg_entity *top = xg_table_find(r.table, "take/top");
    assert_non_null(hips);
    assert_non_null(top);
    assert_int_equal(top->kind, XG_KIND_HEAD);
    /* capture times: t0 + n × ft / 2, n = frames since the start frame */
    const int64_t step = (int64_t)llround(f.frame_time / 2 * 1e9);
    const unsigned hn = xg_history_count(&hips->hist);
    assert_true(hn >= 2);
    int64_t t0 = hips->last.capture_ns - (int64_t)(k - 15) * step;
    assert_true(t0 >= t_before - 1000 && t0 <= t_after);
    for (unsigned i = 0; i < hn; i++) {
        int64_t t = xg_history_time(&hips->hist, i) - t0;
        double n = (double)t / (double)step;
        assert_true(fabs(n - round(n)) < 1e-3);
    }
    assert_true(hips->last.capture_ns <= t_after);
    /* pose and velocity of frame k */
    struct bvh_fk_work w;
    assert_int_equal(bvh_fk_work_init(&w, &f), 0);
    struct xg_vec3 p[16], v[16], av[16];
    struct xg_quat q[16];
    bvh_fk_motion(&f, k, 15, f.n_frames - 1, CMU_SCALE, &w, p, q, v, av);
    int ih = bvh_find_joint(&f, "Hips"), it = bvh_find_joint(&f, "Head_End");
    struct xg_vec3 d = xg_vec3_sub(hips->last.position, xg_vec3_scale(p[ih], 2.0));
    assert_true(xg_vec3_norm(d) < 1e-12);
    d = xg_vec3_sub(top->last.position, xg_vec3_scale(p[it], 2.0));
    assert_true(xg_vec3_norm(d) < 1e-12);
    assert_true(xg_quat_angle_between(top->last.orientation, q[it]) < 1e-9);
    d = xg_vec3_sub(top->last.velocity, xg_vec3_scale(v[it], 2.0 * 2.0)); /* frame x rate */
    assert_true(xg_vec3_norm(d) < 1e-9);
    d = xg_vec3_sub(top->last.angular_velocity, xg_vec3_scale(av[it], 2.0));
    assert_true(xg_vec3_norm(d) < 1e-9);
    assert_true(top->has_velocity && !top->velocity_estimated);
    bvh_fk_work_free(&w);
    bvh_free(&f);
    rig_free(&r);
}

/* By default (`velocities: causal`, issue 23) the adapter reports poses only: the table estimates
 * the velocities, and they are exactly what a second table computes from the FK poses of the
 * frames played so far (the entity's history, mapped back to frames by capture time) and of no
 * later frame: playback stops in the middle of the take, where the next frame exists. */
static void test_causal_default(void **state)
{
    (void)state;
    struct bvh_file f;
    struct xg_error err = {0};
    assert_int_equal(bvh_load(SMALL, NULL, &f, &err), 0);
    struct rig r;
    int rc = rig_create(&r, "file: " SMALL "\nrate: 4\nloop: false\njoints: [Hips, LeftHand]\n",
                        "t.yaml", &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(xg_bvh_ops.start(&r.a), 0);
    r.started = true;
    run_for(&r, 150); /* about 18 of the 60 frames at 4 x 30 fps */
    long k = (long)counter(&r, "frame", NULL);
    assert_true(k >= 3 && k < f.n_frames - 1);
    const int64_t step = (int64_t)llround(f.frame_time / 4 * 1e9);
    struct xg_vec3 p[16];
    struct xg_quat q[16];
    const char *names[2] = {"Hips", "LeftHand"};
    for (int n = 0; n < 2; n++) {
        char full[64];
        snprintf(full, sizeof full, "take/%s", names[n]);
        const struct xg_entity *e = xg_table_find(r.table, full);
        assert_non_null(e);
        assert_int_equal(e->last.flags & (XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY), 0);
        assert_true(e->velocity_estimated && e->angular_velocity_estimated);
        const unsigned hn = xg_history_count(&e->hist);
        assert_true(hn >= 3);
        /* the reference: FK of the history's frames, pushed as poses */
        struct xg_table *ref = xg_table_new(NULL);
        assert_non_null(ref);
        assert_int_equal(xg_table_set_adapter_name(ref, 0, "ref"), 0);
        int j = bvh_find_joint(&f, names[n]);
        const int64_t newest = e->last.capture_ns;
        uint32_t id = 0;
        for (unsigned i = hn; i-- > 0;) { /* oldest first */
            const struct xg_hist hv = xg_history_at(&e->hist, i), *h = &hv;
            long fr = k - (long)llround((double)(newest - h->t_ns) / (double)step);
            assert_true(fr >= 0 && fr <= k);
            bvh_fk(&f, bvh_frame(&f, fr), CMU_SCALE, p, q);
            struct xg_sample smp = {.capture_ns = h->t_ns,
                                    .receive_ns = h->t_ns,
                                    .flags = XG_SAMPLE_POSE,
                                    .position = p[j],
                                    .orientation = q[j]};
            struct xg_entity_key key = {.source = names[n]};
            assert_int_equal(xg_table_update_origin(ref, 0, &key, &smp, &id), 0);
        }
        const struct xg_entity *want = xg_table_get(ref, id);
        assert_true(xg_vec3_norm(xg_vec3_sub(e->last.position, want->last.position)) < 1e-12);
        assert_true(xg_vec3_norm(xg_vec3_sub(e->velocity, want->velocity)) < 1e-9);
        /* The reference saw the history only: exact when the history holds every sample
         * played (about 18 in 150 ms). A loaded machine can run longer: then the angular
         * velocity fit, kept as running sums since the first sample, matches the fit from
         * the history within 0.2 % (docs/prediction.md, incremental estimation), and how far it
         * is extrapolated (core/predict/predict_rot.c) depends on samples the reference never saw.
         */
        struct xg_vec3 fit = {e->rot.pred[0], e->rot.pred[1], e->rot.pred[2]},
                       want_fit = {want->rot.pred[0], want->rot.pred[1], want->rot.pred[2]};
        const bool all = e->samples == xg_history_count(&e->hist);
        assert_true(xg_vec3_norm(xg_vec3_sub(fit, want_fit)) <
                    1e-9 + (all ? 0 : 2e-3 * xg_vec3_norm(want_fit)));
        if (all) {
            assert_true(xg_vec3_norm(xg_vec3_sub(e->angular_velocity, want->angular_velocity)) <
                        1e-9);
            assert_int_equal(e->rot_damped, want->rot_damped);
        }
        xg_table_free(ref);
    }
    bvh_free(&f);
    rig_free(&r);
}

/* Play once from the last few frames: stops at the last frame in state "done". Looping: the
 * loop counter advances and frames restart at `start`. */
static void test_once_and_loop(void **state)
{
    (void)state;
    struct rig r;
    struct xg_error err = {0};
    int rc = rig_create(&r, "file: " SMALL "\nloop: false\nstart: 55f\nrate: 4\n", "t.yaml", &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(xg_bvh_ops.start(&r.a), 0);
    r.started = true;
    run_until(&r, finished, "state done"); /* 5 frames at 120 Hz = 42 ms */
    const char *st;
    assert_true(counter(&r, "frame", &st) == 59);
    assert_string_equal(st, "done");
    assert_true(counter(&r, "loops", NULL) == 0);
    double played = counter(&r, "frames_played", NULL) + counter(&r, "frames_skipped", NULL);
    assert_true(played == 5);
    uint64_t n = r.a.samples_in;
    /* nothing after the end: no event is left on the reactor (dispatch returns 1 at once) */
    assert_int_equal(event_base_dispatch(r.base), 1);
    assert_int_equal(r.a.samples_in, n);
    rig_free(&r);

    rc = rig_create(&r, "file: " SMALL "\nstart: 50f\nrate: 10\njoints: [Hips]\n", "t.yaml", &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(xg_bvh_ops.start(&r.a), 0);
    r.started = true;
    run_until(&r, two_loops, "two loops"); /* 10 frames per loop at 300 Hz: 33 ms each */
    assert_true(counter(&r, "loops", &st) >= 2);
    assert_string_equal(st, "playing");
    double k = counter(&r, "frame", NULL);
    assert_true(k >= 50 && k <= 59);
    assert_int_equal(r.a.drops, 0); /* capture times never go backwards across loops */
    assert_int_equal(xg_table_count(r.table), 1);
    /* causal velocities: the history starts again with each loop (nothing is estimated across
     * the jump back to frame 50), so it holds at most this loop's frames */
    const struct xg_entity *e = xg_table_find(r.table, "take/Hips");
    assert_non_null(e);
    assert_true(xg_history_count(&e->hist) >= 1 &&
                xg_history_count(&e->hist) <= (unsigned)(k - 50 + 1));
    rig_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_relative_path_and_default_joints),
        cmocka_unit_test(test_timestamps_rate_and_frame),
        cmocka_unit_test(test_causal_default),
        cmocka_unit_test(test_once_and_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
