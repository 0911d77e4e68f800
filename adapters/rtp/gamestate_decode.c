/* Game state over RTP: object decoder and the payload iterator (TLV framing, bodies, optional
 * sub-TLVs, Mesh1 scratch). See gamestate_codec.h and
 * draft-jennings-dispatch-game-state-over-rtp-01 (the object layouts). */
#include "adapters/rtp/gamestate_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/clock/clock.h"
#include "core/util/float16.h"

/* ---- Decoding ---- */

/* Field readers for an object body: a short body is a malformed object (-EPROTO). */
static int need(struct xg_reader *r, size_t n, const char *field, struct xg_error *err)
{
    size_t left = xg_reader_left(r);
    if (left < n)
        return xg_error_set(err, -EPROTO, "body ends inside %s (needs %zu bytes, %zu left)", field,
                            n, left);
    return 0;
}

static int get_varuint(struct xg_reader *r, uint64_t *v, const char *field, struct xg_error *err)
{
    int rc = rtp_gs_read_varuint(r, v, field, err);
    if (rc && err) err->code = -EPROTO; /* inside a body, truncation is a malformed object */
    return rc ? -EPROTO : 0;
}

static int get_bool(struct xg_reader *r, bool *v, const char *field, struct xg_error *err)
{
    int rc = rtp_gs_read_bool(r, v, field, err);
    if (rc && err) err->code = -EPROTO;
    return rc ? -EPROTO : 0;
}

static int get_time(struct xg_reader *r, uint16_t *t, const char *field, struct xg_error *err)
{
    TRY(need(r, 2, field, err));
    *t = xg_read_be16(r);
    return 0;
}

static void get_f32x(struct xg_reader *r, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = xg_read_bef32(r);
}

static void get_f16x(struct xg_reader *r, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = xg_read_bef16(r);
}

static int get_loc2(struct xg_reader *r, struct rtp_gs_loc2 *l, const char *field,
                    struct xg_error *err)
{
    TRY(need(r, 18, field, err));
    get_f32x(r, l->p, 3);
    get_f16x(r, l->v, 3);
    return 0;
}

static int get_rot2(struct xg_reader *r, struct rtp_gs_rot2 *o, struct xg_error *err)
{
    TRY(need(r, 12, "rot (Rot2)", err));
    get_f16x(r, o->s, 3);
    get_f16x(r, o->e, 3);
    return 0;
}

static int get_string(struct xg_reader *r, struct rtp_gs_bytes *b, const char *field,
                      struct xg_error *err)
{
    int rc = rtp_gs_read_bytes(r, b, RTP_GS_MAX_STRING, true, field, err);
    if (rc && err) err->code = -EPROTO;
    return rc ? -EPROTO : 0;
}

/* Next optional sub-TLV tag (D1-mapped), or 0 when none can be read (leftovers are ignored). */
static uint64_t peek_sub_tag(struct xg_reader *r, bool *gse_seen)
{
    if (xg_reader_left(r) == 0) return 0;
    struct xg_reader probe = *r;
    uint64_t tag;
    bool gse = false;
    if (rtp_gs_read_varuint(&probe, &tag, "sub-TLV tag", NULL)) return 0;
    tag = rtp_gs_map_gse_tag(tag, &gse);
    if (tag == RTP_GS_TAG_INVALID) return 0;
    *r = probe;
    if (gse) *gse_seen = true;
    return tag;
}

/* `Len | value` of a sub-TLV whose tag was consumed: a sub-reader over the value. */
static int get_sub_tlv(struct xg_reader *r, struct xg_reader *sub, const char *field,
                       struct xg_error *err)
{
    uint64_t len;
    TRY(get_varuint(r, &len, field, err));
    if (len == 0 || len > xg_reader_left(r))
        return xg_error_set(err, -EPROTO, "%s Length %" PRIu64 " is 0 or past the body (%zu left)",
                            field, len, xg_reader_left(r));
    xg_read_sub(r, (size_t)len, sub);
    return 0;
}

static int get_parent(struct xg_reader *r, bool *has, uint64_t *id, struct xg_error *err)
{
    *has = false;
    *id = 0;
    struct xg_reader probe = *r;
    bool gse = false;
    if (peek_sub_tag(&probe, &gse) != RTP_GS_TAG_PARENT1)
        return 0; /* nothing or leftovers: ignored */
    *r = probe;
    struct xg_reader sub;
    TRY(get_sub_tlv(r, &sub, "Parent1", err));
    TRY(get_varuint(&sub, id, "Parent1 objectID", err));
    *has = true;
    return 0;
}

static int get_texture(struct xg_reader *r, uint8_t *sel, struct rtp_gs_bytes *url, uint8_t *pt,
                       bool allow_none, struct xg_error *err)
{
    TRY(need(r, 1, "texture selector", err));
    size_t at = r->off;
    *sel = xg_read_u8(r);
    if (*sel == RTP_GS_TEXTURE_URL) return get_string(r, url, "texture URL", err);
    if (*sel == RTP_GS_TEXTURE_RTP_PT) {
        TRY(need(r, 1, "texture RTP PT", err));
        *pt = xg_read_u8(r);
        return 0;
    }
    if (*sel == RTP_GS_TEXTURE_NONE && allow_none) return 0;
    return xg_error_set(err, -EPROTO, "texture selector %u at body offset %zu must be %s", *sel, at,
                        allow_none ? "0, 1 or 2" : "1 (URL) or 2 (RTP PT)");
}

static int decode_mesh1(struct xg_reader *r, struct rtp_gs_mesh1 *m, struct rtp_gs_mesh_scratch *s,
                        struct xg_error *err)
{
    uint64_t n;
    TRY(get_texture(r, &m->texture, &m->texture_url, &m->texture_pt, false, err));
    TRY(get_varuint(r, &n, "numVertices", err));
    if (n < 3 || n > RTP_GS_MESH_MAX_VERTICES)
        return xg_error_set(err, -EPROTO, "numVertices %" PRIu64 " must be 3..%d", n,
                            RTP_GS_MESH_MAX_VERTICES);
    TRY(need(r, (size_t)n * 12, "vertices (Loc1)", err));
    m->num_vertices = (size_t)n;
    for (size_t i = 0; i < m->num_vertices; i++)
        get_f32x(r, s->vertices[i], 3);
    m->vertices = (const float(*)[3])s->vertices;

    TRY(get_varuint(r, &n, "numNormals", err));
    if (n != 0 && n != m->num_vertices)
        return xg_error_set(err, -EPROTO, "numNormals %" PRIu64 " must be 0 or numVertices %zu", n,
                            m->num_vertices);
    TRY(need(r, (size_t)n * 6, "normals (Norm1)", err));
    m->num_normals = (size_t)n;
    for (size_t i = 0; i < m->num_normals; i++)
        get_f16x(r, s->normals[i], 3);
    m->normals = m->num_normals ? (const float(*)[3])s->normals : NULL;

    TRY(get_varuint(r, &n, "numTextureCoord", err));
    if (n != 0 && n != m->num_vertices)
        return xg_error_set(err, -EPROTO,
                            "numTextureCoord %" PRIu64 " must be 0 or numVertices %zu", n,
                            m->num_vertices);
    TRY(need(r, (size_t)n * 8, "textureCoord (TextureUV1)", err));
    m->num_uv = (size_t)n;
    for (size_t i = 0; i < m->num_uv; i++)
        get_f32x(r, s->uv[i], 2);
    m->uv = m->num_uv ? (const float(*)[2])s->uv : NULL;

    TRY(get_varuint(r, &n, "numTrianglesIndex", err));
    if (n == 0 || n % 3 || n > RTP_GS_MESH_MAX_INDICES)
        return xg_error_set(
            err, -EPROTO, "numTrianglesIndex %" PRIu64 " must be a non-zero multiple of 3 up to %d",
            n, RTP_GS_MESH_MAX_INDICES);
    m->num_indices = (size_t)n;
    for (size_t i = 0; i < m->num_indices; i++) {
        uint64_t ix;
        TRY(get_varuint(r, &ix, "trianglesIndex", err));
        if (ix >= m->num_vertices)
            return xg_error_set(err, -EPROTO,
                                "trianglesIndex[%zu] = %" PRIu64 " is not below numVertices %zu", i,
                                ix, m->num_vertices);
        s->indices[i] = (uint32_t)ix;
    }
    m->indices = s->indices;
    return 0;
}

static int decode_body(struct xg_reader *r, struct rtp_gs_object *o, struct rtp_gs_mesh_scratch *s,
                       struct xg_error *err)
{
    switch (o->type) {
    case RTP_GS_HEAD1: {
        struct rtp_gs_head1 *h = &o->u.head1;
        TRY(get_varuint(r, &h->object_id, "objectID", err));
        TRY(get_time(r, &h->time, "time (Time1)", err));
        TRY(get_loc2(r, &h->loc, "loc (Loc2)", err));
        TRY(get_rot2(r, &h->rot, err));
        if (peek_sub_tag(r, &o->gse_tag) == RTP_GS_TAG_HEAD_IPD1) {
            struct xg_reader sub;
            TRY(get_sub_tlv(r, &sub, "HeadIPD1", err));
            TRY(need(&sub, 2, "HeadIPD1 IPD (Float16)", err));
            h->ipd = xg_read_bef16(&sub);
            h->has_ipd = true;
        }
        return 0;
    }
    case RTP_GS_HAND1:
    case RTP_GS_HAND2: {
        /* Hand2 is Hand1's fields followed by the 25 joints. */
        uint64_t id;
        uint16_t t;
        bool left;
        struct rtp_gs_loc2 loc;
        struct rtp_gs_rot2 rot;
        TRY(get_varuint(r, &id, "objectID", err));
        TRY(get_time(r, &t, "time (Time1)", err));
        TRY(get_bool(r, &left, "left", err));
        TRY(get_loc2(r, &loc, "loc (Loc2)", err));
        TRY(get_rot2(r, &rot, err));
        if (o->type == RTP_GS_HAND1) {
            o->u.hand1 = (struct rtp_gs_hand1){id, t, left, loc, rot};
            return 0;
        }
        struct rtp_gs_hand2 *h = &o->u.hand2;
        h->object_id = id;
        h->time = t;
        h->left = left;
        h->loc = loc;
        h->rot = rot;
        TRY(need(r, RTP_GS_HAND2_JOINTS * 6, "joints (25 x Transform1)", err));
        for (size_t j = 0; j < RTP_GS_HAND2_JOINTS; j++)
            get_f16x(r, h->joints[j], 3);
        return 0;
    }
    case RTP_GS_OBJECT1: {
        struct rtp_gs_object1 *b = &o->u.object1;
        TRY(get_varuint(r, &b->object_id, "objectID", err));
        TRY(get_time(r, &b->time, "time (Time1)", err));
        TRY(need(r, 12 + 6 + 2, "loc/rot/scale (Loc1 Rot1 Scale1)", err));
        get_f32x(r, b->loc, 3);
        get_f16x(r, b->rot, 3);
        b->scale = xg_read_bef16(r);
        TRY(get_bool(r, &b->active, "active", err));
        return get_parent(r, &b->has_parent, &b->parent_id, err);
    }
    case RTP_GS_OBJECT2: {
        struct rtp_gs_object2 *b = &o->u.object2;
        TRY(get_varuint(r, &b->object_id, "objectID", err));
        TRY(get_time(r, &b->time, "time (Time1)", err));
        TRY(get_loc2(r, &b->loc, "loc (Loc2)", err));
        TRY(get_rot2(r, &b->rot, err));
        TRY(get_loc2(r, &b->scale, "scale (Scale2)", err));
        TRY(get_bool(r, &b->active, "active", err));
        return get_parent(r, &b->has_parent, &b->parent_id, err);
    }
    case RTP_GS_MESH1:
        TRY(get_varuint(r, &o->u.mesh1.object_id, "objectID", err));
        return decode_mesh1(r, &o->u.mesh1, s, err);
    case RTP_GS_MESH2: {
        struct rtp_gs_mesh2 *m = &o->u.mesh2;
        TRY(get_varuint(r, &m->object_id, "objectID", err));
        TRY(get_loc2(r, &m->loc, "loc (Loc2)", err));
        TRY(get_rot2(r, &m->rot, err));
        TRY(get_loc2(r, &m->scale, "scale (Scale2)", err));
        TRY(get_string(r, &m->mesh_url, "mesh URL", err));
        TRY(get_texture(r, &m->texture, &m->texture_url, &m->texture_pt, true, err));
        return get_parent(r, &m->has_parent, &m->parent_id, err);
    }
    case RTP_GS_THREEDOF1: {
        struct rtp_gs_threedof1 *t = &o->u.threedof1;
        TRY(get_varuint(r, &t->object_id, "objectID", err));
        TRY(get_time(r, &t->time, "time (Time1)", err));
        TRY(get_bool(r, &t->left, "isLeft", err));
        return get_rot2(r, &t->rot, err);
    }
    case RTP_GS_SIXDOF1: {
        struct rtp_gs_sixdof1 *x = &o->u.sixdof1;
        TRY(get_varuint(r, &x->object_id, "objectID", err));
        TRY(get_time(r, &x->time, "time (Time1)", err));
        TRY(get_bool(r, &x->left, "isLeft", err));
        TRY(get_loc2(r, &x->loc, "loc (Loc2)", err));
        TRY(get_rot2(r, &x->rot, err));
        if (peek_sub_tag(r, &o->gse_tag) == RTP_GS_TAG_6DOF_POINTER1) {
            TRY(need(r, 12, "6DOFpointer1 (Loc1)", err));
            get_f32x(r, x->pointer, 3);
            x->has_pointer = true;
        }
        return 0;
    }
    case RTP_GS_GAME_CONTROL1: {
        struct rtp_gs_game_control1 *g = &o->u.game_control1;
        TRY(get_varuint(r, &g->object_id, "objectID", err));
        TRY(get_time(r, &g->time, "time (Time1)", err));
        int rc = rtp_gs_read_varint(r, &g->buttons, "buttons", err);
        if (rc) {
            if (err) err->code = -EPROTO;
            return -EPROTO;
        }
        TRY(get_time(r, &g->buttons_changed, "buttonsChanged (Time1)", err));
        TRY(need(r, 8, "sticks (4 x Float16)", err));
        g->left_x = xg_read_bef16(r);
        g->left_y = xg_read_bef16(r);
        g->right_x = xg_read_bef16(r);
        g->right_y = xg_read_bef16(r);
        return 0;
    }
    case RTP_GS_UNKNOWN:
    default:
        return xg_error_set(err, -EINVAL, "internal: no decoder for type %d", (int)o->type);
    }
}

void rtp_gs_iter_init(struct rtp_gs_iter *it, const void *payload, size_t len)
{
    xg_reader_init(&it->r, payload, len);
    it->done = false;
    it->objects = it->unknown = it->dropped = it->gse_tags = 0;
}

static int framing_error(struct rtp_gs_iter *it, size_t at, struct xg_error *err)
{
    size_t discarded = it->r.len - at;
    it->done = true;
    it->r.off = it->r.len;
    if (err) err->code = -EBADMSG;
    xg_error_prefix(err, "payload offset %zu: framing broken, %zu bytes discarded: ", at,
                    discarded);
    return -EBADMSG;
}

int rtp_gs_iter_next(struct rtp_gs_iter *it, struct rtp_gs_object *obj, struct xg_error *err)
{
    memset(obj, 0, sizeof *obj);
    if (it->done || xg_reader_left(&it->r) == 0) {
        it->done = true;
        return RTP_GS_END;
    }
    const size_t at = it->r.off;
    uint64_t tag, len;
    if (rtp_gs_read_varuint(&it->r, &tag, "Tag", err)) return framing_error(it, at, err);
    if (tag == RTP_GS_TAG_INVALID) {
        xg_error_set(err, -EBADMSG, "Tag 0 (tagInvalid)");
        return framing_error(it, at, err);
    }
    bool gse = false;
    tag = rtp_gs_map_gse_tag(tag, &gse);
    if (rtp_gs_read_varuint(&it->r, &len, "Length", err)) return framing_error(it, at, err);
    if (len == 0 || len > xg_reader_left(&it->r)) {
        xg_error_set(err, -EBADMSG, "tag %" PRIu64 " Length %" PRIu64 " is %s (%zu bytes left)",
                     tag, len, len == 0 ? "zero" : "past the end", xg_reader_left(&it->r));
        return framing_error(it, at, err);
    }
    struct xg_reader body;
    xg_read_sub(&it->r, (size_t)len, &body); /* always resume after Length */
    obj->tag = tag;
    obj->gse_tag = gse;
    obj->type = rtp_gs_type_of_tag(tag);
    if (gse) it->gse_tags++;
    if (obj->type == RTP_GS_UNKNOWN) {
        obj->u.unknown.ptr = body.buf;
        obj->u.unknown.len = body.len;
        it->unknown++;
        return RTP_GS_OBJECT;
    }
    int rc = decode_body(&body, obj, &it->scratch, err);
    if (obj->gse_tag && !gse) it->gse_tags++; /* a sub-TLV (HeadIPD1, 6DOFpointer1) in gse form */
    if (rc) {
        enum rtp_gs_type type = obj->type;
        memset(&obj->u, 0, sizeof obj->u);
        obj->type = type;
        it->dropped++;
        if (err) err->code = -EPROTO;
        xg_error_prefix(err,
                        "%s (tag %" PRIu64 ") at payload offset %zu, Length %" PRIu64
                        ": malformed, dropped: ",
                        rtp_gs_type_name(type), tag, at, len);
        return -EPROTO;
    }
    it->objects++;
    return RTP_GS_OBJECT;
}

int rtp_gs_decode_one(struct rtp_gs_iter *it, const void *buf, size_t len,
                      struct rtp_gs_object *obj, struct xg_error *err)
{
    rtp_gs_iter_init(it, buf, len);
    int rc = rtp_gs_iter_next(it, obj, err);
    if (rc < 0) return rc;
    if (rc == RTP_GS_END) return xg_error_set(err, -EBADMSG, "empty buffer: no object");
    if (xg_reader_left(&it->r))
        return xg_error_set(err, -EBADMSG, "%zu trailing bytes after the %s object",
                            xg_reader_left(&it->r), rtp_gs_type_name(obj->type));
    return 0;
}
