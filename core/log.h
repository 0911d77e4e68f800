/* Logging with levels: one line per event on stderr, text or JSON (for log collectors).
 *
 * Text:  2026-11-22T06:30:00.123Z warn  [rig] message
 * JSON:  {"ts":"...","level":"warn","component":"rig","msg":"message"} */
#ifndef XG_LOG_H
#define XG_LOG_H

#include <stdbool.h>

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

#define XG_ERR(c, ...) xg_log(XG_LOG_ERROR, c, __VA_ARGS__)
#define XG_WARN(c, ...) xg_log(XG_LOG_WARN, c, __VA_ARGS__)
#define XG_INFO(c, ...) xg_log(XG_LOG_INFO, c, __VA_ARGS__)
#define XG_DEBUG(c, ...)                                                                           \
    do {                                                                                           \
        if (xg_log_enabled(XG_LOG_DEBUG)) xg_log(XG_LOG_DEBUG, c, __VA_ARGS__);                    \
    } while (0)

#endif
