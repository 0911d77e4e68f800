/* RGMP v2 Device Definition JSON encoder (§6): the text rgmp-server sends (see rgmp_codec.h). */
#include "adapters/rgmp/rgmp_codec_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
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

static void sb_elem(struct sb *b, const struct rgmp_data_type *t, const uint8_t *v, uint32_t i)
{
    char buf[48];
    struct xg_reader r = rgmp_value_reader(t, v, i);
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
        rgmp_fmt_float(buf, sizeof buf, xg_read_lef32(&r));
        break;
    case RGMP_DOUBLE:
        rgmp_fmt_double(buf, sizeof buf, xg_read_lef64(&r));
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
            rgmp_fmt_double(num, sizeof num, r);
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
        struct rgmp_loc l = rgmp_def_loc(def);
        return rgmp_fail(err, -ENOMEM, &l, "definition JSON: out of memory");
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
    struct rgmp_loc l = rgmp_def_loc(def);
    if (w->err || len > UINT32_MAX || w->cap - w->len < RGMP_HEADER_LEN + len) {
        free(json);
        return rgmp_fail(err, -EMSGSIZE, &l,
                         "definition frame of %zu bytes does not fit the output buffer (%zu left)",
                         RGMP_HEADER_LEN + len, w->err ? 0 : w->cap - w->len);
    }
    rgmp_encode_header(w, RGMP_MSG_DEFINITION, (uint32_t)len);
    xg_write_bytes(w, json, len);
    free(json);
    return w->err;
}
