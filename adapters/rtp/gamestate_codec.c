/* Game state over RTP: payload codec. See gamestate_codec.h and
 * draft-jennings-dispatch-game-state-over-rtp-01 (§5.4 VarUInt/VarInt, the object layouts). */
#include "adapters/rtp/gamestate_codec.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/clock.h"
#include "core/float16.h"

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_) return rc_;                                                                       \
    } while (0)

/* ---- VarUInt / VarInt (wire-rules §4) ---- */

size_t rtp_gs_varuint_size(uint64_t v)
{
    if (v < 0x80) return 1;
    if (v < 0x4000) return 2;
    if (v < 0x200000) return 3;
    if (v <= UINT32_MAX) return 5;
    return 9;
}

size_t rtp_gs_varint_size(int64_t v)
{
    if (v >= -64 && v <= 63) return 1;
    if (v >= -8192 && v <= 8191) return 2;
    if (v >= -1048576 && v <= 1048575) return 3;
    if (v >= INT32_MIN && v <= INT32_MAX) return 5;
    return 9;
}

int rtp_gs_write_varuint(struct xg_writer *w, uint64_t v)
{
    switch (rtp_gs_varuint_size(v)) {
    case 1:
        return xg_write_u8(w, (uint8_t)v);
    case 2:
        return xg_write_be16(w, (uint16_t)(0x8000u | v));
    case 3: {
        uint8_t *p = xg_write_reserve(w, 3);
        if (!p) return w->err;
        p[0] = (uint8_t)(0xC0u | (v >> 16));
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)v;
        return 0;
    }
    case 5: {
        uint8_t *p = xg_write_reserve(w, 5);
        if (!p) return w->err;
        p[0] = 0xE1;
        xg_store_be32(p + 1, (uint32_t)v);
        return 0;
    }
    default: {
        uint8_t *p = xg_write_reserve(w, 9);
        if (!p) return w->err;
        p[0] = 0xE2;
        xg_store_be32(p + 1, (uint32_t)(v >> 32));
        xg_store_be32(p + 5, (uint32_t)v);
        return 0;
    }
    }
}

int rtp_gs_write_varint(struct xg_writer *w, int64_t v)
{
    uint64_t u = (uint64_t)v; /* two's complement bits */
    switch (rtp_gs_varint_size(v)) {
    case 1:
        return xg_write_u8(w, (uint8_t)(u & 0x7Fu));
    case 2:
        return xg_write_be16(w, (uint16_t)(0x8000u | (u & 0x3FFFu)));
    case 3: {
        uint8_t *p = xg_write_reserve(w, 3);
        if (!p) return w->err;
        p[0] = (uint8_t)(0xC0u | ((u >> 16) & 0x1Fu));
        p[1] = (uint8_t)(u >> 8);
        p[2] = (uint8_t)u;
        return 0;
    }
    case 5: {
        uint8_t *p = xg_write_reserve(w, 5);
        if (!p) return w->err;
        p[0] = 0xE1;
        xg_store_be32(p + 1, (uint32_t)u);
        return 0;
    }
    default: {
        uint8_t *p = xg_write_reserve(w, 9);
        if (!p) return w->err;
        p[0] = 0xE2;
        xg_store_be32(p + 1, (uint32_t)(u >> 32));
        xg_store_be32(p + 5, (uint32_t)u);
        return 0;
    }
    }
}

/* Reads the raw form: *n_extra payload bytes after the first, value bits in *raw (unsigned,
 * not sign-extended). */
static int read_var_raw(struct xg_reader *r, uint64_t *raw, size_t *n_extra, const char *kind,
                        const char *what, struct xg_error *err)
{
    *raw = 0;
    *n_extra = 0;
    size_t at = r->off;
    if (r->err || xg_reader_left(r) < 1)
        return xg_error_set(err, -EMSGSIZE, "%s: %s missing at offset %zu (no bytes left)", what,
                            kind, at);
    const uint8_t b0 = r->buf[r->off];
    size_t n;
    uint64_t v;
    if (b0 < 0x80) {
        n = 0;
        v = b0;
    } else if ((b0 & 0xC0) == 0x80) {
        n = 1;
        v = b0 & 0x3Fu;
    } else if ((b0 & 0xE0) == 0xC0) {
        n = 2;
        v = b0 & 0x1Fu;
    } else if (b0 == 0xE1) {
        n = 4;
        v = 0;
    } else if (b0 == 0xE2) {
        n = 8;
        v = 0;
    } else {
        r->off++;
        return xg_error_set(err, -EPROTO,
                            "%s: %s first byte 0x%02X at offset %zu is undefined (E0 and E3-FF "
                            "are not valid forms)",
                            what, kind, b0, at);
    }
    if (xg_reader_left(r) - 1 < n)
        return xg_error_set(err, -EMSGSIZE,
                            "%s: %s first byte 0x%02X at offset %zu needs %zu more bytes, %zu left",
                            what, kind, b0, at, n, xg_reader_left(r) - 1);
    const uint8_t *p = xg_read_bytes(r, n + 1);
    for (size_t i = 1; i <= n; i++)
        v = (v << 8) | p[i];
    *raw = v;
    *n_extra = n;
    return 0;
}

int rtp_gs_read_varuint(struct xg_reader *r, uint64_t *v, const char *what, struct xg_error *err)
{
    size_t n;
    return read_var_raw(r, v, &n, "VarUInt", what, err);
}

int rtp_gs_read_varint(struct xg_reader *r, int64_t *v, const char *what, struct xg_error *err)
{
    uint64_t raw;
    size_t n;
    *v = 0;
    TRY(read_var_raw(r, &raw, &n, "VarInt", what, err));
    switch (n) {
    case 0: /* 7-bit signed */
        *v = (raw & 0x40u) ? (int64_t)raw - 0x80 : (int64_t)raw;
        break;
    case 1: /* 14-bit signed */
        *v = (raw & 0x2000u) ? (int64_t)raw - 0x4000 : (int64_t)raw;
        break;
    case 2: /* 21-bit signed */
        *v = (raw & 0x100000u) ? (int64_t)raw - 0x200000 : (int64_t)raw;
        break;
    case 4:
        *v = (int32_t)(uint32_t)raw;
        break;
    default: {
        int64_t s;
        memcpy(&s, &raw, sizeof s); /* two's complement reinterpretation, no UB */
        *v = s;
        break;
    }
    }
    return 0;
}

/* ---- Other primitives ---- */

uint16_t rtp_gs_f16_bits(float f)
{
    if (isnan(f)) return 0x7E00; /* wire-rules §5.1 */
    return xg_f16_from_float(f);
}

int rtp_gs_write_f16(struct xg_writer *w, float f)
{
    return xg_write_be16(w, rtp_gs_f16_bits(f));
}

int rtp_gs_read_bool(struct xg_reader *r, bool *v, const char *what, struct xg_error *err)
{
    *v = false;
    size_t at = r->off;
    if (xg_reader_left(r) < 1)
        return xg_error_set(err, -EMSGSIZE, "%s: Boolean missing at offset %zu", what, at);
    uint8_t b = xg_read_u8(r);
    if (b > 1)
        return xg_error_set(err, -EPROTO, "%s: Boolean 0x%02X at offset %zu is neither 00 nor 01",
                            what, b, at);
    *v = b == 1;
    return 0;
}

/* Strict UTF-8 (RFC 3629): no overlongs, no surrogates, <= U+10FFFF. Returns the offset of the
 * first bad byte, or len when valid. */
static size_t utf8_bad_at(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        size_t n;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1;
            cp = c & 0x1Fu;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2;
            cp = c & 0x0Fu;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3;
            cp = c & 0x07u;
            min = 0x10000;
        } else {
            return i;
        }
        if (len - i - 1 < n) return i;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += n + 1;
    }
    return len;
}

int rtp_gs_write_bytes(struct xg_writer *w, const void *p, size_t len, struct xg_error *err)
{
    if (len > RTP_GS_MAX_STRING)
        return xg_error_set(err, -EINVAL, "String/Blob of %zu bytes exceeds the maximum %d", len,
                            RTP_GS_MAX_STRING);
    if (len && !p) return xg_error_set(err, -EINVAL, "String/Blob of %zu bytes has no data", len);
    rtp_gs_write_varuint(w, len);
    if (len) xg_write_bytes(w, p, len);
    return w->err;
}

int rtp_gs_read_bytes(struct xg_reader *r, struct rtp_gs_bytes *out, size_t max, bool utf8,
                      const char *what, struct xg_error *err)
{
    out->ptr = NULL;
    out->len = 0;
    uint64_t n;
    size_t at = r->off;
    TRY(rtp_gs_read_varuint(r, &n, what, err));
    if (n > max)
        return xg_error_set(err, -EPROTO, "%s: length %" PRIu64 " at offset %zu exceeds %zu", what,
                            n, at, max);
    if (n > xg_reader_left(r))
        return xg_error_set(err, -EMSGSIZE, "%s: length %" PRIu64 " at offset %zu but %zu left",
                            what, n, at, xg_reader_left(r));
    const uint8_t *p = xg_read_bytes(r, (size_t)n);
    if (utf8) {
        size_t bad = utf8_bad_at(p, (size_t)n);
        if (bad != n)
            return xg_error_set(err, -EPROTO, "%s: invalid UTF-8 at byte %zu (0x%02X)", what, bad,
                                p[bad]);
    }
    out->ptr = p;
    out->len = (size_t)n;
    return 0;
}

uint16_t rtp_gs_time1_from_wall_ns(int64_t wall_ns)
{
    return xg_ns_to_ms16(wall_ns);
}

struct xg_quat rtp_gs_quat_from_ijk(const float ijk[3])
{
    double x = ijk[0], y = ijk[1], z = ijk[2];
    double ww = 1.0 - x * x - y * y - z * z;
    return (struct xg_quat){x, y, z, ww > 0.0 ? sqrt(ww) : 0.0};
}

void rtp_gs_ijk_from_quat(struct xg_quat q, float ijk[3])
{
    double s = q.w < 0.0 ? -1.0 : 1.0;
    ijk[0] = (float)(s * q.x);
    ijk[1] = (float)(s * q.y);
    ijk[2] = (float)(s * q.z);
}

/* ---- Type table ---- */

static const struct {
    enum rtp_gs_type type;
    uint64_t tag;
    const char *name;
} type_table[] = {
    {RTP_GS_HEAD1, RTP_GS_TAG_HEAD1, "Head1"},
    {RTP_GS_HAND1, RTP_GS_TAG_HAND1, "Hand1"},
    {RTP_GS_HAND2, RTP_GS_TAG_HAND2, "Hand2"},
    {RTP_GS_OBJECT1, RTP_GS_TAG_OBJECT1, "Object1"},
    {RTP_GS_OBJECT2, RTP_GS_TAG_OBJECT2, "Object2"},
    {RTP_GS_MESH1, RTP_GS_TAG_MESH1, "Mesh1"},
    {RTP_GS_MESH2, RTP_GS_TAG_MESH2, "Mesh2"},
    {RTP_GS_THREEDOF1, RTP_GS_TAG_3DOF1, "ThreeDOF1"},
    {RTP_GS_SIXDOF1, RTP_GS_TAG_6DOF1, "SixDOF1"},
    {RTP_GS_GAME_CONTROL1, RTP_GS_TAG_GAME_CONTROL1, "GameControl1"},
};
#define N_TYPES (sizeof type_table / sizeof type_table[0])

const char *rtp_gs_type_name(enum rtp_gs_type t)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (type_table[i].type == t) return type_table[i].name;
    return "unknown";
}

uint64_t rtp_gs_type_tag(enum rtp_gs_type t)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (type_table[i].type == t) return type_table[i].tag;
    return 0;
}

static enum rtp_gs_type type_of_tag(uint64_t tag)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (type_table[i].tag == tag) return type_table[i].type;
    return RTP_GS_UNKNOWN;
}

/* D1: 0x8000+n (n = 0..8) → 128+n. */
static uint64_t map_gse_tag(uint64_t tag, bool *gse)
{
    if (tag >= RTP_GS_TAG_GSE_BASE && tag <= RTP_GS_TAG_GSE_BASE + 8) {
        *gse = true;
        return 128 + (tag - RTP_GS_TAG_GSE_BASE);
    }
    return tag;
}

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
    if (b->len && utf8_bad_at(b->ptr, b->len) != b->len)
        return xg_error_set(err, -EINVAL, "%s is not valid UTF-8 (byte %zu)", what,
                            utf8_bad_at(b->ptr, b->len));
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
    tag = map_gse_tag(tag, &gse);
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
    tag = map_gse_tag(tag, &gse);
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
    obj->type = type_of_tag(tag);
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
