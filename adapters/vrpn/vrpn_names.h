/* vrpn-server sensor names: which entity name has which (tracker, sensor), for live entities and
 * for a bounded number of recently departed ones (so that a source that restarts gets its
 * numbers back), with storage reused when a name is forgotten. Pure bookkeeping, no I/O
 * (unit-tested in tests/unit/test_vrpn_names.c). Not thread-safe (the reactor's thread only). */
#ifndef XG_VRPN_NAMES_H
#define XG_VRPN_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/table/entity.h"

/** One entity name. Index into vrpn_names.slots; stable while the name is remembered. */
struct vrpn_name {
    char name[XG_NAME_MAX]; /**< "" = free */
    uint32_t id;            /**< table id of the live entity, 0 = departed or free */
    int tracker, sensor;    /**< the server's tracker index and sensor number; -1 when free */
    int ctl;                /**< tracker index whose name serves this name's buttons/analogs:
                                 -1 = not decided yet, -2 = none (a warning said why) */
    bool departed;          /**< the entity is gone; name and number are remembered */
    int next;               /**< name hash chain (free list while free) */
    int dprev, dnext;       /**< departed list, oldest first */
};

/** The registry. Zero it, then vrpn_names_init(). */
struct vrpn_names {
    struct vrpn_name *slots;
    int n_slots, cap_slots;        /* slots[0..n_slots) used, live, departed or free */
    int free_head, n_free;         /* free list */
    int dep_head, dep_tail, n_dep; /* departed list */
    int dep_max;                   /* departed names remembered at most */
    int *heads;                    /* name hash buckets (VRPN_NAMES_BUCKETS) */
};

#define VRPN_NAMES_BUCKETS 4096

/** Called when a departed name is forgotten: its (tracker, sensor) may be given to another name.
 *  `i` is its index (free once the call returns). */
typedef void (*vrpn_names_forget_fn)(void *user, int i, int tracker, int sensor);

/** Set up an empty registry remembering at most `dep_max` (>= 0) departed names. -ENOMEM. */
int vrpn_names_init(struct vrpn_names *n, int dep_max);
/** Free everything (the registry is zeroed). */
void vrpn_names_free(struct vrpn_names *n);
/** Index of `name` (live or departed), or -1. */
int vrpn_names_find(const struct vrpn_names *n, const char *name);
/** Add a new live name (not present yet) with entity id `id` and its tracker and sensor; reuses a
 *  forgotten name's storage first. Returns its index or -ENOMEM. */
int vrpn_names_add(struct vrpn_names *n, const char *name, int tracker, int sensor, uint32_t id);
/** Name `i` belongs to the live entity `id` (again): a departed name keeps its number. */
void vrpn_names_live(struct vrpn_names *n, int i, uint32_t id);
/** The entity of name `i` is gone: it is remembered as departed; past dep_max departed names, the
 *  oldest are forgotten, each reported to `fn` (may be NULL). */
void vrpn_names_depart(struct vrpn_names *n, int i, vrpn_names_forget_fn fn, void *user);
/** Forget departed name `i` now (its number is wanted by a live entity); reported to `fn`. A live
 *  or free name is left alone. */
void vrpn_names_forget(struct vrpn_names *n, int i, vrpn_names_forget_fn fn, void *user);
/** Index of the name (live or departed) holding sensor `sensor` of tracker `tracker`, or -1. O(n).
 */
int vrpn_names_holder(const struct vrpn_names *n, int tracker, int sensor);
/** Names remembered (live + departed). */
int vrpn_names_count(const struct vrpn_names *n);

#endif
