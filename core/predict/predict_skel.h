/* Skeleton-informed rotation prediction (issue 23, fifth round): a joint whose children are in
 * the table (xg_table_set_parent()) gets the swing part of its angular velocity from its
 * children's positions and velocities, which the table estimates without the half-interval lag
 * of a rate fitted to orientations, and the twist part (about the bone) from the fitted rate;
 * each part has its own gain and hold rule (core/predict/predict_rot.h). See docs/prediction.md
 * "Joints with children". */
#ifndef XG_PREDICT_SKEL_H
#define XG_PREDICT_SKEL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/predict/predict_rot.h"
#include "core/util/xmath.h"

/** The swing part is held below this turn rate (rad/s), or below 4 x its recent rms rate
 *  change; the twist part below XG_SKEL_TWIST_HOLD_BELOW likewise. */
#define XG_SKEL_SWING_HOLD_BELOW 2.0
#define XG_SKEL_TWIST_HOLD_BELOW 1.75
/** A joint that no child refines turns with its parent plus a learned share of its own fitted
 *  turn relative to the parent (xg_rot_skel_rel_gain()), when that relative turn is at least
 *  XG_SKEL_END_REL_MIN (rad/s). */
#define XG_SKEL_END_REL_MIN 1.0
/** An interval over which the joint turned less than this (rad) did not turn. */
#define XG_SKEL_STILL 1e-9
/** A child closer than this to its parent (m) says nothing about the parent's rotation. */
#define XG_SKEL_BONE_MIN 0.01
/** A bone counts as rigid (its child turns with the parent) while its offset in the parent's
 *  frame moves by at most this much (m) from one sample to the next. */
#define XG_SKEL_RIGID_TOL 1e-4

/** Per-entity state of a joint whose children inform its rotation; all zero = none yet. */
struct xg_rot_skel {
    int64_t t_ns;         /* the joint's sample set by xg_rot_skel_sample(), 0 = none */
    int64_t t1_ns;        /* the sample before it */
    double d[3];          /* the joint's rotation over that interval, rad, world frame */
    double dt;            /* that interval, s */
    double w_fit[3];      /* its fitted angular velocity, rad/s */
    double a[3][3], r[3]; /* normal equations of w x b = u over the children added (m², m²/s) */
    double b2;            /* sum of |b|² (m²) */
    double axis[3];       /* unit direction of the first child's bone: the twist axis */
    unsigned n;           /* children added for this sample */
    struct xg_rot_state swing, twist; /* the parts' gain and hold rules */
};

/** Forget everything (e.g. after the table forgot the entity's history). */
void xg_rot_skel_reset(struct xg_rot_skel *s);

/** The joint's newest sample at t0_ns (capture time, ns), the sample before it at t1_ns
 *  (t1_ns < t0_ns), d the joint's rotation vector over that interval (rad, world frame:
 *  log(q0 ⊗ q1*), e.g. xg_rot_interval() of the joint's own state) and w_fit its fitted angular
 *  velocity at t0_ns (rad/s, core/predict/predict_est.h). Drops the children added for an earlier
 *  sample. t1_ns >= t0_ns: no estimate at this sample (d unused; xg_rot_skel_add() then adds
 *  nothing). */
void xg_rot_skel_sample(struct xg_rot_skel *s, int64_t t0_ns, int64_t t1_ns, const double d[3],
                        struct xg_vec3 w_fit);

/** Add one child of the joint at the sample set last and return the joint's gain (0..1, 0 =
 *  held; the two parts' gains weighted by their squared rates), with *w_out the angular
 *  velocity to extrapolate (rad/s, world frame).
 *  - bone: child position - joint position (m); rel_vel: child velocity - joint velocity (m/s),
 *    both at the joint's sample; the bone must turn with the joint (the caller checks). A bone
 *    shorter than XG_SKEL_BONE_MIN, or no sample set: returns -1, *w_out untouched.
 *  - Swing: the least-squares w with w x b = u over the children added so far (about the
 *    twist axis, where one bone says nothing, w_fit fills in), less its component along the
 *    axis. Twist: w_fit's component along the axis. The first child added for a sample sets the
 *    axis and lets each part's gain fit learn (xg_rot_learn(), from its previous decision);
 *    every child added decides both parts again (xg_rot_decide(), with the part of the
 *    interval's rotation; held below XG_SKEL_SWING_HOLD_BELOW / XG_SKEL_TWIST_HOLD_BELOW or 4 x
 *    its rms rate change, or when it turned against the part).
 *  A steady spin of a rigid skeleton gives the spin exactly (both parts' gains 1). */
double xg_rot_skel_add(struct xg_rot_skel *s, struct xg_vec3 bone, struct xg_vec3 rel_vel,
                       struct xg_vec3 *w_out);

/** The share of a joint's own fitted turn relative to its parent that it extrapolates on top of
 *  its parent's angular velocity (a joint that no child refines, core/table/entity_skel.c), learned
 *  per joint like a whole rotation's gain (core/predict/predict_rot.h: xg_rot_learn() and
 *  xg_rot_decide() on the relative turn, never held by a rate threshold): the exponentially
 *  weighted least-squares factor between what the previous sample's relative rate would have
 *  turned over the interval that just ended and the relative turn that happened, clamped to
 *  [0, 1], 0.8 until one interval is known, times 0.75 while the relative turn slows down.
 *  - s: the joint's state (all zero = nothing seen; xg_rot_reset() forgets).
 *  - t0_ns: the joint's newest sample (ns); t1_ns: the sample before it (t1_ns < t0_ns), or 0
 *    when d_rel is not known for that interval (it is then not learned from).
 *  - d_rel: the joint's rotation over that interval less its parent's over the same interval
 *    (rad, world frame); dt: the interval (s, > 0); w_rel: the joint's fitted angular velocity
 *    less its parent's (rad/s, world frame).
 *  Calling again for the same t0_ns returns the same gain without learning. A steady relative
 *  spin gives exactly 1; a relative turn that reverses at every sample gives 0.
 *  Returns the gain, 0..1 (0 without learning when dt is not > 0 or an input is not finite). */
double xg_rot_skel_rel_gain(struct xg_rot_state *s, int64_t t0_ns, int64_t t1_ns,
                            const double d_rel[3], double dt, const double w_rel[3]);

#endif
