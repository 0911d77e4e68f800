/* RGMP v2 Device Definition JSON decoder (§6, rules 1-13; see rgmp_codec.h). */
#include "adapters/rgmp/rgmp_codec_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static int get_opt_string(const struct rgmp_loc *l, const json_t *obj, const char *key,
                          const char **out, const char *rule, struct xg_error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v) return 0;
    if (!json_is_string(v))
        return rgmp_fail(err, -EPROTO, l, "%s = %s: expected a string (%s)", key, J(v), rule);
    *out = json_string_value(v);
    return 0;
}

static int get_req_string(const struct rgmp_loc *l, const json_t *obj, const char *key,
                          const char **out, const char *rule, struct xg_error *err)
{
    int rc = get_opt_string(l, obj, key, out, rule, err);
    if (rc == 0 && !*out) return rgmp_fail(err, -EPROTO, l, "%s missing (%s)", key, rule);
    return rc;
}

/* Decimal bit index key of bit_mapping: digits only, no leading zero, <= 4294967295. */
static bool parse_bit_key(const char *k, uint32_t *out)
{
    if (!rgmp_is_digit(k[0]) || (k[0] == '0' && k[1])) return false;
    uint64_t v = 0;
    for (const char *p = k; *p; p++) {
        if (!rgmp_is_digit(*p)) return false;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX) return false;
    }
    *out = (uint32_t)v;
    return true;
}

/* One stream or static_data entry object from JSON. */
static int json_entry(struct rgmp_definition *def, const struct rgmp_loc *l, const json_t *e,
                      bool is_static, size_t gi, const struct rgmp_limits *lim,
                      struct xg_error *err)
{
    if (!json_is_object(e))
        return rgmp_fail(err, -EPROTO, l, "entry = %s: expected an object (rule 9)", J(e));
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
            return rgmp_fail(err, -EPROTO, l, "bit_mapping = %s: expected an object (rule 9f)",
                             J(bm));
        size_t n = json_object_size(bm), i = 0;
        bits = n ? calloc(n, sizeof *bits) : NULL;
        if (n && !bits) return rgmp_fail(err, -ENOMEM, l, "out of memory");
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)bm, key, val)
        {
            if (!parse_bit_key(key, &bits[i].bit)) {
                free(bits);
                return rgmp_fail(err, -EPROTO, l,
                                 "bit_mapping key %s: not a decimal bit index (rule 9f)", Q(key));
            }
            if (!json_is_string(val)) {
                free(bits);
                return rgmp_fail(err, -EPROTO, l,
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
        rc = rgmp_static_append(def, l, &spec, value, value != NULL, err);
    else
        rc = rgmp_group_append(def, gi, l, &spec, value, value != NULL, lim, err);
    free(bits);
    return rc < 0 ? rc : 0;
}

static int json_group(struct rgmp_definition *def, struct rgmp_loc *l, const json_t *g,
                      const struct rgmp_limits *lim, struct xg_error *err)
{
    if (!json_is_object(g))
        return rgmp_fail(err, -EPROTO, l, "group = %s: expected an object (rule 8)", J(g));
    const char *name;
    int rc = get_req_string(l, g, "name", &name, "rule 8", err);
    if (rc < 0) return rc;
    l->group_name = name;
    const json_t *rate = json_object_get(g, "expected_rate_hz");
    if (!rate) return rgmp_fail(err, -EPROTO, l, "expected_rate_hz missing (rule 8)");
    if (!json_is_number(rate))
        return rgmp_fail(err, -EPROTO, l, "expected_rate_hz = %s: expected a number (rule 8)",
                         J(rate));
    const json_t *streams = json_object_get(g, "streams");
    if (!streams) return rgmp_fail(err, -EPROTO, l, "streams missing (rule 8)");
    if (!json_is_array(streams))
        return rgmp_fail(err, -EPROTO, l, "streams = %s: expected an array (rule 8)", J(streams));
    rc = rgmp_group_new(def, l, name, json_number_value(rate), err);
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
    struct rgmp_loc l = rgmp_loc_none();
    /* rule 5 */
    const json_t *id = json_object_get(root, "device_id");
    if (!id) return rgmp_fail(err, -EPROTO, &l, "device_id missing (rule 5)");
    if (!json_is_integer(id) || json_integer_value(id) < 0 ||
        json_integer_value(id) > (json_int_t)UINT32_MAX)
        return rgmp_fail(err, -EPROTO, &l,
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
        for (; rgmp_is_digit(*p) && major < 1000; p++, digits = true)
            major = major * 10 + (uint64_t)(*p - '0');
        if (!digits || (*p != '.' && *p != '\0') || major != 2)
            return rgmp_fail(err, -EPROTO, &l,
                             "protocol_version = %s: major version must be 2 (rule 7, D4)", Q(pv));
    }
    /* rule 7 / D10: unknown epoch accepted, treated like device_boot */
    def->epoch = !te                              ? RGMP_EPOCH_OTHER
                 : strcmp(te, "unix_epoch") == 0  ? RGMP_EPOCH_UNIX
                 : strcmp(te, "device_boot") == 0 ? RGMP_EPOCH_DEVICE_BOOT
                                                  : RGMP_EPOCH_OTHER;
    const json_t *di = json_object_get(root, "device_info");
    if (di && !json_is_object(di))
        return rgmp_fail(err, -EPROTO, &l, "device_info = %s: expected an object (rule 6)", J(di));
    const json_t *sd = json_object_get(root, "static_data");
    if (sd && !json_is_array(sd))
        return rgmp_fail(err, -EPROTO, &l, "static_data = %s: expected an array (rule 6)", J(sd));
    const json_t *groups = json_object_get(root, "groups");
    if (!groups) return rgmp_fail(err, -EPROTO, &l, "groups missing (rule 6)");
    if (!json_is_array(groups))
        return rgmp_fail(err, -EPROTO, &l, "groups = %s: expected an array (rule 6)", J(groups));

    def->protocol_name = rgmp_strdup(pn);
    def->protocol_version = rgmp_strdup(pv);
    def->device_type = rgmp_strdup(dt);
    def->timestamp_epoch = rgmp_strdup(te);
    def->device_info_json = di ? json_dumps(di, JSON_COMPACT) : NULL;
    if ((pn && !def->protocol_name) || (pv && !def->protocol_version) ||
        (dt && !def->device_type) || (te && !def->timestamp_epoch) ||
        (di && !def->device_info_json))
        return rgmp_fail(err, -ENOMEM, &l, "out of memory");

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
    lim = rgmp_limits_or_default(lim, &tmp);
    struct rgmp_loc l = rgmp_loc_none();
    *out = NULL;
    if (len > lim->max_definition_len)
        return rgmp_fail(err, -EMSGSIZE, &l,
                         "msg_len = %zu: stream definition exceeds the maximum of %" PRIu32
                         " bytes (rule 3, D8)",
                         len, lim->max_definition_len);
    const uint8_t *p = json;
    const void *nul = len ? memchr(p, 0, len) : NULL;
    if (nul)
        return rgmp_fail(err, -EPROTO, &l, "payload: NUL byte at offset %td (rule 4)",
                         (const uint8_t *)nul - p);
    long bad = utf8_invalid_at(p, len);
    if (bad >= 0)
        return rgmp_fail(err, -EPROTO, &l,
                         "payload: invalid UTF-8 byte 0x%02x at offset %ld (rule 4)", p[bad], bad);
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return rgmp_fail(err, -EPROTO, &l,
                         "payload: invalid JSON at line %d column %d: %s (rule 4)", je.line,
                         je.column, je.text);
    if (!json_is_object(root)) {
        int rc =
            rgmp_fail(err, -EPROTO, &l, "payload = %s: expected one JSON object (rule 4)", J(root));
        json_decref(root);
        return rc;
    }
    struct rgmp_definition *def = calloc(1, sizeof *def);
    if (!def) {
        json_decref(root);
        return rgmp_fail(err, -ENOMEM, &l, "out of memory");
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
