/* A small open-addressing hash map, int64 key -> uint32 value, used by the less adapter for its
 * per-peer id tables (wire id -> index, table id -> index, wire id -> table id). Zero-initialise
 * a map; it grows by doubling (64 slots first); deletion keeps probe chains intact (backward
 * shift). */
#ifndef XG_LESS_IMAP_H
#define XG_LESS_IMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The map; all-zero is an empty map that owns no memory. */
struct imap {
    int64_t *keys;
    uint32_t *vals;
    uint8_t *used;
    size_t cap, n;
};

/** Frees the map's memory and leaves it empty (all-zero). */
void imap_free(struct imap *m);

/** Sets key k to v (replacing an existing value). Returns 0, or -ENOMEM (the map is unchanged). */
int imap_put(struct imap *m, int64_t k, uint32_t v);

/** Looks key k up: true and *v set if present. */
bool imap_get(const struct imap *m, int64_t k, uint32_t *v);

/** Removes key k if present. */
void imap_del(struct imap *m, int64_t k);

#endif
