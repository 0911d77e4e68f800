/* Helpers shared by the skeleton prediction tests (test_predict_skel.c, test_entity_memory.c,
 * test_motion_memory.c): a start orientation, a periodic non-sinusoidal wave, and feeding and
 * reading joints of an entity table. Header-only; include after <cmocka.h> and core/table/entity.h.
 */
#ifndef XG_TEST_SKELETON_H
#define XG_TEST_SKELETON_H

#include <math.h>
#include <stdint.h>

#include "core/table/entity.h"
#include "core/util/xmath.h"

/** A unit quaternion (x y z w) away from every axis: the root's orientation at time 0. */
static const struct xg_quat xg_test_q_start = {0.1825742, 0.3651484, 0.5477226, 0.7302967};

/** A periodic wave of x (period 2 pi) with three harmonics: not a sinusoid, so a joint driven by
 *  it changes its turn rate and direction unevenly, like a limb over a gait cycle. */
static inline double xg_test_wave(double x)
{
    return sin(x) + 0.45 * sin(2 * x + 0.7) + 0.25 * cos(3 * x + 0.3);
}

/** Push a joint's pose sample (capture and receive time t_ns, position p, orientation q; with an
 *  angular velocity when w is not NULL) into t as origin 0's source `name`; fails the test if
 *  the table refuses it. Returns the entity id. */
static inline uint32_t xg_test_feed_joint(struct xg_table *t, const char *name, int64_t t_ns,
                                          struct xg_vec3 p, struct xg_quat q,
                                          const struct xg_vec3 *w)
{
    struct xg_entity_key key = {.source = name, .kind = XG_KIND_JOINT};
    struct xg_sample s = {.capture_ns = t_ns, .receive_ns = t_ns, .flags = XG_SAMPLE_POSE};
    s.position = p;
    s.orientation = q;
    if (w) {
        s.flags |= XG_SAMPLE_ANGULAR_VELOCITY;
        s.angular_velocity = *w;
    }
    uint32_t id = 0;
    assert_int_equal(xg_table_update_origin(t, 0, &key, &s, &id), 0);
    return id;
}

/** The entity `id` of t; fails the test if there is none. */
static inline const struct xg_entity *xg_test_entity(struct xg_table *t, uint32_t id)
{
    const struct xg_entity *e = xg_table_get(t, id);
    assert_non_null(e);
    return e;
}

#endif
