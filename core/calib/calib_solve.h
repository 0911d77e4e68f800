/* Calibration between two tracking spaces (docs/calibration.md): one physical object seen by a
 * reference system (poses A_i) and by a target system (poses B_i). Solves
 *
 *     A_i · X = Y · B_i
 *
 * with Y the rigid transform from the target's world frame into the reference's world frame and X
 * the fixed offset from the target's notion of the object's local frame to the reference's (the
 * markers are never at the headset's eye point), plus the time offset between the two streams.
 *
 * Method:
 *  1. Time offset, coarse: the angular speed |ω| of each stream (invariant under X and Y) on a
 *     common 5 ms grid, normalised cross-correlation over ±max_offset, parabolic refinement of
 *     the peak (slow motions give a broad peak: good to a few tens of ms; refined in step 5).
 *  2. Pairs: at each reference sample time t the target interpolated at t + offset (positions
 *     linearly, orientations by SLERP).
 *  3. Observability: eigenvalues of the normal matrix N = Σ [R_Aᵢ  −I]ᵀ[R_Aᵢ  −I] / n shared by
 *     the rotation and translation problems; an eigenvalue below (1 − cos 10°) means the motion
 *     left a degree of freedom unobservable (its eigenvector names the axis): no answer then.
 *  4. Rotation: the Kronecker-product closed form of M. Shah, "Solving the robot-world/hand-eye
 *     calibration problem using the Kronecker product", ASME J. Mechanisms Robotics 5(3), 2013:
 *     vec(R_Y) = (Σ R_Aᵢ ⊗ R_Bᵢ) vec(R_X) / n, the leading singular vectors, projected onto
 *     SO(3). Translation: linear least squares R_Aᵢ t_X − t_Y = R_Y t_Bᵢ − t_Aᵢ.
 *  5. Refinement: Gauss-Newton on SO(3) × SO(3) × time (left small-angle increments of R_X and
 *     R_Y, and the time offset through the reference's angular velocity; pairs made again at
 *     each new offset) with Huber weights, then the translations again by iteratively reweighted
 * (Huber) linear least squares.
 *  6. Joint refinement: Gauss-Newton over both rotations and both translations together, the
 *     rotation and position residuals each scaled by their RMS, Huber weights: the object's
 *     path (its positions) then constrains R_Y too, not only its orientations.
 *
 * Frames and units: metres, seconds, Hamilton quaternions x y z w, body→world. Pure: no I/O, no
 * allocation beyond the caller's scratch (xg_calib_solve allocates its grids and frees them). */
#ifndef XG_CALIB_SOLVE_H
#define XG_CALIB_SOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "core/util/xmath.h"

/** One pose of the object as one system reports it. */
struct xg_calib_sample {
    int64_t t_ns;     /* capture time, gateway clock, ns */
    struct xg_vec3 p; /* m, that system's world frame */
    struct xg_quat q; /* unit, body→world */
};

/** Solver settings (xg_calib_opts_default). */
struct xg_calib_opts {
    double max_offset_s;   /* |time offset| searched, s (default 0.5) */
    double min_overlap_s;  /* streams must overlap this long, s (default 4) */
    size_t max_pairs;      /* pairs used, evenly spread (default 2000) */
    double min_spread_rad; /* rotation spread that makes an axis observable (default 10°) */
};

void xg_calib_opts_default(struct xg_calib_opts *o);

/* xg_calib_result.unobservable bits: Y's rotation about / translation along the reference
 * frame's axis x, y (up: yaw), z could not be told from the motion */
#define XG_CALIB_UNOBS_X (1u << 0) /* pitch */
#define XG_CALIB_UNOBS_Y (1u << 1) /* yaw */
#define XG_CALIB_UNOBS_Z (1u << 2) /* roll */

/** A rigid transform: p' = R(q)·p + t. */
struct xg_calib_xf {
    struct xg_vec3 t; /* m */
    struct xg_quat q; /* unit */
};

struct xg_calib_result {
    struct xg_calib_xf y; /* target world → reference world */
    struct xg_calib_xf x; /* target's object frame → reference's object frame */
    double time_offset_s; /* target capture time − reference capture time of one moment */
    double residual_m;    /* RMS position residual |A·X − Y·B| over the pairs, m */
    double residual_rad;  /* RMS rotation residual angle, rad */
    double max_residual_m, max_residual_rad;
    size_t pairs;          /* pairs used */
    double spread_rad[3];  /* RMS rotation of the reference stream about its frame's x y z */
    double eigen_min;      /* smallest eigenvalue of N (observability; 0..2) */
    unsigned unobservable; /* XG_CALIB_UNOBS_* (when xg_calib_solve returns -EDOM) */
};

/** Solve from the two streams (each in ascending t_ns; non-finite samples are skipped). Returns
 *  0 with *r filled; -EAGAIN when the streams overlap less than min_overlap_s, have too few
 *  samples or too little rotation to find the time offset; -EDOM when the motion leaves a degree
 *  of freedom unobservable (r->unobservable and r->spread_rad say which; no transform); -EINVAL
 *  for bad arguments or a result that is not finite; -ENOMEM. */
int xg_calib_solve(const struct xg_calib_sample *ref, size_t n_ref,
                   const struct xg_calib_sample *tgt, size_t n_tgt, const struct xg_calib_opts *o,
                   struct xg_calib_result *r);

/** Step 1 alone: the coarse time offset (s, target − reference) of the two streams; its normalised
 *  correlation peak in *peak (may be NULL). Errors as xg_calib_solve (-EAGAIN). */
int xg_calib_time_offset(const struct xg_calib_sample *ref, size_t n_ref,
                         const struct xg_calib_sample *tgt, size_t n_tgt,
                         const struct xg_calib_opts *o, double *offset_s, double *peak);

/** Residuals of a known solution on (newer) streams, for drift checks: RMS position (m) and
 *  rotation (rad) of A·X against Y·B over the pairs at the solution's time offset, and the
 *  pairs used. Returns 0, or -EAGAIN with fewer than 10 pairs. */
int xg_calib_residuals(const struct xg_calib_sample *ref, size_t n_ref,
                       const struct xg_calib_sample *tgt, size_t n_tgt,
                       const struct xg_calib_result *sol, size_t max_pairs, double *rms_m,
                       double *rms_rad, size_t *pairs);

/** Apply a transform: xf·(p, q) = (R·p + t, q_xf ⊗ q). */
struct xg_vec3 xg_calib_xf_point(const struct xg_calib_xf *xf, struct xg_vec3 p);
struct xg_calib_xf xg_calib_xf_mul(const struct xg_calib_xf *a, const struct xg_calib_xf *b);
struct xg_calib_xf xg_calib_xf_inv(const struct xg_calib_xf *a);

#endif
