#include "core/path.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/conf.h"

int xg_conf_path(const struct xg_conf *at, const char *path, char *out, size_t size)
{
    if (size) out[0] = '\0';
    if (!path || !*path) return -EINVAL;
    const char *file = at ? at->file : NULL;
    /* "<embedded conf/xrgate.yaml>" is a name, not a file: it has no folder */
    const char *slash = file && file[0] != '<' ? strrchr(file, '/') : NULL;
    int n;
    if (path[0] == '/' || !slash)
        n = snprintf(out, size, "%s", path);
    else
        n = snprintf(out, size, "%.*s/%s", (int)(slash - file), file, path);
    if (n < 0 || (size_t)n >= size) {
        if (size) out[0] = '\0';
        return -ENAMETOOLONG;
    }
    return 0;
}
