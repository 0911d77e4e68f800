/* Vector and quaternion math for poses.
 *
 * Conventions: metres, seconds, radians; quaternions are Hamilton, stored x y z w
 * (w scalar), unit length, rotations active body→world. Rotation vectors are axis·angle (rad).
 * World-frame angular velocity ω relates orientations by q(t+dt) = exp(ω·dt) ⊗ q(t). */
#ifndef XG_XMATH_H
#define XG_XMATH_H

#include <stdbool.h>

struct xg_vec3 {
    double x, y, z;
};

struct xg_quat {
    double x, y, z, w; /* Hamilton, w scalar */
};

#define XG_QUAT_IDENTITY ((struct xg_quat){0.0, 0.0, 0.0, 1.0})
#define XG_VEC3_ZERO ((struct xg_vec3){0.0, 0.0, 0.0})

struct xg_vec3 xg_vec3_add(struct xg_vec3 a, struct xg_vec3 b);
struct xg_vec3 xg_vec3_sub(struct xg_vec3 a, struct xg_vec3 b);
struct xg_vec3 xg_vec3_scale(struct xg_vec3 a, double s);
double xg_vec3_dot(struct xg_vec3 a, struct xg_vec3 b);
struct xg_vec3 xg_vec3_cross(struct xg_vec3 a, struct xg_vec3 b);
double xg_vec3_norm(struct xg_vec3 a);
/** a + (b - a)·t */
struct xg_vec3 xg_vec3_lerp(struct xg_vec3 a, struct xg_vec3 b, double t);
bool xg_vec3_finite(struct xg_vec3 a);
/** a·b for vectors held as double[3] (the estimators' and predictors' arrays). */
static inline double xg_dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/** Unit quaternion of q; the identity if q is zero or not finite. */
struct xg_quat xg_quat_normalize(struct xg_quat q);
/** Hamilton product a ⊗ b (apply b, then a). */
struct xg_quat xg_quat_mul(struct xg_quat a, struct xg_quat b);
/** Conjugate (= inverse for unit q). */
struct xg_quat xg_quat_conj(struct xg_quat q);
double xg_quat_dot(struct xg_quat a, struct xg_quat b);
/** Rotate v by unit q: q ⊗ (v,0) ⊗ q*. */
struct xg_vec3 xg_quat_rotate(struct xg_quat q, struct xg_vec3 v);
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
bool xg_quat_finite(struct xg_quat q);

/** Row-major 3×3 rotation matrix of unit q (m[r][c]). */
void xg_quat_to_mat3(struct xg_quat q, double m[3][3]);
/** Unit quaternion of a proper rotation matrix (row-major), w >= 0. */
struct xg_quat xg_quat_from_mat3(const double m[3][3]);
/** Determinant of a 3×3 matrix. */
double xg_mat3_det(const double m[3][3]);
/** m·v for a row-major 3×3 matrix (e.g. a rotation matrix from xg_quat_to_mat3 applied to a
 *  point or direction). */
struct xg_vec3 xg_mat3_mul_vec(const double m[3][3], struct xg_vec3 v);
/** t = mᵀ (row-major; t must not alias m). For a rotation matrix this is its inverse. */
void xg_mat3_transpose(const double m[3][3], double t[3][3]);

#endif
