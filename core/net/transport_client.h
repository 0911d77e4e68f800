/* Outgoing connections of the client adapters (vrpn-client, rgmp-client, less `mode: connect`).
 *
 * One xg_tclient is one server address the adapter keeps a connection to. It resolves the host
 * name without blocking the reactor (evdns_getaddrinfo on one evdns_base shared by the process),
 * connects a non-blocking TCP socket with a connect timeout (a name's addresses in turn, up to 8,
 * within one attempt), optionally wraps it in TLS
 * (core/net/tls.h), and hands the connected bufferevent to the adapter, which owns it from then on
 * and runs the protocol's handshake. When the attempt fails (DNS, refused, unreachable, timed out)
 * or the adapter reports that its connection ended, the client waits an exponential backoff with
 * jitter (struct xg_backoff: 0.5 s doubling to 10 s, ±25 %, reset once streaming) and tries again
 * — for ever: a peer that is down or a name not in DNS yet is never fatal.
 *
 * States (the same names for every client adapter, in /api/adapters and /metrics):
 *   connecting  resolving the name and connecting (TCP, or the adapter's own attempt)
 *   handshake   connected; the protocol's handshake runs (cookie, connection-control, TLS...)
 *   streaming   the adapter said the session is up (xg_tclient_streaming)
 *   backoff     waiting before the next attempt
 *   stopped     before start / after stop
 * Counters: connects (connections made), reconnects (backoffs entered: failed attempts and lost
 * connections), attempts (failures since the last streaming session), dns_failures; last_error is
 * the text of the most recent failure ("" before any), kept after a recovery.
 *
 * Log lines: a failed attempt (DNS, refused, timeout) logs one warning for the first three
 * attempts of an outage and then every tenth ("cannot connect to 127.0.0.1:3883: Connection
 * refused (attempt 2)"); the end of an established connection is logged by the adapter, which
 * knows why. Reactor thread only. */
#ifndef XG_TRANSPORT_CLIENT_H
#define XG_TRANSPORT_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct event_base;
struct bufferevent;
struct xg_tls_ctx;
struct xg_tls_session;
struct xg_status;

/** Connection state of a client (see the file comment for the names). */
enum xg_tclient_state {
    XG_TC_STOPPED,
    XG_TC_CONNECTING,
    XG_TC_HANDSHAKE,
    XG_TC_STREAMING,
    XG_TC_BACKOFF,
};

/** What the adapter does with a connection. Exactly one of `connected` (TCP: the module
 *  connects) and `resolved` (the adapter makes its own attempt from the resolved address, e.g.
 *  VRPN's UDP connection request and TCP call-back) is set. */
struct xg_tclient_ops {
    /** TCP connected (and wrapped in TLS when a context was given; the TLS handshake runs on):
     *  `bev` (owned by the adapter from now on, callbacks unset, not enabled) and its TLS
     *  session (NULL without TLS). The state is handshake. The adapter reports the end of the
     *  connection with xg_tclient_closed() after freeing bev. */
    void (*connected)(void *arg, struct bufferevent *bev, struct xg_tls_session *tls);
    /** The name resolved to `sa` (state connecting): start an attempt. Return 0 when it runs
     *  (the adapter then calls xg_tclient_handshake() once connected, or xg_tclient_closed()),
     *  or a negative errno with a message in why (< why_size) to fail the attempt. */
    int (*resolved)(void *arg, const struct sockaddr *sa, socklen_t len, char *why,
                    size_t why_size);
};

/** Configuration of a client (strings are copied). */
struct xg_tclient_conf {
    const char *component;      /* log component (the adapter's name) */
    const char *host;           /* name or numeric address (IPv6 without brackets) */
    int port;                   /* 1..65535 */
    int family;                 /* AF_UNSPEC or AF_INET / AF_INET6 (addresses of that family) */
    const char *peer_prefix;    /* shown before the address in peer and log lines, or NULL */
    int64_t connect_timeout_ns; /* TCP connect timeout; 5 s when <= 0 */
    struct xg_tls_ctx *tls;     /* client TLS context (borrowed; outlives the client) or NULL */
    const char *server_name;    /* TLS: expected server name (and SNI), or NULL */
    uint64_t seed;              /* backoff jitter seed (any; 0 picks one) */
};

struct xg_tclient;

/** A client on `base` (no I/O until xg_tclient_start). NULL on ENOMEM. */
struct xg_tclient *xg_tclient_new(struct event_base *base, const struct xg_tclient_conf *conf,
                                  const struct xg_tclient_ops *ops, void *arg);
/** First attempt now (resolution may complete, and ops run, before this returns). */
void xg_tclient_start(struct xg_tclient *tc);
/** Cancel what is pending (resolution, connect, backoff timer): state stopped. The adapter
 *  closes the connection it owns itself. */
void xg_tclient_stop(struct xg_tclient *tc);
/** Stop and free (NULL is a no-op). */
void xg_tclient_free(struct xg_tclient *tc);

/** The adapter's own attempt (ops.resolved) connected: connects + 1, state handshake. */
void xg_tclient_handshake(struct xg_tclient *tc);
/** The protocol's handshake completed: state streaming, the backoff starts again from 0.5 s. */
void xg_tclient_streaming(struct xg_tclient *tc);
/** The adapter's connection (or own attempt) ended for `why` (becomes last_error; the adapter
 *  logged it): enter backoff and reconnect. No-op when stopped. */
void xg_tclient_closed(struct xg_tclient *tc, const char *why);

/** Current state and its name ("connecting", "handshake", "streaming", "backoff", "stopped"). */
enum xg_tclient_state xg_tclient_state(const struct xg_tclient *tc);
const char *xg_tclient_state_name(enum xg_tclient_state s);
/** "prefix" + "ip:port" once resolved, else "prefix" + "host:port". */
const char *xg_tclient_peer(const struct xg_tclient *tc);
/** Last failure text ("" if none). */
const char *xg_tclient_last_error(const struct xg_tclient *tc);
/** Wall-clock-free monotonic time (ns) of the last failure, 0 if none (to pick the newest). */
int64_t xg_tclient_last_error_ns(const struct xg_tclient *tc);
/** Counters (see the file comment). */
uint64_t xg_tclient_connects(const struct xg_tclient *tc);
uint64_t xg_tclient_reconnects(const struct xg_tclient *tc);
uint32_t xg_tclient_attempts(const struct xg_tclient *tc);
uint64_t xg_tclient_dns_failures(const struct xg_tclient *tc);
/** The resolved address (len 0 before the first resolution). */
const struct sockaddr *xg_tclient_addr(const struct xg_tclient *tc, socklen_t *len);

/** Fill the common client fields of an adapter's status from `n` clients: state (the worst of
 *  them: backoff, connecting, handshake, streaming), last_error (the newest), and the counters
 *  "connects", "reconnects", "dns_failures" (counters) and "backoff_attempts" (a gauge: the
 *  largest). */
void xg_tclient_status(struct xg_tclient *const *tcs, int n, struct xg_status *st);

/** Is failed attempt number `attempt` (1-based) of an outage logged? The first three and every
 *  tenth after: a long outage costs one line per ~100 s. */
bool xg_tclient_log_attempt(uint32_t attempt);

/** Resolver configuration for every client of the process: `resolv_conf` names a file in
 *  resolv.conf(5) syntax ("nameserver IP[:PORT]", "search", "options ndots: timeout:
 *  attempts:"), NULL for the system's (/etc/resolv.conf and /etc/hosts). Applies to the shared
 *  evdns_base made next (call before the adapters start). Copied; -ENAMETOOLONG if too long. */
int xg_tclient_set_resolv_conf(const char *resolv_conf);
/** The resolv_conf last set (xg_tclient_set_resolv_conf), "" for the system's (borrowed). */
const char *xg_tclient_resolv_conf(void);

struct evdns_base;
/** The process's shared resolver on `base` (made on first use with the resolv_conf above),
 *  for other modules that resolve names without blocking (core/net/resolve.h). Another event base
 *  than the first user's gets a private resolver (*own set). NULL on ENOMEM. Release each
 *  acquisition with xg_dns_release(dns, own). */
struct evdns_base *xg_dns_acquire(struct event_base *base, bool *own);
void xg_dns_release(struct evdns_base *dns, bool own);

#endif
