/* Space calibration solver (core/calib/calib_solve.h; docs/calibration.md "Method"). */
#include "core/calib/calib_solve.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/calib/calib_linalg.h"

#define GRID_NS 5000000      /* angular-speed grid, 5 ms */
#define SPEED_H_NS 20000000  /* half-baseline of the angular-speed difference, 20 ms */
#define MAX_GAP_NS 100000000 /* widest gap between samples interpolated across, 100 ms */
#define MIN_PAIRS 20

void xg_calib_opts_default(struct xg_calib_opts *o)
{
    o->max_offset_s = 0.5;
    o->min_overlap_s = 4.0;
    o->max_pairs = 2000;
    o->min_spread_rad = 10.0 * M_PI / 180.0;
}

/* ---- transforms ---- */

struct xg_vec3 xg_calib_xf_point(const struct xg_calib_xf *xf, struct xg_vec3 p)
{
    return xg_vec3_add(xg_quat_rotate(xf->q, p), xf->t);
}

struct xg_calib_xf xg_calib_xf_mul(const struct xg_calib_xf *a, const struct xg_calib_xf *b)
{
    return (struct xg_calib_xf){xg_calib_xf_point(a, b->t),
                                xg_quat_normalize(xg_quat_mul(a->q, b->q))};
}

struct xg_calib_xf xg_calib_xf_inv(const struct xg_calib_xf *a)
{
    struct xg_quat qi = xg_quat_conj(a->q);
    return (struct xg_calib_xf){xg_vec3_scale(xg_quat_rotate(qi, a->t), -1.0), qi};
}

/* ---- streams ---- */

struct stream {
    struct xg_calib_sample *s;
    size_t n;
};

/* A copy of the finite samples with strictly increasing times. */
static int clean(const struct xg_calib_sample *in, size_t n, struct stream *out)
{
    out->n = 0;
    out->s = n ? malloc(n * sizeof *out->s) : NULL;
    if (n && !out->s) return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const struct xg_calib_sample *x = &in[i];
        if (!xg_vec3_finite(x->p) || !xg_quat_finite(x->q)) continue;
        double qn = sqrt(xg_quat_dot(x->q, x->q));
        if (!(qn > 1e-6 && qn < 1e6)) continue;
        if (out->n && x->t_ns <= out->s[out->n - 1].t_ns) continue;
        out->s[out->n] = *x;
        out->s[out->n].q = xg_quat_normalize(x->q);
        out->n++;
    }
    return 0;
}

/* The pose of stream s at time t (interpolated between the samples around it, which must be at
 * most MAX_GAP_NS apart): 0, or -1 outside the stream or across a gap. */
static int interp(const struct stream *s, int64_t t, struct xg_vec3 *p, struct xg_quat *q)
{
    if (s->n < 2 || t < s->s[0].t_ns || t > s->s[s->n - 1].t_ns) return -1;
    size_t lo = 0, hi = s->n - 1; /* s[lo].t <= t <= s[hi].t */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->s[mid].t_ns <= t)
            lo = mid;
        else
            hi = mid;
    }
    const struct xg_calib_sample *a = &s->s[lo], *b = &s->s[hi];
    if (b->t_ns - a->t_ns > MAX_GAP_NS) return -1;
    double u = (double)(t - a->t_ns) / (double)(b->t_ns - a->t_ns);
    if (p) *p = xg_vec3_lerp(a->p, b->p, u);
    if (q) *q = xg_quat_slerp(a->q, b->q, u);
    return 0;
}

/* Angular speed (rad/s) of s at t from the orientations at t ± SPEED_H_NS; NAN where unknown. */
static double speed(const struct stream *s, int64_t t)
{
    struct xg_quat q0, q1;
    if (interp(s, t - SPEED_H_NS, NULL, &q0) || interp(s, t + SPEED_H_NS, NULL, &q1)) return NAN;
    return xg_quat_angle_between(q0, q1) / (2e-9 * SPEED_H_NS);
}

static int offset_clean(const struct stream *ref, const struct stream *tgt,
                        const struct xg_calib_opts *o, double *offset_s, double *peak)
{
    if (ref->n < MIN_PAIRS || tgt->n < MIN_PAIRS) return -EAGAIN;
    int64_t r0 = ref->s[0].t_ns, r1 = ref->s[ref->n - 1].t_ns;
    int64_t t0 = tgt->s[0].t_ns, t1 = tgt->s[tgt->n - 1].t_ns;
    int64_t ov = (r1 < t1 ? r1 : t1) - (r0 > t0 ? r0 : t0);
    if ((double)ov * 1e-9 < o->min_overlap_s) return -EAGAIN;
    size_t na = (size_t)((r1 - r0) / GRID_NS) + 1, nb = (size_t)((t1 - t0) / GRID_NS) + 1;
    /* the target's grid in the reference's phase: tb_j = r0 + (m + j)·GRID */
    int64_t m = (t0 - r0) / GRID_NS;
    double *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return -ENOMEM;
    }
    for (size_t k = 0; k < na; k++)
        a[k] = speed(ref, r0 + (int64_t)k * GRID_NS);
    for (size_t j = 0; j < nb; j++)
        b[j] = speed(tgt, r0 + (m + (int64_t)j) * GRID_NS);
    long lmax = (long)(o->max_offset_s * 1e9 / GRID_NS);
    size_t min_n = (size_t)(o->min_overlap_s * 0.5e9 / GRID_NS);
    double *c = malloc((size_t)(2 * lmax + 1) * sizeof *c);
    if (!c) {
        free(a);
        free(b);
        return -ENOMEM;
    }
    long best = -1;
    for (long L = -lmax; L <= lmax; L++) {
        /* a_k with b_j at the same physical moment: target time = reference time + L·GRID */
        double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
        size_t cnt = 0;
        for (size_t k = 0; k < na; k++) {
            long j = (long)k + L - (long)m;
            if (j < 0 || (size_t)j >= nb || isnan(a[k]) || isnan(b[j])) continue;
            sa += a[k];
            sb += b[j];
            sab += a[k] * b[j];
            saa += a[k] * a[k];
            sbb += b[j] * b[j];
            cnt++;
        }
        double v = NAN;
        if (cnt >= min_n && cnt > 2) {
            double ma = sa / (double)cnt, mb = sb / (double)cnt;
            double va = saa / (double)cnt - ma * ma, vb = sbb / (double)cnt - mb * mb;
            /* some rotation speed variation is needed: 0.05 rad/s standard deviation */
            if (va > 0.0025 && vb > 0.0025) v = (sab / (double)cnt - ma * mb) / sqrt(va * vb);
        }
        c[L + lmax] = v;
        if (!isnan(v) && (best < 0 || v > c[best])) best = L + lmax;
    }
    int rc = 0;
    if (best <= 0 || best >= 2 * lmax || isnan(c[best - 1]) || isnan(c[best + 1]) ||
        c[best] < 0.3) {
        rc = -EAGAIN; /* no clear peak inside the searched range */
    } else {
        double cm = c[best - 1], c0 = c[best], cp = c[best + 1];
        double den = cm - 2 * c0 + cp, d = den < 0 ? 0.5 * (cm - cp) / den : 0;
        if (d > 0.5) d = 0.5;
        if (d < -0.5) d = -0.5;
        *offset_s = ((double)(best - lmax) + d) * GRID_NS * 1e-9;
        if (peak) *peak = c0;
    }
    free(a);
    free(b);
    free(c);
    return rc;
}

int xg_calib_time_offset(const struct xg_calib_sample *ref, size_t n_ref,
                         const struct xg_calib_sample *tgt, size_t n_tgt,
                         const struct xg_calib_opts *o, double *offset_s, double *peak)
{
    struct xg_calib_opts def;
    if (!o) xg_calib_opts_default(&def);
    if (!o) o = &def;
    if ((!ref && n_ref) || (!tgt && n_tgt) || !offset_s) return -EINVAL;
    struct stream r, t;
    int rc = clean(ref, n_ref, &r);
    if (!rc && (rc = clean(tgt, n_tgt, &t))) free(r.s);
    if (rc) return rc;
    rc = offset_clean(&r, &t, o, offset_s, peak);
    free(r.s);
    free(t.s);
    return rc;
}

/* ---- pairs ---- */

struct pair {
    struct xg_vec3 ta, tb;
    struct xg_quat qa, qb;
    double ra[3][3];
    struct xg_vec3 wa; /* the reference's world-frame angular velocity at the pair, rad/s */
};

static size_t make_pairs(const struct stream *ref, const struct stream *tgt, double offset_s,
                         size_t max_pairs, struct pair *out)
{
    size_t stride = ref->n > max_pairs ? (ref->n + max_pairs - 1) / max_pairs : 1, n = 0;
    int64_t off = (int64_t)llround(offset_s * 1e9);
    for (size_t i = 0; i < ref->n && n < max_pairs; i += stride) {
        struct pair *p = &out[n];
        struct xg_quat q0, q1;
        int64_t t = ref->s[i].t_ns;
        if (interp(tgt, t + off, &p->tb, &p->qb) || interp(ref, t - SPEED_H_NS, NULL, &q0) ||
            interp(ref, t + SPEED_H_NS, NULL, &q1))
            continue;
        p->wa = xg_quat_angular_velocity(q0, q1, 2e-9 * SPEED_H_NS);
        p->ta = ref->s[i].p;
        p->qa = ref->s[i].q;
        xg_quat_to_mat3(p->qa, p->ra);
        n++;
    }
    return n;
}

/* ---- residuals ---- */

/* rotation residual e = log(q_A ⊗ q_X ⊗ (q_Y ⊗ q_B)*), position residual A·X − Y·B */
static struct xg_vec3 rot_res(const struct pair *p, struct xg_quat qx, struct xg_quat qy)
{
    struct xg_quat l = xg_quat_mul(p->qa, qx), r = xg_quat_mul(qy, p->qb);
    return xg_quat_log(xg_quat_normalize(xg_quat_mul(l, xg_quat_conj(r))));
}

static struct xg_vec3 pos_res(const struct pair *p, const struct xg_calib_xf *x,
                              const struct xg_calib_xf *y)
{
    struct xg_vec3 ax = xg_vec3_add(xg_quat_rotate(p->qa, x->t), p->ta);
    return xg_vec3_sub(ax, xg_calib_xf_point(y, p->tb));
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Huber weights: 1 within k = 2·median(|r|) (at least floor), k/|r| beyond. */
static void huber(const double *mag, size_t n, double floor_k, double *w, double *tmp)
{
    memcpy(tmp, mag, n * sizeof *tmp);
    qsort(tmp, n, sizeof *tmp, cmp_d);
    double k = 2 * tmp[n / 2];
    if (k < floor_k) k = floor_k;
    for (size_t i = 0; i < n; i++)
        w[i] = mag[i] <= k ? 1.0 : k / mag[i];
}

/* Accumulate w·Jᵀ J and w·Jᵀ e for J = [R_A  −I] (6×6, 6). */
static void acc_normal(double h[36], double g[6], const double ra[3][3], struct xg_vec3 e, double w)
{
    double ev[3] = {e.x, e.y, e.z};
    double j[3][6];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            j[r][c] = ra[r][c];
            j[r][c + 3] = r == c ? -1.0 : 0.0;
        }
    for (int a = 0; a < 6; a++) {
        for (int b = 0; b < 6; b++) {
            double s = 0;
            for (int r = 0; r < 3; r++)
                s += j[r][a] * j[r][b];
            h[a * 6 + b] += w * s;
        }
        if (g) {
            double s = 0;
            for (int r = 0; r < 3; r++)
                s += j[r][a] * ev[r];
            g[a] += w * s;
        }
    }
}

/* Observability from the eigenvalues of N = Σ JᵀJ / n. */
static void observability(const struct pair *p, size_t n, const struct xg_calib_opts *o,
                          struct xg_calib_result *r)
{
    double h[36] = {0}, val[6], vec[36];
    for (size_t i = 0; i < n; i++)
        acc_normal(h, NULL, p[i].ra, XG_VEC3_ZERO, 1.0 / (double)n);
    r->unobservable = 0;
    r->eigen_min = 0;
    if (xg_la_eigen_sym(6, h, val, vec)) {
        r->unobservable = XG_CALIB_UNOBS_X | XG_CALIB_UNOBS_Y | XG_CALIB_UNOBS_Z;
        return;
    }
    r->eigen_min = val[0];
    double thr = 1 - cos(o->min_spread_rad);
    for (int j = 0; j < 6 && val[j] < thr; j++) {
        double b[3] = {fabs(vec[3 * 6 + j]), fabs(vec[4 * 6 + j]), fabs(vec[5 * 6 + j])};
        int ax = b[0] >= b[1] && b[0] >= b[2] ? 0 : b[1] >= b[2] ? 1 : 2;
        r->unobservable |= 1u << ax;
    }
}

/* RMS rotation of the reference stream about its frame's axes, around its chordal mean. */
static void spread(const struct pair *p, size_t n, double out[3])
{
    double m[3][3] = {{0}}, rm[3][3];
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                m[a][b] += p[i].ra[a][b];
    struct xg_quat mean = p[0].qa;
    if (!xg_la_nearest_rotation(m, rm)) mean = xg_quat_from_mat3(rm);
    double s[3] = {0};
    for (size_t i = 0; i < n; i++) {
        struct xg_vec3 v = xg_quat_log(xg_quat_mul(p[i].qa, xg_quat_conj(mean)));
        s[0] += v.x * v.x;
        s[1] += v.y * v.y;
        s[2] += v.z * v.z;
    }
    for (int k = 0; k < 3; k++)
        out[k] = sqrt(s[k] / (double)n);
}

/* Shah (2013): vec(R_Y) = K vec(R_X), K = Σ R_A ⊗ R_B / n (row-major vec); the leading right
 * singular vector of K gives R_X, K times it R_Y, both projected onto SO(3). */
static int shah_rotation(const struct pair *p, size_t n, struct xg_quat *qx, struct xg_quat *qy)
{
    double k[81] = {0};
    for (size_t i = 0; i < n; i++) {
        double rb[3][3];
        xg_quat_to_mat3(p[i].qb, rb);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                for (int c = 0; c < 3; c++)
                    for (int d = 0; d < 3; d++)
                        k[(a * 3 + b) * 9 + c * 3 + d] += p[i].ra[a][c] * rb[b][d] / (double)n;
    }
    double ktk[81], val[9], vec[81];
    for (int a = 0; a < 9; a++)
        for (int b = 0; b < 9; b++) {
            double s = 0;
            for (int r = 0; r < 9; r++)
                s += k[r * 9 + a] * k[r * 9 + b];
            ktk[a * 9 + b] = s;
        }
    if (xg_la_eigen_sym(9, ktk, val, vec)) return -EINVAL;
    double v[9], mx[3][3], my[3][3], rx[3][3], ry[3][3];
    for (int a = 0; a < 9; a++)
        v[a] = vec[a * 9 + 8];
    for (int a = 0; a < 9; a++)
        mx[a / 3][a % 3] = v[a];
    if (xg_mat3_det(mx) < 0)
        for (int a = 0; a < 9; a++)
            mx[a / 3][a % 3] = v[a] = -v[a];
    for (int a = 0; a < 9; a++) {
        double s = 0;
        for (int b = 0; b < 9; b++)
            s += k[a * 9 + b] * v[b];
        my[a / 3][a % 3] = s;
    }
    if (xg_la_nearest_rotation(mx, rx) || xg_la_nearest_rotation(my, ry)) return -EDOM;
    *qx = xg_quat_from_mat3(rx);
    *qy = xg_quat_from_mat3(ry);
    return 0;
}

/* Translations given the rotations: Huber-weighted least squares of R_A t_X − t_Y = R_Y t_B − t_A,
 * reweighted `iters` times (weights from the previous solution). */
static int solve_translation(const struct pair *p, size_t n, struct xg_calib_xf *x,
                             struct xg_calib_xf *y, int iters, double *w, double *mag, double *tmp)
{
    for (size_t i = 0; i < n; i++)
        w[i] = 1;
    for (int it = 0; it < iters; it++) {
        double h[36] = {0}, g[6] = {0}, z[6];
        for (size_t i = 0; i < n; i++) {
            /* c = R_Y t_B − t_A; rows [R_A −I] z = c: accumulate Jᵀ J and Jᵀ c */
            struct xg_vec3 c = xg_vec3_sub(xg_quat_rotate(y->q, p[i].tb), p[i].ta);
            acc_normal(h, g, p[i].ra, c, w[i]);
        }
        if (xg_la_solve(6, h, g, z)) return -EDOM;
        x->t = (struct xg_vec3){z[0], z[1], z[2]};
        y->t = (struct xg_vec3){z[3], z[4], z[5]};
        for (size_t i = 0; i < n; i++)
            mag[i] = xg_vec3_norm(pos_res(&p[i], x, y));
        huber(mag, n, 1e-4, w, tmp);
    }
    return 0;
}

/* Gauss-Newton on SO(3)×SO(3)×time: q_X ← exp(a) q_X, q_Y ← exp(b) q_Y, offset ← offset + Δ with
 * e ≈ e0 + R_A a − b − ω_A Δ (moving the target's sampling by Δ turns the pair by the object's
 * rotation in Δ); Huber weights; the pairs are made again at the new offset each iteration.
 * Returns the number of pairs of the last iteration in *n. */
static int refine_rotation(const struct stream *sr, const struct stream *st, size_t cap,
                           struct pair *p, size_t *n, struct xg_calib_result *r, double *w,
                           double *mag, double *tmp)
{
    for (int it = 0; it < 12; it++) {
        if (it) *n = make_pairs(sr, st, r->time_offset_s, cap, p);
        if (*n < MIN_PAIRS) return -EAGAIN;
        double h[49] = {0}, g[7] = {0}, d[7];
        for (size_t i = 0; i < *n; i++)
            mag[i] = xg_vec3_norm(rot_res(&p[i], r->x.q, r->y.q));
        huber(mag, *n, 1e-4, w, tmp);
        for (size_t i = 0; i < *n; i++) {
            struct xg_vec3 e = rot_res(&p[i], r->x.q, r->y.q);
            double ev[3] = {e.x, e.y, e.z}, wa[3] = {p[i].wa.x, p[i].wa.y, p[i].wa.z}, j[3][7];
            for (int a = 0; a < 3; a++) {
                for (int c = 0; c < 3; c++) {
                    j[a][c] = p[i].ra[a][c];
                    j[a][c + 3] = a == c ? -1.0 : 0.0;
                }
                j[a][6] = -wa[a];
            }
            for (int a = 0; a < 7; a++) {
                for (int b = 0; b < 7; b++)
                    h[a * 7 + b] +=
                        w[i] * (j[0][a] * j[0][b] + j[1][a] * j[1][b] + j[2][a] * j[2][b]);
                g[a] -= w[i] * (j[0][a] * ev[0] + j[1][a] * ev[1] + j[2][a] * ev[2]);
            }
        }
        if (xg_la_solve(7, h, g, d)) return -EDOM;
        r->x.q =
            xg_quat_normalize(xg_quat_mul(xg_quat_exp((struct xg_vec3){d[0], d[1], d[2]}), r->x.q));
        r->y.q =
            xg_quat_normalize(xg_quat_mul(xg_quat_exp((struct xg_vec3){d[3], d[4], d[5]}), r->y.q));
        if (fabs(d[6]) > 0.05) d[6] = d[6] > 0 ? 0.05 : -0.05; /* a step of at most 50 ms */
        r->time_offset_s += d[6];
        double step = 0;
        for (int a = 0; a < 6; a++)
            step += d[a] * d[a];
        if (step < 1e-16 && fabs(d[6]) < 1e-6) break;
    }
    return 0;
}

/* Joint Gauss-Newton over rotations and translations (the time offset fixed): rotation residuals
 * scaled by 1/σ_rad and position residuals by 1/σ_m (each σ the RMS of its residuals before the
 * step), Huber weights per pair on each, parameters [a b t_X t_Y] with
 *   e_rot ≈ e0 + R_A a − b,   e_pos ≈ e0 + [R_Y t_B]× b + R_A t_X − t_Y.
 * The positions then help to pin R_Y (the object's path has a size), not only the rotations. */
static int refine_joint(const struct pair *p, size_t n, struct xg_calib_xf *x,
                        struct xg_calib_xf *y, double *w, double *mag, double *tmp)
{
    double *wp = malloc(n * sizeof *wp);
    if (!wp) return -ENOMEM;
    int rc = 0;
    for (int it = 0; it < 6 && !rc; it++) {
        double sr = 0, sp = 0;
        for (size_t i = 0; i < n; i++) {
            double er = xg_vec3_norm(rot_res(&p[i], x->q, y->q));
            double ep = xg_vec3_norm(pos_res(&p[i], x, y));
            sr += er * er;
            sp += ep * ep;
            mag[i] = er;
        }
        double ir = 1 / fmax(sqrt(sr / (double)n), 1e-6), ip = 1 / fmax(sqrt(sp / (double)n), 1e-6);
        huber(mag, n, 1e-4, w, tmp);
        for (size_t i = 0; i < n; i++)
            mag[i] = xg_vec3_norm(pos_res(&p[i], x, y));
        huber(mag, n, 1e-4, wp, tmp);
        double h[144] = {0}, g[12] = {0}, d[12];
        for (size_t i = 0; i < n; i++) {
            struct xg_vec3 er = rot_res(&p[i], x->q, y->q), ep = pos_res(&p[i], x, y);
            struct xg_vec3 u = xg_quat_rotate(y->q, p[i].tb);
            double skew[3][3] = {{0, -u.z, u.y}, {u.z, 0, -u.x}, {-u.y, u.x, 0}};
            double j[6][12] = {{0}},
                   e[6] = {er.x * ir, er.y * ir, er.z * ir, ep.x * ip, ep.y * ip, ep.z * ip};
            double wt[6] = {w[i], w[i], w[i], wp[i], wp[i], wp[i]};
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) {
                    j[r][c] = p[i].ra[r][c] * ir;                 /* rot / a */
                    j[r][3 + c] = (r == c ? -1.0 : 0.0) * ir;     /* rot / b */
                    j[3 + r][3 + c] = skew[r][c] * ip;            /* pos / b */
                    j[3 + r][6 + c] = p[i].ra[r][c] * ip;         /* pos / t_X */
                    j[3 + r][9 + c] = (r == c ? -1.0 : 0.0) * ip; /* pos / t_Y */
                }
            /* rows 0-2 (rotation) touch columns 0-5 only, rows 3-5 (position) columns 3-11 */
            for (int r = 0; r < 6; r++) {
                int lo = r < 3 ? 0 : 3, hi = r < 3 ? 6 : 12;
                for (int a = lo; a < hi; a++) {
                    double ja = wt[r] * j[r][a];
                    for (int b = a; b < hi; b++)
                        h[a * 12 + b] += ja * j[r][b];
                    g[a] -= ja * e[r];
                }
            }
        }
        for (int a = 0; a < 12; a++)
            for (int b = 0; b < a; b++)
                h[a * 12 + b] = h[b * 12 + a];
        if ((rc = xg_la_solve(12, h, g, d))) break;
        x->q =
            xg_quat_normalize(xg_quat_mul(xg_quat_exp((struct xg_vec3){d[0], d[1], d[2]}), x->q));
        y->q =
            xg_quat_normalize(xg_quat_mul(xg_quat_exp((struct xg_vec3){d[3], d[4], d[5]}), y->q));
        x->t = xg_vec3_add(x->t, (struct xg_vec3){d[6], d[7], d[8]});
        y->t = xg_vec3_add(y->t, (struct xg_vec3){d[9], d[10], d[11]});
        double step = 0;
        for (int a = 0; a < 12; a++)
            step += d[a] * d[a];
        if (step < 1e-14) break; /* 1e-7 rad, 0.1 µm */
    }
    free(wp);
    return rc;
}

static void stats(const struct pair *p, size_t n, const struct xg_calib_xf *x,
                  const struct xg_calib_xf *y, double *rms_m, double *rms_rad, double *max_m,
                  double *max_rad)
{
    double sm = 0, sr = 0, mm = 0, mr = 0;
    for (size_t i = 0; i < n; i++) {
        double em = xg_vec3_norm(pos_res(&p[i], x, y));
        double er = xg_vec3_norm(rot_res(&p[i], x->q, y->q));
        sm += em * em;
        sr += er * er;
        if (em > mm) mm = em;
        if (er > mr) mr = er;
    }
    *rms_m = n ? sqrt(sm / (double)n) : 0;
    *rms_rad = n ? sqrt(sr / (double)n) : 0;
    if (max_m) *max_m = mm;
    if (max_rad) *max_rad = mr;
}

int xg_calib_solve(const struct xg_calib_sample *ref, size_t n_ref,
                   const struct xg_calib_sample *tgt, size_t n_tgt, const struct xg_calib_opts *o,
                   struct xg_calib_result *r)
{
    struct xg_calib_opts def;
    if (!o) xg_calib_opts_default(&def);
    if (!o) o = &def;
    if (!r || (!ref && n_ref) || (!tgt && n_tgt) || o->max_pairs < MIN_PAIRS) return -EINVAL;
    memset(r, 0, sizeof *r);
    r->y.q = r->x.q = XG_QUAT_IDENTITY;
    struct stream sr = {0}, st = {0};
    struct pair *p = NULL;
    double *w = NULL, *mag = NULL, *tmp = NULL;
    int rc = clean(ref, n_ref, &sr);
    if (!rc) rc = clean(tgt, n_tgt, &st);
    if (!rc) rc = offset_clean(&sr, &st, o, &r->time_offset_s, NULL);
    if (rc) goto out;
    size_t cap = o->max_pairs < sr.n ? o->max_pairs : sr.n;
    p = malloc(cap * sizeof *p);
    w = malloc(cap * sizeof *w);
    mag = malloc(cap * sizeof *mag);
    tmp = malloc(cap * sizeof *tmp);
    if (!p || !w || !mag || !tmp) {
        rc = -ENOMEM;
        goto out;
    }
    size_t n = make_pairs(&sr, &st, r->time_offset_s, cap, p);
    r->pairs = n;
    if (n < MIN_PAIRS) {
        rc = -EAGAIN;
        goto out;
    }
    spread(p, n, r->spread_rad);
    observability(p, n, o, r);
    if (r->unobservable) {
        rc = -EDOM;
        goto out;
    }
    if ((rc = shah_rotation(p, n, &r->x.q, &r->y.q)) ||
        (rc = solve_translation(p, n, &r->x, &r->y, 1, w, mag, tmp)) ||
        (rc = refine_rotation(&sr, &st, cap, p, &n, r, w, mag, tmp)) ||
        (rc = solve_translation(p, n, &r->x, &r->y, 5, w, mag, tmp)) ||
        (rc = refine_joint(p, n, &r->x, &r->y, w, mag, tmp)))
        goto out;
    r->pairs = n;
    stats(p, n, &r->x, &r->y, &r->residual_m, &r->residual_rad, &r->max_residual_m,
          &r->max_residual_rad);
    if (!xg_vec3_finite(r->x.t) || !xg_vec3_finite(r->y.t) || !xg_quat_finite(r->x.q) ||
        !xg_quat_finite(r->y.q) || !isfinite(r->residual_m) || !isfinite(r->residual_rad))
        rc = -EINVAL;
out:
    free(sr.s);
    free(st.s);
    free(p);
    free(w);
    free(mag);
    free(tmp);
    return rc;
}

int xg_calib_residuals(const struct xg_calib_sample *ref, size_t n_ref,
                       const struct xg_calib_sample *tgt, size_t n_tgt,
                       const struct xg_calib_result *sol, size_t max_pairs, double *rms_m,
                       double *rms_rad, size_t *pairs)
{
    if (!sol || !rms_m || !rms_rad || !max_pairs) return -EINVAL;
    struct stream sr = {0}, st = {0};
    struct pair *p = NULL;
    int rc = clean(ref, n_ref, &sr);
    if (!rc) rc = clean(tgt, n_tgt, &st);
    size_t cap = max_pairs < sr.n ? max_pairs : sr.n, n = 0;
    if (!rc && cap && !(p = malloc(cap * sizeof *p))) rc = -ENOMEM;
    if (!rc && cap) n = make_pairs(&sr, &st, sol->time_offset_s, cap, p);
    if (!rc && n < 10) rc = -EAGAIN;
    if (!rc) stats(p, n, &sol->x, &sol->y, rms_m, rms_rad, NULL, NULL);
    if (pairs) *pairs = n;
    free(sr.s);
    free(st.s);
    free(p);
    return rc;
}
