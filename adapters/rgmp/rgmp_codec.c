/* RGMP v2 codec: framing, data types, values, data frames and disconnects (see rgmp_codec.h);
 * the definition model, its JSON decoder and encoder, the session and the poses live in the
 * other rgmp_*.c files. */
#include "adapters/rgmp/rgmp_codec_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Error helpers: every message starts with the location (device, group, stream)               */

struct rgmp_loc rgmp_loc_none(void)
{
    return (struct rgmp_loc){false, 0, -1, NULL, -1, false};
}

/* A printable, quoted, bounded copy of s for messages (control bytes become '?'). */
const char *rgmp_quote(char *buf, size_t cap, const char *s)
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

/* A short description of a JSON value for messages: "\"text\"", "12", "1.5", "true", "array". */
const char *rgmp_jdesc(char *buf, size_t cap, const json_t *v)
{
    if (!v) return "(absent)";
    switch (json_typeof(v)) {
    case JSON_STRING:
        return rgmp_quote(buf, cap, json_string_value(v));
    case JSON_INTEGER:
        snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL:
        rgmp_fmt_double(buf, cap, json_real_value(v));
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

void rgmp_loc_format(const struct rgmp_loc *l, char *buf, size_t cap)
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

__attribute__((format(printf, 4, 5))) int rgmp_fail(struct xg_error *err, int code,
                                                    const struct rgmp_loc *l, const char *fmt, ...)
{
    if (!err) return code;
    char where[160], what[XG_ERROR_MAX];
    rgmp_loc_format(l, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return xg_error_set(err, code, "%s: %s", where, what);
}

int rgmp_prefix_loc(struct xg_error *err, const struct rgmp_loc *l)
{
    if (!err) return 0;
    char where[160];
    rgmp_loc_format(l, where, sizeof where);
    return xg_error_prefix(err, "%s: ", where);
}

char *rgmp_strdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

const struct rgmp_limits *rgmp_limits_or_default(const struct rgmp_limits *lim,
                                                 struct rgmp_limits *tmp)
{
    tmp->max_definition_len =
        lim && lim->max_definition_len ? lim->max_definition_len : RGMP_MAX_DEFINITION_DEFAULT;
    tmp->max_data_len = lim && lim->max_data_len ? lim->max_data_len : RGMP_MAX_DATA_DEFAULT;
    return tmp;
}

/* ------------------------------------------------------------------------------------------ */
struct rgmp_loc rgmp_def_loc(const struct rgmp_definition *def)
{
    struct rgmp_loc l = rgmp_loc_none();
    l.has_device = true;
    l.device_id = def->device_id;
    return l;
}

/* Python-like float text: "1.0", "0.02", "1e-05". */
static void py_float_fix(char *buf, size_t cap)
{
    if (!strpbrk(buf, ".eni")) strncat(buf, ".0", cap - strlen(buf) - 1);
}

void rgmp_fmt_double(char *buf, size_t cap, double v)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    py_float_fix(buf, cap);
}

void rgmp_fmt_float(char *buf, size_t cap, float v)
{
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, cap, "%.*g", p, (double)v);
        if (strtof(buf, NULL) == v) break;
    }
    py_float_fix(buf, cap);
}

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
    lim = rgmp_limits_or_default(lim, &tmp);
    struct rgmp_loc l = rgmp_loc_none();
    switch (h->msg_prefix) {
    case RGMP_MSG_DEFINITION:
        if (h->msg_len > lim->max_definition_len)
            return rgmp_fail(err, -EMSGSIZE, &l,
                             "msg_len = %" PRIu32
                             ": stream definition exceeds the maximum of %" PRIu32
                             " bytes (rule 3, D8)",
                             h->msg_len, lim->max_definition_len);
        return 0;
    case RGMP_MSG_DATA:
        if (h->msg_len < RGMP_DATA_HEADER_LEN)
            return rgmp_fail(err, -EPROTO, &l,
                             "msg_len = %" PRIu32 ": data frame shorter than its 16-byte header "
                             "(rule 14)",
                             h->msg_len);
        if (h->msg_len > lim->max_data_len)
            return rgmp_fail(err, -EMSGSIZE, &l,
                             "msg_len = %" PRIu32 ": data frame exceeds the maximum of %" PRIu32
                             " bytes (rule 3, D8)",
                             h->msg_len, lim->max_data_len);
        return 0;
    case RGMP_MSG_DISCONNECT:
        if (h->msg_len != RGMP_DISCONNECT_LEN)
            return rgmp_fail(err, -EPROTO, &l,
                             "msg_len = %" PRIu32 ": device disconnect payload must be 4 bytes "
                             "(rule 20)",
                             h->msg_len);
        return 0;
    default:
        return rgmp_fail(err, -EPROTO, &l,
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
    struct rgmp_loc l = rgmp_loc_none();
    return rgmp_fail(err, -EPROTO, &l,
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

/* One dimension: decimal, >= 1, no sign, no leading zero, <= UINT32_MAX. */
static int parse_dim(const char **pp, uint32_t *out, const char *text, const char *which,
                     struct xg_error *err)
{
    const char *p = *pp;
    if (!rgmp_is_digit(*p))
        return xg_error_set(err, -EPROTO,
                            "data_type %s: dimension %s is not a decimal integer (rule 9a)",
                            Q(text), which);
    if (p[0] == '0' && rgmp_is_digit(p[1]))
        return xg_error_set(err, -EPROTO, "data_type %s: dimension %s has a leading zero (rule 9a)",
                            Q(text), which);
    uint64_t v = 0;
    for (; rgmp_is_digit(*p); p++) {
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

struct xg_reader rgmp_value_reader(const struct rgmp_data_type *t, const uint8_t *vals, uint32_t i)
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
    struct xg_reader r = rgmp_value_reader(t, vals, i);
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
    struct xg_reader r = rgmp_value_reader(t, vals, i);
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
    struct xg_reader r = rgmp_value_reader(t, vals, i);
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
/* Data Frame                                                                                  */

int rgmp_data_peek(const void *payload, size_t len, struct rgmp_data_frame *f, struct xg_error *err)
{
    memset(f, 0, sizeof *f);
    if (len < RGMP_DATA_HEADER_LEN) {
        struct rgmp_loc l = rgmp_loc_none();
        if (len >= 4) {
            l.has_device = true;
            l.device_id = xg_load_le32(payload);
        }
        return rgmp_fail(err, -EPROTO, &l,
                         "msg_len = %zu: data frame shorter than its 16-byte header (rule 14)",
                         len);
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
    struct rgmp_loc l = rgmp_loc_none();
    l.has_device = true;
    l.device_id = f->device_id;
    if (!def)
        return rgmp_fail(err, -EPROTO, &l,
                         "device_id = %" PRIu32 ": data frame for a device with no active "
                         "definition (rule 15)",
                         f->device_id);
    if (def->device_id != f->device_id)
        return rgmp_fail(err, -EINVAL, &l,
                         "device_id = %" PRIu32
                         ": decoded against the definition of device %" PRIu32,
                         f->device_id, def->device_id);
    if (f->group_id >= def->n_groups) {
        l.group = f->group_id;
        return rgmp_fail(err, -EPROTO, &l,
                         "group_id = %" PRIu32 ": the definition has %zu groups (rule 16)",
                         f->group_id, def->n_groups);
    }
    const struct rgmp_group *g = &def->groups[f->group_id];
    l.group = f->group_id;
    l.group_name = g->name;
    if (f->values_len != g->values_len)
        return rgmp_fail(err, -EPROTO, &l,
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
    struct rgmp_loc l = rgmp_def_loc(def);
    if (f->group_id >= def->n_groups)
        return rgmp_fail(err, -EINVAL, &l, "group_id = %" PRIu32 ": no such group", f->group_id);
    struct rgmp_group *g = &def->groups[f->group_id];
    l.group = f->group_id;
    l.group_name = g->name;
    if (g->has_timestamp && f->timestamp_us <= g->last_timestamp_us) {
        int code = strict ? -EPROTO : RGMP_OUT_OF_ORDER;
        /* a clock step back (or a wild timestamp before): confirmed by frames that increase */
        g->back_n = g->back_n && f->timestamp_us > g->back_last_us ? g->back_n + 1 : 1;
        g->back_last_us = f->timestamp_us;
        if (!strict && g->back_n >= RGMP_STEP_CONFIRM) {
            g->back_n = 0;
            g->last_timestamp_us = f->timestamp_us;
            return 0;
        }
        rgmp_fail(err, code, &l,
                  "timestamp_us = %" PRIu64 ": not greater than the previous %" PRIu64
                  " (rule 18, D2%s)",
                  f->timestamp_us, g->last_timestamp_us, strict ? ", strict" : ": dropped");
        return code;
    }
    g->has_timestamp = true;
    g->last_timestamp_us = f->timestamp_us;
    g->back_n = 0;
    return 0;
}

int rgmp_encode_data(struct xg_writer *w, const struct rgmp_definition *def, uint32_t group_id,
                     uint64_t timestamp_us, const void *values, size_t len, struct xg_error *err)
{
    struct rgmp_loc l = rgmp_def_loc(def);
    if (group_id >= def->n_groups)
        return rgmp_fail(err, -EINVAL, &l, "group_id = %" PRIu32 ": the definition has %zu groups",
                         group_id, def->n_groups);
    l.group = group_id;
    l.group_name = def->groups[group_id].name;
    if (len != def->groups[group_id].values_len || (len && !values))
        return rgmp_fail(err, -EINVAL, &l,
                         "values: %zu bytes, the group needs %" PRIu32 " (rule 17)", len,
                         def->groups[group_id].values_len);
    size_t total = RGMP_HEADER_LEN + RGMP_DATA_HEADER_LEN + len;
    if (w->err || w->cap - w->len < total)
        return rgmp_fail(err, -EMSGSIZE, &l,
                         "data frame of %zu bytes does not fit the output buffer", total);
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
        struct rgmp_loc l = rgmp_loc_none();
        return rgmp_fail(err, -EPROTO, &l,
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
