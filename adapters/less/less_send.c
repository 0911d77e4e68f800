/* less adapter, sending side of a session (less_session.h), free of sockets: the codec contexts of
 * both directions, the queue of encoded messages, our connection-control and pose type, the
 * entities we introduce (introduce / update / remove, renumbered per peer), method results, TCP
 * packets of the queue; and the session's life cycle. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
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
#include "mappings/frame.h"

static const char *adapter_name_of(const struct xg_adapter *a, int index)
{
    const char *n = xg_table_adapter_name(a->table, index);
    return n[0] ? n : "?";
}

/* ---- life cycle ---- */

void less_session_init(struct less_session *s, struct less_env *la, const char *addr,
                       const struct less_session_events *ev)
{
    memset(s, 0, sizeof *s);
    s->env = la;
    if (ev) s->ev = *ev;
    snprintf(s->addr, sizeof s->addr, "%s", addr);
    s->quantum_ns = 1000;
    s->next_wire_id = 1;
    less_ack_init(&s->rxwin, 0);
    less_rx_times_init(&s->rxts);
}

void less_session_free(struct less_session *s)
{
    /* the peer's entities go away with it */
    for (size_t i = 0; i < s->n_in; i++)
        if (s->in[i].table_id) xg_table_remove(s->env->a->table, s->in[i].table_id);
    for (int i = 0; i < 256; i++) {
        free(s->sent[i].msgs);
        free(s->sent[i].refs);
    }
    free(s->midx);
    free(s->ptypes);
    free(s->in);
    free(s->out);
    free(s->msgbuf);
    less_imap_free(&s->in_map);
    less_imap_free(&s->out_map);
    less_imap_free(&s->out_wire);
    less_imap_free(&s->pend_ents);
    free(s->pend_typeids);
    memset(s, 0, sizeof *s);
}

bool less_session_ready(const struct less_session *s)
{
    return s->streaming && s->subscribed && !s->closing;
}

/* ---- context callbacks ---- */

const struct less_schema *less_peer_type_schema(struct less_session *p, int64_t typeid)
{
    for (size_t i = 0; i < p->n_ptypes; i++)
        if (p->ptypes[i].typeid == typeid) return p->ptypes[i].schema;
    if (p->dry)
        for (size_t i = 0; i < p->n_pend_types; i++)
            if (p->pend_types[i] == typeid) return p->pend_schemas[i];
    return NULL;
}

static const struct less_schema *cb_rx_sender_type(void *user, int64_t typeid)
{
    return less_peer_type_schema(user, typeid);
}

static const struct less_schema *cb_our_type(void *user, int64_t typeid)
{
    (void)user;
    return typeid == LESS_OUR_TYPEID ? less_pose_schema() : NULL;
}

int less_cb_rx_sender_entity(void *user, int64_t id, int64_t *typeid)
{
    struct less_session *p = user;
    uint32_t idx;
    if (less_imap_get(&p->in_map, id, &idx)) {
        *typeid = p->in[idx].typeid;
        return 0;
    }
    if (p->dry && less_imap_get(&p->pend_ents, id, &idx)) {
        *typeid = p->pend_typeids[idx];
        return 0;
    }
    return -ENOENT;
}

static int cb_our_entity(void *user, int64_t id, int64_t *typeid)
{
    struct less_session *p = user;
    if (!less_imap_get(&p->out_wire, id, NULL)) return -ENOENT;
    *typeid = LESS_OUR_TYPEID;
    return 0;
}

static int cb_tx_receiver_entity(void *user, int64_t id, int64_t *typeid)
{
    struct less_session *p = user;
    p->dry = false;
    return less_cb_rx_sender_entity(user, id, typeid);
}

void less_rx_ctx(struct less_session *p, struct less_context *c)
{
    *c = (struct less_context){.sender_type = cb_rx_sender_type,
                               .receiver_type = cb_our_type,
                               .sender_entity_type = less_cb_rx_sender_entity,
                               .receiver_entity_type = cb_our_entity,
                               .user = p};
}

static void tx_ctx(struct less_session *p, struct less_context *c)
{
    *c = (struct less_context){.sender_type = cb_our_type,
                               .receiver_type = cb_rx_sender_type,
                               .sender_entity_type = cb_our_entity,
                               .receiver_entity_type = cb_tx_receiver_entity,
                               .user = p};
}

/* ---- sending ---- */

int64_t less_next_ts(struct less_session *p, int64_t now)
{
    int64_t ts = xg_ns_to_us(now);
    if (ts <= p->last_tx_ts) ts = p->last_tx_ts + 1;
    p->last_tx_ts = ts;
    return ts;
}

/* Append one message to the peer's pending packet. */
int less_queue_msg(struct less_session *p, const struct less_msg *m)
{
    struct less_context c;
    tx_ctx(p, &c);
    struct xg_error err = {0};
    for (;;) {
        struct xg_writer w;
        xg_writer_init(&w, p->msgbuf, p->msg_cap);
        w.len = p->msg_len;
        int rc = p->msgbuf ? less_encode_msg(&w, &c, m, &err) : -EMSGSIZE;
        if (rc == 0) {
            if (p->msg_count >= p->midx_cap) {
                size_t nc = p->midx_cap ? p->midx_cap * 2 : 64;
                struct less_msg_ref *nr = realloc(p->midx, nc * sizeof *nr);
                if (!nr) return -ENOMEM;
                p->midx = nr;
                p->midx_cap = nc;
            }
            int64_t wid = m->code == LESS_MSG_INTRODUCE_ENTITY ? m->u.introduce_entity.entity_id
                          : m->code == LESS_MSG_UPDATE_ENTITY  ? m->u.update_entity.entity_id
                          : m->code == LESS_MSG_REMOVE_ENTITY  ? m->u.remove_entity.entity_id
                                                               : -1;
            p->midx[p->msg_count] = (struct less_msg_ref){(uint8_t)m->code, (uint32_t)p->msg_len,
                                                          (uint32_t)(w.len - p->msg_len), wid};
            p->msg_len = w.len;
            p->msg_count++;
            return 0;
        }
        if (rc != -EMSGSIZE) {
            XG_WARN_PEER(&p->env->lim_send, p->env->a->name, "peer %s: cannot encode %s: %s",
                         p->addr, less_msg_name(m->code), err.msg);
            return rc;
        }
        size_t ncap = p->msg_cap ? p->msg_cap * 2 : 4096;
        if (ncap > (size_t)64 << 20) return -EMSGSIZE;
        uint8_t *nb = realloc(p->msgbuf, ncap);
        if (!nb) return -ENOMEM;
        p->msgbuf = nb;
        p->msg_cap = ncap;
    }
}

/* TCP: the queued messages as one signed packet. */
int less_session_tcp_packet(struct less_session *p, int64_t now, const uint8_t **out, size_t *len)
{
    struct less_env *la = p->env;
    if (!p->msg_count) return 0;
    size_t need = p->msg_len + 32;
    if (la->pktbuf_cap < need) {
        uint8_t *nb = realloc(la->pktbuf, need);
        if (!nb) return -ENOMEM;
        la->pktbuf = nb;
        la->pktbuf_cap = need;
    }
    struct xg_writer w;
    xg_writer_init(&w, la->pktbuf, la->pktbuf_cap);
    struct xg_error err = {0};
    int rc = less_tcp_encode(&w, &la->key, less_next_ts(p, now), p->msg_count, p->msgbuf,
                             p->msg_len, &err);
    p->msg_len = 0;
    p->msg_count = 0;
    if (rc) {
        XG_WARN_PEER(&la->lim_send, la->a->name, "peer %s: %s", p->addr, err.msg);
        return rc;
    }
    *out = w.buf;
    *len = w.len;
    return 1;
}

void less_send_connection_control(struct less_session *p)
{
    struct less_env *la = p->env;
    struct less_prop_value pv[LESS_CONN_N_PROPS];
    const struct less_component *cc = &less_connection_schema()->components[0];
    size_t n = 0;
#define CC_STR(id, s)                                                                              \
    pv[n] = (struct less_prop_value){                                                              \
        id, {&cc->props[id].type, {.str = {.p = (s), .len = strlen(s)}}}};                         \
    n++
#define CC_INT(id, v)                                                                              \
    pv[n] = (struct less_prop_value){id, {&cc->props[id].type, {.i = (v)}}};                       \
    n++
    CC_STR(LESS_CONN_SCHEMA, la->schema_str);
    CC_INT(LESS_CONN_FIRST_SEQ, 0);
    CC_INT(LESS_CONN_QUANTUM_NS, 1000);
    CC_STR(LESS_CONN_KEY_ID, la->key_id);
    CC_INT(LESS_CONN_RATE_HZ, (int64_t)llround(la->a->rate_hz));
#undef CC_STR
#undef CC_INT
    struct less_msg m = {.code = LESS_MSG_CONNECTION_CONTROL};
    m.u.connection_control.props = (struct less_prop_list){pv, n};
    less_queue_msg(p, &m);
    struct less_msg t = {.code = LESS_MSG_INTRODUCE_TYPE};
    t.u.introduce_type.typeid = LESS_OUR_TYPEID;
    t.u.introduce_type.uri = LESS_POSE_URI;
    t.u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    less_queue_msg(p, &t);
}

enum xg_kind less_kind_from_wire(int64_t k)
{
    switch (k) {
    case LESS_KIND_HEAD:
        return XG_KIND_HEAD;
    case LESS_KIND_LEFT_HAND:
        return XG_KIND_LEFT_HAND;
    case LESS_KIND_RIGHT_HAND:
        return XG_KIND_RIGHT_HAND;
    case LESS_KIND_CONTROLLER:
        return XG_KIND_CONTROLLER;
    case LESS_KIND_RIGID_BODY:
        return XG_KIND_RIGID_BODY;
    default:
        return XG_KIND_OBJECT;
    }
}

static bool is_federated(const struct xg_entity *e)
{
    return xg_entity_origin_gateway(e)[0] != '\0';
}

/* Would sending e to p echo it back toward the gateway it came from? */
bool less_echo_toward(const struct less_session *p, const struct xg_entity *e)
{
    return is_federated(e) && p->peer_gw[0] && strcmp(xg_entity_origin_gateway(e), p->peer_gw) == 0;
}

struct less_out_ent *less_out_find(struct less_session *p, uint32_t table_id)
{
    uint32_t idx;
    return less_imap_get(&p->out_map, table_id, &idx) ? &p->out[idx] : NULL;
}

static struct less_out_ent *out_add(struct less_session *p, uint32_t table_id)
{
    if (p->n_out == p->cap_out) {
        size_t nc = p->cap_out ? p->cap_out * 2 : 32;
        struct less_out_ent *no = realloc(p->out, nc * sizeof *no);
        if (!no) return NULL;
        p->out = no;
        p->cap_out = nc;
    }
    struct less_out_ent *o = &p->out[p->n_out];
    *o = (struct less_out_ent){
        .table_id = table_id, .wire_id = p->next_wire_id++, .active_sent = -1, .intro_seq = -1};
    if (less_imap_put(&p->out_map, table_id, (uint32_t)p->n_out) ||
        less_imap_put(&p->out_wire, o->wire_id, table_id))
        return NULL;
    p->n_out++;
    return o;
}

void less_out_del(struct less_session *p, uint32_t table_id)
{
    uint32_t idx;
    if (!less_imap_get(&p->out_map, table_id, &idx)) return;
    less_imap_del(&p->out_map, table_id);
    less_imap_del(&p->out_wire, p->out[idx].wire_id);
    size_t last = p->n_out - 1;
    if (idx != last) {
        p->out[idx] = p->out[last];
        less_imap_put(&p->out_map, p->out[idx].table_id, idx);
    }
    p->n_out--;
}

/* Encode an introduce (full) or update (changing properties) of e for peer p. */
void less_send_entity(struct less_session *p, const struct xg_entity *e,
                      const struct xg_pose *pose_in, bool introduce)
{
    struct less_env *la = p->env;
    struct xg_pose pose = *pose_in;
    xg_frame_pose_out(la->a->frame, &pose);
    struct less_out_ent *o = less_out_find(p, xg_entity_id(e));
    if (!o) {
        if (!(o = out_add(p, xg_entity_id(e)))) return;
        introduce = true;
    }
    if (!introduce && p->skip) { /* slow peer: the newest state follows once it drains */
        la->updates_skipped++;
        la->updates_coalesced += o->pending;
        o->pending = p->any_pending = true;
        return;
    }
    o->pending = false;
    char origin[160];
    const char *name = xg_entity_name(e);
    origin[0] = '\0'; /* only an introduce carries it: no formatting per update */
    if (is_federated(e)) {
        /* keep the first gateway's "<gw>/<adapter>"; the adapter is the first name component */
        name = xg_entity_source(e);
        if (introduce) {
            const char *slash = strchr(xg_entity_source(e), '/');
            int alen =
                slash ? (int)(slash - xg_entity_source(e)) : (int)strlen(xg_entity_source(e));
            snprintf(origin, sizeof origin, "%s/%.*s", xg_entity_origin_gateway(e), alen,
                     xg_entity_source(e));
        }
    } else if (introduce) {
        snprintf(origin, sizeof origin, "%s/%s", la->gw_id,
                 adapter_name_of(la->a, xg_entity_origin(e)));
    }
    struct less_pose lp = {0};
    lp.name = name;
    lp.name_len = strlen(name);
    lp.kind = less_kind_to_wire(xg_entity_kind(e));
    lp.position = pose.position;
    lp.orientation = pose.orientation;
    lp.velocity = pose.velocity;
    lp.angular_velocity = pose.angular_velocity;
    lp.active = pose.active && pose.quality != XG_QUALITY_STALE ? 1 : 0;
    lp.origin = origin;
    lp.origin_len = strlen(origin);
    lp.sample_time = xg_ns_to_us(pose.t_ns);
    lp.present = LESS_POSE_BIT(LESS_POSE_POSITION) | LESS_POSE_BIT(LESS_POSE_ORIENTATION) |
                 LESS_POSE_BIT(LESS_POSE_SAMPLE_TIME);
    if (pose.has_velocity) lp.present |= LESS_POSE_BIT(LESS_POSE_VELOCITY);
    if (pose.has_angular_velocity) lp.present |= LESS_POSE_BIT(LESS_POSE_ANGULAR_VELOCITY);
    if (introduce || o->active_sent != lp.active) lp.present |= LESS_POSE_BIT(LESS_POSE_ACTIVE);
    if (introduce)
        lp.present |= LESS_POSE_BIT(LESS_POSE_NAME) | LESS_POSE_BIT(LESS_POSE_KIND) |
                      LESS_POSE_BIT(LESS_POSE_ORIGIN);
    struct less_pose_props props;
    less_pose_to_props(&lp, p->sub_mask, &props);
    struct less_comp_values cv = {0, props.list};
    struct less_msg m;
    memset(&m, 0, sizeof m);
    if (introduce) {
        m.code = LESS_MSG_INTRODUCE_ENTITY;
        m.u.introduce_entity.typeid = LESS_OUR_TYPEID;
        m.u.introduce_entity.entity_id = o->wire_id;
        m.u.introduce_entity.components = (struct less_comp_values_list){&cv, 1};
        o->intro_seq = -1; /* set when the datagram goes out */
        o->introduce_acked = false;
        la->entities_introduced++;
    } else {
        if (la->mode == LESS_MODE_UDP && !o->introduce_acked) return; /* P15: wait for the ack */
        m.code = LESS_MSG_UPDATE_ENTITY;
        m.u.update_entity.entity_id = o->wire_id;
        m.u.update_entity.components = (struct less_comp_values_list){&cv, 1};
    }
    if (less_queue_msg(p, &m) == 0) {
        o->active_sent = (int8_t)lp.active;
        la->a->samples_out++;
    }
    /* keep TCP packets bounded (UDP datagrams are cut at the MTU) */
    if (la->mode != LESS_MODE_UDP && p->msg_len > 60000 && p->ev.flush) p->ev.flush(p->ev.user);
}

void less_send_result(struct less_session *p, int64_t request_id, int64_t status,
                      const char *reason)
{
    struct less_msg m = {.code = LESS_MSG_METHOD_RESULT};
    m.u.method_result.request_id = request_id;
    m.u.method_result.status = status;
    m.u.method_result.ret.type = &less_type_string;
    m.u.method_result.ret.u.str.p = reason;
    m.u.method_result.ret.u.str.len = strlen(reason);
    less_queue_msg(p, &m);
}
