/* vrpn_udp_batch: datagrams queued for one destination leave in sendmmsg calls of at most
 * VRPN_UDP_BATCH, arrive whole and in order; an oversized datagram and a refused send are counted
 * as errors, and the batch is empty after a send either way. Real loopback UDP sockets. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "adapters/vrpn/vrpn_udp_batch.h"

static struct vrpn_udp_batch b; /* ~23 KiB: not on the stack */

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

static void test_batches_of_sixteen(void **state)
{
    (void)state;
    memset(&b, 0, sizeof b);
    struct sockaddr_in to, from;
    int rx = udp_socket(&to), tx = udp_socket(&from);
    const int n = VRPN_UDP_BATCH + 4;
    uint8_t d[VRPN_UDP_MAX];
    for (int i = 0; i < n; i++) {
        memset(d, i, sizeof d);
        vrpn_udp_batch_add(&b, tx, (struct sockaddr *)&to, sizeof to, d, 100 + (size_t)i);
    }
    /* the 17th datagram sent the first 16 in one call; the rest wait for the send */
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.datagrams, VRPN_UDP_BATCH);
    assert_int_equal(b.n, 4);
    vrpn_udp_batch_send(&b, tx, (struct sockaddr *)&to, sizeof to);
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
    vrpn_udp_batch_send(&b, tx, (struct sockaddr *)&to, sizeof to);
    assert_int_equal(b.calls, 2);
    close(rx);
    close(tx);
}

static void test_errors(void **state)
{
    (void)state;
    memset(&b, 0, sizeof b);
    struct sockaddr_in to, from;
    int rx = udp_socket(&to), tx = udp_socket(&from);
    uint8_t d[VRPN_UDP_MAX + 1] = {0};
    vrpn_udp_batch_add(&b, tx, (struct sockaddr *)&to, sizeof to, d, sizeof d); /* too long */
    assert_int_equal(b.errors, 1);
    assert_int_equal(b.n, 0);
    /* a send the kernel refuses (a closed descriptor): both queued datagrams are dropped */
    vrpn_udp_batch_add(&b, tx, (struct sockaddr *)&to, sizeof to, d, 10);
    vrpn_udp_batch_add(&b, tx, (struct sockaddr *)&to, sizeof to, d, 10);
    close(tx);
    vrpn_udp_batch_send(&b, tx, (struct sockaddr *)&to, sizeof to);
    assert_int_equal(b.errors, 3);
    assert_int_equal(b.datagrams, 0);
    assert_int_equal(b.n, 0);
    close(rx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_of_sixteen),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
