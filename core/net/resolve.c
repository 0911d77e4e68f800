/* Names resolved without blocking the reactor (resolve.h). */
#include "core/net/resolve.h"

#include <errno.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock/clock.h"
#include "core/net/net.h"
#include "core/net/transport_client.h"

struct xg_resolve {
    struct event_base *base;
    struct evdns_base *dns;
    bool own_dns;
    char component[64], what[32], host[256];
    int port, family, socktype;
    struct xg_log_limit own_lim, *lim;
    xg_resolve_cb cb;
    void *arg;
    enum xg_resolve_state state;
    struct evdns_getaddrinfo_request *req;
    struct event *timer;
    struct xg_backoff backoff;
    uint64_t failures;
    char last_error[200];
    int64_t last_error_ns;
};

const char *xg_resolve_state_name(enum xg_resolve_state s)
{
    switch (s) {
    case XG_RS_RESOLVING:
        return "resolving";
    case XG_RS_BACKOFF:
        return "backoff";
    case XG_RS_RESOLVED:
        return "resolved";
    default:
        return "stopped";
    }
}

static void failed(struct xg_resolve *r, const char *why)
{
    r->failures++;
    snprintf(r->last_error, sizeof r->last_error, "DNS: cannot resolve '%s': %s", r->host, why);
    r->last_error_ns = xg_clock_mono_ns();
    uint32_t attempt = r->backoff.attempts + 1;
    int64_t d = xg_backoff_next(&r->backoff);
    if (xg_tclient_log_attempt(attempt))
        XG_WARN_PEER(r->lim, r->component, "%s %s:%d: %s (attempt %" PRIu32 "; again in %.1f s)",
                     r->what, r->host, r->port, r->last_error, attempt, (double)d * 1e-9);
    r->state = XG_RS_BACKOFF;
    struct timeval tv = xg_ns_to_timeval(d);
    evtimer_add(r->timer, &tv);
}

static void dns_cb(int result, struct evutil_addrinfo *res, void *arg)
{
    if (result == EVUTIL_EAI_CANCEL) { /* freed: r may be gone */
        if (res) evutil_freeaddrinfo(res);
        return;
    }
    struct xg_resolve *r = arg;
    r->req = NULL;
    const struct evutil_addrinfo *ai = res;
    while (ai && ((r->family != AF_UNSPEC && ai->ai_family != r->family) ||
                  ai->ai_addrlen > sizeof(struct sockaddr_storage)))
        ai = ai->ai_next;
    if (result || !ai) {
        failed(r, result                  ? evutil_gai_strerror(result)
                  : r->family == AF_INET  ? "no IPv4 address"
                  : r->family == AF_INET6 ? "no IPv6 address"
                                          : "no address");
        if (res) evutil_freeaddrinfo(res);
        return;
    }
    struct sockaddr_storage ss;
    socklen_t len = (socklen_t)ai->ai_addrlen;
    memset(&ss, 0, sizeof ss);
    memcpy(&ss, ai->ai_addr, len);
    evutil_freeaddrinfo(res);
    r->state = XG_RS_RESOLVED;
    xg_backoff_reset(&r->backoff);
    r->cb(r->arg, (const struct sockaddr *)&ss, len);
}

static void query(struct xg_resolve *r)
{
    r->state = XG_RS_RESOLVING;
    if (!r->dns) {
        failed(r, "no resolver (out of memory)");
        return;
    }
    char port[16];
    snprintf(port, sizeof port, "%d", r->port);
    struct evutil_addrinfo hints = {
        .ai_family = r->family, .ai_socktype = r->socktype, .ai_flags = EVUTIL_AI_NUMERICSERV};
    /* numeric addresses and /etc/hosts names complete at once: dns_cb runs before this
     * returns, and NULL is returned */
    struct evdns_getaddrinfo_request *req =
        evdns_getaddrinfo(r->dns, r->host, port, &hints, dns_cb, r);
    if (r->state == XG_RS_RESOLVING) r->req = req;
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    query(arg);
}

struct xg_resolve *xg_resolve_new(struct event_base *base, const struct xg_resolve_conf *conf,
                                  xg_resolve_cb cb, void *arg)
{
    struct xg_resolve *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->base = base;
    snprintf(r->component, sizeof r->component, "%s", conf->component ? conf->component : "");
    snprintf(r->what, sizeof r->what, "%s", conf->what ? conf->what : "address");
    snprintf(r->host, sizeof r->host, "%s", conf->host ? conf->host : "");
    r->port = conf->port;
    r->family = conf->family;
    r->socktype = conf->socktype ? conf->socktype : SOCK_DGRAM;
    r->lim = conf->lim ? conf->lim : &r->own_lim;
    r->cb = cb;
    r->arg = arg;
    r->backoff.rng = (uint64_t)(uintptr_t)r ^ UINT64_C(0x9E3779B97F4A7C15);
    r->timer = evtimer_new(base, timer_cb, r);
    r->dns = xg_dns_acquire(base, &r->own_dns);
    if (!r->timer || !r->dns) {
        xg_resolve_free(r);
        return NULL;
    }
    return r;
}

void xg_resolve_start(struct xg_resolve *r)
{
    if (r->state == XG_RS_STOPPED) query(r);
}

void xg_resolve_free(struct xg_resolve *r)
{
    if (!r) return;
    if (r->req) {
        struct evdns_getaddrinfo_request *q = r->req;
        r->req = NULL;
        evdns_getaddrinfo_cancel(q); /* runs dns_cb with EVUTIL_EAI_CANCEL */
    }
    if (r->timer) event_free(r->timer);
    xg_dns_release(r->dns, r->own_dns);
    free(r);
}

enum xg_resolve_state xg_resolve_state(const struct xg_resolve *r)
{
    return r->state;
}

uint64_t xg_resolve_failures(const struct xg_resolve *r)
{
    return r->failures;
}

const char *xg_resolve_last_error(const struct xg_resolve *r)
{
    return r->last_error;
}

int64_t xg_resolve_last_error_ns(const struct xg_resolve *r)
{
    return r->last_error_ns;
}

/* ---- listening addresses: numeric or /etc/hosts, never DNS ---- */

struct hosts_answer {
    bool done;
    int result;
    struct sockaddr_storage ss;
    socklen_t len;
};

static void hosts_cb(int result, struct evutil_addrinfo *res, void *arg)
{
    struct hosts_answer *h = arg;
    h->done = true;
    h->result = result;
    if (!result && res && res->ai_addrlen <= sizeof h->ss) {
        memcpy(&h->ss, res->ai_addr, res->ai_addrlen);
        h->len = (socklen_t)res->ai_addrlen;
    } else if (!result) {
        h->result = EVUTIL_EAI_FAIL;
    }
    if (res) evutil_freeaddrinfo(res);
}

int xg_resolve_listen_addr(const char *text, const char *def_host, int def_port,
                           struct sockaddr_storage *ss, socklen_t *len, struct xg_error *err)
{
    char host[256];
    int port = 0;
    int rc = xg_net_parse_numeric(text, def_host, def_port, ss, len, host, sizeof host, &port, err);
    if (rc <= 0) return rc; /* numeric (0) or not host:port (-EINVAL) */
    /* a private base and resolver with no nameserver, only the hosts file: a name in it is
     * answered before evdns_getaddrinfo returns; any other name is cancelled unsent */
    struct event_base *base = event_base_new();
    struct evdns_base *dns = base ? evdns_base_new(base, 0) : NULL;
    if (!dns || evdns_base_load_hosts(dns, NULL) != 0) {
        if (dns) evdns_base_free(dns, 1);
        if (base) event_base_free(base);
        return xg_error_set(err, -ENOMEM, "address '%s': cannot read /etc/hosts", text);
    }
    struct hosts_answer h = {0};
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct evutil_addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = EVUTIL_AI_NUMERICSERV};
    struct evdns_getaddrinfo_request *req = evdns_getaddrinfo(dns, host, ps, &hints, hosts_cb, &h);
    if (!h.done && req) evdns_getaddrinfo_cancel(req);
    evdns_base_free(dns, 1);
    event_base_loop(base, EVLOOP_NONBLOCK); /* deferred callbacks of the cancelled request */
    event_base_free(base); /* nothing can call hosts_cb after this: h may live on the stack */
    if (!h.done || h.result || !h.len)
        return xg_error_set(err, -EHOSTUNREACH,
                            "address '%s': '%s' is not in /etc/hosts: a listening address must be "
                            "numeric or a name in /etc/hosts (listening addresses are not looked "
                            "up in DNS)",
                            text, host);
    memset(ss, 0, sizeof *ss);
    memcpy(ss, &h.ss, h.len);
    *len = h.len;
    return 0;
}
