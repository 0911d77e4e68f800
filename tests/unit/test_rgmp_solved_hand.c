/* Unit tests for the rgmp-server's solved_hand layout (rgmp_solved_hand.h): the exact Stream
 * Definition JSON Rokoko's own consumers select (device_type solved_hand, device_info.hand, group
 * joints_openxr with the 26 OpenXR joints as FLOAT[7] TRANSFORM streams "xr_<joint>"), the joint
 * hierarchy, how unmapped joints are filled, and the session timestamp that strictly increases
 * across Data Frames of one device even within one clock tick (issue 16 item 10). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/rgmp/rgmp_solved_hand.h"
#include "core/clock/clock.h"

static void test_joint_names_and_parents(void **state)
{
    (void)state;
    const char *want[RGMP_HAND_JOINTS] = {"palm",
                                          "wrist",
                                          "thumb_metacarpal",
                                          "thumb_proximal",
                                          "thumb_distal",
                                          "thumb_tip",
                                          "index_metacarpal",
                                          "index_proximal",
                                          "index_intermediate",
                                          "index_distal",
                                          "index_tip",
                                          "middle_metacarpal",
                                          "middle_proximal",
                                          "middle_intermediate",
                                          "middle_distal",
                                          "middle_tip",
                                          "ring_metacarpal",
                                          "ring_proximal",
                                          "ring_intermediate",
                                          "ring_distal",
                                          "ring_tip",
                                          "little_metacarpal",
                                          "little_proximal",
                                          "little_intermediate",
                                          "little_distal",
                                          "little_tip"};
    for (int j = 0; j < RGMP_HAND_JOINTS; j++) {
        assert_string_equal(rgmp_hand_joint_name(j), want[j]);
        assert_int_equal(rgmp_hand_joint_index(want[j]), j);
        char xr[40];
        snprintf(xr, sizeof xr, "xr_%s", want[j]);
        assert_int_equal(rgmp_hand_joint_index(xr), j);
    }
    assert_null(rgmp_hand_joint_name(26));
    assert_int_equal(rgmp_hand_joint_index("pinky_tip"), -1);
    assert_int_equal(rgmp_hand_joint_parent(RGMP_HAND_WRIST), -1);
    assert_int_equal(rgmp_hand_joint_parent(RGMP_HAND_PALM), RGMP_HAND_WRIST);
    assert_int_equal(rgmp_hand_joint_parent(2), RGMP_HAND_WRIST);  /* thumb_metacarpal */
    assert_int_equal(rgmp_hand_joint_parent(5), 4);                /* thumb_tip -> distal */
    assert_int_equal(rgmp_hand_joint_parent(21), RGMP_HAND_WRIST); /* little_metacarpal */
    assert_int_equal(rgmp_hand_joint_parent(25), 24);
}

static void test_definition_json(void **state)
{
    (void)state;
    struct rgmp_definition *def = NULL;
    struct xg_error err = {0};
    assert_int_equal(rgmp_hand_definition(7, "left", "demo/left_hand", 90, &def, &err), 0);
    char *json = NULL;
    size_t len = 0;
    assert_int_equal(rgmp_definition_to_json(def, &json, &len, &err), 0);
    const char *head = "{\"protocol_name\":\"RGMP\",\"protocol_version\":\"2.0.0\",\"device_id\":7,"
                       "\"device_type\":\"solved_hand\",\"timestamp_epoch\":\"unix_epoch\","
                       "\"device_info\":{\"hand\":\"left\",\"source\":\"demo/left_hand\"},";
    if (strncmp(json, head, strlen(head))) fail_msg("definition starts\n%s\nnot\n%s", json, head);
    const char *group = "\"groups\":[{\"name\":\"joints_openxr\",\"expected_rate_hz\":90,"
                        "\"streams\":[{\"data_type\":\"FLOAT[7]\",\"measure_type\":\"TRANSFORM\","
                        "\"target_frame\":\"xr_palm\",\"reference_frame\":\"xr_base\"},"
                        "{\"data_type\":\"FLOAT[7]\",\"measure_type\":\"TRANSFORM\","
                        "\"target_frame\":\"xr_wrist\",\"reference_frame\":\"xr_base\"},";
    if (!strstr(json, group)) fail_msg("no joints_openxr group as expected in\n%s", json);
    assert_non_null(strstr(json, "\"target_frame\":\"xr_little_tip\",\"reference_frame\":"
                                 "\"xr_base\"}]}]}"));
    /* the definition decodes under our own strict rules: 26 streams, 16 + 26 * 28 bytes */
    struct rgmp_definition *back = NULL;
    assert_int_equal(rgmp_definition_decode(json, len, NULL, &back, &err), 0);
    assert_int_equal(back->n_groups, 1);
    assert_int_equal(back->groups[0].n_streams, RGMP_HAND_JOINTS);
    assert_int_equal(back->groups[0].values_len, RGMP_HAND_JOINTS * 28);
    rgmp_definition_free(back);
    free(json);
    rgmp_definition_free(def);

    assert_int_equal(rgmp_hand_definition(8, "right", NULL, 0, &def, &err), 0);
    assert_string_equal(def->device_info_json, "{\"hand\":\"right\"}");
    rgmp_definition_free(def);
    assert_int_equal(rgmp_hand_definition(8, "both", NULL, 0, &def, &err), -EINVAL);
    assert_null(def);
    assert_non_null(strstr(err.msg, "hand 'both' is not left or right"));
}

static void test_values_fill_from_ancestors(void **state)
{
    (void)state;
    struct xg_pose pose[RGMP_HAND_JOINTS];
    bool have[RGMP_HAND_JOINTS] = {false};
    memset(pose, 0, sizeof pose);
    pose[RGMP_HAND_WRIST].position = (struct xg_vec3){1, 2, 3};
    pose[RGMP_HAND_WRIST].orientation = (struct xg_quat){0, 0, 0, 2}; /* normalised on output */
    have[RGMP_HAND_WRIST] = true;
    pose[7].position = (struct xg_vec3){4, 5, 6}; /* index_proximal */
    pose[7].orientation = (struct xg_quat){0, 1, 0, 0};
    have[7] = true;
    float v[RGMP_HAND_JOINTS * 7];
    rgmp_hand_values(pose, have, v);
    const float wrist[7] = {1, 2, 3, 0, 0, 0, 1}, prox[7] = {4, 5, 6, 0, 1, 0, 0};
    for (int j = 0; j < RGMP_HAND_JOINTS; j++) {
        /* index intermediate, distal and tip (8, 9, 10) hang off index_proximal; all else off
         * the wrist (the palm too) */
        const float *want = (j >= 7 && j <= 10) ? prox : wrist;
        for (int k = 0; k < 7; k++)
            if (v[7 * j + k] != want[k])
                fail_msg("joint %d value %d: %g, want %g", j, k, (double)v[7 * j + k],
                         (double)want[k]);
    }
}

/* Two Data Frames of one device in one tick (two groups, same `now`) get two different
 * timestamps: the second is the first + 1 µs; a later tick continues from the wall clock. */
static void test_session_timestamp_strictly_increases(void **state)
{
    (void)state;
    uint64_t last = 0;
    int64_t now = xg_clock_mono_ns();
    uint64_t t0 = rgmp_next_timestamp_us(&last, now);
    uint64_t t1 = rgmp_next_timestamp_us(&last, now);
    uint64_t t2 = rgmp_next_timestamp_us(&last, now);
    assert_true(t0 > 0);
    assert_true(t1 == t0 + 1);
    assert_true(t2 == t0 + 2);
    assert_true(last == t2);
    /* a clock that goes back (an earlier instant) still yields last + 1 */
    assert_true(rgmp_next_timestamp_us(&last, now - 1000000000) == t0 + 3);
    /* a second later: the wall clock again */
    uint64_t t4 = rgmp_next_timestamp_us(&last, now + 1000000000);
    assert_true(t4 >= t0 + 999999 && t4 <= t0 + 1000001);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joint_names_and_parents),
        cmocka_unit_test(test_definition_json),
        cmocka_unit_test(test_values_fill_from_ancestors),
        cmocka_unit_test(test_session_timestamp_strictly_increases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
