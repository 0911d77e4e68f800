/* `rgmp-server` adapter: serves the entity table to RGMP v2 clients (wire-rules.md decision 7).
 *
 * Config keys: listen ("0.0.0.0:12280"), max_clients (16), max_output_bytes (1 MiB) and
 * slow_timeout_ms (2000): the slow-client policy of every TCP server (core/net/transport_server.h:
 * while a client's unsent output is above max_output_bytes its data frames are skipped and the
 * devices it missed are remembered; once it drains it gets the newest frame of each, once; above
 * the bound for slow_timeout_ms, or past 2x it at a write, it is dropped), reference_frame (the
 * name written as
 * every stream's reference_frame: "LTP_ENU" by default, "LTP_NED" when frame is that preset), plus
 * the sink keys rate_hz (60; also the group's expected_rate_hz, 0 = send on change / event-driven),
 * include, exclude. Without `frame:` the wire frame is the preset LTP_ENU.
 *
 * Devices: one per origin adapter (entities grouped by their origin), device_id = FNV-1a of the
 * origin's name (stable across restarts), device_type = the origin's name, protocol_version
 * "2.0.0", timestamp_epoch "unix_epoch". Every entity is three streams with target_frame = the
 * entity's name: FLOAT[7] TRANSFORM, FLOAT[3] LINEAR_VELOCITY and FLOAT[3] ANGULAR_VELOCITY, all
 * relative to reference_frame, in groups "poses" (up to 1000 entities per group, so a Data Frame
 * stays below 64 KiB). A client gets every current definition when it connects, a new definition
 * when an origin's entity set changes, and a Device Disconnect when an origin's entities are all
 * gone. Data: on each tick, every group of an origin with an updated entity is sent whole, each
 * entity predicted to the send time; timestamp_us is the send time (wall clock, µs), strictly
 * increasing per device across all its groups (one session: two groups sent in one tick get t and
 * t + 1 µs). Nothing is queued per update (the table's dirty set coalesces), memory per client is
 * bounded by the output bound. Bytes sent by clients are read and discarded.
 *
 * solved_hand devices (keys solved_hands: false, hand_maps: [{hand, joints}]): Rokoko's hand
 * layout (rgmp_solved_hand.h) so that Rokoko's own consumers decode them. With solved_hands, every
 * left_hand / right_hand entity this sink sees is one device (its pose is the wrist; every other
 * joint collapses onto it); each hand_maps entry maps entity names to OpenXR joints and is one
 * device while its wrist entity exists. Device ids: FNV-1a of "solved_hand/<source>" (source =
 * the entity name or "hand_maps[i]"), unique among all devices. Poses are in the internal frame
 * (OpenXR's Y-up right-handed space, reference_frame "xr_base"), whatever `frame:` says. */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "core/net/transport.h"
#include "adapters/rgmp/rgmp_codec.h"
#include "adapters/rgmp/rgmp_server_priv.h"
#include "adapters/rgmp/rgmp_solved_hand.h"
#include "core/table/egress_controls.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/transport_server.h"
#include "mappings/frame.h"

/* ---- clients ---- */

static void client_free(struct rgmp_server *s, struct client *c)
{
    for (struct client **pp = &s->clients; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    if (c->bev) xg_tcp_free(c->bev);
    free(c);
    s->n_clients--;
}

/* Write bytes to a client under the transport's hard bound (2 x max_output_bytes: logged and
 * counted there). Returns false if the client was dropped. */
static bool client_write(struct xg_adapter *a, struct client *c, const void *p, size_t n)
{
    struct rgmp_server *s = a->priv;
    int rc = xg_tserver_write(s->ts, c->bev, c->peer, p, n);
    if (rc == 0) return true;
    if (rc == -ENOBUFS)
        a->drops++;
    else
        a->errors++;
    client_free(s, c);
    return false;
}

static void client_read_cb(struct bufferevent *bev, void *arg)
{
    /* RGMP clients send nothing (§2): read and discard */
    (void)arg;
    xg_tcp_in_drain(bev, xg_tcp_in_len(bev));
}

static void client_event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct xg_adapter *a = arg;
    struct rgmp_server *s = a->priv;
    if (!(what & (XG_TCP_EOF | XG_TCP_ERROR))) return;
    for (struct client *c = s->clients; c; c = c->next)
        if (c->bev == bev) {
            XG_INFO_PEER(&s->lim_conn, a->name, "client %s disconnected", c->peer);
            client_free(s, c);
            return;
        }
}

static int clients_cb(void *arg)
{
    const struct xg_adapter *a = arg;
    return ((const struct rgmp_server *)a->priv)->n_clients;
}

/* The transport accepted a client (it refused it past max_clients). */
static int accepted_cb(void *arg, struct bufferevent *bev, struct xg_tls_session *tls,
                       const char *peer)
{
    struct xg_adapter *a = arg;
    struct rgmp_server *s = a->priv;
    (void)tls;
    struct client *c = calloc(1, sizeof *c);
    if (!c) {
        a->errors++;
        return -ENOMEM;
    }
    c->bev = bev;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    struct xg_tcp_conf tc = {.read = client_read_cb, .event = client_event_cb, .arg = a};
    xg_tcp_start(c->bev, &tc);
    c->next = s->clients;
    s->clients = c;
    s->n_clients++;
    XG_INFO_PEER(&s->lim_conn, a->name, "client %s connected (%d/%" PRId64 ")", peer, s->n_clients,
                 s->max_clients);
    /* every current definition; data follows on the next tick */
    for (int i = 0; i < XG_MAX_ADAPTERS; i++) {
        struct origin *o = &s->origins[i];
        if (!o->def_frame) continue;
        if (!client_write(a, c, o->def_frame, o->def_len)) return 0; /* c, bev freed */
        c->known |= UINT64_C(1) << i;
        s->definitions_sent++;
    }
    for (int k = 0; k < MAX_HANDS; k++) {
        struct hand_dev *h = &s->hands[k];
        if (!h->used || !h->def_frame) continue;
        if (!client_write(a, c, h->def_frame, h->def_len)) return 0;
        c->known_hands |= UINT64_C(1) << k;
        s->definitions_sent++;
    }
    return 0;
}

/* ---- origins ---- */

static int push_id(uint32_t **v, size_t *n, size_t *cap, uint32_t id)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        uint32_t *nv = realloc(*v, nc * sizeof *nv);
        if (!nv) return -ENOMEM;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = id;
    return 0;
}

static int collect(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct xg_adapter *a = user;
    struct rgmp_server *s = a->priv;
    (void)pose;
    if (xg_entity_origin(e) < 0 || xg_entity_origin(e) >= XG_MAX_ADAPTERS) return 0;
    xg_egress_controls_check(&s->controls, a->name, e);
    struct origin *o = &s->origins[xg_entity_origin(e)];
    if (!o->new_n && !o->n) {
        /* the origin adapter's name: the entity name's first segment */
        const char *slash = strchr(xg_entity_name(e), '/');
        size_t l = slash ? (size_t)(slash - xg_entity_name(e)) : strlen(xg_entity_name(e));
        if (l >= sizeof o->name) l = sizeof o->name - 1;
        memcpy(o->name, xg_entity_name(e), l);
        o->name[l] = '\0';
        if (!o->name[0]) snprintf(o->name, sizeof o->name, "origin%d", xg_entity_origin(e));
    }
    push_id(&o->new_ids, &o->new_n, &o->new_cap, xg_entity_id(e));
    if (s->solved_hands &&
        (xg_entity_kind(e) == XG_KIND_LEFT_HAND || xg_entity_kind(e) == XG_KIND_RIGHT_HAND))
        push_id(&s->hand_ids, &s->n_hand_ids, &s->cap_hand_ids, xg_entity_id(e));
    return 0;
}

/* A definition (is_def) to every client, or a Device Disconnect to the clients that know the
 * device: origin device i, or solved_hand device i when `hand`. */
static void send_all(struct xg_adapter *a, bool hand, int i, const void *p, size_t n, bool is_def)
{
    struct rgmp_server *s = a->priv;
    struct client *next;
    uint64_t bit = UINT64_C(1) << i;
    for (struct client *c = s->clients; c; c = next) {
        next = c->next;
        if (!is_def && !((hand ? c->known_hands : c->known) & bit)) continue;
        bool ok = client_write(a, c, p, n); /* c is freed when it fails */
        if (!ok) continue;
        uint64_t *known = hand ? &c->known_hands : &c->known;
        if (is_def) {
            *known |= bit;
            s->definitions_sent++;
        } else {
            *known &= ~bit;
            *(hand ? &c->pending_hands : &c->pending) &= ~bit; /* nothing left to catch up */
            s->disconnects_sent++;
        }
    }
}

/* A Data Frame of a device that was updated (`dirty`) or that a client missed: to the clients
 * that know the device and want it. A client this drain skips (above max_output_bytes) has the
 * device marked pending instead (a frame already pending is coalesced); a client no longer
 * skipped gets the frame of each pending device (the newest state) once. */
static void send_data_frame(struct xg_adapter *a, bool hand, int i, const void *p, size_t n,
                            bool dirty)
{
    struct rgmp_server *s = a->priv;
    struct client *next;
    uint64_t bit = UINT64_C(1) << i;
    for (struct client *c = s->clients; c; c = next) {
        next = c->next;
        if (!((hand ? c->known_hands : c->known) & bit)) continue;
        uint64_t *pending = hand ? &c->pending_hands : &c->pending;
        if (c->skip) {
            if (!dirty) continue;
            if (*pending & bit) s->frames_coalesced++;
            *pending |= bit;
            c->skipped++;
            s->frames_skipped++;
            continue;
        }
        if (!dirty && !(*pending & bit)) continue;
        if (!client_write(a, c, p, n)) continue;
        *pending &= ~bit;
        s->frames_sent++;
    }
}

/* Does a client this drain serves miss device i (origin, or solved_hand when `hand`)? */
static bool wanted_pending(const struct rgmp_server *s, bool hand, int i)
{
    for (const struct client *c = s->clients; c; c = c->next)
        if (!c->skip && ((hand ? c->pending_hands : c->pending) & (UINT64_C(1) << i))) return true;
    return false;
}

static void origin_disconnect(struct xg_adapter *a, int i)
{
    struct rgmp_server *s = a->priv;
    struct origin *o = &s->origins[i];
    if (o->def_frame) {
        uint8_t b[RGMP_HEADER_LEN + RGMP_DISCONNECT_LEN];
        struct xg_writer w;
        xg_writer_init(&w, b, sizeof b);
        rgmp_encode_disconnect(&w, o->device_id);
        send_all(a, false, i, b, w.len, false);
        XG_INFO(a->name, "device %" PRIu32 " (%s): no entities left, Device Disconnect sent",
                o->device_id, o->name);
    }
    rgmp_definition_free(o->def);
    o->def = NULL;
    free(o->def_frame);
    o->def_frame = NULL;
    o->def_len = 0;
}

static int origin_define(struct xg_adapter *a, int i)
{
    struct rgmp_server *s = a->priv;
    struct origin *o = &s->origins[i];
    struct xg_error err = {0};
    if (!o->def) o->device_id = rgmp_server_device_id(s, o->name, o); /* stable, unique */
    struct rgmp_definition *def = rgmp_definition_new(o->device_id, o->name, RGMP_EPOCH_UNIX);
    if (!def) return -ENOMEM;
    uint8_t *frame = NULL;
    size_t len = 0;
    int rc = rgmp_server_origin_frame(a, s, o, def, &frame, &len, &err);
    if (rc < 0) {
        if (!o->too_big_warned) {
            o->too_big_warned = true;
            XG_ERR(a->name, "device for origin %s not served: %s", o->name, err.msg);
        }
        a->errors++;
        rgmp_definition_free(def);
        return rc;
    }
    rgmp_definition_free(o->def);
    free(o->def_frame);
    o->def = def;
    o->def_frame = frame;
    o->def_len = len;
    o->dirty = true;
    send_all(a, false, i, frame, len, true);
    XG_DEBUG(a->name, "device %" PRIu32 " (%s): definition with %zu entities sent", o->device_id,
             o->name, o->n);
    return 0;
}

static void rebuild_hands(struct xg_adapter *a);

static void rebuild_members(struct xg_adapter *a, int64_t now)
{
    struct rgmp_server *s = a->priv;
    s->members_dirty = false;
    for (int i = 0; i < XG_MAX_ADAPTERS; i++)
        s->origins[i].new_n = 0;
    s->n_hand_ids = 0;
    xg_table_foreach(a->table, a->index, now, collect, a);
    for (int i = 0; i < XG_MAX_ADAPTERS; i++) {
        struct origin *o = &s->origins[i];
        bool same =
            o->new_n == o->n && (!o->n || !memcmp(o->new_ids, o->ids, o->n * sizeof *o->ids));
        /* swap the lists */
        uint32_t *t = o->ids;
        size_t tc = o->cap;
        o->ids = o->new_ids;
        o->n = o->new_n;
        o->cap = o->new_cap;
        o->new_ids = t;
        o->new_cap = tc;
        o->new_n = 0;
        if (same && (o->def || !o->n)) continue;
        if (!o->n)
            origin_disconnect(a, i);
        else
            origin_define(a, i);
    }
    if (s->solved_hands || s->n_maps) rebuild_hands(a);
}

/* ---- solved_hand devices (options solved_hands, hand_maps) ---- */

static void hand_drop(struct xg_adapter *a, int k)
{
    struct rgmp_server *s = a->priv;
    struct hand_dev *h = &s->hands[k];
    if (h->def_frame) {
        uint8_t b[RGMP_HEADER_LEN + RGMP_DISCONNECT_LEN];
        struct xg_writer w;
        xg_writer_init(&w, b, sizeof b);
        rgmp_encode_disconnect(&w, h->device_id);
        send_all(a, true, k, b, w.len, false);
        XG_INFO(a->name, "solved_hand device %" PRIu32 " (%s): gone, Device Disconnect sent",
                h->device_id, h->source);
    }
    rgmp_definition_free(h->def);
    free(h->def_frame);
    memset(h, 0, sizeof *h);
}

static int hand_define(struct xg_adapter *a, int k)
{
    struct rgmp_server *s = a->priv;
    struct hand_dev *h = &s->hands[k];
    struct xg_error err = {0};
    struct rgmp_definition *def = NULL;
    uint8_t *frame = NULL;
    size_t len = 0;
    int rc = rgmp_server_hand_frame(h, a->rate_hz, &def, &frame, &len, &err);
    if (rc < 0) {
        XG_ERR(a->name, "solved_hand device for %s not served: %s", h->source,
               err.msg[0] ? err.msg : strerror(-rc));
        a->errors++;
        return rc;
    }
    h->def = def;
    h->def_frame = frame;
    h->def_len = len;
    h->dirty = true;
    send_all(a, true, k, frame, len, true);
    XG_INFO(a->name, "solved_hand device %" PRIu32 " (%s hand, %s): definition sent", h->device_id,
            h->side, h->source);
    return 0;
}

/* Entity id of `name` when this sink sees it (include/exclude), else 0. */
static uint32_t visible_id(const struct xg_adapter *a, const char *name)
{
    const struct xg_entity *e = name ? xg_table_find(a->table, name) : NULL;
    return e && xg_entity_for_sink(e, a->index) ? xg_entity_id(e) : 0;
}

/* The solved_hand devices that should exist now: one per hand_maps entry whose wrist entity
 * exists, then (solved_hands) one per hand entity that is not already a map's wrist. Devices are
 * matched by source: kept (joints updated), created (definition), or dropped (Device
 * Disconnect). */
static void rebuild_hands(struct xg_adapter *a)
{
    struct rgmp_server *s = a->priv;
    struct hand_dev *want = calloc(MAX_HANDS + 1, sizeof *want);
    if (!want) {
        a->errors++;
        return;
    }
    int n = 0;
    for (int i = 0; i < s->n_maps && n < MAX_HANDS + 1; i++) {
        struct hand_dev *w = &want[n];
        for (int j = 0; j < RGMP_HAND_JOINTS; j++)
            w->joint[j] = visible_id(a, s->maps[i].joint[j]);
        if (!w->joint[RGMP_HAND_WRIST]) {
            memset(w, 0, sizeof *w);
            continue;
        }
        snprintf(w->side, sizeof w->side, "%s", s->maps[i].side);
        snprintf(w->source, sizeof w->source, "hand_maps[%d]", i);
        n++;
    }
    int n_maps = n;
    for (size_t i = 0; i < s->n_hand_ids && n < MAX_HANDS + 1; i++) {
        const struct xg_entity *e = xg_table_get(a->table, s->hand_ids[i]);
        bool mapped = !e;
        for (int m = 0; m < n_maps && !mapped; m++)
            mapped = want[m].joint[RGMP_HAND_WRIST] == s->hand_ids[i];
        if (mapped) continue;
        struct hand_dev *w = &want[n++];
        w->joint[RGMP_HAND_WRIST] = xg_entity_id(e);
        snprintf(w->side, sizeof w->side, "%s",
                 xg_entity_kind(e) == XG_KIND_LEFT_HAND ? "left" : "right");
        snprintf(w->source, sizeof w->source, "%s", xg_entity_name(e));
    }
    for (int k = 0; k < MAX_HANDS; k++) { /* keep or drop the current devices */
        struct hand_dev *h = &s->hands[k];
        if (!h->used) continue;
        int m = 0;
        while (m < n &&
               (want[m].used || strcmp(want[m].source, h->source) || strcmp(want[m].side, h->side)))
            m++;
        if (m == n) {
            hand_drop(a, k);
            continue;
        }
        want[m].used = true; /* taken */
        memcpy(h->joint, want[m].joint, sizeof h->joint);
    }
    for (int m = 0; m < n; m++) { /* create the new ones */
        if (want[m].used) continue;
        int k = 0;
        while (k < MAX_HANDS && s->hands[k].used)
            k++;
        if (k == MAX_HANDS) {
            if (!s->hands_full_warned)
                XG_WARN(a->name, "solved_hand: more than %d hand devices, %s is not served",
                        MAX_HANDS, want[m].source);
            s->hands_full_warned = true;
            continue;
        }
        struct hand_dev *h = &s->hands[k];
        *h = want[m];
        h->used = true;
        char key[sizeof h->source + 16];
        snprintf(key, sizeof key, "solved_hand/%s", h->source);
        h->device_id = rgmp_server_device_id(s, key, h);
        if (hand_define(a, k) < 0) memset(h, 0, sizeof *h);
    }
    free(want);
}

/* One Data Frame of solved_hand device k: every joint predicted to `now`. */
static void send_hand(struct xg_adapter *a, int k, int64_t now, bool dirty)
{
    struct rgmp_server *s = a->priv;
    struct hand_dev *h = &s->hands[k];
    struct xg_pose pose[RGMP_HAND_JOINTS];
    bool have[RGMP_HAND_JOINTS];
    for (int j = 0; j < RGMP_HAND_JOINTS; j++)
        have[j] = h->joint[j] && xg_entity_predict(a->table, h->joint[j], now, &pose[j]) >= 0;
    if (!have[RGMP_HAND_WRIST]) return;
    float v[RGMP_HAND_JOINTS * 7];
    rgmp_hand_values(pose, have, v);
    uint8_t vals[sizeof v], frame[RGMP_HEADER_LEN + RGMP_DATA_HEADER_LEN + sizeof v];
    struct xg_writer vw, w;
    xg_writer_init(&vw, vals, sizeof vals);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        xg_write_lef32(&vw, v[i]);
    xg_writer_init(&w, frame, sizeof frame);
    struct xg_error err = {0};
    uint64_t ts = rgmp_next_timestamp_us(&h->last_ts_us, now);
    if (rgmp_encode_data(&w, h->def, 0, ts, vals, vw.len, &err) < 0) {
        XG_ERR(a->name, "solved_hand device %" PRIu32 ": %s", h->device_id, err.msg);
        a->errors++;
        return;
    }
    a->samples_out++;
    send_data_frame(a, true, k, frame, w.len, dirty);
}

/* ---- egress ---- */

static int mark_dirty(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct xg_adapter *a = user;
    struct rgmp_server *s = a->priv;
    (void)pose;
    if (xg_entity_origin(e) >= 0 && xg_entity_origin(e) < XG_MAX_ADAPTERS)
        s->origins[xg_entity_origin(e)].dirty = true;
    if (!s->solved_hands && !s->n_maps) return 0;
    for (int k = 0; k < MAX_HANDS; k++) {
        struct hand_dev *h = &s->hands[k];
        for (int j = 0; h->used && !h->dirty && j < RGMP_HAND_JOINTS; j++)
            if (h->joint[j] == xg_entity_id(e)) h->dirty = true;
    }
    return 0;
}

static void send_data(struct xg_adapter *a, int i, int64_t now, bool dirty)
{
    struct rgmp_server *s = a->priv;
    struct origin *o = &s->origins[i];
    size_t need = RGMP_HEADER_LEN + RGMP_DATA_HEADER_LEN + ENTITIES_PER_GROUP * ENTITY_BYTES;
    if (s->buf_cap < need) {
        uint8_t *nb = realloc(s->buf, need * 2);
        if (!nb) {
            a->errors++;
            return;
        }
        s->buf = nb;
        s->buf_cap = need * 2;
    }
    uint8_t *vals = s->buf + need; /* second half: the packed values */
    for (size_t g = 0; g < o->def->n_groups; g++) {
        size_t first = g * ENTITIES_PER_GROUP;
        size_t n = o->n - first < ENTITIES_PER_GROUP ? o->n - first : ENTITIES_PER_GROUP;
        struct xg_writer vw;
        xg_writer_init(&vw, vals, need);
        for (size_t k = first; k < first + n; k++) {
            struct xg_pose p;
            if (xg_entity_predict(a->table, o->ids[k], now, &p) < 0) {
                memset(&p, 0, sizeof p);
                p.orientation = XG_QUAT_IDENTITY;
            }
            xg_frame_pose_out(s->frame, &p);
            float v[13] = {(float)p.position.x,         (float)p.position.y,
                           (float)p.position.z,         (float)p.orientation.x,
                           (float)p.orientation.y,      (float)p.orientation.z,
                           (float)p.orientation.w,      (float)p.velocity.x,
                           (float)p.velocity.y,         (float)p.velocity.z,
                           (float)p.angular_velocity.x, (float)p.angular_velocity.y,
                           (float)p.angular_velocity.z};
            for (int j = 0; j < 13; j++)
                xg_write_lef32(&vw, v[j]);
            a->samples_out++;
        }
        struct xg_writer w;
        xg_writer_init(&w, s->buf, need);
        struct xg_error err = {0};
        uint64_t ts = rgmp_next_timestamp_us(&o->last_ts_us, now);
        if (rgmp_encode_data(&w, o->def, (uint32_t)g, ts, vals, vw.len, &err) < 0) {
            XG_ERR(a->name, "device %" PRIu32 ": %s", o->device_id, err.msg);
            a->errors++;
            return;
        }
        send_data_frame(a, false, i, s->buf, w.len, dirty);
    }
}

static void server_drain(struct xg_adapter *a)
{
    struct rgmp_server *s = a->priv;
    int64_t now = xg_clock_mono_ns();
    /* the slow-client policy (core/net/transport_server.h): skip, or drop */
    for (struct client *c = s->clients, *next; c; c = next) {
        next = c->next;
        enum xg_slow_verdict v = xg_tserver_egress(s->ts, c->bev, c->peer, &c->slow_since, now);
        c->skip = v == XG_SLOW_SKIP;
        if (v != XG_SLOW_SEND && v != XG_SLOW_SKIP) {
            a->drops++;
            client_free(s, c);
        }
    }
    xg_table_drain(a->table, a->index, now, mark_dirty, a);
    if (s->members_dirty) rebuild_members(a, now);
    for (int i = 0; i < XG_MAX_ADAPTERS; i++) {
        struct origin *o = &s->origins[i];
        bool dirty = o->dirty;
        o->dirty = false;
        if (!dirty && !wanted_pending(s, false, i)) continue;
        if (o->def && o->n) send_data(a, i, now, dirty);
    }
    for (int k = 0; k < MAX_HANDS; k++) {
        struct hand_dev *h = &s->hands[k];
        bool dirty = h->dirty;
        h->dirty = false;
        if (!h->used || (!dirty && !wanted_pending(s, true, k))) continue;
        if (h->def) send_hand(a, k, now, dirty);
    }
    /* this drain's frames to the kernel now, before the next sink drains */
    for (struct client *c = s->clients; c; c = c->next)
        xg_tserver_flush(c->bev);
}

static void kick_cb(void *arg)
{
    server_drain(arg);
}

static void server_entity_event(struct xg_adapter *a, const struct xg_entity *e, bool added)
{
    struct rgmp_server *s = a->priv;
    (void)added;
    if (!xg_entity_for_sink(e, a->index)) return;
    s->members_dirty = true;
    /* send on change (rate_hz 0): nothing else may wake us for a removal */
    if (a->rate_hz <= 0 && s->kick) xg_timer_yield(s->kick);
}

/* ---- ops ---- */

static int server_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct rgmp_server *s = calloc(1, sizeof *s);
    if (s) xg_egress_controls_init(&s->controls, 0, 0, "RGMP v2 has no field for them");
    if (!s) return -ENOMEM;
    a->priv = s;
    s->members_dirty = true;
    s->frame = a->frame; /* LTP_ENU unless configured: default_frame of xg_rgmp_server_ops */
    return rgmp_server_conf_read(s, conf, err);
}

static int server_start(struct xg_adapter *a)
{
    struct rgmp_server *s = a->priv;
    struct xg_error err = {0};
    if (!s->ts) {
        struct xg_tserver_conf tsc = {.component = a->name,
                                      .listen = s->listen,
                                      .default_port = 12280,
                                      .max_clients = s->max_clients,
                                      .max_output = s->max_output,
                                      .slow_timeout_ms = s->slow_timeout_ms};
        struct xg_tserver_ops ops = {.clients = clients_cb, .accepted = accepted_cb};
        if (!(s->ts = xg_tserver_new(a->base, &tsc, &ops, a))) return -ENOMEM;
    }
    int rc = xg_tserver_start(s->ts, &err);
    if (rc < 0) {
        XG_ERR(a->name, "%s", err.msg);
        return rc;
    }
    snprintf(s->bound, sizeof s->bound, "%s", xg_tserver_bound(s->ts));
    s->kick = xg_timer_new(a->base, kick_cb, a);
    if (!s->kick) return -ENOMEM;
    XG_INFO(a->name, "RGMP server listening on %s (reference_frame %s)", s->bound,
            s->reference_frame);
    return 0;
}

static void server_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct rgmp_server *s = a->priv;
    st->state = xg_tserver_listening(s->ts) ? "listening" : "stopped";
    snprintf(st->peer, sizeof st->peer, "%s", s->bound[0] ? s->bound : s->listen);
    int devices = 0;
    for (int i = 0; i < XG_MAX_ADAPTERS; i++)
        devices += s->origins[i].def_frame != NULL;
    xg_status_gauge(st, "clients", (double)s->n_clients);
    xg_status_gauge(st, "devices", (double)devices);
    int hands = 0;
    for (int k = 0; k < MAX_HANDS; k++)
        hands += s->hands[k].used && s->hands[k].def_frame;
    if (s->solved_hands || s->n_maps) xg_status_gauge(st, "solved_hand_devices", (double)hands);
    xg_tserver_status(s->ts, st); /* clients_accepted/refused/dropped_slow, drains_skipped */
    xg_status_counter(st, "controls_not_carried", (double)s->controls.not_carried);
    xg_status_counter(st, "data_frames_sent", (double)s->frames_sent);
    xg_status_counter(st, "data_frames_skipped", (double)s->frames_skipped);
    xg_status_counter(st, "data_frames_coalesced", (double)s->frames_coalesced);
    xg_status_counter(st, "definitions_sent", (double)s->definitions_sent);
    xg_status_counter(st, "device_disconnects_sent", (double)s->disconnects_sent);
    xg_status_counter(st, "bytes_out", (double)xg_tserver_bytes_out(s->ts));
}

static void server_stop(struct xg_adapter *a)
{
    struct rgmp_server *s = a->priv;
    if (!s) return;
    xg_tserver_stop(s->ts);
    while (s->clients)
        client_free(s, s->clients);
    xg_timer_free(s->kick);
    s->kick = NULL;
}

static void server_destroy(struct xg_adapter *a)
{
    struct rgmp_server *s = a->priv;
    if (!s) return;
    server_stop(a);
    for (int i = 0; i < XG_MAX_ADAPTERS; i++) {
        struct origin *o = &s->origins[i];
        free(o->ids);
        free(o->new_ids);
        rgmp_definition_free(o->def);
        free(o->def_frame);
    }
    for (int k = 0; k < MAX_HANDS; k++) {
        rgmp_definition_free(s->hands[k].def);
        free(s->hands[k].def_frame);
    }
    for (int i = 0; i < s->n_maps; i++)
        for (int j = 0; j < RGMP_HAND_JOINTS; j++)
            free(s->maps[i].joint[j]);
    free(s->hand_ids);
    free(s->buf);
    xg_tserver_free(s->ts);
    free(s);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_rgmp_server_ops = {
    .type = "rgmp-server",
    .is_sink = true,
    .default_frame = "LTP_ENU",
    .whole_frames = true, /* one frame per drain: not sliced (core/table/egress_pass.h) */
    .create = server_create,
    .start = server_start,
    .drain = server_drain,
    .status = server_status,
    .stop = server_stop,
    .destroy = server_destroy,
    .entity_event = server_entity_event,
};
