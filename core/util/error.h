/* xg_error: the human-readable reason that travels with a negative errno.
 *
 * Functions in xrgate return 0 or a negative errno (-EINVAL, -EPROTO, -EMSGSIZE, -ENOMEM...) and,
 * when given a non-NULL struct xg_error, fill it with a message that names the peer, the field and
 * the offending value. The message is owned by the struct (fixed buffer, truncated). */
#ifndef XG_ERROR_H
#define XG_ERROR_H

#include <stdarg.h>

#define XG_ERROR_MAX 320

struct xg_error {
    int code;               /* negative errno of the failure, 0 when unset */
    char msg[XG_ERROR_MAX]; /* NUL-terminated reason, "" when unset */
};

/** Set err (if non-NULL) to code and a printf-formatted message; returns code, so that
 *  `return xg_error_set(err, -EPROTO, "...")` reads naturally. */
int xg_error_set(struct xg_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Prefix the current message with a printf-formatted context ("peer 1.2.3.4:5: "); returns
 *  err->code. A NULL err is allowed. */
int xg_error_prefix(struct xg_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Clear err (if non-NULL). */
void xg_error_clear(struct xg_error *err);

#endif
