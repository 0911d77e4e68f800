/* Unit tests for core's timers and cross-thread wake-up (core/net/timer.h): one-shot, periodic,
 * zero-timeout yield (once however often asked), activation in the current pass, re-arming,
 * stopping and freeing from the callback, and a wake-up signalled from another thread. */
#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/clock/clock.h"
#include "core/net/timer.h"
#include "tests/unit/test_skip.h"

struct ctx {
    struct xg_timer *t;
    int calls, stop_at;
    bool free_self;
};

static void count_cb(void *arg)
{
    struct ctx *c = arg;
    c->calls++;
    if (c->free_self) {
        xg_timer_free(c->t);
        c->t = NULL;
    } else if (c->stop_at && c->calls >= c->stop_at) {
        xg_timer_stop(c->t);
    }
}

/* A base as the gateway makes it (gateway/gateway.c, with libevent's precise timer; without it
 * libevent may read a coarse clock), so the timing checked is the gateway's. */
static struct event_base *precise_base(void)
{
    struct event_config *ec = event_config_new();
    assert_non_null(ec);
    event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
    struct event_base *b = event_base_new_with_config(ec);
    event_config_free(ec);
    assert_non_null(b);
    return b;
}

static void test_once(void **state)
{
    (void)state;
    struct event_base *b = precise_base();
    struct ctx c = {0};
    c.t = xg_timer_new(b, count_cb, &c);
    assert_non_null(c.t);
    assert_false(xg_timer_pending(c.t));
    int64_t t0 = xg_clock_mono_ns(); /* before arming: the 2 ms count from there at the latest */
    assert_int_equal(xg_timer_once(c.t, 2000), 0);
    assert_true(xg_timer_pending(c.t));
    event_base_dispatch(b); /* returns when nothing is pending */
    assert_int_equal(c.calls, 1);
    assert_true(xg_clock_mono_ns() - t0 >= 2 * XG_NS_PER_MS);
    assert_false(xg_timer_pending(c.t));
    /* re-arming replaces the deadline: 10 s, then 0 -> fires once, now */
    assert_int_equal(xg_timer_once(c.t, 10 * 1000000), 0);
    assert_int_equal(xg_timer_once(c.t, 0), 0);
    t0 = xg_clock_mono_ns();
    event_base_dispatch(b);
    assert_int_equal(c.calls, 2);
    assert_true(xg_clock_mono_ns() - t0 < 5 * XG_NS_PER_S);
    xg_timer_free(c.t);
    event_base_free(b);
}

static void test_every_and_stop(void **state)
{
    (void)state;
    struct event_base *b = precise_base();
    struct ctx c = {.stop_at = 3};
    c.t = xg_timer_new(b, count_cb, &c);
    assert_int_equal(xg_timer_every(c.t, 0), -EINVAL);
    assert_int_equal(xg_timer_every(c.t, 1000), 0);
    event_base_dispatch(b); /* the callback stops it at the third firing */
    assert_int_equal(c.calls, 3);
    assert_false(xg_timer_pending(c.t));
    /* periodic, then one-shot: the kind follows the last arming */
    assert_int_equal(xg_timer_every(c.t, 1000), 0);
    assert_int_equal(xg_timer_once(c.t, 1000), 0);
    c.stop_at = 0;
    event_base_dispatch(b);
    assert_int_equal(c.calls, 4);
    xg_timer_free(c.t);
    xg_timer_stop(NULL);
    xg_timer_free(NULL);
    event_base_free(b);
}

static void test_yield_once(void **state)
{
    (void)state;
    struct event_base *b = precise_base();
    struct ctx c = {0};
    c.t = xg_timer_new(b, count_cb, &c);
    assert_int_equal(xg_timer_yield(c.t), 0);
    assert_int_equal(xg_timer_yield(c.t), 0); /* already pending: nothing more */
    assert_true(xg_timer_pending(c.t));
    event_base_dispatch(b);
    assert_int_equal(c.calls, 1);
    /* activation: runs in this pass, once */
    xg_timer_activate(c.t);
    event_base_loop(b, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    assert_int_equal(c.calls, 2);
    xg_timer_activate(NULL);
    xg_timer_free(c.t);
    event_base_free(b);
}

static void test_free_from_callback(void **state)
{
    (void)state;
    struct event_base *b = precise_base();
    struct ctx c = {.free_self = true};
    c.t = xg_timer_new(b, count_cb, &c);
    assert_int_equal(xg_timer_every(c.t, 1000), 0);
    event_base_dispatch(b); /* freed in its first firing: nothing pending, no second one */
    assert_int_equal(c.calls, 1);
    assert_null(c.t);
    event_base_free(b);
}

struct wake_ctx {
    struct xg_wake *w;
    int calls;
    struct event_base *b;
};

static void wake_cb(void *arg)
{
    struct wake_ctx *w = arg;
    w->calls++;
    event_base_loopbreak(w->b);
}

static void *signal_thread(void *arg)
{
    struct wake_ctx *w = arg;
    for (int i = 0; i < 100; i++)
        xg_wake_signal(w->w);
    return NULL;
}

static void test_wake(void **state)
{
    (void)state;
    struct wake_ctx w = {.b = precise_base()};
    w.w = xg_wake_new(w.b, wake_cb, &w);
    assert_non_null(w.w);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, signal_thread, &w), 0);
    pthread_join(th, NULL);
    event_base_dispatch(w.b); /* 100 signals before the loop ran: one call */
    assert_int_equal(w.calls, 1);
    event_base_loop(w.b, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    assert_int_equal(w.calls, 1); /* nothing left over */
    xg_wake_signal(w.w);          /* the state was cleared: a new signal runs it again */
    event_base_dispatch(w.b);
    assert_int_equal(w.calls, 2);
    xg_wake_free(w.w);
    xg_wake_free(NULL);
    event_base_free(w.b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_once),       cmocka_unit_test(test_every_and_stop),
        cmocka_unit_test(test_yield_once), cmocka_unit_test(test_free_from_callback),
        cmocka_unit_test(test_wake),
    };
    return xg_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
