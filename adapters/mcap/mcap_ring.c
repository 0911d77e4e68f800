/* Single-producer single-consumer byte ring (mcap_ring.h). */
#include "adapters/mcap/mcap_ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mcap_ring_init(struct mcap_ring *q, size_t cap)
{
    memset(q, 0, sizeof *q);
    cap &= ~(size_t)7;
    if (cap < 64) cap = 64;
    if (!(q->p = malloc(cap))) return -ENOMEM;
    q->cap = cap;
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    return 0;
}

void mcap_ring_free(struct mcap_ring *q)
{
    free(q->p);
    q->p = NULL;
    q->cap = 0;
}

bool mcap_ring_reserve(struct mcap_ring *q, size_t bytes, uint64_t *pos)
{
    uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed); /* ours */
    if (bytes > q->cap) return false;
    if (head + bytes - q->tail_seen > q->cap) {
        q->tail_seen = atomic_load_explicit(&q->tail, memory_order_acquire);
        if (head + bytes - q->tail_seen > q->cap) return false;
    }
    *pos = head;
    return true;
}

/* Copy n bytes to ring offset `at`, wrapping around the end. */
static void copy_in(struct mcap_ring *q, size_t at, const void *data, size_t n)
{
    size_t first = q->cap - at < n ? q->cap - at : n;
    memcpy(q->p + at, data, first);
    if (n > first) memcpy(q->p, (const uint8_t *)data + first, n - first);
}

void mcap_ring_put(struct mcap_ring *q, uint64_t *pos, uint32_t type, const void *data, size_t n)
{
    size_t at = (size_t)(*pos % q->cap); /* a multiple of 8: the header is contiguous */
    uint32_t h[2] = {(uint32_t)n, type};
    memcpy(q->p + at, h, sizeof h);
    at += 8;
    if (at == q->cap) at = 0;
    if (n) copy_in(q, at, data, n);
    *pos += mcap_ring_size(n);
}

void mcap_ring_publish(struct mcap_ring *q, uint64_t pos)
{
    atomic_store_explicit(&q->head, pos, memory_order_release);
}

bool mcap_ring_get(struct mcap_ring *q, uint64_t *pos, uint32_t *type, void *out, size_t size,
                   size_t *len)
{
    if (*pos >= atomic_load_explicit(&q->head, memory_order_acquire)) return false;
    size_t at = (size_t)(*pos % q->cap);
    uint32_t h[2];
    memcpy(h, q->p + at, sizeof h);
    at += 8;
    if (at == q->cap) at = 0;
    size_t n = h[0] < size ? h[0] : size;
    size_t first = q->cap - at < n ? q->cap - at : n;
    memcpy(out, q->p + at, first);
    if (n > first) memcpy((uint8_t *)out + first, q->p, n - first);
    *type = h[1];
    *len = h[0];
    *pos += mcap_ring_size(h[0]);
    return true;
}

void mcap_ring_release(struct mcap_ring *q, uint64_t pos)
{
    atomic_store_explicit(&q->tail, pos, memory_order_release);
}

size_t mcap_ring_used(const struct mcap_ring *q)
{
    uint64_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
    uint64_t h = atomic_load_explicit(&q->head, memory_order_acquire);
    return (size_t)(h - t);
}
