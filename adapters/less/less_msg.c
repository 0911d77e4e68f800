/* LESS codec: the built-in schemas and the messages (encode, decode) on top of the base
 * encodings of less_codec.c. See less_codec.h. */
#include "adapters/less/less_codec_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Schemas                                                                                     */

static const struct less_property pose_props[LESS_POSE_N_PROPS] = {
    [LESS_POSE_NAME] = {"name", {LESS_T_STRING, 0, NULL}},
    [LESS_POSE_KIND] = {"kind", {LESS_T_INTEGER, 0, NULL}},
    [LESS_POSE_POSITION] = {"position", {LESS_T_VECTOR, 3, &less_type_float32}},
    [LESS_POSE_VELOCITY] = {"velocity", {LESS_T_VECTOR, 3, &less_type_float32}},
    [LESS_POSE_ORIENTATION] = {"orientation", {LESS_T_VECTOR, 4, &less_type_float32}},
    [LESS_POSE_ANGULAR_VELOCITY] = {"angular_velocity", {LESS_T_VECTOR, 3, &less_type_float32}},
    [LESS_POSE_ACTIVE] = {"active", {LESS_T_INTEGER, 0, NULL}},
    [LESS_POSE_ORIGIN] = {"origin", {LESS_T_STRING, 0, NULL}},
    [LESS_POSE_SAMPLE_TIME] = {"sample_time", {LESS_T_INTEGER, 0, NULL}},
};

static const struct less_component pose_components[] = {
    {"pose", pose_props, LESS_POSE_N_PROPS},
};

static const struct less_schema pose_schema = {
    LESS_POSE_URI, pose_components, 1, NULL, 0,
};

static const struct less_property conn_props[LESS_CONN_N_PROPS] = {
    [LESS_CONN_SCHEMA] = {"schema", {LESS_T_STRING, 0, NULL}},
    [LESS_CONN_FIRST_SEQ] = {"first_sequence", {LESS_T_INTEGER, 0, NULL}},
    [LESS_CONN_QUANTUM_NS] = {"timestamp_quantum_ns", {LESS_T_INTEGER, 0, NULL}},
    [LESS_CONN_KEY_ID] = {"key_id", {LESS_T_STRING, 0, NULL}},
    [LESS_CONN_RATE_HZ] = {"rate_hz", {LESS_T_INTEGER, 0, NULL}},
};

static const struct less_component conn_components[] = {
    {"connection", conn_props, LESS_CONN_N_PROPS},
};

static const struct less_schema conn_schema = {
    LESS_CONNECTION_URI, conn_components, 1, NULL, 0,
};

const struct less_schema *less_pose_schema(void)
{
    return &pose_schema;
}
const struct less_schema *less_connection_schema(void)
{
    return &conn_schema;
}

static int check_component(const struct less_component *c, const char *kind, size_t idx,
                           struct xg_error *err)
{
    if (c->n_props && !c->props)
        return xg_error_set(err, -EINVAL, "LESS schema: %s %zu has no property table", kind, idx);
    for (size_t p = 0; p < c->n_props; p++) {
        int rc = less_check_type(&c->props[p].type, 0, err);
        if (rc) {
            xg_error_prefix(err, "%s %zu property %zu (%s): ", kind, idx, p,
                            c->props[p].name ? c->props[p].name : "?");
            return rc;
        }
    }
    return 0;
}

int less_schema_validate(const struct less_schema *s, struct xg_error *err)
{
    if (!s || !s->uri || !s->uri[0]) return xg_error_set(err, -EINVAL, "LESS schema: missing URI");
    if ((s->n_components && !s->components) || (s->n_interactions && !s->interactions))
        return xg_error_set(err, -EINVAL, "LESS schema %s: missing table", s->uri);
    for (size_t c = 0; c < s->n_components; c++) {
        int rc = check_component(&s->components[c], "component", c, err);
        if (rc) {
            xg_error_prefix(err, "%s: ", s->uri);
            return rc;
        }
    }
    for (size_t c = 0; c < s->n_interactions; c++) {
        int rc = check_component(&s->interactions[c], "interaction", c, err);
        if (rc) {
            xg_error_prefix(err, "%s: ", s->uri);
            return rc;
        }
    }
    return 0;
}

/* Prefix the error with "LESS <what>: ", folding a leading "LESS " of the inner message. */
__attribute__((format(printf, 2, 3))) static void prefix_less(struct xg_error *err, const char *fmt,
                                                              ...)
{
    if (!err) return;
    char what[128], old[XG_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *inner = strncmp(err->msg, "LESS ", 5) == 0 ? err->msg + 5 : err->msg;
    snprintf(old, sizeof old, "%s", inner);
    snprintf(err->msg, sizeof err->msg, "LESS %s: %s", what, old);
}

/* ------------------------------------------------------------------------------------------ */
/* Messages                                                                                    */

const char *less_msg_name(unsigned code)
{
    static const char *const names[] = {"?",
                                        "introduce-type",
                                        "subscribe-type",
                                        "unsubscribe-type",
                                        "introduce-entity",
                                        "remove-entity",
                                        "update-entity",
                                        "request-entity",
                                        "method-invocation",
                                        "method-result",
                                        "interaction",
                                        "tweak-entity",
                                        "connection-control"};
    return code < sizeof names / sizeof names[0] ? names[code] : "?";
}

static const struct less_component *find_component(const struct less_schema *s, int64_t id)
{
    return id >= 0 && (uint64_t)id < s->n_components ? &s->components[id] : NULL;
}

static const struct less_property *find_prop(const struct less_component *c, int64_t id)
{
    return id >= 0 && (uint64_t)id < c->n_props ? &c->props[id] : NULL;
}

/* Schema lookups; `proto` selects -EPROTO (decode) or -EINVAL (encode). */
static const struct less_schema *lookup_type(const struct less_context *ctx, bool sender,
                                             int64_t typeid, int code, struct xg_error *err)
{
    const struct less_schema *(*fn)(void *, int64_t) =
        ctx ? (sender ? ctx->sender_type : ctx->receiver_type) : NULL;
    const struct less_schema *s = fn ? fn(ctx->user, typeid) : NULL;
    if (!s)
        xg_error_set(err, code, "unknown typeid %" PRId64 " (not introduced by the %s)", typeid,
                     sender ? "sender" : "receiver");
    return s;
}

static const struct less_schema *lookup_entity(const struct less_context *ctx, bool sender,
                                               int64_t entity, int code, struct xg_error *err)
{
    int (*fn)(void *, int64_t, int64_t *) =
        ctx ? (sender ? ctx->sender_entity_type : ctx->receiver_entity_type) : NULL;
    int64_t typeid = 0;
    if (!fn || fn(ctx->user, entity, &typeid) != 0) {
        xg_error_set(err, code, "unknown entity %" PRId64 " (not introduced by the %s)", entity,
                     sender ? "sender" : "receiver");
        return NULL;
    }
    return lookup_type(ctx, sender, typeid, code, err);
}

static const struct less_schema *conn_schema_of(const struct less_context *ctx)
{
    return ctx && ctx->connection_schema ? ctx->connection_schema : &conn_schema;
}

static const struct less_component *lookup_interaction(const struct less_context *ctx, int64_t id,
                                                       int code, struct xg_error *err)
{
    const struct less_schema *s = ctx ? ctx->interaction_schema : NULL;
    if (!s || id < 0 || (uint64_t)id >= s->n_interactions) {
        xg_error_set(err, code, "unknown interaction-id %" PRId64, id);
        return NULL;
    }
    return &s->interactions[id];
}

/* --- encode --- */

static int enc_path(struct xg_writer *w, const struct less_path *p, const struct less_schema *s,
                    struct xg_error *err)
{
    if (p->len > LESS_MAX_PATH)
        return xg_error_set(err, -EINVAL, "component-id-path length %zu > %d", p->len,
                            LESS_MAX_PATH);
    if (s && (p->len != 1 || !find_component(s, p->ids[0])))
        return xg_error_set(err, -EINVAL,
                            "component-id-path (length %zu, first %" PRId64
                            ") does not name a component of %s",
                            p->len, p->len ? p->ids[0] : -1, s->uri);
    less_put_uint(w, p->len);
    for (size_t i = 0; i < p->len; i++)
        less_put_int(w, p->ids[i]);
    return 0;
}

static int enc_props(struct xg_writer *w, const struct less_component *c, const char *where,
                     const struct less_prop_list *l, struct xg_error *err)
{
    less_put_uint(w, l->count);
    for (size_t i = 0; i < l->count; i++) {
        const struct less_prop_value *pv = &l->items[i];
        const struct less_property *p = find_prop(c, pv->property_id);
        if (!p)
            return xg_error_set(err, -EINVAL, "property %" PRId64 " not in %s", pv->property_id,
                                where);
        less_put_int(w, pv->property_id);
        int rc = less_put_value_depth(w, &p->type, &pv->value, 0, err);
        if (rc) {
            prefix_less(err, "property %" PRId64 " (%s)", pv->property_id, p->name);
            return rc;
        }
    }
    return 0;
}

static int enc_comp_values(struct xg_writer *w, const struct less_schema *s,
                           const struct less_comp_values_list *l, struct xg_error *err)
{
    less_put_uint(w, l->count);
    for (size_t i = 0; i < l->count; i++) {
        const struct less_comp_values *cv = &l->items[i];
        const struct less_component *c = find_component(s, cv->component_id);
        if (!c)
            return xg_error_set(err, -EINVAL, "component %" PRId64 " not in %s", cv->component_id,
                                s->uri);
        less_put_int(w, cv->component_id);
        char where[160];
        snprintf(where, sizeof where, "component %" PRId64 " of %s", cv->component_id, s->uri);
        int rc = enc_props(w, c, where, &cv->props, err);
        if (rc) return rc;
    }
    return 0;
}

static int enc_msg(struct xg_writer *w, const struct less_context *ctx, const struct less_msg *m,
                   struct xg_error *err)
{
    const struct less_schema *s;
    const struct less_component *c;
    int rc = 0;
    less_put_uint(w, (uint64_t)m->code);
    switch (m->code) {
    case LESS_MSG_INTRODUCE_TYPE:
        less_put_int(w, m->u.introduce_type.typeid);
        return less_put_string(w, m->u.introduce_type.uri, m->u.introduce_type.uri_len, err);
    case LESS_MSG_SUBSCRIBE_TYPE:
        if (!(s = lookup_type(ctx, false, m->u.subscribe_type.typeid, -EINVAL, err)))
            return -EINVAL;
        less_put_int(w, m->u.subscribe_type.typeid);
        less_put_uint(w, m->u.subscribe_type.count);
        for (size_t i = 0; i < m->u.subscribe_type.count; i++) {
            const struct less_comp_subscription *cs = &m->u.subscribe_type.components[i];
            if ((rc = enc_path(w, &cs->path, s, err))) return rc;
            c = find_component(s, cs->path.ids[0]);
            less_put_uint(w, cs->count);
            for (size_t k = 0; k < cs->count; k++) {
                if (!find_prop(c, cs->property_ids[k]))
                    return xg_error_set(err, -EINVAL, "property %" PRId64 " not in %s",
                                        cs->property_ids[k], s->uri);
                less_put_int(w, cs->property_ids[k]);
            }
        }
        return 0;
    case LESS_MSG_UNSUBSCRIBE_TYPE:
        if (!lookup_type(ctx, false, m->u.unsubscribe_type.typeid, -EINVAL, err)) return -EINVAL;
        return less_put_int(w, m->u.unsubscribe_type.typeid);
    case LESS_MSG_INTRODUCE_ENTITY:
        if (!(s = lookup_type(ctx, true, m->u.introduce_entity.typeid, -EINVAL, err)))
            return -EINVAL;
        less_put_int(w, m->u.introduce_entity.typeid);
        less_put_int(w, m->u.introduce_entity.entity_id);
        return enc_comp_values(w, s, &m->u.introduce_entity.components, err);
    case LESS_MSG_REMOVE_ENTITY:
        return less_put_int(w, m->u.remove_entity.entity_id);
    case LESS_MSG_UPDATE_ENTITY:
        if (!(s = lookup_entity(ctx, true, m->u.update_entity.entity_id, -EINVAL, err)))
            return -EINVAL;
        less_put_int(w, m->u.update_entity.entity_id);
        return enc_comp_values(w, s, &m->u.update_entity.components, err);
    case LESS_MSG_REQUEST_ENTITY:
        return less_put_int(w, m->u.request_entity.entity_id);
    case LESS_MSG_METHOD_INVOCATION:
        less_put_int(w, m->u.method_invocation.request_id);
        less_put_int(w, m->u.method_invocation.entity_id);
        if ((rc = enc_path(w, &m->u.method_invocation.path, NULL, err))) return rc;
        less_put_int(w, m->u.method_invocation.property_id);
        less_put_uint(w, m->u.method_invocation.argc);
        for (size_t i = 0; i < m->u.method_invocation.argc; i++) {
            if ((rc = less_put_variant_depth(w, &m->u.method_invocation.args[i], 0, err))) {
                prefix_less(err, "argument %zu", i);
                return rc;
            }
        }
        return 0;
    case LESS_MSG_METHOD_RESULT:
        less_put_int(w, m->u.method_result.request_id);
        less_put_int(w, m->u.method_result.status);
        return less_put_variant_depth(w, &m->u.method_result.ret, 0, err);
    case LESS_MSG_INTERACTION:
        if (!(c = lookup_interaction(ctx, m->u.interaction.interaction_id, -EINVAL, err)))
            return -EINVAL;
        less_put_int(w, m->u.interaction.interaction_id);
        return enc_props(w, c, "the interaction", &m->u.interaction.props, err);
    case LESS_MSG_TWEAK_ENTITY: {
        if (!(s = lookup_entity(ctx, false, m->u.tweak_entity.entity_id, -EINVAL, err)))
            return -EINVAL;
        less_put_int(w, m->u.tweak_entity.entity_id);
        if ((rc = enc_path(w, &m->u.tweak_entity.path, s, err))) return rc;
        c = find_component(s, m->u.tweak_entity.path.ids[0]);
        const struct less_property *p = find_prop(c, m->u.tweak_entity.property_id);
        if (!p)
            return xg_error_set(err, -EINVAL, "property %" PRId64 " not in %s",
                                m->u.tweak_entity.property_id, s->uri);
        less_put_int(w, m->u.tweak_entity.property_id);
        if ((rc = less_put_value_depth(w, &p->type, &m->u.tweak_entity.value, 0, err)))
            prefix_less(err, "property %" PRId64 " (%s)", m->u.tweak_entity.property_id, p->name);
        return rc;
    }
    case LESS_MSG_CONNECTION_CONTROL:
        s = conn_schema_of(ctx);
        return enc_props(w, &s->components[0], s->uri, &m->u.connection_control.props, err);
    default:
        return xg_error_set(err, -EINVAL, "unknown message code %d", (int)m->code);
    }
}

int less_encode_msg(struct xg_writer *w, const struct less_context *ctx, const struct less_msg *m,
                    struct xg_error *err)
{
    size_t start = w->len;
    if (w->err) return xg_error_set(err, w->err, "LESS encode: writer already failed");
    if (err) err->code = 0;
    int rc = enc_msg(w, ctx, m, err);
    if (rc == 0 && w->err) rc = w->err;
    if (rc) {
        if (rc == -EMSGSIZE && (!err || err->code != -EMSGSIZE))
            xg_error_set(err, rc, "output full (%zu bytes)", w->cap);
        prefix_less(err, "encode %s", less_msg_name((unsigned)m->code));
        w->len = start; /* nothing half-written; the return code reports the error */
        w->err = 0;
    }
    return rc;
}

/* --- decode --- */

static int dec_path(struct xg_reader *r, struct less_path *p, const struct less_schema *s,
                    struct xg_error *err)
{
    size_t start = r->off;
    int rc = less_get_count(r, 1, LESS_MAX_PATH, &p->len, "path-length", err);
    if (rc) return rc;
    for (size_t i = 0; i < p->len; i++)
        if ((rc = less_get_int(r, &p->ids[i], "component-id", err))) return rc;
    if (s && (p->len != 1 || !find_component(s, p->ids[0]))) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO,
                            "component-id-path at offset %zu (length %zu, first %" PRId64
                            ") does not name a component of %s",
                            start, p->len, p->len ? p->ids[0] : -1, s->uri);
    }
    return 0;
}

static int dec_props(struct xg_reader *r, const struct less_component *c, const char *where,
                     struct less_arena *a, struct less_prop_list *l, struct xg_error *err)
{
    size_t n;
    int rc = less_get_count(r, 1, SIZE_MAX, &n, "property-count", err);
    if (rc) return rc;
    struct less_prop_value *items =
        less_arena_array(a, n, sizeof *items, "property list", err, &rc);
    if (!items) return rc;
    for (size_t i = 0; i < n; i++) {
        size_t at = r->off;
        if ((rc = less_get_int(r, &items[i].property_id, "property-id", err))) return rc;
        const struct less_property *p = find_prop(c, items[i].property_id);
        if (!p) {
            r->err = -EPROTO;
            return xg_error_set(err, -EPROTO, "property %" PRId64 " at offset %zu not in %s",
                                items[i].property_id, at, where);
        }
        if ((rc = less_get_value_depth(r, &p->type, a, &items[i].value, 0, err))) {
            prefix_less(err, "property %" PRId64 " (%s)", items[i].property_id, p->name);
            return rc;
        }
    }
    l->items = items;
    l->count = n;
    return 0;
}

static int dec_comp_values(struct xg_reader *r, const struct less_schema *s, struct less_arena *a,
                           struct less_comp_values_list *l, struct xg_error *err)
{
    size_t n;
    int rc = less_get_count(r, 2, SIZE_MAX, &n, "component-count", err);
    if (rc) return rc;
    struct less_comp_values *items =
        less_arena_array(a, n, sizeof *items, "component list", err, &rc);
    if (!items) return rc;
    for (size_t i = 0; i < n; i++) {
        size_t at = r->off;
        if ((rc = less_get_int(r, &items[i].component_id, "component-id", err))) return rc;
        const struct less_component *c = find_component(s, items[i].component_id);
        if (!c) {
            r->err = -EPROTO;
            return xg_error_set(err, -EPROTO, "component %" PRId64 " at offset %zu not in %s",
                                items[i].component_id, at, s->uri);
        }
        char where[160];
        snprintf(where, sizeof where, "component %" PRId64 " of %s", items[i].component_id, s->uri);
        if ((rc = dec_props(r, c, where, a, &items[i].props, err))) return rc;
    }
    l->items = items;
    l->count = n;
    return 0;
}

static int dec_msg(struct xg_reader *r, const struct less_context *ctx, struct less_arena *a,
                   struct less_msg *m, struct xg_error *err)
{
    const struct less_schema *s;
    const struct less_component *c;
    uint64_t code;
    size_t at = r->off;
    size_t n;
    int rc = less_get_uint(r, &code, "message code", err);
    if (rc) return rc;
    if (code < LESS_MSG_INTRODUCE_TYPE || code > LESS_MSG_CONNECTION_CONTROL) {
        r->err = -EPROTO;
        return xg_error_set(err, -EPROTO, "LESS unknown message code %" PRIu64 " at offset %zu",
                            code, at);
    }
    m->code = (enum less_msg_code)code;
    switch (m->code) {
    case LESS_MSG_INTRODUCE_TYPE:
        if ((rc = less_get_int(r, &m->u.introduce_type.typeid, "typeid", err))) return rc;
        return less_get_string(r, a, &m->u.introduce_type.uri, &m->u.introduce_type.uri_len, err);
    case LESS_MSG_SUBSCRIBE_TYPE: {
        if ((rc = less_get_int(r, &m->u.subscribe_type.typeid, "typeid", err))) return rc;
        if (!(s = lookup_type(ctx, false, m->u.subscribe_type.typeid, -EPROTO, err)))
            return r->err = -EPROTO;
        if ((rc = less_get_count(r, 2, SIZE_MAX, &n, "component-count", err))) return rc;
        struct less_comp_subscription *cs =
            less_arena_array(a, n, sizeof *cs, "subscription", err, &rc);
        if (!cs) return rc;
        for (size_t i = 0; i < n; i++) {
            if ((rc = dec_path(r, &cs[i].path, s, err))) return rc;
            c = find_component(s, cs[i].path.ids[0]);
            if ((rc = less_get_count(r, 1, SIZE_MAX, &cs[i].count, "property-id-count", err)))
                return rc;
            int64_t *ids = less_arena_array(a, cs[i].count, sizeof *ids, "property ids", err, &rc);
            if (!ids) return rc;
            for (size_t k = 0; k < cs[i].count; k++) {
                size_t pat = r->off;
                if ((rc = less_get_int(r, &ids[k], "property-id", err))) return rc;
                if (!find_prop(c, ids[k])) {
                    r->err = -EPROTO;
                    return xg_error_set(err, -EPROTO,
                                        "property %" PRId64
                                        " at offset %zu not in component %" PRId64 " of %s",
                                        ids[k], pat, cs[i].path.ids[0], s->uri);
                }
            }
            cs[i].property_ids = ids;
        }
        m->u.subscribe_type.components = cs;
        m->u.subscribe_type.count = n;
        return 0;
    }
    case LESS_MSG_UNSUBSCRIBE_TYPE:
        if ((rc = less_get_int(r, &m->u.unsubscribe_type.typeid, "typeid", err))) return rc;
        if (!lookup_type(ctx, false, m->u.unsubscribe_type.typeid, -EPROTO, err))
            return r->err = -EPROTO;
        return 0;
    case LESS_MSG_INTRODUCE_ENTITY:
        if ((rc = less_get_int(r, &m->u.introduce_entity.typeid, "typeid", err)) ||
            (rc = less_get_int(r, &m->u.introduce_entity.entity_id, "entity-id", err)))
            return rc;
        if (!(s = lookup_type(ctx, true, m->u.introduce_entity.typeid, -EPROTO, err)))
            return r->err = -EPROTO;
        return dec_comp_values(r, s, a, &m->u.introduce_entity.components, err);
    case LESS_MSG_REMOVE_ENTITY:
        return less_get_int(r, &m->u.remove_entity.entity_id, "entity-id", err);
    case LESS_MSG_UPDATE_ENTITY:
        if ((rc = less_get_int(r, &m->u.update_entity.entity_id, "entity-id", err))) return rc;
        if (!(s = lookup_entity(ctx, true, m->u.update_entity.entity_id, -EPROTO, err)))
            return r->err = -EPROTO;
        return dec_comp_values(r, s, a, &m->u.update_entity.components, err);
    case LESS_MSG_REQUEST_ENTITY:
        return less_get_int(r, &m->u.request_entity.entity_id, "entity-id", err);
    case LESS_MSG_METHOD_INVOCATION: {
        if ((rc = less_get_int(r, &m->u.method_invocation.request_id, "request-id", err)) ||
            (rc = less_get_int(r, &m->u.method_invocation.entity_id, "entity-id", err)) ||
            (rc = dec_path(r, &m->u.method_invocation.path, NULL, err)) ||
            (rc = less_get_int(r, &m->u.method_invocation.property_id, "property-id", err)) ||
            (rc = less_get_count(r, 2, SIZE_MAX, &n, "argument-count", err)))
            return rc;
        struct less_value *args = less_arena_array(a, n, sizeof *args, "argument list", err, &rc);
        if (!args) return rc;
        for (size_t i = 0; i < n; i++) {
            if ((rc = less_get_variant_depth(r, a, &args[i], 0, err))) {
                prefix_less(err, "argument %zu", i);
                return rc;
            }
        }
        m->u.method_invocation.args = args;
        m->u.method_invocation.argc = n;
        return 0;
    }
    case LESS_MSG_METHOD_RESULT:
        if ((rc = less_get_int(r, &m->u.method_result.request_id, "request-id", err)) ||
            (rc = less_get_int(r, &m->u.method_result.status, "status", err)))
            return rc;
        memset(&m->u.method_result.ret, 0, sizeof m->u.method_result.ret);
        return less_get_variant_depth(r, a, &m->u.method_result.ret, 0, err);
    case LESS_MSG_INTERACTION:
        if ((rc = less_get_int(r, &m->u.interaction.interaction_id, "interaction-id", err)))
            return rc;
        if (!(c = lookup_interaction(ctx, m->u.interaction.interaction_id, -EPROTO, err)))
            return r->err = -EPROTO;
        return dec_props(r, c, "the interaction", a, &m->u.interaction.props, err);
    case LESS_MSG_TWEAK_ENTITY: {
        if ((rc = less_get_int(r, &m->u.tweak_entity.entity_id, "entity-id", err))) return rc;
        if (!(s = lookup_entity(ctx, false, m->u.tweak_entity.entity_id, -EPROTO, err)))
            return r->err = -EPROTO;
        if ((rc = dec_path(r, &m->u.tweak_entity.path, s, err))) return rc;
        c = find_component(s, m->u.tweak_entity.path.ids[0]);
        size_t pat = r->off;
        if ((rc = less_get_int(r, &m->u.tweak_entity.property_id, "property-id", err))) return rc;
        const struct less_property *p = find_prop(c, m->u.tweak_entity.property_id);
        if (!p) {
            r->err = -EPROTO;
            return xg_error_set(err, -EPROTO, "property %" PRId64 " at offset %zu not in %s",
                                m->u.tweak_entity.property_id, pat, s->uri);
        }
        if ((rc = less_get_value_depth(r, &p->type, a, &m->u.tweak_entity.value, 0, err)))
            prefix_less(err, "property %" PRId64 " (%s)", m->u.tweak_entity.property_id, p->name);
        return rc;
    }
    case LESS_MSG_CONNECTION_CONTROL:
        s = conn_schema_of(ctx);
        return dec_props(r, &s->components[0], s->uri, a, &m->u.connection_control.props, err);
    }
    return -EPROTO; /* not reached */
}

int less_decode_msg(struct xg_reader *r, const struct less_context *ctx, struct less_arena *a,
                    struct less_msg *m, struct xg_error *err)
{
    memset(m, 0, sizeof *m);
    int rc = dec_msg(r, ctx, a, m, err);
    if (rc) {
        if (!r->err) r->err = rc;
        if (m->code) prefix_less(err, "%s", less_msg_name((unsigned)m->code));
    }
    return rc;
}
