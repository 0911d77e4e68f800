/* LESS type mappings from YAML files (see less_mapping.h). */
#include "adapters/less/less_mapping.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/conf/conf.h"
#include "core/table/entity.h"
#include "mappings/conf_yaml.h"

static void *m_alloc(struct less_mapping *m, size_t n)
{
    if (m->n_allocs == m->cap_allocs) {
        size_t nc = m->cap_allocs ? m->cap_allocs * 2 : 16;
        void **na = realloc(m->allocs, nc * sizeof *na);
        if (!na) return NULL;
        m->allocs = na;
        m->cap_allocs = nc;
    }
    void *p = calloc(1, n ? n : 1);
    if (p) m->allocs[m->n_allocs++] = p;
    return p;
}

void less_mapping_free(struct less_mapping *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->n_allocs; i++)
        free(m->allocs[i]);
    free(m->allocs);
    free(m);
}

/* ---- type strings ---- */

struct tparse {
    const char *s;
    size_t i;
    struct less_mapping *m;
};

static void skip_ws(struct tparse *t)
{
    while (isspace((unsigned char)t->s[t->i]))
        t->i++;
}

static bool word_is(const char *w, size_t n, const char *name)
{
    if (strlen(name) != n) return false;
    for (size_t i = 0; i < n; i++) {
        char a = (char)toupper((unsigned char)w[i]), b = name[i];
        if (a == '_') a = '-';
        if (a != b) return false;
    }
    return true;
}

static int parse_count(struct tparse *t, uint32_t *out)
{
    skip_ws(t);
    char *end;
    unsigned long v = strtoul(t->s + t->i, &end, 10);
    if (end == t->s + t->i || v == 0 || v > LESS_MAX_COUNT) return -EINVAL;
    t->i = (size_t)(end - t->s);
    *out = (uint32_t)v;
    return 0;
}

static int expect(struct tparse *t, char c)
{
    skip_ws(t);
    if (t->s[t->i] != c) return -EINVAL;
    t->i++;
    return 0;
}

static int parse_type(struct tparse *t, int depth, const struct less_type **out)
{
    if (depth > LESS_MAX_DEPTH) return -EINVAL;
    skip_ws(t);
    size_t start = t->i;
    while (isalnum((unsigned char)t->s[t->i]) || t->s[t->i] == '-' || t->s[t->i] == '_')
        t->i++;
    const char *w = t->s + start;
    size_t n = t->i - start;
    static const struct {
        const char *name;
        const struct less_type *t;
    } scalars[] = {
        {"NULL", &less_type_null},       {"OBJECT-ID", &less_type_object_id},
        {"INTEGER", &less_type_integer}, {"STRING", &less_type_string},
        {"FLOAT16", &less_type_float16}, {"FLOAT32", &less_type_float32},
        {"FLOAT64", &less_type_float64}, {"STANDALONE-VARIANT", &less_type_variant},
        {"VARIANT", &less_type_variant}, {"VARIABLE-BINARY", &less_type_varbin},
        {"UUID", &less_type_uuid},
    };
    for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++)
        if (word_is(w, n, scalars[k].name)) {
            *out = scalars[k].t;
            return 0;
        }
    struct less_type *nt = m_alloc(t->m, sizeof *nt);
    if (!nt) return -ENOMEM;
    int rc;
    if (word_is(w, n, "LIST")) {
        nt->code = LESS_T_LIST;
        if ((rc = expect(t, '(')) || (rc = parse_type(t, depth + 1, &nt->elem)) ||
            (rc = expect(t, ')')))
            return rc;
    } else if (word_is(w, n, "VECTOR")) {
        nt->code = LESS_T_VECTOR;
        if ((rc = expect(t, '(')) || (rc = parse_count(t, &nt->count)) || (rc = expect(t, ',')) ||
            (rc = parse_type(t, depth + 1, &nt->elem)) || (rc = expect(t, ')')))
            return rc;
    } else if (word_is(w, n, "FIXED-BINARY")) {
        nt->code = LESS_T_FIXEDBIN;
        if ((rc = expect(t, '(')) || (rc = parse_count(t, &nt->count)) || (rc = expect(t, ')')))
            return rc;
    } else {
        return -EINVAL;
    }
    *out = nt;
    return 0;
}

static bool is_float(const struct less_type *t)
{
    return t &&
           (t->code == LESS_T_FLOAT16 || t->code == LESS_T_FLOAT32 || t->code == LESS_T_FLOAT64);
}

/* Does type t suit field f? */
static const char *field_check(enum less_field f, const struct less_type *t)
{
    switch (f) {
    case LESS_F_NAME:
    case LESS_F_ORIGIN:
        return t->code == LESS_T_STRING ? NULL : "STRING";
    case LESS_F_KIND:
    case LESS_F_ACTIVE:
    case LESS_F_SAMPLE_TIME:
        return t->code == LESS_T_INTEGER ? NULL : "INTEGER";
    case LESS_F_POSITION:
    case LESS_F_VELOCITY:
    case LESS_F_ANGULAR_VELOCITY:
        return (t->code == LESS_T_VECTOR && t->count == 3 && is_float(t->elem)) ||
                       (t->code == LESS_T_LIST && is_float(t->elem))
                   ? NULL
                   : "VECTOR(3, FLOAT16|32|64) or LIST(FLOAT..)";
    case LESS_F_ORIENTATION:
        return (t->code == LESS_T_VECTOR && t->count == 4 && is_float(t->elem)) ||
                       (t->code == LESS_T_LIST && is_float(t->elem))
                   ? NULL
                   : "VECTOR(4, FLOAT16|32|64) or LIST(FLOAT..)";
    default:
        return NULL;
    }
}

static const char *const field_names[] = {
    [LESS_F_NAME] = "name",
    [LESS_F_KIND] = "kind",
    [LESS_F_POSITION] = "position",
    [LESS_F_VELOCITY] = "velocity",
    [LESS_F_ORIENTATION] = "orientation",
    [LESS_F_ANGULAR_VELOCITY] = "angular_velocity",
    [LESS_F_ACTIVE] = "active",
    [LESS_F_ORIGIN] = "origin",
    [LESS_F_SAMPLE_TIME] = "sample_time",
};

int less_kind_to_wire(enum xg_kind k)
{
    switch (k) {
    case XG_KIND_HEAD:
        return LESS_KIND_HEAD;
    case XG_KIND_LEFT_HAND:
        return LESS_KIND_LEFT_HAND;
    case XG_KIND_RIGHT_HAND:
        return LESS_KIND_RIGHT_HAND;
    case XG_KIND_CONTROLLER:
        return LESS_KIND_CONTROLLER;
    case XG_KIND_OBJECT:
        return LESS_KIND_OBJECT;
    default:
        return LESS_KIND_RIGID_BODY;
    }
}

static int load_props(struct less_mapping *m, size_t c, const struct xg_conf *list,
                      struct xg_error *err)
{
    int rc;
    if ((rc = xg_conf_expect(list, XG_CONF_SEQ, "properties", err))) return rc;
    struct less_component *comp = &m->comps[c];
    struct less_property *props = m_alloc(m, list->n_items * sizeof *props);
    struct less_mapped_prop *map = m_alloc(m, list->n_items * sizeof *map);
    if (!props || !map) return -ENOMEM;
    comp->props = props;
    comp->n_props = list->n_items;
    m->map[c] = map;
    for (size_t p = 0; p < list->n_items; p++) {
        const struct xg_conf *it = list->items[p];
        const char *name, *type, *field, *order;
        if ((rc = xg_conf_expect(it, XG_CONF_MAP, "property", err)) ||
            (rc = xg_conf_string(it, "name", NULL, &name, err)) ||
            (rc = xg_conf_string(it, "type", NULL, &type, err)) ||
            (rc = xg_conf_string(it, "field", NULL, &field, err)) ||
            (rc = xg_conf_string(it, "order", "xyzw", &order, err)))
            return rc;
        if (!type)
            return xg_conf_error(err, it, -EINVAL, "property %zu of component %zu needs 'type'", p,
                                 c);
        char *nm = m_alloc(m, strlen(name ? name : "") + 1);
        if (!nm) return -ENOMEM;
        strcpy(nm, name ? name : "");
        props[p].name = nm;
        struct tparse tp = {type, 0, m};
        const struct less_type *t = NULL;
        rc = parse_type(&tp, 0, &t);
        skip_ws(&tp);
        if (rc == -ENOMEM) return rc;
        if (rc || type[tp.i])
            return xg_conf_error(err, xg_conf_get(it, "type"), -EINVAL,
                                 "type '%s' is not a LESS type descriptor (e.g. INTEGER, STRING, "
                                 "FLOAT32, VECTOR(3, FLOAT64), LIST(INTEGER), FIXED-BINARY(16))",
                                 type);
        props[p].type = *t;
        if (field) {
            enum less_field f = LESS_F_NONE;
            for (int k = 1; k <= LESS_F_SAMPLE_TIME; k++)
                if (strcmp(field, field_names[k]) == 0) f = (enum less_field)k;
            if (f == LESS_F_NONE)
                return xg_conf_error(err, xg_conf_get(it, "field"), -EINVAL,
                                     "field '%s' must be name, kind, position, velocity, "
                                     "orientation, angular_velocity, active, origin or sample_time",
                                     field);
            const char *want = field_check(f, t);
            if (want)
                return xg_conf_error(err, xg_conf_get(it, "type"), -EINVAL,
                                     "field '%s' needs type %s, not '%s'", field, want, type);
            map[p].field = f;
        }
        if (strcmp(order, "wxyz") == 0)
            map[p].wxyz = true;
        else if (strcmp(order, "xyzw") != 0)
            return xg_conf_error(err, xg_conf_get(it, "order"), -EINVAL,
                                 "order '%s' must be xyzw or wxyz", order);
    }
    return 0;
}

int less_mapping_load(const char *path, struct less_mapping **out, struct xg_error *err)
{
    *out = NULL;
    struct xg_conf *root = xg_conf_yaml_load(path, err);
    if (!root) return err && err->code ? err->code : -EINVAL;
    struct less_mapping *m = calloc(1, sizeof *m);
    int rc = -ENOMEM;
    if (!m) goto out;
    const char *uri, *kind;
    const struct xg_conf *comps;
    if ((rc = xg_conf_expect(root, XG_CONF_MAP, "mapping file", err)) ||
        (rc = xg_conf_string(root, "uri", NULL, &uri, err)) ||
        (rc = xg_conf_string(root, "kind", NULL, &kind, err)))
        goto out;
    if (!uri || !uri[0]) {
        rc = xg_conf_error(err, root, -EINVAL, "mapping file needs 'uri'");
        goto out;
    }
    char *u = m_alloc(m, strlen(uri) + 1);
    if (!u) goto out;
    strcpy(u, uri);
    m->schema.uri = u;
    if (kind) {
        enum xg_kind k;
        if (xg_kind_parse(kind, &k)) {
            rc = xg_conf_error(err, xg_conf_get(root, "kind"), -EINVAL, "unknown kind '%s'", kind);
            goto out;
        }
        m->has_kind = true;
        m->kind = less_kind_to_wire(k);
    }
    comps = xg_conf_get(root, "components");
    if (!comps) {
        rc = xg_conf_error(err, root, -EINVAL, "mapping file needs 'components'");
        goto out;
    }
    if ((rc = xg_conf_expect(comps, XG_CONF_SEQ, "components", err))) goto out;
    rc = -ENOMEM;
    m->comps = m_alloc(m, comps->n_items * sizeof *m->comps);
    m->map = m_alloc(m, comps->n_items * sizeof *m->map);
    if (!m->comps || !m->map) goto out;
    m->schema.components = m->comps;
    m->schema.n_components = comps->n_items;
    for (size_t c = 0; c < comps->n_items; c++) {
        const struct xg_conf *it = comps->items[c];
        const char *name;
        if ((rc = xg_conf_expect(it, XG_CONF_MAP, "component", err)) ||
            (rc = xg_conf_string(it, "name", "", &name, err)))
            goto out;
        char *nm = m_alloc(m, strlen(name) + 1);
        if (!nm) {
            rc = -ENOMEM;
            goto out;
        }
        strcpy(nm, name);
        m->comps[c].name = nm;
        const struct xg_conf *props = xg_conf_get(it, "properties");
        if (!props) {
            rc = xg_conf_error(err, it, -EINVAL, "component %zu needs 'properties'", c);
            goto out;
        }
        if ((rc = load_props(m, c, props, err))) goto out;
    }
    if ((rc = xg_conf_check_unused(root, err))) goto out;
    if ((rc = less_schema_validate(&m->schema, err))) goto out;
    *out = m;
    m = NULL;
    rc = 0;
out:
    less_mapping_free(m);
    xg_conf_yaml_free(root);
    if (rc == -ENOMEM && err && !err->msg[0]) xg_error_set(err, rc, "%s: out of memory", path);
    return rc;
}

bool less_mapping_pose_compatible(const struct less_mapping *m)
{
    for (size_t c = 0; c < m->schema.n_components; c++)
        for (size_t p = 0; p < m->comps[c].n_props; p++)
            if (m->map[c][p].field == LESS_F_POSITION || m->map[c][p].field == LESS_F_ORIENTATION)
                return true;
    return false;
}

static int get_floats(const struct less_value *v, double *dst, size_t n, const char *what,
                      struct xg_error *err)
{
    if (v->u.list.count != n)
        return xg_error_set(err, -EPROTO, "LESS %s: %zu elements, expected %zu", what,
                            v->u.list.count, n);
    for (size_t i = 0; i < n; i++) {
        dst[i] = v->u.list.items[i].u.f;
        if (!isfinite(dst[i]))
            return xg_error_set(err, -EPROTO, "LESS %s[%zu]: %g is not finite", what, i, dst[i]);
    }
    return 0;
}

int less_mapping_apply(const struct less_mapping *m, const struct less_comp_values_list *cl,
                       struct less_pose *p, uint32_t *got, struct xg_error *err)
{
    for (size_t c = 0; c < cl->count; c++) {
        const struct less_comp_values *cv = &cl->items[c];
        if (cv->component_id < 0 || (size_t)cv->component_id >= m->schema.n_components) continue;
        const struct less_mapped_prop *map = m->map[cv->component_id];
        size_t np = m->comps[cv->component_id].n_props;
        for (size_t i = 0; i < cv->props.count; i++) {
            const struct less_prop_value *pv = &cv->props.items[i];
            if (pv->property_id < 0 || (size_t)pv->property_id >= np) continue;
            const struct less_mapped_prop *mp = &map[pv->property_id];
            const char *what = m->comps[cv->component_id].props[pv->property_id].name;
            double v[4] = {0};
            int rc;
            int bit = -1;
            switch (mp->field) {
            case LESS_F_NAME:
                p->name = pv->value.u.str.p;
                p->name_len = pv->value.u.str.len;
                bit = LESS_POSE_NAME;
                break;
            case LESS_F_ORIGIN:
                p->origin = pv->value.u.str.p;
                p->origin_len = pv->value.u.str.len;
                bit = LESS_POSE_ORIGIN;
                break;
            case LESS_F_KIND:
                p->kind = pv->value.u.i;
                bit = LESS_POSE_KIND;
                break;
            case LESS_F_ACTIVE:
                p->active = pv->value.u.i != 0;
                bit = LESS_POSE_ACTIVE;
                break;
            case LESS_F_SAMPLE_TIME:
                p->sample_time = pv->value.u.i;
                bit = LESS_POSE_SAMPLE_TIME;
                break;
            case LESS_F_POSITION:
            case LESS_F_VELOCITY:
            case LESS_F_ANGULAR_VELOCITY: {
                if ((rc = get_floats(&pv->value, v, 3, what, err))) return rc;
                struct xg_vec3 x = {v[0], v[1], v[2]};
                if (mp->field == LESS_F_POSITION)
                    p->position = x, bit = LESS_POSE_POSITION;
                else if (mp->field == LESS_F_VELOCITY)
                    p->velocity = x, bit = LESS_POSE_VELOCITY;
                else
                    p->angular_velocity = x, bit = LESS_POSE_ANGULAR_VELOCITY;
                break;
            }
            case LESS_F_ORIENTATION:
                if ((rc = get_floats(&pv->value, v, 4, what, err))) return rc;
                p->orientation = mp->wxyz ? (struct xg_quat){v[1], v[2], v[3], v[0]}
                                          : (struct xg_quat){v[0], v[1], v[2], v[3]};
                bit = LESS_POSE_ORIENTATION;
                break;
            default:
                break;
            }
            if (bit >= 0) {
                p->present |= LESS_POSE_BIT(bit);
                *got |= LESS_POSE_BIT(bit);
            }
        }
    }
    if (m->has_kind && !(p->present & LESS_POSE_BIT(LESS_POSE_KIND))) {
        p->kind = m->kind;
        p->present |= LESS_POSE_BIT(LESS_POSE_KIND);
    }
    return 0;
}
