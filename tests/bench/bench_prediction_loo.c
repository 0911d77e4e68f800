/* Prediction on kinds of motion it was not tuned on: four real takes replayed causally into the
 * entity table, every tunable constant of the predictor fitted on three of them and reported on
 * the fourth (leave-one-out). See docs/prediction.md, "Leave-one-out on four takes".
 *
 * Takes (tests/vectors): the CMU walk (mocap/cmu_08_10_walk.bvh), CMU 01_01 (hops, a turn) and
 * 01_03 (a ladder, a bar) and a boxer (assimp-bvh/Boxing_Toes.bvh: 100 Hz, another skeleton,
 * resampled to 120 Hz here by interpolating the world poses between frames). Each take is turned
 * into world poses at 120 Hz by the benchmarks' own forward kinematics (tests/bench/bvh_take.h,
 * independent of the code under test).
 *
 * Two ways of feeding the table, each at 30 Hz (every 4th pose, every phase; --quick: phase 0
 * only) and 120 Hz, as poses only (velocities estimated by the table from samples up to now),
 * every answer predicted 33.3 ms (4 frames) ahead and compared with the pose there; hold = the
 * newest sample unchanged; the first 100 ms not scored:
 *   - skeleton: every joint, linked to its parent joint (as the bvh adapter links them);
 *   - rigid: the head and the two hands' world poses as three entities without parent or children
 *     (a headset and two controllers).
 * Figures: position and rotation error as a fraction of holding's (mean: Σ pred / Σ hold over
 * joint-instants; p95: the 95th percentile's ratio), share of joint-instants where the prediction
 * is worse than holding (by more than 1e-9), per take and pooled (all joint-instants of the four).
 *
 * Leave-one-out: each candidate setting of the predictor's tunables (struct xg_predict_tuning,
 * core/predict/predict_rot.h) is run on every take; for each take the candidate with the lowest
 * objective on the other three (pooled, skeleton and rigid at 30 Hz: choose()) is reported on it.
 * The candidate the four together choose is the default (XG_PREDICT_TUNING_DEFAULT); the bench says
 * whether it still is.
 *
 * Usage: bench_prediction_loo [--quick] [--time | --time-only] [--reps N] [OUT_DIR]. Prints the
 * table, writes OUT_DIR/prediction_loo.json. --quick: phase 0 at 30 Hz and only the default tuning
 * (for the ctest guard; its rows are then the default's, not leave-one-out). --time: also the
 * thread CPU per joint sample of the table at 120 Hz with and without the motion memory (the only
 * timed figures: least and median of N replays, --reps, default 9); --time-only: only those,
 * nothing written. Deterministic otherwise. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/table/entity.h"
#include "core/predict/predict_rot.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/bvh_take.h"

#define HZ 120.0
#define AHEAD 4 /* frames at 120 Hz: 33.3 ms */
#define WARMUP_NS (100 * INT64_C(1000000))
#define WORSE_EPS 1e-9
#define N_TAKES 4
#define N_RATES 2
#define N_MODES 2
#define GOAL_WORSE 0.05

static const struct {
    const char *file, *name;
    double scale; /* m per file unit */
    long start;   /* first frame (the CMU converter's T-pose skipped) */
} takes[N_TAKES] = {
    {"mocap/cmu_08_10_walk.bvh", "walk", 0.0254 / 0.45, 1},
    {"assimp-bvh/01_01.bvh", "hops", 0.0254 / 0.45, 1},
    {"assimp-bvh/01_03.bvh", "ladder", 0.0254 / 0.45, 1},
    {"assimp-bvh/Boxing_Toes.bvh", "boxer", 0.01, 0},
};
static const long rate_step[N_RATES] = {4, 1}; /* 30 and 120 Hz */
static const char *const mode_names[N_MODES] = {"skeleton", "rigid"};

/* A take as world poses at 120 Hz: nj scored joints (End Sites left out), parents among them. */
struct prep {
    int nj, parent[MAXJ], rigid[3], n_rigid;
    char name[MAXJ][64];
    long nf;
    double (*P)[3], (*Q)[4];
};

static void nlerp(const double a[4], const double b[4], double u, double o[4])
{
    double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3], s = d < 0 ? -1 : 1, n = 0;
    for (int i = 0; i < 4; i++)
        o[i] = (1 - u) * a[i] + u * s * b[i], n += o[i] * o[i];
    for (int i = 0; i < 4; i++)
        o[i] /= sqrt(n);
}

static int prepare(int ti, struct prep *pp)
{
    static struct take tk;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", XG_VECTORS_DIR, takes[ti].file);
    tk.scale = takes[ti].scale;
    int rc = load_take(path, &tk);
    if (rc) {
        fprintf(stderr, "%s: cannot read the take (%s)\n", path, strerror(-rc));
        return rc;
    }
    int map[MAXJ], nj = 0;
    memset(pp, 0, sizeof *pp);
    for (int j = 0; j < tk.nj; j++) {
        map[j] = -1;
        if (tk.j[j].end) continue;
        map[j] = nj;
        snprintf(pp->name[nj], sizeof pp->name[nj], "%s", tk.j[j].name);
        pp->parent[nj] = tk.j[j].parent >= 0 ? map[tk.j[j].parent] : -1;
        if (!strcmp(tk.j[j].name, "Head") || !strcmp(tk.j[j].name, "LeftHand") ||
            !strcmp(tk.j[j].name, "RightHand") || !strcmp(tk.j[j].name, "LeftWrist") ||
            !strcmp(tk.j[j].name, "RightWrist"))
            pp->rigid[pp->n_rigid++] = nj;
        nj++;
    }
    pp->nj = nj;
    const long n_src = tk.nf - takes[ti].start;
    double(*P)[3] = calloc((size_t)(n_src * tk.nj), sizeof *P);
    double(*Q)[4] = calloc((size_t)(n_src * tk.nj), sizeof *Q);
    mat3 *R = calloc((size_t)tk.nj, sizeof *R);
    if (!P || !Q || !R) return -ENOMEM;
    for (long k = 0; k < n_src; k++) {
        fk(&tk, k + takes[ti].start, P + k * tk.nj, R);
        for (int j = 0; j < tk.nj; j++)
            mat_quat(R[j], Q[k * tk.nj + j]);
    }
    const double ratio_t = 1.0 / (HZ * tk.ft); /* source frames per output frame */
    pp->nf = (long)floor((double)(n_src - 1) / ratio_t) + 1;
    pp->P = calloc((size_t)(pp->nf * nj), sizeof *pp->P);
    pp->Q = calloc((size_t)(pp->nf * nj), sizeof *pp->Q);
    if (!pp->P || !pp->Q) return -ENOMEM;
    for (long n = 0; n < pp->nf; n++) {
        const double src = (double)n * ratio_t;
        long a = (long)floor(src + 1e-9);
        double u = src - (double)a;
        if (u < 1e-9 || a + 1 >= n_src) u = 0;
        const long b = u > 0 ? a + 1 : a;
        for (int j = 0; j < tk.nj; j++) {
            if (map[j] < 0) continue;
            double *po = pp->P[n * nj + map[j]], *qo = pp->Q[n * nj + map[j]];
            for (int i = 0; i < 3; i++)
                po[i] = (1 - u) * P[a * tk.nj + j][i] + u * P[b * tk.nj + j][i];
            nlerp(Q[a * tk.nj + j], Q[b * tk.nj + j], u, qo);
        }
    }
    free(P);
    free(Q);
    free(R);
    free(tk.rows);
    return 0;
}

/* ---- scoring ---- */

enum { E_PP, E_PH, E_RP, E_RH, N_E };

struct score {
    struct series s[N_E];
    size_t worse_pos, worse_rot;
};

struct figures {
    double pos_mean, pos_p95, rot_mean, rot_p95, worse_pos, worse_rot;
    size_t n;
};

static void score_free(struct score *s)
{
    for (int i = 0; i < N_E; i++)
        free(s->s[i].v);
    memset(s, 0, sizeof *s);
}

static struct figures figures_of(struct score *s)
{
    struct figures f = {0};
    struct stat2 st[N_E];
    for (int i = 0; i < N_E; i++)
        st[i] = stat_of(&s->s[i]);
    f.n = s->s[0].n;
    if (!f.n) return f;
    f.pos_mean = st[E_PP].mean / st[E_PH].mean;
    f.pos_p95 = st[E_PP].p95 / st[E_PH].p95;
    f.rot_mean = st[E_RP].mean / st[E_RH].mean;
    f.rot_p95 = st[E_RP].p95 / st[E_RH].p95;
    f.worse_pos = (double)s->worse_pos / (double)f.n;
    f.worse_rot = (double)s->worse_rot / (double)f.n;
    return f;
}

/* Replay one take into fresh tables (one per phase) and score every answer 33.3 ms ahead. */
static int replay(const struct prep *pp, int mode, long step, bool quick, struct score *sc)
{
    const int nj = pp->nj;
    const long phases = quick ? 1 : step;
    for (long phase = 0; phase < phases; phase++) {
        struct xg_table_params params;
        xg_table_params_default(&params);
        struct xg_table *t = xg_table_new(&params);
        if (!t) return -ENOMEM;
        uint32_t ids[MAXJ] = {0};
        for (long k = phase; k < pp->nf; k += step) {
            const int64_t ts = (int64_t)llround((double)k / HZ * 1e9);
            const int n_fed = mode == 0 ? nj : pp->n_rigid;
            for (int i = 0; i < n_fed; i++) {
                const int j = mode == 0 ? i : pp->rigid[i];
                const double *p = pp->P[k * nj + j], *q = pp->Q[k * nj + j];
                struct xg_sample s = {.capture_ns = ts,
                                      .receive_ns = ts,
                                      .flags = XG_SAMPLE_POSE,
                                      .position = {p[0], p[1], p[2]},
                                      .orientation = {q[0], q[1], q[2], q[3]}};
                struct xg_entity_key key = {.source = pp->name[j], .kind = XG_KIND_JOINT};
                int rc = xg_table_update_origin(t, 0, &key, &s, &ids[j]);
                if (rc) {
                    fprintf(stderr, "xg_table_update: %d\n", rc);
                    xg_table_free(t);
                    return rc;
                }
            }
            if (mode == 0 && k == phase)
                for (int j = 0; j < nj; j++)
                    if (pp->parent[j] >= 0) xg_table_set_parent(t, ids[j], ids[pp->parent[j]]);
            const long kt = k + AHEAD;
            if (ts < WARMUP_NS || kt >= pp->nf) continue;
            const int64_t tq = (int64_t)llround((double)kt / HZ * 1e9);
            for (int i = 0; i < n_fed; i++) {
                const int j = mode == 0 ? i : pp->rigid[i];
                struct xg_pose pose;
                xg_entity_predict(t, ids[j], tq, &pose);
                const double *tp = pp->P[kt * nj + j], *tq4 = pp->Q[kt * nj + j];
                const double *hp = pp->P[k * nj + j], *hq = pp->Q[k * nj + j];
                const double pq[4] = {pose.orientation.x, pose.orientation.y, pose.orientation.z,
                                      pose.orientation.w};
                double e[N_E];
                e[E_PP] = hypot(hypot(pose.position.x - tp[0], pose.position.y - tp[1]),
                                pose.position.z - tp[2]);
                e[E_PH] = hypot(hypot(hp[0] - tp[0], hp[1] - tp[1]), hp[2] - tp[2]);
                e[E_RP] = quat_angle_deg(pq, tq4);
                e[E_RH] = quat_angle_deg(hq, tq4);
                for (int x = 0; x < N_E; x++)
                    push(&sc->s[x], e[x]);
                sc->worse_pos += e[E_PP] > e[E_PH] + WORSE_EPS;
                sc->worse_rot += e[E_RP] > e[E_RH] + WORSE_EPS;
            }
        }
        xg_table_free(t);
    }
    return 0;
}

/* Thread CPU per joint sample (ns) of feeding a take's skeleton at 120 Hz into a fresh table, with
 * or without the motion memory: the least and the median of COST_REPS replays (the machine may
 * be shared: the least is the figure, the median shows how noisy the run was). */
#define COST_REPS 9
static int cost_reps = COST_REPS; /* --reps N */
static int cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cost_ns(const struct prep *pp, bool memory, double *least, double *median)
{
    double ns[64];
    for (int rep = 0; rep < cost_reps; rep++) {
        struct xg_table_params params;
        xg_table_params_default(&params);
        if (!memory) params.motion_memory_ns = 0;
        struct xg_table *t = xg_table_new(&params);
        if (!t) return -1;
        uint32_t ids[MAXJ] = {0};
        int64_t n = 0;
        const int64_t c0 = bench_thread_cpu_ns();
        for (long k = 0; k < pp->nf; k++) {
            const int64_t ts = (int64_t)llround((double)k / HZ * 1e9);
            for (int j = 0; j < pp->nj; j++, n++) {
                const double *p = pp->P[k * pp->nj + j], *q = pp->Q[k * pp->nj + j];
                struct xg_sample s = {.capture_ns = ts,
                                      .receive_ns = ts,
                                      .flags = XG_SAMPLE_POSE,
                                      .position = {p[0], p[1], p[2]},
                                      .orientation = {q[0], q[1], q[2], q[3]}};
                struct xg_entity_key key = {.source = pp->name[j], .kind = XG_KIND_JOINT};
                if (xg_table_update_origin(t, 0, &key, &s, &ids[j])) {
                    xg_table_free(t);
                    return -1;
                }
            }
            if (k == 0)
                for (int j = 0; j < pp->nj; j++)
                    if (pp->parent[j] >= 0) xg_table_set_parent(t, ids[j], ids[pp->parent[j]]);
        }
        ns[rep] = (double)(bench_thread_cpu_ns() - c0) / (double)n;
        xg_table_free(t);
    }
    qsort(ns, (size_t)cost_reps, sizeof ns[0], cmp_dbl);
    *least = ns[0];
    *median = ns[cost_reps / 2];
    return 0;
}

/* The candidates: the rotation tunables (hold threshold scale x confidence gate) at the default
 * velocity gate, and the velocity gate's forgetting at the default rotation tunables. Position
 * depends only on the velocity gate and rotation only on the rotation tunables (the skeleton's
 * bones use the velocity before the gate; main() checks it), so each take's leave-one-out figures
 * combine the rotation of its rotation choice with the position of its velocity choice. */
static const double c_hold[] = {0.5, 0.75, 1.0}, c_tau[] = {0, 0.25, 0.5}, c_vel[] = {0.5, 0.9},
                    c_vtau[] = {0.25, 0.5};
#define N_ROT_C 9
#define N_CAND (N_ROT_C + 4)
static const struct xg_predict_tuning def_tuning = XG_PREDICT_TUNING_DEFAULT;

static struct xg_predict_tuning cand_tuning(int c)
{
    struct xg_predict_tuning t = def_tuning;
    if (c < N_ROT_C) {
        t.rot_hold_scale = c_hold[c / 3];
        t.rot_gate_tau = c_tau[c % 3];
    } else {
        t.vel_forget = c_vel[(c - N_ROT_C) / 2];
        t.vel_gate_tau = c_vtau[(c - N_ROT_C) % 2];
    }
    return t;
}

static bool cand_is_default(int c)
{
    const struct xg_predict_tuning t = cand_tuning(c);
    return t.vel_forget == def_tuning.vel_forget && t.vel_gate_tau == def_tuning.vel_gate_tau &&
           t.rot_hold_scale == def_tuning.rot_hold_scale &&
           t.rot_gate_tau == def_tuning.rot_gate_tau;
}

static const char *cand_name(int c)
{
    static char names[N_CAND][48];
    const struct xg_predict_tuning t = cand_tuning(c);
    snprintf(names[c], sizeof names[c], "h%.2f g%.2f v%.2f/%.2f", t.rot_hold_scale, t.rot_gate_tau,
             t.vel_forget, t.vel_gate_tau);
    return names[c];
}

/* What a candidate is chosen by, on the pooled joint-instants of the takes in `mask` at 30 Hz
 * (skeleton and rigid): rotation candidates by the lowest rotation mean ratio among those worse
 * than holding in at most 5 % of joint-instants (the goal; if none is, the lowest share);
 * velocity candidates by the position mean ratio. */
static struct score S[N_CAND][N_TAKES][N_RATES][N_MODES];
static bool ran[N_CAND];

/* The score of take ti with rotation candidate cr and velocity candidate cv: rotation series
 * from cr's run, position series from cv's. */
static void score_combined(struct score *to, int cr, int cv, int ti, int r, int m)
{
    const struct score *a = &S[cr][ti][r][m], *b = &S[cv][ti][r][m];
    for (int i = 0; i < N_E; i++) {
        const struct score *from = i == E_RP || i == E_RH ? a : b;
        for (size_t k = 0; k < from->s[i].n; k++)
            push(&to->s[i], from->s[i].v[k]);
    }
    to->worse_rot += a->worse_rot;
    to->worse_pos += b->worse_pos;
}

static int choose(unsigned mask, bool rotation, int fixed)
{
    int best = -1;
    double best_o = 0;
    for (int c = 0; c < N_CAND; c++) {
        if (!ran[c] || (rotation ? c >= N_ROT_C : (c < N_ROT_C && !cand_is_default(c)))) continue;
        struct score acc;
        memset(&acc, 0, sizeof acc);
        for (int ti = 0; ti < N_TAKES; ti++)
            for (int m = 0; m < N_MODES; m++)
                if (mask >> ti & 1)
                    score_combined(&acc, rotation ? c : fixed, rotation ? fixed : c, ti, 0, m);
        struct figures f = figures_of(&acc);
        score_free(&acc);
        /* rotation: the lowest mean among those within the goal on the share worse than
         * holding; when none is, the lowest share */
        const double o = !rotation                   ? f.pos_mean
                         : f.worse_rot <= GOAL_WORSE ? f.rot_mean
                                                     : 10 + f.worse_rot;
        if (best < 0 || o < best_o - 1e-12) best = c, best_o = o;
    }
    return best;
}

/* time the table on take pp (least, median) with and without the motion memory and print it */
static int print_cost(const struct prep *pp, double cost[2], double cost_off[2])
{
    if (cost_ns(pp, true, &cost[0], &cost[1]) || cost_ns(pp, false, &cost_off[0], &cost_off[1]))
        return -1;
    printf("table update at 120 Hz (%s skeleton, %d joints), thread CPU per joint sample, least "
           "(median) of %d replays: %.3f (%.3f) us with the motion memory, %.3f (%.3f) us "
           "without\n",
           takes[1].name, pp->nj, cost_reps, cost[0] / 1e3, cost[1] / 1e3, cost_off[0] / 1e3,
           cost_off[1] / 1e3);
    return 0;
}

static void print_row(FILE *out, const char *take, const char *mode, double hz, const char *cand,
                      const struct figures *f)
{
    fprintf(out, "%-10s %-8s %4.0f  %-14s %6.3f %6.3f  %6.3f %6.3f  %6.1f %6.1f  %7zu\n", take,
            mode, hz, cand, f->pos_mean, f->pos_p95, f->rot_mean, f->rot_p95, 100 * f->worse_pos,
            100 * f->worse_rot, f->n);
}

static void json_fig(FILE *f, const struct figures *x)
{
    fprintf(f,
            "{\"n\": %zu, \"pos_mean_ratio\": %.6g, \"pos_p95_ratio\": %.6g, \"rot_mean_ratio\": "
            "%.6g, \"rot_p95_ratio\": %.6g, \"pos_worse_share\": %.6g, \"rot_worse_share\": %.6g}",
            x->n, x->pos_mean, x->pos_p95, x->rot_mean, x->rot_p95, x->worse_pos, x->worse_rot);
}

int main(int argc, char **argv)
{
    const char *dir = ".";
    bool quick = false, timed = false, time_only = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--time"))
            timed = true;
        else if (!strcmp(argv[i], "--time-only"))
            timed = time_only = true;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            cost_reps = atoi(argv[++i]);
            if (cost_reps < 1 || cost_reps > 64) cost_reps = COST_REPS;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: bench_prediction_loo [--quick] [--time | --time-only] [--reps N] "
                   "[OUT_DIR]\n(writes OUT_DIR/prediction_loo.json, OUT_DIR defaults to .; "
                   "see docs/prediction.md)\n");
            return 0;
        } else if (!strncmp(argv[i], "--", 2)) {
            if (!strcmp(argv[i], "--ms") && i + 1 < argc) i++;
        } else
            dir = argv[i];
    }
    static struct prep pp[N_TAKES];
    for (int ti = 0; ti < N_TAKES; ti++)
        if (prepare(ti, &pp[ti])) return 1;
    if (time_only) {
        double a[2], b[2];
        return print_cost(&pp[1], a, b) ? 1 : 0;
    }
    int def = -1;
    for (int c = N_CAND - 1; c >= 0; c--) /* the first: a rotation candidate, ran in --quick */
        if (cand_is_default(c)) def = c;
    if (def < 0) {
        fprintf(stderr, "the default tuning (%s) is not among the candidates\n",
                "XG_PREDICT_TUNING_DEFAULT");
        return 1;
    }
    for (int c = 0; c < N_CAND; c++) {
        if (quick && c != def) continue;
        const struct xg_predict_tuning tu = cand_tuning(c);
        xg_predict_tuning_set(&tu);
        ran[c] = true;
        for (int ti = 0; ti < N_TAKES; ti++)
            for (int r = 0; r < N_RATES; r++)
                for (int m = 0; m < N_MODES; m++)
                    if (replay(&pp[ti], m, rate_step[r], quick, &S[c][ti][r][m])) return 1;
    }
    xg_predict_tuning_set(NULL);
    /* rotation must not depend on the velocity gate (the composition below relies on it) */
    for (int c = N_ROT_C; c < N_CAND; c++)
        for (int ti = 0; ti < N_TAKES && ran[c]; ti++)
            for (int m = 0; m < N_MODES; m++) {
                const struct score *a = &S[c][ti][0][m], *b = &S[def][ti][0][m];
                if (a->s[E_RP].n != b->s[E_RP].n ||
                    memcmp(a->s[E_RP].v, b->s[E_RP].v, a->s[E_RP].n * sizeof(double))) {
                    fprintf(stderr, "rotation depends on the velocity gate (%s)\n", cand_name(c));
                    return 1;
                }
            }

    const unsigned all = (1u << N_TAKES) - 1;
    int loo_r[N_TAKES], loo_v[N_TAKES];
    for (int ti = 0; ti < N_TAKES; ti++) {
        loo_r[ti] = choose(all & ~(1u << ti), true, def);
        loo_v[ti] = choose(all & ~(1u << ti), false, def);
    }
    const int all_r = choose(all, true, def), all_v = choose(all, false, def);

    printf("prediction on four takes, causal (poses only), 33.3 ms ahead%s; ratios to holding "
           "(mean: sums; p95: percentiles), worse = share of joint-instants worse than holding; "
           "tuning = the rotation / velocity candidates fitted on the other three takes\n",
           quick ? " (--quick: 30 Hz phase 0 only, the default tuning only)" : "");
    printf("%-10s %-8s %4s  %-27s %6s %6s  %6s %6s  %6s %6s  %7s\n", "take", "mode", "Hz",
           "tuning (rotation; velocity)", "pos", "pos", "rot", "rot", "worse", "worse", "n");
    printf("%-10s %-8s %4s  %-27s %6s %6s  %6s %6s  %6s %6s  %7s\n", "", "", "", "", "mean", "p95",
           "mean", "p95", "pos %", "rot %", "");
    struct figures F[N_TAKES + 1][N_RATES][N_MODES];
    for (int m = 0; m < N_MODES; m++)
        for (int r = 0; r < N_RATES; r++) {
            struct score pool;
            memset(&pool, 0, sizeof pool);
            for (int ti = 0; ti < N_TAKES; ti++) {
                struct score one;
                memset(&one, 0, sizeof one);
                score_combined(&one, loo_r[ti], loo_v[ti], ti, r, m);
                score_combined(&pool, loo_r[ti], loo_v[ti], ti, r, m);
                F[ti][r][m] = figures_of(&one);
                score_free(&one);
                char tn[64];
                snprintf(tn, sizeof tn, "%.11s; v%.2f/%.2f", cand_name(loo_r[ti]),
                         cand_tuning(loo_v[ti]).vel_forget, cand_tuning(loo_v[ti]).vel_gate_tau);
                print_row(stdout, takes[ti].name, mode_names[m], HZ / (double)rate_step[r], tn,
                          &F[ti][r][m]);
            }
            F[N_TAKES][r][m] = figures_of(&pool);
            score_free(&pool);
            print_row(stdout, "pooled", mode_names[m], HZ / (double)rate_step[r], "(each its own)",
                      &F[N_TAKES][r][m]);
        }
    if (!quick) { /* every candidate on all four takes, 30 Hz, skeleton and rigid pooled */
        printf(
            "candidates on all four takes (30 Hz, skeleton and rigid): rotation mean; p95; worse "
            "%% / position mean; p95; worse %%\n");
        for (int c = 0; c < N_CAND; c++) {
            struct score acc;
            memset(&acc, 0, sizeof acc);
            for (int ti = 0; ti < N_TAKES; ti++)
                for (int m = 0; m < N_MODES; m++)
                    score_combined(&acc, c, c, ti, 0, m);
            struct figures f = figures_of(&acc);
            score_free(&acc);
            printf("  %-22s %.3f; %.3f; %.1f %% / %.3f; %.3f; %.1f %%\n", cand_name(c), f.rot_mean,
                   f.rot_p95, 100 * f.worse_rot, f.pos_mean, f.pos_p95, 100 * f.worse_pos);
        }
    }
    const bool is_def = cand_is_default(all_r) && cand_is_default(all_v);
    printf("tuning the four takes choose together: %.11s; v%.2f/%.2f (default: %s)%s\n",
           cand_name(all_r), cand_tuning(all_v).vel_forget, cand_tuning(all_v).vel_gate_tau,
           cand_name(def), is_def ? "" : " -- NOT the default");
    int met = 0, checked = 0;
    for (int ti = 0; ti <= N_TAKES; ti++)
        for (int r = 0; r < N_RATES; r++)
            for (int m = 0; m < N_MODES; m++) {
                const struct figures *f = &F[ti][r][m];
                checked++;
                met += f->rot_mean <= 0.5 && f->rot_p95 <= 0.6 && f->pos_mean <= 0.25 &&
                       f->worse_rot <= GOAL_WORSE;
            }
    printf("goals (rotation mean <= 0.5, p95 <= 0.6, position mean <= 0.25, rotation worse <= 5 "
           "%%) met in %d of %d rows\n",
           met, checked);
    double cost[2] = {-1, -1}, cost_off[2] = {-1, -1};
    if (timed && print_cost(&pp[1], cost, cost_off)) return 1;

    char out[4096];
    snprintf(out, sizeof out, "%s/prediction_loo.json", dir);
    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", out, strerror(errno));
        return 1;
    }
    fprintf(f, "{\n  \"quick\": %s,\n  \"horizon_ms\": 33.333,\n  \"default\": \"%s\",\n",
            quick ? "true" : "false", cand_name(def));
    fprintf(f, "  \"chosen_by_all\": {\"rotation\": \"%s\", \"velocity\": \"%s\"},\n",
            cand_name(all_r), cand_name(all_v));
    if (cost[0] >= 0)
        fprintf(f,
                "  \"update_cpu_ns_per_joint_sample\": {\"memory\": %.1f, \"no_memory\": %.1f, "
                "\"memory_median\": %.1f, \"no_memory_median\": %.1f},\n",
                cost[0], cost_off[0], cost[1], cost_off[1]);
    else
        fprintf(f, "  \"update_cpu_ns_per_joint_sample\": null,\n");
    fprintf(f, "  \"rows\": [\n");
    for (int ti = 0; ti <= N_TAKES; ti++)
        for (int r = 0; r < N_RATES; r++)
            for (int m = 0; m < N_MODES; m++) {
                fprintf(f, "    {\"take\": \"%s\", \"mode\": \"%s\", \"rate_hz\": %.0f, ",
                        ti < N_TAKES ? takes[ti].name : "pooled", mode_names[m],
                        HZ / (double)rate_step[r]);
                if (ti < N_TAKES)
                    fprintf(f, "\"rotation_tuning\": \"%s\", \"velocity_tuning\": \"%s\", ",
                            cand_name(loo_r[ti]), cand_name(loo_v[ti]));
                fprintf(f, "\"figures\": ");
                json_fig(f, &F[ti][r][m]);
                fprintf(f, "}%s\n",
                        ti == N_TAKES && r == N_RATES - 1 && m == N_MODES - 1 ? "" : ",");
            }
    fprintf(f, "  ]\n}\n");
    fclose(f);
    printf("wrote %s\n", out);
    for (int c = 0; c < N_CAND; c++)
        for (int ti = 0; ti < N_TAKES; ti++)
            for (int r = 0; r < N_RATES; r++)
                for (int m = 0; m < N_MODES; m++)
                    score_free(&S[c][ti][r][m]);
    for (int ti = 0; ti < N_TAKES; ti++)
        free(pp[ti].P), free(pp[ti].Q);
    return 0;
}
