/* The prediction benchmarks' own BVH reader, forward kinematics and statistics (header-only,
 * shared by bench_bvh_prediction.c and bench_prediction_loo.c). Written independently of the
 * project's BVH parser and kinematics (adapters/bvh) and of core/util/xmath: the truth the
 * benchmarks score against uses none of the code under test. */
#ifndef XG_BENCH_BVH_TAKE_H
#define XG_BENCH_BVH_TAKE_H

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXJ 128

/* ---- a small independent BVH reader and forward kinematics (matrices) ---- */

struct joint {
    char name[64];
    int parent, nch, col;
    int ch[6]; /* 0..2 X/Y/Z position, 3..5 X/Y/Z rotation */
    double off[3];
    bool end;
};

struct take {
    double scale; /* metres per file unit, set by the caller before fk() */
    struct joint j[MAXJ];
    int nj, ncol;
    long nf;
    double ft;
    double *rows; /* nf x ncol */
};

static char *tok_next(char **s)
{
    char *p = *s;
    while (*p && isspace((unsigned char)*p))
        p++;
    if (!*p) return NULL;
    char *t = p;
    while (*p && !isspace((unsigned char)*p))
        p++;
    if (*p) *p++ = '\0';
    *s = p;
    return t;
}

static inline int load_take(const char *path, struct take *tk)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -errno;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(buf);
        return -EIO;
    }
    fclose(f);
    buf[size] = '\0';
    const double scale = tk->scale;
    memset(tk, 0, sizeof *tk);
    tk->scale = scale;
    char *s = buf, *t;
    int stack[MAXJ], sp = 0;
    while ((t = tok_next(&s)) && strcmp(t, "MOTION")) {
        if (!strcmp(t, "ROOT") || !strcmp(t, "JOINT") || !strcmp(t, "End")) {
            char *name = tok_next(&s);
            if (tk->nj == MAXJ || !name) goto bad;
            struct joint *j = &tk->j[tk->nj];
            j->parent = sp ? stack[sp - 1] : -1;
            j->end = !strcmp(t, "End");
            snprintf(j->name, sizeof j->name, "%s", j->end ? "End" : name);
            stack[sp++] = tk->nj++;
        } else if (!strcmp(t, "OFFSET")) {
            for (int i = 0; i < 3; i++)
                tk->j[stack[sp - 1]].off[i] = strtod(tok_next(&s), NULL);
        } else if (!strcmp(t, "CHANNELS")) {
            struct joint *j = &tk->j[stack[sp - 1]];
            j->nch = atoi(tok_next(&s));
            j->col = tk->ncol;
            tk->ncol += j->nch;
            for (int i = 0; i < j->nch; i++) {
                char *c = tok_next(&s);
                j->ch[i] = (c[0] - 'X') + (strstr(c, "rotation") ? 3 : 0);
            }
        } else if (!strcmp(t, "}")) {
            if (!sp) goto bad;
            sp--;
        }
    }
    if (!t || strcmp(tok_next(&s), "Frames:")) goto bad;
    tk->nf = atol(tok_next(&s));
    tok_next(&s); /* Frame */
    tok_next(&s); /* Time: */
    tk->ft = strtod(tok_next(&s), NULL);
    tk->rows = malloc((size_t)tk->nf * (size_t)tk->ncol * sizeof *tk->rows);
    if (!tk->rows) goto bad;
    for (long i = 0; i < tk->nf * tk->ncol; i++) {
        if (!(t = tok_next(&s))) goto bad;
        tk->rows[i] = strtod(t, NULL);
    }
    free(buf);
    return 0;
bad:
    free(buf);
    return -EINVAL;
}

typedef double mat3[3][3];

static inline void mat_mul(const mat3 a, const mat3 b, mat3 out)
{
    mat3 r;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            r[i][k] = a[i][0] * b[0][k] + a[i][1] * b[1][k] + a[i][2] * b[2][k];
    memcpy(out, r, sizeof r);
}

static inline void mat_axis(int axis, double deg, mat3 m)
{
    double c = cos(deg * M_PI / 180), s = sin(deg * M_PI / 180);
    int a = (axis + 1) % 3, b = (axis + 2) % 3;
    memset(m, 0, sizeof(mat3));
    m[axis][axis] = 1;
    m[a][a] = c, m[a][b] = -s;
    m[b][a] = s, m[b][b] = c;
}

/* world positions (m) and rotation matrices of every joint at frame k */
static inline void fk(const struct take *tk, long k, double (*P)[3], mat3 *R)
{
    const double *row = tk->rows + k * tk->ncol;
    for (int i = 0; i < tk->nj; i++) {
        const struct joint *j = &tk->j[i];
        double t[3] = {j->off[0], j->off[1], j->off[2]};
        mat3 L = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, A;
        for (int c = 0; c < j->nch; c++) {
            if (j->ch[c] < 3) {
                t[j->ch[c]] = row[j->col + c];
            } else {
                mat_axis(j->ch[c] - 3, row[j->col + c], A);
                mat_mul(L, A, L);
            }
        }
        if (j->parent < 0) {
            for (int a = 0; a < 3; a++)
                P[i][a] = t[a] * tk->scale;
            memcpy(R[i], L, sizeof L);
        } else {
            const mat3 *Rp = &R[j->parent];
            for (int a = 0; a < 3; a++)
                P[i][a] =
                    P[j->parent][a] +
                    ((*Rp)[a][0] * t[0] + (*Rp)[a][1] * t[1] + (*Rp)[a][2] * t[2]) * tk->scale;
            mat_mul(*Rp, L, R[i]);
        }
    }
}

/* rotation matrix -> unit quaternion x y z w (Shepperd) */
static inline void mat_quat(const mat3 m, double q[4])
{
    double tr = m[0][0] + m[1][1] + m[2][2];
    if (tr > 0) {
        double s = sqrt(tr + 1) * 2;
        q[3] = s / 4, q[0] = (m[2][1] - m[1][2]) / s, q[1] = (m[0][2] - m[2][0]) / s,
        q[2] = (m[1][0] - m[0][1]) / s;
    } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
        double s = sqrt(1 + m[0][0] - m[1][1] - m[2][2]) * 2;
        q[3] = (m[2][1] - m[1][2]) / s, q[0] = s / 4, q[1] = (m[0][1] + m[1][0]) / s,
        q[2] = (m[0][2] + m[2][0]) / s;
    } else if (m[1][1] > m[2][2]) {
        double s = sqrt(1 + m[1][1] - m[0][0] - m[2][2]) * 2;
        q[3] = (m[0][2] - m[2][0]) / s, q[0] = (m[0][1] + m[1][0]) / s, q[1] = s / 4,
        q[2] = (m[1][2] + m[2][1]) / s;
    } else {
        double s = sqrt(1 + m[2][2] - m[0][0] - m[1][1]) * 2;
        q[3] = (m[1][0] - m[0][1]) / s, q[0] = (m[0][2] + m[2][0]) / s,
        q[1] = (m[1][2] + m[2][1]) / s, q[2] = s / 4;
    }
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int i = 0; i < 4; i++)
        q[i] /= n;
}

/* angle (deg) between two unit quaternions: 2 atan2(|v|, |w|) of conj(a) b */
static inline double quat_angle_deg(const double a[4], const double b[4])
{
    double w = a[3] * b[3] + a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    double x = a[3] * b[0] - a[0] * b[3] - a[1] * b[2] + a[2] * b[1];
    double y = a[3] * b[1] + a[0] * b[2] - a[1] * b[3] - a[2] * b[0];
    double z = a[3] * b[2] - a[0] * b[1] + a[1] * b[0] - a[2] * b[3];
    return 2 * atan2(sqrt(x * x + y * y + z * z), fabs(w)) * 180 / M_PI;
}

static inline bool is_trunk(const char *name)
{
    static const char *const parts[] = {"hip",      "back",  "spine",  "neck",    "head",
                                        "shoulder", "chest", "pelvis", "clavicle"};
    char low[64];
    size_t n = strlen(name) < sizeof low - 1 ? strlen(name) : sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[n] = '\0';
    if (strstr(low, "upleg") || strstr(low, "thigh")) return false;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (strstr(low, parts[i])) return true;
    return false;
}

/* ---- statistics ---- */

struct series {
    double *v;
    size_t n, cap;
};

static inline void push(struct series *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4096;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
    }
    s->v[s->n++] = x;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct stat2 {
    double mean, p95;
};

static inline struct stat2 stat_of(struct series *s)
{
    struct stat2 r = {0, 0};
    if (!s->n) return r;
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += s->v[i];
    r.mean = sum / (double)s->n;
    qsort(s->v, s->n, sizeof *s->v, cmp_double);
    size_t k = (size_t)ceil(0.95 * (double)s->n) - 1;
    r.p95 = s->v[k < s->n ? k : s->n - 1];
    return r;
}

#endif
