/* Deterministic synthetic rig: a head, two hands and N rigid bodies on smooth analytic paths.
 *
 * The paths are pure functions of time (seconds since the adapter started), in the internal
 * frame (Y up, metres, quaternions x y z w), so tests and benchmarks can compare what comes out
 * of any egress with the truth. */
#ifndef XG_SYNTH_H
#define XG_SYNTH_H

#include "core/table/entity.h"
#include "core/util/xmath.h"

/** Which synthetic entity: XG_SYNTH_HEAD, XG_SYNTH_LEFT_HAND, XG_SYNTH_RIGHT_HAND, or
 *  XG_SYNTH_BODY0 + i for rigid body i. */
enum { XG_SYNTH_HEAD = 0, XG_SYNTH_LEFT_HAND = 1, XG_SYNTH_RIGHT_HAND = 2, XG_SYNTH_BODY0 = 3 };

/** Pose of synthetic entity `which` at time t (s): position (m) and orientation. */
void xg_synth_pose(int which, double t, struct xg_vec3 *p, struct xg_quat *q);
/** Velocity (m/s) and world-frame angular velocity (rad/s) of entity `which` at t (s). */
void xg_synth_velocity(int which, double t, struct xg_vec3 *v, struct xg_vec3 *w);

#endif
