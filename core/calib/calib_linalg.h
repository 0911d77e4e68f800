/* Small dense linear algebra for the space calibration's solver (core/calib/calib_solve.h):
 * symmetric eigen decomposition (cyclic Jacobi), a linear solve with partial pivoting, and the
 * nearest rotation to a 3×3 matrix. Matrices are row-major double arrays of n×n (n <= XG_LA_MAX).
 * No allocation; everything is on the caller's arrays. */
#ifndef XG_CALIB_LINALG_H
#define XG_CALIB_LINALG_H

#define XG_LA_MAX 9

/** Eigen decomposition of the symmetric n×n matrix a (row-major; destroyed): eigenvalues in
 *  val[0..n-1] in ascending order, eigenvector j in column j of vec (row-major n×n, unit
 *  length). Cyclic Jacobi rotations until the off-diagonal part is negligible (at most 64
 *  sweeps). Returns 0, or -EINVAL for n outside 1..XG_LA_MAX or a non-finite entry. */
int xg_la_eigen_sym(int n, double *a, double *val, double *vec);

/** Solve a·x = b for x (a: n×n row-major, destroyed; b: n, destroyed) by Gaussian elimination
 *  with partial pivoting. Returns 0, or -EDOM when a pivot is below 1e-300 (singular). */
int xg_la_solve(int n, double *a, double *b, double *x);

/** The rotation nearest to m (the orthogonal polar factor, Frobenius norm) into r, by Newton's
 *  iteration r ← (r + r⁻ᵀ)/2 from m. m must have det > 0. Returns 0, or -EDOM when m is
 *  singular or the result is not a rotation. */
int xg_la_nearest_rotation(const double m[3][3], double r[3][3]);

#endif
