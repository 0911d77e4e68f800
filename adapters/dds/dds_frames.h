/* The dds adapter's names seen on ingress (issue 30): TF frames remembered for chaining and the
 * writer that owns each entity name, in an open-addressing hash table (O(1) per look-up, no
 * Cyclone DDS: unit-tested in tests/unit/test_dds_frames.c).
 *
 * At most DDS_MAX_NAMES names are tracked (memory grows with use, by doubling); of them at most
 * DDS_MAX_FRAMES carry a pose (has_pose: usable as a parent). Names are stored as given: the
 * caller fits them first (xg_name_fit), for the child and the parent alike, so a long name is
 * found under the name it was stored under. */
#ifndef XG_DDS_FRAMES_H
#define XG_DDS_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/table/entity.h"
#include "core/util/xmath.h"

#define DDS_MAX_FRAMES 4096 /* TF frames remembered with a pose, for chaining */
#define DDS_MAX_NAMES 16384 /* names whose owner is tracked */

/** One name: its pose when remembered as a TF frame, and its owner (the writer whose samples it
 *  takes, issue 30 defect 8). */
struct dds_frame {
    uint64_t hash;
    char name[XG_NAME_MAX];
    struct xg_vec3 p; /* world_frame pose (wire frame), valid when has_pose */
    struct xg_quat q;
    bool has_pose;
    bool conflict_logged; /* a second writer's refusal was logged for this owner */
    uint64_t owner;       /* publication handle of the owning writer, 0 = none yet */
    int32_t owner_reader; /* the reader that took the owner's samples (for its GUID) */
    int64_t owner_ns;     /* gateway time of the owner's last sample */
};

/** The table. Zero-initialised, then dds_frames_init(). */
struct dds_frames {
    struct dds_frame *v; /* entries 0..n-1 */
    uint32_t n, cap;     /* used, allocated */
    uint32_t *slot;      /* DDS_MAX_NAMES * 2 slots: entry index + 1, 0 = empty */
    uint32_t n_posed;    /* entries with has_pose (at most DDS_MAX_FRAMES) */
};

/** FNV-1a of a NUL-terminated name. */
uint64_t dds_name_hash(const char *s);
/** Allocate the slots (and a first block of entries). 0 or -ENOMEM. */
int dds_frames_init(struct dds_frames *f);
/** Free everything; the table is zeroed (init again to reuse). */
void dds_frames_free(struct dds_frames *f);
/** The entry of `name` (hash `h` = dds_name_hash(name)), or NULL. The pointer stays valid until
 *  the next dds_frames_add(). */
struct dds_frame *dds_frames_find(const struct dds_frames *f, const char *name, uint64_t h);
/** The entry of `name`, added (zeroed but for name and hash) when absent; NULL when
 *  DDS_MAX_NAMES names are tracked already or memory is short. `name` is shorter than
 *  XG_NAME_MAX. The pointer stays valid until the next dds_frames_add(). */
struct dds_frame *dds_frames_get(struct dds_frames *f, const char *name, uint64_t h);

#endif
