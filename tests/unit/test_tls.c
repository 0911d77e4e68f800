/* Unit tests for core/net/tls.c: the mbedtls filtering bufferevent, over a socketpair on one
 * event_base. Certificates are generated at test time with the openssl CLI (skipped without it):
 * a CA, a server certificate for "localhost", a client certificate, and an unrelated CA.
 *   - data written before and after the handshake arrives intact both ways (64 KiB bulk too);
 *   - a client trusting the wrong CA gets BEV_EVENT_ERROR and an error naming the peer and
 *     mbedtls's reason; so does a client checking the wrong server name;
 *   - a server requiring client certificates rejects a client without one;
 *   - bad files are reported by xg_tls_ctx_new with the file name;
 *   - once established, a record written is in the kernel when bufferevent_write returns (the
 *     filter runs at once and its BIO sends directly), so the TCP servers need no flush for TLS
 *     clients (xg_tserver_flush leaves them alone). */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/net/tls.h"
#include "core/net/transport_server.h"
#include "tests/unit/test_skip.h"

static char dir[256]; /* the certificates' directory; empty when the openssl CLI is missing */

/* every test that needs the generated certificates: skipped without the openssl CLI (under CI:
 * failed, naming it) */
#define NEED_CERTS()                                                                               \
    do {                                                                                           \
        if (!dir[0]) XG_TEST_SKIP("the openssl CLI (it makes the test certificates)");             \
    } while (0)

static int sh(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[2400];
    snprintf(full, sizeof full, "cd '%s' && (%s) >/dev/null 2>&1", dir, cmd);
    return system(full);
}

static const char *path(const char *name)
{
    static char bufs[8][320];
    static int i;
    char *b = bufs[i++ % 8];
    snprintf(b, 320, "%s/%s", dir, name);
    return b;
}

static int make_certs(void **state)
{
    (void)state;
    if (system("command -v openssl >/dev/null 2>&1") != 0) return 0;
    snprintf(dir, sizeof dir, "/tmp/xg-tls-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    if (sh("openssl req -x509 %s -keyout ca.key -out ca.crt -days 2 -subj /CN=ca", ec) ||
        sh("openssl req -x509 %s -keyout other.key -out other.crt -days 2 -subj /CN=other", ec))
        return -1;
    const char *names[2] = {"server", "client"}, *cns[2] = {"localhost", "client.test"};
    for (int i = 0; i < 2; i++) {
        if (sh("openssl req %s -keyout %s.key -out %s.csr -subj /CN=%s", ec, names[i], names[i],
               cns[i]) ||
            sh("echo subjectAltName=DNS:%s > %s.ext", cns[i], names[i]) ||
            sh("openssl x509 -req -in %s.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out "
               "%s.crt -days 2 -extfile %s.ext",
               names[i], names[i], names[i]))
            return -1;
    }
    return 0;
}

static int remove_certs(void **state)
{
    (void)state;
    if (dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd)) return -1;
    }
    return 0;
}

struct end {
    struct bufferevent *bev;
    struct xg_tls_session *sess;
    struct evbuffer *got;
    short events;
};

static void read_cb(struct bufferevent *bev, void *arg)
{
    struct end *e = arg;
    evbuffer_add_buffer(e->got, bufferevent_get_input(bev));
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct end *e = arg;
    (void)bev;
    e->events |= what;
}

struct pair {
    struct event_base *base;
    struct xg_tls_ctx *sctx, *cctx;
    struct end s, c;
};

static void pair_open(struct pair *p, const char *ca_for_client, bool client_cert,
                      const char *server_name)
{
    memset(p, 0, sizeof *p);
    p->base = event_base_new();
    assert_non_null(p->base);
    struct xg_error err = {0};
    struct xg_tls_conf sc = {.server = true,
                             .cert = path("server.crt"),
                             .key = path("server.key"),
                             .ca = path("ca.crt"),
                             .verify = true};
    p->sctx = xg_tls_ctx_new(&sc, &err);
    assert_non_null(p->sctx);
    struct xg_tls_conf cc = {.server = false,
                             .cert = client_cert ? path("client.crt") : NULL,
                             .key = client_cert ? path("client.key") : NULL,
                             .ca = path(ca_for_client),
                             .verify = true};
    p->cctx = xg_tls_ctx_new(&cc, &err);
    assert_non_null(p->cctx);
    int fds[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    evutil_make_socket_nonblocking(fds[0]);
    evutil_make_socket_nonblocking(fds[1]);
    struct end *ends[2] = {&p->s, &p->c};
    for (int i = 0; i < 2; i++) {
        struct bufferevent *u = bufferevent_socket_new(p->base, fds[i], BEV_OPT_CLOSE_ON_FREE);
        assert_non_null(u);
        ends[i]->got = evbuffer_new();
        ends[i]->bev = xg_tls_wrap(i == 0 ? p->sctx : p->cctx, u, i == 0 ? NULL : server_name,
                                   i == 0 ? "client-end" : "server-end", &ends[i]->sess);
        assert_non_null(ends[i]->bev);
        bufferevent_setcb(ends[i]->bev, read_cb, NULL, event_cb, ends[i]);
        bufferevent_enable(ends[i]->bev, EV_READ | EV_WRITE);
    }
}

static void pair_close(struct pair *p)
{
    bufferevent_free(p->s.bev);
    bufferevent_free(p->c.bev);
    evbuffer_free(p->s.got);
    evbuffer_free(p->c.got);
    xg_tls_ctx_free(p->sctx);
    xg_tls_ctx_free(p->cctx);
    /* libevent finalizes bufferevents (and the TLS sessions) from the loop: let it run */
    for (int i = 0; i < 10; i++)
        event_base_loop(p->base, EVLOOP_NONBLOCK);
    event_base_free(p->base);
}

/* Run the loop until cond() or ~3 s. */
static bool run_until(struct pair *p, bool (*cond)(struct pair *))
{
    for (int i = 0; i < 3000 && !cond(p); i++) {
        struct timeval tv = {0, 1000};
        event_base_loopexit(p->base, &tv);
        event_base_dispatch(p->base);
    }
    return cond(p);
}

static bool both_got_data(struct pair *p)
{
    return evbuffer_get_length(p->s.got) >= 5 + 65536 && evbuffer_get_length(p->c.got) >= 6;
}

static bool client_failed(struct pair *p)
{
    return (p->c.events & BEV_EVENT_ERROR) || (p->s.events & BEV_EVENT_ERROR);
}

static bool client_got_pose(struct pair *p)
{
    size_t n = evbuffer_get_length(p->c.got);
    return n >= 10 && memcmp(evbuffer_pullup(p->c.got, -1) + n - 4, "pose", 4) == 0;
}

static void test_roundtrip(void **state)
{
    (void)state;
    NEED_CERTS();
    struct pair p;
    pair_open(&p, "ca.crt", true, "localhost");
    /* written before the handshake: held, then sent */
    bufferevent_write(p.c.bev, "hello", 5);
    static uint8_t bulk[65536];
    for (size_t i = 0; i < sizeof bulk; i++)
        bulk[i] = (uint8_t)(i * 7 + 3);
    bufferevent_write(p.c.bev, bulk, sizeof bulk);
    bufferevent_write(p.s.bev, "world!", 6);
    assert_true(run_until(&p, both_got_data));
    assert_true(xg_tls_established(p.s.sess) && xg_tls_established(p.c.sess));
    assert_string_equal(xg_tls_error(p.c.sess), "");
    uint8_t *s = evbuffer_pullup(p.s.got, -1);
    assert_memory_equal(s, "hello", 5);
    assert_memory_equal(s + 5, bulk, sizeof bulk);
    assert_memory_equal(evbuffer_pullup(p.c.got, -1), "world!", 6);
    pair_close(&p);
}

static void test_record_in_the_kernel_at_write(void **state)
{
    (void)state;
    NEED_CERTS();
    struct pair p;
    pair_open(&p, "ca.crt", true, "localhost");
    bufferevent_write(p.c.bev, "hello", 5);
    bufferevent_write(p.s.bev, "world!", 6);
    static uint8_t bulk[65536];
    bufferevent_write(p.c.bev, bulk, sizeof bulk);
    assert_true(run_until(&p, both_got_data));
    /* established, nothing pending: write and look at the sockets without running the loop */
    int cfd = bufferevent_getfd(p.c.bev);
    char b[256];
    assert_int_equal(recv(cfd, b, sizeof b, MSG_DONTWAIT | MSG_PEEK), -1); /* nothing yet */
    assert_int_equal(bufferevent_write(p.s.bev, "pose", 4), 0);
    assert_int_equal(xg_tserver_unsent(p.s.bev), 0); /* neither plaintext nor record queued */
    ssize_t n = recv(cfd, b, sizeof b, MSG_DONTWAIT | MSG_PEEK);
    assert_true(n > 4);                             /* the record (header, body, tag) is readable */
    assert_null(memmem(b, (size_t)n, "pose", 4));   /* and it is not the plaintext */
    assert_int_equal(xg_tserver_flush(p.s.bev), 0); /* nothing for the flush to do */
    assert_true(run_until(&p, client_got_pose));
    pair_close(&p);
}

static void test_wrong_ca(void **state)
{
    (void)state;
    NEED_CERTS();
    struct pair p;
    pair_open(&p, "other.crt", true, "localhost");
    bufferevent_write(p.c.bev, "secret", 6);
    assert_true(run_until(&p, client_failed));
    assert_true(p.c.events & BEV_EVENT_ERROR);
    const char *e = xg_tls_error(p.c.sess);
    assert_non_null(strstr(e, "server-end"));
    assert_non_null(strstr(e, "handshake failed"));
    assert_non_null(strstr(e, "not correctly signed by the trusted CA"));
    assert_int_equal(evbuffer_get_length(p.s.got), 0);
    assert_false(xg_tls_established(p.c.sess));
    pair_close(&p);
}

static void test_wrong_name(void **state)
{
    (void)state;
    NEED_CERTS();
    struct pair p;
    pair_open(&p, "ca.crt", true, "elsewhere.example");
    assert_true(run_until(&p, client_failed));
    assert_non_null(strstr(xg_tls_error(p.c.sess), "CN"));
    pair_close(&p);
}

static void test_missing_client_cert(void **state)
{
    (void)state;
    NEED_CERTS();
    struct pair p;
    pair_open(&p, "ca.crt", false, "localhost");
    bufferevent_write(p.c.bev, "x", 1);
    assert_true(run_until(&p, client_failed));
    assert_true(p.s.events & BEV_EVENT_ERROR);
    assert_non_null(strstr(xg_tls_error(p.s.sess), "client-end"));
    assert_int_equal(evbuffer_get_length(p.s.got), 0);
    pair_close(&p);
}

static void test_bad_files(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct xg_tls_conf c = {
        .server = true, .cert = "/nonexistent/x.crt", .key = "/nonexistent/x.key"};
    assert_null(xg_tls_ctx_new(&c, &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/x.crt"));
    struct xg_tls_conf c2 = {.server = false, .verify = true};
    assert_null(xg_tls_ctx_new(&c2, &err));
    assert_non_null(strstr(err.msg, "CA"));
    NEED_CERTS(); /* the rest needs the generated files */
    struct xg_tls_conf c3 = {.server = true, .cert = path("server.crt"), .key = path("client.key")};
    assert_null(xg_tls_ctx_new(&c3, &err));
    assert_non_null(strstr(err.msg, "does not match"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_record_in_the_kernel_at_write),
        cmocka_unit_test(test_wrong_ca),
        cmocka_unit_test(test_wrong_name),
        cmocka_unit_test(test_missing_client_cert),
        cmocka_unit_test(test_bad_files),
    };
    return xg_test_exit(cmocka_run_group_tests(tests, make_certs, remove_certs));
}
