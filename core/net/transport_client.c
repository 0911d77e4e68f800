#include "core/net/transport_client.h"

#include <errno.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/tls.h"

#define DEFAULT_CONNECT_TIMEOUT_NS (5 * XG_NS_PER_S)
#define MAX_ADDRS 8 /* addresses of a name tried in turn within one attempt */

struct xg_tclient {
    struct event_base *base;
    struct evdns_base *dns;
    bool own_dns; /* a private resolver (another event base than the shared one's) */
    char component[64];
    char host[256];
    int port, family;
    char prefix[16];
    char peer[300];
    int64_t connect_timeout_ns;
    struct xg_tls_ctx *tls;
    char server_name[256];
    struct xg_tclient_ops ops;
    void *arg;

    enum xg_tclient_state state;
    struct evdns_getaddrinfo_request *req;
    evutil_socket_t fd;           /* pending TCP connect */
    struct event *conn_ev;        /* ...its writability / timeout */
    struct event *timer;          /* backoff */
    struct sockaddr_storage addr; /* the address in use */
    socklen_t addrlen;
    struct sockaddr_storage addrs[MAX_ADDRS]; /* the name's addresses (this attempt) */
    socklen_t addrlens[MAX_ADDRS];
    int n_addrs, next_addr;
    struct xg_backoff backoff;
    uint64_t connects, reconnects, dns_failures;
    char last_error[200];
    int64_t last_error_ns;
};

/* ---- the shared resolver ---- */

static struct {
    struct event_base *base;
    struct evdns_base *dns;
    int refs;
    char resolv_conf[512]; /* "" = the system's */
} g_dns;

int xg_tclient_set_resolv_conf(const char *resolv_conf)
{
    if (resolv_conf && strlen(resolv_conf) >= sizeof g_dns.resolv_conf) return -ENAMETOOLONG;
    snprintf(g_dns.resolv_conf, sizeof g_dns.resolv_conf, "%s", resolv_conf ? resolv_conf : "");
    return 0;
}

const char *xg_tclient_resolv_conf(void)
{
    return g_dns.resolv_conf;
}

static struct evdns_base *dns_new(struct event_base *base)
{
    struct evdns_base *dns;
    if (!g_dns.resolv_conf[0]) return evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
    dns = evdns_base_new(base, 0);
    if (!dns) return NULL;
    /* 0: ok; 1: cannot open; 2: cannot stat; 3: too large; 4: out of memory; 5: short read;
     * 6: no nameservers in the file (then evdns uses 127.0.0.1) */
    int rc = evdns_base_resolv_conf_parse(dns, DNS_OPTIONS_ALL, g_dns.resolv_conf);
    if (rc && rc != 6)
        XG_WARN("dns", "resolv_conf '%s' could not be read (evdns error %d): names do not resolve",
                g_dns.resolv_conf, rc);
    return dns;
}

struct evdns_base *xg_dns_acquire(struct event_base *base, bool *own)
{
    *own = false;
    if (g_dns.refs && g_dns.base != base) {
        *own = true;
        return dns_new(base);
    }
    if (!g_dns.refs) {
        g_dns.dns = dns_new(base);
        if (!g_dns.dns) return NULL;
        g_dns.base = base;
    }
    g_dns.refs++;
    return g_dns.dns;
}

void xg_dns_release(struct evdns_base *dns, bool own)
{
    if (!dns) return;
    if (own) {
        evdns_base_free(dns, 0);
        return;
    }
    if (--g_dns.refs == 0) {
        evdns_base_free(g_dns.dns, 0);
        g_dns.dns = NULL;
        g_dns.base = NULL;
    }
}

/* ---- state ---- */

const char *xg_tclient_state_name(enum xg_tclient_state s)
{
    switch (s) {
    case XG_TC_CONNECTING:
        return "connecting";
    case XG_TC_HANDSHAKE:
        return "handshake";
    case XG_TC_STREAMING:
        return "streaming";
    case XG_TC_BACKOFF:
        return "backoff";
    default:
        return "stopped";
    }
}

bool xg_tclient_log_attempt(uint32_t attempt)
{
    return attempt <= 3 || attempt % 10 == 0;
}

static void set_peer(struct xg_tclient *tc)
{
    char as[64];
    if (tc->addrlen)
        snprintf(tc->peer, sizeof tc->peer, "%s%s", tc->prefix,
                 xg_net_addr_str((struct sockaddr *)&tc->addr, as, sizeof as));
    else
        snprintf(tc->peer, sizeof tc->peer, strchr(tc->host, ':') ? "%s[%s]:%d" : "%s%s:%d",
                 tc->prefix, tc->host, tc->port);
}

static void set_error(struct xg_tclient *tc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_error(struct xg_tclient *tc, const char *fmt, ...)
{
    char raw[sizeof tc->last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* the text may quote a peer's bytes: control and non-ASCII bytes as \xNN, so that it is
     * valid UTF-8 for JSON and one line in /metrics */
    size_t o = 0;
    for (const unsigned char *q = (const unsigned char *)raw; *q && o + 5 < sizeof tc->last_error;
         q++) {
        if (*q < 0x20 || *q >= 0x7f)
            o += (size_t)snprintf(tc->last_error + o, sizeof tc->last_error - o, "\\x%02x", *q);
        else
            tc->last_error[o++] = (char)*q;
    }
    tc->last_error[o] = '\0';
    tc->last_error_ns = xg_clock_mono_ns();
}

static void cancel_pending(struct xg_tclient *tc)
{
    if (tc->req) {
        struct evdns_getaddrinfo_request *r = tc->req;
        tc->req = NULL;
        evdns_getaddrinfo_cancel(r); /* runs the callback with EVUTIL_EAI_CANCEL */
    }
    if (tc->conn_ev) {
        event_free(tc->conn_ev);
        tc->conn_ev = NULL;
    }
    if (tc->fd >= 0) {
        evutil_closesocket(tc->fd);
        tc->fd = -1;
    }
    if (tc->timer) event_del(tc->timer);
}

static void enter_backoff(struct xg_tclient *tc)
{
    if (tc->state == XG_TC_STOPPED || !tc->timer) return;
    cancel_pending(tc);
    int64_t d = xg_backoff_next(&tc->backoff);
    struct timeval tv = xg_ns_to_timeval(d);
    tc->state = XG_TC_BACKOFF;
    tc->reconnects++;
    XG_DEBUG(tc->component, "reconnecting to %s in %.2f s", tc->peer, (double)d * 1e-9);
    evtimer_add(tc->timer, &tv);
}

/* A failed attempt the module saw: log (first attempts of an outage, then every tenth), back
 * off. */
static void attempt_failed(struct xg_tclient *tc)
{
    uint32_t attempt = tc->backoff.attempts + 1;
    if (xg_tclient_log_attempt(attempt))
        XG_WARN(tc->component, "%s (attempt %" PRIu32 ")", tc->last_error, attempt);
    enter_backoff(tc);
}

/* ---- connecting ---- */

static void tcp_connect(struct xg_tclient *tc);

/* A TCP connect failed: the name's next address, else the attempt failed. */
static void tcp_failed(struct xg_tclient *tc)
{
    if (tc->next_addr >= tc->n_addrs) {
        attempt_failed(tc);
        return;
    }
    cancel_pending(tc);
    XG_DEBUG(tc->component, "%s; trying the next address", tc->last_error);
    int i = tc->next_addr++;
    memcpy(&tc->addr, &tc->addrs[i], tc->addrlens[i]);
    tc->addrlen = tc->addrlens[i];
    set_peer(tc);
    tcp_connect(tc);
}

static void tcp_connected(struct xg_tclient *tc)
{
    evutil_socket_t fd = tc->fd;
    tc->fd = -1;
    if (tc->conn_ev) {
        event_free(tc->conn_ev);
        tc->conn_ev = NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct bufferevent *bev = bufferevent_socket_new(tc->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) {
        evutil_closesocket(fd);
        set_error(tc, "cannot connect to %s: out of memory", tc->peer);
        attempt_failed(tc);
        return;
    }
    struct xg_tls_session *sess = NULL;
    if (tc->tls) {
        bev =
            xg_tls_wrap(tc->tls, bev, tc->server_name[0] ? tc->server_name : NULL, tc->peer, &sess);
        if (!bev) {
            set_error(tc, "cannot connect to %s: out of memory", tc->peer);
            attempt_failed(tc);
            return;
        }
    }
    tc->connects++;
    tc->state = XG_TC_HANDSHAKE;
    XG_INFO(tc->component, "connected to %s%s", tc->peer, tc->tls ? " (TLS)" : "");
    tc->ops.connected(tc->arg, bev, sess);
}

static void conn_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_tclient *tc = arg;
    if (what & EV_TIMEOUT) {
        set_error(tc, "cannot connect to %s: timed out after %.1f s", tc->peer,
                  (double)tc->connect_timeout_ns * 1e-9);
        tcp_failed(tc);
        return;
    }
    int e = 0;
    socklen_t el = sizeof e;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0) e = errno;
    if (e) {
        set_error(tc, "cannot connect to %s: %s", tc->peer, strerror(e));
        tcp_failed(tc);
        return;
    }
    tcp_connected(tc);
}

static void tcp_connect(struct xg_tclient *tc)
{
    tc->fd = socket(tc->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (tc->fd < 0) {
        set_error(tc, "cannot connect to %s: socket: %s", tc->peer, strerror(errno));
        attempt_failed(tc);
        return;
    }
    if (connect(tc->fd, (struct sockaddr *)&tc->addr, tc->addrlen) == 0) {
        tcp_connected(tc);
        return;
    }
    if (errno != EINPROGRESS) {
        set_error(tc, "cannot connect to %s: %s", tc->peer, strerror(errno));
        tcp_failed(tc);
        return;
    }
    tc->conn_ev = event_new(tc->base, tc->fd, EV_WRITE, conn_cb, tc);
    struct timeval tv = xg_ns_to_timeval(tc->connect_timeout_ns);
    if (!tc->conn_ev || event_add(tc->conn_ev, &tv)) {
        set_error(tc, "cannot connect to %s: out of memory", tc->peer);
        attempt_failed(tc);
    }
}

static void resolved(struct xg_tclient *tc, const struct sockaddr *sa, socklen_t len)
{
    memcpy(&tc->addr, sa, len);
    tc->addrlen = len;
    set_peer(tc);
    if (tc->ops.resolved) {
        char why[160] = "";
        int rc = tc->ops.resolved(tc->arg, (const struct sockaddr *)&tc->addr, tc->addrlen, why,
                                  sizeof why);
        if (rc < 0) {
            set_error(tc, "cannot connect to %s: %s", tc->peer, why[0] ? why : strerror(-rc));
            attempt_failed(tc);
        }
        return;
    }
    tcp_connect(tc);
}

static void dns_cb(int result, struct evutil_addrinfo *res, void *arg)
{
    if (result == EVUTIL_EAI_CANCEL) { /* stopped: tc may be being freed */
        if (res) evutil_freeaddrinfo(res);
        return;
    }
    struct xg_tclient *tc = arg;
    tc->req = NULL;
    const struct evutil_addrinfo *ai = res;
    while (ai && tc->family != AF_UNSPEC && ai->ai_family != tc->family)
        ai = ai->ai_next;
    if (result || !ai || ai->ai_addrlen > sizeof tc->addr) {
        tc->dns_failures++;
        set_error(tc, "DNS: cannot resolve '%s': %s", tc->host,
                  result                  ? evutil_gai_strerror(result)
                  : tc->family == AF_INET ? "no IPv4 address"
                                          : "no address");
        if (res) evutil_freeaddrinfo(res);
        attempt_failed(tc);
        return;
    }
    tc->n_addrs = 0;
    for (; ai && tc->n_addrs < MAX_ADDRS; ai = ai->ai_next) {
        if ((tc->family != AF_UNSPEC && ai->ai_family != tc->family) ||
            ai->ai_addrlen > sizeof tc->addrs[0])
            continue;
        memcpy(&tc->addrs[tc->n_addrs], ai->ai_addr, ai->ai_addrlen);
        tc->addrlens[tc->n_addrs++] = (socklen_t)ai->ai_addrlen;
    }
    evutil_freeaddrinfo(res);
    tc->next_addr = 1;
    resolved(tc, (struct sockaddr *)&tc->addrs[0], tc->addrlens[0]);
}

static void attempt(struct xg_tclient *tc)
{
    tc->state = XG_TC_CONNECTING;
    if (!tc->dns) {
        set_error(tc, "DNS: cannot resolve '%s': no resolver (out of memory)", tc->host);
        attempt_failed(tc);
        return;
    }
    char port[16];
    snprintf(port, sizeof port, "%d", tc->port);
    struct evutil_addrinfo hints = {.ai_family = tc->family,
                                    .ai_socktype = SOCK_STREAM,
                                    .ai_protocol = IPPROTO_TCP,
                                    .ai_flags = EVUTIL_AI_NUMERICSERV};
    /* numeric addresses and /etc/hosts names complete at once: dns_cb runs before this
     * returns, and NULL is returned */
    tc->req = evdns_getaddrinfo(tc->dns, tc->host, port, &hints, dns_cb, tc);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    attempt(arg);
}

/* ---- life cycle ---- */

struct xg_tclient *xg_tclient_new(struct event_base *base, const struct xg_tclient_conf *conf,
                                  const struct xg_tclient_ops *ops, void *arg)
{
    struct xg_tclient *tc = calloc(1, sizeof *tc);
    if (!tc) return NULL;
    tc->base = base;
    tc->fd = -1;
    snprintf(tc->component, sizeof tc->component, "%s", conf->component ? conf->component : "");
    snprintf(tc->host, sizeof tc->host, "%s", conf->host ? conf->host : "");
    snprintf(tc->prefix, sizeof tc->prefix, "%s", conf->peer_prefix ? conf->peer_prefix : "");
    snprintf(tc->server_name, sizeof tc->server_name, "%s",
             conf->server_name ? conf->server_name : "");
    tc->port = conf->port;
    tc->family = conf->family;
    tc->connect_timeout_ns =
        conf->connect_timeout_ns > 0 ? conf->connect_timeout_ns : DEFAULT_CONNECT_TIMEOUT_NS;
    tc->tls = conf->tls;
    tc->ops = *ops;
    tc->arg = arg;
    tc->backoff.rng = conf->seed ? conf->seed : ((uint64_t)(uintptr_t)tc ^ 0x9E3779B97F4A7C15u);
    set_peer(tc);
    tc->timer = evtimer_new(base, timer_cb, tc);
    tc->dns = xg_dns_acquire(base, &tc->own_dns);
    if (!tc->timer || !tc->dns) {
        xg_tclient_free(tc);
        return NULL;
    }
    return tc;
}

void xg_tclient_start(struct xg_tclient *tc)
{
    attempt(tc);
}

void xg_tclient_stop(struct xg_tclient *tc)
{
    if (!tc) return;
    tc->state = XG_TC_STOPPED;
    cancel_pending(tc);
}

void xg_tclient_free(struct xg_tclient *tc)
{
    if (!tc) return;
    xg_tclient_stop(tc);
    if (tc->timer) event_free(tc->timer);
    xg_dns_release(tc->dns, tc->own_dns);
    free(tc);
}

void xg_tclient_handshake(struct xg_tclient *tc)
{
    if (tc->state != XG_TC_CONNECTING) return;
    tc->connects++;
    tc->state = XG_TC_HANDSHAKE;
}

void xg_tclient_streaming(struct xg_tclient *tc)
{
    if (tc->state != XG_TC_HANDSHAKE) return;
    tc->state = XG_TC_STREAMING;
    xg_backoff_reset(&tc->backoff);
}

void xg_tclient_closed(struct xg_tclient *tc, const char *why)
{
    if (tc->state == XG_TC_STOPPED || tc->state == XG_TC_BACKOFF) return;
    set_error(tc, "%s", why && *why ? why : "connection closed");
    enter_backoff(tc);
}

/* ---- status ---- */

enum xg_tclient_state xg_tclient_state(const struct xg_tclient *tc)
{
    return tc->state;
}

const char *xg_tclient_peer(const struct xg_tclient *tc)
{
    return tc->peer;
}

const char *xg_tclient_last_error(const struct xg_tclient *tc)
{
    return tc->last_error;
}

int64_t xg_tclient_last_error_ns(const struct xg_tclient *tc)
{
    return tc->last_error_ns;
}

uint64_t xg_tclient_connects(const struct xg_tclient *tc)
{
    return tc->connects;
}

uint64_t xg_tclient_reconnects(const struct xg_tclient *tc)
{
    return tc->reconnects;
}

uint32_t xg_tclient_attempts(const struct xg_tclient *tc)
{
    return tc->backoff.attempts;
}

uint64_t xg_tclient_dns_failures(const struct xg_tclient *tc)
{
    return tc->dns_failures;
}

const struct sockaddr *xg_tclient_addr(const struct xg_tclient *tc, socklen_t *len)
{
    *len = tc->addrlen;
    return (const struct sockaddr *)&tc->addr;
}

static int state_rank(enum xg_tclient_state s)
{
    switch (s) {
    case XG_TC_BACKOFF:
        return 4;
    case XG_TC_CONNECTING:
        return 3;
    case XG_TC_HANDSHAKE:
        return 2;
    case XG_TC_STREAMING:
        return 1;
    default:
        return 0;
    }
}

void xg_tclient_status(struct xg_tclient *const *tcs, int n, struct xg_status *st)
{
    enum xg_tclient_state worst = XG_TC_STOPPED;
    uint64_t connects = 0, reconnects = 0, dns = 0;
    uint32_t attempts = 0;
    int64_t newest = 0;
    st->client = true;
    st->last_error[0] = '\0';
    for (int i = 0; i < n; i++) {
        const struct xg_tclient *tc = tcs[i];
        if (!tc) continue;
        if (state_rank(tc->state) > state_rank(worst)) worst = tc->state;
        connects += tc->connects;
        reconnects += tc->reconnects;
        dns += tc->dns_failures;
        if (tc->backoff.attempts > attempts) attempts = tc->backoff.attempts;
        if (tc->last_error_ns > newest) {
            newest = tc->last_error_ns;
            snprintf(st->last_error, sizeof st->last_error, "%s", tc->last_error);
        }
    }
    st->state = xg_tclient_state_name(worst);
    xg_status_counter(st, "connects", (double)connects);
    xg_status_counter(st, "reconnects", (double)reconnects);
    xg_status_gauge(st, "backoff_attempts", (double)attempts);
    xg_status_counter(st, "dns_failures", (double)dns);
}
