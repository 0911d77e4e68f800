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
 * - Damping: the fitted angular velocity w is kept only as far as it stands out of its own
 *   uncertainty: gain = 1 - ROT_SE_K x se^2 / |w|^2 (0 if negative), se = the fit's standard
 *   error from its weighted residuals; and 0 if the newest interval turned the other way (a
 *   sudden stop or a reversal: hold rather than keep spinning). */
#include "core/predict_est.h"

#include <math.h>
#include <stdbool.h>

#define ROT_TAU_S 0.01 /* s: weight of a sample = exp(age / tau), age <= 0 */
#define ROT_SE_K 2.0   /* how many squared standard errors |w|^2 must exceed to be used at all */

/* rotation vector of a ⊗ conj(b) (shortest arc) */
static void rel_rotvec(const struct xg_quat *a, const struct xg_quat *b, double r[3])
{
    const double bx = -b->x, by = -b->y, bz = -b->z, bw = b->w;
    const double ax = a->x, ay = a->y, az = a->z, aw = a->w;
    double qx = aw * bx + ax * bw + ay * bz - az * by;
    double qy = aw * by - ax * bz + ay * bw + az * bx;
    double qz = aw * bz + ax * by - ay * bx + az * bw;
    double qw = aw * bw - ax * bx - ay * by - az * bz;
    if (qw < 0) qx = -qx, qy = -qy, qz = -qz, qw = -qw;
    double s = sqrt(qx * qx + qy * qy + qz * qz);
    double k = s < 1e-12 ? 2.0 / (qw > 0 ? qw : 1.0) : 2.0 * atan2(s, qw) / s;
    r[0] = qx * k, r[1] = qy * k, r[2] = qz * k;
}

struct fit {
    double v[3], se2; /* slope at t = 0; its squared standard error (sum over axes), -1 unknown */
};

/* weighted least squares through the origin of x(t) = a t (+ b t^2); weights w[1..m-1] (NULL:
 * all 1) */
static void fit(const double *t, const double (*x)[3], unsigned m, const double *wt, bool quad,
                bool want_se, struct fit *out)
{
    double w[XG_HISTORY], s2 = 0, s3 = 0, s4 = 0, sw = 0, s1x[3] = {0}, s2x[3] = {0};
    for (unsigned i = 1; i < m; i++) {
        double ti = t[i];
        w[i] = wt ? wt[i] : 1.0;
        sw += w[i];
        s2 += w[i] * ti * ti, s3 += w[i] * ti * ti * ti, s4 += w[i] * ti * ti * ti * ti;
        for (int a = 0; a < 3; a++)
            s1x[a] += w[i] * ti * x[i][a], s2x[a] += w[i] * ti * ti * x[i][a];
    }
    double det = s2 * s4 - s3 * s3, b[3] = {0};
    quad = quad && m >= 3 && det > 1e-9 * s2 * s4;
    for (int a = 0; a < 3; a++) {
        if (quad) {
            out->v[a] = (s1x[a] * s4 - s2x[a] * s3) / det;
            b[a] = (s2 * s2x[a] - s3 * s1x[a]) / det;
        } else {
            out->v[a] = s1x[a] / s2;
        }
    }
    int dof = (int)m - 1 - (quad ? 2 : 1);
    out->se2 = -1;
    if (dof < 1 || !want_se) return;
    double rr = 0;
    for (unsigned i = 1; i < m; i++)
        for (int a = 0; a < 3; a++) {
            double e = x[i][a] - out->v[a] * t[i] - b[a] * t[i] * t[i];
            rr += w[i] * e * e;
        }
    double var = rr / sw * (double)(m - 1) / (double)dof;
    out->se2 = quad ? var * s4 / det : var / s2;
}

void xg_motion_estimate(const struct xg_hist *hist, unsigned head, unsigned n, int64_t window_ns,
                        struct xg_motion_est *out)
{
    out->velocity = out->angular_velocity = XG_VEC3_ZERO;
    out->rot_gain = 0;
    out->n_used = 0;
    if (n < 2) return;
    const struct xg_hist *h0 = &hist[(head + n - 1) % XG_HISTORY];
    double t[XG_HISTORY], p[XG_HISTORY][3], r[XG_HISTORY][3];
    int64_t tn[XG_HISTORY];
    unsigned m = 0;
    for (unsigned k = 0; k < n; k++) {
        const struct xg_hist *h = &hist[(head + n - 1 - k) % XG_HISTORY];
        if (h0->t_ns - h->t_ns > window_ns && m >= 2) break;
        tn[m] = h->t_ns;
        t[m] = (double)(h->t_ns - h0->t_ns) * 1e-9;
        p[m][0] = h->p.x - h0->p.x, p[m][1] = h->p.y - h0->p.y, p[m][2] = h->p.z - h0->p.z;
        rel_rotvec(&h->q, &h0->q, r[m]);
        m++;
    }
    /* rotation weights exp(age / tau) as a running product over the intervals: sources at a
     * fixed rate repeat the same one or two intervals, so exp() runs about twice per call */
    double wr[XG_HISTORY];
    int64_t dn[2] = {-1, -1};
    double df[2] = {1, 1};
    wr[0] = 1;
    for (unsigned i = 1; i < m; i++) {
        int64_t d = tn[i - 1] - tn[i];
        int c = d == dn[0] ? 0 : d == dn[1] ? 1 : -1;
        if (c < 0) {
            c = dn[0] < 0 ? 0 : 1;
            dn[c] = d;
            df[c] = exp(-(double)d * 1e-9 / ROT_TAU_S);
        }
        wr[i] = wr[i - 1] * df[c];
    }
    struct fit fp, fr;
    fit(t, (const double(*)[3])p, m, NULL, true, false, &fp);
    fit(t, (const double(*)[3])r, m, wr, false, true, &fr);
    out->velocity = xg_vec3_clamp((struct xg_vec3){fp.v[0], fp.v[1], fp.v[2]}, XG_VELOCITY_MAX);
    double *w = fr.v;
    double wn2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
    /* direction: the newest interval must turn the same way (r[1] is the rotation back to the
     * previous sample, t[1] < 0) */
    double dot = (w[0] * r[1][0] + w[1] * r[1][1] + w[2] * r[1][2]) / t[1];
    double g = 1;
    if (wn2 == 0)
        g = 1; /* not turning: nothing to damp */
    else if (!(dot > 0))
        g = 0;
    else if (fr.se2 >= 0)
        g = wn2 > ROT_SE_K * fr.se2 ? 1 - ROT_SE_K * fr.se2 / wn2 : 0;
    out->rot_gain = g;
    out->angular_velocity =
        xg_vec3_clamp((struct xg_vec3){g * w[0], g * w[1], g * w[2]}, XG_ANGVEL_MAX);
    out->n_used = (int)m;
}
