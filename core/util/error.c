#include "core/util/error.h"

#include <stdio.h>
#include <string.h>

int xg_error_set(struct xg_error *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int xg_error_prefix(struct xg_error *err, const char *fmt, ...)
{
    if (!err) return 0;
    char pre[XG_ERROR_MAX], old[XG_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s%s", pre, old);
    return err->code;
}

void xg_error_clear(struct xg_error *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}
