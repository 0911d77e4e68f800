/* Logging with levels: one line per event on stderr, text or JSON (for log collectors).
 *
 * Text:  2026-11-22T06:30:00.123Z warn  [rig] message
 * JSON:  {"ts":"...","level":"warn","component":"rig","msg":"message"}
 *
 * Every line is one line: control characters in the message or component (a peer-supplied name
 * with a newline, say) are written escaped (`\n`, `\r`, `\t`, `\xNN`), and so are bytes that
 * are not UTF-8, in both formats. Lines a peer can trigger go through a rate limiter
 * (struct xg_log_limit, XG_WARN_PEER) so that a flood of bad input cannot flood the log. */
#ifndef XG_LOG_H
#define XG_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum xg_log_level { XG_LOG_ERROR = 0, XG_LOG_WARN, XG_LOG_INFO, XG_LOG_DEBUG, XG_LOG_TRACE };

/** Set the threshold (messages above it are dropped). */
void xg_log_set_level(enum xg_log_level lvl);
enum xg_log_level xg_log_get_level(void);
/** Parse "error|warn|info|debug|trace" (case-insensitive); -EINVAL if unknown. */
int xg_log_parse_level(const char *s, enum xg_log_level *out);
const char *xg_log_level_name(enum xg_log_level lvl);
/** Emit JSON lines instead of text. */
void xg_log_set_json(bool json);
/** True if a message at `lvl` would be printed (to skip formatting work). */
bool xg_log_enabled(enum xg_log_level lvl);

/** Log one line. `component` is the adapter name or module ("gateway", "admin"); may be NULL. */
void xg_log(enum xg_log_level lvl, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Rate limit for log lines a peer can trigger (bad datagrams, refused connections, ...).
 *
 * One per kind of event and owner (an adapter, a listener); zero-initialised = ready. At most
 * XG_LOG_LIMIT_BURST lines pass per XG_LOG_LIMIT_INTERVAL_NS window; further lines in that window
 * are counted, not printed. The first line that passes after a suppression ends with
 * "(N similar lines suppressed in the last S s)". Not thread-safe (the reactor's thread only). */
struct xg_log_limit {
    int64_t window_start_ns; /* gateway monotonic clock */
    uint32_t in_window;      /* lines printed in the current window */
    uint64_t suppressed;     /* lines held back since the last printed one */
    int64_t suppressed_since_ns;
};

#define XG_LOG_LIMIT_BURST 5
#define XG_LOG_LIMIT_INTERVAL_NS INT64_C(10000000000) /* 10 s */

/** Log one line through `lim` (NULL: not limited). A line above the log threshold is neither
 * printed nor counted. */
void xg_log_limited(struct xg_log_limit *lim, enum xg_log_level lvl, const char *component,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/** The limiter's decision alone, taken before anything is formatted: true when a line at `lvl`
 *  through `lim` (NULL: not limited) is to be printed now (it is then counted in the window),
 *  false when the level is off or the window is full (counted as suppressed, as by
 *  xg_log_limited). A caller that builds its message in several steps (a reason, a peer, a
 *  value) calls this first and formats only on true, then prints with xg_log_admitted(). */
bool xg_log_admit(struct xg_log_limit *lim, enum xg_log_level lvl);
/** Print a line that xg_log_admit() let through (with the "N similar lines suppressed" note
 *  when lines were held back); no new decision is taken. */
void xg_log_admitted(struct xg_log_limit *lim, enum xg_log_level lvl, const char *component,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/** Lines held back by every limiter since start (for /metrics). */
uint64_t xg_log_suppressed_total(void);

#define XG_ERR(c, ...) xg_log(XG_LOG_ERROR, c, __VA_ARGS__)
#define XG_WARN(c, ...) xg_log(XG_LOG_WARN, c, __VA_ARGS__)
#define XG_INFO(c, ...) xg_log(XG_LOG_INFO, c, __VA_ARGS__)
#define XG_DEBUG(c, ...)                                                                           \
    do {                                                                                           \
        if (xg_log_enabled(XG_LOG_DEBUG)) xg_log(XG_LOG_DEBUG, c, __VA_ARGS__);                    \
    } while (0)

/** Peer-triggered lines: WARN/INFO through a rate limiter (`lim`: struct xg_log_limit *). */
#define XG_WARN_PEER(lim, c, ...) xg_log_limited(lim, XG_LOG_WARN, c, __VA_ARGS__)
#define XG_INFO_PEER(lim, c, ...) xg_log_limited(lim, XG_LOG_INFO, c, __VA_ARGS__)

#endif
