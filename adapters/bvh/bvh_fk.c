/* Forward kinematics for BVH (see bvh_fk.h). */
#include "adapters/bvh/bvh_fk.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct xg_quat bvh_local_rotation(const struct bvh_joint *j, const double *row)
{
    static const struct xg_vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    struct xg_quat q = XG_QUAT_IDENTITY;
    for (int i = 0; i < j->n_channels; i++) {
        enum bvh_channel c = j->channels[i];
        if (c < BVH_XROTATION) continue;
        double rad = row[j->channel_index + i] * (M_PI / 180.0);
        q = xg_quat_mul(q, xg_quat_from_axis_angle(axes[c - BVH_XROTATION], rad));
    }
    return xg_quat_normalize(q);
}

void bvh_fk(const struct bvh_file *f, const double *row, double scale, struct xg_vec3 *pos,
            struct xg_quat *rot)
{
    for (int i = 0; i < f->n_joints; i++) {
        const struct bvh_joint *j = &f->joints[i];
        double t[3] = {j->offset[0], j->offset[1], j->offset[2]};
        for (int c = 0; c < j->n_channels; c++)
            if (j->channels[c] <= BVH_ZPOSITION) t[j->channels[c]] = row[j->channel_index + c];
        struct xg_vec3 local = {t[0] * scale, t[1] * scale, t[2] * scale};
        struct xg_quat lq = bvh_local_rotation(j, row);
        if (j->parent < 0) {
            pos[i] = local;
            rot[i] = lq;
        } else {
            pos[i] = xg_vec3_add(pos[j->parent], xg_quat_rotate(rot[j->parent], local));
            rot[i] = xg_quat_normalize(xg_quat_mul(rot[j->parent], lq));
        }
    }
}

int bvh_fk_work_init(struct bvh_fk_work *w, const struct bvh_file *f)
{
    memset(w, 0, sizeof *w);
    w->n = f->n_joints;
    for (int k = 0; k < 3; k++) {
        w->pos[k] = calloc((size_t)w->n + 1, sizeof *w->pos[k]);
        w->rot[k] = calloc((size_t)w->n + 1, sizeof *w->rot[k]);
        if (!w->pos[k] || !w->rot[k]) {
            bvh_fk_work_free(w);
            return -ENOMEM;
        }
    }
    return 0;
}

void bvh_fk_work_free(struct bvh_fk_work *w)
{
    for (int k = 0; k < 3; k++) {
        free(w->pos[k]);
        free(w->rot[k]);
    }
    memset(w, 0, sizeof *w);
}

void bvh_fk_motion(const struct bvh_file *f, long k, long lo, long hi, double scale,
                   struct bvh_fk_work *w, struct xg_vec3 *pos, struct xg_quat *rot,
                   struct xg_vec3 *vel, struct xg_vec3 *angvel)
{
    bvh_fk(f, bvh_frame(f, k), scale, pos, rot);
    if (!vel && !angvel) return;
    long a = k > lo ? k - 1 : k, b = k < hi ? k + 1 : k;
    double dt = (double)(b - a) * f->frame_time;
    if (b == a) {
        for (int i = 0; i < f->n_joints; i++) {
            if (vel) vel[i] = XG_VEC3_ZERO;
            if (angvel) angvel[i] = XG_VEC3_ZERO;
        }
        return;
    }
    bvh_fk(f, bvh_frame(f, a), scale, w->pos[0], w->rot[0]);
    bvh_fk(f, bvh_frame(f, b), scale, w->pos[1], w->rot[1]);
    for (int i = 0; i < f->n_joints; i++) {
        if (vel) vel[i] = xg_vec3_scale(xg_vec3_sub(w->pos[1][i], w->pos[0][i]), 1.0 / dt);
        if (angvel) angvel[i] = xg_quat_angular_velocity(w->rot[0][i], w->rot[1][i], dt);
    }
}
