/* Unit tests for adapters/rtp/gamestate_codec, primitives: VarUInt/VarInt and the scalar, string,
 * blob, Boolean and quaternion encodings of draft-jennings-dispatch-game-state-over-rtp-01.
 * Golden vectors: test_rtp_gamestate_vectors.c; packets and round trips:
 * test_rtp_gamestate_packets.c. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/test_rtp_gamestate.h"

/* ---- VarUInt / VarInt (wire-rules §4) ---- */

static const struct {
    uint64_t v;
    const char *hex;
} varuint_vectors[] = {
    {0, "00"},
    {63, "3F"},
    {64, "40"},
    {127, "7F"},
    {128, "80 80"},
    {8191, "9F FF"},
    {8192, "A0 00"},
    {16383, "BF FF"},
    {16384, "C0 40 00"},
    {1048575, "CF FF FF"},
    {1048576, "D0 00 00"},
    {2097151, "DF FF FF"},
    {2097152, "E1 00 20 00 00"},
    {2147483647u, "E1 7F FF FF FF"},
    {2147483648u, "E1 80 00 00 00"},
    {4294967295u, "E1 FF FF FF FF"},
    {4294967296ull, "E2 00 00 00 01 00 00 00 00"},
    {UINT64_MAX, "E2 FF FF FF FF FF FF FF FF"},
};

static void test_varuint_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof varuint_vectors / sizeof varuint_vectors[0]; i++) {
        struct buf want = {.n = 0}, got = {.n = 0};
        hex(&want, varuint_vectors[i].hex);
        struct xg_writer w;
        xg_writer_init(&w, got.b, sizeof got.b);
        assert_int_equal(rtp_gs_write_varuint(&w, varuint_vectors[i].v), 0);
        got.n = w.len;
        assert_bytes(&got, &want);
        assert_int_equal(rtp_gs_varuint_size(varuint_vectors[i].v), want.n);
        struct xg_reader r;
        xg_reader_init(&r, want.b, want.n);
        uint64_t v = 1;
        assert_int_equal(rtp_gs_read_varuint(&r, &v, "test", NULL), 0);
        assert_true(v == varuint_vectors[i].v);
        assert_int_equal(r.off, want.n);
    }
}

static const struct {
    int64_t v;
    const char *hex;
} varint_vectors[] = {
    {0, "00"},
    {1, "01"},
    {-1, "7F"},
    {63, "3F"},
    {-64, "40"},
    {64, "80 40"},
    {-65, "BF BF"},
    {8191, "9F FF"},
    {-8192, "A0 00"},
    {8192, "C0 20 00"},
    {-8193, "DF DF FF"},
    {1048575, "CF FF FF"},
    {-1048576, "D0 00 00"},
    {1048576, "E1 00 10 00 00"},
    {-1048577, "E1 FF EF FF FF"},
    {INT32_MIN, "E1 80 00 00 00"},
    {2147483648ll, "E2 00 00 00 00 80 00 00 00"},
    {-2147483649ll, "E2 FF FF FF FF 7F FF FF FF"},
    {INT64_MIN, "E2 80 00 00 00 00 00 00 00"},
    {INT64_MAX, "E2 7F FF FF FF FF FF FF FF"},
};

static void test_varint_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof varint_vectors / sizeof varint_vectors[0]; i++) {
        struct buf want = {.n = 0}, got = {.n = 0};
        hex(&want, varint_vectors[i].hex);
        struct xg_writer w;
        xg_writer_init(&w, got.b, sizeof got.b);
        assert_int_equal(rtp_gs_write_varint(&w, varint_vectors[i].v), 0);
        got.n = w.len;
        assert_bytes(&got, &want);
        assert_int_equal(rtp_gs_varint_size(varint_vectors[i].v), want.n);
        struct xg_reader r;
        xg_reader_init(&r, want.b, want.n);
        int64_t v = 12345;
        assert_int_equal(rtp_gs_read_varint(&r, &v, "test", NULL), 0);
        assert_true(v == varint_vectors[i].v);
        assert_int_equal(r.off, want.n);
    }
}

/* Decision D8: non-minimal forms are accepted. */
static void test_varuint_nonminimal_accepted(void **state)
{
    (void)state;
    static const struct {
        const char *hex;
        uint64_t v;
    } cases[] = {
        {"80 05", 5},
        {"C0 00 7F", 127},
        {"E1 00 00 00 80", 128},
        {"E2 00 00 00 00 00 00 00 01", 1},
        {"E2 00 00 00 00 FF FF FF FF", 4294967295u},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf b = {.n = 0};
        hex(&b, cases[i].hex);
        struct xg_reader r;
        xg_reader_init(&r, b.b, b.n);
        uint64_t v = 0;
        assert_int_equal(rtp_gs_read_varuint(&r, &v, "x", NULL), 0);
        assert_true(v == cases[i].v);
    }
    /* VarInt: 80 05 is +5 (bit 13 clear), BF FF is -1 in the 2-byte form. */
    struct buf b = {.n = 0};
    hex(&b, "BF FF");
    struct xg_reader r;
    xg_reader_init(&r, b.b, b.n);
    int64_t s = 0;
    assert_int_equal(rtp_gs_read_varint(&r, &s, "x", NULL), 0);
    assert_true(s == -1);
}

static void test_varuint_rejects_and_truncation(void **state)
{
    (void)state;
    const uint8_t bad[] = {0xE0, 0xE3, 0xE4, 0xEF, 0xF0, 0xFE, 0xFF};
    for (size_t i = 0; i < sizeof bad; i++) {
        uint8_t b[9] = {bad[i], 0, 0, 0, 0, 0, 0, 0, 0};
        struct xg_reader r;
        struct xg_error err = {0};
        xg_reader_init(&r, b, sizeof b);
        uint64_t v = 7;
        assert_int_equal(rtp_gs_read_varuint(&r, &v, "objectID", &err), -EPROTO);
        assert_true(v == 0);
        char want[64];
        snprintf(want, sizeof want, "first byte 0x%02X", bad[i]);
        assert_non_null(strstr(err.msg, want));
        assert_non_null(strstr(err.msg, "objectID"));
        int64_t s = 7;
        xg_reader_init(&r, b, sizeof b);
        assert_int_equal(rtp_gs_read_varint(&r, &s, "buttons", &err), -EPROTO);
        assert_non_null(strstr(err.msg, "buttons"));
    }
    /* Truncated forms: never read past the end, report -EMSGSIZE. */
    static const char *trunc[] = {"", "80", "C0 00", "E1 00 00 00", "E2 00 00 00 00 00 00 00"};
    for (size_t i = 0; i < sizeof trunc / sizeof trunc[0]; i++) {
        struct buf b = {.n = 0};
        hex(&b, trunc[i]);
        uint8_t *copy = malloc(b.n ? b.n : 1);
        memcpy(copy, b.b, b.n);
        struct xg_reader r;
        struct xg_error err = {0};
        xg_reader_init(&r, copy, b.n);
        uint64_t v = 9;
        assert_int_equal(rtp_gs_read_varuint(&r, &v, "Length", &err), -EMSGSIZE);
        assert_true(v == 0);
        assert_non_null(strstr(err.msg, "Length"));
        free(copy);
    }
}

/* ---- Primitives ---- */

static void test_float16_and_scalars(void **state)
{
    (void)state;
    /* §7.2 spot values and §7.1 scalars. */
    assert_int_equal(rtp_gs_f16_bits(1.0f), 0x3C00);
    assert_int_equal(rtp_gs_f16_bits(0.5f), 0x3800);
    assert_int_equal(rtp_gs_f16_bits(-0.5f), 0xB800);
    assert_int_equal(rtp_gs_f16_bits(7.0f), 0x4700);
    assert_int_equal(rtp_gs_f16_bits(4.0f), 0x4400);
    assert_int_equal(rtp_gs_f16_bits(5.0f), 0x4500);
    assert_int_equal(rtp_gs_f16_bits(6.0f), 0x4600);
    assert_int_equal(rtp_gs_f16_bits(0.056f), 0x2B2B);
    assert_int_equal(rtp_gs_f16_bits(1e-8f), 0x0000);
    assert_int_equal(rtp_gs_f16_bits(3.14f), 0x4248);
    assert_int_equal(rtp_gs_f16_bits(-1.0f), 0xBC00);
    assert_int_equal(rtp_gs_f16_bits(65504.0f), 0x7BFF);
    /* Round-to-nearest-even (D7): 1 + 2^-11 is a tie between 0x3C00 and 0x3C01 → even. */
    assert_int_equal(rtp_gs_f16_bits(1.0f + ldexpf(1.0f, -11)), 0x3C00);
    assert_int_equal(rtp_gs_f16_bits(1.0f + 3 * ldexpf(1.0f, -11)), 0x3C02);
    /* Overflow → Inf, any NaN → 0x7E00 (§5.1), subnormals kept. */
    assert_int_equal(rtp_gs_f16_bits(1e6f), 0x7C00);
    assert_int_equal(rtp_gs_f16_bits(-1e6f), 0xFC00);
    assert_int_equal(rtp_gs_f16_bits(NAN), 0x7E00);
    assert_int_equal(rtp_gs_f16_bits(-NAN), 0x7E00);
    uint32_t nanbits = 0x7F800001u; /* signalling NaN with a low payload */
    float snan;
    memcpy(&snan, &nanbits, 4);
    assert_int_equal(rtp_gs_f16_bits(snan), 0x7E00);
    assert_int_equal(rtp_gs_f16_bits(ldexpf(1.0f, -24)), 0x0001);

    uint8_t out[64];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    rtp_gs_write_f16(&w, 3.14f);
    xg_write_bef32(&w, 3.14159265f);
    xg_write_bef64(&w, M_PI);
    xg_write_be32(&w, 0xDEADBEEFu);
    assert_int_equal(w.err, 0);
    struct buf got = {.n = 0}, want = {.n = 0};
    memcpy(got.b, out, w.len);
    got.n = w.len;
    hex(&want, "42 48 40 49 0F DB 40 09 21 FB 54 44 2D 18 DE AD BE EF");
    assert_bytes(&got, &want);

    /* Time1 = wall ms mod 65536. */
    assert_int_equal(rtp_gs_time1_from_wall_ns(5 * 1000000LL), 5);
    assert_int_equal(rtp_gs_time1_from_wall_ns(65541LL * 1000000LL + 999999), 5);
}

static void test_string_blob(void **state)
{
    (void)state;
    uint8_t out[1100];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rtp_gs_write_bytes(&w, "Hello", 5, NULL), 0);
    struct buf got = {.n = 0}, want = {.n = 0};
    memcpy(got.b, out, w.len);
    got.n = w.len;
    hex(&want, "05 48 65 6C 6C 6F");
    assert_bytes(&got, &want);

    char s134[134], b1000[1000];
    memset(s134, 'a', sizeof s134);
    memset(b1000, 0xAB, sizeof b1000);
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rtp_gs_write_bytes(&w, s134, sizeof s134, NULL), 0);
    assert_int_equal(w.len, 136);
    assert_int_equal(out[0], 0x80);
    assert_int_equal(out[1], 0x86);
    struct xg_reader r;
    struct rtp_gs_bytes bytes;
    xg_reader_init(&r, out, w.len);
    assert_int_equal(rtp_gs_read_bytes(&r, &bytes, RTP_GS_MAX_STRING, true, "s", NULL), 0);
    assert_int_equal(bytes.len, 134);
    assert_memory_equal(bytes.ptr, s134, 134);

    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rtp_gs_write_bytes(&w, b1000, sizeof b1000, NULL), 0);
    assert_int_equal(w.len, 1002);
    assert_int_equal(out[0], 0x83);
    assert_int_equal(out[1], 0xE8);
    xg_reader_init(&r, out, w.len);
    assert_int_equal(rtp_gs_read_bytes(&r, &bytes, RTP_GS_MAX_STRING, false, "blob", NULL), 0);
    assert_int_equal(bytes.len, 1000);
    /* As a String the 0xAB bytes are not UTF-8. */
    struct xg_error err = {0};
    xg_reader_init(&r, out, w.len);
    assert_int_equal(rtp_gs_read_bytes(&r, &bytes, RTP_GS_MAX_STRING, true, "url", &err), -EPROTO);
    assert_non_null(strstr(err.msg, "url: invalid UTF-8 at byte 0"));
    /* Over the maximum, and past the end. */
    xg_reader_init(&r, out, w.len);
    assert_int_equal(rtp_gs_read_bytes(&r, &bytes, 999, false, "blob", &err), -EPROTO);
    assert_non_null(strstr(err.msg, "length 1000"));
    assert_non_null(strstr(err.msg, "exceeds 999"));
    xg_reader_init(&r, out, 500);
    assert_int_equal(rtp_gs_read_bytes(&r, &bytes, RTP_GS_MAX_STRING, false, "blob", &err),
                     -EMSGSIZE);
    assert_null(bytes.ptr);
    /* Overlong UTF-8 (C0 AF) and a surrogate (ED A0 80) are rejected; 4-byte emoji is fine. */
    static const char *utf[][2] = {{"02 C0 AF", "bad"},
                                   {"03 ED A0 80", "bad"},
                                   {"04 F0 9F 98 80", "ok"},
                                   {"03 E2 82 AC", "ok"},
                                   {"02 E2 82", "bad"}};
    for (size_t i = 0; i < 5; i++) {
        struct buf b = {.n = 0};
        hex(&b, utf[i][0]);
        xg_reader_init(&r, b.b, b.n);
        int rc = rtp_gs_read_bytes(&r, &bytes, 100, true, "s", NULL);
        assert_int_equal(rc, strcmp(utf[i][1], "ok") == 0 ? 0 : -EPROTO);
    }
    /* Writer refuses more than the maximum. */
    static char big[RTP_GS_MAX_STRING + 1];
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rtp_gs_write_bytes(&w, big, sizeof big, &err), -EINVAL);
    assert_int_equal(w.len, 0);
}

static void test_bool_strict(void **state)
{
    (void)state;
    const uint8_t b[] = {0x00, 0x01, 0x02, 0xFF};
    struct xg_reader r;
    xg_reader_init(&r, b, sizeof b);
    bool v = true;
    assert_int_equal(rtp_gs_read_bool(&r, &v, "left", NULL), 0);
    assert_false(v);
    assert_int_equal(rtp_gs_read_bool(&r, &v, "left", NULL), 0);
    assert_true(v);
    struct xg_error err = {0};
    assert_int_equal(rtp_gs_read_bool(&r, &v, "left", &err), -EPROTO);
    assert_string_equal(err.msg, "left: Boolean 0x02 at offset 2 is neither 00 nor 01");
    assert_int_equal(rtp_gs_read_bool(&r, &v, "active", &err), -EPROTO);
    assert_non_null(strstr(err.msg, "0xFF"));
    assert_int_equal(rtp_gs_read_bool(&r, &v, "active", &err), -EMSGSIZE);
}

static void test_quat_helpers(void **state)
{
    (void)state;
    const float ijk[3] = {0.0f, 0.6f, 0.0f};
    struct xg_quat q = rtp_gs_quat_from_ijk(ijk);
    assert_float_equal(q.w, 0.8, 1e-6);
    assert_float_equal(q.y, 0.6, 1e-7);
    const float big[3] = {1.0f, 1.0f, 0.0f}; /* non-unit: w clamps to 0 */
    assert_true(rtp_gs_quat_from_ijk(big).w == 0.0);
    float out[3];
    rtp_gs_ijk_from_quat((struct xg_quat){0.1, -0.2, 0.3, -0.927}, out); /* w < 0: negate */
    assert_float_equal(out[0], -0.1f, 1e-7);
    assert_float_equal(out[1], 0.2f, 1e-7);
    assert_float_equal(out[2], -0.3f, 1e-7);
    rtp_gs_ijk_from_quat((struct xg_quat){0.1, -0.2, 0.3, 0.927}, out);
    assert_float_equal(out[0], 0.1f, 1e-7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varuint_vectors),
        cmocka_unit_test(test_varint_vectors),
        cmocka_unit_test(test_varuint_nonminimal_accepted),
        cmocka_unit_test(test_varuint_rejects_and_truncation),
        cmocka_unit_test(test_float16_and_scalars),
        cmocka_unit_test(test_string_blob),
        cmocka_unit_test(test_bool_strict),
        cmocka_unit_test(test_quat_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
