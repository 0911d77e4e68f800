/* YAML → configuration tree (core/conf/conf.h) with libyaml.
 *
 * Scalars keep their text; `${VAR}` and `${VAR:-default}` inside scalar values are expanded from
 * the environment (an unset variable without a default is an error naming it). Anchors and
 * aliases are rejected; duplicate keys in a mapping are errors. Every error reads
 * `file:line:column: message` (1-based).
 *
 * Bounds (so that no file can exhaust the stack or memory; each is an error at the position of
 * the offending node): files up to 16 MiB, mappings/lists nested at most XG_CONF_YAML_MAX_DEPTH
 * deep, scalars up to XG_CONF_YAML_MAX_SCALAR bytes (also after ${VAR} expansion), keys up to
 * XG_CONF_YAML_MAX_KEY bytes, at most XG_CONF_YAML_MAX_NODES nodes. */
#ifndef XG_CONF_YAML_H
#define XG_CONF_YAML_H

#include <stddef.h>

#include "core/conf/conf.h"

/** Deepest nesting of mappings and lists (the root mapping is level 1): "mapping nested deeper
 *  than 64 levels". The parser recurses once per level. */
#define XG_CONF_YAML_MAX_DEPTH 64
/** Longest scalar value in bytes, before and after ${VAR} expansion. */
#define XG_CONF_YAML_MAX_SCALAR 65536
/** Longest mapping key in bytes. */
#define XG_CONF_YAML_MAX_KEY 1024
/** Most nodes (scalars, mappings, lists) in one file (a real configuration has hundreds). */
#define XG_CONF_YAML_MAX_NODES 100000

/** Parse `len` bytes of YAML text; `file` names it in errors and is copied. An empty document
 *  gives an empty map. Returns the root (caller frees with xg_conf_yaml_free) or NULL with err. */
struct xg_conf *xg_conf_yaml_parse(const char *text, size_t len, const char *file,
                                   struct xg_error *err);
/** Read and parse a file. */
struct xg_conf *xg_conf_yaml_load(const char *path, struct xg_error *err);
/** Free a tree returned by the functions above (also frees its file name). */
void xg_conf_yaml_free(struct xg_conf *root);

#endif
