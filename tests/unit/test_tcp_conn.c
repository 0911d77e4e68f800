/* Unit tests for an adapter's TCP connection (core/net/tcp_conn.h) over a socket pair: bytes
 * written arrive through the read callback, the input bound pauses reading, the written callback, a
 * read timeout as XG_TCP_TIMEOUT, EOF when the other end closes, a connect that fails, and the
 * received bytes read with xg_tcp_in_* (a view across two reads, find, copy out, drain) and text
 * queued with xg_tcp_printf. */
#include <arpa/inet.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/net/tcp_conn.h"
#include "tests/unit/test_skip.h"

struct ctx {
    struct event_base *b;
    size_t got;
    int reads, writes;
    short last_event;
};

static void on_read(struct bufferevent *bev, void *arg)
{
    struct ctx *c = arg;
    c->reads++;
    size_t n = xg_tcp_in_len(bev);
    c->got += n;
    xg_tcp_in_drain(bev, n);
    event_base_loopbreak(c->b);
}

static void on_written(struct bufferevent *bev, void *arg)
{
    struct ctx *c = arg;
    (void)bev;
    c->writes++;
    event_base_loopbreak(c->b);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct ctx *c = arg;
    (void)bev;
    c->last_event = what;
    event_base_loopbreak(c->b);
}

/* Two connected connections on one base (a socket pair), not started: *a owns sv[0]. */
static void open_pair(struct event_base *base, struct bufferevent **a, struct bufferevent **b,
                      int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    *a = xg_tcp_wrap(base, sv[0]);
    *b = xg_tcp_wrap(base, sv[1]);
    assert_non_null(*a);
    assert_non_null(*b);
}

static void test_pair(void **state)
{
    (void)state;
    int sv[2];
    struct ctx ca = {.b = event_base_new()}, cb = {.b = ca.b};
    struct bufferevent *a, *b;
    open_pair(ca.b, &a, &b, sv);
    assert_true(xg_tcp_fd(a) == sv[0]);
    struct xg_tcp_conf fa = {.read = on_read, .written = on_written, .event = on_event, .arg = &ca};
    struct xg_tcp_conf fb = {.read = on_read, .event = on_event, .arg = &cb, .read_max = 4096};
    xg_tcp_start(a, &fa);
    xg_tcp_start(b, &fb);
    assert_int_equal(xg_tcp_write(a, "hello", 5), 0);
    assert_true(xg_tcp_unsent(a) == 5);
    while (!ca.writes || !cb.got)
        event_base_dispatch(ca.b);
    assert_int_equal(cb.got, 5);
    assert_true(xg_tcp_unsent(a) == 0);
    /* a read timeout: nothing arrives within 20 ms */
    xg_tcp_read_timeout(b, 20);
    event_base_dispatch(ca.b);
    assert_true(cb.last_event & XG_TCP_TIMEOUT);
    assert_true(cb.last_event & XG_TCP_READING);
    /* paused: what arrives is not read; the other end closing shows as EOF on a */
    xg_tcp_read_timeout(b, 0);
    xg_tcp_pause(b, true);
    int reads = cb.reads;
    xg_tcp_write(a, "x", 1);
    event_base_loop(ca.b, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    assert_int_equal(cb.reads, reads);
    xg_tcp_free(b);
    while (!(ca.last_event & XG_TCP_EOF) && !(ca.last_event & XG_TCP_ERROR))
        event_base_dispatch(ca.b);
    xg_tcp_free(a);
    xg_tcp_free(NULL);
    event_base_free(ca.b);
}

/* keeps what arrived (the test reads it with xg_tcp_in_*) */
static void on_read_keep(struct bufferevent *bev, void *arg)
{
    struct ctx *c = arg;
    c->reads++;
    c->got = xg_tcp_in_len(bev);
    event_base_loopbreak(c->b);
}

static void test_byte_queues(void **state)
{
    (void)state;
    int sv[2];
    struct ctx ca = {.b = event_base_new()}, cb = {.b = ca.b};
    struct bufferevent *a, *b;
    open_pair(ca.b, &a, &b, sv);
    struct xg_tcp_conf fa = {.read = on_read, .event = on_event, .arg = &ca};
    struct xg_tcp_conf fb = {.read = on_read_keep, .event = on_event, .arg = &cb};
    xg_tcp_start(a, &fa);
    xg_tcp_start(b, &fb);
    assert_null(xg_tcp_in_pullup(b, 1)); /* nothing yet */
    size_t n = 99;
    assert_null(xg_tcp_in_peek(b, &n));
    assert_int_equal(n, 0);
    assert_int_equal(xg_tcp_in_find(b, "x", 1), -1);
    /* two reads: the head's blank line "\r\n\r\n" is split across them */
    static const char p1[] = "GET / HTTP/1.1\r\nHost: x\r\n", p2[] = "\r\nbody";
    const size_t n1 = sizeof p1 - 1, n2 = sizeof p2 - 1;
    assert_int_equal(xg_tcp_printf(a, "GET / HTTP/%d.%d\r\nHost: %s\r\n", 1, 1, "x"), 0);
    while (cb.got < n1)
        event_base_dispatch(ca.b);
    assert_int_equal(xg_tcp_write(a, p2, n2), 0);
    while (cb.got < n1 + n2)
        event_base_dispatch(ca.b);
    assert_int_equal(xg_tcp_in_len(b), n1 + n2);
    const uint8_t *v = xg_tcp_in_peek(b, &n); /* the first run, as buffered */
    assert_non_null(v);
    assert_true(n >= 1 && n <= n1 + n2);
    assert_memory_equal(v, p1, n < n1 ? n : n1);
    assert_int_equal(xg_tcp_in_find(b, "\r\n\r\n", 4), (long)n1 - 2);
    assert_int_equal(xg_tcp_in_find(b, "nope", 4), -1);
    assert_null(xg_tcp_in_pullup(b, n1 + n2 + 1)); /* more than is there */
    v = xg_tcp_in_pullup(b, n1 + n2);              /* the whole input, contiguous */
    assert_non_null(v);
    assert_memory_equal(v, p1, n1);
    assert_memory_equal(v + n1, p2, n2);
    char head[64];
    assert_int_equal(xg_tcp_in_read(b, head, n1 + 2), n1 + 2); /* copied out and consumed */
    assert_memory_equal(head, p1, n1);
    assert_int_equal(xg_tcp_in_len(b), n2 - 2);
    xg_tcp_in_drain(b, 1);
    v = xg_tcp_in_pullup(b, 3);
    assert_non_null(v);
    assert_memory_equal(v, "ody", 3);
    assert_int_equal(xg_tcp_in_read(b, head, sizeof head), 3); /* no more than is there */
    assert_int_equal(xg_tcp_in_len(b), 0);
    xg_tcp_in_drain(b, 10); /* draining more than is there empties it */
    assert_int_equal(xg_tcp_in_len(b), 0);
    xg_tcp_free(a);
    xg_tcp_free(b);
    event_base_free(ca.b);
}

static void test_connect_refused(void **state)
{
    (void)state;
    /* a port nobody listens on: listen, note it, close */
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t tl = sizeof to;
    assert_int_equal(bind(l, (struct sockaddr *)&to, sizeof to), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&to, &tl), 0);
    close(l);
    struct ctx c = {.b = event_base_new()};
    struct bufferevent *bev = xg_tcp_new(c.b);
    assert_non_null(bev);
    assert_int_equal(xg_tcp_fd(bev), -1);
    struct xg_tcp_conf f = {.read = on_read, .event = on_event, .arg = &c};
    xg_tcp_start(bev, &f);
    assert_int_equal(xg_tcp_connect(bev, (struct sockaddr *)&to, sizeof to), 0);
    event_base_dispatch(c.b);
    assert_true(c.last_event & XG_TCP_ERROR);
    xg_tcp_free(bev);
    event_base_free(c.b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair),
        cmocka_unit_test(test_byte_queues),
        cmocka_unit_test(test_connect_refused),
    };
    return xg_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
