/* A skeleton's motion memory through the entity table (core/table/entity_memory.c): the root owns
 * the memory, the sample that completes a frame matches it, and each joint's estimated angular
 * velocity is blended half way toward the memory's rate when that rate turns at least
 * 1.05 rad/s (quality MATCHED). The skeleton is synthetic: a root turning steadily and walking,
 * and a chain of 3 joints whose rotation relative to their parent is periodic (0.8 s) and not a
 * sinusoid; it is pushed at 30 Hz, parent first, linked after the first push, as the bvh adapter
 * does. "The rule" is the same table fed identically with motion_memory_ns = 0. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: reads the entity's internals */
#include "core/predict/motion_memory.h"
#include "tests/unit/test_skeleton.h"

#define MS INT64_C(1000000)
#define S (1000 * MS)
#define T0 (INT64_C(1000) * S)
#define NJ 4
#define RATE 30
#define PERIOD 0.8
#define PERIOD_FRAMES 24 /* PERIOD x RATE */
#define AHEAD (33 * MS)
#define BLEND 0.5     /* core/table/entity_memory.c XG_MEMORY_BLEND */
#define TURN_MIN 1.05 /* core/table/entity_memory.c XG_MEMORY_TURN_MIN, rad/s */

static const char *const names[NJ] = {"hips", "thigh", "shin", "foot"};

/* joint j's world orientation at tau (s): the root turns steadily (0.7 rad/s), joint j > 0 is
 * its parent's turned by a periodic rotation vector */
static struct xg_quat world(int j, double tau)
{
    if (j == 0)
        return xg_quat_mul(xg_quat_exp((struct xg_vec3){0.14 * tau, 0.7 * tau, 0}),
                           xg_test_q_start);
    const double x = 2 * M_PI * tau / PERIOD + 0.9 * j, a = 0.45 / (1 + 0.1 * j);
    return xg_quat_mul(world(j - 1, tau), xg_quat_exp((struct xg_vec3){
                                              a * xg_test_wave(x), 0.7 * a * xg_test_wave(x + 2.1),
                                              0.5 * a * xg_test_wave(x + 4.2)}));
}

/* joint j's position: the root walks, each bone is 0.3 m along its parent's x axis */
static struct xg_vec3 place(int j, double tau)
{
    if (j == 0) return (struct xg_vec3){0.5 * tau, 1, 0.1 * tau};
    return xg_vec3_add(place(j - 1, tau),
                       xg_quat_rotate(world(j - 1, tau), (struct xg_vec3){0.3, 0, 0}));
}

static int64_t t_at(int k)
{
    return T0 + (int64_t)k * S / RATE;
}

static double tau_of(int64_t t_ns)
{
    return (double)(t_ns - T0) * 1e-9;
}

static struct xg_table *new_table(int64_t memory_ns)
{
    struct xg_table_params p;
    xg_table_params_default(&p);
    assert_int_equal(p.motion_memory_ns, 2 * S); /* the documented default */
    if (memory_ns >= 0) p.motion_memory_ns = memory_ns;
    struct xg_table *t = xg_table_new(&p);
    assert_non_null(t);
    xg_table_set_adapter_name(t, 0, "bvh");
    return t;
}

/* the skeleton in a table; `reported`: joint 2's samples carry this angular velocity */
struct rig {
    struct xg_table *t;
    uint32_t ids[NJ];
    const struct xg_vec3 *reported;
};

/* push frame k, parent first; link the joints after the first push */
static void push(struct rig *r, int k)
{
    const double tau = tau_of(t_at(k));
    for (int j = 0; j < NJ; j++)
        r->ids[j] = xg_test_feed_joint(r->t, names[j], t_at(k), place(j, tau), world(j, tau),
                                       j == 2 ? r->reported : NULL);
    if (k == 0)
        for (int j = 1; j < NJ; j++)
            assert_int_equal(xg_table_set_parent(r->t, r->ids[j], r->ids[j - 1]), 0);
}

/* the memory's rate for entity `id` after the newest frame's match: false without one */
static bool memory_rate(const struct xg_motion_memory *m, uint32_t id, struct xg_vec3 *w)
{
    if (!m) return false;
    for (unsigned slot = 0; slot < xg_memory_count(m); slot++)
        if (xg_memory_joint(m, slot) == id) return xg_memory_rate(m, slot, w);
    return false;
}

static bool same_vec(struct xg_vec3 a, struct xg_vec3 b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The periodic skeleton for 3 periods with the default params, next to the rule. Until the
 * pose first comes back (0.7 s) nothing is MATCHED. Then every frame matches, and for each
 * joint whose memory rate turns at least 1.05 rad/s the angular velocity is exactly rule +
 * 0.5 x (memory rate - rule), rot_matched is set and the +33 ms answer is MATCHED; every other
 * joint (among them joints whose memory rate is below 1.05 rad/s) answers exactly as the rule
 * (bit for bit, same quality). MATCHED answers are counted in
 * stats.predictions. Over the last period the +33 ms rotation error against the generating
 * functions is lower with the memory than with the rule alone. */
static void test_periodic_blend_and_error(void **state)
{
    (void)state;
    struct rig mem = {.t = new_table(-1)}, rule = {.t = new_table(0)};
    const int frames = 3 * PERIOD_FRAMES + 1;
    int matched_answers = 0, matched_frames = 0, answers = 0, slow_rates = 0;
    double err_mem = 0, err_rule = 0;
    for (int k = 0; k < frames; k++) {
        push(&mem, k);
        push(&rule, k);
        const int64_t t = t_at(k);
        const struct xg_motion_memory *m = xg_test_entity(mem.t, mem.ids[0])->memory;
        const bool matched = m && xg_memory_last_match(m, NULL, NULL);
        if (tau_of(t) < 0.7) assert_false(matched);
        if (k >= PERIOD_FRAMES + 2) assert_true(matched); /* the memory starts at frame 2 */
        matched_frames += matched;
        for (int j = 0; j < NJ; j++) {
            const struct xg_entity *em = xg_test_entity(mem.t, mem.ids[j]),
                                   *er = xg_test_entity(rule.t, rule.ids[j]);
            struct xg_pose pm, pr;
            assert_int_equal(xg_entity_predict(mem.t, mem.ids[j], t + AHEAD, &pm), 0);
            assert_int_equal(xg_entity_predict(rule.t, rule.ids[j], t + AHEAD, &pr), 0);
            answers++;
            struct xg_vec3 wa;
            const bool has_rate = matched && memory_rate(m, mem.ids[j], &wa);
            slow_rates += has_rate && xg_vec3_norm(wa) < TURN_MIN;
            if (has_rate && xg_vec3_norm(wa) >= TURN_MIN && er->angular_velocity_estimated) {
                const struct xg_vec3 want =
                    xg_vec3_add(er->angular_velocity,
                                xg_vec3_scale(xg_vec3_sub(wa, er->angular_velocity), BLEND));
                assert_true(xg_vec3_norm(xg_vec3_sub(em->angular_velocity, want)) < 1e-12);
                assert_true(em->rot_matched);
                assert_int_equal(pm.quality, XG_QUALITY_MATCHED);
                matched_answers++;
            } else {
                assert_true(same_vec(em->angular_velocity, er->angular_velocity));
                assert_false(em->rot_matched);
                assert_int_equal(pm.quality, pr.quality);
                assert_memory_equal(&pm.orientation, &pr.orientation, sizeof pm.orientation);
            }
            if (k >= frames - PERIOD_FRAMES) {
                const struct xg_quat truth = world(j, tau_of(t + AHEAD));
                err_mem += xg_quat_angle_between(pm.orientation, truth);
                err_rule += xg_quat_angle_between(pr.orientation, truth);
            }
        }
    }
    assert_true(matched_frames >= frames - PERIOD_FRAMES - 2);
    assert_true(matched_answers > 0);
    assert_true(slow_rates > 0); /* the 1.05 rad/s floor was met and missed */
    assert_int_equal(xg_table_stats(mem.t)->predictions[XG_QUALITY_MATCHED],
                     (uint64_t)matched_answers);
    assert_int_equal(xg_table_stats(rule.t)->predictions[XG_QUALITY_MATCHED], 0);
    print_message("MATCHED %d of %d answers; +33 ms rotation error over the last period: "
                  "%.4f rad with the memory, %.4f without\n",
                  matched_answers, answers, err_mem / (NJ * PERIOD_FRAMES),
                  err_rule / (NJ * PERIOD_FRAMES));
    assert_true(err_mem < err_rule);
    xg_table_free(mem.t);
    xg_table_free(rule.t);
}

/* motion_memory_ns = 0: no entity ever has a memory and no answer is MATCHED. */
static void test_memory_off(void **state)
{
    (void)state;
    struct rig r = {.t = new_table(0)};
    for (int k = 0; k < 3 * PERIOD_FRAMES; k++) {
        push(&r, k);
        for (int j = 0; j < NJ; j++) {
            assert_null(xg_test_entity(r.t, r.ids[j])->memory);
            struct xg_pose p;
            assert_int_equal(xg_entity_predict(r.t, r.ids[j], t_at(k) + AHEAD, &p), 0);
            assert_int_not_equal(p.quality, XG_QUALITY_MATCHED);
            assert_false(xg_test_entity(r.t, r.ids[j])->rot_matched);
        }
    }
    assert_int_equal(xg_table_stats(r.t)->predictions[XG_QUALITY_MATCHED], 0);
    xg_table_free(r.t);
}

/* Joint 2 reports its angular velocity (fresh with every sample): it is in the memory (the
 * memory has a rate of at least 1.05 rad/s for it at many frames) but never blended: its
 * angular velocity is exactly the reported one and its answers are PREDICTED, while the
 * joints around it are MATCHED. */
static void test_reported_angular_velocity_not_blended(void **state)
{
    (void)state;
    const struct xg_vec3 reported = {0.4, -1.2, 2.0};
    struct rig r = {.t = new_table(-1), .reported = &reported};
    int fast = 0, others_matched = 0;
    for (int k = 0; k < 3 * PERIOD_FRAMES; k++) {
        push(&r, k);
        const struct xg_motion_memory *m = xg_test_entity(r.t, r.ids[0])->memory;
        struct xg_vec3 wa;
        fast += memory_rate(m, r.ids[2], &wa) && xg_vec3_norm(wa) >= TURN_MIN;
        for (int j = 0; j < NJ; j++) {
            struct xg_pose p;
            assert_int_equal(xg_entity_predict(r.t, r.ids[j], t_at(k) + AHEAD, &p), 0);
            if (j == 2) {
                assert_true(same_vec(xg_test_entity(r.t, r.ids[2])->angular_velocity, reported));
                assert_true(same_vec(p.angular_velocity, reported));
                assert_int_equal(p.quality, XG_QUALITY_PREDICTED);
            } else {
                others_matched += p.quality == XG_QUALITY_MATCHED;
            }
        }
    }
    assert_true(fast > 10);
    assert_true(others_matched > 10);
    xg_table_free(r.t);
}

/* xg_table_forget_history() on a joint (the source jumped) resets its skeleton's memory: count
 * 0 at once, no match and no MATCHED answer until the pose comes back one period after the
 * next frame, and matches at every frame from then on. */
static void test_forget_history_resets_memory(void **state)
{
    (void)state;
    struct rig r = {.t = new_table(-1)};
    const int forget = 2 * PERIOD_FRAMES;
    for (int k = 0; k <= forget; k++)
        push(&r, k);
    const struct xg_motion_memory *m = xg_test_entity(r.t, r.ids[0])->memory;
    assert_non_null(m);
    assert_true(xg_memory_last_match(m, NULL, NULL));
    assert_int_equal(xg_table_forget_history(r.t, r.ids[1]), 0);
    assert_int_equal(xg_memory_count(m), 0);
    assert_false(xg_memory_last_match(m, NULL, NULL));
    const int first = forget + 1; /* the memory's first frame after it */
    int matched_after = 0;
    for (int k = first; k < first + PERIOD_FRAMES + 12; k++) {
        push(&r, k);
        assert_ptr_equal(xg_test_entity(r.t, r.ids[0])->memory, m);
        assert_int_equal(xg_memory_count(m), NJ);
        const bool matched = xg_memory_last_match(m, NULL, NULL);
        int answers_matched = 0;
        for (int j = 0; j < NJ; j++) {
            struct xg_pose p;
            assert_int_equal(xg_entity_predict(r.t, r.ids[j], t_at(k) + AHEAD, &p), 0);
            answers_matched += p.quality == XG_QUALITY_MATCHED;
        }
        if (k < first + PERIOD_FRAMES - 1) {
            assert_false(matched);
            assert_int_equal(answers_matched, 0);
        } else if (k >= first + PERIOD_FRAMES) {
            assert_true(matched);
            matched_after += answers_matched;
        }
    }
    assert_true(matched_after > 0);
    xg_table_free(r.t);
}

/* Only a skeleton's root gets a memory, and only once a joint below it has a sample while
 * linked: an entity without parent or children never has one, nor does a root fed alone, nor
 * a joint with a parent. Removing the root (xg_table_remove) frees its memory (the sanitizer
 * build's leak check); its former joints, whose parent is gone, get none and keep the rule. */
static void test_memory_owner_and_removal(void **state)
{
    (void)state;
    struct xg_table *t = new_table(-1);
    uint32_t x = 0, root = 0, child = 0;
    for (int k = 0; k < 2 * PERIOD_FRAMES; k++) {
        const int64_t tk = t_at(k);
        const double tau = tau_of(tk);
        x = xg_test_feed_joint(t, "lonely", tk, place(3, tau), world(3, tau), NULL);
        root = xg_test_feed_joint(t, names[0], tk, place(0, tau), world(0, tau), NULL);
        if (k < 5) {
            assert_null(xg_test_entity(t, root)->memory); /* fed alone */
        } else {
            child = xg_test_feed_joint(t, names[1], tk, place(1, tau), world(1, tau), NULL);
            if (k == 5) {
                /* its first sample came before the link */
                assert_null(xg_test_entity(t, root)->memory);
                assert_int_equal(xg_table_set_parent(t, child, root), 0);
            } else {
                const struct xg_motion_memory *m = xg_test_entity(t, root)->memory;
                assert_non_null(m);
                /* the root joins at its first sample after the child's */
                assert_int_equal(xg_memory_count(m), k == 6 ? 1 : 2);
                assert_int_equal(xg_memory_joint(m, 0), child);
                assert_null(xg_test_entity(t, child)->memory);
            }
        }
        assert_null(xg_test_entity(t, x)->memory);
    }
    assert_int_equal(xg_table_remove(t, root), 0);
    assert_null(xg_table_get(t, root));
    for (int k = 2 * PERIOD_FRAMES; k < 3 * PERIOD_FRAMES; k++) {
        const double tau = tau_of(t_at(k));
        child = xg_test_feed_joint(t, names[1], t_at(k), place(1, tau), world(1, tau), NULL);
        assert_null(xg_test_entity(t, child)->memory);
        struct xg_pose p;
        assert_int_equal(xg_entity_predict(t, child, t_at(k) + AHEAD, &p), 0);
        assert_int_not_equal(p.quality, XG_QUALITY_MATCHED);
    }
    xg_table_free(t);
}

/* A root that gets a parent of its own is no longer a root: its memory is freed at its next
 * sample and the skeleton's new root keeps one. A sample without an orientation (position only)
 * is not recorded: the joint that sends only positions drops out of its skeleton's frames. */
static void test_root_relinked_and_position_only(void **state)
{
    (void)state;
    struct xg_table *t = new_table(-1);
    uint32_t ids[3] = {0, 0, 0};
    for (int k = 0; k < 8; k++) {
        const double tau = tau_of(t_at(k));
        for (int j = 0; j < 2; j++)
            ids[j] = xg_test_feed_joint(t, names[j], t_at(k), place(j, tau), world(j, tau), NULL);
        if (k == 0) assert_int_equal(xg_table_set_parent(t, ids[1], ids[0]), 0);
    }
    assert_non_null(xg_test_entity(t, ids[0])->memory);
    assert_int_equal(xg_memory_count(xg_test_entity(t, ids[0])->memory), 2);
    /* a new root above the old one */
    for (int k = 8; k < 12; k++) {
        const double tau = tau_of(t_at(k));
        ids[2] = xg_test_feed_joint(t, "world", t_at(k), (struct xg_vec3){0, 0, 0}, xg_test_q_start,
                                    NULL);
        if (k == 8) assert_int_equal(xg_table_set_parent(t, ids[0], ids[2]), 0);
        for (int j = 0; j < 2; j++)
            ids[j] = xg_test_feed_joint(t, names[j], t_at(k), place(j, tau), world(j, tau), NULL);
    }
    assert_null(xg_test_entity(t, ids[0])->memory);
    assert_non_null(xg_test_entity(t, ids[2])->memory);
    assert_int_equal(xg_memory_count(xg_test_entity(t, ids[2])->memory), 3);
    /* the lowest joint sends positions only from now on */
    for (int k = 12; k < 16; k++) {
        const double tau = tau_of(t_at(k));
        ids[2] = xg_test_feed_joint(t, "world", t_at(k), (struct xg_vec3){0, 0, 0}, xg_test_q_start,
                                    NULL);
        ids[0] = xg_test_feed_joint(t, names[0], t_at(k), place(0, tau), world(0, tau), NULL);
        struct xg_entity_key key = {.source = names[1], .kind = XG_KIND_JOINT};
        struct xg_sample s = {.capture_ns = t_at(k),
                              .receive_ns = t_at(k),
                              .flags = XG_SAMPLE_POSITION,
                              .position = place(1, tau)};
        assert_int_equal(xg_table_update_origin(t, 0, &key, &s, NULL), 0);
    }
    assert_int_equal(xg_memory_count(xg_test_entity(t, ids[2])->memory), 2);
    xg_table_free(t);
}

/* The admin API, the inspector and the metrics name the quality "MATCHED". */
static void test_quality_name(void **state)
{
    (void)state;
    assert_string_equal(xg_quality_name(XG_QUALITY_MATCHED), "MATCHED");
    assert_int_equal(XG_QUALITY_MATCHED + 1, XG_QUALITY_COUNT);
    assert_string_equal(xg_quality_name(XG_QUALITY_COUNT), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_periodic_blend_and_error),
        cmocka_unit_test(test_memory_off),
        cmocka_unit_test(test_reported_angular_velocity_not_blended),
        cmocka_unit_test(test_forget_history_resets_memory),
        cmocka_unit_test(test_memory_owner_and_removal),
        cmocka_unit_test(test_root_relinked_and_position_only),
        cmocka_unit_test(test_quality_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
