/* Configuration tree: the parsed YAML file as nodes that remember where they came from.
 *
 * The gateway loads the file (mappings/conf_yaml.h) into this tree; each component reads its own
 * keys through the typed getters below, which mark the keys as used and report errors as
 * `file:line:column: message`. After a component has read its section,
 * xg_conf_check_unused() turns every key nobody read into an "unknown key" error. */
#ifndef XG_CONF_H
#define XG_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/error.h"

enum xg_conf_type { XG_CONF_SCALAR, XG_CONF_MAP, XG_CONF_SEQ };

struct xg_conf {
    enum xg_conf_type type;
    char *key;        /* map member key (NULL for sequence items and the root) */
    char *value;      /* scalar text (NULL for maps/sequences) */
    bool quoted;      /* scalar was quoted in the source (then never null/bool) */
    const char *file; /* source file name (shared, owned by the root) */
    int line, column; /* 1-based position of the value */
    int key_line, key_column;
    bool used;              /* read by a component */
    struct xg_conf **items; /* children (map members or sequence items), owned */
    size_t n_items;
    char **asked; /* maps: every key a component asked for, present or not (owned copies):
                   * the candidates of an unknown key's "did you mean" */
    size_t n_asked;
};

/** Free a tree and everything it owns (NULL allowed). */
void xg_conf_free(struct xg_conf *c);

/** Allocate a node (internal to loaders). Returns NULL on ENOMEM. */
struct xg_conf *xg_conf_new(enum xg_conf_type type, const char *file, int line, int column);
/** Append a child to a map or sequence node; takes ownership. -ENOMEM on failure. */
int xg_conf_append(struct xg_conf *parent, struct xg_conf *child);

/** Map member `key` of `c` (marks it used), or NULL if absent or c is not a map. A map also
 *  remembers every key asked for, present or not (c->asked), so that xg_conf_check_unused can
 *  suggest the nearest valid key for a misspelt one. */
struct xg_conf *xg_conf_get(const struct xg_conf *c, const char *key);

/** Error at a node's position: "file:line:col: <fmt>"; returns code. */
int xg_conf_error(struct xg_error *err, const struct xg_conf *at, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Typed getters: if the key is absent, *out = def and 0 is returned; if present with the wrong
 * type or out of [min, max], -EINVAL with a file:line:col error naming the key and value. */
int xg_conf_string(const struct xg_conf *c, const char *key, const char *def, const char **out,
                   struct xg_error *err);
int xg_conf_int(const struct xg_conf *c, const char *key, int64_t def, int64_t min, int64_t max,
                int64_t *out, struct xg_error *err);
int xg_conf_double(const struct xg_conf *c, const char *key, double def, double min, double max,
                   double *out, struct xg_error *err);
int xg_conf_bool(const struct xg_conf *c, const char *key, bool def, bool *out,
                 struct xg_error *err);
/** Scalar value of node `n` parsed as int/double/bool (for sequence items). */
int xg_conf_node_int(const struct xg_conf *n, int64_t min, int64_t max, int64_t *out,
                     struct xg_error *err);
int xg_conf_node_double(const struct xg_conf *n, double min, double max, double *out,
                        struct xg_error *err);
/** Require `n` to have `type` (error names `what`). */
int xg_conf_expect(const struct xg_conf *n, enum xg_conf_type type, const char *what,
                   struct xg_error *err);

/** First member key of map `c` (recursively) that no component read: error "unknown key 'k'",
 *  followed by " (did you mean 'x'?)" when a key asked for in the same map is within a small
 *  edit distance (xg_conf_edit_distance <= 2, and less than half the unknown key's length). */
int xg_conf_check_unused(const struct xg_conf *c, struct xg_error *err);
/** Every unused member key under `c` (recursively, in file order), each as its own
 *  xg_conf_check_unused error passed to fn (e only valid during the call); returns how many.
 *  typos_only: only keys whose did-you-mean key was asked for and is absent from the map (a
 *  misspelt key, e.g. 'devcies' for a required 'devices'): safe on a section whose reader
 *  stopped at an error, where the keys it did not reach yet are unused but valid. */
int xg_conf_unused_each(const struct xg_conf *c, bool typos_only,
                        void (*fn)(void *user, const struct xg_error *e), void *user);
/** Optimal-string-alignment edit distance between a and b (insertions, deletions,
 *  substitutions and transpositions of neighbours cost 1), capped: returns at most `cap` + 1
 *  (strings longer than 63 bytes: `cap` + 1). */
int xg_conf_edit_distance(const char *a, const char *b, int cap);
/** Mark `c` and everything under it as used (for sections read by another path). */
void xg_conf_mark_used(struct xg_conf *c);

#endif
