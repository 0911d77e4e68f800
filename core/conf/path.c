#include "core/conf/path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/conf/conf.h"

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

static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISDIR(m)  ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a file";
}

/* st is the process's standard input (a pipe or a file it was started with) */
static bool is_stdin(const struct stat *st)
{
    struct stat in;
    return fstat(0, &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino;
}

int xg_file_open_regular(const char *path, bool allow_stdin, const char **kind)
{
    const char *k = NULL;
    if (kind) *kind = NULL;
    struct stat st;
    if (stat(path, &st)) return -errno;
    if (!S_ISREG(st.st_mode) && !(allow_stdin && is_stdin(&st))) {
        k = kind_of(st.st_mode);
        if (kind) *kind = k;
        return -EINVAL;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return -errno;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (!S_ISREG(st.st_mode) && !(allow_stdin && is_stdin(&st))) { /* swapped since stat() */
        if (kind) *kind = kind_of(st.st_mode);
        close(fd);
        return -EINVAL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

FILE *xg_file_fopen_regular(const char *path, const char *mode, bool allow_stdin, int *rc,
                            const char **kind)
{
    int fd = xg_file_open_regular(path, allow_stdin, kind);
    if (fd < 0) {
        if (rc) *rc = fd;
        return NULL;
    }
    FILE *f = fdopen(fd, mode);
    if (!f) {
        int e = errno;
        close(fd);
        if (rc) *rc = -e;
        return NULL;
    }
    if (rc) *rc = 0;
    return f;
}

int xg_file_check_regular(const char *path, const char **kind)
{
    int fd = xg_file_open_regular(path, false, kind);
    if (fd < 0) return fd;
    close(fd);
    return 0;
}

const char *xg_file_strerror(int rc, const char *kind)
{
    static char buf[64];
    if (rc == -EINVAL && kind) {
        snprintf(buf, sizeof buf, "not a regular file (%s)", kind);
        return buf;
    }
    return strerror(-rc);
}
