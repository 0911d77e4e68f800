/* less adapter, receiving side of a session (less_session.h), free of sockets: a decoded,
 * authentic LESS packet applied to the peer's session and the gateway's table
 * (connection-control, types, subscriptions, entity introduce/update/remove, requests answered
 * 403/404; P5-P17). A dry pass checks every message against the packet's own introductions
 * before anything is applied. The TCP and UDP glue (less_tcp.c, less_udp.c) hand packets to
 * less_session_rx_tcp() / less_session_rx_udp(); answers are queued with less_queue_msg(); the
 * session's events (up, subscribed) go to the glue. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "adapters/less/less_mapping.h"
#include "adapters/less/less_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/table/names.h"
#include "mappings/frame.h"

/* ---- receiving ---- */

/* The "session=<token>" word of a connection-control schema string ("" if none). */
void less_session_token(const char *schema, char *out, size_t size)
{
    const char *t = strstr(schema, "session=");
    out[0] = '\0';
    if (!t) return;
    t += 8;
    size_t n = strcspn(t, " ;,");
    if (n >= size) n = size - 1;
    memcpy(out, t, n);
    out[n] = '\0';
}

/* Our schema for a type URI the peer introduces: the pose schema or a loaded mapping. */
const struct less_schema *less_schema_for_uri(const struct less_env *la, const char *uri)
{
    if (strcmp(uri, LESS_POSE_URI) == 0) return less_pose_schema();
    for (size_t i = 0; i < la->n_mappings; i++)
        if (strcmp(uri, la->mappings[i]->schema.uri) == 0)
            return less_mapping_schema(la->mappings[i]);
    return NULL;
}

static struct less_in_ent *in_find(struct less_session *p, int64_t wire_id)
{
    uint32_t idx;
    return less_imap_get(&p->in_map, wire_id, &idx) ? &p->in[idx] : NULL;
}

static void in_remove(struct less_session *p, int64_t wire_id)
{
    uint32_t idx;
    if (!less_imap_get(&p->in_map, wire_id, &idx)) return;
    struct less_env *la = p->env;
    if (p->in[idx].table_id) xg_table_remove(la->a->table, p->in[idx].table_id);
    less_imap_del(&p->in_map, wire_id);
    size_t last = p->n_in - 1;
    if (idx != last) {
        p->in[idx] = p->in[last];
        /* re-point the borrowed strings at the moved buffers */
        p->in[idx].pose.name = p->in[idx].name;
        p->in[idx].pose.origin = p->in[idx].origin;
        less_imap_put(&p->in_map, p->in[idx].wire_id, idx);
    }
    p->n_in--;
}

static void copy_str(char *dst, size_t size, const char *s, size_t len)
{
    if (len >= size) len = size - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

struct dup_find {
    const char *gw, *source;
    uint32_t found;
};

static int dup_visit(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct dup_find *df = user;
    (void)pose;
    if (strcmp(xg_entity_origin_gateway(e), df->gw) == 0 &&
        strcmp(xg_entity_source(e), df->source) == 0) {
        df->found = xg_entity_id(e);
        return 1;
    }
    return 0;
}

/* Merge a decoded property list into the entity and push a sample to the table. */
static int apply_props(struct less_session *p, struct less_in_ent *ie,
                       const struct less_comp_values_list *cl, int64_t ts_quanta, int64_t now,
                       struct xg_error *err)
{
    struct less_env *la = p->env;
    const struct less_schema *schema = less_peer_type_schema(p, ie->typeid);
    if (!schema) return 0;
    uint32_t got = 0;
    struct less_pose tmp = ie->pose;
    if (schema == less_pose_schema()) {
        for (size_t c = 0; c < cl->count; c++) {
            if (cl->items[c].component_id != 0) continue;
            int rc = less_pose_from_props(&cl->items[c].props, &tmp, err);
            if (rc) return rc;
            for (size_t i = 0; i < cl->items[c].props.count; i++)
                got |= LESS_POSE_BIT(cl->items[c].props.items[i].property_id);
        }
    } else {
        int rc = less_mapping_apply(less_mapping_of(schema), cl, &tmp, &got, err);
        if (rc) return rc;
    }
    {
        if (got & LESS_POSE_BIT(LESS_POSE_NAME)) {
            /* a long name is cut with a hash of the whole name: two never merge */
            xg_name_fit(ie->name, sizeof ie->name, tmp.name, tmp.name_len);
            tmp.name = ie->name;
            tmp.name_len = strlen(ie->name);
        }
        if (got & LESS_POSE_BIT(LESS_POSE_ORIGIN)) {
            copy_str(ie->origin, sizeof ie->origin, tmp.origin, tmp.origin_len);
            tmp.origin = ie->origin;
            tmp.origin_len = strlen(ie->origin);
            const char *slash = strrchr(ie->origin, '/');
            size_t gl = slash ? (size_t)(slash - ie->origin) : strlen(ie->origin);
            copy_str(ie->origin_gw, sizeof ie->origin_gw, ie->origin, gl);
            if (strcmp(ie->origin_gw, la->gw_id) == 0 && !ie->ignored) {
                ie->ignored = true;
                la->echo_suppressed++;
                XG_DEBUG(la->a->name, "peer %s: entity %" PRId64 " '%s' originates here; ignored",
                         p->addr, ie->wire_id, ie->name);
                if (ie->table_id) {
                    xg_table_remove(la->a->table, ie->table_id);
                    ie->table_id = 0;
                }
            }
        }
        ie->pose = tmp;
    }
    if (ie->ignored) return 0;
    uint32_t pose_bits = LESS_POSE_BIT(LESS_POSE_POSITION) | LESS_POSE_BIT(LESS_POSE_ORIENTATION) |
                         LESS_POSE_BIT(LESS_POSE_VELOCITY) |
                         LESS_POSE_BIT(LESS_POSE_ANGULAR_VELOCITY) |
                         LESS_POSE_BIT(LESS_POSE_ACTIVE);
    if (!(got & pose_bits)) return 0;
    const struct less_pose *lp = &ie->pose;
    if (!(lp->present & LESS_POSE_BIT(LESS_POSE_POSITION)) &&
        !(lp->present & LESS_POSE_BIT(LESS_POSE_ORIENTATION)))
        return 0;
    int64_t q = (got & LESS_POSE_BIT(LESS_POSE_SAMPLE_TIME)) ? lp->sample_time : ts_quanta;
    int64_t src_ns = q * p->quantum_ns;
    struct xg_sample s = {.receive_ns = now};
    s.capture_ns =
        xg_adapter_map_time(la->a, &p->tmap, src_ns, now, p->peer_gw[0] ? p->peer_gw : NULL);
    if (lp->present & LESS_POSE_BIT(LESS_POSE_POSITION)) {
        s.flags |= XG_SAMPLE_POSITION;
        s.position = lp->position;
    }
    if (lp->present & LESS_POSE_BIT(LESS_POSE_ORIENTATION)) {
        s.flags |= XG_SAMPLE_ORIENTATION;
        s.orientation = lp->orientation;
    }
    if (got & LESS_POSE_BIT(LESS_POSE_VELOCITY)) {
        s.flags |= XG_SAMPLE_VELOCITY;
        s.velocity = lp->velocity;
    }
    if (got & LESS_POSE_BIT(LESS_POSE_ANGULAR_VELOCITY)) {
        s.flags |= XG_SAMPLE_ANGULAR_VELOCITY;
        s.angular_velocity = lp->angular_velocity;
    }
    if ((lp->present & LESS_POSE_BIT(LESS_POSE_ACTIVE)) && !lp->active)
        s.flags |= XG_SAMPLE_INACTIVE;
    xg_frame_sample_in(la->a->frame, &s);
    if (ie->dup_of) {
        if (xg_table_get(la->a->table, ie->dup_of)) return 0; /* the other path still lives */
        ie->dup_of = 0;
    }
    int rc = -ENOENT;
    if (ie->table_id) rc = xg_table_push(la->a->table, ie->table_id, &s);
    if (rc == -ENOENT && ie->origin_gw[0] && ie->name[0]) {
        /* in a mesh the same entity arrives by several paths: keep the first */
        struct dup_find df = {ie->origin_gw, ie->name, 0};
        xg_table_foreach(la->a->table, -1, now, dup_visit, &df);
        if (df.found) {
            ie->dup_of = df.found;
            ie->table_id = 0;
            la->duplicates_ignored++;
            XG_DEBUG(la->a->name, "peer %s: '%s' from '%s' already known (entity %u); ignored",
                     p->addr, ie->name, ie->origin_gw, df.found);
            return 0;
        }
    }
    if (rc == -ENOENT) {
        char src[XG_NAME_MAX];
        if (ie->name[0])
            snprintf(src, sizeof src, "%s", ie->name);
        else
            snprintf(src, sizeof src, "entity%" PRId64, ie->wire_id);
        struct xg_entity_key key = {.source = src,
                                    .kind = less_kind_from_wire(lp->kind),
                                    .origin_gateway = ie->origin_gw[0] ? ie->origin_gw : NULL};
        rc = xg_table_update(la->a->table, la->a, &key, &s, &ie->table_id);
    }
    if (rc == 0) {
        la->a->samples_in++;
        ie->dirty = true;
    } else {
        la->a->drops++;
    }
    return 0;
}

static void handle_subscribe(struct less_session *p, const struct less_msg *m)
{
    if (m->u.subscribe_type.typeid != LESS_OUR_TYPEID) return;
    uint32_t mask = 0;
    for (size_t c = 0; c < m->u.subscribe_type.count; c++) {
        const struct less_comp_subscription *cs = &m->u.subscribe_type.components[c];
        if (cs->path.len != 1 || cs->path.ids[0] != 0) continue;
        for (size_t i = 0; i < cs->count; i++)
            if (cs->property_ids[i] >= 0 && cs->property_ids[i] < LESS_POSE_N_PROPS)
                mask |= LESS_POSE_BIT(cs->property_ids[i]);
    }
    bool first = !p->subscribed;
    p->subscribed = true;
    p->sub_mask = mask;
    XG_INFO_PEER(&p->env->lim_session, p->env->a->name,
                 "peer %s subscribed to %s (properties 0x%x)", p->addr, LESS_POSE_URI, mask);
    if (first && p->ev.subscribed) p->ev.subscribed(p->ev.user);
}

static void unsubscribe_all(struct less_session *p)
{
    while (p->n_out) {
        struct less_msg m = {.code = LESS_MSG_REMOVE_ENTITY};
        m.u.remove_entity.entity_id = p->out[p->n_out - 1].wire_id;
        less_queue_msg(p, &m);
        less_out_del(p, p->out[p->n_out - 1].table_id);
    }
    p->subscribed = false;
}

static void handle_introduce_type(struct less_session *p, const struct less_msg *m)
{
    const char *uri = m->u.introduce_type.uri;
    const struct less_schema *s = less_schema_for_uri(p->env, uri);
    const struct less_mapping *map = s && s != less_pose_schema() ? less_mapping_of(s) : NULL;
    if (map && !less_mapping_pose_compatible(map)) s = NULL;
    int64_t typeid = m->u.introduce_type.typeid;
    bool found = false;
    for (size_t i = 0; i < p->n_ptypes; i++)
        if (p->ptypes[i].typeid == typeid) {
            p->ptypes[i].schema = s;
            found = true;
        }
    if (!found) {
        if (p->n_ptypes == p->cap_ptypes) {
            size_t nc = p->cap_ptypes ? p->cap_ptypes * 2 : 8;
            void *np = realloc(p->ptypes, nc * sizeof *p->ptypes);
            if (!np) return;
            p->ptypes = np;
            p->cap_ptypes = nc;
        }
        p->ptypes[p->n_ptypes].typeid = typeid;
        p->ptypes[p->n_ptypes].schema = s;
        p->n_ptypes++;
    }
    if (!s) {
        XG_INFO_PEER(&p->env->lim_session, p->env->a->name,
                     "peer %s introduced type %" PRId64 " '%s' (not pose-compatible)", p->addr,
                     typeid, uri);
        return;
    }
    struct less_msg sub = {.code = LESS_MSG_SUBSCRIBE_TYPE};
    sub.u.subscribe_type.typeid = typeid;
    if (!map) {
        /* subscribe to every property of component 0 */
        static const int64_t all[LESS_POSE_N_PROPS] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
        struct less_comp_subscription cs = {
            .path = {1, {0}}, .property_ids = all, .count = LESS_POSE_N_PROPS};
        sub.u.subscribe_type.components = &cs;
        sub.u.subscribe_type.count = 1;
        less_queue_msg(p, &sub);
        return;
    }
    /* a mapped type: the mapped properties of each component that has any */
    size_t nc = map->schema.n_components, total = 0;
    for (size_t c = 0; c < nc; c++)
        total += map->comps[c].n_props;
    struct less_comp_subscription *cs = calloc(nc ? nc : 1, sizeof *cs);
    int64_t *ids = calloc(total ? total : 1, sizeof *ids);
    if (cs && ids) {
        size_t n = 0, k = 0;
        for (size_t c = 0; c < nc; c++) {
            size_t first = k;
            for (size_t q = 0; q < map->comps[c].n_props; q++)
                if (map->map[c][q].field != LESS_F_NONE) ids[k++] = (int64_t)q;
            if (k == first) continue;
            cs[n].path.len = 1;
            cs[n].path.ids[0] = (int64_t)c;
            cs[n].property_ids = ids + first;
            cs[n].count = k - first;
            n++;
        }
        sub.u.subscribe_type.components = cs;
        sub.u.subscribe_type.count = n;
        less_queue_msg(p, &sub);
        XG_INFO_PEER(&p->env->lim_session, p->env->a->name,
                     "peer %s introduced type %" PRId64 " '%s': subscribed (mapping)", p->addr,
                     typeid, uri);
    }
    free(cs);
    free(ids);
}

static int handle_introduce_entity(struct less_session *p, const struct less_msg *m, int64_t ts,
                                   int64_t now, struct xg_error *err)
{
    int64_t id = m->u.introduce_entity.entity_id;
    struct less_in_ent *ie = in_find(p, id);
    if (!ie) {
        if (p->n_in == p->cap_in) {
            size_t nc = p->cap_in ? p->cap_in * 2 : 32;
            struct less_in_ent *ni = realloc(p->in, nc * sizeof *ni);
            if (!ni) return -ENOMEM;
            p->in = ni;
            p->cap_in = nc;
            for (size_t i = 0; i < p->n_in; i++) {
                p->in[i].pose.name = p->in[i].name;
                p->in[i].pose.origin = p->in[i].origin;
            }
        }
        ie = &p->in[p->n_in];
        memset(ie, 0, sizeof *ie);
        ie->wire_id = id;
        if (less_imap_put(&p->in_map, id, (uint32_t)p->n_in)) return -ENOMEM;
        p->n_in++;
    }
    ie->typeid = m->u.introduce_entity.typeid;
    /* an introduce is a full snapshot */
    memset(&ie->pose, 0, sizeof ie->pose);
    ie->pose.name = ie->name;
    ie->pose.origin = ie->origin;
    return apply_props(p, ie, &m->u.introduce_entity.components, ts, now, err);
}

/* Apply one decoded message. Returns 0 or a negative errno with err set (session error). */
static int apply_msg(struct less_session *p, const struct less_msg *m, int64_t ts, int64_t now,
                     struct xg_error *err)
{
    struct less_env *la = p->env;
    switch (m->code) {
    case LESS_MSG_CONNECTION_CONTROL: {
        const struct less_prop_list *l = &m->u.connection_control.props;
        for (size_t i = 0; i < l->count; i++) {
            const struct less_prop_value *pv = &l->items[i];
            switch (pv->property_id) {
            case LESS_CONN_SCHEMA: {
                const char *g = strstr(pv->value.u.str.p, "gateway=");
                if (g) {
                    g += 8;
                    size_t n = strcspn(g, " ;,");
                    copy_str(p->peer_gw, sizeof p->peer_gw, g, n);
                }
                less_session_token(pv->value.u.str.p, p->peer_session, sizeof p->peer_session);
                break;
            }
            case LESS_CONN_FIRST_SEQ:
                if (pv->value.u.i < 0 || pv->value.u.i > 255)
                    return xg_error_set(err, -EPROTO,
                                        "connection-control first_sequence %" PRId64
                                        " outside 0..255",
                                        pv->value.u.i);
                if (!p->streaming) {
                    p->first_seq = pv->value.u.i;
                    if (la->mode == LESS_MODE_UDP && !p->any_rx)
                        less_ack_init(&p->rxwin, (uint8_t)p->first_seq);
                }
                break;
            case LESS_CONN_QUANTUM_NS:
                if (pv->value.u.i <= 0 || pv->value.u.i > XG_NS_PER_S)
                    return xg_error_set(err, -EPROTO,
                                        "connection-control timestamp_quantum_ns %" PRId64
                                        " outside 1..1000000000",
                                        pv->value.u.i);
                p->quantum_ns = pv->value.u.i;
                break;
            case LESS_CONN_KEY_ID:
                copy_str(p->key_id, sizeof p->key_id, pv->value.u.str.p, pv->value.u.str.len);
                break;
            case LESS_CONN_RATE_HZ:
                p->rate_hz = pv->value.u.i;
                break;
            default:
                break;
            }
        }
        if (!p->streaming) {
            p->streaming = true;
            if (p->ev.up) p->ev.up(p->ev.user);
            XG_INFO_PEER(&la->lim_session, la->a->name,
                         "peer %s: session up (gateway '%s', key id '%s', %" PRId64 " Hz)", p->addr,
                         p->peer_gw[0] ? p->peer_gw : "?", p->key_id, p->rate_hz);
        }
        return 0;
    }
    case LESS_MSG_INTRODUCE_TYPE:
        handle_introduce_type(p, m);
        return 0;
    case LESS_MSG_SUBSCRIBE_TYPE:
        handle_subscribe(p, m);
        return 0;
    case LESS_MSG_UNSUBSCRIBE_TYPE:
        if (m->u.unsubscribe_type.typeid == LESS_OUR_TYPEID) unsubscribe_all(p);
        return 0;
    case LESS_MSG_INTRODUCE_ENTITY:
        return handle_introduce_entity(p, m, ts, now, err);
    case LESS_MSG_UPDATE_ENTITY: {
        struct less_in_ent *ie = in_find(p, m->u.update_entity.entity_id);
        if (!ie) return 0; /* cannot happen: the decoder resolved it */
        return apply_props(p, ie, &m->u.update_entity.components, ts, now, err);
    }
    case LESS_MSG_REMOVE_ENTITY:
        in_remove(p, m->u.remove_entity.entity_id);
        return 0;
    case LESS_MSG_REQUEST_ENTITY: {
        uint32_t tid;
        if (!less_imap_get(&p->out_wire, m->u.request_entity.entity_id, &tid)) {
            la->unknown_requests++;
            XG_DEBUG(la->a->name, "peer %s: request-entity for unknown id %" PRId64, p->addr,
                     m->u.request_entity.entity_id);
            return 0;
        }
        struct xg_pose pose;
        const struct xg_entity *e = xg_table_get(la->a->table, tid);
        if (!e || !less_session_ready(p)) return 0;
        xg_entity_predict_at(la->a->table, e, now, &pose);
        less_send_entity(p, e, &pose, true);
        return 0;
    }
    case LESS_MSG_METHOD_INVOCATION: {
        uint32_t tid;
        char reason[200];
        int64_t id = m->u.method_invocation.entity_id;
        if (less_imap_get(&p->out_wire, id, &tid)) {
            const struct xg_entity *e = xg_table_get(la->a->table, tid);
            snprintf(reason, sizeof reason,
                     "entity %" PRId64 " ('%s') is relayed by gateway '%s', not owned by it", id,
                     e ? xg_entity_name(e) : "?", la->gw_id);
            la->refused_403++;
            less_send_result(p, m->u.method_invocation.request_id, 403, reason);
        } else {
            snprintf(reason, sizeof reason,
                     "no entity %" PRId64 " (the pose schema declares no methods)", id);
            la->not_found_404++;
            less_send_result(p, m->u.method_invocation.request_id, 404, reason);
        }
        XG_INFO_PEER(&la->lim_request, la->a->name,
                     "peer %s: method-invocation %" PRId64 " refused: %s", p->addr,
                     m->u.method_invocation.request_id, reason);
        return 0;
    }
    case LESS_MSG_TWEAK_ENTITY: {
        char reason[200];
        uint32_t tid = 0;
        less_imap_get(&p->out_wire, m->u.tweak_entity.entity_id, &tid);
        const struct xg_entity *e = xg_table_get(la->a->table, tid);
        snprintf(reason, sizeof reason,
                 "tweak of entity %" PRId64 " ('%s') property %" PRId64
                 " refused: relayed by gateway '%s', not owned by it",
                 m->u.tweak_entity.entity_id, e ? xg_entity_name(e) : "?",
                 m->u.tweak_entity.property_id, la->gw_id);
        la->refused_403++;
        less_send_result(p, -1, 403, reason);
        XG_INFO_PEER(&la->lim_request, la->a->name, "peer %s: %s", p->addr, reason);
        return 0;
    }
    case LESS_MSG_METHOD_RESULT:
    case LESS_MSG_INTERACTION:
    default:
        return 0;
    }
}

/* P15: a peer must only send the properties we subscribed to. For pose types that is all of
 * them; for mapped types the mapped ones. */
static int check_subscribed(struct less_session *p, const struct less_msg *m, uint64_t idx,
                            struct xg_error *err)
{
    const struct less_comp_values_list *cl;
    int64_t typeid;
    if (m->code == LESS_MSG_INTRODUCE_ENTITY) {
        typeid = m->u.introduce_entity.typeid;
        cl = &m->u.introduce_entity.components;
    } else if (m->code == LESS_MSG_UPDATE_ENTITY) {
        if (less_cb_rx_sender_entity(p, m->u.update_entity.entity_id, &typeid)) return 0;
        cl = &m->u.update_entity.components;
    } else {
        return 0;
    }
    const struct less_schema *s = less_peer_type_schema(p, typeid);
    if (!s || s == less_pose_schema()) return 0;
    const struct less_mapping *map = less_mapping_of(s);
    for (size_t c = 0; c < cl->count; c++) {
        int64_t cid = cl->items[c].component_id;
        for (size_t i = 0; i < cl->items[c].props.count; i++) {
            int64_t pid = cl->items[c].props.items[i].property_id;
            if (cid >= 0 && (size_t)cid < s->n_components && pid >= 0 &&
                (size_t)pid < s->components[cid].n_props && map->map[cid][pid].field != LESS_F_NONE)
                continue;
            return xg_error_set(err, -EPROTO,
                                "LESS message %" PRIu64 ": %s: property %" PRId64
                                " of component %" PRId64 " of %s was not subscribed to (P15)",
                                idx, less_msg_name(m->code), pid, cid, s->uri);
        }
    }
    return 0;
}

/* Dry pass: note introductions so that later messages of the same packet decode. */
static void note_dry(struct less_session *p, const struct less_msg *m)
{
    if (m->code == LESS_MSG_INTRODUCE_TYPE && p->n_pend_types < 64) {
        p->pend_types[p->n_pend_types] = m->u.introduce_type.typeid;
        const struct less_schema *sc = less_schema_for_uri(p->env, m->u.introduce_type.uri);
        if (sc && sc != less_pose_schema() && !less_mapping_pose_compatible(less_mapping_of(sc)))
            sc = NULL;
        p->pend_schemas[p->n_pend_types++] = sc;
    } else if (m->code == LESS_MSG_INTRODUCE_ENTITY) {
        if (p->n_pend_ent == p->cap_pend_ent) {
            size_t nc = p->cap_pend_ent ? p->cap_pend_ent * 2 : 32;
            int64_t *nt = realloc(p->pend_typeids, nc * sizeof *nt);
            if (!nt) return; /* the message after it then fails to decode: session error */
            p->pend_typeids = nt;
            p->cap_pend_ent = nc;
        }
        p->pend_typeids[p->n_pend_ent] = m->u.introduce_entity.typeid;
        less_imap_put(&p->pend_ents, m->u.introduce_entity.entity_id, (uint32_t)p->n_pend_ent++);
    } else if (m->code == LESS_MSG_REMOVE_ENTITY) {
        less_imap_del(&p->pend_ents, m->u.remove_entity.entity_id);
    }
}

/* Decode every message of f (checking the packet is well formed), then apply them. Returns 0
 * or a negative errno with err naming message, field and value. */
int less_process_packet(struct less_session *p, const struct less_frame *f, int64_t now, bool late,
                        struct xg_error *err)
{
    struct less_env *la = p->env;
    struct less_context c;
    less_rx_ctx(p, &c);
    struct less_arena arena;
    struct less_msg m;
    int rc;
    /* pass 1: decode only */
    p->dry = true;
    p->n_pend_types = 0;
    struct less_msg_iter it;
    less_msg_iter_init(&it, f);
    uint64_t idx = 0;
    while (1) {
        less_arena_init(&arena, la->arena_buf, LESS_ARENA_SIZE);
        rc = less_msg_next(&it, &c, &arena, &m, err);
        if (rc <= 0) break;
        if (idx == 0 && !p->streaming && la->mode != LESS_MODE_UDP &&
            m.code != LESS_MSG_CONNECTION_CONTROL) {
            rc = xg_error_set(err, -EPROTO,
                              "LESS message 0: %s before connection-control (P5: it comes first)",
                              less_msg_name(m.code));
            break;
        }
        if ((rc = check_subscribed(p, &m, idx, err))) break;
        note_dry(p, &m);
        idx++;
    }
    p->dry = false;
    p->n_pend_ent = 0;
    if (p->pend_ents.n) less_imap_free(&p->pend_ents);
    if (rc < 0) return rc;
    /* pass 2: apply */
    less_msg_iter_init(&it, f);
    while (1) {
        less_arena_init(&arena, la->arena_buf, LESS_ARENA_SIZE);
        rc = less_msg_next(&it, &c, &arena, &m, err);
        if (rc <= 0) break;
        /* a late UDP packet (LESS_RX_LATE, P12): its property sets are older than the newest we
         * applied, but the introductions and removals it carries are in order */
        if (late &&
            (m.code == LESS_MSG_UPDATE_ENTITY ||
             (m.code == LESS_MSG_INTRODUCE_ENTITY && in_find(p, m.u.introduce_entity.entity_id))))
            continue;
        rc = apply_msg(p, &m, f->timestamp, now, err);
        if (rc) {
            xg_error_prefix(err, "LESS %s: ", less_msg_name(m.code));
            return rc;
        }
    }
    return rc;
}

int less_session_rx_tcp(struct less_session *p, const struct less_frame *f, int64_t now,
                        struct xg_error *err)
{
    if (p->any_rx && f->timestamp <= p->last_rx_ts)
        return xg_error_set(err, -EPROTO,
                            "LESS header: timestamp %" PRId64
                            " does not increase (previous %" PRId64 ", P4)",
                            f->timestamp, p->last_rx_ts);
    p->any_rx = true;
    p->last_rx_ts = f->timestamp;
    return less_process_packet(p, f, now, false, err);
}
