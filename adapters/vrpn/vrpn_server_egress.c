/* `vrpn-server` egress (vrpn_server_priv.h; behaviour at the top of vrpn_server.c): trackers and
 * sensor numbers of entities, buttons/analogs served per tracker or control device, and each
 * drain's reports to every client (Pos_Quat/Velocity over UDP or TCP, skipping and coalescing for
 * clients above max_output_bytes). */

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/transport.h"
#include "adapters/vrpn/vrpn_callback.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "adapters/vrpn/vrpn_names.h"
#include "adapters/vrpn/vrpn_sensor_map.h"
#include "adapters/vrpn/vrpn_server_priv.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "mappings/frame.h"

/* ---- trackers and sensors ---- */

static int tracker_find_or_add(struct xg_adapter *a, const char *name)
{
    struct vrpn_server *s = a->priv;
    for (int t = 0; t < s->n_trackers; t++)
        if (!strcmp(s->trackers[t].name, name)) return t;
    if (s->n_trackers >= MAX_TRACKERS || !name[0] || strlen(name) >= VRPN_CNAME_MAX) return -EINVAL;
    struct tracker *nt = realloc(s->trackers, (size_t)(s->n_trackers + 1) * sizeof *nt);
    if (!nt) return -ENOMEM;
    s->trackers = nt;
    int t = s->n_trackers++;
    memset(&nt[t], 0, sizeof nt[t]);
    nt[t].extras_slot = -1;
    memcpy(nt[t].name, name, strlen(name) + 1); /* checked: < VRPN_CNAME_MAX */
    /* reserve the fixed sensors of rules naming this tracker literally */
    for (size_t i = 0; i < s->n_rules; i++)
        if (s->rules[i].sensor >= 0 && s->rules[i].tracker && !strcmp(s->rules[i].tracker, name))
            vrpn_bitset_set(&nt[t].used, s->rules[i].sensor);
    /* describe it to every streaming connection (§6.2: descriptions may come late) */
    struct vrpn_header h = now_header(xg_clock_mono_ns());
    struct conn *next;
    for (struct conn *c = s->conns; c; c = next) {
        next = c->next;
        uint8_t b[VRPN_HEADER_SIZE + 4 + VRPN_CNAME_MAX + 8];
        struct xg_writer w;
        xg_writer_init(&w, b, sizeof b);
        vrpn_srv_conn_tracker_sender(
            a, c, t, vrpn_session_state(&c->sess) == VRPN_SESS_STREAMING ? &w : NULL, &h);
        if (w.len) vrpn_srv_conn_write(a, c, b, w.len);
    }
    XG_INFO(a->name, "serving tracker '%s'", name);
    return t;
}

/* The name slot cached for entity e in this sink's per-entity slot of the table (slot + 1;
 * 0 = none yet), or -1. */
static int eslot_get(struct xg_adapter *a, const struct xg_entity *e)
{
    const uint64_t *v = xg_table_sink_slot(a->table, a->index, e);
    return v && *v ? (int)(*v - 1) : -1;
}

static void eslot_set(struct xg_adapter *a, const struct xg_entity *e, int slot)
{
    uint64_t *v = xg_table_sink_slot(a->table, a->index, e);
    if (v) *v = (uint64_t)slot + 1; /* ENOMEM: looked up by name again next time */
}

/* A departed name was forgotten (vrpn_names_forget_fn): its sensor number is free again (unless
 * a rule reserves it), and its tracker no longer serves that name's buttons/analogs. */
static void name_forgotten(void *user, int i, int t, int sensor)
{
    struct vrpn_server *s = user;
    struct tracker *tr = &s->trackers[t];
    bool reserved = false;
    for (size_t k = 0; k < s->n_rules && !reserved; k++)
        reserved = s->rules[k].sensor == sensor && s->rules[k].tracker &&
                   !strcmp(s->rules[k].tracker, tr->name);
    if (!reserved) vrpn_bitset_clear(&tr->used, sensor);
    for (int k = 0; k < s->n_trackers; k++) /* its tracker, or the device named after it */
        if (s->trackers[k].extras_slot == i) s->trackers[k].extras_slot = -1;
}

/* The slot of entity e, creating it (tracker + sensor) if its name is new. -1 if unmappable. */
static int slot_of(struct xg_adapter *a, const struct xg_entity *e)
{
    struct vrpn_server *s = a->priv;
    int i = eslot_get(a, e);
    if (i >= 0) return i;
    i = vrpn_names_find(&s->names, xg_entity_name(e));
    if (i < 0) {
        const struct rule *r = NULL;
        for (size_t k = 0; k < s->n_rules && !r; k++)
            if (fnmatch(s->rules[k].match, xg_entity_name(e), 0) == 0) r = &s->rules[k];
        char tname[256];
        vrpn_sensor_map_expand(r && r->tracker ? r->tracker : s->tracker_name,
                               xg_table_adapter_name(a->table, xg_entity_origin(e)), e, tname,
                               sizeof tname);
        int t = tracker_find_or_add(a, tname);
        if (t < 0) {
            if (!s->unmapped++)
                XG_WARN(a->name,
                        "entity %s: tracker name '%s' is empty, too long (max %d) or "
                        "one too many (max %d): not served",
                        xg_entity_name(e), tname, VRPN_CNAME_MAX - 1, MAX_TRACKERS);
            return -1;
        }
        struct tracker *tr = &s->trackers[t];
        bool pinned = r && r->sensor >= 0;
        int64_t sensor = -1, want = pinned ? r->sensor : xg_entity_source_sensor(e);
        int holder = -1;
        if (xg_entity_controls_only(e) && !pinned) /* no pose at the source: controls, no sensor */
            goto add;
        if (want >= 0) { /* a rule's fixed number, else the source's own (a VRPN relay) */
            holder = vrpn_names_holder(&s->names, t, (int)want);
            if (holder >= 0 && s->names.slots[holder].departed && !pinned) {
                /* live entities win over numbers remembered for departed names */
                vrpn_names_forget(&s->names, holder, name_forgotten, s);
                holder = -1;
            }
            if (holder < 0 && (pinned || !vrpn_bitset_get(&tr->used, want))) sensor = want;
        }
        if (sensor < 0)
            for (sensor = 0; vrpn_bitset_get(&tr->used, sensor); sensor++) {}
        if (want >= 0 && sensor != want)
            XG_WARN_PEER(&s->lim_conflict, a->name,
                         "entity %s: sensor %" PRId64 " of tracker '%s' (%s) is %s%s%s: serving it "
                         "as sensor %" PRId64,
                         xg_entity_name(e), want, tname,
                         pinned ? "its trackers: rule" : "its source's number",
                         holder >= 0 ? "held by '" : "reserved by a trackers: rule",
                         holder >= 0 ? s->names.slots[holder].name : "", holder >= 0 ? "'" : "",
                         sensor);
        if (sensor > INT32_MAX || vrpn_bitset_set(&tr->used, sensor) < 0) return -1;
    add:
        i = vrpn_names_add(&s->names, xg_entity_name(e), t, (int)sensor, xg_entity_id(e));
        if (i < 0) {
            vrpn_bitset_clear(&tr->used, sensor);
            return -1;
        }
        XG_DEBUG(a->name, "entity %s -> tracker '%s' sensor %d", xg_entity_name(e), tname,
                 (int)sensor);
    }
    vrpn_names_live(&s->names, i,
                    xg_entity_id(e)); /* a departed name that is back keeps its number */
    eslot_set(a, e, i);
    return i;
}

static int collect_new(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct xg_adapter *a = user;
    struct vrpn_server *s = a->priv;
    (void)pose;
    if (eslot_get(a, e) >= 0) return 0;
    if (s->n_new == s->cap_new) {
        size_t nc = s->cap_new ? s->cap_new * 2 : 64;
        const struct xg_entity **v = realloc(s->newv, nc * sizeof *v);
        if (!v) return 1;
        s->newv = v;
        s->cap_new = nc;
    }
    s->newv[s->n_new++] = e;
    return 0;
}

/* Number the entities that appeared since the last time: those carrying their source's sensor
 * number first, then the others, each group in natural name order (vrpn_sensor_map_order). */
static void assign_new(struct xg_adapter *a, int64_t now)
{
    struct vrpn_server *s = a->priv;
    s->members_dirty = false;
    s->n_new = 0;
    xg_table_foreach(a->table, a->index, now, collect_new, a);
    if (!s->n_new) return;
    qsort(s->newv, s->n_new, sizeof *s->newv, vrpn_sensor_map_order);
    for (size_t k = 0; k < s->n_new; k++)
        slot_of(a, s->newv[k]); /* no entity is removed meanwhile: the pointers hold */
    s->n_new = 0;
}

/* ---- egress ---- */

static int x_add(struct reports *r, int tracker, int slot, int type, const struct vrpn_body *b)
{
    size_t need = 8 + 8 * VRPN_MAX_ANALOG + 4 * VRPN_MAX_BUTTONS;
    if (r->xbcap - r->xblen < need) {
        size_t nc = (r->xbcap ? r->xbcap * 2 : 8192) + need;
        uint8_t *nb = realloc(r->xb, nc);
        if (!nb) return -ENOMEM;
        r->xb = nb;
        r->xbcap = nc;
    }
    if (r->xn == r->xcap) {
        size_t nc = r->xcap ? r->xcap * 2 : 32;
        struct xmsg *nx = realloc(r->x, nc * sizeof *nx);
        if (!nx) return -ENOMEM;
        r->x = nx;
        r->xcap = nc;
    }
    struct xg_writer w;
    xg_writer_init(&w, r->xb + r->xblen, r->xbcap - r->xblen);
    if (vrpn_body_encode(&w, b, NULL) < 0) return -EINVAL;
    r->x[r->xn++] = (struct xmsg){
        .tracker = tracker, .type = type, .slot = slot, .off = r->xblen, .len = w.len};
    r->xblen += w.len;
    return 0;
}

static void states_body(struct vrpn_body *b, int n, const uint8_t *st)
{
    b->kind = VRPN_BODY_BUTTON_STATES;
    b->u.states.count = n;
    for (int k = 0; k < n; k++)
        b->u.states.states[k] = st[k] ? 1 : 0;
}

/* The tracker (VRPN device name) that serves the buttons and analogs of entity e (name i): its
 * own tracker's name unless another live entity's controls are served there, else a device named
 * after the entity (described to clients like a tracker). Decided once per name and kept while the
 * name is remembered. -1 when there is none (one warning says why). */
static int extras_tracker(struct xg_adapter *a, const struct xg_entity *e, int i)
{
    struct vrpn_server *s = a->priv;
    struct vrpn_name *nm = &s->names.slots[i];
    if (nm->ctl >= 0 && s->trackers[nm->ctl].extras_slot == i) return nm->ctl;
    int t = nm->tracker, cur = s->trackers[t].extras_slot;
    if (cur >= 0 && cur != i && s->names.slots[cur].id != 0) {
        int own = -1, n = s->n_trackers;
        for (int k = 0; k < n && own < 0; k++)
            if (!strcmp(s->trackers[k].name, xg_entity_name(e))) own = k;
        if (own < 0 && s->n_ctl_devices < MAX_CTL_DEVICES) {
            own =
                tracker_find_or_add(a, xg_entity_name(e)); /* may move s->trackers, not s->names */
            s->n_ctl_devices += own >= 0;
        }
        int other = own >= 0 ? s->trackers[own].extras_slot : -1;
        if (own < 0 || (other >= 0 && other != i && s->names.slots[other].id != 0)) {
            if (nm->ctl != -2)
                XG_WARN_PEER(&s->lim_no_ctl, a->name,
                             "entity %s: buttons/analogs not served: tracker '%s' serves those of "
                             "'%s', and a VRPN device named '%s' %s",
                             xg_entity_name(e), s->trackers[t].name, s->names.slots[cur].name,
                             xg_entity_name(e),
                             own >= 0 ? "serves another entity's"
                             : s->n_ctl_devices >= MAX_CTL_DEVICES
                                 ? "would be one too many (at most 500 such devices)"
                                 : "is not possible (1..99 bytes, at most 1000 names)");
            nm->ctl = -2;
            return -1;
        }
        t = own;
    }
    if (nm->ctl != t)
        XG_INFO_PEER(&s->lim_ctl, a->name, "entity %s: buttons/analogs served as VRPN device '%s'",
                     xg_entity_name(e), s->trackers[t].name);
    s->trackers[t].extras_slot = i;
    nm->ctl = t;
    return t;
}

/* Buttons and analogs of entity e (name i), served under the device name extras_tracker() picks:
 * Button Change for each button that changed (dirty pass), Button States (full refresh), Analog
 * Channel (both). */
static void add_extras(struct reports *r, struct xg_adapter *a, const struct xg_entity *e, int i,
                       bool full)
{
    struct vrpn_server *s = a->priv;
    if (xg_entity_buttons(e, NULL) <= 0 && xg_entity_analogs(e, NULL) <= 0) return;
    int t = extras_tracker(a, e, i);
    if (t < 0) return;
    struct tracker *tr = &s->trackers[t];
    static struct vrpn_body b; /* ~3 KiB; single-threaded reactor */
    const uint8_t *buttons;
    const double *analogs;
    int nb = xg_entity_buttons(e, &buttons), na = xg_entity_analogs(e, &analogs);
    if (nb > VRPN_MAX_BUTTONS) nb = VRPN_MAX_BUTTONS;
    if (na > VRPN_MAX_ANALOG) na = VRPN_MAX_ANALOG;
    if (nb > 0 && full) {
        states_body(&b, nb, buttons);
        x_add(r, t, i, T_BUTTON_STATES, &b);
    } else if (nb > 0) {
        for (int k = 0; k < nb; k++) {
            uint8_t st = buttons[k] ? 1 : 0;
            if (k < tr->n_btn && tr->btn[k] == st) continue;
            tr->btn[k] = st;
            b.kind = VRPN_BODY_BUTTON_CHANGE;
            b.u.button.button = k;
            b.u.button.state = st;
            x_add(r, t, i, T_BUTTON_CHANGE, &b);
        }
        if (nb > tr->n_btn) tr->n_btn = nb;
    }
    if (na > 0) {
        b.kind = VRPN_BODY_ANALOG;
        b.u.analog.count = na;
        for (int k = 0; k < na; k++)
            b.u.analog.channels[k] = analogs[k];
        x_add(r, t, i, T_ANALOG, &b);
    }
}

static int add_report(struct reports *r, struct xg_adapter *a, const struct xg_entity *e,
                      const struct xg_pose *pose_in)
{
    struct vrpn_server *s = a->priv;
    int i = slot_of(a, e);
    if (i < 0) return 0;
    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 64;
        struct report *v = realloc(r->v, nc * sizeof *v);
        if (!v) return 1;
        r->v = v;
        r->cap = nc;
    }
    struct report *rep = &r->v[r->n];
    rep->tracker = s->names.slots[i].tracker;
    rep->sensor = s->names.slots[i].sensor;
    rep->slot = i;
    if (rep->sensor < 0) { /* controls only (no pose at the source): no tracker report */
        add_extras(r, a, e, i, r == &s->full);
        return 0;
    }
    struct xg_pose p = *pose_in;
    xg_frame_pose_out(a->frame, &p);
    struct vrpn_body b = {.kind = VRPN_BODY_POS_QUAT};
    b.u.pos_quat.sensor = rep->sensor;
    b.u.pos_quat.pos = p.position;
    b.u.pos_quat.quat = xg_quat_normalize(p.orientation);
    struct xg_writer w;
    xg_writer_init(&w, rep->pq, sizeof rep->pq);
    if (vrpn_body_encode(&w, &b, NULL) < 0 || w.len != POS_QUAT_LEN) return 0;
    /* Velocity: linear velocity and the rotation increment exp(ω·dt) over dt (world frame:
     * q(t+dt) = inc ⊗ q(t)); dt = 0.1 s, shortened so that the increment stays below π/2 */
    double wn = xg_vec3_norm(p.angular_velocity);
    double dt = VEL_QUAT_DT;
    if (wn * dt > M_PI / 2) dt = (M_PI / 2) / wn;
    b.kind = VRPN_BODY_VELOCITY;
    b.u.rate.sensor = rep->sensor;
    b.u.rate.vec = p.velocity;
    b.u.rate.quat = xg_quat_exp(xg_vec3_scale(p.angular_velocity, dt));
    b.u.rate.quat_dt = dt;
    xg_writer_init(&w, rep->vel, sizeof rep->vel);
    if (vrpn_body_encode(&w, &b, NULL) < 0 || w.len != VELOCITY_LEN) return 0;
    r->n++;
    a->samples_out++;
    add_extras(r, a, e, i, r == &s->full);
    return 0;
}

static int visit_dirty(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct xg_adapter *a = user;
    struct vrpn_server *s = a->priv;
    return add_report(&s->dirty, a, e, pose);
}

static int visit_none(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    (void)user;
    (void)e;
    (void)pose;
    return 0;
}

static int visit_full(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct xg_adapter *a = user;
    struct vrpn_server *s = a->priv;
    return add_report(&s->full, a, e, pose);
}

/* Close the client's open datagram: it joins this drain's batch (sent by udp_send). */
static void udp_flush(struct xg_adapter *a, struct conn *c)
{
    struct vrpn_server *s = a->priv;
    if (!c->dlen) return;
    xg_udp_batch_add(&s->ubatch, c->udp.fd, (struct sockaddr *)&c->udp_to, c->udp_to_len, c->dgram,
                     c->dlen, 0);
    c->dlen = 0;
}

/* Hand the client's datagrams of this drain to the kernel: one sendmmsg per 16. */
static void udp_send(struct xg_adapter *a, struct conn *c)
{
    struct vrpn_server *s = a->priv;
    udp_flush(a, c);
    xg_udp_batch_send(&s->ubatch);
}

/* Send reports to one client (only those of the name slots in `only`, when not NULL). Returns
 * false if it was dropped. */
static bool conn_send(struct xg_adapter *a, struct conn *c, const struct reports *r,
                      const struct vrpn_bitset *only, int64_t now)
{
    struct vrpn_server *s = a->priv;
    struct vrpn_header h = now_header(now);
    size_t need = r->n * REPORT_WIRE + r->xn * (VRPN_HEADER_SIZE + 8) + r->xblen;
    if (s->scratch_cap < need) {
        uint8_t *nb = realloc(s->scratch, need);
        if (!nb) return true;
        s->scratch = nb;
        s->scratch_cap = need;
    }
    struct xg_writer w;
    xg_writer_init(&w, s->scratch, s->scratch_cap);
    for (size_t k = 0; k < r->n; k++) {
        const struct report *rep = &r->v[k];
        if (only && !vrpn_bitset_get(only, rep->slot)) continue;
        int sender = vrpn_srv_conn_tracker_sender(a, c, rep->tracker, NULL, NULL);
        if (sender < 0) continue;
        h.sender = sender;
        for (int m = 0; m < (s->send_velocity ? 2 : 1); m++) {
            h.type = m ? T_VELOCITY : T_POS_QUAT;
            const uint8_t *body = m ? rep->vel : rep->pq;
            size_t bl = m ? VELOCITY_LEN : POS_QUAT_LEN;
            if (c->udp_ok) {
                if (c->dlen + VRPN_HEADER_SIZE + bl > sizeof c->dgram) udp_flush(a, c);
                struct xg_writer dw;
                xg_writer_init(&dw, c->dgram + c->dlen, sizeof c->dgram - c->dlen);
                if (vrpn_encode_message(&dw, &h, &c->udp_seq, body, bl, NULL) == 0)
                    c->dlen += dw.len;
                s->reports_udp++;
            } else {
                vrpn_encode_message(&w, &h, vrpn_session_seq(&c->sess), body, bl, NULL);
                s->reports_tcp++;
            }
        }
    }
    for (size_t k = 0; k < r->xn; k++) {
        const struct xmsg *x = &r->x[k];
        if (only && !vrpn_bitset_get(only, x->slot)) continue;
        int sender = vrpn_srv_conn_tracker_sender(a, c, x->tracker, NULL, NULL);
        if (sender < 0) continue;
        h.sender = sender;
        h.type = x->type;
        if (c->udp_ok && x->type == T_ANALOG) { /* low latency (§6.4) */
            if (c->dlen + VRPN_HEADER_SIZE + x->len + 8 > sizeof c->dgram) udp_flush(a, c);
            struct xg_writer dw;
            xg_writer_init(&dw, c->dgram + c->dlen, sizeof c->dgram - c->dlen);
            if (vrpn_encode_message(&dw, &h, &c->udp_seq, r->xb + x->off, x->len, NULL) == 0)
                c->dlen += dw.len;
        } else
            vrpn_encode_message(&w, &h, vrpn_session_seq(&c->sess), r->xb + x->off, x->len, NULL);
    }
    if (c->udp_ok) udp_send(a, c);
    if (w.len) {
        if (!vrpn_srv_conn_write(a, c, s->scratch, w.len)) return false;
        xg_tserver_flush(c->bev); /* to the kernel now, before the next sink drains */
    }
    return true;
}

/* A drain skipped for client c (above max_output_bytes): its reports are counted; each one's name
 * slot is remembered so that the client resumes with the newest state of exactly those sensors
 * (never a pose it already has); a report whose sensor was already pending is coalesced. */
static void conn_skip(struct vrpn_server *s, struct conn *c, const struct reports *r)
{
    s->reports_skipped += r->n;
    if (c->need_full) { /* its first refresh is still due: it gets every sensor anyway */
        s->reports_coalesced += r->n;
        return;
    }
    for (size_t k = 0; k < r->n; k++)
        if (vrpn_bitset_get(&c->pending, r->v[k].slot))
            s->reports_coalesced++;
        else if (vrpn_bitset_set(&c->pending, r->v[k].slot) == 0)
            c->n_pending++;
        else
            c->need_full = true;       /* out of memory: fall back to a full refresh */
    for (size_t k = 0; k < r->xn; k++) /* buttons/analogs: the newest states follow */
        if (!vrpn_bitset_get(&c->pending, r->x[k].slot) &&
            vrpn_bitset_set(&c->pending, r->x[k].slot) == 0)
            c->n_pending++;
}

/* Client c is below the bound again after skipped drains: this drain's sensors join the pending
 * ones (a skipped report superseded by this drain's is coalesced), then c gets the newest state of
 * every pending sensor, predicted to now, once. */
static void conn_resume(struct xg_adapter *a, struct conn *c, const struct reports *dirty,
                        const struct reports *full, int64_t now)
{
    struct vrpn_server *s = a->priv;
    for (size_t k = 0; k < dirty->n; k++)
        if (vrpn_bitset_get(&c->pending, dirty->v[k].slot))
            s->reports_coalesced++;
        else
            (void)vrpn_bitset_set(&c->pending, dirty->v[k].slot);
    for (size_t k = 0; k < dirty->xn; k++)
        (void)vrpn_bitset_set(&c->pending, dirty->x[k].slot);
    struct vrpn_bitset only = c->pending;
    c->pending = (struct vrpn_bitset){0};
    c->n_pending = 0;
    conn_send(a, c, full, &only, now); /* may free c */
    free(only.b);
}

/* A client due for a refresh or a resume while a sliced drain (core/table/egress_pass.h) leaves
 * entities in the dirty set waits for the pass's last slice, so that a later slice does not send a
 * sensor again: this slice's sensors join its pending ones as in conn_resume() (a need_full client
 * gets every sensor anyway). */
static void conn_defer(struct vrpn_server *s, struct conn *c, const struct reports *dirty)
{
    if (c->need_full) return;
    for (size_t k = 0; k < dirty->n; k++)
        if (vrpn_bitset_get(&c->pending, dirty->v[k].slot))
            s->reports_coalesced++;
        else if (vrpn_bitset_set(&c->pending, dirty->v[k].slot) == 0)
            c->n_pending++;
        else
            c->need_full = true; /* out of memory: fall back to a full refresh */
    for (size_t k = 0; k < dirty->xn; k++)
        if (!vrpn_bitset_get(&c->pending, dirty->x[k].slot) &&
            vrpn_bitset_set(&c->pending, dirty->x[k].slot) == 0)
            c->n_pending++;
}

void vrpn_srv_drain(struct xg_adapter *a)
{
    struct vrpn_server *s = a->priv;
    int64_t now = xg_clock_mono_ns();
    if (s->members_dirty) assign_new(a, now);
    s->dirty.n = s->dirty.xn = s->dirty.xblen = 0;
    s->full.n = s->full.xn = s->full.xblen = 0;
    if (s->send_all) { /* every sensor every tick, predicted to now */
        xg_table_drain(a->table, a->index, now, visit_none, a);
        xg_table_foreach(a->table, a->index, now, visit_dirty, a);
    } else
        xg_table_drain(a->table, a->index, now, visit_dirty, a);
    bool full_built = false, more = xg_table_dirty_count(a->table, a->index) > 0;
    struct conn *next;
    for (struct conn *c = s->conns; c; c = next) {
        next = c->next;
        if (vrpn_session_state(&c->sess) != VRPN_SESS_STREAMING) continue;
        /* the slow-client policy (core/net/transport_server.h): above max_output_bytes skip and
         * coalesce (the newest state once it drains); too long or too far above: drop */
        enum xg_slow_verdict v = xg_tserver_egress(s->ts, c->bev, c->peer, &c->slow_since, now);
        if (v == XG_SLOW_SKIP) {
            conn_skip(s, c, &s->dirty);
            continue;
        }
        if (v != XG_SLOW_SEND) {
            a->drops++;
            vrpn_srv_conn_free(s, c);
            continue;
        }
        if ((c->need_full || c->n_pending) && more) {
            conn_defer(s, c, &s->dirty);
            continue;
        }
        if ((c->need_full || c->n_pending) && !full_built) {
            xg_table_foreach(a->table, a->index, now, visit_full, a);
            full_built = true;
        }
        if (c->need_full) {
            c->need_full = false;
            c->n_pending = 0;
            if (c->pending.b) memset(c->pending.b, 0, c->pending.bits / 8);
            if (s->full.n || s->full.xn) conn_send(a, c, &s->full, NULL, now);
        } else if (c->n_pending)
            conn_resume(a, c, &s->dirty, &s->full, now);
        else if (s->dirty.n || s->dirty.xn)
            conn_send(a, c, &s->dirty, NULL, now);
    }
}

void vrpn_srv_entity_event(struct xg_adapter *a, const struct xg_entity *e, bool added)
{
    struct vrpn_server *s = a->priv;
    if (added && xg_entity_for_sink(e, a->index)) s->members_dirty = true;
    if (!added) {
        int i = eslot_get(a, e); /* the table zeroes the slot when e has gone */
        if (i >= 0) vrpn_names_depart(&s->names, i, name_forgotten, s);
    }
}
