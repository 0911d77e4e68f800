/* Admin connection cap and request deadlines (see gateway/admin_conn.h).
 *
 * libevent 2.1 has no hook for "evhttp accepted a connection" but the bufferevent callback
 * (evhttp_set_bevcb), which runs inside evhttp's accept before the connection object exists.
 * So the tracker creates the connection's bufferevent there and, from an event made active at
 * once (it runs right after evhttp's accept returns, before anything is read), finds the
 * evhttp_connection: evhttp installs it as that bufferevent's callback argument, which is
 * checked (evhttp_connection_get_bufferevent() must give the same bufferevent back) before use.
 * evhttp's close callback tells when the connection goes. */
#include "gateway/admin_conn.h"

#include <errno.h>
#include <linux/tcp.h> /* struct tcp_info with tcpi_bytes_received (not in netinet/tcp.h) */
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "gateway/gateway.h"

#define COMPONENT "admin"

enum conn_state { ATTACHING, WAITING, BUSY };

struct conn {
    struct xg_admin_conns *owner;
    struct bufferevent *bev;
    struct evhttp_connection *evcon; /* NULL until attached */
    struct event *ev;                /* attach (made active), then the request deadline */
    enum conn_state state;
    bool refuse;              /* accepted beyond the cap */
    int open_then;            /* other connections open when it was accepted */
    uint64_t received_at_arm; /* bytes the peer had sent when the deadline was armed */
    void (*closecb)(struct evhttp_connection *, void *);
    void *closecb_arg;
    struct conn *next, **prevp;
};

struct xg_admin_conns {
    struct xg_gateway *gw;
    bool capped;
    struct conn *list;
    struct xg_admin_conn_stats stats;
    struct xg_log_limit refused_lim, timeout_lim;
};

static void conn_free(struct conn *c)
{
    if ((*c->prevp = c->next)) c->next->prevp = c->prevp;
    c->owner->stats.open--;
    if (c->ev) event_free(c->ev);
    free(c);
}

static struct conn *find(struct xg_admin_conns *t, struct evhttp_connection *evcon)
{
    if (!t || !evcon) return NULL;
    for (struct conn *c = t->list; c; c = c->next)
        if (c->evcon == evcon) return c;
    return NULL;
}

static const char *peer_of(struct evhttp_connection *evcon, char *buf, size_t size)
{
    char *addr = NULL;
    ev_uint16_t port = 0;
    evhttp_connection_get_peer(evcon, &addr, &port);
    if (addr && strchr(addr, ':'))
        snprintf(buf, size, "[%s]:%u", addr, port);
    else
        snprintf(buf, size, "%s:%u", addr ? addr : "?", port);
    return buf;
}

/* Bytes the peer has sent on the connection (TCP_INFO), or UINT64_MAX if unknown. */
static uint64_t bytes_received(const struct conn *c)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    evutil_socket_t fd = bufferevent_getfd(c->bev);
    memset(&ti, 0, sizeof ti);
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ||
        len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof ti.tcpi_bytes_received)
        return UINT64_MAX;
    return ti.tcpi_bytes_received;
}

static void arm(struct conn *c)
{
    /* the first deadline counts from the accept (0 bytes), a later one from the reply before */
    c->received_at_arm = c->state == ATTACHING ? 0 : bytes_received(c);
    int ms = c->owner->gw->conf.admin_request_timeout_ms;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    c->state = WAITING;
    evtimer_add(c->ev, &tv);
}

/* evhttp is freeing the connection. */
static void closed_cb(struct evhttp_connection *evcon, void *arg)
{
    struct conn *c = arg;
    if (c->closecb) c->closecb(evcon, c->closecb_arg);
    conn_free(c);
}

static void refuse(struct conn *c)
{
    static const char body[] = "503 too many admin connections: retry later\n";
    char reply[256];
    int n = snprintf(reply, sizeof reply,
                     "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
                     "X-Content-Type-Options: nosniff\r\nRetry-After: 2\r\n"
                     "Connection: close\r\nContent-Length: %zu\r\n\r\n%s",
                     sizeof body - 1, body);
    char peer[80];
    struct evhttp_connection *evcon = c->evcon;
    xg_admin_conn_note_refused(c->owner->gw, peer_of(evcon, peer, sizeof peer), c->open_then);
    /* best effort: the socket is new and empty, so the reply fits its send buffer */
    evutil_socket_t fd = bufferevent_getfd(c->bev);
    if (fd >= 0 && send(fd, reply, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        XG_DEBUG(COMPONENT, "refusing %s: %s", peer, strerror(errno));
    evhttp_connection_free(evcon); /* closed_cb frees c */
}

static void event_cb(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    (void)fd;
    (void)what;
    if (c->state == ATTACHING) {
        bufferevent_data_cb r, w;
        bufferevent_event_cb e;
        void *cbarg = NULL;
        bufferevent_getcb(c->bev, &r, &w, &e, &cbarg);
        struct evhttp_connection *evcon = cbarg;
        if (!r || !evcon || evhttp_connection_get_bufferevent(evcon) != c->bev) {
            XG_WARN(COMPONENT, "cannot track an admin connection (libevent changed?): "
                               "it has no request deadline");
            conn_free(c);
            return;
        }
        c->evcon = evcon;
        evhttp_connection_set_closecb(evcon, closed_cb, c);
        if (c->refuse) {
            refuse(c);
            return;
        }
        if (c->owner->capped)
            arm(c);
        else
            c->state = BUSY; /* behind the TLS front, whose own deadline covers the first request */
        return;
    }
    if (c->state != WAITING) return;
    char peer[80];
    peer_of(c->evcon, peer, sizeof peer);
    uint64_t got = bytes_received(c);
    if (got != UINT64_MAX && c->received_at_arm != UINT64_MAX && got == c->received_at_arm)
        xg_admin_conn_note_idle(c->owner->gw, peer);
    else
        xg_admin_conn_note_timeout(c->owner->gw, c->owner->capped ? peer : "(via the TLS front)");
    evhttp_connection_free(c->evcon); /* closed_cb frees c */
}

static struct bufferevent *bev_cb(struct event_base *base, void *arg)
{
    struct xg_admin_conns *t = arg;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) return NULL;
    struct conn *c = calloc(1, sizeof *c);
    if (c) c->ev = event_new(base, -1, 0, event_cb, c);
    if (!c || !c->ev) {
        XG_WARN(COMPONENT, "out of memory: an admin connection is not tracked");
        free(c);
        return bev;
    }
    c->owner = t;
    c->bev = bev;
    c->state = ATTACHING;
    if ((c->next = t->list)) c->next->prevp = &c->next;
    t->list = c;
    c->prevp = &t->list;
    t->stats.open++;
    /* decided in accept order (several accepts can precede the attach events) */
    c->refuse = t->capped && t->stats.open > t->gw->conf.admin_max_connections;
    c->open_then = t->stats.open - 1;
    event_active(c->ev, 0, 0);
    return bev;
}

/* The reply to a request went out: the next request on this connection has its own deadline. */
static void complete_cb(struct evhttp_request *req, void *arg)
{
    struct conn *c = find(arg, evhttp_request_get_connection(req));
    if (c && c->state == BUSY) arm(c);
}

void xg_admin_conn_request(struct xg_gateway *gw, struct evhttp_request *req)
{
    struct conn *c = find(gw->admin_conns, evhttp_request_get_connection(req));
    if (!c) return;
    event_del(c->ev);
    c->state = BUSY;
    evhttp_request_set_on_complete_cb(req, complete_cb, gw->admin_conns);
}

void xg_admin_conn_set_closecb(struct xg_gateway *gw, struct evhttp_connection *evcon,
                               void (*cb)(struct evhttp_connection *, void *), void *arg)
{
    struct conn *c = find(gw->admin_conns, evcon);
    if (!c) {
        evhttp_connection_set_closecb(evcon, cb, arg);
        return;
    }
    c->closecb = cb;
    c->closecb_arg = arg;
}

void xg_admin_conn_note_refused(struct xg_gateway *gw, const char *peer, int open)
{
    struct xg_admin_conns *t = gw->admin_conns;
    if (!t) return;
    t->stats.refused++;
    XG_WARN_PEER(&t->refused_lim, COMPONENT,
                 "admin client %s refused: %d connections open (admin.max_connections %d; %llu "
                 "refused so far)",
                 peer, open, gw->conf.admin_max_connections, (unsigned long long)t->stats.refused);
}

void xg_admin_conn_note_timeout(struct xg_gateway *gw, const char *peer)
{
    struct xg_admin_conns *t = gw->admin_conns;
    if (!t) return;
    t->stats.timeouts++;
    XG_INFO_PEER(&t->timeout_lim, COMPONENT,
                 "admin client %s: no complete request within %d ms (admin.request_timeout_ms): "
                 "connection closed",
                 peer, gw->conf.admin_request_timeout_ms);
}

void xg_admin_conn_note_idle(struct xg_gateway *gw, const char *peer)
{
    struct xg_admin_conns *t = gw->admin_conns;
    if (!t) return;
    t->stats.timeouts++;
    XG_DEBUG(COMPONENT,
             "admin client %s: idle for %d ms without sending a byte (a browser's pre-connect?): "
             "connection closed",
             peer, gw->conf.admin_request_timeout_ms);
}

int xg_admin_conns_init(struct xg_gateway *gw, bool capped)
{
    struct xg_admin_conns *t = calloc(1, sizeof *t);
    if (!t) return -ENOMEM;
    t->gw = gw;
    t->capped = capped;
    gw->admin_conns = t;
    evhttp_set_bevcb(gw->http, bev_cb, t);
    return 0;
}

void xg_admin_conns_free(struct xg_gateway *gw)
{
    struct xg_admin_conns *t = gw->admin_conns;
    if (!t) return;
    while (t->list)
        conn_free(t->list);
    free(t);
    gw->admin_conns = NULL;
}

struct xg_admin_conn_stats xg_admin_conn_stats(const struct xg_gateway *gw)
{
    struct xg_admin_conn_stats s = {0};
    if (gw->admin_conns) s = gw->admin_conns->stats;
    return s;
}
