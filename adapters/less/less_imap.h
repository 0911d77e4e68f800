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
struct less_imap {
    int64_t *keys;
    uint32_t *vals;
    uint8_t *used;
    size_t cap, n;
};

/** Frees the map's memory and leaves it empty (all-zero). */
void less_imap_free(struct less_imap *m);

/** Sets key k to v (replacing an existing value). Returns 0, or -ENOMEM (the map is unchanged). */
int less_imap_put(struct less_imap *m, int64_t k, uint32_t v);

/** Looks key k up: true and *v set if present. */
bool less_imap_get(const struct less_imap *m, int64_t k, uint32_t *v);

/** Removes key k if present. */
void less_imap_del(struct less_imap *m, int64_t k);

#endif
