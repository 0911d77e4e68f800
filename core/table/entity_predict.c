/* An entity's pose predicted (or interpolated from its history) at a time: xg_entity_predict(). */
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

static struct xg_vec3 load3f(const float f[3])
{
    return (struct xg_vec3){f[0], f[1], f[2]};
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
