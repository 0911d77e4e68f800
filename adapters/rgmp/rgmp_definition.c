/* RGMP v2 Device Definition model: entries and groups (rules 8-12) and the builder API used by
 * rgmp-server (see rgmp_codec.h). */
#include "adapters/rgmp/rgmp_codec_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static int json_value_elem(const struct rgmp_loc *l, const struct rgmp_data_type *t,
                           const json_t *v, const char *idx, struct xg_writer *w,
                           struct xg_error *err)
{
    const char *bn = rgmp_base_name(t->base);
    if (!json_is_number(v))
        return rgmp_fail(err, -EPROTO, l, "value%s = %s: not a number (%s, rule 11)", idx, J(v),
                         bn);
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
                return rgmp_fail(err, -EPROTO, l, "value%s = %s: not an integer (%s, rule 11)", idx,
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
            return rgmp_fail(err, -EPROTO, l, "value%s = %s: out of range for %s (rule 11)", idx,
                             J(v), bn);
        if (rgmp_base_size(t->base) == 4)
            xg_write_le32(w, (uint32_t)(int64_t)iv);
        else
            xg_write_le64(w, (uint64_t)(int64_t)iv);
        break;
    }
    case RGMP_FLOAT:
        /* values up to FLT_MAX + half an ulp round to FLT_MAX; beyond would be Inf */
        if (!isfinite(dv) || fabs(dv) >= 0x1.ffffffp+127)
            return rgmp_fail(err, -EPROTO, l, "value%s = %s: not a finite FLOAT (rule 11)", idx,
                             J(v));
        xg_write_lef32(w, (float)dv);
        break;
    case RGMP_DOUBLE:
        if (!isfinite(dv))
            return rgmp_fail(err, -EPROTO, l, "value%s = %s: not a finite DOUBLE (rule 11)", idx,
                             J(v));
        xg_write_lef64(w, dv);
        break;
    }
    return w->err;
}

/* A static value from JSON (rule 11) into a new buffer of t->size bytes. */
static int json_value_encode(const struct rgmp_loc *l, const struct rgmp_data_type *t,
                             const json_t *v, uint8_t **out, struct xg_error *err)
{
    char tn[32];
    rgmp_data_type_format(t, tn, sizeof tn);
    if (t->rank == 0) {
        if (json_is_array(v))
            return rgmp_fail(err, -EPROTO, l, "value = %s: %s needs a single number (rule 11)",
                             J(v), tn);
    } else {
        if (!json_is_array(v))
            return rgmp_fail(err, -EPROTO, l,
                             "value = %s: %s needs a flat array of %" PRIu32 " numbers (rule 11)",
                             J(v), tn, t->count);
        if (json_array_size(v) != t->count)
            return rgmp_fail(err, -EPROTO, l,
                             "value = %s: %s needs exactly %" PRIu32 " numbers (rule 11)", J(v), tn,
                             t->count);
    }
    uint8_t *buf = malloc(t->size ? t->size : 1);
    if (!buf) return rgmp_fail(err, -ENOMEM, l, "value: out of memory");
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
static int bytes_value_check(const struct rgmp_loc *l, const struct rgmp_data_type *t,
                             const void *v, size_t len, struct xg_error *err)
{
    if (len != t->size)
        return rgmp_fail(err, -EINVAL, l,
                         "value: %zu bytes, the data type needs %" PRIu32 " (rule 11)", len,
                         t->size);
    if (t->base == RGMP_FLOAT || t->base == RGMP_DOUBLE)
        for (uint32_t i = 0; i < t->count; i++) {
            double d = rgmp_value_f64(t, v, i);
            if (!isfinite(d))
                return rgmp_fail(err, -EPROTO, l, "value[%" PRIu32 "] = %g: not finite (rule 11)",
                                 i, d);
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
int rgmp_entry_build(const struct rgmp_loc *l, const struct rgmp_entry_spec *spec,
                     const json_t *jvalue, bool has_value, bool is_static, struct rgmp_stream *out,
                     struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    int rc;
    /* 9c target_frame */
    if (!spec->target_frame || !spec->target_frame[0])
        return rgmp_fail(err, -EPROTO, l, "target_frame = %s: must be a non-empty string (rule 9c)",
                         spec->target_frame ? "\"\"" : "(absent)");
    /* 9a data_type */
    if (!spec->data_type) return rgmp_fail(err, -EPROTO, l, "data_type missing (rule 9a)");
    rc = rgmp_data_type_parse(spec->data_type, &out->type, err);
    if (rc < 0) {
        rgmp_prefix_loc(err, l);
        return rc;
    }
    /* 9b measure_type (unknown accepted, D4) */
    if (!spec->measure_type || !spec->measure_type[0])
        return rgmp_fail(err, -EPROTO, l, "measure_type = %s: must be a non-empty string (rule 9b)",
                         spec->measure_type ? "\"\"" : "(absent)");
    enum rgmp_measure_type m = rgmp_measure_from_name(spec->measure_type);
    out->measure = m;
    /* 9c reference_frame */
    if (spec->reference_frame && !spec->reference_frame[0])
        return rgmp_fail(err, -EPROTO, l,
                         "reference_frame = \"\": must be a non-empty frame name "
                         "(rule 9c)");
    /* 9d / 9e custom_label */
    if (m == RGMP_CUSTOM && !spec->custom_label)
        return rgmp_fail(
            err, -EPROTO, l,
            "custom_label missing: required when measure_type is \"CUSTOM\" (rule 9d)");
    if (m != RGMP_CUSTOM && spec->custom_label)
        return rgmp_fail(
            err, -EPROTO, l,
            "custom_label = %s: not allowed on measure_type %s, only on CUSTOM (rule 9e)",
            Q(spec->custom_label), Q(spec->measure_type));
    if (m == RGMP_CUSTOM && !spec->custom_label[0])
        return rgmp_fail(err, -EPROTO, l,
                         "custom_label = \"\": must be a non-empty string (rule 9d)");
    /* 9f bit_mapping */
    if (m == RGMP_STATUS_FLAGS) {
        if (!spec->bits)
            return rgmp_fail(err, -EPROTO, l,
                             "bit_mapping missing: required when measure_type is \"STATUS_FLAGS\" "
                             "(rule 9f)");
        if (out->type.rank != 0 || (out->type.base != RGMP_UINT32 && out->type.base != RGMP_UINT64))
            return rgmp_fail(
                err, -EPROTO, l,
                "data_type = %s: STATUS_FLAGS must be scalar UINT32 or UINT64 (rule 9f)",
                Q(spec->data_type));
        uint32_t width = (uint32_t)rgmp_base_size(out->type.base) * 8;
        for (size_t i = 0; i < spec->n_bits; i++) {
            if (spec->bits[i].bit >= width)
                return rgmp_fail(err, -EPROTO, l,
                                 "bit_mapping key \"%" PRIu32 "\": bit index >= %" PRIu32
                                 ", the width of %s (rule 9f)",
                                 spec->bits[i].bit, width, rgmp_base_name(out->type.base));
            if (!spec->bits[i].name)
                return rgmp_fail(err, -EPROTO, l,
                                 "bit_mapping key \"%" PRIu32 "\": name missing "
                                 "(rule 9f)",
                                 spec->bits[i].bit);
            for (size_t j = 0; j < i; j++)
                if (spec->bits[j].bit == spec->bits[i].bit)
                    return rgmp_fail(err, -EPROTO, l,
                                     "bit_mapping key \"%" PRIu32 "\": bit mapped twice (rule 9f)",
                                     spec->bits[i].bit);
        }
    } else if (spec->bits) {
        return rgmp_fail(
            err, -EPROTO, l,
            "bit_mapping: not allowed on measure_type %s, only on STATUS_FLAGS (rule 9f)",
            Q(spec->measure_type));
    }
    /* 9g shape (D10) */
    uint32_t need;
    if (shape_required(m, &need) &&
        (out->type.rank != 1 || out->type.n != need ||
         (out->type.base != RGMP_FLOAT && out->type.base != RGMP_DOUBLE)))
        return rgmp_fail(err, -EPROTO, l,
                         "data_type = %s: measure_type %s needs FLOAT[%" PRIu32
                         "] or DOUBLE[%" PRIu32 "] (rule 9g, D10)",
                         Q(spec->data_type), rgmp_measure_name(m), need, need);
    /* 11 / 12 value */
    if (is_static && !has_value)
        return rgmp_fail(err, -EPROTO, l,
                         "value missing: required on static_data entries (rule 11)");
    if (!is_static && has_value)
        return rgmp_fail(err, -EPROTO, l,
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
            if (!out->value) return rgmp_fail(err, -ENOMEM, l, "out of memory");
            memcpy(out->value, spec->value, out->type.size);
        }
    }
    /* copy strings; reference_frame == target_frame is normalised to absent (9c) */
    out->measure_name = rgmp_strdup(spec->measure_type);
    out->target_frame = rgmp_strdup(spec->target_frame);
    bool ref = spec->reference_frame && strcmp(spec->reference_frame, spec->target_frame) != 0;
    out->reference_frame = ref ? rgmp_strdup(spec->reference_frame) : NULL;
    out->custom_label = spec->custom_label ? rgmp_strdup(spec->custom_label) : NULL;
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
                out->bits[i].name = rgmp_strdup(spec->bits[i].name);
                oom |= !out->bits[i].name;
            }
        }
    }
    if (oom) {
        stream_clear(out);
        return rgmp_fail(err, -ENOMEM, l, "out of memory");
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

int rgmp_group_append(struct rgmp_definition *def, size_t gi, const struct rgmp_loc *l,
                      const struct rgmp_entry_spec *spec, const json_t *jvalue, bool has_value,
                      const struct rgmp_limits *lim, struct xg_error *err)
{
    struct rgmp_group *g = &def->groups[gi];
    struct rgmp_stream s;
    int rc = rgmp_entry_build(l, spec, jvalue, has_value, false, &s, err);
    if (rc < 0) return rc;
    for (size_t j = 0; j < g->n_streams; j++)
        if (same_key(&g->streams[j], &s)) {
            rc =
                rgmp_fail(err, -EPROTO, l,
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
        rc = rgmp_fail(err, -EPROTO, l,
                       "data_type %s: group data frame of 16 + %" PRIu64
                       " bytes exceeds 0xFFFFFFFF (rule 13)",
                       Q(spec->data_type), total);
        stream_clear(&s);
        return rc;
    }
    if (RGMP_DATA_HEADER_LEN + total > lim->max_data_len) {
        rc = rgmp_fail(err, -EPROTO, l,
                       "data_type %s: group data frame of 16 + %" PRIu64
                       " bytes exceeds the maximum data frame of %" PRIu32 " bytes (D8)",
                       Q(spec->data_type), total, lim->max_data_len);
        stream_clear(&s);
        return rc;
    }
    struct rgmp_stream *ns = realloc(g->streams, (g->n_streams + 1) * sizeof *ns);
    if (!ns) {
        stream_clear(&s);
        return rgmp_fail(err, -ENOMEM, l, "out of memory");
    }
    g->streams = ns;
    s.offset = g->values_len;
    g->streams[g->n_streams] = s;
    g->values_len = (uint32_t)total;
    return (int)g->n_streams++;
}

int rgmp_static_append(struct rgmp_definition *def, const struct rgmp_loc *l,
                       const struct rgmp_entry_spec *spec, const json_t *jvalue, bool has_value,
                       struct xg_error *err)
{
    struct rgmp_stream s;
    int rc = rgmp_entry_build(l, spec, jvalue, has_value, true, &s, err);
    if (rc < 0) return rc;
    struct rgmp_stream *ns = realloc(def->static_data, (def->n_static + 1) * sizeof *ns);
    if (!ns) {
        stream_clear(&s);
        return rgmp_fail(err, -ENOMEM, l, "out of memory");
    }
    def->static_data = ns;
    def->static_data[def->n_static] = s;
    return (int)def->n_static++;
}

int rgmp_group_new(struct rgmp_definition *def, const struct rgmp_loc *l, const char *name,
                   double rate, struct xg_error *err)
{
    if (!isfinite(rate) || rate < 0)
        return rgmp_fail(err, -EPROTO, l,
                         "expected_rate_hz = %g: must be a finite number >= 0 (rule 8)", rate);
    struct rgmp_group *ng = realloc(def->groups, (def->n_groups + 1) * sizeof *ng);
    if (!ng) return rgmp_fail(err, -ENOMEM, l, "out of memory");
    def->groups = ng;
    struct rgmp_group *g = &def->groups[def->n_groups];
    memset(g, 0, sizeof *g);
    g->name = rgmp_strdup(name);
    if (!g->name) return rgmp_fail(err, -ENOMEM, l, "out of memory");
    g->expected_rate_hz = rate;
    return (int)def->n_groups++;
}

/* ------------------------------------------------------------------------------------------ */
/* Definition: building                                                                        */

struct rgmp_definition *rgmp_definition_new(uint32_t device_id, const char *device_type,
                                            enum rgmp_epoch epoch)
{
    struct rgmp_definition *def = calloc(1, sizeof *def);
    if (!def) return NULL;
    def->device_id = device_id;
    def->protocol_name = rgmp_strdup("RGMP");
    def->protocol_version = rgmp_strdup("2.0.0");
    def->device_type = rgmp_strdup(device_type);
    def->epoch = epoch == RGMP_EPOCH_UNIX ? RGMP_EPOCH_UNIX : RGMP_EPOCH_DEVICE_BOOT;
    def->timestamp_epoch = rgmp_strdup(epoch == RGMP_EPOCH_UNIX ? "unix_epoch" : "device_boot");
    if (!def->protocol_name || !def->protocol_version || (device_type && !def->device_type) ||
        !def->timestamp_epoch) {
        rgmp_definition_free(def);
        return NULL;
    }
    return def;
}

int rgmp_definition_add_group(struct rgmp_definition *def, const char *name, double rate_hz,
                              struct xg_error *err)
{
    struct rgmp_loc l = rgmp_def_loc(def);
    l.group = (long)def->n_groups;
    l.group_name = name;
    if (!name) return rgmp_fail(err, -EPROTO, &l, "name missing (rule 8)");
    return rgmp_group_new(def, &l, name, rate_hz, err);
}

int rgmp_definition_add_stream(struct rgmp_definition *def, size_t group,
                               const struct rgmp_entry_spec *spec, struct xg_error *err)
{
    struct rgmp_loc l = rgmp_def_loc(def);
    if (group >= def->n_groups)
        return rgmp_fail(err, -EINVAL, &l, "group_id = %zu: definition has %zu groups", group,
                         def->n_groups);
    l.group = (long)group;
    l.group_name = def->groups[group].name;
    l.stream = (long)def->groups[group].n_streams;
    struct rgmp_limits tmp;
    return rgmp_group_append(def, group, &l, spec, NULL, spec->value != NULL,
                             rgmp_limits_or_default(NULL, &tmp), err);
}

int rgmp_definition_add_static(struct rgmp_definition *def, const struct rgmp_entry_spec *spec,
                               struct xg_error *err)
{
    struct rgmp_loc l = rgmp_def_loc(def);
    l.is_static = true;
    l.stream = (long)def->n_static;
    return rgmp_static_append(def, &l, spec, NULL, spec->value != NULL, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Definition: look-up                                                                         */

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
