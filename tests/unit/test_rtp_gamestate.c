/* Unit tests for adapters/rtp/gamestate_codec: VarUInt/VarInt, primitives, every object of
 * draft-jennings-dispatch-game-state-over-rtp-01 against the golden vectors in
 * tests/vectors/rtp/, round trips, and the rejection rules. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/test_util.h"

#include "adapters/rtp/gamestate_codec.h"
#include "core/float16.h"

/* ---- helpers ---- */

struct buf {
    uint8_t b[4096];
    size_t n;
};

/* Append hex pairs (other characters ignored) to b. */
static void hex(struct buf *b, const char *s)
{
    b->n += xg_test_unhex(s, b->b + b->n, sizeof b->b - b->n);
}

static void zeros(struct buf *b, size_t n)
{
    assert_true(b->n + n <= sizeof b->b);
    memset(b->b + b->n, 0, n);
    b->n += n;
}

static struct rtp_gs_iter *new_iter(void)
{
    static struct rtp_gs_iter it; /* ~17 KiB of mesh scratch: keep it off the stack */
    return &it;
}

/* Encode obj into out (fresh) and return rc. */
static int enc(const struct rtp_gs_object *obj, struct buf *out, struct xg_error *err)
{
    struct xg_writer w;
    xg_writer_init(&w, out->b, sizeof out->b);
    int rc = rtp_gs_encode_object(&w, obj, err);
    out->n = w.len;
    return rc;
}

static void assert_bytes(const struct buf *got, const struct buf *want)
{
    if (got->n != want->n || memcmp(got->b, want->b, want->n) != 0) {
        fprintf(stderr, "got  (%zu):", got->n);
        for (size_t i = 0; i < got->n; i++)
            fprintf(stderr, " %02X", got->b[i]);
        fprintf(stderr, "\nwant (%zu):", want->n);
        for (size_t i = 0; i < want->n; i++)
            fprintf(stderr, " %02X", want->b[i]);
        fprintf(stderr, "\n");
        fail_msg("byte mismatch");
    }
}

/* Decode exactly one object from a heap copy of exactly its size (ASan catches over-reads). */
static int dec1(const struct buf *in, struct rtp_gs_object *obj, struct xg_error *err)
{
    uint8_t *copy = malloc(in->n ? in->n : 1);
    memcpy(copy, in->b, in->n);
    int rc = rtp_gs_decode_one(new_iter(), copy, in->n, obj, err);
    /* Borrowed pointers into copy are not used by callers after this (they check values). */
    if (obj->type == RTP_GS_UNKNOWN) obj->u.unknown.ptr = NULL;
    if (obj->type == RTP_GS_MESH2) {
        obj->u.mesh2.mesh_url.ptr = NULL;
        obj->u.mesh2.texture_url.ptr = NULL;
    }
    if (obj->type == RTP_GS_MESH1) obj->u.mesh1.texture_url.ptr = NULL;
    free(copy);
    return rc;
}

static uint16_t f16(float f)
{
    return xg_f16_from_float(f);
}
/* What a Float16 field decodes to after encoding f (exact; tolerance is 2^-11 relative). */
static float q16(float f)
{
    return xg_f16_to_float(rtp_gs_f16_bits(f));
}

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

/* ---- Golden vectors (wire-rules §7) ---- */

/* App. C body after objectID+time: Loc2 (1.1, 0.2, 30; v 0) and a zero Rot2. */
static void appc_tail(struct buf *b)
{
    hex(b, "3F 8C CC CD 3E 4C CC CD 41 F0 00 00");
    zeros(b, 18);
}

static struct rtp_gs_object appc_head(uint64_t id, uint16_t t)
{
    struct rtp_gs_object o = {.type = RTP_GS_HEAD1};
    o.u.head1.object_id = id;
    o.u.head1.time = t;
    o.u.head1.loc.p[0] = 1.1f;
    o.u.head1.loc.p[1] = 0.2f;
    o.u.head1.loc.p[2] = 30.0f;
    return o;
}

static void assert_appc_decoded(const struct rtp_gs_object *o, uint64_t id, uint16_t t)
{
    assert_int_equal(o->type, RTP_GS_HEAD1);
    assert_int_equal(o->tag, 1);
    assert_true(o->u.head1.object_id == id);
    assert_int_equal(o->u.head1.time, t);
    assert_true(o->u.head1.loc.p[0] == 1.1f);
    assert_true(o->u.head1.loc.p[1] == 0.2f);
    assert_true(o->u.head1.loc.p[2] == 30.0f);
    for (int i = 0; i < 3; i++) {
        assert_true(o->u.head1.loc.v[i] == 0.0f);
        assert_true(o->u.head1.rot.s[i] == 0.0f);
        assert_true(o->u.head1.rot.e[i] == 0.0f);
    }
}

static void test_head1_vectors(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object o, d;

    /* App. C corrected: id 4, time 5, 35 bytes. */
    struct buf want = {.n = 0}, got;
    hex(&want, "01 21 04 00 05");
    appc_tail(&want);
    assert_int_equal(want.n, 35);
    o = appc_head(4, 5);
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_appc_decoded(&d, 4, 5);
    assert_false(d.u.head1.has_ipd);
    assert_false(d.gse_tag);

    /* + IPD 0.056 (0x2B2B), 40 bytes. */
    want.n = 0;
    hex(&want, "01 26 04 00 05");
    appc_tail(&want);
    hex(&want, "80 82 02 2B 2B");
    assert_int_equal(want.n, 40);
    o.u.head1.has_ipd = true;
    o.u.head1.ipd = 0.056f;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_appc_decoded(&d, 4, 5);
    assert_true(d.u.head1.has_ipd);
    assert_true(d.u.head1.ipd == xg_f16_to_float(0x2B2B));

    /* App. C literal = gse Test_Vector_B1: objectID 0, time 0x0500 = 1280. */
    want.n = 0;
    hex(&want, "01 21 00 05 00");
    appc_tail(&want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_appc_decoded(&d, 0, 1280);
    o = appc_head(0, 1280);
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);

    /* gse Head1 + IPD 3.140625 with the 3-byte sub-tag C0 80 02 (D1). */
    want.n = 0;
    hex(&want, "01 27 00 05 00");
    appc_tail(&want);
    hex(&want, "C0 80 02 02 42 48");
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, want.b, want.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_appc_decoded(&d, 0, 1280);
    assert_true(d.u.head1.has_ipd);
    assert_true(d.u.head1.ipd == 3.140625f);
    assert_true(d.gse_tag);
    assert_int_equal(it->gse_tags, 1);
    struct rtp_gs_object end;
    assert_int_equal(rtp_gs_iter_next(it, &end, &err), RTP_GS_END);
    /* Re-encoding emits the decided tag 80 82 (never the gse form): Length 38. */
    assert_int_equal(enc(&d, &got, &err), 0);
    assert_int_equal(got.n, 40);
    assert_int_equal(got.b[1], 0x26);
    assert_int_equal(got.b[35], 0x80);
    assert_int_equal(got.b[36], 0x82);
}

static void test_headipd_alone_and_unknown_tag(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    /* HeadIPD1 alone (gse form) is a sub-element: at top level it is skipped as unknown,
     * then the unknown tag 0x20 carrying the B1 body, then a real Head1. */
    struct buf p = {.n = 0};
    hex(&p, "C0 80 02 02 42 48");
    hex(&p, "20 21 00 05 00");
    appc_tail(&p);
    hex(&p, "01 21 04 00 05");
    appc_tail(&p);
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, p.b, p.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_int_equal(d.tag, RTP_GS_TAG_HEAD_IPD1);
    assert_true(d.gse_tag);
    assert_int_equal(d.u.unknown.len, 2);
    assert_ptr_equal(d.u.unknown.ptr, p.b + 4);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_int_equal(d.tag, 0x20);
    assert_false(d.gse_tag);
    assert_int_equal(d.u.unknown.len, 33);
    assert_ptr_equal(d.u.unknown.ptr, p.b + 8);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_appc_decoded(&d, 4, 5);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
    assert_int_equal(it->unknown, 2);
    assert_int_equal(it->objects, 1);
    assert_int_equal(it->dropped, 0);
    /* Parent1 (4) and 6DOFpointer1 (136) at top level are unknown objects too. */
    struct buf q = {.n = 0};
    hex(&q, "04 01 1B 80 88 01 00");
    rtp_gs_iter_init(it, q.b, q.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.tag, 4);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.tag, 136);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
}

static void hand_head(struct buf *b)
{
    /* id 12, t 0x0500, left, loc 1.1/0.2/30, vx 3.140625, rot.e.k 3.140625 */
    hex(b, "0C 05 00 01 3F 8C CC CD 3E 4C CC CD 41 F0 00 00 42 48 00 00 00 00 "
           "00 00 00 00 00 00 00 00 00 00 42 48");
}

static void hand_fields(struct rtp_gs_hand1 *h)
{
    h->object_id = 12;
    h->time = 0x0500;
    h->left = true;
    h->loc.p[0] = 1.1f;
    h->loc.p[1] = 0.2f;
    h->loc.p[2] = 30.0f;
    h->loc.v[0] = 3.140625f;
    h->rot.e[2] = 3.140625f;
}

static void test_hand1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "02 22");
    hand_head(&want);
    assert_int_equal(want.n, 36);
    struct rtp_gs_object o = {.type = RTP_GS_HAND1}, d;
    hand_fields(&o.u.hand1);
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_HAND1);
    assert_memory_equal(&d.u.hand1, &o.u.hand1, sizeof o.u.hand1);

    /* Boolean strictness in an object: left = 02 drops the object with a clear reason. */
    want.b[5] = 0x02;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_int_equal(d.type, RTP_GS_HAND1);
    assert_string_equal(err.msg, "Hand1 (tag 2) at payload offset 0, Length 34: malformed, "
                                 "dropped: left: Boolean 0x02 at offset 3 is neither 00 nor 01");
}

static void hand2_joints(struct buf *b)
{
    hex(b, "00 00 42 48 00 00"); /* wrist */
    for (int i = 0; i < 4; i++)
        hex(b, "00 00 42 48 00 00"); /* thumb */
    zeros(b, 15 * 6);                /* index, middle, ring */
    hex(b, "42 48 00 00 00 00");     /* pinky tip */
    zeros(b, 4 * 6);
}

static void test_hand2_vectors(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object o = {.type = RTP_GS_HAND2}, d;
    struct rtp_gs_hand1 h1 = {0};
    hand_fields(&h1);
    o.u.hand2.object_id = h1.object_id;
    o.u.hand2.time = h1.time;
    o.u.hand2.left = h1.left;
    o.u.hand2.loc = h1.loc;
    o.u.hand2.rot = h1.rot;
    for (int j = 0; j <= 4; j++)
        o.u.hand2.joints[j][1] = 3.140625f;
    o.u.hand2.joints[RTP_GS_JOINT_PINKY_TIP][0] = 3.140625f;

    /* gse form: C0 80 01, Length 80 B8 = 184, 189 bytes. */
    struct buf gse = {.n = 0};
    hex(&gse, "C0 80 01 80 B8");
    hand_head(&gse);
    hand2_joints(&gse);
    assert_int_equal(gse.n, 189);
    assert_int_equal(dec1(&gse, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_HAND2);
    assert_int_equal(d.tag, RTP_GS_TAG_HAND2);
    assert_true(d.gse_tag);
    assert_memory_equal(&d.u.hand2, &o.u.hand2, sizeof o.u.hand2);

    /* Decided form: 80 81, 188 bytes. */
    struct buf want = {.n = 0}, got;
    hex(&want, "80 81 80 B8");
    hand_head(&want);
    hand2_joints(&want);
    assert_int_equal(want.n, 188);
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_false(d.gse_tag);
    assert_memory_equal(&d.u.hand2, &o.u.hand2, sizeof o.u.hand2);

    /* One joint short: malformed. */
    want.b[3] = 0xB7;
    want.n--;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "joints (25 x Transform1) (needs 150 bytes, 149 left)"));
}

static void test_object1_vectors(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "03 1B 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 47 00 01 "
               "04 01 1B");
    assert_int_equal(want.n, 29);
    struct rtp_gs_object o = {.type = RTP_GS_OBJECT1}, d;
    o.u.object1 = (struct rtp_gs_object1){.object_id = 12,
                                          .time = 1280,
                                          .loc = {1, 2, 3},
                                          .rot = {4, 5, 6},
                                          .scale = 7.0f,
                                          .active = true,
                                          .has_parent = true,
                                          .parent_id = 27};
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_memory_equal(&d.u.object1, &o.u.object1, sizeof o.u.object1);

    /* Without parent: body 24. */
    o.u.object1.has_parent = false;
    o.u.object1.parent_id = 0;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 26);
    assert_int_equal(got.b[1], 24);
    assert_int_equal(dec1(&got, &d, &err), 0);
    assert_memory_equal(&d.u.object1, &o.u.object1, sizeof o.u.object1);

    /* Parent1 with Length 0 or past the body, and a parent ID that overruns its Length. */
    static const char *bad_parent[] = {"04 00", "04 05 1B", "04 01 80"};
    for (size_t i = 0; i < 3; i++) {
        struct buf b = {.n = 0};
        struct buf tail = {.n = 0};
        hex(&tail, bad_parent[i]);
        uint8_t len = (uint8_t)(24 + tail.n);
        b.b[0] = 0x03;
        b.b[1] = len;
        b.n = 2;
        hex(&b, "0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 47 00 01");
        memcpy(b.b + b.n, tail.b, tail.n);
        b.n += tail.n;
        assert_int_equal(dec1(&b, &d, &err), -EPROTO);
        assert_int_equal(d.type, RTP_GS_OBJECT1);
        assert_non_null(strstr(err.msg, "Parent1"));
    }
}

/* §7.1 gse-layout Object1 and Mesh1: must not crash nor disturb the next object. */
static void test_gse_layout_vectors_do_not_disturb(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    struct buf p = {.n = 0};
    hex(&p, "03 22 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 40 E0 00 00 41 "
            "00 00 00 41 10 00 00 01");
    assert_int_equal(p.n, 36);
    hex(&p, "C0 80 00 32 1B 02 3F 80 00 00 40 00 00 00 40 40 00 00 3F 80 00 00 40 00 00 00 40 40 "
            "00 00 03 42 48 BC 00 7B FF 42 48 BC 00 42 48 42 48 BC 00 7B FF 01 01 80 81 00");
    assert_int_equal(p.n, 36 + 54);
    hex(&p, "01 21 04 00 05");
    appc_tail(&p);
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, p.b, p.n);
    int rc = rtp_gs_iter_next(it, &d, &err);
    assert_true(rc == RTP_GS_OBJECT || rc == -EPROTO);
    assert_int_equal(d.type, RTP_GS_OBJECT1);
    rc = rtp_gs_iter_next(it, &d, &err);
    assert_int_equal(rc, -EPROTO); /* numVertices 0 under the decided rules */
    assert_int_equal(d.type, RTP_GS_MESH1);
    assert_true(d.gse_tag);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_appc_decoded(&d, 4, 5);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
    assert_int_equal(it->gse_tags, 1);
}

static void test_object2_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 83 34 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 38 00 00 00 00 00");
    zeros(&want, 12);
    hex(&want, "3F 80 00 00 3F 80 00 00 3F 80 00 00 00 00 00 00 00 00 01");
    assert_int_equal(want.n, 55);
    struct rtp_gs_object o = {.type = RTP_GS_OBJECT2}, d;
    o.u.object2.object_id = 12;
    o.u.object2.time = 1280;
    o.u.object2.loc = (struct rtp_gs_loc2){{1, 2, 3}, {0.5f, 0, 0}};
    o.u.object2.scale = (struct rtp_gs_loc2){{1, 1, 1}, {0, 0, 0}};
    o.u.object2.active = true;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_OBJECT2);
    assert_memory_equal(&d.u.object2, &o.u.object2, sizeof o.u.object2);
    /* With parent 300 (2-byte VarUInt): 04 02 81 2C, body 56. */
    o.u.object2.has_parent = true;
    o.u.object2.parent_id = 300;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 59);
    assert_int_equal(got.b[2], 56);
    assert_memory_equal(got.b + 55, "\x04\x02\x81\x2C", 4);
    assert_int_equal(dec1(&got, &d, &err), 0);
    assert_memory_equal(&d.u.object2, &o.u.object2, sizeof o.u.object2);
}

static void test_game_control1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 85 0E 01 12 34 0C 12 00 38 00 B8 00 00 00 3C 00");
    assert_int_equal(want.n, 17);
    struct rtp_gs_object o = {.type = RTP_GS_GAME_CONTROL1}, d;
    o.u.game_control1 = (struct rtp_gs_game_control1){.object_id = 1,
                                                      .time = 0x1234,
                                                      .buttons = RTP_GS_BTN_A | RTP_GS_BTN_B,
                                                      .buttons_changed = 0x1200,
                                                      .left_x = 0.5f,
                                                      .left_y = -0.5f,
                                                      .right_x = 0.0f,
                                                      .right_y = 1.0f};
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_memory_equal(&d.u.game_control1, &o.u.game_control1, sizeof o.u.game_control1);
    /* Pause (bit 20 = 1<<19) needs the 3-byte VarInt: C8 00 00, body 16. */
    o.u.game_control1.buttons = RTP_GS_BTN_PAUSE | RTP_GS_BTN_MENU;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 19);
    assert_memory_equal(got.b + 6, "\xC8\x00\x01", 3);
    assert_int_equal(dec1(&got, &d, &err), 0);
    assert_true(d.u.game_control1.buttons == (RTP_GS_BTN_PAUSE | RTP_GS_BTN_MENU));
    /* A negative VarInt is decoded as it is (the codec does not judge the mask). */
    struct buf neg = {.n = 0};
    hex(&neg, "80 85 0E 01 12 34 7F 12 00 38 00 B8 00 00 00 3C 00");
    assert_int_equal(dec1(&neg, &d, &err), 0);
    assert_true(d.u.game_control1.buttons == -1);
    /* An undefined VarInt form in buttons drops the object. */
    neg.b[6] = 0xE5;
    assert_int_equal(dec1(&neg, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "buttons: VarInt first byte 0xE5"));
}

static void test_threedof1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 86 10 02 01 00 01 00 00 00 00 00 00 00 00 00 00 3C 00");
    assert_int_equal(want.n, 19);
    struct rtp_gs_object o = {.type = RTP_GS_THREEDOF1}, d;
    o.u.threedof1.object_id = 2;
    o.u.threedof1.time = 0x0100;
    o.u.threedof1.left = true;
    o.u.threedof1.rot.e[2] = 1.0f;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_memory_equal(&d.u.threedof1, &o.u.threedof1, sizeof o.u.threedof1);
}

static void test_sixdof1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 87 30 03 01 00 00 00 00 00 00 3F C0 00 00 00 00 00 00");
    zeros(&want, 18);
    hex(&want, "80 88 00 00 00 00 00 00 00 00 40 00 00 00");
    assert_int_equal(want.n, 51);
    struct rtp_gs_object o = {.type = RTP_GS_SIXDOF1}, d;
    o.u.sixdof1.object_id = 3;
    o.u.sixdof1.time = 0x0100;
    o.u.sixdof1.left = false;
    o.u.sixdof1.loc.p[1] = 1.5f;
    o.u.sixdof1.has_pointer = true;
    o.u.sixdof1.pointer[2] = 2.0f;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    assert_int_equal(dec1(&want, &d, &err), 0);
    assert_memory_equal(&d.u.sixdof1, &o.u.sixdof1, sizeof o.u.sixdof1);
    /* gse-form pointer tag C0 80 08 is accepted too (D1). */
    struct buf g = {.n = 0};
    hex(&g, "80 87 31");
    memcpy(g.b + g.n, want.b + 3, 34);
    g.n += 34;
    hex(&g, "C0 80 08 00 00 00 00 00 00 00 00 40 00 00 00");
    assert_int_equal(dec1(&g, &d, &err), 0);
    assert_true(d.gse_tag);
    assert_memory_equal(&d.u.sixdof1, &o.u.sixdof1, sizeof o.u.sixdof1);
    /* Without the pointer: body 34. */
    o.u.sixdof1.has_pointer = false;
    o.u.sixdof1.pointer[2] = 0;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 37);
    assert_int_equal(dec1(&got, &d, &err), 0);
    assert_memory_equal(&d.u.sixdof1, &o.u.sixdof1, sizeof o.u.sixdof1);
    /* Pointer tag present but its Loc1 cut short: malformed. */
    want.b[2] = 0x30 - 7;
    want.n -= 7;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "6DOFpointer1 (Loc1) (needs 12 bytes, 5 left)"));
}

static const float tri_vertices[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
static const uint32_t tri_indices[3] = {0, 1, 2};

static struct rtp_gs_object tri_mesh(void)
{
    struct rtp_gs_object o = {.type = RTP_GS_MESH1};
    o.u.mesh1.object_id = 0x1B;
    o.u.mesh1.texture = RTP_GS_TEXTURE_RTP_PT;
    o.u.mesh1.texture_pt = 96;
    o.u.mesh1.num_vertices = 3;
    o.u.mesh1.vertices = tri_vertices;
    o.u.mesh1.num_indices = 3;
    o.u.mesh1.indices = tri_indices;
    return o;
}

static void test_mesh1_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 80 2E 1B 02 60 03");
    zeros(&want, 12);
    hex(&want, "3F 80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 3F 80 00 00 00 00 00 00 "
               "00 00 03 00 01 02");
    assert_int_equal(want.n, 49);
    struct rtp_gs_object o = tri_mesh(), d;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, want.b, want.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_MESH1);
    const struct rtp_gs_mesh1 *m = &d.u.mesh1;
    assert_true(m->object_id == 0x1B);
    assert_int_equal(m->texture, RTP_GS_TEXTURE_RTP_PT);
    assert_int_equal(m->texture_pt, 96);
    assert_int_equal(m->num_vertices, 3);
    assert_memory_equal(m->vertices, tri_vertices, sizeof tri_vertices);
    assert_int_equal(m->num_normals, 0);
    assert_int_equal(m->num_uv, 0);
    assert_int_equal(m->num_indices, 3);
    assert_memory_equal(m->indices, tri_indices, sizeof tri_indices);
}

static void test_mesh1_rejects(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    /* {byte offset, new value, expected error text} on the 49-byte vector. */
    static const struct {
        size_t at;
        uint8_t v;
        const char *msg;
    } cases[] = {
        {4, 0x00, "texture selector 0 at body offset 1 must be 1 (URL) or 2 (RTP PT)"},
        {4, 0x03, "texture selector 3"},
        {6, 0x02, "numVertices 2 must be 3..256"},
        {43, 0x02, "numNormals 2 must be 0 or numVertices 3"},
        {44, 0x01, "numTextureCoord 1 must be 0 or numVertices 3"},
        {45, 0x02, "numTrianglesIndex 2 must be a non-zero multiple of 3"},
        {45, 0x00, "numTrianglesIndex 0 must be"},
        {48, 0x03, "trianglesIndex[2] = 3 is not below numVertices 3"},
        {45, 0x06, "trianglesIndex: VarUInt missing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf b = {.n = 0};
        hex(&b, "80 80 2E 1B 02 60 03");
        zeros(&b, 12);
        hex(&b, "3F 80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 3F 80 00 00 00 00 00 00 "
                "00 00 03 00 01 02");
        b.b[cases[i].at] = cases[i].v;
        assert_int_equal(dec1(&b, &d, &err), -EPROTO);
        assert_int_equal(d.type, RTP_GS_MESH1);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
    }
    /* The encoder refuses the same shapes, and leaves the writer untouched. */
    uint8_t out[256];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    xg_write_u8(&w, 0xAA);
    struct rtp_gs_object o = tri_mesh();
    o.u.mesh1.texture = 0;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    assert_string_equal(err.msg, "Mesh1 texture selector 0 must be 1 (URL) or 2 (RTP PT)");
    o = tri_mesh();
    o.u.mesh1.num_vertices = 2;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "numVertices 2"));
    o = tri_mesh();
    static const uint32_t bad_ix[3] = {0, 1, 3};
    o.u.mesh1.indices = bad_ix;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    assert_string_equal(err.msg, "Mesh1 index[2] = 3 is not below numVertices 3");
    o = tri_mesh();
    o.u.mesh1.num_normals = 2;
    o.u.mesh1.normals = tri_vertices;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    o = tri_mesh();
    o.u.mesh1.num_indices = 4;
    assert_int_equal(rtp_gs_encode_object(&w, &o, &err), -EINVAL);
    assert_int_equal(w.len, 1);
    assert_int_equal(w.err, 0);
}

static void test_mesh2_vector(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct buf want = {.n = 0}, got;
    hex(&want, "80 84 3B 05");
    zeros(&want, 30);
    hex(&want, "3F 80 00 00 3F 80 00 00 3F 80 00 00 00 00 00 00 00 00 05 6D 2E 67 6C 62 00 04 01 "
               "04");
    assert_int_equal(want.n, 62);
    struct rtp_gs_object o = {.type = RTP_GS_MESH2}, d;
    o.u.mesh2.object_id = 5;
    o.u.mesh2.scale = (struct rtp_gs_loc2){{1, 1, 1}, {0, 0, 0}};
    o.u.mesh2.mesh_url = (struct rtp_gs_bytes){(const uint8_t *)"m.glb", 5};
    o.u.mesh2.texture = RTP_GS_TEXTURE_NONE;
    o.u.mesh2.has_parent = true;
    o.u.mesh2.parent_id = 4;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_bytes(&got, &want);
    struct rtp_gs_iter *it = new_iter();
    assert_int_equal(rtp_gs_decode_one(it, want.b, want.n, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_MESH2);
    assert_int_equal(d.u.mesh2.mesh_url.len, 5);
    assert_memory_equal(d.u.mesh2.mesh_url.ptr, "m.glb", 5);
    assert_ptr_equal(d.u.mesh2.mesh_url.ptr, want.b + 53);
    assert_int_equal(d.u.mesh2.texture, 0);
    assert_true(d.u.mesh2.has_parent);
    assert_true(d.u.mesh2.parent_id == 4);
    assert_true(d.u.mesh2.scale.p[0] == 1.0f && d.u.mesh2.scale.p[2] == 1.0f);

    /* Texture URL and PT forms round trip. */
    o.u.mesh2.texture = RTP_GS_TEXTURE_URL;
    o.u.mesh2.texture_url = (struct rtp_gs_bytes){(const uint8_t *)"t.jpg", 5};
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(got.n, 68);
    assert_int_equal(rtp_gs_decode_one(it, got.b, got.n, &d, &err), 0);
    assert_int_equal(d.u.mesh2.texture, RTP_GS_TEXTURE_URL);
    assert_memory_equal(d.u.mesh2.texture_url.ptr, "t.jpg", 5);
    assert_true(d.u.mesh2.parent_id == 4);
    o.u.mesh2.texture = RTP_GS_TEXTURE_RTP_PT;
    o.u.mesh2.texture_pt = 97;
    assert_int_equal(enc(&o, &got, &err), 0);
    assert_int_equal(rtp_gs_decode_one(it, got.b, got.n, &d, &err), 0);
    assert_int_equal(d.u.mesh2.texture_pt, 97);

    /* Selector 3 and a non-UTF-8 URL are malformed; the encoder refuses them. */
    want.b[58] = 0x03;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "texture selector 3 at body offset 55 must be 0, 1 or 2"));
    want.b[58] = 0x00;
    want.b[54] = 0xFF;
    assert_int_equal(dec1(&want, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "mesh URL: invalid UTF-8 at byte 1 (0xFF)"));
    o.u.mesh2.texture = 3;
    assert_int_equal(enc(&o, &got, &err), -EINVAL);
    o.u.mesh2.texture = 0;
    o.u.mesh2.mesh_url = (struct rtp_gs_bytes){(const uint8_t *)"\xC0\xAF", 2};
    assert_int_equal(enc(&o, &got, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "not valid UTF-8"));
}

/* ---- Packets: order, skip and resume, framing ---- */

static void test_malformed_skip_and_resume(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    struct buf p = {.n = 0};
    /* 1: unknown tag 300 (2-byte VarUInt), 3-byte body */
    hex(&p, "81 2C 03 AA BB CC");
    /* 2: Hand1 with left = 05 */
    hex(&p, "02 22");
    size_t bad_at = p.n;
    hand_head(&p);
    p.b[bad_at + 3] = 0x05;
    /* 3: Head1 whose Length (10) cuts the mandatory fields */
    hex(&p, "01 0A 04 00 05 3F 8C CC CD 3E 4C CC");
    /* 4: ThreeDOF1 with undefined VarUInt objectID E0 */
    hex(&p, "80 86 10 E0 01 00 01 00 00 00 00 00 00 00 00 00 00 3C 00");
    /* 5: Object2 (valid), 6: Head1 id 4 then 7: Head1 id 4 again (later overrides) */
    size_t o2 = p.n;
    hex(&p, "80 83 34 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 38 00 00 00 00 00");
    zeros(&p, 12);
    hex(&p, "3F 80 00 00 3F 80 00 00 3F 80 00 00 00 00 00 00 00 00 01");
    assert_int_equal(p.n - o2, 55);
    hex(&p, "01 21 04 00 05");
    appc_tail(&p);
    hex(&p, "01 21 04 00 06");
    appc_tail(&p);

    uint8_t *copy = malloc(p.n);
    memcpy(copy, p.b, p.n);
    struct rtp_gs_iter *it = new_iter();
    rtp_gs_iter_init(it, copy, p.n);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_int_equal(d.tag, 300);
    assert_int_equal(d.u.unknown.len, 3);

    assert_int_equal(rtp_gs_iter_next(it, &d, &err), -EPROTO);
    assert_int_equal(d.type, RTP_GS_HAND1);
    assert_int_equal(err.code, -EPROTO);
    assert_non_null(strstr(err.msg, "Hand1 (tag 2) at payload offset 6"));
    assert_non_null(strstr(err.msg, "Boolean 0x05"));

    assert_int_equal(rtp_gs_iter_next(it, &d, &err), -EPROTO);
    assert_int_equal(d.type, RTP_GS_HEAD1);
    assert_non_null(strstr(err.msg, "body ends inside loc (Loc2) (needs 18 bytes, 7 left)"));

    assert_int_equal(rtp_gs_iter_next(it, &d, &err), -EPROTO);
    assert_int_equal(d.type, RTP_GS_THREEDOF1);
    assert_non_null(strstr(err.msg, "objectID: VarUInt first byte 0xE0"));

    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.type, RTP_GS_OBJECT2);
    assert_true(d.u.object2.loc.v[0] == 0.5f);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.u.head1.time, 5);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
    assert_int_equal(d.u.head1.time, 6);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
    assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
    assert_int_equal(it->objects, 3);
    assert_int_equal(it->unknown, 1);
    assert_int_equal(it->dropped, 3);
    free(copy);
}

static void test_framing_errors_stop(void **state)
{
    (void)state;
    static const struct {
        const char *hex;
        const char *msg;
    } cases[] = {
        {"00 05 01 02 03 04 05", "framing broken, 7 bytes discarded: Tag 0 (tagInvalid)"},
        {"01 00 80 83", "Length 0 is zero"},
        {"01 22 04 00 05", "tag 1 Length 34 is past the end (3 bytes left)"},
        {"E0 21", "Tag: VarUInt first byte 0xE0"},
        {"FF 21", "Tag: VarUInt first byte 0xFF"},
        {"01 E3 00", "Length: VarUInt first byte 0xE3"},
        {"80", "Tag: VarUInt first byte 0x80 at offset 36 needs 1 more bytes, 0 left"},
        {"01", "Length: VarUInt missing"},
        {"01 E1 00 00", "Length: VarUInt first byte 0xE1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* A valid Hand1 first: it must come out intact before the framing error. */
        struct buf p = {.n = 0};
        hex(&p, "02 22");
        hand_head(&p);
        size_t first = p.n;
        hex(&p, cases[i].hex);
        uint8_t *copy = malloc(p.n);
        memcpy(copy, p.b, p.n);
        struct rtp_gs_iter *it = new_iter();
        struct rtp_gs_object d;
        struct xg_error err = {0};
        rtp_gs_iter_init(it, copy, p.n);
        assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_OBJECT);
        assert_int_equal(d.type, RTP_GS_HAND1);
        assert_int_equal(rtp_gs_iter_next(it, &d, &err), -EBADMSG);
        assert_int_equal(err.code, -EBADMSG);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        char off[40];
        snprintf(off, sizeof off, "payload offset %zu", first);
        assert_non_null(strstr(err.msg, off));
        assert_true(it->done);
        assert_int_equal(rtp_gs_iter_next(it, &d, &err), RTP_GS_END);
        free(copy);
    }
    /* decode_one: empty input and trailing bytes. */
    struct rtp_gs_object d;
    struct xg_error err = {0};
    assert_int_equal(rtp_gs_decode_one(new_iter(), "", 0, &d, &err), -EBADMSG);
    assert_string_equal(err.msg, "empty buffer: no object");
    struct buf p = {.n = 0};
    hex(&p, "02 22");
    hand_head(&p);
    hex(&p, "02 22");
    assert_int_equal(rtp_gs_decode_one(new_iter(), p.b, p.n, &d, &err), -EBADMSG);
    assert_string_equal(err.msg, "2 trailing bytes after the Hand1 object");
}

/* Leftover bytes after the known parts of a body are ignored (forward compatibility), an
 * unrecognised sub-TLV ends the optional part, and a broken known sub-TLV drops the object. */
static void test_leftovers_and_sub_tlvs(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    struct buf p = {.n = 0};
    hex(&p, "01 26 04 00 05");
    appc_tail(&p);
    hex(&p, "55 03 01 02 03"); /* unknown sub-TLV 0x55 */
    assert_int_equal(dec1(&p, &d, &err), 0);
    assert_appc_decoded(&d, 4, 5);
    assert_false(d.u.head1.has_ipd);

    p.n = 0; /* IPD with Length 3 (one extra byte in it, ignored) then 2 leftover bytes */
    hex(&p, "01 29 04 00 05");
    appc_tail(&p);
    hex(&p, "80 82 03 3C 00 99 EE EE");
    assert_int_equal(dec1(&p, &d, &err), 0);
    assert_true(d.u.head1.has_ipd);
    assert_true(d.u.head1.ipd == 1.0f);

    p.n = 0; /* IPD sub-TLV Length past the body */
    hex(&p, "01 26 04 00 05");
    appc_tail(&p);
    hex(&p, "80 82 04 2B 2B");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "HeadIPD1 Length 4 is 0 or past the body (2 left)"));

    p.n = 0; /* IPD sub-TLV with Length 1: Float16 does not fit */
    hex(&p, "01 25 04 00 05");
    appc_tail(&p);
    hex(&p, "80 82 01 2B");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "HeadIPD1 IPD (Float16) (needs 2 bytes, 1 left)"));

    p.n = 0; /* Object1: unknown sub-TLV before Parent1 ends the optional part */
    hex(&p, "03 1C 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 47 00 01 "
            "66 04 01 1B");
    assert_int_equal(dec1(&p, &d, &err), 0);
    assert_false(d.u.object1.has_parent);
    assert_true(d.u.object1.active);
}

/* Every strict prefix of every golden object: the decoder reports a framing error or a
 * dropped object, never reads past the end (heap copies of exact size under ASan). */
static void test_truncated_never_overreads(void **state)
{
    (void)state;
    struct buf v[8];
    memset(v, 0, sizeof v);
    hex(&v[0], "01 26 04 00 05");
    appc_tail(&v[0]);
    hex(&v[0], "80 82 02 2B 2B");
    hex(&v[1], "80 81 80 B8");
    hand_head(&v[1]);
    hand2_joints(&v[1]);
    hex(&v[2], "03 1B 0C 05 00 3F 80 00 00 40 00 00 00 40 40 00 00 44 00 45 00 46 00 47 00 01 "
               "04 01 1B");
    hex(&v[3], "80 85 0E 01 12 34 0C 12 00 38 00 B8 00 00 00 3C 00");
    hex(&v[4], "80 87 30 03 01 00 00 00 00 00 00 3F C0 00 00 00 00 00 00");
    zeros(&v[4], 18);
    hex(&v[4], "80 88 00 00 00 00 00 00 00 00 40 00 00 00");
    hex(&v[5], "80 80 2E 1B 02 60 03");
    zeros(&v[5], 12);
    hex(&v[5], "3F 80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 3F 80 00 00 00 00 00 00 "
               "00 00 03 00 01 02");
    hex(&v[6], "80 84 3B 05");
    zeros(&v[6], 30);
    hex(&v[6], "3F 80 00 00 3F 80 00 00 3F 80 00 00 00 00 00 00 00 00 05 6D 2E 67 6C 62 00 04 01 "
               "04");
    hex(&v[7], "80 86 10 02 01 00 01 00 00 00 00 00 00 00 00 00 00 3C 00");
    for (size_t k = 0; k < 8; k++) {
        struct rtp_gs_object d;
        struct xg_error err = {0};
        assert_int_equal(dec1(&v[k], &d, &err), 0);
        for (size_t n = 0; n < v[k].n; n++) {
            struct buf cut = v[k];
            cut.n = n;
            int rc = dec1(&cut, &d, &err);
            assert_true(rc == -EBADMSG); /* the Length always runs past a strict prefix */
        }
        /* Shrinking the Length instead (body cut, framing intact) drops the object, unless
         * only optional parts were cut. */
        size_t tagsz = v[k].b[0] & 0x80 ? 2 : 1;
        size_t hdr = tagsz + (v[k].b[tagsz] & 0x80 ? 2 : 1);
        size_t body = v[k].n - hdr;
        for (size_t n = 1; n < body; n++) {
            struct buf cut = {.n = 0};
            memcpy(cut.b, v[k].b, tagsz);
            struct xg_writer w;
            xg_writer_init(&w, cut.b + tagsz, 4);
            rtp_gs_write_varuint(&w, n);
            cut.n = tagsz + w.len;
            memcpy(cut.b + cut.n, v[k].b + hdr, n);
            cut.n += n;
            int rc = dec1(&cut, &d, &err);
            assert_true(rc == 0 || rc == -EPROTO);
        }
    }
}

/* Huge VarUInt counts and lengths (up to 2^64-1) are rejected before any size arithmetic. */
static void test_huge_lengths_rejected(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    struct buf p = {.n = 0};
    hex(&p, "01 E2 FF FF FF FF FF FF FF FF 04 00 05");
    assert_int_equal(dec1(&p, &d, &err), -EBADMSG);
    assert_non_null(strstr(err.msg, "Length 18446744073709551615 is past the end (3 bytes left)"));

    p.n = 0; /* Mesh1 numVertices 2^64-1 */
    hex(&p, "80 80 0E 1B 02 60 E2 FF FF FF FF FF FF FF FF 00 00");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "numVertices 18446744073709551615 must be 3..256"));

    p.n = 0; /* Mesh2 URL length 2^32-1 */
    hex(&p, "80 84 36 05");
    zeros(&p, 48);
    hex(&p, "E1 FF FF FF FF 00");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "mesh URL: length 4294967295 at offset 49 exceeds 1024"));

    p.n = 0; /* Head1 IPD sub-TLV Length 2^64-1 */
    hex(&p, "01 2C 04 00 05");
    appc_tail(&p);
    hex(&p, "80 82 E2 FF FF FF FF FF FF FF FF");
    assert_int_equal(dec1(&p, &d, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "HeadIPD1 Length 18446744073709551615 is 0 or past the body"));

    p.n = 0; /* a tag of 2^64-1 is just unknown, skipped by its Length */
    hex(&p, "E2 FF FF FF FF FF FF FF FF 01 AA");
    assert_int_equal(dec1(&p, &d, &err), 0);
    assert_int_equal(d.type, RTP_GS_UNKNOWN);
    assert_true(d.tag == UINT64_MAX);
}

/* ---- Round trips with random values ---- */

static uint32_t rng = 12345u;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static float rndf(float lo, float hi)
{
    return lo + (hi - lo) * (float)(rnd() % 100001) / 100000.0f;
}
static uint64_t rnd_id(void)
{
    static const uint64_t ids[] = {0, 1, 127, 128, 16383, 16384, 2097151, 2097152, 4294967296ull};
    return rnd() % 2 ? rnd() % 200 : ids[rnd() % 9];
}

static void rnd_loc2(struct rtp_gs_loc2 *l)
{
    for (int i = 0; i < 3; i++) {
        l->p[i] = rndf(-100, 100);
        l->v[i] = rndf(-10, 10);
    }
}

static void rnd_rot2(struct rtp_gs_rot2 *r)
{
    for (int i = 0; i < 3; i++) {
        r->s[i] = rndf(-1, 1);
        r->e[i] = rndf(-1, 1);
    }
}

/* Quantise the Float16 fields as the wire does; then decode(encode(o)) must equal o exactly.
 * Float16 fields therefore match the input within 2^-11 relative (half an ulp). */
static void q_loc2(struct rtp_gs_loc2 *l)
{
    for (int i = 0; i < 3; i++)
        l->v[i] = q16(l->v[i]);
}
static void q_rot2(struct rtp_gs_rot2 *r)
{
    for (int i = 0; i < 3; i++) {
        r->s[i] = q16(r->s[i]);
        r->e[i] = q16(r->e[i]);
    }
}

static void check_round_trip(const struct rtp_gs_object *in, const struct rtp_gs_object *quant)
{
    struct buf b;
    struct xg_error err = {0};
    struct rtp_gs_object d;
    assert_int_equal(enc(in, &b, &err), 0);
    struct rtp_gs_iter *it = new_iter();
    if (rtp_gs_decode_one(it, b.b, b.n, &d, &err) != 0)
        fail_msg("%s: %s", rtp_gs_type_name(in->type), err.msg);
    assert_int_equal(d.type, in->type);
    assert_true(d.tag == rtp_gs_type_tag(in->type));
    switch (in->type) {
    case RTP_GS_HEAD1:
        assert_memory_equal(&d.u.head1, &quant->u.head1, sizeof d.u.head1);
        break;
    case RTP_GS_HAND1:
        assert_memory_equal(&d.u.hand1, &quant->u.hand1, sizeof d.u.hand1);
        break;
    case RTP_GS_HAND2:
        assert_memory_equal(&d.u.hand2, &quant->u.hand2, sizeof d.u.hand2);
        break;
    case RTP_GS_OBJECT1:
        assert_memory_equal(&d.u.object1, &quant->u.object1, sizeof d.u.object1);
        break;
    case RTP_GS_OBJECT2:
        assert_memory_equal(&d.u.object2, &quant->u.object2, sizeof d.u.object2);
        break;
    case RTP_GS_THREEDOF1:
        assert_memory_equal(&d.u.threedof1, &quant->u.threedof1, sizeof d.u.threedof1);
        break;
    case RTP_GS_SIXDOF1:
        assert_memory_equal(&d.u.sixdof1, &quant->u.sixdof1, sizeof d.u.sixdof1);
        break;
    case RTP_GS_GAME_CONTROL1:
        assert_memory_equal(&d.u.game_control1, &quant->u.game_control1, sizeof d.u.game_control1);
        break;
    case RTP_GS_MESH1: {
        const struct rtp_gs_mesh1 *a = &d.u.mesh1, *e = &quant->u.mesh1;
        assert_true(a->object_id == e->object_id);
        assert_int_equal(a->texture, e->texture);
        assert_int_equal(a->num_vertices, e->num_vertices);
        assert_memory_equal(a->vertices, e->vertices, e->num_vertices * sizeof e->vertices[0]);
        assert_int_equal(a->num_normals, e->num_normals);
        if (e->num_normals)
            assert_memory_equal(a->normals, e->normals, e->num_normals * sizeof e->normals[0]);
        assert_int_equal(a->num_uv, e->num_uv);
        if (e->num_uv) assert_memory_equal(a->uv, e->uv, e->num_uv * sizeof e->uv[0]);
        assert_int_equal(a->num_indices, e->num_indices);
        assert_memory_equal(a->indices, e->indices, e->num_indices * sizeof e->indices[0]);
        if (e->texture == RTP_GS_TEXTURE_URL) {
            assert_int_equal(a->texture_url.len, e->texture_url.len);
            assert_memory_equal(a->texture_url.ptr, e->texture_url.ptr, e->texture_url.len);
        } else {
            assert_int_equal(a->texture_pt, e->texture_pt);
        }
        break;
    }
    case RTP_GS_MESH2: {
        const struct rtp_gs_mesh2 *a = &d.u.mesh2, *e = &quant->u.mesh2;
        assert_true(a->object_id == e->object_id);
        assert_memory_equal(&a->loc, &e->loc, sizeof a->loc);
        assert_memory_equal(&a->rot, &e->rot, sizeof a->rot);
        assert_memory_equal(&a->scale, &e->scale, sizeof a->scale);
        assert_int_equal(a->mesh_url.len, e->mesh_url.len);
        assert_memory_equal(a->mesh_url.ptr, e->mesh_url.ptr, e->mesh_url.len);
        assert_int_equal(a->texture, e->texture);
        assert_int_equal(a->has_parent, e->has_parent);
        assert_true(a->parent_id == e->parent_id);
        break;
    }
    default:
        fail();
    }
}

static void test_round_trip_random(void **state)
{
    (void)state;
    static float verts[200][3], norms[200][3], qnorms[200][3], uvs[200][2];
    static uint32_t idx[600];
    for (int iter = 0; iter < 300; iter++) {
        struct rtp_gs_object o, q;
        memset(&o, 0, sizeof o);
        o.type = (enum rtp_gs_type)(1 + iter % 10);
        switch (o.type) {
        case RTP_GS_HEAD1:
            o.u.head1.object_id = rnd_id();
            o.u.head1.time = (uint16_t)rnd();
            rnd_loc2(&o.u.head1.loc);
            rnd_rot2(&o.u.head1.rot);
            o.u.head1.has_ipd = rnd() % 2;
            o.u.head1.ipd = o.u.head1.has_ipd ? rndf(0.05f, 0.075f) : 0;
            q = o;
            q_loc2(&q.u.head1.loc);
            q_rot2(&q.u.head1.rot);
            q.u.head1.ipd = q16(q.u.head1.ipd);
            break;
        case RTP_GS_HAND1:
        case RTP_GS_HAND2:
            /* hand1 is a prefix of hand2's fields; fill hand2 and copy when needed */
            o.u.hand2.object_id = rnd_id();
            o.u.hand2.time = (uint16_t)rnd();
            o.u.hand2.left = rnd() % 2;
            rnd_loc2(&o.u.hand2.loc);
            rnd_rot2(&o.u.hand2.rot);
            for (int j = 0; j < RTP_GS_HAND2_JOINTS; j++)
                for (int k = 0; k < 3; k++)
                    o.u.hand2.joints[j][k] = rndf(-0.2f, 0.2f);
            if (o.type == RTP_GS_HAND1) {
                struct rtp_gs_hand2 h = o.u.hand2;
                memset(&o.u, 0, sizeof o.u);
                o.u.hand1 = (struct rtp_gs_hand1){h.object_id, h.time, h.left, h.loc, h.rot};
                q = o;
                q_loc2(&q.u.hand1.loc);
                q_rot2(&q.u.hand1.rot);
            } else {
                q = o;
                q_loc2(&q.u.hand2.loc);
                q_rot2(&q.u.hand2.rot);
                for (int j = 0; j < RTP_GS_HAND2_JOINTS; j++)
                    for (int k = 0; k < 3; k++)
                        q.u.hand2.joints[j][k] = q16(q.u.hand2.joints[j][k]);
            }
            break;
        case RTP_GS_OBJECT1:
            o.u.object1.object_id = rnd_id();
            o.u.object1.time = (uint16_t)rnd();
            for (int k = 0; k < 3; k++) {
                o.u.object1.loc[k] = rndf(-1000, 1000);
                o.u.object1.rot[k] = rndf(-1, 1);
            }
            o.u.object1.scale = rndf(0.01f, 100);
            o.u.object1.active = rnd() % 2;
            o.u.object1.has_parent = rnd() % 2;
            o.u.object1.parent_id = o.u.object1.has_parent ? rnd_id() : 0;
            q = o;
            for (int k = 0; k < 3; k++)
                q.u.object1.rot[k] = q16(q.u.object1.rot[k]);
            q.u.object1.scale = q16(q.u.object1.scale);
            break;
        case RTP_GS_OBJECT2:
            o.u.object2.object_id = rnd_id();
            o.u.object2.time = (uint16_t)rnd();
            rnd_loc2(&o.u.object2.loc);
            rnd_rot2(&o.u.object2.rot);
            rnd_loc2(&o.u.object2.scale);
            o.u.object2.active = rnd() % 2;
            o.u.object2.has_parent = rnd() % 2;
            o.u.object2.parent_id = o.u.object2.has_parent ? rnd_id() : 0;
            q = o;
            q_loc2(&q.u.object2.loc);
            q_rot2(&q.u.object2.rot);
            q_loc2(&q.u.object2.scale);
            break;
        case RTP_GS_MESH1: {
            size_t nv = 3 + rnd() % 150, ni = 3 * (1 + rnd() % 150);
            for (size_t i = 0; i < nv; i++) {
                for (int k = 0; k < 3; k++) {
                    verts[i][k] = rndf(-5, 5);
                    norms[i][k] = rndf(-1, 1);
                    qnorms[i][k] = q16(norms[i][k]);
                }
                uvs[i][0] = rndf(0, 1);
                uvs[i][1] = rndf(0, 1);
            }
            for (size_t i = 0; i < ni; i++)
                idx[i] = rnd() % nv;
            struct rtp_gs_mesh1 *m = &o.u.mesh1;
            m->object_id = rnd_id();
            m->texture = rnd() % 2 ? RTP_GS_TEXTURE_URL : RTP_GS_TEXTURE_RTP_PT;
            m->texture_url = (struct rtp_gs_bytes){(const uint8_t *)"https://x/t\xC3\xA9.jpg", 16};
            m->texture_pt = (uint8_t)(96 + rnd() % 32);
            m->num_vertices = nv;
            m->vertices = (const float(*)[3])verts;
            m->num_normals = rnd() % 2 ? nv : 0;
            m->normals = (const float(*)[3])norms;
            m->num_uv = rnd() % 2 ? nv : 0;
            m->uv = (const float(*)[2])uvs;
            m->num_indices = ni;
            m->indices = idx;
            q = o;
            q.u.mesh1.normals = (const float(*)[3])qnorms;
            break;
        }
        case RTP_GS_MESH2: {
            struct rtp_gs_mesh2 *m = &o.u.mesh2;
            m->object_id = rnd_id();
            rnd_loc2(&m->loc);
            rnd_rot2(&m->rot);
            rnd_loc2(&m->scale);
            m->mesh_url =
                (struct rtp_gs_bytes){(const uint8_t *)"https://example.org/m.glb", rnd() % 26};
            m->texture = (uint8_t)(rnd() % 3);
            m->texture_url = (struct rtp_gs_bytes){(const uint8_t *)"tex.png", 7};
            m->texture_pt = 99;
            m->has_parent = rnd() % 2;
            m->parent_id = m->has_parent ? rnd_id() : 0;
            q = o;
            q_loc2(&q.u.mesh2.loc);
            q_rot2(&q.u.mesh2.rot);
            q_loc2(&q.u.mesh2.scale);
            break;
        }
        case RTP_GS_THREEDOF1:
            o.u.threedof1.object_id = rnd_id();
            o.u.threedof1.time = (uint16_t)rnd();
            o.u.threedof1.left = rnd() % 2;
            rnd_rot2(&o.u.threedof1.rot);
            q = o;
            q_rot2(&q.u.threedof1.rot);
            break;
        case RTP_GS_SIXDOF1:
            o.u.sixdof1.object_id = rnd_id();
            o.u.sixdof1.time = (uint16_t)rnd();
            o.u.sixdof1.left = rnd() % 2;
            rnd_loc2(&o.u.sixdof1.loc);
            rnd_rot2(&o.u.sixdof1.rot);
            o.u.sixdof1.has_pointer = rnd() % 2;
            for (int k = 0; k < 3 && o.u.sixdof1.has_pointer; k++)
                o.u.sixdof1.pointer[k] = rndf(-50, 50);
            q = o;
            q_loc2(&q.u.sixdof1.loc);
            q_rot2(&q.u.sixdof1.rot);
            break;
        case RTP_GS_GAME_CONTROL1:
            o.u.game_control1.object_id = rnd_id();
            o.u.game_control1.time = (uint16_t)rnd();
            o.u.game_control1.buttons = rnd() & 0xFFFFF;
            o.u.game_control1.buttons_changed = (uint16_t)rnd();
            o.u.game_control1.left_x = rndf(-1, 1);
            o.u.game_control1.left_y = rndf(-1, 1);
            o.u.game_control1.right_x = rndf(-1, 1);
            o.u.game_control1.right_y = rndf(-1, 1);
            q = o;
            q.u.game_control1.left_x = q16(q.u.game_control1.left_x);
            q.u.game_control1.left_y = q16(q.u.game_control1.left_y);
            q.u.game_control1.right_x = q16(q.u.game_control1.right_x);
            q.u.game_control1.right_y = q16(q.u.game_control1.right_y);
            assert_true(fabsf(q.u.game_control1.left_x - o.u.game_control1.left_x) <=
                        ldexpf(1.0f, -11));
            break;
        default:
            fail();
        }
        check_round_trip(&o, &q);
    }
}

/* Packing: the encoder is atomic, so a full writer can be flushed and the object retried. */
static void test_encode_atomic_and_packing(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rtp_gs_object h = appc_head(4, 5); /* 35 bytes */
    uint8_t pkt[100];
    struct xg_writer w;
    xg_writer_init(&w, pkt, sizeof pkt);
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), 0);
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), 0);
    assert_int_equal(w.len, 70);
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), -EMSGSIZE);
    assert_string_equal(err.msg, "Head1 object does not fit in the 30 bytes left");
    assert_int_equal(w.len, 70);
    assert_int_equal(w.err, 0);
    /* Exactly fitting works (35 bytes left). */
    xg_writer_init(&w, pkt, 35);
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), 0);
    assert_int_equal(w.len, 35);
    /* A big Mesh1 whose body needs a 2-byte Length: exact capacity fits, one less does not. */
    static float verts[100][3];
    static uint32_t ix[99];
    for (int i = 0; i < 100; i++)
        verts[i][0] = (float)i;
    for (int i = 0; i < 99; i++)
        ix[i] = (uint32_t)i;
    struct rtp_gs_object m = tri_mesh();
    m.u.mesh1.num_vertices = 100;
    m.u.mesh1.vertices = (const float(*)[3])verts;
    m.u.mesh1.num_indices = 99;
    m.u.mesh1.indices = ix;
    static uint8_t big[2000];
    xg_writer_init(&w, big, sizeof big);
    assert_int_equal(rtp_gs_encode_object(&w, &m, &err), 0);
    size_t need = w.len;
    /* tag 2 + Length 2 + id 1 + sel 1 + pt 1 + nv 1 + 1200 + 0 + 0 + ni 1 + 99 */
    assert_int_equal(need, 2 + 2 + 1 + 1 + 1 + 1 + 1200 + 1 + 1 + 1 + 99);
    assert_int_equal(big[2], 0x80 | ((need - 4) >> 8));
    assert_int_equal(big[3], (need - 4) & 0xFF);
    xg_writer_init(&w, big, need - 1);
    assert_int_equal(rtp_gs_encode_object(&w, &m, &err), -EMSGSIZE);
    assert_int_equal(w.len, 0);
    xg_writer_init(&w, big, need);
    assert_int_equal(rtp_gs_encode_object(&w, &m, &err), 0);
    struct rtp_gs_object d;
    assert_int_equal(rtp_gs_decode_one(new_iter(), big, need, &d, &err), 0);
    assert_int_equal(d.u.mesh1.num_vertices, 100);
    assert_true(d.u.mesh1.vertices[99][0] == 99.0f);
    /* Unknown type cannot be encoded; a failed writer is refused. */
    struct rtp_gs_object u = {.type = RTP_GS_UNKNOWN, .tag = 77};
    xg_writer_init(&w, pkt, sizeof pkt);
    assert_int_equal(rtp_gs_encode_object(&w, &u, &err), -EINVAL);
    assert_int_equal(w.len, 0);
    w.err = -EMSGSIZE;
    assert_int_equal(rtp_gs_encode_object(&w, &h, &err), -EMSGSIZE);
    assert_int_equal(w.len, 0);
}

/* tests/vectors/rtp/gs_*.bin (the §7 vectors as files, also the fuzz seeds): each decodes as
 * stated and re-encodes to itself, or to the decided form given. */
static bool read_vector(const char *name, struct buf *b)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/vectors/rtp/%s.bin", XG_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    b->n = fread(b->b, 1, sizeof b->b, f);
    fclose(f);
    return true;
}

static void test_vector_files(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int rc;                /* of rtp_gs_iter_next on the first object */
        enum rtp_gs_type type; /* of that object */
        const char *reencode;  /* "=" itself, a file name, or NULL: not re-encoded */
    } files[] = {
        {"gs_head1_appc_corrected", RTP_GS_OBJECT, RTP_GS_HEAD1, "="},
        {"gs_head1_appc_corrected_ipd", RTP_GS_OBJECT, RTP_GS_HEAD1, "="},
        {"gs_head1_appc_literal", RTP_GS_OBJECT, RTP_GS_HEAD1, "="},
        {"gs_head1_ipd_gse_tag", RTP_GS_OBJECT, RTP_GS_HEAD1, NULL},
        {"gs_headipd1_alone_gse", RTP_GS_OBJECT, RTP_GS_UNKNOWN, NULL},
        {"gs_unknown_tag_0x20", RTP_GS_OBJECT, RTP_GS_UNKNOWN, NULL},
        {"gs_hand1", RTP_GS_OBJECT, RTP_GS_HAND1, "="},
        {"gs_hand2", RTP_GS_OBJECT, RTP_GS_HAND2, "="},
        {"gs_hand2_gse_tag", RTP_GS_OBJECT, RTP_GS_HAND2, "gs_hand2"},
        {"gs_object1", RTP_GS_OBJECT, RTP_GS_OBJECT1, "="},
        {"gs_object1_gse_layout", RTP_GS_OBJECT, RTP_GS_OBJECT1, NULL},
        {"gs_mesh1_gse_layout", -EPROTO, RTP_GS_MESH1, NULL},
        {"gs_object2", RTP_GS_OBJECT, RTP_GS_OBJECT2, "="},
        {"gs_game_control1", RTP_GS_OBJECT, RTP_GS_GAME_CONTROL1, "="},
        {"gs_threedof1", RTP_GS_OBJECT, RTP_GS_THREEDOF1, "="},
        {"gs_sixdof1_pointer", RTP_GS_OBJECT, RTP_GS_SIXDOF1, "="},
        {"gs_mesh1", RTP_GS_OBJECT, RTP_GS_MESH1, "="},
        {"gs_mesh2", RTP_GS_OBJECT, RTP_GS_MESH2, "="},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        struct buf in = {.n = 0}, want = {.n = 0}, got;
        if (!read_vector(files[i].name, &in))
            fail_msg("missing tests/vectors/rtp/%s.bin", files[i].name);
        struct rtp_gs_iter *it = new_iter();
        struct rtp_gs_object d;
        struct xg_error err = {0};
        rtp_gs_iter_init(it, in.b, in.n);
        int rc = rtp_gs_iter_next(it, &d, &err);
        if (rc != files[i].rc || d.type != files[i].type)
            fail_msg("%s: rc %d type %d (%s)", files[i].name, rc, d.type, err.msg);
        assert_int_equal(xg_reader_left(&it->r), 0); /* one whole object per file */
        if (!files[i].reencode) continue;
        if (strcmp(files[i].reencode, "="))
            assert_true(read_vector(files[i].reencode, &want));
        else
            want = in;
        assert_int_equal(enc(&d, &got, &err), 0);
        assert_bytes(&got, &want);
    }
}

static void test_type_names(void **state)
{
    (void)state;
    assert_string_equal(rtp_gs_type_name(RTP_GS_HEAD1), "Head1");
    assert_string_equal(rtp_gs_type_name(RTP_GS_GAME_CONTROL1), "GameControl1");
    assert_string_equal(rtp_gs_type_name(RTP_GS_UNKNOWN), "unknown");
    assert_int_equal(rtp_gs_type_tag(RTP_GS_SIXDOF1), 135);
    assert_int_equal(rtp_gs_type_tag(RTP_GS_MESH1), 128);
    assert_int_equal(rtp_gs_type_tag(RTP_GS_UNKNOWN), 0);
    assert_int_equal(f16(1.0f), 0x3C00);
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
        cmocka_unit_test(test_head1_vectors),
        cmocka_unit_test(test_headipd_alone_and_unknown_tag),
        cmocka_unit_test(test_hand1_vector),
        cmocka_unit_test(test_hand2_vectors),
        cmocka_unit_test(test_object1_vectors),
        cmocka_unit_test(test_gse_layout_vectors_do_not_disturb),
        cmocka_unit_test(test_object2_vector),
        cmocka_unit_test(test_game_control1_vector),
        cmocka_unit_test(test_threedof1_vector),
        cmocka_unit_test(test_sixdof1_vector),
        cmocka_unit_test(test_mesh1_vector),
        cmocka_unit_test(test_mesh1_rejects),
        cmocka_unit_test(test_mesh2_vector),
        cmocka_unit_test(test_malformed_skip_and_resume),
        cmocka_unit_test(test_framing_errors_stop),
        cmocka_unit_test(test_leftovers_and_sub_tlvs),
        cmocka_unit_test(test_truncated_never_overreads),
        cmocka_unit_test(test_huge_lengths_rejected),
        cmocka_unit_test(test_round_trip_random),
        cmocka_unit_test(test_encode_atomic_and_packing),
        cmocka_unit_test(test_vector_files),
        cmocka_unit_test(test_type_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
