/* Forward kinematics for parsed BVH files: world-frame joint poses, velocities and angular
 * velocities from the motion itself.
 *
 * Conventions (those of BVH, which is right-handed and Y up; the BVH "world" is the file's own
 * frame, converted to the gateway's internal frame by the adapter's `frame:`):
 * - A joint's local translation is its OFFSET, except that each declared position channel
 *   (Xposition...) replaces the corresponding OFFSET component; lengths are file units × scale.
 * - A joint's local rotation is the product of its rotation channels in the declared order,
 *   intrinsic: "Zrotation Xrotation Yrotation" gives R = Rz(z)·Rx(x)·Ry(y) (degrees), so that
 *   v_parent = R·v_joint.
 * - World: q = q_parent ⊗ q_local, p = p_parent + q_parent·t_local (roots: parent = identity).
 * Quaternions are Hamilton x y z w, body→world. */
#ifndef BVH_FK_H
#define BVH_FK_H

#include "adapters/bvh/bvh_parser.h"
#include "core/util/xmath.h"

/** Local rotation of joint j for one frame row (unit quaternion, x y z w). */
struct xg_quat bvh_local_rotation(const struct bvh_joint *j, const double *row);

/** World poses of every joint (End Sites included) for one frame row: pos[n_joints] in
 *  file units × scale, rot[n_joints] unit quaternions. */
void bvh_fk(const struct bvh_file *f, const double *row, double scale, struct xg_vec3 *pos,
            struct xg_quat *rot);

/** Workspace for bvh_fk_motion (three frames of poses). */
struct bvh_fk_work {
    int n;
    struct xg_vec3 *pos[3];
    struct xg_quat *rot[3];
};
/** Allocate / free a workspace for f (-ENOMEM). */
int bvh_fk_work_init(struct bvh_fk_work *w, const struct bvh_file *f);
void bvh_fk_work_free(struct bvh_fk_work *w);

/** World state of every joint at frame k: pose as bvh_fk, plus velocity (units × scale per
 *  second) and world-frame angular velocity (rad/s) by central differences over frames k−1 and
 *  k+1 (one-sided at the ends of [lo, hi], zero if lo == hi). Requires lo ≤ k ≤ hi < n_frames.
 *  Any of vel / angvel may be NULL. */
void bvh_fk_motion(const struct bvh_file *f, long k, long lo, long hi, double scale,
                   struct bvh_fk_work *w, struct xg_vec3 *pos, struct xg_quat *rot,
                   struct xg_vec3 *vel, struct xg_vec3 *angvel);

#endif
