/* Unit tests for the rtp adapter's egress on a real table and UDP loopback (no gateway): whole
 * objects packed into MTU-sized packets, RTP seq/timestamp rules, object IDs stable per entity,
 * Rot2 built as exp(ω·1 s) ⊗ s in the draft's frame and clamped below π rad/s (draft §3.5),
 * buttons/analogs as a GameControl1 beside the pose object. With `srtp:`: every packet is SRTP
 * that unprotects with the key, fits mtu although objects are packed to mtu minus the tag, seq
 * and objects as without SRTP; the BYE on stop (a compound SR + SDES + BYE) is SRTCP; status shows
 * the SRTP counters and stays within XG_STATUS_MAX_COUNTERS. */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp.h"
#include "adapters/rtp/srtp_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/wire.h"
#include "mappings/conf_yaml.h"
#include "mappings/frame.h"

extern const struct xg_adapter_ops xg_rtp_ops;

struct rig {
    struct event_base *base;
    struct xg_table *table;
    struct xg_conf *conf;
    struct xg_adapter a;
    int rx; /* the test's receiving socket */
};

static void rig_up_with(struct rig *g, int mtu, const char *extra)
{
    memset(g, 0, sizeof *g);
    g->base = event_base_new();
    g->table = xg_table_new(NULL);
    assert_non_null(g->base);
    assert_non_null(g->table);
    g->rx = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(g->rx, (struct sockaddr *)&sin, sizeof sin), 0);
    socklen_t sl = sizeof sin;
    getsockname(g->rx, (struct sockaddr *)&sin, &sl);
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "bind: \"127.0.0.1:0\"\ndestinations: [\"127.0.0.1:%d\"]\nmtu: %d\n"
             "refresh_ms: 0\nrtcp_interval_ms: 0\nssrc: 0x01020304\n%s",
             ntohs(sin.sin_port), mtu, extra);
    struct xg_error err = {0};
    g->conf = xg_conf_yaml_parse(yaml, strlen(yaml), "t.yaml", &err);
    assert_non_null(g->conf);
    g->a.ops = &xg_rtp_ops;
    snprintf(g->a.name, sizeof g->a.name, "out");
    g->a.index = 1;
    g->a.base = g->base;
    g->a.table = g->table;
    g->a.rate_hz = 60;
    /* as the gateway does: no frame: key → the type's default, the draft's frame */
    assert_string_equal(g->a.ops->default_frame, "gamestate-lh");
    assert_float_equal(g->a.ops->default_rate_hz, 90.0, 0.0);
    static struct xg_frame frame;
    assert_int_equal(xg_frame_preset(g->a.ops->default_frame, &frame, &err), 0);
    g->a.frame = &frame;
    xg_table_set_adapter_name(g->table, 0, "src");
    xg_table_set_adapter_name(g->table, 1, "out");
    assert_int_equal(xg_table_add_sink(g->table, 1, NULL, NULL, NULL), 0);
    assert_int_equal(g->a.ops->create(&g->a, g->conf, &err), 0);
    assert_ptr_equal(g->a.frame, &frame); /* create() leaves the gateway's fields alone */
    assert_float_equal(g->a.rate_hz, 60.0, 0.0);
    assert_int_equal(g->a.ops->start(&g->a), 0);
}

static void rig_up(struct rig *g, int mtu)
{
    rig_up_with(g, mtu, "");
}

static void rig_down(struct rig *g)
{
    g->a.ops->stop(&g->a);
    g->a.ops->destroy(&g->a);
    xg_conf_yaml_free(g->conf);
    xg_table_free(g->table);
    event_base_free(g->base);
    close(g->rx);
}

static void put(struct rig *g, const char *name, enum xg_kind kind, struct xg_vec3 p,
                struct xg_vec3 w)
{
    int64_t now = xg_clock_mono_ns();
    struct xg_sample s = {.capture_ns = now,
                          .receive_ns = now,
                          .flags = XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY,
                          .position = p,
                          .orientation = XG_QUAT_IDENTITY,
                          .velocity = {0.1, 0, 0},
                          .angular_velocity = w};
    struct xg_entity_key key = {.source = name, .kind = kind};
    assert_int_equal(xg_table_update_origin(g->table, 0, &key, &s, NULL), 0);
}

struct got {
    int packets, objects;
    uint16_t first_seq, last_seq;
    uint32_t ts;
    uint64_t ids[64];
    struct rtp_gs_object objs[64];
};

static void receive(struct rig *g, struct got *out, size_t mtu)
{
    static struct rtp_gs_iter it;
    memset(out, 0, sizeof *out);
    uint8_t buf[65536];
    ssize_t n;
    while ((n = recv(g->rx, buf, sizeof buf, 0)) > 0) {
        assert_true((size_t)n <= mtu);
        struct rtp_packet pk;
        struct xg_error err = {0};
        assert_int_equal(rtp_decode(buf, (size_t)n, &pk, &err), 0);
        assert_int_equal(pk.hdr.pt, 98);
        assert_int_equal(pk.hdr.ssrc, 0x01020304);
        assert_false(pk.hdr.marker);
        if (out->packets == 0) {
            out->first_seq = pk.hdr.seq;
            out->ts = pk.hdr.ts;
        } else {
            assert_int_equal(pk.hdr.seq, (uint16_t)(out->last_seq + 1));
            assert_int_equal(pk.hdr.ts, out->ts); /* one sampling instant per drain */
        }
        out->last_seq = pk.hdr.seq;
        out->packets++;
        rtp_gs_iter_init(&it, pk.payload, pk.payload_len);
        struct rtp_gs_object o;
        int rc;
        int in_packet = 0;
        while ((rc = rtp_gs_iter_next(&it, &o, &err)) == RTP_GS_OBJECT) {
            assert_true(out->objects < 64);
            out->objs[out->objects++] = o;
            in_packet++;
        }
        assert_int_equal(rc, RTP_GS_END); /* whole objects only, nothing malformed */
        assert_true(in_packet > 0);
    }
}

static uint64_t oid_of(const struct rtp_gs_object *o)
{
    switch (o->type) {
    case RTP_GS_HEAD1:
        return o->u.head1.object_id;
    case RTP_GS_OBJECT2:
        return o->u.object2.object_id;
    default:
        return 0;
    }
}

static void test_packing_and_ids(void **state)
{
    (void)state;
    struct rig g;
    rig_up(&g, 256);
    char name[32];
    for (int i = 0; i < 30; i++) {
        snprintf(name, sizeof name, "b%02d", i);
        put(&g, name, XG_KIND_RIGID_BODY, (struct xg_vec3){i, 1, 2}, XG_VEC3_ZERO);
    }
    put(&g, "hmd", XG_KIND_HEAD, (struct xg_vec3){0, 1.7, 0}, XG_VEC3_ZERO);
    g.a.ops->drain(&g.a);
    struct got got;
    receive(&g, &got, 256);
    /* Object2 is 55 bytes: (256 - 12) / 55 = 4 per packet, the head (35) fits beside them */
    assert_int_equal(got.objects, 31);
    assert_int_equal(got.packets, 8);
    uint64_t seen[64] = {0};
    for (int i = 0; i < got.objects; i++) {
        uint64_t id = oid_of(&got.objs[i]);
        assert_true(id >= 1 && id <= 31);
        assert_int_equal(seen[id]++, 0);
        if (got.objs[i].type == RTP_GS_OBJECT2) {
            /* left-handed frame: z flipped; Object2 ids follow first-send order (entity id) */
            const struct rtp_gs_object2 *b = &got.objs[i].u.object2;
            assert_float_equal(b->loc.p[0], (float)(id - 1), 0.01);
            assert_float_equal(b->loc.p[2], -2.0f, 1e-6);
            assert_float_equal(b->scale.p[1], 1.0f, 0);
            assert_true(b->active);
        }
    }
    /* again, with only two entities changed: same ids */
    put(&g, "b07", XG_KIND_RIGID_BODY, (struct xg_vec3){7, 1, 2}, XG_VEC3_ZERO);
    put(&g, "hmd", XG_KIND_HEAD, (struct xg_vec3){0, 1.7, 0}, XG_VEC3_ZERO);
    uint16_t prev_last = got.last_seq;
    g.a.ops->drain(&g.a);
    receive(&g, &got, 256);
    assert_int_equal(got.objects, 2);
    assert_int_equal(got.packets, 1);
    assert_int_equal(got.first_seq, (uint16_t)(prev_last + 1));
    for (int i = 0; i < 2; i++)
        assert_int_equal(oid_of(&got.objs[i]), got.objs[i].type == RTP_GS_HEAD1 ? 31 : 8);
    rig_down(&g);
}

static void assert_finite3(const float *v, const char *what)
{
    for (int i = 0; i < 3; i++)
        if (!isfinite(v[i])) fail_msg("%s[%d] = %g", what, i, (double)v[i]);
}

/* Poses at the table's bounds (|p| 1e6 m, |v| 1e4 m/s, |ω| 1e4 rad/s, |scale| 1e4), predicted
 * and written in a frame of scale 0.001 (millimetres): the Float32 positions are finite, and the
 * Float16 velocities (1e7 mm/s) are saturated to 65504 instead of overflowing to Inf (issue 22
 * item 6). Every float of every object is finite. */
static void test_bounds_stay_finite(void **state)
{
    (void)state;
    struct rig g;
    rig_up_with(&g, 1200, "frame: {preset: gamestate-lh, scale: 0.001}\n");
    static struct xg_frame mm;
    struct xg_error err = {0};
    assert_int_equal(xg_frame_preset("gamestate-lh", &mm, &err), 0);
    mm.scale = 0.001;
    g.a.frame = &mm;
    const enum xg_kind kinds[] = {XG_KIND_RIGID_BODY, XG_KIND_HEAD, XG_KIND_LEFT_HAND,
                                  XG_KIND_CONTROLLER, XG_KIND_OBJECT};
    const int64_t t_first = xg_clock_mono_ns();
    for (int k = 0; k < 5; k++) {
        int64_t now = xg_clock_mono_ns();
        double sg = k % 2 ? -1 : 1;
        struct xg_sample s = {.capture_ns = now,
                              .receive_ns = now,
                              .flags = XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY |
                                       XG_SAMPLE_ANGULAR_VELOCITY | XG_SAMPLE_SCALE,
                              .position = {sg * 1e6, -sg * 1e6, 1e6},
                              .orientation = {0.5, -0.5, 0.5, 0.5},
                              .velocity = {sg * 1e4, 1e4, -1e4},
                              .angular_velocity = {1e4, -sg * 1e4, 1e4},
                              .scale = {1e4, sg * 1e4, 1e4}};
        char name[16];
        snprintf(name, sizeof name, "edge%d", k);
        struct xg_entity_key key = {.source = name, .kind = kinds[k]};
        assert_int_equal(xg_table_update_origin(g.table, 0, &key, &s, NULL), 0);
    }
    g.a.ops->drain(&g.a);
    /* the drain predicts to its own time: at 1e4 m/s (1e7 mm/s) each microsecond between the
     * capture and the drain moves the position by 10 mm, so the bound grows with that time */
    const double moved_mm = 1e7 * (double)(xg_clock_mono_ns() - t_first) / 1e9;
    struct got got;
    receive(&g, &got, 1200);
    assert_int_equal(got.objects, 5);
    int saturated = 0;
    for (int i = 0; i < got.objects; i++) {
        const struct rtp_gs_object *o = &got.objs[i];
        const struct rtp_gs_loc2 *loc = NULL;
        const struct rtp_gs_rot2 *rot = NULL;
        switch (o->type) {
        case RTP_GS_HEAD1:
            loc = &o->u.head1.loc, rot = &o->u.head1.rot;
            break;
        case RTP_GS_HAND1:
            loc = &o->u.hand1.loc, rot = &o->u.hand1.rot;
            break;
        case RTP_GS_SIXDOF1:
            loc = &o->u.sixdof1.loc, rot = &o->u.sixdof1.rot;
            break;
        case RTP_GS_OBJECT2:
            loc = &o->u.object2.loc, rot = &o->u.object2.rot;
            assert_finite3(o->u.object2.scale.p, "scale.p");
            assert_finite3(o->u.object2.scale.v, "scale.v");
            break;
        default:
            fail_msg("unexpected object type %d", (int)o->type);
        }
        assert_finite3(loc->p, "loc.p");
        assert_finite3(loc->v, "loc.v");
        assert_finite3(rot->s, "rot.s");
        assert_finite3(rot->e, "rot.e");
        assert_float_equal(fabsf(loc->p[2]), 1e9f, 1e3 + moved_mm); /* 1e6 m in mm */
        for (int c = 0; c < 3; c++)
            saturated += fabsf(loc->v[c]) == 65504.0f;
    }
    assert_int_equal(saturated, 15);
    rig_down(&g);
}

static double angle_of_rot2(const struct rtp_gs_rot2 *r, struct xg_vec3 *w)
{
    struct xg_quat s = xg_quat_normalize(rtp_gs_quat_from_ijk(r->s));
    struct xg_quat e = xg_quat_normalize(rtp_gs_quat_from_ijk(r->e));
    *w = xg_quat_angular_velocity(s, e, 1.0);
    return xg_vec3_norm(*w);
}

static void test_rot2_rate_clamp(void **state)
{
    (void)state;
    struct rig g;
    rig_up(&g, 1200);
    put(&g, "slow", XG_KIND_RIGID_BODY, XG_VEC3_ZERO, (struct xg_vec3){0, 0, 2.0});
    put(&g, "fast", XG_KIND_RIGID_BODY, XG_VEC3_ZERO, (struct xg_vec3){0, 5.0, 0});
    put(&g, "tilt", XG_KIND_RIGID_BODY, XG_VEC3_ZERO, (struct xg_vec3){1.0, 0, 0});
    g.a.ops->drain(&g.a);
    struct got got;
    receive(&g, &got, 1200);
    assert_int_equal(got.objects, 3);
    for (int i = 0; i < 3; i++) {
        struct xg_vec3 w;
        double rate = angle_of_rot2(&got.objs[i].u.object2.rot, &w);
        switch (oid_of(&got.objs[i])) {
        case 1: /* 2 rad/s about +z: the draft frame (z flipped) keeps ω.z (a pseudo-vector) */
            assert_float_equal(w.z, 2.0, 2e-3);
            assert_float_equal(rate, 2.0, 2e-3);
            break;
        case 2: /* 5 rad/s about y cannot be represented: clamped just below π, axis kept */
            assert_true(rate < M_PI && rate > 0.99 * M_PI);
            assert_true(fabs(w.x) < 1e-2 && fabs(w.z) < 1e-2);
            assert_true(w.y < 0); /* ω → (−x, −y, z) in the left-handed frame */
            break;
        case 3:
            assert_float_equal(w.x, -1.0, 2e-3);
            break;
        default:
            fail();
        }
    }
    rig_down(&g);
}

static void test_game_control_egress(void **state)
{
    (void)state;
    struct rig g;
    rig_up(&g, 1200);
    put(&g, "wand", XG_KIND_CONTROLLER, (struct xg_vec3){0, 1, 0}, XG_VEC3_ZERO);
    const struct xg_entity *e = xg_table_find(g.table, "src/wand");
    assert_non_null(e);
    assert_int_equal(xg_table_set_button(g.table, xg_entity_id(e), 2, true), 0); /* A */
    assert_int_equal(xg_table_set_button(g.table, xg_entity_id(e), 3, true), 0); /* B */
    assert_int_equal(xg_table_set_analog(g.table, xg_entity_id(e), 0, 0.5), 0);
    assert_int_equal(xg_table_set_analog(g.table, xg_entity_id(e), 1, -7.0), 0); /* clamped to -1 */
    g.a.ops->drain(&g.a);
    struct got got;
    receive(&g, &got, 1200);
    assert_int_equal(got.objects, 2);
    assert_int_equal(got.objs[0].type, RTP_GS_SIXDOF1);
    assert_int_equal(got.objs[1].type, RTP_GS_GAME_CONTROL1);
    const struct rtp_gs_game_control1 *gc = &got.objs[1].u.game_control1;
    assert_int_equal(gc->object_id, got.objs[0].u.sixdof1.object_id);
    assert_int_equal(gc->buttons, RTP_GS_BTN_A | RTP_GS_BTN_B);
    assert_int_equal(gc->buttons_changed, gc->time);
    assert_float_equal(gc->left_x, 0.5f, 0);
    assert_float_equal(gc->left_y, -1.0f, 0);
    assert_false(got.objs[0].u.sixdof1.left);
    rig_down(&g);
}

/* ---- SRTP ---- */

/* Write `key` as "<suite> inline:<base64>" into a new temporary file; its path into path. */
static void write_key(char *path, size_t cap, const struct xg_srtp_key *key)
{
    snprintf(path, cap, "/tmp/xg-test-rtp-srtp-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char line[96];
    int n = xg_srtp_key_format(key, line, sizeof line);
    assert_true(n > 0);
    char text[160];
    int tn = snprintf(text, sizeof text, "%s %s\n", xg_srtp_suite_name(key->suite), line);
    assert_int_equal(write(fd, text, (size_t)tn), tn);
    close(fd);
}

/* Receive SRTP datagrams, unprotect them with `rx` into plain RTP, and run receive()'s checks on
 * the plain packets (through a loopback socket pair). */
static void receive_srtp(struct rig *g, struct got *out, size_t mtu, size_t pack,
                         struct xg_srtp *rx)
{
    int fwd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    int plain = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(plain, (struct sockaddr *)&sin, sizeof sin), 0);
    socklen_t sl = sizeof sin;
    getsockname(plain, (struct sockaddr *)&sin, &sl);
    uint8_t buf[65536];
    ssize_t n;
    int count = 0;
    while ((n = recv(g->rx, buf, sizeof buf, 0)) > 0) {
        assert_true((size_t)n <= mtu); /* the protected packet fits mtu */
        assert_false(rtp_is_rtcp(buf, (size_t)n));
        size_t len = (size_t)n;
        struct xg_error err = {0};
        if (xg_srtp_unprotect(rx, buf, &len, &err)) fail_msg("unprotect: %s", err.msg);
        assert_int_equal(len, (size_t)n - 10);
        assert_true(len <= pack); /* packed to mtu minus the tag */
        assert_int_equal(sendto(fwd, buf, len, 0, (struct sockaddr *)&sin, sizeof sin),
                         (ssize_t)len);
        count++;
    }
    assert_true(count > 0);
    int keep = g->rx;
    g->rx = plain;
    receive(g, out, pack);
    g->rx = keep;
    close(fwd);
    close(plain);
}

static void test_srtp_egress(void **state)
{
    (void)state;
    struct xg_srtp_key key;
    assert_int_equal(xg_srtp_key_generate(XG_SRTP_AES_CM_128_HMAC_SHA1_80, &key, NULL), 0);
    char path[64], extra[256];
    write_key(path, sizeof path, &key);
    snprintf(extra, sizeof extra, "allow_fixed_ssrc_with_srtp: true\nsrtp: {key_file: %s}\n", path);
    struct rig g;
    /* mtu 290: plain, 5 Object2 (12 + 5 x 55 = 287) would fit; packed to 280 only 4 do */
    rig_up_with(&g, 290, extra);
    struct xg_srtp *rx = NULL;
    assert_int_equal(xg_srtp_session_new(&rx, XG_SRTP_RECV, &key, NULL), 0);
    char name[32];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "b%02d", i);
        put(&g, name, XG_KIND_RIGID_BODY, (struct xg_vec3){i, 1, 2}, XG_VEC3_ZERO);
    }
    g.a.ops->drain(&g.a);
    struct got got;
    receive_srtp(&g, &got, 290, 280, rx);
    assert_int_equal(got.objects, 10);
    assert_int_equal(got.packets, 3); /* 4 + 4 + 2 */
    assert_int_equal(xg_srtp_session_stats(rx)->rtp_ok, 3);
    /* status: the SRTP counters, within the core limit */
    struct xg_status st = {0};
    g.a.ops->status(&g.a, &st);
    assert_int_equal(st.n_counters, 38); /* within XG_STATUS_MAX_COUNTERS: nothing is cut */
    assert_true(st.n_counters <= XG_STATUS_MAX_COUNTERS);
    const char *want[] = {"udp_sends",           "port",       "ssrc",           "packets_out",
                          "objects_out",         "packets_in", "drop_srtp_auth", "drop_srtp_replay",
                          "drop_srtp_malformed", "srtp_errors"};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        bool found = false;
        for (int i = 0; i < st.n_counters; i++)
            if (!strcmp(st.counters[i].name, want[w])) found = true;
        if (!found) fail_msg("status lacks %s", want[w]);
    }
    for (int i = 0; i < st.n_counters; i++)
        if (!strcmp(st.counters[i].name, "packets_out")) assert_true(st.counters[i].value == 3);
    assert_int_equal(g.a.errors, 0);
    /* stop: the BYE is SRTCP under the same key */
    g.a.ops->stop(&g.a);
    uint8_t buf[512];
    ssize_t n = recv(g.rx, buf, sizeof buf, 0);
    assert_true(n > 0);
    assert_true(rtp_is_rtcp(buf, (size_t)n));
    size_t len = (size_t)n;
    struct xg_error err = {0};
    if (xg_srtp_unprotect_rtcp(rx, buf, &len, &err)) fail_msg("BYE: %s", err.msg);
    /* a compound (RFC 3550 §6.1): SR first (we sent RTP), SDES CNAME, then the BYE */
    assert_int_equal(buf[1], RTCP_SR);
    assert_int_equal(xg_load_be32(buf + 4), 0x01020304);
    assert_int_equal(buf[28 + 1], RTCP_SDES);
    assert_true(len >= 28 + 8 + 8);
    assert_int_equal(buf[len - 8], 0x81);
    assert_int_equal(buf[len - 7], RTCP_BYE);
    assert_int_equal(xg_load_be32(buf + len - 4), 0x01020304);
    xg_srtp_session_free(rx);
    rig_down(&g);
    unlink(path);
}

static void test_plain_status_unchanged(void **state)
{
    (void)state;
    struct rig g;
    rig_up(&g, 1200);
    struct xg_status st = {0};
    g.a.ops->status(&g.a, &st);
    assert_int_equal(st.n_counters, 34);
    for (int i = 0; i < st.n_counters; i++)
        assert_null(strstr(st.counters[i].name, "srtp"));
    assert_string_equal(st.counters[32].name, "rx_wakes");
    assert_string_equal(st.counters[33].name, "rx_yields");
    assert_string_equal(st.counters[13].name, "ingress_objects");
    assert_string_equal(st.counters[14].name, "egress_ids");
    assert_string_equal(st.counters[16].name, "drop_truncated");
    assert_string_equal(st.counters[15].name, "gse_tags_in");
    assert_string_equal(st.counters[26].name, "dest_unreachable");
    assert_string_equal(st.counters[27].name, "controls_not_carried");
    assert_string_equal(st.counters[28].name, "udp_sends");
    rig_down(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packing_and_ids),        cmocka_unit_test(test_rot2_rate_clamp),
        cmocka_unit_test(test_game_control_egress),    cmocka_unit_test(test_srtp_egress),
        cmocka_unit_test(test_plain_status_unchanged), cmocka_unit_test(test_bounds_stay_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
