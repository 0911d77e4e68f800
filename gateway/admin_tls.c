/* The admin server's TLS front (admin.tls; gateway/admin_tls.h).
 *
 * evhttp does not speak TLS, and libevent 2.1's filtering bufferevent does not fit evhttp's
 * connection handling (buffered output on re-enable, "written" before the bytes left, freed
 * connections with ciphertext queued). So TLS is terminated here: a listener on the admin port
 * accepts, wraps the socket in the core TLS layer (core/net/tls.h) and proxies the plaintext over a
 * Unix stream socket to evhttp, which listens on an abstract, kernel-named (autobind) Unix
 * socket. Requests reaching evhttp from any other process than this one are refused with 403
 * (SO_PEERCRED), so that local users cannot bypass TLS by connecting to that socket.
 *
 * Per connection: the TLS side is closed (after a close_notify) only once its ciphertext has
 * drained to the socket, so "Connection: close" replies and large replies arrive whole; output
 * is bounded (reading from evhttp pauses above XG_TLS_HIGH bytes queued for the client, so that
 * evhttp's own backlog checks, e.g. /events slow readers, still see a slow client); a failed
 * handshake, a TLS error or the client closing frees both sides at once. */
#include "gateway/admin_tls.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/tls.h"
#include "gateway/admin_conn.h"
#include "gateway/gateway.h"
#include "gateway/gateway_int.h"

#define COMPONENT "admin"

#define XG_TLS_HIGH (256 * 1024)        /* ciphertext queued for the client: stop reading evhttp */
#define XG_TLS_LOW (64 * 1024)          /* ...and resume below this */
#define XG_TLS_PLAIN_HIGH (1024 * 1024) /* plaintext queued for evhttp: stop reading the client */
#define XG_TLS_LINGER_S 30              /* a closing connection's output must drain within this */

struct tls_conn {
    struct xg_admin_tls *front;
    struct tls_conn *next, **prevp;
    struct bufferevent *tls;   /* filtering bufferevent (plaintext side of the client) */
    struct bufferevent *plain; /* Unix socket to evhttp */
    struct evbuffer *wire;     /* the TLS socket bufferevent's output (ciphertext) */
    struct evbuffer_cb_entry *wire_cb;
    struct xg_tls_session *sess;
    struct event *timer; /* handshake+first request deadline, linger deadline, deferred close */
    bool established, closing, plain_paused;
    bool answered; /* evhttp started its first reply: the request deadline is evhttp's now */
    char peer[64];
};

struct xg_admin_tls {
    struct xg_gateway *gw;
    struct xg_tls_ctx *ctx;
    struct evconnlistener *listener;
    struct sockaddr_un internal; /* evhttp's abstract Unix socket */
    socklen_t internal_len;
    struct tls_conn *conns;
    int n_conns;
    uint64_t handshake_failures;
};

static void conn_free(struct tls_conn *c)
{
    if (c->wire_cb) evbuffer_remove_cb_entry(c->wire, c->wire_cb);
    if (c->tls) bufferevent_free(c->tls);
    if (c->plain) bufferevent_free(c->plain);
    if (c->timer) event_free(c->timer);
    if ((*c->prevp = c->next)) c->next->prevp = c->prevp;
    c->front->n_conns--;
    free(c);
}

static size_t conn_pending(const struct tls_conn *c)
{
    return evbuffer_get_length(bufferevent_get_output(c->tls)) + evbuffer_get_length(c->wire);
}

/* Timer: the handshake and first request deadline (admin.request_timeout_ms from accepting,
 * however slowly the client sends), the linger deadline, or the deferred close of a drained
 * connection. */
static void conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    struct tls_conn *c = arg;
    (void)fd;
    if ((what & EV_TIMEOUT) && c->closing)
        XG_DEBUG(COMPONENT, "TLS client %s: closing timed out", c->peer);
    else if (what & EV_TIMEOUT)
        xg_admin_conn_note_timeout(c->front->gw, c->peer);
    conn_free(c);
}

/* Close once the ciphertext has left (deferred: never free inside libevent's callbacks of
 * the buffers being freed). */
static void conn_close_soon(struct tls_conn *c)
{
    event_del(c->timer);
    event_active(c->timer, 0, 0);
}

/* evhttp finished with the connection (it closed its side, or failed): flush, then close. */
static void conn_start_closing(struct tls_conn *c)
{
    if (c->closing) return;
    c->closing = true;
    bufferevent_disable(c->tls, EV_READ);
    if (c->plain) {
        bufferevent_free(c->plain);
        c->plain = NULL;
    }
    xg_tls_close_notify(c->sess);
    if (!conn_pending(c)) {
        conn_close_soon(c);
        return;
    }
    struct timeval tv = {XG_TLS_LINGER_S, 0};
    evtimer_add(c->timer, &tv);
}

/* The ciphertext queue changed: resume reading evhttp below the low mark; close when drained. */
static void wire_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
    struct tls_conn *c = arg;
    (void)buf;
    if (!info->n_deleted) return;
    size_t pending = conn_pending(c);
    if (c->closing) {
        if (!pending) conn_close_soon(c);
    } else if (c->plain_paused && pending < XG_TLS_LOW) {
        c->plain_paused = false;
        bufferevent_enable(c->plain, EV_READ);
    }
}

static void mark_established(struct tls_conn *c)
{
    if (c->established || !xg_tls_established(c->sess)) return;
    c->established = true; /* the deadline runs on until evhttp answers (plain_read_cb) */
}

/* client → evhttp */
static void tls_read_cb(struct bufferevent *bev, void *arg)
{
    struct tls_conn *c = arg;
    mark_established(c);
    if (!c->plain) return;
    struct evbuffer *out = bufferevent_get_output(c->plain);
    evbuffer_add_buffer(out, bufferevent_get_input(bev));
    if (evbuffer_get_length(out) > XG_TLS_PLAIN_HIGH) bufferevent_disable(bev, EV_READ);
}

/* The plaintext queue reached the socket bufferevent (or the socket): close if drained. */
static void tls_write_cb(struct bufferevent *bev, void *arg)
{
    struct tls_conn *c = arg;
    (void)bev;
    if (c->closing && !conn_pending(c)) conn_close_soon(c);
}

/* evhttp took the client's plaintext: read from the client again. */
static void plain_write_cb(struct bufferevent *bev, void *arg)
{
    struct tls_conn *c = arg;
    (void)bev;
    if (!c->closing) bufferevent_enable(c->tls, EV_READ);
}

/* evhttp → client */
static void plain_read_cb(struct bufferevent *bev, void *arg)
{
    struct tls_conn *c = arg;
    mark_established(c);
    if (!c->answered && !c->closing) {
        c->answered = true;
        event_del(c->timer);
    }
    evbuffer_add_buffer(bufferevent_get_output(c->tls), bufferevent_get_input(bev));
    if (conn_pending(c) > XG_TLS_HIGH) {
        c->plain_paused = true;
        bufferevent_disable(bev, EV_READ);
    }
}

static void tls_event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct tls_conn *c = arg;
    (void)bev;
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))) return;
    const char *e = xg_tls_error(c->sess);
    if (!c->established && !xg_tls_established(c->sess)) {
        c->front->handshake_failures++;
        if (e[0])
            XG_INFO(COMPONENT, "%s", e); /* names the peer */
        else
            XG_INFO(COMPONENT, "TLS client %s: closed during the handshake", c->peer);
    } else if (e[0]) {
        XG_DEBUG(COMPONENT, "TLS client %s: %s", c->peer, e);
    }
    conn_free(c); /* the client is gone or broken: nothing more can reach it */
}

static void plain_event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct tls_conn *c = arg;
    (void)bev;
    if (what & BEV_EVENT_CONNECTED) return;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
        /* evhttp's last bytes may still be in the socket pair: take them first */
        struct evbuffer *in = bufferevent_get_input(c->plain);
        if (evbuffer_get_length(in)) evbuffer_add_buffer(bufferevent_get_output(c->tls), in);
        conn_start_closing(c);
    }
}

static void tls_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                          int salen, void *arg)
{
    struct xg_admin_tls *t = arg;
    struct event_base *base = evconnlistener_get_base(l);
    (void)salen;
    char peer[64];
    xg_net_addr_str(sa, peer, sizeof peer);
    if (t->n_conns >= t->gw->conf.admin_max_connections) {
        xg_admin_conn_note_refused(t->gw, peer, t->n_conns);
        evutil_closesocket(fd);
        return;
    }
    struct tls_conn *c = calloc(1, sizeof *c);
    if (!c) {
        evutil_closesocket(fd);
        return;
    }
    c->front = t;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    if ((c->next = t->conns)) c->next->prevp = &c->next;
    t->conns = c;
    c->prevp = &t->conns;
    t->n_conns++;
    struct bufferevent *under = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!under) {
        evutil_closesocket(fd);
        conn_free(c);
        return;
    }
    c->wire = bufferevent_get_output(under);
    c->tls = xg_tls_wrap(t->ctx, under, NULL, peer, &c->sess); /* frees `under` on failure */
    c->timer = event_new(base, -1, 0, conn_timer_cb, c);
    c->plain = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (c->tls) c->wire_cb = evbuffer_add_cb(c->wire, wire_cb, c);
    if (!c->tls || !c->timer || !c->plain || !c->wire_cb ||
        bufferevent_socket_connect(c->plain, (struct sockaddr *)&t->internal,
                                   (int)t->internal_len)) {
        XG_WARN(COMPONENT, "TLS client %s refused: cannot set up its connection to evhttp (%s)",
                peer,
                c->tls && c->timer && c->plain && c->wire_cb ? strerror(errno) : "out of memory");
        conn_free(c);
        return;
    }
    bufferevent_setcb(c->tls, tls_read_cb, tls_write_cb, tls_event_cb, c);
    bufferevent_setcb(c->plain, plain_read_cb, plain_write_cb, plain_event_cb, c);
    bufferevent_setwatermark(c->plain, EV_WRITE, XG_TLS_PLAIN_HIGH / 2, 0);
    bufferevent_enable(c->tls, EV_READ | EV_WRITE);
    bufferevent_enable(c->plain, EV_READ | EV_WRITE);
    int ms = t->gw->conf.admin_request_timeout_ms;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(c->timer, &tv);
}

/* evhttp's side: an abstract Unix socket named by the kernel (autobind). */
static int tls_internal_listener(struct xg_gateway *gw, struct xg_admin_tls *t,
                                 struct xg_error *err)
{
    evutil_socket_t fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return xg_error_set(err, -errno, "admin: Unix socket: %s", strerror(errno));
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    t->internal_len = sizeof sun;
    if (bind(fd, (struct sockaddr *)&sun, sizeof(sa_family_t)) ||
        getsockname(fd, (struct sockaddr *)&t->internal, &t->internal_len)) {
        int e = errno;
        evutil_closesocket(fd);
        return xg_error_set(err, -e, "admin: internal Unix socket: %s", strerror(e));
    }
    struct evconnlistener *l = evconnlistener_new(
        gw->base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 64, fd);
    if (!l) {
        evutil_closesocket(fd);
        return xg_error_set(err, -ENOMEM, "admin: cannot listen on the internal socket");
    }
    if (!evhttp_bind_listener(gw->http, l)) {
        evconnlistener_free(l);
        return xg_error_set(err, -ENOMEM, "admin: cannot listen on the internal socket");
    }
    if (xg_net_listener_guard(l, COMPONENT))
        return xg_error_set(err, -ENOMEM, "admin: out of memory");
    gw->admin_listener = l;
    XG_DEBUG(COMPONENT, "evhttp behind TLS on the abstract Unix socket @%.*s",
             (int)(t->internal_len - sizeof(sa_family_t) - 1), t->internal.sun_path + 1);
    return 0;
}

bool xg_admin_tls_from_front(struct evhttp_request *req)
{
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
    evutil_socket_t fd = bev ? bufferevent_getfd(bev) : -1;
    struct ucred cr;
    socklen_t len = sizeof cr;
    return fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.pid == getpid();
}

void xg_admin_tls_free(struct xg_admin_tls *t)
{
    if (!t) return;
    while (t->conns)
        conn_free(t->conns);
    xg_net_listener_free(t->listener);
    xg_tls_ctx_free(t->ctx); /* refcounted: sessions libevent has not finalized yet keep it */
    free(t);
}

int xg_admin_tls_start(struct xg_gateway *gw, const struct sockaddr *a, socklen_t al,
                       const char *listen, int *fd, struct xg_error *err)
{
    struct xg_admin_tls *t = calloc(1, sizeof *t);
    if (!t) return xg_error_set(err, -ENOMEM, "out of memory");
    gw->admin_tls = t;
    t->gw = gw;
    struct xg_tls_conf tc = {
        .server = true, .cert = gw->conf.admin_tls_cert, .key = gw->conf.admin_tls_key};
    if (!(t->ctx = xg_tls_ctx_new(&tc, err))) return xg_error_prefix(err, "admin.tls: ");
    int rc;
    if ((rc = tls_internal_listener(gw, t, err))) return rc;
    t->listener =
        xg_net_listener_new_bind(gw->base, tls_accept_cb, t,
                                 LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
                                 128, a, (int)al, COMPONENT);
    if (!t->listener) return xg_admin_listen_error(listen, errno, err);
    *fd = evconnlistener_get_fd(t->listener);
    return 0;
}
