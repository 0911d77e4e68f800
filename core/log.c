#include "core/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <time.h>

static enum xg_log_level g_level = XG_LOG_INFO;
static bool g_json;

static const char *const names[] = {"error", "warn", "info", "debug", "trace"};

void xg_log_set_level(enum xg_log_level lvl)
{
    g_level = lvl;
}
enum xg_log_level xg_log_get_level(void)
{
    return g_level;
}
void xg_log_set_json(bool json)
{
    g_json = json;
}
bool xg_log_enabled(enum xg_log_level lvl)
{
    return lvl <= g_level;
}

const char *xg_log_level_name(enum xg_log_level lvl)
{
    return (unsigned)lvl < sizeof names / sizeof names[0] ? names[lvl] : "?";
}

int xg_log_parse_level(const char *s, enum xg_log_level *out)
{
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (s && strcasecmp(s, names[i]) == 0) {
            *out = (enum xg_log_level)i;
            return 0;
        }
    }
    if (s && strcasecmp(s, "warning") == 0) {
        *out = XG_LOG_WARN;
        return 0;
    }
    return -EINVAL;
}

static void json_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

void xg_log(enum xg_log_level lvl, const char *component, const char *fmt, ...)
{
    if (lvl > g_level) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char tbuf[40];
    snprintf(tbuf, sizeof tbuf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);

    flockfile(stderr);
    if (g_json) {
        fprintf(stderr, "{\"ts\":\"%s\",\"level\":\"%s\",\"component\":\"", tbuf,
                xg_log_level_name(lvl));
        json_escape(stderr, component ? component : "xrgate");
        fputs("\",\"msg\":\"", stderr);
        json_escape(stderr, msg);
        fputs("\"}\n", stderr);
    } else {
        fprintf(stderr, "%s %-5s [%s] %s\n", tbuf, xg_log_level_name(lvl),
                component ? component : "xrgate", msg);
    }
    funlockfile(stderr);
}
