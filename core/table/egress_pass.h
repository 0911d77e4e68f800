/* The egress pass: how the gateway drains its sinks (issue 19 items 1 and 3; docs/performance.md,
 * "Cut-through egress" and "Shared prediction").
 *
 * One pass drains every sink that is due (a send-on-change sink whose dirty set became non-empty,
 * a rate-limited sink whose tick fired) at one pass time, so that the sinks share one predicted
 * pose per entity (xg_table_pass_begin). Sinks that may send part of an ingress batch drain in
 * slices, interleaved in configuration order: rounds of `slice` entities of each (64 by
 * default; a plan may give a different `first_slice` for the first round) until every set is
 * empty. The others (rate-limited sinks, and sinks that send whole frames: rgmp-server, less,
 * dds, vmc; xg_adapter.whole_frames) drain their whole set once, in the first round.
 *
 * Cut-through: a long ingress batch need not be pushed whole before anything leaves. The table
 * calls the gateway back (xg_table_set_cut_through) once a batch has made XG_CUT_AFTER updates
 * since it woke sinks, then after twice as many each time; the gateway then runs a pass over the
 * woken sliced sinks (not the updating adapter) that drains each one's whole set once (`sliced`
 * left empty), and the pass after the ingress callback sends what remains.
 *
 * Trade-off: each slice is a drain of its own, i.e. its own packets and syscalls, which on the
 * measured relay cost more than the wait they save below a few dozen entities: a batch of up to
 * 64 leaves whole (docs/performance.md "Cut-through egress", the figures). Socket-free: the caller
 * supplies the drain. Single-threaded. */
#ifndef XG_EGRESS_PASS_H
#define XG_EGRESS_PASS_H

#include <stddef.h>
#include <stdint.h>

#include "core/table/entity.h"

#define XG_EGRESS_SLICE 64 /* entities per drain of a sliced sink (default) */

/** Drain sink `sink` (adapter index) once: the adapter's drain, which calls xg_table_drain(). */
typedef void (*xg_egress_drain_fn)(void *user, int sink);

/** Which sinks a pass drains, and how (bit i = adapter index i). */
struct xg_egress_plan {
    uint64_t due;       /* drain these */
    uint64_t sliced;    /* of the due ones, these in slices; the rest whole, once */
    size_t first_slice; /* entities in a sliced sink's first drain of the pass; 0 = its slice */
    size_t slice[XG_MAX_ADAPTERS]; /* entities per slice, per sink; 0 = XG_EGRESS_SLICE */
};

/** What a pass did. */
struct xg_egress_result {
    size_t drains; /* calls of fn */
    size_t rounds; /* rounds (the first included) */
};

/** Run one pass at now_ns (gateway-monotonic ns). Every due sink is drained at least once; a sliced
 *  sink is drained again while entities remain in its set and its previous drain took some (a
 *  drain that takes none ends that sink's pass). Drain limits are reset to 0 afterwards. Fills
 *  *res when not NULL. */
void xg_egress_pass_run(struct xg_table *t, int64_t now_ns, const struct xg_egress_plan *plan,
                        xg_egress_drain_fn fn, void *user, struct xg_egress_result *res);

#endif
