/* RGMP v2 poses: the §3 transform equation and poses/vectors from stream values (see
 * rgmp_codec.h). */
#include "adapters/rgmp/rgmp_codec_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* §3 transform equation                                                                       */

void rgmp_rotation_matrix(struct xg_quat q, double R[3][3])
{
    xg_quat_to_mat3(q, R);
}

struct xg_vec3 rgmp_transform_point(const struct rgmp_pose *T, struct xg_vec3 p_target)
{
    double R[3][3];
    xg_quat_to_mat3(T->orientation, R);
    return xg_vec3_add(xg_mat3_mul_vec(R, p_target), T->position);
}

struct rgmp_pose rgmp_transform_compose(const struct rgmp_pose *ab, const struct rgmp_pose *bc)
{
    struct rgmp_pose ac;
    ac.position = rgmp_transform_point(ab, bc->position);
    ac.orientation = xg_quat_mul(ab->orientation, bc->orientation);
    return ac;
}

struct rgmp_pose rgmp_transform_inverse(const struct rgmp_pose *T)
{
    double R[3][3], Rt[3][3];
    xg_quat_to_mat3(T->orientation, R);
    xg_mat3_transpose(R, Rt);
    struct rgmp_pose inv;
    inv.position = xg_vec3_scale(xg_mat3_mul_vec(Rt, T->position), -1.0);
    inv.orientation = xg_quat_conj(T->orientation);
    return inv;
}

static bool float_vector(const struct rgmp_stream *s, uint32_t n)
{
    return s->type.rank == 1 && s->type.n == n &&
           (s->type.base == RGMP_FLOAT || s->type.base == RGMP_DOUBLE);
}

/* Read n values as doubles; -EDOM on NaN/Inf (D5). */
static int read_finite(const struct rgmp_stream *s, const uint8_t *vals, double *out, uint32_t n,
                       struct xg_error *err)
{
    for (uint32_t i = 0; i < n; i++) {
        out[i] = rgmp_value_f64(&s->type, vals, i);
        if (!isfinite(out[i]))
            return xg_error_set(err, -EDOM,
                                "%s %s: value[%" PRIu32 "] = %g: not finite, sample rejected (D5)",
                                s->measure_name, Q(s->target_frame), i, out[i]);
    }
    return 0;
}

int rgmp_pose_from_values(const struct rgmp_stream *s, const uint8_t *vals, struct rgmp_pose *out,
                          struct xg_error *err)
{
    double v[7] = {0};
    uint32_t n;
    size_t qoff;
    switch (s->measure) {
    case RGMP_TRANSFORM:
        n = 7;
        qoff = 3;
        break;
    case RGMP_POSITION:
        n = 3;
        qoff = 0;
        break;
    case RGMP_ORIENTATION:
        n = 4;
        qoff = 0;
        break;
    default:
        return xg_error_set(err, -EINVAL, "%s %s: not a pose measure", s->measure_name,
                            Q(s->target_frame));
    }
    if (!float_vector(s, n))
        return xg_error_set(err, -EINVAL, "%s %s: data type is not FLOAT/DOUBLE[%" PRIu32 "]",
                            s->measure_name, Q(s->target_frame), n);
    int rc = read_finite(s, vals, v, n, err);
    if (rc < 0) return rc;
    out->position = XG_VEC3_ZERO;
    out->orientation = XG_QUAT_IDENTITY;
    if (s->measure != RGMP_ORIENTATION) out->position = (struct xg_vec3){v[0], v[1], v[2]};
    if (s->measure != RGMP_POSITION) {
        const double *q = v + qoff;
        double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (fabs(norm - 1.0) > RGMP_QUAT_NORM_TOL)
            return xg_error_set(err, -EDOM,
                                "%s %s: quaternion norm = %.6g: off by more than 1e-3, sample "
                                "rejected (D5)",
                                s->measure_name, Q(s->target_frame), norm);
        out->orientation = (struct xg_quat){q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm};
    }
    return 0;
}

int rgmp_vec3_from_values(const struct rgmp_stream *s, const uint8_t *vals, struct xg_vec3 *out,
                          struct xg_error *err)
{
    if (!float_vector(s, 3))
        return xg_error_set(err, -EINVAL, "%s %s: data type is not FLOAT/DOUBLE[3]",
                            s->measure_name, Q(s->target_frame));
    double v[3];
    int rc = read_finite(s, vals, v, 3, err);
    if (rc < 0) return rc;
    *out = (struct xg_vec3){v[0], v[1], v[2]};
    return 0;
}
