/* Listening side of the TCP server adapters (vrpn-server, rgmp-server, less `mode: listen`).
 *
 * One xg_tserver is one listening TCP socket on a bind address. It accepts with the accept
 * back-off of core/net/net.h (EMFILE/ENFILE: stop accepting for a second instead of spinning),
 * refuses clients past the adapter's cap, optionally wraps each accepted socket in TLS
 * (core/net/tls.h, server role), bounds what is read per pass, and hands the connected bufferevent
 * to the adapter, which owns it from then on and runs the protocol on it.
 *
 * Client cap: when the adapter already holds `max_clients` clients (it says how many through
 * ops.clients, so connections it made itself, e.g. VRPN call-backs, count too), the connection
 * is closed at once with one rate-limited line "client 127.0.0.1:5000 refused: max_clients (16)
 * reached" (noun and key name as configured: LESS says "peer ... max_peers") and counted
 * (clients_refused).
 *
 * Read cap: every client bufferevent (and, under TLS, the socket beneath it) reads at most
 * XG_TSERVER_READ_CAP bytes per pass of the reactor, and the adapter's read callback handles
 * what that pass brought (whole messages; a partial one waits, bounded by the protocol's largest
 * message), so one client that sends a lot cannot hold the reactor: the other events run between
 * its passes. Adapters parse in place and make only a message header contiguous while a message
 * is incomplete (no copy of the whole input per pass).
 *
 * Slow-client policy (the same for every TCP server adapter; docs/reliability.md "Server
 * connections"): a client's unsent output (bytes queued in the gateway, TLS records included) is
 * compared with max_output_bytes before each of its egress passes (xg_tserver_egress):
 *   - at or below the bound: the pass sends to it (send);
 *   - above the bound: the pass skips it (skip, counted in drains_skipped); the adapter
 *     remembers what it skipped and, once the client is back at or below the bound, sends the
 *     newest state of each entity it missed, once (coalescing: never a sample already sent);
 *   - above the bound for longer than slow_timeout_ms, or above 2 x max_output_bytes at any
 *     write (xg_tserver_write), the client is disconnected (drop, counted in
 *     clients_dropped_slow) with one rate-limited line naming peer, bytes and limit:
 *       "client P: N bytes unsent for more than T ms (max_output_bytes M): dropping the slow
 *        client" or "client P: N bytes unsent (above 2 x max_output_bytes M): dropping the slow
 *        client".
 * A client therefore costs at most 2 x max_output_bytes plus one write. Reactor thread only. */
#ifndef XG_TRANSPORT_SERVER_H
#define XG_TRANSPORT_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/util/error.h"

struct event_base;
struct bufferevent;
struct xg_tls_ctx;
struct xg_tls_session;
struct xg_status;

/** Bytes read from one client per pass of the reactor (xg_tserver_read_more). */
#define XG_TSERVER_READ_CAP (16 * 1024)
/** What libevent 2.1's bufferevent reads per pass by itself (EVBUFFER_MAX_READ). */
#define XG_LIBEVENT_READ 4096

/** What an egress pass does with one client (see the file comment). */
enum xg_slow_verdict {
    XG_SLOW_SEND,         /* at or below max_output_bytes: send */
    XG_SLOW_SKIP,         /* above it: skip this pass, coalesce */
    XG_SLOW_DROP_TIMEOUT, /* above it for more than slow_timeout_ms: disconnect */
    XG_SLOW_DROP_HARD,    /* above 2 x max_output_bytes at a write: disconnect */
};

/** The slow-client decision before an egress pass, pure: `unsent` bytes queued for a client at
 *  monotonic time `now_ns` (> 0), the bound `max_output` (bytes, > 0) and `slow_timeout_ns`
 *  (>= 0). Above max_output: skip, or drop (XG_SLOW_DROP_TIMEOUT) once it has been above for
 *  more than slow_timeout_ns; else send. `*slow_since` is the client's state, updated here: 0
 *  while at or below the bound, else the time it was first seen above. */
enum xg_slow_verdict xg_slow_decide(size_t unsent, int64_t max_output, int64_t slow_timeout_ns,
                                    int64_t *slow_since, int64_t now_ns);
/** The hard bound before any write, pure: true while `unsent` is at most 2 x max_output (else
 *  the client is dropped, XG_SLOW_DROP_HARD). */
bool xg_slow_write_ok(size_t unsent, int64_t max_output);

/** Configuration of a listener (strings are copied). */
struct xg_tserver_conf {
    const char *component;   /* log component (the adapter's name) */
    const char *listen;      /* "host:port", "[v6]:port", ":port" (port 0: any free port) */
    int default_port;        /* when `listen` has none */
    const char *noun;        /* the remote end in log lines: "client" (NULL) or "peer" */
    const char *cap_key;     /* the cap's configuration key: "max_clients" (NULL), "max_peers" */
    int64_t max_clients;     /* >= 1 */
    int64_t max_output;      /* max_output_bytes (>= 1) */
    int64_t slow_timeout_ms; /* >= 0 */
    struct xg_tls_ctx *tls;  /* server TLS context (borrowed; outlives the listener) or NULL */
};

/** What the adapter does with the listener's clients. */
struct xg_tserver_ops {
    /** Clients the adapter holds now (compared with max_clients before each accept). */
    int (*clients)(void *arg);
    /** A client was accepted: `bev` (owned by the adapter from now on; callbacks unset, not
     *  enabled; TCP_NODELAY and the read cap set; TLS-wrapped when a context was given, with
     *  its session in `tls`, else NULL) from `peer` ("ip:port"). Return 0, or a negative errno
     *  to refuse it (the module then frees bev; the adapter logged why). */
    int (*accepted)(void *arg, struct bufferevent *bev, struct xg_tls_session *tls,
                    const char *peer);
};

struct xg_tserver;

/** A listener on `base` (no socket until xg_tserver_start). NULL on ENOMEM. */
struct xg_tserver *xg_tserver_new(struct event_base *base, const struct xg_tserver_conf *conf,
                                  const struct xg_tserver_ops *ops, void *arg);
/** Resolve `listen` (numeric or /etc/hosts; start-up only) and bind: 0, or a negative errno with
 *  the reason in err ("cannot listen on 0.0.0.0:3883: Address already in use"). */
int xg_tserver_start(struct xg_tserver *ts, struct xg_error *err);
/** Close the listening socket (clients are the adapter's). Restartable. */
void xg_tserver_stop(struct xg_tserver *ts);
/** Stop and free (NULL is a no-op). */
void xg_tserver_free(struct xg_tserver *ts);

/** Listening? */
bool xg_tserver_listening(const struct xg_tserver *ts);
/** The bound address "ip:port" ("" before start). */
const char *xg_tserver_bound(const struct xg_tserver *ts);
/** The bound address (len 0 before start). */
const struct sockaddr *xg_tserver_addr(const struct xg_tserver *ts, socklen_t *len);

/** Apply the read cap to a client bufferevent the adapter made itself (e.g. VRPN's call-back
 *  connections); accepted ones have it already. */
void xg_tserver_read_cap(struct bufferevent *bev);

/** Unsent output bytes of a client: its output buffer plus, under TLS, the records not yet
 *  written to the socket. */
size_t xg_tserver_unsent(struct bufferevent *bev);

/** The slow-client policy for one client before an egress pass at `now_ns`: xg_slow_decide on
 *  its unsent bytes, counting skips (drains_skipped) and drops (clients_dropped_slow) and
 *  logging a drop (one line naming `peer`, bytes and limit). On a drop verdict the adapter frees
 *  the client. `*slow_since` is the client's state (0 initially). */
enum xg_slow_verdict xg_tserver_egress(struct xg_tserver *ts, struct bufferevent *bev,
                                       const char *peer, int64_t *slow_since, int64_t now_ns);
/** Send n bytes at p to a client: 0, -ENOBUFS when its unsent output is already above
 *  2 x max_output_bytes (counted and logged as a drop: the adapter frees the client), or -EIO
 *  when they cannot be queued. When nothing is queued for it (plain socket, writing enabled),
 *  the bytes go to the kernel at once with one send(); what the socket does not take (full, or
 *  an error that the bufferevent reports later) is queued, as are all bytes when something is
 *  queued already or under TLS. Counted in bytes_out. */
int xg_tserver_write(struct xg_tserver *ts, struct bufferevent *bev, const char *peer,
                     const void *p, size_t n);

/** Read up to XG_TSERVER_READ_CAP bytes per pass: libevent 2.1 reads at most 4 KiB per pass,
 *  so a frame of 4.4 KiB (50 VRPN reports) came in two passes, each with its own egress. Called
 *  first in an adapter's read callback: when the input holds 4 KiB or more, one readv() for the
 *  rest, up to XG_TSERVER_READ_CAP in the input (no FIONREAD first). Plain socket
 *  bufferevents with reading enabled only (TLS reads through its own filter). End of stream and
 *  errors are left to the bufferevent, whose next read reports them. Returns the bytes added. */
size_t xg_tserver_read_more(struct bufferevent *bev);

/** Hand a client's queued output to the kernel now, from the drain that queued it, instead of
 *  on the next loop iteration (where libevent writes once epoll reports the socket writable).
 *  Plain socket bufferevents only: one writev of the output buffer (libevent keeps the buffer's
 *  front frozen outside its own write callback; this unfreezes it for the write). What the
 *  socket does not take stays queued for libevent's write callback, so xg_tserver_unsent stays
 *  the slow-client measure. A TLS bufferevent (a filter over the socket, core/net/tls.h) is left
 *  alone: its records already reach the socket as they are written (its BIO sends directly when
 *  nothing is queued before them), and its plaintext must never be written to the fd. Nor is a
 *  bufferevent with writing disabled. Returns the bytes written (0: nothing queued, TLS, or the
 *  socket full), or a negative errno when the write failed: the bytes stay queued and the
 *  bufferevent's event callback reports the error as before (the caller need not act). */
int xg_tserver_flush(struct bufferevent *bev);

/** A client the adapter refused itself (e.g. a VRPN call-back request past the cap): counted in
 *  clients_refused (the adapter logged it). */
void xg_tserver_count_refused(struct xg_tserver *ts);

/** Counters (see the file comment). */
uint64_t xg_tserver_accepted(const struct xg_tserver *ts);
uint64_t xg_tserver_refused(const struct xg_tserver *ts);
uint64_t xg_tserver_dropped_slow(const struct xg_tserver *ts);
uint64_t xg_tserver_drains_skipped(const struct xg_tserver *ts);
uint64_t xg_tserver_bytes_out(const struct xg_tserver *ts);

/** Add the common server counters to an adapter's status: clients_accepted, clients_refused,
 *  clients_dropped_slow, drains_skipped (the same names for every TCP server adapter). */
void xg_tserver_status(const struct xg_tserver *ts, struct xg_status *st);

#endif
