/* `vmc` egress: the sink's dirty entities → OSC bundles, profile vmc or vmt (vmc.h).
 *
 * Each drain is one frame: the dirty entities with their poses predicted to the drain time, in
 * the adapter's wire frame (the `unity` preset unless `frame:` says otherwise). The frame's
 * messages are packed into bundles (time tag "immediately") of at most `mtu` bytes each, one
 * bundle per datagram; a frame that does not fit one datagram continues in the next ones.
 *
 * Profile vmc (to a marionette: EVMC4U, VMC4UE, VSeeFace/Warudo receivers...):
 *   /VMC/Ext/OK 1 and /VMC/Ext/T (seconds since the adapter started) first, every frame;
 *   the skeleton: entities named "<prefix><bone>", <bone> a HumanBodyBones name or the name
 *   `bones:` maps one to (the prefix given by `skeleton:`, or by default the one of the first
 *   entity named ".../Hips" (or the Hips' mapping) seen) as
 *   /VMC/Ext/Root/Pos "root" (identity) and /VMC/Ext/Bone/Pos, each bone local to its nearest
 *   ancestor of the humanoid hierarchy that exists in the table (the Hips local to the root);
 *   every other entity as a device, its entity name as serial: kind head → /VMC/Ext/Hmd/Pos,
 *   controller / left_hand / right_hand → /VMC/Ext/Con/Pos, the rest → /VMC/Ext/Tra/Pos.
 * Profile vmt (to Virtual Motion Tracker, an OpenVR driver): one /VMT/Room/Unity per entity,
 *   (i index, i enable, f timeoffset 0, f x y z, f qx qy qz qw); enable 2 for left_hand, 3 for
 *   right_hand, 1 (tracker) for other kinds, 0 when the source reports the entity inactive.
 *   Indices 0..57: the entity keeps its index while it lives; a new entity takes the index of the
 *   first `trackers:` rule matching its name whose index is free, else the index it had before
 *   (same name), else the lowest free index no rule names, else the lowest free one. None left:
 *   not sent, counted (vmt_no_index) and logged. When the entity leaves the table its tracker is
 *   disabled (one message with enable 0) and the index freed. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vmc/vmc.h"
#include "mappings/frame.h"

struct item {
    const struct xg_entity *e;
    struct xg_pose pose; /* internal frame */
    int bone;            /* humanoid bone index in the skeleton, -1 = device */
};

struct frame_ctx {
    struct vmc_egress *eg;
    struct xg_writer w;
    size_t n_elements; /* in the current datagram */
    uint8_t msg[2048]; /* one encoded message */
    struct item *items;
    size_t n, cap;
    int64_t now_ns;
};

int vmc_egress_init(struct vmc_egress *eg, struct xg_adapter *a, enum vmc_profile profile,
                    size_t mtu)
{
    memset(eg, 0, sizeof *eg);
    eg->a = a;
    eg->profile = profile;
    eg->mtu = mtu < 256 ? 256 : mtu;
    eg->skeleton_auto = true;
    xg_egress_controls_init(&eg->controls, 0, 0,
                            "VMC and VMT pose messages have no field for them");
    eg->pkt = malloc(eg->mtu);
    return eg->pkt ? 0 : -ENOMEM;
}

void vmc_egress_free(struct vmc_egress *eg)
{
    free(eg->pkt);
    free(eg->skeleton);
    for (size_t i = 0; i < eg->n_rules; i++)
        free(eg->rules[i].match);
    for (int b = 0; b < VMC_BONES; b++)
        free(eg->bone_seg[b]);
    free(eg->rules);
    memset(eg, 0, sizeof *eg);
}

/* ---- datagram packing ---- */

static void dgram_begin(struct frame_ctx *c)
{
    xg_writer_init(&c->w, c->eg->pkt, c->eg->mtu);
    osc_bundle_begin(&c->w, OSC_TIMETAG_IMMEDIATE);
    c->n_elements = 0;
}

static void dgram_flush(struct frame_ctx *c)
{
    struct vmc_egress *eg = c->eg;
    if (!c->n_elements) return;
    if (eg->send) eg->send(eg->send_user, eg->pkt, c->w.len);
    eg->datagrams_out++;
    eg->bundles_out++;
    dgram_begin(c);
}

/* Encode one message and append it as an element, opening a new datagram when it does not fit. */
static bool put(struct frame_ctx *c, const char *address, const char *types,
                const struct osc_arg *args, size_t n)
{
    struct vmc_egress *eg = c->eg;
    struct xg_writer mw;
    xg_writer_init(&mw, c->msg, sizeof c->msg);
    if (osc_encode_message(&mw, address, types, args, n) || 16 + 4 + mw.len > eg->mtu) {
        eg->oversize++;
        eg->a->drops++;
        if (eg->oversize == 1 || eg->oversize % 1000 == 0)
            XG_WARN(eg->a->name, "%s not sent: does not fit one datagram of mtu %zu (%llu so far)",
                    address, eg->mtu, (unsigned long long)eg->oversize);
        return false;
    }
    if (c->w.len + 4 + mw.len > eg->mtu) dgram_flush(c);
    xg_write_be32(&c->w, (uint32_t)mw.len);
    xg_write_bytes(&c->w, c->msg, mw.len);
    c->n_elements++;
    eg->messages_out++;
    return true;
}

static struct osc_arg arg_f(double v)
{
    struct osc_arg a = {.tag = 'f'};
    a.v.f = (float)v;
    return a;
}

static struct osc_arg arg_i(int32_t v)
{
    struct osc_arg a = {.tag = 'i'};
    a.v.i = v;
    return a;
}

static struct osc_arg arg_s(const char *s)
{
    struct osc_arg a = {.tag = 's'};
    a.v.s.p = s;
    a.v.s.len = strlen(s);
    return a;
}

/* "s" + pose as 7 floats (wire frame) */
static bool put_pose(struct frame_ctx *c, const char *address, const char *name, struct xg_vec3 p,
                     struct xg_quat q)
{
    struct osc_arg a[8] = {arg_s(name), arg_f(p.x), arg_f(p.y), arg_f(p.z),
                           arg_f(q.x),  arg_f(q.y), arg_f(q.z), arg_f(q.w)};
    return put(c, address, "sfffffff", a, 8);
}

/* ---- collecting the frame ---- */

static int collect(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct frame_ctx *c = user;
    xg_egress_controls_check(&c->eg->controls, c->eg->a->name, e);
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 64;
        struct item *ni = realloc(c->items, nc * sizeof *ni);
        if (!ni) return 0; /* this entity is skipped; it is sent again when it next moves */
        c->items = ni;
        c->cap = nc;
    }
    c->items[c->n++] = (struct item){.e = e, .pose = *pose, .bone = -1};
    return 0;
}

static const char *last_segment(const char *name)
{
    const char *s = strrchr(name, '/');
    return s ? s + 1 : name;
}

/* The entity-name segment of bone b: its `bones:` mapping, else the HumanBodyBones name. */
static const char *bone_seg(const struct vmc_egress *eg, int b)
{
    return eg->bone_seg[b] ? eg->bone_seg[b] : vmc_bones[b].name;
}

/* Bone whose segment is `seg`: a `bones:` mapping (exact), else a HumanBodyBones name (any case)
 * that is not mapped to another segment; -1 if none. */
static int seg_bone(const struct vmc_egress *eg, const char *seg)
{
    for (int b = 0; b < VMC_BONES; b++)
        if (eg->bone_seg[b] && strcmp(eg->bone_seg[b], seg) == 0) return b;
    int b = vmc_bone_find(seg, strlen(seg));
    return b >= 0 && !eg->bone_seg[b] ? b : -1;
}

/* Profile vmc: choose the skeleton prefix and mark the items that are its bones. */
static void find_bones(struct frame_ctx *c)
{
    struct vmc_egress *eg = c->eg;
    /* an auto-chosen skeleton is kept while its Hips entity lives */
    if (eg->skeleton_auto && eg->skeleton && !xg_table_find(eg->a->table, eg->skel_hips)) {
        free(eg->skeleton);
        eg->skeleton = NULL;
    }
    for (size_t i = 0; eg->skeleton_auto && !eg->skeleton && i < c->n; i++) {
        const struct xg_entity *e = c->items[i].e;
        const char *seg = last_segment(xg_entity_name(e));
        if (seg_bone(eg, seg) == 0 &&
            (eg->skeleton = strndup(xg_entity_name(e), (size_t)(seg - xg_entity_name(e))))) {
            snprintf(eg->skel_hips, sizeof eg->skel_hips, "%s", xg_entity_name(e));
            XG_INFO(eg->a->name, "skeleton: entities '%s<bone>' are sent as VMC bones",
                    eg->skeleton);
        }
    }
    if (!eg->skeleton) return;
    size_t pl = strlen(eg->skeleton);
    for (size_t i = 0; i < c->n; i++) {
        const struct xg_entity *e = c->items[i].e;
        if (strncmp(xg_entity_name(e), eg->skeleton, pl) != 0) continue;
        const char *rest = xg_entity_name(e) + pl;
        if (strchr(rest, '/')) continue;
        c->items[i].bone = seg_bone(eg, rest);
    }
}

/* World pose (wire frame) of bone b's nearest existing ancestor; false = none (the root). */
static bool parent_pose(struct frame_ctx *c, int b, struct xg_pose *out)
{
    struct vmc_egress *eg = c->eg;
    for (int p = vmc_bones[b].parent; p >= 0; p = vmc_bones[p].parent) {
        for (size_t i = 0; i < c->n; i++)
            if (c->items[i].bone == p) {
                *out = c->items[i].pose;
                xg_frame_pose_out(eg->a->frame, out);
                return true;
            }
        char name[XG_NAME_MAX];
        snprintf(name, sizeof name, "%s%s", eg->skeleton, bone_seg(eg, p));
        const struct xg_entity *pe = xg_table_find(eg->a->table, name);
        if (pe) {
            xg_entity_predict_at(eg->a->table, pe, c->now_ns, out);
            xg_frame_pose_out(eg->a->frame, out);
            return true;
        }
    }
    return false;
}

static void frame_vmc(struct frame_ctx *c)
{
    struct vmc_egress *eg = c->eg;
    find_bones(c);
    struct osc_arg ok = arg_i(1);
    put(c, "/VMC/Ext/OK", "i", &ok, 1);
    struct osc_arg t = arg_f((double)(c->now_ns - eg->start_ns) * 1e-9);
    put(c, "/VMC/Ext/T", "f", &t, 1);
    bool skeleton = false;
    for (size_t i = 0; i < c->n && !skeleton; i++)
        skeleton = c->items[i].bone >= 0;
    if (skeleton) put_pose(c, "/VMC/Ext/Root/Pos", "root", XG_VEC3_ZERO, XG_QUAT_IDENTITY);
    for (size_t i = 0; i < c->n; i++) {
        struct item *it = &c->items[i];
        if (it->bone < 0) continue;
        struct xg_pose w = it->pose, pp;
        xg_frame_pose_out(eg->a->frame, &w);
        struct xg_vec3 p = w.position;
        struct xg_quat q = xg_quat_normalize(w.orientation);
        if (parent_pose(c, it->bone, &pp)) {
            struct xg_quat inv = xg_quat_conj(xg_quat_normalize(pp.orientation));
            q = xg_quat_normalize(xg_quat_mul(inv, q));
            p = xg_quat_rotate(inv, xg_vec3_sub(p, pp.position));
        }
        if (put_pose(c, "/VMC/Ext/Bone/Pos", vmc_bones[it->bone].name, p, q)) {
            eg->bones_out++;
            eg->a->samples_out++;
        }
    }
    for (size_t i = 0; i < c->n; i++) {
        struct item *it = &c->items[i];
        if (it->bone >= 0) continue;
        struct xg_pose w = it->pose;
        xg_frame_pose_out(eg->a->frame, &w);
        enum xg_kind k = xg_entity_kind(it->e);
        const char *addr =
            k == XG_KIND_HEAD ? "/VMC/Ext/Hmd/Pos"
            : k == XG_KIND_CONTROLLER || k == XG_KIND_LEFT_HAND || k == XG_KIND_RIGHT_HAND
                ? "/VMC/Ext/Con/Pos"
                : "/VMC/Ext/Tra/Pos";
        if (put_pose(c, addr, xg_entity_name(it->e), w.position,
                     xg_quat_normalize(w.orientation))) {
            eg->devices_out++;
            eg->a->samples_out++;
        }
    }
}

/* ---- profile vmt ---- */

static bool rule_names(const struct vmc_egress *eg, int idx)
{
    for (size_t r = 0; r < eg->n_rules; r++)
        if (eg->rules[r].index == idx) return true;
    return false;
}

static int vmt_index(struct vmc_egress *eg, const struct xg_entity *e)
{
    for (int i = 0; i < VMT_TRACKERS; i++)
        if (eg->vmt_id[i] == xg_entity_id(e)) return i;
    int idx = -1;
    for (size_t r = 0; r < eg->n_rules && idx < 0; r++)
        if (!eg->vmt_id[eg->rules[r].index] &&
            fnmatch(eg->rules[r].match, xg_entity_name(e), 0) == 0)
            idx = eg->rules[r].index;
    for (int i = 0; i < VMT_TRACKERS && idx < 0; i++)
        if (!eg->vmt_id[i] && strcmp(eg->vmt_name[i], xg_entity_name(e)) == 0) idx = i;
    for (int i = 0; i < VMT_TRACKERS && idx < 0; i++)
        if (!eg->vmt_id[i] && !eg->vmt_name[i][0] && !rule_names(eg, i)) idx = i;
    for (int i = 0; i < VMT_TRACKERS && idx < 0; i++)
        if (!eg->vmt_id[i] && !rule_names(eg, i)) idx = i;
    for (int i = 0; i < VMT_TRACKERS && idx < 0; i++)
        if (!eg->vmt_id[i]) idx = i;
    if (idx < 0) {
        eg->no_index++;
        eg->a->drops++;
        XG_WARN_PEER(&eg->lim_no_index, eg->a->name,
                     "entity '%s' not sent: all %d VMT tracker indices are taken (vmt_no_index)",
                     xg_entity_name(e), VMT_TRACKERS);
        return -1;
    }
    eg->vmt_id[idx] = xg_entity_id(e);
    snprintf(eg->vmt_name[idx], sizeof eg->vmt_name[idx], "%s", xg_entity_name(e));
    XG_INFO(eg->a->name, "entity '%s' is VMT tracker %d", xg_entity_name(e), idx);
    return idx;
}

static bool put_vmt(struct frame_ctx *c, int idx, int enable, struct xg_vec3 p, struct xg_quat q)
{
    struct osc_arg a[10] = {arg_i(idx), arg_i(enable), arg_f(0.0), arg_f(p.x), arg_f(p.y),
                            arg_f(p.z), arg_f(q.x),    arg_f(q.y), arg_f(q.z), arg_f(q.w)};
    return put(c, "/VMT/Room/Unity", "iiffffffff", a, 10) && (c->eg->trackers_out++, true);
}

static void frame_vmt(struct frame_ctx *c)
{
    struct vmc_egress *eg = c->eg;
    for (size_t i = 0; i < c->n; i++) {
        struct item *it = &c->items[i];
        int idx = vmt_index(eg, it->e);
        if (idx < 0) continue;
        struct xg_pose w = it->pose;
        xg_frame_pose_out(eg->a->frame, &w);
        enum xg_kind k = xg_entity_kind(it->e);
        int enable = !w.active ? 0 : k == XG_KIND_LEFT_HAND ? 2 : k == XG_KIND_RIGHT_HAND ? 3 : 1;
        if (put_vmt(c, idx, enable, w.position, xg_quat_normalize(w.orientation)))
            eg->a->samples_out++;
    }
}

void vmc_egress_drain(struct vmc_egress *eg, int64_t now_ns)
{
    struct frame_ctx *c = calloc(1, sizeof *c);
    if (!c) return;
    c->eg = eg;
    c->now_ns = now_ns;
    xg_table_drain(eg->a->table, eg->a->index, now_ns, collect, c);
    if (eg->send && c->n) {
        dgram_begin(c);
        if (eg->profile == VMC_PROFILE_VMT)
            frame_vmt(c);
        else
            frame_vmc(c);
        dgram_flush(c);
    }
    free(c->items);
    free(c);
}

void vmc_egress_entity_gone(struct vmc_egress *eg, const struct xg_entity *e)
{
    if (eg->profile != VMC_PROFILE_VMT) return;
    for (int i = 0; i < VMT_TRACKERS; i++)
        if (eg->vmt_id[i] == xg_entity_id(e)) {
            eg->vmt_id[i] = 0;
            if (!eg->send) return;
            struct frame_ctx *c = calloc(1, sizeof *c);
            if (!c) return;
            c->eg = eg;
            dgram_begin(c);
            if (put_vmt(c, i, 0, XG_VEC3_ZERO, XG_QUAT_IDENTITY)) eg->disabled_out++;
            dgram_flush(c);
            free(c);
            return;
        }
}
