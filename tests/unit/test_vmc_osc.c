/* Unit tests for adapters/vmc/osc_codec (OSC 1.0) and the humanoid table (vmc_bones): the
 * specification's example messages byte for byte, every type tag both ways, the strictness rules
 * (each refusal with its class and text), bundles (nesting, depth bound, element sizes), time
 * tags; Unity's HumanBodyBones hierarchy. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/test_util.h"

#include "adapters/vmc/osc_codec.h"
#include "adapters/vmc/vmc_bones.h"

static uint8_t buf[1024];

static size_t unhex(const char *s, uint8_t *out)
{
    return xg_test_unhex(s, out, sizeof buf);
}

/* decode a heap copy of exactly n bytes (ASan catches over-reads) */
static int decode(const uint8_t *b, size_t n, struct osc_message *m, enum osc_error *cls,
                  struct xg_error *err, uint8_t **keep)
{
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, b, n);
    int rc = osc_decode_message(copy, n, m, cls, err);
    *keep = copy;
    return rc;
}

static struct osc_arg F(float f) {
    struct osc_arg a = {.tag = 'f'};
    a.v.f = f;
    return a;
} static struct osc_arg I(int32_t i) {
    struct osc_arg a = {.tag = 'i'};
    a.v.i = i;
    return a;
} static struct osc_arg S(const char *s) {
    struct osc_arg a = {.tag = 's'};
    a.v.s.p = s;
    a.v.s.len = strlen(s);
    return a;
}

/* OSC 1.0 specification, "Examples": "/oscillator/4/frequency" ,f 440.0 and
 * "/foo" ,iisff 1000 -1 "hello" 1.234 5.678 */
static const char *const EX1 = "2f6f7363 696c6c61 746f722f 342f6672 65717565 6e637900 2c660000 "
                               "43dc0000";
static const char *const EX2 = "2f666f6f 00000000 2c696973 66660000 000003e8 ffffffff 68656c6c "
                               "6f000000 3f9df3b6 40b5b22d";

static void test_spec_examples_encode(void **st)
{
    (void)st;
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    struct osc_arg a1 = F(440.0f);
    assert_int_equal(osc_encode_message(&w, "/oscillator/4/frequency", "f", &a1, 1), 0);
    xg_test_assert_bytes(buf, w.len, EX1);
    xg_writer_init(&w, buf, sizeof buf);
    struct osc_arg a2[5] = {I(1000), I(-1), S("hello"), F(1.234f), F(5.678f)};
    assert_int_equal(osc_encode_message(&w, "/foo", "iisff", a2, 5), 0);
    xg_test_assert_bytes(buf, w.len, EX2);
}

static void test_spec_examples_decode(void **st)
{
    (void)st;
    uint8_t b[256], *keep;
    size_t n = unhex(EX2, b);
    struct osc_message m;
    struct xg_error err = {0};
    assert_int_equal(decode(b, n, &m, NULL, &err, &keep), 0);
    assert_true(osc_str_eq(m.address, m.address_len, "/foo"));
    assert_int_equal(m.n_types, 5);
    assert_memory_equal(m.types, "iisff", 5);
    struct osc_arg a[8];
    assert_int_equal(osc_args_get(&m, a, 8), 5);
    assert_int_equal(a[0].v.i, 1000);
    assert_int_equal(a[1].v.i, -1);
    assert_true(osc_str_eq(a[2].v.s.p, a[2].v.s.len, "hello"));
    assert_true(a[3].v.f == 1.234f && a[4].v.f == 5.678f);
    free(keep);
}

/* every type tag: encode, then decode gives the same values back, and the bytes are as written
 * by hand from the specification */
static void test_all_types_roundtrip(void **st)
{
    (void)st;
    const uint8_t blob[5] = {1, 2, 3, 4, 5};
    struct osc_arg a[20];
    memset(a, 0, sizeof a);
    const char *types = "ifsbhtdTFNIcrm[S]";
    size_t nt = strlen(types);
    for (size_t i = 0; i < nt; i++)
        a[i].tag = types[i];
    a[0].v.i = -2;
    a[1].v.f = 0.5f;
    a[2].v.s.p = "abcd";
    a[2].v.s.len = 4;
    a[3].v.b.p = blob;
    a[3].v.b.len = 5;
    a[4].v.h = -3;
    a[5].v.t = OSC_TIMETAG_IMMEDIATE;
    a[6].v.d = 0.25;
    a[11].v.i = 'A';
    a[12].v.u = 0x11223344u;
    a[13].v.u = 0x00904060u;
    a[15].v.s.p = "x";
    a[15].v.s.len = 1;
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(osc_encode_message(&w, "/t", types, a, nt), 0);
    xg_test_assert_bytes(buf, w.len,
                         "2f740000 2c696673 62687464 54464e49 63726d5b 535d0000 " /* addr, tags */
                         "fffffffe 3f000000 61626364 00000000 "                   /* i f s */
                         "00000005 01020304 05000000 "                            /* b */
                         "ffffffff fffffffd 00000000 00000001 3fd00000 00000000 " /* h t d */
                         "00000041 11223344 00904060 78000000");                  /* c r m S */
    struct osc_message m;
    struct xg_error err = {0};
    uint8_t *keep;
    assert_int_equal(decode(buf, w.len, &m, NULL, &err, &keep), 0);
    struct osc_arg d[20];
    assert_int_equal(osc_args_get(&m, d, 20), (int)nt);
    for (size_t i = 0; i < nt; i++)
        assert_int_equal(d[i].tag, types[i]);
    assert_int_equal(d[0].v.i, -2);
    assert_true(d[1].v.f == 0.5f);
    assert_true(osc_str_eq(d[2].v.s.p, d[2].v.s.len, "abcd"));
    assert_int_equal(d[3].v.b.len, 5);
    assert_memory_equal(d[3].v.b.p, blob, 5);
    assert_int_equal(d[4].v.h, -3);
    assert_int_equal(d[5].v.t, 1);
    assert_true(d[6].v.d == 0.25);
    assert_int_equal(d[11].v.i, 'A');
    assert_int_equal(d[12].v.u, 0x11223344u);
    assert_int_equal(d[13].v.u, 0x00904060u);
    assert_true(osc_str_eq(d[15].v.s.p, d[15].v.s.len, "x"));
    /* re-encoding what was decoded gives the same bytes */
    uint8_t again[256];
    xg_writer_init(&w, again, sizeof again);
    char tags[32];
    memcpy(tags, m.types, m.n_types);
    tags[m.n_types] = 0;
    char addr[32];
    memcpy(addr, m.address, m.address_len);
    addr[m.address_len] = 0;
    assert_int_equal(osc_encode_message(&w, addr, tags, d, nt), 0);
    assert_memory_equal(again, keep, w.len);
    free(keep);
}

static void test_no_type_tag_string(void **st)
{
    (void)st;
    uint8_t b[16], *keep;
    size_t n = unhex("2f6f6b00", b); /* "/ok": an address alone is a message without arguments */
    struct osc_message m;
    assert_int_equal(decode(b, n, &m, NULL, NULL, &keep), 0);
    assert_int_equal(m.n_types, 0);
    free(keep);
}

struct bad_case {
    const char *name, *hex, *text;
    enum osc_error cls;
};

static const struct bad_case bad_cases[] = {
    {"empty", "", "address pattern does not start with '/'", OSC_E_ADDRESS},
    {"no slash", "61626300 2c000000", "address pattern does not start with '/'", OSC_E_ADDRESS},
    {"length not 4n", "2f610000 2c", "message length is not a multiple of 4 bytes",
     OSC_E_MALFORMED},
    {"address no NUL", "2f616263", "address pattern has no NUL terminator", OSC_E_MALFORMED},
    {"address padding", "2f610001 2c000000", "address pattern padding is not NUL", OSC_E_MALFORMED},
    {"no comma", "2f610000 69000000", "type tag string does not start with ','", OSC_E_TYPE_TAG},
    {"tags no NUL", "2f610000 2c696969", "type tag string has no NUL terminator", OSC_E_MALFORMED},
    {"unknown tag", "2f610000 2c780000", "unknown type tag 'x' (0x78) at argument 0",
     OSC_E_TYPE_TAG},
    {"int past end", "2f610000 2c690000", "argument runs past the end (offset 8)", OSC_E_MALFORMED},
    {"double past end", "2f610000 2c640000 00000000", "argument runs past the end (offset 8)",
     OSC_E_MALFORMED},
    {"string no NUL", "2f610000 2c730000 61626364", "string argument has no NUL terminator",
     OSC_E_MALFORMED},
    {"string padding", "2f610000 2c730000 61620001", "string argument padding is not NUL",
     OSC_E_MALFORMED},
    {"blob size past end", "2f610000 2c620000 00000008 01020304",
     "blob size 8 runs past the end (offset 8, 4 bytes left)", OSC_E_MALFORMED},
    {"blob size huge", "2f610000 2c620000 fffffffc", "blob size 4294967292 runs past the end",
     OSC_E_MALFORMED},
    {"blob padding", "2f610000 2c620000 00000001 01020000", "blob padding is not NUL",
     OSC_E_MALFORMED},
    {"trailing", "2f610000 2c690000 00000001 00000000", "4 bytes after the last argument",
     OSC_E_MALFORMED},
    {"array open", "2f610000 2c5b0000", "array '[' not closed", OSC_E_TYPE_TAG},
    {"array close", "2f610000 2c5d0000", "array closed without '['", OSC_E_TYPE_TAG},
    {"array deep", "2f610000 2c5b5b5b 5b5b5b5b 5b5b5b5b 5b5b5b5b 5b5b5b00",
     "array nested too deep (argument 16)", OSC_E_TYPE_TAG},
};

static void test_decode_refusals(void **st)
{
    (void)st;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        uint8_t b[128], *keep;
        size_t n = unhex(c->hex, b);
        struct osc_message m;
        struct xg_error err = {0};
        enum osc_error cls = OSC_E_NONE;
        int rc = decode(b, n, &m, &cls, &err, &keep);
        free(keep);
        if (rc != -EBADMSG || cls != c->cls || !strstr(err.msg, c->text)) {
            fprintf(stderr, "case '%s': rc %d class %s error \"%s\" (want %s, \"%s\")\n", c->name,
                    rc, osc_error_name(cls), err.msg, osc_error_name(c->cls), c->text);
            fail();
        }
    }
}

/* ---- bundles ---- */

struct seen {
    int messages, errors[OSC_E_COUNT], depth[8];
    uint64_t timetag;
    char last_error[XG_ERROR_MAX];
};

static void on_msg(void *user, const struct osc_message *m, uint64_t tt, int depth)
{
    struct seen *s = user;
    (void)m;
    s->messages++;
    s->timetag = tt;
    if (depth < 8) s->depth[depth]++;
}

static void on_err(void *user, enum osc_error cls, const struct xg_error *err)
{
    struct seen *s = user;
    s->errors[cls]++;
    snprintf(s->last_error, sizeof s->last_error, "%s", err->msg);
}

static size_t walk(const uint8_t *b, size_t n, int max_depth, struct seen *s)
{
    memset(s, 0, sizeof *s);
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, b, n);
    struct osc_walk_ops ops = {
        .max_depth = max_depth, .message = on_msg, .error = on_err, .user = s};
    size_t r = osc_walk_packet(copy, n, &ops);
    free(copy);
    return r;
}

/* writes bundle(tt){ msg, bundle(2){ msg, msg } } and checks bytes and the walk */
static void test_bundle_nested(void **st)
{
    (void)st;
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    size_t e1, e2, e3, e4;
    struct osc_arg one = I(1);
    assert_int_equal(osc_bundle_begin(&w, 0x0102030405060708ull), 0);
    osc_element_begin(&w, &e1);
    osc_encode_message(&w, "/a", "i", &one, 1);
    osc_element_end(&w, e1);
    osc_element_begin(&w, &e2);
    osc_bundle_begin(&w, 2);
    osc_element_begin(&w, &e3);
    osc_encode_message(&w, "/b", "", NULL, 0);
    osc_element_end(&w, e3);
    osc_element_begin(&w, &e4);
    osc_encode_message(&w, "/c", "", NULL, 0);
    osc_element_end(&w, e4);
    assert_int_equal(osc_element_end(&w, e2), 0);
    xg_test_assert_bytes(buf, w.len,
                         "2362756e 646c6500 01020304 05060708 "                    /* header */
                         "0000000c 2f610000 2c690000 00000001 "                    /* /a 1 */
                         "00000028 2362756e 646c6500 00000000 00000002 "           /* bundle */
                         "00000008 2f620000 2c000000 00000008 2f630000 2c000000"); /* /b /c */
    struct seen s;
    assert_int_equal(walk(buf, w.len, 0, &s), 3);
    assert_int_equal(s.depth[1], 1);
    assert_int_equal(s.depth[2], 2);
    assert_int_equal(s.timetag, 2);
    /* the same with max_depth 1: the inner bundle is dropped as too deep, /a still arrives */
    assert_int_equal(walk(buf, w.len, 1, &s), 1);
    assert_int_equal(s.errors[OSC_E_DEPTH], 1);
    assert_non_null(strstr(s.last_error, "bundle nested 2 deep (at most 1; offset 36)"));
}

static void test_bundle_refusals(void **st)
{
    (void)st;
    uint8_t b[256];
    struct seen s;
    /* element size not a multiple of 4: rest dropped; the element before it arrives */
    size_t n = unhex("2362756e 646c6500 00000000 00000001 00000008 2f610000 2c000000 "
                     "00000006 2f620000 2c000000",
                     b);
    assert_int_equal(walk(b, n, 0, &s), 1);
    assert_int_equal(s.errors[OSC_E_BUNDLE], 1);
    assert_non_null(strstr(s.last_error, "element size 6 at offset 28"));
    /* element size past the end */
    n = unhex("2362756e 646c6500 00000000 00000001 00000010 2f610000 2c000000", b);
    assert_int_equal(walk(b, n, 0, &s), 0);
    assert_int_equal(s.errors[OSC_E_BUNDLE], 1);
    /* negative and zero sizes */
    n = unhex("2362756e 646c6500 00000000 00000001 fffffffc", b);
    assert_int_equal(walk(b, n, 0, &s), 0);
    assert_int_equal(s.errors[OSC_E_BUNDLE], 1);
    n = unhex("2362756e 646c6500 00000000 00000001 00000000", b);
    assert_int_equal(walk(b, n, 0, &s), 0);
    assert_int_equal(s.errors[OSC_E_BUNDLE], 1);
    /* header too short */
    n = unhex("2362756e 646c6500 00000000", b);
    assert_int_equal(walk(b, n, 0, &s), 0);
    assert_int_equal(s.errors[OSC_E_BUNDLE], 1);
    /* a bad message inside is reported and skipped, the next element arrives */
    n = unhex("2362756e 646c6500 00000000 00000001 00000008 2f610000 2c780000 "
              "00000008 2f620000 2c000000",
              b);
    assert_int_equal(walk(b, n, 0, &s), 1);
    assert_int_equal(s.errors[OSC_E_TYPE_TAG], 1);
    assert_non_null(strstr(s.last_error, "message at offset 20: unknown type tag 'x'"));
    /* '#' that is not "#bundle" */
    n = unhex("23627578 00000000", b);
    assert_int_equal(walk(b, n, 0, &s), 0);
    assert_int_equal(s.errors[OSC_E_ADDRESS], 1);
    /* an empty bundle is fine */
    n = unhex("2362756e 646c6500 00000000 00000001", b);
    assert_int_equal(walk(b, n, 0, &s), 0);
    for (int i = 0; i < OSC_E_COUNT; i++)
        assert_int_equal(s.errors[i], 0);
}

/* 100 nested bundles with the default bound: no recursion past it */
static void test_bundle_deep(void **st)
{
    (void)st;
    static uint8_t b[100 * 20 + 64];
    struct xg_writer w;
    xg_writer_init(&w, b, sizeof b);
    size_t at[100];
    for (int i = 0; i < 100; i++) {
        osc_bundle_begin(&w, 1);
        osc_element_begin(&w, &at[i]);
    }
    osc_encode_message(&w, "/x", "", NULL, 0);
    for (int i = 99; i >= 0; i--)
        assert_int_equal(osc_element_end(&w, at[i]), 0);
    struct seen s;
    assert_int_equal(walk(b, w.len, 0, &s), 0);
    assert_int_equal(s.errors[OSC_E_DEPTH], 1);
    assert_non_null(strstr(s.last_error, "bundle nested 9 deep (at most 8"));
}

static void test_encode_limits(void **st)
{
    (void)st;
    uint8_t small[12];
    struct xg_writer w;
    xg_writer_init(&w, small, sizeof small);
    struct osc_arg a = I(1);
    assert_int_equal(osc_encode_message(&w, "/abcdef", "i", &a, 1), -EMSGSIZE);
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(osc_encode_message(&w, "abc", "", NULL, 0), -EINVAL);
    assert_int_equal(osc_encode_message(&w, "/a", "x", &a, 1), -EINVAL);
    assert_int_equal(osc_encode_message(&w, "/a", "ii", &a, 1), -EINVAL);
    struct osc_arg s = {.tag = 's'};
    s.v.s.p = "a\0b";
    s.v.s.len = 3;
    assert_int_equal(osc_encode_message(&w, "/a", "s", &s, 1), -EINVAL);
    assert_int_equal(w.len, 0);
}

static void test_timetag(void **st)
{
    (void)st;
    assert_int_equal(osc_timetag_from_unix_ns(0), UINT64_C(2208988800) << 32);
    assert_int_equal(osc_timetag_from_unix_ns(1500000000),
                     (UINT64_C(2208988801) << 32) | 0x80000000u);
}

/* ---- HumanBodyBones ---- */

static void test_bones(void **st)
{
    (void)st;
    assert_int_equal(vmc_bone_find("Hips", 4), 0);
    assert_int_equal(vmc_bone_find("UpperChest", 10), 54);
    assert_int_equal(vmc_bone_find("leftupperarm", 12), 13);
    assert_int_equal(vmc_bone_find("LastBone", 8), -1);
    assert_int_equal(vmc_bone_find("Hip", 3), -1);
    assert_string_equal(vmc_bones[vmc_bones[vmc_bone_find("Neck", 4)].parent].name, "UpperChest");
    assert_string_equal(vmc_bones[vmc_bones[vmc_bone_find("LeftShoulder", 12)].parent].name,
                        "UpperChest");
    assert_string_equal(vmc_bones[vmc_bones[vmc_bone_find("RightIndexDistal", 16)].parent].name,
                        "RightIndexIntermediate");
    /* every chain ends at the Hips within 12 steps (no cycles), names unique */
    for (int b = 0; b < VMC_BONES; b++) {
        int p = b, steps = 0;
        while (vmc_bones[p].parent >= 0 && steps < 12) {
            p = vmc_bones[p].parent;
            steps++;
        }
        assert_int_equal(p, 0);
        assert_int_equal(vmc_bone_find(vmc_bones[b].name, strlen(vmc_bones[b].name)), b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_examples_encode),
        cmocka_unit_test(test_spec_examples_decode),
        cmocka_unit_test(test_all_types_roundtrip),
        cmocka_unit_test(test_no_type_tag_string),
        cmocka_unit_test(test_decode_refusals),
        cmocka_unit_test(test_bundle_nested),
        cmocka_unit_test(test_bundle_refusals),
        cmocka_unit_test(test_bundle_deep),
        cmocka_unit_test(test_encode_limits),
        cmocka_unit_test(test_timetag),
        cmocka_unit_test(test_bones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
