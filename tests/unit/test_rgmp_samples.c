/* RGMP v2 codec, from frames to samples: session state (timestamps D2, devices: rules 15, 18, 21),
 * the §3 transform equation, pose-sample rejection (D5) and the data type sizes. §6 golden frames
 * and round trips are in test_rgmp_codec.c, the §7 rejection rules in test_rgmp_rules.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/rgmp/rgmp_codec.h"
#include "tests/unit/test_rgmp_vectors.h"

/* ---- session state: D2, D3, rules 15, 18, 21 ---- */

static int feed(struct rgmp_session *s, const uint8_t *frame, size_t len, struct rgmp_event *ev,
                struct xg_error *err)
{
    struct rgmp_header h;
    size_t need;
    int rc = rgmp_frame_split(frame, len, &s->limits, &h, &need, err);
    if (rc <= 0) return rc < 0 ? rc : -999;
    assert_int_equal(need, len);
    return rgmp_session_handle(s, &h, frame + 8, ev, err);
}

static size_t data_frame(uint8_t *out, uint32_t dev, uint32_t group, uint64_t ts, size_t nvals)
{
    struct xg_writer w;
    xg_writer_init(&w, out, 512);
    rgmp_encode_header(&w, 2, (uint32_t)(16 + nvals));
    xg_write_le32(&w, dev);
    xg_write_le32(&w, group);
    xg_write_le64(&w, ts);
    xg_write_zeros(&w, nvals);
    assert_int_equal(w.err, 0);
    return w.len;
}

static void test_session_timestamps_d2(void **state)
{
    (void)state;
    size_t flen;
    uint8_t *dframe = read_vec("def_6_1.frame", &flen);
    struct rgmp_session s;
    struct rgmp_event ev;
    struct xg_error err = {0};
    rgmp_session_init(&s, NULL, false);
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    assert_false(ev.replaced);
    uint8_t f[512];
    const uint32_t dev = 305419896;
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 1000, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    /* the same timestamp in another group is fine: the scope is (device, group) */
    assert_int_equal(feed(&s, f, data_frame(f, dev, 1, 1000, 16), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 1, 999, 16), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DROPPED);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 1000, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DROPPED);
    assert_non_null(strstr(err.msg, "device 305419896, group 0 \"pose\""));
    assert_non_null(strstr(err.msg, "timestamp_us = 1000"));
    assert_non_null(strstr(err.msg, "previous 1000"));
    assert_int_equal(s.frames_out_of_order, 2);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 1001, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);

    /* D3: a definition for an active device replaces it (new session, timestamps reset) */
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DEFINITION);
    assert_true(ev.replaced);
    assert_int_equal(s.n_devices, 1);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 5, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    rgmp_session_free(&s);

    /* strict: fatal */
    rgmp_session_init(&s, NULL, true);
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 10, 112), &ev, &err), 0);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 10, 112), &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "rule 18"));
    assert_non_null(strstr(err.msg, "strict"));
    rgmp_session_free(&s);
    free(dframe);
}

static void test_session_devices_rules_15_21(void **state)
{
    (void)state;
    size_t flen;
    uint8_t *dframe = read_vec("def_6_1.frame", &flen);
    struct rgmp_session s;
    struct rgmp_event ev;
    struct xg_error err = {0};
    uint8_t f[512];
    rgmp_session_init(&s, NULL, false);
    /* rule 15: data for an unknown device */
    assert_int_equal(feed(&s, f, data_frame(f, 77, 0, 1, 112), &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 77"));
    assert_non_null(strstr(err.msg, "device_id = 77"));
    assert_non_null(strstr(err.msg, "rule 15"));
    /* rule 21: disconnect for an unknown device */
    assert_int_equal(feed(&s, DISC_6_4, sizeof DISC_6_4, &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 305419896"));
    assert_non_null(strstr(err.msg, "device_id = 305419896"));
    assert_non_null(strstr(err.msg, "rule 21"));
    /* two devices; disconnect one; the other keeps working */
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    const char *other = "{\"device_id\":7,\"groups\":[{\"name\":\"e\",\"expected_rate_hz\":0,"
                        "\"streams\":[]}]}";
    uint8_t of[256];
    struct xg_writer w;
    xg_writer_init(&w, of, sizeof of);
    rgmp_encode_header(&w, 1, (uint32_t)strlen(other));
    xg_write_bytes(&w, other, strlen(other));
    assert_int_equal(feed(&s, of, w.len, &ev, &err), 0);
    assert_int_equal(s.n_devices, 2);
    /* an empty group: a 16-byte data frame is legal (D3) */
    assert_int_equal(feed(&s, f, data_frame(f, 7, 0, 1, 0), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    assert_int_equal(ev.frame.values_len, 0);
    assert_int_equal(feed(&s, DISC_6_4, sizeof DISC_6_4, &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DISCONNECT);
    assert_int_equal(ev.device_id, 305419896);
    assert_null(rgmp_session_find(&s, 305419896));
    assert_non_null(rgmp_session_find(&s, 7));
    assert_int_equal(feed(&s, f, data_frame(f, 305419896, 0, 2, 112), &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "rule 15"));
    assert_int_equal(feed(&s, f, data_frame(f, 7, 0, 2, 0), &ev, &err), 0);
    /* a later definition with the same id is a new session */
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    assert_false(ev.replaced);
    assert_int_equal(feed(&s, f, data_frame(f, 305419896, 0, 1, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    rgmp_session_free(&s);
    free(dframe);
}

/* ---- §3 transform equation ---- */

static struct xg_quat rand_quat(void)
{
    struct xg_quat q = {
        (double)(next_rand() % 2001) / 1000.0 - 1.0, (double)(next_rand() % 2001) / 1000.0 - 1.0,
        (double)(next_rand() % 2001) / 1000.0 - 1.0, (double)(next_rand() % 2001) / 1000.0 - 1.0};
    return xg_quat_normalize(q);
}

static void test_transform_equation(void **state)
{
    (void)state;
    /* 90° about +z: x axis of the target maps to +y of the reference */
    const double h = sqrt(0.5);
    struct rgmp_pose hips = {{1, 2, 0.95}, {0, 0, h, h}};
    double R[3][3];
    rgmp_rotation_matrix(hips.orientation, R);
    const double Rz[3][3] = {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_float_equal(R[i][j], Rz[i][j], 1e-12);
    struct xg_vec3 p = rgmp_transform_point(&hips, (struct xg_vec3){1, 0, 0});
    assert_float_equal(p.x, 1, 1e-12);
    assert_float_equal(p.y, 3, 1e-12);
    assert_float_equal(p.z, 0.95, 1e-12);

    /* chaining: left_hand <- hips <- LTP_ENU, with hips turned 90° about z */
    struct rgmp_pose lh = {{-0.75, 0, 0.45}, XG_QUAT_IDENTITY};
    struct rgmp_pose root = rgmp_transform_compose(&hips, &lh);
    assert_float_equal(root.position.x, 1.0, 1e-6);
    assert_float_equal(root.position.y, 1.25, 1e-6);
    assert_float_equal(root.position.z, 1.40, 1e-6);
    assert_float_equal(root.orientation.z, h, 1e-12);
    assert_float_equal(root.orientation.w, h, 1e-12);

    /* random checks: R(q) agrees with q ⊗ v ⊗ q*; compose agrees with applying twice;
     * inverse undoes */
    for (int k = 0; k < 200; k++) {
        struct rgmp_pose a = {{(double)(next_rand() % 200) / 50 - 2, 0.3, -1.1}, rand_quat()};
        struct rgmp_pose b = {{0.2, (double)(next_rand() % 200) / 50 - 2, 0.7}, rand_quat()};
        struct xg_vec3 v = {0.3, -0.4, (double)(next_rand() % 100) / 25 - 2};
        struct xg_vec3 r1 = rgmp_transform_point(&a, v);
        struct xg_vec3 r2 = xg_vec3_add(xg_quat_rotate(a.orientation, v), a.position);
        assert_float_equal(r1.x, r2.x, 1e-12);
        assert_float_equal(r1.y, r2.y, 1e-12);
        assert_float_equal(r1.z, r2.z, 1e-12);
        struct rgmp_pose ab = rgmp_transform_compose(&a, &b);
        struct xg_vec3 c1 = rgmp_transform_point(&ab, v);
        struct xg_vec3 bv = rgmp_transform_point(&b, v);
        struct xg_vec3 c2 = rgmp_transform_point(&a, bv);
        assert_float_equal(c1.x, c2.x, 1e-9);
        assert_float_equal(c1.y, c2.y, 1e-9);
        assert_float_equal(c1.z, c2.z, 1e-9);
        struct rgmp_pose ai = rgmp_transform_inverse(&a);
        struct xg_vec3 back = rgmp_transform_point(&ai, r1);
        assert_float_equal(back.x, v.x, 1e-9);
        assert_float_equal(back.y, v.y, 1e-9);
        assert_float_equal(back.z, v.z, 1e-9);
        struct rgmp_pose id = rgmp_transform_compose(&a, &ai);
        assert_float_equal(xg_vec3_norm(id.position), 0, 1e-9);
        assert_float_equal(fabs(id.orientation.w), 1, 1e-9);
    }
}

/* D5: NaN/Inf and off-norm quaternions reject the sample (-EDOM); near-unit ones renormalise. */
static void test_pose_sample_rejection_d5(void **state)
{
    (void)state;
    struct rgmp_stream s = {0};
    assert_int_equal(rgmp_data_type_parse("DOUBLE[7]", &s.type, NULL), 0);
    s.measure = RGMP_TRANSFORM;
    s.measure_name = "TRANSFORM";
    s.target_frame = "hips";
    uint8_t v[56];
    struct xg_writer w;
    struct rgmp_pose p;
    struct xg_error err = {0};
    const double good[7] = {1, 2, 3, 0, 0, 0.6, 0.8004};
    xg_writer_init(&w, v, sizeof v);
    for (int i = 0; i < 7; i++)
        xg_write_lef64(&w, good[i]);
    assert_int_equal(rgmp_pose_from_values(&s, v, &p, &err), 0);
    double n = sqrt(p.orientation.z * p.orientation.z + p.orientation.w * p.orientation.w);
    assert_float_equal(n, 1.0, 1e-12);
    assert_float_equal(p.position.z, 3, 0);

    const double off[7] = {1, 2, 3, 0, 0, 0.6, 0.81}; /* norm 1.008 */
    xg_writer_init(&w, v, sizeof v);
    for (int i = 0; i < 7; i++)
        xg_write_lef64(&w, off[i]);
    assert_int_equal(rgmp_pose_from_values(&s, v, &p, &err), -EDOM);
    assert_non_null(strstr(err.msg, "quaternion norm"));
    assert_non_null(strstr(err.msg, "\"hips\""));

    xg_writer_init(&w, v, sizeof v);
    for (int i = 0; i < 7; i++)
        xg_write_lef64(&w, i == 1 ? NAN : good[i]);
    assert_int_equal(rgmp_pose_from_values(&s, v, &p, &err), -EDOM);
    assert_non_null(strstr(err.msg, "value[1] = nan"));

    /* velocity vector with Inf */
    struct rgmp_stream vs = {0};
    assert_int_equal(rgmp_data_type_parse("FLOAT[3]", &vs.type, NULL), 0);
    vs.measure = RGMP_ANGULAR_VELOCITY;
    vs.measure_name = "ANGULAR_VELOCITY";
    vs.target_frame = "hand";
    uint8_t fv[12];
    xg_writer_init(&w, fv, sizeof fv);
    xg_write_lef32(&w, 1.5f);
    xg_write_lef32(&w, -2.0f);
    xg_write_lef32(&w, 0.25f);
    struct xg_vec3 out;
    assert_int_equal(rgmp_vec3_from_values(&vs, fv, &out, &err), 0);
    assert_true(out.x == 1.5 && out.y == -2.0 && out.z == 0.25);
    xg_writer_init(&w, fv, sizeof fv);
    xg_write_lef32(&w, INFINITY);
    assert_int_equal(rgmp_vec3_from_values(&vs, fv, &out, &err), -EDOM);
    /* not a pose stream */
    assert_int_equal(rgmp_pose_from_values(&vs, fv, &p, &err), -EINVAL);

    /* POSITION and ORIENTATION shapes */
    struct rgmp_stream ps = {0};
    assert_int_equal(rgmp_data_type_parse("FLOAT[4]", &ps.type, NULL), 0);
    ps.measure = RGMP_ORIENTATION;
    ps.measure_name = "ORIENTATION";
    ps.target_frame = "x";
    uint8_t qv[16];
    xg_writer_init(&w, qv, sizeof qv);
    xg_write_lef32(&w, 0);
    xg_write_lef32(&w, 1);
    xg_write_lef32(&w, 0);
    xg_write_lef32(&w, 0);
    assert_int_equal(rgmp_pose_from_values(&ps, qv, &p, &err), 0);
    assert_true(p.orientation.y == 1 && p.position.x == 0 && p.position.z == 0);
}

static void test_data_type_sizes(void **state)
{
    (void)state;
    struct rgmp_data_type t;
    char buf[32];
    struct {
        const char *text, *canon;
        uint32_t count, size;
    } ok[] = {
        {"INT32", "INT32", 1, 4},
        {"UINT64", "UINT64", 1, 8},
        {"FLOAT[7]", "FLOAT[7]", 7, 28},
        {"DOUBLE[3,3]", "DOUBLE[3,3]", 9, 72},
        {"DOUBLE[3, 3]", "DOUBLE[3,3]", 9, 72},
        {"INT64[2,   5]", "INT64[2,5]", 10, 80},
        {"UINT32[1073741819]", "UINT32[1073741819]", 1073741819, 4294967276u}, /* the largest */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct xg_error err = {0};
        if (rgmp_data_type_parse(ok[i].text, &t, &err) != 0)
            fail_msg("%s: %s", ok[i].text, err.msg);
        assert_int_equal(t.count, ok[i].count);
        assert_int_equal(t.size, ok[i].size);
        rgmp_data_type_format(&t, buf, sizeof buf);
        assert_string_equal(buf, ok[i].canon);
    }
    /* 1073741820 * 4 = 0xFFFFFFF0 > 0xFFFFFFFF - 16 */
    assert_int_equal(rgmp_data_type_parse("UINT32[1073741820]", &t, NULL), -EPROTO);
    assert_int_equal(rgmp_measure_from_name("MAGNETIC_FIELD"), RGMP_MAGNETIC_FIELD);
    assert_string_equal(rgmp_measure_unit(RGMP_MAGNETIC_FIELD), "G");
    assert_string_equal(rgmp_measure_unit(RGMP_ANGULAR_VELOCITY), "rad/s");
    assert_string_equal(rgmp_measure_unit(RGMP_PROPER_ACCELERATION), "m/s^2");
    assert_int_equal(rgmp_measure_from_name("transform"), RGMP_MEASURE_UNKNOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_timestamps_d2),
        cmocka_unit_test(test_session_devices_rules_15_21),
        cmocka_unit_test(test_transform_equation),
        cmocka_unit_test(test_pose_sample_rejection_d5),
        cmocka_unit_test(test_data_type_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
