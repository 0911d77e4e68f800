/* core/predict/predict_skel.c and core/table/entity_skel.c through the entity table: a joint's
 * children refine its extrapolated angular velocity, a joint without children is held while its
 * parent is, and entities without a rigid parent link keep the rules of core/predict/predict_rot.c
 * exactly (docs/prediction.md, "Joints with children"). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: reads the entity's internals */
#include "core/predict/predict_skel.h"
#include "tests/unit/test_skeleton.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)

static struct xg_table *new_table(void)
{
    struct xg_table *t = xg_table_new(NULL); /* defaults: 100 ms horizon and window */
    assert_non_null(t);
    xg_table_set_adapter_name(t, 0, "src");
    return t;
}

/* A chain P -> C -> G (bones 0.3 m and 0.2 m along each joint's x axis), pushed parent first
 * like the bvh adapter; `qp` is P's orientation, C and G turn with P (fixed local rotation
 * `lc`). Links the parents after the first push, as the bvh adapter does. ids[3] = P, C, G. */
struct chain {
    uint32_t ids[3];
    struct xg_quat lc;
    bool linked, link;
};

static void push_chain(struct xg_table *t, struct chain *c, int64_t t_ns, struct xg_vec3 pp,
                       struct xg_quat qp)
{
    const struct xg_quat qc = xg_quat_mul(qp, c->lc);
    const struct xg_vec3 pc = xg_vec3_add(pp, xg_quat_rotate(qp, (struct xg_vec3){0.3, 0, 0}));
    const struct xg_vec3 pg = xg_vec3_add(pc, xg_quat_rotate(qc, (struct xg_vec3){0.2, 0, 0}));
    c->ids[0] = xg_test_feed_joint(t, "P", t_ns, pp, qp, NULL);
    c->ids[1] = xg_test_feed_joint(t, "C", t_ns, pc, qc, NULL);
    c->ids[2] = xg_test_feed_joint(t, "G", t_ns, pg, qc, NULL);
    if (c->link && !c->linked) {
        assert_int_equal(xg_table_set_parent(t, c->ids[1], c->ids[0]), 0);
        assert_int_equal(xg_table_set_parent(t, c->ids[2], c->ids[1]), 0);
        c->linked = true;
    }
}

/* A rigid chain spinning at a constant angular velocity, 30 to 120 Hz. P and C get their swing
 * from their children's estimated velocities and their twist from the fitted rate; G (no
 * children) turns with C (its own turn relative to C is nil). Once the children's bones are
 * known (a few samples) every joint is extrapolated with the spin (PREDICTED) within 2 % of it
 * (the children's velocities come from a quadratic fit of points on a circle: 1.6 % at 6.4 rad/s
 * over the 100 ms window), and every prediction up to 100 ms ahead is within 2 % of holding's
 * error. A spin about the straight chain's own axis (pure twist: the children do not move) is
 * exact for every joint. (An entity without parent or children keeps the exact constant spin
 * of test_predict_rot.c.) */
static void test_constant_spin(void **state)
{
    (void)state;
    const struct xg_vec3 spins[] = {{0.5, -1.5, 3}, {6, 1, -2}};
    const int rates[] = {30, 60, 120};
    for (int twist = 0; twist < 2; twist++)
        for (size_t si = 0; si < 2; si++)
            for (size_t ri = 0; ri < 3; ri++) {
                struct xg_table *t = new_table();
                struct chain c = {.lc = twist ? XG_QUAT_IDENTITY : xg_test_q_start, .link = true};
                /* twist: about P's x axis, which the straight chain lies along */
                const struct xg_quat q0 = twist ? XG_QUAT_IDENTITY : xg_test_q_start;
                const struct xg_vec3 w =
                    twist ? (struct xg_vec3){xg_vec3_norm(spins[si]), 0, 0} : spins[si];
                const double tol = twist ? 1e-9 : 0.02 * xg_vec3_norm(w);
                for (int k = 0; k < 30; k++) {
                    const int64_t tk = T0 + (int64_t)k * 1000000000 / rates[ri];
                    const struct xg_quat qp = xg_quat_integrate(q0, w, (double)(tk - T0) * 1e-9);
                    push_chain(t, &c, tk, (struct xg_vec3){1, 2, 0.5}, qp);
                    if (k < 6) continue;
                    assert_non_null(xg_test_entity(t, c.ids[0])->skel);
                    assert_non_null(xg_test_entity(t, c.ids[1])->skel);
                    assert_null(xg_test_entity(t, c.ids[2])->skel);
                    for (int j = 0; j < 3; j++) {
                        const struct xg_entity *e = xg_test_entity(t, c.ids[j]);
                        const double err = xg_vec3_norm(xg_vec3_sub(e->angular_velocity, w));
                        assert_true(err < tol);
                        for (int h = 5; h <= 100; h += 19) {
                            struct xg_pose out;
                            const int64_t tq = tk + h * MS;
                            assert_int_equal(xg_entity_predict(t, c.ids[j], tq, &out), 0);
                            assert_int_equal(out.quality, XG_QUALITY_PREDICTED);
                            struct xg_quat truth =
                                xg_quat_integrate(e->last.orientation, w, (double)(tq - tk) * 1e-9);
                            double held = xg_quat_angle_between(e->last.orientation, truth);
                            double pred = xg_quat_angle_between(out.orientation, truth);
                            assert_true(pred <= (twist ? 1e-9 : 0.02 * held));
                        }
                    }
                }
                xg_table_free(t);
            }
}

/* The chain turning fast (6 rad/s) stops dead on a sample: from the first sample whose interval
 * did not turn, every joint answers the held orientation (exact now: no overshoot), DAMPED,
 * although the children's fitted velocities still carry the turn for a few samples. */
static void test_sudden_stop_never_overshoots(void **state)
{
    (void)state;
    const int rates[] = {30, 60, 120};
    const struct xg_vec3 w = {0, 6, 1};
    for (size_t ri = 0; ri < 3; ri++) {
        struct xg_table *t = new_table();
        struct chain c = {.lc = xg_test_q_start, .link = true};
        const int stop = rates[ri] / 3;
        int predicted_before = 0, checked_after = 0;
        for (int k = 0; k < stop + 20; k++) {
            const int64_t tk = T0 + (int64_t)k * 1000000000 / rates[ri];
            const int ks = k < stop ? k : stop;
            const struct xg_quat qp = xg_quat_integrate(xg_test_q_start, w, (double)ks / rates[ri]);
            push_chain(t, &c, tk, (struct xg_vec3){0, 1, 0}, qp);
            for (int j = 0; j < 3; j++) {
                struct xg_pose out;
                assert_int_equal(xg_entity_predict(t, c.ids[j], tk + 33 * MS, &out), 0);
                if (k >= 6 && k < stop) {
                    predicted_before += out.quality == XG_QUALITY_PREDICTED;
                } else if (k > stop) {
                    assert_true(xg_quat_angle_between(
                                    out.orientation,
                                    xg_test_entity(t, c.ids[j])->last.orientation) < 1e-12);
                    assert_int_equal(out.quality, XG_QUALITY_DAMPED);
                    checked_after++;
                }
            }
        }
        assert_int_equal(predicted_before, 3 * (stop - 6));
        assert_int_equal(checked_after, 19 * 3);
        xg_table_free(t);
    }
}

/* The children have no half-interval lag: P's swing accelerates (rate 20 t rad/s about an axis
 * across the bone). At 30 Hz the fitted rate is the last interval's mean, half an interval
 * (0.33 rad/s) behind the true rate at the sample; with its children P's published rate is off
 * by less than half of that (0.14 rad/s, the children's quadratic fits on a curve), while the same
 * motion without parent links (C and G as unrelated entities) keeps the lag. */
static void test_swing_without_lag(void **state)
{
    (void)state;
    for (int link = 0; link < 2; link++) {
        struct xg_table *t = new_table();
        struct chain c = {.lc = XG_QUAT_IDENTITY, .link = link};
        const double alpha = 20; /* rad/s² about z (the chain lies along x) */
        double last_err = 0;
        for (int k = 0; k < 12; k++) {
            const int64_t tk = T0 + (int64_t)k * 1000000000 / 30;
            const double ts = (double)(tk - T0) * 1e-9;
            const struct xg_quat qp = xg_quat_exp((struct xg_vec3){0, 0, 0.5 * alpha * ts * ts});
            push_chain(t, &c, tk, (struct xg_vec3){0, 0, 1}, qp);
            const struct xg_entity *p = xg_test_entity(t, c.ids[0]);
            if (k == 11) {
                assert_true(p->angular_velocity.z > 0);
                last_err = fabs(p->angular_velocity.z - alpha * ts);
            }
        }
        if (link)
            assert_true(last_err < 0.5 * alpha * 0.5 / 30);
        else
            assert_true(last_err > 0.8 * alpha * 0.5 / 30);
        xg_table_free(t);
    }
}

/* A joint without children of its own (G) is held while its parent is: C is still (held, its
 * rate is nil) while G turns steadily at 3 rad/s about its bone's axis relative to it. Without
 * the links G's turn is extrapolated (PREDICTED); with them G answers its newest orientation,
 * DAMPED. */
static void test_end_joint_held_with_parent(void **state)
{
    (void)state;
    for (int link = 0; link < 2; link++) {
        struct xg_table *t = new_table();
        uint32_t ids[2] = {0, 0};
        int answers = 0;
        for (int k = 0; k < 20; k++) {
            const int64_t tk = T0 + (int64_t)k * 1000000000 / 30;
            const double ts = (double)(tk - T0) * 1e-9;
            const struct xg_quat qg = xg_quat_exp((struct xg_vec3){3 * ts, 0, 0});
            ids[0] =
                xg_test_feed_joint(t, "C", tk, (struct xg_vec3){0, 0, 1}, XG_QUAT_IDENTITY, NULL);
            ids[1] = xg_test_feed_joint(t, "G", tk, (struct xg_vec3){0.2, 0, 1}, qg, NULL);
            if (k == 0 && link) assert_int_equal(xg_table_set_parent(t, ids[1], ids[0]), 0);
            if (k < 6) continue;
            struct xg_pose out;
            assert_int_equal(xg_entity_predict(t, ids[1], tk + 33 * MS, &out), 0);
            if (link) {
                assert_int_equal(out.quality, XG_QUALITY_DAMPED);
                assert_true(xg_quat_angle_between(out.orientation, qg) < 1e-12);
            } else {
                assert_int_equal(out.quality, XG_QUALITY_PREDICTED);
                assert_true(xg_quat_angle_between(out.orientation, qg) > 0.05);
            }
            answers++;
        }
        assert_int_equal(answers, 14);
        xg_table_free(t);
    }
}

/* A joint without children (G) turns with its parent (C) refined by its bone: C turns steadily
 * about z at 3 rad/s (its swing from G's bone), G about z at 3 + r rad/s (its own rotation; its
 * position stays at the end of C's bone). G extrapolates C's published angular velocity plus
 * its own fitted turn relative to C at the learned gain, which a steady relative turn makes
 * exactly 1 (r about z), when r is at least 1 rad/s, and C's alone below; its quality follows
 * C's (PREDICTED). */
static void test_end_joint_turns_with_parent(void **state)
{
    (void)state;
    const double rels[] = {2, -1.5, 0.5};
    for (size_t ri = 0; ri < 3; ri++) {
        struct xg_table *t = new_table();
        uint32_t ids[3] = {0, 0, 0};
        int checked = 0;
        for (int k = 0; k < 20; k++) {
            const int64_t tk = T0 + (int64_t)k * 1000000000 / 30;
            const double ts = (double)(tk - T0) * 1e-9;
            const struct xg_quat qc = xg_quat_exp((struct xg_vec3){0, 0, 3 * ts});
            const struct xg_quat qg = xg_quat_exp((struct xg_vec3){0, 0, (3 + rels[ri]) * ts});
            const struct xg_vec3 pc = {0, 0, 1};
            ids[0] = xg_test_feed_joint(t, "C", tk, pc, qc, NULL);
            ids[1] = xg_test_feed_joint(
                t, "G", tk, xg_vec3_add(pc, xg_quat_rotate(qc, (struct xg_vec3){0.3, 0, 0})), qg,
                NULL);
            if (k == 0) assert_int_equal(xg_table_set_parent(t, ids[1], ids[0]), 0);
            if (k < 6) continue;
            const struct xg_entity *c = xg_test_entity(t, ids[0]), *g = xg_test_entity(t, ids[1]);
            const double extra = fabs(rels[ri]) >= 1 ? rels[ri] : 0;
            const struct xg_vec3 want =
                xg_vec3_add(c->angular_velocity, (struct xg_vec3){0, 0, extra});
            assert_true(xg_vec3_norm(xg_vec3_sub(g->angular_velocity, want)) < 1e-9);
            assert_true(fabs(c->angular_velocity.z - 3) < 0.06);
            struct xg_pose out;
            assert_int_equal(xg_entity_predict(t, ids[1], tk + 33 * MS, &out), 0);
            assert_int_equal(out.quality, XG_QUALITY_PREDICTED);
            checked++;
        }
        assert_int_equal(checked, 14);
        xg_table_free(t);
    }
}

/* G's own turn relative to C zig-zags (0.1 rad about z, there and back at every 30 Hz sample:
 * 3 rad/s, reversing) while C turns steadily at 3 rad/s: each interval turns against the
 * relative rate fitted at the sample before, so G's learned gain for it falls to 0 and G
 * extrapolates C's angular velocity alone, although its fitted relative turn (3 rad/s) is far
 * above the 1 rad/s floor. G's gain state is set up only once G turns with its parent; C, which
 * has a child, never needs one. */
static void test_end_joint_learns_relative_gain(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    uint32_t ids[2] = {0, 0};
    int checked = 0;
    for (int k = 0; k < 20; k++) {
        const int64_t tk = T0 + (int64_t)k * 1000000000 / 30;
        const double ts = (double)(tk - T0) * 1e-9;
        const struct xg_quat qc = xg_quat_exp((struct xg_vec3){0, 0, 3 * ts});
        const struct xg_quat qg =
            xg_quat_mul(qc, xg_quat_exp((struct xg_vec3){0, 0, k % 2 ? 0.1 : 0}));
        const struct xg_vec3 pc = {0, 0, 1};
        ids[0] = xg_test_feed_joint(t, "C", tk, pc, qc, NULL);
        ids[1] = xg_test_feed_joint(
            t, "G", tk, xg_vec3_add(pc, xg_quat_rotate(qc, (struct xg_vec3){0.3, 0, 0})), qg, NULL);
        if (k == 0) assert_int_equal(xg_table_set_parent(t, ids[1], ids[0]), 0);
        if (k < 6) continue;
        const struct xg_entity *c = xg_test_entity(t, ids[0]), *g = xg_test_entity(t, ids[1]);
        assert_null(c->rot_rel);
        assert_non_null(g->rot_rel);
        assert_true(fabs(g->rot_rel->k_learned) < 1e-12);
        /* the relative turn G's own fit sees: well above the floor, so only the gain holds it */
        assert_true(fabs(g->rot.rate[2] - c->rot.rate[2]) > 2.9);
        assert_true(xg_vec3_norm(xg_vec3_sub(g->angular_velocity, c->angular_velocity)) < 1e-12);
        assert_true(fabs(c->angular_velocity.z - 3) < 0.06);
        checked++;
    }
    assert_int_equal(checked, 14);
    xg_table_free(t);
}

/* A parent link that is not a rigid bone (the child's offset in the parent's frame moves, as
 * when a bvh adapter links a hand to the hips across unplayed joints), and entities without a
 * parent: every answer is bit for bit what the same motion gives without any link. */
static void test_non_rigid_link_unchanged(void **state)
{
    (void)state;
    struct xg_table *tl = new_table(), *tu = new_table();
    uint32_t il[2] = {0, 0}, iu[2] = {0, 0};
    for (int k = 0; k < 40; k++) {
        const int64_t tk = T0 + (int64_t)k * 1000000000 / 60;
        const double ts = (double)(tk - T0) * 1e-9;
        const struct xg_quat qa =
            xg_quat_integrate(xg_test_q_start, (struct xg_vec3){0.2, 1, 0}, ts);
        const struct xg_quat qb =
            xg_quat_integrate(xg_test_q_start, (struct xg_vec3){3, -2, 1}, ts);
        const struct xg_vec3 pa = {0, 0, 1};
        /* the offset turns at 2 rad/s relative to A: not rigid */
        const struct xg_vec3 pb = xg_vec3_add(
            pa, xg_quat_rotate(xg_quat_mul(qa, xg_quat_exp((struct xg_vec3){0, 0, 2 * ts})),
                               (struct xg_vec3){0.4, 0, 0}));
        il[0] = xg_test_feed_joint(tl, "A", tk, pa, qa, NULL);
        il[1] = xg_test_feed_joint(tl, "B", tk, pb, qb, NULL);
        iu[0] = xg_test_feed_joint(tu, "A", tk, pa, qa, NULL);
        iu[1] = xg_test_feed_joint(tu, "B", tk, pb, qb, NULL);
        if (k == 0) assert_int_equal(xg_table_set_parent(tl, il[1], il[0]), 0);
        for (int j = 0; j < 2; j++) {
            struct xg_pose a, b;
            assert_int_equal(xg_entity_predict(tl, il[j], tk + 33 * MS, &a), 0);
            assert_int_equal(xg_entity_predict(tu, iu[j], tk + 33 * MS, &b), 0);
            assert_int_equal(a.quality, b.quality);
            assert_memory_equal(&a.orientation, &b.orientation, sizeof a.orientation);
            assert_memory_equal(&a.angular_velocity, &b.angular_velocity,
                                sizeof a.angular_velocity);
        }
    }
    /* A's rotation was never refined: no child was added to it */
    assert_true(!xg_test_entity(tl, il[0])->skel || xg_test_entity(tl, il[0])->skel->n == 0);
    xg_table_free(tl);
    xg_table_free(tu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_spin),
        cmocka_unit_test(test_sudden_stop_never_overshoots),
        cmocka_unit_test(test_swing_without_lag),
        cmocka_unit_test(test_end_joint_held_with_parent),
        cmocka_unit_test(test_end_joint_turns_with_parent),
        cmocka_unit_test(test_end_joint_learns_relative_gain),
        cmocka_unit_test(test_non_rigid_link_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
