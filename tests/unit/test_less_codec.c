/* Unit tests for the LESS codec, values: INTEGER, STRING, floats and variants. Schemas, messages
 * 1-12 and the pose helpers are in test_less_messages.c; framing, signatures and the ack window in
 * test_less_frame.c. Golden bytes come from the worked values of the LESS draft's INTEGER encoding
 * (tests/vectors/less/) and from the draft's pseudo-code run by hand (each vector says how). */
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
