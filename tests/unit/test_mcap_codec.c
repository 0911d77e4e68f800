/* mcap codec, CDR and writer (adapters/mcap): CRC-32 check value, record layout byte for byte,
 * CDR of TFMessage and Sample (round trip, ROS 2 alignment), bounded decoding of cut and
 * corrupted input, and a written file's structure (magic, chunk CRC, footer CRC). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "adapters/mcap/mcap_cdr.h"
#include "adapters/mcap/mcap_codec.h"
#include "adapters/mcap/mcap_reader.h"
#include "adapters/mcap/mcap_writer.h"

static void test_crc32(void **state)
{
    (void)state;
    assert_int_equal(mcap_crc32(0, "123456789", 9), 0xCBF43926u); /* the CRC-32 check value */
    /* continued in pieces = at once */
    uint8_t buf[1000];
    for (int i = 0; i < 1000; i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    uint32_t whole = mcap_crc32(0, buf, sizeof buf);
    assert_int_equal(mcap_crc32(mcap_crc32(0, buf, 13), buf + 13, sizeof buf - 13), whole);
    uint32_t bytewise = 0;
    for (int i = 0; i < 1000; i++)
        bytewise = mcap_crc32(bytewise, buf + i, 1);
    assert_int_equal(bytewise, whole);
}

static void test_message_layout(void **state)
{
    (void)state;
    struct mcap_buf b = {0};
    mcap_message(&b, 0x0102, 7, 0x1122334455667788ull, 0x99, "ab", 2);
    const uint8_t want[] = {0x05, 24,   0,    0, 0, 0, 0,    0,    0, /* opcode, length 2+4+8+8+2 */
                            0x02, 0x01, 7,    0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33,
                            0x22, 0x11, 0x99, 0, 0, 0, 0,    0,    0,    0,    'a',  'b'};
    assert_int_equal(b.n, sizeof want);
    assert_memory_equal(b.p, want, sizeof want);
    struct mcap_record r;
    size_t off = 0;
    assert_int_equal(mcap_next_record(b.p, b.n, &off, 1 << 20, &r), 0);
    assert_int_equal(off, b.n);
    struct mcap_msg m;
    assert_int_equal(mcap_parse_message(&r, &m), 0);
    assert_int_equal(m.channel, 0x0102);
    assert_int_equal(m.sequence, 7);
    assert_true(m.log_time == 0x1122334455667788ull && m.publish_time == 0x99);
    assert_int_equal(m.len, 2);
    /* cut short: -EAGAIN at every length; a length over the limit: -EMSGSIZE */
    for (size_t n = 0; n < b.n; n++) {
        off = 0;
        assert_int_equal(mcap_next_record(b.p, n, &off, 1 << 20, &r), -EAGAIN);
    }
    off = 0;
    assert_int_equal(mcap_next_record(b.p, b.n, &off, 10, &r), -EMSGSIZE);
    mcap_buf_free(&b);
}

static void test_cdr_tf(void **state)
{
    (void)state;
    struct mcap_buf b = {0};
    struct mcap_tf tf = {.stamp_ns = 1700000000123456789ll, .t = {1, 2, 3}, .q = {0, 0, 0, 1}};
    strcpy(tf.frame_id, "world");
    strcpy(tf.child_frame_id, "demo/head");
    mcap_cdr_tf(&b, &tf);
    /* header, count 1, sec, nanosec, "world" (len 6), pad to 4, "demo/head" (len 10), pad to 8 */
    const uint8_t head[] = {0, 1, 0, 0, 1, 0, 0, 0};
    assert_memory_equal(b.p, head, sizeof head);
    uint32_t sec, nsec;
    memcpy(&sec, b.p + 8, 4);
    memcpy(&nsec, b.p + 12, 4);
    assert_int_equal(sec, 1700000000u);
    assert_int_equal(nsec, 123456789u);
    /* offsets from after the header: 0 count, 4 sec, 8 nsec, 12 len, 16 "world\0", 22 pad,
     * 24 len, 28 "demo/head\0" (to 38), pad to 40: translation */
    double x;
    memcpy(&x, b.p + 4 + 40, 8);
    assert_true(x == 1.0);
    assert_int_equal(b.n, 4 + 40 + 7 * 8);
    struct mcap_tf out;
    uint32_t count;
    struct xg_error err = {0};
    assert_int_equal(mcap_cdr_tf_decode(b.p, b.n, 0, &count, &out, &err), 0);
    assert_int_equal(count, 1);
    assert_string_equal(out.child_frame_id, "demo/head");
    assert_true(out.stamp_ns == tf.stamp_ns && out.t[2] == 3.0 && out.q[3] == 1.0);
    assert_int_equal(mcap_cdr_tf_decode(b.p, b.n, 1, &count, &out, &err), -ENOENT);
    for (size_t n = 0; n < b.n; n++) /* every cut is an error naming a field, never a crash */
        assert_int_equal(mcap_cdr_tf_decode(b.p, n, 0, &count, &out, &err), -EPROTO);
    mcap_buf_free(&b);
}

static void test_cdr_sample(void **state)
{
    (void)state;
    static struct mcap_sample s, o;
    strcpy(s.name, "rig/wand");
    strcpy(s.origin, "rig");
    strcpy(s.kind, "controller");
    s.capture_time = 123456789012345ll;
    s.receive_time = 123456789012399ll;
    s.flags = 3;
    s.sensor = -1;
    s.position[1] = 1.5;
    s.orientation[3] = 1;
    s.n_buttons = 3;
    s.buttons[2] = 1;
    s.n_analogs = 2;
    s.analogs[1] = -0.25;
    struct mcap_buf b = {0};
    mcap_cdr_sample(&b, &s);
    struct xg_error err = {0};
    assert_int_equal(mcap_cdr_sample_decode(b.p, b.n, &o, &err), 0);
    assert_string_equal(o.name, "rig/wand");
    assert_string_equal(o.kind, "controller");
    assert_string_equal(o.parent, "");
    assert_true(o.capture_time == s.capture_time && o.receive_time == s.receive_time);
    assert_int_equal(o.sensor, -1);
    assert_true(o.position[1] == 1.5 && o.orientation[3] == 1.0);
    assert_int_equal(o.n_buttons, 3);
    assert_int_equal(o.buttons[2], 1);
    assert_int_equal(o.n_analogs, 2);
    assert_true(o.analogs[1] == -0.25);
    for (size_t n = 0; n < b.n; n++)
        assert_int_equal(mcap_cdr_sample_decode(b.p, n, &o, &err), -EPROTO);
    /* a bad encapsulation header names it */
    b.p[1] = 0x00;
    assert_int_equal(mcap_cdr_sample_decode(b.p, b.n, &o, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "CDR_LE"));
    mcap_buf_free(&b);
}

/* The recorder's paths: a cached prefix gives the same bytes as the whole encoder; transforms
 * appended one by one make one TFMessage whose every transform decodes. */
static void test_cdr_grouped(void **state)
{
    (void)state;
    static struct mcap_sample s;
    strcpy(s.name, "rig/arm");
    strcpy(s.source, "arm");
    strcpy(s.origin, "rig");
    strcpy(s.kind, "joint");
    strcpy(s.parent, "rig/hips");
    s.capture_time = -5; /* before the epoch: sec rounds down */
    s.position[2] = 2.5;
    s.n_buttons = 1;
    struct mcap_buf whole = {0}, pre = {0}, with = {0};
    mcap_cdr_sample(&whole, &s);
    size_t n = mcap_cdr_sample_prefix(
        &pre, (const char *const[5]){s.name, s.source, s.origin, s.origin_gateway, s.kind});
    assert_int_equal(n, pre.n);
    mcap_cdr_sample_with(&with, pre.p, n, "rig/hips", 8, &s);
    assert_int_equal(with.n, whole.n);
    assert_memory_equal(with.p, whole.p, whole.n);
    static const char *child[] = {"a", "rig/wand", "rig/hips/left/foot"};
    struct mcap_buf b = {0};
    mcap_put_bytes(&b, "xyz", 3); /* a message that does not start at offset 0 of its buffer */
    size_t at = mcap_cdr_tf_begin(&b);
    assert_int_equal(at, 3);
    for (int i = 0; i < 3; i++) {
        const double t[3] = {i, 2 * i, 3 * i}, q[4] = {0, 0, 0, 1};
        mcap_cdr_tf_add(&b, at, -5 + i, i ? "world" : "rig/hips", i ? 5 : 8, child[i],
                        strlen(child[i]), t, q);
    }
    struct xg_error err = {0};
    struct mcap_tf out;
    uint32_t count;
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(mcap_cdr_tf_decode(b.p + at, b.n - at, i, &count, &out, &err), 0);
        assert_int_equal(count, 3);
        assert_string_equal(out.child_frame_id, child[i]);
        assert_string_equal(out.frame_id, i ? "world" : "rig/hips");
        assert_true(out.stamp_ns == -5 + (int64_t)i && out.t[1] == 2.0 * i && out.q[3] == 1.0);
    }
    /* one transform through the group path = mcap_cdr_tf() */
    struct mcap_tf tf = {.stamp_ns = 7, .t = {1, 2, 3}, .q = {0, 0, 0, 1}};
    strcpy(tf.frame_id, "world");
    strcpy(tf.child_frame_id, "a");
    struct mcap_buf one = {0}, grp = {0};
    mcap_cdr_tf(&one, &tf);
    mcap_cdr_tf_add(&grp, mcap_cdr_tf_begin(&grp), 7, "world", 5, "a", 1, tf.t, tf.q);
    assert_int_equal(one.n, grp.n);
    assert_memory_equal(one.p, grp.p, one.n);
    mcap_buf_free(&whole);
    mcap_buf_free(&pre);
    mcap_buf_free(&with);
    mcap_buf_free(&b);
    mcap_buf_free(&one);
    mcap_buf_free(&grp);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(*n);
    assert_int_equal(fread(p, 1, *n, f), *n);
    fclose(f);
    return p;
}

static void test_writer_file(void **state)
{
    (void)state;
    char path[] = "/tmp/test_mcap_codec-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct mcap_writer w;
    struct xg_error err = {0};
    assert_int_equal(mcap_writer_open(&w, path, "ros2", "test", MCAP_COMPRESSION_NONE, 100, &err),
                     0);
    assert_int_equal(mcap_writer_schema(&w, 1, "a/msg/B", "ros2msg", "int32 x\n"), 0);
    assert_int_equal(mcap_writer_channel(&w, 0, 1, "/b", "cdr", 0, NULL, NULL), 0);
    for (int i = 0; i < 10; i++) {
        if (i % 2) { /* encoded straight into the chunk */
            mcap_put_bytes(mcap_writer_begin(&w, 0, 1000 + (uint64_t)i, 1000), "12345678", 8);
            assert_int_equal(mcap_writer_end(&w), 0);
        } else {
            assert_int_equal(mcap_writer_message(&w, 0, 1000 + (uint64_t)i, 1000, "12345678", 8),
                             0);
        }
    }
    assert_int_equal(mcap_writer_message(&w, 3, 1, 1, "x", 1), -EINVAL); /* unknown channel */
    mcap_put_bytes(mcap_writer_begin(&w, 3, 1, 1), "x", 1);
    assert_int_equal(mcap_writer_end(&w), -EINVAL);
    assert_int_equal(mcap_writer_close(&w), 0);
    size_t n;
    uint8_t *p = slurp(path, &n);
    unlink(path);
    assert_memory_equal(p, MCAP_MAGIC, 8);
    assert_memory_equal(p + n - 8, MCAP_MAGIC, 8);
    /* walk the records: chunks whose CRC matches, DataEnd, footer whose summary CRC matches */
    size_t off = 8;
    struct mcap_record r;
    int chunks = 0, msgs_indexed = 0;
    bool data_end = false, footer = false;
    while (mcap_next_record(p, n - 8, &off, 1 << 20, &r) == 0) {
        if (r.op == MCAP_OP_CHUNK) {
            struct mcap_chunk c;
            assert_int_equal(mcap_parse_chunk(&r, &c, &err), 0);
            assert_string_equal(c.compression, "");
            assert_int_equal(mcap_crc32(0, c.records, c.records_len), c.uncompressed_crc);
            chunks++;
        } else if (r.op == MCAP_OP_MESSAGE_INDEX) {
            struct xg_reader cu;
            xg_reader_init(&cu, r.body, (size_t)r.len);
            assert_int_equal(xg_read_le16(&cu), 0);
            msgs_indexed += (int)(xg_read_le32(&cu) / 16);
        } else if (r.op == MCAP_OP_DATA_END) {
            struct xg_reader cu;
            xg_reader_init(&cu, r.body, (size_t)r.len);
            assert_int_equal(xg_read_le32(&cu), 0); /* data section CRC: not computed */
            data_end = true;
        } else if (r.op == MCAP_OP_FOOTER) {
            struct xg_reader cu;
            xg_reader_init(&cu, r.body, (size_t)r.len);
            uint64_t sum = xg_read_le64(&cu);
            xg_read_le64(&cu);
            uint32_t crc = xg_read_le32(&cu);
            assert_int_equal(crc, mcap_crc32(0, p + sum, (size_t)(r.body + 16 - (p + sum))));
            footer = true;
        }
    }
    assert_int_equal(off, n - 8);
    assert_true(chunks >= 2); /* 100-byte chunks */
    assert_int_equal(msgs_indexed, 10);
    assert_true(data_end && footer);
    free(p);
}

/* A small zstd file of 20 messages in chunks of ~100 bytes, in memory. */
static uint8_t *small_file(size_t *n, enum mcap_compression comp)
{
    char path[] = "/tmp/test_mcap_reader-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct mcap_writer w;
    struct xg_error err = {0};
    assert_int_equal(mcap_writer_open(&w, path, "", "test", comp, 100, &err), 0);
    assert_int_equal(mcap_writer_schema(&w, 1, "a/msg/B", "ros2msg", "int32 x\n"), 0);
    assert_int_equal(mcap_writer_channel(&w, 5, 1, "/b", "cdr", 0, NULL, NULL), 0);
    for (int i = 0; i < 20; i++)
        assert_int_equal(mcap_writer_message(&w, 5, 1000 + (uint64_t)i, 1000, "abcdefgh", 8), 0);
    assert_int_equal(mcap_writer_close(&w), 0);
    uint8_t *p = slurp(path, n);
    unlink(path);
    return p;
}

/* Read every message; `strict`: each must be the one written (not for corrupted input). */
static int read_all(const uint8_t *p, size_t n, int *msgs, bool *truncated, struct xg_error *err,
                    bool strict)
{
    struct mcap_reader r;
    *msgs = 0;
    int rc = mcap_reader_open_mem(&r, p, n, err);
    if (rc) return rc;
    const struct mcap_channel_info *ch;
    struct mcap_msg m;
    while ((rc = mcap_reader_next(&r, &ch, &m, err)) == 1) {
        if (!strict) {
            (*msgs)++;
            continue;
        }
        assert_int_equal(ch->id, 5);
        assert_string_equal(ch->schema_name, "a/msg/B");
        assert_int_equal(m.len, 8);
        assert_memory_equal(m.data, "abcdefgh", 8);
        (*msgs)++;
    }
    *truncated = r.truncated;
    mcap_reader_close(&r);
    return rc;
}

static void test_reader_roundtrip(void **state)
{
    (void)state;
    const enum mcap_compression comps[] = {MCAP_COMPRESSION_NONE, MCAP_COMPRESSION_ZSTD,
                                           MCAP_COMPRESSION_LZ4};
    for (int c = 0; c < 3; c++) {
        size_t n;
        uint8_t *p = small_file(&n, comps[c]);
        int msgs;
        bool cut;
        struct xg_error err = {0};
        assert_int_equal(read_all(p, n, &msgs, &cut, &err, true), 0);
        assert_int_equal(msgs, 20);
        assert_false(cut);
        free(p);
    }
}

static void test_reader_malformed(void **state)
{
    (void)state;
    size_t n;
    uint8_t *p = small_file(&n, MCAP_COMPRESSION_ZSTD);
    int msgs, prev = 0;
    bool cut;
    struct xg_error err = {0};
    /* every prefix: never an error past the magic, messages only from complete chunks, more as
     * the file grows, and "truncated" until the DataEnd record is there */
    for (size_t k = 8; k < n; k++) {
        assert_int_equal(read_all(p, k, &msgs, &cut, &err, true), 0);
        assert_true(msgs >= prev && msgs <= 20);
        prev = msgs;
    }
    assert_int_equal(prev, 20);
    assert_int_equal(read_all(p, 7, &msgs, &cut, &err, true), -EPROTO);
    assert_non_null(strstr(err.msg, "not an MCAP file"));
    /* every single-byte change: an error with a message or fewer/equal messages, never a crash */
    for (size_t k = 8; k < n; k++) {
        p[k] ^= 0x5A;
        err.msg[0] = '\0';
        int rc = read_all(p, n, &msgs, &cut, &err, false);
        assert_true(rc == 0 || (rc < 0 && err.msg[0]));
        p[k] ^= 0x5A;
    }
    /* the first chunk's compressed records changed: a decompression or CRC error naming it */
    size_t off = 8;
    struct mcap_record r;
    while (mcap_next_record(p, n, &off, UINT64_MAX, &r) == 0 && r.op != MCAP_OP_CHUNK) {}
    assert_int_equal(r.op, MCAP_OP_CHUNK);
    size_t last = (size_t)(r.body - p) + (size_t)r.len - 1;
    p[last] ^= 0x01;
    assert_int_equal(read_all(p, n, &msgs, &cut, &err, true), -EPROTO);
    assert_non_null(strstr(err.msg, "chunk at offset"));
    p[last] ^= 0x01;
    /* a records length past the end of the record */
    memset((uint8_t *)r.body + 8 + 8 + 8 + 4 + 4 + 4, 0xFF, 8);
    assert_int_equal(read_all(p, n, &msgs, &cut, &err, true), -EPROTO);
    assert_non_null(strstr(err.msg, "exceeds"));
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_message_layout),
        cmocka_unit_test(test_cdr_tf),
        cmocka_unit_test(test_cdr_sample),
        cmocka_unit_test(test_cdr_grouped),
        cmocka_unit_test(test_writer_file),
        cmocka_unit_test(test_reader_roundtrip),
        cmocka_unit_test(test_reader_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
