/* Game state over RTP: object encoder (validation, then the body and its TLV framing). See
 * gamestate_codec.h and draft-jennings-dispatch-game-state-over-rtp-01 (the object layouts). */
#include "adapters/rtp/gamestate_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/clock/clock.h"
#include "core/util/float16.h"

/* ---- Encoding ---- */

static void put_f32x(struct xg_writer *w, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        xg_write_bef32(w, v[i]);
}

static void put_f16x(struct xg_writer *w, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rtp_gs_write_f16(w, v[i]);
}

static void put_loc2(struct xg_writer *w, const struct rtp_gs_loc2 *l)
{
    put_f32x(w, l->p, 3);
    put_f16x(w, l->v, 3);
}

static void put_rot2(struct xg_writer *w, const struct rtp_gs_rot2 *r)
{
    put_f16x(w, r->s, 3);
    put_f16x(w, r->e, 3);
}

static void put_bool(struct xg_writer *w, bool b)
{
    xg_write_u8(w, b ? 1 : 0);
}

static void put_parent(struct xg_writer *w, bool has, uint64_t id)
{
    if (!has) return;
    rtp_gs_write_varuint(w, RTP_GS_TAG_PARENT1);
    rtp_gs_write_varuint(w, rtp_gs_varuint_size(id));
    rtp_gs_write_varuint(w, id);
}

static int check_str(const struct rtp_gs_bytes *b, const char *what, struct xg_error *err)
{
    if (b->len > RTP_GS_MAX_STRING)
        return xg_error_set(err, -EINVAL, "%s of %zu bytes exceeds the maximum %d", what, b->len,
                            RTP_GS_MAX_STRING);
    if (b->len && !b->ptr)
        return xg_error_set(err, -EINVAL, "%s of %zu bytes has no data", what, b->len);
    if (b->len && rtp_gs_utf8_bad_at(b->ptr, b->len) != b->len)
        return xg_error_set(err, -EINVAL, "%s is not valid UTF-8 (byte %zu)", what,
                            rtp_gs_utf8_bad_at(b->ptr, b->len));
    return 0;
}

static int check_mesh1(const struct rtp_gs_mesh1 *m, struct xg_error *err)
{
    if (m->texture != RTP_GS_TEXTURE_URL && m->texture != RTP_GS_TEXTURE_RTP_PT)
        return xg_error_set(err, -EINVAL, "Mesh1 texture selector %u must be 1 (URL) or 2 (RTP PT)",
                            m->texture);
    if (m->texture == RTP_GS_TEXTURE_URL) TRY(check_str(&m->texture_url, "Mesh1 texture URL", err));
    if (m->num_vertices < 3 || m->num_vertices > RTP_GS_MESH_MAX_VERTICES || !m->vertices)
        return xg_error_set(err, -EINVAL, "Mesh1 numVertices %zu must be 3..%d", m->num_vertices,
                            RTP_GS_MESH_MAX_VERTICES);
    if ((m->num_normals != 0 && m->num_normals != m->num_vertices) ||
        (m->num_normals && !m->normals))
        return xg_error_set(err, -EINVAL, "Mesh1 numNormals %zu must be 0 or numVertices %zu",
                            m->num_normals, m->num_vertices);
    if ((m->num_uv != 0 && m->num_uv != m->num_vertices) || (m->num_uv && !m->uv))
        return xg_error_set(err, -EINVAL, "Mesh1 numTextureCoord %zu must be 0 or numVertices %zu",
                            m->num_uv, m->num_vertices);
    if (m->num_indices == 0 || m->num_indices % 3 || m->num_indices > RTP_GS_MESH_MAX_INDICES ||
        !m->indices)
        return xg_error_set(err, -EINVAL,
                            "Mesh1 numTrianglesIndex %zu must be a non-zero multiple of 3 up to %d",
                            m->num_indices, RTP_GS_MESH_MAX_INDICES);
    for (size_t i = 0; i < m->num_indices; i++)
        if (m->indices[i] >= m->num_vertices)
            return xg_error_set(err, -EINVAL, "Mesh1 index[%zu] = %u is not below numVertices %zu",
                                i, m->indices[i], m->num_vertices);
    return 0;
}

static int check_texture(uint8_t sel, const struct rtp_gs_bytes *url, const char *what,
                         struct xg_error *err)
{
    if (sel > RTP_GS_TEXTURE_RTP_PT)
        return xg_error_set(err, -EINVAL, "%s texture selector %u must be 0, 1 or 2", what, sel);
    if (sel == RTP_GS_TEXTURE_URL) return check_str(url, "texture URL", err);
    return 0;
}

/* A String already checked by check_str. */
static void put_str(struct xg_writer *w, const struct rtp_gs_bytes *s)
{
    rtp_gs_write_varuint(w, s->len);
    if (s->len) xg_write_bytes(w, s->ptr, s->len);
}

static void put_texture(struct xg_writer *w, uint8_t sel, const struct rtp_gs_bytes *url,
                        uint8_t pt)
{
    if (sel == RTP_GS_TEXTURE_URL) {
        put_str(w, url);
    } else if (sel == RTP_GS_TEXTURE_RTP_PT) {
        xg_write_u8(w, pt);
    }
}

/* Validates, then writes the body. Writer errors are sticky and checked by the caller. */
static int encode_body(struct xg_writer *w, const struct rtp_gs_object *o, struct xg_error *err)
{
    switch (o->type) {
    case RTP_GS_HEAD1: {
        const struct rtp_gs_head1 *h = &o->u.head1;
        rtp_gs_write_varuint(w, h->object_id);
        xg_write_be16(w, h->time);
        put_loc2(w, &h->loc);
        put_rot2(w, &h->rot);
        if (h->has_ipd) {
            rtp_gs_write_varuint(w, RTP_GS_TAG_HEAD_IPD1);
            rtp_gs_write_varuint(w, 2);
            rtp_gs_write_f16(w, h->ipd);
        }
        return 0;
    }
    case RTP_GS_HAND1: {
        const struct rtp_gs_hand1 *h = &o->u.hand1;
        rtp_gs_write_varuint(w, h->object_id);
        xg_write_be16(w, h->time);
        put_bool(w, h->left);
        put_loc2(w, &h->loc);
        put_rot2(w, &h->rot);
        return 0;
    }
    case RTP_GS_HAND2: {
        const struct rtp_gs_hand2 *h = &o->u.hand2;
        rtp_gs_write_varuint(w, h->object_id);
        xg_write_be16(w, h->time);
        put_bool(w, h->left);
        put_loc2(w, &h->loc);
        put_rot2(w, &h->rot);
        for (size_t j = 0; j < RTP_GS_HAND2_JOINTS; j++)
            put_f16x(w, h->joints[j], 3);
        return 0;
    }
    case RTP_GS_OBJECT1: {
        const struct rtp_gs_object1 *b = &o->u.object1;
        rtp_gs_write_varuint(w, b->object_id);
        xg_write_be16(w, b->time);
        put_f32x(w, b->loc, 3);
        put_f16x(w, b->rot, 3);
        rtp_gs_write_f16(w, b->scale);
        put_bool(w, b->active);
        put_parent(w, b->has_parent, b->parent_id);
        return 0;
    }
    case RTP_GS_OBJECT2: {
        const struct rtp_gs_object2 *b = &o->u.object2;
        rtp_gs_write_varuint(w, b->object_id);
        xg_write_be16(w, b->time);
        put_loc2(w, &b->loc);
        put_rot2(w, &b->rot);
        put_loc2(w, &b->scale);
        put_bool(w, b->active);
        put_parent(w, b->has_parent, b->parent_id);
        return 0;
    }
    case RTP_GS_MESH1: {
        const struct rtp_gs_mesh1 *m = &o->u.mesh1;
        TRY(check_mesh1(m, err));
        rtp_gs_write_varuint(w, m->object_id);
        xg_write_u8(w, m->texture);
        put_texture(w, m->texture, &m->texture_url, m->texture_pt);
        rtp_gs_write_varuint(w, m->num_vertices);
        for (size_t i = 0; i < m->num_vertices; i++)
            put_f32x(w, m->vertices[i], 3);
        rtp_gs_write_varuint(w, m->num_normals);
        for (size_t i = 0; i < m->num_normals; i++)
            put_f16x(w, m->normals[i], 3);
        rtp_gs_write_varuint(w, m->num_uv);
        for (size_t i = 0; i < m->num_uv; i++)
            put_f32x(w, m->uv[i], 2);
        rtp_gs_write_varuint(w, m->num_indices);
        for (size_t i = 0; i < m->num_indices; i++)
            rtp_gs_write_varuint(w, m->indices[i]);
        return 0;
    }
    case RTP_GS_MESH2: {
        const struct rtp_gs_mesh2 *m = &o->u.mesh2;
        TRY(check_str(&m->mesh_url, "Mesh2 mesh URL", err));
        TRY(check_texture(m->texture, &m->texture_url, "Mesh2", err));
        rtp_gs_write_varuint(w, m->object_id);
        put_loc2(w, &m->loc);
        put_rot2(w, &m->rot);
        put_loc2(w, &m->scale);
        put_str(w, &m->mesh_url);
        xg_write_u8(w, m->texture);
        put_texture(w, m->texture, &m->texture_url, m->texture_pt);
        put_parent(w, m->has_parent, m->parent_id);
        return 0;
    }
    case RTP_GS_THREEDOF1: {
        const struct rtp_gs_threedof1 *t = &o->u.threedof1;
        rtp_gs_write_varuint(w, t->object_id);
        xg_write_be16(w, t->time);
        put_bool(w, t->left);
        put_rot2(w, &t->rot);
        return 0;
    }
    case RTP_GS_SIXDOF1: {
        const struct rtp_gs_sixdof1 *s = &o->u.sixdof1;
        rtp_gs_write_varuint(w, s->object_id);
        xg_write_be16(w, s->time);
        put_bool(w, s->left);
        put_loc2(w, &s->loc);
        put_rot2(w, &s->rot);
        if (s->has_pointer) {
            rtp_gs_write_varuint(w, RTP_GS_TAG_6DOF_POINTER1); /* no Length (D5) */
            put_f32x(w, s->pointer, 3);
        }
        return 0;
    }
    case RTP_GS_GAME_CONTROL1: {
        const struct rtp_gs_game_control1 *g = &o->u.game_control1;
        rtp_gs_write_varuint(w, g->object_id);
        xg_write_be16(w, g->time);
        rtp_gs_write_varint(w, g->buttons);
        xg_write_be16(w, g->buttons_changed);
        rtp_gs_write_f16(w, g->left_x);
        rtp_gs_write_f16(w, g->left_y);
        rtp_gs_write_f16(w, g->right_x);
        rtp_gs_write_f16(w, g->right_y);
        return 0;
    }
    case RTP_GS_UNKNOWN:
    default:
        return xg_error_set(err, -EINVAL, "cannot encode object of type %d (tag %" PRIu64 ")",
                            (int)o->type, o->tag);
    }
}

int rtp_gs_encode_object(struct xg_writer *w, const struct rtp_gs_object *obj, struct xg_error *err)
{
    const size_t start = w->len;
    const int saved_err = w->err;
    if (w->err) return xg_error_set(err, w->err, "writer already failed (%d)", w->err);
    const uint64_t tag = rtp_gs_type_tag(obj->type);
    rtp_gs_write_varuint(w, tag);
    const size_t len_at = w->len;
    xg_write_u8(w, 0); /* Length placeholder, 1 byte; widened below when needed */
    const size_t body_at = w->len;
    int rc = w->err ? w->err : encode_body(w, obj, err);
    if (!rc) rc = w->err;
    size_t body_len = 0, extra = 0;
    if (!rc) {
        body_len = w->len - body_at;
        extra = rtp_gs_varuint_size(body_len) - 1;
        if (extra > w->cap - w->len) rc = -EMSGSIZE;
    }
    if (rc) {
        w->len = start;
        w->err = saved_err;
        if (rc == -EMSGSIZE)
            return xg_error_set(err, rc, "%s object does not fit in the %zu bytes left",
                                rtp_gs_type_name(obj->type), w->cap - start);
        return rc;
    }
    if (extra) memmove(w->buf + body_at + extra, w->buf + body_at, body_len);
    w->len += extra;
    struct xg_writer lw;
    xg_writer_init(&lw, w->buf + len_at, extra + 1);
    rtp_gs_write_varuint(&lw, body_len);
    return 0;
}
