/* Rotation prediction on real motion (issue 23, third round): how far the table extrapolates an
 * entity's estimated angular velocity, decided per entity from how well its own recent
 * extrapolations came true. Only samples already received are used.
 *
 * The estimator in core/predict/predict_est.h fits the angular velocity; this file turns that fit
 * into the angular velocity the table extrapolates (game-state Rot2 semantics: one constant angular
 * velocity, exp(w dt) ⊗ q), see docs/prediction.md "How a pose is predicted". */
#ifndef XG_PREDICT_ROT_H
#define XG_PREDICT_ROT_H

#include <stdint.h>

#include "core/predict/predict_gate.h"
#include "core/util/xmath.h"

/** Hold below this turn rate (rad/s) unless the entity turns steadily (see xg_rot_update). */
#define XG_ROT_HOLD_BELOW 2.25
/** The newest interval turned less than this along the fitted angular velocity (rad): a stop
 *  (or a reversal), held. Far above the precision of the orientations the history keeps (about
 *  1e-13, core/table/history.h), so that a sample that repeats the one before is a stop whatever
 * the sign of that rounding; far below any real turn (1e-9 rad in 8 ms is 1.2e-7 rad/s). */
#define XG_ROT_STILL_RAD 1e-9
/** Largest gain applied to the fitted angular velocity. */
#define XG_ROT_GAIN_MAX 1.0

/** Per-entity state; all zero = nothing seen yet (xg_rot_reset). */
struct xg_rot_state {
    int64_t t_ns;     /* capture time of the newest sample seen, 0 = none */
    double pred[3];   /* the fitted angular velocity at that sample (rad/s, after the
                         direction check): what an extrapolation from it would have used */
    double rate[3];   /* the newest interval's mean angular velocity at that sample, rad/s */
    double num, den;  /* gain fit: Σ λ^i d_true·d_pred, Σ λ^i |d_pred|² (rad²) */
    double change2;   /* EW mean of |rate_k - rate_k-1|² ((rad/s)²): how unsteady the turn is */
    unsigned n_rates; /* interval rates seen in a row (0, 1, 2 = change2 valid) */
    double e_hold, e_shadow; /* confidence gate: Σ λ^i |d|², Σ λ^i |d - k·P|² (rad²), P the
                                previous fit over the interval, k its learned gain then */
    double k_learned;        /* the gain fit's factor at the newest sample (slowing and confidence
                                applied), 0..1 */
    double k_fit;      /* the gain fit's factor alone (clamped), what the shadow extrapolates */
    double hold_below; /* rad/s: held below this turn rate at the newest sample */
    double gain;       /* the gain applied at the newest sample (0 = held) */
    struct xg_vec3 w;  /* the angular velocity to extrapolate at the newest sample, rad/s */
};

/** Forget everything (e.g. after the table forgot the entity's history). */
void xg_rot_reset(struct xg_rot_state *s);

/** Update with the newest sample and return the gain (0..XG_ROT_GAIN_MAX) applied to the fitted
 *  angular velocity; *w_out gets gain x w_fit (rad/s, world frame), the value the table
 *  extrapolates and publishes.
 *  - t0_ns/q0: the newest sample (capture time ns, unit quaternion); t1_ns/q1: the one before it
 *    (t1_ns < t0_ns). w_fit: the fitted angular velocity at the newest sample, undamped (rad/s).
 *  - Direction: the gain is 0 when the newest interval turned against w_fit or not along it by
 *    more than XG_ROT_STILL_RAD (a stop or reversal).
 *  - Gain: the exponentially weighted least-squares factor k (forgetting 0.98 per sample) that
 *    best maps each previous sample's fitted rotation over the following interval onto the
 *    rotation that really happened, clamped to [0, XG_ROT_GAIN_MAX]; 0.8 until known. A steady
 *    spin gives exactly 1.
 *  - Slowing down: the gain is multiplied by 0.75 when the newest interval turned more slowly
 *    than the one before (by more than 1 %): a turn that slows tends to go on slowing.
 *  - Hold: 0 when |w_fit| is below min(XG_ROT_HOLD_BELOW, 4 x the recent rms change of the
 *    interval rate between samples): a slow turn that is not steady is mostly capture jitter.
 *    XG_ROT_HOLD_BELOW (and every hold_max below) is scaled by xg_predict_tuning()->rot_hold_scale
 *    (core/predict/predict_gate.h).
 *  - Confidence (fall-back toward holding): the gain is multiplied by
 *    clamp((1 - E_shadow / E_hold) / rot_gate_tau, 0, 1), where E_hold and E_shadow are the
 *    exponentially weighted sums (forgetting rot_gate_forget per interval) of holding's squared
 *    error over each interval and of the shadow extrapolation's: the previous fit at its learned
 *    gain, whether or not a hold rule held it (so that a held joint can earn its way back). A
 *    steady spin removes all of holding's error and keeps its gain; predictions that came out
 *    worse than holding lately give 0. 1 until an interval is known.
 *  Calling again for the same t0_ns returns the stored result without updating. When t1_ns is
 *  not the sample seen last (samples skipped, history forgotten), the gain fit is not updated
 *  with that interval. */
double xg_rot_update(struct xg_rot_state *s, int64_t t0_ns, struct xg_quat q0, int64_t t1_ns,
                     struct xg_quat q1, struct xg_vec3 w_fit, struct xg_vec3 *w_out);

/** The rotation vector d (rad, world frame) over the newest interval the state learned from,
 *  log(q0 ⊗ q1*) of xg_rot_update(), given that interval's length dt (s): rebuilt from the rate
 *  it keeps, so that a caller need not take the logarithm again. */
void xg_rot_interval(const struct xg_rot_state *s, double dt, double d[3]);

/** The two stages of xg_rot_update(), for a caller that splits an angular velocity into parts
 *  with a state each (core/predict/predict_skel.h) and may decide a part again with a better
 * estimate before the next sample. xg_rot_learn(): once per sample. `d` is the rotation vector over
 * the newest interval (rad, world frame, the part's share of it), dt > 0 its length (s); t1_ns the
 * sample before t0_ns. Updates the gain fit with the previous decision (xg_rot_decide()'s last
 * w_in) and stores the gain and the hold threshold, min(hold_max, 4 x the rms change of the
 * interval rate), rad/s. xg_rot_decide(): any number of times after it; `w_in` is the angular
 * velocity estimate (rad/s); returns the gain (0 = held: w_in turned against `d`, or |w_in| below
 * the threshold) and *w_out = gain x w_in. The last call's w_in is what the next sample's gain fit
 *  compares with what happened. */
void xg_rot_learn(struct xg_rot_state *s, int64_t t0_ns, int64_t t1_ns, const double d[3],
                  double dt, double hold_max);
double xg_rot_decide(struct xg_rot_state *s, const double d[3], const double w_in[3],
                     struct xg_vec3 *w_out);

#endif
