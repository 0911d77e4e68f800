/* No egress codec can emit a non-finite float from the table (issue 22 item 6).
 *
 * Entities at the ingress bounds (|p| 1e6 m, |v| 1e4 m/s, |ω| 1e4 rad/s, |scale| 1e4, every sign
 * combination, and one whose velocities are estimated from samples 1 ns apart) are predicted at
 * the longest horizon the config allows (gateway.predict.max_horizon_ms 10000), converted to the
 * wire frame through every shipped preset and the most extreme frames the config allows
 * (scale 1e-12 and 1e12, offset ±1e9, a rotation), and written as each egress does:
 *   - vrpn-server: Pos_Quat and Velocity bodies (float64; vrpn_body_encode);
 *   - rgmp-server: the 13 float32 values of a pose (as rgmp_server.c writes them);
 *   - rtp: Object1 and Object2 objects (float32 positions and scale; rtp_gs_encode_object);
 *   - less: the pose schema's property values (FLOAT32; less_pose_to_props + less_put_value).
 * Each output is decoded again and every float in it must be finite. Absurd samples (1e39,
 * 1.7e308 with velocity 1e308, 1e300) are offered too: they must not get in at all. (The rtp
 * adapter's own saturation of binary16 velocities is checked on the real adapter in
 * test_rtp_adapter.c.) */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/less/less_codec.h"
#include "adapters/rtp/gamestate_codec.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "core/table/entity.h"
#include "core/util/wire.h"
#include "mappings/frame.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)
#define HORIZON (10000 * MS)

static int checked; /* floats checked */

static void finite_or_fail(double v, const char *what, const struct xg_frame *f)
{
    if (!isfinite(v)) fail_msg("%s = %g in frame %s (scale %g)", what, v, f->name, f->scale);
    checked++;
}

static void check_vrpn(const struct xg_pose *p, const struct xg_frame *f)
{
    uint8_t buf[128];
    struct xg_writer w;
    struct xg_error err = {0};
    struct vrpn_body b = {.kind = VRPN_BODY_POS_QUAT,
                          .u.pos_quat = {.sensor = 0, .pos = p->position, .quat = p->orientation}};
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(vrpn_body_encode(&w, &b, &err), 0);
    struct vrpn_body d;
    assert_int_equal(vrpn_body_decode(VRPN_BODY_POS_QUAT, buf, w.len, &d, &err), 0);
    const double pq[7] = {d.u.pos_quat.pos.x,  d.u.pos_quat.pos.y,  d.u.pos_quat.pos.z,
                          d.u.pos_quat.quat.x, d.u.pos_quat.quat.y, d.u.pos_quat.quat.z,
                          d.u.pos_quat.quat.w};
    for (int i = 0; i < 7; i++)
        finite_or_fail(pq[i], "vrpn Pos_Quat", f);
    /* Velocity as vrpn-server builds it: the increment over dt = 1 / |ω| capped at 1 s */
    double wn = xg_vec3_norm(p->angular_velocity);
    double dt = wn > 1.0 ? 1.0 / wn : 1.0;
    b = (struct vrpn_body){.kind = VRPN_BODY_VELOCITY,
                           .u.rate = {.sensor = 0,
                                      .vec = p->velocity,
                                      .quat = xg_quat_exp(xg_vec3_scale(p->angular_velocity, dt)),
                                      .quat_dt = dt}};
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(vrpn_body_encode(&w, &b, &err), 0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_VELOCITY, buf, w.len, &d, &err), 0);
    const double r[8] = {d.u.rate.vec.x,  d.u.rate.vec.y,  d.u.rate.vec.z,  d.u.rate.quat.x,
                         d.u.rate.quat.y, d.u.rate.quat.z, d.u.rate.quat.w, d.u.rate.quat_dt};
    for (int i = 0; i < 8; i++)
        finite_or_fail(r[i], "vrpn Velocity", f);
}

static void check_rgmp(const struct xg_pose *p, const struct xg_frame *f)
{
    /* rgmp_server.c: position, orientation, velocity, angular velocity as float32 */
    const double v[13] = {p->position.x,        p->position.y,         p->position.z,
                          p->orientation.x,     p->orientation.y,      p->orientation.z,
                          p->orientation.w,     p->velocity.x,         p->velocity.y,
                          p->velocity.z,        p->angular_velocity.x, p->angular_velocity.y,
                          p->angular_velocity.z};
    uint8_t buf[13 * 4];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    for (int i = 0; i < 13; i++)
        xg_write_lef32(&w, (float)v[i]);
    struct xg_reader r;
    xg_reader_init(&r, buf, w.len);
    for (int i = 0; i < 13; i++)
        finite_or_fail(xg_read_lef32(&r), "rgmp value", f);
}

static void check_rtp(const struct xg_pose *p, const struct xg_frame *f)
{
    struct rtp_gs_object objs[2];
    memset(objs, 0, sizeof objs);
    objs[0].type = RTP_GS_OBJECT1;
    struct rtp_gs_object1 *o1 = &objs[0].u.object1;
    o1->object_id = 1;
    o1->loc[0] = (float)p->position.x, o1->loc[1] = (float)p->position.y;
    o1->loc[2] = (float)p->position.z;
    rtp_gs_ijk_from_quat(p->orientation, o1->rot);
    o1->scale = (float)((p->scale.x + p->scale.y + p->scale.z) / 3.0);
    objs[1].type = RTP_GS_OBJECT2;
    struct rtp_gs_object2 *o2 = &objs[1].u.object2;
    o2->object_id = 2;
    o2->loc.p[0] = (float)p->position.x, o2->loc.p[1] = (float)p->position.y;
    o2->loc.p[2] = (float)p->position.z;
    rtp_gs_ijk_from_quat(p->orientation, o2->rot.s);
    rtp_gs_ijk_from_quat(p->orientation, o2->rot.e);
    o2->scale.p[0] = (float)p->scale.x, o2->scale.p[1] = (float)p->scale.y;
    o2->scale.p[2] = (float)p->scale.z;
    for (int k = 0; k < 2; k++) {
        uint8_t buf[256];
        struct xg_writer w;
        struct xg_error err = {0};
        xg_writer_init(&w, buf, sizeof buf);
        assert_int_equal(rtp_gs_encode_object(&w, &objs[k], &err), 0);
        struct rtp_gs_iter it;
        struct rtp_gs_object o;
        rtp_gs_iter_init(&it, buf, w.len);
        assert_int_equal(rtp_gs_iter_next(&it, &o, &err), RTP_GS_OBJECT);
        const float *vals;
        int n;
        float tmp[12];
        if (o.type == RTP_GS_OBJECT1) {
            memcpy(tmp, o.u.object1.loc, sizeof o.u.object1.loc);
            memcpy(tmp + 3, o.u.object1.rot, sizeof o.u.object1.rot);
            tmp[6] = o.u.object1.scale;
            vals = tmp, n = 7;
        } else {
            memcpy(tmp, o.u.object2.loc.p, 3 * sizeof(float));
            memcpy(tmp + 3, o.u.object2.rot.s, 3 * sizeof(float));
            memcpy(tmp + 6, o.u.object2.rot.e, 3 * sizeof(float));
            memcpy(tmp + 9, o.u.object2.scale.p, 3 * sizeof(float));
            vals = tmp, n = 12;
        }
        for (int i = 0; i < n; i++)
            finite_or_fail(vals[i], k ? "rtp Object2" : "rtp Object1", f);
    }
}

static void check_less(const struct xg_pose *p, const struct xg_frame *f)
{
    struct less_pose lp = {.position = p->position,
                           .velocity = p->velocity,
                           .orientation = p->orientation,
                           .angular_velocity = p->angular_velocity,
                           .present = LESS_POSE_BIT(LESS_POSE_POSITION) |
                                      LESS_POSE_BIT(LESS_POSE_VELOCITY) |
                                      LESS_POSE_BIT(LESS_POSE_ORIENTATION) |
                                      LESS_POSE_BIT(LESS_POSE_ANGULAR_VELOCITY)};
    struct less_pose_props props;
    less_pose_to_props(&lp, UINT32_MAX, &props);
    assert_int_equal(props.list.count, 4);
    for (size_t i = 0; i < props.list.count; i++) {
        const struct less_value *v = &props.list.items[i].value;
        uint8_t buf[128];
        struct xg_writer w;
        struct xg_error err = {0};
        xg_writer_init(&w, buf, sizeof buf);
        assert_int_equal(less_put_value(&w, v->type, v, &err), 0);
        struct xg_reader r;
        xg_reader_init(&r, buf, w.len);
        struct less_value out;
        static _Alignas(16) uint8_t abuf[4096];
        struct less_arena arena;
        less_arena_init(&arena, abuf, sizeof abuf);
        assert_int_equal(less_get_value(&r, v->type, &arena, &out, &err), 0);
        for (size_t k = 0; k < out.u.list.count; k++)
            finite_or_fail(out.u.list.items[k].u.f, "less pose value", f);
    }
}

struct run {
    const struct xg_frame *frames;
    int n_frames;
    int poses;
};

static int visit(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    (void)e;
    struct run *r = user;
    assert_int_equal(pose->quality, XG_QUALITY_PREDICTED);
    for (int i = 0; i < r->n_frames; i++) {
        struct xg_pose p = *pose;
        xg_frame_pose_out(&r->frames[i], &p);
        check_vrpn(&p, &r->frames[i]);
        check_rgmp(&p, &r->frames[i]);
        check_rtp(&p, &r->frames[i]);
        check_less(&p, &r->frames[i]);
        r->poses++;
    }
    return 0;
}

static void test_bounded_poses_encode_finite(void **state)
{
    (void)state;
    struct xg_table_params tp;
    xg_table_params_default(&tp);
    tp.max_horizon_ns = HORIZON;
    tp.stale_ns = 2 * HORIZON;
    struct xg_table *t = xg_table_new(&tp);
    assert_non_null(t);
    xg_table_set_adapter_name(t, 0, "src");
    for (int m = 0; m < 8; m++) {
        double sx = m & 1 ? -1 : 1, sy = m & 2 ? -1 : 1, sz = m & 4 ? -1 : 1;
        struct xg_sample s = {
            .capture_ns = T0,
            .receive_ns = T0,
            .flags =
                XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY | XG_SAMPLE_SCALE,
            .position = {sx * XG_POSITION_MAX, sy * XG_POSITION_MAX, sz * XG_POSITION_MAX},
            .orientation = {sx * 0.1, sy * 0.7, sz * 0.1, 0.7},
            .velocity = {sx * XG_VELOCITY_MAX, sy * XG_VELOCITY_MAX, sz * XG_VELOCITY_MAX},
            .angular_velocity = {sz * XG_ANGVEL_MAX, sx * XG_ANGVEL_MAX, sy * XG_ANGVEL_MAX},
            .scale = {sx * XG_SCALE_MAX, sy * XG_SCALE_MAX, XG_SCALE_MAX}};
        char name[16];
        snprintf(name, sizeof name, "edge%d", m);
        struct xg_entity_key key = {.source = name};
        assert_int_equal(xg_table_update_origin(t, 0, &key, &s, NULL), 0);
    }
    /* velocities estimated from two samples at opposite bounds 1 ns apart */
    struct xg_entity_key key = {.source = "jump"};
    struct xg_sample a = {.capture_ns = T0 - 1,
                          .receive_ns = T0 - 1,
                          .flags = XG_SAMPLE_POSE,
                          .position = {1e6, 1e6, 1e6},
                          .orientation = XG_QUAT_IDENTITY};
    struct xg_sample b = a;
    b.capture_ns = b.receive_ns = T0;
    b.position = (struct xg_vec3){-1e6, -1e6, -1e6};
    b.orientation = (struct xg_quat){0, 1, 0, 0};
    assert_int_equal(xg_table_update_origin(t, 0, &key, &a, NULL), 0);
    assert_int_equal(xg_table_update_origin(t, 0, &key, &b, NULL), 0);

    /* what cannot be a pose never gets in (the bug: 1e39 became Inf in float32 egress, and
     * 1.7e308 with velocity 1e308 overflowed prediction) */
    const struct xg_vec3 absurd_p[] = {{1e39, 0, 0}, {0, 1.7e308, 0}, {0, 0, -1e300}};
    const struct xg_vec3 absurd_v[] = {{0, 0, 0}, {0, 1e308, 0}, {1e300, 0, 0}};
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "absurd%d", i);
        struct xg_entity_key k = {.source = name};
        struct xg_sample s = {.capture_ns = T0,
                              .receive_ns = T0,
                              .flags = XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY,
                              .position = absurd_p[i],
                              .orientation = XG_QUAT_IDENTITY,
                              .velocity = absurd_v[i]};
        xg_table_update_origin(t, 0, &k, &s, NULL); /* rejected: checked by the visit below */
    }
    /* frames: every preset, and the extremes the config accepts (frame.c: scale 1e-12..1e12,
     * offset ±1e9 per axis) */
    struct xg_frame frames[32];
    int nf = 0;
    struct xg_error err = {0};
    char names[512];
    snprintf(names, sizeof names, "%s", xg_frame_preset_names());
    for (char *sv = NULL, *tok = strtok_r(names, ", ", &sv); tok && nf < 24;
         tok = strtok_r(NULL, ", ", &sv))
        assert_int_equal(xg_frame_preset(tok, &frames[nf++], &err), 0);
    assert_true(nf >= 6);
    const double scales[] = {1e-12, 1e12};
    for (int i = 0; i < 2; i++)
        for (int s = -1; s <= 1; s += 2) {
            struct xg_frame *f = &frames[nf++];
            assert_int_equal(xg_frame_preset(i ? "zup-rh" : "gamestate-lh", f, &err), 0);
            f->scale = scales[i];
            f->offset = (struct xg_vec3){s * 1e9, -s * 1e9, s * 1e9};
            f->rotation = xg_quat_normalize((struct xg_quat){0.3, -0.2, 0.1, 0.9});
        }
    struct run r = {frames, nf, 0};
    assert_int_equal(xg_table_foreach(t, -1, T0 + HORIZON, visit, &r), 9);
    assert_int_equal(r.poses, 9 * nf);
    assert_true(checked > 9 * nf * 50);
    xg_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounded_poses_encode_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
