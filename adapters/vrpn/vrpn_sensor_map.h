/* vrpn-server: the pure parts of mapping entities to VRPN trackers and sensors (no I/O, no
 * table access; unit-tested in tests/unit/test_vrpn_sensor_map.c): name order, templates, the
 * per-tracker set of sensor numbers in use. The numbering rule itself
 * (source number kept, conflicts, natural order) is described in vrpn_server.c's header. */
#ifndef XG_VRPN_SENSOR_MAP_H
#define XG_VRPN_SENSOR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/table/entity.h"

/** Numeric-aware ("natural") order of two names: runs of digits compare as numbers, so "body2"
 *  sorts before "body10" and "Tracker0/9" before "Tracker0/10"; other bytes compare as unsigned
 *  chars. Names equal as numbers ("b01", "b1") are ordered by strcmp, so the order is total.
 *  Returns <0, 0 or >0. */
int vrpn_natcmp(const char *a, const char *b);

/** qsort comparator over `const struct xg_entity *` elements: the order in which entities that
 *  appear together get sensor numbers. Entities that carry their source's sensor number
 *  (source_sensor >= 0) come first (they claim that number), then the others; within each group
 *  names in natural order (vrpn_natcmp). */
int vrpn_sensor_map_order(const void *x, const void *y);

/** Expand a tracker-name template for entity `e` of origin adapter `origin` into out (size >= 64)
 *  with the one name template engine (core/table/names.h xg_name_expand: {name}, {adapter} =
 * {origin}, {source}, {kind}; a longer result is fitted, never cut short). */
void vrpn_sensor_map_expand(const char *tpl, const char *origin, const struct xg_entity *e,
                            char *out, size_t size);

/** A growable set of sensor numbers (the numbers of one tracker in use or reserved). Zero it to
 *  start; free(set.b) when done. */
struct vrpn_bitset {
    uint8_t *b;
    size_t bits; /* capacity, a multiple of 64 */
};
/** Is b (>= 0) in the set? Negative b: false. */
bool vrpn_bitset_get(const struct vrpn_bitset *s, int64_t b);
/** Add b (>= 0), growing the set. 0 or -ENOMEM (set unchanged). */
int vrpn_bitset_set(struct vrpn_bitset *s, int64_t b);
/** Remove b; negative or absent b: nothing. */
void vrpn_bitset_clear(struct vrpn_bitset *s, int64_t b);

#endif
