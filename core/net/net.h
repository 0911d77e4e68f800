/* Small networking helpers shared by the adapters: address parsing, sockets, reconnect backoff,
 * the accept back-off of listeners. (The per-peer source-clock → gateway-clock map is
 * core/clock/time_map.h.) */
#ifndef XG_NET_H
#define XG_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/util/error.h"

/** Parse "host:port", "[v6]:port", ":port" or "port" (host defaults to `def_host`, port to
 *  `def_port` when absent and def_port > 0) and resolve it numerically or by name (blocking
 *  getaddrinfo: call at start-up, not on hot paths). Writes the first result to *ss / *len.
 *  -EINVAL (unparsable, names the text) or -EHOSTUNREACH (resolution failed). Not for the
 *  gateway's addresses: a DNS lookup can block for its timeout, so configuration addresses are
 *  parsed with xg_net_parse_numeric and names resolved with core/net/resolve.h (UDP destinations
 * and binds: core/net/udp_dests.h; listening addresses: xg_resolve_listen_addr). */
int xg_net_parse_addr(const char *text, const char *def_host, int def_port,
                      struct sockaddr_storage *ss, socklen_t *len, struct xg_error *err);
/** Like xg_net_parse_addr, but never resolves (no blocking, fine for --check): 0 with *ss / *len
 *  set when the host is a numeric address (or absent: def_host, which must be numeric); 1 when
 *  it is a syntactically valid host name (letters, digits, '-', '_' and '.', labels of at most 63
 *  characters, 253 in all), copied to host (< host_size) with the port in *port, to be resolved
 *  later (core/net/resolve.h); -EINVAL with a message naming the text otherwise. */
int xg_net_parse_numeric(const char *text, const char *def_host, int def_port,
                         struct sockaddr_storage *ss, socklen_t *len, char *host, size_t host_size,
                         int *port, struct xg_error *err);
/** Split "host:port" into host (< host_size) and port without resolving. */
int xg_net_split_hostport(const char *text, char *host, size_t host_size, int *port, int def_port);
/** "ip:port" (or "[ip6]:port") of an address into buf; returns buf. */
char *xg_net_addr_str(const struct sockaddr *sa, char *buf, size_t size);
/** Port of an address (host order). */
int xg_net_addr_port(const struct sockaddr *sa);
/** Same address and port. */
bool xg_net_addr_equal(const struct sockaddr *a, const struct sockaddr *b);

/** Bound, non-blocking, close-on-exec UDP socket; -errno on failure (-EADDRINUSE, with a message
 *  saying so, when another socket holds a unicast port). A unicast address is bound exclusively
 *  (no SO_REUSEADDR). A multicast address binds the port on INADDR_ANY with SO_REUSEADDR, so that
 *  several receivers on one host share the group, and joins the group on `iface` (IPv4 dotted
 *  address or NULL for any). */
int xg_net_udp_bind(const struct sockaddr *sa, socklen_t len, const char *iface,
                    struct xg_error *err);

/** Exponential reconnect backoff with jitter (0.5 s doubling to 10 s). */
struct xg_backoff {
    int64_t initial_ns, max_ns; /* defaults 0.5 s and 10 s when 0 */
    int64_t current_ns;         /* next base delay */
    uint64_t rng;               /* jitter state (seed with anything non-zero) */
    uint32_t attempts;          /* failures since the last success */
};
/** Next delay (ns): the current base ±25 % jitter; then the base doubles up to max. */
int64_t xg_backoff_next(struct xg_backoff *b);
/** A connection succeeded: start again from the initial delay. */
void xg_backoff_reset(struct xg_backoff *b);

/* ---- accept back-off (every TCP/Unix listener of the process, core/net/listener.c) ----
 *
 * When accept() fails for a reason that retrying at once cannot fix (EMFILE/ENFILE at the fd
 * limit, ENOBUFS/ENOMEM), libevent's listener stays readable and its loop spins at 100 % CPU.
 * A guarded listener instead stops accepting for XG_ACCEPT_BACKOFF_MS (pending connections wait
 * in the kernel's backlog), logs one rate-limited line naming the component and the error, counts
 * the back-off, and then accepts again. Reactor thread only. */

struct event_base;
struct evconnlistener;

#define XG_ACCEPT_BACKOFF_MS 1000 /* pause after a failed accept(), ms */

/* xg_net_listener_new_bind flags for callers without libevent's header (libevent's LEV_OPT_*
 * values, checked at compile time in listener.c) */
#define XG_NET_LISTEN_CLOSE_ON_FREE 0x02u /**< close the socket when the listener is freed */
#define XG_NET_LISTEN_CLOSE_ON_EXEC 0x04u /**< FD_CLOEXEC on the listening socket */

/** evconnlistener_new_bind() with the accept back-off guard installed (`cb`, `arg`, `flags`,
 *  `backlog` as there; `component` names the owner in the log line, copied). NULL on failure
 *  (errno from the bind/listen). Free with xg_net_listener_free(). */
struct evconnlistener *
xg_net_listener_new_bind(struct event_base *base,
                         void (*cb)(struct evconnlistener *, int, struct sockaddr *, int, void *),
                         void *arg, unsigned flags, int backlog, const struct sockaddr *sa,
                         int socklen, const char *component);
/** Install the guard on a listener made elsewhere (e.g. evhttp's). Replaces its error callback.
 *  0, or -ENOMEM. Call xg_net_listener_unguard() before that listener is freed. */
int xg_net_listener_guard(struct evconnlistener *lev, const char *component);
/** Remove the guard of `lev` (no-op if none); the listener itself is left alone. */
void xg_net_listener_unguard(struct evconnlistener *lev);
/** Unguard and free a listener (NULL is a no-op). */
void xg_net_listener_free(struct evconnlistener *lev);
/** The listening socket of `lev` (for getsockname: the port a port-0 bind got), -1 if none. */
int xg_net_listener_fd(struct evconnlistener *lev);
/** Accept back-offs since start, over every listener (/metrics xrgate_accept_backoff_total). */
uint64_t xg_net_accept_backoff_total(void);

#endif
