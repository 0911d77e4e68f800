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

#include <stdbool.h>
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

/* ---- UTF-8 (issue 30 item 4) ----
 *
 * Names are UTF-8 from ingress on (docs/configuration.md, "Names"): the entity table passes
 * every source name through xg_name_utf8() before it looks it up or creates an entity, so that
 * every adapter that takes names from the wire (a VMC serial, a DDS child_frame_id, a VRPN
 * sender, an RGMP name...) gives a name that JSON (/api/entities, /events) and clients can
 * carry. */

/** Length (1..4) of the valid UTF-8 sequence at s (`left` bytes readable, >= 1), or 0 when the
 *  bytes there are not UTF-8 (a stray continuation byte, an overlong form, a surrogate, a code
 *  point past U+10FFFF, a truncated sequence). */
size_t xg_utf8_seq(const char *s, size_t left);
/** True when s[0..len) is valid UTF-8. */
bool xg_utf8_valid(const char *s, size_t len);
/** Copy s[0..len) to out (room for 3·len bytes, not NUL-terminated) with every byte that does
 *  not start a valid sequence, and every NUL, replaced by U+FFFD (ef bf bd). Returns the bytes
 *  written. */
size_t xg_utf8_repair(char *out, const char *s, size_t len);
/** Valid UTF-8 s[0..len) is fitted as by xg_name_fit(). Otherwise every byte that does not start
 *  a valid sequence (and every NUL) is replaced with U+FFFD, and the result gets "~" + the first
 *  96 bits of the SHA-256 of the original bytes (cut to fit first), so that two different
 *  invalid names (ff and fe) never become one name, and the same bytes always give the same
 *  name. Returns the length written (0 with out = "" on ENOMEM). `size` >= 64. */
size_t xg_name_utf8(char *out, size_t size, const char *s, size_t len);

/* ---- name templates ----
 *
 * The one template engine for names built from an entity (docs/configuration.md, "Name
 * templates"): `rename:` names and vrpn-server tracker names. Placeholders: {name} (the entity's
 * name), {adapter} (its origin adapter; {origin} is the same placeholder, both spellings stay
 * valid), {source} (the name without its "<adapter>/" prefix), {kind} (rigid_body, head, ...).
 * "{{" writes "{" and "}}" writes "}"; a lone "}" is kept as it is. Any other "{...}" is an error
 * when the configuration is loaded (xg_name_template_check). The expanded name is fitted as by
 * xg_name_fit(), so two different long results never become one name. */

struct xg_conf;
struct xg_error;

/** The values of the placeholders for one entity (borrowed strings, NULL counts as ""). */
struct xg_name_vars {
    const char *name;    /* {name} */
    const char *adapter; /* {adapter} = {origin} */
    const char *source;  /* {source} */
    const char *kind;    /* {kind} */
};

/** Fill `v` for entity name `name` of origin adapter `adapter`, kind name `kind` (NULL counts as
 *  ""): source is `name` past "<adapter>/" when it starts so, else the whole name. The strings
 *  are borrowed. */
void xg_name_vars_set(struct xg_name_vars *v, const char *name, const char *adapter,
                      const char *kind);

/** Check template `tpl` of configuration key `key` (node `at`, for the file:line:col): 0, or
 *  -EINVAL with err naming the key and the unknown placeholder ("rename[0].name: unknown
 *  placeholder '{nmae}' in '{nmae}-x' (known: ...)") or the unclosed brace. */
int xg_name_template_check(const char *tpl, const struct xg_conf *at, const char *key,
                           struct xg_error *err);

/** Expand `tpl` with `v` into `out` (`size` >= 64 bytes incl. the NUL), fitted as by
 *  xg_name_fit(). An unknown placeholder (only in a template never checked) is copied as it is.
 *  Returns the length written, or 0 with out = "" on ENOMEM. */
size_t xg_name_expand(char *out, size_t size, const char *tpl, const struct xg_name_vars *v);

#endif
