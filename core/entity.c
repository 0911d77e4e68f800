#include "core/entity_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/adapter.h"
#include "core/log.h"
#include "core/motion_memory.h"
#include "core/pose_cache.h"
#include "core/predict_est.h"
#include "core/names.h"

void xg_table_params_default(struct xg_table_params *p)
{
    p->max_horizon_ns = 100 * INT64_C(1000000);
    p->stale_ns = 500 * INT64_C(1000000);
    p->expire_ns = 10000 * INT64_C(1000000);
    p->velocity_window_ns = 100 * INT64_C(1000000);
    p->motion_memory_ns = 2000 * INT64_C(1000000);
    p->max_entities = 65536;
}

/* ---- table ---- */

struct xg_table *xg_table_new(const struct xg_table_params *params)
{
    struct xg_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (params)
        t->p = *params;
    else
        xg_table_params_default(&t->p);
    if (t->p.velocity_window_ns <= 0) t->p.velocity_window_ns = 100 * INT64_C(1000000);
    if (!t->p.max_entities) t->p.max_entities = 65536;
    t->next_id = 1;
    t->cut_after = t->cut_next = XG_CUT_AFTER;
    if (xg_ent_hmap_grow(&t->by_id, 64) || xg_ent_hmap_grow(&t->by_source, 64) ||
        xg_ent_hmap_grow(&t->by_name, 64)) {
        xg_table_free(t);
        return NULL;
    }
    return t;
}

void xg_ent_free(struct xg_entity *e)
{
    if (!e) return;
    free(e->buttons);
    free(e->analogs);
    free(e->skel);
    free(e->rot_rel);
    xg_memory_free(e->memory);
    free(e);
}

void xg_table_free(struct xg_table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n_slots; i++)
        xg_ent_free(t->slots[i]);
    free(t->slots);
    free(t->free_slots);
    xg_ent_hmap_free(&t->by_id);
    xg_ent_hmap_free(&t->by_source);
    xg_ent_hmap_free(&t->by_name);
    for (int i = 0; i < XG_MAX_ADAPTERS; i++) {
        free(t->sinks[i].list);
        free(t->sinks[i].vals);
    }
    xg_pose_cache_free(t->poses);
    free(t);
}

const struct xg_table_params *xg_table_params(const struct xg_table *t)
{
    return &t->p;
}

int xg_table_set_adapter_name(struct xg_table *t, int index, const char *name)
{
    if (index < 0 || index >= XG_MAX_ADAPTERS) return -EINVAL;
    t->adapter_names[index] = name;
    return 0;
}

const char *xg_table_adapter_name(const struct xg_table *t, int index)
{
    if (index < 0 || index >= XG_MAX_ADAPTERS || !t->adapter_names[index]) return "";
    return t->adapter_names[index];
}

void xg_table_set_namer(struct xg_table *t, xg_namer_fn fn, void *user)
{
    t->namer = fn;
    t->namer_user = user;
}

int xg_table_add_sink(struct xg_table *t, int index, xg_accept_fn accept, xg_wake_fn wake,
                      void *user)
{
    if (index < 0 || index >= XG_MAX_ADAPTERS) return -EINVAL;
    struct sink *s = &t->sinks[index];
    s->on = true;
    s->accept = accept;
    s->wake = wake;
    s->user = user;
    /* existing entities become visible to the new sink */
    for (size_t i = 0; i < t->n_slots; i++) {
        struct xg_entity *e = t->slots[i];
        if (e && e->origin != index && (!accept || accept(user, index, e)))
            e->sink_mask |= UINT64_C(1) << index;
    }
    return 0;
}

int xg_table_set_sample_tap(struct xg_table *t, int sink, xg_sample_tap_fn fn, void *user)
{
    if (sink < 0 || sink >= XG_MAX_ADAPTERS || !t->sinks[sink].on) return -EINVAL;
    t->sinks[sink].tap = fn;
    t->sinks[sink].tap_user = user;
    if (fn)
        t->tap_mask |= UINT64_C(1) << sink;
    else
        t->tap_mask &= ~(UINT64_C(1) << sink);
    return 0;
}

/* The sample taps of the sinks that republish e (xg_table_set_sample_tap). */
static void run_taps(struct xg_table *t, const struct xg_entity *e)
{
    uint64_t m = t->tap_mask & e->sink_mask;
    while (m) {
        int i = __builtin_ctzll(m);
        m &= m - 1;
        t->sinks[i].tap(t->sinks[i].tap_user, e, xg_entity_last(e));
    }
}

int xg_table_set_sink_slot_free(struct xg_table *t, int sink, xg_sink_slot_free_fn fn, void *user)
{
    if (sink < 0 || sink >= XG_MAX_ADAPTERS) return -EINVAL;
    t->sinks[sink].val_free = fn;
    t->sinks[sink].val_user = user;
    return 0;
}

uint64_t *xg_table_sink_slot(struct xg_table *t, int sink, const struct xg_entity *e)
{
    if (sink < 0 || sink >= XG_MAX_ADAPTERS || !e) return NULL;
    struct sink *s = &t->sinks[sink];
    if (e->slot >= s->n_vals) {
        size_t n = s->n_vals ? s->n_vals : 64;
        while (n <= e->slot)
            n *= 2;
        uint64_t *v = realloc(s->vals, n * sizeof *v);
        if (!v) return NULL;
        memset(v + s->n_vals, 0, (n - s->n_vals) * sizeof *v);
        s->vals = v;
        s->n_vals = n;
    }
    return &s->vals[e->slot];
}

void xg_ent_sink_val_release(struct sink *s, const struct xg_entity *e)
{
    if (e->slot >= s->n_vals || !s->vals[e->slot]) return;
    uint64_t v = s->vals[e->slot];
    s->vals[e->slot] = 0;
    if (s->val_free) s->val_free(s->val_user, e, v);
}

void xg_table_sink_slots_clear(struct xg_table *t, int sink)
{
    if (!t || sink < 0 || sink >= XG_MAX_ADAPTERS) return;
    struct sink *s = &t->sinks[sink];
    for (size_t i = 0; i < s->n_vals && i < t->n_slots; i++)
        if (t->slots[i]) xg_ent_sink_val_release(s, t->slots[i]);
    if (s->vals) memset(s->vals, 0, s->n_vals * sizeof *s->vals);
}

int xg_table_add_listener(struct xg_table *t, xg_entity_event_fn fn, void *user)
{
    if (t->n_listeners >= MAX_LISTENERS) return -ENOSPC;
    t->listeners[t->n_listeners].fn = fn;
    t->listeners[t->n_listeners].user = user;
    t->n_listeners++;
    return 0;
}

static struct xg_entity *slot_entity(const struct xg_table *t, uint32_t slot)
{
    return slot < t->n_slots ? t->slots[slot] : NULL;
}

const struct xg_entity *xg_table_get(const struct xg_table *t, uint32_t id)
{
    uint64_t h = id;
    for (struct hnode *n = t->by_id.b[h & (t->by_id.nb - 1)]; n; n = n->next)
        if (n->h == h) return slot_entity(t, n->slot);
    return NULL;
}

struct xg_entity *xg_ent_get_mut(struct xg_table *t, uint32_t id)
{
    return (struct xg_entity *)xg_table_get(t, id);
}

const struct xg_entity *xg_table_find(const struct xg_table *t, const char *name)
{
    uint64_t h = xg_ent_hash_str(name);
    for (struct hnode *n = t->by_name.b[h & (t->by_name.nb - 1)]; n; n = n->next) {
        struct xg_entity *e = slot_entity(t, n->slot);
        if (n->h == h && e && strcmp(e->name, name) == 0) return e;
    }
    return NULL;
}

static struct xg_entity *find_source(const struct xg_table *t, int origin, const char *source)
{
    uint64_t h = xg_ent_hash_source(origin, source);
    for (struct hnode *n = t->by_source.b[h & (t->by_source.nb - 1)]; n; n = n->next) {
        struct xg_entity *e = slot_entity(t, n->slot);
        if (n->h == h && e && e->origin == origin && strcmp(e->source, source) == 0) return e;
    }
    return NULL;
}

int xg_table_set_parent(struct xg_table *t, uint32_t id, uint32_t parent_id)
{
    struct xg_entity *e = xg_ent_get_mut(t, id);
    if (!e) return -ENOENT;
    if (parent_id && (parent_id == id || !xg_table_get(t, parent_id))) return -EINVAL;
    e->parent = parent_id;
    return 0;
}

const char *xg_table_parent_name(const struct xg_table *t, const struct xg_entity *e)
{
    const struct xg_entity *p = e->parent ? xg_table_get(t, e->parent) : NULL;
    return p ? p->name : NULL;
}

size_t xg_table_count(const struct xg_table *t)
{
    return t->count;
}

static const char *adapter_label(const struct xg_table *t, int origin)
{
    return t->adapter_names[origin] ? t->adapter_names[origin] : "adapter";
}

static int create_entity(struct xg_table *t, int origin, const struct xg_entity_key *key,
                         struct xg_entity **out)
{
    if (t->count >= t->p.max_entities) return -ENOSPC;
    int rc = 0;
    if ((rc = xg_ent_hmap_grow(&t->by_id, (t->count + 1) * 2)) ||
        (rc = xg_ent_hmap_grow(&t->by_source, (t->count + 1) * 2)) ||
        (rc = xg_ent_hmap_grow(&t->by_name, (t->count + 1) * 2)))
        return rc;
    enum xg_kind kind = key->kind;
    char def[XG_NAME_MAX], name[XG_NAME_MAX], og[64];
    xg_name_fitf(def, sizeof def, "%s/%s", adapter_label(t, origin), key->source);
    name[0] = '\0';
    if (t->namer) t->namer(t->namer_user, origin, def, name, sizeof name, &kind);
    if (!name[0]) snprintf(name, sizeof name, "%s", def);
    /* unique names: a clash gets "#2", "#3"... */
    if (xg_table_find(t, name)) {
        char base[XG_NAME_MAX];
        snprintf(base, sizeof base, "%s", name);
        for (int k = 2; xg_table_find(t, name); k++) {
            char suffix[16];
            int sl = snprintf(suffix, sizeof suffix, "#%d", k);
            int bl = (int)strlen(base);
            if (bl + sl >= XG_NAME_MAX) bl = XG_NAME_MAX - 1 - sl;
            while (bl > 0 && ((unsigned char)base[bl] & 0xC0) == 0x80)
                bl--; /* not inside a UTF-8 sequence */
            snprintf(name, sizeof name, "%.*s%s", bl, base, suffix);
        }
    }
    snprintf(og, sizeof og, "%s", key->origin_gateway ? key->origin_gateway : "");
    size_t ln = strlen(name) + 1, ls = strlen(key->source) + 1, lo = strlen(og) + 1;
    struct xg_entity *e = calloc(1, sizeof *e + ln + ls + lo);
    if (!e) return -ENOMEM;
    char *np = e->names;
    memcpy(np, name, ln);
    memcpy(np + ln, key->source, ls);
    memcpy(np + ln + ls, og, lo);
    e->name = np, e->source = np + ln, e->origin_gateway = np + ln + ls;
    e->origin = origin;
    e->kind = kind;
    e->source_sensor = key->has_sensor && key->sensor >= 0 ? key->sensor : -1;
    e->controls_only = key->controls_only;
    /* slot */
    uint32_t slot;
    if (t->n_free) {
        slot = t->free_slots[--t->n_free];
    } else {
        if (t->n_slots == t->cap_slots) {
            size_t cap = t->cap_slots ? t->cap_slots * 2 : 64;
            struct xg_entity **ns = realloc(t->slots, cap * sizeof *ns);
            if (!ns) {
                free(e);
                return -ENOMEM;
            }
            t->slots = ns;
            uint32_t *nf = realloc(t->free_slots, cap * sizeof *nf);
            if (!nf) {
                free(e);
                return -ENOMEM;
            }
            t->free_slots = nf;
            t->cap_slots = cap;
        }
        slot = (uint32_t)t->n_slots++;
    }
    e->slot = slot;
    e->id = t->next_id++;
    if (xg_ent_hmap_put(&t->by_id, e->id, slot) ||
        xg_ent_hmap_put(&t->by_source, xg_ent_hash_source(origin, e->source), slot) ||
        xg_ent_hmap_put(&t->by_name, xg_ent_hash_str(e->name), slot)) {
        xg_ent_hmap_del(&t->by_id, e->id, slot);
        xg_ent_hmap_del(&t->by_source, xg_ent_hash_source(origin, e->source), slot);
        xg_ent_hmap_del(&t->by_name, xg_ent_hash_str(e->name), slot);
        t->free_slots[t->n_free++] = slot;
        free(e);
        return -ENOMEM;
    }
    t->slots[slot] = e;
    t->count++;
    t->stats.created++;
    for (int i = 0; i < XG_MAX_ADAPTERS; i++) {
        struct sink *s = &t->sinks[i];
        if (s->on && i != origin && (!s->accept || s->accept(s->user, i, e)))
            e->sink_mask |= UINT64_C(1) << i;
    }
    *out = e;
    return 0;
}

void xg_ent_mark_dirty(struct xg_table *t, struct xg_entity *e)
{
    uint64_t pending = e->sink_mask & ~e->dirty_mask;
    while (pending) {
        int i = __builtin_ctzll(pending);
        pending &= pending - 1;
        struct sink *s = &t->sinks[i];
        if (s->n == s->cap && s->head) { /* a sliced drain consumed the front: reuse it */
            memmove(s->list, s->list + s->head, (s->n - s->head) * sizeof *s->list);
            s->n -= s->head;
            s->head = 0;
        }
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 64;
            uint32_t *nl = realloc(s->list, cap * sizeof *nl);
            if (!nl)
                continue; /* out of memory: this sink misses the update, the next one retries */
            s->list = nl;
            s->cap = cap;
        }
        s->list[s->n++] = e->slot;
        e->dirty_mask |= UINT64_C(1) << i;
        if (s->n - s->head == 1) {
            t->woken |= UINT64_C(1) << i;
            if (s->wake) s->wake(s->user, i);
        }
    }
}

void xg_ent_refine_angular_velocity(struct xg_table *t, struct xg_entity *e, struct xg_vec3 w)
{
    e->angular_velocity = w;
    e->has_angular_velocity = true;
    xg_history_set_velocity(&e->hist, e->velocity, w);
    xg_ent_mark_dirty(t, e);
}

static struct xg_vec3 load3f(const float f[3])
{
    return (struct xg_vec3){f[0], f[1], f[2]};
}

static const char *bound_text(const char *field)
{
    switch (field[0]) {
    case 'p':
        return "finite, |position| <= 1e6 m per axis";
    case 'v':
        return "finite, |velocity| <= 1e4 m/s per axis";
    case 'a':
        return "finite, |angular velocity| <= 1e4 rad/s per axis";
    case 's':
        return "finite, |scale| <= 1e4 per axis";
    default:
        return "finite, quaternion norm within 1e-6..1e6";
    }
}

/* Check s before it touches the table; a bad sample is counted and logged (rate-limited per
 * origin). `ename` names the entity (its final name, or "<adapter>/<source>" if it is new). */
static int check_sample(struct xg_table *t, int origin, const char *ename, const char *source,
                        const struct xg_sample *s)
{
    const char *field;
    double v;
    if (!xg_sample_check(s, &field, &v)) return 0;
    t->stats.rejected[origin]++;
    if (ename)
        XG_WARN_PEER(&t->reject_lim[origin], adapter_label(t, origin),
                     "sample of entity '%s' rejected: %s = %.9g (must be %s); dropped", ename,
                     field, v, bound_text(field));
    else
        XG_WARN_PEER(&t->reject_lim[origin], adapter_label(t, origin),
                     "sample of entity '%s/%s' rejected: %s = %.9g (must be %s); dropped",
                     adapter_label(t, origin), source, field, v, bound_text(field));
    return -EINVAL;
}

static int apply_sample(struct xg_table *t, struct xg_entity *e, const struct xg_sample *in)
{
    struct xg_sample s = *in;
    if (!s.receive_ns) s.receive_ns = s.capture_ns;
    /* nothing is captured after it is received (one clock): a source timestamp in the future
     * would otherwise make every later sample look old and freeze the entity. (Adapters may
     * nudge a capture time a little past the receive time to keep it strictly increasing,
     * hence the 100 ms allowance.) */
    if (s.capture_ns > s.receive_ns + 100 * INT64_C(1000000)) s.capture_ns = s.receive_ns;
    if (s.flags & XG_SAMPLE_ORIENTATION) s.orientation = xg_quat_normalize(s.orientation);
    bool first = e->samples == 0;
    bool pose = (s.flags & XG_SAMPLE_POSE) != 0;
    struct xg_hist evicted; /* the history entry a full ring overwrites, for the estimator */
    bool have_evicted = false;
    if (pose) {
        if (!first && s.capture_ns <= e->last.capture_ns) {
            e->dropped_backwards++;
            t->stats.dropped_backwards[e->origin]++;
            return -EAGAIN;
        }
    }
    struct xg_sample *L = &e->last;
    if (first) {
        memset(L, 0, sizeof *L);
        L->orientation = XG_QUAT_IDENTITY;
        L->scale = (struct xg_vec3){1, 1, 1};
        e->created_ns = s.receive_ns;
    }
    if (s.flags & XG_SAMPLE_VELOCITY) {
        L->velocity = s.velocity;
        e->reported_vel_ns = s.capture_ns;
    }
    if (s.flags & XG_SAMPLE_ANGULAR_VELOCITY) {
        L->angular_velocity = s.angular_velocity;
        e->reported_angvel_ns = s.capture_ns;
    }
    if (s.flags & XG_SAMPLE_SCALE) L->scale = s.scale;
    if (s.flags & XG_SAMPLE_POSITION) L->position = s.position;
    if (s.flags & XG_SAMPLE_ORIENTATION) L->orientation = s.orientation;
    L->flags = ((L->flags | s.flags) & ~XG_SAMPLE_INACTIVE) | (s.flags & XG_SAMPLE_INACTIVE);
    L->receive_ns = s.receive_ns;
    e->last_receive_ns = s.receive_ns;

    if (pose) {
        if (!first) {
            double dt = (double)(s.capture_ns - L->capture_ns) * 1e-9;
            e->interval_s = e->interval_s > 0 ? 0.9 * e->interval_s + 0.1 * dt : dt;
        }
        L->capture_ns = s.capture_ns;
        /* the sample leaving the ring, decoded only when the estimator below runs (it rebuilds
         * its sums after a push it did not see) */
        const int64_t fresh = t->p.velocity_window_ns;
        bool estimating =
            !(e->reported_vel_ns && L->capture_ns - e->reported_vel_ns <= fresh) ||
            !(e->reported_angvel_ns && L->capture_ns - e->reported_angvel_ns <= fresh);
        /* the estimator subtracts it only when its window holds the whole ring (a slow source
         * or a long window): otherwise the window's oldest sample is newer */
        estimating = estimating && e->est.m && e->est.m >= xg_history_count(&e->hist);
        have_evicted = xg_history_push(&e->hist, s.capture_ns, L->position, L->orientation,
                                       estimating ? &evicted : NULL) &&
                       estimating;
    } else if (first) {
        L->capture_ns = s.capture_ns;
    }

    /* velocities for prediction: reported ones while they are fresh, else estimated */
    int64_t fresh = t->p.velocity_window_ns;
    struct xg_vec3 ev = XG_VEC3_ZERO, ew = XG_VEC3_ZERO;
    int n_used = 0;
    bool need_v = !(e->reported_vel_ns && L->capture_ns - e->reported_vel_ns <= fresh);
    bool need_w = !(e->reported_angvel_ns && L->capture_ns - e->reported_angvel_ns <= fresh);
    double rot_gain = 1;
    struct xg_motion_est m;
    const struct xg_motion_est *m_rot = NULL; /* &m when the angular velocity was estimated */
    if ((need_v || need_w) && xg_history_count(&e->hist) >= 2) {
        xg_motion_update(&e->est, &e->hist, have_evicted ? &evicted : NULL, t->p.velocity_window_ns,
                         &m);
        ev = m.velocity;
        n_used = m.n_used;
        if (need_v && n_used >= 2 && (L->flags & XG_SAMPLE_POSITION)) /* core/predict_gate.h */
            xg_vel_gate_update(&e->vgate, L->capture_ns, L->position, m.velocity,
                               t->p.velocity_window_ns, &ev);
        if (need_w && n_used >= 2) { /* how far to extrapolate it (core/predict_rot.h) */
            /* the sample before the newest (L), as the estimator decoded it */
            rot_gain = xg_rot_update(&e->rot, L->capture_ns, L->orientation, m.prev_t_ns, m.prev_q,
                                     m.fit_angular_velocity, &ew);
            m_rot = &m;
        }
    }
    if (pose && e->skel) xg_ent_skel_sample(e, m_rot);
    if (!need_v) {
        e->velocity = L->velocity;
        e->has_velocity = true;
        e->velocity_estimated = false;
    } else {
        e->velocity = ev;
        e->has_velocity = n_used >= 2 && (L->flags & XG_SAMPLE_POSITION);
        e->velocity_estimated = e->has_velocity;
    }
    if (!need_w) {
        e->angular_velocity = L->angular_velocity;
        e->has_angular_velocity = true;
        e->angular_velocity_estimated = false;
    } else {
        e->angular_velocity = ew;
        e->has_angular_velocity = n_used >= 2 && (L->flags & XG_SAMPLE_ORIENTATION);
        e->angular_velocity_estimated = e->has_angular_velocity;
    }
    e->rot_damped = need_w && e->has_angular_velocity && rot_gain < XG_ROT_GAIN_DAMPED;
    e->rot_matched = false;
    if (pose && e->parent)
        xg_ent_skel_update(t, e, m_rot); /* a skeleton's joints refine each other */
    /* the velocities in force at the newest pose, for past-time queries */
    xg_history_set_velocity(&e->hist, e->velocity, e->angular_velocity);
    if (s.flags & XG_SAMPLE_ORIENTATION) xg_ent_memory_sample(t, e); /* repeating motion */
    e->samples++;
    t->stats.samples_in[e->origin]++;
    xg_ent_mark_dirty(t, e);
    if (t->tap_mask) run_taps(t, e);
    if (first)
        for (int i = 0; i < t->n_listeners; i++)
            t->listeners[i].fn(t->listeners[i].user, e, true);
    return 0;
}

void xg_table_set_cut_through(struct xg_table *t, xg_cut_fn fn, void *user)
{
    t->cut = fn;
    t->cut_user = user;
}

void xg_table_set_cut_after(struct xg_table *t, unsigned updates)
{
    t->cut_after = t->cut_next = updates ? updates : 1;
}

/* The end of an update: the table is consistent again; sinks woken since the last cut may send
 * now, once the batch has pushed cut_next updates since the first of them woke a sink. Each cut
 * of a batch doubles the next threshold (64, 128, 256 ... updates), so that a batch of n
 * updates is cut about log2(n / 64) times: its first entities leave early, the rest in few,
 * large drains. */
static int cut_point(struct xg_table *t, int origin, int rc)
{
    if (!t->woken || !t->cut || t->in_pass || t->in_cut) return rc;
    if (++t->cut_count < t->cut_next) return rc;
    uint64_t w = t->woken;
    t->woken = 0;
    t->cut_count = 0;
    t->cut_next = t->cut_next < XG_CUT_MAX / 2 ? 2 * t->cut_next : XG_CUT_MAX;
    t->in_cut = true;
    t->cut(t->cut_user, w, origin);
    t->in_cut = false;
    return rc;
}

void xg_table_set_ingest_hook(struct xg_table *t, uint64_t origins, xg_ingest_fn fn, void *user)
{
    t->ingest = fn;
    t->ingest_user = user;
    t->ingest_mask = fn ? origins : 0;
}

/* apply_sample, through the ingest hook when e's origin has one */
static int ingest(struct xg_table *t, struct xg_entity *e, const struct xg_sample *s)
{
    if (!((t->ingest_mask >> e->origin) & 1)) return apply_sample(t, e, s);
    struct xg_sample c = *s;
    t->ingest(t->ingest_user, e, &c);
    return apply_sample(t, e, &c);
}

int xg_table_update_origin(struct xg_table *t, int origin, const struct xg_entity_key *key,
                           const struct xg_sample *s, uint32_t *id)
{
    size_t sl = key && key->source ? strnlen(key->source, XG_NAME_MAX) : 0;
    if (origin < 0 || origin >= XG_MAX_ADAPTERS || !sl || sl >= XG_NAME_MAX) return -EINVAL;
    /* names are UTF-8 from here on, whichever adapter read them from the wire (issue 30 item 4):
     * the one place every source name passes. Every stored source name is valid UTF-8, so a name
     * found as it came is one: only a name not found yet is checked (not every sample). */
    struct xg_entity *e = find_source(t, origin, key->source);
    char fixed[XG_NAME_MAX], fixed_og[64];
    struct xg_entity_key k2;
    if (!e) {
        size_t ol = key->origin_gateway ? strlen(key->origin_gateway) : 0;
        bool src_ok = xg_utf8_valid(key->source, sl);
        bool og_ok = !key->origin_gateway ||
                     (ol < sizeof fixed_og && xg_utf8_valid(key->origin_gateway, ol));
        if (!src_ok || !og_ok) {
            k2 = *key;
            if (!src_ok) {
                xg_name_utf8(fixed, sizeof fixed, key->source, sl);
                k2.source = fixed;
            }
            if (!og_ok) {
                xg_name_utf8(fixed_og, sizeof fixed_og, key->origin_gateway, ol);
                k2.origin_gateway = fixed_og;
            }
            key = &k2;
            if (!src_ok) e = find_source(t, origin, key->source);
        }
    }
    if (check_sample(t, origin, e ? e->name : NULL, key->source, s)) return -EINVAL;
    if (!e) {
        if (!(s->flags & XG_SAMPLE_POSE))
            return -ENOENT; /* velocities alone do not create an entity */
        int rc = create_entity(t, origin, key, &e);
        if (rc == -ENOSPC) {
            t->stats.refused[origin]++;
            XG_WARN_PEER(&t->refuse_lim[origin], adapter_label(t, origin),
                         "entity table full (max_entities %" PRIu32 "): new entity '%s/%s' refused",
                         t->p.max_entities, adapter_label(t, origin), key->source);
        }
        if (rc) return rc;
    }
    if (id) *id = e->id;
    return cut_point(t, origin, ingest(t, e, s));
}

int xg_table_update(struct xg_table *t, const struct xg_adapter *a, const struct xg_entity_key *key,
                    const struct xg_sample *s, uint32_t *id)
{
    return xg_table_update_origin(t, a->index, key, s, id);
}

int xg_table_push(struct xg_table *t, uint32_t id, const struct xg_sample *s)
{
    struct xg_entity *e = xg_ent_get_mut(t, id);
    if (!e) return -ENOENT;
    if (check_sample(t, e->origin, e->name, e->source, s)) return -EINVAL;
    return cut_point(t, e->origin, ingest(t, e, s));
}

int xg_table_forget_history(struct xg_table *t, uint32_t id)
{
    struct xg_entity *e = xg_ent_get_mut(t, id);
    if (!e) return -ENOENT;
    xg_history_clear(&e->hist);
    memset(&e->est, 0, sizeof e->est);
    xg_rot_reset(&e->rot);
    xg_vel_gate_reset(&e->vgate);
    if (e->skel) xg_rot_skel_reset(e->skel);
    if (e->rot_rel) xg_rot_reset(e->rot_rel);
    e->bone_t_ns = 0;
    xg_ent_memory_forget(t, e);
    return 0;
}

int xg_table_set_button(struct xg_table *t, uint32_t id, int index, bool pressed)
{
    struct xg_entity *e = xg_ent_get_mut(t, id);
    if (!e) return -ENOENT;
    if (index < 0 || index >= XG_MAX_BUTTONS) return -EINVAL;
    if (!e->buttons && !(e->buttons = calloc(XG_MAX_BUTTONS, 1))) return -ENOMEM;
    e->buttons[index] = pressed;
    if (index >= e->n_buttons) e->n_buttons = index + 1;
    xg_ent_mark_dirty(t, e);
    if (t->tap_mask) run_taps(t, e);
    return cut_point(t, e->origin, 0);
}

int xg_table_set_analog(struct xg_table *t, uint32_t id, int index, double value)
{
    struct xg_entity *e = xg_ent_get_mut(t, id);
    if (!e) return -ENOENT;
    if (index < 0 || index >= XG_MAX_ANALOGS) return -EINVAL;
    if (!isfinite(value) || fabs(value) > XG_ANALOG_MAX) {
        t->stats.rejected[e->origin]++;
        XG_WARN_PEER(&t->reject_lim[e->origin], adapter_label(t, e->origin),
                     "analog %d of entity '%s' rejected: value = %.9g (must be finite, |value| <= "
                     "3.4e38); dropped",
                     index, e->name, value);
        return -EINVAL;
    }
    if (!e->analogs && !(e->analogs = calloc(XG_MAX_ANALOGS, sizeof(double)))) return -ENOMEM;
    e->analogs[index] = value;
    if (index >= e->n_analogs) e->n_analogs = index + 1;
    xg_ent_mark_dirty(t, e);
    if (t->tap_mask) run_taps(t, e);
    return cut_point(t, e->origin, 0);
}

/* ---- prediction ---- */

void xg_entity_predict_at(struct xg_table *t, const struct xg_entity *e, int64_t t_ns,
                          struct xg_pose *out)
{
    const struct xg_sample *L = &e->last;
    memset(out, 0, sizeof *out);
    out->t_ns = t_ns;
    out->sample_ns = L->capture_ns;
    out->scale = L->scale;
    out->active = !(L->flags & XG_SAMPLE_INACTIVE);
    out->velocity = e->velocity;
    out->angular_velocity = e->angular_velocity;
    out->has_velocity = e->has_velocity;
    out->has_angular_velocity = e->has_angular_velocity;
    out->position = L->position;
    out->orientation = L->orientation;

    int64_t dt_ns = t_ns - L->capture_ns;
    enum xg_quality q;
    if (dt_ns == 0) {
        q = XG_QUALITY_EXACT;
    } else if (dt_ns < 0) {
        /* inside (or before) the history: find the bracketing samples */
        q = XG_QUALITY_HELD;
        struct xg_hist a, b;
        switch (xg_history_around(&e->hist, t_ns, &a, &b)) {
        case XG_HISTORY_AT: /* an older sample's time (the newest is dt_ns == 0 above) */
            out->position = a.p;
            out->orientation = a.q;
            out->velocity = load3f(a.v);
            out->angular_velocity = load3f(a.w);
            q = XG_QUALITY_EXACT;
            break;
        case XG_HISTORY_BETWEEN: {
            double u = (double)(t_ns - a.t_ns) / (double)(b.t_ns - a.t_ns);
            out->position = xg_vec3_lerp(a.p, b.p, u);
            out->orientation = xg_quat_slerp(a.q, b.q, u);
            /* the velocities at that time too, not the newest ones */
            out->velocity = xg_vec3_lerp(load3f(a.v), load3f(b.v), u);
            out->angular_velocity = xg_vec3_lerp(load3f(a.w), load3f(b.w), u);
            q = XG_QUALITY_INTERPOLATED;
            break;
        }
        case XG_HISTORY_BEFORE: /* held at the oldest kept sample */
            out->position = a.p;
            out->orientation = a.q;
            out->velocity = load3f(a.v);
            out->angular_velocity = load3f(a.w);
            break;
        default: /* no history (forgotten) or after it: the newest state */
            break;
        }
    } else {
        int64_t h_ns = dt_ns < t->p.max_horizon_ns ? dt_ns : t->p.max_horizon_ns;
        double h = (double)h_ns * 1e-9;
        /* within the bounds: |v| <= 1e4 m/s over a horizon of up to 10 s could leave them */
        if (e->has_velocity)
            out->position = xg_vec3_clamp(xg_vec3_add(L->position, xg_vec3_scale(e->velocity, h)),
                                          XG_POSITION_MAX);
        if (e->has_angular_velocity) {
            /* slerp(s, e, h) with e = exp(ω·1 s) ⊗ s, the rotation one second ahead (the
             * game-state draft's Rot2). For |ω| < π rad/s this is exactly exp(ω·h) ⊗ s, which
             * is what we compute: it stays right for faster spins too. */
            out->orientation = xg_quat_integrate(L->orientation, e->angular_velocity, h);
        }
        if (!e->has_velocity && !e->has_angular_velocity)
            q = XG_QUALITY_HELD;
        else if (dt_ns > t->p.max_horizon_ns)
            q = XG_QUALITY_HELD;
        else
            q = e->rot_matched  ? XG_QUALITY_MATCHED
                : e->rot_damped ? XG_QUALITY_DAMPED
                                : XG_QUALITY_PREDICTED;
    }
    if (dt_ns > t->p.stale_ns) q = XG_QUALITY_STALE;
    out->quality = q;
    t->stats.predictions[q]++;
}

int xg_entity_predict(struct xg_table *t, uint32_t id, int64_t t_ns, struct xg_pose *pose)
{
    const struct xg_entity *e = xg_table_get(t, id);
    if (!e) return -ENOENT;
    xg_entity_predict_at(t, e, t_ns, pose);
    return 0;
}

/* ---- egress ---- */

void xg_table_set_drain_limit(struct xg_table *t, int sink, size_t max)
{
    if (sink >= 0 && sink < XG_MAX_ADAPTERS) t->sinks[sink].limit = max;
}

int xg_table_pass_begin(struct xg_table *t, int64_t now_ns)
{
    t->in_pass = true;
    if (!t->in_cut) { /* the pass after a read: it drains what woke them; a new batch follows */
        t->woken = 0;
        t->cut_count = 0;
        t->cut_next = t->cut_after;
    }
    t->pass_ns = now_ns;
    int rc = xg_pose_cache_reserve(&t->poses, t->n_slots);
    if (t->poses) xg_pose_cache_new_pass(t->poses);
    return rc;
}

void xg_table_pass_end(struct xg_table *t)
{
    t->in_pass = false;
    if (t->poses) xg_pose_cache_new_pass(t->poses); /* nothing answers outside a pass */
}

/* The pose a sink gets: inside a pass, predicted to the pass time once and shared. */
static void sink_predict(struct xg_table *t, const struct xg_entity *e, int64_t now_ns,
                         struct xg_pose *pose)
{
    if (!t->in_pass) {
        xg_entity_predict_at(t, e, now_ns, pose);
        return;
    }
    const struct xg_pose *c =
        t->poses ? xg_pose_cache_get(t->poses, e->slot, e->id, e->samples, t->pass_ns) : NULL;
    if (c) {
        *pose = *c;
        t->stats.predictions[c->quality]++;
        t->stats.predictions_shared++;
        return;
    }
    xg_entity_predict_at(t, e, t->pass_ns, pose);
    if (t->poses) xg_pose_cache_put(t->poses, e->slot, e->id, e->samples, pose);
}

size_t xg_table_drain(struct xg_table *t, int sink, int64_t now_ns, xg_visit_fn fn, void *user)
{
    if (sink < 0 || sink >= XG_MAX_ADAPTERS) return 0;
    struct sink *s = &t->sinks[sink];
    uint64_t bit = UINT64_C(1) << sink;
    size_t visited = 0, i = s->head;
    int stop = 0;
    for (; i < s->n && !stop && (!s->limit || visited < s->limit); i++) {
        struct xg_entity *e = slot_entity(t, s->list[i]);
        if (!e || !(e->dirty_mask & bit)) continue; /* removed since it was marked */
        e->dirty_mask &= ~bit;
        struct xg_pose pose;
        sink_predict(t, e, now_ns, &pose);
        visited++;
        stop = fn(user, e, &pose);
    }
    /* keep what was not visited (the visitor stopped early, or the limit was reached) in order:
     * the next drain starts at list[head] (no move per slice) */
    s->head = i;
    if (s->head == s->n) s->head = s->n = 0;
    return visited;
}

size_t xg_table_dirty_count(const struct xg_table *t, int sink)
{
    return sink >= 0 && sink < XG_MAX_ADAPTERS ? t->sinks[sink].n - t->sinks[sink].head : 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

size_t xg_table_foreach(struct xg_table *t, int sink, int64_t now_ns, xg_visit_fn fn, void *user)
{
    if (!t->count) return 0;
    uint32_t *ids = malloc(t->count * sizeof *ids);
    if (!ids) return 0;
    size_t n = 0;
    for (size_t i = 0; i < t->n_slots; i++) {
        struct xg_entity *e = t->slots[i];
        if (!e) continue;
        if (sink >= 0 && !(e->sink_mask & (UINT64_C(1) << sink))) continue;
        ids[n++] = e->id;
    }
    qsort(ids, n, sizeof *ids, cmp_u32);
    size_t visited = 0;
    for (size_t i = 0; i < n; i++) {
        const struct xg_entity *e = xg_table_get(t, ids[i]);
        if (!e) continue;
        struct xg_pose pose;
        if (sink >= 0)
            sink_predict(t, e, now_ns, &pose);
        else { /* a reader that sends nothing: not an egress prediction */
            xg_entity_predict_at(t, e, now_ns, &pose);
            t->stats.predictions[pose.quality]--;
            t->stats.predictions_api[pose.quality]++;
        }
        visited++;
        if (fn(user, e, &pose)) break;
    }
    free(ids);
    return visited;
}

void xg_table_set_params(struct xg_table *t, const struct xg_table_params *params)
{
    struct xg_table_params p = *params;
    if (p.velocity_window_ns <= 0) p.velocity_window_ns = t->p.velocity_window_ns;
    if (!p.max_entities) p.max_entities = t->p.max_entities;
    t->p = p;
}

const struct xg_table_stats *xg_table_stats(const struct xg_table *t)
{
    return &t->stats;
}
