/* Entity source names built from peer strings, fitted into a fixed buffer without ever merging
 * two different strings (issue 22 item 7).
 *
 * A string that fits (shorter than `size`) is kept as it is, unless it ends like a fitted name
 * ("~" and 24 lowercase hex digits). Any other string is cut (at a UTF-8 character boundary) and
 * gets "~" + the first 96 bits of its SHA-256 in hex appended, so "A"×300+"1" and "A"×300+"2"
 * become two different names, the same ones on every run and every gateway. The two forms cannot
 * meet: a kept string never ends like a fitted one. */
#ifndef XG_NAMES_H
#define XG_NAMES_H

#include <stddef.h>

#define XG_NAME_HASH_HEX 24 /* hex digits of the hash suffix (96 bits) */

/** Fit the `len` bytes at `s` (need not be NUL-terminated) into `out`
 *  (`size` >= 64 bytes incl. the NUL) as described above; a string with an embedded NUL is
 *  fitted (cut at the NUL, hash of all `len` bytes). Returns the length written. */
size_t xg_name_fit(char *out, size_t size, const char *s, size_t len);
/** printf into `out` (`size` >= 64), then fitted as by xg_name_fit(). Returns the length written,
 *  or 0 with out = "" if formatting fails (ENOMEM). */
size_t xg_name_fitf(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
