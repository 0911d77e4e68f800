/* `bvh` adapter: replays a BVH motion-capture take in real time as joint entities (issue 7).
 *
 * Config keys (besides name, type, frame, rename; read and checked in bvh_conf.c):
 *   file    path of the .bvh file (required); relative paths are relative to the directory of
 *           the configuration file
 *   joints  which joints become entities: absent or "all" = every ROOT/JOINT (End Sites left
 *           out); a list of globs on joint names (End Sites are "<parent>_End"); or a map
 *           {JointName: source-name} / {JointName: {name: source-name, kind: kind}}
 *   units   m | cm | mm | in | cmu (default cmu = inches / 0.45 = 0.056444 m, the CMU
 *           MotionBuilder-friendly BVH conversions); `scale` (m per file unit) overrides it
 *   scale   metres per file unit (> 0)
 *   rate    playback factor (default 1.0; 2 = twice as fast, velocities scaled alike)
 *   loop    replay forever (default true); otherwise the adapter stops at the last frame ("done")
 *   start   first frame: seconds (1.5, "1.5s") or a frame number ("12f"); loops restart there
 *   velocities  causal (default) | central (issue 23)
 *
 * Each played frame becomes one sample per selected joint: world position and orientation by
 * forward kinematics (bvh_fk.h). With `velocities: causal` that is all: the entity table
 * estimates velocities from the frames played so far (core/predict/predict_est.h), exactly as for a
 * live source that sends poses only, so that a replay predicts no better than the live source it
 * stands in for. With `velocities: central` (offline analysis) each sample also carries the
 * velocity and angular velocity by central differences over the neighbouring frames, i.e. it
 * uses the next frame, which a live source does not have. When a loop starts again the table
 * forgets the entities' history (xg_table_forget_history), so that no velocity is estimated
 * across the jump back to the start frame. Capture time = playback start + (frames
 * played × frame time) / rate on the gateway clock. A timer at the frame rate × rate drives
 * playback; if the reactor falls behind, frames are skipped (counted), never queued. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/transport.h"
#include "adapters/bvh/bvh_fk.h"
#include "adapters/bvh/bvh_parser.h"
#include "adapters/bvh/bvh_priv.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/timer.h"
#include "mappings/frame.h"

static int bvh_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct bvh_state *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    a->priv = s;
    s->played = -1;
    int rc;
    if ((rc = bvh_read_conf(s, a->name, conf, err))) return rc;
    int n = s->f.n_joints;
    s->pos = calloc((size_t)n, sizeof *s->pos);
    s->vel = calloc((size_t)n, sizeof *s->vel);
    s->angvel = calloc((size_t)n, sizeof *s->angvel);
    s->rot = calloc((size_t)n, sizeof *s->rot);
    if (!s->pos || !s->vel || !s->angvel || !s->rot || bvh_fk_work_init(&s->work, &s->f))
        return -ENOMEM;
    return 0;
}

static void emit_frame(struct xg_adapter *a, long k, int64_t capture_ns, int64_t now)
{
    struct bvh_state *s = a->priv;
    /* causal: poses only (bvh_fk_motion reads no other frame without vel / angvel) */
    bvh_fk_motion(&s->f, k, s->start, s->f.n_frames - 1, s->scale, &s->work, s->pos, s->rot,
                  s->central ? s->vel : NULL, s->central ? s->angvel : NULL);
    for (int i = 0; i < s->n_sel; i++) {
        struct bvh_sel *sel = &s->sel[i];
        int j = sel->joint;
        struct xg_sample smp = {
            .capture_ns = capture_ns,
            .receive_ns = now,
            .flags = XG_SAMPLE_POSE,
            .position = s->pos[j],
            .orientation = s->rot[j],
        };
        if (s->central) {
            smp.flags |= XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY;
            smp.velocity = xg_vec3_scale(s->vel[j], s->rate);
            smp.angular_velocity = xg_vec3_scale(s->angvel[j], s->rate);
        }
        xg_frame_sample_in(a->frame, &smp);
        int rc = -ENOENT;
        if (sel->id) rc = xg_table_push(a->table, sel->id, &smp);
        if (rc == -ENOENT) {
            struct xg_entity_key key = {.source = sel->source, .kind = sel->kind};
            rc = xg_table_update(a->table, a, &key, &smp, &sel->id);
        }
        if (rc == 0)
            a->samples_in++;
        else
            a->drops++;
    }
    /* the hierarchy, once per (re)created entity: ids change when an entity expired */
    for (int i = 0; i < s->n_sel; i++) {
        struct bvh_sel *sel = &s->sel[i];
        uint32_t pid = sel->parent_sel >= 0 ? s->sel[sel->parent_sel].id : 0;
        if (!sel->id || !pid || (sel->linked_id == sel->id && sel->linked_parent == pid)) continue;
        if (xg_table_set_parent(a->table, sel->id, pid) == 0) {
            sel->linked_id = sel->id;
            sel->linked_parent = pid;
        }
    }
    s->frame = k;
    s->emitted++;
}

/* Arm the one-shot timer for the next frame's due time, so that frames go out when they are
 * due (a fixed-period timer drifts against the frame times and sends each frame up to one
 * period late, which every sink then has to predict across). */
static void schedule_next(struct bvh_state *s)
{
    int64_t due =
        s->t0_ns + (int64_t)llround((double)(s->played + 1) * s->f.frame_time / s->rate * 1e9);
    int64_t delay = due - xg_clock_mono_ns();
    if (delay < 0) delay = 0;
    xg_timer_once(s->timer, (uint64_t)delay / 1000);
}

static void bvh_tick(void *arg)
{
    struct xg_adapter *a = arg;
    struct bvh_state *s = a->priv;
    if (s->done) return;
    int64_t now = xg_clock_mono_ns();
    const double ft = s->f.frame_time;
    const long span = s->f.n_frames - s->start; /* frames per loop */
    /* frames played since t0 (media time × rate) */
    double media = (double)(now - s->t0_ns) * 1e-9 * s->rate;
    int64_t played = (int64_t)floor(media / ft + 1e-9);
    if (played <= s->played) { /* woke up early: wait for the frame */
        schedule_next(s);
        return;
    }
    if (!s->loop && played >= span - 1) {
        played = span - 1;
        s->done = true;
    }
    if (s->played >= 0 && played > s->played + 1) s->skipped += (uint64_t)(played - s->played - 1);
    s->played = played;
    uint64_t loops = (uint64_t)(played / span);
    if (loops != s->loops && !s->central) /* back at the start: estimate nothing across it */
        for (int i = 0; i < s->n_sel; i++)
            if (s->sel[i].id) xg_table_forget_history(a->table, s->sel[i].id);
    s->loops = loops;
    long k = s->start + (long)(played % span);
    int64_t capture = s->t0_ns + (int64_t)llround((double)played * ft / s->rate * 1e9);
    if (capture > now) capture = now;
    emit_frame(a, k, capture, now);
    if (s->done) {
        xg_timer_stop(s->timer);
        /* 0-based, as the `frame` counter and `start`/`end` count (docs/adapters/bvh.md) */
        XG_INFO(a->name, "%s: finished at frame %ld, the last of frames 0-%ld (no loop)", s->path,
                k, s->f.n_frames - 1);
        return;
    }
    schedule_next(s);
}

static int bvh_start(struct xg_adapter *a)
{
    struct bvh_state *s = a->priv;
    s->timer = xg_timer_new(a->base, bvh_tick, a);
    if (!s->timer) return -ENOMEM;
    s->t0_ns = xg_clock_mono_ns();
    XG_INFO(a->name,
            "replaying %s: %d joints as entities (of %d), %ld frames at %.2f Hz x %.3g, scale "
            "%.6g m/unit, start frame %ld, %s, %s velocities",
            s->path, s->n_sel, s->f.n_joints, s->f.n_frames, 1.0 / s->f.frame_time, s->rate,
            s->scale, s->start, s->loop ? "looping" : "once", s->central ? "central" : "causal");
    bvh_tick(a); /* the first frame now */
    return 0;
}

static void bvh_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct bvh_state *s = a->priv;
    st->state = s->done ? "done" : s->timer ? "playing" : "idle";
    size_t len = strlen(s->path); /* long paths: keep the end, which names the file */
    if (len < sizeof st->peer)
        memcpy(st->peer, s->path, len + 1);
    else
        snprintf(st->peer, sizeof st->peer, "...%s", s->path + len - (sizeof st->peer - 4));
    xg_status_gauge(st, "frame", (double)s->frame);
    xg_status_gauge(st, "frames", (double)s->f.n_frames);
    xg_status_counter(st, "loops", (double)s->loops);
    xg_status_gauge(st, "joints", (double)s->n_sel);
    xg_status_counter(st, "frames_played", (double)s->emitted);
    xg_status_counter(st, "frames_skipped", (double)s->skipped);
    xg_status_gauge(st, "frame_rate_hz", 1.0 / s->f.frame_time);
}

static void bvh_stop(struct xg_adapter *a)
{
    struct bvh_state *s = a->priv;
    if (s && s->timer) {
        xg_timer_free(s->timer);
        s->timer = NULL;
    }
}

static void bvh_destroy(struct xg_adapter *a)
{
    struct bvh_state *s = a->priv;
    if (!s) return;
    bvh_stop(a);
    bvh_free(&s->f);
    bvh_fk_work_free(&s->work);
    free(s->sel);
    free(s->pos);
    free(s->vel);
    free(s->angvel);
    free(s->rot);
    free(s);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_bvh_ops = {
    .type = "bvh",
    .is_sink = false,
    .create = bvh_create,
    .start = bvh_start,
    .status = bvh_status,
    .stop = bvh_stop,
    .destroy = bvh_destroy,
};
