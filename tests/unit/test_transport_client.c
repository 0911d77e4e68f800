/* Unit tests for core/net/transport_client (the reconnect schedule and the state machine of the
 * client adapters' connections) and core/conf/path (relative paths in the configuration). */
#include <errno.h>
#include <event2/event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/adapter/adapter.h"
#include "core/conf/conf.h"
#include "core/net/net.h"
#include "core/conf/path.h"
#include "core/net/transport_client.h"

#define S INT64_C(1000000000)

/* The schedule: 0.5 s doubling to 10 s, each delay within ±25 % of its base; a seed gives the
 * same jitter every time, another seed another one; a success starts again at 0.5 s. */
static void test_backoff_schedule_seeded(void **state)
{
    (void)state;
    struct xg_backoff a = {.rng = 42}, b = {.rng = 42}, c = {.rng = 43};
    const int64_t base[12] = {S / 2,  S,      2 * S,  4 * S,  8 * S,  10 * S,
                              10 * S, 10 * S, 10 * S, 10 * S, 10 * S, 10 * S};
    int differ = 0, off_base = 0;
    for (int i = 0; i < 12; i++) {
        int64_t da = xg_backoff_next(&a), db = xg_backoff_next(&b), dc = xg_backoff_next(&c);
        assert_int_equal(da, db); /* seeded: reproducible */
        differ += da != dc;
        off_base += da != base[i];
        assert_true(da >= base[i] * 3 / 4 && da < base[i] * 5 / 4);
        assert_true(dc >= base[i] * 3 / 4 && dc < base[i] * 5 / 4);
        assert_int_equal(a.attempts, (uint32_t)(i + 1));
    }
    assert_true(differ >= 11);   /* the seed matters */
    assert_true(off_base >= 11); /* jitter: peers that failed together do not retry together */
    xg_backoff_reset(&a);
    assert_int_equal(a.attempts, 0);
    int64_t d = xg_backoff_next(&a);
    assert_true(d >= S / 2 * 3 / 4 && d < S / 2 * 5 / 4);
}

static void test_log_attempt(void **state)
{
    (void)state;
    for (uint32_t n = 1; n <= 40; n++)
        assert_int_equal(xg_tclient_log_attempt(n), n <= 3 || n % 10 == 0);
}

struct probe {
    int calls;
    int result; /* what on_resolved returns */
    char addr[64];
};

static int on_resolved(void *arg, const struct sockaddr *sa, socklen_t len, char *why,
                       size_t why_size)
{
    struct probe *p = arg;
    (void)len;
    p->calls++;
    xg_net_addr_str(sa, p->addr, sizeof p->addr);
    if (p->result < 0)
        snprintf(why, why_size, "refused by the test%s", p->calls > 2 ? "\n\xff" : "");
    return p->result;
}

/* The state machine with the adapter's own attempts (a numeric address resolves at once, no
 * packet is sent): a failed attempt backs off and counts, a connection counts, streaming resets
 * the backoff, a lost connection is one reconnect with its reason as last_error. */
static void test_state_machine(void **state)
{
    (void)state;
    struct event_base *base = event_base_new();
    assert_non_null(base);
    struct probe p = {.result = -ECONNREFUSED};
    struct xg_tclient_conf conf = {
        .component = "t", .host = "127.0.0.1", .port = 9, .peer_prefix = "x://", .seed = 7};
    struct xg_tclient_ops ops = {.resolved = on_resolved};
    struct xg_tclient *tc = xg_tclient_new(base, &conf, &ops, &p);
    assert_non_null(tc);
    assert_int_equal(xg_tclient_state(tc), XG_TC_STOPPED);
    assert_string_equal(xg_tclient_peer(tc), "x://127.0.0.1:9");
    xg_tclient_start(tc);
    assert_int_equal(p.calls, 1);
    assert_string_equal(p.addr, "127.0.0.1:9");
    assert_int_equal(xg_tclient_state(tc), XG_TC_BACKOFF);
    assert_string_equal(xg_tclient_last_error(tc),
                        "cannot connect to x://127.0.0.1:9: refused by the test");
    assert_int_equal(xg_tclient_reconnects(tc), 1);
    assert_int_equal(xg_tclient_attempts(tc), 1);
    assert_int_equal(xg_tclient_connects(tc), 0);

    /* the backoff timer runs the next attempt, which the adapter starts */
    p.result = 0;
    while (p.calls < 2)
        event_base_loop(base, EVLOOP_ONCE);
    assert_int_equal(xg_tclient_state(tc), XG_TC_CONNECTING);
    xg_tclient_handshake(tc);
    assert_int_equal(xg_tclient_state(tc), XG_TC_HANDSHAKE);
    assert_int_equal(xg_tclient_connects(tc), 1);
    assert_int_equal(xg_tclient_attempts(tc), 1); /* not streaming yet */
    xg_tclient_streaming(tc);
    assert_int_equal(xg_tclient_state(tc), XG_TC_STREAMING);
    assert_int_equal(xg_tclient_attempts(tc), 0);

    xg_tclient_closed(tc, "x://127.0.0.1:9 closed the connection");
    assert_int_equal(xg_tclient_state(tc), XG_TC_BACKOFF);
    assert_int_equal(xg_tclient_reconnects(tc), 2);
    xg_tclient_closed(tc, "again"); /* already backing off: nothing more */
    assert_int_equal(xg_tclient_reconnects(tc), 2);

    struct xg_status st = {0};
    xg_tclient_status(&tc, 1, &st);
    assert_true(st.client);
    assert_string_equal(st.state, "backoff");
    assert_string_equal(st.last_error, "x://127.0.0.1:9 closed the connection");
    assert_int_equal(st.n_counters, 4);
    assert_string_equal(st.counters[0].name, "connects");
    assert_true(st.counters[0].value == 1);
    assert_string_equal(st.counters[1].name, "reconnects");
    assert_true(st.counters[1].value == 2);

    /* a failure text quoting control or non-ASCII bytes is kept printable (JSON, /metrics) */
    p.result = -EPROTO;
    while (p.calls < 3)
        event_base_loop(base, EVLOOP_ONCE);
    assert_string_equal(xg_tclient_last_error(tc),
                        "cannot connect to x://127.0.0.1:9: refused by the test\\x0a\\xff");
    assert_int_equal(xg_tclient_reconnects(tc), 3);

    xg_tclient_stop(tc);
    assert_int_equal(xg_tclient_state(tc), XG_TC_STOPPED);
    xg_tclient_closed(tc, "after stop");
    assert_int_equal(xg_tclient_reconnects(tc), 3);
    assert_string_equal(xg_tclient_state_name(xg_tclient_state(tc)), "stopped");
    xg_tclient_free(tc);
    event_base_free(base);
}

static void test_conf_path(void **state)
{
    (void)state;
    char out[64];
    struct xg_conf n = {.file = "/etc/xrgate/gateway.yaml"};
    assert_int_equal(xg_conf_path(&n, "keys/less.key", out, sizeof out), 0);
    assert_string_equal(out, "/etc/xrgate/keys/less.key");
    assert_int_equal(xg_conf_path(&n, "/run/secrets/token", out, sizeof out), 0);
    assert_string_equal(out, "/run/secrets/token");
    n.file = "gateway.yaml"; /* in the working directory */
    assert_int_equal(xg_conf_path(&n, "token", out, sizeof out), 0);
    assert_string_equal(out, "token");
    n.file = "<embedded conf/xrgate.yaml>"; /* the embedded default: the working directory */
    assert_int_equal(xg_conf_path(&n, "token", out, sizeof out), 0);
    assert_string_equal(out, "token");
    assert_int_equal(xg_conf_path(NULL, "a/b", out, sizeof out), 0);
    assert_string_equal(out, "a/b");
    n.file = "/a/very/long/folder/name/that/does/not/fit/into/the/buffer/of/64/bytes/g.yaml";
    assert_int_equal(xg_conf_path(&n, "key", out, sizeof out), -ENAMETOOLONG);
    assert_string_equal(out, "");
    assert_int_equal(xg_conf_path(&n, "", out, sizeof out), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_schedule_seeded),
        cmocka_unit_test(test_log_attempt),
        cmocka_unit_test(test_state_machine),
        cmocka_unit_test(test_conf_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
