/* Rotation prediction on real motion (see predict_rot.h and docs/prediction.md).
 *
 * Tuned on the CMU walk in tests/vectors/mocap with bench_bvh_prediction (and checked on the
 * take played backwards, --reverse). On that take half the joint-instants turn slower than about
 * 2.25 rad/s; they carry less than a fifth of the error of holding but most of the instants where
 * extrapolating is worse than holding (capture jitter, trunk sway): those are held. Faster turns
 * come true at about 0.8 of the fitted rate over the next interval, which the per-entity gain fit
 * finds by itself, less when the turn is slowing down; a steady spin keeps gain 1 and is never
 * held (its rate does not change). */
#include "core/predict/predict_rot.h"

#include <math.h>
#include <string.h>

#define GAIN_FORGET 0.98  /* per sample: the gain fit remembers about the last 50 intervals */
#define GAIN_UNKNOWN 0.8  /* before any interval was seen */
#define CHANGE_FORGET 0.7 /* per sample, for the rms change of the interval rate */
#define CHANGE_K 4.0      /* hold below CHANGE_K x that rms change (if below HOLD_BELOW) */
#define SLOWING 0.99      /* the newest interval's rate below SLOWING x the previous one's: */
#define SLOWING_GAIN 0.75 /* the gain is multiplied by this */

void xg_rot_reset(struct xg_rot_state *s)
{
    memset(s, 0, sizeof *s);
}

void xg_rot_learn(struct xg_rot_state *s, int64_t t0_ns, int64_t t1_ns, const double d[3],
                  double dt, double hold_max)
{
    const double rate[3] = {d[0] / dt, d[1] / dt, d[2] / dt};
    const int continues = s->t_ns && s->t_ns == t1_ns && dt > 0;
    const struct xg_predict_tuning *tu = xg_predict_tuning();
    int slowing = 0;
    if (continues) {
        /* the confidence gate: holding against the shadow extrapolation over this interval */
        const double kp = s->k_fit;
        const double e[3] = {d[0] - kp * s->pred[0] * dt, d[1] - kp * s->pred[1] * dt,
                             d[2] - kp * s->pred[2] * dt};
        s->e_hold = tu->rot_gate_forget * s->e_hold + xg_dot3(d, d);
        s->e_shadow = tu->rot_gate_forget * s->e_shadow + xg_dot3(e, e);
        /* what the previous sample's fit would have turned over this interval, against what
         * happened */
        const double P[3] = {s->pred[0] * dt, s->pred[1] * dt, s->pred[2] * dt};
        s->num = GAIN_FORGET * s->num + xg_dot3(d, P);
        s->den = GAIN_FORGET * s->den + xg_dot3(P, P);
        if (s->n_rates) {
            slowing = xg_dot3(rate, rate) < SLOWING * SLOWING * xg_dot3(s->rate, s->rate);
            const double c[3] = {rate[0] - s->rate[0], rate[1] - s->rate[1], rate[2] - s->rate[2]};
            s->change2 = s->n_rates > 1
                             ? CHANGE_FORGET * s->change2 + (1 - CHANGE_FORGET) * xg_dot3(c, c)
                             : xg_dot3(c, c);
        }
        if (s->n_rates < 2) s->n_rates++;
    } else {
        s->n_rates = dt > 0 ? 1 : 0;
        s->change2 = 0;
        s->e_hold = s->e_shadow = 0;
    }
    double k = s->den > 0 ? s->num / s->den : GAIN_UNKNOWN;
    if (!(k > 0)) k = 0;
    if (k > XG_ROT_GAIN_MAX) k = XG_ROT_GAIN_MAX;
    s->k_fit = k;
    if (slowing) k *= SLOWING_GAIN;
    if (tu->rot_gate_tau > 0 && s->e_hold > 0) {
        double c = (1 - s->e_shadow / s->e_hold) / tu->rot_gate_tau;
        k *= !(c > 0) ? 0 : c > 1 ? 1 : c;
    }
    double hold_below = hold_max * tu->rot_hold_scale;
    if (s->n_rates > 1 && CHANGE_K * sqrt(s->change2) < hold_below)
        hold_below = CHANGE_K * sqrt(s->change2);
    s->k_learned = k;
    s->hold_below = hold_below;
    memcpy(s->rate, rate, sizeof s->rate);
    memset(s->pred, 0, sizeof s->pred);
    s->t_ns = t0_ns;
}

void xg_rot_interval(const struct xg_rot_state *s, double dt, double d[3])
{
    for (int i = 0; i < 3; i++)
        d[i] = s->rate[i] * dt;
}

double xg_rot_decide(struct xg_rot_state *s, const double d[3], const double w_in[3],
                     struct xg_vec3 *w_out)
{
    double w[3] = {w_in[0], w_in[1], w_in[2]};
    if (!isfinite(w[0] + w[1] + w[2])) w[0] = w[1] = w[2] = 0;
    /* a stop or a reversal: the newest interval did not turn the way the estimate says */
    const double wn = sqrt(xg_dot3(w, w));
    if (wn > 0 && !(xg_dot3(w, d) > XG_ROT_STILL_RAD * wn)) w[0] = w[1] = w[2] = 0;
    double k = s->k_learned;
    if (sqrt(xg_dot3(w, w)) < s->hold_below) k = 0;
    memcpy(s->pred, w, sizeof s->pred);
    s->gain = k;
    s->w = (struct xg_vec3){k * w[0], k * w[1], k * w[2]};
    *w_out = s->w;
    return k;
}

double xg_rot_update(struct xg_rot_state *s, int64_t t0_ns, struct xg_quat q0, int64_t t1_ns,
                     struct xg_quat q1, struct xg_vec3 w_fit, struct xg_vec3 *w_out)
{
    if (s->t_ns && s->t_ns == t0_ns) {
        *w_out = s->w;
        return s->gain;
    }
    const double dt = (double)(t0_ns - t1_ns) * 1e-9;
    /* the newest interval's rotation, world frame: log(q0 ⊗ q1*) */
    struct xg_vec3 d = xg_quat_log(xg_quat_mul(q0, xg_quat_conj(q1)));
    const double D[3] = {d.x, d.y, d.z};
    double w[3] = {w_fit.x, w_fit.y, w_fit.z};
    if (!(dt > 0)) w[0] = w[1] = w[2] = 0;
    xg_rot_learn(s, t0_ns, t1_ns, D, dt, XG_ROT_HOLD_BELOW);
    return xg_rot_decide(s, D, w, w_out);
}
