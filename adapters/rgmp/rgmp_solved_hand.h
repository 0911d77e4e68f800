/* Rokoko's `solved_hand` device layout for the rgmp-server (option `solved_hands` / `hand_maps`):
 * pure, no I/O, no libevent.
 *
 * The layout is what Rokoko's own consumers of its hand solver read (its ROS 2 bridge, which
 * decodes nothing else): a Stream Definition with device_type "solved_hand", device_info
 * {"hand": "left"|"right"}, timestamp_epoch "unix_epoch", and a group named "joints_openxr" whose
 * streams are exactly the 26 OpenXR hand joints (XR_EXT_hand_tracking, XrHandJointEXT order:
 * palm, wrist, thumb metacarpal..tip, then index, middle, ring and little metacarpal..tip), each a
 * FLOAT[7] TRANSFORM (position m, then quaternion x, y, z, w) with target_frame "xr_<joint>". The
 * consumer reads the Data Frame as 26 consecutive 28-byte poses after the 16-byte header, so the
 * group carries nothing else. Poses are in OpenXR's reference space convention (right-handed,
 * Y up, metres), which is xrgate's internal frame, written with reference_frame "xr_base". */
#ifndef XG_RGMP_SOLVED_HAND_H
#define XG_RGMP_SOLVED_HAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters/rgmp/rgmp_codec.h"
#include "core/util/error.h"
#include "core/table/entity.h"

#define RGMP_HAND_JOINTS 26                 /* XR_HAND_JOINT_COUNT_EXT */
#define RGMP_HAND_DEVICE_TYPE "solved_hand" /* device_type the consumers select */
#define RGMP_HAND_GROUP "joints_openxr"     /* the group they read */
#define RGMP_HAND_REFERENCE_FRAME "xr_base" /* reference_frame of every joint stream */
#define RGMP_HAND_PALM 0
#define RGMP_HAND_WRIST 1

/** OpenXR joint name of joint j (0..25) without the "xr_" prefix, e.g. "index_proximal"; NULL for
 *  an index out of range. */
const char *rgmp_hand_joint_name(int j);

/** Index of an OpenXR joint name (with or without the "xr_" prefix), or -1. */
int rgmp_hand_joint_index(const char *name);

/** Parent of joint j in the OpenXR hand hierarchy: the wrist for the palm and every metacarpal,
 *  the previous joint of the finger otherwise, -1 for the wrist (the root). */
int rgmp_hand_joint_parent(int j);

/** Build the solved_hand Stream Definition: device_id, device_info {"hand": hand, "source":
 *  source} (hand "left" or "right"; source names the entity or map it comes from, may be NULL),
 *  one group RGMP_HAND_GROUP at rate_hz (>= 0) with the 26 joint streams. *out is owned by the
 *  caller (rgmp_definition_free). Returns 0, -EINVAL (bad hand) or -ENOMEM. */
int rgmp_hand_definition(uint32_t device_id, const char *hand, const char *source, double rate_hz,
                         struct rgmp_definition **out, struct xg_error *err);

/** The 26 joint values of one Data Frame (26 × 7 floats, in joint order) from the joints that have
 *  a pose (have[j]): a joint without one takes the pose of its nearest ancestor that has one (so an
 *  unmapped finger collapses onto the wrist rather than jumping to the origin); the palm without
 *  one takes the wrist's. have[RGMP_HAND_WRIST] must be true. Quaternions are normalised; a
 *  degenerate one becomes the identity. */
void rgmp_hand_values(const struct xg_pose pose[RGMP_HAND_JOINTS],
                      const bool have[RGMP_HAND_JOINTS], float out[RGMP_HAND_JOINTS * 7]);

/** The next timestamp_us of a device session: the wall-clock time of the monotonic instant
 *  `mono_ns` in µs, or *last + 1 when that is not later, so that every Data Frame of the session
 *  (of any group) carries a strictly larger value than the one before (RGMP v2 "Timestamp
 *  Definition": strictly monotonically increasing within a session). Updates *last. */
uint64_t rgmp_next_timestamp_us(uint64_t *last, int64_t mono_ns);

#endif
