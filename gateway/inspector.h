/* The web inspector (issue 10): a page served by the admin HTTP server and a Server-Sent Events
 * stream of the entity table.
 *
 *   GET /                 the page (index.html, embedded into the binary at build time)
 *   GET /inspector/<f>    its assets: the page's ES modules and CSS, three.js (from the npm
 *                         registry, installed by `npm ci` at build time from
 *                         gateway/web/package-lock.json). Static code only: no token needed.
 *   GET /events           text/event-stream: `event: hello` once, then `event: state` about
 *                         30 times a second with the poses of every entity predicted to the
 *                         send time and a summary of every adapter (docs/inspector.md);
 *                         after a configuration reload `hello` again, `event: reload` and a
 *                         state frame (xg_inspector_reloaded).
 *
 * The page `/` and its assets are static code without data and need no token; the token rule of
 * the admin API applies to `/events`, where (since a browser's EventSource cannot set headers)
 * `?token=<token>` is accepted as well as `Authorization: Bearer` (the page passes on the token
 * it was opened with: /?token=...). No other path takes a token in the URL.
 *
 * Limits: at most XG_INSPECTOR_MAX_CLIENTS concurrent /events streams (more get 503 with
 * Retry-After). A client that is more than one frame behind skips frames (each frame is a full
 * snapshot, so it only loses cadence); one that stays behind for XG_INSPECTOR_STALL_MS, or whose
 * unsent output passes max(XG_INSPECTOR_MAX_BUFFERED, 4 frames) bytes (a browser tab that
 * stopped reading), is disconnected and counted. Single-threaded: call from the reactor thread
 * only. */
#ifndef XG_INSPECTOR_H
#define XG_INSPECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xg_gateway;
struct evhttp_request;

#define XG_INSPECTOR_MAX_CLIENTS 16          /* concurrent /events streams */
#define XG_INSPECTOR_MAX_BUFFERED (4u << 20) /* bytes queued to one client before it is dropped */
#define XG_INSPECTOR_STALL_MS 5000           /* a client behind for this long is dropped, ms */
#define XG_INSPECTOR_PERIOD_US 33333         /* /events cadence: ~30 Hz */
#define XG_INSPECTOR_KEEPALIVE_S 15          /* ": keep-alive" comment period, seconds */
#define XG_INSPECTOR_RETRY_MS 1000           /* `retry:` sent to EventSource clients, ms */

/** One file embedded into the binary (table generated at build time by the CMake block
 *  "web inspector" into <build>/web/embedded_web.c). `data` .. `end` are the bytes (a NUL
 *  follows `end`); `path` is the URL path ("/inspector/three.module.js"). */
struct xg_web_file {
    const char *path;
    const char *content_type;
    const unsigned char *data, *end;
};
/** The embedded files, terminated by an entry with path NULL. */
extern const struct xg_web_file xg_web_files[];

/** Counters of the inspector (for tests and logs). */
struct xg_inspector_stats {
    uint64_t clients_total;   /* /events streams accepted */
    uint64_t clients_refused; /* answered 503: XG_INSPECTOR_MAX_CLIENTS reached */
    uint64_t clients_dropped; /* disconnected: stalled or backlog beyond the bound */
    uint64_t frames_skipped;  /* frames not sent to a client still behind */
    uint64_t frames;          /* state frames built */
    int clients;              /* streams open now */
};

/** True for the inspector's static assets: "/inspector/..." and "/favicon.ico" (static code,
 *  served without a token). */
bool xg_inspector_is_asset(const char *path);

/** True if the request's first `token=` query parameter, percent-decoded, is exactly `token`
 *  (constant-time; a decoded %00 does not end the value, so no prefix matches). */
bool xg_inspector_query_token_ok(struct evhttp_request *req, const char *token);

/** Serve "/" (the page) or an embedded asset; "/favicon.ico" answers 204 (no icon); 404 if
 *  unknown, 405 if not GET/HEAD. Answers
 *  If-None-Match with 304 (ETags are content hashes). */
void xg_inspector_serve(struct xg_gateway *gw, struct evhttp_request *req, const char *path);

/** Start an SSE stream on req (GET /events). Answers 503 when the client cap is reached. */
void xg_inspector_events(struct xg_gateway *gw, struct evhttp_request *req);

/** A configuration reload happened (gateway/reload.c): restart the per-adapter rates and send
 *  every /events client `event: hello` (the table parameters may have changed), `event: reload`
 *  with `json` (one line: the reload's result and the new adapter set) and a state frame. */
void xg_inspector_reloaded(struct xg_gateway *gw, const char *json);

/** Close every stream and free the inspector state (before evhttp_free; idempotent). */
void xg_inspector_stop(struct xg_gateway *gw);

/** Counters; zeros when no client ever connected. */
struct xg_inspector_stats xg_inspector_stats(const struct xg_gateway *gw);

#endif
