/* Small helpers shared by the tests/bench/bench_*.c programs (header-only).
 *
 * Every bench program prints ONE JSON object on stdout: raw per-repetition figures (arrays, one
 * value per repetition) that tests/bench/run.py aggregates (median, min, max, ratio to the same
 * run's baseline). Human-readable progress goes to stderr. Options common to all programs:
 * --reps N (repetitions, default 5) and --ms M (duration of one timed repetition, default 300). */
#ifndef XG_BENCH_UTIL_H
#define XG_BENCH_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/** CLOCK_MONOTONIC in ns. */
static inline int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/** CPU time of the calling thread in ns (CLOCK_THREAD_CPUTIME_ID). */
static inline int64_t bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/** Options common to all bench programs. */
struct bench_opts {
    int reps;   /* repetitions of each measurement (>= 1) */
    int ms;     /* duration of one timed repetition, milliseconds */
    bool quick; /* smoke mode: smallest sizes, shortest runs */
};

/** Parse --reps N, --ms M, --quick; unknown arguments abort with a usage line. */
static inline void bench_parse(int argc, char **argv, struct bench_opts *o)
{
    o->reps = 5;
    o->ms = 300;
    o->quick = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            o->reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--ms") && i + 1 < argc) {
            o->ms = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--quick")) {
            o->quick = true;
        } else {
            fprintf(stderr, "usage: %s [--reps N] [--ms M] [--quick]\n", argv[0]);
            exit(2);
        }
    }
    if (o->reps < 1) o->reps = 1;
    if (o->ms < 10) o->ms = 10;
}

/* ---- tiny JSON writer on stdout (no escaping needed: keys are literals) ---- */

struct bench_json {
    bool first[16]; /* per nesting level: no member written yet */
    int depth;
};

static inline void bench_json_sep(struct bench_json *j)
{
    if (!j->first[j->depth]) fputc(',', stdout);
    j->first[j->depth] = false;
}

/** Open an object: bench_json_open(j, NULL) for the root, else as member `key`. */
static inline void bench_json_open(struct bench_json *j, const char *key)
{
    if (key) {
        bench_json_sep(j);
        printf("\"%s\":", key);
    }
    fputc('{', stdout);
    j->first[++j->depth] = true;
}

static inline void bench_json_close(struct bench_json *j)
{
    fputc('}', stdout);
    j->depth--;
    if (j->depth == 0) fputc('\n', stdout);
}

static inline void bench_json_num_raw(double v)
{
    if (isfinite(v))
        printf("%.9g", v);
    else
        fputs("null", stdout);
}

/** Member `key`: a number (NaN/Inf written as null). */
static inline void bench_json_num(struct bench_json *j, const char *key, double v)
{
    bench_json_sep(j);
    printf("\"%s\":", key);
    bench_json_num_raw(v);
}

/** Member `key`: an array of n numbers. */
static inline void bench_json_arr(struct bench_json *j, const char *key, const double *v, int n)
{
    bench_json_sep(j);
    printf("\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', stdout);
        bench_json_num_raw(v[i]);
    }
    fputc(']', stdout);
}

/** Member `key`: a string (caller guarantees no quotes or backslashes). */
static inline void bench_json_str(struct bench_json *j, const char *key, const char *s)
{
    bench_json_sep(j);
    printf("\"%s\":\"%s\"", key, s);
}

/* ---- percentiles ---- */

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/** Sort v[0..n) in place and return the q-quantile (0..1, nearest rank); NaN if n == 0. */
static inline double bench_quantile_sorted(const double *v, size_t n, double q)
{
    if (!n) return NAN;
    size_t k = (size_t)ceil(q * (double)n);
    if (k < 1) k = 1;
    if (k > n) k = n;
    return v[k - 1];
}

/** Keep the optimiser from discarding a computed value. */
static inline void bench_sink(const void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

#endif
