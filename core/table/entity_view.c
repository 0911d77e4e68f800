/* Read-only accessors of the opaque entity (core/table/entity.h): the table's layout stays in
 * core/table/entity_priv.h. */
#include "core/table/entity_priv.h"

#include <errno.h>
#include <string.h>

/* the names of kinds and qualities (their enums: core/table/entity.h) */
static const char *const kind_names[XG_KIND_COUNT] = {
    "rigid_body", "head", "left_hand", "right_hand", "controller", "joint", "object"};
static const char *const quality_names[XG_QUALITY_COUNT] = {
    "EXACT", "INTERPOLATED", "PREDICTED", "HELD", "STALE", "DAMPED", "MATCHED"};

const char *xg_kind_name(enum xg_kind k)
{
    return (unsigned)k < XG_KIND_COUNT ? kind_names[k] : "object";
}

int xg_kind_parse(const char *s, enum xg_kind *out)
{
    for (int i = 0; i < XG_KIND_COUNT; i++)
        if (s && strcmp(s, kind_names[i]) == 0) {
            *out = (enum xg_kind)i;
            return 0;
        }
    return -EINVAL;
}

const char *xg_quality_name(enum xg_quality q)
{
    return (unsigned)q < XG_QUALITY_COUNT ? quality_names[q] : "?";
}

uint32_t xg_entity_id(const struct xg_entity *e)
{
    return e->id;
}

const char *xg_entity_name(const struct xg_entity *e)
{
    return e->name;
}

const char *xg_entity_source(const struct xg_entity *e)
{
    return e->source;
}

const char *xg_entity_origin_gateway(const struct xg_entity *e)
{
    return e->origin_gateway;
}

int32_t xg_entity_source_sensor(const struct xg_entity *e)
{
    return e->source_sensor;
}

bool xg_entity_controls_only(const struct xg_entity *e)
{
    return e->controls_only;
}

enum xg_kind xg_entity_kind(const struct xg_entity *e)
{
    return e->kind;
}

int xg_entity_origin(const struct xg_entity *e)
{
    return e->origin;
}

uint32_t xg_entity_parent(const struct xg_entity *e)
{
    return e->parent;
}

bool xg_entity_for_sink(const struct xg_entity *e, int sink)
{
    return sink >= 0 && sink < XG_MAX_ADAPTERS && (e->sink_mask & (UINT64_C(1) << sink));
}

int xg_entity_buttons(const struct xg_entity *e, const uint8_t **states)
{
    if (states) *states = e->buttons;
    return e->buttons ? e->n_buttons : 0;
}

int xg_entity_analogs(const struct xg_entity *e, const double **values)
{
    if (values) *values = e->analogs;
    return e->analogs ? e->n_analogs : 0;
}

const struct xg_sample *xg_entity_last(const struct xg_entity *e)
{
    return &e->last;
}

void xg_entity_info(const struct xg_entity *e, struct xg_entity_info *out)
{
    out->samples = e->samples;
    out->dropped_backwards = e->dropped_backwards;
    out->interval_s = e->interval_s;
    out->last_flags = e->last.flags;
    out->created_ns = e->created_ns;
    out->last_receive_ns = e->last_receive_ns;
    out->has_velocity = e->has_velocity;
    out->has_angular_velocity = e->has_angular_velocity;
    out->velocity_estimated = e->velocity_estimated;
    out->angular_velocity_estimated = e->angular_velocity_estimated;
    out->rot_damped = e->rot_damped;
    out->history = xg_history_count(&e->hist);
}
