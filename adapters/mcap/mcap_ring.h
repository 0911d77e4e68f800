/* A single-producer single-consumer byte ring: the recorder's queue between the event loop (the
 * producer, mcap_record.c's sample tap) and its writer thread (the consumer). No lock: the
 * producer publishes with a release store of `head`, the consumer frees space with a release
 * store of `tail`.
 *
 * Records: an 8-byte header (u32 payload length, u32 type) and the payload, padded to 8 bytes;
 * a payload may wrap around the end of the buffer (the header never does). A producer writes one
 * or more records at a private position (mcap_ring_put) and publishes them together
 * (mcap_ring_publish): the consumer sees all of them or none. */
#ifndef XG_MCAP_RING_H
#define XG_MCAP_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mcap_ring {
    uint8_t *p;
    size_t cap;            /* bytes, a multiple of 8 */
    _Atomic uint64_t head; /* bytes ever published (producer) */
    _Atomic uint64_t tail; /* bytes ever consumed (consumer) */
    uint64_t tail_seen;    /* producer's copy of tail, refreshed when space seems short */
};

/** Bytes a record with an n-byte payload takes. */
static inline size_t mcap_ring_size(size_t n)
{
    return 8 + ((n + 7) & ~(size_t)7);
}

/** Allocate a ring of cap bytes (rounded down to a multiple of 8, at least 64). 0 or -ENOMEM. */
int mcap_ring_init(struct mcap_ring *q, size_t cap);
void mcap_ring_free(struct mcap_ring *q);

/* ---- producer ---- */
/** Start writing records of `bytes` bytes in all (the sum of mcap_ring_size()): true and *pos
 *  set to the private write position, or false when they do not fit (nothing written). */
bool mcap_ring_reserve(struct mcap_ring *q, size_t bytes, uint64_t *pos);
/** Write one record at *pos (within what mcap_ring_reserve() granted) and advance *pos. */
void mcap_ring_put(struct mcap_ring *q, uint64_t *pos, uint32_t type, const void *data, size_t n);
/** Make everything written up to pos visible to the consumer. */
void mcap_ring_publish(struct mcap_ring *q, uint64_t pos);

/* ---- consumer ---- */
/** Read the record at *pos if one is published (*pos < head): copies its payload (at most `size`
 *  bytes: longer payloads are cut) into out, stores its type and full length, advances *pos and
 *  returns true; false when the ring holds nothing more. Call mcap_ring_release(q, *pos) to give
 *  the space back (every few records, and at the end of a batch). */
bool mcap_ring_get(struct mcap_ring *q, uint64_t *pos, uint32_t *type, void *out, size_t size,
                   size_t *len);
/** Give back the space of every record before pos. */
void mcap_ring_release(struct mcap_ring *q, uint64_t pos);
/** Bytes published and not yet released (any thread). */
size_t mcap_ring_used(const struct mcap_ring *q);

#endif
