/* ROS 2 messages in CDR for the recorder and the replay (mcap_cdr.h). */
#include "adapters/mcap/mcap_cdr.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#define SEP                                                                                        \
    "\n================================================================================\nMSG: "

/* As rosbag2 writes it (local message definition source): the root type's text, then each
 * dependency depth-first. */
const char mcap_tf_definition[] =
    "geometry_msgs/TransformStamped[] transforms\n" SEP "geometry_msgs/TransformStamped\n"
    "std_msgs/Header header\n"
    "string child_frame_id\n"
    "Transform transform\n" SEP "std_msgs/Header\n"
    "builtin_interfaces/Time stamp\n"
    "string frame_id\n" SEP "builtin_interfaces/Time\n"
    "int32 sec\n"
    "uint32 nanosec\n" SEP "geometry_msgs/Transform\n"
    "Vector3 translation\n"
    "Quaternion rotation\n" SEP "geometry_msgs/Vector3\n"
    "float64 x\n"
    "float64 y\n"
    "float64 z\n" SEP "geometry_msgs/Quaternion\n"
    "float64 x 0\n"
    "float64 y 0\n"
    "float64 z 0\n"
    "float64 w 1\n";

const char mcap_sample_definition[] =
    "# One sample of one xrgate entity (lossless recording, docs/adapters/mcap.md).\n"
    "# Internal frame: right-handed, Y up, metres, radians; quaternion x y z w, body to world.\n"
    "string name # entity name after renaming\n"
    "string source # the origin adapter's name for it\n"
    "string origin # origin adapter\n"
    "string origin_gateway # the gateway that first saw it, empty = the recording one\n"
    "string kind # rigid_body head left_hand right_hand controller joint object\n"
    "string parent # parent entity name, empty = none\n"
    "int64 capture_time # ns since the Unix epoch: source time mapped to the gateway clock\n"
    "int64 receive_time # ns since the Unix epoch: when the gateway received it\n"
    "uint32 flags # reported: 1 position 2 orientation 4 velocity 8 angular_velocity 16 scale "
    "32 inactive\n"
    "int32 sensor # the source's sensor number, -1 = none\n"
    "float64[3] position\n"
    "float64[4] orientation\n"
    "float64[3] velocity\n"
    "float64[3] angular_velocity\n"
    "float64[3] scale\n"
    "uint8[] buttons\n"
    "float64[] analogs\n";

/* ---- writing ---- */

struct cdr_w {
    struct mcap_buf *b;
    size_t base; /* offset of the first byte after the encapsulation header */
};

static void align(struct cdr_w *w, size_t a)
{
    static const uint8_t zero[8];
    size_t r = (w->b->n - w->base) & (a - 1); /* a: 4 or 8 */
    if (r) mcap_put_bytes(w->b, zero, a - r);
}

static void w_u32(struct cdr_w *w, uint32_t v)
{
    align(w, 4);
    mcap_put_u32(w->b, v);
}

static void w_i64(struct cdr_w *w, int64_t v)
{
    align(w, 8);
    mcap_put_u64(w->b, (uint64_t)v);
}

/* CDR string: uint32 length including the NUL, the bytes, NUL */
static void w_str(struct cdr_w *w, const char *s)
{
    size_t n = strlen(s);
    w_u32(w, (uint32_t)n + 1);
    mcap_put_bytes(w->b, s, n + 1);
}

/* n float64 in a row (aligned once): one copy on a little-endian host */
static void w_f64s(struct cdr_w *w, const double *v, size_t n)
{
    align(w, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    mcap_put_bytes(w->b, v, n * sizeof *v);
#else
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], 8);
        mcap_put_u64(w->b, u);
    }
#endif
}

static struct cdr_w begin(struct mcap_buf *b)
{
    static const uint8_t hdr[4] = {0x00, 0x01, 0x00, 0x00}; /* CDR_LE, options 0 */
    mcap_put_bytes(b, hdr, 4);
    return (struct cdr_w){b, b->n};
}

size_t mcap_cdr_tf_begin(struct mcap_buf *b)
{
    size_t at = b->n;
    struct cdr_w w = begin(b);
    w_u32(&w, 0);
    return at;
}

void mcap_cdr_tf_add(struct mcap_buf *b, size_t at, int64_t stamp_ns, const char *frame_id,
                     size_t frame_len, const char *child_frame_id, size_t child_len,
                     const double t[3], const double q[4])
{
    struct cdr_w w = {b, at + 4};
    if (b->oom || b->n < at + 8) return;
    int64_t sec = stamp_ns >= 0 ? stamp_ns / 1000000000 : -((-stamp_ns + 999999999) / 1000000000);
    w_u32(&w, (uint32_t)(int32_t)sec);
    w_u32(&w, (uint32_t)(stamp_ns - sec * 1000000000));
    w_u32(&w, (uint32_t)frame_len + 1);
    mcap_put_bytes(b, frame_id, frame_len + 1);
    w_u32(&w, (uint32_t)child_len + 1);
    mcap_put_bytes(b, child_frame_id, child_len + 1);
    w_f64s(&w, t, 3);
    w_f64s(&w, q, 4);
    if (b->oom) return;
    uint32_t count;
    memcpy(&count, b->p + at + 4, 4); /* little-endian on both sides: written by w_u32 */
    count = le32toh(count) + 1;
    count = htole32(count);
    memcpy(b->p + at + 4, &count, 4);
}

void mcap_cdr_tf(struct mcap_buf *b, const struct mcap_tf *tf)
{
    size_t at = mcap_cdr_tf_begin(b);
    mcap_cdr_tf_add(b, at, tf->stamp_ns, tf->frame_id, strlen(tf->frame_id), tf->child_frame_id,
                    strlen(tf->child_frame_id), tf->t, tf->q);
}

size_t mcap_cdr_sample_prefix(struct mcap_buf *b, const char *const str[5])
{
    size_t at = b->n;
    struct cdr_w w = {b, at};
    for (int i = 0; i < 5; i++)
        w_str(&w, str[i]);
    return b->oom ? 0 : b->n - at;
}

void mcap_cdr_sample_with(struct mcap_buf *b, const uint8_t *prefix, size_t n, const char *parent,
                          size_t parent_len, const struct mcap_sample *s)
{
    struct cdr_w w = begin(b);
    mcap_put_bytes(b, prefix, n);
    w_u32(&w, (uint32_t)parent_len + 1);
    mcap_put_bytes(b, parent, parent_len + 1);
    w_i64(&w, s->capture_time);
    w_i64(&w, s->receive_time);
    w_u32(&w, s->flags);
    w_u32(&w, (uint32_t)s->sensor);
    w_f64s(&w, s->position, 3);
    w_f64s(&w, s->orientation, 4);
    w_f64s(&w, s->velocity, 3);
    w_f64s(&w, s->angular_velocity, 3);
    w_f64s(&w, s->scale, 3);
    w_u32(&w, s->n_buttons);
    mcap_put_bytes(b, s->buttons, s->n_buttons);
    w_u32(&w, s->n_analogs);
    if (s->n_analogs) w_f64s(&w, s->analogs, s->n_analogs);
}

void mcap_cdr_sample(struct mcap_buf *b, const struct mcap_sample *s)
{
    struct mcap_buf pre = {0};
    size_t n = mcap_cdr_sample_prefix(
        &pre, (const char *const[5]){s->name, s->source, s->origin, s->origin_gateway, s->kind});
    if (pre.oom) b->oom = true;
    mcap_cdr_sample_with(b, pre.p, n, s->parent, strlen(s->parent), s);
    mcap_buf_free(&pre);
}

/* ---- reading ---- */

struct cdr_r {
    const uint8_t *p;
    size_t n, off;     /* off counts from after the encapsulation header */
    const char *field; /* the first field that did not fit, NULL = none */
    struct xg_error *err;
};

static bool need(struct cdr_r *r, size_t a, size_t len, const char *field)
{
    if (r->field) return false;
    size_t o = (r->off + a - 1) / a * a;
    if (o > r->n || r->n - o < len) {
        r->field = field;
        return false;
    }
    r->off = o;
    return true;
}

static uint64_t r_le(struct cdr_r *r, size_t len, const char *field)
{
    if (!need(r, len, len, field)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++)
        v |= (uint64_t)r->p[r->off + i] << (8 * i);
    r->off += len;
    return v;
}

static double r_f64(struct cdr_r *r, const char *field)
{
    uint64_t u = r_le(r, 8, field);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static void r_str(struct cdr_r *r, char *out, size_t size, const char *field)
{
    out[0] = '\0';
    uint32_t n = (uint32_t)r_le(r, 4, field);
    if (r->field) return;
    if (n == 0 || n > r->n - r->off || r->p[r->off + n - 1] != '\0') {
        if (!r->field) r->field = field;
        return;
    }
    size_t k = n - 1 < size - 1 ? n - 1 : size - 1;
    memcpy(out, r->p + r->off, k);
    out[k] = '\0';
    r->off += n;
}

static int r_open(struct cdr_r *r, const uint8_t *p, size_t n, struct xg_error *err)
{
    if (n < 4 || p[0] != 0x00 || p[1] != 0x01)
        return xg_error_set(err, -EPROTO,
                            "CDR encapsulation header %02x %02x is not CDR_LE (00 01)",
                            n > 0 ? p[0] : 0, n > 1 ? p[1] : 0);
    *r = (struct cdr_r){.p = p + 4, .n = n - 4, .err = err};
    return 0;
}

static int r_done(struct cdr_r *r, const char *type)
{
    if (r->field)
        return xg_error_set(r->err, -EPROTO,
                            "%s: field '%s' runs past the end of the %zu-byte "
                            "message (or its string is not NUL-terminated)",
                            type, r->field, r->n + 4);
    return 0;
}

int mcap_cdr_tf_decode(const uint8_t *p, size_t n, uint32_t i, uint32_t *count, struct mcap_tf *out,
                       struct xg_error *err)
{
    struct cdr_r r = {0};
    int rc = r_open(&r, p, n, err);
    if (rc) return rc;
    *count = (uint32_t)r_le(&r, 4, "transforms.length");
    if ((rc = r_done(&r, MCAP_TF_SCHEMA))) return rc;
    /* the smallest transform is 4+4+5+5 bytes + 7 float64: a count that cannot fit is bad */
    if (*count > r.n / 74)
        return xg_error_set(err, -EPROTO, "%s: %u transforms cannot fit in %zu bytes",
                            MCAP_TF_SCHEMA, *count, n);
    if (i >= *count) return -ENOENT;
    for (uint32_t k = 0; k <= i; k++) {
        int32_t sec = (int32_t)(uint32_t)r_le(&r, 4, "header.stamp.sec");
        uint32_t nsec = (uint32_t)r_le(&r, 4, "header.stamp.nanosec");
        out->stamp_ns = (int64_t)sec * 1000000000 + nsec;
        r_str(&r, out->frame_id, sizeof out->frame_id, "header.frame_id");
        r_str(&r, out->child_frame_id, sizeof out->child_frame_id, "child_frame_id");
        for (int j = 0; j < 3; j++)
            out->t[j] = r_f64(&r, "transform.translation");
        for (int j = 0; j < 4; j++)
            out->q[j] = r_f64(&r, "transform.rotation");
    }
    return r_done(&r, MCAP_TF_SCHEMA);
}

int mcap_cdr_sample_decode(const uint8_t *p, size_t n, struct mcap_sample *s, struct xg_error *err)
{
    struct cdr_r r = {0};
    int rc = r_open(&r, p, n, err);
    if (rc) return rc;
    r_str(&r, s->name, sizeof s->name, "name");
    r_str(&r, s->source, sizeof s->source, "source");
    r_str(&r, s->origin, sizeof s->origin, "origin");
    r_str(&r, s->origin_gateway, sizeof s->origin_gateway, "origin_gateway");
    r_str(&r, s->kind, sizeof s->kind, "kind");
    r_str(&r, s->parent, sizeof s->parent, "parent");
    s->capture_time = (int64_t)r_le(&r, 8, "capture_time");
    s->receive_time = (int64_t)r_le(&r, 8, "receive_time");
    s->flags = (uint32_t)r_le(&r, 4, "flags");
    s->sensor = (int32_t)(uint32_t)r_le(&r, 4, "sensor");
    for (int i = 0; i < 3; i++)
        s->position[i] = r_f64(&r, "position");
    for (int i = 0; i < 4; i++)
        s->orientation[i] = r_f64(&r, "orientation");
    for (int i = 0; i < 3; i++)
        s->velocity[i] = r_f64(&r, "velocity");
    for (int i = 0; i < 3; i++)
        s->angular_velocity[i] = r_f64(&r, "angular_velocity");
    for (int i = 0; i < 3; i++)
        s->scale[i] = r_f64(&r, "scale");
    uint32_t nb = (uint32_t)r_le(&r, 4, "buttons.length");
    if ((rc = r_done(&r, MCAP_SAMPLE_SCHEMA))) return rc;
    if (nb > XG_MAX_BUTTONS || nb > r.n - r.off)
        return xg_error_set(err, -EPROTO, "%s: buttons.length %u (at most %d, and %zu bytes left)",
                            MCAP_SAMPLE_SCHEMA, nb, XG_MAX_BUTTONS, r.n - r.off);
    memcpy(s->buttons, r.p + r.off, nb);
    s->n_buttons = nb;
    r.off += nb;
    uint32_t na = (uint32_t)r_le(&r, 4, "analogs.length");
    if ((rc = r_done(&r, MCAP_SAMPLE_SCHEMA))) return rc;
    if (na > XG_MAX_ANALOGS)
        return xg_error_set(err, -EPROTO, "%s: analogs.length %u (at most %d)", MCAP_SAMPLE_SCHEMA,
                            na, XG_MAX_ANALOGS);
    for (uint32_t i = 0; i < na; i++)
        s->analogs[i] = r_f64(&r, "analogs");
    s->n_analogs = na;
    return r_done(&r, MCAP_SAMPLE_SCHEMA);
}
