#include "core/util/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <time.h>

#include "core/clock/clock.h"
#include "core/table/names.h"

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

/* Writes s as one line's worth of text: control characters and bytes that are not UTF-8 are
 * escaped (\n \r \t \xNN); in JSON mode '"' and '\' are escaped too, and \xNN is written as the
 * text "\\xNN" so that the line stays valid JSON. */
static void put_escaped(FILE *f, const char *str, bool json)
{
    const unsigned char *s = (const unsigned char *)str;
    const char *bs = json ? "\\\\" : "\\";
    while (*s) {
        unsigned char c = *s;
        /* a NUL ends a sequence early (it is no continuation byte), so 4 bytes "left" never
         * reads past the string's end */
        int n = (int)xg_utf8_seq((const char *)s, 4);
        if (c == '\n' || c == '\r' || c == '\t') {
            fputc('\\', f);
            fputc(c == '\n' ? 'n' : c == '\r' ? 'r' : 't', f);
        } else if (c < 0x20 || c == 0x7f || n == 0) {
            fprintf(f, "%sx%02x", bs, c);
            n = 1;
        } else if (json && (c == '"' || c == '\\')) {
            fputc('\\', f);
            fputc(c, f);
        } else {
            fwrite(s, 1, (size_t)n, f);
        }
        s += n;
    }
}

static uint64_t g_suppressed_total;

uint64_t xg_log_suppressed_total(void)
{
    return g_suppressed_total;
}

static void emit(enum xg_log_level lvl, const char *component, const char *msg)
{
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
        put_escaped(stderr, component ? component : "xrgate", true);
        fputs("\",\"msg\":\"", stderr);
        put_escaped(stderr, msg, true);
        fputs("\"}\n", stderr);
    } else {
        fprintf(stderr, "%s %-5s [", tbuf, xg_log_level_name(lvl));
        put_escaped(stderr, component ? component : "xrgate", false);
        fputs("] ", stderr);
        put_escaped(stderr, msg, false);
        fputc('\n', stderr);
    }
    funlockfile(stderr);
}

void xg_log(enum xg_log_level lvl, const char *component, const char *fmt, ...)
{
    if (lvl > g_level) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    emit(lvl, component, msg);
}

bool xg_log_admit(struct xg_log_limit *lim, enum xg_log_level lvl)
{
    if (lvl > g_level) return false;
    if (!lim) return true;
    int64_t now = xg_clock_mono_ns();
    if (!lim->window_start_ns || now - lim->window_start_ns >= XG_LOG_LIMIT_INTERVAL_NS) {
        lim->window_start_ns = now;
        lim->in_window = 0;
    }
    if (lim->in_window >= XG_LOG_LIMIT_BURST) {
        if (!lim->suppressed++) lim->suppressed_since_ns = now;
        g_suppressed_total++;
        return false;
    }
    lim->in_window++;
    return true;
}

static void vadmitted(struct xg_log_limit *lim, enum xg_log_level lvl, const char *component,
                      const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
static void vadmitted(struct xg_log_limit *lim, enum xg_log_level lvl, const char *component,
                      const char *fmt, va_list ap)
{
    char msg[1024];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
    if (lim && lim->suppressed) {
        double s = (double)(xg_clock_mono_ns() - lim->suppressed_since_ns) * 1e-9;
        snprintf(msg + len, sizeof msg - len,
                 " (%" PRIu64 " similar line%s suppressed in the last %.0f s)", lim->suppressed,
                 lim->suppressed == 1 ? "" : "s", s < 1 ? 1 : s);
        lim->suppressed = 0;
    }
    emit(lvl, component, msg);
}

void xg_log_admitted(struct xg_log_limit *lim, enum xg_log_level lvl, const char *component,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vadmitted(lim, lvl, component, fmt, ap);
    va_end(ap);
}

void xg_log_limited(struct xg_log_limit *lim, enum xg_log_level lvl, const char *component,
                    const char *fmt, ...)
{
    if (!xg_log_admit(lim, lvl)) return; /* decided before anything is formatted */
    va_list ap;
    va_start(ap, fmt);
    vadmitted(lim, lvl, component, fmt, ap);
    va_end(ap);
}
