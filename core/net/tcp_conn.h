/* A TCP connection of an adapter: the one way adapter code sets up, reads, writes and frees a
 * connection the TCP transport (core/net/transport_server.h, core/net/transport_client.h) handed
 * it, or one it opens itself (a VRPN call-back). The handle is libevent's struct bufferevent, an
 * opaque pointer here: adapters never call libevent themselves (ctest static/adapter_io), not even
 * on the byte queues. The bytes received are read with xg_tcp_in_* (length, a contiguous view,
 * drain, copy out, find), the bytes to send queued with xg_tcp_write / xg_tcp_printf.
 *
 * Callbacks: `read` when bytes arrived (at most conf.read_max are buffered: reading pauses
 * above it until the adapter consumed some), `written` when the output drained, `event` with
 * XG_TCP_CONNECTED, XG_TCP_EOF, XG_TCP_ERROR or XG_TCP_TIMEOUT (or-ed with XG_TCP_READING /
 * XG_TCP_WRITING; libevent's BEV_EVENT_* values, checked at compile time in tcp_conn.c). All on
 * the loop's thread. */
#ifndef XG_TCP_CONN_H
#define XG_TCP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct bufferevent;
struct event_base;

/* What the event callback's `what` carries (libevent's BEV_EVENT_* values). */
#define XG_TCP_READING 0x01   /**< with EOF/ERROR/TIMEOUT: while reading */
#define XG_TCP_WRITING 0x02   /**< with EOF/ERROR/TIMEOUT: while writing */
#define XG_TCP_EOF 0x10       /**< the peer closed its side */
#define XG_TCP_ERROR 0x20     /**< a socket error: errno tells which */
#define XG_TCP_TIMEOUT 0x40   /**< the read timeout (xg_tcp_read_timeout) expired */
#define XG_TCP_CONNECTED 0x80 /**< an outgoing connection (xg_tcp_connect) is up */

/** Bytes arrived / the output drained: the connection and the conf's arg. */
typedef void (*xg_tcp_data_fn)(struct bufferevent *bev, void *arg);
/** A connection event: `what` is XG_TCP_* flags (see the top comment). */
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

/** Bytes received and not yet consumed (xg_tcp_in_drain consumes them). */
size_t xg_tcp_in_len(struct bufferevent *bev);

/** The first n received bytes made contiguous (copied together if they were split), not
 *  consumed. NULL when fewer than n are buffered or out of memory. The view is valid until the
 *  input changes (a drain, a read, the next callback). */
const uint8_t *xg_tcp_in_pullup(struct bufferevent *bev, size_t n);

/** The first contiguous run of received bytes, as buffered (no copy; a frame may continue in
 *  the next run): its length in *n, NULL and 0 when nothing is buffered. Valid as above. */
const uint8_t *xg_tcp_in_peek(struct bufferevent *bev, size_t *n);

/** Consume the first n received bytes (everything when fewer are buffered). */
void xg_tcp_in_drain(struct bufferevent *bev, size_t n);

/** Copy up to n received bytes into buf and consume them: the count copied. */
size_t xg_tcp_in_read(struct bufferevent *bev, void *buf, size_t n);

/** Where `needle` (len bytes) first starts in the received bytes: its offset, or -1. */
long xg_tcp_in_find(struct bufferevent *bev, const void *needle, size_t len);

/** Bytes in the output buffer (under TLS, not the records below it: xg_tserver_unsent). */
size_t xg_tcp_unsent(struct bufferevent *bev);

/** Queue n bytes of p to send (copied). 0, or -1 when out of memory. */
int xg_tcp_write(struct bufferevent *bev, const void *p, size_t n);

/** Queue printf-formatted text to send. 0, or -1 when out of memory or on a format error. */
int xg_tcp_printf(struct bufferevent *bev, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

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
