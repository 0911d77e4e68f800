/* Internal to the LESS codec files (less_codec.c: base encodings; less_msg.c: schemas and
 * messages): the building blocks the message codec shares with the value codec. Not for the
 * adapter or tests: use less_codec.h. */
#ifndef XG_LESS_CODEC_PRIV_H
#define XG_LESS_CODEC_PRIV_H

#include "adapters/less/less_codec.h"

/** `count` items of `size` bytes from the arena; *rc = 0, or -ENOBUFS (err set, "LESS <what>:
 *  decode arena full") and NULL. Zero items give a non-NULL pointer that must not be read. */
void *less_arena_array(struct less_arena *a, size_t count, size_t size, const char *what,
                       struct xg_error *err, int *rc);

/** Reads an unsigned count/length that must not exceed the bytes left divided by `per_item`
 *  (P11) nor `max`: 0 and *out, or -EPROTO (reader error set) naming `what` and the offset. */
int less_get_count(struct xg_reader *r, size_t per_item, uint64_t max, size_t *out,
                   const char *what, struct xg_error *err);

/** Validates a type descriptor at nesting `depth` (0 = top): known code, counts within
 *  LESS_MAX_COUNT, depth within LESS_MAX_DEPTH. Returns 0 or -EINVAL (err set). */
int less_check_type(const struct less_type *t, int depth, struct xg_error *err);

/** Writes v as type t at nesting `depth`. Unlike less_put_value: no descriptor check and no
 *  rollback (a failure may leave a partial value in w); the caller does both. 0 or -errno. */
int less_put_value_depth(struct xg_writer *w, const struct less_type *t, const struct less_value *v,
                         int depth, struct xg_error *err);
/** Writes a STANDALONE-VARIANT (type descriptor, length, value) at nesting `depth`; as
 *  less_put_value_depth, no rollback. 0 or -errno. */
int less_put_variant_depth(struct xg_writer *w, const struct less_value *v, int depth,
                           struct xg_error *err);
/** Reads a value of type t at nesting `depth` (arrays from the arena a). The descriptor is
 *  trusted (schema): no less_check_type. 0, -EPROTO, -EMSGSIZE (truncated) or -ENOBUFS. */
int less_get_value_depth(struct xg_reader *r, const struct less_type *t, struct less_arena *a,
                         struct less_value *v, int depth, struct xg_error *err);
/** Reads a STANDALONE-VARIANT at nesting `depth`: its type, its length and exactly that many
 *  bytes of value. 0 or -errno as less_get_value_depth. */
int less_get_variant_depth(struct xg_reader *r, struct less_arena *a, struct less_value *v,
                           int depth, struct xg_error *err);

#endif
