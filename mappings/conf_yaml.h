/* YAML → configuration tree (core/conf.h) with libyaml.
 *
 * Scalars keep their text; `${VAR}` and `${VAR:-default}` inside scalar values are expanded from
 * the environment (an unset variable without a default is an error naming it). Anchors and
 * aliases are rejected; duplicate keys in a mapping are errors. Every error reads
 * `file:line:column: message` (1-based). */
#ifndef XG_CONF_YAML_H
#define XG_CONF_YAML_H

#include <stddef.h>

#include "core/conf.h"

/** Parse `len` bytes of YAML text; `file` names it in errors and is copied. An empty document
 *  gives an empty map. Returns the root (caller frees with xg_conf_yaml_free) or NULL with err. */
struct xg_conf *xg_conf_yaml_parse(const char *text, size_t len, const char *file,
                                   struct xg_error *err);
/** Read and parse a file. */
struct xg_conf *xg_conf_yaml_load(const char *path, struct xg_error *err);
/** Free a tree returned by the functions above (also frees its file name). */
void xg_conf_yaml_free(struct xg_conf *root);

#endif
