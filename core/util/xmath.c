#include "core/util/xmath.h"

#include <math.h>

struct xg_quat xg_quat_from_axis_angle(struct xg_vec3 axis, double angle)
{
    double n = xg_vec3_norm(axis);
    if (!(n > 0.0)) return XG_QUAT_IDENTITY;
    double s = sin(angle * 0.5) / n;
    return (struct xg_quat){axis.x * s, axis.y * s, axis.z * s, cos(angle * 0.5)};
}

struct xg_quat xg_quat_exp(struct xg_vec3 v)
{
    double th = xg_vec3_norm(v);
    double h = 0.5 * th;
    /* sin(h)/th, with a series near zero */
    double k = th < 1e-8 ? 0.5 - th * th / 48.0 : sin(h) / th;
    return (struct xg_quat){v.x * k, v.y * k, v.z * k, cos(h)};
}

/* atan(x) for x >= 0: Cephes' atan (S. L. Moshier, Cephes Math Library): the argument reduced to
 * [0, 0.66], a rational function of degree 4 / 5 in x² there; 1 ulp over the range */
static double atan_nonneg(double x)
{
    static const double P[5] = {-8.750608600031904122785E-1, -1.615753718733365076637E1,
                                -7.500855792314704667340E1, -1.228866684490136173410E2,
                                -6.485021904942025371773E1};
    static const double Q[5] = {2.485846490142306297962E1, 1.650270098316988542046E2,
                                4.328810604912902668951E2, 4.853903996359136964868E2,
                                1.945506571482613964425E2};
    const double T3P8 = 2.41421356237309504880, MOREBITS = 6.123233995736765886130E-17;
    double y, extra;
    if (x > T3P8) { /* atan(x) = π/2 - atan(1/x) */
        y = 1.57079632679489661923, extra = MOREBITS, x = -1.0 / x;
    } else if (x <= 0.66) {
        y = 0, extra = 0;
    } else { /* atan(x) = π/4 + atan((x - 1) / (x + 1)) */
        y = 0.78539816339744830962, extra = 0.5 * MOREBITS, x = (x - 1.0) / (x + 1.0);
    }
    const double z = x * x;
    const double p = (((P[0] * z + P[1]) * z + P[2]) * z + P[3]) * z + P[4];
    const double q = ((((z + Q[0]) * z + Q[1]) * z + Q[2]) * z + Q[3]) * z + Q[4];
    return y + (x * (z * p / q) + x + extra);
}

double xg_atan2_nonneg(double y, double x)
{
    if (y <= x) return x > 0 ? atan_nonneg(y / x) : 0;  /* (0, 0): 0 */
    return 1.57079632679489661923 - atan_nonneg(x / y); /* NaN: NaN */
}

struct xg_vec3 xg_quat_log(struct xg_quat q)
{
    if (q.w < 0) /* shortest: same rotation, angle <= π */
        q = (struct xg_quat){-q.x, -q.y, -q.z, -q.w};
    double s = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
    double th = 2.0 * xg_atan2_nonneg(s, q.w);
    double k = s < 1e-12 ? 2.0 / (q.w > 0 ? q.w : 1.0) : th / s;
    return (struct xg_vec3){q.x * k, q.y * k, q.z * k};
}

struct xg_quat xg_quat_slerp(struct xg_quat a, struct xg_quat b, double t)
{
    if (xg_quat_dot(a, b) < 0.0) b = (struct xg_quat){-b.x, -b.y, -b.z, -b.w};
    /* a ⊗ exp(t · log(a* ⊗ b)) works for any t, including extrapolation */
    struct xg_quat d = xg_quat_mul(xg_quat_conj(a), b);
    struct xg_vec3 l = xg_quat_log(d);
    return xg_quat_normalize(xg_quat_mul(a, xg_quat_exp(xg_vec3_scale(l, t))));
}

double xg_quat_angle_between(struct xg_quat a, struct xg_quat b)
{
    struct xg_quat d = xg_quat_mul(b, xg_quat_conj(a));
    return xg_vec3_norm(xg_quat_log(d));
}

struct xg_vec3 xg_quat_angular_velocity(struct xg_quat q0, struct xg_quat q1, double dt)
{
    if (!(dt > 0.0)) return XG_VEC3_ZERO;
    return xg_vec3_scale(xg_quat_log(xg_quat_mul(q1, xg_quat_conj(q0))), 1.0 / dt);
}

struct xg_quat xg_quat_integrate(struct xg_quat q, struct xg_vec3 w, double dt)
{
    return xg_quat_normalize(xg_quat_mul(xg_quat_exp(xg_vec3_scale(w, dt)), q));
}

void xg_quat_to_mat3(struct xg_quat q, double m[3][3])
{
    double x = q.x, y = q.y, z = q.z, w = q.w;
    m[0][0] = 1 - 2 * (y * y + z * z);
    m[0][1] = 2 * (x * y - z * w);
    m[0][2] = 2 * (x * z + y * w);
    m[1][0] = 2 * (x * y + z * w);
    m[1][1] = 1 - 2 * (x * x + z * z);
    m[1][2] = 2 * (y * z - x * w);
    m[2][0] = 2 * (x * z - y * w);
    m[2][1] = 2 * (y * z + x * w);
    m[2][2] = 1 - 2 * (x * x + y * y);
}

struct xg_quat xg_quat_from_mat3(const double m[3][3])
{
    struct xg_quat q;
    double tr = m[0][0] + m[1][1] + m[2][2];
    if (tr > 0) {
        double s = sqrt(tr + 1.0) * 2;
        q.w = 0.25 * s;
        q.x = (m[2][1] - m[1][2]) / s;
        q.y = (m[0][2] - m[2][0]) / s;
        q.z = (m[1][0] - m[0][1]) / s;
    } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
        double s = sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]) * 2;
        q.w = (m[2][1] - m[1][2]) / s;
        q.x = 0.25 * s;
        q.y = (m[0][1] + m[1][0]) / s;
        q.z = (m[0][2] + m[2][0]) / s;
    } else if (m[1][1] > m[2][2]) {
        double s = sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]) * 2;
        q.w = (m[0][2] - m[2][0]) / s;
        q.x = (m[0][1] + m[1][0]) / s;
        q.y = 0.25 * s;
        q.z = (m[1][2] + m[2][1]) / s;
    } else {
        double s = sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]) * 2;
        q.w = (m[1][0] - m[0][1]) / s;
        q.x = (m[0][2] + m[2][0]) / s;
        q.y = (m[1][2] + m[2][1]) / s;
        q.z = 0.25 * s;
    }
    if (q.w < 0) q = (struct xg_quat){-q.x, -q.y, -q.z, -q.w};
    return xg_quat_normalize(q);
}

struct xg_vec3 xg_mat3_mul_vec(const double m[3][3], struct xg_vec3 v)
{
    return (struct xg_vec3){m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
                            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
                            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
}

void xg_mat3_transpose(const double m[3][3], double t[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[i][j] = m[j][i];
}
