/* RGMP v2 codec: §6 golden frames, build/decode round trips and framing. Session rules, the §3
 * transform equation and pose-sample rules are in test_rgmp_samples.c, the §7 rejection rules in
 * test_rgmp_rules.c. */
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

#include "tests/unit/test_rgmp_vectors.h"

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
    size_t len;
    return (char *)xg_test_read_file(XG_VECTORS_DIR "/rgmp/wire-rules-section6.md", &len);
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

/* ---- §6.2 composed to the root ---- */

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
        cmocka_unit_test(test_6_2_composes_to_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
