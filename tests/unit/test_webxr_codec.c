/* Unit tests for adapters/webxr/webxr_codec (docs/adapters/webxr.md "Message layout"): frames
 * encoded and decoded back (viewer, controllers with buttons and axes, hands), hand-written
 * bytes, every refusal with its text (truncation at every length, counts above their bounds,
 * values that are not poses, trailing bytes, unknown types, session names), the page-clock
 * offset from pongs (smallest round trip wins), and the WebSocket opening handshake (RFC 6455
 * section 1.3's example key, headers in any case, each missing or wrong header named). */
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

#include "adapters/webxr/webxr_codec.h"
#include "adapters/webxr/webxr_priv.h"

static uint8_t buf[8192];
static struct webxr_msg msg;

/* decode a heap copy of exactly n bytes (ASan catches over-reads) */
static int decode(const uint8_t *b, size_t n, struct xg_error *err)
{
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, b, n);
    int rc = webxr_decode(copy, n, &msg, err);
    free(copy);
    return rc;
}

static void pose(struct webxr_pose *p, double x, double y, double z, double qx, double qy,
                 double qz, double qw)
{
    double n = sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
    *p = (struct webxr_pose){{x, y, z}, {qx / n, qy / n, qz / n, qw / n}};
}

static void full_frame(struct webxr_frame *f)
{
    memset(f, 0, sizeof *f);
    f->time_ms = 12345.678;
    f->has_viewer = true;
    pose(&f->viewer, 0.1, 1.6, -0.2, 0, 0.3826834, 0, 0.9238795);
    f->n_sources = 2;
    struct webxr_source *c = &f->sources[0];
    c->handedness = 2;
    c->has_grip = true;
    pose(&c->grip, 0.3, 1.1, -0.4, 0.1, 0.2, 0.3, 0.9);
    c->n_buttons = 7;
    c->n_axes = 4;
    c->pressed[0] = true;
    c->value[0] = 1.0;
    c->touched[3] = true;
    c->value[1] = 0.25;
    c->axes[2] = 0.5;
    c->axes[3] = -0.25;
    struct webxr_source *h = &f->sources[1];
    h->handedness = 1;
    h->has_hand = true;
    for (int j = 0; j < WEBXR_JOINTS; j++) {
        h->joints[j].valid = j != 4;
        pose(&h->joints[j].pose, -0.2 + 0.01 * j, 1.0, -0.3, 0, 0, 0, 1);
        h->joints[j].radius = 0.01;
    }
}

static void test_frame_round_trip(void **state)
{
    (void)state;
    struct webxr_frame f;
    full_frame(&f);
    size_t n = webxr_encode_frame(buf, sizeof buf, &f);
    /* 11 header + 28 viewer + (4 + 28 + 7*5 + 4*4) + (4 + 25*33) */
    assert_int_equal(n, 11 + 28 + 83 + 829);
    struct xg_error err = {0};
    assert_int_equal(decode(buf, n, &err), 0);
    assert_int_equal(msg.type, WEBXR_MSG_FRAME);
    const struct webxr_frame *g = &msg.frame;
    assert_true(g->time_ms == 12345.678);
    assert_true(g->has_viewer);
    assert_true(fabs(g->viewer.p[1] - 1.6) < 1e-6);
    assert_true(fabs(g->viewer.q[1] - 0.3826834) < 1e-6);
    assert_int_equal(g->n_sources, 2);
    assert_int_equal(g->sources[0].handedness, 2);
    assert_true(g->sources[0].has_grip && !g->sources[0].has_hand);
    assert_int_equal(g->sources[0].n_buttons, 7);
    assert_true(g->sources[0].pressed[0] && !g->sources[0].pressed[1]);
    assert_true(g->sources[0].touched[3]);
    assert_true(g->sources[0].value[1] == 0.25);
    assert_true(g->sources[0].axes[2] == 0.5 && g->sources[0].axes[3] == -0.25);
    assert_true(g->sources[1].has_hand && !g->sources[1].has_grip);
    assert_false(g->sources[1].joints[4].valid);
    assert_true(g->sources[1].joints[24].valid);
    assert_true(fabs(g->sources[1].joints[24].pose.p[0] - 0.04) < 1e-6);
    assert_true(fabs(g->sources[1].joints[24].radius - 0.01) < 1e-7);
}

/* Bytes written by hand, as the page's DataView writes them. */
static void test_frame_bytes(void **state)
{
    (void)state;
    static const uint8_t b[] = {
        0x02, 0x01, 0x00,                               /* FRAME, viewer valid, 0 sources */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x8f, 0x40, /* f64 1000.0 ms */
        0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0xc0, /* 1, 2, -3 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 0, 0, 0 */
        0x00, 0x00, 0x80, 0x3f};                                                /* w 1 */
    struct xg_error err = {0};
    assert_int_equal(decode(b, sizeof b, &err), 0);
    assert_true(msg.frame.time_ms == 1000.0);
    assert_true(msg.frame.viewer.p[0] == 1 && msg.frame.viewer.p[1] == 2 &&
                msg.frame.viewer.p[2] == -3);
    assert_true(msg.frame.viewer.q[3] == 1);
}

/* Every proper prefix of a valid frame is refused as truncated, never read past. */
static void test_truncated_everywhere(void **state)
{
    (void)state;
    struct webxr_frame f;
    full_frame(&f);
    size_t n = webxr_encode_frame(buf, sizeof buf, &f);
    for (size_t k = 0; k < n; k++) {
        struct xg_error err = {0};
        int rc = decode(buf, k, &err);
        assert_int_equal(rc, -EMSGSIZE);
        assert_true(strstr(err.msg, "truncated") || strstr(err.msg, "empty"));
    }
    struct xg_error err = {0};
    buf[n] = 0;
    assert_int_equal(decode(buf, n + 1, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "1 trailing bytes"));
}

static void expect_refused(const struct webxr_frame *f, const char *text)
{
    size_t n = webxr_encode_frame(buf, sizeof buf, f);
    assert_true(n > 0);
    struct xg_error err = {0};
    assert_int_equal(decode(buf, n, &err), -EPROTO);
    if (!strstr(err.msg, text)) fail_msg("\"%s\" does not contain \"%s\"", err.msg, text);
}

static void test_bad_values(void **state)
{
    (void)state;
    struct webxr_frame f;
    full_frame(&f);
    f.viewer.p[0] = NAN;
    expect_refused(&f, "viewer pose 0 px nan");
    full_frame(&f);
    f.viewer.p[1] = 1e7;
    expect_refused(&f, "viewer pose 0 py 1e+07");
    full_frame(&f);
    f.sources[0].grip.q[0] = f.sources[0].grip.q[1] = f.sources[0].grip.q[2] = 0;
    f.sources[0].grip.q[3] = 0.1;
    expect_refused(&f, "source grip 0 quaternion norm 0.1");
    full_frame(&f);
    f.sources[0].value[2] = 3.0;
    expect_refused(&f, "source 0 button 2 value 3 outside [0, 1]");
    full_frame(&f);
    f.sources[0].axes[1] = -2.0;
    expect_refused(&f, "source 0 axis 1 value -2 outside [-1, 1]");
    full_frame(&f);
    f.sources[1].joints[3].radius = -1;
    expect_refused(&f, "joint thumb-phalanx-distal radius -1");
    full_frame(&f);
    f.sources[0].handedness = 3;
    expect_refused(&f, "source 0 handedness 3");
    full_frame(&f);
    f.time_ms = -5;
    expect_refused(&f, "frame time -5 ms");
}

static void test_bad_counts(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct webxr_frame f;
    full_frame(&f);
    size_t n = webxr_encode_frame(buf, sizeof buf, &f);
    buf[2] = 9; /* n_sources */
    assert_int_equal(decode(buf, n, &err), -EPROTO);
    assert_string_equal(err.msg, "frame n_sources 9 > 8");
    buf[2] = 2;
    buf[39 + 2] = 40; /* source 0 n_buttons */
    assert_int_equal(decode(buf, n, &err), -EPROTO);
    assert_string_equal(err.msg, "source 0 n_buttons 40 > 32");
    buf[39 + 2] = 7;
    buf[39 + 3] = 17; /* n_axes */
    assert_int_equal(decode(buf, n, &err), -EPROTO);
    assert_string_equal(err.msg, "source 0 n_axes 17 > 16");
    buf[39 + 3] = 4;
    buf[39 + 1] = 0x04; /* flags */
    assert_int_equal(decode(buf, n, &err), -EPROTO);
    assert_string_equal(err.msg, "source 0 flags 0x04 (only bits 0-1 defined)");
    buf[1] = 0x81;
    assert_int_equal(decode(buf, n, &err), -EPROTO);
    assert_string_equal(err.msg, "frame flags 0x81 (only bit 0 defined)");
}

static void test_hello_pong_types(void **state)
{
    (void)state;
    struct xg_error err = {0};
    const uint8_t hello[] = {0x01, 0x01, 0x05, 'q', 'u', 'e', 's', 't'};
    assert_int_equal(decode(hello, sizeof hello, &err), 0);
    assert_string_equal(msg.session, "quest");
    const uint8_t anon[] = {0x01, 0x01, 0x00};
    assert_int_equal(decode(anon, sizeof anon, &err), 0);
    assert_string_equal(msg.session, "");
    const uint8_t bad_name[] = {0x01, 0x01, 0x03, 'a', '/', 'b'};
    assert_int_equal(decode(bad_name, sizeof bad_name, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "session name \"a/b\""));
    const uint8_t bad_ver[] = {0x01, 0x02, 0x00};
    assert_int_equal(decode(bad_ver, sizeof bad_ver, &err), -EPROTO);
    assert_string_equal(err.msg, "hello version 2 (this gateway speaks 1)");
    const uint8_t long_name[] = {0x01, 0x01, 33};
    assert_int_equal(decode(long_name, sizeof long_name, &err), -EPROTO);
    assert_string_equal(err.msg, "hello session name length 33 > 32");
    const uint8_t pong[] = {0x03, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x8f, 0x40};
    assert_int_equal(decode(pong, sizeof pong, &err), 0);
    assert_int_equal(msg.seq, 7);
    assert_true(msg.page_ms == 1000.0);
    const uint8_t unknown[] = {0x7f};
    assert_int_equal(decode(unknown, sizeof unknown, &err), -EPROTO);
    assert_string_equal(err.msg, "message type 0x7f unknown (0x01-0x03)");
    assert_int_equal(decode(unknown, 0, &err), -EMSGSIZE);
    uint8_t out[64];
    assert_int_equal(webxr_encode_welcome(out, sizeof out, "s1"), 5);
    assert_memory_equal(out, ((uint8_t[]){0x81, 1, 2, 's', '1'}), 5);
    assert_int_equal(webxr_encode_ping(out, sizeof out, 0x01020304), 5);
    assert_memory_equal(out, ((uint8_t[]){0x82, 4, 3, 2, 1}), 5);
}

static void test_joint_table(void **state)
{
    (void)state;
    assert_string_equal(webxr_joint_names[0], "wrist");
    assert_string_equal(webxr_joint_names[24], "pinky-finger-tip");
    assert_int_equal(webxr_joint_parent[0], -1);
    for (int j = 1; j < WEBXR_JOINTS; j++) {
        int p = webxr_joint_parent[j];
        assert_true(p >= 0 && p < j);
        /* a metacarpal hangs off the wrist, every other joint off the one before it */
        if (strstr(webxr_joint_names[j], "metacarpal"))
            assert_int_equal(p, 0);
        else
            assert_int_equal(p, j - 1);
    }
}

static void test_clock_offset(void **state)
{
    (void)state;
    struct webxr_clock c;
    memset(&c, 0, sizeof c);
    /* gateway = page + 5 s; three pings, round trips 10 ms, 2 ms, 6 ms */
    const int64_t off = INT64_C(5000000000);
    const int64_t rtts[3] = {10000000, 2000000, 6000000};
    int64_t t = INT64_C(100000000000);
    for (int i = 0; i < 3; i++) {
        uint32_t seq = ++c.seq;
        c.sent_seq[seq & 7] = seq;
        c.sent_ns[seq & 7] = t;
        /* the page answers 1 ms after the ping left (not at the midpoint) */
        double page_ms = (double)(t + 1000000 - off) / 1e6;
        assert_true(webxr_clock_pong(&c, seq, page_ms, t + rtts[i]));
        assert_false(webxr_clock_pong(&c, seq, page_ms, t + rtts[i])); /* one pong per ping */
        t += INT64_C(1000000000);
    }
    /* the 2 ms round trip wins: error = midpoint (1 ms) − answer (1 ms) = 0 */
    assert_int_equal(c.best_rtt_ns, 2000000);
    assert_int_equal(c.offset_ns, off);
    assert_false(webxr_clock_pong(&c, 99, 0, t));
}

/* ---- handshake ---- */

static const char good[] = "GET /?token=s%20cret&x=1 HTTP/1.1\r\n"
                           "Host: 127.0.0.1:8443\r\n"
                           "upgrade: WebSocket\r\n"
                           "Connection: keep-alive, Upgrade\r\n"
                           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n";

static void test_accept_key(void **state)
{
    (void)state;
    char out[40];
    /* RFC 6455 section 1.3 */
    assert_int_equal(webxr_accept_key("dGhlIHNhbXBsZSBub25jZQ==", out, sizeof out), 0);
    assert_string_equal(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

static void test_upgrade_parse(void **state)
{
    (void)state;
    struct webxr_upgrade u;
    struct xg_error err = {0};
    assert_int_equal(webxr_upgrade_parse(good, strlen(good), &u, &err), 0);
    assert_string_equal(u.key, "dGhlIHNhbXBsZSBub25jZQ==");
    assert_string_equal(u.token, "s cret");
    assert_string_equal(u.path, "/");
    const char bearer[] = "GET /webxr HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Authorization: Bearer abc\r\nSec-WebSocket-Version: 13\r\n"
                          "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA==\r\n\r\n";
    assert_int_equal(webxr_upgrade_parse(bearer, strlen(bearer), &u, &err), 0);
    assert_string_equal(u.token, "abc");
    assert_string_equal(u.path, "/webxr");
    assert_true(webxr_token_equal("abc", "abc"));
    assert_false(webxr_token_equal("abd", "abc"));
    assert_false(webxr_token_equal("ab", "abc"));
    assert_false(webxr_token_equal("abcd", "abc"));
}

static void expect_bad(const char *from, const char *to, const char *text)
{
    char req[1024];
    const char *p = strstr(good, from);
    assert_non_null(p);
    snprintf(req, sizeof req, "%.*s%s%s", (int)(p - good), good, to, p + strlen(from));
    struct webxr_upgrade u;
    struct xg_error err = {0};
    assert_int_equal(webxr_upgrade_parse(req, strlen(req), &u, &err), -EPROTO);
    if (!strstr(err.msg, text)) fail_msg("\"%s\" does not contain \"%s\"", err.msg, text);
}

static void test_upgrade_refused(void **state)
{
    (void)state;
    expect_bad("GET ", "POST ", "is not \"GET <path> HTTP/1.1\"");
    expect_bad("HTTP/1.1\r\nHost", "HTTP/1.0\r\nHost", "is not \"GET <path> HTTP/1.1\"");
    expect_bad("upgrade: WebSocket", "upgrade: h2c", "header Upgrade \"h2c\" is not");
    expect_bad("upgrade: WebSocket", "X-Up: x", "header Upgrade \"(absent)\"");
    expect_bad("keep-alive, Upgrade", "keep-alive", "header Connection \"keep-alive\" has no");
    expect_bad("Version: 13", "Version: 8", "header Sec-WebSocket-Version \"8\" is not 13");
    expect_bad("dGhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZQ==",
               "header Sec-WebSocket-Key \"dGhlIHNhbXBsZQ==\" is not 16 bytes");
    expect_bad("dGhlIHNhbXBsZSBub25jZQ==", "!!!!", "Sec-WebSocket-Key \"!!!!\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_round_trip),     cmocka_unit_test(test_frame_bytes),
        cmocka_unit_test(test_truncated_everywhere), cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_bad_counts),           cmocka_unit_test(test_hello_pong_types),
        cmocka_unit_test(test_joint_table),          cmocka_unit_test(test_clock_offset),
        cmocka_unit_test(test_accept_key),           cmocka_unit_test(test_upgrade_parse),
        cmocka_unit_test(test_upgrade_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
