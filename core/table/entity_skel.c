/* The entity table's side of skeleton-informed rotation prediction (core/predict/predict_skel.h): a
 * joint's children refine its extrapolated angular velocity from their bones, and a joint that
 * no child refines turns with its parent plus a learned share of its own turn relative to it
 * (docs/prediction.md "Joints with children").
 *
 * Only bones that turn with their parent count: a child's offset in its parent's frame must stay
 * put (XG_SKEL_RIGID_TOL) from one sample to the next. Links that skip joints (a bvh adapter
 * playing only some joints links each to its nearest played ancestor) change that offset as the
 * joints in between turn, and so do entities whose parent is not a skeleton's; for those, and
 * for every entity without a parent, the rules of core/predict/predict_rot.h stay exactly as they
 * are. */
#include <stdlib.h>

#include "core/table/entity_priv.h"
#include "core/predict/predict_est.h"

/* e's rotation vector over its newest interval (rad, world frame) and that interval's length
 * (s): xg_rot_update() took it at this sample (m: its estimate), and its state keeps the rate */
static double newest_turn(const struct xg_entity *e, const struct xg_motion_est *m, double d[3])
{
    const double dt = (double)(e->last.capture_ns - m->prev_t_ns) * 1e-9;
    xg_rot_interval(&e->rot, dt, d);
    return dt;
}

void xg_ent_skel_sample(struct xg_entity *e, const struct xg_motion_est *m)
{
    if (!e->skel) return; /* no child has used this entity yet */
    double d[3] = {0, 0, 0};
    if (m) newest_turn(e, m, d);
    xg_rot_skel_sample(e->skel, m ? e->last.capture_ns : 0, m ? m->prev_t_ns : 0, d,
                       m ? m->fit_angular_velocity : XG_VEC3_ZERO);
}

/* the share of e's own fitted turn relative to its parent (rel, rad/s) that e extrapolates;
 * ps: the parent's skeleton state at the same sample. 0 if the state cannot be allocated. */
static double end_rel_gain(struct xg_entity *e, const struct xg_rot_skel *ps,
                           const struct xg_motion_est *m, struct xg_vec3 rel)
{
    if (!e->rot_rel && !(e->rot_rel = calloc(1, sizeof *e->rot_rel))) return 0;
    /* e's turn over its newest interval less its parent's over the same interval */
    double d[3];
    const double dt = newest_turn(e, m, d);
    const double d_rel[3] = {d[0] - ps->d[0], d[1] - ps->d[1], d[2] - ps->d[2]};
    const double w_rel[3] = {rel.x, rel.y, rel.z};
    return xg_rot_skel_rel_gain(e->rot_rel, e->last.capture_ns,
                                ps->t1_ns == m->prev_t_ns ? m->prev_t_ns : 0, d_rel, dt, w_rel);
}

/* The velocity a bone's rotation is estimated from: the source's, or the fit before the
 * velocity gate (core/predict/predict_gate.h), which shrinks what is extrapolated, not the motion.
 */
static struct xg_vec3 fitted_velocity(const struct xg_entity *e)
{
    if (!e->velocity_estimated) return e->velocity;
    return (struct xg_vec3){e->vgate.v[0], e->vgate.v[1], e->vgate.v[2]};
}

void xg_ent_skel_update(struct xg_table *t, struct xg_entity *e, const struct xg_motion_est *m)
{
    struct xg_entity *p = (struct xg_entity *)xg_table_get(t, e->parent);
    const unsigned pose = XG_SAMPLE_POSITION | XG_SAMPLE_ORIENTATION;
    if (!p || p->last.capture_ns != e->last.capture_ns || (p->last.flags & pose) != pose ||
        !(e->last.flags & XG_SAMPLE_POSITION)) {
        e->bone_t_ns = 0;
        return;
    }
    const struct xg_vec3 bone = xg_vec3_sub(e->last.position, p->last.position);
    const struct xg_vec3 local = xg_quat_rotate(xg_quat_conj(p->last.orientation), bone);
    const bool rigid =
        e->bone_t_ns && xg_vec3_norm(xg_vec3_sub(local, e->bone_local)) <= XG_SKEL_RIGID_TOL;
    e->bone_local = local;
    e->bone_t_ns = e->last.capture_ns;
    if (!p->angular_velocity_estimated) return;
    /* p has a child: from p's next sample on, p keeps what its children need */
    if (!p->skel) p->skel = calloc(1, sizeof *p->skel);
    if (!rigid) return;

    if (e->has_velocity && p->has_velocity) { /* e's bone refines p's rotation */
        struct xg_vec3 w;
        double gain = p->skel
                          ? xg_rot_skel_add(p->skel, bone,
                                            xg_vec3_sub(fitted_velocity(e), fitted_velocity(p)), &w)
                          : -1;
        if (gain >= 0) {
            p->rot_damped = gain < XG_ROT_GAIN_DAMPED;
            xg_ent_refine_angular_velocity(t, p, w);
        }
    }
    /* e itself, until a child of its own refines it: it turns with its parent */
    if (!e->angular_velocity_estimated) return;
    const struct xg_vec3 wp = p->angular_velocity;
    struct xg_vec3 w;
    if (wp.x == 0 && wp.y == 0 && wp.z == 0) { /* held while the parent is held */
        w = XG_VEC3_ZERO;
        e->rot_damped = true;
    } else if (m && p->skel && p->skel->t_ns == p->last.capture_ns && p->skel->n) {
        /* the parent refined by its children: its turn, plus part of e's own relative to it */
        const double *f = p->skel->w_fit;
        struct xg_vec3 rel =
            xg_vec3_sub(m->fit_angular_velocity, (struct xg_vec3){f[0], f[1], f[2]});
        const double g = end_rel_gain(e, p->skel, m, rel);
        if (!xg_vec3_finite(rel) || xg_vec3_norm(rel) < XG_SKEL_END_REL_MIN) rel = XG_VEC3_ZERO;
        w = xg_vec3_add(wp, xg_vec3_scale(rel, g));
        e->rot_damped = p->rot_damped;
    } else {
        return; /* e keeps its own rule */
    }
    e->angular_velocity = w; /* the caller stores it with e's newest pose */
}
