#include "core/calib/calib_linalg.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/util/xmath.h"

int xg_la_eigen_sym(int n, double *a, double *val, double *vec)
{
    if (n < 1 || n > XG_LA_MAX) return -EINVAL;
    for (int i = 0; i < n * n; i++)
        if (!isfinite(a[i])) return -EINVAL;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            vec[i * n + j] = i == j;
    for (int sweep = 0; sweep < 64; sweep++) {
        double off = 0, tot = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                tot += a[i * n + j] * a[i * n + j];
                if (i != j) off += a[i * n + j] * a[i * n + j];
            }
        if (off <= 1e-30 * tot || off < 1e-300) break;
        for (int p = 0; p < n - 1; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q];
                if (fabs(apq) < 1e-300) continue;
                double theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) { /* columns p, q */
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) { /* rows p, q */
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < n; k++) {
                    double vkp = vec[k * n + p], vkq = vec[k * n + q];
                    vec[k * n + p] = c * vkp - s * vkq;
                    vec[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < n; i++)
        val[i] = a[i * n + i];
    /* ascending order (selection sort of eigenpairs) */
    for (int i = 0; i < n - 1; i++) {
        int m = i;
        for (int j = i + 1; j < n; j++)
            if (val[j] < val[m]) m = j;
        if (m == i) continue;
        double t = val[i];
        val[i] = val[m];
        val[m] = t;
        for (int k = 0; k < n; k++) {
            t = vec[k * n + i];
            vec[k * n + i] = vec[k * n + m];
            vec[k * n + m] = t;
        }
    }
    return 0;
}

int xg_la_solve(int n, double *a, double *b, double *x)
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[p * n + c])) p = r;
        if (!(fabs(a[p * n + c]) > 1e-300)) return -EDOM;
        if (p != c) {
            for (int k = 0; k < n; k++) {
                double t = a[c * n + k];
                a[c * n + k] = a[p * n + k];
                a[p * n + k] = t;
            }
            double t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        for (int r = c + 1; r < n; r++) {
            double f = a[r * n + c] / a[c * n + c];
            for (int k = c; k < n; k++)
                a[r * n + k] -= f * a[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        double s = b[r];
        for (int k = r + 1; k < n; k++)
            s -= a[r * n + k] * x[k];
        x[r] = s / a[r * n + r];
    }
    return 0;
}

int xg_la_nearest_rotation(const double m[3][3], double r[3][3])
{
    double x[3][3];
    memcpy(x, m, sizeof x);
    for (int it = 0; it < 100; it++) {
        double d = xg_mat3_det(x);
        if (!(d > 1e-300) || !isfinite(d)) return -EDOM;
        /* inverse transpose = cofactor matrix / det */
        double c[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
                c[i][j] = (x[i1][j1] * x[i2][j2] - x[i1][j2] * x[i2][j1]) / d;
            }
        double diff = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double v = 0.5 * (x[i][j] + c[i][j]);
                diff += (v - x[i][j]) * (v - x[i][j]);
                x[i][j] = v;
            }
        if (diff < 1e-30) break;
    }
    double d = xg_mat3_det(x);
    if (!(fabs(d - 1) < 1e-6)) return -EDOM;
    memcpy(r, x, sizeof x);
    return 0;
}
