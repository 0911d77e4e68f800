/* Unit tests for the entity table's ingress bounds and their log lines (issue 22 item 6), the
 * max_entities refusal counter (item 10) and collision-free source names (item 7,
 * core/table/names.h):
 *   - every field that cannot be a pose (non-finite, beyond XG_*_MAX) is rejected before it
 *     touches the table, counted in stats.rejected, with a warning naming adapter, entity, field
 *     and value; the entity keeps its last good pose; values at the bounds are accepted;
 *   - prediction of a pose at the bounds, at the longest configurable horizon, stays finite and
 *     within them, and so do velocities estimated from samples 1 ns apart;
 *   - a full table refuses new entities with -ENOSPC, counted per origin and logged;
 *   - long names are cut with a hash suffix: distinct names stay distinct, deterministically. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: reads the entity's internals */
#include "core/util/log.h"
#include "test_util.h"
#include "core/table/names.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)

static char captured[16384];

/* stderr of fn(arg) into `captured` (tests/unit/test_util.h) */
#define capture(fn, arg) xg_test_capture_stderr(fn, arg, captured, sizeof captured)
#define count_lines xg_test_count_lines

static struct xg_table *new_table(const struct xg_table_params *p)
{
    struct xg_table *t = xg_table_new(p);
    assert_non_null(t);
    xg_table_set_adapter_name(t, 0, "vc");
    xg_table_set_adapter_name(t, 1, "rg");
    return t;
}

static struct xg_sample pose(int64_t t_ns, struct xg_vec3 p)
{
    return (struct xg_sample){.capture_ns = t_ns,
                              .receive_ns = t_ns,
                              .flags = XG_SAMPLE_POSE,
                              .position = p,
                              .orientation = XG_QUAT_IDENTITY};
}

static int update(struct xg_table *t, int origin, const char *src, const struct xg_sample *s)
{
    struct xg_entity_key key = {.source = src, .kind = XG_KIND_RIGID_BODY};
    return xg_table_update_origin(t, origin, &key, s, NULL);
}

struct bad_case {
    const char *what; /* the field named in the log line */
    uint32_t flags;
    struct xg_sample s;
};

struct reject_run {
    struct xg_table *t;
    const struct bad_case *c;
    int64_t t_ns;
};

static void reject_one(void *arg)
{
    struct reject_run *r = arg;
    struct xg_sample s = r->c->s;
    s.capture_ns = s.receive_ns = r->t_ns;
    s.flags = r->c->flags;
    assert_int_equal(update(r->t, 0, "Tracker0/0", &s), -EINVAL);
}

static void test_ingress_bounds(void **state)
{
    (void)state;
    struct xg_table *t = new_table(NULL);
    const struct xg_vec3 good = {1.5, 2.5, 3.5};
    struct xg_sample ok = pose(T0, good);
    assert_int_equal(update(t, 0, "Tracker0/0", &ok), 0);
    const struct xg_quat Q = XG_QUAT_IDENTITY;
    const struct bad_case cases[] = {
        {"position.x = 1e+39", XG_SAMPLE_POSE, {.position = {1e39, 0, 0}, .orientation = Q}},
        {"position.z = 1.7e+308", XG_SAMPLE_POSE, {.position = {0, 0, 1.7e308}, .orientation = Q}},
        {"position.y = -1000001",
         XG_SAMPLE_POSE,
         {.position = {0, -1.000001e6, 0}, .orientation = Q}},
        {"position.x = nan", XG_SAMPLE_POSE, {.position = {NAN, 0, 0}, .orientation = Q}},
        {"position.y = inf", XG_SAMPLE_POSE, {.position = {0, INFINITY, 0}, .orientation = Q}},
        {"velocity.x = 1e+300", XG_SAMPLE_VELOCITY, {.velocity = {1e300, 0, 0}}},
        {"velocity.y = -10000.1", XG_SAMPLE_VELOCITY, {.velocity = {0, -10000.1, 0}}},
        {"angular_velocity.z = 100000",
         XG_SAMPLE_ANGULAR_VELOCITY,
         {.angular_velocity = {0, 0, 1e5}}},
        {"scale.x = 100000", XG_SAMPLE_SCALE, {.scale = {1e5, 1, 1}}},
        {"scale.y = nan", XG_SAMPLE_SCALE, {.scale = {1, NAN, 1}}},
        {"orientation.norm = 0", XG_SAMPLE_ORIENTATION, {.orientation = {0, 0, 0, 0}}},
        {"orientation.w = 1e+200", XG_SAMPLE_ORIENTATION, {.orientation = {0, 0, 0, 1e200}}},
        {"orientation.x = nan", XG_SAMPLE_ORIENTATION, {.orientation = {NAN, 0, 0, 1}}},
        {"orientation.norm = 1e-07", XG_SAMPLE_ORIENTATION, {.orientation = {0, 0, 1e-7, 0}}},
        /* a pose sample with a bad velocity is rejected whole: the good position is not applied */
        {"velocity.z = 1e+308",
         XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY,
         {.position = {9, 9, 9}, .orientation = Q, .velocity = {0, 0, 1e308}}},
    };
    const size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        /* a fresh limiter window per case: a table per case would also do, but this checks
         * that a rejected sample never creates or changes anything */
        struct reject_run r = {t, &cases[i], T0 + (int64_t)(i + 1) * MS};
        uint64_t before = xg_table_stats(t)->rejected[0];
        capture(reject_one, &r);
        assert_int_equal(xg_table_stats(t)->rejected[0], before + 1);
        if (i < XG_LOG_LIMIT_BURST) {
            char want[256];
            snprintf(want, sizeof want,
                     "[vc] sample of entity 'vc/Tracker0/0' rejected: %s (must be", cases[i].what);
            if (!strstr(captured, want)) fail_msg("case %zu: want '%s' in '%s'", i, want, captured);
            assert_int_equal(count_lines(captured), 1);
        } else {
            assert_int_equal(count_lines(captured), 0); /* rate-limited, still counted */
        }
        const struct xg_entity *e = xg_table_find(t, "vc/Tracker0/0");
        assert_non_null(e);
        assert_int_equal(e->samples, 1);
        assert_memory_equal(&e->last.position, &good, sizeof good);
        assert_false(e->has_velocity);
    }
    /* a new entity whose first sample is bad is not created; its default name is logged */
    struct xg_sample bad = pose(T0 + 100 * MS, (struct xg_vec3){0, 0, -2e6});
    assert_int_equal(update(t, 1, "rig-1/body", &bad), -EINVAL);
    assert_null(xg_table_find(t, "rg/rig-1/body"));
    assert_int_equal(xg_table_count(t), 1);
    assert_int_equal(xg_table_stats(t)->rejected[1], 1);
    assert_int_equal(xg_table_stats(t)->samples_in[0], 1);
    /* at the bounds: accepted */
    struct xg_sample edge = pose(T0 + 200 * MS, (struct xg_vec3){1e6, -1e6, 1e6});
    edge.flags |= XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY | XG_SAMPLE_SCALE;
    edge.velocity = (struct xg_vec3){1e4, -1e4, 1e4};
    edge.angular_velocity = (struct xg_vec3){-1e4, 1e4, -1e4};
    edge.scale = (struct xg_vec3){1e4, -1e4, 1e-300};
    edge.orientation = (struct xg_quat){0, 0, 0, 1e6};
    assert_int_equal(update(t, 0, "Tracker0/0", &edge), 0);
    const struct xg_entity *e = xg_table_find(t, "vc/Tracker0/0");
    assert_float_equal(e->last.position.x, 1e6, 0);
    assert_float_equal(e->last.orientation.w, 1.0, 1e-15);
    xg_table_free(t);
}

static void test_analog_bounds(void **state)
{
    (void)state;
    struct xg_table *t = new_table(NULL);
    struct xg_sample ok = pose(T0, XG_VEC3_ZERO);
    uint32_t id = 0;
    struct xg_entity_key key = {.source = "Analog0"};
    assert_int_equal(xg_table_update_origin(t, 0, &key, &ok, &id), 0);
    assert_int_equal(xg_table_set_analog(t, id, 3, 3.4e38), 0);
    assert_int_equal(xg_table_set_analog(t, id, 3, 1e39), -EINVAL);
    assert_int_equal(xg_table_set_analog(t, id, 3, -INFINITY), -EINVAL);
    assert_int_equal(xg_table_set_analog(t, id, 3, NAN), -EINVAL);
    assert_int_equal(xg_table_stats(t)->rejected[0], 3);
    assert_float_equal(xg_table_get(t, id)->analogs[3], 3.4e38, 0);
    xg_table_free(t);
}

/* A pose at the bounds, predicted at the longest horizon the config allows (10 s), stays finite
 * and within them; so do velocities estimated from samples 1 ns apart. */
static void test_prediction_bounds(void **state)
{
    (void)state;
    struct xg_table_params p;
    xg_table_params_default(&p);
    p.max_horizon_ns = 10000 * MS;
    p.stale_ns = 20000 * MS;
    struct xg_table *t = new_table(&p);
    struct xg_sample s = pose(T0, (struct xg_vec3){1e6, -1e6, 1e6});
    s.flags |= XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY;
    s.velocity = (struct xg_vec3){1e4, -1e4, 1e4};
    s.angular_velocity = (struct xg_vec3){1e4, 1e4, -1e4};
    uint32_t id = 0;
    struct xg_entity_key key = {.source = "fast"};
    assert_int_equal(xg_table_update_origin(t, 0, &key, &s, &id), 0);
    struct xg_pose out;
    assert_int_equal(xg_entity_predict(t, id, T0 + 10000 * MS, &out), 0);
    assert_int_equal(out.quality, XG_QUALITY_PREDICTED);
    assert_float_equal(out.position.x, 1e6, 0);
    assert_float_equal(out.position.y, -1e6, 0);
    assert_true(xg_quat_finite(out.orientation));
    assert_float_equal(xg_quat_dot(out.orientation, out.orientation), 1.0, 1e-9);
    /* estimated: +1e6 then -1e6 one nanosecond later would be 2e15 m/s */
    struct xg_entity_key k2 = {.source = "jumpy"};
    struct xg_sample a = pose(T0, (struct xg_vec3){1e6, 1e6, 1e6});
    struct xg_sample b = pose(T0 + 1, (struct xg_vec3){-1e6, -1e6, -1e6});
    b.orientation = (struct xg_quat){1, 0, 0, 0};
    assert_int_equal(xg_table_update_origin(t, 0, &k2, &a, &id), 0);
    assert_int_equal(xg_table_update_origin(t, 0, &k2, &b, &id), 0);
    const struct xg_entity *e = xg_table_get(t, id);
    assert_true(e->has_velocity && e->velocity_estimated);
    assert_float_equal(e->velocity.x, -1e4, 0);
    /* the fit is clamped to 1e4; the gain before any interval came true is 0.8 */
    assert_float_equal(e->angular_velocity.x, 0.8 * 1e4, 0);
    assert_int_equal(xg_entity_predict(t, id, T0 + 10000 * MS, &out), 0);
    assert_float_equal(out.position.x, -1e6, 0);
    assert_true(xg_vec3_finite(out.velocity) && xg_quat_finite(out.orientation));
    xg_table_free(t);
}

struct refuse_run {
    struct xg_table *t;
    int64_t t_ns;
    const char *src;
};

static void refuse_one(void *arg)
{
    struct refuse_run *r = arg;
    struct xg_sample s = pose(r->t_ns, XG_VEC3_ZERO);
    assert_int_equal(update(r->t, 1, r->src, &s), -ENOSPC);
}

static void test_max_entities_refused(void **state)
{
    (void)state;
    struct xg_table_params p;
    xg_table_params_default(&p);
    p.max_entities = 2;
    struct xg_table *t = new_table(&p);
    struct xg_sample s = pose(T0, XG_VEC3_ZERO);
    assert_int_equal(update(t, 0, "a", &s), 0);
    assert_int_equal(update(t, 1, "b", &s), 0);
    struct refuse_run r = {t, T0 + MS, "c"};
    capture(refuse_one, &r);
    assert_int_equal(count_lines(captured), 1);
    assert_non_null(strstr(captured, "[rg] entity table full (max_entities 2): new entity 'rg/c' "
                                     "refused"));
    assert_int_equal(xg_table_stats(t)->refused[1], 1);
    assert_int_equal(xg_table_stats(t)->refused[0], 0);
    /* more refusals are counted, and logged through the origin's limiter only */
    for (int i = 0; i < 20; i++) {
        r.t_ns = T0 + (2 + i) * MS;
        capture(refuse_one, &r);
    }
    assert_int_equal(xg_table_stats(t)->refused[1], 21);
    /* known entities still update */
    s.capture_ns = s.receive_ns = T0 + 50 * MS;
    assert_int_equal(update(t, 1, "b", &s), 0);
    xg_table_free(t);
}

static void test_name_fit(void **state)
{
    (void)state;
    char a[301 + 1], b[301 + 1];
    memset(a, 'A', 300);
    memset(b, 'A', 300);
    a[300] = '1', b[300] = '2';
    a[301] = b[301] = '\0';
    char fa[XG_NAME_MAX], fb[XG_NAME_MAX], fa2[XG_NAME_MAX];
    size_t la = xg_name_fit(fa, sizeof fa, a, strlen(a));
    xg_name_fit(fb, sizeof fb, b, strlen(b));
    xg_name_fit(fa2, sizeof fa2, a, strlen(a));
    assert_int_equal(la, strlen(fa));
    assert_int_equal(la, XG_NAME_MAX - 1);
    assert_string_not_equal(fa, fb);
    assert_string_equal(fa, fa2); /* deterministic */
    /* SHA-256("A"*300 + "1"), first 96 bits */
    assert_string_equal(fa + XG_NAME_MAX - 1 - XG_NAME_HASH_HEX - 1, "~974d7be72bc8c706c7d0b85a");
    /* short names are kept; one that looks like a fitted name is fitted itself */
    assert_int_equal(xg_name_fit(fb, sizeof fb, "Tracker0/0", 10), 10);
    assert_string_equal(fb, "Tracker0/0");
    char look[XG_NAME_MAX];
    snprintf(look, sizeof look, "%s", fa);
    xg_name_fit(fb, sizeof fb, look, strlen(look));
    assert_string_not_equal(fb, fa);
    /* an embedded NUL does not merge "A\0x" and "A\0y" */
    xg_name_fit(fa, sizeof fa, "A\0x", 3);
    xg_name_fit(fb, sizeof fb, "A\0y", 3);
    assert_string_not_equal(fa, fb);
    assert_true(fa[0] == 'A' && fa[1] == '~');
    /* cut at a UTF-8 boundary: 60 two-byte characters */
    char u[121];
    for (int i = 0; i < 60; i++)
        u[2 * i] = (char)0xC3, u[2 * i + 1] = (char)0xA9; /* é */
    u[120] = '\0';
    size_t lu = xg_name_fitf(fa, sizeof fa, "rig-1/%s%s", u, u);
    size_t cut = lu - XG_NAME_HASH_HEX - 1;
    assert_int_equal(fa[cut], '~');
    assert_true(((unsigned char)fa[cut - 1] == 0xA9)); /* a whole character before the '~' */
    assert_true((cut - 6) % 2 == 0);
}

/* Two RGMP-like target frames that differ only after the name limit are two entities, and the
 * default names "<adapter>/<source>" of long sources stay distinct without "#2" suffixes. */
static void test_long_sources_distinct(void **state)
{
    (void)state;
    struct xg_table *t = new_table(NULL);
    char big[400], src1[XG_NAME_MAX], src2[XG_NAME_MAX];
    memset(big, 'A', 300);
    big[300] = '\0';
    xg_name_fitf(src1, sizeof src1, "rig-1/%s1", big);
    xg_name_fitf(src2, sizeof src2, "rig-1/%s2", big);
    struct xg_sample s1 = pose(T0, (struct xg_vec3){1, 0, 0});
    struct xg_sample s2 = pose(T0 + MS, (struct xg_vec3){2, 0, 0});
    assert_int_equal(update(t, 1, src1, &s1), 0);
    assert_int_equal(update(t, 1, src2, &s2), 0);
    assert_int_equal(xg_table_count(t), 2);
    /* the 2nd sample is not an older sample of the first entity: both applied */
    assert_int_equal(xg_table_stats(t)->samples_in[1], 2);
    assert_int_equal(xg_table_stats(t)->dropped_backwards[1], 0);
    /* names: fitted from "rg/<source>", the same whichever comes first */
    char n1[XG_NAME_MAX], n2[XG_NAME_MAX];
    xg_name_fitf(n1, sizeof n1, "rg/%s", src1);
    xg_name_fitf(n2, sizeof n2, "rg/%s", src2);
    assert_string_not_equal(n1, n2);
    assert_non_null(xg_table_find(t, n1));
    assert_non_null(xg_table_find(t, n2));
    assert_float_equal(xg_table_find(t, n2)->last.position.x, 2, 0);
    xg_table_free(t);
}

int main(void)
{
    xg_log_set_level(XG_LOG_INFO);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ingress_bounds),    cmocka_unit_test(test_analog_bounds),
        cmocka_unit_test(test_prediction_bounds), cmocka_unit_test(test_max_entities_refused),
        cmocka_unit_test(test_name_fit),          cmocka_unit_test(test_long_sources_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
