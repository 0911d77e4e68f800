/* Listening side of the TCP server adapters (core/net/transport_server.h). */
#include "core/net/transport_server.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/resolve.h"
#include "core/net/tls.h"

struct xg_tserver {
    struct event_base *base;
    char component[64];
    char listen[256];
    int default_port;
    char noun[16];
    char cap_key[32];
    int64_t max_clients, max_output, slow_timeout_ms;
    struct xg_tls_ctx *tls;
    struct xg_tserver_ops ops;
    void *arg;

    struct evconnlistener *lis;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char bound[128];
    uint64_t accepted, refused, dropped_slow, drains_skipped, bytes_out;
    /* lines a client can trigger, one rate limiter per kind (core/util/log.h) */
    struct xg_log_limit lim_refused, lim_slow;
};

enum xg_slow_verdict xg_slow_decide(size_t unsent, int64_t max_output, int64_t slow_timeout_ns,
                                    int64_t *slow_since, int64_t now_ns)
{
    if (unsent <= (size_t)max_output) {
        *slow_since = 0;
        return XG_SLOW_SEND;
    }
    if (!*slow_since) *slow_since = now_ns;
    if (now_ns - *slow_since > slow_timeout_ns) return XG_SLOW_DROP_TIMEOUT;
    return XG_SLOW_SKIP;
}

bool xg_slow_write_ok(size_t unsent, int64_t max_output)
{
    return unsent <= 2 * (size_t)max_output;
}

/* ---- per client ---- */

void xg_tserver_read_cap(struct bufferevent *bev)
{
    for (struct bufferevent *b = bev; b; b = bufferevent_get_underlying(b))
        bufferevent_set_max_single_read(b, XG_TSERVER_READ_CAP);
}

size_t xg_tserver_unsent(struct bufferevent *bev)
{
    size_t n = 0;
    for (struct bufferevent *b = bev; b; b = bufferevent_get_underlying(b))
        n += evbuffer_get_length(bufferevent_get_output(b));
    return n;
}

static void log_drop(struct xg_tserver *ts, const char *peer, size_t unsent, enum xg_slow_verdict v)
{
    if (v == XG_SLOW_DROP_HARD)
        XG_WARN_PEER(&ts->lim_slow, ts->component,
                     "%s %s: %zu bytes unsent (above 2 x max_output_bytes %" PRId64
                     "): dropping the slow %s",
                     ts->noun, peer, unsent, ts->max_output, ts->noun);
    else
        XG_WARN_PEER(&ts->lim_slow, ts->component,
                     "%s %s: %zu bytes unsent for more than %" PRId64
                     " ms (max_output_bytes %" PRId64 "): dropping the slow %s",
                     ts->noun, peer, unsent, ts->slow_timeout_ms, ts->max_output, ts->noun);
    ts->dropped_slow++;
}

enum xg_slow_verdict xg_tserver_egress(struct xg_tserver *ts, struct bufferevent *bev,
                                       const char *peer, int64_t *slow_since, int64_t now_ns)
{
    size_t unsent = xg_tserver_unsent(bev);
    enum xg_slow_verdict v = xg_slow_decide(unsent, ts->max_output,
                                            ts->slow_timeout_ms * XG_NS_PER_MS, slow_since, now_ns);
    if (v == XG_SLOW_SKIP)
        ts->drains_skipped++;
    else if (v != XG_SLOW_SEND)
        log_drop(ts, peer, unsent, v);
    return v;
}

/* A plain socket bufferevent that may write now: its fd, else -1 (TLS, writing disabled). */
static evutil_socket_t plain_fd(struct bufferevent *bev, short what)
{
    if (!bev || bufferevent_get_underlying(bev)) return -1; /* TLS: records go through its BIO */
    if (!(bufferevent_get_enabled(bev) & what)) return -1;
    return bufferevent_getfd(bev);
}

int xg_tserver_write(struct xg_tserver *ts, struct bufferevent *bev, const char *peer,
                     const void *p, size_t n)
{
    size_t unsent = xg_tserver_unsent(bev);
    if (!xg_slow_write_ok(unsent, ts->max_output)) {
        log_drop(ts, peer, unsent, XG_SLOW_DROP_HARD);
        return -ENOBUFS;
    }
    ts->bytes_out += n;
    /* nothing queued before these bytes: straight to the kernel, so that libevent never has to
     * watch the socket for writability (two epoll_ctl calls and a loop iteration per write) */
    evutil_socket_t fd = unsent ? -1 : plain_fd(bev, EV_WRITE);
    if (fd >= 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        /* an error other than a full socket: queue the bytes; libevent's write meets it again
         * and reports it through the event callback, as for any queued write */
        if (k > 0) {
            p = (const uint8_t *)p + k;
            n -= (size_t)k;
        }
        if (!n) return 0;
    }
    if (bufferevent_write(bev, p, n) < 0) return -EIO;
    return 0;
}

int xg_tserver_flush(struct bufferevent *bev)
{
    evutil_socket_t fd = plain_fd(bev, EV_WRITE);
    if (fd < 0) return 0;
    struct evbuffer *out = bufferevent_get_output(bev);
    if (!evbuffer_get_length(out)) return 0;
    /* a socket bufferevent freezes its output's front so that only its write callback drains
     * it (evbuffer_write on it would fail at once); unfreeze it for this one write, as that
     * callback does */
    evbuffer_unfreeze(out, 1);
    int n = evbuffer_write(out, fd);
    int e = errno;
    evbuffer_freeze(out, 1);
    if (n >= 0) return n;
    return e == EAGAIN || e == EWOULDBLOCK || e == EINTR ? 0 : -e;
}

size_t xg_tserver_read_more(struct bufferevent *bev)
{
    evutil_socket_t fd = plain_fd(bev, EV_READ);
    if (fd < 0) return 0;
    struct evbuffer *in = bufferevent_get_input(bev);
    /* libevent 2.1 reads at most 4 KiB per pass (EVBUFFER_MAX_READ): a fuller read just now
     * means more may be waiting */
    size_t len = evbuffer_get_length(in);
    if (len < XG_LIBEVENT_READ || len >= XG_TSERVER_READ_CAP) return 0;
    size_t room = XG_TSERVER_READ_CAP - len;
    /* the bufferevent freezes its input's end so that only its read callback adds to it */
    evbuffer_unfreeze(in, 0);
    struct evbuffer_iovec v[2];
    int nv = evbuffer_reserve_space(in, (ev_ssize_t)room, v, 2);
    ssize_t k = -1;
    if (nv > 0) {
        struct iovec iov[2];
        size_t want = room;
        for (int i = 0; i < nv; i++) {
            iov[i].iov_base = v[i].iov_base;
            iov[i].iov_len = v[i].iov_len < want ? v[i].iov_len : want;
            want -= iov[i].iov_len;
        }
        /* one readv for the rest (no FIONREAD first); 0 (end of stream) or an error is left
         * to libevent's next read, which meets the same state of the socket and reports it
         * through the event callback */
        k = readv(fd, iov, nv);
        size_t left = k > 0 ? (size_t)k : 0;
        int used = 0;
        for (int i = 0; i < nv && left; i++, used++) {
            v[i].iov_len = iov[i].iov_len < left ? iov[i].iov_len : left;
            left -= v[i].iov_len;
        }
        evbuffer_commit_space(in, v, used);
    }
    evbuffer_freeze(in, 0);
    return k > 0 ? (size_t)k : 0;
}

/* ---- the listener ---- */

static void accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    struct xg_tserver *ts = arg;
    (void)lis;
    (void)salen;
    char peer[64];
    xg_net_addr_str(sa, peer, sizeof peer);
    if (ts->ops.clients(ts->arg) >= ts->max_clients) {
        XG_WARN_PEER(&ts->lim_refused, ts->component, "%s %s refused: %s (%" PRId64 ") reached",
                     ts->noun, peer, ts->cap_key, ts->max_clients);
        ts->refused++;
        evutil_closesocket(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct bufferevent *bev = bufferevent_socket_new(ts->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) {
        evutil_closesocket(fd);
        XG_WARN(ts->component, "%s %s: out of memory; closing", ts->noun, peer);
        return;
    }
    struct xg_tls_session *tls = NULL;
    if (ts->tls && !(bev = xg_tls_wrap(ts->tls, bev, NULL, peer, &tls))) {
        XG_WARN(ts->component, "%s %s: out of memory; closing", ts->noun, peer);
        return; /* xg_tls_wrap freed the socket's bufferevent */
    }
    xg_tserver_read_cap(bev);
    ts->accepted++;
    if (ts->ops.accepted(ts->arg, bev, tls, peer) < 0) bufferevent_free(bev);
}

struct xg_tserver *xg_tserver_new(struct event_base *base, const struct xg_tserver_conf *conf,
                                  const struct xg_tserver_ops *ops, void *arg)
{
    struct xg_tserver *ts = calloc(1, sizeof *ts);
    if (!ts) return NULL;
    ts->base = base;
    snprintf(ts->component, sizeof ts->component, "%s", conf->component ? conf->component : "");
    snprintf(ts->listen, sizeof ts->listen, "%s", conf->listen ? conf->listen : "");
    ts->default_port = conf->default_port;
    snprintf(ts->noun, sizeof ts->noun, "%s", conf->noun ? conf->noun : "client");
    snprintf(ts->cap_key, sizeof ts->cap_key, "%s", conf->cap_key ? conf->cap_key : "max_clients");
    ts->max_clients = conf->max_clients;
    ts->max_output = conf->max_output > 0 ? conf->max_output : 1;
    ts->slow_timeout_ms = conf->slow_timeout_ms > 0 ? conf->slow_timeout_ms : 0;
    ts->tls = conf->tls;
    ts->ops = *ops;
    ts->arg = arg;
    return ts;
}

int xg_tserver_start(struct xg_tserver *ts, struct xg_error *err)
{
    struct sockaddr_storage ss;
    socklen_t len;
    /* numeric or /etc/hosts only: no DNS query on the reactor (core/net/resolve.h) */
    int rc = xg_resolve_listen_addr(ts->listen, "0.0.0.0", ts->default_port, &ss, &len, err);
    if (rc < 0) return rc;
    ts->lis = xg_net_listener_new_bind(
        ts->base, accept_cb, ts, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
        64, (struct sockaddr *)&ss, (int)len, ts->component);
    if (!ts->lis) {
        int e = EVUTIL_SOCKET_ERROR();
        return xg_error_set(err, e > 0 ? -e : -EADDRINUSE, "cannot listen on %s: %s", ts->listen,
                            evutil_socket_error_to_string(e));
    }
    ts->addrlen = sizeof ts->addr;
    if (getsockname(evconnlistener_get_fd(ts->lis), (struct sockaddr *)&ts->addr, &ts->addrlen) ==
        0)
        xg_net_addr_str((struct sockaddr *)&ts->addr, ts->bound, sizeof ts->bound);
    else {
        ts->addrlen = 0;
        snprintf(ts->bound, sizeof ts->bound, "%s", ts->listen);
    }
    return 0;
}

void xg_tserver_stop(struct xg_tserver *ts)
{
    if (!ts || !ts->lis) return;
    xg_net_listener_free(ts->lis);
    ts->lis = NULL;
}

void xg_tserver_free(struct xg_tserver *ts)
{
    if (!ts) return;
    xg_tserver_stop(ts);
    free(ts);
}

bool xg_tserver_listening(const struct xg_tserver *ts)
{
    return ts && ts->lis;
}

const char *xg_tserver_bound(const struct xg_tserver *ts)
{
    return ts->bound;
}

const struct sockaddr *xg_tserver_addr(const struct xg_tserver *ts, socklen_t *len)
{
    *len = ts->addrlen;
    return (const struct sockaddr *)&ts->addr;
}

void xg_tserver_count_refused(struct xg_tserver *ts)
{
    ts->refused++;
}

uint64_t xg_tserver_accepted(const struct xg_tserver *ts)
{
    return ts ? ts->accepted : 0;
}

uint64_t xg_tserver_refused(const struct xg_tserver *ts)
{
    return ts ? ts->refused : 0;
}

uint64_t xg_tserver_dropped_slow(const struct xg_tserver *ts)
{
    return ts ? ts->dropped_slow : 0;
}

uint64_t xg_tserver_drains_skipped(const struct xg_tserver *ts)
{
    return ts ? ts->drains_skipped : 0;
}

uint64_t xg_tserver_bytes_out(const struct xg_tserver *ts)
{
    return ts ? ts->bytes_out : 0;
}

void xg_tserver_status(const struct xg_tserver *ts, struct xg_status *st)
{
    xg_status_counter(st, "clients_accepted", (double)xg_tserver_accepted(ts));
    xg_status_counter(st, "clients_refused", (double)xg_tserver_refused(ts));
    xg_status_counter(st, "clients_dropped_slow", (double)xg_tserver_dropped_slow(ts));
    xg_status_counter(st, "drains_skipped", (double)xg_tserver_drains_skipped(ts));
}
