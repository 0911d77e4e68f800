/* Connections of the admin HTTP server (evhttp): a cap on how many are open and a deadline for
 * each request (gateway.admin.max_connections, gateway.admin.request_timeout_ms; docs/admin-api.md
 * "Admin API", SECURITY.md).
 *
 * Every connection evhttp accepts is tracked from the moment it is accepted until evhttp frees
 * it. Beyond max_connections a new connection gets a short 503 and is closed (one rate-limited
 * log line, counted). A request's head and body must arrive within request_timeout_ms of the
 * connection being accepted (or of the previous reply on a keep-alive connection), however
 * slowly the bytes trickle; otherwise the connection is closed (rate-limited line, counted).
 * Once the handler has the request the deadline is off, so /events streams live on. Behind the
 * TLS front (capped false) the front caps connections and times the handshake and first request
 * itself (it knows the client's address); the tracker times the requests after that.
 * Reactor thread only. */
#ifndef XG_ADMIN_CONN_H
#define XG_ADMIN_CONN_H

#include <stdbool.h>
#include <stdint.h>

struct xg_gateway;
struct evhttp_request;
struct evhttp_connection;

/** Counters of the admin server's connections (for /metrics and tests). */
struct xg_admin_conn_stats {
    int open;          /* connections evhttp holds now (plain HTTP, or behind the TLS front) */
    uint64_t refused;  /* refused: max_connections reached (plain or TLS) */
    uint64_t timeouts; /* closed: no complete request within request_timeout_ms */
};

/** Start tracking gw->http's connections (after evhttp_new). `capped`: refuse beyond
 *  gw->conf.admin_max_connections here (false when the TLS front caps instead). 0 or -ENOMEM. */
int xg_admin_conns_init(struct xg_gateway *gw, bool capped);
/** Free the tracking state (after evhttp_free; idempotent). */
void xg_admin_conns_free(struct xg_gateway *gw);
/** The handler got `req` (head and body complete): stop its deadline; the next request on the
 *  same connection gets a fresh one once this reply is sent. */
void xg_admin_conn_request(struct xg_gateway *gw, struct evhttp_request *req);
/** evhttp_connection_set_closecb() for tracked connections (the tracker owns evhttp's close
 *  callback and calls `cb` from it); cb NULL removes it. */
void xg_admin_conn_set_closecb(struct xg_gateway *gw, struct evhttp_connection *evcon,
                               void (*cb)(struct evhttp_connection *, void *), void *arg);
/** Count and log (rate-limited) a connection refused at the cap; `peer` "ip:port", `open` the
 *  connections open. Also used by the TLS front. */
void xg_admin_conn_note_refused(struct xg_gateway *gw, const char *peer, int open);
/** Count and log (rate-limited) a connection closed at the request deadline. */
void xg_admin_conn_note_timeout(struct xg_gateway *gw, const char *peer);
/** The same for a connection that sent no byte since its deadline was armed (a browser's idle
 *  pre-connect, an idle keep-alive): counted as a timeout, logged at debug level only. */
void xg_admin_conn_note_idle(struct xg_gateway *gw, const char *peer);
/** Counters (zeros before init). */
struct xg_admin_conn_stats xg_admin_conn_stats(const struct xg_gateway *gw);

#endif
