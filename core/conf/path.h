/* Paths named in the configuration (key files, certificates, BVH takes, mapping files...).
 *
 * One rule for every key that names a file: a relative path is relative to the folder of the
 * configuration file that holds it; an absolute path is used as it is. A configuration that has
 * no folder — the embedded default (its name is in angle brackets, "<embedded ...>") or a file
 * named without a '/' (then it is in the working directory) — resolves against the working
 * directory. Documented in docs/configuration.md ("Paths"). */
#ifndef XG_PATH_H
#define XG_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct xg_conf;

/** Resolve `path`, the value of the configuration node `at` (its `file` names the configuration
 *  file; `at` may be NULL: then `path` is used as it is), into `out` (NUL-terminated, < size).
 *  Returns 0, or -ENAMETOOLONG when the result does not fit (out then holds "" ), -EINVAL when
 *  path is NULL or empty. */
int xg_conf_path(const struct xg_conf *at, const char *path, char *out, size_t size);

/* ---- files the configuration names (issue 30 item 7) ----
 *
 * Every file a configuration names (the configuration itself, the admin token, TLS certificates
 * and keys, resolv.conf, BVH takes, key files, mapping files, Cyclone's config_file...) must be a
 * regular file. A FIFO would block open() and read() until a writer appears (`--check` and
 * start-up hung forever, without a log line), a device could be read without end: both are a
 * configuration error instead. The file is looked at with stat() first (a device is not even
 * opened), then opened with O_NONBLOCK (a FIFO swapped in meanwhile cannot block the open) and
 * checked again with fstat() on what was opened. */

/** Open `path` for reading (close-on-exec, blocking mode once checked). Returns the fd, or a
 *  negative errno: -EINVAL when it is not a regular file, with `*kind` (if kind != NULL) naming
 *  what it is ("a FIFO", "a directory", "a character device", "a block device", "a socket");
 *  otherwise *kind is set to NULL. With `allow_stdin`, the process's own standard input (a pipe,
 *  as in `--config /dev/stdin`) is accepted too. */
int xg_file_open_regular(const char *path, bool allow_stdin, const char **kind);
/** The same as a stdio stream (`mode` "r" or "rb"); NULL with *rc (negative errno) and *kind set
 *  as above. */
FILE *xg_file_fopen_regular(const char *path, const char *mode, bool allow_stdin, int *rc,
                            const char **kind);
/** Check that `path` is a regular file that can be opened for reading (opened and closed again,
 *  never blocking): 0, or a negative errno and *kind as above. For files a library opens by
 *  itself (mbedtls, Cyclone DDS). */
int xg_file_check_regular(const char *path, const char **kind);
/** Text for an error: strerror(-rc), or "not a regular file (<kind>)" for -EINVAL with a kind.
 *  Static storage or `kind`-dependent; valid until the next call. */
const char *xg_file_strerror(int rc, const char *kind);

#endif
