/* RGMP v2 codec: §6 golden frames, build/decode round trips, framing, session rules and the §3
 * transform equation. The §7 rejection rules are in test_rgmp_rules.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/rgmp/rgmp_codec.h"

#define VEC_DIR XG_SOURCE_DIR "/tests/vectors/rgmp/"

/* §6.2: data frame, group 0 "pose" (136 bytes, the spec's hex dump). */
static const uint8_t DATA_6_2[136] = {
    0x02, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x40, 0x20, 0x46, 0x48, 0x47, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x33, 0x33, 0x73, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x52, 0xb8, 0x1e, 0x3f,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f,
    0x00, 0x00, 0x40, 0xbf, 0x00, 0x00, 0x00, 0x00, 0x66, 0x66, 0xe6, 0x3e, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x40, 0x3f,
    0x00, 0x00, 0x00, 0x00, 0x66, 0x66, 0xe6, 0x3e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f,
};
/* §6.3: data frame, group 1 "status" (40 bytes). */
static const uint8_t DATA_6_3[40] = {
    0x02, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12, 0x01, 0x00,
    0x00, 0x00, 0x50, 0x03, 0x21, 0x46, 0x48, 0x47, 0x06, 0x00, 0x05, 0x00, 0x00, 0x00,
    0x40, 0xe2, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xaf, 0x42,
};
/* §6.4: device disconnect. */
static const uint8_t DISC_6_4[12] = {0x03, 0x00, 0x00, 0x00, 0x04, 0x00,
                                     0x00, 0x00, 0x78, 0x56, 0x34, 0x12};

static uint8_t *read_vec(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", VEC_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open golden vector %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static struct rgmp_definition *load_def_6_1(void)
{
    size_t len;
    uint8_t *js = read_vec("def_6_1.json", &len);
    struct rgmp_definition *def = NULL;
    struct xg_error err = {0};
    int rc = rgmp_definition_decode(js, len, NULL, &def, &err);
    if (rc != 0) fail_msg("§6.1 definition rejected: %s", err.msg);
    free(js);
    return def;
}

/* ---- §6.1 ---- */

static void test_6_1_definition_decodes(void **state)
{
    (void)state;
    struct rgmp_definition *def = load_def_6_1();
    assert_int_equal(def->device_id, 305419896);
    assert_string_equal(def->protocol_name, "RGMP");
    assert_string_equal(def->protocol_version, "2.0.0");
    assert_string_equal(def->device_type, "smartsuit");
    assert_int_equal(def->epoch, RGMP_EPOCH_UNIX);
    assert_string_equal(def->device_info_json,
                        "{\"address\":\"192.168.1.50\",\"hub_id\":\"0001\",\"debug\":\"example\"}");

    /* static_data */
    assert_int_equal(def->n_static, 3);
    const struct rgmp_stream *s0 = &def->static_data[0];
    assert_int_equal(s0->measure, RGMP_TRANSFORM);
    assert_int_equal(s0->type.base, RGMP_FLOAT);
    assert_int_equal(s0->type.n, 7);
    assert_int_equal(s0->type.size, 28);
    assert_string_equal(s0->target_frame, "head_sensor");
    assert_string_equal(s0->reference_frame, "head");
    const float exp0[7] = {0.0f, 0.02f, 0.09f, 0.0f, 0.0f, 0.0f, 1.0f};
    for (uint32_t i = 0; i < 7; i++)
        assert_true(rgmp_value_f64(&s0->type, s0->value, i) == (double)exp0[i]);
    struct rgmp_pose p;
    assert_int_equal(rgmp_pose_from_values(s0, s0->value, &p, NULL), 0);
    assert_float_equal(p.position.y, 0.02, 1e-7);
    assert_float_equal(p.position.z, 0.09, 1e-7);
    assert_float_equal(p.orientation.w, 1.0, 0.0);

    const struct rgmp_stream *s1 = &def->static_data[1];
    assert_int_equal(s1->measure, RGMP_CUSTOM);
    assert_string_equal(s1->custom_label, "mag_soft_iron");
    assert_int_equal(s1->type.base, RGMP_DOUBLE);
    assert_int_equal(s1->type.rank, 2);
    assert_int_equal(s1->type.count, 9);
    assert_int_equal(s1->type.size, 72);
    for (uint32_t i = 0; i < 9; i++)
        assert_true(rgmp_value_f64(&s1->type, s1->value, i) == ((i % 4 == 0) ? 1.0 : 0.0));
    assert_null(s1->reference_frame);

    const struct rgmp_stream *s2 = &def->static_data[2];
    assert_int_equal(s2->type.base, RGMP_UINT32);
    assert_int_equal(s2->type.rank, 0);
    assert_int_equal(rgmp_value_u64(&s2->type, s2->value, 0), 2);
    assert_string_equal(s2->custom_label, "hardware_revision");
    assert_string_equal(s2->target_frame, "hub");

    /* groups and their payload sizes (§6.1: 112 and 16 bytes) */
    assert_int_equal(def->n_groups, 2);
    const struct rgmp_group *g0 = &def->groups[0];
    assert_string_equal(g0->name, "pose");
    assert_true(g0->expected_rate_hz == 100.0);
    assert_int_equal(g0->n_streams, 4);
    assert_int_equal(g0->values_len, 112);
    const char *frames[4] = {"hips", "head", "left_hand", "right_hand"};
    const char *refs[4] = {"LTP_ENU", "hips", "hips", "hips"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(g0->streams[i].measure, RGMP_TRANSFORM);
        assert_string_equal(g0->streams[i].target_frame, frames[i]);
        assert_string_equal(g0->streams[i].reference_frame, refs[i]);
        assert_int_equal(g0->streams[i].offset, 28 * i);
        assert_null(g0->streams[i].value);
    }
    const struct rgmp_group *g1 = &def->groups[1];
    assert_string_equal(g1->name, "status");
    assert_true(g1->expected_rate_hz == 10.0);
    assert_int_equal(g1->values_len, 16);
    assert_int_equal(g1->streams[0].measure, RGMP_STATUS_FLAGS);
    assert_int_equal(g1->streams[0].n_bits, 5);
    assert_int_equal(g1->streams[0].bits[3].bit, 3);
    assert_string_equal(g1->streams[0].bits[3].name, "not_is_accelerometer_used");
    assert_int_equal(g1->streams[1].type.base, RGMP_UINT64);
    assert_int_equal(g1->streams[1].offset, 4);
    assert_string_equal(g1->streams[2].custom_label, "battery_pct");
    assert_int_equal(g1->streams[2].offset, 12);

    assert_int_equal(rgmp_group_find(def, 0, "TRANSFORM", "left_hand", "hips", NULL), 2);
    assert_int_equal(rgmp_group_find(def, 0, "TRANSFORM", "left_hand", NULL, NULL), -1);
    assert_int_equal(rgmp_group_find(def, 1, "CUSTOM", "hub", "hub", "battery_pct"), 2);
    assert_int_equal(rgmp_group_find(def, 1, "CUSTOM", "hub", NULL, "nope"), -1);
    rgmp_definition_free(def);
}

/* Decoding the §6.1 text and building it again reproduces the spec's 1613 bytes and header. */
static void test_6_1_reencodes_byte_exact(void **state)
{
    (void)state;
    size_t len;
    uint8_t *js = read_vec("def_6_1.json", &len);
    assert_int_equal(len, 1613);
    struct rgmp_definition *def = load_def_6_1();
    char *out;
    size_t olen;
    assert_int_equal(rgmp_definition_to_json(def, &out, &olen, NULL), 0);
    assert_int_equal(olen, 1613);
    assert_memory_equal(out, js, 1613);
    free(out);

    uint8_t buf[2048];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(rgmp_encode_definition(&w, def, NULL), 0);
    assert_int_equal(w.len, 8 + 1613);
    const uint8_t hdr[8] = {0x01, 0, 0, 0, 0x4d, 0x06, 0, 0};
    assert_memory_equal(buf, hdr, 8);
    size_t flen;
    uint8_t *frame = read_vec("def_6_1.frame", &flen);
    assert_int_equal(flen, w.len);
    assert_memory_equal(buf, frame, flen);

    /* a writer one byte too small: -EMSGSIZE and nothing written */
    xg_writer_init(&w, buf, 8 + 1612);
    struct xg_error err = {0};
    assert_int_equal(rgmp_encode_definition(&w, def, &err), -EMSGSIZE);
    assert_int_equal(w.len, 0);
    assert_non_null(strstr(err.msg, "device 305419896"));
    free(frame);
    free(js);
    rgmp_definition_free(def);
}

/* The §6.1 definition built through the builder API (as rgmp-server does) gives the same bytes. */
static struct rgmp_definition *build_def_6_1(void)
{
    struct xg_error err = {0};
    struct rgmp_definition *def = rgmp_definition_new(305419896, "smartsuit", RGMP_EPOCH_UNIX);
    assert_non_null(def);
    def->device_info_json =
        strdup("{\"address\":\"192.168.1.50\",\"hub_id\":\"0001\",\"debug\":\"example\"}");
    uint8_t v0[28], v1[72], v2[4];
    struct xg_writer w;
    xg_writer_init(&w, v0, sizeof v0);
    const float f0[7] = {0.0f, 0.02f, 0.09f, 0.0f, 0.0f, 0.0f, 1.0f};
    for (int i = 0; i < 7; i++)
        xg_write_lef32(&w, f0[i]);
    xg_writer_init(&w, v1, sizeof v1);
    for (int i = 0; i < 9; i++)
        xg_write_lef64(&w, i % 4 == 0 ? 1.0 : 0.0);
    xg_writer_init(&w, v2, sizeof v2);
    xg_write_le32(&w, 2);
    struct rgmp_entry_spec st[3] = {
        {.data_type = "FLOAT[7]",
         .measure_type = "TRANSFORM",
         .target_frame = "head_sensor",
         .reference_frame = "head",
         .value = v0,
         .value_len = sizeof v0},
        {.data_type = "DOUBLE[3,3]",
         .measure_type = "CUSTOM",
         .target_frame = "head_sensor",
         .custom_label = "mag_soft_iron",
         .value = v1,
         .value_len = sizeof v1},
        {.data_type = "UINT32",
         .measure_type = "CUSTOM",
         .target_frame = "hub",
         .custom_label = "hardware_revision",
         .value = v2,
         .value_len = sizeof v2},
    };
    for (int i = 0; i < 3; i++)
        if (rgmp_definition_add_static(def, &st[i], &err) != i)
            fail_msg("add_static %d: %s", i, err.msg);
    assert_int_equal(rgmp_definition_add_group(def, "pose", 100, &err), 0);
    const char *frames[4] = {"hips", "head", "left_hand", "right_hand"};
    const char *refs[4] = {"LTP_ENU", "hips", "hips", "hips"};
    for (int i = 0; i < 4; i++) {
        struct rgmp_entry_spec s = {.data_type = "FLOAT[7]",
                                    .measure_type = "TRANSFORM",
                                    .target_frame = frames[i],
                                    .reference_frame = refs[i]};
        if (rgmp_definition_add_stream(def, 0, &s, &err) != i)
            fail_msg("add_stream %d: %s", i, err.msg);
    }
    assert_int_equal(rgmp_definition_add_group(def, "status", 10, &err), 1);
    const struct rgmp_bit_spec bits[5] = {{0, "is_magnetometer_saturated"},
                                          {1, "is_accelerometer_saturated"},
                                          {2, "is_gyroscope_saturated"},
                                          {3, "not_is_accelerometer_used"},
                                          {4, "not_is_magnetometer_used"}};
    struct rgmp_entry_spec gs[3] = {
        {.data_type = "UINT32",
         .measure_type = "STATUS_FLAGS",
         .target_frame = "head_sensor",
         .bits = bits,
         .n_bits = 5},
        {.data_type = "UINT64",
         .measure_type = "CUSTOM",
         .target_frame = "hub",
         .custom_label = "packet_counter"},
        {.data_type = "FLOAT",
         .measure_type = "CUSTOM",
         .target_frame = "hub",
         .custom_label = "battery_pct"},
    };
    for (int i = 0; i < 3; i++)
        if (rgmp_definition_add_stream(def, 1, &gs[i], &err) != i)
            fail_msg("add_stream status %d: %s", i, err.msg);
    return def;
}

static void test_6_1_builder_matches_spec(void **state)
{
    (void)state;
    struct rgmp_definition *def = build_def_6_1();
    size_t len;
    uint8_t *js = read_vec("def_6_1.json", &len);
    char *out;
    size_t olen;
    assert_int_equal(rgmp_definition_to_json(def, &out, &olen, NULL), 0);
    assert_int_equal(olen, 1613);
    assert_memory_equal(out, js, len);
    free(out);
    free(js);
    rgmp_definition_free(def);
}

/* ---- the spec text itself (its §6, kept in tests/vectors/rgmp/wire-rules-section6.md) ---- */

static char *read_spec(void)
{
    FILE *f = fopen(XG_VECTORS_DIR "/rgmp/wire-rules-section6.md", "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    return buf;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Bytes of the hex dump in the first ``` block after `heading` ("0000: 02 00 ..." lines; a line's
 * dump ends at the first token that is not two hex digits). */
static size_t spec_hexdump(const char *spec, const char *heading, uint8_t *out, size_t cap)
{
    const char *p = strstr(spec, heading);
    assert_non_null(p);
    p = strstr(p, "```\n");
    assert_non_null(p);
    p += 4;
    const char *end = strstr(p, "```");
    assert_non_null(end);
    size_t n = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        const char *c = memchr(p, ':', (size_t)(eol - p));
        if (c) {
            for (c++; c + 2 <= eol; c += 3) {
                if (c[0] != ' ' || hexval(c[1]) < 0 || c + 3 > eol || hexval(c[2]) < 0 ||
                    (c + 3 < eol && c[3] != ' '))
                    break;
                assert_true(n < cap);
                out[n++] = (uint8_t)(hexval(c[1]) * 16 + hexval(c[2]));
            }
        }
        p = eol + 1;
    }
    return n;
}

/* The spec's own §6 text: its pretty-printed §6.1 JSON canonicalises to the 1613-byte vector,
 * and its hex dumps are the bytes the tests use. */
static void test_spec_text_matches_vectors(void **state)
{
    (void)state;
    char *spec = read_spec();
    if (!spec) fail_msg("%s not found", XG_VECTORS_DIR "/rgmp/wire-rules-section6.md");
    const char *j = strstr(spec, "### 6.1");
    assert_non_null(j);
    j = strstr(j, "```json\n");
    assert_non_null(j);
    j += 8;
    const char *jend = strstr(j, "```");
    struct rgmp_definition *def = NULL;
    struct xg_error err = {0};
    if (rgmp_definition_decode(j, (size_t)(jend - j), NULL, &def, &err) != 0)
        fail_msg("spec §6.1 JSON rejected: %s", err.msg);
    char *out;
    size_t olen, vlen;
    assert_int_equal(rgmp_definition_to_json(def, &out, &olen, NULL), 0);
    uint8_t *vec = read_vec("def_6_1.json", &vlen);
    assert_int_equal(olen, 1613);
    assert_int_equal(vlen, olen);
    assert_memory_equal(out, vec, olen);
    free(vec);
    free(out);
    rgmp_definition_free(def);

    uint8_t buf[256];
    assert_int_equal(spec_hexdump(spec, "### 6.2", buf, sizeof buf), sizeof DATA_6_2);
    assert_memory_equal(buf, DATA_6_2, sizeof DATA_6_2);
    assert_int_equal(spec_hexdump(spec, "### 6.3", buf, sizeof buf), sizeof DATA_6_3);
    assert_memory_equal(buf, DATA_6_3, sizeof DATA_6_3);
    assert_non_null(strstr(spec, "`03 00 00 00 04 00 00 00 78 56 34 12`"));
    free(spec);
}

/* ---- §6.2 / §6.3 / §6.4 ---- */

static void test_vector_files_match_spec_dumps(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = read_vec("data_6_2.bin", &len);
    assert_int_equal(len, sizeof DATA_6_2);
    assert_memory_equal(b, DATA_6_2, len);
    free(b);
    b = read_vec("data_6_3.bin", &len);
    assert_int_equal(len, sizeof DATA_6_3);
    assert_memory_equal(b, DATA_6_3, len);
    free(b);
    b = read_vec("disconnect_6_4.bin", &len);
    assert_int_equal(len, sizeof DISC_6_4);
    assert_memory_equal(b, DISC_6_4, len);
    free(b);
}

static void test_6_2_pose_frame_decodes(void **state)
{
    (void)state;
    struct rgmp_definition *def = load_def_6_1();
    struct rgmp_header h;
    assert_int_equal(rgmp_header_decode(DATA_6_2, sizeof DATA_6_2, &h), 0);
    assert_int_equal(h.msg_prefix, RGMP_MSG_DATA);
    assert_int_equal(h.msg_len, 128);
    struct rgmp_data_frame f;
    struct xg_error err = {0};
    assert_int_equal(rgmp_data_decode(DATA_6_2 + 8, h.msg_len, def, &f, &err), 0);
    assert_int_equal(f.device_id, 0x12345678);
    assert_int_equal(f.group_id, 0);
    assert_true(f.timestamp_us == UINT64_C(1767225600000000));
    assert_int_equal(f.values_len, 112);
    const double pos[4][3] = {{0, 0, 0.95}, {0, 0, 0.62}, {-0.75, 0, 0.45}, {0.75, 0, 0.45}};
    for (size_t i = 0; i < 4; i++) {
        const uint8_t *v = rgmp_data_stream(def, &f, i);
        assert_ptr_equal(v, DATA_6_2 + 0x18 + 28 * i); /* offsets of the §6.2 table */
        struct rgmp_pose p;
        assert_int_equal(rgmp_pose_from_values(&def->groups[0].streams[i], v, &p, &err), 0);
        assert_float_equal(p.position.x, pos[i][0], 1e-7); /* float32 of the stated value */
        assert_float_equal(p.position.y, pos[i][1], 1e-7);
        assert_float_equal(p.position.z, pos[i][2], 1e-7);
        assert_true(p.orientation.x == 0 && p.orientation.y == 0 && p.orientation.z == 0 &&
                    p.orientation.w == 1);
    }
    assert_null(rgmp_data_stream(def, &f, 4));
    rgmp_definition_free(def);
}

static void test_6_3_status_frame_decodes(void **state)
{
    (void)state;
    struct rgmp_definition *def = load_def_6_1();
    struct rgmp_data_frame f;
    /* copy to an odd address: the UINT64 must decode whatever the alignment (rule 19) */
    uint8_t *buf = malloc(sizeof DATA_6_3 + 1);
    memcpy(buf + 1, DATA_6_3, sizeof DATA_6_3);
    assert_int_equal(rgmp_data_decode(buf + 1 + 8, 32, def, &f, NULL), 0);
    assert_int_equal(f.group_id, 1);
    assert_true(f.timestamp_us == UINT64_C(1767225600050000));
    const struct rgmp_group *g = &def->groups[1];
    const uint8_t *flags = rgmp_data_stream(def, &f, 0);
    const uint8_t *ctr = rgmp_data_stream(def, &f, 1);
    const uint8_t *bat = rgmp_data_stream(def, &f, 2);
    assert_int_equal(rgmp_value_u64(&g->streams[0].type, flags, 0), 5);
    assert_int_equal(ctr - f.values, 4); /* payload offset 20, not 8-aligned */
    assert_int_equal(rgmp_value_u64(&g->streams[1].type, ctr, 0), 123456);
    assert_true(rgmp_value_f64(&g->streams[2].type, bat, 0) == 87.5);
    free(buf);
    rgmp_definition_free(def);
}

static void test_6_2_6_3_build_byte_exact(void **state)
{
    (void)state;
    struct rgmp_definition *def = build_def_6_1();
    const float vals[4][7] = {{0, 0, 0.95f, 0, 0, 0, 1},
                              {0, 0, 0.62f, 0, 0, 0, 1},
                              {-0.75f, 0, 0.45f, 0, 0, 0, 1},
                              {0.75f, 0, 0.45f, 0, 0, 0, 1}};
    uint8_t v[112], out[256];
    struct xg_writer w;
    xg_writer_init(&w, v, sizeof v);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 7; j++)
            xg_write_lef32(&w, vals[i][j]);
    assert_int_equal(w.err, 0);
    struct xg_writer o;
    xg_writer_init(&o, out, sizeof out);
    assert_int_equal(rgmp_encode_data(&o, def, 0, UINT64_C(1767225600000000), v, 112, NULL), 0);
    assert_int_equal(o.len, 136);
    assert_memory_equal(out, DATA_6_2, 136);

    uint8_t s[16];
    xg_writer_init(&w, s, sizeof s);
    xg_write_le32(&w, 5);
    xg_write_le64(&w, 123456);
    xg_write_lef32(&w, 87.5f);
    xg_writer_init(&o, out, sizeof out);
    assert_int_equal(rgmp_encode_data(&o, def, 1, UINT64_C(1767225600050000), s, 16, NULL), 0);
    assert_int_equal(o.len, 40);
    assert_memory_equal(out, DATA_6_3, 40);

    /* wrong value length / group: -EINVAL, nothing written */
    struct xg_error err = {0};
    xg_writer_init(&o, out, sizeof out);
    assert_int_equal(rgmp_encode_data(&o, def, 1, 1, s, 15, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "group 1 \"status\""));
    assert_int_equal(rgmp_encode_data(&o, def, 2, 1, s, 16, &err), -EINVAL);
    assert_int_equal(o.len, 0);
    /* writer too small */
    xg_writer_init(&o, out, 39);
    assert_int_equal(rgmp_encode_data(&o, def, 1, 1, s, 16, NULL), -EMSGSIZE);
    rgmp_definition_free(def);
}

static void test_6_4_disconnect(void **state)
{
    (void)state;
    struct rgmp_header h;
    assert_int_equal(rgmp_header_decode(DISC_6_4, sizeof DISC_6_4, &h), 0);
    assert_int_equal(rgmp_header_check(&h, NULL, NULL), 0);
    uint32_t id;
    assert_int_equal(rgmp_disconnect_decode(DISC_6_4 + 8, h.msg_len, &id, NULL), 0);
    assert_int_equal(id, 305419896);
    uint8_t out[12];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rgmp_encode_disconnect(&w, 305419896), 0);
    assert_memory_equal(out, DISC_6_4, 12);
    xg_writer_init(&w, out, 11);
    assert_int_equal(rgmp_encode_disconnect(&w, 1), -EMSGSIZE);
    assert_int_equal(w.len, 0);
}

/* ---- streaming splitter + session over the whole §6 stream ---- */

static void test_stream_split_byte_by_byte(void **state)
{
    (void)state;
    size_t len;
    uint8_t *stream = read_vec("stream_6.bin", &len);
    const size_t frame_ends[4] = {1621, 1621 + 136, 1621 + 136 + 40, len};
    assert_int_equal(frame_ends[3], 1621 + 136 + 40 + 12);
    struct rgmp_session s;
    rgmp_session_init(&s, NULL, false);
    size_t start = 0;
    int frame = 0;
    const enum rgmp_event_type types[4] = {RGMP_EV_DEFINITION, RGMP_EV_DATA, RGMP_EV_DATA,
                                           RGMP_EV_DISCONNECT};
    /* offer the bytes one at a time, as a TCP stream may deliver them */
    for (size_t have = 1; have <= len; have++) {
        struct rgmp_header h;
        size_t need;
        struct xg_error err = {0};
        int rc = rgmp_frame_split(stream + start, have - start, NULL, &h, &need, &err);
        assert_true(rc >= 0);
        if (rc == 0) {
            assert_true(need > have - start);
            assert_true(start + need <= frame_ends[frame]);
            continue;
        }
        assert_int_equal(start + need, frame_ends[frame]);
        struct rgmp_event ev;
        rc = rgmp_session_handle(&s, &h, stream + start + 8, &ev, &err);
        if (rc != 0) fail_msg("frame %d: %s", frame, err.msg);
        assert_int_equal(ev.type, types[frame]);
        assert_int_equal(ev.device_id, 305419896);
        if (frame == 2) assert_int_equal(ev.frame.group_id, 1);
        start += need;
        frame++;
        assert_int_equal(rgmp_frame_eof(have - start, NULL), 0); /* at a boundary: clean end */
    }
    assert_int_equal(frame, 4);
    assert_int_equal(s.n_devices, 0);
    rgmp_session_free(&s);
    free(stream);
}

/* Rule 1: EOF inside a header or payload; truncated payloads never read past the end (each
 * prefix is copied into an exactly-sized heap buffer, so ASan builds catch any overread). */
static void test_truncated_frames(void **state)
{
    (void)state;
    struct xg_error err = {0};
    assert_int_equal(rgmp_frame_eof(3, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "truncated frame"));
    assert_non_null(strstr(err.msg, "header"));
    assert_int_equal(rgmp_frame_eof(100, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "100 bytes"));

    struct rgmp_definition *def = load_def_6_1();
    size_t flen;
    uint8_t *dframe = read_vec("def_6_1.frame", &flen);
    for (size_t n = 0; n < 128; n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, DATA_6_2 + 8, n);
        struct rgmp_data_frame f;
        assert_int_equal(rgmp_data_decode(p, n, def, &f, &err), -EPROTO);
        assert_non_null(strstr(err.msg, n < 16 ? "rule 14" : "rule 17"));
        free(p);
    }
    for (size_t n = 0; n < 1613; n += 7) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, dframe + 8, n);
        struct rgmp_definition *d = NULL;
        assert_int_equal(rgmp_definition_decode(p, n, NULL, &d, &err), -EPROTO);
        assert_null(d);
        free(p);
    }
    for (size_t n = 0; n < 8; n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, DATA_6_2, n);
        struct rgmp_header h;
        size_t need;
        assert_int_equal(rgmp_frame_split(p, n, NULL, &h, &need, NULL), 0);
        assert_int_equal(need, 8);
        assert_int_equal(rgmp_header_decode(p, n, &h), -EMSGSIZE);
        free(p);
    }
    for (size_t n = 0; n < 4; n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, DISC_6_4 + 8, n);
        uint32_t id;
        assert_int_equal(rgmp_disconnect_decode(p, n, &id, &err), -EPROTO);
        free(p);
    }
    free(dframe);
    rgmp_definition_free(def);
}

/* ---- round trips ---- */

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The server's shape (D7): FLOAT[7] TRANSFORM + FLOAT[3] velocities per entity, plus every base
 * type and shape; build -> JSON -> decode -> JSON is stable, data frames round-trip exactly. */
static void test_build_decode_round_trip(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rgmp_definition *def = rgmp_definition_new(42, "xrgate", RGMP_EPOCH_UNIX);
    assert_int_equal(rgmp_definition_add_group(def, "entities \"q\"\n", 90.5, &err), 0);
    const char *names[3] = {"rig/Tracker0", "demo/head", "naïve_ünicode"};
    for (int e = 0; e < 3; e++) {
        struct rgmp_entry_spec t = {.data_type = "FLOAT[7]",
                                    .measure_type = "TRANSFORM",
                                    .target_frame = names[e],
                                    .reference_frame = "LTP_ENU"};
        struct rgmp_entry_spec lv = t, av = t;
        lv.data_type = av.data_type = "FLOAT[3]";
        lv.measure_type = "LINEAR_VELOCITY";
        av.measure_type = "ANGULAR_VELOCITY";
        assert_true(rgmp_definition_add_stream(def, 0, &t, &err) >= 0);
        assert_true(rgmp_definition_add_stream(def, 0, &lv, &err) >= 0);
        assert_true(rgmp_definition_add_stream(def, 0, &av, &err) >= 0);
    }
    assert_int_equal(rgmp_definition_add_group(def, "misc", 0, &err), 1);
    const char *types[] = {"INT32",  "UINT32[2]",   "INT64[1, 3]",
                           "UINT64", "DOUBLE[2,2]", "FLOAT[5]"};
    for (int i = 0; i < 6; i++) {
        char label[16];
        snprintf(label, sizeof label, "c%d", i);
        struct rgmp_entry_spec c = {.data_type = types[i],
                                    .measure_type = "CUSTOM",
                                    .target_frame = "hub",
                                    .custom_label = label};
        if (rgmp_definition_add_stream(def, 1, &c, &err) != i) fail_msg("%s", err.msg);
    }
    struct rgmp_bit_spec bits[2] = {{63, "top"}, {0, "bottom"}};
    struct rgmp_entry_spec fl = {.data_type = "UINT64",
                                 .measure_type = "STATUS_FLAGS",
                                 .target_frame = "hub",
                                 .bits = bits,
                                 .n_bits = 2};
    assert_int_equal(rgmp_definition_add_stream(def, 1, &fl, &err), 6);
    assert_int_equal(rgmp_definition_add_group(def, "empty", 1, &err), 2);
    /* static values of awkward magnitudes */
    uint8_t sv[8 * 4];
    struct xg_writer w;
    xg_writer_init(&w, sv, sizeof sv);
    xg_write_lef64(&w, 1e-300);
    xg_write_lef64(&w, -123456.789);
    xg_write_lef64(&w, 0.1);
    xg_write_lef64(&w, -0.0);
    struct rgmp_entry_spec st = {.data_type = "DOUBLE[4]",
                                 .measure_type = "CUSTOM",
                                 .target_frame = "hub",
                                 .custom_label = "k",
                                 .value = sv,
                                 .value_len = sizeof sv};
    assert_int_equal(rgmp_definition_add_static(def, &st, &err), 0);
    uint8_t iv[8];
    xg_writer_init(&w, iv, sizeof iv);
    xg_write_le64(&w, (uint64_t)INT64_MIN);
    struct rgmp_entry_spec st2 = {.data_type = "INT64",
                                  .measure_type = "CUSTOM",
                                  .target_frame = "hub",
                                  .custom_label = "min",
                                  .value = iv,
                                  .value_len = 8};
    assert_int_equal(rgmp_definition_add_static(def, &st2, &err), 1);
    uint8_t fv[4];
    xg_writer_init(&w, fv, sizeof fv);
    xg_write_lef32(&w, 3.4028234e38f);
    struct rgmp_entry_spec st3 = {.data_type = "FLOAT",
                                  .measure_type = "CUSTOM",
                                  .target_frame = "hub",
                                  .custom_label = "max",
                                  .value = fv,
                                  .value_len = 4};
    assert_int_equal(rgmp_definition_add_static(def, &st3, &err), 2);

    char *j1, *j2;
    size_t l1, l2;
    assert_int_equal(rgmp_definition_to_json(def, &j1, &l1, &err), 0);
    struct rgmp_definition *back = NULL;
    if (rgmp_definition_decode(j1, l1, NULL, &back, &err) != 0)
        fail_msg("round trip rejected: %s\n%s", err.msg, j1);
    assert_int_equal(rgmp_definition_to_json(back, &j2, &l2, &err), 0);
    assert_int_equal(l1, l2);
    assert_memory_equal(j1, j2, l1);
    assert_string_equal(back->groups[0].name, "entities \"q\"\n");
    assert_string_equal(back->groups[0].streams[6].target_frame, "naïve_ünicode");
    assert_true(back->groups[0].expected_rate_hz == 90.5);
    assert_int_equal(back->groups[0].values_len, 3 * (28 + 12 + 12));
    assert_int_equal(back->groups[1].values_len, 4 + 8 + 24 + 8 + 32 + 20 + 8);
    assert_int_equal(back->groups[2].values_len, 0);
    assert_int_equal(back->groups[1].streams[6].bits[0].bit, 63);
    assert_memory_equal(back->static_data[0].value, sv, sizeof sv);
    assert_memory_equal(back->static_data[1].value, iv, 8);
    assert_memory_equal(back->static_data[2].value, fv, 4);
    for (size_t g = 0; g < def->n_groups; g++)
        for (size_t i = 0; i < def->groups[g].n_streams; i++)
            assert_int_equal(back->groups[g].streams[i].offset, def->groups[g].streams[i].offset);

    /* data frames: random bytes in, same bytes and values out */
    for (uint32_t g = 0; g < 3; g++) {
        uint32_t n = def->groups[g].values_len;
        uint8_t vals[512], out[600];
        for (uint32_t i = 0; i < n; i++)
            vals[i] = (uint8_t)next_rand();
        struct xg_writer o;
        xg_writer_init(&o, out, sizeof out);
        uint64_t ts = next_rand();
        assert_int_equal(rgmp_encode_data(&o, def, g, ts, vals, n, &err), 0);
        assert_int_equal(o.len, 24 + n);
        struct rgmp_header h;
        size_t need;
        assert_int_equal(rgmp_frame_split(out, o.len, NULL, &h, &need, &err), 1);
        assert_int_equal(need, o.len);
        struct rgmp_data_frame f;
        assert_int_equal(rgmp_data_decode(out + 8, h.msg_len, back, &f, &err), 0);
        assert_true(f.timestamp_us == ts);
        assert_int_equal(f.group_id, g);
        assert_memory_equal(f.values, vals, n);
    }
    free(j1);
    free(j2);
    rgmp_definition_free(back);
    rgmp_definition_free(def);
}

/* ---- session state: D2, D3, rules 15, 18, 21 ---- */

static int feed(struct rgmp_session *s, const uint8_t *frame, size_t len, struct rgmp_event *ev,
                struct xg_error *err)
{
    struct rgmp_header h;
    size_t need;
    int rc = rgmp_frame_split(frame, len, &s->limits, &h, &need, err);
    if (rc <= 0) return rc < 0 ? rc : -999;
    assert_int_equal(need, len);
    return rgmp_session_handle(s, &h, frame + 8, ev, err);
}

static size_t data_frame(uint8_t *out, uint32_t dev, uint32_t group, uint64_t ts, size_t nvals)
{
    struct xg_writer w;
    xg_writer_init(&w, out, 512);
    rgmp_encode_header(&w, 2, (uint32_t)(16 + nvals));
    xg_write_le32(&w, dev);
    xg_write_le32(&w, group);
    xg_write_le64(&w, ts);
    xg_write_zeros(&w, nvals);
    assert_int_equal(w.err, 0);
    return w.len;
}

static void test_session_timestamps_d2(void **state)
{
    (void)state;
    size_t flen;
    uint8_t *dframe = read_vec("def_6_1.frame", &flen);
    struct rgmp_session s;
    struct rgmp_event ev;
    struct xg_error err = {0};
    rgmp_session_init(&s, NULL, false);
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    assert_false(ev.replaced);
    uint8_t f[512];
    const uint32_t dev = 305419896;
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 1000, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    /* the same timestamp in another group is fine: the scope is (device, group) */
    assert_int_equal(feed(&s, f, data_frame(f, dev, 1, 1000, 16), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 1, 999, 16), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DROPPED);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 1000, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DROPPED);
    assert_non_null(strstr(err.msg, "device 305419896, group 0 \"pose\""));
    assert_non_null(strstr(err.msg, "timestamp_us = 1000"));
    assert_non_null(strstr(err.msg, "previous 1000"));
    assert_int_equal(s.frames_out_of_order, 2);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 1001, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);

    /* D3: a definition for an active device replaces it (new session, timestamps reset) */
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DEFINITION);
    assert_true(ev.replaced);
    assert_int_equal(s.n_devices, 1);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 5, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    rgmp_session_free(&s);

    /* strict: fatal */
    rgmp_session_init(&s, NULL, true);
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 10, 112), &ev, &err), 0);
    assert_int_equal(feed(&s, f, data_frame(f, dev, 0, 10, 112), &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "rule 18"));
    assert_non_null(strstr(err.msg, "strict"));
    rgmp_session_free(&s);
    free(dframe);
}

static void test_session_devices_rules_15_21(void **state)
{
    (void)state;
    size_t flen;
    uint8_t *dframe = read_vec("def_6_1.frame", &flen);
    struct rgmp_session s;
    struct rgmp_event ev;
    struct xg_error err = {0};
    uint8_t f[512];
    rgmp_session_init(&s, NULL, false);
    /* rule 15: data for an unknown device */
    assert_int_equal(feed(&s, f, data_frame(f, 77, 0, 1, 112), &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 77"));
    assert_non_null(strstr(err.msg, "device_id = 77"));
    assert_non_null(strstr(err.msg, "rule 15"));
    /* rule 21: disconnect for an unknown device */
    assert_int_equal(feed(&s, DISC_6_4, sizeof DISC_6_4, &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 305419896"));
    assert_non_null(strstr(err.msg, "device_id = 305419896"));
    assert_non_null(strstr(err.msg, "rule 21"));
    /* two devices; disconnect one; the other keeps working */
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    const char *other = "{\"device_id\":7,\"groups\":[{\"name\":\"e\",\"expected_rate_hz\":0,"
                        "\"streams\":[]}]}";
    uint8_t of[256];
    struct xg_writer w;
    xg_writer_init(&w, of, sizeof of);
    rgmp_encode_header(&w, 1, (uint32_t)strlen(other));
    xg_write_bytes(&w, other, strlen(other));
    assert_int_equal(feed(&s, of, w.len, &ev, &err), 0);
    assert_int_equal(s.n_devices, 2);
    /* an empty group: a 16-byte data frame is legal (D3) */
    assert_int_equal(feed(&s, f, data_frame(f, 7, 0, 1, 0), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    assert_int_equal(ev.frame.values_len, 0);
    assert_int_equal(feed(&s, DISC_6_4, sizeof DISC_6_4, &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DISCONNECT);
    assert_int_equal(ev.device_id, 305419896);
    assert_null(rgmp_session_find(&s, 305419896));
    assert_non_null(rgmp_session_find(&s, 7));
    assert_int_equal(feed(&s, f, data_frame(f, 305419896, 0, 2, 112), &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "rule 15"));
    assert_int_equal(feed(&s, f, data_frame(f, 7, 0, 2, 0), &ev, &err), 0);
    /* a later definition with the same id is a new session */
    assert_int_equal(feed(&s, dframe, flen, &ev, &err), 0);
    assert_false(ev.replaced);
    assert_int_equal(feed(&s, f, data_frame(f, 305419896, 0, 1, 112), &ev, &err), 0);
    assert_int_equal(ev.type, RGMP_EV_DATA);
    rgmp_session_free(&s);
    free(dframe);
}

/* ---- §3 transform equation ---- */

static struct xg_quat rand_quat(void)
{
    struct xg_quat q = {
        (double)(next_rand() % 2001) / 1000.0 - 1.0, (double)(next_rand() % 2001) / 1000.0 - 1.0,
        (double)(next_rand() % 2001) / 1000.0 - 1.0, (double)(next_rand() % 2001) / 1000.0 - 1.0};
    return xg_quat_normalize(q);
}

static void test_transform_equation(void **state)
{
    (void)state;
    /* 90° about +z: x axis of the target maps to +y of the reference */
    const double h = sqrt(0.5);
    struct rgmp_pose hips = {{1, 2, 0.95}, {0, 0, h, h}};
    double R[3][3];
    rgmp_rotation_matrix(hips.orientation, R);
    const double Rz[3][3] = {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_float_equal(R[i][j], Rz[i][j], 1e-12);
    struct xg_vec3 p = rgmp_transform_point(&hips, (struct xg_vec3){1, 0, 0});
    assert_float_equal(p.x, 1, 1e-12);
    assert_float_equal(p.y, 3, 1e-12);
    assert_float_equal(p.z, 0.95, 1e-12);

    /* chaining: left_hand <- hips <- LTP_ENU, with hips turned 90° about z */
    struct rgmp_pose lh = {{-0.75, 0, 0.45}, XG_QUAT_IDENTITY};
    struct rgmp_pose root = rgmp_transform_compose(&hips, &lh);
    assert_float_equal(root.position.x, 1.0, 1e-6);
    assert_float_equal(root.position.y, 1.25, 1e-6);
    assert_float_equal(root.position.z, 1.40, 1e-6);
    assert_float_equal(root.orientation.z, h, 1e-12);
    assert_float_equal(root.orientation.w, h, 1e-12);

    /* random checks: R(q) agrees with q ⊗ v ⊗ q*; compose agrees with applying twice;
     * inverse undoes */
    for (int k = 0; k < 200; k++) {
        struct rgmp_pose a = {{(double)(next_rand() % 200) / 50 - 2, 0.3, -1.1}, rand_quat()};
        struct rgmp_pose b = {{0.2, (double)(next_rand() % 200) / 50 - 2, 0.7}, rand_quat()};
        struct xg_vec3 v = {0.3, -0.4, (double)(next_rand() % 100) / 25 - 2};
        struct xg_vec3 r1 = rgmp_transform_point(&a, v);
        struct xg_vec3 r2 = xg_vec3_add(xg_quat_rotate(a.orientation, v), a.position);
        assert_float_equal(r1.x, r2.x, 1e-12);
        assert_float_equal(r1.y, r2.y, 1e-12);
        assert_float_equal(r1.z, r2.z, 1e-12);
        struct rgmp_pose ab = rgmp_transform_compose(&a, &b);
        struct xg_vec3 c1 = rgmp_transform_point(&ab, v);
        struct xg_vec3 bv = rgmp_transform_point(&b, v);
        struct xg_vec3 c2 = rgmp_transform_point(&a, bv);
        assert_float_equal(c1.x, c2.x, 1e-9);
        assert_float_equal(c1.y, c2.y, 1e-9);
        assert_float_equal(c1.z, c2.z, 1e-9);
        struct rgmp_pose ai = rgmp_transform_inverse(&a);
        struct xg_vec3 back = rgmp_transform_point(&ai, r1);
        assert_float_equal(back.x, v.x, 1e-9);
        assert_float_equal(back.y, v.y, 1e-9);
        assert_float_equal(back.z, v.z, 1e-9);
        struct rgmp_pose id = rgmp_transform_compose(&a, &ai);
        assert_float_equal(xg_vec3_norm(id.position), 0, 1e-9);
        assert_float_equal(fabs(id.orientation.w), 1, 1e-9);
    }
}

/* §6 composed: the example frame's hands, relative to hips, in LTP_ENU. */
static void test_6_2_composes_to_root(void **state)
{
    (void)state;
    struct rgmp_definition *def = load_def_6_1();
    struct rgmp_data_frame f;
    assert_int_equal(rgmp_data_decode(DATA_6_2 + 8, 128, def, &f, NULL), 0);
    struct rgmp_pose hips, lh, rh;
    const struct rgmp_stream *st = def->groups[0].streams;
    assert_int_equal(rgmp_pose_from_values(&st[0], rgmp_data_stream(def, &f, 0), &hips, NULL), 0);
    assert_int_equal(rgmp_pose_from_values(&st[2], rgmp_data_stream(def, &f, 2), &lh, NULL), 0);
    assert_int_equal(rgmp_pose_from_values(&st[3], rgmp_data_stream(def, &f, 3), &rh, NULL), 0);
    struct rgmp_pose l = rgmp_transform_compose(&hips, &lh);
    struct rgmp_pose r = rgmp_transform_compose(&hips, &rh);
    assert_float_equal(l.position.x, -0.75, 1e-6);
    assert_float_equal(l.position.z, 1.40, 1e-6);
    assert_float_equal(r.position.x, 0.75, 1e-6);
    assert_float_equal(r.position.z, 1.40, 1e-6);
    rgmp_definition_free(def);
}

/* D5: NaN/Inf and off-norm quaternions reject the sample (-EDOM); near-unit ones renormalise. */
static void test_pose_sample_rejection_d5(void **state)
{
    (void)state;
    struct rgmp_stream s = {0};
    assert_int_equal(rgmp_data_type_parse("DOUBLE[7]", &s.type, NULL), 0);
    s.measure = RGMP_TRANSFORM;
    s.measure_name = "TRANSFORM";
    s.target_frame = "hips";
    uint8_t v[56];
    struct xg_writer w;
    struct rgmp_pose p;
    struct xg_error err = {0};
    const double good[7] = {1, 2, 3, 0, 0, 0.6, 0.8004};
    xg_writer_init(&w, v, sizeof v);
    for (int i = 0; i < 7; i++)
        xg_write_lef64(&w, good[i]);
    assert_int_equal(rgmp_pose_from_values(&s, v, &p, &err), 0);
    double n = sqrt(p.orientation.z * p.orientation.z + p.orientation.w * p.orientation.w);
    assert_float_equal(n, 1.0, 1e-12);
    assert_float_equal(p.position.z, 3, 0);

    const double off[7] = {1, 2, 3, 0, 0, 0.6, 0.81}; /* norm 1.008 */
    xg_writer_init(&w, v, sizeof v);
    for (int i = 0; i < 7; i++)
        xg_write_lef64(&w, off[i]);
    assert_int_equal(rgmp_pose_from_values(&s, v, &p, &err), -EDOM);
    assert_non_null(strstr(err.msg, "quaternion norm"));
    assert_non_null(strstr(err.msg, "\"hips\""));

    xg_writer_init(&w, v, sizeof v);
    for (int i = 0; i < 7; i++)
        xg_write_lef64(&w, i == 1 ? NAN : good[i]);
    assert_int_equal(rgmp_pose_from_values(&s, v, &p, &err), -EDOM);
    assert_non_null(strstr(err.msg, "value[1] = nan"));

    /* velocity vector with Inf */
    struct rgmp_stream vs = {0};
    assert_int_equal(rgmp_data_type_parse("FLOAT[3]", &vs.type, NULL), 0);
    vs.measure = RGMP_ANGULAR_VELOCITY;
    vs.measure_name = "ANGULAR_VELOCITY";
    vs.target_frame = "hand";
    uint8_t fv[12];
    xg_writer_init(&w, fv, sizeof fv);
    xg_write_lef32(&w, 1.5f);
    xg_write_lef32(&w, -2.0f);
    xg_write_lef32(&w, 0.25f);
    struct xg_vec3 out;
    assert_int_equal(rgmp_vec3_from_values(&vs, fv, &out, &err), 0);
    assert_true(out.x == 1.5 && out.y == -2.0 && out.z == 0.25);
    xg_writer_init(&w, fv, sizeof fv);
    xg_write_lef32(&w, INFINITY);
    assert_int_equal(rgmp_vec3_from_values(&vs, fv, &out, &err), -EDOM);
    /* not a pose stream */
    assert_int_equal(rgmp_pose_from_values(&vs, fv, &p, &err), -EINVAL);

    /* POSITION and ORIENTATION shapes */
    struct rgmp_stream ps = {0};
    assert_int_equal(rgmp_data_type_parse("FLOAT[4]", &ps.type, NULL), 0);
    ps.measure = RGMP_ORIENTATION;
    ps.measure_name = "ORIENTATION";
    ps.target_frame = "x";
    uint8_t qv[16];
    xg_writer_init(&w, qv, sizeof qv);
    xg_write_lef32(&w, 0);
    xg_write_lef32(&w, 1);
    xg_write_lef32(&w, 0);
    xg_write_lef32(&w, 0);
    assert_int_equal(rgmp_pose_from_values(&ps, qv, &p, &err), 0);
    assert_true(p.orientation.y == 1 && p.position.x == 0 && p.position.z == 0);
}

static void test_data_type_sizes(void **state)
{
    (void)state;
    struct rgmp_data_type t;
    char buf[32];
    struct {
        const char *text, *canon;
        uint32_t count, size;
    } ok[] = {
        {"INT32", "INT32", 1, 4},
        {"UINT64", "UINT64", 1, 8},
        {"FLOAT[7]", "FLOAT[7]", 7, 28},
        {"DOUBLE[3,3]", "DOUBLE[3,3]", 9, 72},
        {"DOUBLE[3, 3]", "DOUBLE[3,3]", 9, 72},
        {"INT64[2,   5]", "INT64[2,5]", 10, 80},
        {"UINT32[1073741819]", "UINT32[1073741819]", 1073741819, 4294967276u}, /* the largest */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct xg_error err = {0};
        if (rgmp_data_type_parse(ok[i].text, &t, &err) != 0)
            fail_msg("%s: %s", ok[i].text, err.msg);
        assert_int_equal(t.count, ok[i].count);
        assert_int_equal(t.size, ok[i].size);
        rgmp_data_type_format(&t, buf, sizeof buf);
        assert_string_equal(buf, ok[i].canon);
    }
    /* 1073741820 * 4 = 0xFFFFFFF0 > 0xFFFFFFFF - 16 */
    assert_int_equal(rgmp_data_type_parse("UINT32[1073741820]", &t, NULL), -EPROTO);
    assert_int_equal(rgmp_measure_from_name("MAGNETIC_FIELD"), RGMP_MAGNETIC_FIELD);
    assert_string_equal(rgmp_measure_unit(RGMP_MAGNETIC_FIELD), "G");
    assert_string_equal(rgmp_measure_unit(RGMP_ANGULAR_VELOCITY), "rad/s");
    assert_string_equal(rgmp_measure_unit(RGMP_PROPER_ACCELERATION), "m/s^2");
    assert_int_equal(rgmp_measure_from_name("transform"), RGMP_MEASURE_UNKNOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_6_1_definition_decodes),
        cmocka_unit_test(test_6_1_reencodes_byte_exact),
        cmocka_unit_test(test_6_1_builder_matches_spec),
        cmocka_unit_test(test_vector_files_match_spec_dumps),
        cmocka_unit_test(test_spec_text_matches_vectors),
        cmocka_unit_test(test_6_2_pose_frame_decodes),
        cmocka_unit_test(test_6_3_status_frame_decodes),
        cmocka_unit_test(test_6_2_6_3_build_byte_exact),
        cmocka_unit_test(test_6_4_disconnect),
        cmocka_unit_test(test_stream_split_byte_by_byte),
        cmocka_unit_test(test_truncated_frames),
        cmocka_unit_test(test_build_decode_round_trip),
        cmocka_unit_test(test_session_timestamps_d2),
        cmocka_unit_test(test_session_devices_rules_15_21),
        cmocka_unit_test(test_transform_equation),
        cmocka_unit_test(test_6_2_composes_to_root),
        cmocka_unit_test(test_pose_sample_rejection_d5),
        cmocka_unit_test(test_data_type_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
