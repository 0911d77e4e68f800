/* Core timers over libevent (timer.h). */
#include "core/net/timer.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

struct xg_timer {
    struct event_base *base;
    struct event *ev; /* one-shot or EV_PERSIST, recreated when the kind changes */
    bool periodic;
    xg_timer_fn fn;
    void *arg;
};

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_timer *t = arg;
    (void)fd;
    (void)what;
    t->fn(t->arg);
}

struct xg_timer *xg_timer_new(struct event_base *base, xg_timer_fn fn, void *arg)
{
    struct xg_timer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->base = base;
    t->fn = fn;
    t->arg = arg;
    if (!(t->ev = event_new(base, -1, 0, timer_cb, t))) {
        free(t);
        return NULL;
    }
    return t;
}

/* Make the event one-shot or persistent; 0 or -ENOMEM. */
static int timer_kind(struct xg_timer *t, bool periodic)
{
    if (t->periodic == periodic) return 0;
    struct event *ev = event_new(t->base, -1, periodic ? EV_PERSIST : 0, timer_cb, t);
    if (!ev) return -ENOMEM;
    event_free(t->ev);
    t->ev = ev;
    t->periodic = periodic;
    return 0;
}

static int timer_add(struct xg_timer *t, uint64_t usec)
{
    struct timeval tv = {(time_t)(usec / 1000000), (suseconds_t)(usec % 1000000)};
    return event_add(t->ev, &tv) ? -EINVAL : 0;
}

int xg_timer_once(struct xg_timer *t, uint64_t usec)
{
    if (t->periodic) event_del(t->ev);
    int rc = timer_kind(t, false);
    return rc ? rc : timer_add(t, usec);
}

int xg_timer_every(struct xg_timer *t, uint64_t usec)
{
    if (!usec) return -EINVAL;
    event_del(t->ev);
    int rc = timer_kind(t, true);
    return rc ? rc : timer_add(t, usec);
}

int xg_timer_yield(struct xg_timer *t)
{
    if (xg_timer_pending(t)) return 0;
    return xg_timer_once(t, 0);
}

void xg_timer_activate(struct xg_timer *t)
{
    if (t) event_active(t->ev, EV_TIMEOUT, 0);
}

bool xg_timer_pending(const struct xg_timer *t)
{
    return t && event_pending(t->ev, EV_TIMEOUT, NULL);
}

void xg_timer_stop(struct xg_timer *t)
{
    if (t) event_del(t->ev);
}

void xg_timer_free(struct xg_timer *t)
{
    if (!t) return;
    event_free(t->ev);
    free(t);
}

struct xg_wake {
    int pipe_r, pipe_w;
    atomic_bool signalled;
    struct event *ev;
    xg_timer_fn fn;
    void *arg;
};

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_wake *w = arg;
    char tmp[64];
    (void)fd;
    (void)what;
    while (read(w->pipe_r, tmp, sizeof tmp) > 0) {}
    /* clear before the callback: what arrives from now on signals again */
    atomic_store(&w->signalled, false);
    w->fn(w->arg);
}

struct xg_wake *xg_wake_new(struct event_base *base, xg_timer_fn fn, void *arg)
{
    struct xg_wake *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC)) {
        int e = errno;
        free(w);
        errno = e;
        return NULL;
    }
    w->pipe_r = fds[0];
    w->pipe_w = fds[1];
    w->fn = fn;
    w->arg = arg;
    atomic_init(&w->signalled, false);
    w->ev = event_new(base, w->pipe_r, EV_READ | EV_PERSIST, wake_cb, w);
    if (!w->ev || event_add(w->ev, NULL)) {
        xg_wake_free(w);
        errno = ENOMEM;
        return NULL;
    }
    return w;
}

void xg_wake_signal(struct xg_wake *w)
{
    if (!atomic_exchange(&w->signalled, true)) {
        char b = 1;
        if (write(w->pipe_w, &b, 1) < 0) {
            /* EAGAIN: a wake-up byte is already waiting, which is all that is needed */
        }
    }
}

void xg_wake_free(struct xg_wake *w)
{
    if (!w) return;
    if (w->ev) event_free(w->ev);
    close(w->pipe_r);
    close(w->pipe_w);
    free(w);
}
