/* Pose entity state <-> property-value-list of urn:xrgate:lods:pose:1 (profile P8). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "adapters/less/less_codec.h"

static const char *const pose_names[LESS_POSE_N_PROPS] = {
    "name",   "kind",   "position",   "velocity", "orientation", "angular_velocity",
    "active", "origin", "sample_time"};

static struct less_value *vec_items(struct less_value *dst, const double *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (struct less_value){&less_type_float32, {.f = src[i]}};
    return dst;
}

void less_pose_to_props(const struct less_pose *p, uint32_t mask, struct less_pose_props *out)
{
    uint32_t want = p->present & mask & LESS_POSE_ALL;
    size_t n = 0, e = 0;
    for (int id = 0; id < LESS_POSE_N_PROPS; id++) {
        if (!(want & LESS_POSE_BIT(id))) continue;
        struct less_prop_value *pv = &out->items[n++];
        pv->property_id = id;
        struct less_value *v = &pv->value;
        memset(v, 0, sizeof *v);
        const struct less_type *t = &less_pose_schema()->components[0].props[id].type;
        v->type = t;
        double tmp[4];
        size_t k = 0;
        switch (id) {
        case LESS_POSE_NAME:
            v->u.str.p = p->name;
            v->u.str.len = p->name_len;
            continue;
        case LESS_POSE_ORIGIN:
            v->u.str.p = p->origin;
            v->u.str.len = p->origin_len;
            continue;
        case LESS_POSE_KIND:
            v->u.i = p->kind;
            continue;
        case LESS_POSE_ACTIVE:
            v->u.i = p->active;
            continue;
        case LESS_POSE_SAMPLE_TIME:
            v->u.i = p->sample_time;
            continue;
        case LESS_POSE_POSITION:
        case LESS_POSE_VELOCITY:
        case LESS_POSE_ANGULAR_VELOCITY: {
            const struct xg_vec3 *s = id == LESS_POSE_POSITION   ? &p->position
                                      : id == LESS_POSE_VELOCITY ? &p->velocity
                                                                 : &p->angular_velocity;
            tmp[0] = s->x, tmp[1] = s->y, tmp[2] = s->z;
            k = 3;
            break;
        }
        case LESS_POSE_ORIENTATION:
            tmp[0] = p->orientation.x, tmp[1] = p->orientation.y;
            tmp[2] = p->orientation.z, tmp[3] = p->orientation.w;
            k = 4;
            break;
        }
        v->u.list.items = vec_items(&out->elems[e], tmp, k);
        v->u.list.count = k;
        e += k;
    }
    out->list.items = out->items;
    out->list.count = n;
}

static int get_vec(const struct less_value *v, size_t n, double *dst, const char *name,
                   struct xg_error *err)
{
    for (size_t i = 0; i < n; i++) {
        double f = v->u.list.items[i].u.f;
        if (!isfinite(f))
            return xg_error_set(err, -EPROTO, "LESS pose %s[%zu]: not finite (%g)", name, i, f);
        dst[i] = f;
    }
    return 0;
}

int less_pose_from_props(const struct less_prop_list *l, struct less_pose *p, struct xg_error *err)
{
    struct less_pose next = *p;
    const struct less_component *c = &less_pose_schema()->components[0];
    for (size_t i = 0; i < l->count; i++) {
        const struct less_prop_value *pv = &l->items[i];
        int64_t id = pv->property_id;
        if (id < 0 || id >= LESS_POSE_N_PROPS)
            return xg_error_set(err, -EPROTO, "LESS pose: property %" PRId64 " not in %s", id,
                                LESS_POSE_URI);
        const struct less_value *v = &pv->value;
        const char *name = pose_names[id];
        if (!v->type || !less_type_equal(v->type, &c->props[id].type))
            return xg_error_set(err, -EPROTO, "LESS pose %s: value of type %s, expected %s", name,
                                v->type ? less_type_name(v->type->code) : "none",
                                less_type_name(c->props[id].type.code));
        double t[4] = {0};
        int rc = 0;
        switch (id) {
        case LESS_POSE_NAME:
            next.name = v->u.str.p;
            next.name_len = v->u.str.len;
            break;
        case LESS_POSE_ORIGIN:
            next.origin = v->u.str.p;
            next.origin_len = v->u.str.len;
            break;
        case LESS_POSE_KIND:
            next.kind = v->u.i;
            break;
        case LESS_POSE_ACTIVE:
            if (v->u.i != 0 && v->u.i != 1)
                return xg_error_set(err, -EPROTO, "LESS pose active: %" PRId64 " is not 0 or 1",
                                    v->u.i);
            next.active = v->u.i;
            break;
        case LESS_POSE_SAMPLE_TIME:
            next.sample_time = v->u.i;
            break;
        case LESS_POSE_ORIENTATION:
            if ((rc = get_vec(v, 4, t, name, err))) return rc;
            next.orientation = (struct xg_quat){t[0], t[1], t[2], t[3]};
            break;
        default: /* the three 3-vectors */
            if ((rc = get_vec(v, 3, t, name, err))) return rc;
            struct xg_vec3 *dst = id == LESS_POSE_POSITION   ? &next.position
                                  : id == LESS_POSE_VELOCITY ? &next.velocity
                                                             : &next.angular_velocity;
            *dst = (struct xg_vec3){t[0], t[1], t[2]};
            break;
        }
        next.present |= LESS_POSE_BIT(id);
    }
    *p = next;
    return 0;
}
