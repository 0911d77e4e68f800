/* Frame conversion between an adapter's wire frame and the internal frame (docs/configuration.md,
 * "Frames").
 *
 * Internal frame: right-handed, Y up, metres, Hamilton quaternions x y z w, body→world.
 * A frame is: an axis string (for each internal axis X, Y, Z in turn, the signed wire axis that
 * provides it, e.g. "x,z,-y" for Z-up right-handed rigs), a scale from wire units to metres, then
 * an optional rotation and offset applied in the internal frame:
 *
 *     p_int = R0 · (scale · M · p_wire) + offset
 *     q_int = r0 ⊗ q_M,  q_M = (det(M) · M · q_wire.xyz, q_wire.w)   (i.e. R = M·R_wire·Mᵀ)
 *     v_int = R0 · (scale · M · v_wire),  ω_int = R0 · (det(M) · M · ω_wire)
 *
 * A handedness change (det M = −1) is thus an axis permutation with a sign flip applied to
 * positions and quaternions alike, never a rotation, and the mapped rotations stay proper.
 * Presets are YAML files in mappings/presets/ (embedded into the binary). */
#ifndef XG_FRAME_H
#define XG_FRAME_H

#include "core/conf/conf.h"
#include "core/table/entity.h"
#include "core/util/error.h"
#include "core/util/xmath.h"

struct xg_frame {
    char name[64];           /* preset name or "custom" */
    double m[3][3];          /* axis matrix: internal = m · wire (entries 0, ±1) */
    double det;              /* +1 or −1 */
    double scale;            /* wire units → metres, > 0 */
    struct xg_quat rotation; /* r0, applied after the axes (internal frame) */
    struct xg_vec3 offset;   /* metres, internal frame, added last */
    /* The conversions as matrices (issue 19 item 3), filled by xg_frame_finalize() from the fields
     * above; until then (ready false: e.g. a frame whose fields a test assigns) the conversions
     * compute from the fields. Change a field after finalizing: finalize again. */
    bool ready;
    double pin[3][3];  /* p_int = pin · p_wire + offset, v_int = pin · v_wire */
    double win[3][3];  /* ω_int = win · ω_wire */
    double qin[4][4];  /* q_int = qin · q_wire (x y z w) */
    double pout[3][3]; /* p_wire = pout · (p_int − offset), v_wire = pout · v_int */
    double wout[3][3], qout[4][4];
};

/** Precompute f's conversions as matrices from its fields (m, det, scale, rotation, offset): the
 *  conversions below then cost one matrix product each. The gateway finalizes every adapter's
 *  frame after reading it. Results equal the unfinalized ones up to rounding (≈ 1e-15 relative). */
void xg_frame_finalize(struct xg_frame *f);

/** The identity frame (internal frame on the wire). */
void xg_frame_identity(struct xg_frame *f);
/** Parse an axis string such as "x,z,-y" into m and det. -EINVAL with a message naming the token
 *  (each of x, y, z must appear exactly once, optionally signed). */
int xg_frame_parse_axes(const char *axes, double m[3][3], double *det, struct xg_error *err);
/** Load a shipped preset by name (case-insensitive: "yup-rh", "zup-rh", "vrpn-zup",
 *  "gamestate-lh", "unity", "LTP_ENU", "LTP_NED", "bvh"...). -ENOENT names the known presets. */
int xg_frame_preset(const char *name, struct xg_frame *f, struct xg_error *err);
/** Frame from a config node: a scalar preset name, or a map {preset, axes, scale, offset: [x,y,z],
 *  rotation: [x,y,z,w]} (keys override the preset). Errors carry file:line:column. */
int xg_frame_from_conf(const struct xg_conf *node, struct xg_frame *f, struct xg_error *err);
/** Comma-separated names of all presets (static buffer). */
const char *xg_frame_preset_names(void);

/* wire → internal */
struct xg_vec3 xg_frame_pos_in(const struct xg_frame *f, struct xg_vec3 p);
struct xg_quat xg_frame_rot_in(const struct xg_frame *f, struct xg_quat q);
struct xg_vec3 xg_frame_vel_in(const struct xg_frame *f, struct xg_vec3 v);
struct xg_vec3 xg_frame_angvel_in(const struct xg_frame *f, struct xg_vec3 w);
/* internal → wire (exact inverses of the above) */
struct xg_vec3 xg_frame_pos_out(const struct xg_frame *f, struct xg_vec3 p);
struct xg_quat xg_frame_rot_out(const struct xg_frame *f, struct xg_quat q);
struct xg_vec3 xg_frame_vel_out(const struct xg_frame *f, struct xg_vec3 v);
struct xg_vec3 xg_frame_angvel_out(const struct xg_frame *f, struct xg_vec3 w);

/** Convert every flagged field of a wire-frame sample to the internal frame, in place. */
void xg_frame_sample_in(const struct xg_frame *f, struct xg_sample *s);
/** Convert a predicted pose from the internal frame to the wire frame, in place. */
void xg_frame_pose_out(const struct xg_frame *f, struct xg_pose *p);

#endif
