/* Space calibrations: collection, solving, applying and their life cycle (gateway/calib.h,
 * docs/calibration.md); configuration in gateway/calib_conf.c, the state file in
 * gateway/calib_state.c, the admin API in gateway/calib_api.c. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock/clock.h"
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
        c->apply_index = xg_calib_adapter_index(gw, c->apply_to);
        c->ref_origin = xg_calib_prefix_index(gw, c->reference);
        c->tgt_origin = xg_calib_prefix_index(gw, c->target);
        if (c->ref_origin < 0 || c->tgt_origin < 0) mask = ~UINT64_C(0);
        int idx[3] = {c->apply_index, c->ref_origin, c->tgt_origin};
        for (int k = 0; k < 3; k++)
            if (idx[k] >= 0) mask |= UINT64_C(1) << idx[k];
    }
    xg_table_set_ingest_hook(gw->table, set->n ? mask : 0, set->n ? hook : NULL, set);
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
void xg_calib_deliver(void *user, const struct xg_calib_job *j)
{
    struct xg_calib_set *set = user;
    if (j->kind == XG_CALIB_JOB_WRITE) {
        set->write_ms = j->solve_ms;
        xg_calib_written(set, j->rc, j->path);
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
    if (!set->worker &&
        !(set->worker = xg_calib_worker_new(set->gw->base, xg_calib_deliver, set))) {
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
    xg_calib_save(set);
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
    xg_calib_load_state(set);
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
    if (!neu || !neu->n) { /* xg_calib_set_free(old) joins the worker: at most one solve's wait */
        xg_table_set_ingest_hook(gw->table, 0, NULL, NULL);
        xg_calib_set_free(neu);
        xg_calib_set_free(old);
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
    xg_calib_set_free(old);
    gw->calib = neu;
    xg_calib_load_state(neu);
    if (start_set(gw, neu))
        XG_ERR(COMPONENT, "out of memory starting the calibrations after the reload");
}

void xg_calib_free(struct xg_gateway *gw)
{
    if (!gw->calib) return;
    if (gw->table && gw->calib->started) xg_table_set_ingest_hook(gw->table, 0, NULL, NULL);
    xg_calib_set_free(gw->calib);
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
        xg_calib_save(set);
    }
}
