/* `bvh` adapter: replays a BVH motion-capture take in real time as joint entities (issue 7).
 *
 * Config keys (besides name, type, frame, rename):
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
 * estimates velocities from the frames played so far (core/predict_est.h), exactly as for a live
 * source that sends poses only, so that a replay predicts no better than the live source it
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
#include <strings.h>

#include <fnmatch.h>

#include "core/transport.h"
#include "adapters/bvh/bvh_fk.h"
#include "adapters/bvh/bvh_parser.h"
#include "core/adapter.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/path.h"
#include "mappings/frame.h"

#define BVH_CMU_SCALE (0.0254 / 0.45)

struct bvh_sel {
    int joint;                 /* index in the file */
    char source[BVH_NAME_MAX]; /* entity source name */
    enum xg_kind kind;
    uint32_t id;    /* cached table id, 0 = unknown */
    int parent_sel; /* index in sel[] of the nearest selected ancestor joint, -1 = none */
    uint32_t linked_id, linked_parent; /* the ids xg_table_set_parent() was last called with */
};

struct bvh_state {
    char path[1024];
    struct bvh_file f;
    struct bvh_sel *sel;
    int n_sel;
    double scale, rate;
    bool loop;
    bool central; /* velocities: central (else causal: poses only) */
    long start;   /* first frame of each loop */
    /* playback */
    struct event *timer;
    int64_t t0_ns;  /* gateway time of frame `start` in the first loop */
    int64_t played; /* frames since t0 of the last emitted frame (-1: none) */
    long frame;     /* last emitted frame index */
    uint64_t loops, skipped, emitted;
    bool done;
    struct bvh_fk_work work;
    struct xg_vec3 *pos, *vel, *angvel;
    struct xg_quat *rot;
};

static enum xg_kind guess_kind(const char *name)
{
    static const char *const heads[] = {"head"};
    static const char *const left[] = {"lefthand", "left_hand", "lhand", "l_hand", "hand_l"};
    static const char *const right[] = {"righthand", "right_hand", "rhand", "r_hand", "hand_r"};
    for (size_t i = 0; i < sizeof heads / sizeof *heads; i++)
        if (strcasecmp(name, heads[i]) == 0) return XG_KIND_HEAD;
    for (size_t i = 0; i < sizeof left / sizeof *left; i++)
        if (strcasecmp(name, left[i]) == 0) return XG_KIND_LEFT_HAND;
    for (size_t i = 0; i < sizeof right / sizeof *right; i++)
        if (strcasecmp(name, right[i]) == 0) return XG_KIND_RIGHT_HAND;
    return XG_KIND_JOINT;
}

static int add_sel(struct bvh_state *s, int joint, const char *source, enum xg_kind kind,
                   const struct xg_conf *at, struct xg_error *err)
{
    for (int i = 0; i < s->n_sel; i++) {
        if (s->sel[i].joint == joint) return 0; /* globs may overlap */
        if (strcmp(s->sel[i].source, source) == 0)
            return xg_conf_error(err, at, -EINVAL, "joints: entity name '%s' used twice", source);
    }
    struct bvh_sel *n = &s->sel[s->n_sel++];
    n->joint = joint;
    snprintf(n->source, sizeof n->source, "%s", source);
    n->kind = kind;
    n->id = 0;
    return 0;
}

/* Each selected joint's parent entity: its nearest ancestor in the file that is selected too
 * (joints left out of `joints:` are skipped over, so bones join the joints that are played). */
static void link_parents(struct bvh_state *s)
{
    for (int i = 0; i < s->n_sel; i++) {
        s->sel[i].parent_sel = -1;
        for (int j = s->f.joints[s->sel[i].joint].parent; j >= 0 && s->sel[i].parent_sel < 0;
             j = s->f.joints[j].parent)
            for (int k = 0; k < s->n_sel; k++)
                if (s->sel[k].joint == j) s->sel[i].parent_sel = k;
    }
}

static int unknown_joint(const struct bvh_state *s, const struct xg_conf *at, const char *what,
                         struct xg_error *err)
{
    char list[200];
    size_t n = 0;
    list[0] = '\0';
    for (int i = 0; i < s->f.n_joints && n < sizeof list - 1; i++) {
        int w = snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", s->f.joints[i].name);
        if (w < 0) break;
        n += (size_t)w;
    }
    if (n >= sizeof list - 1) memcpy(list + sizeof list - 5, "...", 4);
    return xg_conf_error(err, at, -EINVAL, "joints: no joint matches '%s' in %s (joints: %s)", what,
                         s->path, list);
}

static int read_joints(struct bvh_state *s, const struct xg_conf *node, struct xg_error *err)
{
    s->sel = calloc((size_t)s->f.n_joints + 1, sizeof *s->sel);
    if (!s->sel) return -ENOMEM;
    int rc;
    if (!node || (node->type == XG_CONF_SCALAR && node->value && !strcmp(node->value, "all"))) {
        for (int i = 0; i < s->f.n_joints; i++)
            if (!s->f.joints[i].end_site &&
                (rc = add_sel(s, i, s->f.joints[i].name, guess_kind(s->f.joints[i].name), node,
                              err)))
                return rc;
        return 0;
    }
    if (node->type == XG_CONF_SEQ) {
        for (size_t k = 0; k < node->n_items; k++) {
            const struct xg_conf *it = node->items[k];
            if ((rc = xg_conf_expect(it, XG_CONF_SCALAR, "joints: a joint name or glob", err)))
                return rc;
            bool any = false;
            for (int i = 0; i < s->f.n_joints; i++) {
                if (fnmatch(it->value, s->f.joints[i].name, 0) != 0) continue;
                any = true;
                if ((rc = add_sel(s, i, s->f.joints[i].name, guess_kind(s->f.joints[i].name), it,
                                  err)))
                    return rc;
            }
            if (!any) return unknown_joint(s, it, it->value, err);
        }
        return 0;
    }
    if (node->type == XG_CONF_MAP) {
        for (size_t k = 0; k < node->n_items; k++) {
            struct xg_conf *it = node->items[k];
            it->used = true;
            int j = bvh_find_joint(&s->f, it->key);
            if (j < 0) {
                struct xg_conf at = *it; /* point at the key, not its value */
                at.line = it->key_line;
                at.column = it->key_column;
                return unknown_joint(s, &at, it->key, err);
            }
            const char *source = it->key;
            enum xg_kind kind;
            if (it->type == XG_CONF_SCALAR) {
                source = it->value;
                kind = guess_kind(source);
                if (xg_kind_parse(source, &kind) != 0) kind = guess_kind(source);
            } else if (it->type == XG_CONF_MAP) {
                const char *kname;
                if ((rc = xg_conf_string(it, "name", it->key, &source, err)) ||
                    (rc = xg_conf_string(it, "kind", NULL, &kname, err)))
                    return rc;
                kind = guess_kind(source);
                if (kname && xg_kind_parse(kname, &kind) != 0)
                    return xg_conf_error(err, xg_conf_get(it, "kind"), -EINVAL,
                                         "joints: unknown kind '%s' for joint '%s'", kname,
                                         it->key);
            } else {
                return xg_conf_error(err, it, -EINVAL,
                                     "joints: '%s' must be a name or {name:, kind:}", it->key);
            }
            if (!source || !*source || strlen(source) >= BVH_NAME_MAX)
                return xg_conf_error(err, it, -EINVAL,
                                     "joints: entity name for '%s' must be 1..%d characters",
                                     it->key, BVH_NAME_MAX - 1);
            if ((rc = add_sel(s, j, source, kind, it, err))) return rc;
        }
        return 0;
    }
    return xg_conf_error(err, node, -EINVAL,
                         "joints: expected 'all', a list of joint names or a map, got '%s'",
                         node->value ? node->value : "?");
}

/* `start`: seconds ("1.5", "1.5s") or frames ("12f"). */
static int read_start(struct bvh_state *s, const struct xg_conf *conf, struct xg_error *err)
{
    const struct xg_conf *n = xg_conf_get(conf, "start");
    s->start = 0;
    if (!n) return 0;
    if (n->type != XG_CONF_SCALAR || !n->value)
        return xg_conf_error(err, n, -EINVAL, "start: expected seconds (1.5) or frames (12f)");
    const char *v = n->value;
    char *end;
    double x = strtod(v, &end);
    bool frames = false;
    if (end != v && (!strcmp(end, "f") || !strcmp(end, " f") || !strcmp(end, "frames") ||
                     !strcmp(end, " frames")))
        frames = true;
    else if (end != v && (!strcmp(end, "s") || !strcmp(end, " s") || !*end))
        frames = false;
    else
        return xg_conf_error(err, n, -EINVAL,
                             "start: '%s' is neither seconds (1.5, 1.5s) nor frames (12f)", v);
    if (!isfinite(x) || x < 0 || (frames && x != floor(x)))
        return xg_conf_error(err, n, -EINVAL, "start: '%s' must be a time >= 0 or whole frames", v);
    double fr = frames ? x : floor(x / s->f.frame_time + 1e-6);
    if (fr >= (double)s->f.n_frames)
        return xg_conf_error(err, n, -EINVAL,
                             "start: '%s' is past the end of %s (%ld frames, %g s)", v, s->path,
                             s->f.n_frames, (double)s->f.n_frames * s->f.frame_time);
    s->start = (long)fr;
    return 0;
}

static int read_scale(struct bvh_state *s, const struct xg_conf *conf, struct xg_error *err)
{
    const char *units;
    int rc;
    if ((rc = xg_conf_string(conf, "units", "cmu", &units, err))) return rc;
    static const struct {
        const char *name;
        double m;
    } table[] = {{"m", 1.0},       {"cm", 0.01},       {"mm", 0.001},         {"in", 0.0254},
                 {"inch", 0.0254}, {"inches", 0.0254}, {"cmu", BVH_CMU_SCALE}};
    double def = -1;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (!strcasecmp(units, table[i].name)) def = table[i].m;
    if (def < 0)
        return xg_conf_error(err, xg_conf_get(conf, "units"), -EINVAL,
                             "units: '%s' is not one of m, cm, mm, in, cmu", units);
    return xg_conf_double(conf, "scale", def, 1e-9, 1e9, &s->scale, err);
}

static int bvh_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct bvh_state *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    a->priv = s;
    s->played = -1;
    const char *file;
    int rc;
    if ((rc = xg_conf_string(conf, "file", NULL, &file, err))) return rc;
    if (!file || !*file)
        return xg_conf_error(err, conf, -EINVAL, "bvh adapter '%s': 'file' is required", a->name);
    const struct xg_conf *fnode = xg_conf_get(conf, "file");
    if (xg_conf_path(fnode, file, s->path, sizeof s->path))
        return xg_conf_error(err, fnode, -ENAMETOOLONG, "file: '%s': the path is too long", file);
    const char *vel;
    if ((rc = read_scale(s, conf, err)) ||
        (rc = xg_conf_double(conf, "rate", 1.0, 1e-3, 1000.0, &s->rate, err)) ||
        (rc = xg_conf_bool(conf, "loop", true, &s->loop, err)) ||
        (rc = xg_conf_string(conf, "velocities", "causal", &vel, err)))
        return rc;
    if (strcmp(vel, "causal") && strcmp(vel, "central"))
        return xg_conf_error(err, xg_conf_get(conf, "velocities"), -EINVAL,
                             "velocities: '%s' is not one of causal, central", vel);
    s->central = !strcmp(vel, "central");
    struct xg_error perr = {0};
    if ((rc = bvh_load(s->path, NULL, &s->f, &perr)))
        return xg_conf_error(err, fnode, rc, "%s", perr.msg);
    if (s->f.n_frames < 1)
        return xg_conf_error(err, fnode, -EINVAL, "%s: the file has no frames", s->path);
    if ((rc = read_start(s, conf, err)) || (rc = read_joints(s, xg_conf_get(conf, "joints"), err)))
        return rc;
    link_parents(s);
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
    struct timeval tv = {(time_t)(delay / 1000000000), (suseconds_t)((delay % 1000000000) / 1000)};
    evtimer_add(s->timer, &tv);
}

static void bvh_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
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
        event_del(s->timer);
        XG_INFO(a->name, "%s: finished at frame %ld of %ld (no loop)", s->path, k + 1,
                s->f.n_frames);
        return;
    }
    schedule_next(s);
}

static int bvh_start(struct xg_adapter *a)
{
    struct bvh_state *s = a->priv;
    s->timer = evtimer_new(a->base, bvh_tick, a);
    if (!s->timer) return -ENOMEM;
    s->t0_ns = xg_clock_mono_ns();
    XG_INFO(a->name,
            "replaying %s: %d joints as entities (of %d), %ld frames at %.2f Hz x %.3g, scale "
            "%.6g m/unit, start frame %ld, %s, %s velocities",
            s->path, s->n_sel, s->f.n_joints, s->f.n_frames, 1.0 / s->f.frame_time, s->rate,
            s->scale, s->start, s->loop ? "looping" : "once", s->central ? "central" : "causal");
    bvh_tick(-1, 0, a); /* the first frame now */
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
        event_free(s->timer);
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
