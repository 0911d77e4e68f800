/* Unit tests for the slow-client policy of core/net/transport_server.h (xg_slow_decide and
 * xg_slow_write_ok, pure): send at or below max_output_bytes; above it skip, from the first pass
 * seen above, and drop once it has stayed above for more than slow_timeout_ms; recovering below
 * the bound resets the clock; the hard bound at a write is 2 x max_output_bytes. The adapters'
 * behaviour on sockets is tested in tests/integration/test_slow_clients.py.
 *
 * xg_tserver_flush on a socketpair, without ever running the event loop before the check: the
 * bytes a socket bufferevent queued are readable by the peer right after the flush (and not
 * before it: bufferevent_write only queues, and a bare evbuffer_write fails on the frozen
 * output); what the socket does not take stays queued and counted as unsent, and libevent
 * writes it later in order; a TLS-style filter bufferevent and a write-disabled one are left
 * alone; a failed write leaves the bytes queued and the error to the event callback.
 *
 * xg_tserver_write on a socketpair: with nothing queued the bytes reach the peer at once and
 * libevent is never asked to watch the socket for writability; behind queued bytes, or what the
 * socket does not take, they are queued in order. xg_tserver_read_more: after libevent's 4 KiB
 * read, the rest of a 13 KB frame is in the input in the same pass, up to
 * XG_TSERVER_READ_CAP; a short read does not read on. */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/bufferevent_struct.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/net/transport_server.h"

#define MS INT64_C(1000000)
#define MAX 1000

static void test_send_at_or_below(void **state)
{
    (void)state;
    int64_t since = 0;
    assert_int_equal(xg_slow_decide(0, MAX, 2000 * MS, &since, 5 * MS), XG_SLOW_SEND);
    assert_int_equal(xg_slow_decide(MAX, MAX, 2000 * MS, &since, 6 * MS), XG_SLOW_SEND);
    assert_int_equal(since, 0);
}

static void test_skip_then_drop_after_timeout(void **state)
{
    (void)state;
    int64_t since = 0, t0 = 100 * MS;
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t0), XG_SLOW_SKIP);
    assert_int_equal(since, t0); /* the clock starts at the first pass seen above */
    assert_int_equal(xg_slow_decide(5 * MAX / 4, MAX, 2000 * MS, &since, t0 + 1000 * MS),
                     XG_SLOW_SKIP);
    /* exactly slow_timeout_ms above is still a skip; more than that is a drop */
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t0 + 2000 * MS), XG_SLOW_SKIP);
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t0 + 2000 * MS + 1),
                     XG_SLOW_DROP_TIMEOUT);
    assert_int_equal(since, t0);
}

static void test_recovery_resets_the_clock(void **state)
{
    (void)state;
    int64_t since = 0, t0 = 100 * MS;
    assert_int_equal(xg_slow_decide(2 * MAX, MAX, 2000 * MS, &since, t0), XG_SLOW_SKIP);
    assert_int_equal(xg_slow_decide(MAX / 2, MAX, 2000 * MS, &since, t0 + 1500 * MS), XG_SLOW_SEND);
    assert_int_equal(since, 0);
    /* above again: a new clock, not the old one (no drop 500 ms later) */
    int64_t t1 = t0 + 1600 * MS;
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t1), XG_SLOW_SKIP);
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 2000 * MS, &since, t1 + 500 * MS), XG_SLOW_SKIP);
    assert_int_equal(since, t1);
}

static void test_zero_timeout(void **state)
{
    (void)state;
    /* slow_timeout_ms 0: the first pass above skips, any later pass still above drops */
    int64_t since = 0;
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 0, &since, 10 * MS), XG_SLOW_SKIP);
    assert_int_equal(xg_slow_decide(MAX + 1, MAX, 0, &since, 10 * MS + 1), XG_SLOW_DROP_TIMEOUT);
}

static void test_hard_bound_at_write(void **state)
{
    (void)state;
    assert_true(xg_slow_write_ok(0, MAX));
    assert_true(xg_slow_write_ok(2 * MAX, MAX));
    assert_false(xg_slow_write_ok(2 * MAX + 1, MAX));
}

/* ---- xg_tserver_flush ---- */

struct pair {
    struct event_base *base;
    struct bufferevent *bev; /* over sv[0] (closed with it) */
    int peer;                /* sv[1] */
};

static void pair_open(struct pair *p)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    p->base = event_base_new();
    assert_non_null(p->base);
    p->bev = bufferevent_socket_new(p->base, sv[0], BEV_OPT_CLOSE_ON_FREE);
    assert_non_null(p->bev);
    assert_int_equal(bufferevent_enable(p->bev, EV_READ | EV_WRITE), 0);
    p->peer = sv[1];
}

static void pair_close(struct pair *p)
{
    if (p->bev) bufferevent_free(p->bev);
    if (p->peer >= 0) close(p->peer);
    event_base_free(p->base);
}

/* Nothing readable on the peer now (no loop iteration runs). */
static void assert_nothing_sent(int peer)
{
    char b[16];
    errno = 0;
    assert_int_equal(recv(peer, b, sizeof b, MSG_DONTWAIT), -1);
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
}

/* A 4 KiB send buffer on the bufferevent's socket, so that a large write only partly fits, and
 * n bytes of a pattern (byte i = i * mul + i / div) to write. */
static void fill_for_a_small_socket(struct pair *p, unsigned char *data, size_t n, unsigned mul,
                                    unsigned div)
{
    int small = 4096;
    setsockopt(bufferevent_getfd(p->bev), SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    for (size_t i = 0; i < n; i++)
        data[i] = (unsigned char)(i * mul + i / div);
}

/* The peer reads exactly `want` (n bytes) while libevent's loop writes what is queued. */
static void assert_peer_gets(struct pair *p, const unsigned char *want, unsigned char *got,
                             size_t n)
{
    size_t have = 0;
    for (int i = 0; i < 100000 && have < n; i++) {
        ssize_t r = recv(p->peer, got + have, n - have, MSG_DONTWAIT);
        if (r > 0) have += (size_t)r;
        event_base_loop(p->base, EVLOOP_NONBLOCK);
    }
    assert_int_equal(have, n);
    assert_memory_equal(got, want, n);
}

static void test_flush_reaches_the_kernel_without_the_loop(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p);
    assert_int_equal(xg_tserver_flush(p.bev), 0); /* nothing queued */
    assert_int_equal(bufferevent_write(p.bev, "pose-frame-1", 12), 0);
    assert_nothing_sent(p.peer); /* bufferevent_write only queues */
    /* what the adapters did before: evbuffer_write on the socket bufferevent's output fails at
     * once (its front is frozen) and the bytes waited for the next loop iteration */
    struct evbuffer *out = bufferevent_get_output(p.bev);
    assert_int_equal(evbuffer_write(out, bufferevent_getfd(p.bev)), -1);
    assert_nothing_sent(p.peer);
    assert_int_equal(xg_tserver_unsent(p.bev), 12);

    assert_int_equal(xg_tserver_flush(p.bev), 12);
    assert_int_equal(xg_tserver_unsent(p.bev), 0);
    char b[32];
    assert_int_equal(recv(p.peer, b, sizeof b, MSG_DONTWAIT), 12);
    assert_memory_equal(b, "pose-frame-1", 12);
    /* the buffer is frozen again for everyone but libevent: a second write queues as before */
    assert_int_equal(bufferevent_write(p.bev, "2", 1), 0);
    assert_int_equal(evbuffer_write(out, bufferevent_getfd(p.bev)), -1);
    assert_int_equal(xg_tserver_flush(p.bev), 1);
    assert_int_equal(recv(p.peer, b, sizeof b, MSG_DONTWAIT), 1);
    assert_int_equal(b[0], '2');
    pair_close(&p);
}

static void test_flush_partial_keeps_the_rest_queued_in_order(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p);
    enum { TOTAL = 1 << 20 };
    static unsigned char data[TOTAL], got[TOTAL];
    fill_for_a_small_socket(&p, data, TOTAL, 7, 251);
    assert_int_equal(bufferevent_write(p.bev, data, TOTAL), 0);
    int n = xg_tserver_flush(p.bev);
    assert_true(n > 0 && n < TOTAL); /* the socket took part of it */
    /* the slow-client measure is exactly what the socket did not take */
    assert_int_equal(xg_tserver_unsent(p.bev), (size_t)(TOTAL - n));
    assert_int_equal(xg_tserver_flush(p.bev), 0); /* socket full: EAGAIN is not an error */
    assert_int_equal(xg_tserver_unsent(p.bev), (size_t)(TOTAL - n));
    /* libevent's write callback sends the rest, in order, as the peer reads */
    assert_peer_gets(&p, data, got, TOTAL);
    assert_int_equal(xg_tserver_unsent(p.bev), 0);
    pair_close(&p);
}

static enum bufferevent_filter_result hold_output(struct evbuffer *src, struct evbuffer *dst,
                                                  ev_ssize_t lim, enum bufferevent_flush_mode mode,
                                                  void *ctx)
{
    (void)src;
    (void)dst;
    (void)lim;
    (void)mode;
    (void)ctx;
    return BEV_NEED_MORE; /* like TLS before its handshake: plaintext waits in the filter */
}

static void test_flush_leaves_a_filter_alone(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p);
    struct bufferevent *f =
        bufferevent_filter_new(p.bev, NULL, hold_output, BEV_OPT_CLOSE_ON_FREE, NULL, NULL);
    assert_non_null(f);
    p.bev = NULL; /* freed with the filter */
    assert_int_equal(bufferevent_enable(f, EV_READ | EV_WRITE), 0);
    /* a filter reports the socket's fd: writing its output there would send plaintext */
    assert_true(bufferevent_getfd(f) >= 0);
    assert_int_equal(bufferevent_write(f, "plaintext", 9), 0);
    assert_int_equal(xg_tserver_flush(f), 0);
    assert_nothing_sent(p.peer);
    assert_int_equal(xg_tserver_unsent(f), 9);
    bufferevent_free(f);
    pair_close(&p);
}

static void test_flush_respects_disabled_writing(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p);
    assert_int_equal(bufferevent_write(p.bev, "abc", 3), 0);
    assert_int_equal(bufferevent_disable(p.bev, EV_WRITE), 0);
    assert_int_equal(xg_tserver_flush(p.bev), 0);
    assert_nothing_sent(p.peer);
    assert_int_equal(xg_tserver_unsent(p.bev), 3);
    pair_close(&p);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    *(short *)arg |= what;
}

static void test_flush_error_is_left_to_the_event_path(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN); /* as the daemon does */
    struct pair p;
    pair_open(&p);
    short what = 0;
    bufferevent_setcb(p.bev, NULL, NULL, on_event, &what);
    close(p.peer);
    p.peer = -1;
    assert_int_equal(bufferevent_write(p.bev, "lost", 4), 0);
    int rc = xg_tserver_flush(p.bev);
    assert_true(rc == -EPIPE || rc == -ECONNRESET);
    assert_int_equal(xg_tserver_unsent(p.bev), 4); /* nothing drained */
    assert_int_equal(what, 0);                     /* no callback from inside the flush */
    for (int i = 0; i < 1000 && !what; i++)
        event_base_loop(p.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    assert_true(what & BEV_EVENT_ERROR);
    assert_true(what & BEV_EVENT_WRITING);
    pair_close(&p);
}

/* ---- xg_tserver_write ---- */

static int no_clients(void *arg)
{
    (void)arg;
    return 0;
}

static struct xg_tserver *new_ts(struct event_base *base, int64_t max_output)
{
    static const struct xg_tserver_ops ops = {.clients = no_clients};
    struct xg_tserver_conf conf = {.component = "test",
                                   .listen = "127.0.0.1:0",
                                   .max_clients = 4,
                                   .max_output = max_output,
                                   .slow_timeout_ms = 1000};
    struct xg_tserver *ts = xg_tserver_new(base, &conf, &ops, NULL);
    assert_non_null(ts);
    return ts;
}

static void test_write_goes_to_the_kernel_at_once(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p);
    struct xg_tserver *ts = new_ts(p.base, 1 << 20);
    /* enabling writing watches the socket until libevent finds nothing to write */
    event_base_loop(p.base, EVLOOP_NONBLOCK);
    assert_false(event_pending(&p.bev->ev_write, EV_WRITE, NULL));
    assert_int_equal(xg_tserver_write(ts, p.bev, "peer", "frame-1", 7), 0);
    /* readable right away, nothing queued, and libevent does not watch for writability */
    char b[32];
    assert_int_equal(recv(p.peer, b, sizeof b, MSG_DONTWAIT), 7);
    assert_memory_equal(b, "frame-1", 7);
    assert_int_equal(xg_tserver_unsent(p.bev), 0);
    assert_false(event_pending(&p.bev->ev_write, EV_WRITE, NULL));
    assert_int_equal(xg_tserver_bytes_out(ts), 7);
    /* behind queued bytes: queued after them, in order */
    assert_int_equal(bufferevent_write(p.bev, "A", 1), 0);
    assert_int_equal(xg_tserver_write(ts, p.bev, "peer", "B", 1), 0);
    assert_nothing_sent(p.peer);
    assert_int_equal(xg_tserver_unsent(p.bev), 2);
    assert_int_equal(xg_tserver_flush(p.bev), 2);
    assert_int_equal(recv(p.peer, b, sizeof b, MSG_DONTWAIT), 2);
    assert_memory_equal(b, "AB", 2);
    /* writing disabled: queued, as before */
    assert_int_equal(bufferevent_disable(p.bev, EV_WRITE), 0);
    assert_int_equal(xg_tserver_write(ts, p.bev, "peer", "C", 1), 0);
    assert_nothing_sent(p.peer);
    assert_int_equal(xg_tserver_unsent(p.bev), 1);
    xg_tserver_free(ts);
    pair_close(&p);
}

static void test_write_queues_what_the_socket_does_not_take(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p);
    struct xg_tserver *ts = new_ts(p.base, 1 << 22);
    enum { TOTAL = 1 << 20 };
    static unsigned char data[TOTAL], got[TOTAL];
    fill_for_a_small_socket(&p, data, TOTAL, 13, 241);
    assert_int_equal(xg_tserver_write(ts, p.bev, "peer", data, TOTAL / 2), 0);
    size_t queued = xg_tserver_unsent(p.bev);
    assert_true(queued > 0 && queued < TOTAL / 2);                /* the socket took part of it */
    assert_true(event_pending(&p.bev->ev_write, EV_WRITE, NULL)); /* libevent sends the rest */
    assert_int_equal(xg_tserver_write(ts, p.bev, "peer", data + TOTAL / 2, TOTAL / 2), 0);
    assert_int_equal(xg_tserver_unsent(p.bev), queued + TOTAL / 2);
    assert_peer_gets(&p, data, got, TOTAL);
    assert_int_equal(xg_tserver_bytes_out(ts), TOTAL);
    xg_tserver_free(ts);
    pair_close(&p);
}

/* ---- xg_tserver_read_more ---- */

struct reads {
    size_t calls;
    size_t seen[8]; /* input length at each read callback, after xg_tserver_read_more */
};

static void counting_read_cb(struct bufferevent *bev, void *arg)
{
    struct reads *r = arg;
    xg_tserver_read_more(bev);
    struct evbuffer *in = bufferevent_get_input(bev);
    if (r->calls < 8) r->seen[r->calls] = evbuffer_get_length(in);
    r->calls++;
    evbuffer_drain(in, evbuffer_get_length(in));
}

static void test_read_more_takes_a_whole_frame_per_pass(void **state)
{
    (void)state;
    struct pair p;
    pair_open(&p);
    struct reads r = {0};
    bufferevent_setcb(p.bev, counting_read_cb, NULL, NULL, &r);
    static unsigned char frame[13200]; /* 150 VRPN reports of 88 bytes */
    memset(frame, 7, sizeof frame);
    assert_int_equal(send(p.peer, frame, sizeof frame, 0), (ssize_t)sizeof frame);
    event_base_loop(p.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.seen[0], sizeof frame); /* libevent alone: 4096 */
    /* at most XG_TSERVER_READ_CAP per pass: 40 KB arrive in three passes */
    static unsigned char big[40000];
    assert_int_equal(send(p.peer, big, sizeof big, 0), (ssize_t)sizeof big);
    for (int i = 0; i < 10 && r.calls < 4; i++)
        event_base_loop(p.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    assert_int_equal(r.calls, 4);
    assert_int_equal(r.seen[1], XG_TSERVER_READ_CAP);
    assert_int_equal(r.seen[2], XG_TSERVER_READ_CAP);
    assert_int_equal(r.seen[3], sizeof big - 2 * XG_TSERVER_READ_CAP);
    /* a short read (under 4 KiB) does not read on; a TLS-style filter is left alone */
    assert_int_equal(send(p.peer, "x", 1, 0), 1);
    event_base_loop(p.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    assert_int_equal(r.calls, 5);
    assert_int_equal(r.seen[4], 1);
    struct bufferevent *f = bufferevent_filter_new(p.bev, NULL, NULL, 0, NULL, NULL);
    assert_non_null(f);
    assert_int_equal(xg_tserver_read_more(f), 0);
    bufferevent_free(f);
    pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_at_or_below),
        cmocka_unit_test(test_skip_then_drop_after_timeout),
        cmocka_unit_test(test_recovery_resets_the_clock),
        cmocka_unit_test(test_zero_timeout),
        cmocka_unit_test(test_hard_bound_at_write),
        cmocka_unit_test(test_flush_reaches_the_kernel_without_the_loop),
        cmocka_unit_test(test_flush_partial_keeps_the_rest_queued_in_order),
        cmocka_unit_test(test_flush_leaves_a_filter_alone),
        cmocka_unit_test(test_flush_respects_disabled_writing),
        cmocka_unit_test(test_flush_error_is_left_to_the_event_path),
        cmocka_unit_test(test_write_goes_to_the_kernel_at_once),
        cmocka_unit_test(test_write_queues_what_the_socket_does_not_take),
        cmocka_unit_test(test_read_more_takes_a_whole_frame_per_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
