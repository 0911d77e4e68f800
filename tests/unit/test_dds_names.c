/* Unit tests for the dds adapter's pure parts: ROS 2 name mapping (entity names → TF frame ids
 * and topic names), ROS 2 topic names → DDS topic names, builtin_interfaces/Time conversion, and
 * the `ros` frame preset (REP 103: X forward, Y left, Z up) against the internal Y-up frame. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/dds/dds_names.h"
#include "mappings/frame.h"

static void ros_name(const char *in, const char *want)
{
    char out[DDS_TOPIC_MAX + 1];
    size_t n = dds_ros_name(out, sizeof out, in);
    assert_string_equal(out, want);
    assert_int_equal(n, strlen(want));
}

static void test_ros_name(void **state)
{
    (void)state;
    ros_name("demo/head", "demo/head");
    ros_name("demo/body 0", "demo/body_0");
    ros_name("rig/3/x", "rig/_3/x");
    ros_name("7up", "_7up");
    ros_name("/a//b/", "a/b");
    ros_name("suit/smartsuit-305419896/hips", "suit/smartsuit_305419896/hips");
    ros_name("caf\xc3\xa9", "caf__"); /* each byte outside [A-Za-z0-9_] */
    ros_name("", "_");
    ros_name("///", "_");
    ros_name("a.b:c", "a_b_c");
}

static void test_ros_name_cut(void **state)
{
    (void)state;
    char out[8];
    assert_int_equal(dds_ros_name(out, sizeof out, "abcdefghijk"), 7);
    assert_string_equal(out, "abcdefg");
    /* a separator is never the last byte */
    assert_int_equal(dds_ros_name(out, sizeof out, "abcdef/gh"), 6);
    assert_string_equal(out, "abcdef");
    /* a token that does not fit with its separator and '_' is left out whole: never a
     * trailing '/' (found by fuzz_dds: "a/1b" in 4 bytes gave "a/") */
    char four[4];
    assert_int_equal(dds_ros_name(four, sizeof four, "a/1b"), 1);
    assert_string_equal(four, "a");
    char five[5];
    assert_int_equal(dds_ros_name(five, sizeof five, "a/1b"), 4);
    assert_string_equal(five, "a/_1");
    char two[2];
    assert_int_equal(dds_ros_name(two, sizeof two, "9"), 1);
    assert_string_equal(two, "_");
}

static void topic_ok(const char *ros, const char *want)
{
    char out[DDS_TOPIC_MAX + 1];
    const char *why = "unset";
    assert_int_equal(dds_topic_from_ros(ros, out, sizeof out, &why), 0);
    assert_null(why);
    assert_string_equal(out, want);
}

static void topic_bad(const char *ros, const char *reason)
{
    char out[DDS_TOPIC_MAX + 1];
    const char *why = NULL;
    assert_int_equal(dds_topic_from_ros(ros, out, sizeof out, &why), -EINVAL);
    assert_non_null(why);
    assert_string_equal(why, reason);
}

static void test_topic_from_ros(void **state)
{
    (void)state;
    topic_ok("/tf", "rt/tf");
    topic_ok("/robot/pose", "rt/robot/pose");
    topic_ok("robot/pose", "rt/robot/pose");
    topic_ok("/a_1/b2", "rt/a_1/b2");
    topic_bad("", "empty name");
    topic_bad("/", "no name after '/'");
    topic_bad("/a//b", "empty token ('//')");
    topic_bad("/a/b/", "a trailing '/'");
    topic_bad("/a/1b", "a token starting with a digit");
    topic_bad("/robot pose", "a character outside [A-Za-z0-9_/]");
    topic_bad("~/pose", "a character outside [A-Za-z0-9_/]");
    char long_name[300];
    memset(long_name, 'a', sizeof long_name);
    long_name[0] = '/';
    long_name[254] = '\0'; /* "rt" + 254 bytes = 256: fits */
    char out[DDS_TOPIC_MAX + 1];
    const char *why;
    assert_int_equal(dds_topic_from_ros(long_name, out, sizeof out, &why), 0);
    assert_int_equal(strlen(out), 256);
    long_name[254] = 'a';
    long_name[255] = '\0';
    topic_bad(long_name, "longer than 256 bytes as a DDS topic name");
}

static void test_stamps(void **state)
{
    (void)state;
    int32_t sec;
    uint32_t nsec;
    int64_t ns;
    dds_stamp_from_ns(INT64_C(1795656989703793654), &sec, &nsec);
    assert_int_equal(sec, 1795656989);
    assert_int_equal(nsec, 703793654);
    assert_int_equal(dds_stamp_to_ns(sec, nsec, &ns), 0);
    assert_true(ns == INT64_C(1795656989703793654));
    dds_stamp_from_ns(-1, &sec, &nsec); /* before the epoch: nanosec stays in [0, 1e9) */
    assert_int_equal(sec, -1);
    assert_int_equal(nsec, 999999999);
    dds_stamp_from_ns(INT64_C(1) << 62, &sec, &nsec); /* past int32 seconds: clamped */
    assert_int_equal(sec, INT32_MAX);
    assert_int_equal(nsec, 999999999);
    assert_int_equal(dds_stamp_to_ns(5, 1000000000u, &ns), -EINVAL);
    assert_int_equal(dds_stamp_to_ns(5, 999999999u, &ns), 0);
    assert_true(ns == INT64_C(5999999999));
}

static void test_ros_frame(void **state)
{
    (void)state;
    struct xg_frame f;
    struct xg_error err = {0};
    assert_int_equal(xg_frame_preset("ros", &f, &err), 0);
    assert_float_equal(f.det, 1.0, 0);
    /* REP 103: x forward, y left, z up → internal X = x, Y (up) = z, Z = -y */
    struct xg_vec3 p = xg_frame_pos_in(&f, (struct xg_vec3){1, 2, 3});
    assert_float_equal(p.x, 1, 1e-12);
    assert_float_equal(p.y, 3, 1e-12);
    assert_float_equal(p.z, -2, 1e-12);
    /* a 90° yaw (about ROS z, up) is a rotation about internal Y by the same angle */
    double s = sqrt(0.5);
    struct xg_quat q = xg_frame_rot_in(&f, (struct xg_quat){0, 0, s, s});
    assert_float_equal(q.x, 0, 1e-12);
    assert_float_equal(q.y, s, 1e-12);
    assert_float_equal(q.z, 0, 1e-12);
    assert_float_equal(q.w, s, 1e-12);
    /* it turns ROS forward (x) into ROS left (y): internal X into internal -Z */
    struct xg_vec3 v = xg_quat_rotate(q, (struct xg_vec3){1, 0, 0});
    assert_float_equal(v.x, 0, 1e-12);
    assert_float_equal(v.z, -1, 1e-12);
    /* and back out exactly */
    struct xg_vec3 back = xg_frame_pos_out(&f, p);
    assert_float_equal(back.x, 1, 1e-12);
    assert_float_equal(back.y, 2, 1e-12);
    assert_float_equal(back.z, 3, 1e-12);
    struct xg_quat qb = xg_frame_rot_out(&f, q);
    assert_float_equal(qb.z, s, 1e-12);
    assert_float_equal(qb.w, s, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ros_name),       cmocka_unit_test(test_ros_name_cut),
        cmocka_unit_test(test_topic_from_ros), cmocka_unit_test(test_stamps),
        cmocka_unit_test(test_ros_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
