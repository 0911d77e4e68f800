/* Names resolved without blocking the reactor: "resolve, then call back".
 *
 * One xg_resolve keeps one host name of an adapter's configuration (a UDP destination, a bind
 * address): it resolves the name with evdns_getaddrinfo on the process's shared resolver
 * (core/net/transport_client.h, gateway.resolv_conf; /etc/hosts names and numeric addresses answer
 * at once), calls back with the first address of the requested family, and stops. A failure (no
 * such name, no address of that family, no answer) is retried on an exponential backoff with jitter
 * (struct xg_backoff: 0.5 s doubling to 10 s) for ever: a name not in DNS yet is never fatal.
 * Each failure is counted (failures), kept as last_error ("DNS: cannot resolve 'name': ...") and
 * logged as a warning for the first three attempts and then every tenth, through the caller's
 * rate limiter. Reactor thread only. */
#ifndef XG_RESOLVE_H
#define XG_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/util/error.h"
#include "core/util/log.h"

struct event_base;

/** State of a resolver: before start / after free ("stopped"), a query out ("resolving"),
 *  waiting before the next one ("backoff"), done ("resolved"). */
enum xg_resolve_state { XG_RS_STOPPED, XG_RS_RESOLVING, XG_RS_BACKOFF, XG_RS_RESOLVED };

/** Configuration (strings copied). */
struct xg_resolve_conf {
    const char *component;    /* log component (the adapter's name) */
    const char *what;         /* what the name is, in the log line ("destination", "bind") */
    const char *host;         /* host name (or numeric address) */
    int port;                 /* 0..65535, set in the address called back */
    int family;               /* AF_UNSPEC, AF_INET or AF_INET6 */
    int socktype;             /* SOCK_DGRAM or SOCK_STREAM */
    struct xg_log_limit *lim; /* the caller's limiter for the failure lines (NULL: own) */
};

/** Called once the name resolved: the address (port set), valid during the call. */
typedef void (*xg_resolve_cb)(void *arg, const struct sockaddr *sa, socklen_t len);

struct xg_resolve;

/** A resolver on `base` (no query until xg_resolve_start). NULL on ENOMEM. */
struct xg_resolve *xg_resolve_new(struct event_base *base, const struct xg_resolve_conf *conf,
                                  xg_resolve_cb cb, void *arg);
/** Resolve now; cb may run before this returns (numeric, /etc/hosts). */
void xg_resolve_start(struct xg_resolve *r);
/** Cancel what is pending and free (NULL is a no-op); cb is not called after this. */
void xg_resolve_free(struct xg_resolve *r);

/** Current state and its name ("stopped", "resolving", "backoff", "resolved"). */
enum xg_resolve_state xg_resolve_state(const struct xg_resolve *r);
const char *xg_resolve_state_name(enum xg_resolve_state s);
/** Failed resolutions so far. */
uint64_t xg_resolve_failures(const struct xg_resolve *r);
/** The last failure's text ("" if none), and when (monotonic ns, 0 if never). */
const char *xg_resolve_last_error(const struct xg_resolve *r);
int64_t xg_resolve_last_error_ns(const struct xg_resolve *r);

/** A listening address ("host:port", "[v6]:port", ":port"; host defaults to def_host, port to
 *  def_port when def_port > 0) resolved at once and without DNS: a numeric address, or a name in
 *  /etc/hosts (looked up with evdns's hosts table on a private resolver, never sent to a DNS
 *  server, so that a DNS outage cannot stall start-up). The first address is written to *ss /
 *  *len. -EINVAL when the text is not host:port or the host is neither an address nor a host name;
 *  -EHOSTUNREACH ("'name' is not in /etc/hosts: a listening address must be numeric or a name in
 *  /etc/hosts (listening addresses are not looked up in DNS)") for other names; err names the
 *  text. Blocks for no network I/O. */
int xg_resolve_listen_addr(const char *text, const char *def_host, int def_port,
                           struct sockaddr_storage *ss, socklen_t *len, struct xg_error *err);

#endif
