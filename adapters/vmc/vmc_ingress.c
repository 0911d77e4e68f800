/* `vmc` ingress: VMC protocol OSC datagrams → entities (vmc.h).
 *
 * Entities (source names, before the adapter's rename rules):
 *   hmd/<serial>  kind head        from /VMC/Ext/Hmd/Pos
 *   con/<serial>  kind controller  from /VMC/Ext/Con/Pos
 *   tra/<serial>  kind rigid_body  from /VMC/Ext/Tra/Pos
 *   bone/<Name>   kind joint       from /VMC/Ext/Bone/Pos, Name a HumanBodyBones name
 * Device poses are the sender's tracking space. Bone poses are local to the parent bone: the world
 * pose is parent_world ⊗ local (q = q_parent ⊗ q_local, p = p_parent + q_parent·p_local), the
 * parent being the nearest ancestor in Unity's humanoid hierarchy that the sender has sent, and
 * the Hips' parent the root transform (/VMC/Ext/Root/Pos; identity until one arrives). The
 * composition runs in the wire frame, then the world pose goes through the adapter's frame. The
 * entity's `parent` is the parent bone's entity (none for the Hips).
 *
 * A datagram is read whole first; then every bone whose local pose, or an ancestor's, or the root
 * changed in it is recomputed and pushed once, with the receive time as capture time. A bone with
 * no message for the table's entity.stale_ms is forgotten (no longer an ancestor, no longer pushed
 * when its ancestors move; its entity goes STALE and expires): a sender that switches to an avatar
 * without, say, an UpperChest does not keep the old one's.
 *
 * Type tags are checked as OSC 1.0 says: a known address whose arguments are too few or of
 * another type is dropped and counted (drop_bad_args), extra trailing arguments are allowed (VMC
 * versions append fields); unknown addresses are counted (messages_ignored) and ignored. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vmc/vmc.h"
#include "core/names.h"
#include "mappings/frame.h"

const char *const vmc_reason_names[VMC_R_COUNT] = {
    "drop_malformed", "drop_bad_type_tag", "drop_bad_address",  "drop_bad_bundle", "drop_depth",
    "drop_bad_args",  "drop_bad_value",    "drop_unknown_bone", "drop_limit"};

#define NAME_LOG_MAX 64 /* peer strings are cut to this many bytes in log lines */

static void bad(struct vmc_ingress *in, enum vmc_reason r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void bad(struct vmc_ingress *in, enum vmc_reason r, const char *fmt, ...)
{
    in->reasons[r]++;
    in->a->drops++;
    if (!xg_log_enabled(XG_LOG_WARN)) return;
    char msg[XG_ERROR_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    XG_WARN_PEER(&in->lim[r], in->a->name, "peer %s: %s (dropped; %s)", in->peer, msg,
                 vmc_reason_names[r]);
}

int vmc_ingress_init(struct vmc_ingress *in, struct xg_adapter *a, int max_depth,
                     size_t max_devices)
{
    memset(in, 0, sizeof *in);
    in->a = a;
    in->max_depth = max_depth;
    in->max_devices = max_devices;
    in->last_ok_loaded = -1;
    in->root.q = XG_QUAT_IDENTITY;
    for (int i = 0; i < VMC_BONES; i++)
        in->bone_parent[i] = -2; /* unresolved */
    in->device_ids = calloc(max_devices ? max_devices : 1, sizeof *in->device_ids);
    in->device_src = calloc(max_devices ? max_devices : 1, sizeof *in->device_src);
    return in->device_ids && in->device_src ? 0 : -ENOMEM;
}

void vmc_ingress_free(struct vmc_ingress *in)
{
    free(in->device_ids);
    free(in->device_src);
    in->device_ids = NULL;
    in->device_src = NULL;
}

void vmc_ingress_sweep(struct vmc_ingress *in)
{
    for (size_t i = 0; i < in->max_devices; i++)
        if (in->device_ids[i] && !xg_table_get(in->a->table, in->device_ids[i])) {
            in->device_ids[i] = 0;
            in->n_devices--;
        }
    for (int b = 0; b < VMC_BONES; b++)
        if (in->bone_id[b] && !xg_table_get(in->a->table, in->bone_id[b])) in->bone_id[b] = 0;
}

/* ---- argument checks ---- */

/* The message's type tags start with `want`; else drop_bad_args naming address and tags. */
static bool want_types(struct vmc_ingress *in, const struct osc_message *m, const char *want)
{
    size_t n = strlen(want);
    if (m->n_types >= n && memcmp(m->types, want, n) == 0) return true;
    bool few = m->n_types < n;
    for (size_t i = 0; few && i < m->n_types; i++)
        if (m->types[i] != want[i]) few = false;
    bad(in, VMC_R_ARGS, "%.*s: type tags ',%.*s' (%s; needs ',%s')", (int)m->address_len,
        m->address, (int)(m->n_types > NAME_LOG_MAX ? NAME_LOG_MAX : m->n_types), m->types,
        few ? "too few arguments" : "mistyped arguments", want);
    return false;
}

/* Position (args 1-3) and quaternion (args 4-7) of a "sfffffff" message; drop_bad_value when not
 * a pose (named field and value). */
static bool read_pose(struct vmc_ingress *in, const struct osc_message *m,
                      const struct osc_arg *args, const char *what, struct xg_vec3 *p,
                      struct xg_quat *q)
{
    struct xg_sample s = {.flags = XG_SAMPLE_POSE};
    s.position = (struct xg_vec3){args[1].v.f, args[2].v.f, args[3].v.f};
    s.orientation = (struct xg_quat){args[4].v.f, args[5].v.f, args[6].v.f, args[7].v.f};
    const char *field = "";
    double value = 0;
    if (xg_sample_check(&s, &field, &value)) {
        bad(in, VMC_R_VALUE, "%.*s '%.*s': %s = %.9g is not a pose", (int)m->address_len,
            m->address, NAME_LOG_MAX, what, field, value);
        return false;
    }
    *p = s.position;
    *q = xg_quat_normalize(s.orientation);
    return true;
}

/* ---- devices ---- */

static const struct {
    const char *address, *prefix;
    enum xg_kind kind;
} devices[] = {{"/VMC/Ext/Hmd/Pos", "hmd", XG_KIND_HEAD},
               {"/VMC/Ext/Con/Pos", "con", XG_KIND_CONTROLLER},
               {"/VMC/Ext/Tra/Pos", "tra", XG_KIND_RIGID_BODY}};

/* Slot of device source `src`, or -1. */
static long device_slot(const struct vmc_ingress *in, const char *src)
{
    for (size_t i = 0; i < in->max_devices; i++)
        if (in->device_ids[i] && strcmp(in->device_src[i], src) == 0) return (long)i;
    return -1;
}

static void device_msg(struct vmc_ingress *in, const struct osc_message *m, int d)
{
    struct osc_arg args[8];
    if (!want_types(in, m, "sfffffff") || osc_args_get(m, args, 8) != 8) return;
    const struct osc_arg *serial = &args[0];
    if (serial->v.s.len == 0) {
        bad(in, VMC_R_VALUE, "%s: serial is empty", devices[d].address);
        return;
    }
    struct xg_sample s = {
        .capture_ns = in->now_ns, .receive_ns = in->now_ns, .flags = XG_SAMPLE_POSE};
    char what[NAME_LOG_MAX + 1];
    snprintf(what, sizeof what, "%.*s",
             (int)(serial->v.s.len > NAME_LOG_MAX ? NAME_LOG_MAX : serial->v.s.len), serial->v.s.p);
    if (!read_pose(in, m, args, what, &s.position, &s.orientation)) return;
    char src[XG_NAME_MAX];
    xg_name_fitf(src, sizeof src, "%s/%.*s", devices[d].prefix, (int)serial->v.s.len,
                 serial->v.s.p);
    struct xg_entity_key key = {.source = src, .kind = devices[d].kind};
    xg_frame_sample_in(in->a->frame, &s);
    /* the cap is checked before the table creates anything */
    long slot = device_slot(in, src);
    if (slot >= 0 && !xg_table_get(in->a->table, in->device_ids[slot])) {
        in->device_ids[slot] = 0; /* expired: counts as new */
        in->n_devices--;
        slot = -1;
    }
    if (slot < 0 && in->n_devices >= in->max_devices) {
        vmc_ingress_sweep(in);
        if (in->n_devices >= in->max_devices) {
            bad(in, VMC_R_LIMIT, "%s '%.*s': max_devices (%zu) device entities already exist",
                devices[d].address, NAME_LOG_MAX, src, in->max_devices);
            return;
        }
    }
    uint32_t id = 0;
    if (xg_table_update(in->a->table, in->a, &key, &s, &id) == 0 && slot < 0) {
        for (size_t i = 0; i < in->max_devices; i++)
            if (!in->device_ids[i]) {
                in->device_ids[i] = id;
                memcpy(in->device_src[i], src, sizeof src);
                in->n_devices++;
                break;
            }
    }
    in->device_msgs++;
}

/* ---- bones ---- */

static void bone_msg(struct vmc_ingress *in, const struct osc_message *m, bool root)
{
    struct osc_arg args[8];
    if (!want_types(in, m, "sfffffff") || osc_args_get(m, args, 8) != 8) return;
    const struct osc_arg *name = &args[0];
    int b = -1;
    if (!root && (b = vmc_bone_find(name->v.s.p, name->v.s.len)) < 0) {
        bad(in, VMC_R_BONE, "/VMC/Ext/Bone/Pos: bone '%.*s' is not a HumanBodyBones name",
            (int)(name->v.s.len > NAME_LOG_MAX ? NAME_LOG_MAX : name->v.s.len), name->v.s.p);
        return;
    }
    struct vmc_local l = {.have = true, .last_ns = in->now_ns};
    char what[NAME_LOG_MAX + 1];
    snprintf(what, sizeof what, "%.*s",
             (int)(name->v.s.len > NAME_LOG_MAX ? NAME_LOG_MAX : name->v.s.len), name->v.s.p);
    if (!read_pose(in, m, args, what, &l.p, &l.q)) return;
    if (root) {
        in->root = l;
        in->root_dirty = true;
        in->root_msgs++;
    } else {
        if (!in->bone[b].have) /* a new bone may become the parent of others */
            for (int i = 0; i < VMC_BONES; i++)
                in->bone_parent[i] = -2;
        in->bone[b] = l;
        in->bone_dirty[b] = true;
        in->bone_msgs++;
    }
}

/* Nearest received ancestor of b (-1: the root). */
static int resolve_parent(const struct vmc_ingress *in, int b)
{
    for (int p = vmc_bones[b].parent; p >= 0; p = vmc_bones[p].parent)
        if (in->bone[p].have) return p;
    return -1;
}

struct world {
    bool done, dirty;
    struct xg_vec3 p;
    struct xg_quat q;
};

static void world_of(struct vmc_ingress *in, int b, struct world *w)
{
    if (w[b].done) return;
    int par = in->bone_parent[b];
    struct xg_vec3 pp = in->root.have ? in->root.p : XG_VEC3_ZERO;
    struct xg_quat pq = in->root.have ? in->root.q : XG_QUAT_IDENTITY;
    bool pdirty = in->root_dirty;
    if (par >= 0) {
        world_of(in, par, w);
        pp = w[par].p;
        pq = w[par].q;
        pdirty = w[par].dirty;
    }
    w[b].q = xg_quat_normalize(xg_quat_mul(pq, in->bone[b].q));
    w[b].p = xg_vec3_add(pp, xg_quat_rotate(pq, in->bone[b].p));
    w[b].dirty = pdirty || in->bone_dirty[b];
    w[b].done = true;
}

static void resolve_bones(struct vmc_ingress *in)
{
    struct world w[VMC_BONES];
    memset(w, 0, sizeof w);
    int64_t stale_ns = xg_table_params(in->a->table)->stale_ns;
    for (int b = 0; b < VMC_BONES; b++)
        if (in->bone[b].have && in->now_ns - in->bone[b].last_ns > stale_ns) {
            in->bone[b].have = false;
            for (int i = 0; i < VMC_BONES; i++)
                in->bone_parent[i] = -2;
        }
    for (int b = 0; b < VMC_BONES; b++)
        if (in->bone[b].have && in->bone_parent[b] == -2)
            in->bone_parent[b] = resolve_parent(in, b);
    bool pushed[VMC_BONES] = {false};
    for (int b = 0; b < VMC_BONES; b++) {
        if (!in->bone[b].have) continue;
        world_of(in, b, w);
        if (!w[b].dirty) continue;
        struct xg_sample s = {.capture_ns = in->now_ns,
                              .receive_ns = in->now_ns,
                              .flags = XG_SAMPLE_POSE,
                              .position = w[b].p,
                              .orientation = w[b].q};
        xg_frame_sample_in(in->a->frame, &s);
        char src[XG_NAME_MAX];
        snprintf(src, sizeof src, "bone/%s", vmc_bones[b].name);
        struct xg_entity_key key = {.source = src, .kind = XG_KIND_JOINT};
        uint32_t id = 0;
        if (xg_table_update(in->a->table, in->a, &key, &s, &id) == 0) {
            in->bone_id[b] = id;
            pushed[b] = true;
        }
    }
    /* parents once every pushed bone has its id */
    for (int b = 0; b < VMC_BONES; b++) {
        if (!pushed[b]) continue;
        int par = in->bone_parent[b];
        uint32_t pid = par >= 0 && in->bone_id[par] && xg_table_get(in->a->table, in->bone_id[par])
                           ? in->bone_id[par]
                           : 0;
        xg_table_set_parent(in->a->table, in->bone_id[b], pid);
    }
    memset(in->bone_dirty, 0, sizeof in->bone_dirty);
    in->root_dirty = false;
}

/* ---- dispatch ---- */

static void on_message(void *user, const struct osc_message *m, uint64_t timetag, int depth)
{
    struct vmc_ingress *in = user;
    (void)timetag;
    (void)depth;
    in->messages++;
    const char *ad = m->address;
    size_t al = m->address_len;
    if (osc_str_eq(ad, al, "/VMC/Ext/Bone/Pos")) {
        bone_msg(in, m, false);
    } else if (osc_str_eq(ad, al, "/VMC/Ext/Root/Pos")) {
        bone_msg(in, m, true);
    } else if (osc_str_eq(ad, al, "/VMC/Ext/OK")) {
        struct osc_arg a;
        if (!want_types(in, m, "i") || osc_args_get(m, &a, 1) != 1) return;
        in->last_ok_loaded = a.v.i;
        in->ok_msgs++;
    } else if (osc_str_eq(ad, al, "/VMC/Ext/T")) {
        if (!want_types(in, m, "f")) return;
        in->t_msgs++;
    } else {
        for (int d = 0; d < 3; d++)
            if (osc_str_eq(ad, al, devices[d].address)) {
                device_msg(in, m, d);
                return;
            }
        in->ignored++;
    }
}

static void on_error(void *user, enum osc_error cls, const struct xg_error *err)
{
    struct vmc_ingress *in = user;
    enum vmc_reason r = cls == OSC_E_TYPE_TAG  ? VMC_R_TYPE_TAG
                        : cls == OSC_E_ADDRESS ? VMC_R_ADDRESS
                        : cls == OSC_E_BUNDLE  ? VMC_R_BUNDLE
                        : cls == OSC_E_DEPTH   ? VMC_R_DEPTH
                                               : VMC_R_MALFORMED;
    bad(in, r, "OSC %s", err->msg);
}

void vmc_ingress_datagram(struct vmc_ingress *in, const uint8_t *buf, size_t len, const char *peer,
                          int64_t now_ns)
{
    in->peer = peer;
    in->now_ns = now_ns;
    in->datagrams++;
    const struct osc_walk_ops ops = {
        .max_depth = in->max_depth, .message = on_message, .error = on_error, .user = in};
    osc_walk_packet(buf, len, &ops);
    bool any = in->root_dirty;
    for (int b = 0; b < VMC_BONES && !any; b++)
        any = in->bone_dirty[b];
    if (any) resolve_bones(in);
    in->peer = NULL;
}
