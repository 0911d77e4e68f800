/* BVH parser: the hand-written vectors in tests/vectors/bvh/, every error message (line and
 * token), the limits, and the CMU walk in tests/vectors/mocap. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/bvh/bvh_parser.h"

#define VEC_DIR XG_SOURCE_DIR "/tests/vectors/bvh/"
#define CMU_FILE XG_VECTORS_DIR "/mocap/cmu_08_10_walk.bvh"

static int parse(const char *text, const struct bvh_limits *lim, struct bvh_file *f,
                 struct xg_error *err)
{
    return bvh_parse(text, strlen(text), lim, f, err);
}

/* Parse must fail with `code` and a message containing `want`. */
static void expect_error(const char *text, const struct bvh_limits *lim, int code, const char *want)
{
    struct bvh_file f;
    struct xg_error err = {0};
    int rc = parse(text, lim, &f, &err);
    if (rc != code || !strstr(err.msg, want))
        fail_msg("rc %d (want %d), message \"%s\" (want \"%s\")", rc, code, err.msg, want);
    assert_null(f.joints);
    assert_null(f.motion);
    assert_int_equal(f.n_joints, 0);
}

static const char *const chain_hdr = "HIERARCHY\n"
                                     "ROOT A\n"
                                     "{\n"
                                     "  OFFSET 0 0 0\n"
                                     "  CHANNELS 6 Xposition Yposition Zposition Zrotation "
                                     "Xrotation Yrotation\n"
                                     "  JOINT B\n"
                                     "  {\n"
                                     "    OFFSET 0 10 0\n"
                                     "    CHANNELS 3 Zrotation Xrotation Yrotation\n"
                                     "    End Site\n"
                                     "    {\n"
                                     "      OFFSET 0 5 0\n"
                                     "    }\n"
                                     "  }\n"
                                     "}\n";

static void test_chain_vector(void **state)
{
    (void)state;
    struct bvh_file f;
    struct xg_error err = {0};
    assert_int_equal(bvh_load(VEC_DIR "chain_zxy.bvh", NULL, &f, &err), 0);
    assert_int_equal(f.n_joints, 3);
    assert_int_equal(f.n_channels, 9);
    assert_int_equal(f.n_frames, 2);
    assert_true(f.frame_time == 0.5);
    assert_string_equal(f.joints[0].name, "A");
    assert_int_equal(f.joints[0].parent, -1);
    assert_int_equal(f.joints[0].n_channels, 6);
    assert_int_equal(f.joints[0].channels[0], BVH_XPOSITION);
    assert_int_equal(f.joints[0].channels[3], BVH_ZROTATION);
    assert_int_equal(f.joints[0].channels[4], BVH_XROTATION);
    assert_int_equal(f.joints[0].channels[5], BVH_YROTATION);
    assert_string_equal(f.joints[1].name, "B");
    assert_int_equal(f.joints[1].parent, 0);
    assert_int_equal(f.joints[1].channel_index, 6);
    assert_true(f.joints[1].offset[1] == 10.0);
    assert_string_equal(f.joints[2].name, "B_End");
    assert_true(f.joints[2].end_site);
    assert_int_equal(f.joints[2].parent, 1);
    assert_int_equal(f.joints[2].n_channels, 0);
    assert_true(f.joints[2].offset[1] == 5.0);
    assert_true(bvh_frame(&f, 1)[6] == 90.0);
    assert_int_equal(bvh_find_joint(&f, "B_End"), 2);
    assert_int_equal(bvh_find_joint(&f, "C"), -1);
    bvh_free(&f);
    bvh_free(&f); /* idempotent */
}

static void test_crlf_vector(void **state)
{
    (void)state;
    struct bvh_file f;
    struct xg_error err = {0};
    assert_int_equal(bvh_load(VEC_DIR "walk_small.bvh", NULL, &f, &err), 0);
    assert_int_equal(f.n_joints, 10); /* 6 joints + 4 End Sites */
    assert_int_equal(f.n_channels, 21);
    assert_int_equal(f.n_frames, 60);
    assert_true(fabs(f.frame_time - 0.0333333) < 1e-12);
    assert_string_equal(f.joints[4].name, "LeftHand");
    assert_string_equal(f.joints[5].name, "LeftHand_End");
    bvh_free(&f);
}

static void test_variants(void **state)
{
    (void)state;
    struct bvh_file f;
    struct xg_error err = {0};
    /* keywords in any case, "Frames :" split, braces glued, two roots, no CHANNELS, 0 frames */
    const char *t = "hierarchy\nroot A{OFFSET 1 2 3 CHANNELS 1 Yrotation}\n"
                    "ROOT B { OFFSET 0 0 0 end site { offset 0 1 0 } }\n"
                    "motion\nFrames : 0\nFrame Time : 0.01\n";
    assert_int_equal(parse(t, NULL, &f, &err), 0);
    assert_int_equal(f.n_joints, 3);
    assert_int_equal(f.joints[1].parent, -1);
    assert_int_equal(f.joints[1].n_channels, 0);
    assert_int_equal(f.n_frames, 0);
    assert_null(f.motion);
    bvh_free(&f);
    /* two End Sites under one joint get distinct names */
    t = "HIERARCHY ROOT A { OFFSET 0 0 0 End Site { OFFSET 1 0 0 } End Site { OFFSET 0 1 0 } }\n"
        "MOTION Frames: 1 Frame Time: 1\n";
    assert_int_equal(parse(t, NULL, &f, &err), 0);
    assert_string_equal(f.joints[1].name, "A_End");
    assert_string_equal(f.joints[2].name, "A_End2");
    bvh_free(&f);
}

static void test_errors(void **state)
{
    (void)state;
    char buf[2048];
    expect_error("HIERARCH\n", NULL, -EPROTO, "line 1: expected 'HIERARCHY', got 'HIERARCH'");
    expect_error("", NULL, -EPROTO, "line 1: expected 'HIERARCHY', got end of file");
    expect_error("HIERARCHY\n\nMOTION\n", NULL, -EPROTO, "line 3: expected 'ROOT', got 'MOTION'");
    expect_error("HIERARCHY\nROOT\n{\n", NULL, -EPROTO,
                 "line 3: expected a joint name after ROOT, got '{'");
    expect_error("HIERARCHY\nROOT A\nOFFSET 0 0 0\n", NULL, -EPROTO,
                 "line 3: expected '{', got 'OFFSET'");
    expect_error("HIERARCHY\r\nROOT A\r\n{\r\n  OFFSET 0 1.0.0 0\r\n", NULL, -EPROTO,
                 "line 4: expected a number (OFFSET x y z), got '1.0.0'");
    expect_error("HIERARCHY\nROOT A\n{\n  OFFSET 0 nan 0\n", NULL, -EPROTO,
                 "line 4: expected a number (OFFSET x y z), got 'nan'");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 2 Xposition Wrotation\n", NULL,
                 -EPROTO,
                 "line 5: expected a channel name (Xposition Yposition Zposition "
                 "Xrotation Yrotation Zrotation), got 'Wrotation'");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 7 Xposition\n", NULL, -EPROTO,
                 "line 5: channel count '7' is not in 0..6");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 2 Xrotation xrotation\n", NULL,
                 -EPROTO, "line 5: channel 'xrotation' declared twice in joint 'A'");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n JIONT B\n", NULL, -EPROTO,
                 "line 5: expected OFFSET, CHANNELS, JOINT, End Site or '}', got 'JIONT'");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n End Sight\n", NULL, -EPROTO,
                 "line 5: expected 'Site' after 'End', got 'Sight'");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n End Site\n {\n CHANNELS 1 Xrotation\n",
                 NULL, -EPROTO, "line 7: CHANNELS in an End Site (of 'A')");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n End Site\n {\n JOINT C\n", NULL, -EPROTO,
                 "line 7: expected OFFSET or '}' in an End Site, got 'JOINT'");
    expect_error("HIERARCHY\nROOT A\n{\n CHANNELS 0\n}\n", NULL, -EPROTO,
                 "line 5: joint 'A' (line 2) has no OFFSET");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n OFFSET 0 0 0\n", NULL, -EPROTO,
                 "line 5: second OFFSET in joint 'A'");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n JOINT A\n", NULL, -EPROTO,
                 "line 5: duplicate joint name 'A'");
    expect_error(
        "HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n JOINT "
        "B234567890123456789012345678901234567890123456789012345678901234567890\n",
        NULL, -EPROTO,
        "line 5: joint name 'B234567890123456789012345678901234567890...' is too long (max 63)");
    expect_error("HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n JOINT B { OFFSET 0 0 0 }\n"
                 " CHANNELS 1 Xrotation\n}\n",
                 NULL, -EPROTO, "line 6: CHANNELS of joint 'A' after its child joints");
    /* MOTION section */
    snprintf(buf, sizeof buf, "%sMOTION\nFrame: 2\n", chain_hdr);
    expect_error(buf, NULL, -EPROTO, "line 17: expected 'Frames:', got 'Frame:'");
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 2.5\n", chain_hdr);
    expect_error(buf, NULL, -EPROTO, "line 17: frame count '2.5' is not a whole number >= 0");
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 2\nFrame Rate: 0.5\n", chain_hdr);
    expect_error(buf, NULL, -EPROTO, "line 18: expected 'Time:' after 'Frame', got 'Rate:'");
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 2\nFrame Time: 0\n", chain_hdr);
    expect_error(buf, NULL, -EPROTO, "line 18: frame time '0' is not in (0, 3600] seconds");
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 2\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 9\n1 2 x\n",
             chain_hdr);
    expect_error(buf, NULL, -EPROTO,
                 "line 20: expected a number for frame 2 of 2, channel 3 (A Zposition), got 'x'");
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 2\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 9\n1 2 3\n",
             chain_hdr);
    expect_error(buf, NULL, -EPROTO,
                 "line 21: expected a number for frame 2 of 2, channel 4 (A Zrotation), got end "
                 "of file");
    snprintf(buf, sizeof buf,
             "%sMOTION\nFrames: 1\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 inf\n",
             chain_hdr);
    expect_error(buf, NULL, -EPROTO,
                 "line 20: unexpected '1' after the last frame (Frames: 1, 9 channels per frame)");
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 1\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 inf\n",
             chain_hdr);
    expect_error(buf, NULL, -EPROTO,
                 "line 19: expected a number for frame 1 of 1, channel 9 (B Yrotation), got 'inf'");
}

/* Whole rows after the declared ones (Boxing_Toes.bvh: 3070 rows under 'Frames: 3069') are
 * ignored and counted, the declared rows read; a partial row or a word after them is refused. */
static void test_extra_frames(void **state)
{
    (void)state;
    char buf[2048];
    snprintf(buf, sizeof buf,
             "%sMOTION\nFrames: 1\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 9\n11 12 13 14 15 16 17 18 "
             "19\n21 22 23 24 25 26 27 28 29\n",
             chain_hdr);
    struct bvh_file f;
    struct xg_error err = {0};
    assert_int_equal(parse(buf, NULL, &f, &err), 0);
    assert_int_equal(f.n_frames, 1);
    assert_int_equal(f.extra_frames, 2);
    assert_int_equal(f.extra_line, 20);
    assert_true(bvh_frame(&f, 0)[8] == 9.0);
    bvh_free(&f);
    /* the count matches: nothing extra */
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 1\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 9\n",
             chain_hdr);
    assert_int_equal(parse(buf, NULL, &f, &err), 0);
    assert_int_equal(f.extra_frames, 0);
    bvh_free(&f);
    /* one whole extra row then a partial one, or a word: refused at the first extra token */
    snprintf(buf, sizeof buf,
             "%sMOTION\nFrames: 1\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 9\n1 2\n",
             chain_hdr);
    expect_error(buf, NULL, -EPROTO,
                 "line 20: unexpected '1' after the last frame (Frames: 1, 9 channels per frame)");
    snprintf(buf, sizeof buf,
             "%sMOTION\nFrames: 1\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 9\nEND\n",
             chain_hdr);
    expect_error(buf, NULL, -EPROTO,
                 "line 20: unexpected '1' after the last frame (Frames: 1, 9 channels per frame)");
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 1\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 9\nEND\n",
             chain_hdr);
    expect_error(
        buf, NULL, -EPROTO,
        "line 20: unexpected 'END' after the last frame (Frames: 1, 9 channels per frame)");
}

/* The real file that undercounts: Boxing_Toes.bvh (assimp's test models), 3070 rows under
 * 'Frames: 3069', 20 joints of 3 channels plus the root's 6 (66 values per row). */
static void test_boxing_toes(void **state)
{
    (void)state;
    struct bvh_file f;
    struct xg_error err = {0};
    int rc = bvh_load(XG_VECTORS_DIR "/assimp-bvh/Boxing_Toes.bvh", NULL, &f, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(f.n_frames, 3069);
    assert_int_equal(f.extra_frames, 1);
    assert_int_equal(f.extra_line, 130 + 3069);
    assert_int_equal(f.n_channels, 66);
    assert_true(fabs(f.frame_time - 0.01) < 1e-12);
    assert_true(fabs(bvh_frame(&f, 0)[0] - -6.101614) < 1e-12);
    bvh_free(&f);
}

static void test_limits(void **state)
{
    (void)state;
    char buf[2048];
    struct bvh_limits lim = {.max_joints = 2};
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 0\nFrame Time: 0.5\n", chain_hdr);
    expect_error(buf, &lim, -E2BIG, "line 10: too many joints (limit 2)");
    lim = (struct bvh_limits){.max_channels = 8};
    expect_error(buf, &lim, -E2BIG, "line 9: too many channels per frame (limit 8)");
    lim = (struct bvh_limits){.max_frames = 3};
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 5\nFrame Time: 0.5\n", chain_hdr);
    expect_error(buf, &lim, -E2BIG, "line 17: '5' frames exceed the limit of 3");
    lim = (struct bvh_limits){.max_values = 40};
    expect_error(buf, &lim, -E2BIG, "line 17: 5 frames x 9 channels exceed the limit of 40 values");
    /* the default frame limit; a huge header with no rows allocates nothing before failing */
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 1000001\nFrame Time: 0.5\n", chain_hdr);
    expect_error(buf, NULL, -E2BIG, "'1000001' frames exceed the limit of 1000000");
    snprintf(buf, sizeof buf, "%sMOTION\nFrames: 900000\nFrame Time: 0.5\n1 2\n", chain_hdr);
    expect_error(buf, NULL, -EPROTO, "line 20: expected a number for frame 1 of 900000, channel 3");
    /* deep nesting up to the joint limit is fine (no recursion) */
    size_t n = 0;
    static char deep[1 << 16];
    n += (size_t)snprintf(deep + n, sizeof deep - n, "HIERARCHY\nROOT J0 { OFFSET 0 0 0\n");
    for (int i = 1; i < BVH_DEFAULT_MAX_JOINTS; i++)
        n += (size_t)snprintf(deep + n, sizeof deep - n, "JOINT J%d { OFFSET 0 1 0\n", i);
    for (int i = 0; i < BVH_DEFAULT_MAX_JOINTS; i++)
        deep[n++] = '}';
    n += (size_t)snprintf(deep + n, sizeof deep - n, "\nMOTION Frames: 1 Frame Time: 1\n");
    struct bvh_file f;
    struct xg_error err = {0};
    assert_int_equal(bvh_parse(deep, n, NULL, &f, &err), 0);
    assert_int_equal(f.n_joints, BVH_DEFAULT_MAX_JOINTS);
    assert_int_equal(f.joints[BVH_DEFAULT_MAX_JOINTS - 1].parent, BVH_DEFAULT_MAX_JOINTS - 2);
    bvh_free(&f);
}

static void test_load_errors(void **state)
{
    (void)state;
    struct bvh_file f;
    struct xg_error err = {0};
    assert_int_equal(bvh_load("/nonexistent/x.bvh", NULL, &f, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/x.bvh: cannot open"));
    assert_int_equal(bvh_load(XG_SOURCE_DIR "/tests", NULL, &f, &err), -EINVAL);
    /* parse errors name the file */
    assert_int_equal(bvh_load(XG_SOURCE_DIR "/tests/unit/test_bvh_parser.c", NULL, &f, &err),
                     -EPROTO);
    assert_non_null(strstr(err.msg, "test_bvh_parser.c: line 1: expected 'HIERARCHY', got '/*'"));
}

/* Found by fuzz_bvh (UBSan: offset applied to NULL): a skeleton with no channels has frames
 * but no motion array; a frame row is then NULL and forward kinematics reads nothing. */
static void test_no_channels(void **state)
{
    (void)state;
    static const char text[] = "HIERARCHY\r\nROOT Hips\r\n{\r\n\tOFFSET 0 1 2\r\n\t}\r\n"
                               "MOTION\r\nFrames: 60\r\nFrame Time: .033\r\n";
    struct bvh_limits lim = {0};
    struct bvh_file f = {0};
    struct xg_error err = {0};
    assert_int_equal(bvh_parse(text, sizeof text - 1, &lim, &f, &err), 0);
    assert_int_equal(f.n_channels, 0);
    assert_int_equal(f.n_frames, 60);
    assert_null(bvh_frame(&f, 0));
    assert_null(bvh_frame(&f, f.n_frames - 1));
    bvh_free(&f);
}

static void test_cmu_walk(void **state)
{
    (void)state;
    FILE *fp = fopen(CMU_FILE, "rb");
    if (!fp) fail_msg("%s absent (tests/vectors/mocap)", CMU_FILE);
    fclose(fp);
    struct bvh_file f;
    struct xg_error err = {0};
    int rc = bvh_load(CMU_FILE, NULL, &f, &err);
    if (rc) fail_msg("%s", err.msg);
    /* as in tests/vectors/mocap/README.md */
    int joints = 0, ends = 0;
    for (int i = 0; i < f.n_joints; i++)
        f.joints[i].end_site ? ends++ : joints++;
    assert_int_equal(joints, 31);
    assert_int_equal(ends, 7);
    assert_int_equal(f.n_channels, 96);
    assert_int_equal(f.n_frames, 276);
    assert_true(f.frame_time == 0.0083333);
    static const char *const order[] = {
        "Hips",         "LHipJoint",      "LeftUpLeg",      "LeftLeg",         "LeftFoot",
        "LeftToeBase",  "RHipJoint",      "RightUpLeg",     "RightLeg",        "RightFoot",
        "RightToeBase", "LowerBack",      "Spine",          "Spine1",          "Neck",
        "Neck1",        "Head",           "LeftShoulder",   "LeftArm",         "LeftForeArm",
        "LeftHand",     "LeftFingerBase", "LeftHandIndex1", "LThumb",          "RightShoulder",
        "RightArm",     "RightForeArm",   "RightHand",      "RightFingerBase", "RightHandIndex1",
        "RThumb"};
    int k = 0;
    for (int i = 0; i < f.n_joints; i++)
        if (!f.joints[i].end_site) assert_string_equal(f.joints[i].name, order[k++]);
    const struct bvh_joint *hips = &f.joints[0];
    assert_int_equal(hips->n_channels, 6);
    assert_int_equal(hips->channels[0], BVH_XPOSITION);
    assert_int_equal(hips->channels[3], BVH_ZROTATION);
    assert_int_equal(hips->channels[4], BVH_YROTATION);
    assert_int_equal(hips->channels[5], BVH_XROTATION);
    /* the T-pose line and the last root Z */
    assert_true(bvh_frame(&f, 0)[0] == 7.1682);
    assert_true(bvh_frame(&f, 0)[2] == -32.399);
    assert_true(fabs(bvh_frame(&f, 275)[2] - 33.1194) < 1e-3);
    bvh_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_vector), cmocka_unit_test(test_crlf_vector),
        cmocka_unit_test(test_variants),     cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),       cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_cmu_walk),     cmocka_unit_test(test_no_channels),
        cmocka_unit_test(test_extra_frames), cmocka_unit_test(test_boxing_toes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
