/* LESS type mappings loaded from YAML files (profile P8: "Other schemas are loaded from mapping
 * files, so peers with their own types can be mapped").
 *
 * A mapping file describes one object type: its URI, its components (component id = position in
 * the list) and their properties (property id = position in the list) with type descriptors, and
 * which entity field each property feeds:
 *
 *     uri: "urn:example:sim:vehicle:1"
 *     kind: rigid_body                 # default kind of its entities (optional)
 *     components:
 *       - name: body
 *         properties:
 *           - {name: callsign, type: STRING, field: name}
 *           - {name: pos, type: "VECTOR(3, FLOAT64)", field: position}
 *           - {name: fuel, type: FLOAT32}            # decoded, not mapped
 *           - {name: att, type: "VECTOR(4, FLOAT32)", field: orientation, order: wxyz}
 *
 * Types: NULL, OBJECT-ID, INTEGER, STRING, FLOAT16, FLOAT32, FLOAT64, LIST(T), VECTOR(n, T),
 * STANDALONE-VARIANT, VARIABLE-BINARY, FIXED-BINARY(n), UUID (case-insensitive, '_' = '-').
 * Fields: name, origin (STRING); kind, active, sample_time (INTEGER); position, velocity,
 * angular_velocity (VECTOR(3, float) or LIST(float) of 3); orientation (VECTOR(4, float) or
 * LIST(float) of 4, `order: xyzw` (default) or `wxyz`). Values are in the adapter's wire frame
 * (its `frame:` converts them), metres, m/s, rad/s. */
#ifndef XG_LESS_MAPPING_H
#define XG_LESS_MAPPING_H

#include <stdbool.h>

#include "adapters/less/less_codec.h"
#include "core/table/entity.h"
#include "core/util/error.h"

/** Entity field a property feeds. */
enum less_field {
    LESS_F_NONE = 0,
    LESS_F_NAME,
    LESS_F_KIND,
    LESS_F_POSITION,
    LESS_F_VELOCITY,
    LESS_F_ORIENTATION,
    LESS_F_ANGULAR_VELOCITY,
    LESS_F_ACTIVE,
    LESS_F_ORIGIN,
    LESS_F_SAMPLE_TIME
};

struct less_mapped_prop {
    enum less_field field;
    bool wxyz; /* orientation stored w x y z */
};

/** A loaded type. `schema` is the first member, so a schema pointer handed out by
 *  less_mapping_schema() converts back with less_mapping_of(). Owned; free with
 *  less_mapping_free(). */
struct less_mapping {
    struct less_schema schema;
    struct less_component *comps;
    struct less_mapped_prop **map; /* map[component][property] */
    bool has_kind;
    int64_t kind;  /* enum less_pose_kind of entities without a kind property */
    void **allocs; /* every allocation, for less_mapping_free */
    size_t n_allocs, cap_allocs;
};

/** Load and validate a mapping file. Errors read "file:line:column: ..." (the YAML loader's
 *  positions) and name the key and value; -EINVAL / -ENOENT / -ENOMEM. */
int less_mapping_load(const char *path, struct less_mapping **out, struct xg_error *err);
void less_mapping_free(struct less_mapping *m);

static inline const struct less_schema *less_mapping_schema(const struct less_mapping *m)
{
    return &m->schema;
}
static inline const struct less_mapping *less_mapping_of(const struct less_schema *s)
{
    return (const struct less_mapping *)s;
}

/** True when the type maps a position or an orientation (worth subscribing to). */
bool less_mapping_pose_compatible(const struct less_mapping *m);

/** Apply decoded component values (of an introduce / update of this type) to `p`: mapped
 *  properties set their less_pose field and bit LESS_POSE_BIT(<pose property>) in *got (strings
 *  borrowed from the values). -EPROTO when a LIST has the wrong length or a float is not finite;
 *  `p` may be partly updated then. */
int less_mapping_apply(const struct less_mapping *m, const struct less_comp_values_list *cl,
                       struct less_pose *p, uint32_t *got, struct xg_error *err);

/** The pose schema's `kind` value (LESS_KIND_*) of an entity kind: head, left/right hand,
 *  controller and object have their own; every other kind is a rigid body. */
int less_kind_to_wire(enum xg_kind k);

#endif
