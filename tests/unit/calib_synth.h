/* Synthetic calibration scene shared by tests/unit/test_calib_solve.c and
 * tests/bench/bench_calib.c: one object waved in front of two tracking systems. The reference
 * sees pose A(t) (120 Hz); the target sees B = Y⁻¹·A·X (90 Hz) `delay_s` late (its sample at time
 * t shows the object at t − delay); each sample gets Gaussian noise (per axis: `noise_m` metres,
 * `noise_rad` radians). `axes` selects the rotation motion: 7 = about x, y and z (waved), 2 = yaw
 * only (about y, the up axis). Deterministic (own generator). */
#ifndef XG_CALIB_SYNTH_H
#define XG_CALIB_SYNTH_H

#include <math.h>
#include <stdint.h>

#include "core/calib/calib_solve.h"

struct synth_rng {
    uint64_t s;
};

static inline double synth_uniform(struct synth_rng *r)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(r->s >> 11) + 0.5) / 9007199254740992.0;
}

static inline double synth_gauss(struct synth_rng *r)
{
    double u = synth_uniform(r), v = synth_uniform(r);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* the hidden transforms */
static inline struct xg_calib_xf synth_y(void)
{
    return (struct xg_calib_xf){{1.2, -0.3, 2.5},
                                xg_quat_from_axis_angle((struct xg_vec3){0.2, 1, -0.1}, 0.9)};
}

static inline struct xg_calib_xf synth_x(void)
{
    return (struct xg_calib_xf){{0.05, -0.08, 0.1},
                                xg_quat_from_axis_angle((struct xg_vec3){1, 0.3, 0.5}, 0.35)};
}

/* the object's true pose in the reference space at t (s) */
static inline struct xg_calib_xf synth_a(double t, unsigned axes)
{
    struct xg_vec3 r = {(axes & 1) ? 0.7 * sin(2 * M_PI * 0.31 * t) : 0,
                        (axes & 2) ? 0.9 * sin(2 * M_PI * 0.23 * t + 1) : 0,
                        (axes & 4) ? 0.6 * sin(2 * M_PI * 0.41 * t + 2) : 0};
    struct xg_quat q0 = xg_quat_from_axis_angle((struct xg_vec3){0, 1, 0}, 0.4);
    return (struct xg_calib_xf){{0.3 * sin(0.5 * t), 1.5 + 0.2 * sin(0.7 * t), 0.25 * cos(0.4 * t)},
                                xg_quat_normalize(xg_quat_mul(xg_quat_exp(r), q0))};
}

static inline struct xg_calib_sample synth_noisy(struct synth_rng *g, int64_t t_ns,
                                                 struct xg_calib_xf pose, double nm, double nr)
{
    struct xg_vec3 n = {nr * synth_gauss(g), nr * synth_gauss(g), nr * synth_gauss(g)};
    struct xg_calib_sample s = {t_ns, pose.t,
                                xg_quat_normalize(xg_quat_mul(xg_quat_exp(n), pose.q))};
    s.p.x += nm * synth_gauss(g);
    s.p.y += nm * synth_gauss(g);
    s.p.z += nm * synth_gauss(g);
    return s;
}

/* Fill ref (n_ref = seconds·120) and tgt (n_tgt = seconds·90) with the scene starting at t0_ns;
 * the noise drawn from `seed` (synth_scene: seed 12345). */
static inline void synth_scene_seed(uint64_t seed, double seconds, unsigned axes, double delay_s,
                                    double noise_m, double noise_rad, int64_t t0_ns,
                                    struct xg_calib_sample *ref, size_t *n_ref,
                                    struct xg_calib_sample *tgt, size_t *n_tgt)
{
    struct synth_rng g = {seed};
    struct xg_calib_xf y = synth_y(), x = synth_x(), yi = xg_calib_xf_inv(&y);
    *n_ref = (size_t)(seconds * 120);
    for (size_t i = 0; i < *n_ref; i++) {
        double t = (double)i / 120.0;
        ref[i] = synth_noisy(&g, t0_ns + (int64_t)llround(t * 1e9), synth_a(t, axes), noise_m,
                             noise_rad);
    }
    *n_tgt = (size_t)(seconds * 90);
    for (size_t j = 0; j < *n_tgt; j++) {
        double t = 0.0037 + (double)j / 90.0; /* another clock phase */
        struct xg_calib_xf a = synth_a(t - delay_s, axes), ax = xg_calib_xf_mul(&a, &x);
        struct xg_calib_xf b = xg_calib_xf_mul(&yi, &ax);
        tgt[j] = synth_noisy(&g, t0_ns + (int64_t)llround(t * 1e9), b, noise_m, noise_rad);
    }
}

#define synth_scene(...) synth_scene_seed(12345, __VA_ARGS__)

/* position (m) and angle (rad) between two transforms */
static inline void synth_err(const struct xg_calib_xf *a, const struct xg_calib_xf *b, double *m,
                             double *rad)
{
    *m = xg_vec3_norm(xg_vec3_sub(a->t, b->t));
    *rad = xg_quat_angle_between(a->q, b->q);
}

#endif
