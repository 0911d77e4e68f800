/* Unit tests for the RTCP the rtp adapter sends (rtcp_out.h): the exact bytes of the compound
 * report, BYE and FIR (RFC 3550 §6.1: SR/RR first, then SDES CNAME; RFC 4585 §3.1), that each
 * parses back as a valid compound, atomic writes, and the randomised interval over
 * [0.5, 1.5) x T (RFC 3550 §6.3.1) with an injected, seeded generator (no clock). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "adapters/rtp/rtcp_out.h"

static const struct rtcp_self SENDER = {.ssrc = 0x11223344,
                                        .sender = true,
                                        .ntp = UINT64_C(0x0102030405060708),
                                        .rtp_ts = 0x0A0B0C0D,
                                        .packet_count = 5,
                                        .octet_count = 100,
                                        .cname = "ab"};

static const uint8_t SR[28] = {0x80, 0xC8, 0x00, 0x06, 0x11, 0x22, 0x33, 0x44, 0x01, 0x02,
                               0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0A, 0x0B, 0x0C, 0x0D,
                               0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x64};
static const uint8_t RR[8] = {0x80, 0xC9, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44};
static const uint8_t SDES[16] = {0x81, 0xCA, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44,
                                 0x01, 0x02, 0x61, 0x62, 0x00, 0x00, 0x00, 0x00};

static void expect_bytes(const uint8_t *got, size_t n, const uint8_t *want, size_t wn)
{
    if (n != wn) fail_msg("length %zu, want %zu", n, wn);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("byte %zu: %02X, want %02X", i, got[i], want[i]);
}

/* The compound must iterate cleanly, SR or RR first, SDES second, then `last_pt` (or none). */
static void expect_compound(const uint8_t *buf, size_t len, int first_pt, int last_pt)
{
    struct rtcp_iter it;
    struct rtcp_packet p;
    struct xg_error err = {0};
    int pts[4], n = 0, rc;
    rtcp_iter_init(&it, buf, len);
    while ((rc = rtcp_iter_next(&it, &p, &err)) == RTCP_PACKET && n < 4)
        pts[n++] = p.pt;
    assert_int_equal(rc, RTCP_END);
    assert_true(n >= 2);
    assert_int_equal(pts[0], first_pt);
    assert_int_equal(pts[1], RTCP_SDES);
    if (last_pt) {
        assert_int_equal(n, 3);
        assert_int_equal(pts[2], last_pt);
    } else {
        assert_int_equal(n, 2);
    }
}

static void test_compound_report(void **state)
{
    (void)state;
    uint8_t buf[256], want[64];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(rtcp_write_compound_report(&w, &SENDER, NULL), 0);
    memcpy(want, SR, 28);
    memcpy(want + 28, SDES, 16);
    expect_bytes(buf, w.len, want, 44);
    expect_compound(buf, w.len, RTCP_SR, 0);
    /* not a sender yet: an RR with no report blocks */
    struct rtcp_self me = SENDER;
    me.sender = false;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(rtcp_write_compound_report(&w, &me, NULL), 0);
    memcpy(want, RR, 8);
    memcpy(want + 8, SDES, 16);
    expect_bytes(buf, w.len, want, 24);
    expect_compound(buf, w.len, RTCP_RR, 0);
}

/* The BYE on stop: SR + SDES + BYE (it was a lone 8-byte BYE before issue 16 item 5). */
static void test_compound_bye(void **state)
{
    (void)state;
    uint8_t buf[256], want[64];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(rtcp_write_compound_bye(&w, &SENDER, NULL, NULL), 0);
    static const uint8_t BYE[8] = {0x81, 0xCB, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44};
    memcpy(want, SR, 28);
    memcpy(want + 28, SDES, 16);
    memcpy(want + 44, BYE, 8);
    expect_bytes(buf, w.len, want, 52);
    expect_compound(buf, w.len, RTCP_SR, RTCP_BYE);
}

/* The FIR to a new SSRC: RR (a receive-only adapter has sent no RTP) + SDES + FIR (it was a bare
 * 20-byte FIR before). */
static void test_compound_fir(void **state)
{
    (void)state;
    uint8_t buf[256], want[64];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    struct rtcp_self me = SENDER;
    me.sender = false;
    struct rtcp_fir_entry e = {.ssrc = 0xDEADBEEF, .seq = 7};
    assert_int_equal(rtcp_write_compound_fir(&w, &me, &e, NULL), 0);
    static const uint8_t FIR[20] = {0x84, 0xCE, 0x00, 0x04, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00,
                                    0x00, 0x00, 0xDE, 0xAD, 0xBE, 0xEF, 0x07, 0x00, 0x00, 0x00};
    memcpy(want, RR, 8);
    memcpy(want + 8, SDES, 16);
    memcpy(want + 24, FIR, 20);
    expect_bytes(buf, w.len, want, 44);
    expect_compound(buf, w.len, RTCP_RR, RTCP_PSFB);
}

/* A writer too small for the whole compound keeps nothing of it. */
static void test_compound_atomic(void **state)
{
    (void)state;
    uint8_t buf[48];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf); /* SR + SDES fit (44), the BYE does not */
    xg_write_u8(&w, 0xAA);
    struct xg_error err = {0};
    assert_int_equal(rtcp_write_compound_bye(&w, &SENDER, NULL, &err), -EMSGSIZE);
    assert_int_equal(w.len, 1);
    assert_int_equal(w.err, 0);
    struct rtcp_self bad = SENDER;
    bad.cname = "";
    assert_int_equal(rtcp_write_compound_report(&w, &bad, &err), -EINVAL);
    assert_int_equal(w.len, 1);
}

static void test_interval_bounds(void **state)
{
    (void)state;
    const int64_t T = INT64_C(5000000000); /* 5 s */
    assert_true(rtcp_interval_ns(T, 0) == T / 2);
    assert_true(rtcp_interval_ns(T, UINT32_C(0x80000000)) == T);
    int64_t top = rtcp_interval_ns(T, UINT32_MAX);
    assert_true(top < T + T / 2 && top >= T + T / 2 - 2);
    assert_true(rtcp_interval_ns(0, 12345) == 0);
    /* a long interval does not overflow: 3600 s */
    int64_t h = INT64_C(3600000000000);
    assert_true(rtcp_interval_ns(h, UINT32_MAX) > h && rtcp_interval_ns(h, UINT32_MAX) < h * 3 / 2);
}

/* 100 000 intervals from a seeded generator: all in [0.5, 1.5) x T, mean T within 0.5 %, and
 * each tenth of the range holds 10 % (+- 0.6 %) of them: uniform, not a constant. */
static void test_interval_distribution(void **state)
{
    (void)state;
    const int64_t T = INT64_C(1000000000);
    const int N = 100000;
    uint64_t rng = 42;
    int bins[10] = {0};
    double sum = 0;
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < N; i++) {
        int64_t v = rtcp_interval_ns(T, rtcp_rand32(&rng));
        assert_true(v >= T / 2 && v < T + T / 2);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        sum += (double)v;
        bins[(v - T / 2) * 10 / T]++;
    }
    double mean = sum / N;
    if (mean < 0.995 * (double)T || mean > 1.005 * (double)T) fail_msg("mean %g", mean);
    assert_true(lo < T / 2 + T / 1000 && hi > T + T / 2 - T / 1000);
    for (int b = 0; b < 10; b++)
        if (bins[b] < N / 10 - 600 || bins[b] > N / 10 + 600)
            fail_msg("tenth %d holds %d of %d", b, bins[b], N);
    /* the same seed gives the same sequence (tests may inject one) */
    uint64_t a = 7, b = 7;
    for (int i = 0; i < 10; i++)
        assert_int_equal(rtcp_rand32(&a), rtcp_rand32(&b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compound_report), cmocka_unit_test(test_compound_bye),
        cmocka_unit_test(test_compound_fir),    cmocka_unit_test(test_compound_atomic),
        cmocka_unit_test(test_interval_bounds), cmocka_unit_test(test_interval_distribution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
