/* Space calibrations: configuration, collection, solving, applying, state file
 * (gateway/calib.h, docs/calibration.md). */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "gateway/calib_int.h"
#include "gateway/gateway.h"

#define COMPONENT "calibration"
#define RING_CAP 8192
#define RING_MIN_GAP_NS 3000000             /* samples kept at most every 3 ms (8192 ≈ 25 s) */
#define WINDOW_NS INT64_C(20000000000)      /* a solve uses the newest 20 s */
#define DRIFT_WINDOW_NS INT64_C(5000000000) /* a drift check, the newest 5 s */
#define DRIFT_STRIKES 3                     /* checks in a row beyond the thresholds */
#define ACCEPT_M 0.05                       /* a solution with larger RMS residuals is refused */
#define ACCEPT_RAD (3.0 * M_PI / 180)
#define DEG (M_PI / 180)

const char *xg_calib_state_name(enum xg_calib_state s)
{
    static const char *const n[] = {"collecting", "solved", "applied", "drifting"};
    return (unsigned)s < 4 ? n[s] : "collecting";
}

/* ---- configuration ---- */

static bool valid_name(const char *s)
{
    if (!*s || strlen(s) >= 64) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

static int adapter_index(const struct xg_gateway *gw, const char *name)
{
    for (int i = 0; i < gw->n_adapters; i++)
        if (gw->adapters[i] && !strcmp(gw->adapters[i]->a.name, name)) return i;
    return -1;
}

/* the adapter named by an entity name's first component ("mocap/hmd" -> mocap), or -1 */
static int prefix_index(const struct xg_gateway *gw, const char *entity)
{
    char a[64];
    const char *sl = strchr(entity, '/');
    if (!sl || (size_t)(sl - entity) >= sizeof a) return -1;
    snprintf(a, sizeof a, "%.*s", (int)(sl - entity), entity);
    return adapter_index(gw, a);
}

static int entity_key(const struct xg_conf *node, const char *key, char *out, size_t size,
                      struct xg_error *err)
{
    const char *s;
    int rc = xg_conf_string(node, key, NULL, &s, err);
    if (rc) return rc;
    if (!s)
        return xg_conf_error(err, node, -EINVAL, "calibration needs '%s' (an entity name)", key);
    if (!*s || strlen(s) >= size)
        return xg_conf_error(err, xg_conf_get(node, key), -EINVAL,
                             "%s '%s' must be an entity name of 1 to %zu bytes", key, s, size - 1);
    snprintf(out, size, "%s", s);
    return 0;
}

static int load_one(struct xg_gateway *gw, const struct xg_conf *node, struct xg_calib *c,
                    struct xg_error *err)
{
    int rc;
    const char *s;
    if ((rc = xg_conf_expect(node, XG_CONF_MAP, "calibrations item", err))) return rc;
    if ((rc = xg_conf_string(node, "name", NULL, &s, err))) return rc;
    if (!s) return xg_conf_error(err, node, -EINVAL, "calibration needs a 'name'");
    if (!valid_name(s))
        return xg_conf_error(err, xg_conf_get(node, "name"), -EINVAL,
                             "calibration name '%s' must be 1-63 of [A-Za-z0-9_.-]", s);
    snprintf(c->name, sizeof c->name, "%s", s);
    for (int i = 0; gw->calib && i < gw->calib->n; i++)
        if (!strcmp(gw->calib->items[i]->name, c->name))
            return xg_conf_error(err, xg_conf_get(node, "name"), -EINVAL,
                                 "calibration name '%s' is used twice", s);
    if ((rc = entity_key(node, "reference", c->reference, sizeof c->reference, err)) ||
        (rc = entity_key(node, "target", c->target, sizeof c->target, err)))
        return rc;
    if (!strcmp(c->reference, c->target))
        return xg_conf_error(err, xg_conf_get(node, "target"), -EINVAL,
                             "target '%s' is the reference itself: they must be two systems' "
                             "views of one object",
                             c->target);
    char def[64] = "";
    const char *sl = strchr(c->target, '/');
    if (sl && (size_t)(sl - c->target) < sizeof def)
        snprintf(def, sizeof def, "%.*s", (int)(sl - c->target), c->target);
    if ((rc = xg_conf_string(node, "apply_to", def[0] ? def : NULL, &s, err))) return rc;
    const struct xg_conf *at = xg_conf_get(node, "apply_to");
    if (!s || adapter_index(gw, s) < 0)
        return xg_conf_error(err, at ? at : xg_conf_get(node, "target"), -EINVAL,
                             "apply_to '%s' is not an adapter of this configuration (it names the "
                             "adapter whose space is moved; by default the target's first name "
                             "component)",
                             s ? s : "");
    snprintf(c->apply_to, sizeof c->apply_to, "%s", s);
    if (prefix_index(gw, c->reference) == adapter_index(gw, c->apply_to))
        return xg_conf_error(err, at ? at : xg_conf_get(node, "target"), -EINVAL,
                             "apply_to '%s' is the reference's own adapter: the reference space "
                             "stays, the other one is moved",
                             c->apply_to);
    if (gw->calib)
        for (int i = 0; i < gw->calib->n; i++)
            if (!strcmp(gw->calib->items[i]->apply_to, c->apply_to))
                return xg_conf_error(err, at ? at : node, -EINVAL,
                                     "adapter '%s' is already moved by calibration '%s': one "
                                     "calibration per apply_to",
                                     c->apply_to, gw->calib->items[i]->name);
    if ((rc = xg_conf_string(node, "mode", "once", &s, err))) return rc;
    if (strcmp(s, "once") && strcmp(s, "continuous"))
        return xg_conf_error(err, xg_conf_get(node, "mode"), -EINVAL,
                             "mode '%s' must be once or continuous", s);
    c->continuous = !strcmp(s, "continuous");
    double v;
    if ((rc = xg_conf_double(node, "drift_mm", 10, 0.1, 10000, &v, err))) return rc;
    c->drift_m = v * 1e-3;
    if ((rc = xg_conf_double(node, "drift_deg", 1, 0.01, 180, &v, err))) return rc;
    c->drift_rad = v * DEG;
    if ((rc = xg_conf_double(node, "max_offset_ms", 500, 10, 5000, &v, err))) return rc;
    c->max_offset_s = v * 1e-3;
    if ((rc = xg_conf_double(node, "collect_s", 8, 4, 20, &v, err))) return rc;
    c->collect_s = v;
    return xg_conf_check_unused(node, err);
}

static void calib_free(struct xg_calib *c)
{
    if (!c) return;
    free(c->ref.s);
    free(c->tgt.s);
    free(c);
}

static void set_free(struct xg_calib_set *set)
{
    if (!set) return;
    if (set->timer) event_free(set->timer);
    xg_calib_worker_free(set->worker); /* joins: waits for a solve being run (at most one) and
                                          completes the queued writes of the state file */
    free(set->latest);
    for (int i = 0; i < set->n; i++)
        calib_free(set->items[i]);
    free(set->items);
    free(set);
}

int xg_calib_load(struct xg_gateway *gw, const struct xg_conf *node, struct xg_error *err)
{
    if (!gw->calib && !(gw->calib = calloc(1, sizeof *gw->calib)))
        return xg_error_set(err, -ENOMEM, "out of memory");
    struct xg_calib_set *set = gw->calib;
    set->gw = gw;
    struct xg_calib *c = calloc(1, sizeof *c);
    struct xg_calib **items = realloc(set->items, (size_t)(set->n + 1) * sizeof *items);
    if (items) set->items = items;
    if (!c || !items) {
        free(c);
        return xg_error_set(err, -ENOMEM, "out of memory");
    }
    int rc = load_one(gw, node, c, err);
    if (rc) {
        free(c);
        return rc;
    }
    c->apply_index = c->ref_origin = c->tgt_origin = -1;
    c->last_rc = 1;
    c->collecting = true;
    items[set->n++] = c;
    return 0;
}

/* ---- rings ---- */

static int ring_alloc(struct xg_calib_ring *r)
{
    if (r->s) return 0;
    if (!(r->s = malloc(RING_CAP * sizeof *r->s))) return -ENOMEM;
    r->cap = RING_CAP;
    r->head = r->n = 0;
    return 0;
}

static const struct xg_calib_sample *ring_at(const struct xg_calib_ring *r,
                                             size_t k) /* 0 = oldest */
{
    return &r->s[(r->head + r->cap - r->n + k) % r->cap];
}

static void ring_push(struct xg_calib_ring *r, const struct xg_sample *s)
{
    if (!r->s || !(s->flags & XG_SAMPLE_POSITION) || !(s->flags & XG_SAMPLE_ORIENTATION)) return;
    if (r->n && s->capture_ns - ring_at(r, r->n - 1)->t_ns < RING_MIN_GAP_NS) return;
    r->s[r->head] = (struct xg_calib_sample){s->capture_ns, s->position, s->orientation};
    r->head = (r->head + 1) % r->cap;
    if (r->n < r->cap) r->n++;
}

/* a copy of the ring's samples no older than `window` before its newest, in order (malloc'd,
 * *n of them; at most RING_CAP); NULL when empty or on ENOMEM */
static struct xg_calib_sample *ring_snapshot(const struct xg_calib_ring *r, int64_t window,
                                             size_t *n)
{
    *n = 0;
    if (!r->n) return NULL;
    int64_t newest = ring_at(r, r->n - 1)->t_ns;
    size_t k = 0;
    while (k < r->n && ring_at(r, k)->t_ns < newest - window)
        k++;
    struct xg_calib_sample *out = malloc((r->n - k) * sizeof *out);
    if (!out) return NULL;
    for (; k < r->n; k++)
        out[(*n)++] = *ring_at(r, k);
    return out;
}

double xg_calib_ring_span(const struct xg_calib_ring *r)
{
    return r->n < 2 ? 0 : (double)(ring_at(r, r->n - 1)->t_ns - ring_at(r, 0)->t_ns) * 1e-9;
}

void xg_calib_begin(struct xg_calib *c)
{
    c->ref.n = c->ref.head = c->tgt.n = c->tgt.head = 0;
    c->collecting = true;
    c->gen++; /* a solve still in flight belongs to the old collection: its result is late */
    c->last_rc = 1;
    c->last_why[0] = '\0';
    c->drift_strikes = 0;
    if (c->have)
        c->state = c->state == XG_CALIB_DRIFTING ? XG_CALIB_DRIFTING : XG_CALIB_COLLECTING;
    else
        c->state = XG_CALIB_COLLECTING;
}

struct xg_calib *xg_calib_find(struct xg_calib_set *set, const char *name)
{
    for (int i = 0; set && i < set->n; i++)
        if (!strcmp(set->items[i]->name, name)) return set->items[i];
    return NULL;
}

/* ---- the ingest hook ---- */

static bool matches(const struct xg_entity *e, const char *name, uint32_t *id)
{
    uint32_t eid = xg_entity_id(e);
    if (eid == *id) return true;
    if (strcmp(xg_entity_name(e), name)) return false;
    *id = eid;
    return true;
}

static bool filling(const struct xg_calib *c)
{
    return c->collecting || (c->continuous && c->have);
}

static void apply(const struct xg_calib *c, struct xg_sample *s)
{
    const struct xg_calib_xf *y = &c->res.y;
    if (s->flags & XG_SAMPLE_POSITION) s->position = xg_calib_xf_point(y, s->position);
    if (s->flags & XG_SAMPLE_ORIENTATION)
        s->orientation = xg_quat_normalize(xg_quat_mul(y->q, s->orientation));
    if (s->flags & XG_SAMPLE_VELOCITY) s->velocity = xg_quat_rotate(y->q, s->velocity);
    if (s->flags & XG_SAMPLE_ANGULAR_VELOCITY)
        s->angular_velocity = xg_quat_rotate(y->q, s->angular_velocity);
    if (!s->receive_ns) s->receive_ns = s->capture_ns;
    s->capture_ns -= (int64_t)llround(c->res.time_offset_s * 1e9);
}

static void hook(void *user, const struct xg_entity *e, struct xg_sample *s)
{
    struct xg_calib_set *set = user;
    int origin = xg_entity_origin(e);
    for (int i = 0; i < set->n; i++) { /* the target as its system saw it */
        struct xg_calib *c = set->items[i];
        if (filling(c) && (c->tgt_origin < 0 || c->tgt_origin == origin) &&
            matches(e, c->target, &c->tgt_id)) {
            ring_push(&c->tgt, s);
            c->pushed++;
        }
    }
    for (int i = 0; i < set->n; i++) {
        struct xg_calib *c = set->items[i];
        if (c->have && c->apply_index == origin) apply(c, s);
    }
    for (int i = 0; i < set->n; i++) { /* the reference as the table gets it */
        struct xg_calib *c = set->items[i];
        if (filling(c) && (c->ref_origin < 0 || c->ref_origin == origin) &&
            matches(e, c->reference, &c->ref_id)) {
            ring_push(&c->ref, s);
            c->pushed++;
        }
    }
}

/* the adapter indices of every calibration, and the hook's origins */
static void resolve(struct xg_calib_set *set)
{
    struct xg_gateway *gw = set->gw;
    uint64_t mask = 0;
    for (int i = 0; i < set->n; i++) {
        struct xg_calib *c = set->items[i];
        c->apply_index = adapter_index(gw, c->apply_to);
        c->ref_origin = prefix_index(gw, c->reference);
        c->tgt_origin = prefix_index(gw, c->target);
        if (c->ref_origin < 0 || c->tgt_origin < 0) mask = ~UINT64_C(0);
        int idx[3] = {c->apply_index, c->ref_origin, c->tgt_origin};
        for (int k = 0; k < 3; k++)
            if (idx[k] >= 0) mask |= UINT64_C(1) << idx[k];
    }
    xg_table_set_ingest_hook(gw->table, set->n ? mask : 0, set->n ? hook : NULL, set);
}

/* ---- state file ---- */

static json_t *xf_json(const struct xg_calib_xf *xf)
{
    return json_pack("{s:[fff],s:[ffff]}", "position", xf->t.x, xf->t.y, xf->t.z, "orientation",
                     xf->q.x, xf->q.y, xf->q.z, xf->q.w);
}

static int xf_from_json(const json_t *j, struct xg_calib_xf *xf)
{
    double p[3], q[4];
    if (json_unpack((json_t *)j, "{s:[FFF],s:[FFFF]}", "position", &p[0], &p[1], &p[2],
                    "orientation", &q[0], &q[1], &q[2], &q[3]))
        return -EINVAL;
    xf->t = (struct xg_vec3){p[0], p[1], p[2]};
    xf->q = (struct xg_quat){q[0], q[1], q[2], q[3]};
    double n = sqrt(xg_quat_dot(xf->q, xf->q));
    if (!xg_vec3_finite(xf->t) || !(fabs(n - 1) < 1e-3) || fabs(p[0]) > 1e5 || fabs(p[1]) > 1e5 ||
        fabs(p[2]) > 1e5)
        return -EINVAL;
    xf->q = xg_quat_normalize(xf->q);
    return 0;
}

static void deliver(void *user, const struct xg_calib_job *j);

/* a write's outcome, on the loop */
static void written(struct xg_calib_set *set, int rc, const char *path)
{
    if (rc) {
        set->write_failures++;
        XG_WARN_PEER(&set->write_lim, COMPONENT,
                     "cannot write the state file '%s' (%s): the result holds until the "
                     "gateway stops",
                     path, strerror(-rc));
    } else {
        set->writes++;
        XG_INFO(COMPONENT, "results written to %s", path);
    }
}

/* serialise every result in force on the loop (cheap) and hand the write (temporary file, fsync,
 * rename) to the worker, in order after the writes before it */
static void save(struct xg_calib_set *set)
{
    if (!set->state_file[0]) return;
    json_t *all = json_object(), *root = json_pack("{s:i,s:o}", "version", 1, "calibrations", all);
    if (!root) return;
    for (int i = 0; i < set->n; i++) {
        struct xg_calib *c = set->items[i];
        if (!c->have) continue;
        json_object_set_new(
            all, c->name,
            json_pack("{s:s,s:s,s:s,s:o,s:o,s:f,s:f,s:f,s:I,s:f}", "reference", c->reference,
                      "target", c->target, "apply_to", c->apply_to, "transform", xf_json(&c->res.y),
                      "object_offset", xf_json(&c->res.x), "time_offset_ms",
                      c->res.time_offset_s * 1e3, "residual_mm", c->res.residual_m * 1e3,
                      "residual_deg", c->res.residual_rad / DEG, "pairs", (json_int_t)c->res.pairs,
                      "solved_unix", c->solved_unix));
    }
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    json_decref(root);
    char *copy = text ? strdup(text) : NULL;
    if (!text || !copy) {
        free(text);
        free(copy);
        written(set, -ENOMEM, set->state_file);
        return;
    }
    size_t len = strlen(text);
    if (!set->worker && !(set->worker = xg_calib_worker_new(set->gw->base, deliver, set))) {
        free(copy); /* no thread: written on the loop, as a last resort */
        written(set, xg_calib_write_file(set->state_file, text, len), set->state_file);
        free(text);
        return;
    }
    if (!xg_calib_worker_write(set->worker, set->state_file, text, len)) {
        free(copy);
        written(set, -ENOMEM, set->state_file);
        return;
    }
    free(set->latest); /* what the file holds once the queued writes are done */
    set->latest = copy;
    set->writes_queued++;
}

static void load_state(struct xg_calib_set *set)
{
    if (!set->state_file[0] || (!set->latest && access(set->state_file, F_OK))) return;
    json_error_t je; /* a write still queued: the file is about to hold `latest` */
    json_t *root =
        set->latest ? json_loads(set->latest, 0, &je) : json_load_file(set->state_file, 0, &je);
    json_t *all = root ? json_object_get(root, "calibrations") : NULL;
    if (!json_is_object(all)) {
        XG_WARN(COMPONENT, "state file '%s' ignored: %s", set->state_file,
                root ? "no 'calibrations' object" : je.text);
        json_decref(root);
        return;
    }
    for (int i = 0; i < set->n; i++) {
        struct xg_calib *c = set->items[i];
        json_t *j = json_object_get(all, c->name);
        if (!j || c->have) continue;
        const char *ref = NULL, *tgt = NULL, *app = NULL;
        double off = 0, rm = 0, rd = 0, when = 0;
        json_int_t pairs = 0;
        struct xg_calib_result r = {0};
        if (json_unpack(j, "{s:s,s:s,s:s,s:F,s:F,s:F,s:I,s:F}", "reference", &ref, "target", &tgt,
                        "apply_to", &app, "time_offset_ms", &off, "residual_mm", &rm,
                        "residual_deg", &rd, "pairs", &pairs, "solved_unix", &when) ||
            xf_from_json(json_object_get(j, "transform"), &r.y) ||
            xf_from_json(json_object_get(j, "object_offset"), &r.x) || !isfinite(off) ||
            fabs(off) > 10000) {
            XG_WARN(COMPONENT,
                    "state file '%s': the entry of calibration '%s' is not valid: "
                    "ignored, collecting again",
                    set->state_file, c->name);
            continue;
        }
        if (strcmp(ref, c->reference) || strcmp(tgt, c->target) || strcmp(app, c->apply_to)) {
            XG_INFO(COMPONENT,
                    "state file '%s': calibration '%s' was solved for other entities "
                    "(%s, %s, %s): collecting again",
                    set->state_file, c->name, ref, tgt, app);
            continue;
        }
        r.time_offset_s = off * 1e-3;
        r.residual_m = rm * 1e-3;
        r.residual_rad = rd * DEG;
        r.pairs = (size_t)pairs;
        c->res = r;
        c->have = true;
        c->solved_unix = when;
        c->state = XG_CALIB_APPLIED;
        c->collecting = false;
        c->gen++; /* a solve in flight (a kept entry, after a reload) is late now */
        XG_INFO(COMPONENT,
                "'%s': applying the result of %s to adapter '%s' (residual %.2f mm "
                "%.3f deg, time offset %.1f ms)",
                c->name, set->state_file, c->apply_to, rm, rd, off);
    }
    json_decref(root);
}

/* ---- solving ---- */

struct forget_ctx {
    int origin;
    uint32_t *ids;
    size_t n, cap;
};

static int forget_visit(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    (void)pose;
    struct forget_ctx *f = user;
    if (xg_entity_origin(e) != f->origin) return 0;
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        uint32_t *ids = realloc(f->ids, cap * sizeof *ids);
        if (!ids) return 1;
        f->ids = ids;
        f->cap = cap;
    }
    f->ids[f->n++] = xg_entity_id(e);
    return 0;
}

/* a new space: no velocity is estimated across the jump */
static void forget_histories(struct xg_calib_set *set, struct xg_calib *c)
{
    if (c->apply_index < 0) return;
    struct forget_ctx f = {c->apply_index, NULL, 0, 0};
    xg_table_foreach(set->gw->table, -1, xg_clock_mono_ns(), forget_visit, &f);
    for (size_t i = 0; i < f.n; i++)
        xg_table_forget_history(set->gw->table, f.ids[i]);
    free(f.ids);
}

/* "unobservable: yaw (about y); turn the object about pitch (about x) 0.3/10 deg, roll ..." */
static void unobservable_text(unsigned bits, const double spread[3], double min_rad, char *out,
                              size_t n)
{
    static const char *const names[3] = {"pitch (about x)", "yaw (about y)", "roll (about z)"};
    size_t k = (size_t)snprintf(out, n, "unobservable:");
    for (int a = 0, first = 1; a < 3; a++)
        if ((bits >> a) & 1) {
            k += (size_t)snprintf(out + k, k < n ? n - k : 0, "%s %s", first ? "" : ",", names[a]);
            first = 0;
        }
    k += (size_t)snprintf(out + k, k < n ? n - k : 0, "; turn the object about");
    for (int a = 0, first = 1; a < 3; a++)
        if (spread[a] < min_rad) {
            k += (size_t)snprintf(out + k, k < n ? n - k : 0, "%s %s %.1f/%.0f deg",
                                  first ? "" : ",", names[a], spread[a] / DEG, min_rad / DEG);
            first = 0;
        }
}

static void finish(struct xg_calib_set *set, struct xg_calib *c, const struct xg_calib_job *j);

/* the worker's finished job, on the loop: the calibration whose solve it is, unless that
 * calibration was reset or started again meanwhile (generation) or left the configuration */
static void deliver(void *user, const struct xg_calib_job *j)
{
    struct xg_calib_set *set = user;
    if (j->kind == XG_CALIB_JOB_WRITE) {
        set->write_ms = j->solve_ms;
        written(set, j->rc, j->path);
        if (set->writes_queued && !--set->writes_queued) {
            free(set->latest);
            set->latest = NULL;
        }
        return;
    }
    for (int i = 0; i < set->n; i++) {
        struct xg_calib *c = set->items[i];
        if (c->job != j->id) continue;
        c->job = 0;
        if (j->gen != c->gen) {
            c->discarded++;
            XG_INFO(COMPONENT,
                    "'%s': a solve begun before the last start/reset finished (%.1f ms): its "
                    "result is discarded",
                    c->name, j->solve_ms);
            return;
        }
        int64_t t0 = xg_clock_mono_ns();
        finish(set, c, j);
        c->apply_ms = (double)(xg_clock_mono_ns() - t0) * 1e-6;
        return;
    }
    XG_DEBUG(COMPONENT, "a solve of a calibration no longer configured finished: discarded");
}

/* snapshot the newest 20 s of both streams and hand them to the worker (on the loop) */
static void submit_solve(struct xg_calib_set *set, struct xg_calib *c)
{
    if (c->job) return; /* one solve in flight per calibration */
    if (c->ref.n < 50 || c->tgt.n < 50 || xg_calib_ring_span(&c->ref) < c->collect_s ||
        xg_calib_ring_span(&c->tgt) < c->collect_s) {
        snprintf(c->last_why, sizeof c->last_why,
                 "collecting: %.1f s of reference and %.1f s of target samples of %.0f s",
                 xg_calib_ring_span(&c->ref), xg_calib_ring_span(&c->tgt), c->collect_s);
        return;
    }
    if (c->pushed == c->tried_at) return; /* nothing new since the last attempt */
    if (!set->worker && !(set->worker = xg_calib_worker_new(set->gw->base, deliver, set))) {
        XG_ERR(COMPONENT, "'%s': cannot start the solver (%s): not solving", c->name,
               strerror(errno));
        return;
    }
    struct xg_calib_job *j = calloc(1, sizeof *j);
    if (!j || !(j->ref = ring_snapshot(&c->ref, WINDOW_NS, &j->n_ref)) ||
        !(j->tgt = ring_snapshot(&c->tgt, WINDOW_NS, &j->n_tgt))) {
        xg_calib_job_free(j);
        return; /* ENOMEM: tried again at the next tick */
    }
    c->tried_at = c->pushed;
    j->gen = c->gen;
    xg_calib_opts_default(&j->opts);
    j->opts.max_offset_s = c->max_offset_s;
    j->opts.min_overlap_s = c->collect_s * 0.75;
    if (!(c->job = xg_calib_worker_submit(set->worker, j)))
        XG_ERR(COMPONENT, "'%s': cannot start the solver thread: not solving", c->name);
}

/* a solve's result, on the loop: refused, or applied, logged and its state file write queued */
static void finish(struct xg_calib_set *set, struct xg_calib *c, const struct xg_calib_job *j)
{
    struct xg_calib_result r = j->res;
    int rc = j->rc;
    const struct xg_calib_opts *o = &j->opts;
    c->solve_ms = j->solve_ms;
    c->last = r;
    c->last_rc = rc;
    c->solves++;
    if (!rc && (r.residual_m > ACCEPT_M || r.residual_rad > ACCEPT_RAD ||
                xg_vec3_norm(r.y.t) > 1e5 || xg_vec3_norm(r.x.t) > 1e5))
        rc = -ERANGE;
    if (rc) {
        c->solve_failures++;
        if (rc == -EDOM) {
            unobservable_text(r.unobservable, r.spread_rad, o->min_spread_rad, c->last_why,
                              sizeof c->last_why);
        } else if (rc == -ERANGE) {
            snprintf(c->last_why, sizeof c->last_why,
                     "refused: residual %.1f mm %.2f deg (more than %.0f mm or %.0f deg: are "
                     "reference and target the same object?)",
                     r.residual_m * 1e3, r.residual_rad / DEG, ACCEPT_M * 1e3, ACCEPT_RAD / DEG);
        } else {
            snprintf(c->last_why, sizeof c->last_why,
                     "no time offset found yet: rotate the object (the two streams must overlap "
                     "and move together, within %.0f ms)",
                     c->max_offset_s * 1e3);
        }
        return;
    }
    c->last_why[0] = '\0';
    c->res = r;
    c->have = true;
    c->state = XG_CALIB_SOLVED;
    c->solved_unix = (double)xg_clock_wall_ns() * 1e-9;
    c->collecting = false;
    c->drift_strikes = 0;
    c->ref.n = c->ref.head = c->tgt.n = c->tgt.head = 0;
    c->last_check_ns = xg_clock_mono_ns();
    XG_INFO(COMPONENT,
            "'%s' solved from %zu pairs in %.1f ms (solver thread): residual %.2f mm %.3f deg, "
            "time offset %.2f ms; applied to adapter '%s'",
            c->name, r.pairs, c->solve_ms, r.residual_m * 1e3, r.residual_rad / DEG,
            r.time_offset_s * 1e3, c->apply_to);
    forget_histories(set, c);
    save(set);
}

static void check_drift(struct xg_calib *c)
{
    int64_t now = xg_clock_mono_ns();
    if (now - c->last_check_ns < INT64_C(1000000000) || xg_calib_ring_span(&c->ref) < 5 ||
        xg_calib_ring_span(&c->tgt) < 5)
        return;
    size_t na, nb;
    struct xg_calib_sample *a = ring_snapshot(&c->ref, DRIFT_WINDOW_NS, &na),
                           *b = ring_snapshot(&c->tgt, DRIFT_WINDOW_NS, &nb);
    if (a && b) {
        double rm, rr;
        size_t np;
        if (!xg_calib_residuals(a, na, b, nb, &c->res, 500, &rm, &rr, &np)) {
            c->last_check_ns = now;
            c->drift_checks++;
            c->drift_res_m = rm;
            c->drift_res_rad = rr;
            double lim_m = fmax(c->drift_m, 3 * c->res.residual_m);
            double lim_r = fmax(c->drift_rad, 3 * c->res.residual_rad);
            c->drift_strikes = rm > lim_m || rr > lim_r ? c->drift_strikes + 1 : 0;
            if (c->drift_strikes >= DRIFT_STRIKES && c->state != XG_CALIB_DRIFTING) {
                c->drifts++;
                c->state = XG_CALIB_DRIFTING;
                XG_WARN(COMPONENT,
                        "'%s' drifting: residual %.1f mm %.2f deg over the last 5 s (limits %.1f "
                        "mm %.2f deg): solving again from new pairs; the old result stays "
                        "applied until then",
                        c->name, rm * 1e3, rr / DEG, lim_m * 1e3, lim_r / DEG);
                xg_calib_begin(c);
            }
        }
    }
    free(a);
    free(b);
}

void xg_calib_tick(struct xg_calib_set *set)
{
    for (int i = 0; i < set->n; i++) {
        struct xg_calib *c = set->items[i];
        if (c->collecting)
            submit_solve(set, c);
        else if (c->continuous && c->have)
            check_drift(c);
    }
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    xg_calib_tick(arg);
}

/* ---- life cycle ---- */

static int start_set(struct xg_gateway *gw, struct xg_calib_set *set)
{
    set->gw = gw;
    for (int i = 0; i < set->n; i++)
        if (ring_alloc(&set->items[i]->ref) || ring_alloc(&set->items[i]->tgt)) return -ENOMEM;
    if (!set->timer) {
        struct timeval tv = {1, 0};
        if (!(set->timer = event_new(gw->base, -1, EV_PERSIST, timer_cb, set))) return -ENOMEM;
        event_add(set->timer, &tv);
    }
    set->started = true;
    resolve(set);
    return 0;
}

int xg_calib_start(struct xg_gateway *gw)
{
    struct xg_calib_set *set = gw->calib;
    if (!set || !set->n) return 0;
    if (gw->opts && gw->opts->config_path)
        snprintf(set->state_file, sizeof set->state_file, "%s.calibration.json",
                 gw->opts->config_path);
    load_state(set);
    for (int i = 0; i < set->n; i++)
        if (!set->items[i]->have)
            XG_INFO(COMPONENT,
                    "'%s': collecting pairs of '%s' and '%s' (move the object about "
                    "at least two axes)",
                    set->items[i]->name, set->items[i]->reference, set->items[i]->target);
    return start_set(gw, set);
}

static bool same_entry(const struct xg_calib *a, const struct xg_calib *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->reference, b->reference) &&
           !strcmp(a->target, b->target) && !strcmp(a->apply_to, b->apply_to) &&
           a->continuous == b->continuous && a->drift_m == b->drift_m &&
           a->drift_rad == b->drift_rad && a->max_offset_s == b->max_offset_s &&
           a->collect_s == b->collect_s;
}

void xg_calib_reload(struct xg_gateway *gw, struct xg_gateway *cand)
{
    struct xg_calib_set *old = gw->calib, *neu = cand->calib;
    cand->calib = NULL;
    if (!neu || !neu->n) { /* set_free(old) joins the worker: at most one solve's wait */
        xg_table_set_ingest_hook(gw->table, 0, NULL, NULL);
        set_free(neu);
        set_free(old);
        gw->calib = NULL;
        return;
    }
    for (int i = 0; old && i < neu->n; i++) {
        struct xg_calib *o = xg_calib_find(old, neu->items[i]->name);
        if (o && same_entry(o, neu->items[i])) { /* keeps its state: swap the runtimes */
            for (int k = 0; k < old->n; k++)
                if (old->items[k] == o) old->items[k] = neu->items[i];
            neu->items[i] = o;
        }
    }
    if (old)
        snprintf(neu->state_file, sizeof neu->state_file, "%s", old->state_file);
    else if (gw->opts && gw->opts->config_path)
        snprintf(neu->state_file, sizeof neu->state_file, "%s.calibration.json",
                 gw->opts->config_path);
    if (old && old->worker) { /* the worker goes on; solves of entries not kept are dropped */
        for (int k = 0; k < old->n; k++)
            if (old->items[k]->job && xg_calib_worker_cancel(old->worker, old->items[k]->job))
                old->items[k]->job = 0;
        neu->worker = old->worker;
        old->worker = NULL;
        xg_calib_worker_retarget(neu->worker, neu);
    }
    if (old) { /* queued writes (their outcomes come to neu), counters */
        neu->latest = old->latest;
        old->latest = NULL;
        neu->writes_queued = old->writes_queued;
        neu->writes = old->writes;
        neu->write_failures = old->write_failures;
        neu->write_ms = old->write_ms;
        neu->write_lim = old->write_lim;
    }
    xg_table_set_ingest_hook(gw->table, 0, NULL, NULL);
    set_free(old);
    gw->calib = neu;
    load_state(neu);
    if (start_set(gw, neu))
        XG_ERR(COMPONENT, "out of memory starting the calibrations after the reload");
}

void xg_calib_free(struct xg_gateway *gw)
{
    if (!gw->calib) return;
    if (gw->table && gw->calib->started) xg_table_set_ingest_hook(gw->table, 0, NULL, NULL);
    set_free(gw->calib);
    gw->calib = NULL;
}

void xg_calib_reset(struct xg_calib_set *set, struct xg_calib *c)
{
    bool had = c->have;
    c->have = false;
    memset(&c->res, 0, sizeof c->res);
    c->state = XG_CALIB_COLLECTING;
    xg_calib_begin(c);
    if (had) {
        forget_histories(set, c);
        save(set);
    }
}
