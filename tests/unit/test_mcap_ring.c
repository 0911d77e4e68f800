/* The recorder's lock-free queue (adapters/mcap/mcap_ring.h): records come out in order and
 * intact across the wrap-around of the buffer, a full ring refuses a record without writing,
 * released space is reused, records written together are published together, and a producer
 * and a consumer thread pass 50,000 records of varying length through a 256-byte ring. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/mcap/mcap_ring.h"

static void fill(uint8_t *p, size_t n, uint32_t seq)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seq * 31u + i);
}

static void test_wrap_and_full(void **state)
{
    (void)state;
    struct mcap_ring q;
    assert_int_equal(mcap_ring_init(&q, 64), 0);
    assert_int_equal(mcap_ring_size(0), 8);
    assert_int_equal(mcap_ring_size(1), 16);
    assert_int_equal(mcap_ring_size(8), 16);
    uint64_t pos, rd = 0;
    uint8_t in[40], out[40];
    uint32_t type;
    size_t len;
    for (uint32_t seq = 0; seq < 50; seq++) { /* 13..21 bytes: the payload wraps now and then */
        size_t n = 13 + seq % 9;
        fill(in, n, seq);
        assert_true(mcap_ring_reserve(&q, mcap_ring_size(n), &pos));
        mcap_ring_put(&q, &pos, seq, in, n);
        assert_false(mcap_ring_get(&q, &rd, &type, out, sizeof out, &len)); /* not published */
        mcap_ring_publish(&q, pos);
        assert_true(mcap_ring_get(&q, &rd, &type, out, sizeof out, &len));
        assert_int_equal(type, seq);
        assert_int_equal(len, n);
        assert_memory_equal(in, out, n);
        mcap_ring_release(&q, rd);
        assert_int_equal(mcap_ring_used(&q), 0);
    }
    /* full: 64 bytes = two records of 24 + one of 16; the next is refused */
    assert_true(mcap_ring_reserve(&q, 24 + 24 + 16, &pos));
    mcap_ring_put(&q, &pos, 1, in, 16);
    mcap_ring_put(&q, &pos, 2, in, 16);
    mcap_ring_put(&q, &pos, 3, in, 8);
    mcap_ring_publish(&q, pos);
    assert_int_equal(mcap_ring_used(&q), 64);
    assert_false(mcap_ring_reserve(&q, 8, &pos));
    assert_false(mcap_ring_reserve(&q, 72, &pos));            /* larger than the ring */
    assert_true(mcap_ring_get(&q, &rd, &type, out, 4, &len)); /* cut to 4, length told */
    assert_int_equal(type, 1);
    assert_int_equal(len, 16);
    assert_false(mcap_ring_reserve(&q, 24, &pos)); /* read but not released */
    mcap_ring_release(&q, rd);
    assert_true(mcap_ring_reserve(&q, 24, &pos));
    mcap_ring_free(&q);
}

#define N_RECORDS 50000u

static void *consumer(void *arg)
{
    struct mcap_ring *q = arg;
    uint64_t rd = 0;
    uint8_t out[64], want[64];
    uintptr_t bad = 0;
    for (uint32_t seq = 0; seq < N_RECORDS;) {
        uint32_t type;
        size_t len;
        if (!mcap_ring_get(q, &rd, &type, out, sizeof out, &len)) continue;
        fill(want, len, seq);
        if (type != seq || len != seq % 41 || memcmp(out, want, len)) bad++;
        seq++;
        if (seq % 3 == 0) mcap_ring_release(q, rd);
    }
    mcap_ring_release(q, rd);
    return (void *)bad;
}

static void test_threads(void **state)
{
    (void)state;
    struct mcap_ring q;
    assert_int_equal(mcap_ring_init(&q, 256), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, consumer, &q), 0);
    uint8_t in[64];
    uint64_t refused = 0;
    for (uint32_t seq = 0; seq < N_RECORDS;) {
        size_t n = seq % 41;
        uint64_t pos;
        if (!mcap_ring_reserve(&q, mcap_ring_size(n), &pos)) {
            refused++;
            continue;
        }
        fill(in, n, seq);
        mcap_ring_put(&q, &pos, seq, in, n);
        mcap_ring_publish(&q, pos);
        seq++;
    }
    void *bad;
    assert_int_equal(pthread_join(th, &bad), 0);
    assert_int_equal((uintptr_t)bad, 0);
    assert_int_equal(mcap_ring_used(&q), 0);
    print_message("%llu reservations refused (ring full) on the way\n",
                  (unsigned long long)refused);
    mcap_ring_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrap_and_full),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
