/* Unit tests for mappings/: frame presets and conversions, naming rules, globs. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mappings/conf_yaml.h"
#include "mappings/frame.h"
#include "mappings/naming.h"
#include "mappings/presets.h"

static void assert_vec_near(struct xg_vec3 a, struct xg_vec3 b, double tol)
{
    if (!(fabs(a.x - b.x) <= tol && fabs(a.y - b.y) <= tol && fabs(a.z - b.z) <= tol)) {
        print_error("(%g %g %g) != (%g %g %g)\n", a.x, a.y, a.z, b.x, b.y, b.z);
        fail();
    }
}

static struct xg_conf *yaml(const char *text)
{
    struct xg_error err = {0};
    struct xg_conf *c = xg_conf_yaml_parse(text, strlen(text), "test.yaml", &err);
    if (!c) print_error("%s\n", err.msg);
    assert_non_null(c);
    return c;
}

static void test_axes_parse(void **state)
{
    (void)state;
    double m[3][3], det;
    struct xg_error err = {0};
    assert_int_equal(xg_frame_parse_axes("x,z,-y", m, &det, &err), 0);
    assert_float_equal(m[0][0], 1, 0);
    assert_float_equal(m[1][2], 1, 0);
    assert_float_equal(m[2][1], -1, 0);
    assert_float_equal(det, 1, 0);
    assert_int_equal(xg_frame_parse_axes(" x , y , -z ", m, &det, &err), 0);
    assert_float_equal(det, -1, 0);
    assert_int_equal(xg_frame_parse_axes("x,x,y", m, &det, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'x' is used twice"));
    assert_int_equal(xg_frame_parse_axes("x,y", m, &det, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "three comma-separated"));
    assert_int_equal(xg_frame_parse_axes("x,y,w", m, &det, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "item 3"));
    assert_int_equal(xg_frame_parse_axes("x,y,z,x", m, &det, &err), -EINVAL);
}

static void test_vrpn_zup(void **state)
{
    (void)state;
    struct xg_frame f;
    struct xg_error err = {0};
    assert_int_equal(xg_frame_preset("vrpn-zup", &f, &err), 0);
    /* wire up (z) becomes internal up (y); wire y (forward) becomes internal -z */
    assert_vec_near(xg_frame_pos_in(&f, (struct xg_vec3){0, 0, 1}), (struct xg_vec3){0, 1, 0}, 0);
    assert_vec_near(xg_frame_pos_in(&f, (struct xg_vec3){0, 1, 0}), (struct xg_vec3){0, 0, -1}, 0);
    assert_vec_near(xg_frame_pos_in(&f, (struct xg_vec3){1, 0, 0}), (struct xg_vec3){1, 0, 0}, 0);
    /* a yaw about wire z is a yaw about internal y */
    struct xg_quat yaw_w = xg_quat_from_axis_angle((struct xg_vec3){0, 0, 1}, 0.5);
    struct xg_quat yaw_i = xg_frame_rot_in(&f, yaw_w);
    struct xg_quat want = xg_quat_from_axis_angle((struct xg_vec3){0, 1, 0}, 0.5);
    assert_true(xg_quat_angle_between(yaw_i, want) < 1e-12);
    assert_int_equal(xg_frame_preset("no-such-frame", &f, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "unknown frame preset 'no-such-frame'"));
    assert_non_null(strstr(err.msg, "vrpn-zup"));
}

/* For every preset: round trip in→out, rotations stay proper (det +1), and rotating then mapping
 * equals mapping then rotating (the mapping is a change of basis, also across handedness). */
static void test_presets_roundtrip_proper(void **state)
{
    (void)state;
    int n = 0;
    for (const struct xg_embedded_file *p = xg_embedded_presets; p->name; p++, n++) {
        struct xg_frame f;
        struct xg_error err = {0};
        if (xg_frame_preset(p->name, &f, &err)) print_error("%s: %s\n", p->name, err.msg);
        assert_int_equal(xg_frame_preset(p->name, &f, &err), 0);
        for (int k = 0; k < 20; k++) {
            struct xg_vec3 pos = {0.3 * k - 2, 1.0 - 0.1 * k, 0.05 * k * k};
            struct xg_quat q =
                xg_quat_normalize((struct xg_quat){sin(k), cos(2 * k), 0.3, 1.0 + k});
            struct xg_vec3 v = {1, -2, 0.5 * k}, w = {0.2 * k, -1, 3};
            assert_vec_near(xg_frame_pos_out(&f, xg_frame_pos_in(&f, pos)), pos, 1e-12);
            assert_true(xg_quat_angle_between(xg_frame_rot_out(&f, xg_frame_rot_in(&f, q)), q) <
                        1e-9);
            assert_vec_near(xg_frame_vel_out(&f, xg_frame_vel_in(&f, v)), v, 1e-12);
            assert_vec_near(xg_frame_angvel_out(&f, xg_frame_angvel_in(&f, w)), w, 1e-12);
            struct xg_quat qi = xg_frame_rot_in(&f, q);
            double m[3][3];
            xg_quat_to_mat3(xg_quat_normalize(qi), m);
            assert_float_equal(xg_mat3_det(m), 1.0, 1e-12);
            assert_float_equal(xg_quat_dot(qi, qi), 1.0, 1e-12);
            /* change of basis: map(R v) == R' map(v) for vectors (no offset for velocities) */
            assert_vec_near(xg_frame_vel_in(&f, xg_quat_rotate(q, v)),
                            xg_quat_rotate(qi, xg_frame_vel_in(&f, v)), 1e-12);
            /* angular velocity maps consistently with integration */
            struct xg_quat q2 = xg_quat_integrate(q, w, 0.01);
            struct xg_vec3 wi = xg_quat_angular_velocity(qi, xg_frame_rot_in(&f, q2), 0.01);
            assert_vec_near(wi, xg_frame_angvel_in(&f, w), 1e-9);
        }
    }
    assert_true(n >= 6);
}

static void test_handedness_flip(void **state)
{
    (void)state;
    struct xg_frame f;
    struct xg_error err = {0};
    assert_int_equal(xg_frame_preset("gamestate-lh", &f, &err), 0);
    assert_float_equal(f.det, -1, 0);
    /* positions: z flips */
    assert_vec_near(xg_frame_pos_in(&f, (struct xg_vec3){1, 2, 3}), (struct xg_vec3){1, 2, -3}, 0);
    /* a left-handed yaw of +θ about y is a right-handed yaw of −θ about y */
    struct xg_quat lh = xg_quat_from_axis_angle((struct xg_vec3){0, 1, 0}, 0.4);
    struct xg_quat rh = xg_frame_rot_in(&f, lh);
    assert_true(xg_quat_angle_between(
                    rh, xg_quat_from_axis_angle((struct xg_vec3){0, 1, 0}, -0.4)) < 1e-12);
    /* a roll about z (the flipped axis) keeps its angle */
    struct xg_quat roll = xg_quat_from_axis_angle((struct xg_vec3){0, 0, 1}, 0.4);
    struct xg_quat roll_i = xg_frame_rot_in(&f, roll);
    assert_true(xg_quat_angle_between(
                    roll_i, xg_quat_from_axis_angle((struct xg_vec3){0, 0, -1}, -0.4)) < 1e-12);
}

static void test_frame_from_conf(void **state)
{
    (void)state;
    struct xg_conf *c = yaml("frame:\n  preset: zup-rh\n  scale: 0.001\n  offset: [1, 0, 0]\n"
                             "  rotation: [0, 0.7071067811865476, 0, 0.7071067811865476]\n");
    struct xg_frame f;
    struct xg_error err = {0};
    assert_int_equal(xg_frame_from_conf(xg_conf_get(c, "frame"), &f, &err), 0);
    /* 1000 mm along wire z → 1 m up; rotation about Y keeps it up; offset adds x */
    assert_vec_near(xg_frame_pos_in(&f, (struct xg_vec3){0, 0, 1000}), (struct xg_vec3){1, 1, 0},
                    1e-12);
    /* 1000 mm along wire x → 1 m along x, rotated 90° about y → -z, plus offset */
    assert_vec_near(xg_frame_pos_in(&f, (struct xg_vec3){1000, 0, 0}), (struct xg_vec3){1, 0, -1},
                    1e-12);
    assert_int_equal(xg_conf_check_unused(c, &err), 0);
    xg_conf_yaml_free(c);

    c = yaml("frame: {axes: \"x,z,z\"}\n");
    assert_int_equal(xg_frame_from_conf(xg_conf_get(c, "frame"), &f, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "test.yaml:1:15: axes 'x,z,z'"));
    xg_conf_yaml_free(c);

    c = yaml("frame: nope\n");
    assert_int_equal(xg_frame_from_conf(xg_conf_get(c, "frame"), &f, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "test.yaml:1:8: unknown frame preset 'nope'"));
    xg_conf_yaml_free(c);

    c = yaml("frame: {scale: -1}\n");
    assert_int_equal(xg_frame_from_conf(xg_conf_get(c, "frame"), &f, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "'scale' = -1 is out of range"));
    xg_conf_yaml_free(c);

    c = yaml("frame: {axes: \"x,y,z\", sclae: 2}\n");
    assert_int_equal(xg_frame_from_conf(xg_conf_get(c, "frame"), &f, &err), 0);
    assert_int_equal(xg_conf_check_unused(c, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "test.yaml:1:24: unknown key 'sclae'"));
    xg_conf_yaml_free(c);
}

static void test_sample_pose_conversion(void **state)
{
    (void)state;
    struct xg_frame f;
    assert_int_equal(xg_frame_preset("LTP_NED", &f, NULL), 0);
    struct xg_sample s = {.flags = XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY};
    s.position = (struct xg_vec3){1, 0, 0}; /* 1 m north */
    s.orientation = XG_QUAT_IDENTITY;
    s.velocity = (struct xg_vec3){0, 0, 2}; /* 2 m/s down */
    xg_frame_sample_in(&f, &s);
    assert_vec_near(s.position, (struct xg_vec3){0, 0, -1}, 0); /* north = -z (z is south) */
    assert_vec_near(s.velocity, (struct xg_vec3){0, -2, 0}, 0); /* down = -y */
    struct xg_pose p = {
        .position = s.position, .orientation = s.orientation, .velocity = s.velocity};
    xg_frame_pose_out(&f, &p);
    assert_vec_near(p.position, (struct xg_vec3){1, 0, 0}, 0);
    assert_vec_near(p.velocity, (struct xg_vec3){0, 0, 2}, 0);
}

static void test_rename_rules(void **state)
{
    (void)state;
    struct xg_conf *c = yaml("rename:\n"
                             "  - {match: \"rig/Tracker0/0\", name: \"headset\", kind: head}\n"
                             "  - {match: \"rig/*\", name: \"lab/{source}\"}\n"
                             "  - {match: \"*/hand*\", kind: controller}\n");
    struct xg_rename_rules r;
    struct xg_error err = {0};
    assert_int_equal(xg_rename_from_conf(xg_conf_get(c, "rename"), &r, &err), 0);
    char name[XG_NAME_MAX];
    enum xg_kind kind = XG_KIND_RIGID_BODY;
    assert_true(xg_rename_apply(&r, "rig/Tracker0/0", name, sizeof name, &kind));
    assert_string_equal(name, "headset");
    assert_int_equal(kind, XG_KIND_HEAD);
    kind = XG_KIND_RIGID_BODY;
    assert_true(xg_rename_apply(&r, "rig/Tracker0/1", name, sizeof name, &kind));
    assert_string_equal(name, "lab/Tracker0/1");
    assert_int_equal(kind, XG_KIND_RIGID_BODY);
    assert_true(xg_rename_apply(&r, "suit/hand_l", name, sizeof name, &kind));
    assert_string_equal(name, "suit/hand_l");
    assert_int_equal(kind, XG_KIND_CONTROLLER);
    assert_false(xg_rename_apply(&r, "demo/body0", name, sizeof name, &kind));
    assert_string_equal(name, "demo/body0");
    xg_rename_free(&r);
    xg_conf_yaml_free(c);

    c = yaml("rename:\n  - {match: \"*\", kind: squid}\n");
    assert_int_equal(xg_rename_from_conf(xg_conf_get(c, "rename"), &r, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "test.yaml:2:24: unknown kind 'squid'"));
    xg_conf_yaml_free(c);
    c = yaml("rename:\n  - {name: x}\n");
    assert_int_equal(xg_rename_from_conf(xg_conf_get(c, "rename"), &r, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "test.yaml:2:5: rename rule needs 'match: <glob>'"));
    xg_conf_yaml_free(c);
}

static void test_globs(void **state)
{
    (void)state;
    struct xg_conf *c = yaml("include: [\"demo/*\", \"rig/Tracker?/0\"]\nexclude: \"*/body*\"\n");
    struct xg_globs inc, exc;
    assert_int_equal(xg_globs_from_conf(xg_conf_get(c, "include"), &inc, NULL), 0);
    assert_int_equal(xg_globs_from_conf(xg_conf_get(c, "exclude"), &exc, NULL), 0);
    assert_true(xg_globs_match(&inc, "demo/head"));
    assert_true(xg_globs_match(&inc, "rig/Tracker3/0"));
    assert_false(xg_globs_match(&inc, "rig/Tracker3/1"));
    assert_true(xg_globs_match(&exc, "demo/body2"));
    assert_false(xg_globs_match(&exc, "demo/head"));
    xg_globs_free(&inc);
    xg_globs_free(&exc);
    xg_conf_yaml_free(c);
}

/* xg_frame_finalize (issue 19 item 3): the precomputed matrices give the reference results (within
 * 1e-12 relative) for every preset and for frames with scale, rotation and offset; a frame whose
 * fields are assigned without finalizing keeps using them (stale matrices are never read). */
static void test_finalize_matches_reference(void **state)
{
    (void)state;
    struct xg_frame frames[40];
    int nf = 0;
    struct xg_error err = {0};
    for (const struct xg_embedded_file *p = xg_embedded_presets; p->name && nf < 30; p++)
        assert_int_equal(xg_frame_preset(p->name, &frames[nf++], &err), 0);
    static const char *custom[] = {
        ("frame: {axes: 'x,z,-y', scale: 0.001, rotation: [0.1, -0.7, 0.2, 0.6], "
         "offset: [1, -2, 3]}"),
        "frame: {axes: 'z,x,y', scale: 2.5, offset: [-0.5, 0, 100]}",
        "frame: {preset: unity, rotation: [0, 0.3826834, 0, 0.9238795]}",
    };
    for (size_t i = 0; i < sizeof custom / sizeof custom[0]; i++) {
        struct xg_conf *c = yaml(custom[i]);
        assert_int_equal(xg_frame_from_conf(xg_conf_get(c, "frame"), &frames[nf++], &err), 0);
        xg_conf_yaml_free(c);
    }
    uint64_t seed = 7;
    for (int i = 0; i < nf; i++) {
        struct xg_frame ref = frames[i], fast = frames[i];
        assert_false(ref.ready);
        xg_frame_finalize(&fast);
        assert_true(fast.ready);
        for (int k = 0; k < 50; k++) {
            double r[7];
            for (int j = 0; j < 7; j++) {
                seed = seed * UINT64_C(6364136223846793005) + 1442695040888963407u;
                r[j] = (double)(seed >> 11) * 0x1.0p-53 * 20.0 - 10.0;
            }
            struct xg_vec3 v = {r[0], r[1], r[2]};
            struct xg_quat q = xg_quat_normalize((struct xg_quat){r[3], r[4], r[5], r[6]});
            struct xg_sample a = {.flags = XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY |
                                           XG_SAMPLE_ANGULAR_VELOCITY,
                                  .position = v,
                                  .orientation = q,
                                  .velocity = v,
                                  .angular_velocity = {r[2], r[0], r[1]}};
            struct xg_sample b = a;
            xg_frame_sample_in(&ref, &a);
            xg_frame_sample_in(&fast, &b);
            double tol = 1e-12 *
                         (1 + fabs(ref.offset.x) + fabs(ref.offset.y) + fabs(ref.offset.z)) *
                         (ref.scale > 1 ? ref.scale : 1);
            assert_vec_near(a.position, b.position, tol * 10);
            assert_vec_near(a.velocity, b.velocity, tol * 10);
            assert_vec_near(a.angular_velocity, b.angular_velocity, 1e-12 * 10);
            assert_float_equal(a.orientation.w, b.orientation.w, 1e-12);
            assert_vec_near((struct xg_vec3){a.orientation.x, a.orientation.y, a.orientation.z},
                            (struct xg_vec3){b.orientation.x, b.orientation.y, b.orientation.z},
                            1e-12);
            struct xg_pose pa = {.position = v,
                                 .orientation = q,
                                 .velocity = v,
                                 .angular_velocity = {r[1], r[2], r[0]}};
            struct xg_pose pb = pa;
            xg_frame_pose_out(&ref, &pa);
            xg_frame_pose_out(&fast, &pb);
            double tolo = 1e-12 * (1 + 20 / ref.scale);
            assert_vec_near(pa.position, pb.position, tolo * 10);
            assert_vec_near(pa.velocity, pb.velocity, tolo * 10);
            assert_vec_near(pa.angular_velocity, pb.angular_velocity, 1e-12 * 10);
            assert_float_equal(pa.orientation.w, pb.orientation.w, 1e-12);
            assert_vec_near((struct xg_vec3){pa.orientation.x, pa.orientation.y, pa.orientation.z},
                            (struct xg_vec3){pb.orientation.x, pb.orientation.y, pb.orientation.z},
                            1e-12);
        }
    }
    /* assigning a field of an unfinalized frame takes effect at once */
    struct xg_frame f;
    xg_frame_identity(&f);
    f.scale = 2.0;
    assert_vec_near(xg_frame_pos_in(&f, (struct xg_vec3){1, 2, 3}), (struct xg_vec3){2, 4, 6}, 0);
    /* and after finalizing again, in the matrices too */
    xg_frame_finalize(&f);
    f.scale = 3.0;
    xg_frame_finalize(&f);
    assert_vec_near(xg_frame_pos_in(&f, (struct xg_vec3){1, 2, 3}), (struct xg_vec3){3, 6, 9}, 0);
    assert_vec_near(xg_frame_pos_out(&f, (struct xg_vec3){3, 6, 9}), (struct xg_vec3){1, 2, 3},
                    1e-15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axes_parse),
        cmocka_unit_test(test_vrpn_zup),
        cmocka_unit_test(test_presets_roundtrip_proper),
        cmocka_unit_test(test_handedness_flip),
        cmocka_unit_test(test_frame_from_conf),
        cmocka_unit_test(test_sample_pose_conversion),
        cmocka_unit_test(test_rename_rules),
        cmocka_unit_test(test_globs),
        cmocka_unit_test(test_finalize_matches_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
