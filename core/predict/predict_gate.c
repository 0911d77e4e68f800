/* Confidence gating of the extrapolated velocity and the predictor's tunables (predict_gate.h). */
#include "core/predict/predict_gate.h"

#include <math.h>
#include <string.h>

static struct xg_predict_tuning tuning = XG_PREDICT_TUNING_DEFAULT;

const struct xg_predict_tuning *xg_predict_tuning(void)
{
    return &tuning;
}

static double clampd(double x, double lo, double hi)
{
    return !(x > lo) ? lo : x > hi ? hi : x;
}

void xg_predict_tuning_set(const struct xg_predict_tuning *t)
{
    static const struct xg_predict_tuning def = XG_PREDICT_TUNING_DEFAULT;
    if (!t) t = &def;
    tuning.vel_forget = clampd(t->vel_forget, 0, 0.999);
    tuning.vel_gate_tau = clampd(t->vel_gate_tau, 0.01, 1);
    tuning.rot_hold_scale = clampd(t->rot_hold_scale, 0, 4);
    tuning.rot_gate_tau = clampd(t->rot_gate_tau, 0, 1);
    tuning.rot_gate_forget = clampd(t->rot_gate_forget, 0, 0.999);
}

void xg_vel_gate_reset(struct xg_vel_gate *g)
{
    memset(g, 0, sizeof *g);
}

double xg_vel_gate_update(struct xg_vel_gate *g, int64_t t_ns, struct xg_vec3 p,
                          struct xg_vec3 v_fit, int64_t gap_ns, struct xg_vec3 *v_out)
{
    if (g->t_ns && t_ns == g->t_ns) {
        *v_out = xg_vec3_scale(v_fit, g->k);
        return g->k;
    }
    const double P[3] = {p.x, p.y, p.z}, V[3] = {v_fit.x, v_fit.y, v_fit.z};
    int stopped = 0;
    if (g->t_ns && t_ns > g->t_ns && t_ns - g->t_ns <= gap_ns) {
        const double dt = (double)(t_ns - g->t_ns) * 1e-9, lam = tuning.vel_forget;
        double d[3], e[3];
        for (int i = 0; i < 3; i++)
            d[i] = P[i] - g->p[i], e[i] = g->v[i] * dt;
        const double r[3] = {d[0] - e[0], d[1] - e[1], d[2] - e[2]};
        g->e_hold = lam * g->e_hold + xg_dot3(d, d);
        g->e_pred = lam * g->e_pred + xg_dot3(r, r);
        /* a stop or a reversal: the newest interval did not move the way the fit says */
        const double vn = sqrt(xg_dot3(V, V));
        stopped = vn > 0 && !(xg_dot3(d, V) > XG_VEL_STILL_M * vn);
    } else {
        g->e_hold = g->e_pred = 0;
    }
    g->k = g->e_hold > 0 ? clampd((1 - g->e_pred / g->e_hold) / tuning.vel_gate_tau, 0, 1) : 1;
    if (!isfinite(g->k)) g->k = 1;
    if (stopped) g->k = 0;
    memcpy(g->p, P, sizeof g->p);
    memcpy(g->v, V, sizeof g->v);
    g->t_ns = t_ns;
    *v_out = xg_vec3_scale(v_fit, g->k);
    return g->k;
}
