/* Unit tests for the core UDP endpoint's reading and single sends (core/net/udp_endpoint.h): the
 * budget of a wake-up in datagrams, bytes and messages (the rest on the next pass), a shared
 * budget, MSG_TRUNC lengths, a callback ending the wake-up (closing the endpoint), the end and
 * error hooks, one-off sends, the local-address questions and ICMP errors (IP_RECVERR). */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/net/net.h"
#include "core/net/udp_endpoint.h"
#include "tests/unit/test_skip.h"

struct rx_ctx {
    struct xg_udp_rx rx;
    int calls, done, errs, last_err, msgs_each, close_at;
    size_t last_n;
    uint8_t first[4];
};

static int on_dgram(void *arg, uint8_t *p, size_t n, const struct sockaddr *from, socklen_t fl)
{
    struct rx_ctx *c = arg;
    assert_int_equal(from->sa_family, AF_INET);
    assert_int_equal(fl, sizeof(struct sockaddr_in));
    c->calls++;
    c->last_n = n;
    memcpy(c->first, p, sizeof c->first);
    if (c->close_at && c->calls == c->close_at) {
        xg_udp_rx_close(&c->rx);
        return -1;
    }
    return c->msgs_each;
}

static void on_done(void *arg)
{
    ((struct rx_ctx *)arg)->done++;
}

static void on_err(void *arg, int fd, int err)
{
    struct rx_ctx *c = arg;
    assert_true(fd >= 0);
    c->errs++;
    c->last_err = err;
}

/* A socket on 127.0.0.1 (port picked) read by c on b; its address in *to. */
static void start(struct rx_ctx *c, struct event_base *b, size_t cap, struct sockaddr_in *to,
                  struct xg_ingress_budget *shared)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct xg_error err = {0};
    int fd = xg_udp_bind_local((struct sockaddr *)&a, sizeof a, &err);
    assert_true(fd >= 0);
    socklen_t l = sizeof *to;
    assert_int_equal(getsockname(fd, (struct sockaddr *)to, &l), 0);
    c->rx.on_done = on_done;
    c->rx.on_err = on_err;
    assert_int_equal(xg_udp_rx_start(&c->rx, b, fd, cap, on_dgram, c, shared), 0);
}

/* One pass of the loop: the ready sockets' callbacks run once each. */
static void pass(struct event_base *b)
{
    event_base_loop(b, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

static void send_n(const struct sockaddr_in *to, int n, size_t len)
{
    uint8_t buf[2048];
    for (int i = 0; i < n; i++) {
        memset(buf, 'a' + i, len);
        assert_int_equal(xg_udp_send_once(buf, len, (const struct sockaddr *)to, sizeof *to), 0);
    }
}

static void test_budget_datagrams(void **state)
{
    (void)state;
    struct event_base *b = event_base_new();
    struct rx_ctx c = {0};
    struct sockaddr_in to;
    start(&c, b, 2048, &to, NULL);
    c.rx.own.max_datagrams = 4;
    send_n(&to, 10, 10);
    pass(b);
    assert_int_equal(c.calls, 4); /* the budget: 4 datagrams, the rest waits */
    assert_int_equal(c.done, 1);
    assert_int_equal(c.rx.own.yields, 1);
    pass(b);
    assert_int_equal(c.calls, 8);
    pass(b);
    assert_int_equal(c.calls, 10);
    assert_int_equal(c.errs, 1); /* the queue read empty: EAGAIN ended that wake-up */
    assert_true(c.last_err == EAGAIN || c.last_err == EWOULDBLOCK);
    assert_int_equal(c.rx.own.wakes, 3);
    assert_int_equal(c.rx.datagrams, 10);
    assert_int_equal(c.rx.bytes, 100);
    xg_udp_rx_close(&c.rx);
    assert_int_equal(c.rx.fd, -1);
    xg_udp_rx_close(&c.rx); /* twice: nothing */
    event_base_free(b);
}

static void test_budget_bytes_and_messages(void **state)
{
    (void)state;
    struct event_base *b = event_base_new();
    struct rx_ctx c = {0};
    struct sockaddr_in to;
    start(&c, b, 2048, &to, NULL);
    c.rx.own.max_bytes = 100;
    send_n(&to, 5, 60);
    pass(b);
    assert_int_equal(c.calls, 2); /* 60 < 100: one more; 120 >= 100: the rest waits */
    pass(b);
    assert_int_equal(c.calls, 4);
    pass(b);
    assert_int_equal(c.calls, 5);
    /* messages: 300 each, 512 a wake-up by default -> two datagrams a wake-up */
    c.rx.own.max_bytes = 0;
    c.msgs_each = 300;
    send_n(&to, 3, 10);
    pass(b);
    assert_int_equal(c.calls, 7);
    pass(b);
    assert_int_equal(c.calls, 8);
    xg_udp_rx_close(&c.rx);
    event_base_free(b);
}

static void test_shared_budget(void **state)
{
    (void)state;
    struct event_base *b = event_base_new();
    struct xg_ingress_budget shared = {.max_datagrams = 2};
    struct rx_ctx c1 = {0}, c2 = {0};
    struct sockaddr_in t1, t2;
    start(&c1, b, 2048, &t1, &shared);
    start(&c2, b, 2048, &t2, &shared);
    send_n(&t1, 3, 10);
    send_n(&t2, 3, 10);
    pass(b);
    assert_int_equal(c1.calls, 2);
    assert_int_equal(c2.calls, 2);
    assert_int_equal(shared.wakes, 2); /* both sockets' wake-ups counted in the one budget */
    assert_int_equal(shared.yields, 2);
    xg_udp_rx_close(&c1.rx);
    xg_udp_rx_close(&c2.rx);
    event_base_free(b);
}

static void test_trunc_and_close_in_callback(void **state)
{
    (void)state;
    struct event_base *b = event_base_new();
    struct rx_ctx c = {.close_at = 2};
    struct sockaddr_in to;
    start(&c, b, 16, &to, NULL);
    c.rx.flags = MSG_TRUNC;
    send_n(&to, 3, 100);
    pass(b);
    /* the first datagram: its full length, its first bytes; the second closes: no third, no
     * end hook (the endpoint is not touched again) */
    assert_int_equal(c.calls, 2);
    assert_int_equal(c.last_n, 100);
    assert_memory_equal(c.first, "bbbb", 4);
    assert_int_equal(c.done, 0);
    assert_int_equal(c.rx.fd, -1);
    pass(b);
    assert_int_equal(c.calls, 2);
    event_base_free(b);
}

static void test_send_and_addresses(void **state)
{
    (void)state;
    struct event_base *b = event_base_new();
    struct rx_ctx c = {0};
    struct sockaddr_in to;
    start(&c, b, 2048, &to, NULL);
    assert_int_equal(xg_udp_send(c.rx.fd, "ping", 4, (struct sockaddr *)&to, sizeof to, true), 0);
    pass(b);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.last_n, 4);
    assert_memory_equal(c.first, "ping", 4);
    struct sockaddr_storage local;
    socklen_t ll = sizeof local;
    assert_int_equal(
        xg_udp_route_local((struct sockaddr *)&to, sizeof to, (struct sockaddr *)&local, &ll), 0);
    assert_int_equal(((struct sockaddr_in *)&local)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    assert_true(xg_udp_addr_is_local((struct sockaddr *)&to, sizeof to));
    struct sockaddr_in doc = {.sin_family = AF_INET}; /* TEST-NET-1: nobody's address here */
    inet_pton(AF_INET, "192.0.2.1", &doc.sin_addr);
    assert_false(xg_udp_addr_is_local((struct sockaddr *)&doc, sizeof doc));
    xg_udp_rx_close(&c.rx);
    event_base_free(b);
}

static void count_icmp(void *user, const struct sockaddr *dst, socklen_t len, int err)
{
    (void)len;
    assert_int_equal(err, ECONNREFUSED);
    assert_int_equal(dst->sa_family, AF_INET);
    (*(int *)user)++;
}

static void test_icmp(void **state)
{
    (void)state;
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct xg_error err = {0};
    int fd = xg_udp_bind_local((struct sockaddr *)&a, sizeof a, &err);
    assert_true(fd >= 0);
    assert_int_equal(xg_udp_icmp_enable(fd, AF_INET), 0);
    /* a port nobody listens on: bind one, note it, close it */
    int gone = xg_udp_bind_local((struct sockaddr *)&a, sizeof a, &err);
    struct sockaddr_in to;
    socklen_t tl = sizeof to;
    assert_int_equal(getsockname(gone, (struct sockaddr *)&to, &tl), 0);
    close(gone);
    assert_int_equal(xg_udp_send(fd, "x", 1, (struct sockaddr *)&to, sizeof to, false), 0);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 2000), 1); /* the error makes the socket readable */
    int n = 0;
    assert_int_equal(xg_udp_icmp_drain(fd, count_icmp, &n), 1);
    assert_int_equal(n, 1);
    assert_int_equal(xg_udp_icmp_drain(fd, count_icmp, &n), 0); /* the queue is empty now */
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_datagrams),
        cmocka_unit_test(test_budget_bytes_and_messages),
        cmocka_unit_test(test_shared_budget),
        cmocka_unit_test(test_trunc_and_close_in_callback),
        cmocka_unit_test(test_send_and_addresses),
        cmocka_unit_test(test_icmp),
    };
    return xg_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
