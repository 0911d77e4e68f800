/* An adapter's TCP connection over a libevent bufferevent (tcp_conn.h). */
#include "core/net/tcp_conn.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
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

struct evbuffer *xg_tcp_input(struct bufferevent *bev)
{
    return bufferevent_get_input(bev);
}

struct evbuffer *xg_tcp_output(struct bufferevent *bev)
{
    return bufferevent_get_output(bev);
}

size_t xg_tcp_unsent(struct bufferevent *bev)
{
    return evbuffer_get_length(bufferevent_get_output(bev));
}

int xg_tcp_write(struct bufferevent *bev, const void *p, size_t n)
{
    return bufferevent_write(bev, p, n) ? -1 : 0;
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
