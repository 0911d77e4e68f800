/* xg_udp_batch: datagrams queued for one or several destinations leave in sendmmsg calls of at
 * most XG_UDP_BATCH, arrive whole and in order; an oversized datagram and a refused send are
 * counted as errors (a refused destination does not stop the others), and the batch is empty
 * after a send either way. Real loopback UDP sockets. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/net/udp_batch.h"

#define MAXLEN 1472

static struct xg_udp_batch b;

static int udp_socket(struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof *addr;
    assert_int_equal(getsockname(fd, (struct sockaddr *)addr, &len), 0);
    return fd;
}

static void batch_init(void)
{
    memset(&b, 0, sizeof b);
    assert_int_equal(xg_udp_batch_init(&b, MAXLEN), 0);
}

static void test_batches_of_sixteen(void **state)
{
    (void)state;
    batch_init();
    struct sockaddr_in to, from;
    int rx = udp_socket(&to), tx = udp_socket(&from);
    const int n = XG_UDP_BATCH + 4;
    uint8_t d[MAXLEN];
    for (int i = 0; i < n; i++) {
        memset(d, i, sizeof d);
        xg_udp_batch_add(&b, tx, (struct sockaddr *)&to, sizeof to, d, 100 + (size_t)i, 0);
    }
    /* the 17th datagram sent the first 16 in one call; the rest wait for the send */
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.datagrams, XG_UDP_BATCH);
    assert_int_equal(b.n, 4);
    xg_udp_batch_send(&b);
    assert_int_equal(b.calls, 2);
    assert_int_equal(b.n, 0);
    assert_int_equal(b.datagrams, n);
    assert_int_equal(b.errors, 0);
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) {
        uint8_t got[2048];
        ssize_t r = recv(rx, got, sizeof got, MSG_DONTWAIT);
        assert_int_equal(r, 100 + i);
        assert_int_equal(got[0], i);
        assert_int_equal(got[r - 1], i);
        bytes += (uint64_t)r;
    }
    assert_int_equal(b.bytes, bytes);
    /* an empty batch sends nothing */
    xg_udp_batch_send(&b);
    assert_int_equal(b.calls, 2);
    close(rx);
    close(tx);
    xg_udp_batch_free(&b);
}

/* Packets to three destinations, interleaved as the RTP adapter queues them: one call. */
static void test_several_destinations(void **state)
{
    (void)state;
    batch_init();
    struct sockaddr_in to[3], from;
    int rx[3], tx = udp_socket(&from);
    for (int k = 0; k < 3; k++)
        rx[k] = udp_socket(&to[k]);
    uint8_t d[64];
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 3; k++) {
            memset(d, 10 * k + i, sizeof d);
            xg_udp_batch_add(&b, tx, (struct sockaddr *)&to[k], sizeof to[k], d, 20 + (size_t)i, k);
        }
    assert_int_equal(b.calls, 0);
    xg_udp_batch_send(&b);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.datagrams, 15);
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 5; i++) {
            uint8_t got[128];
            ssize_t r = recv(rx[k], got, sizeof got, MSG_DONTWAIT);
            assert_int_equal(r, 20 + i);
            assert_int_equal(got[0], 10 * k + i);
        }
    for (int k = 0; k < 3; k++)
        close(rx[k]);
    close(tx);
    xg_udp_batch_free(&b);
}

static void test_errors(void **state)
{
    (void)state;
    batch_init();
    struct sockaddr_in to, from;
    int rx = udp_socket(&to), tx = udp_socket(&from);
    uint8_t d[MAXLEN + 1] = {0};
    xg_udp_batch_add(&b, tx, (struct sockaddr *)&to, sizeof to, d, sizeof d, 7); /* too long */
    assert_int_equal(b.errors, 1);
    assert_int_equal(b.last_errno, EMSGSIZE);
    assert_int_equal(b.last_tag, 7);
    assert_int_equal(b.n, 0);
    /* a send the kernel refuses (a closed descriptor): both queued datagrams are dropped, with
     * one call (the second goes to the same destination) */
    xg_udp_batch_add(&b, tx, (struct sockaddr *)&to, sizeof to, d, 10, 1);
    xg_udp_batch_add(&b, tx, (struct sockaddr *)&to, sizeof to, d, 10, 1);
    close(tx);
    xg_udp_batch_send(&b);
    assert_int_equal(b.errors, 3);
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.last_errno, EBADF);
    assert_int_equal(b.datagrams, 0);
    assert_int_equal(b.n, 0);
    close(rx);
    xg_udp_batch_free(&b);
}

/* A destination the kernel refuses (an IPv6 address on an IPv4 socket) loses its datagrams; the
 * ones to the good destination before and after it are still delivered. */
static void test_refused_destination_spares_others(void **state)
{
    (void)state;
    batch_init();
    struct sockaddr_in to, from;
    int rx = udp_socket(&to), tx = udp_socket(&from);
    struct sockaddr_in6 bad = {.sin6_family = AF_INET6, .sin6_port = htons(9)};
    bad.sin6_addr = in6addr_loopback;
    uint8_t d[32] = {0};
    for (int i = 0; i < 3; i++) {
        d[0] = (uint8_t)i;
        xg_udp_batch_add(&b, tx, (struct sockaddr *)&to, sizeof to, d, sizeof d, 0);
        xg_udp_batch_add(&b, tx, (struct sockaddr *)&bad, sizeof bad, d, sizeof d, 1);
    }
    xg_udp_batch_send(&b);
    assert_int_equal(b.datagrams, 3);
    assert_int_equal(b.errors, 3);
    assert_int_equal(b.last_tag, 1);
    assert_true(b.last_errno != 0);
    /* call 1 sends the first and stops at the bad one, call 2 fails on it (its three are
     * dropped), call 3 sends the remaining two good ones */
    assert_int_equal(b.calls, 3);
    for (int i = 0; i < 3; i++) {
        uint8_t got[64];
        assert_int_equal(recv(rx, got, sizeof got, MSG_DONTWAIT), (ssize_t)sizeof d);
        assert_int_equal(got[0], i);
    }
    close(rx);
    close(tx);
    xg_udp_batch_free(&b);
}

/* With IP_RECVERR, the ICMP port unreachable for a datagram to a closed port fails the next send
 * on the socket, whatever its destination: retry_icmp sends that datagram again. */
static void icmp_then_live(bool retry, uint64_t want_sent, uint64_t want_errors)
{
    batch_init();
    b.retry_icmp = retry;
    struct sockaddr_in live, dead, from;
    int rx = udp_socket(&live), tx = udp_socket(&from), gone = udp_socket(&dead);
    close(gone); /* nothing listens at `dead` now */
    int on = 1;
    assert_int_equal(setsockopt(tx, IPPROTO_IP, IP_RECVERR, &on, sizeof on), 0);
    uint8_t d[16] = {42};
    xg_udp_batch_add(&b, tx, (struct sockaddr *)&dead, sizeof dead, d, sizeof d, 0);
    xg_udp_batch_send(&b); /* sent; loopback answers with ICMP port unreachable at once */
    assert_int_equal(b.datagrams, 1);
    xg_udp_batch_add(&b, tx, (struct sockaddr *)&live, sizeof live, d, sizeof d, 1);
    xg_udp_batch_send(&b);
    assert_int_equal(b.datagrams, want_sent);
    assert_int_equal(b.errors, want_errors);
    uint8_t got[64];
    ssize_t r = recv(rx, got, sizeof got, MSG_DONTWAIT);
    assert_int_equal(r, want_sent == 2 ? (ssize_t)sizeof d : -1);
    if (!retry) {
        assert_int_equal(b.last_errno, ECONNREFUSED);
        assert_int_equal(b.last_tag, 1);
    }
    close(rx);
    close(tx);
    xg_udp_batch_free(&b);
}

static void test_icmp_retry(void **state)
{
    (void)state;
    icmp_then_live(true, 2, 0);  /* retried: the live destination gets it */
    icmp_then_live(false, 1, 1); /* without retry_icmp the pending error costs the datagram */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_of_sixteen),
        cmocka_unit_test(test_several_destinations),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_refused_destination_spares_others),
        cmocka_unit_test(test_icmp_retry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
