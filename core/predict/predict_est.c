/* Causal motion estimation (see predict_est.h).
 *
 * Tuned on the CMU walk in tests/vectors/mocap with `make bench` (bench_bvh_prediction, see
 * docs/prediction.md for the table) and kept honest by the unit tests on synthetic motion:
 * - Position: a quadratic fit over the window gives the velocity at the newest sample, where a
 *   straight-line fit gives it at the middle of the window (50 ms late): on the walk at 30 Hz
 *   the predicted position error drops from 0.23 to 0.13 x holding. The price is more
 *   sensitivity to jittered capture times (about 2.5 x the straight line's error); newest-first
 *   weights made that worse for no gain here, so all samples weigh the same.
 * - Rotation: a straight-line fit on rotation vectors with a short time constant (ROT_TAU_S: at
 *   30 Hz this is almost the newest interval alone; at 120 Hz a few samples average the capture
 *   noise). A quadratic term or an angular acceleration in the extrapolation made rotation worse
 *   on real motion (joints reverse often: foot strikes, arm swing), so there is none.
 *
 * How far the fitted angular velocity is extrapolated (a stop, a reversal, a slow unsteady turn:
 * hold) is decided by the entity table with core/predict/predict_rot.c (xg_rot_update), from the
 * fit given here (fit_angular_velocity) and the newest interval; nothing here damps it. */
#include "core/predict/predict_est.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define ROT_TAU_S 0.01 /* s: weight of a sample = exp(age / tau), age <= 0 */

/* vector part of a ⊗ conj(b), sign chosen for the shortest arc (w >= 0): parallel to its
 * rotation vector, same direction; returns w */
static double rel_axis(const struct xg_quat *a, const struct xg_quat *b, double r[3])
{
    const double bx = -b->x, by = -b->y, bz = -b->z, bw = b->w;
    const double ax = a->x, ay = a->y, az = a->z, aw = a->w;
    double qx = aw * bx + ax * bw + ay * bz - az * by;
    double qy = aw * by - ax * bz + ay * bw + az * bx;
    double qz = aw * bz + ax * by - ay * bx + az * bw;
    double qw = aw * bw - ax * bx - ay * by - az * bz;
    if (qw < 0) qx = -qx, qy = -qy, qz = -qz, qw = -qw;
    r[0] = qx, r[1] = qy, r[2] = qz;
    return qw;
}

/* rotation vector of a ⊗ conj(b) (shortest arc) */
static void rel_rotvec(const struct xg_quat *a, const struct xg_quat *b, double r[3])
{
    double q[3], qw = rel_axis(a, b, q);
    double s = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    double k = s < 1e-12 ? 2.0 / (qw > 0 ? qw : 1.0) : 2.0 * xg_atan2_nonneg(s, qw) / s;
    r[0] = q[0] * k, r[1] = q[1] * k, r[2] = q[2] * k;
}

/* weighted least squares through the origin of x(t) = a t (+ b t^2): the slope a at t = 0 in
 * v; weights w[1..m-1] (NULL: all 1) */
static void fit(const double *t, const double (*x)[3], unsigned m, const double *wt, bool quad,
                double v[3])
{
    double s2 = 0, s3 = 0, s4 = 0, s1x[3] = {0}, s2x[3] = {0};
    for (unsigned i = 1; i < m; i++) {
        double ti = t[i], w = wt ? wt[i] : 1.0;
        s2 += w * ti * ti, s3 += w * ti * ti * ti, s4 += w * ti * ti * ti * ti;
        for (int a = 0; a < 3; a++)
            s1x[a] += w * ti * x[i][a], s2x[a] += w * ti * ti * x[i][a];
    }
    double det = s2 * s4 - s3 * s3;
    quad = quad && m >= 3 && det > 1e-9 * s2 * s4;
    for (int a = 0; a < 3; a++)
        v[a] = quad ? (s1x[a] * s4 - s2x[a] * s3) / det : s1x[a] / s2;
}

/* the clamping shared by the batch and the incremental estimator: v the velocity, w the fitted
 * angular velocity, m the samples used */
static void finish(const double v[3], const double w[3], unsigned m, struct xg_motion_est *out)
{
    out->velocity = xg_vec3_clamp((struct xg_vec3){v[0], v[1], v[2]}, XG_VELOCITY_MAX);
    out->fit_angular_velocity = xg_vec3_clamp((struct xg_vec3){w[0], w[1], w[2]}, XG_ANGVEL_MAX);
    out->n_used = (int)m;
}

/* exp(-d / ROT_TAU_S) for an interval of d ns, through a two-entry cache (f[i] for the interval
 * d_ns[i]; an empty slot holds 0 and 1, exact): a source at a fixed rate repeats one interval, or
 * two when its capture times are rounded to whole ns (120 Hz: 8333333 and 8333334 ns), so exp()
 * runs about once each. A new interval goes into slot 1 when slot 0 holds its neighbour (d +- 1),
 * else into slot 0. */
static double decay(int64_t d_ns[2], double f[2], int64_t d)
{
    if (d == d_ns[0]) return f[0];
    if (d == d_ns[1]) return f[1];
    const int c = d_ns[0] == d - 1 || d_ns[0] == d + 1;
    d_ns[c] = d;
    f[c] = exp(-(double)d * 1e-9 / ROT_TAU_S);
    return f[c];
}

/* the sample k places back, decoded (k = 0 is the newest) */
static struct xg_hist ring_at(const struct xg_history *hist, unsigned k)
{
    return xg_history_pose_at(hist, k);
}

/* nothing estimated: zero velocities, held */
static void est_clear(struct xg_motion_est *out)
{
    *out = (struct xg_motion_est){.prev_q = XG_QUAT_IDENTITY};
}

void xg_motion_estimate(const struct xg_history *hist, int64_t window_ns, struct xg_motion_est *out)
{
    const unsigned n = xg_history_count(hist);
    est_clear(out);
    if (n < 2) return;
    const struct xg_hist h0v = ring_at(hist, 0), *h0 = &h0v;
    double t[XG_HISTORY], p[XG_HISTORY][3], r[XG_HISTORY][3];
    int64_t tn[XG_HISTORY];
    unsigned m = 0;
    for (unsigned k = 0; k < n; k++) {
        const struct xg_hist hv = ring_at(hist, k), *h = &hv;
        if (h0->t_ns - h->t_ns > window_ns && m >= 2) break;
        tn[m] = h->t_ns;
        t[m] = (double)(h->t_ns - h0->t_ns) * 1e-9;
        p[m][0] = h->p.x - h0->p.x, p[m][1] = h->p.y - h0->p.y, p[m][2] = h->p.z - h0->p.z;
        rel_rotvec(&h->q, &h0->q, r[m]);
        if (k == 1) { /* always used: at least two samples are */
            out->prev_t_ns = h->t_ns;
            out->prev_q = h->q;
        }
        m++;
    }
    /* rotation weights exp(age / tau) as a running product over the intervals: sources at a
     * fixed rate repeat the same one or two intervals, so exp() runs about twice per call */
    double wr[XG_HISTORY];
    int64_t dn[2] = {0, 0};
    double df[2] = {1, 1};
    wr[0] = 1;
    for (unsigned i = 1; i < m; i++)
        wr[i] = wr[i - 1] * decay(dn, df, tn[i - 1] - tn[i]);
    double v[3], w[3];
    fit(t, (const double(*)[3])p, m, NULL, true, v);
    fit(t, (const double(*)[3])r, m, wr, false, w);
    finish(v, w, m, out);
}

/* ---- incremental (issue 19 item 2) ---- */

/* add (sign +1) or remove (-1) one sample with rotation weight w */
static void acc_add(struct xg_motion_acc *a, const struct xg_hist *h, double w, double sign,
                    double R[3])
{
    double tau = (double)(h->t_ns - a->anchor_ns) * 1e-9;
    double P[3] = {h->p.x - a->anchor_p.x, h->p.y - a->anchor_p.y, h->p.z - a->anchor_p.z};
    rel_rotvec(&h->q, &a->anchor_q, R);
    double tk = 1;
    for (int k = 0; k < 5; k++, tk *= tau) {
        a->s[k] += sign * tk;
        if (k < 3)
            for (int ax = 0; ax < 3; ax++)
                a->y[k][ax] += sign * tk * P[ax];
    }
    double sw = sign * w;
    a->a[0] += sw, a->a[1] += sw * tau, a->a[2] += sw * tau * tau;
    for (int ax = 0; ax < 3; ax++)
        a->b0[ax] += sw * R[ax], a->b1[ax] += sw * tau * R[ax];
}

/* exact: anchor on the newest sample, sums over the window as xg_motion_estimate() takes it */
static void acc_rebuild(struct xg_motion_acc *a, const struct xg_history *hist, int64_t window_ns)
{
    const unsigned n = xg_history_count(hist);
    const struct xg_hist h0v = ring_at(hist, 0), *h0 = &h0v;
    const int64_t q_ns = a->newest_q_ns;
    const struct xg_quat q = a->newest_q;
    int64_t rs_ns[2]; /* exp() of the intervals: kept */
    double rs[2];
    memcpy(rs_ns, a->rescale_dt_ns, sizeof rs_ns);
    memcpy(rs, a->rescale, sizeof rs);
    memset(a, 0, sizeof *a);
    a->drop_age_ns = -1;
    a->newest_q_ns = q_ns, a->newest_q = q;
    memcpy(a->rescale_dt_ns, rs_ns, sizeof rs_ns);
    memcpy(a->rescale, rs, sizeof rs);
    a->anchor_ns = a->newest_ns = h0->t_ns;
    a->anchor_p = h0->p;
    a->anchor_q = h0->q;
    double w = 1, R[3], df[2] = {1, 1};
    int64_t dn[2] = {0, 0}, t_prev = h0->t_ns;
    for (unsigned k = 0; k < n; k++) {
        const int64_t tk = k ? xg_history_time(hist, k) : h0->t_ns;
        if (h0->t_ns - tk > window_ns && a->m >= 2) break;
        const struct xg_hist hv = k ? ring_at(hist, k) : *h0, *h = &hv;
        if (k) w *= decay(dn, df, t_prev - tk);
        t_prev = tk;
        acc_add(a, h, w, 1, R);
        a->m++;
    }
}

/* the weight exp(-age / ROT_TAU_S) of a sample age_ns older than the newest, leaving the sums. At
 * a fixed rate the age repeats to within the rounding of the capture times (a few ns): within
 * 1 µs of the last one computed, that one times the series of exp(-δ / ROT_TAU_S) to second order
 * (relative error below 2e-13), else exp(). */
static double drop_weight(struct xg_motion_acc *a, int64_t age_ns)
{
    const int64_t d = age_ns - a->drop_age_ns;
    if (a->drop_w > 0 && d >= -1000 && d <= 1000) {
        const double x = (double)d * 1e-9 / ROT_TAU_S;
        return a->drop_w * (1 - x + 0.5 * x * x);
    }
    a->drop_age_ns = age_ns, a->drop_w = exp(-(double)age_ns * 1e-9 / ROT_TAU_S);
    return a->drop_w;
}

/* J_l(φ) (left Jacobian of SO(3)): exp(φ + δ) ≈ exp(J_l(φ) δ) exp(φ) */
static void left_jacobian(const double f[3], double J[3][3])
{
    double th2 = f[0] * f[0] + f[1] * f[1] + f[2] * f[2], th = sqrt(th2), c1, c2;
    if (th < 1e-4) {
        c1 = 0.5 - th2 / 24, c2 = 1.0 / 6 - th2 / 120;
    } else {
        c1 = (1 - cos(th)) / th2, c2 = (th - sin(th)) / (th2 * th);
    }
    const double K[3][3] = {{0, -f[2], f[1]}, {f[2], 0, -f[0]}, {-f[1], f[0], 0}};
    /* K², the terms of K's zeros left out (they add only zeros, whose sign the leading
     * (i == j) + c1 K term below absorbs: J is the same to the bit) */
    const double K2[3][3] = {
        {-f[2] * f[2] + f[1] * -f[1], f[1] * f[0], f[2] * f[0]},
        {f[0] * f[1], f[2] * -f[2] + -f[0] * f[0], f[2] * f[1]},
        {f[0] * f[2], f[1] * f[2], -f[1] * f[1] + f[0] * -f[0]},
    };
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            J[i][j] = (i == j) + c1 * K[i][j] + c2 * K2[i][j];
}

/* h0, h1: the newest sample and the one before it, decoded by the caller */
static void acc_solve(const struct xg_motion_acc *a, const struct xg_hist *h0,
                      const struct xg_hist *h1, struct xg_motion_est *out)
{
    const double t0 = (double)(a->newest_ns - a->anchor_ns) * 1e-9;
    const double t02 = t0 * t0, t03 = t02 * t0, t04 = t03 * t0;
    const double *S = a->s;
    /* position: the sums recentred on the newest sample (t = τ - τ0, x = P - P0) */
    double s2 = S[2] - 2 * t0 * S[1] + t02 * S[0];
    double s3 = S[3] - 3 * t0 * S[2] + 3 * t02 * S[1] - t03 * S[0];
    double s4 = S[4] - 4 * t0 * S[3] + 6 * t02 * S[2] - 4 * t03 * S[1] + t04 * S[0];
    double s1 = S[1] - t0 * S[0];
    double P0[3] = {h0->p.x - a->anchor_p.x, h0->p.y - a->anchor_p.y, h0->p.z - a->anchor_p.z};
    double det = s2 * s4 - s3 * s3, v[3];
    bool quad = a->m >= 3 && det > 1e-9 * s2 * s4;
    for (int ax = 0; ax < 3; ax++) {
        double tp = a->y[1][ax] - t0 * a->y[0][ax];
        double t2p = a->y[2][ax] - 2 * t0 * a->y[1][ax] + t02 * a->y[0][ax];
        double s1x = tp - P0[ax] * s1, s2x = t2p - P0[ax] * s2;
        v[ax] = quad ? (s1x * s4 - s2x * s3) / det : s1x / s2;
    }
    /* rotation: D = R - R0 around the newest, mapped to rotation vectors relative to it by the
     * left Jacobian at R0 (exact to first order in D, and exactly when D is parallel to R0) */
    const double *R0 = a->r0, *A = a->a;
    double st2 = A[2] - 2 * t0 * A[1] + t02 * A[0], sd[3], w[3];
    for (int ax = 0; ax < 3; ax++)
        sd[ax] = a->b1[ax] - t0 * a->b0[ax] - R0[ax] * A[1] + t0 * R0[ax] * A[0];
    double J[3][3], js[3];
    left_jacobian(R0, J);
    for (int i = 0; i < 3; i++)
        js[i] = J[i][0] * sd[0] + J[i][1] * sd[1] + J[i][2] * sd[2];
    for (int ax = 0; ax < 3; ax++) /* st2 = 0: NAN, as the batch fit's 0 / 0 */
        w[ax] = st2 > 0 ? js[ax] / st2 : NAN;
    finish(v, w, a->m, out);
    out->prev_t_ns = h1->t_ns;
    out->prev_q = h1->q;
}

void xg_motion_update(struct xg_motion_acc *acc, const struct xg_history *hist,
                      const struct xg_hist *evicted, int64_t window_ns, struct xg_motion_est *out)
{
    const unsigned n = xg_history_count(hist);
    if (n < 2) {
        est_clear(out);
        acc->newest_ns = 0, acc->m = 0;
        return;
    } /* else acc_solve() writes every field of *out (no clearing first: a 96-byte memset was a
       * tenth of this function's time) */
    const struct xg_hist h0v = ring_at(hist, 0), *h0 = &h0v;
    if (acc->m && acc->newest_ns == h0->t_ns) {
        /* no new sample: the sums stand */
    } else if (!acc->m || xg_history_time(hist, 1) != acc->newest_ns ||
               /* an anchor two windows old (one window rebuilt as often: the rebuilds cost as
                * much as the pushes; test_predict_inc's bounds hold either way) */
               h0->t_ns - acc->anchor_ns > 2 * window_ns || acc->pushes >= XG_HISTORY) {
        acc_rebuild(acc, hist, window_ns);
    } else {
        double R[3];
        if (evicted && acc->m >= n) { /* the ring overwrote a sample of the window */
            acc_add(acc, evicted, drop_weight(acc, acc->newest_ns - evicted->t_ns), -1, R);
            acc->m--;
        }
        const double f = decay(acc->rescale_dt_ns, acc->rescale, h0->t_ns - acc->newest_ns);
        for (int i = 0; i < 3; i++)
            acc->a[i] *= f, acc->b0[i] *= f, acc->b1[i] *= f;
        acc_add(acc, h0, 1, 1, acc->r0);
        acc->m++;
        acc->newest_ns = h0->t_ns;
        acc->pushes++;
        while (acc->m > 2) {
            if (h0->t_ns - xg_history_time(hist, acc->m - 1) <= window_ns) break;
            const struct xg_hist ov = ring_at(hist, acc->m - 1), *o = &ov;
            acc_add(acc, o, drop_weight(acc, h0->t_ns - o->t_ns), -1, R);
            acc->m--;
        }
    }
    struct xg_hist h1 = {.t_ns = xg_history_time(hist, 1)};
    if (h1.t_ns == acc->newest_q_ns && acc->newest_q_ns) /* decoded as the newest last time */
        h1.q = acc->newest_q;
    else
        h1 = ring_at(hist, 1);
    acc_solve(acc, h0, &h1, out);
    acc->newest_q_ns = h0->t_ns;
    acc->newest_q = h0->q;
}
