/* Internal to the RGMP codec files (rgmp_codec.c, rgmp_definition.c, rgmp_json_decode.c,
 * rgmp_json_encode.c, rgmp_session.c, rgmp_pose.c): error locations, message helpers and the
 * definition model's entry builders they share. Not for adapters or tests: use rgmp_codec.h. */
#ifndef XG_RGMP_CODEC_PRIV_H
#define XG_RGMP_CODEC_PRIV_H

#include <jansson.h>

#include "adapters/rgmp/rgmp_codec.h"

/** Where an error happened; every codec message starts with it ("device 7, group 0 \"pose\",
 *  stream 2: ..."). */
struct rgmp_loc {
    bool has_device;
    uint32_t device_id;
    long group; /* -1 = none */
    const char *group_name;
    long stream; /* -1 = none */
    bool is_static;
};

/** No device, group or stream known yet. */
struct rgmp_loc rgmp_loc_none(void);
/** The location of the definition itself (its device, no group). */
struct rgmp_loc rgmp_def_loc(const struct rgmp_definition *def);
/** Writes "device N[, group G \"name\"][, stream S | static_data S]" into buf (cap bytes). */
void rgmp_loc_format(const struct rgmp_loc *l, char *buf, size_t cap);
/** Sets err (if not NULL) to "<location>: <fmt...>" with `code`; returns `code`. */
__attribute__((format(printf, 4, 5))) int rgmp_fail(struct xg_error *err, int code,
                                                    const struct rgmp_loc *l, const char *fmt, ...);
/** Prefixes err's message (if err is not NULL) with "<location>: "; returns err's code. */
int rgmp_prefix_loc(struct xg_error *err, const struct rgmp_loc *l);

/** A printable, quoted, bounded copy of s in buf (cap bytes) for messages: control bytes become
 *  '?', a long string ends in "..."; "(null)" for NULL. Returns buf or a literal. */
const char *rgmp_quote(char *buf, size_t cap, const char *s);
#define Q(s) rgmp_quote((char[64]){0}, 64, (s))
/** A short description of a JSON value for messages ("\"text\"", "12", "1.5", "true",
 *  "array of 3", "(absent)" for NULL), in buf (cap bytes) or a literal. */
const char *rgmp_jdesc(char *buf, size_t cap, const json_t *v);
#define J(v) rgmp_jdesc((char[64]){0}, 64, (v))

/** Shortest text (Python repr style: "1.0", "0.02", "1e-05") that reads back as exactly v. */
void rgmp_fmt_double(char *buf, size_t cap, double v);
/** The same for a float (shortest text that reads back as exactly v with strtof). */
void rgmp_fmt_float(char *buf, size_t cap, float v);

/** '0'..'9' only (no locale). */
static inline bool rgmp_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/** strdup that accepts NULL (returns NULL); NULL also when out of memory. */
char *rgmp_strdup(const char *s);
/** *tmp filled from lim with 0 (or a NULL lim) meaning the RGMP_MAX_*_DEFAULT values; returns
 *  tmp. */
const struct rgmp_limits *rgmp_limits_or_default(const struct rgmp_limits *lim,
                                                 struct rgmp_limits *tmp);
/** A reader over element i of a value array of type t (wire encoding); an out-of-range i gives a
 *  reader whose every read fails and yields 0. */
struct xg_reader rgmp_value_reader(const struct rgmp_data_type *t, const uint8_t *vals, uint32_t i);

/** Builds one entry (stream or static_data) from a spec: rules 9a-9g, 11, 12. The value comes
 *  from `jvalue` (JSON path) or spec->value (builder path); `has_value` says whether one was
 *  given. On success *out owns its strings and value; returns 0 or a negative errno (err set). */
int rgmp_entry_build(const struct rgmp_loc *l, const struct rgmp_entry_spec *spec,
                     const json_t *jvalue, bool has_value, bool is_static, struct rgmp_stream *out,
                     struct xg_error *err);
/** Appends a stream built from spec to group gi (rules 9-12, the group's size against
 *  lim->max_data_len, no duplicate key). Returns the stream's index or a negative errno. */
int rgmp_group_append(struct rgmp_definition *def, size_t gi, const struct rgmp_loc *l,
                      const struct rgmp_entry_spec *spec, const json_t *jvalue, bool has_value,
                      const struct rgmp_limits *lim, struct xg_error *err);
/** Appends a static_data entry built from spec. Returns its index or a negative errno. */
int rgmp_static_append(struct rgmp_definition *def, const struct rgmp_loc *l,
                       const struct rgmp_entry_spec *spec, const json_t *jvalue, bool has_value,
                       struct xg_error *err);
/** Appends an empty group (rule 8: name, expected_rate_hz). Returns its index or a negative
 *  errno. */
int rgmp_group_new(struct rgmp_definition *def, const struct rgmp_loc *l, const char *name,
                   double rate_hz, struct xg_error *err);

#endif
