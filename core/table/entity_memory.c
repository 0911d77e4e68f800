/* The entity table's side of a skeleton's motion memory (core/predict/motion_memory.h): the root of
 * a skeleton (the joint without a parent that its joints lead to) owns the memory; every joint's
 * sample is recorded in it, and the sample that completes a frame looks for the earlier moment
 * the pose matches. Where one is found, each joint's estimated angular velocity is blended half
 * way toward the rate at which that joint turned just after that moment (docs/prediction.md
 * "Repeating motion: the motion memory"). The rules of core/predict/predict_rot.h and
 * core/predict/predict_skel.h decide first and learn only from their own estimates; the blend is
 * applied on top and never learned from. */
#include "core/table/entity_priv.h"
#include "core/predict/motion_memory.h"

/** How far the angular velocity moves toward the memory's rate (0 = not at all, 1 = all the
 *  way): half, as measured (core/predict/motion_memory.c). */
#define XG_MEMORY_BLEND 0.5
/** The memory's rate is used when it turns at least this fast (rad/s): slower analog turns are
 *  mostly the capture's jitter, where holding and the rules do better (2° over 33 ms). */
#define XG_MEMORY_TURN_MIN 1.05
/** Parent links followed to find a skeleton's root (a longer chain or a loop: no memory). */
#define XG_MEMORY_MAX_DEPTH 64

/* the root of e's skeleton, NULL if the chain of parents is broken, loops or is too long */
static struct xg_entity *root_of(struct xg_table *t, struct xg_entity *e)
{
    for (int depth = 0; e->parent; depth++) {
        if (depth == XG_MEMORY_MAX_DEPTH) return NULL;
        e = (struct xg_entity *)xg_table_get(t, e->parent);
        if (!e) return NULL;
    }
    return e;
}

/* blend every joint of the newest frame (time t_ns) toward the memory's rate */
static void apply_match(struct xg_table *t, struct xg_motion_memory *m, int64_t t_ns)
{
    const unsigned n = xg_memory_count(m);
    for (unsigned slot = 0; slot < n; slot++) {
        struct xg_entity *j = (struct xg_entity *)xg_table_get(t, xg_memory_joint(m, slot));
        struct xg_vec3 wa;
        if (!j || j->last.capture_ns != t_ns || !j->angular_velocity_estimated ||
            !xg_memory_rate(m, slot, &wa) || xg_vec3_norm(wa) < XG_MEMORY_TURN_MIN)
            continue;
        const struct xg_vec3 w =
            xg_vec3_add(j->angular_velocity,
                        xg_vec3_scale(xg_vec3_sub(wa, j->angular_velocity), XG_MEMORY_BLEND));
        if (!xg_vec3_finite(w)) continue;
        j->rot_matched = true;
        xg_ent_refine_angular_velocity(t, j, w);
    }
}

void xg_ent_memory_sample(struct xg_table *t, struct xg_entity *e)
{
    const int64_t span = xg_table_params(t)->motion_memory_ns;
    if (e->parent && e->memory) { /* a root that got a parent: its joints lead further now */
        xg_memory_free(e->memory);
        e->memory = NULL;
    }
    if (span <= 0) return;
    if (!e->parent && !e->memory) return; /* not (yet) a skeleton's root */
    struct xg_entity *r = root_of(t, e);
    if (!r) return;
    if (!r->memory && !(r->memory = xg_memory_new(span))) return; /* ENOMEM: no memory */
    if (xg_memory_record(r->memory, e->id, e->parent, e->last.capture_ns, e->last.orientation) ==
            1 &&
        xg_memory_match(r->memory))
        apply_match(t, r->memory, e->last.capture_ns);
}

void xg_ent_memory_forget(struct xg_table *t, struct xg_entity *e)
{
    struct xg_entity *r = root_of(t, e);
    if (r && r->memory) xg_memory_reset(r->memory);
}
