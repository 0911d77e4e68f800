/* Unit tests for core/net: address parsing, backoff, source-clock mapping. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/net/net.h"
#include "core/clock/time_map.h"

static void test_split_and_parse(void **state)
{
    (void)state;
    char host[64];
    int port;
    assert_int_equal(xg_net_split_hostport("127.0.0.1:3883", host, sizeof host, &port, 0), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 3883);
    assert_int_equal(xg_net_split_hostport("[::1]:80", host, sizeof host, &port, 0), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 80);
    assert_int_equal(xg_net_split_hostport("sim.local", host, sizeof host, &port, 7000), 0);
    assert_string_equal(host, "sim.local");
    assert_int_equal(port, 7000);
    assert_int_equal(xg_net_split_hostport("4242", host, sizeof host, &port, 1), 0);
    assert_string_equal(host, "");
    assert_int_equal(port, 4242);
    assert_int_equal(xg_net_split_hostport(":9", host, sizeof host, &port, 1), 0);
    assert_int_equal(port, 9);
    assert_int_equal(xg_net_split_hostport("h:99999", host, sizeof host, &port, 1), -EINVAL);
    assert_int_equal(xg_net_split_hostport("h:x", host, sizeof host, &port, 1), -EINVAL);
    assert_int_equal(xg_net_split_hostport("::1:80", host, sizeof host, &port, 1), -EINVAL);

    struct sockaddr_storage ss;
    socklen_t len;
    struct xg_error err = {0};
    assert_int_equal(xg_net_parse_addr("127.0.0.1:3883", NULL, 0, &ss, &len, &err), 0);
    char buf[64];
    assert_string_equal(xg_net_addr_str((struct sockaddr *)&ss, buf, sizeof buf), "127.0.0.1:3883");
    assert_int_equal(xg_net_parse_addr(":12280", "0.0.0.0", 0, &ss, &len, &err), 0);
    assert_string_equal(xg_net_addr_str((struct sockaddr *)&ss, buf, sizeof buf), "0.0.0.0:12280");
    assert_int_equal(xg_net_parse_addr("[::1]:5", NULL, 0, &ss, &len, &err), 0);
    assert_string_equal(xg_net_addr_str((struct sockaddr *)&ss, buf, sizeof buf), "[::1]:5");
    assert_int_equal(xg_net_parse_addr("a:b:c", NULL, 0, &ss, &len, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "address 'a:b:c' must be host:port"));
    assert_int_equal(xg_net_parse_addr("no-such-host.invalid:1", NULL, 0, &ss, &len, &err),
                     -EHOSTUNREACH);
    struct sockaddr_storage s2;
    xg_net_parse_addr("127.0.0.1:3883", NULL, 0, &ss, &len, &err);
    xg_net_parse_addr("127.0.0.1:3883", NULL, 0, &s2, &len, &err);
    assert_true(xg_net_addr_equal((struct sockaddr *)&ss, (struct sockaddr *)&s2));
    xg_net_parse_addr("127.0.0.1:3884", NULL, 0, &s2, &len, &err);
    assert_false(xg_net_addr_equal((struct sockaddr *)&ss, (struct sockaddr *)&s2));
}

/* xg_net_parse_numeric: addresses parsed, names only checked (never resolved: no DNS at load) */
static void test_parse_numeric(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char host[256] = "";
    int port = -1;
    struct xg_error err = {0};
    assert_int_equal(
        xg_net_parse_numeric("127.0.0.1:5004", NULL, 0, &ss, &len, host, sizeof host, &port, &err),
        0);
    assert_int_equal(ss.ss_family, AF_INET);
    assert_int_equal(xg_net_addr_port((struct sockaddr *)&ss), 5004);
    assert_int_equal(
        xg_net_parse_numeric("[::1]:7", NULL, 0, &ss, &len, host, sizeof host, &port, &err), 0);
    assert_int_equal(ss.ss_family, AF_INET6);
    assert_int_equal(
        xg_net_parse_numeric(":9", "0.0.0.0", 0, &ss, &len, host, sizeof host, &port, &err),
        0); /* the default host */
    assert_int_equal(xg_net_addr_port((struct sockaddr *)&ss), 9);
    /* names: 1, the name and the port, nothing resolved */
    assert_int_equal(xg_net_parse_numeric("nohost.invalid:5004", NULL, 0, &ss, &len, host,
                                          sizeof host, &port, &err),
                     1);
    assert_string_equal(host, "nohost.invalid");
    assert_int_equal(port, 5004);
    assert_int_equal(
        xg_net_parse_numeric("mocap-pc_1", NULL, 49170, &ss, &len, host, sizeof host, &port, &err),
        1);
    assert_int_equal(port, 49170);
    /* neither an address nor a name */
    const char *bad[] = {"bad host!:1", "a..b:1", ".a:1", "-a:1", "host:99999", "::1:5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (xg_net_parse_numeric(bad[i], NULL, 0, &ss, &len, host, sizeof host, &port, &err) !=
            -EINVAL)
            fail_msg("'%s' accepted", bad[i]);
    xg_net_parse_numeric("bad host!:1", NULL, 0, &ss, &len, host, sizeof host, &port, &err);
    assert_string_equal(err.msg,
                        "address 'bad host!:1': 'bad host!' is neither an IP address nor a host "
                        "name");
}

static void test_backoff(void **state)
{
    (void)state;
    struct xg_backoff b = {.rng = 5};
    int64_t base = 500000000;
    for (int i = 0; i < 10; i++) {
        int64_t d = xg_backoff_next(&b);
        int64_t want = base < INT64_C(10000000000) ? base : INT64_C(10000000000);
        assert_true(d >= want * 3 / 4 && d <= want * 5 / 4);
        base *= 2;
    }
    assert_int_equal(b.attempts, 10);
    xg_backoff_reset(&b);
    int64_t d = xg_backoff_next(&b);
    assert_true(d >= 375000000 && d <= 625000000);
}

static void test_time_map(void **state)
{
    (void)state;
    struct xg_time_map m = {.window_ns = INT64_C(1000000000)};
    const int64_t off = INT64_C(5000000000); /* gateway = source + 5 s + delay */
    int64_t src = 1000000;
    /* delays of 2 ms with spikes of 30 ms: the mapping keeps the 2 ms floor */
    for (int k = 0; k < 100; k++, src += 10000000) {
        int64_t delay = (k % 10 == 3) ? 30000000 : 2000000;
        int64_t t = xg_time_map_update(&m, src, src + off + delay);
        if (k > 0) assert_true(t == src + off + 2000000);
        assert_true(t <= src + off + delay);
    }
    /* the peer's clock jumps back by 1 s: after two windows the new offset is learnt */
    int64_t jump = INT64_C(1000000000);
    int64_t t = 0;
    for (int k = 0; k < 300; k++, src += 10000000)
        t = xg_time_map_update(&m, src - jump, src + off + 2000000);
    assert_true(t == src - 10000000 + off + 2000000);
    /* one wild timestamp an hour ahead: mapped to its receive time, the offset is unchanged */
    int64_t before = m.offset_ns;
    int64_t recv = src + off + 2000000;
    t = xg_time_map_update(&m, src - jump + INT64_C(3600000000000), recv);
    assert_true(t == recv);
    assert_true(m.offset_ns == before);
    src += 10000000;
    t = xg_time_map_update(&m, src - jump, src + off + 2000000);
    assert_true(t == src - jump + before); /* the next normal sample maps as before */
    /* a real forward jump of 1 h: adopted on its third sample, times keep increasing */
    int64_t fwd = INT64_C(3600000000000), last = t;
    for (int k = 0; k < 5; k++) {
        src += 10000000;
        t = xg_time_map_update(&m, src + fwd, src + off + 2000000 + (k == 0 ? 3000000 : 0));
        assert_true(t > last);
        assert_true(t <= src + off + 2000000 + (k == 0 ? 3000000 : 0));
        last = t;
    }
    assert_true(m.offset_ns == off + 2000000 - fwd);
    xg_time_map_reset(&m);
    assert_false(m.valid);
    assert_true(m.window_ns == INT64_C(1000000000));
}

/* Issue 30: clock steps recover. Every sample after a step (or a wild stamp) is applied: its
 * mapped time advances past the previous one and lies within 1 s of the truth once adopted. */
static void test_time_map_steps(void **state)
{
    (void)state;
    const int64_t off = INT64_C(7000000000), delay = 2000000, period = 10000000;
    const int64_t year = INT64_C(365) * 24 * 3600 * INT64_C(1000000000);
    struct xg_time_map m = {0};
    int64_t src = INT64_C(1700000000) * INT64_C(1000000000), last = INT64_MIN;
    /* the very first stamp is ten years ahead, then normal ones: applied again within 1 s */
    int64_t t = xg_time_map_update(&m, src + 10 * year, src + off + delay);
    assert_true(t <= src + off + delay);
    last = t;
    int applied_at = -1;
    for (int k = 1; k < 100; k++) {
        src += period;
        t = xg_time_map_update(&m, src, src + off + delay);
        assert_true(t <= src + off + delay);
        if (t > last) {
            if (applied_at < 0) applied_at = k;
            last = t;
        } else {
            assert_true(applied_at < 0); /* once applied, every later sample is */
        }
    }
    assert_true(applied_at > 0 && applied_at * period <= INT64_C(1000000000));
    assert_true(m.steps == 1);
    assert_true(m.offset_ns == off + delay);
    assert_true(t == src + off + delay);
    /* a wild stamp mid-stream (ten years ahead, then one ten years back): no step, the next
     * normal sample maps as before */
    src += period;
    t = xg_time_map_update(&m, src + 10 * year, src + off + delay);
    assert_true(t == src + off + delay && t > last);
    src += period;
    t = xg_time_map_update(&m, src - 10 * year, src + off + delay);
    src += period;
    t = xg_time_map_update(&m, src, src + off + delay);
    assert_true(t == src + off + delay);
    assert_true(m.steps == 1);
    last = t;
    /* a sim-time reset: the source's clock goes back by an hour; applied again within 1 s */
    const int64_t back = INT64_C(3600000000000);
    int64_t rx = src + off + delay;
    applied_at = -1;
    for (int k = 0; k < 100; k++) {
        src += period;
        rx += period;
        t = xg_time_map_update(&m, src - back, rx);
        assert_true(t <= rx);
        if (t > last) {
            if (applied_at < 0) applied_at = k;
            last = t;
        } else {
            assert_true(applied_at < 0);
        }
    }
    assert_true(applied_at >= 0 && applied_at * period <= INT64_C(1000000000));
    assert_true(m.steps == 2);
    assert_true(m.last_step_ns == back);
    assert_true(t == rx); /* the new offset: (src − back) + (off + back + delay) */
    /* a forward step of a year */
    for (int k = 0; k < 10; k++) {
        src += period;
        rx += period;
        t = xg_time_map_update(&m, src - back + year, rx);
        assert_true(t > last && t <= rx);
        last = t;
    }
    assert_true(m.steps == 3);
    assert_true(m.last_step_ns == -year);
    /* a burst of samples delayed by a 500 ms stall, read at once, is no step */
    int64_t cur = src - back + year;
    for (int k = 0; k < 5; k++) {
        cur += period;
        t = xg_time_map_update(&m, cur - INT64_C(500000000), rx + period + k);
    }
    rx += period + 5;
    assert_true(m.steps == 3);
    src = cur;
    rx += period;
    t = xg_time_map_update(&m, src + period, rx);
    assert_true(t == rx);
    /* a stamp at the edge of int64 neither overflows nor moves the estimate */
    t = xg_time_map_update(&m, INT64_MAX, rx + 1);
    assert_true(t == rx + 1);
    t = xg_time_map_update(&m, INT64_MIN, rx + 2);
    assert_true(t < rx); /* a late sample: dropped */
    assert_true(m.steps == 3);
    t = xg_time_map_update(&m, src + 2 * period, rx + period);
    assert_true(t == rx + period);
    /* a latency episode: every sample delayed by 400 ms for a second is no step; each still
     * advances and maps to its capture time on the source's clock */
    last = t;
    src += 2 * period; /* the source time and receive time of that last sample */
    rx += period;
    for (int k = 0; k < 100; k++) {
        src += period;
        rx += period;
        t = xg_time_map_update(&m, src, rx + INT64_C(400000000));
        assert_true(t > last && t == rx);
        last = t;
    }
    assert_true(m.steps == 3);
    /* reset keeps the count */
    xg_time_map_reset(&m);
    assert_true(m.steps == 3 && !m.valid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_and_parse), cmocka_unit_test(test_parse_numeric),
        cmocka_unit_test(test_backoff),         cmocka_unit_test(test_time_map),
        cmocka_unit_test(test_time_map_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
