/* RGMP v2 codec: see rgmp_codec.h. */
#include "adapters/rgmp/rgmp_codec.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* ------------------------------------------------------------------------------------------ */
/* Error helpers: every message starts with the location (device, group, stream)               */

struct loc {
    bool has_device;
    uint32_t device_id;
    long group; /* -1 = none */
    const char *group_name;
    long stream; /* -1 = none */
    bool is_static;
};

static struct loc loc_none(void)
{
    return (struct loc){false, 0, -1, NULL, -1, false};
}

/* A printable, quoted, bounded copy of s for messages (control bytes become '?'). */
static const char *quote(char *buf, size_t cap, const char *s)
{
    size_t o = 0, i = 0;
    if (!s) return "(null)";
    buf[o++] = '"';
    for (; s[i] && o + 6 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (s[i]) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}
#define Q(s) quote((char[64]){0}, 64, (s))

static void fmt_double(char *buf, size_t cap, double v);

/* A short description of a JSON value for messages: "\"text\"", "12", "1.5", "true", "array". */
static const char *jdesc(char *buf, size_t cap, const json_t *v)
{
    if (!v) return "(absent)";
    switch (json_typeof(v)) {
    case JSON_STRING:
        return quote(buf, cap, json_string_value(v));
    case JSON_INTEGER:
        snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL:
        fmt_double(buf, cap, json_real_value(v));
        return buf;
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    case JSON_NULL:
        return "null";
    case JSON_ARRAY:
        snprintf(buf, cap, "array of %zu", json_array_size(v));
        return buf;
    case JSON_OBJECT:
        return "object";
    }
    return "?";
}
#define J(v) jdesc((char[64]){0}, 64, (v))

static void loc_format(const struct loc *l, char *buf, size_t cap)
{
    int n;
    if (l->has_device)
        n = snprintf(buf, cap, "device %" PRIu32, l->device_id);
    else
        n = snprintf(buf, cap, "device ?");
    if (n < 0 || (size_t)n >= cap) return;
    if (l->group >= 0) {
        if (l->group_name)
            n += snprintf(buf + n, cap - (size_t)n, ", group %ld %s", l->group, Q(l->group_name));
        else
            n += snprintf(buf + n, cap - (size_t)n, ", group %ld", l->group);
    }
    if (n < 0 || (size_t)n >= cap) return;
    if (l->is_static)
        snprintf(buf + n, cap - (size_t)n, ", static_data %ld", l->stream);
    else if (l->stream >= 0)
        snprintf(buf + n, cap - (size_t)n, ", stream %ld", l->stream);
}

__attribute__((format(printf, 4, 5))) static int fail(struct xg_error *err, int code,
                                                      const struct loc *l, const char *fmt, ...)
{
    if (!err) return code;
    char where[160], what[XG_ERROR_MAX];
    loc_format(l, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return xg_error_set(err, code, "%s: %s", where, what);
}

static int prefix_loc(struct xg_error *err, const struct loc *l)
{
    if (!err) return 0;
    char where[160];
    loc_format(l, where, sizeof where);
    return xg_error_prefix(err, "%s: ", where);
}

static char *xstrdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static const struct rgmp_limits *limits_or_default(const struct rgmp_limits *lim,
                                                   struct rgmp_limits *tmp)
{
    tmp->max_definition_len =
        lim && lim->max_definition_len ? lim->max_definition_len : RGMP_MAX_DEFINITION_DEFAULT;
    tmp->max_data_len = lim && lim->max_data_len ? lim->max_data_len : RGMP_MAX_DATA_DEFAULT;
    return tmp;
}

/* ------------------------------------------------------------------------------------------ */
/* Framing                                                                                     */

int rgmp_header_decode(const void *buf, size_t len, struct rgmp_header *h)
{
    struct xg_reader r;
    xg_reader_init(&r, buf, len);
    h->msg_prefix = xg_read_le32(&r);
    h->msg_len = xg_read_le32(&r);
    return r.err;
}

int rgmp_header_check(const struct rgmp_header *h, const struct rgmp_limits *lim,
                      struct xg_error *err)
{
    struct rgmp_limits tmp;
    lim = limits_or_default(lim, &tmp);
    struct loc l = loc_none();
    switch (h->msg_prefix) {
    case RGMP_MSG_DEFINITION:
        if (h->msg_len > lim->max_definition_len)
            return fail(err, -EMSGSIZE, &l,
                        "msg_len = %" PRIu32 ": stream definition exceeds the maximum of %" PRIu32
                        " bytes (rule 3, D8)",
                        h->msg_len, lim->max_definition_len);
        return 0;
    case RGMP_MSG_DATA:
        if (h->msg_len < RGMP_DATA_HEADER_LEN)
            return fail(err, -EPROTO, &l,
                        "msg_len = %" PRIu32 ": data frame shorter than its 16-byte header "
                        "(rule 14)",
                        h->msg_len);
        if (h->msg_len > lim->max_data_len)
            return fail(err, -EMSGSIZE, &l,
                        "msg_len = %" PRIu32 ": data frame exceeds the maximum of %" PRIu32
                        " bytes (rule 3, D8)",
                        h->msg_len, lim->max_data_len);
        return 0;
    case RGMP_MSG_DISCONNECT:
        if (h->msg_len != RGMP_DISCONNECT_LEN)
            return fail(err, -EPROTO, &l,
                        "msg_len = %" PRIu32 ": device disconnect payload must be 4 bytes "
                        "(rule 20)",
                        h->msg_len);
        return 0;
    default:
        return fail(err, -EPROTO, &l,
                    "msg_prefix = %" PRIu32 " (0x%08" PRIx32 "): not 1, 2 or 3 (rule 2)",
                    h->msg_prefix, h->msg_prefix);
    }
}

int rgmp_frame_split(const void *buf, size_t len, const struct rgmp_limits *lim,
                     struct rgmp_header *h, size_t *frame_len, struct xg_error *err)
{
    if (len < RGMP_HEADER_LEN) {
        *frame_len = RGMP_HEADER_LEN;
        return 0;
    }
    rgmp_header_decode(buf, len, h);
    int rc = rgmp_header_check(h, lim, err);
    if (rc < 0) {
        *frame_len = 0;
        return rc;
    }
    *frame_len = RGMP_HEADER_LEN + (size_t)h->msg_len;
    return len >= *frame_len ? 1 : 0;
}

int rgmp_frame_eof(size_t buffered, struct xg_error *err)
{
    if (buffered == 0) return 0;
    struct loc l = loc_none();
    return fail(err, -EPROTO, &l,
                "truncated frame: stream ended with %zu bytes of an incomplete %s (rule 1)",
                buffered, buffered < RGMP_HEADER_LEN ? "header" : "frame");
}

int rgmp_encode_header(struct xg_writer *w, uint32_t msg_prefix, uint32_t msg_len)
{
    xg_write_le32(w, msg_prefix);
    return xg_write_le32(w, msg_len);
}

/* ------------------------------------------------------------------------------------------ */
/* Data types                                                                                  */

static const char *const base_names[] = {"INT32", "UINT32", "INT64", "UINT64", "FLOAT", "DOUBLE"};

size_t rgmp_base_size(enum rgmp_base_type base)
{
    return (base == RGMP_INT64 || base == RGMP_UINT64 || base == RGMP_DOUBLE) ? 8 : 4;
}

const char *rgmp_base_name(enum rgmp_base_type base)
{
    return (unsigned)base < 6 ? base_names[base] : "?";
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* One dimension: decimal, >= 1, no sign, no leading zero, <= UINT32_MAX. */
static int parse_dim(const char **pp, uint32_t *out, const char *text, const char *which,
                     struct xg_error *err)
{
    const char *p = *pp;
    if (!is_digit(*p))
        return xg_error_set(err, -EPROTO,
                            "data_type %s: dimension %s is not a decimal integer (rule 9a)",
                            Q(text), which);
    if (p[0] == '0' && is_digit(p[1]))
        return xg_error_set(err, -EPROTO, "data_type %s: dimension %s has a leading zero (rule 9a)",
                            Q(text), which);
    uint64_t v = 0;
    for (; is_digit(*p); p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX)
            return xg_error_set(err, -EPROTO,
                                "data_type %s: dimension %s exceeds 4294967295 (rule 9a)", Q(text),
                                which);
    }
    if (v == 0)
        return xg_error_set(err, -EPROTO, "data_type %s: dimension %s must be >= 1 (rule 9a)",
                            Q(text), which);
    *out = (uint32_t)v;
    *pp = p;
    return 0;
}

int rgmp_data_type_parse(const char *text, struct rgmp_data_type *t, struct xg_error *err)
{
    memset(t, 0, sizeof *t);
    if (!text) return xg_error_set(err, -EPROTO, "data_type missing (rule 9a)");
    size_t bl = 0;
    int base = -1;
    for (int i = 0; i < 6; i++) {
        bl = strlen(base_names[i]);
        if (strncmp(text, base_names[i], bl) == 0 && (text[bl] == '\0' || text[bl] == '[')) {
            base = i;
            break;
        }
    }
    if (base < 0)
        return xg_error_set(err, -EPROTO,
                            "data_type %s: base type is not one of INT32, UINT32, INT64, UINT64, "
                            "FLOAT, DOUBLE (rule 9a)",
                            Q(text));
    t->base = (enum rgmp_base_type)base;
    t->n = t->m = 1;
    const char *p = text + bl;
    if (*p == '[') {
        p++;
        int rc = parse_dim(&p, &t->n, text, "N", err);
        if (rc < 0) return rc;
        t->rank = 1;
        if (*p == ',') {
            p++;
            while (*p == ' ')
                p++;
            rc = parse_dim(&p, &t->m, text, "M", err);
            if (rc < 0) return rc;
            t->rank = 2;
        }
        if (p[0] != ']' || p[1] != '\0')
            return xg_error_set(err, -EPROTO,
                                "data_type %s: expected BASE, BASE[N] or BASE[N, M] (rule 9a)",
                                Q(text));
    }
    uint64_t count = (uint64_t)t->n * t->m; /* < 2^64: both factors < 2^32 */
    uint64_t bs = rgmp_base_size(t->base);
    if (count > (UINT64_C(0xFFFFFFFF) - RGMP_DATA_HEADER_LEN) / bs)
        return xg_error_set(err, -EPROTO,
                            "data_type %s: size %" PRIu32 " x %" PRIu32 " x %" PRIu64
                            " bytes overflows a 32-bit msg_len (rule 9a, rule 13)",
                            Q(text), t->n, t->m, bs);
    t->count = (uint32_t)count;
    t->size = (uint32_t)(count * bs);
    return 0;
}

int rgmp_data_type_format(const struct rgmp_data_type *t, char *buf, size_t cap)
{
    const char *b = rgmp_base_name(t->base);
    if (t->rank == 0) return snprintf(buf, cap, "%s", b);
    if (t->rank == 1) return snprintf(buf, cap, "%s[%" PRIu32 "]", b, t->n);
    return snprintf(buf, cap, "%s[%" PRIu32 ",%" PRIu32 "]", b, t->n, t->m);
}

/* ------------------------------------------------------------------------------------------ */
/* Measure types                                                                               */

static const char *const measure_names[] = {"UNKNOWN",
                                            "POSITION",
                                            "ORIENTATION",
                                            "TRANSFORM",
                                            "ANGULAR_VELOCITY",
                                            "LINEAR_VELOCITY",
                                            "LINEAR_ACCELERATION",
                                            "PROPER_ACCELERATION",
                                            "MAGNETIC_FIELD",
                                            "STATUS_FLAGS",
                                            "CUSTOM"};
static const char *const measure_units[] = {"",      "m",     "",  "m;quat", "rad/s", "m/s",
                                            "m/s^2", "m/s^2", "G", "",       ""};

const char *rgmp_measure_name(enum rgmp_measure_type m)
{
    return (unsigned)m <= RGMP_CUSTOM ? measure_names[m] : "UNKNOWN";
}

const char *rgmp_measure_unit(enum rgmp_measure_type m)
{
    return (unsigned)m <= RGMP_CUSTOM ? measure_units[m] : "";
}

enum rgmp_measure_type rgmp_measure_from_name(const char *name)
{
    if (name)
        for (int i = 1; i <= RGMP_CUSTOM; i++)
            if (strcmp(name, measure_names[i]) == 0) return (enum rgmp_measure_type)i;
    return RGMP_MEASURE_UNKNOWN;
}

/* ------------------------------------------------------------------------------------------ */
/* Values                                                                                      */

static struct xg_reader value_reader(const struct rgmp_data_type *t, const uint8_t *vals,
                                     uint32_t i)
{
    struct xg_reader r;
    size_t bs = rgmp_base_size(t->base);
    if (i < t->count)
        xg_reader_init(&r, vals + (size_t)i * bs, bs);
    else
        xg_reader_init(&r, vals, 0); /* out of range: every read fails and yields 0 */
    return r;
}

double rgmp_value_f64(const struct rgmp_data_type *t, const uint8_t *vals, uint32_t i)
{
    struct xg_reader r = value_reader(t, vals, i);
    switch (t->base) {
    case RGMP_INT32:
        return (double)(int32_t)xg_read_le32(&r);
    case RGMP_UINT32:
        return (double)xg_read_le32(&r);
    case RGMP_INT64:
        return (double)(int64_t)xg_read_le64(&r);
    case RGMP_UINT64:
        return (double)xg_read_le64(&r);
    case RGMP_FLOAT:
        return (double)xg_read_lef32(&r);
    case RGMP_DOUBLE:
        return xg_read_lef64(&r);
    }
    return 0.0;
}

int64_t rgmp_value_i64(const struct rgmp_data_type *t, const uint8_t *vals, uint32_t i)
{
    struct xg_reader r = value_reader(t, vals, i);
    switch (t->base) {
    case RGMP_INT32:
        return (int32_t)xg_read_le32(&r);
    case RGMP_UINT32:
        return xg_read_le32(&r);
    case RGMP_INT64:
    case RGMP_UINT64:
        return (int64_t)xg_read_le64(&r);
    case RGMP_FLOAT:
    case RGMP_DOUBLE: {
        double d = rgmp_value_f64(t, vals, i);
        return (isfinite(d) && d > -9.2e18 && d < 9.2e18) ? (int64_t)d : 0;
    }
    }
    return 0;
}

uint64_t rgmp_value_u64(const struct rgmp_data_type *t, const uint8_t *vals, uint32_t i)
{
    struct xg_reader r = value_reader(t, vals, i);
    switch (t->base) {
    case RGMP_INT32:
        return (uint64_t)(int64_t)(int32_t)xg_read_le32(&r);
    case RGMP_UINT32:
        return xg_read_le32(&r);
    case RGMP_INT64:
    case RGMP_UINT64:
        return xg_read_le64(&r);
    case RGMP_FLOAT:
    case RGMP_DOUBLE: {
        double d = rgmp_value_f64(t, vals, i);
        return (isfinite(d) && d >= 0 && d < 1.8e19) ? (uint64_t)d : 0;
    }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Definition: entries                                                                         */

static void stream_clear(struct rgmp_stream *s)
{
    free(s->measure_name);
    free(s->target_frame);
    free(s->reference_frame);
    free(s->custom_label);
    for (size_t i = 0; i < s->n_bits; i++)
        free(s->bits[i].name);
    free(s->bits);
    free(s->value);
    memset(s, 0, sizeof *s);
}

void rgmp_definition_free(struct rgmp_definition *def)
{
    if (!def) return;
    free(def->protocol_name);
    free(def->protocol_version);
    free(def->device_type);
    free(def->timestamp_epoch);
    free(def->device_info_json);
    for (size_t i = 0; i < def->n_static; i++)
        stream_clear(&def->static_data[i]);
    free(def->static_data);
    for (size_t g = 0; g < def->n_groups; g++) {
        struct rgmp_group *gr = &def->groups[g];
        for (size_t i = 0; i < gr->n_streams; i++)
            stream_clear(&gr->streams[i]);
        free(gr->streams);
        free(gr->name);
    }
    free(def->groups);
    free(def);
}

static bool integral_in(double v, double lo, double hi)
{
    return isfinite(v) && v == floor(v) && v >= lo && v <= hi;
}

/* Encode one JSON number as element i of a static value of type t (rule 11). */
static int json_value_elem(const struct loc *l, const struct rgmp_data_type *t, const json_t *v,
                           const char *idx, struct xg_writer *w, struct xg_error *err)
{
    const char *bn = rgmp_base_name(t->base);
    if (!json_is_number(v))
        return fail(err, -EPROTO, l, "value%s = %s: not a number (%s, rule 11)", idx, J(v), bn);
    bool is_int = json_is_integer(v);
    json_int_t iv = is_int ? json_integer_value(v) : 0;
    double dv = json_number_value(v);
    switch (t->base) {
    case RGMP_INT32:
    case RGMP_UINT32:
    case RGMP_INT64:
    case RGMP_UINT64: {
        if (!is_int) {
            if (!integral_in(dv, -9007199254740992.0, 9007199254740992.0))
                return fail(err, -EPROTO, l, "value%s = %s: not an integer (%s, rule 11)", idx,
                            J(v), bn);
            iv = (json_int_t)dv;
        }
        bool ok;
        if (t->base == RGMP_INT32)
            ok = iv >= INT32_MIN && iv <= INT32_MAX;
        else if (t->base == RGMP_UINT32)
            ok = iv >= 0 && iv <= (json_int_t)UINT32_MAX;
        else if (t->base == RGMP_UINT64)
            ok = iv >= 0;
        else
            ok = true;
        if (!ok)
            return fail(err, -EPROTO, l, "value%s = %s: out of range for %s (rule 11)", idx, J(v),
                        bn);
        if (rgmp_base_size(t->base) == 4)
            xg_write_le32(w, (uint32_t)(int64_t)iv);
        else
            xg_write_le64(w, (uint64_t)(int64_t)iv);
        break;
    }
    case RGMP_FLOAT:
        /* values up to FLT_MAX + half an ulp round to FLT_MAX; beyond would be Inf */
        if (!isfinite(dv) || fabs(dv) >= 0x1.ffffffp+127)
            return fail(err, -EPROTO, l, "value%s = %s: not a finite FLOAT (rule 11)", idx, J(v));
        xg_write_lef32(w, (float)dv);
        break;
    case RGMP_DOUBLE:
        if (!isfinite(dv))
            return fail(err, -EPROTO, l, "value%s = %s: not a finite DOUBLE (rule 11)", idx, J(v));
        xg_write_lef64(w, dv);
        break;
    }
    return w->err;
}

/* A static value from JSON (rule 11) into a new buffer of t->size bytes. */
static int json_value_encode(const struct loc *l, const struct rgmp_data_type *t, const json_t *v,
                             uint8_t **out, struct xg_error *err)
{
    char tn[32];
    rgmp_data_type_format(t, tn, sizeof tn);
    if (t->rank == 0) {
        if (json_is_array(v))
            return fail(err, -EPROTO, l, "value = %s: %s needs a single number (rule 11)", J(v),
                        tn);
    } else {
        if (!json_is_array(v))
            return fail(err, -EPROTO, l,
                        "value = %s: %s needs a flat array of %" PRIu32 " numbers (rule 11)", J(v),
                        tn, t->count);
        if (json_array_size(v) != t->count)
            return fail(err, -EPROTO, l,
                        "value = %s: %s needs exactly %" PRIu32 " numbers (rule 11)", J(v), tn,
                        t->count);
    }
    uint8_t *buf = malloc(t->size ? t->size : 1);
    if (!buf) return fail(err, -ENOMEM, l, "value: out of memory");
    struct xg_writer w;
    xg_writer_init(&w, buf, t->size);
    int rc = 0;
    if (t->rank == 0) {
        rc = json_value_elem(l, t, v, "", &w, err);
    } else {
        for (size_t i = 0; i < t->count && rc == 0; i++) {
            char idx[24];
            snprintf(idx, sizeof idx, "[%zu]", i);
            rc = json_value_elem(l, t, json_array_get(v, i), idx, &w, err);
        }
    }
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    return 0;
}

/* Validate a static value given in wire encoding (builder path, rule 11). */
static int bytes_value_check(const struct loc *l, const struct rgmp_data_type *t, const void *v,
                             size_t len, struct xg_error *err)
{
    if (len != t->size)
        return fail(err, -EINVAL, l, "value: %zu bytes, the data type needs %" PRIu32 " (rule 11)",
                    len, t->size);
    if (t->base == RGMP_FLOAT || t->base == RGMP_DOUBLE)
        for (uint32_t i = 0; i < t->count; i++) {
            double d = rgmp_value_f64(t, v, i);
            if (!isfinite(d))
                return fail(err, -EPROTO, l, "value[%" PRIu32 "] = %g: not finite (rule 11)", i, d);
        }
    return 0;
}

static bool shape_required(enum rgmp_measure_type m, uint32_t *n)
{
    switch (m) {
    case RGMP_POSITION:
    case RGMP_LINEAR_VELOCITY:
    case RGMP_ANGULAR_VELOCITY:
        *n = 3;
        return true;
    case RGMP_ORIENTATION:
        *n = 4;
        return true;
    case RGMP_TRANSFORM:
        *n = 7;
        return true;
    default:
        return false;
    }
}

/* Build one entry (stream or static_data) from a spec: rules 9a-9g, 11, 12. The value comes from
 * `jvalue` (JSON path) or spec->value (builder path); `has_value` says whether one was given. */
static int entry_build(const struct loc *l, const struct rgmp_entry_spec *spec,
                       const json_t *jvalue, bool has_value, bool is_static,
                       struct rgmp_stream *out, struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    int rc;
    /* 9c target_frame */
    if (!spec->target_frame || !spec->target_frame[0])
        return fail(err, -EPROTO, l, "target_frame = %s: must be a non-empty string (rule 9c)",
                    spec->target_frame ? "\"\"" : "(absent)");
    /* 9a data_type */
    if (!spec->data_type) return fail(err, -EPROTO, l, "data_type missing (rule 9a)");
    rc = rgmp_data_type_parse(spec->data_type, &out->type, err);
    if (rc < 0) {
        prefix_loc(err, l);
        return rc;
    }
    /* 9b measure_type (unknown accepted, D4) */
    if (!spec->measure_type || !spec->measure_type[0])
        return fail(err, -EPROTO, l, "measure_type = %s: must be a non-empty string (rule 9b)",
                    spec->measure_type ? "\"\"" : "(absent)");
    enum rgmp_measure_type m = rgmp_measure_from_name(spec->measure_type);
    out->measure = m;
    /* 9c reference_frame */
    if (spec->reference_frame && !spec->reference_frame[0])
        return fail(err, -EPROTO, l,
                    "reference_frame = \"\": must be a non-empty frame name "
                    "(rule 9c)");
    /* 9d / 9e custom_label */
    if (m == RGMP_CUSTOM && !spec->custom_label)
        return fail(err, -EPROTO, l,
                    "custom_label missing: required when measure_type is \"CUSTOM\" (rule 9d)");
    if (m != RGMP_CUSTOM && spec->custom_label)
        return fail(err, -EPROTO, l,
                    "custom_label = %s: not allowed on measure_type %s, only on CUSTOM (rule 9e)",
                    Q(spec->custom_label), Q(spec->measure_type));
    if (m == RGMP_CUSTOM && !spec->custom_label[0])
        return fail(err, -EPROTO, l, "custom_label = \"\": must be a non-empty string (rule 9d)");
    /* 9f bit_mapping */
    if (m == RGMP_STATUS_FLAGS) {
        if (!spec->bits)
            return fail(err, -EPROTO, l,
                        "bit_mapping missing: required when measure_type is \"STATUS_FLAGS\" "
                        "(rule 9f)");
        if (out->type.rank != 0 || (out->type.base != RGMP_UINT32 && out->type.base != RGMP_UINT64))
            return fail(err, -EPROTO, l,
                        "data_type = %s: STATUS_FLAGS must be scalar UINT32 or UINT64 (rule 9f)",
                        Q(spec->data_type));
        uint32_t width = (uint32_t)rgmp_base_size(out->type.base) * 8;
        for (size_t i = 0; i < spec->n_bits; i++) {
            if (spec->bits[i].bit >= width)
                return fail(err, -EPROTO, l,
                            "bit_mapping key \"%" PRIu32 "\": bit index >= %" PRIu32
                            ", the width of %s (rule 9f)",
                            spec->bits[i].bit, width, rgmp_base_name(out->type.base));
            if (!spec->bits[i].name)
                return fail(err, -EPROTO, l,
                            "bit_mapping key \"%" PRIu32 "\": name missing "
                            "(rule 9f)",
                            spec->bits[i].bit);
            for (size_t j = 0; j < i; j++)
                if (spec->bits[j].bit == spec->bits[i].bit)
                    return fail(err, -EPROTO, l,
                                "bit_mapping key \"%" PRIu32 "\": bit mapped twice (rule 9f)",
                                spec->bits[i].bit);
        }
    } else if (spec->bits) {
        return fail(err, -EPROTO, l,
                    "bit_mapping: not allowed on measure_type %s, only on STATUS_FLAGS (rule 9f)",
                    Q(spec->measure_type));
    }
    /* 9g shape (D10) */
    uint32_t need;
    if (shape_required(m, &need) &&
        (out->type.rank != 1 || out->type.n != need ||
         (out->type.base != RGMP_FLOAT && out->type.base != RGMP_DOUBLE)))
        return fail(err, -EPROTO, l,
                    "data_type = %s: measure_type %s needs FLOAT[%" PRIu32 "] or DOUBLE[%" PRIu32
                    "] (rule 9g, D10)",
                    Q(spec->data_type), rgmp_measure_name(m), need, need);
    /* 11 / 12 value */
    if (is_static && !has_value)
        return fail(err, -EPROTO, l, "value missing: required on static_data entries (rule 11)");
    if (!is_static && has_value)
        return fail(err, -EPROTO, l,
                    "value: only allowed on static_data entries, not on group "
                    "streams (rule 12)");
    if (is_static) {
        if (jvalue) {
            rc = json_value_encode(l, &out->type, jvalue, &out->value, err);
            if (rc < 0) return rc;
        } else {
            rc = bytes_value_check(l, &out->type, spec->value, spec->value_len, err);
            if (rc < 0) return rc;
            out->value = malloc(out->type.size ? out->type.size : 1);
            if (!out->value) return fail(err, -ENOMEM, l, "out of memory");
            memcpy(out->value, spec->value, out->type.size);
        }
    }
    /* copy strings; reference_frame == target_frame is normalised to absent (9c) */
    out->measure_name = xstrdup(spec->measure_type);
    out->target_frame = xstrdup(spec->target_frame);
    bool ref = spec->reference_frame && strcmp(spec->reference_frame, spec->target_frame) != 0;
    out->reference_frame = ref ? xstrdup(spec->reference_frame) : NULL;
    out->custom_label = spec->custom_label ? xstrdup(spec->custom_label) : NULL;
    bool oom = !out->measure_name || !out->target_frame || (ref && !out->reference_frame) ||
               (spec->custom_label && !out->custom_label);
    if (spec->bits && spec->n_bits) {
        out->bits = calloc(spec->n_bits, sizeof *out->bits);
        if (!out->bits) {
            oom = true;
        } else {
            out->n_bits = spec->n_bits;
            for (size_t i = 0; i < spec->n_bits; i++) {
                out->bits[i].bit = spec->bits[i].bit;
                out->bits[i].name = xstrdup(spec->bits[i].name);
                oom |= !out->bits[i].name;
            }
        }
    }
    if (oom) {
        stream_clear(out);
        return fail(err, -ENOMEM, l, "out of memory");
    }
    return 0;
}

static bool opt_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Rule 10 key equality (reference frames are already normalised). */
static bool same_key(const struct rgmp_stream *a, const struct rgmp_stream *b)
{
    return strcmp(a->measure_name, b->measure_name) == 0 &&
           strcmp(a->target_frame, b->target_frame) == 0 &&
           opt_eq(a->reference_frame, b->reference_frame) &&
           (a->measure != RGMP_CUSTOM || opt_eq(a->custom_label, b->custom_label));
}

static int group_append(struct rgmp_definition *def, size_t gi, const struct loc *l,
                        const struct rgmp_entry_spec *spec, const json_t *jvalue, bool has_value,
                        const struct rgmp_limits *lim, struct xg_error *err)
{
    struct rgmp_group *g = &def->groups[gi];
    struct rgmp_stream s;
    int rc = entry_build(l, spec, jvalue, has_value, false, &s, err);
    if (rc < 0) return rc;
    for (size_t j = 0; j < g->n_streams; j++)
        if (same_key(&g->streams[j], &s)) {
            rc = fail(err, -EPROTO, l,
                      "duplicate stream key (measure_type %s, target_frame %s, reference_frame "
                      "%s%s%s) already used by stream %zu (rule 10)",
                      Q(s.measure_name), Q(s.target_frame),
                      s.reference_frame ? Q(s.reference_frame) : "(none)",
                      s.custom_label ? ", custom_label " : "",
                      s.custom_label ? Q(s.custom_label) : "", j);
            stream_clear(&s);
            return rc;
        }
    uint64_t total = (uint64_t)g->values_len + s.type.size;
    if (RGMP_DATA_HEADER_LEN + total > UINT32_MAX) {
        rc = fail(err, -EPROTO, l,
                  "data_type %s: group data frame of 16 + %" PRIu64
                  " bytes exceeds 0xFFFFFFFF (rule 13)",
                  Q(spec->data_type), total);
        stream_clear(&s);
        return rc;
    }
    if (RGMP_DATA_HEADER_LEN + total > lim->max_data_len) {
        rc = fail(err, -EPROTO, l,
                  "data_type %s: group data frame of 16 + %" PRIu64
                  " bytes exceeds the maximum data frame of %" PRIu32 " bytes (D8)",
                  Q(spec->data_type), total, lim->max_data_len);
        stream_clear(&s);
        return rc;
    }
    struct rgmp_stream *ns = realloc(g->streams, (g->n_streams + 1) * sizeof *ns);
    if (!ns) {
        stream_clear(&s);
        return fail(err, -ENOMEM, l, "out of memory");
    }
    g->streams = ns;
    s.offset = g->values_len;
    g->streams[g->n_streams] = s;
    g->values_len = (uint32_t)total;
    return (int)g->n_streams++;
}

static int static_append(struct rgmp_definition *def, const struct loc *l,
                         const struct rgmp_entry_spec *spec, const json_t *jvalue, bool has_value,
                         struct xg_error *err)
{
    struct rgmp_stream s;
    int rc = entry_build(l, spec, jvalue, has_value, true, &s, err);
    if (rc < 0) return rc;
    struct rgmp_stream *ns = realloc(def->static_data, (def->n_static + 1) * sizeof *ns);
    if (!ns) {
        stream_clear(&s);
        return fail(err, -ENOMEM, l, "out of memory");
    }
    def->static_data = ns;
    def->static_data[def->n_static] = s;
    return (int)def->n_static++;
}

static int group_new(struct rgmp_definition *def, const struct loc *l, const char *name,
                     double rate, struct xg_error *err)
{
    if (!isfinite(rate) || rate < 0)
        return fail(err, -EPROTO, l, "expected_rate_hz = %g: must be a finite number >= 0 (rule 8)",
                    rate);
    struct rgmp_group *ng = realloc(def->groups, (def->n_groups + 1) * sizeof *ng);
    if (!ng) return fail(err, -ENOMEM, l, "out of memory");
    def->groups = ng;
    struct rgmp_group *g = &def->groups[def->n_groups];
    memset(g, 0, sizeof *g);
    g->name = xstrdup(name);
    if (!g->name) return fail(err, -ENOMEM, l, "out of memory");
    g->expected_rate_hz = rate;
    return (int)def->n_groups++;
}

/* ------------------------------------------------------------------------------------------ */
/* Definition: JSON decoding                                                                   */

/* Offset of the first invalid UTF-8 sequence, or -1 (rule 4). Rejects overlong forms,
 * surrogates and code points above U+10FFFF. */
static long utf8_invalid_at(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            cp = c & 0x07;
        } else {
            return (long)i;
        }
        if (n - i <= k) return (long)i;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return (long)i;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return (long)i;
        i += k + 1;
    }
    return -1;
}

/* Optional string member: absent -> *out NULL; present and not a string -> error (rule 6). */
static int get_opt_string(const struct loc *l, const json_t *obj, const char *key, const char **out,
                          const char *rule, struct xg_error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v) return 0;
    if (!json_is_string(v))
        return fail(err, -EPROTO, l, "%s = %s: expected a string (%s)", key, J(v), rule);
    *out = json_string_value(v);
    return 0;
}

static int get_req_string(const struct loc *l, const json_t *obj, const char *key, const char **out,
                          const char *rule, struct xg_error *err)
{
    int rc = get_opt_string(l, obj, key, out, rule, err);
    if (rc == 0 && !*out) return fail(err, -EPROTO, l, "%s missing (%s)", key, rule);
    return rc;
}

/* Decimal bit index key of bit_mapping: digits only, no leading zero, <= 4294967295. */
static bool parse_bit_key(const char *k, uint32_t *out)
{
    if (!is_digit(k[0]) || (k[0] == '0' && k[1])) return false;
    uint64_t v = 0;
    for (const char *p = k; *p; p++) {
        if (!is_digit(*p)) return false;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX) return false;
    }
    *out = (uint32_t)v;
    return true;
}

/* One stream or static_data entry object from JSON. */
static int json_entry(struct rgmp_definition *def, const struct loc *l, const json_t *e,
                      bool is_static, size_t gi, const struct rgmp_limits *lim,
                      struct xg_error *err)
{
    if (!json_is_object(e))
        return fail(err, -EPROTO, l, "entry = %s: expected an object (rule 9)", J(e));
    struct rgmp_entry_spec spec = {0};
    int rc;
    if ((rc = get_req_string(l, e, "data_type", &spec.data_type, "rule 9a", err)) < 0 ||
        (rc = get_req_string(l, e, "measure_type", &spec.measure_type, "rule 9b", err)) < 0 ||
        (rc = get_req_string(l, e, "target_frame", &spec.target_frame, "rule 9c", err)) < 0 ||
        (rc = get_opt_string(l, e, "reference_frame", &spec.reference_frame, "rule 9c", err)) < 0 ||
        (rc = get_opt_string(l, e, "custom_label", &spec.custom_label, "rules 9d, 9e", err)) < 0)
        return rc;
    const json_t *bm = json_object_get(e, "bit_mapping");
    struct rgmp_bit_spec *bits = NULL;
    static const struct rgmp_bit_spec no_bits[1] = {{0, NULL}};
    if (bm) {
        if (!json_is_object(bm))
            return fail(err, -EPROTO, l, "bit_mapping = %s: expected an object (rule 9f)", J(bm));
        size_t n = json_object_size(bm), i = 0;
        bits = n ? calloc(n, sizeof *bits) : NULL;
        if (n && !bits) return fail(err, -ENOMEM, l, "out of memory");
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)bm, key, val)
        {
            if (!parse_bit_key(key, &bits[i].bit)) {
                free(bits);
                return fail(err, -EPROTO, l,
                            "bit_mapping key %s: not a decimal bit index (rule 9f)", Q(key));
            }
            if (!json_is_string(val)) {
                free(bits);
                return fail(err, -EPROTO, l,
                            "bit_mapping key %s = %s: name must be a string "
                            "(rule 9f)",
                            Q(key), J(val));
            }
            bits[i].name = json_string_value(val);
            i++;
        }
        spec.bits = bits ? bits : no_bits;
        spec.n_bits = n;
    }
    const json_t *value = json_object_get(e, "value");
    if (is_static)
        rc = static_append(def, l, &spec, value, value != NULL, err);
    else
        rc = group_append(def, gi, l, &spec, value, value != NULL, lim, err);
    free(bits);
    return rc < 0 ? rc : 0;
}

static int json_group(struct rgmp_definition *def, struct loc *l, const json_t *g,
                      const struct rgmp_limits *lim, struct xg_error *err)
{
    if (!json_is_object(g))
        return fail(err, -EPROTO, l, "group = %s: expected an object (rule 8)", J(g));
    const char *name;
    int rc = get_req_string(l, g, "name", &name, "rule 8", err);
    if (rc < 0) return rc;
    l->group_name = name;
    const json_t *rate = json_object_get(g, "expected_rate_hz");
    if (!rate) return fail(err, -EPROTO, l, "expected_rate_hz missing (rule 8)");
    if (!json_is_number(rate))
        return fail(err, -EPROTO, l, "expected_rate_hz = %s: expected a number (rule 8)", J(rate));
    const json_t *streams = json_object_get(g, "streams");
    if (!streams) return fail(err, -EPROTO, l, "streams missing (rule 8)");
    if (!json_is_array(streams))
        return fail(err, -EPROTO, l, "streams = %s: expected an array (rule 8)", J(streams));
    rc = group_new(def, l, name, json_number_value(rate), err);
    if (rc < 0) return rc;
    size_t gi = (size_t)rc;
    for (size_t i = 0; i < json_array_size(streams); i++) {
        l->stream = (long)i;
        rc = json_entry(def, l, json_array_get(streams, i), false, gi, lim, err);
        if (rc < 0) return rc;
    }
    l->stream = -1;
    return 0;
}

static int decode_root(struct rgmp_definition *def, const json_t *root,
                       const struct rgmp_limits *lim, struct xg_error *err)
{
    struct loc l = loc_none();
    /* rule 5 */
    const json_t *id = json_object_get(root, "device_id");
    if (!id) return fail(err, -EPROTO, &l, "device_id missing (rule 5)");
    if (!json_is_integer(id) || json_integer_value(id) < 0 ||
        json_integer_value(id) > (json_int_t)UINT32_MAX)
        return fail(err, -EPROTO, &l,
                    "device_id = %s: must be an integer in 0..4294967295 (rule 5)", J(id));
    def->device_id = (uint32_t)json_integer_value(id);
    l.has_device = true;
    l.device_id = def->device_id;

    /* rule 6: top-level types */
    const char *pn, *pv, *dt, *te;
    int rc;
    if ((rc = get_opt_string(&l, root, "protocol_name", &pn, "rule 6", err)) < 0 ||
        (rc = get_opt_string(&l, root, "protocol_version", &pv, "rule 6", err)) < 0 ||
        (rc = get_opt_string(&l, root, "device_type", &dt, "rule 6", err)) < 0 ||
        (rc = get_opt_string(&l, root, "timestamp_epoch", &te, "rule 6", err)) < 0)
        return rc;
    /* rule 7 / D4: major version 2 */
    if (pv) {
        const char *p = pv;
        uint64_t major = 0;
        bool digits = false;
        for (; is_digit(*p) && major < 1000; p++, digits = true)
            major = major * 10 + (uint64_t)(*p - '0');
        if (!digits || (*p != '.' && *p != '\0') || major != 2)
            return fail(err, -EPROTO, &l,
                        "protocol_version = %s: major version must be 2 (rule 7, D4)", Q(pv));
    }
    /* rule 7 / D10: unknown epoch accepted, treated like device_boot */
    def->epoch = !te                              ? RGMP_EPOCH_OTHER
                 : strcmp(te, "unix_epoch") == 0  ? RGMP_EPOCH_UNIX
                 : strcmp(te, "device_boot") == 0 ? RGMP_EPOCH_DEVICE_BOOT
                                                  : RGMP_EPOCH_OTHER;
    const json_t *di = json_object_get(root, "device_info");
    if (di && !json_is_object(di))
        return fail(err, -EPROTO, &l, "device_info = %s: expected an object (rule 6)", J(di));
    const json_t *sd = json_object_get(root, "static_data");
    if (sd && !json_is_array(sd))
        return fail(err, -EPROTO, &l, "static_data = %s: expected an array (rule 6)", J(sd));
    const json_t *groups = json_object_get(root, "groups");
    if (!groups) return fail(err, -EPROTO, &l, "groups missing (rule 6)");
    if (!json_is_array(groups))
        return fail(err, -EPROTO, &l, "groups = %s: expected an array (rule 6)", J(groups));

    def->protocol_name = xstrdup(pn);
    def->protocol_version = xstrdup(pv);
    def->device_type = xstrdup(dt);
    def->timestamp_epoch = xstrdup(te);
    def->device_info_json = di ? json_dumps(di, JSON_COMPACT) : NULL;
    if ((pn && !def->protocol_name) || (pv && !def->protocol_version) ||
        (dt && !def->device_type) || (te && !def->timestamp_epoch) ||
        (di && !def->device_info_json))
        return fail(err, -ENOMEM, &l, "out of memory");

    l.is_static = true;
    for (size_t i = 0; sd && i < json_array_size(sd); i++) {
        l.stream = (long)i;
        rc = json_entry(def, &l, json_array_get(sd, i), true, 0, lim, err);
        if (rc < 0) return rc;
    }
    l.is_static = false;
    l.stream = -1;
    for (size_t g = 0; g < json_array_size(groups); g++) {
        l.group = (long)g;
        l.group_name = NULL;
        rc = json_group(def, &l, json_array_get(groups, g), lim, err);
        if (rc < 0) return rc;
    }
    return 0;
}

int rgmp_definition_decode(const void *json, size_t len, const struct rgmp_limits *lim,
                           struct rgmp_definition **out, struct xg_error *err)
{
    struct rgmp_limits tmp;
    lim = limits_or_default(lim, &tmp);
    struct loc l = loc_none();
    *out = NULL;
    if (len > lim->max_definition_len)
        return fail(err, -EMSGSIZE, &l,
                    "msg_len = %zu: stream definition exceeds the maximum of %" PRIu32
                    " bytes (rule 3, D8)",
                    len, lim->max_definition_len);
    const uint8_t *p = json;
    const void *nul = len ? memchr(p, 0, len) : NULL;
    if (nul)
        return fail(err, -EPROTO, &l, "payload: NUL byte at offset %td (rule 4)",
                    (const uint8_t *)nul - p);
    long bad = utf8_invalid_at(p, len);
    if (bad >= 0)
        return fail(err, -EPROTO, &l, "payload: invalid UTF-8 byte 0x%02x at offset %ld (rule 4)",
                    p[bad], bad);
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return fail(err, -EPROTO, &l, "payload: invalid JSON at line %d column %d: %s (rule 4)",
                    je.line, je.column, je.text);
    if (!json_is_object(root)) {
        int rc = fail(err, -EPROTO, &l, "payload = %s: expected one JSON object (rule 4)", J(root));
        json_decref(root);
        return rc;
    }
    struct rgmp_definition *def = calloc(1, sizeof *def);
    if (!def) {
        json_decref(root);
        return fail(err, -ENOMEM, &l, "out of memory");
    }
    int rc = decode_root(def, root, lim, err);
    json_decref(root);
    if (rc < 0) {
        rgmp_definition_free(def);
        return rc;
    }
    *out = def;
    return 0;
}

long rgmp_group_find(const struct rgmp_definition *def, size_t group, const char *measure_type,
                     const char *target_frame, const char *reference_frame,
                     const char *custom_label)
{
    if (!def || group >= def->n_groups || !measure_type || !target_frame) return -1;
    if (reference_frame && strcmp(reference_frame, target_frame) == 0) reference_frame = NULL;
    const struct rgmp_group *g = &def->groups[group];
    for (size_t i = 0; i < g->n_streams; i++) {
        const struct rgmp_stream *s = &g->streams[i];
        if (strcmp(s->measure_name, measure_type) == 0 &&
            strcmp(s->target_frame, target_frame) == 0 &&
            opt_eq(s->reference_frame, reference_frame) &&
            (s->measure != RGMP_CUSTOM || opt_eq(s->custom_label, custom_label)))
            return (long)i;
    }
    return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Definition: building                                                                        */

struct rgmp_definition *rgmp_definition_new(uint32_t device_id, const char *device_type,
                                            enum rgmp_epoch epoch)
{
    struct rgmp_definition *def = calloc(1, sizeof *def);
    if (!def) return NULL;
    def->device_id = device_id;
    def->protocol_name = xstrdup("RGMP");
    def->protocol_version = xstrdup("2.0.0");
    def->device_type = xstrdup(device_type);
    def->epoch = epoch == RGMP_EPOCH_UNIX ? RGMP_EPOCH_UNIX : RGMP_EPOCH_DEVICE_BOOT;
    def->timestamp_epoch = xstrdup(epoch == RGMP_EPOCH_UNIX ? "unix_epoch" : "device_boot");
    if (!def->protocol_name || !def->protocol_version || (device_type && !def->device_type) ||
        !def->timestamp_epoch) {
        rgmp_definition_free(def);
        return NULL;
    }
    return def;
}

static struct loc def_loc(const struct rgmp_definition *def)
{
    struct loc l = loc_none();
    l.has_device = true;
    l.device_id = def->device_id;
    return l;
}

int rgmp_definition_add_group(struct rgmp_definition *def, const char *name, double rate_hz,
                              struct xg_error *err)
{
    struct loc l = def_loc(def);
    l.group = (long)def->n_groups;
    l.group_name = name;
    if (!name) return fail(err, -EPROTO, &l, "name missing (rule 8)");
    return group_new(def, &l, name, rate_hz, err);
}

int rgmp_definition_add_stream(struct rgmp_definition *def, size_t group,
                               const struct rgmp_entry_spec *spec, struct xg_error *err)
{
    struct loc l = def_loc(def);
    if (group >= def->n_groups)
        return fail(err, -EINVAL, &l, "group_id = %zu: definition has %zu groups", group,
                    def->n_groups);
    l.group = (long)group;
    l.group_name = def->groups[group].name;
    l.stream = (long)def->groups[group].n_streams;
    struct rgmp_limits tmp;
    return group_append(def, group, &l, spec, NULL, spec->value != NULL,
                        limits_or_default(NULL, &tmp), err);
}

int rgmp_definition_add_static(struct rgmp_definition *def, const struct rgmp_entry_spec *spec,
                               struct xg_error *err)
{
    struct loc l = def_loc(def);
    l.is_static = true;
    l.stream = (long)def->n_static;
    return static_append(def, &l, spec, NULL, spec->value != NULL, err);
}

/* ---- JSON text output ---- */

struct sb {
    char *p;
    size_t len, cap;
    bool oom;
};

static void sb_put(struct sb *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(struct sb *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

/* A JSON string with Python json.dumps' escapes for ASCII (non-ASCII stays UTF-8). */
static void sb_str(struct sb *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[8];
        switch (c) {
        case '"':
            sb_puts(b, "\\\"");
            break;
        case '\\':
            sb_puts(b, "\\\\");
            break;
        case '\n':
            sb_puts(b, "\\n");
            break;
        case '\r':
            sb_puts(b, "\\r");
            break;
        case '\t':
            sb_puts(b, "\\t");
            break;
        case '\b':
            sb_puts(b, "\\b");
            break;
        case '\f':
            sb_puts(b, "\\f");
            break;
        default:
            if (c < 0x20) {
                snprintf(e, sizeof e, "\\u%04x", c);
                sb_puts(b, e);
            } else {
                sb_put(b, (const char *)&c, 1);
            }
        }
    }
    sb_put(b, "\"", 1);
}

static void sb_key(struct sb *b, const char *k)
{
    sb_str(b, k);
    sb_put(b, ":", 1);
}

/* Python-like float text: "1.0", "0.02", "1e-05". */
static void py_float_fix(char *buf, size_t cap)
{
    if (!strpbrk(buf, ".eni")) strncat(buf, ".0", cap - strlen(buf) - 1);
}

static void fmt_double(char *buf, size_t cap, double v)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    py_float_fix(buf, cap);
}

static void fmt_float(char *buf, size_t cap, float v)
{
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, cap, "%.*g", p, (double)v);
        if (strtof(buf, NULL) == v) break;
    }
    py_float_fix(buf, cap);
}

static void sb_elem(struct sb *b, const struct rgmp_data_type *t, const uint8_t *v, uint32_t i)
{
    char buf[48];
    struct xg_reader r = value_reader(t, v, i);
    switch (t->base) {
    case RGMP_INT32:
        snprintf(buf, sizeof buf, "%" PRId32, (int32_t)xg_read_le32(&r));
        break;
    case RGMP_UINT32:
        snprintf(buf, sizeof buf, "%" PRIu32, xg_read_le32(&r));
        break;
    case RGMP_INT64:
        snprintf(buf, sizeof buf, "%" PRId64, (int64_t)xg_read_le64(&r));
        break;
    case RGMP_UINT64:
        snprintf(buf, sizeof buf, "%" PRIu64, xg_read_le64(&r));
        break;
    case RGMP_FLOAT:
        fmt_float(buf, sizeof buf, xg_read_lef32(&r));
        break;
    case RGMP_DOUBLE:
        fmt_double(buf, sizeof buf, xg_read_lef64(&r));
        break;
    }
    sb_puts(b, buf);
}

static void sb_entry(struct sb *b, const struct rgmp_stream *s)
{
    char tn[32];
    rgmp_data_type_format(&s->type, tn, sizeof tn);
    sb_puts(b, "{");
    sb_key(b, "data_type");
    sb_str(b, tn);
    sb_puts(b, ",");
    sb_key(b, "measure_type");
    sb_str(b, s->measure_name);
    sb_puts(b, ",");
    sb_key(b, "target_frame");
    sb_str(b, s->target_frame);
    if (s->reference_frame) {
        sb_puts(b, ",");
        sb_key(b, "reference_frame");
        sb_str(b, s->reference_frame);
    }
    if (s->custom_label) {
        sb_puts(b, ",");
        sb_key(b, "custom_label");
        sb_str(b, s->custom_label);
    }
    if (s->measure == RGMP_STATUS_FLAGS) {
        sb_puts(b, ",");
        sb_key(b, "bit_mapping");
        sb_puts(b, "{");
        for (size_t i = 0; i < s->n_bits; i++) {
            char k[16];
            snprintf(k, sizeof k, "%" PRIu32, s->bits[i].bit);
            if (i) sb_puts(b, ",");
            sb_key(b, k);
            sb_str(b, s->bits[i].name);
        }
        sb_puts(b, "}");
    }
    if (s->value) {
        sb_puts(b, ",");
        sb_key(b, "value");
        if (s->type.rank == 0) {
            sb_elem(b, &s->type, s->value, 0);
        } else {
            sb_puts(b, "[");
            for (uint32_t i = 0; i < s->type.count; i++) {
                if (i) sb_puts(b, ",");
                sb_elem(b, &s->type, s->value, i);
            }
            sb_puts(b, "]");
        }
    }
    sb_puts(b, "}");
}

int rgmp_definition_to_json(const struct rgmp_definition *def, char **json, size_t *len,
                            struct xg_error *err)
{
    struct sb b = {0};
    char num[48];
    *json = NULL;
    *len = 0;
    sb_puts(&b, "{");
    if (def->protocol_name) {
        sb_key(&b, "protocol_name");
        sb_str(&b, def->protocol_name);
        sb_puts(&b, ",");
    }
    if (def->protocol_version) {
        sb_key(&b, "protocol_version");
        sb_str(&b, def->protocol_version);
        sb_puts(&b, ",");
    }
    sb_key(&b, "device_id");
    snprintf(num, sizeof num, "%" PRIu32, def->device_id);
    sb_puts(&b, num);
    if (def->device_type) {
        sb_puts(&b, ",");
        sb_key(&b, "device_type");
        sb_str(&b, def->device_type);
    }
    if (def->timestamp_epoch) {
        sb_puts(&b, ",");
        sb_key(&b, "timestamp_epoch");
        sb_str(&b, def->timestamp_epoch);
    }
    if (def->device_info_json) {
        sb_puts(&b, ",");
        sb_key(&b, "device_info");
        sb_puts(&b, def->device_info_json);
    }
    sb_puts(&b, ",");
    sb_key(&b, "static_data");
    sb_puts(&b, "[");
    for (size_t i = 0; i < def->n_static; i++) {
        if (i) sb_puts(&b, ",");
        sb_entry(&b, &def->static_data[i]);
    }
    sb_puts(&b, "],");
    sb_key(&b, "groups");
    sb_puts(&b, "[");
    for (size_t g = 0; g < def->n_groups; g++) {
        const struct rgmp_group *gr = &def->groups[g];
        if (g) sb_puts(&b, ",");
        sb_puts(&b, "{");
        sb_key(&b, "name");
        sb_str(&b, gr->name);
        sb_puts(&b, ",");
        sb_key(&b, "expected_rate_hz");
        double r = gr->expected_rate_hz;
        if (r == floor(r) && fabs(r) < 1e15)
            snprintf(num, sizeof num, "%.0f", r);
        else
            fmt_double(num, sizeof num, r);
        sb_puts(&b, num);
        sb_puts(&b, ",");
        sb_key(&b, "streams");
        sb_puts(&b, "[");
        for (size_t i = 0; i < gr->n_streams; i++) {
            if (i) sb_puts(&b, ",");
            sb_entry(&b, &gr->streams[i]);
        }
        sb_puts(&b, "]}");
    }
    sb_puts(&b, "]}");
    if (b.oom) {
        free(b.p);
        struct loc l = def_loc(def);
        return fail(err, -ENOMEM, &l, "definition JSON: out of memory");
    }
    *json = b.p;
    *len = b.len;
    return 0;
}

int rgmp_encode_definition(struct xg_writer *w, const struct rgmp_definition *def,
                           struct xg_error *err)
{
    char *json;
    size_t len;
    int rc = rgmp_definition_to_json(def, &json, &len, err);
    if (rc < 0) return rc;
    struct loc l = def_loc(def);
    if (w->err || len > UINT32_MAX || w->cap - w->len < RGMP_HEADER_LEN + len) {
        free(json);
        return fail(err, -EMSGSIZE, &l,
                    "definition frame of %zu bytes does not fit the output buffer (%zu left)",
                    RGMP_HEADER_LEN + len, w->err ? 0 : w->cap - w->len);
    }
    rgmp_encode_header(w, RGMP_MSG_DEFINITION, (uint32_t)len);
    xg_write_bytes(w, json, len);
    free(json);
    return w->err;
}

/* ------------------------------------------------------------------------------------------ */
/* Data Frame                                                                                  */

int rgmp_data_peek(const void *payload, size_t len, struct rgmp_data_frame *f, struct xg_error *err)
{
    memset(f, 0, sizeof *f);
    if (len < RGMP_DATA_HEADER_LEN) {
        struct loc l = loc_none();
        if (len >= 4) {
            l.has_device = true;
            l.device_id = xg_load_le32(payload);
        }
        return fail(err, -EPROTO, &l,
                    "msg_len = %zu: data frame shorter than its 16-byte header (rule 14)", len);
    }
    struct xg_reader r;
    xg_reader_init(&r, payload, len);
    f->device_id = xg_read_le32(&r);
    f->group_id = xg_read_le32(&r);
    f->timestamp_us = xg_read_le64(&r);
    f->values_len = (uint32_t)xg_reader_left(&r);
    f->values = xg_read_bytes(&r, f->values_len);
    return r.err;
}

int rgmp_data_decode(const void *payload, size_t len, const struct rgmp_definition *def,
                     struct rgmp_data_frame *f, struct xg_error *err)
{
    int rc = rgmp_data_peek(payload, len, f, err);
    if (rc < 0) return rc;
    struct loc l = loc_none();
    l.has_device = true;
    l.device_id = f->device_id;
    if (!def)
        return fail(err, -EPROTO, &l,
                    "device_id = %" PRIu32 ": data frame for a device with no active "
                    "definition (rule 15)",
                    f->device_id);
    if (def->device_id != f->device_id)
        return fail(err, -EINVAL, &l,
                    "device_id = %" PRIu32 ": decoded against the definition of device %" PRIu32,
                    f->device_id, def->device_id);
    if (f->group_id >= def->n_groups) {
        l.group = f->group_id;
        return fail(err, -EPROTO, &l,
                    "group_id = %" PRIu32 ": the definition has %zu groups (rule 16)", f->group_id,
                    def->n_groups);
    }
    const struct rgmp_group *g = &def->groups[f->group_id];
    l.group = f->group_id;
    l.group_name = g->name;
    if (f->values_len != g->values_len)
        return fail(err, -EPROTO, &l,
                    "msg_len = %zu: expected exactly %" PRIu32 " = 16 + %" PRIu32
                    " bytes of stream values (rule 17)",
                    len, RGMP_DATA_HEADER_LEN + g->values_len, g->values_len);
    return 0;
}

const uint8_t *rgmp_data_stream(const struct rgmp_definition *def, const struct rgmp_data_frame *f,
                                size_t stream)
{
    if (!def || f->group_id >= def->n_groups) return NULL;
    const struct rgmp_group *g = &def->groups[f->group_id];
    if (stream >= g->n_streams || f->values_len != g->values_len || !f->values) return NULL;
    return f->values + g->streams[stream].offset;
}

int rgmp_group_check_timestamp(struct rgmp_definition *def, const struct rgmp_data_frame *f,
                               bool strict, struct xg_error *err)
{
    struct loc l = def_loc(def);
    if (f->group_id >= def->n_groups)
        return fail(err, -EINVAL, &l, "group_id = %" PRIu32 ": no such group", f->group_id);
    struct rgmp_group *g = &def->groups[f->group_id];
    l.group = f->group_id;
    l.group_name = g->name;
    if (g->has_timestamp && f->timestamp_us <= g->last_timestamp_us) {
        int code = strict ? -EPROTO : RGMP_OUT_OF_ORDER;
        fail(err, code, &l,
             "timestamp_us = %" PRIu64 ": not greater than the previous %" PRIu64
             " (rule 18, D2%s)",
             f->timestamp_us, g->last_timestamp_us, strict ? ", strict" : ": dropped");
        return code;
    }
    g->has_timestamp = true;
    g->last_timestamp_us = f->timestamp_us;
    return 0;
}

int rgmp_encode_data(struct xg_writer *w, const struct rgmp_definition *def, uint32_t group_id,
                     uint64_t timestamp_us, const void *values, size_t len, struct xg_error *err)
{
    struct loc l = def_loc(def);
    if (group_id >= def->n_groups)
        return fail(err, -EINVAL, &l, "group_id = %" PRIu32 ": the definition has %zu groups",
                    group_id, def->n_groups);
    l.group = group_id;
    l.group_name = def->groups[group_id].name;
    if (len != def->groups[group_id].values_len || (len && !values))
        return fail(err, -EINVAL, &l, "values: %zu bytes, the group needs %" PRIu32 " (rule 17)",
                    len, def->groups[group_id].values_len);
    size_t total = RGMP_HEADER_LEN + RGMP_DATA_HEADER_LEN + len;
    if (w->err || w->cap - w->len < total)
        return fail(err, -EMSGSIZE, &l, "data frame of %zu bytes does not fit the output buffer",
                    total);
    rgmp_encode_header(w, RGMP_MSG_DATA, (uint32_t)(RGMP_DATA_HEADER_LEN + len));
    xg_write_le32(w, def->device_id);
    xg_write_le32(w, group_id);
    xg_write_le64(w, timestamp_us);
    xg_write_bytes(w, values, len);
    return w->err;
}

/* ------------------------------------------------------------------------------------------ */
/* Device Disconnect                                                                           */

int rgmp_disconnect_decode(const void *payload, size_t len, uint32_t *device_id,
                           struct xg_error *err)
{
    *device_id = 0;
    if (len != RGMP_DISCONNECT_LEN) {
        struct loc l = loc_none();
        return fail(err, -EPROTO, &l,
                    "msg_len = %zu: device disconnect payload must be 4 bytes (rule 20)", len);
    }
    struct xg_reader r;
    xg_reader_init(&r, payload, len);
    *device_id = xg_read_le32(&r);
    return r.err;
}

int rgmp_encode_disconnect(struct xg_writer *w, uint32_t device_id)
{
    if (w->err || w->cap - w->len < RGMP_HEADER_LEN + RGMP_DISCONNECT_LEN) {
        w->err = -EMSGSIZE;
        return w->err;
    }
    rgmp_encode_header(w, RGMP_MSG_DISCONNECT, RGMP_DISCONNECT_LEN);
    return xg_write_le32(w, device_id);
}

/* ------------------------------------------------------------------------------------------ */
/* Session                                                                                     */

void rgmp_session_init(struct rgmp_session *s, const struct rgmp_limits *lim, bool strict)
{
    memset(s, 0, sizeof *s);
    limits_or_default(lim, &s->limits);
    s->strict = strict;
}

void rgmp_session_free(struct rgmp_session *s)
{
    for (size_t i = 0; i < s->n_devices; i++)
        rgmp_definition_free(s->devices[i]);
    free(s->devices);
    s->devices = NULL;
    s->n_devices = s->cap = 0;
}

static long session_index(const struct rgmp_session *s, uint32_t device_id)
{
    for (size_t i = 0; i < s->n_devices; i++)
        if (s->devices[i]->device_id == device_id) return (long)i;
    return -1;
}

struct rgmp_definition *rgmp_session_find(const struct rgmp_session *s, uint32_t device_id)
{
    long i = session_index(s, device_id);
    return i < 0 ? NULL : s->devices[i];
}

int rgmp_session_handle(struct rgmp_session *s, const struct rgmp_header *h, const void *payload,
                        struct rgmp_event *ev, struct xg_error *err)
{
    memset(ev, 0, sizeof *ev);
    int rc = rgmp_header_check(h, &s->limits, err);
    if (rc < 0) return rc;
    switch (h->msg_prefix) {
    case RGMP_MSG_DEFINITION: {
        struct rgmp_definition *def;
        rc = rgmp_definition_decode(payload, h->msg_len, &s->limits, &def, err);
        if (rc < 0) return rc;
        long i = session_index(s, def->device_id);
        if (i >= 0) { /* D3: a new session replaces the active one */
            rgmp_definition_free(s->devices[i]);
            s->devices[i] = def;
            ev->replaced = true;
        } else {
            if (s->n_devices == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 4;
                struct rgmp_definition **nd = realloc(s->devices, cap * sizeof *nd);
                if (!nd) {
                    rgmp_definition_free(def);
                    struct loc l = loc_none();
                    return fail(err, -ENOMEM, &l, "out of memory");
                }
                s->devices = nd;
                s->cap = cap;
            }
            s->devices[s->n_devices++] = def;
        }
        ev->type = RGMP_EV_DEFINITION;
        ev->device_id = def->device_id;
        ev->def = def;
        return 0;
    }
    case RGMP_MSG_DATA: {
        struct rgmp_data_frame f;
        rc = rgmp_data_peek(payload, h->msg_len, &f, err);
        if (rc < 0) return rc;
        struct rgmp_definition *def = rgmp_session_find(s, f.device_id);
        rc = rgmp_data_decode(payload, h->msg_len, def, &f, err);
        if (rc < 0) return rc;
        rc = rgmp_group_check_timestamp(def, &f, s->strict, err);
        if (rc < 0) return rc;
        ev->type = rc == RGMP_OUT_OF_ORDER ? RGMP_EV_DROPPED : RGMP_EV_DATA;
        if (rc == RGMP_OUT_OF_ORDER) s->frames_out_of_order++;
        ev->device_id = f.device_id;
        ev->def = def;
        ev->frame = f;
        return 0;
    }
    default: { /* RGMP_MSG_DISCONNECT (rgmp_header_check allows nothing else) */
        uint32_t id;
        rc = rgmp_disconnect_decode(payload, h->msg_len, &id, err);
        if (rc < 0) return rc;
        long i = session_index(s, id);
        if (i < 0) {
            struct loc l = loc_none();
            l.has_device = true;
            l.device_id = id;
            return fail(err, -EPROTO, &l,
                        "device_id = %" PRIu32 ": disconnect for a device with no active "
                        "definition (rule 21)",
                        id);
        }
        rgmp_definition_free(s->devices[i]);
        s->devices[i] = s->devices[--s->n_devices];
        ev->type = RGMP_EV_DISCONNECT;
        ev->device_id = id;
        return 0;
    }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* §3 transform equation                                                                       */

void rgmp_rotation_matrix(struct xg_quat q, double R[3][3])
{
    double x = q.x, y = q.y, z = q.z, w = q.w;
    R[0][0] = 1 - 2 * (y * y + z * z);
    R[0][1] = 2 * (x * y - z * w);
    R[0][2] = 2 * (x * z + y * w);
    R[1][0] = 2 * (x * y + z * w);
    R[1][1] = 1 - 2 * (x * x + z * z);
    R[1][2] = 2 * (y * z - x * w);
    R[2][0] = 2 * (x * z - y * w);
    R[2][1] = 2 * (y * z + x * w);
    R[2][2] = 1 - 2 * (x * x + y * y);
}

static struct xg_vec3 mat_vec(const double R[3][3], struct xg_vec3 v)
{
    return (struct xg_vec3){R[0][0] * v.x + R[0][1] * v.y + R[0][2] * v.z,
                            R[1][0] * v.x + R[1][1] * v.y + R[1][2] * v.z,
                            R[2][0] * v.x + R[2][1] * v.y + R[2][2] * v.z};
}

struct xg_vec3 rgmp_transform_point(const struct rgmp_pose *T, struct xg_vec3 p_target)
{
    double R[3][3];
    rgmp_rotation_matrix(T->orientation, R);
    return xg_vec3_add(mat_vec(R, p_target), T->position);
}

struct rgmp_pose rgmp_transform_compose(const struct rgmp_pose *ab, const struct rgmp_pose *bc)
{
    struct rgmp_pose ac;
    ac.position = rgmp_transform_point(ab, bc->position);
    ac.orientation = xg_quat_mul(ab->orientation, bc->orientation);
    return ac;
}

struct rgmp_pose rgmp_transform_inverse(const struct rgmp_pose *T)
{
    double R[3][3], Rt[3][3];
    rgmp_rotation_matrix(T->orientation, R);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Rt[i][j] = R[j][i];
    struct rgmp_pose inv;
    inv.position = xg_vec3_scale(mat_vec(Rt, T->position), -1.0);
    inv.orientation = xg_quat_conj(T->orientation);
    return inv;
}

static bool float_vector(const struct rgmp_stream *s, uint32_t n)
{
    return s->type.rank == 1 && s->type.n == n &&
           (s->type.base == RGMP_FLOAT || s->type.base == RGMP_DOUBLE);
}

/* Read n values as doubles; -EDOM on NaN/Inf (D5). */
static int read_finite(const struct rgmp_stream *s, const uint8_t *vals, double *out, uint32_t n,
                       struct xg_error *err)
{
    for (uint32_t i = 0; i < n; i++) {
        out[i] = rgmp_value_f64(&s->type, vals, i);
        if (!isfinite(out[i]))
            return xg_error_set(err, -EDOM,
                                "%s %s: value[%" PRIu32 "] = %g: not finite, sample rejected (D5)",
                                s->measure_name, Q(s->target_frame), i, out[i]);
    }
    return 0;
}

int rgmp_pose_from_values(const struct rgmp_stream *s, const uint8_t *vals, struct rgmp_pose *out,
                          struct xg_error *err)
{
    double v[7] = {0};
    uint32_t n;
    size_t qoff;
    switch (s->measure) {
    case RGMP_TRANSFORM:
        n = 7;
        qoff = 3;
        break;
    case RGMP_POSITION:
        n = 3;
        qoff = 0;
        break;
    case RGMP_ORIENTATION:
        n = 4;
        qoff = 0;
        break;
    default:
        return xg_error_set(err, -EINVAL, "%s %s: not a pose measure", s->measure_name,
                            Q(s->target_frame));
    }
    if (!float_vector(s, n))
        return xg_error_set(err, -EINVAL, "%s %s: data type is not FLOAT/DOUBLE[%" PRIu32 "]",
                            s->measure_name, Q(s->target_frame), n);
    int rc = read_finite(s, vals, v, n, err);
    if (rc < 0) return rc;
    out->position = XG_VEC3_ZERO;
    out->orientation = XG_QUAT_IDENTITY;
    if (s->measure != RGMP_ORIENTATION) out->position = (struct xg_vec3){v[0], v[1], v[2]};
    if (s->measure != RGMP_POSITION) {
        const double *q = v + qoff;
        double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (fabs(norm - 1.0) > RGMP_QUAT_NORM_TOL)
            return xg_error_set(err, -EDOM,
                                "%s %s: quaternion norm = %.6g: off by more than 1e-3, sample "
                                "rejected (D5)",
                                s->measure_name, Q(s->target_frame), norm);
        out->orientation = (struct xg_quat){q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm};
    }
    return 0;
}

int rgmp_vec3_from_values(const struct rgmp_stream *s, const uint8_t *vals, struct xg_vec3 *out,
                          struct xg_error *err)
{
    if (!float_vector(s, 3))
        return xg_error_set(err, -EINVAL, "%s %s: data type is not FLOAT/DOUBLE[3]",
                            s->measure_name, Q(s->target_frame));
    double v[3];
    int rc = read_finite(s, vals, v, 3, err);
    if (rc < 0) return rc;
    *out = (struct xg_vec3){v[0], v[1], v[2]};
    return 0;
}
