/* Accept back-off for listening sockets (see core/net/net.h "accept back-off"). */
#include <errno.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/log.h"
#include "core/net/net.h"

_Static_assert(XG_NET_LISTEN_CLOSE_ON_FREE == LEV_OPT_CLOSE_ON_FREE &&
                   XG_NET_LISTEN_CLOSE_ON_EXEC == LEV_OPT_CLOSE_ON_EXEC,
               "XG_NET_LISTEN_* are libevent's LEV_OPT_* values");

struct guard {
    struct evconnlistener *lev;
    struct event *resume;
    struct xg_log_limit lim;
    uint64_t backoffs;
    char component[64];
    struct guard *next;
};

/* libevent passes an error callback the listener's accept argument, not one of its own: the
 * guards are found by listener (a handful per process). */
static struct guard *guards;
static uint64_t backoff_total;

static struct guard *find(struct evconnlistener *lev)
{
    for (struct guard *g = guards; g; g = g->next)
        if (g->lev == lev) return g;
    return NULL;
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
    struct guard *g = arg;
    (void)fd;
    (void)what;
    evconnlistener_enable(g->lev);
}

static void error_cb(struct evconnlistener *lev, void *arg)
{
    int e = EVUTIL_SOCKET_ERROR();
    (void)arg;
    struct guard *g = find(lev);
    if (!g) return;
    evconnlistener_disable(lev);
    struct timeval tv = {XG_ACCEPT_BACKOFF_MS / 1000, (XG_ACCEPT_BACKOFF_MS % 1000) * 1000};
    evtimer_add(g->resume, &tv);
    g->backoffs++;
    backoff_total++;
    XG_WARN_PEER(
        &g->lim, g->component,
        "accept() failed: %s: not accepting connections for %d ms (%llu back-offs on "
        "this listener)%s",
        evutil_socket_error_to_string(e), XG_ACCEPT_BACKOFF_MS, (unsigned long long)g->backoffs,
        e == EMFILE || e == ENFILE ? "; the process is at its file descriptor limit (ulimit -n)"
                                   : "");
}

int xg_net_listener_guard(struct evconnlistener *lev, const char *component)
{
    if (find(lev)) return 0;
    struct guard *g = calloc(1, sizeof *g);
    if (!g) return -ENOMEM;
    g->resume = evtimer_new(evconnlistener_get_base(lev), resume_cb, g);
    if (!g->resume) {
        free(g);
        return -ENOMEM;
    }
    g->lev = lev;
    snprintf(g->component, sizeof g->component, "%s", component ? component : "net");
    g->next = guards;
    guards = g;
    evconnlistener_set_error_cb(lev, error_cb);
    return 0;
}

void xg_net_listener_unguard(struct evconnlistener *lev)
{
    for (struct guard **pp = &guards; *pp; pp = &(*pp)->next) {
        struct guard *g = *pp;
        if (g->lev != lev) continue;
        *pp = g->next;
        evconnlistener_set_error_cb(lev, NULL);
        event_free(g->resume);
        free(g);
        return;
    }
}

void xg_net_listener_free(struct evconnlistener *lev)
{
    if (!lev) return;
    xg_net_listener_unguard(lev);
    evconnlistener_free(lev);
}

int xg_net_listener_fd(struct evconnlistener *lev)
{
    return lev ? (int)evconnlistener_get_fd(lev) : -1;
}

struct evconnlistener *
xg_net_listener_new_bind(struct event_base *base,
                         void (*cb)(struct evconnlistener *, int, struct sockaddr *, int, void *),
                         void *arg, unsigned flags, int backlog, const struct sockaddr *sa,
                         int socklen, const char *component)
{
    struct evconnlistener *lev =
        evconnlistener_new_bind(base, cb, arg, flags, backlog, sa, socklen);
    if (!lev) return NULL;
    if (xg_net_listener_guard(lev, component)) {
        evconnlistener_free(lev);
        errno = ENOMEM;
        return NULL;
    }
    return lev;
}

uint64_t xg_net_accept_backoff_total(void)
{
    return backoff_total;
}
