/* libFuzzer target for the whole admin HTTP request path: raw request bytes (method, target,
 * headers, query, body) go over a loopback TCP connection into a real gateway's evhttp server
 * (gateway/admin.c with its connection tracker, Host check, token rules, inspector and API
 * handlers) on a small table (the synth adapter's 6 entities). The first input byte selects the
 * token mode: bit 0 set = a token ("fuzz-token") is configured, clear = none (the Host check
 * applies). Each input is answered or refused, the connection is closed and freed, and nothing
 * may crash, leak or hang (the event loop runs at most ~200 ms per input; a /events stream is
 * cut there). Seeds: tests/fuzz/seeds/fuzz_admin/. */
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock/clock.h"
#include "core/util/log.h"
#include "gateway/admin_conn.h"
#include "gateway/gateway.h"

static const char CONFIG[] = "gateway:\n"
                             "  id: fuzz\n"
                             "  admin:\n"
                             "    listen: \"127.0.0.1:0\"\n"
                             "    request_timeout_ms: 1000\n"
                             "adapters:\n"
                             "  - name: demo\n"
                             "    type: synth\n";

static struct xg_gateway gw;
static int admin_port;

static void loop_once(void)
{
    event_base_loop(gw.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
}

static void setup(void)
{
    xg_log_set_level(XG_LOG_ERROR);
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = CONFIG, .config_name = "fuzz_admin.yaml"};
    if (xg_gateway_load(&gw, &o, &err) || xg_gateway_start(&gw, &err)) {
        fprintf(stderr, "fuzz_admin: cannot start the gateway: %s\n", err.msg);
        abort();
    }
    const char *colon = strrchr(gw.admin_bound, ':');
    admin_port = colon ? atoi(colon + 1) : 0;
    if (admin_port <= 0) abort();
    /* let the synth fill the table */
    int64_t until = xg_clock_mono_ns() + 50 * XG_NS_PER_MS;
    while (xg_clock_mono_ns() < until)
        loop_once();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) {
        setup();
        once = 1;
    }
    if (size < 1) return 0;
    snprintf(gw.conf.admin_token, sizeof gw.conf.admin_token, "%s",
             data[0] & 1 ? "fuzz-token" : "");
    data++;
    size--;

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) abort();
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)admin_port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) && errno != EINPROGRESS) abort();
    size_t sent = 0;
    bool eof = false, shut = false;
    int64_t deadline = xg_clock_mono_ns() + 200 * XG_NS_PER_MS;
    char buf[65536];
    while (!eof && xg_clock_mono_ns() < deadline) {
        loop_once();
        if (sent < size) {
            ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) sent += (size_t)n;
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN) {
                eof = true; /* the server closed (e.g. a refused request) */
                break;
            }
        } else if (!shut) {
            shutdown(fd, SHUT_WR);
            shut = true;
        }
        ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN))
            eof = true;
    }
    close(fd);
    /* the server side must let go of the connection */
    int64_t until = xg_clock_mono_ns() + 2000 * XG_NS_PER_MS;
    while (xg_admin_conn_stats(&gw).open > 0 && xg_clock_mono_ns() < until)
        loop_once();
    if (xg_admin_conn_stats(&gw).open > 0) {
        fprintf(stderr, "fuzz_admin: a closed connection is still open on the server\n");
        abort();
    }
    return 0;
}
