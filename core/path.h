/* Paths named in the configuration (key files, certificates, BVH takes, mapping files...).
 *
 * One rule for every key that names a file: a relative path is relative to the folder of the
 * configuration file that holds it; an absolute path is used as it is. A configuration that has
 * no folder — the embedded default (its name is in angle brackets, "<embedded ...>") or a file
 * named without a '/' (then it is in the working directory) — resolves against the working
 * directory. Documented in docs/configuration.md ("Paths"). */
#ifndef XG_PATH_H
#define XG_PATH_H

#include <stddef.h>

struct xg_conf;

/** Resolve `path`, the value of the configuration node `at` (its `file` names the configuration
 *  file; `at` may be NULL: then `path` is used as it is), into `out` (NUL-terminated, < size).
 *  Returns 0, or -ENAMETOOLONG when the result does not fit (out then holds "" ), -EINVAL when
 *  path is NULL or empty. */
int xg_conf_path(const struct xg_conf *at, const char *path, char *out, size_t size);

#endif
