/* One predicted pose per entity per egress pass, shared by the sinks drained in that pass (issue
 * 19 item 3; docs/performance.md, "Shared prediction").
 *
 * A direct-mapped cache indexed by the entity's table slot: an entry answers only for the same
 * pass (epoch), entity id, sample generation (the entity's accepted-sample count: a new sample
 * invalidates the entry) and target time. Two entities whose slots collide evict each other, which
 * costs a prediction, never a wrong pose. Socket-free; single-threaded. */
#ifndef XG_POSE_CACHE_H
#define XG_POSE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/table/entity.h"

/* entries at most (a 10 000-entity table shares poses among up to this many per pass) */
#define XG_POSE_CACHE_MAX 4096

struct xg_pose_cache;

/** Empty cache of at least `entries` entries (rounded up to a power of two, at most
 *  XG_POSE_CACHE_MAX, at least 64). NULL on ENOMEM. */
struct xg_pose_cache *xg_pose_cache_new(size_t entries);
void xg_pose_cache_free(struct xg_pose_cache *c);
/** Grow to at least `entries` (same bounds; entries are dropped). -ENOMEM leaves it as it was. */
int xg_pose_cache_reserve(struct xg_pose_cache **c, size_t entries);
/** Number of entries. */
size_t xg_pose_cache_size(const struct xg_pose_cache *c);
/** Start a new pass: every entry of earlier passes stops answering (O(1)). */
void xg_pose_cache_new_pass(struct xg_pose_cache *c);
/** The pose cached in this pass for (slot, id, gen) at time t_ns, or NULL (borrowed, valid until
 *  the next put or pass). */
const struct xg_pose *xg_pose_cache_get(const struct xg_pose_cache *c, uint32_t slot, uint32_t id,
                                        uint64_t gen, int64_t t_ns);
/** Remember pose (predicted to pose->t_ns) for (slot, id, gen) in this pass. */
void xg_pose_cache_put(struct xg_pose_cache *c, uint32_t slot, uint32_t id, uint64_t gen,
                       const struct xg_pose *pose);

#endif
