/* The `vmc` adapter's two halves, without sockets: VMC protocol ingress (OSC datagrams →
 * entities, vmc_ingress.c) and VMC / VMT egress (dirty entities → OSC bundles, vmc_egress.c).
 * vmc_adapter.c owns the configuration, the UDP socket and the timers and calls into them.
 *
 * VMC protocol (performer → marionette, OSC over UDP, Unity's left-handed Y-up frame, metres):
 *   /VMC/Ext/Root/Pos (s name="root", f px py pz, f qx qy qz qw [, f sx sy sz, f ox oy oz])
 *   /VMC/Ext/Bone/Pos (s HumanBodyBones name, f px py pz, f qx qy qz qw)   local to the parent
 *   /VMC/Ext/Hmd/Pos, /VMC/Ext/Con/Pos, /VMC/Ext/Tra/Pos (s serial, f px py pz, f qx qy qz qw)
 *   /VMC/Ext/OK (i loaded [, i calibration state, i calibration mode, i tracking status])
 *   /VMC/Ext/T (f time, s)
 * Virtual Motion Tracker (OSC on UDP 39570, Unity's frame in the room space VMT calibrated):
 *   /VMT/Room/Unity (i index 0-57, i enable 0-3, f timeoffset, f x y z, f qx qy qz qw)
 *   enable: 0 disable, 1 tracker, 2 left-hand controller, 3 right-hand controller. */
#ifndef VMC_H
#define VMC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters/vmc/osc_codec.h"
#include "adapters/vmc/vmc_bones.h"
#include "adapters/vmc/vmc_devices.h"
#include "core/table/egress_controls.h"
#include "core/adapter/adapter.h"
#include "core/util/log.h"

/* ---- ingress ---- */

/* bad-input reasons (status counter names in vmc_reason_names) */
enum vmc_reason {
    VMC_R_MALFORMED, /* OSC_E_MALFORMED */
    VMC_R_TYPE_TAG,  /* OSC_E_TYPE_TAG */
    VMC_R_ADDRESS,   /* OSC_E_ADDRESS */
    VMC_R_BUNDLE,    /* OSC_E_BUNDLE */
    VMC_R_DEPTH,     /* OSC_E_DEPTH */
    VMC_R_ARGS,      /* a known address with too few or mistyped arguments */
    VMC_R_VALUE,     /* not a pose: non-finite, out of bounds, degenerate quaternion, empty name */
    VMC_R_BONE,      /* Bone/Pos with a name that is not a HumanBodyBones bone */
    VMC_R_LIMIT,     /* max_devices device entities reached */
    VMC_R_COUNT
};
extern const char *const vmc_reason_names[VMC_R_COUNT];

struct vmc_local {
    bool have;
    struct xg_vec3 p; /* wire frame (Unity), wire units */
    struct xg_quat q; /* unit */
    int64_t last_ns;  /* receive time of its last message */
};

/** Ingress state of one adapter: the last local pose of the root and of every bone, and the
 *  device entities it created (bounded by max_devices). */
struct vmc_ingress {
    struct xg_adapter *a; /* table, frame, name, index (borrowed) */
    int max_depth;        /* nested OSC bundles */
    size_t max_devices;   /* device entities (hmd/con/tra) alive at once */
    struct vmc_local root, bone[VMC_BONES];
    bool root_dirty, bone_dirty[VMC_BONES];
    uint32_t bone_id[VMC_BONES]; /* table ids, 0 = none yet */
    int bone_parent[VMC_BONES];  /* resolved parent (nearest received ancestor), -1 = root */
    struct vmc_devices dev;      /* device entities, max_devices slots (vmc_devices.h) */
    int64_t swept_ns;            /* last sweep for a full device set (once per datagram) */
    /* per-datagram context */
    const char *peer;
    int64_t now_ns;
    uint64_t root_tt, bone_tt[VMC_BONES]; /* OSC time tag of the value set in this datagram */
    /* counters */
    uint64_t datagrams, messages, bone_msgs, root_msgs, device_msgs, ok_msgs, t_msgs, ignored;
    uint64_t superseded; /* values replaced by a newer one of the same datagram (not drops) */
    uint64_t reasons[VMC_R_COUNT];
    int64_t last_ok_loaded; /* last /VMC/Ext/OK loaded value, -1 = none */
    /* one rate limiter per kind of line a peer can trigger (core/util/log.h) */
    struct xg_log_limit lim[VMC_R_COUNT];
};

/** Set up (a: the adapter, borrowed). -ENOMEM. */
int vmc_ingress_init(struct vmc_ingress *in, struct xg_adapter *a, int max_depth,
                     size_t max_devices);
void vmc_ingress_free(struct vmc_ingress *in);
/** Process one UDP payload from `peer` ("ip:port") received at now_ns (gateway clock): every
 *  VMC message it holds updates the table; bones are resolved to world poses and devices pushed
 *  once the whole datagram has been read, each with the newest value the datagram carried for
 *  it: the later message in bundle order, or the one of the later OSC time tag when both carry
 *  one (an earlier value is counted as `superseded`, not as a drop). Bad input is dropped,
 *  counted per reason (counted first; the warning is formatted only when its rate limiter lets
 *  it through). */
void vmc_ingress_datagram(struct vmc_ingress *in, const uint8_t *buf, size_t len, const char *peer,
                          int64_t now_ns);
/** Forget device entities the table no longer has (expired or removed). */
void vmc_ingress_sweep(struct vmc_ingress *in);

/* ---- egress ---- */

enum vmc_profile { VMC_PROFILE_VMC = 0, VMC_PROFILE_VMT };

#define VMT_TRACKERS 58 /* VMT indices 0..57 */

/** A `trackers:` rule of profile vmt: entities whose name matches `match` (fnmatch glob) get
 *  tracker `index` (the first free match wins) */
struct vmt_rule {
    char *match;
    int index;
};

/** Datagram sink: send `len` bytes (one complete OSC bundle) to every destination. */
typedef void (*vmc_send_fn)(void *user, const uint8_t *buf, size_t len);

struct vmc_egress {
    struct xg_adapter *a;
    struct xg_egress_controls controls; /* VMC/VMT pose messages carry no buttons/analogs */
    enum vmc_profile profile;
    size_t mtu;     /* largest datagram, bytes */
    uint8_t *pkt;   /* mtu bytes */
    char *skeleton; /* profile vmc: entity-name prefix of the skeleton ("take/"), NULL = auto */
    bool skeleton_auto;
    char skel_hips[XG_NAME_MAX]; /* the auto-chosen skeleton's Hips entity */
    char *bone_seg[VMC_BONES];   /* `bones:` entity-name segment per bone, NULL = its own name */
    int64_t start_ns;            /* /VMC/Ext/T counts seconds from here */
    /* profile vmt: tracker index -> entity id (0 = free) and name */
    uint32_t vmt_id[VMT_TRACKERS];
    char vmt_name[VMT_TRACKERS][XG_NAME_MAX]; /* last entity name of each index (stability) */
    struct vmt_rule *rules;
    size_t n_rules;
    vmc_send_fn send;
    void *send_user;
    /* counters */
    uint64_t datagrams_out, bundles_out, messages_out, bones_out, devices_out, trackers_out;
    uint64_t no_index, oversize, disabled_out;
    struct xg_log_limit lim_no_index;
};

/** Set up (pkt allocated, mtu >= 256). -ENOMEM. */
int vmc_egress_init(struct vmc_egress *eg, struct xg_adapter *a, enum vmc_profile profile,
                    size_t mtu);
void vmc_egress_free(struct vmc_egress *eg);
/** Send this sink's dirty entities predicted to now_ns as one frame (one bundle per datagram,
 *  datagrams of at most mtu bytes). Without a send function the dirty set is just emptied. */
void vmc_egress_drain(struct vmc_egress *eg, int64_t now_ns);
/** An entity left the table (profile vmt: its tracker is disabled with one /VMT/Room/Unity
 *  enable 0 and its index freed). */
void vmc_egress_entity_gone(struct vmc_egress *eg, const struct xg_entity *e);

#endif
