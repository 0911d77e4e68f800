/* Skeleton-informed rotation prediction (see predict_skel.h and docs/prediction.md).
 *
 * Measured on the CMU walk in tests/vectors/mocap (bench_bvh_prediction, 30 Hz, 33 ms, all
 * joints): the fitted rate is the mean over the newest interval, half an interval late; a
 * child's velocity comes from a quadratic fit of its positions and is not. The swing from the
 * children with its own gain and hold rule and the twist from the fitted rate with its own
 * (each held below 2.25 and 1.75 rad/s) gave 0.558 / 0.605 / 4.5 % (rotation mean / p95 x hold
 * / worse than hold) in a scratch copy of the benchmark, against 0.562 / 0.619 / 4.6 %. Letting
 * joints without children turn with their parent (core/table/entity_skel.c) lowered the share worse
 * than holding enough to hold the swing only below 2 rad/s: 0.550 / 0.599 / 4.4 % in the
 * benchmark. Comparing the two swing estimates (hold where they disagree, extrapolate slower
 * turns where they agree) did not do better; docs/prediction.md lists the variants. The share of
 * a joint's own turn relative to its parent that a joint without children adds, learned per
 * joint (xg_rot_skel_rel_gain()) instead of a fixed half: 0.541 / 0.579 / 4.1 % (played
 * backwards 0.558 / 0.613 / 3.5 % -> 0.550 / 0.603 / 3.5 %). */
#include "core/predict/predict_skel.h"

#include <math.h>
#include <string.h>

void xg_rot_skel_reset(struct xg_rot_skel *s)
{
    memset(s, 0, sizeof *s);
}

/* x with (a + eps I) x = r + eps w_fit: the least-squares swing, w_fit where the bones say
 * nothing (about a single bone); 0 if singular */
static void solve(const struct xg_rot_skel *s, double x[3])
{
    const double eps = 1e-6 * s->b2;
    double m[3][3], y[3];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            m[i][j] = s->a[i][j] + (i == j ? eps : 0);
        y[i] = s->r[i] + eps * s->w_fit[i];
    }
    const double det = xg_mat3_det(m);
    if (!(fabs(det) > 0) || !isfinite(det)) {
        x[0] = x[1] = x[2] = 0;
        return;
    }
    for (int c = 0; c < 3; c++) { /* Cramer's rule */
        double mc[3][3];
        memcpy(mc, m, sizeof m);
        for (int i = 0; i < 3; i++)
            mc[i][c] = y[i];
        x[c] = xg_mat3_det(mc) / det;
    }
}

/* v split into its part across the unit axis (swing) and along it (twist) */
static void split(const double v[3], const double axis[3], double swing[3], double twist[3])
{
    const double c = xg_dot3(v, axis);
    for (int i = 0; i < 3; i++) {
        twist[i] = c * axis[i];
        swing[i] = v[i] - twist[i];
    }
}

void xg_rot_skel_sample(struct xg_rot_skel *s, int64_t t0_ns, int64_t t1_ns, const double d[3],
                        struct xg_vec3 w_fit)
{
    s->n = 0;
    s->b2 = 0;
    memset(s->a, 0, sizeof s->a);
    memset(s->r, 0, sizeof s->r);
    if (!(t0_ns > t1_ns)) {
        s->t_ns = 0;
        return;
    }
    /* an interval that did not turn (the history's stored orientation is rounded to about
     * 1e-12): no direction for the parts, which are then held; the children's velocities,
     * fitted over the window, still carry a turn that has stopped */
    const bool still = sqrt(xg_dot3(d, d)) < XG_SKEL_STILL;
    for (int i = 0; i < 3; i++)
        s->d[i] = still ? 0 : d[i];
    s->dt = (double)(t0_ns - t1_ns) * 1e-9;
    s->w_fit[0] = w_fit.x, s->w_fit[1] = w_fit.y, s->w_fit[2] = w_fit.z;
    if (!isfinite(s->w_fit[0] + s->w_fit[1] + s->w_fit[2]))
        s->w_fit[0] = s->w_fit[1] = s->w_fit[2] = 0;
    s->t_ns = t0_ns;
    s->t1_ns = t1_ns;
}

double xg_rot_skel_add(struct xg_rot_skel *s, struct xg_vec3 bone, struct xg_vec3 rel_vel,
                       struct xg_vec3 *w_out)
{
    const double b[3] = {bone.x, bone.y, bone.z}, u[3] = {rel_vel.x, rel_vel.y, rel_vel.z};
    const double bb = xg_dot3(b, b);
    if (!s->t_ns || !(bb >= XG_SKEL_BONE_MIN * XG_SKEL_BONE_MIN) || !isfinite(bb + xg_dot3(u, u)))
        return -1;
    const bool first = s->n++ == 0;
    if (first) { /* the first child's bone is the twist axis */
        const double n = sqrt(bb);
        for (int i = 0; i < 3; i++)
            s->axis[i] = b[i] / n;
    }
    double ds[3], dtw[3]; /* the interval's rotation across and about the axis */
    split(s->d, s->axis, ds, dtw);
    if (first) { /* the parts learn once per sample */
        xg_rot_learn(&s->swing, s->t_ns, s->t1_ns, ds, s->dt, XG_SKEL_SWING_HOLD_BELOW);
        xg_rot_learn(&s->twist, s->t_ns, s->t1_ns, dtw, s->dt, XG_SKEL_TWIST_HOLD_BELOW);
    }
    /* w x b = u for a rigid bone: normal equations sum (|b|² I - b bᵀ) w = sum b x u */
    const double bxu[3] = {b[1] * u[2] - b[2] * u[1], b[2] * u[0] - b[0] * u[2],
                           b[0] * u[1] - b[1] * u[0]};
    for (int i = 0; i < 3; i++) {
        s->r[i] += bxu[i];
        for (int j = 0; j < 3; j++)
            s->a[i][j] += (i == j ? bb : 0) - b[i] * b[j];
    }
    s->b2 += bb;

    double w[3], sw[3], ftw[3], unused[3];
    solve(s, w);
    split(w, s->axis, sw, unused);
    split(s->w_fit, s->axis, unused, ftw);
    struct xg_vec3 ws, wt;
    const double ks = xg_rot_decide(&s->swing, ds, sw, &ws);
    const double kt = xg_rot_decide(&s->twist, dtw, ftw, &wt);
    *w_out = xg_vec3_add(ws, wt);
    const double es = xg_dot3(s->swing.pred, s->swing.pred),
                 et = xg_dot3(s->twist.pred, s->twist.pred);
    return es + et > 0 ? (ks * es + kt * et) / (es + et) : 0;
}

double xg_rot_skel_rel_gain(struct xg_rot_state *s, int64_t t0_ns, int64_t t1_ns,
                            const double d_rel[3], double dt, const double w_rel[3])
{
    if (s->t_ns && s->t_ns == t0_ns) return s->k_learned;
    if (!(dt > 0) || !isfinite(xg_dot3(d_rel, d_rel) + xg_dot3(w_rel, w_rel))) return 0;
    /* no rate threshold for the relative turn (hold_max 0); xg_rot_decide() keeps the relative
     * rate (cleared when the interval turned against it) for the next interval's fit */
    xg_rot_learn(s, t0_ns, t1_ns, d_rel, dt, 0);
    struct xg_vec3 unused;
    xg_rot_decide(s, d_rel, w_rel, &unused);
    return s->k_learned;
}
