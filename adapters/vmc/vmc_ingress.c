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
 * changed in it is recomputed and pushed once, and every device it carried is pushed once, with
 * the receive time as capture time. When a datagram carries several values of one bone or device,
 * the newest wins: the later in bundle order, or the one of the later OSC time tag when both are
 * in bundles with a time tag (issue 30 item 3); the others are counted as `superseded`. A bone with
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
#include "core/table/names.h"
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
    /* counted first; formatted only when the rate limiter lets the line through */
    if (!xg_log_admit(&in->lim[r], XG_LOG_WARN)) return;
    char msg[XG_ERROR_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    xg_log_admitted(&in->lim[r], XG_LOG_WARN, in->a->name, "peer %s: %s (dropped; %s)", in->peer,
                    msg, vmc_reason_names[r]);
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
    return vmc_devices_init(&in->dev, max_devices);
}

void vmc_ingress_free(struct vmc_ingress *in)
{
    vmc_devices_free(&in->dev);
}

void vmc_ingress_sweep(struct vmc_ingress *in)
{
    bool freed = false;
    for (size_t i = 0; i < in->dev.max; i++) {
        struct vmc_device *d = &in->dev.d[i];
        if (d->used && !d->pending && (!d->id || !xg_table_get(in->a->table, d->id))) {
            vmc_devices_release(&in->dev, i);
            freed = true;
        }
    }
    if (freed) vmc_devices_reindex(&in->dev);
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
 * a pose (named field and value; `what` is args[0], the serial or bone name). */
static bool read_pose(struct vmc_ingress *in, const struct osc_message *m,
                      const struct osc_arg *args, struct xg_vec3 *p, struct xg_quat *q)
{
    struct xg_sample s = {.flags = XG_SAMPLE_POSE};
    s.position = (struct xg_vec3){args[1].v.f, args[2].v.f, args[3].v.f};
    s.orientation = (struct xg_quat){args[4].v.f, args[5].v.f, args[6].v.f, args[7].v.f};
    const char *field = "";
    double value = 0;
    if (xg_sample_check(&s, &field, &value)) {
        size_t wl = args[0].v.s.len > NAME_LOG_MAX ? NAME_LOG_MAX : args[0].v.s.len;
        bad(in, VMC_R_VALUE, "%.*s '%.*s': %s = %.9g is not a pose", (int)m->address_len,
            m->address, (int)wl, args[0].v.s.p, field, value);
        return false;
    }
    *p = s.position;
    *q = xg_quat_normalize(s.orientation);
    return true;
}

/* Does a value of time tag `tt` replace one of `old` set earlier in the same datagram? Yes,
 * unless both carry a time tag and the new one is earlier. */
static bool newer(uint64_t tt, uint64_t old)
{
    return tt == OSC_TIMETAG_IMMEDIATE || old == OSC_TIMETAG_IMMEDIATE || tt >= old;
}

/* ---- devices ---- */

static const struct {
    const char *address, *prefix;
    enum xg_kind kind;
} devices[] = {{"/VMC/Ext/Hmd/Pos", "hmd", XG_KIND_HEAD},
               {"/VMC/Ext/Con/Pos", "con", XG_KIND_CONTROLLER},
               {"/VMC/Ext/Tra/Pos", "tra", XG_KIND_RIGID_BODY}};

/* Source name "<prefix>/<serial>" (fitted: two serials never become one name). */
static void device_src(char *src, const char *prefix, const struct osc_arg *serial)
{
    char tmp[256];
    size_t pl = strlen(prefix), n = serial->v.s.len;
    if (pl + 1 + n <= sizeof tmp) {
        memcpy(tmp, prefix, pl);
        tmp[pl] = '/';
        memcpy(tmp + pl + 1, serial->v.s.p, n);
        xg_name_fit(src, XG_NAME_MAX, tmp, pl + 1 + n);
    } else {
        xg_name_fitf(src, XG_NAME_MAX, "%s/%.*s", prefix, (int)n, serial->v.s.p);
    }
}

/* A device message: its value waits in the device's slot until the datagram has been read (a
 * later value of the same device in the datagram replaces it). The max_devices cap is checked
 * here, before the table creates anything. */
static void device_msg(struct vmc_ingress *in, const struct osc_message *m, int d, uint64_t timetag)
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
    if (!read_pose(in, m, args, &s.position, &s.orientation)) return;
    char src[XG_NAME_MAX];
    device_src(src, devices[d].prefix, serial);
    long slot = vmc_devices_find(&in->dev, src);
    if (slot < 0 && in->dev.n_used >= in->dev.max && in->swept_ns != in->now_ns) {
        vmc_ingress_sweep(in); /* at most once per datagram */
        in->swept_ns = in->now_ns;
    }
    if (slot < 0 && (slot = vmc_devices_add(&in->dev, src, (uint8_t)d)) < 0) {
        bad(in, VMC_R_LIMIT, "%s '%.*s': max_devices (%zu) device entities already exist",
            devices[d].address, NAME_LOG_MAX, src, in->dev.max);
        return;
    }
    struct vmc_device *dv = &in->dev.d[slot];
    in->device_msgs++;
    if (dv->pending) {
        in->superseded++; /* one of the two values is not pushed: not a drop */
        if (!newer(timetag, dv->timetag)) return;
    }
    xg_frame_sample_in(in->a->frame, &s);
    dv->s = s;
    dv->kind = (uint8_t)d;
    dv->timetag = timetag;
    vmc_devices_mark(&in->dev, (size_t)slot);
}

/* Push every device value the datagram carried (the newest of each), once. */
static void flush_devices(struct vmc_ingress *in)
{
    bool freed = false;
    for (size_t k = 0; k < in->dev.n_pend; k++) {
        size_t i = in->dev.pend[k];
        struct vmc_device *dv = &in->dev.d[i];
        dv->pending = false;
        struct xg_entity_key key = {.source = dv->src, .kind = devices[dv->kind].kind};
        uint32_t id = 0;
        if (xg_table_update(in->a->table, in->a, &key, &dv->s, &id) == 0 || id)
            dv->id = id;
        else if (!dv->id || !xg_table_get(in->a->table, dv->id)) {
            vmc_devices_release(&in->dev, i); /* refused by the table: no entity, no slot */
            freed = true;
        }
    }
    in->dev.n_pend = 0;
    if (freed) vmc_devices_reindex(&in->dev);
}

/* ---- bones ---- */

static void bone_msg(struct vmc_ingress *in, const struct osc_message *m, bool root,
                     uint64_t timetag)
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
    if (!read_pose(in, m, args, &l.p, &l.q)) return;
    /* a second value of the same bone in this datagram: the newest wins (bundle order, or the
     * later time tag when both carry one) */
    bool again = root ? in->root_dirty : in->bone_dirty[b];
    uint64_t *tt = root ? &in->root_tt : &in->bone_tt[b];
    if (again) in->superseded++;
    if (root) {
        in->root_msgs++;
        if (again && !newer(timetag, *tt)) return;
        in->root = l;
        in->root_dirty = true;
    } else {
        in->bone_msgs++;
        if (again && !newer(timetag, *tt)) return;
        if (!in->bone[b].have) /* a new bone may become the parent of others */
            for (int i = 0; i < VMC_BONES; i++)
                in->bone_parent[i] = -2;
        in->bone[b] = l;
        in->bone_dirty[b] = true;
    }
    *tt = timetag;
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
    (void)depth;
    in->messages++;
    const char *ad = m->address;
    size_t al = m->address_len;
    if (osc_str_eq(ad, al, "/VMC/Ext/Bone/Pos")) {
        bone_msg(in, m, false, timetag);
    } else if (osc_str_eq(ad, al, "/VMC/Ext/Root/Pos")) {
        bone_msg(in, m, true, timetag);
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
                device_msg(in, m, d, timetag);
                return;
            }
        in->ignored++;
    }
}

static enum vmc_reason reason_of(enum osc_error cls)
{
    return cls == OSC_E_TYPE_TAG  ? VMC_R_TYPE_TAG
           : cls == OSC_E_ADDRESS ? VMC_R_ADDRESS
           : cls == OSC_E_BUNDLE  ? VMC_R_BUNDLE
           : cls == OSC_E_DEPTH   ? VMC_R_DEPTH
                                  : VMC_R_MALFORMED;
}

/* A refused OSC element: counted here, before any text is formatted (osc_walk_ops.admit); the
 * codec formats the error, and on_error logs it, only when the rate limiter lets it through. */
static bool on_admit(void *user, enum osc_error cls)
{
    struct vmc_ingress *in = user;
    enum vmc_reason r = reason_of(cls);
    in->reasons[r]++;
    in->a->drops++;
    return xg_log_admit(&in->lim[r], XG_LOG_WARN);
}

static void on_error(void *user, enum osc_error cls, const struct xg_error *err)
{
    struct vmc_ingress *in = user;
    enum vmc_reason r = reason_of(cls);
    xg_log_admitted(&in->lim[r], XG_LOG_WARN, in->a->name, "peer %s: OSC %s (dropped; %s)",
                    in->peer, err->msg, vmc_reason_names[r]);
}

void vmc_ingress_datagram(struct vmc_ingress *in, const uint8_t *buf, size_t len, const char *peer,
                          int64_t now_ns)
{
    in->peer = peer;
    in->now_ns = now_ns;
    in->datagrams++;
    const struct osc_walk_ops ops = {.max_depth = in->max_depth,
                                     .message = on_message,
                                     .error = on_error,
                                     .admit = on_admit,
                                     .user = in};
    osc_walk_packet(buf, len, &ops);
    if (in->dev.n_pend) flush_devices(in);
    bool any = in->root_dirty;
    for (int b = 0; b < VMC_BONES && !any; b++)
        any = in->bone_dirty[b];
    if (any) resolve_bones(in);
    in->peer = NULL;
}
