/* `rgmp-client` adapter: connects to an RGMP v2 server (a Rokoko suit/glove driver) and turns its
 * streams into entities (Rokoko's RGMP v2 reference with xrgate's decisions, see
 * docs/adapters/rgmp.md).
 *
 * Config keys: connect ("127.0.0.1:12276"), strict (false: out-of-order frames are dropped and
 * counted, D2; true: fatal), compose (true: poses relative to a streamed frame are chained to the
 * device's root frame, D6), max_devices (64 active devices per connection; one more is a protocol
 * error), max_definition_bytes (1 MiB), max_data_bytes (64 KiB, D8). Without a
 * `frame:` the wire frame is the preset LTP_ENU (LTP_NED for a device whose root reference frame
 * is LTP_NED); an explicit `frame:` is used for every device.
 *
 * Entities (D6): one per target_frame that has a TRANSFORM, POSITION or ORIENTATION stream, named
 * "<adapter>/<device_type>-<device_id>/<target_frame>" (device_type "device" when absent), kind
 * head / left_hand / right_hand for those target frames, rigid_body otherwise.
 * LINEAR_VELOCITY / ANGULAR_VELOCITY streams of the same target_frame fill its velocities (a vector
 * whose reference_frame is a streamed frame is rotated into the root frame by that frame's
 * orientation; one without reference_frame is taken as expressed in its own target frame).
 * Extras: the bits of STATUS_FLAGS streams become buttons and the values of numeric CUSTOM streams
 * become analogs of the entity of the same target_frame, or of the device's root entity when that
 * frame has no pose (the mapping is logged at info level when a definition arrives).
 *
 * Life cycle (resolution, connect, backoff and the state names are core/net/transport_client.h's):
 * connecting -> handshake (connected, no definition yet) -> streaming; on EOF, a socket error or a
 * protocol error (D1: one log line naming peer, device, group, stream, field and value) the
 * connection is closed, the connection's entities are marked inactive (they go STALE after
 * entity.stale_ms) and the client reconnects after an exponential backoff (0.5 s doubling to
 * 10 s, reset once streaming). A Device Disconnect removes that device's entities from the table at
 * once (so every sink retracts them). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/transport.h"
#include "adapters/rgmp/rgmp_client_priv.h"
#include "adapters/rgmp/rgmp_codec.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/table/names.h"
#include "core/net/net.h"
#include "core/net/transport_client.h"
#include "mappings/frame.h"

/* Warn once per key (bounded: past MAX_WARNED keys every occurrence is only logged at debug). */
static bool first_warning(struct rgmp_client *c, const char *key)
{
    for (size_t i = 0; i < c->n_warned; i++)
        if (!strcmp(c->warned[i], key)) return false;
    if (c->n_warned < MAX_WARNED) {
        char *k = strdup(key);
        if (k) c->warned[c->n_warned++] = k;
        return true;
    }
    return false;
}

/* ---- device mapping (D6) ---- */

static struct dev *dev_find(struct rgmp_client *c, uint32_t id)
{
    for (size_t i = 0; i < c->n_devs; i++)
        if (c->devs[i].device_id == id) return &c->devs[i];
    return NULL;
}

static bool is_pose(enum rgmp_measure_type m)
{
    return m == RGMP_TRANSFORM || m == RGMP_POSITION || m == RGMP_ORIENTATION;
}

static long ent_index(const struct dev *d, const char *frame)
{
    if (!frame) return -1;
    for (size_t i = 0; i < d->n_ents; i++)
        if (!strcmp(d->ents[i].frame, frame)) return (long)i;
    return -1;
}

static bool is_int_type(enum rgmp_base_type b)
{
    return b == RGMP_INT32 || b == RGMP_UINT32 || b == RGMP_INT64 || b == RGMP_UINT64;
}

/* Mark every entity of a device inactive (connection lost) or remove them (Device Disconnect). */
static void dev_retire(struct xg_adapter *a, struct dev *d, bool remove)
{
    int64_t now = xg_clock_mono_ns();
    for (size_t i = 0; i < d->n_ents; i++) {
        if (!d->ents[i].id) continue;
        if (remove) {
            xg_table_remove(a->table, d->ents[i].id);
        } else {
            struct xg_sample s = {
                .capture_ns = now, .receive_ns = now, .flags = XG_SAMPLE_INACTIVE};
            xg_table_push(a->table, d->ents[i].id, &s);
        }
    }
}

/* Build the mapping of a (new or replacing) definition. Entities of the old mapping whose name
 * is gone are removed from the table. Returns 0 or -ENOMEM. */
static int dev_map(struct xg_adapter *a, struct rgmp_client *c, const struct rgmp_definition *def)
{
    struct dev nd = {.device_id = def->device_id, .def = def, .root = -1};
    struct dev *old = dev_find(c, def->device_id);
    const char *dtype = def->device_type && def->device_type[0] ? def->device_type : "device";

    /* entities: distinct target frames with a pose stream */
    size_t cap = 0;
    for (size_t g = 0; g < def->n_groups; g++)
        cap += def->groups[g].n_streams;
    nd.ents = calloc(cap + 1, sizeof *nd.ents);
    nd.routes = calloc(def->n_groups + 1, sizeof *nd.routes);
    if (!nd.ents || !nd.routes) goto nomem;
    for (size_t g = 0; g < def->n_groups; g++) {
        const struct rgmp_group *gr = &def->groups[g];
        for (size_t k = 0; k < gr->n_streams; k++) {
            const struct rgmp_stream *s = &gr->streams[k];
            if (!is_pose(s->measure)) continue;
            long e = ent_index(&nd, s->target_frame);
            if (e < 0) {
                struct ent *en = &nd.ents[nd.n_ents++];
                en->frame = s->target_frame;
                en->ref = s->reference_frame;
                /* a long target_frame is cut with a hash of the whole name (never merged) */
                xg_name_fitf(en->source, sizeof en->source, "%s-%" PRIu32 "/%s", dtype,
                             def->device_id, s->target_frame);
            } else if (!nd.ents[e].ref && s->reference_frame) {
                nd.ents[e].ref = s->reference_frame;
            }
        }
    }
    for (size_t i = 0; i < nd.n_ents; i++) {
        nd.ents[i].parent = c->compose ? ent_index(&nd, nd.ents[i].ref) : -1;
        if ((size_t)nd.ents[i].parent == i) nd.ents[i].parent = -1;
    }
    /* cycles (a <- b <- a) cannot be composed: such entities stay local */
    for (size_t i = 0; i < nd.n_ents; i++) {
        long p = nd.ents[i].parent;
        int depth = 0;
        while (p >= 0 && depth < MAX_DEPTH) {
            p = nd.ents[p].parent;
            depth++;
        }
        if (p >= 0) {
            XG_WARN_PEER(&c->lim_definition, a->name,
                         "device %" PRIu32
                         ": reference_frame chain of %s is cyclic or deeper than %d: "
                         "kept relative to %s",
                         def->device_id, nd.ents[i].frame, MAX_DEPTH, nd.ents[i].ref);
            nd.ents[i].parent = -1;
        }
    }
    for (size_t i = 0; i < nd.n_ents && nd.root < 0; i++)
        if (nd.ents[i].parent < 0) nd.root = (long)i;

    /* device frame: explicit, else by the root reference frame's name */
    if (c->explicit_frame) {
        nd.frame = *a->frame;
    } else {
        const char *rf = nd.root >= 0 ? nd.ents[nd.root].ref : NULL;
        if (!rf || strcmp(rf, "LTP_NED") || xg_frame_preset("LTP_NED", &nd.frame, NULL))
            xg_frame_preset("LTP_ENU", &nd.frame, NULL);
        xg_frame_finalize(&nd.frame);
    }

    /* routes */
    for (size_t g = 0; g < def->n_groups; g++) {
        const struct rgmp_group *gr = &def->groups[g];
        nd.routes[g] = calloc(gr->n_streams + 1, sizeof **nd.routes);
        if (!nd.routes[g]) goto nomem;
        for (size_t k = 0; k < gr->n_streams; k++) {
            const struct rgmp_stream *s = &gr->streams[k];
            struct route *r = &nd.routes[g][k];
            r->kind = R_NONE;
            r->ent = ent_index(&nd, s->target_frame);
            if (s->measure == RGMP_MEASURE_UNKNOWN) {
                char key[512];
                snprintf(key, sizeof key, "measure %s/%s/%s", s->measure_name, s->target_frame,
                         s->reference_frame ? s->reference_frame : "");
                if (first_warning(c, key))
                    XG_WARN_PEER(
                        &c->lim_definition, a->name,
                        "device %" PRIu32 ", group %zu \"%s\", stream %zu: measure_type \"%s\" "
                        "(target_frame \"%s\") is unknown: its %" PRIu32 " bytes are skipped (D4)",
                        def->device_id, g, gr->name, k, s->measure_name, s->target_frame,
                        s->type.size);
                continue;
            }
            if (is_pose(s->measure)) {
                r->kind = R_POSE;
            } else if (s->measure == RGMP_LINEAR_VELOCITY || s->measure == RGMP_ANGULAR_VELOCITY) {
                if (r->ent >= 0) r->kind = s->measure == RGMP_LINEAR_VELOCITY ? R_VEL : R_ANGVEL;
            } else if (s->measure == RGMP_STATUS_FLAGS || s->measure == RGMP_CUSTOM) {
                if (r->ent < 0) r->ent = nd.root;
                if (r->ent < 0) continue;
                struct ent *en = &nd.ents[r->ent];
                bool flags = s->measure == RGMP_STATUS_FLAGS;
                int n = flags ? (int)(rgmp_base_size(s->type.base) * 8) : (int)s->type.count;
                int *next = flags ? &en->next_button : &en->next_analog;
                int max = flags ? XG_MAX_BUTTONS : XG_MAX_ANALOGS;
                if (*next + n > max) {
                    XG_WARN_PEER(&c->lim_definition, a->name,
                                 "device %" PRIu32
                                 ", group %zu \"%s\", stream %zu: %s %s of %s does "
                                 "not fit the %d %s of entity %s: not exposed",
                                 def->device_id, g, gr->name, k, s->measure_name,
                                 flags ? "bits" : s->custom_label, s->target_frame, max,
                                 flags ? "buttons" : "analogs", en->source);
                    continue;
                }
                r->kind = flags ? R_FLAGS : R_CUSTOM;
                r->base = *next;
                r->count = n;
                *next += n;
                XG_INFO_PEER(&c->lim_mapping, a->name,
                             "device %" PRIu32 ": %s %s%s%s of %s -> %s %s[%d..%d]", def->device_id,
                             s->measure_name, flags ? "" : "\"", flags ? "bits" : s->custom_label,
                             flags ? "" : "\"", s->target_frame, en->source,
                             flags ? "buttons" : "analogs", r->base, r->base + n - 1);
            }
        }
    }

    if (def->epoch == RGMP_EPOCH_OTHER) {
        char key[128];
        snprintf(key, sizeof key, "epoch %" PRIu32, def->device_id);
        if (first_warning(c, key))
            XG_WARN_PEER(&c->lim_definition, a->name,
                         "device %" PRIu32
                         ": timestamp_epoch %s%s%s is not unix_epoch or device_boot: "
                         "treated like device_boot (offset estimation, D10)",
                         def->device_id, def->timestamp_epoch ? "\"" : "",
                         def->timestamp_epoch ? def->timestamp_epoch : "(absent)",
                         def->timestamp_epoch ? "\"" : "");
    }

    if (old) {
        /* D3: re-definition replaces the device; keep ids of entities that still exist */
        for (size_t i = 0; i < old->n_ents; i++) {
            bool kept = false;
            for (size_t j = 0; j < nd.n_ents && !kept; j++)
                if (!strcmp(old->ents[i].source, nd.ents[j].source)) {
                    nd.ents[j].id = old->ents[i].id;
                    kept = true;
                }
            if (!kept && old->ents[i].id) xg_table_remove(a->table, old->ents[i].id);
        }
        nd.tmap = old->tmap;
        nd.last_mapped = old->last_mapped;
        old->def = NULL; /* already freed by the session: routes are freed below */
        for (size_t g = 0; old->routes && old->routes[g]; g++)
            free(old->routes[g]);
        free(old->routes);
        free(old->ents);
        *old = nd;
    } else {
        struct dev *nv = realloc(c->devs, (c->n_devs + 1) * sizeof *nv);
        if (!nv) goto nomem;
        c->devs = nv;
        c->devs[c->n_devs++] = nd;
    }
    XG_INFO_PEER(&c->lim_device, a->name,
                 "peer %s: device %" PRIu32 " (%s): %zu group(s), %zu pose entit%s%s", c->peer,
                 def->device_id, dtype, def->n_groups, nd.n_ents, nd.n_ents == 1 ? "y" : "ies",
                 old ? " (re-definition)" : "");
    return 0;
nomem:
    if (nd.routes)
        for (size_t g = 0; g < def->n_groups; g++)
            free(nd.routes[g]);
    free(nd.routes);
    free(nd.ents);
    return -ENOMEM;
}

static void dev_drop(struct rgmp_client *c, uint32_t id)
{
    for (size_t i = 0; i < c->n_devs; i++)
        if (c->devs[i].device_id == id) {
            struct dev *d = &c->devs[i];
            for (size_t g = 0; d->routes && d->routes[g]; g++)
                free(d->routes[g]);
            free(d->routes);
            free(d->ents);
            c->devs[i] = c->devs[--c->n_devs];
            return;
        }
}

/* ---- data frames ---- */

static int64_t capture_time(struct xg_adapter *a, struct rgmp_client *c, struct dev *d,
                            uint64_t ts_us, int64_t receive_ns)
{
    int64_t src_ns =
        (int64_t)(ts_us > (uint64_t)(INT64_MAX / 1000) ? (uint64_t)(INT64_MAX / 1000) : ts_us) *
        1000;
    if (d->def->epoch == RGMP_EPOCH_UNIX) {
        int64_t t = xg_clock_wall_to_mono_ns(src_ns);
        int64_t diff = t - receive_ns;
        if (diff < 5 * XG_NS_PER_S && diff > -5 * XG_NS_PER_S) return t;
        /* the peer's wall clock disagrees with ours: estimate the offset instead */
        if (!d->clock_fallback_warned) {
            d->clock_fallback_warned = true;
            XG_WARN_PEER(&c->lim_definition, a->name,
                         "peer %s: device %" PRIu32 ": unix_epoch timestamp_us = %" PRIu64
                         " is %.3f s away from our wall clock: using offset estimation",
                         c->peer, d->device_id, ts_us, (double)diff * 1e-9);
        }
    }
    /* frames read in one burst map to (nearly) the same receive time: keep them apart */
    int64_t t = xg_adapter_map_time(a, &d->tmap, src_ns, receive_ns, c->peer);
    if (t <= d->last_mapped) t = d->last_mapped + 1;
    d->last_mapped = t;
    return t;
}

/* Root-frame pose of entity i (composing up the reference chain). */
static bool resolve_root(struct dev *d, size_t i, int depth)
{
    struct ent *e = &d->ents[i];
    if (!e->has_local) return false;
    if (e->parent < 0) {
        e->root = e->local;
        e->has_root = true;
        return true;
    }
    if (depth > MAX_DEPTH) return false;
    struct ent *p = &d->ents[e->parent];
    if (!p->has_root && !resolve_root(d, (size_t)e->parent, depth + 1)) return false;
    e->root = rgmp_transform_compose(&p->root, &e->local);
    e->has_root = true;
    return true;
}

/* Rotation (root frame) that expresses a vector given in frame `ref` of entity e. */
static bool vec_rotation(struct dev *d, const struct ent *e, const char *ref, struct xg_quat *q)
{
    *q = XG_QUAT_IDENTITY;
    const char *frame = ref ? ref : e->frame; /* no reference_frame: the target's own frame */
    long k = ent_index(d, frame);
    if (k < 0) return true; /* a frame that is not streamed: the root frame */
    if (!d->ents[k].has_root && !resolve_root(d, (size_t)k, 0)) return false;
    *q = d->ents[k].root.orientation;
    return true;
}

/* Suggested kind from the target_frame name (naming rules may change it). */
static enum xg_kind kind_of(const char *frame)
{
    if (!strcmp(frame, "head")) return XG_KIND_HEAD;
    if (!strcmp(frame, "left_hand")) return XG_KIND_LEFT_HAND;
    if (!strcmp(frame, "right_hand")) return XG_KIND_RIGHT_HAND;
    return XG_KIND_RIGID_BODY;
}

static void handle_data(struct xg_adapter *a, struct rgmp_client *c, const struct rgmp_event *ev,
                        int64_t receive_ns)
{
    struct dev *d = dev_find(c, ev->device_id);
    if (!d || !d->def || ev->frame.group_id >= d->def->n_groups) return;
    const struct rgmp_group *gr = &d->def->groups[ev->frame.group_id];
    struct route *routes = d->routes[ev->frame.group_id];
    int64_t cap = capture_time(a, c, d, ev->frame.timestamp_us, receive_ns);
    c->frames++;

    for (size_t i = 0; i < d->n_ents; i++) {
        d->ents[i].touched = false;
        d->ents[i].has_v = d->ents[i].has_w = false;
    }
    /* pass 1: poses and velocities of this frame (root cache invalidated for touched chains) */
    for (size_t k = 0; k < gr->n_streams; k++) {
        const struct rgmp_stream *s = &gr->streams[k];
        const struct route *r = &routes[k];
        const uint8_t *vals = rgmp_data_stream(d->def, &ev->frame, k);
        if (!vals || r->kind == R_NONE || r->ent < 0) continue;
        struct ent *e = &d->ents[r->ent];
        struct xg_error err = {0};
        if (r->kind == R_POSE) {
            struct rgmp_pose p;
            if (rgmp_pose_from_values(s, vals, &p, &err) < 0) {
                c->rejected++;
                a->drops++;
                XG_DEBUG(a->name, "device %" PRIu32 ", group %" PRIu32 ", stream %zu: %s",
                         d->device_id, ev->frame.group_id, k, err.msg);
                continue;
            }
            if (!e->has_local) e->local = (struct rgmp_pose){XG_VEC3_ZERO, XG_QUAT_IDENTITY};
            if (s->measure != RGMP_ORIENTATION) e->local.position = p.position;
            if (s->measure != RGMP_POSITION) e->local.orientation = p.orientation;
            e->has_local = true;
            e->touched = true;
            e->smp.flags |= s->measure == RGMP_TRANSFORM  ? XG_SAMPLE_POSE
                            : s->measure == RGMP_POSITION ? XG_SAMPLE_POSITION
                                                          : XG_SAMPLE_ORIENTATION;
        } else if (r->kind == R_VEL || r->kind == R_ANGVEL) {
            struct xg_vec3 v;
            if (rgmp_vec3_from_values(s, vals, &v, &err) < 0) {
                c->rejected++;
                a->drops++;
                continue;
            }
            if (r->kind == R_VEL) {
                e->v = v;
                e->has_v = true;
                e->v_ref = s->reference_frame;
            } else {
                e->w = v;
                e->has_w = true;
                e->w_ref = s->reference_frame;
            }
            e->touched = true;
        }
    }
    for (size_t i = 0; i < d->n_ents; i++)
        d->ents[i].has_root = false;

    /* pass 2: one sample per touched entity */
    for (size_t i = 0; i < d->n_ents; i++) {
        struct ent *e = &d->ents[i];
        if (!e->touched) continue;
        struct xg_sample s = {.capture_ns = cap, .receive_ns = receive_ns};
        uint32_t pflags = e->smp.flags & XG_SAMPLE_POSE;
        e->smp.flags = 0;
        if (pflags) {
            if (!resolve_root(d, i, 0)) {
                c->unresolved++; /* the parent frame has no pose yet */
                continue;
            }
            /* a partial pose (POSITION or ORIENTATION alone) of a composed frame changes both */
            s.flags |= e->parent >= 0 ? XG_SAMPLE_POSE : pflags;
            s.position = e->root.position;
            s.orientation = e->root.orientation;
        }
        struct xg_quat q;
        if (e->has_v && vec_rotation(d, e, e->v_ref, &q)) {
            s.velocity = xg_quat_rotate(q, e->v);
            s.flags |= XG_SAMPLE_VELOCITY;
        }
        if (e->has_w && vec_rotation(d, e, e->w_ref, &q)) {
            s.angular_velocity = xg_quat_rotate(q, e->w);
            s.flags |= XG_SAMPLE_ANGULAR_VELOCITY;
        }
        if (!s.flags) continue;
        xg_frame_sample_in(&d->frame, &s);
        int rc = -ENOENT;
        if (e->id) rc = xg_table_push(a->table, e->id, &s);
        if (rc == -ENOENT) {
            struct xg_entity_key key = {.source = e->source, .kind = kind_of(e->frame)};
            rc = xg_table_update(a->table, a, &key, &s, &e->id);
        }
        if (rc == 0)
            a->samples_in++;
        else
            a->drops++;
    }

    /* the hierarchy: a composed entity's reference frame is its parent (checked every frame:
     * a parent may get its first pose after its child, and ids change when entities expire) */
    for (size_t i = 0; i < d->n_ents; i++) {
        const struct ent *e = &d->ents[i];
        uint32_t pid = e->parent >= 0 ? d->ents[e->parent].id : 0;
        const struct xg_entity *te = e->id && pid ? xg_table_get(a->table, e->id) : NULL;
        if (te && xg_entity_parent(te) != pid) xg_table_set_parent(a->table, e->id, pid);
    }

    /* pass 3: extras */
    for (size_t k = 0; k < gr->n_streams; k++) {
        const struct rgmp_stream *s = &gr->streams[k];
        const struct route *r = &routes[k];
        if ((r->kind != R_FLAGS && r->kind != R_CUSTOM) || r->ent < 0) continue;
        uint32_t id = d->ents[r->ent].id;
        const uint8_t *vals = rgmp_data_stream(d->def, &ev->frame, k);
        if (!id || !vals) {
            c->extras_dropped++; /* no pose for the entity yet */
            continue;
        }
        if (r->kind == R_FLAGS) {
            uint64_t bits = rgmp_value_u64(&s->type, vals, 0);
            for (int b = 0; b < r->count; b++)
                xg_table_set_button(a->table, id, r->base + b, (bits >> b) & 1u);
        } else {
            for (int j = 0; j < r->count; j++) {
                double v = s->type.base == RGMP_UINT32 || s->type.base == RGMP_UINT64
                               ? (double)rgmp_value_u64(&s->type, vals, (uint32_t)j)
                           : is_int_type(s->type.base)
                               ? (double)rgmp_value_i64(&s->type, vals, (uint32_t)j)
                               : rgmp_value_f64(&s->type, vals, (uint32_t)j);
                if (isfinite(v)) xg_table_set_analog(a->table, id, r->base + j, v);
            }
        }
    }
}

/* ---- connection ---- */

/* Close the connection; with `why` (the reason, already logged) reconnect after a backoff. */
static void close_connection(struct xg_adapter *a, const char *why)
{
    struct rgmp_client *c = a->priv;
    if (c->bev) {
        xg_tcp_free(c->bev);
        c->bev = NULL;
    }
    for (size_t i = 0; i < c->n_devs; i++)
        dev_retire(a, &c->devs[i], false);
    while (c->n_devs)
        dev_drop(c, c->devs[0].device_id);
    if (c->sess_live) {
        c->out_of_order += c->sess.frames_out_of_order;
        rgmp_session_free(&c->sess);
        c->sess_live = false;
    }
    if (why && c->tc) xg_tclient_closed(c->tc, why);
}

static void protocol_error(struct xg_adapter *a, const struct xg_error *err)
{
    struct rgmp_client *c = a->priv;
    c->protocol_errors++;
    a->errors++;
    XG_WARN_PEER(&c->lim_protocol, a->name, "protocol error from %s: %s; closing the connection",
                 c->peer, err->msg);
    char why[XG_ERROR_MAX + 32];
    snprintf(why, sizeof why, "protocol error: %s", err->msg);
    close_connection(a, why);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    struct xg_adapter *a = arg;
    struct rgmp_client *c = a->priv;
    xg_tserver_read_more(bev); /* a whole frame per pass, not 4 KiB of it */
    for (;;) {
        size_t len = xg_tcp_in_len(bev);
        if (len < RGMP_HEADER_LEN) return;
        const uint8_t *hb = xg_tcp_in_pullup(bev, RGMP_HEADER_LEN);
        struct rgmp_header h;
        size_t need;
        struct xg_error err = {0};
        if (!hb) {
            xg_error_set(&err, -ENOMEM, "out of memory buffering a frame header");
            protocol_error(a, &err);
            return;
        }
        int rc = rgmp_frame_split(hb, RGMP_HEADER_LEN, &c->limits, &h, &need, &err);
        if (rc < 0) {
            protocol_error(a, &err);
            return;
        }
        if (len < need) return; /* bounded: need <= 8 + the configured limit */
        const uint8_t *buf = xg_tcp_in_pullup(bev, need);
        if (!buf) {
            xg_error_set(&err, -ENOMEM, "out of memory buffering a %zu-byte frame", need);
            protocol_error(a, &err);
            return;
        }
        struct rgmp_event ev;
        rc = rgmp_session_handle(&c->sess, &h, buf + RGMP_HEADER_LEN, &ev, &err);
        if (rc < 0) {
            protocol_error(a, &err);
            return;
        }
        c->bytes_in += need;
        switch (ev.type) {
        case RGMP_EV_DEFINITION:
            c->definitions++;
            if (ev.replaced) c->redefinitions++;
            if (!ev.replaced && c->n_devs >= (size_t)c->max_devices) {
                xg_error_set(&err, -EPROTO,
                             "device %" PRIu32 ": definition of device number %zu: above "
                             "max_devices (%" PRId64 ")",
                             ev.device_id, c->n_devs + 1, c->max_devices);
                protocol_error(a, &err);
                return;
            }
            if (dev_map(a, c, ev.def) < 0) {
                xg_error_set(&err, -ENOMEM, "device %" PRIu32 ": out of memory mapping it",
                             ev.device_id);
                protocol_error(a, &err);
                return;
            }
            xg_tclient_streaming(c->tc);
            break;
        case RGMP_EV_DATA:
            handle_data(a, c, &ev, xg_clock_mono_ns());
            break;
        case RGMP_EV_DROPPED:
            c->out_of_order++;
            c->sess.frames_out_of_order = 0;
            a->drops++;
            XG_DEBUG(a->name, "peer %s: %s", c->peer, err.msg);
            break;
        case RGMP_EV_DISCONNECT: {
            c->device_disconnects++;
            struct dev *d = dev_find(c, ev.device_id);
            if (d) {
                dev_retire(a, d, true);
                dev_drop(c, ev.device_id);
            }
            XG_INFO_PEER(&c->lim_device, a->name,
                         "peer %s: device %" PRIu32 " disconnected (its entities removed)", c->peer,
                         ev.device_id);
            break;
        }
        }
        xg_tcp_in_drain(bev, need);
        if (!c->bev) return;
    }
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct xg_adapter *a = arg;
    struct rgmp_client *c = a->priv;
    char why[200];
    if (what & XG_TCP_EOF) {
        size_t left = xg_tcp_in_len(bev);
        struct xg_error err = {0};
        if (rgmp_frame_eof(left, &err) < 0) {
            protocol_error(a, &err);
            return;
        }
        c->disconnects++;
        XG_WARN(a->name, "%s closed the connection; reconnecting", c->peer);
        snprintf(why, sizeof why, "%s closed the connection", c->peer);
        close_connection(a, why);
        return;
    }
    if (what & XG_TCP_ERROR) {
        int e = errno;
        XG_WARN(a->name, "connection to %s lost: %s", c->peer, strerror(e));
        snprintf(why, sizeof why, "connection to %s lost: %s", c->peer, strerror(e));
        c->disconnects++;
        close_connection(a, why);
    }
}

/* The transport connected (core/net/transport_client.h): the session starts. */
static void on_connected(void *arg, struct bufferevent *bev, struct xg_tls_session *tls)
{
    struct xg_adapter *a = arg;
    struct rgmp_client *c = a->priv;
    (void)tls;
    snprintf(c->peer, sizeof c->peer, "%s", xg_tclient_peer(c->tc));
    c->bev = bev;
    /* pause reading while a whole maximal frame (+ one read) is buffered */
    size_t maxf = c->limits.max_definition_len > c->limits.max_data_len
                      ? c->limits.max_definition_len
                      : c->limits.max_data_len;
    struct xg_tcp_conf tc = {.read = read_cb,
                             .event = event_cb,
                             .arg = a,
                             .read_max = maxf + RGMP_HEADER_LEN + 65536,
                             .read_only = true};
    xg_tcp_start(c->bev, &tc);
    rgmp_session_init(&c->sess, &c->limits, c->strict);
    c->sess_live = true;
}

/* ---- ops ---- */

static int client_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct rgmp_client *c = calloc(1, sizeof *c);
    if (!c) return -ENOMEM;
    a->priv = c;
    return rgmp_client_conf_read(c, conf, err);
}

static int client_start(struct xg_adapter *a)
{
    struct rgmp_client *c = a->priv;
    struct xg_tclient_conf tcc = {.component = a->name,
                                  .host = c->host,
                                  .port = c->port,
                                  .connect_timeout_ns = CONNECT_TIMEOUT_NS};
    struct xg_tclient_ops ops = {.connected = on_connected};
    c->tc = xg_tclient_new(a->base, &tcc, &ops, a);
    if (!c->tc) return -ENOMEM;
    xg_tclient_start(c->tc);
    return 0;
}

static void client_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct rgmp_client *c = a->priv;
    st->state = "stopped";
    if (c->tc) xg_tclient_status(&c->tc, 1, st);
    snprintf(st->peer, sizeof st->peer, "%s", c->tc ? xg_tclient_peer(c->tc) : c->peer);
    xg_status_counter(st, "disconnects", (double)c->disconnects);
    xg_status_counter(st, "protocol_errors", (double)c->protocol_errors);
    xg_status_counter(st, "definitions", (double)c->definitions);
    xg_status_counter(st, "redefinitions", (double)c->redefinitions);
    xg_status_counter(st, "data_frames", (double)c->frames);
    xg_status_counter(st, "rgmp_frames_out_of_order", (double)c->out_of_order);
    xg_status_counter(st, "samples_rejected", (double)c->rejected);
    xg_status_counter(st, "device_disconnects", (double)c->device_disconnects);
    xg_status_gauge(st, "devices", (double)c->n_devs);
    xg_status_counter(st, "bytes_in", (double)c->bytes_in);
    xg_status_counter(st, "unresolved_parents", (double)c->unresolved);
}

static void client_stop(struct xg_adapter *a)
{
    struct rgmp_client *c = a->priv;
    if (!c) return;
    xg_tclient_stop(c->tc);
    close_connection(a, NULL);
}

static void client_destroy(struct xg_adapter *a)
{
    struct rgmp_client *c = a->priv;
    if (!c) return;
    client_stop(a);
    xg_tclient_free(c->tc);
    for (size_t i = 0; i < c->n_warned; i++)
        free(c->warned[i]);
    free(c->devs);
    free(c);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_rgmp_client_ops = {
    .type = "rgmp-client",
    .is_sink = false,
    .create = client_create,
    .start = client_start,
    .status = client_status,
    .stop = client_stop,
    .destroy = client_destroy,
};
