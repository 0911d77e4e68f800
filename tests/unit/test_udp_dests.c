/* Unit tests for the UDP destination list by host name (core/net/udp_dests.h): parsing without DNS
 * (numeric active, names kept, errors naming the key and text), resolution at start (an
 * /etc/hosts name at once, a name that does not resolve counted, kept inactive and in last_error,
 * a numeric address of the other family made inactive), the list text and the status. */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/net/transport_client.h"
#include "core/net/udp_dests.h"
#include "mappings/conf_yaml.h"

static int parse(struct xg_udp_dests *l, const char *yaml, int def_port, int family,
                 struct xg_error *err)
{
    struct xg_error perr = {0};
    struct xg_conf *c = xg_conf_yaml_parse(yaml, strlen(yaml), "t.yaml", &perr);
    assert_non_null(c);
    memset(l, 0, sizeof *l);
    int rc = xg_udp_dests_conf(l, c, "destinations", def_port, family, err);
    xg_conf_yaml_free(c);
    return rc;
}

static void test_conf(void **state)
{
    (void)state;
    struct xg_udp_dests l;
    struct xg_error err = {0};
    assert_int_equal(
        parse(&l, "destinations: [\"127.0.0.1:9\", \"quest.local:39539\"]\n", 0, AF_INET, &err), 0);
    assert_int_equal(l.n, 2);
    assert_true(l.d[0].active);
    assert_string_equal(l.d[0].str, "127.0.0.1:9");
    assert_string_equal(l.d[0].host, "");
    assert_false(l.d[1].active);
    assert_string_equal(l.d[1].host, "quest.local");
    assert_int_equal(l.d[1].port, 39539);
    assert_int_equal(xg_udp_dests_active(&l), 1);
    assert_int_equal(xg_udp_dests_unresolved(&l), 1);
    assert_true(xg_udp_dests_named(&l));
    char buf[128];
    assert_string_equal(xg_udp_dests_str(&l, ",", true, buf, sizeof buf),
                        "127.0.0.1:9,quest.local:39539 (unresolved)");
    assert_string_equal(xg_udp_dests_str(&l, ", ", false, buf, sizeof buf),
                        "127.0.0.1:9, quest.local:39539");
    /* one string is a one-element list; the default port applies when a text has none */
    assert_int_equal(parse(&l, "destinations: \"headset.lan\"\n", 49170, AF_INET, &err), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.d[0].port, 49170);
    assert_false(xg_udp_dests_named(&(struct xg_udp_dests){0}));
    /* absent: empty */
    assert_int_equal(parse(&l, "other: 1\n", 0, AF_INET, &err), 0);
    assert_int_equal(l.n, 0);
    /* a numeric address of the other family: refused unless bind is a name (AF_UNSPEC) */
    assert_int_equal(parse(&l, "destinations: [\"[::1]:5\"]\n", 0, AF_INET, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "destinations: '[::1]:5' is not of the bind address's family"));
    assert_int_equal(parse(&l, "destinations: [\"[::1]:5\"]\n", 0, AF_UNSPEC, &err), 0);
    assert_true(l.d[0].active);
}

static void test_conf_errors(void **state)
{
    (void)state;
    struct xg_udp_dests l;
    struct xg_error err = {0};
    assert_int_equal(parse(&l, "destinations: [\"bad host!:5\"]\n", 0, AF_INET, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "destinations: "));
    assert_non_null(strstr(err.msg, "'bad host!' is neither an IP address nor a host name"));
    assert_int_equal(parse(&l, "destinations: [\"quest.local\"]\n", 0, AF_INET, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "destinations: "));
    assert_int_equal(parse(&l, "destinations: [\"127.0.0.1:0\"]\n", 0, AF_INET, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "destinations: '127.0.0.1:0' has port 0"));
    assert_int_equal(parse(&l, "destinations: [[1]]\n", 0, AF_INET, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "destinations: expected \"host:port\""));
    char yaml[512] = "destinations: [";
    for (int i = 0; i <= XG_UDP_DESTS_MAX; i++)
        snprintf(yaml + strlen(yaml), sizeof yaml - strlen(yaml), "%s\"127.0.0.1:%d\"",
                 i ? ", " : "", 1000 + i);
    strcat(yaml, "]\n");
    assert_int_equal(parse(&l, yaml, 0, AF_INET, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "destinations: at most 16"));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_start(void **state)
{
    (void)state;
    /* a DNS server on loopback that never answers: "nohost.invalid" fails after the 1 s
     * timeout; "localhost" answers from /etc/hosts */
    int silent = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(silent >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(silent, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(silent, (struct sockaddr *)&sa, &sl), 0);
    char path[] = "/tmp/xg-udp-dests-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "nameserver 127.0.0.1:%u\noptions timeout:1 attempts:1\n", ntohs(sa.sin_port));
    fclose(f);
    assert_int_equal(xg_tclient_set_resolv_conf(path), 0);

    struct xg_udp_dests l;
    struct xg_error err = {0};
    assert_int_equal(parse(&l,
                           "destinations: [\"127.0.0.1:9\", \"localhost:7\", "
                           "\"nohost.invalid:8\", \"[::1]:5\"]\n",
                           0, AF_UNSPEC, &err),
                     0);
    struct event_base *base = event_base_new();
    assert_non_null(base);
    xg_udp_dests_start(&l, base, "t", AF_INET);
    /* at once: the /etc/hosts name has its address; the IPv6 address is of the wrong family */
    assert_true(l.d[1].active);
    assert_string_equal(l.d[1].str, "127.0.0.1:7");
    assert_false(l.d[3].active);
    assert_false(l.d[2].active);
    assert_int_equal(xg_udp_dests_active(&l), 2);
    double deadline = now_s() + 10;
    while (xg_resolve_failures(l.d[2].res) == 0 && now_s() < deadline)
        event_base_loop(base, EVLOOP_ONCE);
    assert_int_equal(xg_resolve_failures(l.d[2].res), 1);
    assert_false(l.d[2].active);
    assert_int_equal(xg_resolve_state(l.d[2].res), XG_RS_BACKOFF);

    struct xg_status st = {.state = "listening"};
    xg_udp_dests_status(&l, NULL, false, &st);
    assert_true(st.client);
    assert_non_null(strstr(st.last_error, "DNS: cannot resolve 'nohost.invalid': "));
    assert_int_equal(st.n_counters, 2);
    assert_string_equal(st.counters[0].name, "destinations_unresolved");
    assert_int_equal((int)st.counters[0].value, 1);
    assert_string_equal(st.counters[1].name, "dns_failures");
    assert_int_equal((int)st.counters[1].value, 1);
    char buf[200];
    assert_string_equal(xg_udp_dests_str(&l, ",", true, buf, sizeof buf),
                        "127.0.0.1:9,127.0.0.1:7,nohost.invalid:8 (unresolved),[::1]:5");

    xg_udp_dests_stop(&l);
    assert_null(l.d[2].res);
    assert_true(l.d[1].active); /* a resolved destination keeps its address */
    event_base_free(base);
    xg_tclient_set_resolv_conf(NULL);
    unlink(path);
    close(silent);
}

static void test_status_without_names(void **state)
{
    (void)state;
    struct xg_udp_dests l;
    struct xg_error err = {0};
    assert_int_equal(parse(&l, "destinations: [\"127.0.0.1:9\"]\n", 0, AF_INET, &err), 0);
    struct xg_status st = {0};
    xg_udp_dests_status(&l, NULL, false, &st);
    assert_false(st.client);
    assert_int_equal(st.n_counters, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conf),
        cmocka_unit_test(test_conf_errors),
        cmocka_unit_test(test_start),
        cmocka_unit_test(test_status_without_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
