/* Helpers shared by the game-state codec unit tests (test_rtp_gamestate*.c): byte buffers,
 * encode/decode one object, Float16 quantisation, and the objects and byte strings that several
 * golden-vector and packet tests build on (App. C Head1, Hand1/Hand2 bodies, a one-triangle Mesh1).
 * Header-only; include after <cmocka.h>. */
#ifndef XG_TEST_RTP_GAMESTATE_H
#define XG_TEST_RTP_GAMESTATE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/test_util.h"

#include "adapters/rtp/gamestate_codec.h"
#include "core/util/float16.h"

struct buf {
    uint8_t b[4096];
    size_t n;
};

/* Append hex pairs (other characters ignored) to b. */
static inline void hex(struct buf *b, const char *s)
{
    b->n += xg_test_unhex(s, b->b + b->n, sizeof b->b - b->n);
}

static inline void zeros(struct buf *b, size_t n)
{
    assert_true(b->n + n <= sizeof b->b);
    memset(b->b + b->n, 0, n);
    b->n += n;
}

static inline struct rtp_gs_iter *new_iter(void)
{
    static struct rtp_gs_iter it; /* ~17 KiB of mesh scratch: keep it off the stack */
    return &it;
}

/* Encode obj into out (fresh) and return rc. */
static inline int enc(const struct rtp_gs_object *obj, struct buf *out, struct xg_error *err)
{
    struct xg_writer w;
    xg_writer_init(&w, out->b, sizeof out->b);
    int rc = rtp_gs_encode_object(&w, obj, err);
    out->n = w.len;
    return rc;
}

static inline void assert_bytes(const struct buf *got, const struct buf *want)
{
    if (got->n != want->n || memcmp(got->b, want->b, want->n) != 0) {
        fprintf(stderr, "got  (%zu):", got->n);
        for (size_t i = 0; i < got->n; i++)
            fprintf(stderr, " %02X", got->b[i]);
        fprintf(stderr, "\nwant (%zu):", want->n);
        for (size_t i = 0; i < want->n; i++)
            fprintf(stderr, " %02X", want->b[i]);
        fprintf(stderr, "\n");
        fail_msg("byte mismatch");
    }
}

/* Decode exactly one object from a heap copy of exactly its size (ASan catches over-reads). */
static inline int dec1(const struct buf *in, struct rtp_gs_object *obj, struct xg_error *err)
{
    uint8_t *copy = malloc(in->n ? in->n : 1);
    memcpy(copy, in->b, in->n);
    int rc = rtp_gs_decode_one(new_iter(), copy, in->n, obj, err);
    /* Borrowed pointers into copy are not used by callers after this (they check values). */
    if (obj->type == RTP_GS_UNKNOWN) obj->u.unknown.ptr = NULL;
    if (obj->type == RTP_GS_MESH2) {
        obj->u.mesh2.mesh_url.ptr = NULL;
        obj->u.mesh2.texture_url.ptr = NULL;
    }
    if (obj->type == RTP_GS_MESH1) obj->u.mesh1.texture_url.ptr = NULL;
    free(copy);
    return rc;
}

static inline uint16_t f16(float f)
{
    return xg_f16_from_float(f);
}
/* What a Float16 field decodes to after encoding f (exact; tolerance is 2^-11 relative). */
static inline float q16(float f)
{
    return xg_f16_to_float(rtp_gs_f16_bits(f));
}

/* App. C body after objectID+time: Loc2 (1.1, 0.2, 30; v 0) and a zero Rot2. */
static inline void appc_tail(struct buf *b)
{
    hex(b, "3F 8C CC CD 3E 4C CC CD 41 F0 00 00");
    zeros(b, 18);
}

static inline struct rtp_gs_object appc_head(uint64_t id, uint16_t t)
{
    struct rtp_gs_object o = {.type = RTP_GS_HEAD1};
    o.u.head1.object_id = id;
    o.u.head1.time = t;
    o.u.head1.loc.p[0] = 1.1f;
    o.u.head1.loc.p[1] = 0.2f;
    o.u.head1.loc.p[2] = 30.0f;
    return o;
}

static inline void assert_appc_decoded(const struct rtp_gs_object *o, uint64_t id, uint16_t t)
{
    assert_int_equal(o->type, RTP_GS_HEAD1);
    assert_int_equal(o->tag, 1);
    assert_true(o->u.head1.object_id == id);
    assert_int_equal(o->u.head1.time, t);
    assert_true(o->u.head1.loc.p[0] == 1.1f);
    assert_true(o->u.head1.loc.p[1] == 0.2f);
    assert_true(o->u.head1.loc.p[2] == 30.0f);
    for (int i = 0; i < 3; i++) {
        assert_true(o->u.head1.loc.v[i] == 0.0f);
        assert_true(o->u.head1.rot.s[i] == 0.0f);
        assert_true(o->u.head1.rot.e[i] == 0.0f);
    }
}

static inline void hand_head(struct buf *b)
{
    /* id 12, t 0x0500, left, loc 1.1/0.2/30, vx 3.140625, rot.e.k 3.140625 */
    hex(b, "0C 05 00 01 3F 8C CC CD 3E 4C CC CD 41 F0 00 00 42 48 00 00 00 00 "
           "00 00 00 00 00 00 00 00 00 00 42 48");
}

static inline void hand_fields(struct rtp_gs_hand1 *h)
{
    h->object_id = 12;
    h->time = 0x0500;
    h->left = true;
    h->loc.p[0] = 1.1f;
    h->loc.p[1] = 0.2f;
    h->loc.p[2] = 30.0f;
    h->loc.v[0] = 3.140625f;
    h->rot.e[2] = 3.140625f;
}

static inline void hand2_joints(struct buf *b)
{
    hex(b, "00 00 42 48 00 00"); /* wrist */
    for (int i = 0; i < 4; i++)
        hex(b, "00 00 42 48 00 00"); /* thumb */
    zeros(b, 15 * 6);                /* index, middle, ring */
    hex(b, "42 48 00 00 00 00");     /* pinky tip */
    zeros(b, 4 * 6);
}

static const float tri_vertices[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};

static const uint32_t tri_indices[3] = {0, 1, 2};

static inline struct rtp_gs_object tri_mesh(void)
{
    struct rtp_gs_object o = {.type = RTP_GS_MESH1};
    o.u.mesh1.object_id = 0x1B;
    o.u.mesh1.texture = RTP_GS_TEXTURE_RTP_PT;
    o.u.mesh1.texture_pt = 96;
    o.u.mesh1.num_vertices = 3;
    o.u.mesh1.vertices = tri_vertices;
    o.u.mesh1.num_indices = 3;
    o.u.mesh1.indices = tri_indices;
    return o;
}

#endif
