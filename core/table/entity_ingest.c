/* Samples coming into the entity table (core/table/entity.h): creating an entity at its first
 * sample, checking and applying a sample (velocity estimation, the skeleton and its motion memory),
 * the ingest hook and cut-through, buttons and analogs, and queueing the changed entity for every
 * sink that accepts it. */
#include "core/table/entity_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/adapter/adapter.h"
#include "core/util/log.h"
#include "core/predict/motion_memory.h"
#include "core/table/pose_cache.h"
#include "core/predict/predict_est.h"
#include "core/table/names.h"

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
    xg_history_set_angular_velocity(&e->hist, w); /* the velocity stored with it stands */
    xg_ent_mark_dirty(t, e);
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
        if (need_v && n_used >= 2 &&
            (L->flags & XG_SAMPLE_POSITION)) /* core/predict/predict_gate.h */
            xg_vel_gate_update(&e->vgate, L->capture_ns, L->position, m.velocity,
                               t->p.velocity_window_ns, &ev);
        if (need_w && n_used >= 2) { /* how far to extrapolate it (core/predict/predict_rot.h) */
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
    if (t->tap_mask) xg_ent_run_taps(t, e);
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
    struct xg_entity *e = xg_ent_find_source(t, origin, key->source);
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
            if (!src_ok) e = xg_ent_find_source(t, origin, key->source);
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
    if (t->tap_mask) xg_ent_run_taps(t, e);
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
    if (t->tap_mask) xg_ent_run_taps(t, e);
    return cut_point(t, e->origin, 0);
}
