/* Unit tests for core/util/wire (bounded reader/writer) and core/util/float16. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/util/float16.h"
#include "core/util/wire.h"

static void test_f16_vectors(void **state)
{
    (void)state;
    assert_int_equal(xg_f16_from_float(1.0f), 0x3C00);
    assert_int_equal(xg_f16_from_float(0.5f), 0x3800);
    assert_int_equal(xg_f16_from_float(-0.5f), 0xB800);
    assert_int_equal(xg_f16_from_float(7.0f), 0x4700);
    assert_int_equal(xg_f16_from_float(0.056f), 0x2B2B);
    assert_int_equal(xg_f16_from_float(65504.0f), 0x7BFF);
    assert_int_equal(xg_f16_from_float(0.0f), 0x0000);
    assert_int_equal(xg_f16_from_float(-0.0f), 0x8000);
    /* round back */
    assert_true(xg_f16_to_float(0x3C00) == 1.0f);
    assert_true(xg_f16_to_float(0x7BFF) == 65504.0f);
    assert_true(xg_f16_to_float(0xB800) == -0.5f);
    assert_true(xg_f16_to_float(0x2B2B) == 0.055999755859375f);
}

static void test_f16_overflow_nan(void **state)
{
    (void)state;
    /* 65520 is the midpoint between 65504 and 65536 (=Inf after rounding): ties to even -> Inf */
    assert_int_equal(xg_f16_from_float(65520.0f), 0x7C00);
    assert_int_equal(xg_f16_from_float(65519.0f), 0x7BFF);
    assert_int_equal(xg_f16_from_float(1e9f), 0x7C00);
    assert_int_equal(xg_f16_from_float(-1e9f), 0xFC00);
    assert_int_equal(xg_f16_from_float(INFINITY), 0x7C00);
    assert_int_equal(xg_f16_from_float(-INFINITY), 0xFC00);
    uint16_t n = xg_f16_from_float(NAN);
    assert_int_equal(n & 0x7C00, 0x7C00);
    assert_true((n & 0x03FF) != 0);
    assert_true(isnan(xg_f16_to_float(0x7E00)));
    assert_true(isinf(xg_f16_to_float(0x7C00)));
}

static void test_f16_subnormal_and_ties(void **state)
{
    (void)state;
    float min_sub = ldexpf(1.0f, -24); /* 0x0001 */
    assert_int_equal(xg_f16_from_float(min_sub), 0x0001);
    assert_true(xg_f16_to_float(0x0001) == min_sub);
    assert_true(xg_f16_to_float(0x03FF) == ldexpf(1023.0f, -24)); /* largest subnormal */
    assert_int_equal(xg_f16_from_float(ldexpf(1023.0f, -24)), 0x03FF);
    assert_int_equal(xg_f16_from_float(ldexpf(1.0f, -14)), 0x0400); /* smallest normal */
    /* half of the smallest subnormal is a tie: rounds to even (0) */
    assert_int_equal(xg_f16_from_float(ldexpf(1.0f, -25)), 0x0000);
    /* 1.5 × min_sub is a tie between 1 and 2: rounds to even (2) */
    assert_int_equal(xg_f16_from_float(ldexpf(3.0f, -25)), 0x0002);
    /* just above half of min_sub rounds up */
    assert_int_equal(xg_f16_from_float(ldexpf(1.0f, -25) * 1.0001f), 0x0001);
    assert_int_equal(xg_f16_from_float(ldexpf(1.0f, -30)), 0x0000);
    /* normal ties: 1 + 2^-11 is halfway between 1.0 (0x3C00, even) and 1+2^-10 (0x3C01) */
    assert_int_equal(xg_f16_from_float(1.0f + ldexpf(1.0f, -11)), 0x3C00);
    /* 1 + 3·2^-11 is halfway between 0x3C01 (odd) and 0x3C02 (even) */
    assert_int_equal(xg_f16_from_float(1.0f + 3.0f * ldexpf(1.0f, -11)), 0x3C02);
    /* every half value round-trips exactly */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) continue; /* NaN */
        assert_int_equal(xg_f16_from_float(xg_f16_to_float((uint16_t)h)), h);
    }
}

static void test_reader_bounds(void **state)
{
    (void)state;
    const uint8_t buf[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x3C, 0x00};
    struct xg_reader r;
    xg_reader_init(&r, buf, sizeof buf);
    assert_int_equal(xg_read_be16(&r), 0x0102);
    assert_int_equal(xg_read_le16(&r), 0x0403);
    assert_int_equal(xg_read_be32(&r), 0x05060708);
    assert_true(xg_read_bef16(&r) == 1.0f);
    assert_int_equal(r.err, 0);
    assert_int_equal(xg_reader_left(&r), 0);
    assert_int_equal(xg_read_u8(&r), 0);
    assert_int_equal(r.err, -EMSGSIZE);
    /* sticky: later reads fail even if they would fit the original buffer */
    xg_reader_init(&r, buf, 3);
    assert_int_equal(xg_read_be32(&r), 0);
    assert_int_equal(r.err, -EMSGSIZE);
    assert_int_equal(xg_read_u8(&r), 0);
    assert_null(xg_read_bytes(&r, 1));
    /* huge lengths do not wrap */
    xg_reader_init(&r, buf, sizeof buf);
    xg_read_u8(&r);
    assert_int_equal(xg_read_skip(&r, SIZE_MAX), -EMSGSIZE);
    /* sub-reader */
    struct xg_reader sub;
    xg_reader_init(&r, buf, sizeof buf);
    assert_int_equal(xg_read_sub(&r, 4, &sub), 0);
    assert_int_equal(xg_read_be32(&sub), 0x01020304);
    assert_int_equal(xg_read_u8(&sub), 0);
    assert_int_equal(sub.err, -EMSGSIZE);
    assert_int_equal(r.err, 0);
    assert_int_equal(xg_read_u8(&r), 5);
}

static void test_writer_roundtrip(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    xg_write_be16(&w, 0xABCD);
    xg_write_le32(&w, 0x11223344);
    xg_write_bef64(&w, -1.25);
    xg_write_lef32(&w, 3.5f);
    xg_write_be64(&w, UINT64_C(0x0102030405060708));
    xg_write_bef16(&w, 0.5f);
    assert_int_equal(w.err, 0);
    assert_int_equal(w.len, 2 + 4 + 8 + 4 + 8 + 2);
    const uint8_t expect_head[] = {0xAB, 0xCD, 0x44, 0x33, 0x22, 0x11, 0xBF,
                                   0xF4, 0,    0,    0,    0,    0,    0};
    assert_memory_equal(buf, expect_head, sizeof expect_head);
    struct xg_reader r;
    xg_reader_init(&r, buf, w.len);
    assert_int_equal(xg_read_be16(&r), 0xABCD);
    assert_int_equal(xg_read_le32(&r), 0x11223344);
    assert_true(xg_read_bef64(&r) == -1.25);
    assert_true(xg_read_lef32(&r) == 3.5f);
    assert_true(xg_read_be64(&r) == UINT64_C(0x0102030405060708));
    assert_int_equal(xg_read_be16(&r), 0x3800);
    assert_int_equal(r.err, 0);

    /* overflow is sticky and writes nothing */
    uint8_t small[3];
    xg_writer_init(&w, small, sizeof small);
    assert_int_equal(xg_write_be16(&w, 1), 0);
    assert_int_equal(xg_write_be16(&w, 2), -EMSGSIZE);
    assert_int_equal(w.len, 2);
    assert_int_equal(xg_write_u8(&w, 3), -EMSGSIZE);
    assert_int_equal(xg_write_be16_at(&w, 0, 0xFFFF), -EMSGSIZE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_vectors),
        cmocka_unit_test(test_f16_overflow_nan),
        cmocka_unit_test(test_f16_subnormal_and_ties),
        cmocka_unit_test(test_reader_bounds),
        cmocka_unit_test(test_writer_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
