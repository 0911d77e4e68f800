/* A TCP connection of an adapter: the one way adapter code sets up, reads, writes and frees a
 * connection the TCP transport (core/net/transport_server.h, core/net/transport_client.h) handed
 * it, or one it opens itself (a VRPN call-back). The handle is libevent's struct bufferevent;
 * adapters never call bufferevent_* themselves (ctest static/adapter_io) — these functions do. The
 * input and output are evbuffers (libevent's byte queues), parsed and filled with evbuffer_*.
 *
 * Callbacks: `read` when bytes arrived (at most conf.read_max are buffered: reading pauses
 * above it until the adapter consumed some), `written` when the output drained, `event` with
 * BEV_EVENT_CONNECTED, BEV_EVENT_EOF, BEV_EVENT_ERROR or BEV_EVENT_TIMEOUT (or-ed with
 * BEV_EVENT_READING/WRITING). All on the loop's thread. */
#ifndef XG_TCP_CONN_H
#define XG_TCP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct bufferevent;
struct evbuffer;
struct event_base;

/** Bytes arrived / the output drained: the connection and the conf's arg. */
typedef void (*xg_tcp_data_fn)(struct bufferevent *bev, void *arg);
/** A connection event: `what` is BEV_EVENT_* flags (see the top comment). */
typedef void (*xg_tcp_event_fn)(struct bufferevent *bev, short what, void *arg);

/** How a connection is driven (xg_tcp_start). */
struct xg_tcp_conf {
    xg_tcp_data_fn read;    /**< bytes arrived (required) */
    xg_tcp_data_fn written; /**< the output buffer drained, or NULL */
    xg_tcp_event_fn event;  /**< connected / closed / error / timeout, or NULL */
    void *arg;              /**< for the callbacks */
    size_t read_max;        /**< input bytes buffered before reading pauses; 0 leaves it as is */
    bool read_only;         /**< do not enable writing (a connection that never sends) */
};

/** Set the callbacks and the input bound, then start reading (and writing unless read_only). */
void xg_tcp_start(struct bufferevent *bev, const struct xg_tcp_conf *c);

/** A connection over an already connected socket fd (owned: closed when freed), not started.
 *  NULL when out of memory (fd is then left open: the caller closes it). */
struct bufferevent *xg_tcp_wrap(struct event_base *base, int fd);

/** A connection not yet connected (xg_tcp_connect), closing its socket when freed; NULL when
 *  out of memory. */
struct bufferevent *xg_tcp_new(struct event_base *base);

/** Start connecting bev to `to` (non-blocking; BEV_EVENT_CONNECTED or BEV_EVENT_ERROR follows
 *  through the event callback). 0, or -1 when it cannot even start (no socket). */
int xg_tcp_connect(struct bufferevent *bev, const struct sockaddr *to, socklen_t len);

/** The bytes received and not yet consumed (drain what you parse). */
struct evbuffer *xg_tcp_input(struct bufferevent *bev);

/** The bytes queued to send (append to send; its length is what is not sent yet). */
struct evbuffer *xg_tcp_output(struct bufferevent *bev);

/** Bytes in the output buffer (under TLS, not the records below it: xg_tserver_unsent). */
size_t xg_tcp_unsent(struct bufferevent *bev);

/** Queue n bytes of p to send (copied). 0, or -1 when out of memory. */
int xg_tcp_write(struct bufferevent *bev, const void *p, size_t n);

/** Stop reading (and writing too when `writing`): a connection being closed. */
void xg_tcp_pause(struct bufferevent *bev, bool writing);

/** A read timeout: BEV_EVENT_TIMEOUT|BEV_EVENT_READING when nothing arrives for `ms`
 *  milliseconds (a handshake deadline); 0 clears it. */
void xg_tcp_read_timeout(struct bufferevent *bev, int64_t ms);

/** The connection's socket (for getsockname, TCP_NODELAY), -1 when none yet. */
int xg_tcp_fd(struct bufferevent *bev);

/** Close the connection and free it (what is queued and not sent is dropped). Safe on NULL. */
void xg_tcp_free(struct bufferevent *bev);

/** Close a socket no connection owns yet: an accepted one the adapter refuses, or one
 *  xg_tcp_wrap could not wrap. Safe on a negative fd (nothing to close). */
void xg_tcp_close_fd(int fd);

#endif
