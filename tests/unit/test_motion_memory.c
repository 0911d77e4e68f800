/* core/predict/motion_memory.c on its own (no entity table): frames, membership, the recurrence
 * rules of the match and the analog rate (core/predict/motion_memory.h). The skeletons are
 * synthetic: a root turning steadily (its heading never repeats) and joints whose rotation relative
 * to their parent is a periodic, non-sinusoidal function of time, so that every expected value (the
 * matched moment, each joint's turn after it) is computed here from the generating functions. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/predict/motion_memory.h"
#include "tests/unit/test_skeleton.h"

#define MS INT64_C(1000000)
#define S (1000 * MS)
#define T0 (INT64_C(1000) * S)
#define MAXJ 20

/* A skeleton: joint j (entity id j + 1) has parent parent[j] (-1 = the root). Its rotation
 * relative to its parent at time tau (s) is the rotation vector
 * amp[j] (x) xg_test_wave(2 pi tau / period + phase[j] (+) axis offsets): periodic with `period`,
 * not a sinusoid (the wave has three harmonics); mode SLOW turns it steadily instead, mode RIGID
 * holds it. */
enum gen_mode { PERIODIC, SLOW, RIGID };
struct skel {
    int n;
    int parent[MAXJ];
    double period;      /* s */
    enum gen_mode mode; /* how the joints move relative to their parents */
};

/* joint j's rotation relative to its parent at tau (s) */
static struct xg_quat rel_rot(const struct skel *s, int j, double tau)
{
    const double ph = 0.9 * j, a = 0.45 / (1 + 0.1 * j);
    switch (s->mode) {
    case SLOW: /* 0.12 rad/s at most per axis: under 0.25 rad over a 2 s span */
        return xg_quat_exp((struct xg_vec3){0.12 * tau, -0.08 * tau, 0.05 * tau * (1 + j % 2)});
    case RIGID:
        return xg_quat_exp((struct xg_vec3){0.3 + 0.1 * j, -0.2, 0.4});
    case PERIODIC:
    default: {
        const double x = 2 * M_PI * tau / s->period + ph;
        return xg_quat_exp((struct xg_vec3){a * xg_test_wave(x), 0.7 * a * xg_test_wave(x + 2.1),
                                            0.5 * a * xg_test_wave(x + 4.2)});
    }
    }
}

/* joint j's world orientation at tau (s); the root spins steadily: 0.7 rad/s (RIGID: 3 rad/s) */
static struct xg_quat world(const struct skel *s, int j, double tau)
{
    if (s->parent[j] < 0) {
        const double spin = s->mode == RIGID ? 3.0 : 0.7;
        return xg_quat_mul(xg_quat_exp((struct xg_vec3){0.2 * spin * tau, spin * tau, 0}),
                           xg_test_q_start);
    }
    return xg_quat_mul(world(s, s->parent[j], tau), rel_rot(s, j, tau));
}

static double tau_of(int64_t t_ns)
{
    return (double)(t_ns - T0) * 1e-9;
}

/* sample k's capture time at `rate` Hz (ns, truncated as a source's clock would be) */
static int64_t t_at(int k, int rate)
{
    return T0 + (int64_t)k * S / rate;
}

/* a chain of n joints (0 = root) */
static struct skel chain(int n, double period, enum gen_mode mode)
{
    struct skel s = {.n = n, .period = period, .mode = mode};
    for (int j = 0; j < n; j++)
        s.parent[j] = j - 1;
    return s;
}

/* a binary tree of n joints (0 = root) */
static struct skel tree(int n, double period)
{
    struct skel s = {.n = n, .period = period, .mode = PERIODIC};
    for (int j = 0; j < n; j++)
        s.parent[j] = j ? (j - 1) / 2 : -1;
    return s;
}

static int record(struct xg_motion_memory *m, const struct skel *s, int j, int64_t t_ns)
{
    const uint32_t pid = s->parent[j] < 0 ? 0 : (uint32_t)s->parent[j] + 1;
    return xg_memory_record(m, (uint32_t)j + 1, pid, t_ns, world(s, j, tau_of(t_ns)));
}

/* Which samples of record_range() complete the frame: none, the last one, or each one (the
 * first frame of a memory: every joint is new, the frame is complete again with each). */
enum completes { NONE, LAST, EACH };

/* record joints [from, to) at t_ns */
static void record_range(struct xg_motion_memory *m, const struct skel *s, int from, int to,
                         int64_t t_ns, enum completes c)
{
    for (int j = from; j < to; j++)
        assert_int_equal(record(m, s, j, t_ns), c == EACH || (c == LAST && j == to - 1) ? 1 : 0);
}

/* the joint index of an entity id */
static int joint_of(uint32_t id)
{
    assert_true(id >= 1 && id <= MAXJ);
    return (int)id - 1;
}

/* the true analog rate of joint j for the newest frame at t_ns matched at tm_ns: its world
 * turn over the 50 ms after tm (generated at the capture times around tm + 50 ms, slerped
 * between them when tm + 50 ms falls between two, as the memory knows only samples), mapped by
 * (its orientation now) x (its orientation at tm)^-1, over 50 ms. */
static struct xg_vec3 true_rate(const struct skel *s, int j, int64_t t_ns, int64_t tm_ns, int rate)
{
    const int64_t target = tm_ns + XG_MEMORY_RATE_SPAN_NS;
    int k = (int)floor(tau_of(target) * rate) - 1;
    while (t_at(k + 1, rate) <= target)
        k++;
    struct xg_quat qb = world(s, j, tau_of(t_at(k, rate)));
    if (t_at(k, rate) != target) {
        const double u =
            (double)(target - t_at(k, rate)) / (double)(t_at(k + 1, rate) - t_at(k, rate));
        qb = xg_quat_slerp(qb, world(s, j, tau_of(t_at(k + 1, rate))), u);
    }
    const struct xg_quat qm = world(s, j, tau_of(tm_ns));
    const struct xg_vec3 turn_world = xg_quat_log(xg_quat_mul(qb, xg_quat_conj(qm)));
    const struct xg_quat now_from_then = xg_quat_mul(world(s, j, tau_of(t_ns)), xg_quat_conj(qm));
    return xg_vec3_scale(xg_quat_rotate(now_from_then, turn_world),
                         1e9 / (double)XG_MEMORY_RATE_SPAN_NS);
}

/* Before a skeleton's pose comes back to the first frame of the memory there is nothing to
 * match; it comes close enough (3° rms) a little before the full period: at the speeds here
 * (about 3 rad/s rms per feature component for a 0.8 s period, slower for longer ones) within
 * the last sixteenth of it (50 ms of 0.8 s). */
#define NEAR_SHARE (1.0 / 16)

/* Check the match of the frame just completed at t_ns = t_at(k, rate) of a periodic skeleton
 * whose memory holds frames from first_ns on, every frame of them (a span of at most
 * XG_MEMORY_FRAMES intervals): before first + period (1 - NEAR_SHARE), none; from first +
 * period on, one at exactly t - period, with every joint's rate the true one within float
 * precision; in between a match, if any, is at first (its distance within
 * XG_MEMORY_MATCH_MAX). Returns whether it matched. */
static bool check_frame(struct xg_motion_memory *m, const struct skel *s, int k, int rate,
                        int64_t first_ns)
{
    const int64_t t_ns = t_at(k, rate), period_ns = (int64_t)llround(s->period * 1e9);
    const bool found = xg_memory_match(m);
    int64_t tm = 0;
    double d = -1;
    assert_int_equal(xg_memory_last_match(m, &tm, &d), found);
    if (t_ns < first_ns + period_ns - (int64_t)(NEAR_SHARE * (double)period_ns)) {
        if (found)
            fail_msg("%d Hz: a match at %.4f s for %.4f s (distance %g) in the first period", rate,
                     tau_of(tm), tau_of(t_ns), d);
        struct xg_vec3 w = {7, 7, 7};
        assert_false(xg_memory_rate(m, 0, &w));
        assert_true(w.x == 7 && w.y == 7 && w.z == 7); /* untouched */
        return false;
    }
    if (t_ns < first_ns + period_ns) {
        if (found) {
            assert_true(tm == first_ns);
            assert_true(d >= 0 && d <= XG_MEMORY_MATCH_MAX);
        }
        return found;
    }
    assert_true(found);
    if (llabs(tm - (t_ns - period_ns)) > 1) /* sample times are truncated to ns */
        fail_msg("%d Hz: at %.4f s a match at %.4f s (distance %g)", rate, tau_of(t_ns), tau_of(tm),
                 d);
    assert_true(d >= 0 && d <= XG_MEMORY_MATCH_MAX);
    assert_int_equal(xg_memory_count(m), (unsigned)s->n);
    for (unsigned slot = 0; slot < xg_memory_count(m); slot++) {
        const int j = joint_of(xg_memory_joint(m, slot));
        struct xg_vec3 w;
        assert_true(xg_memory_rate(m, slot, &w));
        const struct xg_vec3 want = true_rate(s, j, t_ns, tm, rate);
        const double err = xg_vec3_norm(xg_vec3_sub(w, want));
        if (err > 2e-5 * (1 + xg_vec3_norm(want)))
            fail_msg("rate %d Hz t %.4f s joint %d: %g %g %g, want %g %g %g", rate, tau_of(t_ns), j,
                     w.x, w.y, w.z, want.x, want.y, want.z);
    }
    struct xg_vec3 w;
    assert_false(xg_memory_rate(m, xg_memory_count(m), &w)); /* no such slot */
    return true;
}

/* A periodic skeleton (root + a chain of 3 joints, period 0.8 s) sampled at 30, 40 and 120 Hz:
 * no match during the first period (nothing to recur to); from the second period on every frame
 * matches the frame exactly one period earlier, and the rate of every joint is its true turn
 * over the 50 ms after the matched moment, turned into its frame now. The span, 1 s, holds one
 * earlier period only (the matched period is unambiguous) and every frame at these rates
 * (1 s / XG_MEMORY_FRAMES is less than 1/120 s), so the motion before the matched moment is
 * the motion before now: the same speed, the plain 50 ms turn (XG_MEMORY_SPEED_MIN/MAX). */
static void test_periodic_matches_one_period_back(void **state)
{
    (void)state;
    const int rates[] = {30, 40, 120};
    for (size_t ri = 0; ri < 3; ri++) {
        const int rate = rates[ri];
        const struct skel s = chain(4, 0.8, PERIODIC);
        struct xg_motion_memory *m = xg_memory_new(1 * S);
        assert_non_null(m);
        int matched = 0;
        for (int k = 0; k < 3 * rate; k++) { /* 3 s: 3.75 periods */
            record_range(m, &s, 0, s.n, t_at(k, rate), k ? LAST : EACH);
            assert_int_equal(xg_memory_count(m), 4);
            matched += check_frame(m, &s, k, rate, T0);
        }
        assert_true(matched >= 3 * rate - (int)(0.8 * rate));
        xg_memory_free(m);
    }
}

/* The AVX distance and the portable one give the same matches, distances and rates bit for bit
 * (a tree of 13 joints: 39 feature components, padded to 40, so both the full lanes and the
 * zero padding are summed). Without AVX on this processor both memories take the portable path
 * and the test still checks that path against itself. */
static void test_avx_and_portable_distance_agree(void **state)
{
    (void)state;
    const int rate = 120;
    const struct skel s = tree(13, 0.7);
    struct xg_motion_memory *a = xg_memory_new(1 * S), *p = xg_memory_new(1 * S);
    assert_non_null(a);
    assert_non_null(p);
    xg_memory_set_avx(a, true);
    assert_false(xg_memory_set_avx(p, false));
    int matched = 0;
    for (int k = 0; k < 3 * rate; k++) {
        const int64_t t = t_at(k, rate);
        for (int j = 0; j < s.n; j++) {
            const int ra = record(a, &s, j, t), rp = record(p, &s, j, t);
            assert_int_equal(ra, rp);
        }
        const bool fa = xg_memory_match(a), fp = xg_memory_match(p);
        assert_int_equal(fa, fp);
        if (!fa) continue;
        matched++;
        int64_t ta, tp;
        double da, dp;
        assert_true(xg_memory_last_match(a, &ta, &da));
        assert_true(xg_memory_last_match(p, &tp, &dp));
        assert_true(ta == tp);
        assert_memory_equal(&da, &dp, sizeof da);
        for (unsigned slot = 0; slot < xg_memory_count(a); slot++) {
            struct xg_vec3 wa, wp;
            assert_true(xg_memory_rate(a, slot, &wa));
            assert_true(xg_memory_rate(p, slot, &wp));
            assert_memory_equal(&wa, &wp, sizeof wa);
        }
    }
    assert_true(matched >= rate); /* from the second period on */
    xg_memory_free(a);
    xg_memory_free(p);
}

/* Every joint turns slowly and steadily (at most 0.12 rad/s per axis: under 0.25 rad over the
 * 2 s span): the newest pose is always closest to the poses just before it, but the motion
 * never left them and came back (XG_MEMORY_AWAY), so nothing ever matches. */
static void test_slow_steady_motion_never_matches(void **state)
{
    (void)state;
    const int rates[] = {30, 120};
    for (size_t ri = 0; ri < 2; ri++) {
        const struct skel s = chain(4, 0, SLOW);
        struct xg_motion_memory *m = xg_memory_new(2 * S);
        assert_non_null(m);
        for (int k = 0; k < 6 * rates[ri]; k++) {
            record_range(m, &s, 0, s.n, t_at(k, rates[ri]), k ? LAST : EACH);
            assert_false(xg_memory_match(m));
            assert_false(xg_memory_last_match(m, NULL, NULL));
        }
        xg_memory_free(m);
    }
}

/* A rigid skeleton (every relative rotation constant) whose root spins at 3 rad/s: its world
 * orientations change all the time, its features never do; nothing matches. */
static void test_rigid_skeleton_never_matches(void **state)
{
    (void)state;
    const struct skel s = chain(4, 0, RIGID);
    struct xg_motion_memory *m = xg_memory_new(2 * S);
    assert_non_null(m);
    for (int k = 0; k < 6 * 60; k++) {
        record_range(m, &s, 0, s.n, t_at(k, 60), k ? LAST : EACH);
        assert_false(xg_memory_match(m));
    }
    xg_memory_free(m);
}

/* A period longer than the span (span 1 s, period 1.5 s): the pose it comes back to has left
 * the memory; nothing matches, at 30 or 120 Hz, over 3 periods. */
static void test_period_longer_than_span_never_matches(void **state)
{
    (void)state;
    const int rates[] = {30, 120};
    for (size_t ri = 0; ri < 2; ri++) {
        const struct skel s = chain(4, 1.5, PERIODIC);
        struct xg_motion_memory *m = xg_memory_new(1 * S);
        assert_non_null(m);
        for (int k = 0; k < (int)(4.5 * rates[ri]); k++) {
            record_range(m, &s, 0, s.n, t_at(k, rates[ri]), k ? LAST : EACH);
            assert_false(xg_memory_match(m));
        }
        xg_memory_free(m);
    }
}

/* The last joint of the chain stops sending after 1.5 periods of matches: its frame never
 * completes (no sample returns 1), the next frame restarts the membership with the three
 * joints left (the count drops at that frame's first sample), and matches come back one period
 * after that frame, at t - period with the rates of the three. */
static void test_joint_stops_sending(void **state)
{
    (void)state;
    const int rate = 30;
    struct skel s = chain(4, 0.8, PERIODIC);
    struct xg_motion_memory *m = xg_memory_new(1500 * MS);
    assert_non_null(m);
    const int stop = 60; /* 2 s */
    for (int k = 0; k < stop; k++) {
        record_range(m, &s, 0, 4, t_at(k, rate), k ? LAST : EACH);
        check_frame(m, &s, k, rate, T0);
    }
    assert_true(xg_memory_last_match(m, NULL, NULL));
    /* frame `stop`: joint 3 is missing; nothing completes */
    record_range(m, &s, 0, 3, t_at(stop, rate), NONE);
    assert_false(xg_memory_match(m));
    assert_int_equal(xg_memory_count(m), 4);
    s.n = 3;
    int back = 0;
    for (int k = stop + 1; k < stop + 1 + 2 * rate; k++) {
        assert_int_equal(record(m, &s, 0, t_at(k, rate)), 0);
        assert_int_equal(xg_memory_count(m), 3);
        record_range(m, &s, 1, 3, t_at(k, rate), LAST);
        if (check_frame(m, &s, k, rate, t_at(stop + 1, rate)) && !back) back = k;
    }
    assert_int_equal(back, stop + 1 + 24); /* 0.8 s at 30 Hz */
    xg_memory_free(m);
}

/* More joints than the first capacity (8): a tree of 20 joints from the start (the capacity
 * grows twice within the first frame, keeping the samples already in it), and a chain-tree of
 * 8 joints that 12 more join after 1.5 periods (each new joint keeps only the newest frame:
 * the frame completes again with every new joint, and matches come back one period later, with
 * the newest frame's samples of the first 8 joints carried over). Count, matched moments and
 * every joint's rate are right. */
static void test_many_and_late_joints(void **state)
{
    (void)state;
    const int rate = 30;
    const struct skel s = tree(20, 0.8);
    struct xg_motion_memory *m = xg_memory_new(1500 * MS);
    assert_non_null(m);
    for (int k = 0; k < 2 * rate; k++) {
        record_range(m, &s, 0, 20, t_at(k, rate), k ? LAST : EACH);
        assert_int_equal(xg_memory_count(m), 20);
        check_frame(m, &s, k, rate, T0);
    }
    xg_memory_free(m);

    m = xg_memory_new(1500 * MS);
    assert_non_null(m);
    struct skel s8 = tree(8, 0.8);
    const int join = 36;
    for (int k = 0; k < join; k++) {
        record_range(m, &s8, 0, 8, t_at(k, rate), k ? LAST : EACH);
        assert_int_equal(xg_memory_count(m), 8);
        check_frame(m, &s8, k, rate, T0);
    }
    assert_true(xg_memory_last_match(m, NULL, NULL));
    /* frame `join`: the 8 complete it, then every new joint completes it again */
    record_range(m, &s8, 0, 8, t_at(join, rate), LAST);
    for (int j = 8; j < 20; j++) {
        assert_int_equal(record(m, &s, j, t_at(join, rate)), 1);
        assert_int_equal(xg_memory_count(m), (unsigned)j + 1);
        assert_int_equal(xg_memory_joint(m, (unsigned)j), (uint32_t)j + 1);
    }
    /* the capacity grew (8 -> 16 -> 32) within the frame: its samples are still known as
     * recorded, so joint 3 again at the same time does not complete it once more */
    assert_int_equal(record(m, &s, 3, t_at(join, rate)), 0);
    int back = 0;
    for (int k = join; k < join + 2 * rate; k++) {
        if (k > join) record_range(m, &s, 0, 20, t_at(k, rate), LAST);
        if (check_frame(m, &s, k, rate, t_at(join, rate)) && !back) back = k;
    }
    assert_int_equal(back, join + 24);
    xg_memory_free(m);
}

/* XG_MEMORY_MAX_JOINTS + 1 joints: the last is left out (-ENOSPC) at every frame, the others
 * complete their frames (in the first, each new joint completes it again). */
static void test_joint_limit(void **state)
{
    (void)state;
    struct xg_motion_memory *m = xg_memory_new(2 * S);
    assert_non_null(m);
    const struct xg_quat q = xg_test_q_start;
    for (int k = 0; k < 3; k++) {
        const int64_t t = t_at(k, 30);
        for (uint32_t id = 1; id <= XG_MEMORY_MAX_JOINTS; id++)
            assert_int_equal(xg_memory_record(m, id, id / 2, t, q),
                             !k || id == XG_MEMORY_MAX_JOINTS ? 1 : 0);
        assert_int_equal(xg_memory_record(m, XG_MEMORY_MAX_JOINTS + 1, 1, t, q), -ENOSPC);
        assert_int_equal(xg_memory_count(m), XG_MEMORY_MAX_JOINTS);
        assert_int_equal(xg_memory_joint(m, XG_MEMORY_MAX_JOINTS), 0);
    }
    xg_memory_free(m);
}

/* everything observable about the newest frame's match */
struct snapshot {
    bool found;
    int64_t tm;
    double d;
    unsigned count;
    struct xg_vec3 w[4];
    bool has_w[4];
};

static void snap(const struct xg_motion_memory *m, struct snapshot *o)
{
    memset(o, 0, sizeof *o);
    o->found = xg_memory_last_match(m, &o->tm, &o->d);
    o->count = xg_memory_count(m);
    for (unsigned i = 0; i < 4; i++)
        o->has_w[i] = xg_memory_rate(m, i, &o->w[i]);
}

/* A late sample (older than the newest frame), of a member or of a new joint, returns 0 and
 * changes nothing: the match, count and rates stay, and every later frame answers exactly as
 * in a twin memory that never got it. A joint's sample repeated at the same time counts once:
 * repeated before the frame is complete, only the last joint completes it; repeated after, it
 * returns 0 and changes nothing (the first sample at that time stands). */
static void test_late_and_repeated_samples(void **state)
{
    (void)state;
    const int rate = 30;
    const struct skel s = chain(4, 0.8, PERIODIC);
    struct xg_motion_memory *m = xg_memory_new(1500 * MS), *twin = xg_memory_new(1500 * MS);
    assert_non_null(m);
    assert_non_null(twin);
    for (int k = 0; k < 40; k++) {
        const int64_t t = t_at(k, rate);
        record_range(twin, &s, 0, 4, t, k ? LAST : EACH);
        xg_memory_match(twin);
        if (k == 30) { /* joint 1 twice before the frame completes, joint 3 twice after */
            assert_int_equal(record(m, &s, 0, t), 0);
            assert_int_equal(record(m, &s, 1, t), 0);
            assert_int_equal(record(m, &s, 1, t), 0);
            assert_int_equal(record(m, &s, 2, t), 0);
            assert_int_equal(record(m, &s, 3, t), 1);
            assert_int_equal(record(m, &s, 3, t), 0);
        } else {
            record_range(m, &s, 0, 4, t, k ? LAST : EACH);
        }
        check_frame(m, &s, k, rate, T0);
        if (k == 35) {
            struct snapshot before, after;
            snap(m, &before);
            assert_true(before.found);
            assert_int_equal(record(m, &s, 2, t_at(k - 1, rate)), 0);
            assert_int_equal(xg_memory_record(m, 99, 1, t_at(k - 3, rate), xg_test_q_start), 0);
            assert_int_equal(xg_memory_record(m, 2, 1, t - 1, XG_QUAT_IDENTITY), 0);
            /* joint 2 (id 3, parent id 2) again at the newest time, turned: the first stands */
            assert_int_equal(xg_memory_record(m, 3, 2, t, XG_QUAT_IDENTITY), 0);
            snap(m, &after);
            assert_memory_equal(&before, &after, sizeof before);
        }
        struct snapshot a, b;
        snap(m, &a);
        snap(twin, &b);
        assert_memory_equal(&a, &b, sizeof a);
    }
    xg_memory_free(m);
    xg_memory_free(twin);
}

/* xg_memory_reset() forgets every frame and joint: no match, count 0; the next frame starts
 * again (count 4) and matches come back one period after it. */
static void test_reset_forgets(void **state)
{
    (void)state;
    const int rate = 30;
    const struct skel s = chain(4, 0.8, PERIODIC);
    struct xg_motion_memory *m = xg_memory_new(1500 * MS);
    assert_non_null(m);
    for (int k = 0; k < 40; k++) {
        record_range(m, &s, 0, 4, t_at(k, rate), k ? LAST : EACH);
        check_frame(m, &s, k, rate, T0);
    }
    assert_true(xg_memory_last_match(m, NULL, NULL));
    xg_memory_reset(m);
    assert_int_equal(xg_memory_count(m), 0);
    assert_int_equal(xg_memory_joint(m, 0), 0);
    assert_false(xg_memory_last_match(m, NULL, NULL));
    struct xg_vec3 w;
    assert_false(xg_memory_rate(m, 0, &w));
    assert_false(xg_memory_match(m));
    int back = 0;
    for (int k = 41; k < 41 + 2 * rate; k++) {
        record_range(m, &s, 0, 4, t_at(k, rate), k == 41 ? EACH : LAST);
        assert_int_equal(xg_memory_count(m), 4);
        if (check_frame(m, &s, k, rate, t_at(41, rate)) && !back) back = k;
    }
    assert_int_equal(back, 41 + 24);
    xg_memory_free(m);
}

/* xg_memory_new() needs a span (0 or less: NULL); xg_memory_free(NULL) does nothing; a new
 * memory is empty, and its first joint completes the first frame on its own (the first growth
 * of the joint capacity has no frame data to move: the sanitizer build checks that nothing is
 * copied from the memory's NULL arrays). */
static void test_new_and_free(void **state)
{
    (void)state;
    assert_null(xg_memory_new(0));
    assert_null(xg_memory_new(-1));
    xg_memory_free(NULL);
    struct xg_motion_memory *m = xg_memory_new(1);
    assert_non_null(m);
    assert_int_equal(xg_memory_count(m), 0);
    assert_false(xg_memory_match(m));
    assert_false(xg_memory_last_match(m, NULL, NULL));
    assert_int_equal(xg_memory_record(m, 7, 0, T0, xg_test_q_start), 1);
    assert_int_equal(xg_memory_count(m), 1);
    assert_int_equal(xg_memory_joint(m, 0), 7);
    xg_memory_free(m);
}

/* The ring (XG_MEMORY_FRAMES) spans the configured 2 s for fast sources too: frames closer than
 * span / XG_MEMORY_FRAMES to the frame before them replace the newest. At 120, 240 and 480 Hz
 * periods of 0.8 s and 1.5 s both match a whole number of periods back (one, or two for the
 * 0.8 s period from 1.6 s on), within span / XG_MEMORY_FRAMES (the frames kept are that far
 * apart), from the second period on, and not before the pose comes back (128 frames of every sample
 * would hold 1.07 s at 120 Hz, 0.27 s at 480 Hz). */
static void test_fast_source_keeps_span(void **state)
{
    (void)state;
    const int rates[] = {120, 240, 480};
    const double periods[] = {0.8, 1.5};
    for (size_t ri = 0; ri < 3; ri++)
        for (size_t pi = 0; pi < 2; pi++) {
            const int rate = rates[ri];
            const struct skel s = chain(4, periods[pi], PERIODIC);
            struct xg_motion_memory *m = xg_memory_new(2 * S);
            assert_non_null(m);
            int matched = 0, due = 0;
            for (int k = 0; k < (int)(1.9 * rate); k++) {
                record_range(m, &s, 0, 4, t_at(k, rate), k ? LAST : EACH);
                const bool found = xg_memory_match(m);
                const double tau = tau_of(t_at(k, rate));
                int64_t tm;
                if (tau < periods[pi] * (1 - NEAR_SHARE)) {
                    if (found) {
                        xg_memory_last_match(m, &tm, NULL);
                        fail_msg("%d Hz, period %.1f s: a match at %.4f s for %.4f s", rate,
                                 periods[pi], tau_of(tm), tau);
                    }
                } else if (tau < periods[pi]) {
                    if (found) assert_true(xg_memory_last_match(m, &tm, NULL) && tm == T0);
                } else {
                    due++;
                    if (!found)
                        fail_msg("%d Hz, period %.1f s: no match at %.3f s", rate, periods[pi],
                                 tau);
                    assert_true(xg_memory_last_match(m, &tm, NULL));
                    /* one period back, or two (both in the 2 s span): whichever frame kept
                       is nearest to its moment */
                    const int64_t p_ns = (int64_t)llround(periods[pi] * 1e9);
                    const int64_t n = (t_at(k, rate) - tm + p_ns / 2) / p_ns;
                    assert_true(n == 1 || n == 2);
                    const int64_t back = t_at(k, rate) - n * p_ns;
                    if (llabs(tm - back) > 2 * S / XG_MEMORY_FRAMES)
                        fail_msg("%d Hz, period %.1f s: at %.4f s a match at %.4f s", rate,
                                 periods[pi], tau, tau_of(tm));
                    matched++;
                }
            }
            assert_true(due > 0);
            assert_int_equal(matched, due);
            xg_memory_free(m);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_periodic_matches_one_period_back),
        cmocka_unit_test(test_slow_steady_motion_never_matches),
        cmocka_unit_test(test_rigid_skeleton_never_matches),
        cmocka_unit_test(test_period_longer_than_span_never_matches),
        cmocka_unit_test(test_joint_stops_sending),
        cmocka_unit_test(test_many_and_late_joints),
        cmocka_unit_test(test_joint_limit),
        cmocka_unit_test(test_late_and_repeated_samples),
        cmocka_unit_test(test_reset_forgets),
        cmocka_unit_test(test_new_and_free),
        cmocka_unit_test(test_fast_source_keeps_span),
        cmocka_unit_test(test_avx_and_portable_distance_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
