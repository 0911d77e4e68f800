/* Open Sound Control 1.0 codec (osc_codec.h). */
#include "adapters/vmc/osc_codec.h"

#include <errno.h>
#include <string.h>

static const char *const error_names[OSC_E_COUNT] = {"none",    "malformed", "type_tag",
                                                     "address", "bundle",    "depth"};

const char *osc_error_name(enum osc_error e)
{
    return (unsigned)e < OSC_E_COUNT ? error_names[e] : "unknown";
}

static int fail(enum osc_error *cls, enum osc_error c, struct xg_error *err, const char *fmt,
                const char *what, size_t off)
{
    if (cls) *cls = c;
    return xg_error_set(err, -EBADMSG, fmt, what, off);
}

/* Bytes of the data carried by type tag `t`: 0 for tags without data, 4 or 8, or -1 for a string
 * or blob (variable), -2 for an unknown tag. */
static int tag_size(char t)
{
    switch (t) {
    case 'i':
    case 'f':
    case 'c':
    case 'r':
    case 'm':
        return 4;
    case 'h':
    case 't':
    case 'd':
        return 8;
    case 's':
    case 'S':
    case 'b':
        return -1;
    case 'T':
    case 'F':
    case 'N':
    case 'I':
    case '[':
    case ']':
        return 0;
    default:
        return -2;
    }
}

/* An OSC-string at buf[off..len): its length (without NUL) in *n and the padded field size in
 * *field. -1 if no NUL before len, -2 if the padding is not NUL or runs past len. */
static int read_string(const uint8_t *buf, size_t len, size_t off, size_t *n, size_t *field)
{
    const uint8_t *nul = off < len ? memchr(buf + off, 0, len - off) : NULL;
    if (!nul) return -1;
    size_t sl = (size_t)(nul - (buf + off));
    size_t f = (sl + 4) & ~(size_t)3;
    if (f > len - off) return -2;
    for (size_t i = sl; i < f; i++)
        if (buf[off + i]) return -2;
    *n = sl;
    *field = f;
    return 0;
}

int osc_decode_message(const uint8_t *buf, size_t len, struct osc_message *m, enum osc_error *cls,
                       struct xg_error *err)
{
    memset(m, 0, sizeof *m);
    m->types = "";
    if (cls) *cls = OSC_E_NONE;
    if (len == 0 || buf[0] != '/')
        return fail(cls, OSC_E_ADDRESS, err, "%s does not start with '/' (offset %zu)",
                    "address pattern", 0);
    if (len % 4)
        return fail(cls, OSC_E_MALFORMED, err, "%s is not a multiple of 4 bytes (offset %zu)",
                    "message length", len);
    size_t n, field;
    int rc = read_string(buf, len, 0, &n, &field);
    if (rc)
        return fail(cls, OSC_E_MALFORMED, err,
                    rc == -1 ? "%s has no NUL terminator (offset %zu)"
                             : "%s padding is not NUL or runs past the end (offset %zu)",
                    "address pattern", 0);
    m->address = (const char *)buf;
    m->address_len = n;
    size_t off = field;
    if (off == len) { /* no type tag string: a message without arguments */
        m->data = buf + off;
        return 0;
    }
    if (buf[off] != ',')
        return fail(cls, OSC_E_TYPE_TAG, err, "%s does not start with ',' (offset %zu)",
                    "type tag string", off);
    if ((rc = read_string(buf, len, off, &n, &field)))
        return fail(cls, OSC_E_MALFORMED, err,
                    rc == -1 ? "%s has no NUL terminator (offset %zu)"
                             : "%s padding is not NUL or runs past the end (offset %zu)",
                    "type tag string", off);
    m->types = (const char *)buf + off + 1;
    m->n_types = n - 1;
    off += field;
    m->data = buf + off;
    m->data_len = len - off;
    int depth = 0;
    for (size_t i = 0; i < m->n_types; i++) {
        char t = m->types[i];
        int sz = tag_size(t);
        if (sz == -2) {
            if (cls) *cls = OSC_E_TYPE_TAG;
            return xg_error_set(err, -EBADMSG, "unknown type tag '%c' (0x%02x) at argument %zu",
                                t >= 0x20 && t < 0x7f ? t : '?', (unsigned)(uint8_t)t, i);
        }
        if (t == '[' && ++depth > OSC_MAX_ARRAY_DEPTH)
            return fail(cls, OSC_E_TYPE_TAG, err, "%s nested too deep (argument %zu)", "array", i);
        if (t == ']' && --depth < 0)
            return fail(cls, OSC_E_TYPE_TAG, err, "%s closed without '[' (argument %zu)", "array",
                        i);
        if (sz >= 0) {
            if ((size_t)sz > len - off)
                return fail(cls, OSC_E_MALFORMED, err, "%s runs past the end (offset %zu)",
                            "argument", off);
            off += (size_t)sz;
        } else if (t == 'b') {
            if (len - off < 4)
                return fail(cls, OSC_E_MALFORMED, err, "%s runs past the end (offset %zu)",
                            "blob size", off);
            uint32_t bl = xg_load_be32(buf + off);
            size_t padded = ((size_t)bl + 3) & ~(size_t)3;
            if (bl > INT32_MAX || padded > len - off - 4) {
                if (cls) *cls = OSC_E_MALFORMED;
                return xg_error_set(err, -EBADMSG,
                                    "blob size %u runs past the end (offset %zu, %zu bytes left)",
                                    bl, off, len - off - 4);
            }
            for (size_t k = bl; k < padded; k++)
                if (buf[off + 4 + k])
                    return fail(cls, OSC_E_MALFORMED, err, "%s padding is not NUL (offset %zu)",
                                "blob", off);
            off += 4 + padded;
        } else {
            if ((rc = read_string(buf, len, off, &n, &field)))
                return fail(cls, OSC_E_MALFORMED, err,
                            rc == -1 ? "%s has no NUL terminator (offset %zu)"
                                     : "%s padding is not NUL or runs past the end (offset %zu)",
                            "string argument", off);
            off += field;
        }
    }
    if (depth != 0)
        return fail(cls, OSC_E_TYPE_TAG, err, "%s '[' not closed (offset %zu)", "array", off);
    if (off != len) {
        if (cls) *cls = OSC_E_MALFORMED;
        return xg_error_set(err, -EBADMSG, "%zu bytes after the last argument (offset %zu)",
                            len - off, off);
    }
    return 0;
}

void osc_args_begin(struct osc_arg_iter *it, const struct osc_message *m)
{
    it->m = m;
    it->ti = 0;
    xg_reader_init(&it->r, m->data, m->data_len);
}

int osc_args_next(struct osc_arg_iter *it, struct osc_arg *a)
{
    if (it->ti >= it->m->n_types) return 0;
    char t = it->m->types[it->ti++];
    struct xg_reader *r = &it->r;
    memset(a, 0, sizeof *a);
    a->tag = t;
    switch (t) {
    case 'i':
    case 'c':
        a->v.i = (int32_t)xg_read_be32(r);
        break;
    case 'f':
    case 'r':
    case 'm':
        a->v.u = xg_read_be32(r);
        break;
    case 'h':
        a->v.h = (int64_t)xg_read_be64(r);
        break;
    case 't':
    case 'd':
        a->v.t = xg_read_be64(r);
        break;
    case 's':
    case 'S': {
        const uint8_t *p = r->buf + r->off;
        size_t left = xg_reader_left(r);
        const uint8_t *nul = left ? memchr(p, 0, left) : NULL;
        if (!nul) return -EBADMSG;
        a->v.s.p = (const char *)p;
        a->v.s.len = (size_t)(nul - p);
        xg_read_skip(r, (a->v.s.len + 4) & ~(size_t)3);
        break;
    }
    case 'b': {
        uint32_t n = xg_read_be32(r);
        a->v.b.len = n;
        a->v.b.p = xg_read_bytes(r, n);
        xg_read_skip(r, ((size_t)n + 3) / 4 * 4 - n);
        break;
    }
    case 'T':
    case 'F':
    case 'N':
    case 'I':
    case '[':
    case ']':
        break;
    default:
        return -EBADMSG;
    }
    return r->err ? -EBADMSG : 1;
}

int osc_args_get(const struct osc_message *m, struct osc_arg *a, size_t max)
{
    struct osc_arg_iter it;
    osc_args_begin(&it, m);
    size_t n = 0;
    while (n < max) {
        int rc = osc_args_next(&it, &a[n]);
        if (rc < 0) return rc;
        if (rc == 0) break;
        n++;
    }
    return (int)n;
}

bool osc_str_eq(const char *p, size_t len, const char *s)
{
    return strlen(s) == len && memcmp(p, s, len) == 0;
}

/* ---- packets and bundles ---- */

struct walk {
    const struct osc_walk_ops *ops;
    int max_depth;
    size_t messages;
};

static void report(struct walk *w, enum osc_error cls, struct xg_error *e)
{
    if (w->ops->error) w->ops->error(w->ops->user, cls, e);
}

/* Is the error text of a refused element of class cls wanted (ops->admit)? */
static bool admitted(struct walk *w, enum osc_error cls)
{
    return !w->ops->admit || w->ops->admit(w->ops->user, cls);
}

static void walk_element(struct walk *w, const uint8_t *buf, size_t len, uint64_t timetag,
                         int depth, size_t base);

static void walk_bundle(struct walk *w, const uint8_t *buf, size_t len, int depth, size_t base)
{
    struct xg_error e = {0};
    if (depth > w->max_depth) {
        if (!admitted(w, OSC_E_DEPTH)) return;
        xg_error_set(&e, -EBADMSG, "bundle nested %d deep (at most %d; offset %zu)", depth,
                     w->max_depth, base);
        report(w, OSC_E_DEPTH, &e);
        return;
    }
    if (len < 16 || len % 4) {
        if (!admitted(w, OSC_E_BUNDLE)) return;
        xg_error_set(&e, -EBADMSG,
                     "bundle of %zu bytes (header is 16, length a multiple of 4; "
                     "offset %zu)",
                     len, base);
        report(w, OSC_E_BUNDLE, &e);
        return;
    }
    uint64_t tt = ((uint64_t)xg_load_be32(buf + 8) << 32) | xg_load_be32(buf + 12);
    size_t off = 16;
    while (off < len) {
        if (len - off < 4) {
            if (!admitted(w, OSC_E_BUNDLE)) return;
            xg_error_set(&e, -EBADMSG, "element size runs past the end (offset %zu)", base + off);
            report(w, OSC_E_BUNDLE, &e);
            return;
        }
        int32_t sz = (int32_t)xg_load_be32(buf + off);
        if (sz <= 0 || sz % 4 || (size_t)sz > len - off - 4) {
            if (!admitted(w, OSC_E_BUNDLE)) return;
            xg_error_set(&e, -EBADMSG,
                         "element size %d at offset %zu (must be a positive multiple of 4 and "
                         "at most the %zu bytes left): rest of the bundle dropped",
                         sz, base + off, len - off - 4);
            report(w, OSC_E_BUNDLE, &e);
            return;
        }
        walk_element(w, buf + off + 4, (size_t)sz, tt, depth + 1, base + off + 4);
        off += 4 + (size_t)sz;
    }
}

static const uint8_t bundle_tag[8] = {'#', 'b', 'u', 'n', 'd', 'l', 'e', 0};

static void walk_element(struct walk *w, const uint8_t *buf, size_t len, uint64_t timetag,
                         int depth, size_t base)
{
    struct xg_error e = {0};
    if (len >= 8 && memcmp(buf, bundle_tag, 8) == 0) {
        walk_bundle(w, buf, len, depth, base);
        return;
    }
    if (len && buf[0] == '#') {
        if (!admitted(w, OSC_E_ADDRESS)) return;
        xg_error_set(&e, -EBADMSG, "'#' packet that is not \"#bundle\" (offset %zu)", base);
        report(w, OSC_E_ADDRESS, &e);
        return;
    }
    struct osc_message m;
    enum osc_error cls;
    /* with ops->admit, the text is formatted only for an admitted error: decoded again then */
    if (osc_decode_message(buf, len, &m, &cls, w->ops->admit ? NULL : &e)) {
        if (w->ops->admit) {
            if (!w->ops->admit(w->ops->user, cls)) return;
            osc_decode_message(buf, len, &m, &cls, &e);
        }
        xg_error_prefix(&e, "message at offset %zu: ", base);
        report(w, cls, &e);
        return;
    }
    w->messages++;
    if (w->ops->message) w->ops->message(w->ops->user, &m, timetag, depth ? depth - 1 : 0);
}

size_t osc_walk_packet(const uint8_t *buf, size_t len, const struct osc_walk_ops *ops)
{
    struct walk w = {.ops = ops,
                     .max_depth = ops->max_depth > 0 ? ops->max_depth : OSC_DEFAULT_MAX_DEPTH};
    walk_element(&w, buf, len, OSC_TIMETAG_IMMEDIATE, 1, 0);
    return w.messages;
}

/* ---- encoding ---- */

int osc_write_string(struct xg_writer *w, const char *s, size_t len)
{
    if (memchr(s, 0, len)) return -EINVAL;
    xg_write_bytes(w, s, len);
    return xg_write_zeros(w, 4 - (len & 3));
}

int osc_encode_message(struct xg_writer *w, const char *address, const char *types,
                       const struct osc_arg *args, size_t n_args)
{
    size_t nt = strlen(types);
    if (!address || address[0] != '/' || nt != n_args) return -EINVAL;
    for (size_t i = 0; i < nt; i++)
        if (tag_size(types[i]) == -2) return -EINVAL;
    size_t start = w->len;
    osc_write_string(w, address, strlen(address));
    xg_write_u8(w, ',');
    xg_write_bytes(w, types, nt);
    xg_write_zeros(w, 4 - ((nt + 1) & 3));
    for (size_t i = 0; i < nt; i++) {
        const struct osc_arg *a = &args[i];
        switch (types[i]) {
        case 'i':
        case 'c':
            xg_write_be32(w, (uint32_t)a->v.i);
            break;
        case 'f':
        case 'r':
        case 'm':
            xg_write_be32(w, a->v.u);
            break;
        case 'h':
            xg_write_be64(w, (uint64_t)a->v.h);
            break;
        case 't':
        case 'd':
            xg_write_be64(w, a->v.t);
            break;
        case 's':
        case 'S':
            if (osc_write_string(w, a->v.s.p ? a->v.s.p : "", a->v.s.p ? a->v.s.len : 0) ==
                -EINVAL) {
                w->len = start;
                return -EINVAL;
            }
            break;
        case 'b':
            if (a->v.b.len > INT32_MAX) {
                w->len = start;
                return -EINVAL;
            }
            xg_write_be32(w, (uint32_t)a->v.b.len);
            if (a->v.b.len) xg_write_bytes(w, a->v.b.p, a->v.b.len);
            xg_write_zeros(w, (4 - (a->v.b.len & 3)) & 3);
            break;
        default:
            break;
        }
    }
    return w->err;
}

int osc_bundle_begin(struct xg_writer *w, uint64_t timetag)
{
    xg_write_bytes(w, bundle_tag, 8);
    return xg_write_be64(w, timetag);
}

int osc_element_begin(struct xg_writer *w, size_t *at)
{
    *at = w->len;
    return xg_write_be32(w, 0);
}

int osc_element_end(struct xg_writer *w, size_t at)
{
    if (w->err) return w->err;
    if (at + 4 > w->len) return -EINVAL;
    return xg_write_be32_at(w, at, (uint32_t)(w->len - at - 4));
}

uint64_t osc_timetag_from_unix_ns(int64_t unix_ns)
{
    const uint64_t ntp_unix = UINT64_C(2208988800); /* 1900-01-01 to 1970-01-01, s */
    if (unix_ns < 0) unix_ns = 0;
    uint64_t s = (uint64_t)unix_ns / 1000000000u, ns = (uint64_t)unix_ns % 1000000000u;
    return ((s + ntp_unix) << 32) | ((ns << 32) / 1000000000u);
}
