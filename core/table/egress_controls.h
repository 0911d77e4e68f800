#ifndef XG_EGRESS_CONTROLS_H
#define XG_EGRESS_CONTROLS_H
/* Buttons and analog channels a sink's protocol cannot carry.
 *
 * Every button/analog/dial value that enters the table leaves through vrpn-server, which carries
 * them all. A sink whose protocol carries fewer (game state's GameControl1: buttons 0..19, analogs
 * 0..3) or none (RGMP v2, LESS, VMC/VMT, ROS 2 poses) says so instead of dropping them silently:
 * one warning per entity naming the entity, what is left out and why, and a counter of the values
 * left out (`controls_not_carried`, one per button or analog channel per sample sent). */

#include "core/table/entity.h"
#include "core/util/log.h"

#include <stdint.h>

#define XG_EGRESS_CONTROLS_REMEMBERED 256 /* entities warned about individually */

struct xg_egress_controls {
    int max_buttons, max_analogs; /* carried: indices 0..max-1 (0 = none) */
    const char *why;              /* the protocol's rule, e.g. "RGMP v2 has no field for them" */
    uint64_t not_carried;         /* values left out, summed over the samples sent */
    uint32_t warned[XG_EGRESS_CONTROLS_REMEMBERED]; /* entity ids already warned about */
    unsigned n_warned;
    struct xg_log_limit lim; /* beyond the remembered ids: rate-limited lines */
};

/** Set up for a protocol that carries buttons 0..max_buttons-1 and analog channels
 *  0..max_analogs-1; `why` (borrowed, static) is the protocol's rule quoted in the warning. */
void xg_egress_controls_init(struct xg_egress_controls *c, int max_buttons, int max_analogs,
                             const char *why);

/** Called by the sink for each entity it sends: counts the button and analog values of `e`
 *  beyond what the protocol carries and, the first time for that entity, logs one warning on
 *  behalf of `adapter` (later entities past XG_EGRESS_CONTROLS_REMEMBERED go through a rate
 *  limiter). Returns the number of values left out for this sample (0 when all are carried). */
unsigned xg_egress_controls_check(struct xg_egress_controls *c, const char *adapter,
                                  const struct xg_entity *e);

#endif
