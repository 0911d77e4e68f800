/* LESS codec: the arena and the base encodings (INTEGER, STRING, type descriptors, values and
 * variants). Schemas and messages are in less_msg.c; framing, signatures and the ack window in
 * less_frame.c. See less_codec.h. */
#include "adapters/less/less_codec_priv.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Arena                                                                                       */

void less_arena_init(struct less_arena *a, void *buf, size_t cap)
{
    a->buf = (uint8_t *)buf;
    a->cap = cap;
    a->used = 0;
}

void *less_arena_alloc(struct less_arena *a, size_t n)
{
    const size_t al = alignof(max_align_t);
    uintptr_t base = (uintptr_t)a->buf;
    uintptr_t at = (base + a->used + al - 1) & ~(uintptr_t)(al - 1);
    size_t off = (size_t)(at - base);
    if (off > a->cap || n > a->cap - off) return NULL;
    a->used = off + n;
    return a->buf + off;
}

void *less_arena_array(struct less_arena *a, size_t count, size_t size, const char *what,
                       struct xg_error *err, int *rc)
{
    if (count == 0) {
        *rc = 0;
        return a->buf; /* any non-NULL pointer: zero items are never read */
    }
    void *p = count > SIZE_MAX / size ? NULL : less_arena_alloc(a, count * size);
    if (!p)
        *rc = xg_error_set(err, -ENOBUFS, "LESS %s: decode arena full (%zu items of %zu bytes)",
                           what, count, size);
    else
        *rc = 0;
    return p;
}

/* ------------------------------------------------------------------------------------------ */
/* INTEGER                                                                                     */

static int put_raw(struct xg_writer *w, uint8_t flag, uint64_t v)
{
    uint8_t tmp[LESS_INT_MAX_BYTES];
    size_t n = 0;
    if (flag != 0) {
        tmp[n++] = (uint8_t)(flag | (v & 0x3f));
        v >>= 6;
    }
    while (v > 0x7f) {
        tmp[n++] = (uint8_t)(0x80 | (v & 0x7f));
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    return xg_write_bytes(w, tmp, n);
}

int less_put_int(struct xg_writer *w, int64_t v)
{
    if (v > 127) return put_raw(w, 0x80, (uint64_t)v);
    if (v < 0) return put_raw(w, 0xC0, (uint64_t)~v);
    return put_raw(w, 0, (uint64_t)v);
}

int less_put_uint(struct xg_writer *w, uint64_t v)
{
    return put_raw(w, v > 127 ? 0x80 : 0, v);
}

static size_t raw_size(bool flagged, uint64_t v)
{
    size_t n = 1;
    if (flagged) {
        n++;
        v >>= 6;
    }
    while (v > 0x7f) {
        n++;
        v >>= 7;
    }
    return n;
}

size_t less_int_size(int64_t v)
{
    if (v > 127) return raw_size(true, (uint64_t)v);
    if (v < 0) return raw_size(true, (uint64_t)~v);
    return 1;
}

size_t less_uint_size(uint64_t v)
{
    return v > 127 ? raw_size(true, v) : 1;
}

/* Read the sign flag and magnitude bits of one INTEGER (wire-rules §4.1). */
static int get_raw(struct xg_reader *r, bool *neg, uint64_t *acc, const char *what,
                   struct xg_error *err)
{
    /* the outputs are defined on every path, errors included */
    *neg = false;
    *acc = 0;
    size_t start = r->off;
    size_t left = xg_reader_left(r);
    if (left < 1) {
        r->err = -EMSGSIZE;
        return xg_error_set(err, -EMSGSIZE, "LESS %s: INTEGER truncated at offset %zu", what,
                            start);
    }
    const uint8_t *p = r->buf + r->off;
    uint8_t b = p[0];
    if (!(b & 0x80)) {
        *neg = false;
        *acc = b;
        r->off++;
        return 0;
    }
    bool negative = (b & 0x40) != 0;
    uint64_t v = b & 0x3f;
    unsigned sh = 6;
    size_t i = 1;
    for (;;) {
        if (i >= LESS_INT_MAX_BYTES) {
            r->err = -EPROTO;
            return xg_error_set(err, -EPROTO, "LESS %s: INTEGER at offset %zu longer than %d bytes",
                                what, start, LESS_INT_MAX_BYTES);
        }
        if (i >= left) {
            r->err = -EMSGSIZE;
            return xg_error_set(err, -EMSGSIZE,
                                "LESS %s: INTEGER truncated at offset %zu (%zu bytes left)", what,
                                start, left);
        }
        b = p[i++];
        uint64_t g = b & 0x7f;
        if (sh > 57 && (g >> (64 - sh)) != 0) {
            r->err = -EPROTO;
            return xg_error_set(err, -EPROTO, "LESS %s: INTEGER at offset %zu overflows 64 bits",
                                what, start);
        }
        v |= g << sh;
        sh += 7;
        if (!(b & 0x80)) break;
    }
    r->off += i;
    *neg = negative;
    *acc = v;
    return 0;
}

int less_get_int(struct xg_reader *r, int64_t *out, const char *what, struct xg_error *err)
{
    bool neg;
    uint64_t acc;
    size_t start = r->off;
    *out = 0;
    int rc = get_raw(r, &neg, &acc, what, err);
    if (rc) return rc;
    if (acc > (uint64_t)INT64_MAX) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO,
                            "LESS %s: INTEGER at offset %zu overflows int64 (%s%" PRIu64 ")", what,
                            start, neg ? "~" : "", acc);
    }
    *out = neg ? ~(int64_t)acc : (int64_t)acc;
    return 0;
}

int less_get_uint(struct xg_reader *r, uint64_t *out, const char *what, struct xg_error *err)
{
    bool neg;
    uint64_t acc;
    size_t start = r->off;
    *out = 0;
    int rc = get_raw(r, &neg, &acc, what, err);
    if (rc) return rc;
    if (neg) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO, "LESS %s: negative INTEGER %" PRId64 " at offset %zu",
                            what, acc > (uint64_t)INT64_MAX ? INT64_MIN : ~(int64_t)acc, start);
    }
    *out = acc;
    return 0;
}

/* An unsigned count/length that must not exceed the bytes left (P11) nor `max`. */
int less_get_count(struct xg_reader *r, size_t per_item, uint64_t max, size_t *out,
                   const char *what, struct xg_error *err)
{
    uint64_t v;
    size_t start = r->off;
    int rc = less_get_uint(r, &v, what, err);
    *out = 0;
    if (rc) return rc;
    size_t left = xg_reader_left(r);
    if (v > max || (per_item && v > left / per_item)) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO,
                            "LESS %s: count %" PRIu64 " at offset %zu exceeds %s (%zu bytes left)",
                            what, v, start, v > max ? "the maximum" : "the data", left);
    }
    *out = (size_t)v;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* STRING                                                                                      */

/* Strict UTF-8 (no overlongs, surrogates or > U+10FFFF) and no NUL. Returns the offset of the
 * first bad byte, or len when valid. */
static size_t utf8_check(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        size_t n;
        uint32_t cp, min;
        if (c == 0) return i;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return i;
        }
        if (n > len - i - 1) return i;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += n + 1;
    }
    return len;
}

int less_put_string(struct xg_writer *w, const char *s, size_t len, struct xg_error *err)
{
    size_t bad = utf8_check((const uint8_t *)s, len);
    if (bad != len)
        return xg_error_set(err, -EINVAL, "LESS STRING: %s byte 0x%02x at index %zu",
                            s[bad] ? "invalid UTF-8" : "NUL", (uint8_t)s[bad], bad);
    less_put_uint(w, len);
    for (size_t i = 0; i < len; i++)
        less_put_uint(w, (uint8_t)s[i]);
    if (w->err) return xg_error_set(err, w->err, "LESS STRING: output full (%zu bytes)", w->cap);
    return 0;
}

int less_get_string(struct xg_reader *r, struct less_arena *a, const char **s, size_t *len,
                    struct xg_error *err)
{
    size_t n;
    size_t start = r->off;
    int rc = less_get_count(r, 1, SIZE_MAX - 1, &n, "STRING length", err);
    *s = NULL;
    *len = 0;
    if (rc) return rc;
    char *out = less_arena_alloc(a, n + 1);
    if (!out)
        return xg_error_set(err, -ENOBUFS, "LESS STRING: decode arena full (%zu bytes)", n + 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t c;
        size_t at = r->off;
        rc = less_get_uint(r, &c, "STRING element", err);
        if (rc) return rc;
        if (c > 255) {
            r->err = -EPROTO;
            return xg_error_set(err, -EPROTO,
                                "LESS STRING element %zu: value %" PRIu64 " at offset %zu > 255", i,
                                c, at);
        }
        out[i] = (char)c;
    }
    out[n] = '\0';
    size_t bad = utf8_check((const uint8_t *)out, n);
    if (bad != n) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO, "LESS STRING at offset %zu: %s byte 0x%02x at index %zu",
                            start, out[bad] ? "invalid UTF-8" : "NUL", (uint8_t)out[bad], bad);
    }
    *s = out;
    *len = n;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Types                                                                                       */

const struct less_type less_type_null = {LESS_T_NULL, 0, NULL};
const struct less_type less_type_object_id = {LESS_T_OBJECT_ID, 0, NULL};
const struct less_type less_type_integer = {LESS_T_INTEGER, 0, NULL};
const struct less_type less_type_string = {LESS_T_STRING, 0, NULL};
const struct less_type less_type_float16 = {LESS_T_FLOAT16, 0, NULL};
const struct less_type less_type_float32 = {LESS_T_FLOAT32, 0, NULL};
const struct less_type less_type_float64 = {LESS_T_FLOAT64, 0, NULL};
const struct less_type less_type_variant = {LESS_T_VARIANT, 0, NULL};
const struct less_type less_type_varbin = {LESS_T_VARBIN, 0, NULL};
const struct less_type less_type_uuid = {LESS_T_UUID, 0, NULL};
const struct less_type less_type_vec3f = {LESS_T_VECTOR, 3, &less_type_float32};
const struct less_type less_type_vec4f = {LESS_T_VECTOR, 4, &less_type_float32};

const char *less_type_name(unsigned code)
{
    static const char *const names[] = {"NULL",
                                        "OBJECT-ID",
                                        "INTEGER",
                                        "STRING",
                                        "FLOAT16",
                                        "FLOAT32",
                                        "FLOAT64",
                                        "LIST",
                                        "VECTOR",
                                        "STANDALONE-VARIANT",
                                        "VARIABLE-BINARY",
                                        "FIXED-BINARY",
                                        "UUID"};
    return code < sizeof names / sizeof names[0] ? names[code] : "?";
}

bool less_type_equal(const struct less_type *a, const struct less_type *b)
{
    for (;;) {
        if (a == b) return true;
        if (!a || !b || a->code != b->code) return false;
        if ((a->code == LESS_T_VECTOR || a->code == LESS_T_FIXEDBIN) && a->count != b->count)
            return false;
        if (a->code != LESS_T_LIST && a->code != LESS_T_VECTOR) return true;
        a = a->elem;
        b = b->elem;
    }
}

/* Validate a descriptor (schema or caller supplied). */
int less_check_type(const struct less_type *t, int depth, struct xg_error *err)
{
    if (!t) return xg_error_set(err, -EINVAL, "LESS type: missing descriptor");
    if (depth > LESS_MAX_DEPTH)
        return xg_error_set(err, -EINVAL, "LESS type: nested deeper than %d", LESS_MAX_DEPTH);
    if (t->code > LESS_T_UUID)
        return xg_error_set(err, -EINVAL, "LESS type: unknown type code %u", t->code);
    if ((t->code == LESS_T_VECTOR || t->code == LESS_T_FIXEDBIN) && t->count > LESS_MAX_COUNT)
        return xg_error_set(err, -EINVAL, "LESS type: %s count %" PRIu32 " > %d",
                            less_type_name(t->code), t->count, LESS_MAX_COUNT);
    if (t->code == LESS_T_LIST || t->code == LESS_T_VECTOR)
        return less_check_type(t->elem, depth + 1, err);
    return 0;
}

static int put_type(struct xg_writer *w, const struct less_type *t, struct xg_error *err)
{
    less_put_uint(w, t->code);
    if (t->code == LESS_T_VECTOR || t->code == LESS_T_FIXEDBIN) less_put_uint(w, t->count);
    if (t->code == LESS_T_LIST || t->code == LESS_T_VECTOR) return put_type(w, t->elem, err);
    return 0;
}

int less_put_type(struct xg_writer *w, const struct less_type *t, struct xg_error *err)
{
    int rc = less_check_type(t, 0, err);
    if (rc) return rc;
    put_type(w, t, err);
    if (w->err) return xg_error_set(err, w->err, "LESS type: output full (%zu bytes)", w->cap);
    return 0;
}

static int get_type(struct xg_reader *r, struct less_arena *a, const struct less_type **out,
                    int depth, struct xg_error *err)
{
    *out = NULL; /* defined on every path, errors included */
    uint64_t code;
    size_t start = r->off;
    int rc = less_get_uint(r, &code, "type code", err);
    if (rc) return rc;
    if (code > LESS_T_UUID) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO, "LESS type: unknown type code %" PRIu64 " at offset %zu",
                            code, start);
    }
    if (depth > LESS_MAX_DEPTH) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO, "LESS type at offset %zu: nested deeper than %d", start,
                            LESS_MAX_DEPTH);
    }
    struct less_type *t = less_arena_alloc(a, sizeof *t);
    if (!t) return xg_error_set(err, -ENOBUFS, "LESS type: decode arena full");
    t->code = (uint8_t)code;
    t->count = 0;
    t->elem = NULL;
    if (code == LESS_T_VECTOR || code == LESS_T_FIXEDBIN) {
        size_t n;
        rc = less_get_count(r, 0, LESS_MAX_COUNT, &n,
                            code == LESS_T_VECTOR ? "VECTOR count" : "FIXED-BINARY count", err);
        if (rc) return rc;
        t->count = (uint32_t)n;
    }
    if (code == LESS_T_LIST || code == LESS_T_VECTOR) {
        rc = get_type(r, a, &t->elem, depth + 1, err);
        if (rc) return rc;
    }
    *out = t;
    return 0;
}

int less_get_type(struct xg_reader *r, struct less_arena *a, const struct less_type **out,
                  struct xg_error *err)
{
    *out = NULL;
    return get_type(r, a, out, 0, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Values                                                                                      */

/* Smallest encoding of a value of type t, saturated (used to bound counts against input). */
static size_t min_size(const struct less_type *t)
{
    switch (t->code) {
    case LESS_T_NULL:
        return 0;
    case LESS_T_FLOAT16:
        return 2;
    case LESS_T_FLOAT32:
        return 4;
    case LESS_T_FLOAT64:
        return 8;
    case LESS_T_VARIANT:
        return 2;
    case LESS_T_UUID:
        return 16;
    case LESS_T_FIXEDBIN:
        return t->count;
    case LESS_T_VECTOR: {
        size_t e = min_size(t->elem);
        return e > SIZE_MAX / (t->count ? t->count : 1) ? SIZE_MAX : e * t->count;
    }
    default:
        return 1;
    }
}

/* A finite value clamped to ±max (a float field must not turn a finite number into Inf); NaN and
 * ±Inf are kept (the caller's business). */
static double sat(double x, double max)
{
    return x > max && x < INFINITY ? max : x < -max && x > -INFINITY ? -max : x;
}

int less_put_value_depth(struct xg_writer *w, const struct less_type *t, const struct less_value *v,
                         int depth, struct xg_error *err)
{
    int rc;
    if (depth > LESS_MAX_DEPTH)
        return xg_error_set(err, -EINVAL, "LESS value: nested deeper than %d", LESS_MAX_DEPTH);
    if (v->type && !less_type_equal(v->type, t))
        return xg_error_set(err, -EINVAL, "LESS value: has type %s, expected %s",
                            less_type_name(v->type->code), less_type_name(t->code));
    switch (t->code) {
    case LESS_T_NULL:
        return 0;
    case LESS_T_OBJECT_ID:
    case LESS_T_INTEGER:
        return less_put_int(w, v->u.i);
    case LESS_T_STRING:
        return less_put_string(w, v->u.str.p, v->u.str.len, err);
    case LESS_T_FLOAT16: /* a finite value saturates (65504) instead of becoming Inf */
        return xg_write_lef16(w, (float)sat(v->u.f, 65504.0));
    case LESS_T_FLOAT32:
        return xg_write_lef32(w, (float)sat(v->u.f, FLT_MAX));
    case LESS_T_FLOAT64:
        return xg_write_lef64(w, v->u.f);
    case LESS_T_LIST:
    case LESS_T_VECTOR:
        if (t->code == LESS_T_VECTOR && v->u.list.count != t->count)
            return xg_error_set(err, -EINVAL, "LESS VECTOR: %zu elements, type says %" PRIu32,
                                v->u.list.count, t->count);
        if (t->code == LESS_T_LIST) less_put_uint(w, v->u.list.count);
        for (size_t i = 0; i < v->u.list.count; i++) {
            rc = less_put_value_depth(w, t->elem, &v->u.list.items[i], depth + 1, err);
            if (rc) return rc;
        }
        return 0;
    case LESS_T_VARIANT:
        return less_put_variant_depth(w, v->u.variant, depth + 1, err);
    case LESS_T_VARBIN:
        less_put_uint(w, v->u.bin.len);
        return xg_write_bytes(w, v->u.bin.p, v->u.bin.len);
    case LESS_T_FIXEDBIN:
        if (v->u.bin.len != t->count)
            return xg_error_set(err, -EINVAL, "LESS FIXED-BINARY: %zu bytes, type says %" PRIu32,
                                v->u.bin.len, t->count);
        return xg_write_bytes(w, v->u.bin.p, v->u.bin.len);
    case LESS_T_UUID:
        return xg_write_bytes(w, v->u.uuid, 16);
    default:
        return xg_error_set(err, -EINVAL, "LESS value: unknown type code %u", t->code);
    }
}

int less_put_variant_depth(struct xg_writer *w, const struct less_value *v, int depth,
                           struct xg_error *err)
{
    if (!v || !v->type)
        return xg_error_set(err, -EINVAL, "LESS STANDALONE-VARIANT: value without a type");
    int rc = less_put_type(w, v->type, err);
    if (rc) return rc;
    /* Write the data first, then insert its length in front of it. */
    size_t at = w->len;
    rc = less_put_value_depth(w, v->type, v, depth, err);
    if (rc || w->err) return rc ? rc : w->err;
    size_t n = w->len - at;
    uint8_t tmp[LESS_INT_MAX_BYTES];
    struct xg_writer lw;
    xg_writer_init(&lw, tmp, sizeof tmp);
    less_put_uint(&lw, n);
    if (!xg_write_reserve(w, lw.len)) return w->err;
    memmove(w->buf + at + lw.len, w->buf + at, n);
    memcpy(w->buf + at, tmp, lw.len);
    return 0;
}

/* Turn a writer overflow into an error message, and on failure drop whatever was half-written
 * (the writer is left as it was at `start`, sticky error cleared: the return code reports it). */
static int finish_put(struct xg_writer *w, size_t start, int rc, const char *what,
                      struct xg_error *err)
{
    if (rc == 0 && w->err) rc = w->err;
    if (rc == -EMSGSIZE && (!err || err->code != -EMSGSIZE))
        xg_error_set(err, rc, "LESS %s: output full (%zu bytes)", what, w->cap);
    if (rc) {
        w->len = start;
        w->err = 0;
    }
    return rc;
}

int less_put_value(struct xg_writer *w, const struct less_type *t, const struct less_value *v,
                   struct xg_error *err)
{
    int rc = less_check_type(t, 0, err);
    if (rc) return rc;
    if (w->err) return w->err;
    if (err) err->code = 0;
    size_t start = w->len;
    return finish_put(w, start, less_put_value_depth(w, t, v, 0, err), "value", err);
}

int less_put_variant(struct xg_writer *w, const struct less_value *v, struct xg_error *err)
{
    if (w->err) return w->err;
    if (err) err->code = 0;
    size_t start = w->len;
    return finish_put(w, start, less_put_variant_depth(w, v, 0, err), "STANDALONE-VARIANT", err);
}

int less_get_variant_depth(struct xg_reader *r, struct less_arena *a, struct less_value *v,
                           int depth, struct xg_error *err)
{
    const struct less_type *t;
    size_t start = r->off;
    int rc = get_type(r, a, &t, depth, err);
    if (rc) return rc;
    size_t n;
    rc = less_get_count(r, 1, SIZE_MAX, &n, "STANDALONE-VARIANT length", err);
    if (rc) return rc;
    struct xg_reader sub;
    xg_read_sub(r, n, &sub);
    rc = less_get_value_depth(&sub, t, a, v, depth, err);
    if (rc) {
        r->err = rc;
        return rc;
    }
    if (xg_reader_left(&sub) != 0) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO,
                            "LESS STANDALONE-VARIANT at offset %zu: %s data length %zu but value "
                            "uses %zu",
                            start, less_type_name(t->code), n, sub.off);
    }
    return 0;
}

static int truncated(struct xg_reader *r, const struct less_type *t, size_t at,
                     struct xg_error *err)
{
    r->err = -EMSGSIZE;
    return xg_error_set(err, -EMSGSIZE, "LESS %s at offset %zu: truncated", less_type_name(t->code),
                        at);
}

int less_get_value_depth(struct xg_reader *r, const struct less_type *t, struct less_arena *a,
                         struct less_value *v, int depth, struct xg_error *err)
{
    size_t at = r->off;
    size_t n;
    int rc;
    memset(v, 0, sizeof *v);
    v->type = t;
    if (depth > LESS_MAX_DEPTH) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO, "LESS value at offset %zu: nested deeper than %d", at,
                            LESS_MAX_DEPTH);
    }
    switch (t->code) {
    case LESS_T_NULL:
        return 0;
    case LESS_T_OBJECT_ID:
        return less_get_int(r, &v->u.i, "OBJECT-ID", err);
    case LESS_T_INTEGER:
        return less_get_int(r, &v->u.i, "INTEGER value", err);
    case LESS_T_STRING:
        return less_get_string(r, a, &v->u.str.p, &v->u.str.len, err);
    case LESS_T_FLOAT16:
        v->u.f = xg_read_lef16(r);
        return r->err ? truncated(r, t, at, err) : 0;
    case LESS_T_FLOAT32:
        v->u.f = xg_read_lef32(r);
        return r->err ? truncated(r, t, at, err) : 0;
    case LESS_T_FLOAT64:
        v->u.f = xg_read_lef64(r);
        return r->err ? truncated(r, t, at, err) : 0;
    case LESS_T_LIST:
    case LESS_T_VECTOR: {
        size_t per = min_size(t->elem);
        if (t->code == LESS_T_LIST) {
            rc = less_get_count(r, per, SIZE_MAX, &n, "LIST count", err);
            if (rc) return rc;
        } else {
            n = t->count;
            if (per && n > xg_reader_left(r) / per) return truncated(r, t, at, err);
        }
        struct less_value *items =
            less_arena_array(a, n, sizeof *items, less_type_name(t->code), err, &rc);
        if (!items) return rc;
        for (size_t i = 0; i < n; i++) {
            rc = less_get_value_depth(r, t->elem, a, &items[i], depth + 1, err);
            if (rc) return rc;
        }
        v->u.list.items = items;
        v->u.list.count = n;
        return 0;
    }
    case LESS_T_VARIANT: {
        struct less_value *inner = less_arena_alloc(a, sizeof *inner);
        if (!inner)
            return xg_error_set(err, -ENOBUFS, "LESS STANDALONE-VARIANT: decode arena full");
        rc = less_get_variant_depth(r, a, inner, depth + 1, err);
        v->u.variant = inner;
        return rc;
    }
    case LESS_T_VARBIN:
        rc = less_get_count(r, 1, SIZE_MAX, &n, "VARIABLE-BINARY length", err);
        if (rc) return rc;
        v->u.bin.p = xg_read_bytes(r, n);
        v->u.bin.len = n;
        return 0;
    case LESS_T_FIXEDBIN:
        v->u.bin.p = xg_read_bytes(r, t->count);
        v->u.bin.len = t->count;
        return r->err ? truncated(r, t, at, err) : 0;
    case LESS_T_UUID:
        xg_read_copy(r, v->u.uuid, 16);
        return r->err ? truncated(r, t, at, err) : 0;
    default:
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO, "LESS value at offset %zu: unknown type code %u", at,
                            t->code);
    }
}

int less_get_value(struct xg_reader *r, const struct less_type *t, struct less_arena *a,
                   struct less_value *v, struct xg_error *err)
{
    int rc = less_check_type(t, 0, err);
    if (rc) return rc;
    return less_get_value_depth(r, t, a, v, 0, err);
}

int less_get_variant(struct xg_reader *r, struct less_arena *a, struct less_value *v,
                     struct xg_error *err)
{
    memset(v, 0, sizeof *v);
    return less_get_variant_depth(r, a, v, 0, err);
}
