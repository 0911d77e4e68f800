/* Causal motion estimation for prediction (issue 23): velocity and angular velocity of an entity
 * from its own pose history, for sources that send poses only (and for replayed takes, which
 * behave like them). Only samples already received are used: nothing here can see the future.
 *
 * Kept apart from the entity table (core/table/entity_ingest.c) behind one call. Two forms of the
 * same estimate: xg_motion_estimate() passes over the window (the reference), xg_motion_update()
 * keeps running sums and is what the table uses (issue 19 item 2). */
#ifndef XG_PREDICT_EST_H
#define XG_PREDICT_EST_H

#include <stdint.h>

#include "core/table/entity.h"
#include "core/table/history.h"

/** Below this gain (xg_rot_update(), core/predict/predict_rot.h) the table answers
 * XG_QUALITY_DAMPED instead of PREDICTED: the rotation was extrapolated at less than half the
 * fitted rate (down to holding it). */
#define XG_ROT_GAIN_DAMPED 0.5

/** What the estimator found. */
struct xg_motion_est {
    struct xg_vec3 velocity;             /* m/s at the newest sample */
    int n_used;                          /* samples used (0: fewer than two, nothing estimated) */
    struct xg_vec3 fit_angular_velocity; /* rad/s, world frame, at the newest sample, as fitted:
                                            not damped here (how far it is extrapolated is
                                            xg_rot_update's gain, core/predict/predict_rot.h) */
    int64_t prev_t_ns; /* n_used >= 2: the sample before the newest as the history holds it
                          (capture time ns, unit quaternion): decoded once here for the caller */
    struct xg_quat prev_q;
};

/** Estimate from the pose history `hist` (core/table/history.h; capture times strictly increasing)
 *  over the samples no older than `window_ns` before
 *  the newest (at least two are always used). Positions in m, orientations unit quaternions.
 *  Velocity: least-squares fit of a quadratic in time through the newest sample, newest samples
 *  weighted most, its slope at the newest sample. Angular velocity (world frame): least-squares
 *  slope of the rotation vectors log(q_i ⊗ q_newest*), newest samples weighted most
 *  (fit_angular_velocity; not damped: core/predict/predict_rot.h decides how far it is
 * extrapolated). Results are clamped to XG_VELOCITY_MAX / XG_ANGVEL_MAX. n < 2: everything zero,
 * n_used 0. */
void xg_motion_estimate(const struct xg_history *hist, int64_t window_ns,
                        struct xg_motion_est *out);

/** Incremental xg_motion_estimate(): the same estimate from running sums updated by the newest
 *  sample of the history (and by the samples leaving the window), in a constant number of
 *  operations per push instead of a pass over the window. Call after every sample written to
 *  the ring (or with an unchanged ring: the estimate is recomputed from the sums); `evicted` is
 *  the entry the ring overwrote to make room for the newest one (NULL if none). A ring that
 *  does not continue the one the sums describe (history forgotten, calls skipped), an anchor
 *  more than two windows old and every XG_HISTORY pushes rebuild the sums exactly from the ring,
 *  which bounds rounding drift. Velocity equals the batch result up to rounding; angular velocity
 * up to the second-order term of mapping rotation vectors from the anchor to the newest sample
 * (exact about a fixed axis; measured in tests/unit/test_predict_inc.c). */
void xg_motion_update(struct xg_motion_acc *acc, const struct xg_history *hist,
                      const struct xg_hist *evicted, int64_t window_ns, struct xg_motion_est *out);

#endif
