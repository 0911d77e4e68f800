/* A skeleton's motion memory (issue 23, seventh round): the recent poses of a skeleton's joints,
 * frame by frame, so that the table can find the earlier moment whose pose is most like the
 * newest one and extrapolate each joint at the rate it turned just after that moment (analog or
 * nearest-neighbour forecasting, the idea behind motion matching). Human motion repeats: a gait
 * cycle, a run, a wave, a dance step. Where the pose has no close, distinctive match in the
 * memory, nothing is found and the rules of core/predict/predict_rot.h and
 * core/predict/predict_skel.h stand alone. See docs/prediction.md "Repeating motion: the motion
 * memory".
 *
 * Frames: a frame is the joints' samples at one capture time. A frame is complete when every
 * joint of the memory has a sample at that time; a joint that skips a frame (or leaves) ends the
 * membership: the memory starts again with the joints of that frame. Only complete frames are
 * kept and matched. Features: each joint's rotation relative to its parent's in the memory
 * (rotation vector, rad), so that the skeleton's heading and place do not matter. */
#ifndef XG_MOTION_MEMORY_H
#define XG_MOTION_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/xmath.h"

/** Frames kept per skeleton: a ring. While the newest frame is closer than span /
 *  XG_MEMORY_FRAMES to the one before it, the next frame replaces it instead of adding one, so
 *  that kept frames are at least that far apart and a fast source keeps the span. */
#define XG_MEMORY_FRAMES 128
/** Most joints per memory; more joints are left out of it (they keep the other rules). */
#define XG_MEMORY_MAX_JOINTS 256
/** A candidate frame is at least this much older than the newest (ns): an earlier moment, not
 *  the one just past. */
#define XG_MEMORY_GAP_NS (100 * INT64_C(1000000))
/** The analog angular velocity is a joint's mean turn rate over this span after the matched
 *  frame (ns): half the default prediction horizon. */
#define XG_MEMORY_RATE_SPAN_NS (50 * INT64_C(1000000))
/** A match: mean squared difference per feature component at most this (rad²; 0.003 ≈ 3° rms)
 *  and ... */
#define XG_MEMORY_MATCH_MAX 0.003
/** ... less than this share of the median candidate's: the pose tells the moment apart. */
#define XG_MEMORY_DISTINCT 0.25
/** A candidate counts only if the pose went at least this far from the newest one (mean squared
 *  feature difference, rad²; ≈ 6° rms) at some frame after it: the motion left and came back
 *  (a recurrence). A slow, steady motion matches none of its own recent past, and a skeleton
 *  that does not move relative to itself matches nothing. */
#define XG_MEMORY_AWAY 0.012
/** The analog rate is the turn over the span the motion now covers in XG_MEMORY_RATE_SPAN_NS:
 *  scaled by how much faster the pose changes now than before the match (the ratio of the
 *  pose's speeds over the XG_MEMORY_SPEED_SPAN_NS before each; 1 if they point apart), within
 *  these bounds: the same motion, done faster or slower. XG_MEMORY_GAP_NS must be at
 *  least XG_MEMORY_SPEED_MAX x XG_MEMORY_RATE_SPAN_NS (the turn after the match is kept). */
#define XG_MEMORY_SPEED_MIN 0.5
#define XG_MEMORY_SPEED_MAX 2.0
/** The span over which the pose's speed is measured, now and before the match (ns). */
#define XG_MEMORY_SPEED_SPAN_NS (100 * INT64_C(1000000))
/** Candidates needed before a match is looked for. */
#define XG_MEMORY_MIN_CANDIDATES 8

struct xg_motion_memory;

/** A new, empty memory keeping span_ns (ns, > 0) of frames. NULL on ENOMEM. */
struct xg_motion_memory *xg_memory_new(int64_t span_ns);
/** Free m (NULL: nothing). */
void xg_memory_free(struct xg_motion_memory *m);
/** Forget every frame and joint (e.g. a joint's history was forgotten: the poses jumped). */
void xg_memory_reset(struct xg_motion_memory *m);

/** Record joint `id` (an entity id, > 0) at capture time t_ns (ns) with world orientation q
 *  (unit quaternion, x y z w) and parent `parent_id` (its parent's entity id, 0 = none).
 *  - t_ns newer than the newest frame opens a frame (when the newest frame was not complete,
 *    the memory starts again with the joints it had); t_ns older than the newest frame: ignored.
 *  - A joint new to the memory, or whose parent changed, keeps only the newest frame.
 *  - A joint's second sample at the same time is ignored: the first stands.
 *  Returns 1 when this sample completed the frame at t_ns (its features are then computed: call
 *  xg_memory_match()), 0 otherwise, -ENOMEM (nothing recorded; the memory starts again at the
 *  next frame), -ENOSPC when the memory has XG_MEMORY_MAX_JOINTS joints already (this joint is
 *  left out). */
int xg_memory_record(struct xg_motion_memory *m, uint32_t id, uint32_t parent_id, int64_t t_ns,
                     struct xg_quat q);

/** Look for the newest complete frame's match among the frames at least XG_MEMORY_GAP_NS older
 *  (at least XG_MEMORY_MIN_CANDIDATES of them) that the pose went XG_MEMORY_AWAY from since:
 *  the frame with the least mean squared feature difference, if at most XG_MEMORY_MATCH_MAX and
 *  below XG_MEMORY_DISTINCT x the median over the candidates. Also measures how much faster the
 *  pose changes now than at the match (XG_MEMORY_SPEED_*). Returns whether one was found (kept
 *  for xg_memory_rate() until the next frame). */
bool xg_memory_match(struct xg_motion_memory *m);

/** Joints in the memory, and the entity id of slot i (0 <= i < count). */
unsigned xg_memory_count(const struct xg_motion_memory *m);
uint32_t xg_memory_joint(const struct xg_motion_memory *m, unsigned slot);

/** After a match: the analog angular velocity of the joint in `slot` (rad/s, world frame): the
 *  joint's turn after the matched frame over XG_MEMORY_RATE_SPAN_NS x the speed ratio
 *  (interpolated between kept frames), in its own frame then, turned into its frame at the
 *  newest sample, divided by XG_MEMORY_RATE_SPAN_NS. false (w untouched) without
 *  a match for the newest frame. */
bool xg_memory_rate(const struct xg_motion_memory *m, unsigned slot, struct xg_vec3 *w);

/** The newest match: its frame's capture time and mean squared feature difference (rad²);
 *  false without a match for the newest frame. */
bool xg_memory_last_match(const struct xg_motion_memory *m, int64_t *t_ns, double *distance);

/** Whether m's match uses the AVX distance (on a processor with AVX, the default) or the
 *  portable 4-lane one; both give the same distances bit for bit. `avx` true is honoured only
 *  where the processor has AVX. Returns the choice in effect. For tests and benchmarks. */
bool xg_memory_set_avx(struct xg_motion_memory *m, bool avx);

/** Bytes allocated by m (for the docs' and benchmarks' memory figures). */
size_t xg_memory_bytes(const struct xg_motion_memory *m);

#endif
