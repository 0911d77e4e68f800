/* Confidence gating of the extrapolated velocity (see docs/prediction.md, "Confidence gating"):
 * per entity, online, how much of the estimated velocity came true over the entity's recent
 * intervals, so that a source whose fitted velocity is mostly capture noise (a body hanging
 * still, slow deliberate motion) falls back toward holding its position and one that moves
 * steadily keeps all of it. Only samples already received are used.
 *
 * Also the predictor's tunables (struct xg_predict_tuning): one setting for every entity, fixed
 * at their defaults in the product; benchmarks set them to fit them leave-one-out
 * (tests/bench/bench_prediction_loo.c). */
#ifndef XG_PREDICT_GATE_H
#define XG_PREDICT_GATE_H

#include <stdint.h>

#include "core/util/xmath.h"

/** The predictor's tunables (dimensionless unless stated). */
struct xg_predict_tuning {
    /** Velocity gate: forgetting per interval of its error sums (0 < f < 1; 0.9 keeps about the
     *  last 10 intervals). */
    double vel_forget;
    /** Velocity gate: the share of holding's error that the recent extrapolations removed,
     *  divided by this, is the share of the velocity extrapolated (clamped to [0, 1]). */
    double vel_gate_tau;
    /** Rotation hold threshold scale: multiplies XG_ROT_HOLD_BELOW and the skeleton's swing and
     *  twist thresholds (core/predict/predict_rot.h, core/predict/predict_skel.h); 1 = as
     * documented. */
    double rot_hold_scale;
    /** Rotation confidence gate: the share of holding's error that the joint's recent
     *  extrapolations (at its learned gain, before any hold rule) removed, divided by this, is
     *  the factor on the gain (clamped to [0, 1]); 0 = no gate. See xg_rot_learn(). */
    double rot_gate_tau;
    /** Forgetting per interval of the rotation gate's error sums (0 < f < 1). */
    double rot_gate_forget;
};

/** The defaults: the setting the four takes of the leave-one-out benchmark choose together. */
#define XG_PREDICT_TUNING_DEFAULT                                                                  \
    {                                                                                              \
        .vel_forget = 0.5, .vel_gate_tau = 0.5, .rot_hold_scale = 1.0, .rot_gate_tau = 0.25,       \
        .rot_gate_forget = 0.9                                                                     \
    }

/** The tunables in force (never NULL). */
const struct xg_predict_tuning *xg_predict_tuning(void);

/** Replace the tunables (for benchmarks and tests; not thread-safe: call while no table is being
 *  updated). NULL restores the defaults. Values out of range are clamped: vel_forget to
 *  [0, 0.999], vel_gate_tau to [0.01, 1], rot_hold_scale to [0, 4], rot_gate_tau to [0, 1],
 * rot_gate_forget to [0, 0.999]. */
void xg_predict_tuning_set(const struct xg_predict_tuning *t);

/** The newest interval moved less than this along the fitted velocity (m): a stop or a reversal,
 *  the position held for that sample. Far above the rounding of positions kept as doubles, far
 *  below any real motion (1e-9 m in 8 ms is 1.2e-7 m/s). */
#define XG_VEL_STILL_M 1e-9

/** Per-entity velocity gate; all zero = nothing seen (xg_vel_gate_reset). */
struct xg_vel_gate {
    int64_t t_ns;          /* capture time of the newest sample seen, 0 = none */
    double p[3];           /* its position, m */
    double v[3];           /* the fitted velocity at it, m/s (not gated) */
    double e_hold, e_pred; /* Σ λ^i |d|², Σ λ^i |d - P|² (m²): holding's and the previous
                              fit's error over each interval seen */
    double k;              /* the gain at the newest sample, 0..1 */
};

/** Forget everything. */
void xg_vel_gate_reset(struct xg_vel_gate *g);

/** Update with the newest sample (capture time t_ns, position p in m, the fitted velocity v_fit
 *  at it in m/s) and return the gain k in [0, 1]; *v_out = k·v_fit, the velocity to extrapolate.
 *  k = clamp((1 - E_pred / E_hold) / vel_gate_tau, 0, 1): E_hold and E_pred are the
 *  exponentially weighted sums (forgetting vel_forget per interval) of holding's squared error
 *  over each interval (the displacement d) and of the previous sample's fitted velocity times the
 *  interval (|d - P|²); 1 until an interval is known. A constant velocity gives exactly 1 (and
 *  so does one whose capture times jitter, as long as the fit removes more than 1 - tau of
 *  holding's error); a fit that is capture noise does no better than holding and gets 0.
 *  Stop or reversal: k = 0 for this sample when the newest interval did not move along v_fit by
 *  more than XG_VEL_STILL_M (the fit over the window still carries motion that ended).
 *  Samples more than `gap_ns` apart, or a t_ns that does not advance, restart the fit. Calling
 *  again with the same t_ns returns the stored gain. */
double xg_vel_gate_update(struct xg_vel_gate *g, int64_t t_ns, struct xg_vec3 p,
                          struct xg_vec3 v_fit, int64_t gap_ns, struct xg_vec3 *v_out);

#endif
