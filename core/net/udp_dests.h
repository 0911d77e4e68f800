/* A UDP adapter's list of destinations given as "host:port" (numeric or by host name), shared
 * by the datagram adapters (rtp, vmc, LESS UDP). At load the list is only parsed (no DNS:
 * `--check` checks the syntax): a numeric address is active from the start, a host name is kept.
 * At start every name is resolved with the shared non-blocking resolver (core/net/resolve.h): a
 * destination by name is inactive (nothing is sent to it; destinations_unresolved counts it)
 * until its name resolves, and is asked again on a backoff (0.5 s doubling to 10 s) while it
 * fails (dns_failures, last_error "DNS: cannot resolve 'name': ...", one warning per attempt of
 * the first three and then every tenth, through the list's rate limiter). When it resolves one
 * line says so ("destination name:port resolved to ip:port: sending to it"). A name that never
 * resolves never stops the gateway. Reactor thread only. */
#ifndef XG_UDP_DESTS_H
#define XG_UDP_DESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/adapter/adapter.h"
#include "core/conf/conf.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/net/resolve.h"

struct event_base;

/** Destinations one list holds at most. */
#define XG_UDP_DESTS_MAX 16

struct xg_udp_dests;

/** One destination: a numeric address (active from the start) or a host name, active once it
 *  has an address. */
struct xg_udp_dest {
    struct sockaddr_storage ss; /* the address (port set) when active */
    socklen_t len;
    char str[280];  /* "ip:port", or "name:port" while the name is not resolved */
    char host[256]; /* the name ("" for a numeric address) */
    int port;
    bool active;               /* has an address of the socket's family: datagrams go to it */
    struct xg_resolve *res;    /* the name's resolver (start..stop) */
    struct xg_udp_dests *list; /* owner (the resolver's callback) */
};

/** The list (embed it zeroed in the adapter's state). */
struct xg_udp_dests {
    struct xg_udp_dest d[XG_UDP_DESTS_MAX];
    int n;
    char component[64];      /* log component (the adapter's name), set by start */
    struct xg_log_limit lim; /* the DNS failure lines of this list */
};

/** Read configuration key `key` of `conf` (one "host:port" string or a list of them; absent:
 *  an empty list). `def_port` is the port when a text has none (0: the port is required; port 0
 *  is refused). A numeric address must be of `bind_family` unless that is AF_UNSPEC (the bind
 *  address is itself a name: checked at start). No DNS. 0, or -EINVAL with err naming the key
 *  and the text (too many, not a host name or address, port 0, wrong family). */
int xg_udp_dests_conf(struct xg_udp_dests *l, const struct xg_conf *conf, const char *key,
                      int def_port, int bind_family, struct xg_error *err);

/** Start resolving the names on `base` for a socket of `family` (AF_INET or AF_INET6); a
 *  numeric destination of another family is made inactive with one error line. `component`
 *  (copied) names the adapter in the log lines. Names in /etc/hosts resolve before this returns.
 *  A destination whose resolver cannot be allocated stays inactive (one error line). */
void xg_udp_dests_start(struct xg_udp_dests *l, struct event_base *base, const char *component,
                        int family);
/** Cancel and free the resolvers (stop()); a resolved destination keeps its address. */
void xg_udp_dests_stop(struct xg_udp_dests *l);

/** Destinations that have an address (datagrams go to them). */
int xg_udp_dests_active(const struct xg_udp_dests *l);
/** Destinations given by a name that has not resolved (yet). */
int xg_udp_dests_unresolved(const struct xg_udp_dests *l);
/** Whether any destination is given by name. */
bool xg_udp_dests_named(const struct xg_udp_dests *l);

/** Write the destinations to buf as "a<sep>b...", each followed by " (unresolved)" while it is a
 *  name without an address if mark is true (truncated to size; "" for none). Returns buf. */
char *xg_udp_dests_str(const struct xg_udp_dests *l, const char *sep, bool mark, char *buf,
                       size_t size);

/** Status of the names (when any destination is by name, or `extra` is given, e.g. the bind
 *  name's resolver): st->client set (last_error applies), st->last_error the newest DNS failure
 *  of the list and `extra`, gauge destinations_unresolved and counter dns_failures (the list's and
 *  `extra`'s failures). Nothing when there is no name. */
void xg_udp_dests_status(const struct xg_udp_dests *l, const struct xg_resolve *extra,
                         bool extra_named, struct xg_status *st);

/* ---- a bind address given by name ----
 *
 * The local address of a UDP adapter ("host:port", numeric or by host name) parsed at load
 * without DNS; at start a numeric address opens the socket at once, a name is resolved first
 * (same resolver and backoff) and the socket opens once it has an address: until then the
 * adapter shows state "backoff" (or "resolving") with the DNS error in last_error. A name that
 * does not resolve never stops the gateway; a socket that cannot be opened on the resolved
 * address is the adapter's "error" state with that error in last_error. */

/** The bind address (embed it zeroed in the adapter's state). */
struct xg_udp_bind {
    struct sockaddr_storage ss; /* the address (AF_UNSPEC while a name is not resolved) */
    socklen_t len;
    char host[256]; /* the name ("" for a numeric address) */
    int port;
    struct xg_resolve *res; /* the name's resolver (start..stop) */
    char error[200];        /* opening the socket on the resolved address failed ("" if not) */
    char component[64];
    int (*open)(void *arg); /* opens the socket on ss (0 or a negative errno) */
    void *arg;
    bool starting; /* in xg_udp_bind_start: open()'s result is start's */
    int start_rc;
    struct xg_log_limit lim; /* the DNS failure lines */
};

/** Parse `text` ("host:port", "port", ":port"; host defaults to def_host, port to def_port when
 *  def_port > 0) without DNS. 0, or -EINVAL with err naming the text (the caller adds the key). */
int xg_udp_bind_conf(struct xg_udp_bind *b, const char *text, const char *def_host, int def_port,
                     struct xg_error *err);
/** Open the socket: open(arg) now for a numeric address (its result returned), else resolve the
 *  name and call open(arg) once it resolves (now for /etc/hosts names: its result returned; else
 *  0 with one line saying the socket opens once the name resolves). -ENOMEM. */
int xg_udp_bind_start(struct xg_udp_bind *b, struct event_base *base, const char *component,
                      int (*open)(void *arg), void *arg);
/** Cancel and free the resolver (stop()). */
void xg_udp_bind_stop(struct xg_udp_bind *b);
/** Whether the address is a name. */
bool xg_udp_bind_named(const struct xg_udp_bind *b);
/** The adapter's state while it has no socket (`open` false) and its bind is a name: "error"
 *  (the socket could not be opened), "backoff" or "resolving"; `state` otherwise. The error of a
 *  failed open goes to st->last_error. */
const char *xg_udp_bind_state(const struct xg_udp_bind *b, bool open, const char *state,
                              struct xg_status *st);

#endif
