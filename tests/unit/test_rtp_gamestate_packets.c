/* Unit tests for adapters/rtp/gamestate_codec: packets (object order, skip and resume after a
 * malformed object, framing errors, truncation, huge lengths), round trips with random values
 * and atomic encoding. */
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

/* ---- Packets: order, skip and resume, framing ---- */

static void test_malformed_skip_and_resume(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    struct buf p = {.n = 0};
    /* 1: unknown tag 300 (2-byte VarUInt), 3-byte body */
    hex(&p, "81 2C 03 AA BB CC");
    /* 2: Hand1 with left = 05 */
    hex(&p, "02 22");
    size_t bad_at = p.n;
    hand_head(&p);
    p.b[bad_at + 3] = 0x05;
    /* 3: Head1 whose Length (10) cuts the mandatory fields */
    hex(&p, "01 0A 04 00 05 3F 8C CC CD 3E 4C CC");
    /* 4: ThreeDOF1 with undefined VarUInt objectID E0 */
    hex(&p, "80 86 10 E0 01 00 01 00 00 00 00 00 00 00 00 00 00 3C 00");
    /* 5: Object2 (valid), 6: Head1 id 4 then 7: Head1 id 4 again (later overrides) */
    size_t o2 = p.n;
    hex(&p, "80 83 34 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 38 00 00 00 00 00");
    zeros(&p, 12);
    hex(&p, "3F 80 00 00 3F 80 00 00 3F 80 00 00 00 00 00 00 00 00 01");
    assert_int_equal(p.n - o2, 55);
    hex(&p, "01 21 04 00 05");
    appc_tail(&p);
    hex(&p, "01 21 04 00 06");
    appc_tail(&p);

    uint8_t *copy = malloc(p.n);
    memcpy(copy, p.b, p.n);
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, copy, p.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_int_equal(d.tag, 300);
    assert_int_equal(d.u.unknown.len, 3);

    assert_int_equal(rtp_gs_iter_next(it, &d, &err), -EPROTO);
    assert_int_equal(d.type, RTP_GS_HAND1);
    assert_int_equal(err.code, -EPROTO);
    assert_non_null(strstr(err.msg, "Hand1 (tag 2) at payload offset 6"));
    assert_non_null(strstr(err.msg, "Boolean 0x05"));

    assert_int_equal(rtp_gs_iter_next(it, &d, &err), -EPROTO);
    assert_int_equal(d.type, RTP_GS_HEAD1);
    assert_non_null(strstr(err.msg, "body ends inside loc (Loc2) (needs 18 bytes, 7 left)"));

    assert_int_equal(rtp_gs_iter_next(it, &d, &err), -EPROTO);
    assert_int_equal(d.type, RTP_GS_THREEDOF1);
    assert_non_null(strstr(err.msg, "objectID: VarUInt first byte 0xE0"));

    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_OBJECT2);
    assert_true(d.u.object2.loc.v[0] == 0.5f);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.u.head1.time, 5);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.u.head1.time, 6);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
    assert_int_equal(it->objects, 3);
    assert_int_equal(it->unknown, 1);
    assert_int_equal(it->dropped, 3);
    free(copy);
}

static void test_framing_errors_stop(void **state)
{
    (void)state;
    static const struct {
        const char *hex;
        const char *msg;
    } cases[] = {
        {"00 05 01 02 03 04 05", "framing broken, 7 bytes discarded: Tag 0 (tagInvalid)"},
        {"01 00 80 83", "Length 0 is zero"},
        {"01 22 04 00 05", "tag 1 Length 34 is past the end (3 bytes left)"},
        {"E0 21", "Tag: VarUInt first byte 0xE0"},
        {"FF 21", "Tag: VarUInt first byte 0xFF"},
        {"01 E3 00", "Length: VarUInt first byte 0xE3"},
        {"80", "Tag: VarUInt first byte 0x80 at offset 36 needs 1 more bytes, 0 left"},
        {"01", "Length: VarUInt missing"},
        {"01 E1 00 00", "Length: VarUInt first byte 0xE1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* A valid Hand1 first: it must come out intact before the framing error. */
        struct buf p = {.n = 0};
        hex(&p, "02 22");
        hand_head(&p);
        size_t first = p.n;
        hex(&p, cases[i].hex);
        uint8_t *copy = malloc(p.n);
        memcpy(copy, p.b, p.n);
        struct rtp_gs_iter *it = new_iter();
        struct rtp_gs_object d;
        struct xg_error err = {0};
        rtp_gs_iter_init(it, copy, p.n);
        assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
        assert_int_equal(d.type, RTP_GS_HAND1);
        assert_int_equal(rtp_gs_iter_next(it, &d, &err), -EBADMSG);
        assert_int_equal(err.code, -EBADMSG);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        char off[40];
        snprintf(off, sizeof off, "payload offset %zu", first);
        assert_non_null(strstr(err.msg, off));
        assert_true(it->done);
        assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
        free(copy);
    }
    /* decode_one: empty input and trailing bytes. */
    struct rtp_gs_object d;
    struct xg_error err = {0};
    assert_int_equal(rtp_gs_decode_one(new_iter(), "", 0, &d, &err), -EBADMSG);
    assert_string_equal(err.msg, "empty buffer: no object");
    struct buf p = {.n = 0};
    hex(&p, "02 22");
    hand_head(&p);
    hex(&p, "02 22");
    assert_int_equal(rtp_gs_decode_one(new_iter(), p.b, p.n, &d, &err), -EBADMSG);
    assert_string_equal(err.msg, "2 trailing bytes after the Hand1 object");
}

/* Leftover bytes after the known parts of a body are ignored (forward compatibility), an
 * unrecognised sub-TLV ends the optional part, and a broken known sub-TLV drops the object. */
static void test_leftovers_and_sub_tlvs(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    struct buf p = {.n = 0};
    hex(&p, "01 26 04 00 05");
    appc_tail(&p);
    hex(&p, "55 03 01 02 03"); /* unknown sub-TLV 0x55 */
    assert_int_equal(dec1(&p, &d, &err), 0);
    assert_appc_decoded(&d, 4, 5);
    assert_false(d.u.head1.has_ipd);

    p.n = 0; /* IPD with Length 3 (one extra byte in it, ignored) then 2 leftover bytes */
    hex(&p, "01 29 04 00 05");
    appc_tail(&p);
    hex(&p, "80 82 03 3C 00 99 EE EE");
    assert_int_equal(dec1(&p, &d, &err), 0);
    assert_true(d.u.head1.has_ipd);
    assert_true(d.u.head1.ipd == 1.0f);

    p.n = 0; /* IPD sub-TLV Length past the body */
    hex(&p, "01 26 04 00 05");
    appc_tail(&p);
    hex(&p, "80 82 04 2B 2B");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "HeadIPD1 Length 4 is 0 or past the body (2 left)"));

    p.n = 0; /* IPD sub-TLV with Length 1: Float16 does not fit */
    hex(&p, "01 25 04 00 05");
    appc_tail(&p);
    hex(&p, "80 82 01 2B");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "HeadIPD1 IPD (Float16) (needs 2 bytes, 1 left)"));

    p.n = 0; /* Object1: unknown sub-TLV before Parent1 ends the optional part */
    hex(&p, "03 1C 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 47 00 01 "
            "66 04 01 1B");
    assert_int_equal(dec1(&p, &d, &err), 0);
    assert_false(d.u.object1.has_parent);
    assert_true(d.u.object1.active);
}

/* Every strict prefix of every golden object: the decoder reports a framing error or a
 * dropped object, never reads past the end (heap copies of exact size under ASan). */
static void test_truncated_never_overreads(void **state)
{
    (void)state;
    struct buf v[8];
    memset(v, 0, sizeof v);
    hex(&v[0], "01 26 04 00 05");
    appc_tail(&v[0]);
    hex(&v[0], "80 82 02 2B 2B");
    hex(&v[1], "80 81 80 B8");
    hand_head(&v[1]);
    hand2_joints(&v[1]);
    hex(&v[2], "03 1B 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 47 00 01 "
               "04 01 1B");
    hex(&v[3], "80 85 0E 01 12 34 0C 12 00 38 00 B8 00 00 00 3C 00");
    hex(&v[4], "80 87 30 03 01 00 00 00 00 00 00 3F C0 00 00 00 00 00 00");
    zeros(&v[4], 18);
    hex(&v[4], "80 88 00 00 00 00 00 00 00 00 40 00 00 00");
    hex(&v[5], "80 80 2E 1B 02 60 03");
    zeros(&v[5], 12);
    hex(&v[5], "3F 80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 3F 80 00 00 00 00 00 00 "
               "00 00 03 00 01 02");
    hex(&v[6], "80 84 3B 05");
    zeros(&v[6], 30);
    hex(&v[6], "3F 80 00 00 3F 80 00 00 3F 80 00 00 00 00 00 00 00 00 05 6D 2E 67 6C 62 00 04 01 "
               "04");
    hex(&v[7], "80 86 10 02 01 00 01 00 00 00 00 00 00 00 00 00 00 3C 00");
    for (size_t k = 0; k < 8; k++) {
        struct rtp_gs_object d;
        struct xg_error err = {0};
        assert_int_equal(dec1(&v[k], &d, &err), 0);
        for (size_t n = 0; n < v[k].n; n++) {
            struct buf cut = v[k];
            cut.n = n;
            int rc = dec1(&cut, &d, &err);
            assert_true(rc == -EBADMSG); /* the Length always runs past a strict prefix */
        }
        /* Shrinking the Length instead (body cut, framing intact) drops the object, unless
         * only optional parts were cut. */
        size_t tagsz = v[k].b[0] & 0x80 ? 2 : 1;
        size_t hdr = tagsz + (v[k].b[tagsz] & 0x80 ? 2 : 1);
        size_t body = v[k].n - hdr;
        for (size_t n = 1; n < body; n++) {
            struct buf cut = {.n = 0};
            memcpy(cut.b, v[k].b, tagsz);
            struct xg_writer w;
            xg_writer_init(&w, cut.b + tagsz, 4);
            rtp_gs_write_varuint(&w, n);
            cut.n = tagsz + w.len;
            memcpy(cut.b + cut.n, v[k].b + hdr, n);
            cut.n += n;
            int rc = dec1(&cut, &d, &err);
            assert_true(rc == 0 || rc == -EPROTO);
        }
    }
}

/* Huge VarUInt counts and lengths (up to 2^64-1) are rejected before any size arithmetic. */
static void test_huge_lengths_rejected(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    struct buf p = {.n = 0};
    hex(&p, "01 E2 FF FF FF FF FF FF FF FF 04 00 05");
    assert_int_equal(dec1(&p, &d, &err), -EBADMSG);
    assert_non_null(strstr(err.msg, "Length 18446744073709551615 is past the end (3 bytes left)"));

    p.n = 0; /* Mesh1 numVertices 2^64-1 */
    hex(&p, "80 80 0E 1B 02 60 E2 FF FF FF FF FF FF FF FF 00 00");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "numVertices 18446744073709551615 must be 3..256"));

    p.n = 0; /* Mesh2 URL length 2^32-1 */
    hex(&p, "80 84 36 05");
    zeros(&p, 48);
    hex(&p, "E1 FF FF FF FF 00");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "mesh URL: length 4294967295 at offset 49 exceeds 1024"));

    p.n = 0; /* Head1 IPD sub-TLV Length 2^64-1 */
    hex(&p, "01 2C 04 00 05");
    appc_tail(&p);
    hex(&p, "80 82 E2 FF FF FF FF FF FF FF FF");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "HeadIPD1 Length 18446744073709551615 is 0 or past the body"));

    p.n = 0; /* a tag of 2^64-1 is just unknown, skipped by its Length */
    hex(&p, "E2 FF FF FF FF FF FF FF FF 01 AA");
    assert_int_equal(dec1(&p, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_true(d.tag == UINT64_MAX);
}

/* ---- Round trips with random values ---- */

static uint32_t rng = 12345u;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static float rndf(float lo, float hi)
{
    return lo + (hi - lo) * (float)(rnd() % 100001) / 100000.0f;
}
static uint64_t rnd_id(void)
{
    static const uint64_t ids[] = {0, 1, 127, 128, 16383, 16384, 2097151, 2097152, 4294967296ull};
    return rnd() % 2 ? rnd() % 200 : ids[rnd() % 9];
}

static void rnd_loc2(struct rtp_gs_loc2 *l)
{
    for (int i = 0; i < 3; i++) {
        l->p[i] = rndf(-100, 100);
        l->v[i] = rndf(-10, 10);
    }
}

static void rnd_rot2(struct rtp_gs_rot2 *r)
{
    for (int i = 0; i < 3; i++) {
        r->s[i] = rndf(-1, 1);
        r->e[i] = rndf(-1, 1);
    }
}

/* Quantise the Float16 fields as the wire does; then decode(encode(o)) must equal o exactly.
 * Float16 fields therefore match the input within 2^-11 relative (half an ulp). */
static void q_loc2(struct rtp_gs_loc2 *l)
{
    for (int i = 0; i < 3; i++)
        l->v[i] = q16(l->v[i]);
}
static void q_rot2(struct rtp_gs_rot2 *r)
{
    for (int i = 0; i < 3; i++) {
        r->s[i] = q16(r->s[i]);
        r->e[i] = q16(r->e[i]);
    }
}

static void check_round_trip(const struct rtp_gs_object *in, const struct rtp_gs_object *quant)
{
    struct buf b;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    assert_int_equal(enc(in, &b, &err), 0);
    struct rtp_gs_iter *it = new_iter();
    if (rtp_gs_decode_one(it, b.b, b.n, &d, &err) != 0)
        fail_msg("%s: %s", rtp_gs_type_name(in->type), err.msg);
    assert_int_equal(d.type, in->type);
    assert_true(d.tag == rtp_gs_type_tag(in->type));
    switch (in->type) {
    case RTP_GS_HEAD1:
        assert_memory_equal(&d.u.head1, &quant->u.head1, sizeof d.u.head1);
        break;
    case RTP_GS_HAND1:
        assert_memory_equal(&d.u.hand1, &quant->u.hand1, sizeof d.u.hand1);
        break;
    case RTP_GS_HAND2:
        assert_memory_equal(&d.u.hand2, &quant->u.hand2, sizeof d.u.hand2);
        break;
    case RTP_GS_OBJECT1:
        assert_memory_equal(&d.u.object1, &quant->u.object1, sizeof d.u.object1);
        break;
    case RTP_GS_OBJECT2:
        assert_memory_equal(&d.u.object2, &quant->u.object2, sizeof d.u.object2);
        break;
    case RTP_GS_THREEDOF1:
        assert_memory_equal(&d.u.threedof1, &quant->u.threedof1, sizeof d.u.threedof1);
        break;
    case RTP_GS_SIXDOF1:
        assert_memory_equal(&d.u.sixdof1, &quant->u.sixdof1, sizeof d.u.sixdof1);
        break;
    case RTP_GS_GAME_CONTROL1:
        assert_memory_equal(&d.u.game_control1, &quant->u.game_control1, sizeof d.u.game_control1);
        break;
    case RTP_GS_MESH1: {
        const struct rtp_gs_mesh1 *a = &d.u.mesh1, *e = &quant->u.mesh1;
        assert_true(a->object_id == e->object_id);
        assert_int_equal(a->texture, e->texture);
        assert_int_equal(a->num_vertices, e->num_vertices);
        assert_memory_equal(a->vertices, e->vertices, e->num_vertices * sizeof e->vertices[0]);
        assert_int_equal(a->num_normals, e->num_normals);
        if (e->num_normals)
            assert_memory_equal(a->normals, e->normals, e->num_normals * sizeof e->normals[0]);
        assert_int_equal(a->num_uv, e->num_uv);
        if (e->num_uv) assert_memory_equal(a->uv, e->uv, e->num_uv * sizeof e->uv[0]);
        assert_int_equal(a->num_indices, e->num_indices);
        assert_memory_equal(a->indices, e->indices, e->num_indices * sizeof e->indices[0]);
        if (e->texture == RTP_GS_TEXTURE_URL) {
            assert_int_equal(a->texture_url.len, e->texture_url.len);
            assert_memory_equal(a->texture_url.ptr, e->texture_url.ptr, e->texture_url.len);
        } else {
            assert_int_equal(a->texture_pt, e->texture_pt);
        }
        break;
    }
    case RTP_GS_MESH2: {
        const struct rtp_gs_mesh2 *a = &d.u.mesh2, *e = &quant->u.mesh2;
        assert_true(a->object_id == e->object_id);
        assert_memory_equal(&a->loc, &e->loc, sizeof a->loc);
        assert_memory_equal(&a->rot, &e->rot, sizeof a->rot);
        assert_memory_equal(&a->scale, &e->scale, sizeof a->scale);
        assert_int_equal(a->mesh_url.len, e->mesh_url.len);
        assert_memory_equal(a->mesh_url.ptr, e->mesh_url.ptr, e->mesh_url.len);
        assert_int_equal(a->texture, e->texture);
        assert_int_equal(a->has_parent, e->has_parent);
        assert_true(a->parent_id == e->parent_id);
        break;
    }
    default:
        fail();
    }
}

static void test_round_trip_random(void **state)
{
    (void)state;
    static float verts[200][3], norms[200][3], qnorms[200][3], uvs[200][2];
    static uint32_t idx[600];
    for (int iter = 0; iter < 300; iter++) {
        struct rtp_gs_object o, q;
        memset(&o, 0, sizeof o);
        o.type = (enum rtp_gs_type)(1 + iter % 10);
        switch (o.type) {
        case RTP_GS_HEAD1:
            o.u.head1.object_id = rnd_id();
            o.u.head1.time = (uint16_t)rnd();
            rnd_loc2(&o.u.head1.loc);
            rnd_rot2(&o.u.head1.rot);
            o.u.head1.has_ipd = rnd() % 2;
            o.u.head1.ipd = o.u.head1.has_ipd ? rndf(0.05f, 0.075f) : 0;
            q = o;
            q_loc2(&q.u.head1.loc);
            q_rot2(&q.u.head1.rot);
            q.u.head1.ipd = q16(q.u.head1.ipd);
            break;
        case RTP_GS_HAND1:
        case RTP_GS_HAND2:
            /* hand1 is a prefix of hand2's fields; fill hand2 and copy when needed */
            o.u.hand2.object_id = rnd_id();
            o.u.hand2.time = (uint16_t)rnd();
            o.u.hand2.left = rnd() % 2;
            rnd_loc2(&o.u.hand2.loc);
            rnd_rot2(&o.u.hand2.rot);
            for (int j = 0; j < RTP_GS_HAND2_JOINTS; j++)
                for (int k = 0; k < 3; k++)
                    o.u.hand2.joints[j][k] = rndf(-0.2f, 0.2f);
            if (o.type == RTP_GS_HAND1) {
                struct rtp_gs_hand2 h = o.u.hand2;
                memset(&o.u, 0, sizeof o.u);
                o.u.hand1 = (struct rtp_gs_hand1){h.object_id, h.time, h.left, h.loc, h.rot};
                q = o;
                q_loc2(&q.u.hand1.loc);
                q_rot2(&q.u.hand1.rot);
            } else {
                q = o;
                q_loc2(&q.u.hand2.loc);
                q_rot2(&q.u.hand2.rot);
                for (int j = 0; j < RTP_GS_HAND2_JOINTS; j++)
                    for (int k = 0; k < 3; k++)
                        q.u.hand2.joints[j][k] = q16(q.u.hand2.joints[j][k]);
            }
            break;
        case RTP_GS_OBJECT1:
            o.u.object1.object_id = rnd_id();
            o.u.object1.time = (uint16_t)rnd();
            for (int k = 0; k < 3; k++) {
                o.u.object1.loc[k] = rndf(-1000, 1000);
                o.u.object1.rot[k] = rndf(-1, 1);
            }
            o.u.object1.scale = rndf(0.01f, 100);
            o.u.object1.active = rnd() % 2;
            o.u.object1.has_parent = rnd() % 2;
            o.u.object1.parent_id = o.u.object1.has_parent ? rnd_id() : 0;
            q = o;
            for (int k = 0; k < 3; k++)
                q.u.object1.rot[k] = q16(q.u.object1.rot[k]);
            q.u.object1.scale = q16(q.u.object1.scale);
            break;
        case RTP_GS_OBJECT2:
            o.u.object2.object_id = rnd_id();
            o.u.object2.time = (uint16_t)rnd();
            rnd_loc2(&o.u.object2.loc);
            rnd_rot2(&o.u.object2.rot);
            rnd_loc2(&o.u.object2.scale);
            o.u.object2.active = rnd() % 2;
            o.u.object2.has_parent = rnd() % 2;
            o.u.object2.parent_id = o.u.object2.has_parent ? rnd_id() : 0;
            q = o;
            q_loc2(&q.u.object2.loc);
            q_rot2(&q.u.object2.rot);
            q_loc2(&q.u.object2.scale);
            break;
        case RTP_GS_MESH1: {
            size_t nv = 3 + rnd() % 150, ni = 3 * (1 + rnd() % 150);
            for (size_t i = 0; i < nv; i++) {
                for (int k = 0; k < 3; k++) {
                    verts[i][k] = rndf(-5, 5);
                    norms[i][k] = rndf(-1, 1);
                    qnorms[i][k] = q16(norms[i][k]);
                }
                uvs[i][0] = rndf(0, 1);
                uvs[i][1] = rndf(0, 1);
            }
            for (size_t i = 0; i < ni; i++)
                idx[i] = rnd() % nv;
            struct rtp_gs_mesh1 *m = &o.u.mesh1;
            m->object_id = rnd_id();
            m->texture = rnd() % 2 ? RTP_GS_TEXTURE_URL : RTP_GS_TEXTURE_RTP_PT;
            m->texture_url = (struct rtp_gs_bytes){(const uint8_t *)"https://x/t\xC3\xA9.jpg", 16};
            m->texture_pt = (uint8_t)(96 + rnd() % 32);
            m->num_vertices = nv;
            m->vertices = (const float(*)[3])verts;
            m->num_normals = rnd() % 2 ? nv : 0;
            m->normals = (const float(*)[3])norms;
            m->num_uv = rnd() % 2 ? nv : 0;
            m->uv = (const float(*)[2])uvs;
            m->num_indices = ni;
            m->indices = idx;
            q = o;
            q.u.mesh1.normals = (const float(*)[3])qnorms;
            break;
        }
        case RTP_GS_MESH2: {
            struct rtp_gs_mesh2 *m = &o.u.mesh2;
            m->object_id = rnd_id();
            rnd_loc2(&m->loc);
            rnd_rot2(&m->rot);
            rnd_loc2(&m->scale);
            m->mesh_url =
                (struct rtp_gs_bytes){(const uint8_t *)"https://example.org/m.glb", rnd() % 26};
            m->texture = (uint8_t)(rnd() % 3);
            m->texture_url = (struct rtp_gs_bytes){(const uint8_t *)"tex.png", 7};
            m->texture_pt = 99;
            m->has_parent = rnd() % 2;
            m->parent_id = m->has_parent ? rnd_id() : 0;
            q = o;
            q_loc2(&q.u.mesh2.loc);
            q_rot2(&q.u.mesh2.rot);
            q_loc2(&q.u.mesh2.scale);
            break;
        }
        case RTP_GS_THREEDOF1:
            o.u.threedof1.object_id = rnd_id();
            o.u.threedof1.time = (uint16_t)rnd();
            o.u.threedof1.left = rnd() % 2;
            rnd_rot2(&o.u.threedof1.rot);
            q = o;
            q_rot2(&q.u.threedof1.rot);
            break;
        case RTP_GS_SIXDOF1:
            o.u.sixdof1.object_id = rnd_id();
            o.u.sixdof1.time = (uint16_t)rnd();
            o.u.sixdof1.left = rnd() % 2;
            rnd_loc2(&o.u.sixdof1.loc);
            rnd_rot2(&o.u.sixdof1.rot);
            o.u.sixdof1.has_pointer = rnd() % 2;
            for (int k = 0; k < 3 && o.u.sixdof1.has_pointer; k++)
                o.u.sixdof1.pointer[k] = rndf(-50, 50);
            q = o;
            q_loc2(&q.u.sixdof1.loc);
            q_rot2(&q.u.sixdof1.rot);
            break;
        case RTP_GS_GAME_CONTROL1:
            o.u.game_control1.object_id = rnd_id();
            o.u.game_control1.time = (uint16_t)rnd();
            o.u.game_control1.buttons = rnd() & 0xFFFFF;
            o.u.game_control1.buttons_changed = (uint16_t)rnd();
            o.u.game_control1.left_x = rndf(-1, 1);
            o.u.game_control1.left_y = rndf(-1, 1);
            o.u.game_control1.right_x = rndf(-1, 1);
            o.u.game_control1.right_y = rndf(-1, 1);
            q = o;
            q.u.game_control1.left_x = q16(q.u.game_control1.left_x);
            q.u.game_control1.left_y = q16(q.u.game_control1.left_y);
            q.u.game_control1.right_x = q16(q.u.game_control1.right_x);
            q.u.game_control1.right_y = q16(q.u.game_control1.right_y);
            assert_true(fabsf(q.u.game_control1.left_x - o.u.game_control1.left_x) <=
                        ldexpf(1.0f, -11));
            break;
        default:
            fail();
        }
        check_round_trip(&o, &q);
    }
}

/* Packing: the encoder is atomic, so a full writer can be flushed and the object retried. */
static void test_encode_atomic_and_packing(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object h = appc_head(4, 5); /* 35 bytes */
    uint8_t pkt[100];
    struct xg_writer w;
    xg_writer_init(&w, pkt, sizeof pkt);
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), 0);
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), 0);
    assert_int_equal(w.len, 70);
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), -EMSGSIZE);
    assert_string_equal(err.msg, "Head1 object does not fit in the 30 bytes left");
    assert_int_equal(w.len, 70);
    assert_int_equal(w.err, 0);
    /* Exactly fitting works (35 bytes left). */
    xg_writer_init(&w, pkt, 35);
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), 0);
    assert_int_equal(w.len, 35);
    /* A big Mesh1 whose body needs a 2-byte Length: exact capacity fits, one less does not. */
    static float verts[100][3];
    static uint32_t ix[99];
    for (int i = 0; i < 100; i++)
        verts[i][0] = (float)i;
    for (int i = 0; i < 99; i++)
        ix[i] = (uint32_t)i;
    struct rtp_gs_object m = tri_mesh();
    m.u.mesh1.num_vertices = 100;
    m.u.mesh1.vertices = (const float(*)[3])verts;
    m.u.mesh1.num_indices = 99;
    m.u.mesh1.indices = ix;
    static uint8_t big[2000];
    xg_writer_init(&w, big, sizeof big);
    assert_int_equal(rtp_gs_encode_object(&w, &m, &err), 0);
    size_t need = w.len;
    /* tag 2 + Length 2 + id 1 + sel 1 + pt 1 + nv 1 + 1200 + 0 + 0 + ni 1 + 99 */
    assert_int_equal(need, 2 + 2 + 1 + 1 + 1 + 1 + 1200 + 1 + 1 + 1 + 99);
    assert_int_equal(big[2], 0x80 | ((need - 4) >> 8));
    assert_int_equal(big[3], (need - 4) & 0xFF);
    xg_writer_init(&w, big, need - 1);
    assert_int_equal(rtp_gs_encode_object(&w, &m, &err), -EMSGSIZE);
    assert_int_equal(w.len, 0);
    xg_writer_init(&w, big, need);
    assert_int_equal(rtp_gs_encode_object(&w, &m, &err), 0);
    struct rtp_gs_object d;
    assert_int_equal(rtp_gs_decode_one(new_iter(), big, need, &d, &err), 0);
    assert_int_equal(d.u.mesh1.num_vertices, 100);
    assert_true(d.u.mesh1.vertices[99][0] == 99.0f);
    /* Unknown type cannot be encoded; a failed writer is refused. */
    struct rtp_gs_object u = {.type = RTP_GS_UNKNOWN, .tag = 77};
    xg_writer_init(&w, pkt, sizeof pkt);
    assert_int_equal(rtp_gs_encode_object(&w, &u, &err), -EINVAL);
    assert_int_equal(w.len, 0);
    w.err = -EMSGSIZE;
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), -EMSGSIZE);
    assert_int_equal(w.len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_skip_and_resume),
        cmocka_unit_test(test_framing_errors_stop),
        cmocka_unit_test(test_leftovers_and_sub_tlvs),
        cmocka_unit_test(test_truncated_never_overreads),
        cmocka_unit_test(test_huge_lengths_rejected),
        cmocka_unit_test(test_round_trip_random),
        cmocka_unit_test(test_encode_atomic_and_packing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
