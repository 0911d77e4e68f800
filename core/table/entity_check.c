/* Ingress value checks of the entity table (core/table/entity.h, issue 22 item 6). */
#include <errno.h>
#include <math.h>

#include "core/table/entity.h"

static int check_vec(struct xg_vec3 v, double max, const char *const names[3], const char **field,
                     double *value)
{
    const double c[3] = {v.x, v.y, v.z};
    for (int i = 0; i < 3; i++)
        if (!isfinite(c[i]) || fabs(c[i]) > max) {
            *field = names[i];
            *value = c[i];
            return -EINVAL;
        }
    return 0;
}

int xg_sample_check(const struct xg_sample *s, const char **field, double *value)
{
    static const char *const pos[3] = {"position.x", "position.y", "position.z"};
    static const char *const vel[3] = {"velocity.x", "velocity.y", "velocity.z"};
    static const char *const ang[3] = {"angular_velocity.x", "angular_velocity.y",
                                       "angular_velocity.z"};
    static const char *const scl[3] = {"scale.x", "scale.y", "scale.z"};
    static const char *const rot[4] = {"orientation.x", "orientation.y", "orientation.z",
                                       "orientation.w"};
    const char *f = NULL;
    double v = 0;
    int rc = 0;
    if (!rc && (s->flags & XG_SAMPLE_POSITION))
        rc = check_vec(s->position, XG_POSITION_MAX, pos, &f, &v);
    if (!rc && (s->flags & XG_SAMPLE_ORIENTATION)) {
        const double q[4] = {s->orientation.x, s->orientation.y, s->orientation.z,
                             s->orientation.w};
        for (int i = 0; i < 4 && !rc; i++)
            if (!isfinite(q[i]) || fabs(q[i]) > XG_QUAT_NORM_MAX) {
                f = rot[i];
                v = q[i];
                rc = -EINVAL;
            }
        if (!rc) {
            double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
            if (!(n >= XG_QUAT_NORM_MIN && n <= XG_QUAT_NORM_MAX)) {
                f = "orientation.norm";
                v = n;
                rc = -EINVAL;
            }
        }
    }
    if (!rc && (s->flags & XG_SAMPLE_VELOCITY))
        rc = check_vec(s->velocity, XG_VELOCITY_MAX, vel, &f, &v);
    if (!rc && (s->flags & XG_SAMPLE_ANGULAR_VELOCITY))
        rc = check_vec(s->angular_velocity, XG_ANGVEL_MAX, ang, &f, &v);
    if (!rc && (s->flags & XG_SAMPLE_SCALE)) rc = check_vec(s->scale, XG_SCALE_MAX, scl, &f, &v);
    if (rc) {
        if (field) *field = f;
        if (value) *value = v;
    }
    return rc;
}
