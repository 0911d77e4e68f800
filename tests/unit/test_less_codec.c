/* Unit tests for the LESS codec: INTEGER, STRING, floats, variants, schemas, messages 1-12.
 * Framing, signatures and the ack window are in test_less_frame.c. Golden bytes come from the
 * worked values of the LESS draft's INTEGER encoding (tests/vectors/less/) and from the draft's
 * pseudo-code run by hand (each vector says how). */
#include <errno.h>
#include <inttypes.h>
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

#include "adapters/less/less_codec.h"

/* ---- helpers ---- */

static uint8_t arena_buf[1 << 16];
static struct less_arena arena;

static struct less_arena *fresh_arena(void)
{
    less_arena_init(&arena, arena_buf, sizeof arena_buf);
    return &arena;
}

/* ---- INTEGER ---- */

struct int_vec {
    int64_t v;
    const char *hex;
};

/* wire-rules.md §4.1 "Worked values" (encoder run exactly as written) */
static const struct int_vec worked[] = {
    {0, "00"},
    {127, "7f"},
    {128, "80 02"},
    {200, "88 03"},
    {8191, "bf 7f"},
    {8192, "80 80 01"},
    {1048576, "80 80 80 01"},
    {-1, "c0 00"},
    {-2, "c1 00"},
    {-64, "ff 00"},
    {-65, "c0 01"},
    {-8193, "c0 80 01"},
    {INT32_MAX, "bf ff ff ff 0f"},
    {INT32_MIN, "ff ff ff ff 0f"},
    {INT64_MAX, "bf ff ff ff ff ff ff ff ff 01"},
    {INT64_MIN, "ff ff ff ff ff ff ff ff ff 01"},
};

static void check_int(int64_t v, const char *hex)
{
    uint8_t buf[16], want[16];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_put_int(&w, v), 0);
    xg_test_assert_bytes(buf, w.len, hex);
    assert_int_equal(less_int_size(v), w.len);
    size_t n = xg_test_unhex(hex, want, sizeof want);
    struct xg_reader r;
    xg_reader_init(&r, want, n);
    int64_t got = 42;
    struct xg_error e = {0};
    assert_int_equal(less_get_int(&r, &got, "test", &e), 0);
    assert_true(got == v);
    assert_int_equal(r.off, n);
}

static void test_int_worked_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof worked / sizeof worked[0]; i++)
        check_int(worked[i].v, worked[i].hex);
    /* UINT64_MAX in the unsigned form (ack bitmask) */
    uint8_t buf[16];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_put_uint(&w, UINT64_MAX), 0);
    xg_test_assert_bytes(buf, w.len, "bf ff ff ff ff ff ff ff ff 03");
    assert_int_equal(less_uint_size(UINT64_MAX), 10);
    struct xg_reader r;
    xg_reader_init(&r, buf, w.len);
    uint64_t u = 0;
    assert_int_equal(less_get_uint(&r, &u, "bitmask", NULL), 0);
    assert_true(u == UINT64_MAX);
}

/* Read the worked values straight out of the spec so the table above cannot drift. */
static void test_int_worked_values_from_spec(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/less/int-worked-values.txt", XG_VECTORS_DIR);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("%s not found", path);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *p = strstr(text, "Worked values");
    assert_non_null(p);
    char *end = strstr(p, "Length limits");
    assert_non_null(end);
    *end = '\0';
    int found = 0;
    /* entries look like  NAME→`hex`  (→ is U+2192, bytes e2 86 92) */
    for (char *a = strstr(p, "\xe2\x86\x92"); a; a = strstr(a + 3, "\xe2\x86\x92")) {
        char *b = a;
        while (b > p && b[-1] != ' ' && b[-1] != '\n' && b[-1] != ',' && b[-1] != ':')
            b--;
        char name[32] = {0};
        size_t nl = (size_t)(a - b);
        if (nl == 0 || nl >= sizeof name) continue;
        memcpy(name, b, nl);
        if (strncmp(name, "−", strlen("−")) == 0) { /* U+2212 minus sign */
            name[0] = '-';
            memmove(name + 1, name + strlen("−"), strlen(name + strlen("−")) + 1);
        }
        char *q = strchr(a, '`');
        assert_non_null(q);
        char *qe = strchr(q + 1, '`');
        assert_non_null(qe);
        char hex[64] = {0};
        memcpy(hex, q + 1, (size_t)(qe - q - 1));
        if (strcmp(name, "UINT64_MAX") == 0) {
            uint8_t buf[16];
            struct xg_writer w;
            xg_writer_init(&w, buf, sizeof buf);
            less_put_uint(&w, UINT64_MAX);
            xg_test_assert_bytes(buf, w.len, hex);
        } else {
            int64_t v;
            if (strcmp(name, "INT32_MAX") == 0)
                v = INT32_MAX;
            else if (strcmp(name, "INT32_MIN") == 0)
                v = INT32_MIN;
            else if (strcmp(name, "INT64_MAX") == 0)
                v = INT64_MAX;
            else if (strcmp(name, "INT64_MIN") == 0)
                v = INT64_MIN;
            else
                v = strtoll(name, NULL, 10);
            check_int(v, hex);
        }
        found++;
    }
    assert_int_equal(found, 17);
}

static int decode_int_hex(const char *hex, int64_t *v, struct xg_error *e)
{
    uint8_t buf[32];
    size_t n = xg_test_unhex(hex, buf, sizeof buf);
    struct xg_reader r;
    xg_reader_init(&r, buf, n);
    return less_get_int(&r, v, "field", e);
}

static int decode_uint_hex(const char *hex, uint64_t *v, struct xg_error *e)
{
    uint8_t buf[32];
    size_t n = xg_test_unhex(hex, buf, sizeof buf);
    struct xg_reader r;
    xg_reader_init(&r, buf, n);
    return less_get_uint(&r, v, "field", e);
}

static void test_int_noncanonical_accepted(void **state)
{
    (void)state;
    int64_t v;
    /* wire-rules §4.1 examples; P1: decoders accept non-canonical forms */
    assert_int_equal(decode_int_hex("85 00", &v, NULL), 0);
    assert_int_equal(v, 5);
    assert_int_equal(decode_int_hex("80 80 00", &v, NULL), 0);
    assert_int_equal(v, 0);
    assert_int_equal(decode_int_hex("c0 80 00", &v, NULL), 0);
    assert_int_equal(v, -1);
    /* exactly 10 bytes is still fine */
    assert_int_equal(decode_int_hex("81 80 80 80 80 80 80 80 80 00", &v, NULL), 0);
    assert_int_equal(v, 1);
}

static void test_int_rejections(void **state)
{
    (void)state;
    int64_t v;
    uint64_t u;
    struct xg_error e = {0};
    /* 11 bytes */
    assert_int_equal(decode_int_hex("80 80 80 80 80 80 80 80 80 80 00", &v, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "longer than 10 bytes");
    xg_test_assert_err_contains(&e, "field");
    /* 2^63: fits uint64 but not int64 */
    assert_int_equal(decode_int_hex("80 80 80 80 80 80 80 80 80 02", &v, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "overflows int64");
    assert_int_equal(decode_uint_hex("80 80 80 80 80 80 80 80 80 02", &u, &e), 0);
    assert_true(u == (uint64_t)1 << 63);
    /* bits beyond 64 */
    assert_int_equal(decode_int_hex("bf ff ff ff ff ff ff ff ff 04", &v, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "overflows 64 bits");
    assert_int_equal(decode_uint_hex("bf ff ff ff ff ff ff ff ff 7f", &u, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "overflows 64 bits");
    /* below INT64_MIN: ~v = 2^63 */
    assert_int_equal(decode_int_hex("c0 80 80 80 80 80 80 80 80 02", &v, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "overflows int64");
    /* truncation */
    assert_int_equal(decode_int_hex("", &v, &e), -EMSGSIZE);
    assert_int_equal(decode_int_hex("80", &v, &e), -EMSGSIZE);
    xg_test_assert_err_contains(&e, "truncated");
    assert_int_equal(decode_int_hex("80 80 80", &v, &e), -EMSGSIZE);
    /* unsigned fields reject the negative form (P11) */
    assert_int_equal(decode_uint_hex("c0 00", &u, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "negative INTEGER -1");
    assert_int_equal(decode_uint_hex("ff ff ff ff ff ff ff ff ff 01", &u, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "negative INTEGER -9223372036854775808");
}

static void test_int_roundtrip_sweep(void **state)
{
    (void)state;
    uint8_t buf[16];
    struct xg_writer w;
    struct xg_reader r;
    for (int k = 0; k < 64; k++) {
        uint64_t base = (uint64_t)1 << k; /* modular arithmetic, converted (gcc: wraps) */
        int64_t cands[] = {(int64_t)(base - 1), (int64_t)base,           (int64_t)(base + 1),
                           (int64_t)(0 - base), (int64_t)(0 - base - 1), (int64_t)(1 - base)};
        for (size_t i = 0; i < 6; i++) {
            int64_t v = cands[i];
            xg_writer_init(&w, buf, sizeof buf);
            assert_int_equal(less_put_int(&w, v), 0);
            assert_true(w.len <= LESS_INT_MAX_BYTES);
            assert_int_equal(w.len, less_int_size(v));
            xg_reader_init(&r, buf, w.len);
            int64_t got;
            assert_int_equal(less_get_int(&r, &got, "v", NULL), 0);
            assert_true(got == v);
            assert_int_equal(r.off, w.len);
            /* the last byte never has the continuation bit, earlier ones (after byte 0) do */
            assert_int_equal(buf[w.len - 1] & 0x80, 0);
            for (size_t b = 1; b + 1 < w.len; b++)
                assert_int_equal(buf[b] & 0x80, 0x80);
        }
        uint64_t u = ((uint64_t)1 << k) + 3;
        xg_writer_init(&w, buf, sizeof buf);
        assert_int_equal(less_put_uint(&w, u), 0);
        assert_int_equal(w.len, less_uint_size(u));
        xg_reader_init(&r, buf, w.len);
        uint64_t ug;
        assert_int_equal(less_get_uint(&r, &ug, "u", NULL), 0);
        assert_true(ug == u);
    }
    /* length limits from wire-rules §4.1 */
    assert_int_equal(less_int_size(8191), 2);
    assert_int_equal(less_int_size(8192), 3);
    assert_int_equal(less_int_size(1048575), 3);
    assert_int_equal(less_int_size(1048576), 4);
    /* a full writer reports -EMSGSIZE */
    xg_writer_init(&w, buf, 1);
    assert_int_equal(less_put_int(&w, 128), -EMSGSIZE);
}

/* ---- STRING ---- */

static void test_string(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct xg_writer w;
    struct xg_reader r;
    struct xg_error e = {0};
    const char *s;
    size_t len;
    /* ASCII: one byte per element */
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_put_string(&w, "abc", 3, &e), 0);
    xg_test_assert_bytes(buf, w.len, "03 61 62 63");
    /* P2 / wire-rules §5.4: é = C3 A9 -> unsigned elements 83 03 a9 02, length counts bytes */
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_put_string(&w, "\xc3\xa9", 2, &e), 0);
    xg_test_assert_bytes(buf, w.len, "02 83 03 a9 02");
    xg_reader_init(&r, buf, w.len);
    assert_int_equal(less_get_string(&r, fresh_arena(), &s, &len, &e), 0);
    assert_int_equal(len, 2);
    assert_string_equal(s, "\xc3\xa9");
    /* empty */
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_put_string(&w, "", 0, &e), 0);
    xg_test_assert_bytes(buf, w.len, "00");
    /* encoder rejects invalid UTF-8 and NUL */
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_put_string(&w, "a\xc3", 2, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "invalid UTF-8 byte 0xc3 at index 1");
    assert_int_equal(less_put_string(&w, "a\0b", 3, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "NUL");
    assert_int_equal(w.len, 0);

    struct {
        const char *hex, *msg;
        int rc;
    } bad[] = {
        {"01 80 04", "value 256", -EPROTO},           /* element > 255 */
        {"01 c0 00", "negative INTEGER -1", -EPROTO}, /* negative element */
        /* wire-rules §5.4: the signed-char form of "é" (fc 00 d6 01) is not the profile's (P2) */
        {"02 fc 00 d6 01", "negative INTEGER -61", -EPROTO},
        {"01 83 03", "invalid UTF-8", -EPROTO},             /* lone lead byte */
        {"02 80 03 af 02", "invalid UTF-8", -EPROTO},       /* overlong C0 AF */
        {"03 ad 03 a0 02 80 02", "invalid UTF-8", -EPROTO}, /* surrogate ED A0 80 */
        {"01 00", "NUL", -EPROTO},
        {"05 61", "exceeds", -EPROTO},        /* count > bytes left */
        {"c0 00", "negative", -EPROTO},       /* negative length */
        {"02 61 80", "truncated", -EMSGSIZE}, /* element cut short */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t in[16];
        size_t n = xg_test_unhex(bad[i].hex, in, sizeof in);
        xg_reader_init(&r, in, n);
        assert_int_equal(less_get_string(&r, fresh_arena(), &s, &len, &e), bad[i].rc);
        xg_test_assert_err_contains(&e, bad[i].msg);
    }
}

/* ---- floats, variants ---- */

static void roundtrip_variant(const struct less_value *v, const char *hex, struct less_value *out)
{
    static uint8_t buf[256]; /* decoded binaries point into it */
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_put_variant(&w, v, &e), 0);
    xg_test_assert_bytes(buf, w.len, hex);
    struct xg_reader r;
    xg_reader_init(&r, buf, w.len);
    assert_int_equal(less_get_variant(&r, fresh_arena(), out, &e), 0);
    assert_int_equal(r.off, w.len);
    assert_true(less_type_equal(out->type, v->type));
    /* re-encode the decoded value: identical bytes */
    uint8_t again[256];
    xg_writer_init(&w, again, sizeof again);
    assert_int_equal(less_put_variant(&w, out, &e), 0);
    xg_test_assert_bytes(again, w.len, hex);
}

static void test_floats(void **state)
{
    (void)state;
    struct less_value v = {&less_type_float16, {.f = 1.0}}, out;
    roundtrip_variant(&v, "04 02 00 3c", &out); /* binary16 1.0 = 0x3c00, little-endian */
    assert_true(out.u.f == 1.0);
    v = (struct less_value){&less_type_float32, {.f = 1.0}};
    roundtrip_variant(&v, "05 04 00 00 80 3f", &out);
    v = (struct less_value){&less_type_float64, {.f = -2.5}};
    roundtrip_variant(&v, "06 08 00 00 00 00 00 00 04 c0", &out);
    assert_true(out.u.f == -2.5);
    /* FLOAT16 rounds on encode: 0.1 -> 0x2e66 */
    v = (struct less_value){&less_type_float16, {.f = 0.1}};
    roundtrip_variant(&v, "04 02 66 2e", &out);
    assert_true(fabs(out.u.f - 0.1) < 1e-4);
    /* truncated float data inside a variant: the declared length is checked first */
    uint8_t in[] = {0x05, 0x04, 0x00, 0x00, 0x80};
    struct xg_reader r;
    struct xg_error e = {0};
    xg_reader_init(&r, in, sizeof in);
    assert_int_equal(less_get_variant(&r, fresh_arena(), &out, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "STANDALONE-VARIANT length");
    /* context-dependent FLOAT32 cut short */
    xg_reader_init(&r, in + 2, 3);
    assert_int_equal(less_get_value(&r, &less_type_float32, fresh_arena(), &out, &e), -EMSGSIZE);
    xg_test_assert_err_contains(&e, "FLOAT32 at offset 0: truncated");
}

/* A finite value beyond a float type's range is sent as the largest finite value of that type,
 * never as Inf (issue 22 item 6: no egress emits a non-finite float from a finite pose). */
static void test_floats_saturate(void **state)
{
    (void)state;
    struct less_value v = {&less_type_float16, {.f = 1e6}}, out;
    roundtrip_variant(&v, "04 02 ff 7b", &out); /* 65504 = 0x7bff */
    assert_true(out.u.f == 65504.0);
    v = (struct less_value){&less_type_float16, {.f = -1e300}};
    roundtrip_variant(&v, "04 02 ff fb", &out);
    v = (struct less_value){&less_type_float32, {.f = 1e39}};
    roundtrip_variant(&v, "05 04 ff ff 7f 7f", &out); /* FLT_MAX */
    assert_true(isfinite(out.u.f));
    v = (struct less_value){&less_type_float32, {.f = -1.7e308}};
    roundtrip_variant(&v, "05 04 ff ff 7f ff", &out);
    /* in range: unchanged (65504 exactly, 65519 rounds to 65504 as before) */
    v = (struct less_value){&less_type_float16, {.f = 65519.0}};
    roundtrip_variant(&v, "04 02 ff 7b", &out);
}

static void test_variants(void **state)
{
    (void)state;
    struct less_value out;
    struct less_value v = {&less_type_null, {.i = 0}};
    roundtrip_variant(&v, "00 00", &out); /* NULL: length 0, no data (P6) */

    v = (struct less_value){&less_type_integer, {.i = 200}};
    roundtrip_variant(&v, "02 02 88 03", &out);
    assert_int_equal(out.u.i, 200);

    v = (struct less_value){&less_type_object_id, {.i = 5}};
    roundtrip_variant(&v, "01 01 05", &out);

    v = (struct less_value){&less_type_string, {.str = {"hi", 2}}};
    roundtrip_variant(&v, "03 03 02 68 69", &out);
    assert_string_equal(out.u.str.p, "hi");

    static const struct less_type list_int = {LESS_T_LIST, 0, &less_type_integer};
    struct less_value items[2] = {{&less_type_integer, {.i = 1}}, {NULL, {.i = -1}}};
    v = (struct less_value){&list_int, {.list = {items, 2}}};
    roundtrip_variant(&v, "07 02 04 02 01 c0 00", &out);
    assert_int_equal(out.u.list.count, 2);
    assert_int_equal(out.u.list.items[1].u.i, -1);

    /* VECTOR(3, FLOAT32): descriptor 8 3 5 (P6), data 12 bytes */
    struct less_value f3[3] = {{NULL, {.f = 1.0}}, {NULL, {.f = 2.0}}, {NULL, {.f = -0.5}}};
    v = (struct less_value){&less_type_vec3f, {.list = {f3, 3}}};
    roundtrip_variant(&v, "08 03 05 0c 0000803f 00000040 000000bf", &out);
    assert_true(out.u.list.items[2].u.f == -0.5);

    static const struct less_type fixed4 = {LESS_T_FIXEDBIN, 4, NULL};
    static const uint8_t dead[4] = {0xde, 0xad, 0xbe, 0xef};
    v = (struct less_value){&fixed4, {.bin = {dead, 4}}};
    roundtrip_variant(&v, "0b 04 04 de ad be ef", &out);
    assert_memory_equal(out.u.bin.p, dead, 4);

    v = (struct less_value){&less_type_varbin, {.bin = {dead, 2}}};
    roundtrip_variant(&v, "0a 03 02 de ad", &out);

    v = (struct less_value){&less_type_uuid,
                            {.uuid = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56,
                                      0x42, 0x66, 0x14, 0x17, 0x40, 0x00}}};
    roundtrip_variant(&v, "0c 10 123e4567e89b12d3a456426614174000", &out);

    /* a variant holding a variant holding INTEGER 7 */
    struct less_value inner = {&less_type_integer, {.i = 7}};
    v = (struct less_value){&less_type_variant, {.variant = &inner}};
    roundtrip_variant(&v, "09 03 02 01 07", &out);
    assert_int_equal(out.u.variant->u.i, 7);

    /* LIST(LIST(STRING)) */
    static const struct less_type list_str = {LESS_T_LIST, 0, &less_type_string};
    static const struct less_type list_list = {LESS_T_LIST, 0, &list_str};
    struct less_value strs[1] = {{NULL, {.str = {"a", 1}}}};
    struct less_value lists[2] = {{NULL, {.list = {strs, 1}}}, {NULL, {.list = {NULL, 0}}}};
    v = (struct less_value){&list_list, {.list = {lists, 2}}};
    roundtrip_variant(&v, "07 07 03 05 02 01 01 61 00", &out);
}

static void test_variant_rejections(void **state)
{
    (void)state;
    struct {
        const char *hex, *msg;
        int rc;
    } bad[] = {
        {"02 02 05 00", "INTEGER data length 2 but value uses 1", -EPROTO},
        {"0d 00", "unknown type code 13", -EPROTO},
        {"c0 00 00", "negative", -EPROTO},
        {"07 07 07 07 07 07 07 07 07 07 02 00", "deeper than 8", -EPROTO},
        {"08 80 80 10 02 00", "VECTOR count: count 131072", -EPROTO},
        {"07 02 02 09 00", "LIST count: count 9", -EPROTO},
        {"0b 04 02 de ad", "FIXED-BINARY at offset 0: truncated", -EMSGSIZE},
        {"0a 03 05 01 02", "VARIABLE-BINARY length", -EPROTO},
        {"03 03 01 80 04", "value 256", -EPROTO},
        {"02 09 01", "STANDALONE-VARIANT length", -EPROTO},
        {"02", "truncated", -EMSGSIZE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t in[64];
        size_t n = xg_test_unhex(bad[i].hex, in, sizeof in);
        struct xg_reader r;
        struct less_value out;
        struct xg_error e = {0};
        xg_reader_init(&r, in, n);
        int rc = less_get_variant(&r, fresh_arena(), &out, &e);
        if (rc != bad[i].rc || !strstr(e.msg, bad[i].msg)) {
            fprintf(stderr, "case %zu (%s): rc %d msg \"%s\"\n", i, bad[i].hex, rc, e.msg);
            fail();
        }
    }
    /* variants nested 9 deep (each level: 09 <length>), innermost NULL variant "00 00" */
    {
        uint8_t in[64];
        size_t n = 0, levels = 9;
        for (size_t k = 0; k < levels; k++) {
            in[n++] = 0x09;
            in[n++] = (uint8_t)(2 * (levels - k)); /* data = the rest */
        }
        in[n++] = 0x00;
        in[n++] = 0x00;
        struct xg_reader r;
        struct less_value out;
        struct xg_error e = {0};
        xg_reader_init(&r, in, n);
        assert_int_equal(less_get_variant(&r, fresh_arena(), &out, &e), -EPROTO);
        xg_test_assert_err_contains(&e, "deeper than 8");
        /* 8 levels are fine */
        xg_reader_init(&r, in + 2, n - 2);
        assert_int_equal(less_get_variant(&r, fresh_arena(), &out, &e), 0);
        assert_int_equal(r.off, n - 2);
    }
    /* the arena bounds memory: a LIST of 200 INTEGERs in a 1 KiB arena */
    uint8_t in[256];
    size_t n = 0;
    in[n++] = 0x07;
    in[n++] = 0x02;
    in[n++] = 0x8a; /* length 202: 0x8a 0x03 */
    in[n++] = 0x03;
    in[n++] = 0x88; /* count 200 */
    in[n++] = 0x03;
    for (int i = 0; i < 200; i++)
        in[n++] = 0x01;
    uint8_t small[1024];
    struct less_arena a;
    less_arena_init(&a, small, sizeof small);
    struct xg_reader r;
    struct less_value out;
    struct xg_error e = {0};
    xg_reader_init(&r, in, n);
    assert_int_equal(less_get_variant(&r, &a, &out, &e), -ENOBUFS);
    xg_test_assert_err_contains(&e, "arena full");
    /* ...and fits in the big one */
    xg_reader_init(&r, in, n);
    assert_int_equal(less_get_variant(&r, fresh_arena(), &out, &e), 0);
    assert_int_equal(out.u.list.count, 200);
}

static void test_value_encode_rejections(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct xg_writer w;
    struct xg_error e = {0};
    struct less_value f2[2] = {{NULL, {.f = 1}}, {NULL, {.f = 2}}};
    struct less_value v = {NULL, {.list = {f2, 2}}};
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_put_value(&w, &less_type_vec3f, &v, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "VECTOR: 2 elements, type says 3");
    v = (struct less_value){&less_type_string, {.str = {"x", 1}}};
    assert_int_equal(less_put_value(&w, &less_type_vec3f, &v, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "has type STRING, expected VECTOR");
    static const struct less_type bad_list = {LESS_T_LIST, 0, NULL};
    assert_int_equal(less_put_type(&w, &bad_list, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "missing descriptor");
    static const struct less_type bad_code = {42, 0, NULL};
    assert_int_equal(less_put_type(&w, &bad_code, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "unknown type code 42");
    v = (struct less_value){NULL, {.i = 0}};
    assert_int_equal(less_put_variant(&w, &v, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "without a type");
    /* output too small */
    xg_writer_init(&w, buf, 3);
    v = (struct less_value){&less_type_float64, {.f = 1}};
    assert_int_equal(less_put_variant(&w, &v, &e), -EMSGSIZE);
    xg_test_assert_err_contains(&e, "output full");
    assert_int_equal(w.len, 0);
    assert_int_equal(w.err, 0);
}

/* ---- schemas ---- */

static void test_pose_schema(void **state)
{
    (void)state;
    const struct less_schema *s = less_pose_schema();
    assert_string_equal(s->uri, "urn:xrgate:lods:pose:1");
    assert_int_equal(s->n_components, 1);
    assert_int_equal(s->components[0].n_props, 9);
    const struct less_property *p = s->components[0].props;
    assert_string_equal(p[LESS_POSE_NAME].name, "name");
    assert_int_equal(p[LESS_POSE_NAME].type.code, LESS_T_STRING);
    assert_int_equal(p[LESS_POSE_KIND].type.code, LESS_T_INTEGER);
    assert_true(less_type_equal(&p[LESS_POSE_POSITION].type, &less_type_vec3f));
    assert_true(less_type_equal(&p[LESS_POSE_VELOCITY].type, &less_type_vec3f));
    assert_true(less_type_equal(&p[LESS_POSE_ORIENTATION].type, &less_type_vec4f));
    assert_true(less_type_equal(&p[LESS_POSE_ANGULAR_VELOCITY].type, &less_type_vec3f));
    assert_int_equal(p[LESS_POSE_ACTIVE].type.code, LESS_T_INTEGER);
    assert_int_equal(p[LESS_POSE_ORIGIN].type.code, LESS_T_STRING);
    assert_int_equal(p[LESS_POSE_SAMPLE_TIME].type.code, LESS_T_INTEGER);
    assert_false(less_type_equal(&less_type_vec3f, &less_type_vec4f));
    assert_int_equal(less_schema_validate(s, NULL), 0);

    const struct less_schema *c = less_connection_schema();
    assert_string_equal(c->uri, "urn:xrgate:less:connection:1");
    assert_int_equal(c->components[0].n_props, 5);
    assert_int_equal(c->components[0].props[LESS_CONN_SCHEMA].type.code, LESS_T_STRING);
    assert_int_equal(c->components[0].props[LESS_CONN_FIRST_SEQ].type.code, LESS_T_INTEGER);
    assert_int_equal(c->components[0].props[LESS_CONN_QUANTUM_NS].type.code, LESS_T_INTEGER);
    assert_int_equal(c->components[0].props[LESS_CONN_KEY_ID].type.code, LESS_T_STRING);
    assert_int_equal(c->components[0].props[LESS_CONN_RATE_HZ].type.code, LESS_T_INTEGER);
    assert_int_equal(less_schema_validate(c, NULL), 0);

    static const struct less_property badp[] = {{"ok", {LESS_T_INTEGER, 0, NULL}},
                                                {"vec", {LESS_T_VECTOR, 3, NULL}}};
    static const struct less_component badc[] = {{"c", badp, 2}};
    static const struct less_schema bad = {"urn:test:bad", badc, 1, NULL, 0};
    struct xg_error e = {0};
    assert_int_equal(less_schema_validate(&bad, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "urn:test:bad: component 0 property 1 (vec)");
    static const struct less_schema nouri = {NULL, badc, 1, NULL, 0};
    assert_int_equal(less_schema_validate(&nouri, &e), -EINVAL);
}

/* ---- messages ---- */

/* Test peer state: type 1 is the pose schema in both directions; entities 7 and 8 are poses. */
static const struct less_schema *t_type(void *u, int64_t id)
{
    (void)u;
    return id == 1 ? less_pose_schema() : NULL;
}

static int t_entity(void *u, int64_t id, int64_t *type)
{
    (void)u;
    if (id != 7 && id != 8) return -1;
    *type = 1;
    return 0;
}

static const struct less_property collision_props[] = {
    {"a", {LESS_T_OBJECT_ID, 0, NULL}},
    {"b", {LESS_T_OBJECT_ID, 0, NULL}},
    {"impulse", {LESS_T_FLOAT32, 0, NULL}},
    {"marker", {LESS_T_NULL, 0, NULL}},
};
static const struct less_component test_interactions[] = {{"collision", collision_props, 4}};
static const struct less_schema interaction_schema = {"urn:test:interactions:1", NULL, 0,
                                                      test_interactions, 1};
static const struct less_context tctx = {t_type, t_type, t_entity, t_entity, &interaction_schema,
                                         NULL,   NULL};

static struct less_msg decoded;

/* Encode m, compare with hex, decode, re-encode: same bytes. Leaves the decoded msg in
 * `decoded` (arena-backed). */
static void msg_roundtrip(const struct less_msg *m, const char *hex)
{
    uint8_t buf[512], again[512];
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, buf, sizeof buf);
    if (less_encode_msg(&w, &tctx, m, &e) != 0) {
        fprintf(stderr, "encode: %s\n", e.msg);
        fail();
    }
    xg_test_assert_bytes(buf, w.len, hex);
    struct xg_reader r;
    xg_reader_init(&r, buf, w.len);
    if (less_decode_msg(&r, &tctx, fresh_arena(), &decoded, &e) != 0) {
        fprintf(stderr, "decode: %s\n", e.msg);
        fail();
    }
    assert_int_equal(r.off, w.len);
    assert_int_equal(decoded.code, m->code);
    size_t n = w.len;
    xg_writer_init(&w, again, sizeof again);
    assert_int_equal(less_encode_msg(&w, &tctx, &decoded, &e), 0);
    assert_int_equal(w.len, n);
    assert_memory_equal(again, buf, n);
    /* every strict prefix fails cleanly, reading only the exact-size copy (ASan checks) */
    for (size_t k = 0; k < n; k++) {
        uint8_t *cut = malloc(k ? k : 1);
        assert_non_null(cut);
        memcpy(cut, buf, k);
        struct less_msg tmp;
        xg_reader_init(&r, cut, k);
        static uint8_t scratch[1 << 14];
        struct less_arena sa;
        less_arena_init(&sa, scratch, sizeof scratch);
        int rc = less_decode_msg(&r, &tctx, &sa, &tmp, NULL);
        /* some prefixes are complete shorter messages (e.g. a LIST that ends early is not) */
        if (rc == 0)
            assert_true(r.off <= k);
        else
            assert_true(rc == -EMSGSIZE || rc == -EPROTO);
        free(cut);
    }
}

static void test_msg_introduce_type(void **state)
{
    (void)state;
    struct less_msg m = {.code = LESS_MSG_INTRODUCE_TYPE};
    m.u.introduce_type.typeid = 1;
    m.u.introduce_type.uri = LESS_POSE_URI;
    m.u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    msg_roundtrip(&m, "01 01 16 75726e3a7872676174653a6c6f64733a706f73653a31");
    assert_string_equal(decoded.u.introduce_type.uri, LESS_POSE_URI);
}

static void test_msg_subscribe_unsubscribe(void **state)
{
    (void)state;
    static const int64_t props[] = {LESS_POSE_POSITION, LESS_POSE_ORIENTATION};
    struct less_comp_subscription cs = {{1, {0}}, props, 2};
    struct less_msg m = {.code = LESS_MSG_SUBSCRIBE_TYPE};
    m.u.subscribe_type.typeid = 1;
    m.u.subscribe_type.components = &cs;
    m.u.subscribe_type.count = 1;
    /* code, typeid, component-count, path-length, component-id, property-id-count, ids */
    msg_roundtrip(&m, "02 01 01 01 00 02 02 04");
    assert_int_equal(decoded.u.subscribe_type.components[0].property_ids[1], 4);
    /* empty property list: subscribes to nothing (P15) */
    cs.count = 0;
    msg_roundtrip(&m, "02 01 01 01 00 00");

    m = (struct less_msg){.code = LESS_MSG_UNSUBSCRIBE_TYPE};
    m.u.unsubscribe_type.typeid = 1;
    msg_roundtrip(&m, "03 01");
}

static struct less_value vec(struct less_value *items, size_t n)
{
    return (struct less_value){NULL, {.list = {items, n}}};
}

static void test_msg_introduce_update_entity(void **state)
{
    (void)state;
    struct less_value pos[3] = {{NULL, {.f = 1.0}}, {NULL, {.f = 2.0}}, {NULL, {.f = -0.5}}};
    struct less_value q[4] = {
        {NULL, {.f = 0}}, {NULL, {.f = 0}}, {NULL, {.f = 0}}, {NULL, {.f = 1}}};
    struct less_prop_value pv[] = {
        {LESS_POSE_NAME, {NULL, {.str = {"head", 4}}}},
        {LESS_POSE_KIND, {NULL, {.i = LESS_KIND_HEAD}}},
        {LESS_POSE_POSITION, vec(pos, 3)},
        {LESS_POSE_ORIENTATION, vec(q, 4)},
        {LESS_POSE_ACTIVE, {NULL, {.i = 1}}},
        {LESS_POSE_ORIGIN, {NULL, {.str = {"lab-a/sim", 9}}}},
        {LESS_POSE_SAMPLE_TIME, {NULL, {.i = 1000000}}},
    };
    struct less_comp_values cv = {0, {pv, 7}};
    struct less_msg m = {.code = LESS_MSG_INTRODUCE_ENTITY};
    m.u.introduce_entity.typeid = 1;
    m.u.introduce_entity.entity_id = 7;
    m.u.introduce_entity.components = (struct less_comp_values_list){&cv, 1};
    msg_roundtrip(&m, "04 01 07 01 00 07"
                      "00 04 68656164"
                      "01 01"
                      "02 0000803f 00000040 000000bf"
                      "04 00000000 00000000 00000000 0000803f"
                      "06 01"
                      "07 09 6c61622d612f73696d"
                      "08 80897a");
    const struct less_prop_list *pl = &decoded.u.introduce_entity.components.items[0].props;
    assert_int_equal(pl->count, 7);
    assert_string_equal(pl->items[0].value.u.str.p, "head");
    assert_true(pl->items[2].value.u.list.items[1].u.f == 2.0);
    assert_int_equal(pl->items[6].value.u.i, 1000000);

    /* update-entity: position only */
    struct less_comp_values cu = {0, {&pv[2], 1}};
    m = (struct less_msg){.code = LESS_MSG_UPDATE_ENTITY};
    m.u.update_entity.entity_id = 7;
    m.u.update_entity.components = (struct less_comp_values_list){&cu, 1};
    msg_roundtrip(&m, "06 07 01 00 01 02 0000803f 00000040 000000bf");
    /* an update with no components is legal (nothing changed) */
    m.u.update_entity.components.count = 0;
    msg_roundtrip(&m, "06 07 00");
}

static void test_msg_simple_ids(void **state)
{
    (void)state;
    struct less_msg m = {.code = LESS_MSG_REMOVE_ENTITY};
    m.u.remove_entity.entity_id = 300;
    msg_roundtrip(&m, "05 ac 04");
    assert_int_equal(decoded.u.remove_entity.entity_id, 300);
    m = (struct less_msg){.code = LESS_MSG_REQUEST_ENTITY};
    m.u.request_entity.entity_id = 8;
    msg_roundtrip(&m, "07 08");
}

static void test_msg_methods(void **state)
{
    (void)state;
    struct less_value args[2] = {{&less_type_integer, {.i = 5}},
                                 {&less_type_string, {.str = {"x", 1}}}};
    struct less_msg m = {.code = LESS_MSG_METHOD_INVOCATION};
    m.u.method_invocation.request_id = 42;
    m.u.method_invocation.entity_id = 7;
    m.u.method_invocation.path = (struct less_path){1, {0}};
    m.u.method_invocation.property_id = 3;
    m.u.method_invocation.args = args;
    m.u.method_invocation.argc = 2;
    /* code, request-id, entity-id, path (1: 0), property-id, argument-count, 2 variants */
    msg_roundtrip(&m, "08 2a 07 01 00 03 02 02 01 05 03 02 01 78");
    assert_string_equal(decoded.u.method_invocation.args[1].u.str.p, "x");

    m = (struct less_msg){.code = LESS_MSG_METHOD_RESULT};
    m.u.method_result.request_id = 42;
    m.u.method_result.status = 404; /* P17 */
    m.u.method_result.ret = (struct less_value){&less_type_string, {.str = {"no methods", 10}}};
    msg_roundtrip(&m, "09 2a 94 06 03 0b 0a 6e6f206d6574686f6473");
    assert_int_equal(decoded.u.method_result.status, 404);
    m.u.method_result.status = 0;
    m.u.method_result.ret = (struct less_value){&less_type_null, {.i = 0}};
    msg_roundtrip(&m, "09 2a 00 00 00");
}

static void test_msg_interaction_tweak_control(void **state)
{
    (void)state;
    struct less_prop_value ip[] = {
        {0, {NULL, {.i = 7}}}, {1, {NULL, {.i = 9}}}, {2, {NULL, {.f = 0.5}}}};
    struct less_msg m = {.code = LESS_MSG_INTERACTION};
    m.u.interaction.interaction_id = 0;
    m.u.interaction.props = (struct less_prop_list){ip, 3};
    msg_roundtrip(&m, "0a 00 03 00 07 01 09 02 0000003f");
    /* a NULL-typed property takes only its id byte (found by fuzzing: the property-count bound
     * must allow one byte per property) */
    struct less_prop_value marker = {3, {NULL, {.i = 0}}};
    m.u.interaction.props = (struct less_prop_list){&marker, 1};
    msg_roundtrip(&m, "0a 00 01 03");

    m = (struct less_msg){.code = LESS_MSG_TWEAK_ENTITY};
    m.u.tweak_entity.entity_id = 8;
    m.u.tweak_entity.path = (struct less_path){1, {0}};
    m.u.tweak_entity.property_id = LESS_POSE_ACTIVE;
    m.u.tweak_entity.value = (struct less_value){NULL, {.i = 0}};
    msg_roundtrip(&m, "0b 08 01 00 06 00");

    struct less_prop_value cp[] = {
        {LESS_CONN_SCHEMA, {NULL, {.str = {LESS_CONNECTION_URI, strlen(LESS_CONNECTION_URI)}}}},
        {LESS_CONN_FIRST_SEQ, {NULL, {.i = 0}}},
        {LESS_CONN_QUANTUM_NS, {NULL, {.i = 1000}}},
        {LESS_CONN_KEY_ID, {NULL, {.str = {"k1", 2}}}},
        {LESS_CONN_RATE_HZ, {NULL, {.i = 60}}},
    };
    m = (struct less_msg){.code = LESS_MSG_CONNECTION_CONTROL};
    m.u.connection_control.props = (struct less_prop_list){cp, 5};
    /* P5: code 12, then a property-value-list of urn:xrgate:less:connection:1 */
    msg_roundtrip(&m, "0c 05 00 1c 75726e3a7872676174653a6c6573733a636f6e6e656374696f6e3a31"
                      "01 00 02 a8 0f 03 02 6b31 04 3c");
    assert_int_equal(decoded.u.connection_control.props.items[2].value.u.i, 1000);
}

static int decode_hex_msg(const char *hex, struct xg_error *e)
{
    uint8_t buf[256];
    size_t n = xg_test_unhex(hex, buf, sizeof buf);
    struct xg_reader r;
    struct less_msg m;
    xg_reader_init(&r, buf, n);
    int rc = less_decode_msg(&r, &tctx, fresh_arena(), &m, e);
    if (rc == 0 && r.off != n) return 1; /* distinguishes "decoded but left bytes" */
    return rc;
}

static void test_msg_rejections(void **state)
{
    (void)state;
    struct {
        const char *hex, *msg;
    } bad[] = {
        {"00", "unknown message code 0"},
        {"0d", "unknown message code 13"},
        {"c0 00", "negative"},
        {"04 09 07 00", "LESS introduce-entity: unknown typeid 9 (not introduced by the sender)"},
        {"06 63 00", "LESS update-entity: unknown entity 99"},
        {"06 07 01 01 00", "component 1 at offset 3 not in urn:xrgate:lods:pose:1"},
        {"06 07 01 00 01 09 00",
         "property 9 at offset 5 not in component 0 of urn:xrgate:lods:pose:1"},
        {"06 07 01 00 01 02 0000803f", "VECTOR at offset 6: truncated"},
        {"06 07 01 00 01 00 01 c0 00",
         "LESS update-entity: property 0 (name): STRING element: negative INTEGER -1"},
        {"02 05 00", "LESS subscribe-type: unknown typeid 5 (not introduced by the receiver)"},
        {"02 01 01 02 00 00 00", "does not name a component"},
        {"02 01 01 00 00", "does not name a component"},
        {"02 01 01 01 00 01 0c", "property 12"},
        {"03 02", "unknown typeid 2"},
        {"08 01 07 09 00 00 00 00 00 00 00 00 00 00 00", "path-length: count 9"},
        {"08 01 07 00 03 01 02 02 05 00",
         "argument 0: STANDALONE-VARIANT at offset 6: INTEGER data length 2 but value uses 1"},
        {"0a 01 00", "unknown interaction-id 1"},
        {"0a 00 01 04 00", "property 4 at offset 3 not in the interaction"},
        {"0b 09 01 00 06 00",
         "LESS tweak-entity: unknown entity 9 (not introduced by the receiver)"},
        {"0b 07 01 00 0a 00", "property 10"},
        {"0c 01 05 00", "property 5 at offset 2 not in urn:xrgate:less:connection:1"},
        {"01 01 05 61", "count 5 at offset 2 exceeds the data"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct xg_error e = {0};
        int rc = decode_hex_msg(bad[i].hex, &e);
        if (rc >= 0 || !strstr(e.msg, bad[i].msg)) {
            fprintf(stderr, "case %zu (%s): rc %d msg \"%s\" want \"%s\"\n", i, bad[i].hex, rc,
                    e.msg, bad[i].msg);
            fail();
        }
    }
    /* no context at all: schema-bound messages are unknown, schema-free ones decode */
    uint8_t upd[] = {0x06, 0x07, 0x00};
    struct xg_reader r;
    struct less_msg m;
    struct xg_error e = {0};
    xg_reader_init(&r, upd, sizeof upd);
    assert_int_equal(less_decode_msg(&r, NULL, fresh_arena(), &m, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "unknown entity 7");
    uint8_t rem[] = {0x05, 0x07};
    xg_reader_init(&r, rem, sizeof rem);
    assert_int_equal(less_decode_msg(&r, NULL, fresh_arena(), &m, &e), 0);
}

static void test_msg_encode_rejections(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct xg_writer w;
    struct xg_error e = {0};
    struct less_prop_value pv = {LESS_POSE_POSITION, {NULL, {.str = {"x", 1}}}};
    pv.value.type = &less_type_string;
    struct less_comp_values cv = {0, {&pv, 1}};
    struct less_msg m = {.code = LESS_MSG_UPDATE_ENTITY};
    m.u.update_entity.entity_id = 7;
    m.u.update_entity.components = (struct less_comp_values_list){&cv, 1};
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EINVAL);
    xg_test_assert_err_contains(&e,
                                "LESS encode update-entity: property 2 (position): value: has type "
                                "STRING, expected VECTOR");
    assert_int_equal(w.len, 0); /* nothing half-written */
    pv.property_id = 20;
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "property 20 not in component 0 of urn:xrgate:lods:pose:1");
    m.u.update_entity.entity_id = 99;
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "unknown entity 99");
    m = (struct less_msg){.code = (enum less_msg_code)13};
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "unknown message code 13");
    /* too small an output */
    m = (struct less_msg){.code = LESS_MSG_INTRODUCE_TYPE};
    m.u.introduce_type.typeid = 1;
    m.u.introduce_type.uri = LESS_POSE_URI;
    m.u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    xg_writer_init(&w, buf, 10);
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EMSGSIZE);
    xg_test_assert_err_contains(&e, "output full");
    assert_int_equal(w.len, 0);
    assert_int_equal(w.err, 0);
    /* a message that fits after one that did not: the writer is still usable */
    m = (struct less_msg){.code = LESS_MSG_REMOVE_ENTITY};
    m.u.remove_entity.entity_id = 7;
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), 0);
    xg_test_assert_bytes(buf, w.len, "05 07");
}

/* ---- pose helpers ---- */

static void test_pose_props_roundtrip(void **state)
{
    (void)state;
    struct less_pose p = {0};
    p.present = LESS_POSE_ALL;
    p.name = "rig/Tracker0/0";
    p.name_len = strlen(p.name);
    p.kind = LESS_KIND_RIGID_BODY;
    p.position = (struct xg_vec3){1.5, -2.25, 0.125};
    p.velocity = (struct xg_vec3){0.5, 0, -1};
    p.orientation = (struct xg_quat){0, 0.6, 0, 0.8};
    p.angular_velocity = (struct xg_vec3){0, 3.0, 0};
    p.active = 1;
    p.origin = "lab-a/rig";
    p.origin_len = strlen(p.origin);
    p.sample_time = 123456789;
    struct less_pose_props pp;
    less_pose_to_props(&p, LESS_POSE_ALL, &pp);
    assert_int_equal(pp.list.count, 9);
    for (size_t i = 0; i < 9; i++)
        assert_int_equal(pp.list.items[i].property_id, (int64_t)i);

    struct less_comp_values cv = {0, pp.list};
    struct less_msg m = {.code = LESS_MSG_INTRODUCE_ENTITY};
    m.u.introduce_entity.typeid = 1;
    m.u.introduce_entity.entity_id = 8;
    m.u.introduce_entity.components = (struct less_comp_values_list){&cv, 1};
    uint8_t buf[256];
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), 0);
    struct xg_reader r;
    xg_reader_init(&r, buf, w.len);
    struct less_msg d;
    assert_int_equal(less_decode_msg(&r, &tctx, fresh_arena(), &d, &e), 0);
    struct less_pose q = {0};
    assert_int_equal(less_pose_from_props(&d.u.introduce_entity.components.items[0].props, &q, &e),
                     0);
    assert_int_equal(q.present, LESS_POSE_ALL);
    assert_int_equal(q.name_len, p.name_len);
    assert_memory_equal(q.name, p.name, p.name_len);
    assert_memory_equal(q.origin, p.origin, p.origin_len);
    assert_int_equal(q.kind, LESS_KIND_RIGID_BODY);
    assert_true(q.position.x == 1.5 && q.position.y == -2.25 && q.position.z == 0.125);
    assert_true(q.velocity.x == 0.5 && q.velocity.z == -1);
    assert_true(fabs(q.orientation.y - 0.6) < 1e-7 && fabs(q.orientation.w - 0.8) < 1e-7);
    assert_true(q.angular_velocity.y == 3.0);
    assert_int_equal(q.active, 1);
    assert_int_equal(q.sample_time, 123456789);

    /* mask: only position and orientation, in id order */
    less_pose_to_props(&p, LESS_POSE_BIT(LESS_POSE_ORIENTATION) | LESS_POSE_BIT(LESS_POSE_POSITION),
                       &pp);
    assert_int_equal(pp.list.count, 2);
    assert_int_equal(pp.list.items[0].property_id, LESS_POSE_POSITION);
    assert_int_equal(pp.list.items[1].property_id, LESS_POSE_ORIENTATION);
    /* update semantics: applying them changes only those fields */
    struct less_pose u = {0};
    u.present = LESS_POSE_BIT(LESS_POSE_ACTIVE);
    u.active = 1;
    assert_int_equal(less_pose_from_props(&pp.list, &u, &e), 0);
    assert_int_equal(u.present, LESS_POSE_BIT(LESS_POSE_ACTIVE) |
                                    LESS_POSE_BIT(LESS_POSE_POSITION) |
                                    LESS_POSE_BIT(LESS_POSE_ORIENTATION));
    assert_int_equal(u.active, 1);
    assert_true(u.position.y == -2.25);
    /* fields not present are never emitted */
    struct less_pose none = {0};
    less_pose_to_props(&none, LESS_POSE_ALL, &pp);
    assert_int_equal(pp.list.count, 0);
}

static void test_pose_props_rejections(void **state)
{
    (void)state;
    struct xg_error e = {0};
    struct less_pose p = {0};
    p.present = LESS_POSE_BIT(LESS_POSE_KIND);
    p.kind = 3;
    struct less_value f3[3] = {{&less_type_float32, {.f = 1}},
                               {&less_type_float32, {.f = NAN}},
                               {&less_type_float32, {.f = 0}}};
    struct less_prop_value pv[2] = {{LESS_POSE_KIND, {&less_type_integer, {.i = 4}}},
                                    {LESS_POSE_POSITION, {&less_type_vec3f, {.list = {f3, 3}}}}};
    struct less_prop_list l = {pv, 2};
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "LESS pose position[1]: not finite");
    assert_int_equal(p.kind, 3); /* unchanged on error */
    f3[1].u.f = INFINITY;
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    pv[1] = (struct less_prop_value){LESS_POSE_POSITION, {&less_type_string, {.str = {"x", 1}}}};
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "LESS pose position: value of type STRING, expected VECTOR");
    pv[1] = (struct less_prop_value){LESS_POSE_ACTIVE, {&less_type_integer, {.i = 2}}};
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "active: 2 is not 0 or 1");
    pv[1] = (struct less_prop_value){9, {&less_type_integer, {.i = 2}}};
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "property 9 not in urn:xrgate:lods:pose:1");
    pv[1] = (struct less_prop_value){LESS_POSE_ACTIVE, {&less_type_integer, {.i = 0}}};
    assert_int_equal(less_pose_from_props(&l, &p, &e), 0);
    assert_int_equal(p.kind, 4);
    assert_int_equal(p.active, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int_worked_values),
        cmocka_unit_test(test_int_worked_values_from_spec),
        cmocka_unit_test(test_int_noncanonical_accepted),
        cmocka_unit_test(test_int_rejections),
        cmocka_unit_test(test_int_roundtrip_sweep),
        cmocka_unit_test(test_string),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_floats_saturate),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_variant_rejections),
        cmocka_unit_test(test_value_encode_rejections),
        cmocka_unit_test(test_pose_schema),
        cmocka_unit_test(test_msg_introduce_type),
        cmocka_unit_test(test_msg_subscribe_unsubscribe),
        cmocka_unit_test(test_msg_introduce_update_entity),
        cmocka_unit_test(test_msg_simple_ids),
        cmocka_unit_test(test_msg_methods),
        cmocka_unit_test(test_msg_interaction_tweak_control),
        cmocka_unit_test(test_msg_rejections),
        cmocka_unit_test(test_msg_encode_rejections),
        cmocka_unit_test(test_pose_props_roundtrip),
        cmocka_unit_test(test_pose_props_rejections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
