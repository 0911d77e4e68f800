/* Entity naming and kind rules, and include/exclude filters (docs/configuration.md `rename:`,
 * `include:`, `exclude:`).
 *
 * A rule {match: GLOB, name: TEMPLATE, kind: KIND} matches the default name "<adapter>/<source>"
 * with fnmatch(3) semantics (`*` also matches '/'); the first matching rule wins. The template
 * is expanded by core/table/names.h (xg_name_expand: {name} = the default name, {adapter} =
 * {origin}, {source}, {kind} = the adapter's suggested kind); without `name:` the name is kept.
 * Without `kind:` the adapter's suggested kind is kept. */
#ifndef XG_NAMING_H
#define XG_NAMING_H

#include <stdbool.h>
#include <stddef.h>

#include "core/conf/conf.h"
#include "core/table/entity.h"

struct xg_rename_rule {
    char *match; /* glob */
    char *name;  /* template or NULL */
    bool has_kind;
    enum xg_kind kind;
};

struct xg_rename_rules {
    struct xg_rename_rule *rules;
    size_t n;
};

/** Parse a `rename:` list (node may be NULL: no rules). Owns its strings. A template with an
 *  unknown placeholder is an error naming `rename[i].name` and the placeholder. */
int xg_rename_from_conf(const struct xg_conf *node, struct xg_rename_rules *out,
                        struct xg_error *err);
void xg_rename_free(struct xg_rename_rules *r);
/** Apply rules to `default_name`; writes the final name (< size, >= 64; a longer expansion is
 *  fitted as by xg_name_fit) and may change *kind.
 *  Returns true if a rule matched. */
bool xg_rename_apply(const struct xg_rename_rules *r, const char *default_name, char *name,
                     size_t size, enum xg_kind *kind);

/** A list of globs on entity names. */
struct xg_globs {
    char **globs;
    size_t n;
};

/** Parse a glob list (a string or a list of strings); node may be NULL (empty list). */
int xg_globs_from_conf(const struct xg_conf *node, struct xg_globs *out, struct xg_error *err);
void xg_globs_free(struct xg_globs *g);
/** True if `name` matches any glob. */
bool xg_globs_match(const struct xg_globs *g, const char *name);

#endif
