/* Vector and quaternion math for poses.
 *
 * Conventions: metres, seconds, radians; quaternions are Hamilton, stored x y z w
 * (w scalar), unit length, rotations active body→world. Rotation vectors are axis·angle (rad).
 * World-frame angular velocity ω relates orientations by q(t+dt) = exp(ω·dt) ⊗ q(t). */
#ifndef XG_XMATH_H
#define XG_XMATH_H

#include <math.h>
#include <stdbool.h>

struct xg_vec3 {
    double x, y, z;
};

struct xg_quat {
    double x, y, z, w; /* Hamilton, w scalar */
};

#define XG_QUAT_IDENTITY ((struct xg_quat){0.0, 0.0, 0.0, 1.0})
#define XG_VEC3_ZERO ((struct xg_vec3){0.0, 0.0, 0.0})

static inline struct xg_vec3 xg_vec3_add(struct xg_vec3 a, struct xg_vec3 b)
{
    return (struct xg_vec3){a.x + b.x, a.y + b.y, a.z + b.z};
}

static inline struct xg_vec3 xg_vec3_sub(struct xg_vec3 a, struct xg_vec3 b)
{
    return (struct xg_vec3){a.x - b.x, a.y - b.y, a.z - b.z};
}

static inline struct xg_vec3 xg_vec3_scale(struct xg_vec3 a, double s)
{
    return (struct xg_vec3){a.x * s, a.y * s, a.z * s};
}

static inline double xg_vec3_dot(struct xg_vec3 a, struct xg_vec3 b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

static inline struct xg_vec3 xg_vec3_cross(struct xg_vec3 a, struct xg_vec3 b)
{
    return (struct xg_vec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

static inline double xg_vec3_norm(struct xg_vec3 a)
{
    return sqrt(xg_vec3_dot(a, a));
}

/** a + (b - a)·t */
static inline struct xg_vec3 xg_vec3_lerp(struct xg_vec3 a, struct xg_vec3 b, double t)
{
    return xg_vec3_add(a, xg_vec3_scale(xg_vec3_sub(b, a), t));
}

static inline bool xg_vec3_finite(struct xg_vec3 a)
{
    return isfinite(a.x) && isfinite(a.y) && isfinite(a.z);
}

/** a·b for vectors held as double[3] (the estimators' and predictors' arrays). */
static inline double xg_dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/** a·b over the four components. */
static inline double xg_quat_dot(struct xg_quat a, struct xg_quat b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

/** Unit quaternion of q; the identity if q is zero or not finite. */
static inline struct xg_quat xg_quat_normalize(struct xg_quat q)
{
    double n = sqrt(xg_quat_dot(q, q));
    if (n == 1) return q; /* unit already (q / 1 is q): no divisions */
    if (!(n > 1e-300) || !isfinite(n)) return XG_QUAT_IDENTITY;
    return (struct xg_quat){q.x / n, q.y / n, q.z / n, q.w / n};
}

/** Hamilton product a ⊗ b (apply b, then a). */
static inline struct xg_quat xg_quat_mul(struct xg_quat a, struct xg_quat b)
{
    return (struct xg_quat){
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    };
}

/** Conjugate (= inverse for unit q). */
static inline struct xg_quat xg_quat_conj(struct xg_quat q)
{
    return (struct xg_quat){-q.x, -q.y, -q.z, q.w};
}

/** Rotate v by unit q: q ⊗ (v,0) ⊗ q*. */
static inline struct xg_vec3 xg_quat_rotate(struct xg_quat q, struct xg_vec3 v)
{
    /* v' = v + 2w(u×v) + 2u×(u×v), u = (x,y,z) */
    struct xg_vec3 u = {q.x, q.y, q.z};
    struct xg_vec3 t = xg_vec3_scale(xg_vec3_cross(u, v), 2.0);
    return xg_vec3_add(xg_vec3_add(v, xg_vec3_scale(t, q.w)), xg_vec3_cross(u, t));
}

/** Rotation of `angle` rad about `axis` (need not be unit; zero axis → identity). */
struct xg_quat xg_quat_from_axis_angle(struct xg_vec3 axis, double angle);
/** Exponential map: rotation vector (axis·angle, rad) → unit quaternion. */
struct xg_quat xg_quat_exp(struct xg_vec3 rotvec);
/** atan2(y, x) for y >= 0 and x >= 0 (the first quadrant: a quaternion's half angle), within 1 ulp
 *  of libm's (Cephes' rational approximation of atan); (0, 0) gives 0, NaN gives NaN. About a
 *  quarter of atan2()'s cost: the estimator and the motion memory take several per sample. */
double xg_atan2_nonneg(double y, double x);
/** Logarithm map: unit quaternion → rotation vector with angle in [0, π] (shortest). */
struct xg_vec3 xg_quat_log(struct xg_quat q);
/** Spherical linear interpolation along the shortest arc; t may be outside [0,1]
 *  (extrapolates). Result is unit. */
struct xg_quat xg_quat_slerp(struct xg_quat a, struct xg_quat b, double t);
/** Angle (rad, [0, π]) of the rotation taking a to b. */
double xg_quat_angle_between(struct xg_quat a, struct xg_quat b);
/** World-frame angular velocity (rad/s) that turns q0 into q1 in dt seconds (shortest arc):
 *  log(q1 ⊗ q0*) / dt. dt <= 0 gives zero. */
struct xg_vec3 xg_quat_angular_velocity(struct xg_quat q0, struct xg_quat q1, double dt);
/** q advanced by world-frame angular velocity w (rad/s) for dt s: exp(w·dt) ⊗ q. */
struct xg_quat xg_quat_integrate(struct xg_quat q, struct xg_vec3 w, double dt);
/** Every component finite. */
static inline bool xg_quat_finite(struct xg_quat q)
{
    return isfinite(q.x) && isfinite(q.y) && isfinite(q.z) && isfinite(q.w);
}

/** Row-major 3×3 rotation matrix of unit q (m[r][c]). */
void xg_quat_to_mat3(struct xg_quat q, double m[3][3]);
/** Unit quaternion of a proper rotation matrix (row-major), w >= 0. */
struct xg_quat xg_quat_from_mat3(const double m[3][3]);
/** Determinant of a 3×3 matrix. */
static inline double xg_mat3_det(const double m[3][3])
{
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}
/** m·v for a row-major 3×3 matrix (e.g. a rotation matrix from xg_quat_to_mat3 applied to a
 *  point or direction). */
struct xg_vec3 xg_mat3_mul_vec(const double m[3][3], struct xg_vec3 v);
/** t = mᵀ (row-major; t must not alias m). For a rotation matrix this is its inverse. */
void xg_mat3_transpose(const double m[3][3], double t[3][3]);

#endif
