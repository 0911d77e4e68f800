/* The vmc adapter's device entities (hmd/con/tra): at most `max` alive at once, found by source
 * name through a hash index (O(1) per message, whatever max_devices is), each holding the
 * newest value the current datagram carried for it until the datagram has been read whole
 * (vmc_ingress.c pushes every pending value once, so a later message of a device in one
 * datagram wins instead of being dropped by the table as "not newer"). No sockets, no table. */
#ifndef VMC_DEVICES_H
#define VMC_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/table/entity.h"

/** One device slot. */
struct vmc_device {
    bool used;             /* slot taken by `src` */
    bool pending;          /* `s` waits to be pushed at the end of the datagram */
    uint8_t kind;          /* index into vmc_ingress.c's device addresses */
    uint32_t id;           /* table id, 0 = not (or no longer) in the table */
    uint64_t timetag;      /* OSC time tag of the pending value (OSC_TIMETAG_IMMEDIATE: none) */
    struct xg_sample s;    /* pending value, already in the internal frame */
    char src[XG_NAME_MAX]; /* source name, "tra/<serial>" */
};

/** The set: `max` slots, an open-addressing index of 2^k >= 2·max entries (slot + 1; 0 = empty)
 *  and the list of pending slots of the current datagram. */
struct vmc_devices {
    struct vmc_device *d;
    size_t max, n_used;
    size_t hint; /* where the search for a free slot starts */
    uint32_t *index;
    size_t index_mask;
    uint32_t *pend;
    size_t n_pend;
};

/** Allocate for `max` (>= 1) devices. 0 or -ENOMEM (then vmc_devices_free() is still safe). */
int vmc_devices_init(struct vmc_devices *v, size_t max);
void vmc_devices_free(struct vmc_devices *v);
/** Slot of source `src`, or -1. */
long vmc_devices_find(const struct vmc_devices *v, const char *src);
/** A new slot for `src` (not already present; shorter than XG_NAME_MAX), or -1 when all `max`
 *  slots are taken. */
long vmc_devices_add(struct vmc_devices *v, const char *src, uint8_t kind);
/** Free slot `i` (must not be pending). Call vmc_devices_reindex() after a batch of these. */
void vmc_devices_release(struct vmc_devices *v, size_t i);
/** Rebuild the index from the used slots (after releases). */
void vmc_devices_reindex(struct vmc_devices *v);
/** Mark slot `i` pending (listed once per datagram). */
void vmc_devices_mark(struct vmc_devices *v, size_t i);

#endif
