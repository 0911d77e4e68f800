/* An adapter's TCP connection over a libevent bufferevent (tcp_conn.h). */
#include "core/net/tcp_conn.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdarg.h>
#include <unistd.h>

void xg_tcp_start(struct bufferevent *bev, const struct xg_tcp_conf *c)
{
    bufferevent_setcb(bev, c->read, c->written, c->event, c->arg);
    if (c->read_max) bufferevent_setwatermark(bev, EV_READ, 0, c->read_max);
    bufferevent_enable(bev, c->read_only ? EV_READ : EV_READ | EV_WRITE);
}

struct bufferevent *xg_tcp_wrap(struct event_base *base, int fd)
{
    return bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
}

struct bufferevent *xg_tcp_new(struct event_base *base)
{
    return bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
}

int xg_tcp_connect(struct bufferevent *bev, const struct sockaddr *to, socklen_t len)
{
    return bufferevent_socket_connect(bev, to, (int)len) < 0 ? -1 : 0;
}

_Static_assert(XG_TCP_READING == BEV_EVENT_READING && XG_TCP_WRITING == BEV_EVENT_WRITING &&
                   XG_TCP_EOF == BEV_EVENT_EOF && XG_TCP_ERROR == BEV_EVENT_ERROR &&
                   XG_TCP_TIMEOUT == BEV_EVENT_TIMEOUT && XG_TCP_CONNECTED == BEV_EVENT_CONNECTED,
               "XG_TCP_* are libevent's BEV_EVENT_* values");

size_t xg_tcp_in_len(struct bufferevent *bev)
{
    return evbuffer_get_length(bufferevent_get_input(bev));
}

const uint8_t *xg_tcp_in_pullup(struct bufferevent *bev, size_t n)
{
    struct evbuffer *in = bufferevent_get_input(bev);
    if (n > evbuffer_get_length(in) || n > (size_t)EV_SSIZE_MAX) return NULL;
    return evbuffer_pullup(in, (ev_ssize_t)n);
}

const uint8_t *xg_tcp_in_peek(struct bufferevent *bev, size_t *n)
{
    struct evbuffer_iovec v;
    if (evbuffer_peek(bufferevent_get_input(bev), -1, NULL, &v, 1) < 1 || !v.iov_len) {
        *n = 0;
        return NULL;
    }
    *n = v.iov_len;
    return v.iov_base;
}

void xg_tcp_in_drain(struct bufferevent *bev, size_t n)
{
    evbuffer_drain(bufferevent_get_input(bev), n);
}

size_t xg_tcp_in_read(struct bufferevent *bev, void *buf, size_t n)
{
    int got = evbuffer_remove(bufferevent_get_input(bev), buf, n);
    return got > 0 ? (size_t)got : 0;
}

long xg_tcp_in_find(struct bufferevent *bev, const void *needle, size_t len)
{
    struct evbuffer_ptr at = evbuffer_search(bufferevent_get_input(bev), needle, len, NULL);
    return at.pos < 0 ? -1 : (long)at.pos;
}

size_t xg_tcp_unsent(struct bufferevent *bev)
{
    return evbuffer_get_length(bufferevent_get_output(bev));
}

int xg_tcp_write(struct bufferevent *bev, const void *p, size_t n)
{
    return bufferevent_write(bev, p, n) ? -1 : 0;
}

int xg_tcp_printf(struct bufferevent *bev, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = evbuffer_add_vprintf(bufferevent_get_output(bev), fmt, ap);
    va_end(ap);
    return n < 0 ? -1 : 0;
}

void xg_tcp_pause(struct bufferevent *bev, bool writing)
{
    bufferevent_disable(bev, writing ? EV_READ | EV_WRITE : EV_READ);
}

void xg_tcp_read_timeout(struct bufferevent *bev, int64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    bufferevent_set_timeouts(bev, ms > 0 ? &tv : NULL, NULL);
}

int xg_tcp_fd(struct bufferevent *bev)
{
    return (int)bufferevent_getfd(bev);
}

void xg_tcp_free(struct bufferevent *bev)
{
    if (bev) bufferevent_free(bev);
}

void xg_tcp_close_fd(int fd)
{
    if (fd >= 0) close(fd);
}
