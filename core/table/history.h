/* Compact pose history of one entity (issue 15 item 4, issue 19 item 5), in the manner of
 * Monado's relation history: push the newest sample, read the sample k places back (newest
 * first, for the motion estimator), find the samples around a time (past-time queries).
 *
 * Layout: 52 bytes per entry instead of 88, exact enough that the estimator's exactness tests
 * (1e-9 on analytic motion) and past-time queries (1e-12 m) keep their tolerances:
 * - capture time: int32 ns offset from a base time (exact);
 * - position: 48-bit offsets, in units of 2^-40 m (0.9 pm, error <= 0.46 pm), from a base
 *   position held as an int64 in the same units (so a decoded position never depends on the
 *   base: one rounding to double);
 * - orientation: "smallest three" (the largest component dropped, sign made positive), the
 *   other three in 42 bits each (error <= 1.6e-13 per component);
 * - velocity and angular velocity in force at that sample: binary16 (relative error <= 4.9e-4;
 *   only past-time queries read them).
 * The bases move to the newest sample when a time offset would pass 2^31 ns (2.1 s) or a
 * position offset 2^47 units (128 m). Samples that still do not fit (samples more than 2.1 s
 * apart, a jump of more than 128 m inside the history) make the offsets coarser, just enough
 * for them (a shift; e.g. 15 nm for a jump across the whole ±1e6 m bound) until they leave the
 * ring; the newest sample is always exact, the samples that shared the ring with them keep
 * that coarser precision. The entity keeps its newest state in full precision
 * (double) besides.
 *
 * Reads decode into struct xg_hist (core/table/entity.h). Not thread-safe; zero-initialised =
 * empty. */
#ifndef XG_HISTORY_H
#define XG_HISTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/table/entity.h"

/** One stored entry: 52 bytes. */
struct xg_hist_entry {
    int32_t t;           /* capture time - base_ns, ns */
    uint16_t p[9];       /* position - base_u, 3 x 48-bit two's complement, units of 2^-40 m */
    uint16_t v[3], w[3]; /* velocity (m/s), angular velocity (rad/s, world) in force: binary16 */
    uint32_t q[4];       /* orientation, smallest three: bits 0-1 the dropped component, then
                            three 42-bit components */
};

/** The history ring: the newest XG_HISTORY samples. */
struct xg_history {
    int64_t base_ns;   /* time base, ns (gateway clock) */
    int64_t base_u[3]; /* position base, units of 2^-40 m */
    uint8_t head, n;   /* oldest entry, number of entries */
    uint8_t tshift;    /* time offsets are in units of 2^tshift ns (0 but for sparse samples) */
    uint8_t pshift;    /* position offsets in units of 2^pshift x 2^-40 m (0 but for jumps) */
    struct xg_hist_entry e[XG_HISTORY];
};

/** Forget every sample. */
void xg_history_clear(struct xg_history *h);
/** Number of samples (0..XG_HISTORY). */
static inline unsigned xg_history_count(const struct xg_history *h)
{
    return h->n;
}
/** Append the newest sample: capture time t_ns (must be later than the newest), position p (m),
 *  unit orientation q; its velocities are zero until xg_history_set_velocity(). When the ring was
 *  full the oldest sample is dropped: its pose is decoded into *evicted (if not NULL, as by
 *  xg_history_pose_at()) and true is returned. Samples forgotten by a rebase (older than 2^31 ns
 * before t_ns) are not reported: the estimator sees a ring that does not continue its sums and
 * rebuilds them. */
bool xg_history_push(struct xg_history *h, int64_t t_ns, struct xg_vec3 p, struct xg_quat q,
                     struct xg_hist *evicted);
/** Set the velocity (m/s) and angular velocity (rad/s, world frame) in force at the newest
 *  sample (stored as binary16). No effect on an empty history. */
void xg_history_set_velocity(struct xg_history *h, struct xg_vec3 v, struct xg_vec3 w);
/** xg_history_set_velocity() of the angular velocity alone (rad/s, world frame): the velocity
 *  stored with the newest sample stays. */
void xg_history_set_angular_velocity(struct xg_history *h, struct xg_vec3 w);
/** Decode the sample k places back from the newest (k = 0: newest; k < count). */
struct xg_hist xg_history_at(const struct xg_history *h, unsigned k);
/** xg_history_at() without the velocities (left zero): what the motion estimator reads. */
struct xg_hist xg_history_pose_at(const struct xg_history *h, unsigned k);
/** Capture time of the sample k places back (exact, no decoding of the rest). */
static inline int64_t xg_history_time(const struct xg_history *h, unsigned k)
{
    const unsigned i = h->head + h->n - 1u - k; /* < 2 XG_HISTORY */
    return h->base_ns +
           (int64_t)h->e[i >= XG_HISTORY ? i - XG_HISTORY : i].t * (INT64_C(1) << h->tshift);
}

/** Where t_ns falls in the history. */
enum xg_history_place {
    XG_HISTORY_NONE = 0, /* empty history */
    XG_HISTORY_AT,       /* *a is the sample at exactly t_ns */
    XG_HISTORY_BETWEEN,  /* *a (older) and *b (newer) bracket t_ns */
    XG_HISTORY_BEFORE,   /* t_ns is before the oldest sample: *a is the oldest */
    XG_HISTORY_AFTER,    /* t_ns is after the newest sample: *a is the newest */
};
/** Find the sample(s) around t_ns (newest to oldest scan). */
enum xg_history_place xg_history_around(const struct xg_history *h, int64_t t_ns, struct xg_hist *a,
                                        struct xg_hist *b);

#endif
