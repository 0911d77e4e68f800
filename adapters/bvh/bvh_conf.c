/* bvh adapter, configuration: the keys of a `bvh` adapter read and checked at create time (file,
 * joints, units, scale, rate, loop, start, velocities; see the comment at the top of
 * bvh_adapter.c and docs/adapters/bvh.md). Loads the file, since `joints` and `start` are checked
 * against it. Relative paths resolve against the configuration file's folder (core/conf/path.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <fnmatch.h>

#include "adapters/bvh/bvh_parser.h"
#include "adapters/bvh/bvh_priv.h"
#include "core/conf/conf.h"
#include "core/table/entity.h"
#include "core/util/log.h"
#include "core/conf/path.h"

#define BVH_CMU_SCALE (0.0254 / 0.45)

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

int bvh_read_conf(struct bvh_state *s, const char *name, const struct xg_conf *conf,
                  struct xg_error *err)
{
    int rc;
    const char *file;
    if ((rc = xg_conf_string(conf, "file", NULL, &file, err))) return rc;
    if (!file || !*file)
        return xg_conf_error(err, conf, -EINVAL, "bvh adapter '%s': 'file' is required", name);
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
    if (s->f.extra_frames > 0) /* once per configuration load: one line */
        XG_WARN("bvh",
                "%s: line %d: %ld frame row(s) after the %ld the header declares ('Frames: %ld'); "
                "playing the declared %ld, ignoring the rest",
                s->path, s->f.extra_line, s->f.extra_frames, s->f.n_frames, s->f.n_frames,
                s->f.n_frames);
    if (s->f.n_frames < 1)
        return xg_conf_error(err, fnode, -EINVAL, "%s: the file has no frames", s->path);
    if ((rc = read_start(s, conf, err)) || (rc = read_joints(s, xg_conf_get(conf, "joints"), err)))
        return rc;
    link_parents(s);
    return 0;
}
