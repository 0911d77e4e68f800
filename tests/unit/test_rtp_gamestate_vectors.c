/* Unit tests for adapters/rtp/gamestate_codec: every object of
 * draft-jennings-dispatch-game-state-over-rtp-01 against the golden vectors of the wire rules (§7),
 * byte for byte both ways, and the vector files in tests/vectors/rtp/. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/test_rtp_gamestate.h"

/* ---- Golden vectors (wire-rules §7) ---- */

static void test_head1_vectors(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object o, d;

    /* App. C corrected: id 4, time 5, 35 bytes. */
    struct buf want = {.n = 0}, got;
    hex(&want, "01 21 04 00 05");
    appc_tail(&want);
    assert_int_equal(want.n, 35);
    o = appc_head(4, 5);
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_appc_decoded(&d, 4, 5);
    assert_false(d.u.head1.has_ipd);
    assert_false(d.gse_tag);

    /* + IPD 0.056 (0x2B2B), 40 bytes. */
    want.n = 0;
    hex(&want, "01 26 04 00 05");
    appc_tail(&want);
    hex(&want, "80 82 02 2B 2B");
    assert_int_equal(want.n, 40);
    o.u.head1.has_ipd = true;
    o.u.head1.ipd = 0.056f;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_appc_decoded(&d, 4, 5);
    assert_true(d.u.head1.has_ipd);
    assert_true(d.u.head1.ipd == xg_f16_to_float(0x2B2B));

    /* App. C literal = gse Test_Vector_B1: objectID 0, time 0x0500 = 1280. */
    want.n = 0;
    hex(&want, "01 21 00 05 00");
    appc_tail(&want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_appc_decoded(&d, 0, 1280);
    o = appc_head(0, 1280);
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);

    /* gse Head1 + IPD 3.140625 with the 3-byte sub-tag C0 80 02 (D1). */
    want.n = 0;
    hex(&want, "01 27 00 05 00");
    appc_tail(&want);
    hex(&want, "C0 80 02 02 42 48");
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, want.b, want.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_appc_decoded(&d, 0, 1280);
    assert_true(d.u.head1.has_ipd);
    assert_true(d.u.head1.ipd == 3.140625f);
    assert_true(d.gse_tag);
    assert_int_equal(it->gse_tags, 1);
    struct rtp_gs_object end;
    assert_int_equal(rtp_gs_iter_next(it, &end, &err), RTP_GS_END);
    /* Re-encoding emits the decided tag 80 82 (never the gse form): Length 38. */
    assert_int_equal(enc(&d, &got, &err), 0);
    assert_int_equal(got.n, 40);
    assert_int_equal(got.b[1], 0x26);
    assert_int_equal(got.b[35], 0x80);
    assert_int_equal(got.b[36], 0x82);
}

static void test_headipd_alone_and_unknown_tag(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    /* HeadIPD1 alone (gse form) is a sub-element: at top level it is skipped as unknown,
     * then the unknown tag 0x20 carrying the B1 body, then a real Head1. */
    struct buf p = {.n = 0};
    hex(&p, "C0 80 02 02 42 48");
    hex(&p, "20 21 00 05 00");
    appc_tail(&p);
    hex(&p, "01 21 04 00 05");
    appc_tail(&p);
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, p.b, p.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_int_equal(d.tag, RTP_GS_TAG_HEAD_IPD1);
    assert_true(d.gse_tag);
    assert_int_equal(d.u.unknown.len, 2);
    assert_ptr_equal(d.u.unknown.ptr, p.b + 4);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_int_equal(d.tag, 0x20);
    assert_false(d.gse_tag);
    assert_int_equal(d.u.unknown.len, 33);
    assert_ptr_equal(d.u.unknown.ptr, p.b + 8);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_appc_decoded(&d, 4, 5);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
    assert_int_equal(it->unknown, 2);
    assert_int_equal(it->objects, 1);
    assert_int_equal(it->dropped, 0);
    /* Parent1 (4) and 6DOFpointer1 (136) at top level are unknown objects too. */
    struct buf q = {.n = 0};
    hex(&q, "04 01 1B 80 88 01 00");
    rtp_gs_iter_init(it, q.b, q.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.tag, 4);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.tag, 136);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
}

static void test_hand1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "02 22");
    hand_head(&want);
    assert_int_equal(want.n, 36);
    struct rtp_gs_object o = {.type = RTP_GS_HAND1}, d;
    hand_fields(&o.u.hand1);
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_HAND1);
    assert_memory_equal(&d.u.hand1, &o.u.hand1, sizeof o.u.hand1);

    /* Boolean strictness in an object: left = 02 drops the object with a clear reason. */
    want.b[5] = 0x02;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_int_equal(d.type, RTP_GS_HAND1);
    assert_string_equal(err.msg, "Hand1 (tag 2) at payload offset 0, Length 34: malformed, "
                                 "dropped: left: Boolean 0x02 at offset 3 is neither 00 nor 01");
}

static void test_hand2_vectors(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object o = {.type = RTP_GS_HAND2}, d;
    struct rtp_gs_hand1 h1 = {0};
    hand_fields(&h1);
    o.u.hand2.object_id = h1.object_id;
    o.u.hand2.time = h1.time;
    o.u.hand2.left = h1.left;
    o.u.hand2.loc = h1.loc;
    o.u.hand2.rot = h1.rot;
    for (int j = 0; j <= 4; j++)
        o.u.hand2.joints[j][1] = 3.140625f;
    o.u.hand2.joints[RTP_GS_JOINT_PINKY_TIP][0] = 3.140625f;

    /* gse form: C0 80 01, Length 80 B8 = 184, 189 bytes. */
    struct buf gse = {.n = 0};
    hex(&gse, "C0 80 01 80 B8");
    hand_head(&gse);
    hand2_joints(&gse);
    assert_int_equal(gse.n, 189);
    assert_int_equal(dec1(&gse, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_HAND2);
    assert_int_equal(d.tag, RTP_GS_TAG_HAND2);
    assert_true(d.gse_tag);
    assert_memory_equal(&d.u.hand2, &o.u.hand2, sizeof o.u.hand2);

    /* Decided form: 80 81, 188 bytes. */
    struct buf want = {.n = 0}, got;
    hex(&want, "80 81 80 B8");
    hand_head(&want);
    hand2_joints(&want);
    assert_int_equal(want.n, 188);
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_false(d.gse_tag);
    assert_memory_equal(&d.u.hand2, &o.u.hand2, sizeof o.u.hand2);

    /* One joint short: malformed. */
    want.b[3] = 0xB7;
    want.n--;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "joints (25 x Transform1) (needs 150 bytes, 149 left)"));
}

static void test_object1_vectors(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "03 1B 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 47 00 01 "
               "04 01 1B");
    assert_int_equal(want.n, 29);
    struct rtp_gs_object o = {.type = RTP_GS_OBJECT1}, d;
    o.u.object1 = (struct rtp_gs_object1){.object_id = 12,
                                          .time = 1280,
                                          .loc = {1, 2, 3},
                                          .rot = {4, 5, 6},
                                          .scale = 7.0f,
                                          .active = true,
                                          .has_parent = true,
                                          .parent_id = 27};
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_memory_equal(&d.u.object1, &o.u.object1, sizeof o.u.object1);

    /* Without parent: body 24. */
    o.u.object1.has_parent = false;
    o.u.object1.parent_id = 0;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 26);
    assert_int_equal(got.b[1], 24);
    assert_int_equal(dec1(&got, &d, &err), 0);
    assert_memory_equal(&d.u.object1, &o.u.object1, sizeof o.u.object1);

    /* Parent1 with Length 0 or past the body, and a parent ID that overruns its Length. */
    static const char *bad_parent[] = {"04 00", "04 05 1B", "04 01 80"};
    for (size_t i = 0; i < 3; i++) {
        struct buf b = {.n = 0};
        struct buf tail = {.n = 0};
        hex(&tail, bad_parent[i]);
        uint8_t len = (uint8_t)(24 + tail.n);
        b.b[0] = 0x03;
        b.b[1] = len;
        b.n = 2;
        hex(&b, "0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 47 00 01");
        memcpy(b.b + b.n, tail.b, tail.n);
        b.n += tail.n;
        assert_int_equal(dec1(&b, &d, &err), -EPROTO);
        assert_int_equal(d.type, RTP_GS_OBJECT1);
        assert_non_null(strstr(err.msg, "Parent1"));
    }
}

/* §7.1 gse-layout Object1 and Mesh1: must not crash nor disturb the next object. */
static void test_gse_layout_vectors_do_not_disturb(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    struct buf p = {.n = 0};
    hex(&p, "03 22 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 40 E0 00 00 41 "
            "00 00 00 41 10 00 00 01");
    assert_int_equal(p.n, 36);
    hex(&p, "C0 80 00 32 1B 02 3F 80 00 00 40 00 00 00 40 40 00 00 3F 80 00 00 40 00 00 00 40 40 "
            "00 00 03 42 48 BC 00 7B FF 42 48 BC 00 42 48 42 48 BC 00 7B FF 01 01 80 81 00");
    assert_int_equal(p.n, 36 + 54);
    hex(&p, "01 21 04 00 05");
    appc_tail(&p);
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, p.b, p.n);
    int rc = rtp_gs_iter_next(it, &d, &err);
    assert_true(rc == RTP_GS_OBJECT || rc == -EPROTO);
    assert_int_equal(d.type, RTP_GS_OBJECT1);
    rc = rtp_gs_iter_next(it, &d, &err);
    assert_int_equal(rc, -EPROTO); /* numVertices 0 under the decided rules */
    assert_int_equal(d.type, RTP_GS_MESH1);
    assert_true(d.gse_tag);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_appc_decoded(&d, 4, 5);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
    assert_int_equal(it->gse_tags, 1);
}

static void test_object2_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 83 34 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 38 00 00 00 00 00");
    zeros(&want, 12);
    hex(&want, "3F 80 00 00 3F 80 00 00 3F 80 00 00 00 00 00 00 00 00 01");
    assert_int_equal(want.n, 55);
    struct rtp_gs_object o = {.type = RTP_GS_OBJECT2}, d;
    o.u.object2.object_id = 12;
    o.u.object2.time = 1280;
    o.u.object2.loc = (struct rtp_gs_loc2){{1, 2, 3}, {0.5f, 0, 0}};
    o.u.object2.scale = (struct rtp_gs_loc2){{1, 1, 1}, {0, 0, 0}};
    o.u.object2.active = true;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_OBJECT2);
    assert_memory_equal(&d.u.object2, &o.u.object2, sizeof o.u.object2);
    /* With parent 300 (2-byte VarUInt): 04 02 81 2C, body 56. */
    o.u.object2.has_parent = true;
    o.u.object2.parent_id = 300;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 59);
    assert_int_equal(got.b[2], 56);
    assert_memory_equal(got.b + 55, "\x04\x02\x81\x2C", 4);
    assert_int_equal(dec1(&got, &d, &err), 0);
    assert_memory_equal(&d.u.object2, &o.u.object2, sizeof o.u.object2);
}

static void test_game_control1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 85 0E 01 12 34 0C 12 00 38 00 B8 00 00 00 3C 00");
    assert_int_equal(want.n, 17);
    struct rtp_gs_object o = {.type = RTP_GS_GAME_CONTROL1}, d;
    o.u.game_control1 = (struct rtp_gs_game_control1){.object_id = 1,
                                                      .time = 0x1234,
                                                      .buttons = RTP_GS_BTN_A | RTP_GS_BTN_B,
                                                      .buttons_changed = 0x1200,
                                                      .left_x = 0.5f,
                                                      .left_y = -0.5f,
                                                      .right_x = 0.0f,
                                                      .right_y = 1.0f};
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_memory_equal(&d.u.game_control1, &o.u.game_control1, sizeof o.u.game_control1);
    /* Pause (bit 20 = 1<<19) needs the 3-byte VarInt: C8 00 00, body 16. */
    o.u.game_control1.buttons = RTP_GS_BTN_PAUSE | RTP_GS_BTN_MENU;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 19);
    assert_memory_equal(got.b + 6, "\xC8\x00\x01", 3);
    assert_int_equal(dec1(&got, &d, &err), 0);
    assert_true(d.u.game_control1.buttons == (RTP_GS_BTN_PAUSE | RTP_GS_BTN_MENU));
    /* A negative VarInt is decoded as it is (the codec does not judge the mask). */
    struct buf neg = {.n = 0};
    hex(&neg, "80 85 0E 01 12 34 7F 12 00 38 00 B8 00 00 00 3C 00");
    assert_int_equal(dec1(&neg, &d, &err), 0);
    assert_true(d.u.game_control1.buttons == -1);
    /* An undefined VarInt form in buttons drops the object. */
    neg.b[6] = 0xE5;
    assert_int_equal(dec1(&neg, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "buttons: VarInt first byte 0xE5"));
}

static void test_threedof1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 86 10 02 01 00 01 00 00 00 00 00 00 00 00 00 00 3C 00");
    assert_int_equal(want.n, 19);
    struct rtp_gs_object o = {.type = RTP_GS_THREEDOF1}, d;
    o.u.threedof1.object_id = 2;
    o.u.threedof1.time = 0x0100;
    o.u.threedof1.left = true;
    o.u.threedof1.rot.e[2] = 1.0f;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_memory_equal(&d.u.threedof1, &o.u.threedof1, sizeof o.u.threedof1);
}

static void test_sixdof1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 87 30 03 01 00 00 00 00 00 00 3F C0 00 00 00 00 00 00");
    zeros(&want, 18);
    hex(&want, "80 88 00 00 00 00 00 00 00 00 40 00 00 00");
    assert_int_equal(want.n, 51);
    struct rtp_gs_object o = {.type = RTP_GS_SIXDOF1}, d;
    o.u.sixdof1.object_id = 3;
    o.u.sixdof1.time = 0x0100;
    o.u.sixdof1.left = false;
    o.u.sixdof1.loc.p[1] = 1.5f;
    o.u.sixdof1.has_pointer = true;
    o.u.sixdof1.pointer[2] = 2.0f;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_memory_equal(&d.u.sixdof1, &o.u.sixdof1, sizeof o.u.sixdof1);
    /* gse-form pointer tag C0 80 08 is accepted too (D1). */
    struct buf g = {.n = 0};
    hex(&g, "80 87 31");
    memcpy(g.b + g.n, want.b + 3, 34);
    g.n += 34;
    hex(&g, "C0 80 08 00 00 00 00 00 00 00 00 40 00 00 00");
    assert_int_equal(dec1(&g, &d, &err), 0);
    assert_true(d.gse_tag);
    assert_memory_equal(&d.u.sixdof1, &o.u.sixdof1, sizeof o.u.sixdof1);
    /* Without the pointer: body 34. */
    o.u.sixdof1.has_pointer = false;
    o.u.sixdof1.pointer[2] = 0;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 37);
    assert_int_equal(dec1(&got, &d, &err), 0);
    assert_memory_equal(&d.u.sixdof1, &o.u.sixdof1, sizeof o.u.sixdof1);
    /* Pointer tag present but its Loc1 cut short: malformed. */
    want.b[2] = 0x30 - 7;
    want.n -= 7;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "6DOFpointer1 (Loc1) (needs 12 bytes, 5 left)"));
}

static void test_mesh1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 80 2E 1B 02 60 03");
    zeros(&want, 12);
    hex(&want, "3F 80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 3F 80 00 00 00 00 00 00 "
               "00 00 03 00 01 02");
    assert_int_equal(want.n, 49);
    struct rtp_gs_object o = tri_mesh(), d;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, want.b, want.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_MESH1);
    const struct rtp_gs_mesh1 *m = &d.u.mesh1;
    assert_true(m->object_id == 0x1B);
    assert_int_equal(m->texture, RTP_GS_TEXTURE_RTP_PT);
    assert_int_equal(m->texture_pt, 96);
    assert_int_equal(m->num_vertices, 3);
    assert_memory_equal(m->vertices, tri_vertices, sizeof tri_vertices);
    assert_int_equal(m->num_normals, 0);
    assert_int_equal(m->num_uv, 0);
    assert_int_equal(m->num_indices, 3);
    assert_memory_equal(m->indices, tri_indices, sizeof tri_indices);
}

static void test_mesh1_rejects(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    /* {byte offset, new value, expected error text} on the 49-byte vector. */
    static const struct {
        size_t at;
        uint8_t v;
        const char *msg;
    } cases[] = {
        {4, 0x00, "texture selector 0 at body offset 1 must be 1 (URL) or 2 (RTP PT)"},
        {4, 0x03, "texture selector 3"},
        {6, 0x02, "numVertices 2 must be 3..256"},
        {43, 0x02, "numNormals 2 must be 0 or numVertices 3"},
        {44, 0x01, "numTextureCoord 1 must be 0 or numVertices 3"},
        {45, 0x02, "numTrianglesIndex 2 must be a non-zero multiple of 3"},
        {45, 0x00, "numTrianglesIndex 0 must be"},
        {48, 0x03, "trianglesIndex[2] = 3 is not below numVertices 3"},
        {45, 0x06, "trianglesIndex: VarUInt missing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf b = {.n = 0};
        hex(&b, "80 80 2E 1B 02 60 03");
        zeros(&b, 12);
        hex(&b, "3F 80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 3F 80 00 00 00 00 00 00 "
                "00 00 03 00 01 02");
        b.b[cases[i].at] = cases[i].v;
        assert_int_equal(dec1(&b, &d, &err), -EPROTO);
        assert_int_equal(d.type, RTP_GS_MESH1);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
    }
    /* The encoder refuses the same shapes, and leaves the writer untouched. */
    uint8_t out[256];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    xg_write_u8(&w, 0xAA);
    struct rtp_gs_object o = tri_mesh();
    o.u.mesh1.texture = 0;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    assert_string_equal(err.msg, "Mesh1 texture selector 0 must be 1 (URL) or 2 (RTP PT)");
    o = tri_mesh();
    o.u.mesh1.num_vertices = 2;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "numVertices 2"));
    o = tri_mesh();
    static const uint32_t bad_ix[3] = {0, 1, 3};
    o.u.mesh1.indices = bad_ix;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    assert_string_equal(err.msg, "Mesh1 index[2] = 3 is not below numVertices 3");
    o = tri_mesh();
    o.u.mesh1.num_normals = 2;
    o.u.mesh1.normals = tri_vertices;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    o = tri_mesh();
    o.u.mesh1.num_indices = 4;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    assert_int_equal(w.len, 1);
    assert_int_equal(w.err, 0);
}

static void test_mesh2_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 84 3B 05");
    zeros(&want, 30);
    hex(&want, "3F 80 00 00 3F 80 00 00 3F 80 00 00 00 00 00 00 00 00 05 6D 2E 67 6C 62 00 04 01 "
               "04");
    assert_int_equal(want.n, 62);
    struct rtp_gs_object o = {.type = RTP_GS_MESH2}, d;
    o.u.mesh2.object_id = 5;
    o.u.mesh2.scale = (struct rtp_gs_loc2){{1, 1, 1}, {0, 0, 0}};
    o.u.mesh2.mesh_url = (struct rtp_gs_bytes){(const uint8_t *)"m.glb", 5};
    o.u.mesh2.texture = RTP_GS_TEXTURE_NONE;
    o.u.mesh2.has_parent = true;
    o.u.mesh2.parent_id = 4;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    struct rtp_gs_iter *it = new_iter();
    assert_int_equal(rtp_gs_decode_one(it, want.b, want.n, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_MESH2);
    assert_int_equal(d.u.mesh2.mesh_url.len, 5);
    assert_memory_equal(d.u.mesh2.mesh_url.ptr, "m.glb", 5);
    assert_ptr_equal(d.u.mesh2.mesh_url.ptr, want.b + 53);
    assert_int_equal(d.u.mesh2.texture, 0);
    assert_true(d.u.mesh2.has_parent);
    assert_true(d.u.mesh2.parent_id == 4);
    assert_true(d.u.mesh2.scale.p[0] == 1.0f && d.u.mesh2.scale.p[2] == 1.0f);

    /* Texture URL and PT forms round trip. */
    o.u.mesh2.texture = RTP_GS_TEXTURE_URL;
    o.u.mesh2.texture_url = (struct rtp_gs_bytes){(const uint8_t *)"t.jpg", 5};
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 68);
    assert_int_equal(rtp_gs_decode_one(it, got.b, got.n, &d, &err), 0);
    assert_int_equal(d.u.mesh2.texture, RTP_GS_TEXTURE_URL);
    assert_memory_equal(d.u.mesh2.texture_url.ptr, "t.jpg", 5);
    assert_true(d.u.mesh2.parent_id == 4);
    o.u.mesh2.texture = RTP_GS_TEXTURE_RTP_PT;
    o.u.mesh2.texture_pt = 97;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(rtp_gs_decode_one(it, got.b, got.n, &d, &err), 0);
    assert_int_equal(d.u.mesh2.texture_pt, 97);

    /* Selector 3 and a non-UTF-8 URL are malformed; the encoder refuses them. */
    want.b[58] = 0x03;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "texture selector 3 at body offset 55 must be 0, 1 or 2"));
    want.b[58] = 0x00;
    want.b[54] = 0xFF;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "mesh URL: invalid UTF-8 at byte 1 (0xFF)"));
    o.u.mesh2.texture = 3;
    assert_int_equal(enc(&o, &got, &err), -EINVAL);
    o.u.mesh2.texture = 0;
    o.u.mesh2.mesh_url = (struct rtp_gs_bytes){(const uint8_t *)"\xC0\xAF", 2};
    assert_int_equal(enc(&o, &got, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "not valid UTF-8"));
}

/* tests/vectors/rtp/gs_*.bin (the §7 vectors as files, also the fuzz seeds): each decodes as
 * stated and re-encodes to itself, or to the decided form given. */
static bool read_vector(const char *name, struct buf *b)
{
    return xg_test_read_vector("rtp", name, b->b, sizeof b->b, &b->n);
}

static void test_vector_files(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int rc;                /* of rtp_gs_iter_next on the first object */
        enum rtp_gs_type type; /* of that object */
        const char *reencode;  /* "=" itself, a file name, or NULL: not re-encoded */
    } files[] = {
        {"gs_head1_appc_corrected", RTP_GS_OBJECT, RTP_GS_HEAD1, "="},
        {"gs_head1_appc_corrected_ipd", RTP_GS_OBJECT, RTP_GS_HEAD1, "="},
        {"gs_head1_appc_literal", RTP_GS_OBJECT, RTP_GS_HEAD1, "="},
        {"gs_head1_ipd_gse_tag", RTP_GS_OBJECT, RTP_GS_HEAD1, NULL},
        {"gs_headipd1_alone_gse", RTP_GS_OBJECT, RTP_GS_UNKNOWN, NULL},
        {"gs_unknown_tag_0x20", RTP_GS_OBJECT, RTP_GS_UNKNOWN, NULL},
        {"gs_hand1", RTP_GS_OBJECT, RTP_GS_HAND1, "="},
        {"gs_hand2", RTP_GS_OBJECT, RTP_GS_HAND2, "="},
        {"gs_hand2_gse_tag", RTP_GS_OBJECT, RTP_GS_HAND2, "gs_hand2"},
        {"gs_object1", RTP_GS_OBJECT, RTP_GS_OBJECT1, "="},
        {"gs_object1_gse_layout", RTP_GS_OBJECT, RTP_GS_OBJECT1, NULL},
        {"gs_mesh1_gse_layout", -EPROTO, RTP_GS_MESH1, NULL},
        {"gs_object2", RTP_GS_OBJECT, RTP_GS_OBJECT2, "="},
        {"gs_game_control1", RTP_GS_OBJECT, RTP_GS_GAME_CONTROL1, "="},
        {"gs_threedof1", RTP_GS_OBJECT, RTP_GS_THREEDOF1, "="},
        {"gs_sixdof1_pointer", RTP_GS_OBJECT, RTP_GS_SIXDOF1, "="},
        {"gs_mesh1", RTP_GS_OBJECT, RTP_GS_MESH1, "="},
        {"gs_mesh2", RTP_GS_OBJECT, RTP_GS_MESH2, "="},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        struct buf in = {.n = 0}, want = {.n = 0}, got;
        if (!read_vector(files[i].name, &in))
            fail_msg("missing tests/vectors/rtp/%s.bin", files[i].name);
        struct rtp_gs_iter *it = new_iter();
        struct rtp_gs_object d;
        struct xg_error err = {0};
        rtp_gs_iter_init(it, in.b, in.n);
        int rc = rtp_gs_iter_next(it, &d, &err);
        if (rc != files[i].rc || d.type != files[i].type)
            fail_msg("%s: rc %d type %d (%s)", files[i].name, rc, d.type, err.msg);
        assert_int_equal(xg_reader_left(&it->r), 0); /* one whole object per file */
        if (!files[i].reencode) continue;
        if (strcmp(files[i].reencode, "="))
            assert_true(read_vector(files[i].reencode, &want));
        else
            want = in;
        assert_int_equal(enc(&d, &got, &err), 0);
        assert_bytes(&got, &want);
    }
}

static void test_type_names(void **state)
{
    (void)state;
    assert_string_equal(rtp_gs_type_name(RTP_GS_HEAD1), "Head1");
    assert_string_equal(rtp_gs_type_name(RTP_GS_GAME_CONTROL1), "GameControl1");
    assert_string_equal(rtp_gs_type_name(RTP_GS_UNKNOWN), "unknown");
    assert_int_equal(rtp_gs_type_tag(RTP_GS_SIXDOF1), 135);
    assert_int_equal(rtp_gs_type_tag(RTP_GS_MESH1), 128);
    assert_int_equal(rtp_gs_type_tag(RTP_GS_UNKNOWN), 0);
    assert_int_equal(f16(1.0f), 0x3C00);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head1_vectors),
        cmocka_unit_test(test_headipd_alone_and_unknown_tag),
        cmocka_unit_test(test_hand1_vector),
        cmocka_unit_test(test_hand2_vectors),
        cmocka_unit_test(test_object1_vectors),
        cmocka_unit_test(test_gse_layout_vectors_do_not_disturb),
        cmocka_unit_test(test_object2_vector),
        cmocka_unit_test(test_game_control1_vector),
        cmocka_unit_test(test_threedof1_vector),
        cmocka_unit_test(test_sixdof1_vector),
        cmocka_unit_test(test_mesh1_vector),
        cmocka_unit_test(test_mesh1_rejects),
        cmocka_unit_test(test_mesh2_vector),
        cmocka_unit_test(test_vector_files),
        cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
