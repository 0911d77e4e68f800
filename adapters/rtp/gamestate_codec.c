/* Game state over RTP: payload codec primitives (VarUInt/VarInt, Float16, strings, Time1) and
 * the object type table; objects are encoded in gamestate_encode.c and decoded in
 * gamestate_decode.c. See gamestate_codec.h and draft-jennings-dispatch-game-state-over-rtp-01
 * (§5.4 VarUInt/VarInt, the object layouts). */
#include "adapters/rtp/gamestate_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/clock/clock.h"
#include "core/util/float16.h"

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
size_t rtp_gs_utf8_bad_at(const uint8_t *s, size_t len)
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
        size_t bad = rtp_gs_utf8_bad_at(p, (size_t)n);
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

enum rtp_gs_type rtp_gs_type_of_tag(uint64_t tag)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (type_table[i].tag == tag) return type_table[i].type;
    return RTP_GS_UNKNOWN;
}

/* D1: 0x8000+n (n = 0..8) → 128+n. */
uint64_t rtp_gs_map_gse_tag(uint64_t tag, bool *gse)
{
    if (tag >= RTP_GS_TAG_GSE_BASE && tag <= RTP_GS_TAG_GSE_BASE + 8) {
        *gse = true;
        return 128 + (tag - RTP_GS_TAG_GSE_BASE);
    }
    return tag;
}
