/* Unit tests for adapters/vrpn/vrpn_codec: golden bytes, rejection rules, id maps. The recorded
 * fixture streams are exercised in test_vrpn_fixtures.c. */
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

#include "adapters/vrpn/vrpn_codec.h"

#define VEC_DIR XG_SOURCE_DIR "/tests/vectors/vrpn/"

static uint8_t *load_vector(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", VEC_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("golden vector %s missing", path);
    static uint8_t buf[4096];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void assert_err_contains(const struct xg_error *e, const char *needle)
{
    if (!strstr(e->msg, needle))
        fail_msg("error message '%s' does not contain '%s'", e->msg, needle);
}

static struct vrpn_header hdr(uint32_t sec, uint32_t usec, int32_t sender, int32_t type)
{
    struct vrpn_header h = {0, sec, usec, sender, type, 0};
    return h;
}

/* ---- cookie (§4) ---- */

static void test_cookie_encode_golden(void **state)
{
    (void)state;
    uint8_t out[64];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(vrpn_cookie_encode(&w, 0, NULL), 0);
    size_t n;
    const uint8_t *gold = load_vector("cookie.bin", &n);
    assert_int_equal(n, 24);
    assert_int_equal(w.len, 24);
    assert_memory_equal(out, gold, 24);
    struct xg_error e = {0};
    assert_int_equal(vrpn_cookie_encode(&w, 4, &e), -EINVAL);
    assert_err_contains(&e, "log mode 4");
    xg_writer_init(&w, out, 23);
    assert_int_equal(vrpn_cookie_encode(&w, 0, &e), -EMSGSIZE);
}

static void make_cookie(uint8_t c[24], const char *text)
{
    memset(c, 0, 24);
    memcpy(c, text, strlen(text));
}

static void test_cookie_decode_accepts_minor(void **state)
{
    (void)state;
    uint8_t c[24];
    struct vrpn_cookie ck;
    struct xg_error e = {0};
    make_cookie(c, "vrpn: ver. 07.38  0");
    assert_int_equal(vrpn_cookie_decode(c, 24, &ck, &e), 0);
    assert_int_equal(ck.minor, 38);
    assert_false(ck.minor_differs);
    assert_int_equal(ck.log_mode, 0);
    make_cookie(c, "vrpn: ver. 07.35  3");
    assert_int_equal(vrpn_cookie_decode(c, 24, &ck, &e), 0);
    assert_int_equal(ck.minor, 35);
    assert_true(ck.minor_differs);
    assert_int_equal(ck.log_mode, 3);
    make_cookie(c, "vrpn: ver. 07.99  2");
    assert_int_equal(vrpn_cookie_decode(c, 24, &ck, &e), 0);
    assert_int_equal(ck.minor, 99);
    assert_int_equal(ck.log_mode, 2);
}

static void test_cookie_decode_rejects(void **state)
{
    (void)state;
    uint8_t c[24];
    struct xg_error e = {0};
    make_cookie(c, "vrpn: ver. 06.38  0");
    assert_int_equal(vrpn_cookie_decode(c, 24, NULL, &e), -EPROTO);
    assert_err_contains(&e, "'vrpn: ver. 06.38' is not major version 07");
    make_cookie(c, "vrpn: ver. 08.38  0");
    assert_int_equal(vrpn_cookie_decode(c, 24, NULL, &e), -EPROTO);
    make_cookie(c, "VRPN: ver. 07.38  0");
    assert_int_equal(vrpn_cookie_decode(c, 24, NULL, &e), -EPROTO);
    /* a later '.' moves mainline's comparison past the magic */
    make_cookie(c, "vrpn: ver. 07.38. 0");
    assert_int_equal(vrpn_cookie_decode(c, 24, NULL, &e), -EPROTO);
    /* log mode NUL (only the 16-byte magic sent) and '4' */
    make_cookie(c, "vrpn: ver. 07.38");
    assert_int_equal(vrpn_cookie_decode(c, 24, NULL, &e), -EPROTO);
    assert_err_contains(&e, "invalid log mode byte '\\x00' (0x00) at offset 18");
    make_cookie(c, "vrpn: ver. 07.38  4");
    assert_int_equal(vrpn_cookie_decode(c, 24, NULL, &e), -EPROTO);
    assert_err_contains(&e, "invalid log mode byte '4'");
    make_cookie(c, "vrpn: ver. 07.38  0");
    assert_int_equal(vrpn_cookie_decode(c, 23, NULL, &e), -EMSGSIZE);
    assert_err_contains(&e, "23 bytes, need 24");
}

/* ---- header and framing (§5.1, §5.2) ---- */

static void test_header_golden_sender_description(void **state)
{
    (void)state;
    /* §5.3 example: server's first message, sender 0 "VRPN Control", seq 0 (zero padding). */
    size_t n;
    const uint8_t *gold = load_vector("sender_description_vrpn_control.bin", &n);
    assert_int_equal(n, 48);
    uint8_t out[64];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    uint32_t seq = 0;
    struct vrpn_header h = hdr(0x6b02707b, 0x00041833, 99, 99);
    assert_int_equal(
        vrpn_encode_description(&w, &h, &seq, VRPN_SENDER_DESCRIPTION, 0, VRPN_NAME_CONTROL, NULL),
        0);
    assert_int_equal(seq, 1);
    assert_int_equal(w.len, 48);
    assert_memory_equal(out, gold, 48);

    /* decode it back */
    struct vrpn_msg m;
    assert_int_equal(vrpn_msg_parse(gold, n, &m, NULL), 0);
    assert_int_equal(m.hdr.length, 41);
    assert_int_equal(m.hdr.tv_sec, 0x6b02707b);
    assert_int_equal(m.hdr.tv_usec, 0x41833);
    assert_int_equal(m.hdr.sender, 0);
    assert_int_equal(m.hdr.type, -1);
    assert_int_equal(m.hdr.seq, 0);
    assert_int_equal(m.body_len, 17);
    assert_int_equal(m.wire_size, 48);
    struct vrpn_system_msg s;
    assert_int_equal(vrpn_system_decode(&m, &s, NULL), 0);
    assert_int_equal(s.id, 0);
    assert_string_equal(s.name, "VRPN Control");
}

static void test_header_time(void **state)
{
    (void)state;
    struct vrpn_header h = hdr(1795321979u, 276009u, 1, 4);
    assert_true(vrpn_header_wall_ns(&h) == INT64_C(1795321979276009000));
    vrpn_header_set_wall_ns(&h, INT64_C(1795321980000999999));
    assert_int_equal(h.tv_sec, 1795321980u);
    assert_int_equal(h.tv_usec, 999u);
}

static void test_header_rejects(void **state)
{
    (void)state;
    uint8_t b[64] = {0};
    struct vrpn_header h;
    struct xg_error e = {0};
    xg_store_be32(b, 24);
    assert_int_equal(vrpn_header_decode(b, 23, &h, &e), -EMSGSIZE);
    assert_err_contains(&e, "23 bytes, need 24");
    assert_int_equal(vrpn_header_decode(b, 24, &h, &e), 0);
    xg_store_be32(b, 23);
    assert_int_equal(vrpn_header_decode(b, 24, &h, &e), -EPROTO);
    assert_err_contains(&e, "length 23 < 24");
    xg_store_be32(b, 0);
    assert_int_equal(vrpn_header_decode(b, 24, &h, &e), -EPROTO);
    assert_err_contains(&e, "length 0 < 24");
    xg_store_be32(b, VRPN_MAX_MESSAGE + 1);
    assert_int_equal(vrpn_header_decode(b, 24, &h, &e), -EPROTO);
    assert_err_contains(&e, "length 64001 exceeds the maximum 64000");
    xg_store_be32(b, 0xffffffffu);
    assert_int_equal(vrpn_header_decode(b, 24, &h, &e), -EPROTO);
    assert_err_contains(&e, "length 4294967295 exceeds");
    /* the largest accepted message */
    xg_store_be32(b, VRPN_MAX_MESSAGE);
    assert_int_equal(vrpn_header_decode(b, 24, &h, &e), 0);
    xg_store_be32(b, VRPN_MAX_MESSAGE - 7); /* pads up to 64000 */
    assert_int_equal(vrpn_header_decode(b, 24, &h, &e), 0);
}

static void test_stream_check(void **state)
{
    (void)state;
    uint8_t b[64];
    memset(b, 0xAA, sizeof b); /* garbage padding must be ignored */
    xg_store_be32(b, 41);      /* body 17 -> padded 24, total 48 */
    size_t need = 0;
    struct xg_error e = {0};
    assert_int_equal(vrpn_stream_check(b, 0, &need, &e), 0);
    assert_int_equal(need, 24);
    assert_int_equal(vrpn_stream_check(b, 3, &need, &e), 0);
    assert_int_equal(need, 24);
    assert_int_equal(vrpn_stream_check(b, 4, &need, &e), 0);
    assert_int_equal(need, 48);
    assert_int_equal(vrpn_stream_check(b, 41, &need, &e), 0); /* unpadded is not enough on TCP */
    assert_int_equal(vrpn_stream_check(b, 47, &need, &e), 0);
    assert_int_equal(vrpn_stream_check(b, 48, &need, &e), 1);
    assert_int_equal(need, 48);
    assert_int_equal(vrpn_stream_check(b, 64, &need, &e), 1);
    assert_int_equal(need, 48);
    struct vrpn_msg m;
    assert_int_equal(vrpn_msg_parse(b, 47, &m, &e), -EMSGSIZE);
    assert_int_equal(vrpn_msg_parse(b, 48, &m, &e), 0);
    assert_int_equal(m.body_len, 17);
    xg_store_be32(b, 24); /* empty body: exactly the header */
    assert_int_equal(vrpn_stream_check(b, 24, &need, &e), 1);
    assert_int_equal(need, 24);
    xg_store_be32(b, 12);
    assert_int_equal(vrpn_stream_check(b, 4, &need, &e), -EPROTO);
    assert_err_contains(&e, "length 12 < 24");
    xg_store_be32(b, 1u << 30);
    assert_int_equal(vrpn_stream_check(b, 4, &need, &e), -EPROTO);
}

static void test_datagram_split(void **state)
{
    (void)state;
    /* two messages: a ping (24) and a Button Change (32 + 0 pad), then a dial whose padding is
     * cut by the datagram end */
    uint8_t dg[128];
    struct xg_writer w;
    xg_writer_init(&w, dg, sizeof dg);
    uint32_t seq = 0;
    struct vrpn_header h = hdr(1, 2, 3, 4);
    assert_int_equal(vrpn_encode_message(&w, &h, &seq, NULL, 0, NULL), 0);
    struct vrpn_body b = {.kind = VRPN_BODY_BUTTON_CHANGE};
    b.u.button.button = 2;
    b.u.button.state = 1;
    h.type = 5;
    assert_int_equal(vrpn_encode_body_message(&w, &h, &seq, &b, NULL), 0);
    b.kind = VRPN_BODY_DIAL;
    b.u.dial.delta = 0.25;
    b.u.dial.dial = 1;
    h.type = 6;
    assert_int_equal(vrpn_encode_body_message(&w, &h, &seq, &b, NULL), 0);
    assert_int_equal(w.len, 24 + 32 + 40);
    assert_int_equal(seq, 3);

    size_t off = 0;
    struct vrpn_msg m;
    struct xg_error e = {0};
    size_t dlen = w.len - 4; /* dial padding truncated */
    assert_int_equal(vrpn_datagram_next(dg, dlen, &off, &m, &e), 1);
    assert_int_equal(m.hdr.type, 4);
    assert_int_equal(m.hdr.seq, 0);
    assert_int_equal(off, 24);
    assert_int_equal(vrpn_datagram_next(dg, dlen, &off, &m, &e), 1);
    assert_int_equal(m.hdr.type, 5);
    assert_int_equal(m.hdr.seq, 1);
    assert_int_equal(off, 56);
    assert_int_equal(vrpn_datagram_next(dg, dlen, &off, &m, &e), 1);
    assert_int_equal(m.hdr.type, 6);
    assert_int_equal(m.body_len, 12);
    assert_int_equal(off, dlen);
    assert_int_equal(vrpn_datagram_next(dg, dlen, &off, &m, &e), 0);

    /* a message cut inside its body is an error, never a partial read */
    off = 56;
    assert_int_equal(vrpn_datagram_next(dg, 56 + 30, &off, &m, &e), -EMSGSIZE);
    assert_err_contains(&e, "datagram offset 56: vrpn message length 36 but only 30 bytes left");
    off = 56;
    assert_int_equal(vrpn_datagram_next(dg, 56 + 20, &off, &m, &e), -EMSGSIZE);
    assert_err_contains(&e, "datagram offset 56: vrpn header: 20 bytes, need 24");
    off = 0;
    xg_store_be32(dg, 20);
    assert_int_equal(vrpn_datagram_next(dg, dlen, &off, &m, &e), -EPROTO);
    assert_err_contains(&e, "length 20 < 24");
}

static void test_encode_message_limits(void **state)
{
    (void)state;
    uint8_t out[40];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    uint32_t seq = 7;
    struct vrpn_header h = hdr(1, 2, 3, 4);
    uint8_t body[17] = {0};
    struct xg_error e = {0};
    assert_int_equal(vrpn_encode_message(&w, &h, &seq, body, sizeof body, &e), -EMSGSIZE);
    assert_int_equal(seq, 7); /* unchanged on error */
    assert_int_equal(w.len, 0);
    static uint8_t big[VRPN_MAX_MESSAGE];
    static uint8_t bigout[VRPN_MAX_MESSAGE + 64];
    xg_writer_init(&w, bigout, sizeof bigout);
    assert_int_equal(vrpn_encode_message(&w, &h, &seq, big, VRPN_MAX_MESSAGE - 23, &e), -EMSGSIZE);
    assert_int_equal(vrpn_encode_message(&w, &h, &seq, big, VRPN_MAX_MESSAGE - 24, &e), 0);
    assert_int_equal(w.len, VRPN_MAX_MESSAGE);
    assert_int_equal(seq, 8);
}

/* ---- system messages (§5.3–§5.6) ---- */

static size_t build_msg(uint8_t *out, size_t cap, int32_t sender, int32_t type, const void *body,
                        size_t blen)
{
    struct xg_writer w;
    xg_writer_init(&w, out, cap);
    struct vrpn_header h = hdr(10, 20, sender, type);
    assert_int_equal(vrpn_encode_message(&w, &h, NULL, body, blen, NULL), 0);
    return w.len;
}

static int decode_sys(const uint8_t *buf, size_t len, struct vrpn_system_msg *s, struct xg_error *e)
{
    struct vrpn_msg m;
    int rc = vrpn_msg_parse(buf, len, &m, e);
    if (rc) return rc;
    return vrpn_system_decode(&m, s, e);
}

static void test_description_rejects(void **state)
{
    (void)state;
    uint8_t body[256], msg[512];
    struct vrpn_system_msg s;
    struct xg_error e = {0};
    size_t n;

    /* good one first */
    xg_store_be32(body, 4);
    memcpy(body + 4, "Rig", 4);
    n = build_msg(msg, sizeof msg, 1, VRPN_TYPE_DESCRIPTION, body, 8);
    assert_int_equal(decode_sys(msg, n, &s, &e), 0);
    assert_int_equal(s.id, 1);
    assert_string_equal(s.name, "Rig");

    /* name too long: n = 101 (vrpn_CNAME is 100 incl. NUL) */
    xg_store_be32(body, 101);
    memset(body + 4, 'a', 100);
    body[104] = 0;
    n = build_msg(msg, sizeof msg, 1, VRPN_SENDER_DESCRIPTION, body, 105);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "SENDER_DESCRIPTION: name length 101 out of range 1..100");
    /* n = 100 (99 chars + NUL) is the longest accepted */
    xg_store_be32(body, 100);
    body[103] = 0;
    n = build_msg(msg, sizeof msg, 1, VRPN_SENDER_DESCRIPTION, body, 104);
    assert_int_equal(decode_sys(msg, n, &s, &e), 0);
    assert_int_equal(strlen(s.name), 99);
    /* n = 0 */
    xg_store_be32(body, 0);
    n = build_msg(msg, sizeof msg, 1, VRPN_SENDER_DESCRIPTION, body, 4);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "name length 0 out of range");
    /* length field disagrees with the body */
    xg_store_be32(body, 4);
    memcpy(body + 4, "Rig", 4);
    n = build_msg(msg, sizeof msg, 1, VRPN_TYPE_DESCRIPTION, body, 7);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "TYPE_DESCRIPTION: body of 7 bytes, name length 4 wants 8");
    /* NUL missing at the end / NUL inside */
    memcpy(body + 4, "Rigs", 4);
    n = build_msg(msg, sizeof msg, 1, VRPN_TYPE_DESCRIPTION, body, 8);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "not NUL-terminated");
    memcpy(body + 4, "R\0g", 4);
    n = build_msg(msg, sizeof msg, 1, VRPN_TYPE_DESCRIPTION, body, 8);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    /* body too short for the length word */
    n = build_msg(msg, sizeof msg, 1, VRPN_TYPE_DESCRIPTION, body, 2);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "body of 2 bytes has no name length");
    /* id out of range */
    memcpy(body + 4, "Rig", 4);
    n = build_msg(msg, sizeof msg, 2000, VRPN_SENDER_DESCRIPTION, body, 8);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "SENDER_DESCRIPTION: id 2000 out of range 0..1999");
    n = build_msg(msg, sizeof msg, -3, VRPN_TYPE_DESCRIPTION, body, 8);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "id -3 out of range");
    /* unknown system type */
    n = build_msg(msg, sizeof msg, 0, -6, NULL, 0);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "unknown system message type -6");

    /* encoder refuses what the decoder would refuse */
    uint8_t out[256];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    struct vrpn_header h = hdr(1, 2, 0, 0);
    char longname[101];
    memset(longname, 'x', 100);
    longname[100] = 0;
    assert_int_equal(vrpn_encode_description(&w, &h, NULL, -1, 0, longname, &e), -EINVAL);
    assert_err_contains(&e, "name length 100+ out of range 1..99");
    longname[99] = 0; /* 99 chars + NUL = 100 = vrpn_CNAME: the longest */
    assert_int_equal(vrpn_encode_description(&w, &h, NULL, -1, 0, longname, &e), 0);
    assert_int_equal(w.len, 24 + 104);
    assert_int_equal(vrpn_encode_description(&w, &h, NULL, -1, 2000, "x", &e), -EINVAL);
    assert_int_equal(vrpn_encode_description(&w, &h, NULL, -3, 0, "x", &e), -EINVAL);
    assert_int_equal(vrpn_encode_description(&w, &h, NULL, -1, 0, "", &e), -EINVAL);
}

static void test_udp_description(void **state)
{
    (void)state;
    size_t n;
    const uint8_t *gold = load_vector("udp_description.bin", &n);
    assert_int_equal(n, 40);
    uint8_t out[64];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    uint32_t seq = 0;
    struct vrpn_header h = hdr(1795322643, 827546, 0, 0);
    assert_int_equal(vrpn_encode_udp_description(&w, &h, &seq, 33216, "127.0.0.1", NULL), 0);
    assert_int_equal(w.len, 40);
    assert_memory_equal(out, gold, 40);
    struct vrpn_system_msg s;
    struct xg_error e = {0};
    assert_int_equal(decode_sys(gold, n, &s, &e), 0);
    assert_int_equal(s.type, VRPN_UDP_DESCRIPTION);
    assert_int_equal(s.udp_port, 33216);
    assert_string_equal(s.name, "127.0.0.1");

    uint8_t msg[128];
    n = build_msg(msg, sizeof msg, 0, VRPN_UDP_DESCRIPTION, "127.0.0.1", 10);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "port 0 out of range 1..65535");
    n = build_msg(msg, sizeof msg, 70000, VRPN_UDP_DESCRIPTION, "127.0.0.1", 10);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    n = build_msg(msg, sizeof msg, 4000, VRPN_UDP_DESCRIPTION, "127.0.0.1", 9);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
    assert_err_contains(&e, "body of 9 bytes is not a 1..99 character host + NUL");
    assert_int_equal(vrpn_encode_udp_description(&w, &h, &seq, 0, "1.2.3.4", &e), -EINVAL);
}

static void test_log_and_disconnect(void **state)
{
    (void)state;
    uint8_t out[256];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    uint32_t seq = 5;
    struct vrpn_header h = hdr(7, 8, 0, 0);
    assert_int_equal(vrpn_encode_log_description(&w, &h, &seq, 3, "in.vrpn", "", NULL), 0);
    /* body: 00000007 00000000 "in.vrpn\0" "\0" = 17 bytes; length 41; padded 48 */
    static const uint8_t want[48] = {0,   0,   0,   41, 0,    0,    0,    7,    0,   0,   0,   8,
                                     0,   0,   0,   3,  0xff, 0xff, 0xff, 0xfc, 0,   0,   0,   5,
                                     0,   0,   0,   7,  0,    0,    0,    0,    'i', 'n', '.', 'v',
                                     'r', 'p', 'n', 0,  0,    0,    0,    0,    0,   0,   0,   0};
    assert_int_equal(w.len, 48);
    assert_memory_equal(out, want, 48);
    struct vrpn_system_msg s;
    struct xg_error e = {0};
    assert_int_equal(decode_sys(out, w.len, &s, &e), 0);
    assert_int_equal(s.log_mode, 3);
    assert_string_equal(s.log_in_name, "in.vrpn");
    assert_string_equal(s.log_out_name, "");
    /* inconsistent lengths */
    out[31] = 1; /* lout = 1 */
    assert_int_equal(decode_sys(out, w.len, &s, &e), -EPROTO);
    assert_err_contains(&e, "LOG_DESCRIPTION: name lengths 7/1 do not match the 17-byte body");
    out[31] = 0;
    out[24] = 0x7f; /* lin = 0x7f000007: huge, must not overflow */
    assert_int_equal(decode_sys(out, w.len, &s, &e), -EPROTO);

    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(vrpn_encode_disconnect(&w, &h, &seq, NULL), 0);
    assert_int_equal(w.len, 24);
    assert_int_equal(seq, 7);
    assert_int_equal(xg_load_be32(out + 16), (uint32_t)-5);
    assert_int_equal(decode_sys(out, w.len, &s, &e), 0);
    assert_int_equal(s.type, VRPN_DISCONNECT_MESSAGE);
    uint8_t msg[64];
    size_t n = build_msg(msg, sizeof msg, 0, VRPN_DISCONNECT_MESSAGE, "x", 1);
    assert_int_equal(decode_sys(msg, n, &s, &e), -EPROTO);
}

/* ---- connection request (§6.3) ---- */

static void test_lob(void **state)
{
    (void)state;
    size_t n;
    const uint8_t *gold = load_vector("lob.bin", &n);
    assert_int_equal(n, 16);
    uint8_t out[64];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(vrpn_lob_encode(&w, "127.0.0.1", 43459, NULL), 0);
    assert_int_equal(w.len, 16);
    assert_memory_equal(out, gold, 16);
    struct vrpn_lob lob;
    struct xg_error e = {0};
    assert_int_equal(vrpn_lob_decode(gold, n, &lob, &e), 0);
    assert_string_equal(lob.host, "127.0.0.1");
    assert_int_equal(lob.tcp_port, 43459);
    assert_int_equal(vrpn_lob_decode((const uint8_t *)"gw.Lab1 1024", 13, &lob, &e), 0);
    assert_int_equal(lob.tcp_port, 1024);

    assert_int_equal(vrpn_lob_decode((const uint8_t *)"127.0.0.1 1023", 15, &lob, &e), -EPROTO);
    assert_err_contains(&e, "TCP port '1023' is not a number in 1024..65535");
    assert_int_equal(vrpn_lob_decode((const uint8_t *)"127.0.0.1 65536", 16, &lob, &e), -EPROTO);
    assert_int_equal(vrpn_lob_decode((const uint8_t *)"127.0.0.1 4x00", 15, &lob, &e), -EPROTO);
    assert_int_equal(vrpn_lob_decode((const uint8_t *)"127.0.0.1 ", 11, &lob, &e), -EPROTO);
    assert_int_equal(vrpn_lob_decode((const uint8_t *)"my-host 4000", 13, &lob, &e), -EPROTO);
    assert_err_contains(&e, "'my-host 4000': host is not 1..99 letters, digits or dots");
    assert_int_equal(vrpn_lob_decode((const uint8_t *)" 4000", 6, &lob, &e), -EPROTO);
    assert_int_equal(vrpn_lob_decode((const uint8_t *)"127.0.0.1 43459", 15, &lob, &e), -EPROTO);
    assert_err_contains(&e, "not one NUL-terminated string");
    assert_int_equal(vrpn_lob_decode((const uint8_t *)"127.0.0.1 43459\0x", 17, &lob, &e), -EPROTO);
    assert_int_equal(vrpn_lob_encode(&w, "a b", 4000, &e), -EINVAL);
    assert_int_equal(vrpn_lob_encode(&w, "host", 80, &e), -EINVAL);
    assert_err_contains(&e, "TCP port 80 < 1024");
}

/* ---- bodies (§8) ---- */

static void test_pos_quat_golden(void **state)
{
    (void)state;
    /* the first Pos_Quat of session1 (Tracker0 sensor 0) as mainline would write it with zero
     * padding: quat x,y,z,w = (0, 0, 0.926692..., 0.375822...) */
    size_t n;
    const uint8_t *gold = load_vector("pos_quat.bin", &n);
    assert_int_equal(n, 88);
    struct vrpn_msg m;
    assert_int_equal(vrpn_msg_parse(gold, n, &m, NULL), 0);
    assert_int_equal(m.hdr.length, 88);
    assert_int_equal(m.hdr.sender, 1);
    assert_int_equal(m.hdr.type, 4);
    assert_int_equal(m.hdr.seq, 39);
    struct vrpn_body b;
    assert_int_equal(vrpn_body_decode(VRPN_BODY_POS_QUAT, m.body, m.body_len, &b, NULL), 0);
    assert_int_equal(b.u.pos_quat.sensor, 2);
    assert_int_equal(b.u.pos_quat.filler, 2);
    assert_true(b.u.pos_quat.pos.x == 1.5);
    assert_true(b.u.pos_quat.pos.y == -2.0);
    assert_true(b.u.pos_quat.pos.z == 0.25);
    assert_true(b.u.pos_quat.quat.x == 0.0);
    assert_true(b.u.pos_quat.quat.y == 0.0);
    assert_true(b.u.pos_quat.quat.z == 0.5);
    assert_true(b.u.pos_quat.quat.w == -0.75);

    uint8_t out[128];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    struct vrpn_header h = m.hdr;
    b.u.pos_quat.filler = 77; /* ignored: mainline writes the sensor again */
    assert_int_equal(vrpn_encode_body_message(&w, &h, NULL, &b, NULL), 0);
    assert_int_equal(w.len, 88);
    assert_memory_equal(out, gold, 88);
}

static void test_velocity_golden(void **state)
{
    (void)state;
    size_t n;
    const uint8_t *gold = load_vector("velocity.bin", &n);
    assert_int_equal(n, 96);
    struct vrpn_body b = {.kind = VRPN_BODY_VELOCITY};
    b.u.rate.sensor = 0;
    b.u.rate.vec = (struct xg_vec3){0.0, 0.0, 0.0};
    b.u.rate.quat = (struct xg_quat){0.0, 0.0, 0.5, 0.75}; /* x y z w */
    b.u.rate.quat_dt = 1.5;
    uint8_t out[128];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    uint32_t seq = 40;
    struct vrpn_header h = hdr(0x6B02707B, 0x000435C9, 1, 5);
    assert_int_equal(vrpn_encode_body_message(&w, &h, &seq, &b, NULL), 0);
    assert_int_equal(w.len, 96);
    assert_memory_equal(out, gold, 96);
    assert_int_equal(seq, 41);
}

static void expect_body_error(enum vrpn_body_kind kind, const void *body, size_t len, int code,
                              const char *needle)
{
    struct vrpn_body b;
    struct xg_error e = {0};
    int rc = vrpn_body_decode(kind, body, len, &b, &e);
    if (rc != code)
        fail_msg("kind %d len %zu: rc %d, want %d (%s)", (int)kind, len, rc, code, e.msg);
    assert_err_contains(&e, needle);
}

static void test_body_sizes(void **state)
{
    (void)state;
    uint8_t z[2048] = {0};
    struct vrpn_body b;
    /* exact sizes accepted */
    assert_int_equal(vrpn_body_decode(VRPN_BODY_POS_QUAT, z, 64, &b, NULL), 0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_VELOCITY, z, 72, &b, NULL), 0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_ACCELERATION, z, 72, &b, NULL), 0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_BUTTON_CHANGE, z, 8, &b, NULL), 0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_DIAL, z, 12, &b, NULL), 0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_PING, z, 0, &b, NULL), 0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_PONG, z, 0, &b, NULL), 0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_BUTTON_STATES, z, 4, &b, NULL), 0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_ANALOG, z, 8, &b, NULL), 0);
    /* §8 / §9: a 56-byte Pos_Quat and a 64-byte (seed-style) Velocity drop the connection */
    expect_body_error(VRPN_BODY_POS_QUAT, z, 56, -EPROTO,
                      "vrpn_Tracker Pos_Quat: body of 56 bytes, want 64");
    expect_body_error(VRPN_BODY_POS_QUAT, z, 72, -EPROTO, "want 64");
    expect_body_error(VRPN_BODY_VELOCITY, z, 64, -EPROTO,
                      "vrpn_Tracker Velocity: body of 64 bytes, want 72");
    expect_body_error(VRPN_BODY_ACCELERATION, z, 80, -EPROTO,
                      "vrpn_Tracker Acceleration: body of 80 bytes, want 72");
    /* seed-style Button Change (count + pairs) */
    expect_body_error(VRPN_BODY_BUTTON_CHANGE, z, 12, -EPROTO,
                      "vrpn_Button Change: body of 12 bytes, want 8");
    expect_body_error(VRPN_BODY_DIAL, z, 16, -EPROTO,
                      "vrpn_Dial update: body of 16 bytes, want 12");
    expect_body_error(VRPN_BODY_PING, z, 8, -EPROTO, "vrpn_Base ping_message: body of 8 bytes");
    expect_body_error(VRPN_BODY_PONG, z, 1, -EPROTO, "want 0");
    expect_body_error(VRPN_BODY_UNKNOWN, z, 0, -EINVAL, "unknown kind");
    /* negative sensor */
    uint8_t pq[64] = {0};
    xg_store_be32(pq, (uint32_t)-1);
    expect_body_error(VRPN_BODY_POS_QUAT, pq, 64, -EPROTO, "Pos_Quat: negative sensor -1");
    uint8_t vel[72] = {0};
    xg_store_be32(vel, (uint32_t)-7);
    expect_body_error(VRPN_BODY_VELOCITY, vel, 72, -EPROTO, "Velocity: negative sensor -7");
    /* Button States count vs size, and the 256-button limit */
    uint8_t st[4 + 4 * 260] = {0};
    xg_store_be32(st, 4);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_BUTTON_STATES, st, 20, &b, NULL), 0);
    assert_int_equal(b.u.states.count, 4);
    expect_body_error(VRPN_BODY_BUTTON_STATES, st, 16, -EPROTO,
                      "vrpn_Button States: body of 16 bytes, want 20");
    expect_body_error(VRPN_BODY_BUTTON_STATES, st, 2, -EPROTO, "body of 2 bytes, want 4");
    xg_store_be32(st, 257);
    expect_body_error(VRPN_BODY_BUTTON_STATES, st, 4 + 4 * 257, -EPROTO,
                      "button count 257 out of range 0..256");
    xg_store_be32(st, (uint32_t)-1);
    expect_body_error(VRPN_BODY_BUTTON_STATES, st, 4, -EPROTO, "button count -1");
    xg_store_be32(st, 256);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_BUTTON_STATES, st, 4 + 4 * 256, &b, NULL), 0);
    /* Analog count: integral f64, 0..128, size 8(N+1) */
    uint8_t an[8 * 130] = {0};
    struct xg_writer w;
    xg_writer_init(&w, an, 8);
    xg_write_bef64(&w, 4.0);
    assert_int_equal(vrpn_body_decode(VRPN_BODY_ANALOG, an, 40, &b, NULL), 0);
    assert_int_equal(b.u.analog.count, 4);
    expect_body_error(VRPN_BODY_ANALOG, an, 48, -EPROTO,
                      "vrpn_Analog Channel: body of 48 bytes, want 40");
    expect_body_error(VRPN_BODY_ANALOG, an, 4, -EPROTO, "body of 4 bytes, want 8");
    xg_writer_init(&w, an, 8);
    xg_write_bef64(&w, 1.5);
    expect_body_error(VRPN_BODY_ANALOG, an, 24, -EPROTO,
                      "channel count 1.5 is not an integer in 0..128");
    xg_writer_init(&w, an, 8);
    xg_write_bef64(&w, 129.0);
    expect_body_error(VRPN_BODY_ANALOG, an, 8 * 130, -EPROTO, "channel count 129");
    xg_writer_init(&w, an, 8);
    xg_write_bef64(&w, NAN);
    expect_body_error(VRPN_BODY_ANALOG, an, 8, -EPROTO, "channel count nan");
    xg_writer_init(&w, an, 8);
    xg_write_bef64(&w, -1.0);
    expect_body_error(VRPN_BODY_ANALOG, an, 8, -EPROTO, "channel count -1");
    /* text: NUL needed; 9..1032 bytes */
    uint8_t tx[1100];
    memset(tx, 'a', sizeof tx);
    expect_body_error(VRPN_BODY_TEXT, tx, 1032, -EPROTO,
                      "vrpn_Base text_message: string of 1024 bytes has no NUL");
    expect_body_error(VRPN_BODY_TEXT, tx, 8, -EPROTO, "body of 8 bytes, want 9..1032");
    expect_body_error(VRPN_BODY_TEXT, tx, 1033, -EPROTO, "body of 1033 bytes");
    tx[1031] = 0;
    assert_int_equal(vrpn_body_decode(VRPN_BODY_TEXT, tx, 1032, &b, NULL), 0);
    assert_int_equal(strlen(b.u.text.text), 1023);
}

static void test_body_roundtrips(void **state)
{
    (void)state;
    struct vrpn_body in[8];
    memset(in, 0, sizeof in);
    in[0].kind = VRPN_BODY_BUTTON_STATES;
    in[0].u.states.count = 3;
    in[0].u.states.states[0] = 1;
    in[0].u.states.states[2] = 1;
    in[1].kind = VRPN_BODY_ANALOG;
    in[1].u.analog.count = 6;
    for (int i = 0; i < 6; i++)
        in[1].u.analog.channels[i] = -0.5 + i * 1e-3;
    in[2].kind = VRPN_BODY_DIAL;
    in[2].u.dial.delta = 0.1;
    in[2].u.dial.dial = 1;
    in[3].kind = VRPN_BODY_TEXT;
    in[3].u.text.severity = 2;
    in[3].u.text.level = 5;
    strcpy(in[3].u.text.text, "hello 1");
    in[4].kind = VRPN_BODY_ACCELERATION;
    in[4].u.rate.sensor = 3;
    in[4].u.rate.vec = (struct xg_vec3){1, 2, 3};
    in[4].u.rate.quat = (struct xg_quat){0.1, 0.2, 0.3, 0.9};
    in[4].u.rate.quat_dt = 1;
    in[5].kind = VRPN_BODY_PONG;
    in[6].kind = VRPN_BODY_BUTTON_CHANGE;
    in[6].u.button.button = 255;
    in[6].u.button.state = 1;
    in[7].kind = VRPN_BODY_POS_QUAT;
    in[7].u.pos_quat.sensor = 9;
    in[7].u.pos_quat.quat = XG_QUAT_IDENTITY;
    const size_t want_len[8] = {16, 56, 12, 1032, 72, 0, 8, 64};
    for (int i = 0; i < 8; i++) {
        uint8_t buf[1100];
        struct xg_writer w;
        xg_writer_init(&w, buf, sizeof buf);
        assert_int_equal(vrpn_body_encode(&w, &in[i], NULL), 0);
        assert_int_equal(w.len, want_len[i]);
        struct vrpn_body out;
        assert_int_equal(vrpn_body_decode(in[i].kind, buf, w.len, &out, NULL), 0);
        uint8_t buf2[1100];
        struct xg_writer w2;
        xg_writer_init(&w2, buf2, sizeof buf2);
        assert_int_equal(vrpn_body_encode(&w2, &out, NULL), 0);
        assert_int_equal(w2.len, w.len);
        assert_memory_equal(buf, buf2, w.len);
    }
    /* text is zero-filled to 1032 bytes */
    uint8_t buf[1100];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(vrpn_body_encode(&w, &in[3], NULL), 0);
    assert_int_equal(xg_load_be32(buf), 2);
    assert_int_equal(xg_load_be32(buf + 4), 5);
    assert_memory_equal(buf + 8, "hello 1", 8);
    for (size_t i = 15; i < 1032; i++)
        assert_int_equal(buf[i], 0);
    /* dial: f64 delta first, then i32 */
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(vrpn_body_encode(&w, &in[2], NULL), 0);
    static const uint8_t dial[12] = {0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a, 0, 0, 0, 1};
    assert_memory_equal(buf, dial, 12);
    /* analog count as f64 */
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(vrpn_body_encode(&w, &in[1], NULL), 0);
    static const uint8_t six[8] = {0x40, 0x18, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(buf, six, 8);

    /* encoder refusals */
    struct xg_error e = {0};
    struct vrpn_body bad = {.kind = VRPN_BODY_ANALOG};
    bad.u.analog.count = 129;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(vrpn_body_encode(&w, &bad, &e), -EINVAL);
    assert_err_contains(&e, "channel count 129 out of range 0..128");
    bad.kind = VRPN_BODY_POS_QUAT;
    bad.u.pos_quat.sensor = -2;
    assert_int_equal(vrpn_body_encode(&w, &bad, &e), -EINVAL);
    bad.kind = VRPN_BODY_TEXT;
    memset(bad.u.text.text, 'x', sizeof bad.u.text.text);
    assert_int_equal(vrpn_body_encode(&w, &bad, &e), -EINVAL);
    bad.kind = VRPN_BODY_BUTTON_STATES;
    bad.u.states.count = 300;
    assert_int_equal(vrpn_body_encode(&w, &bad, &e), -EINVAL);
    bad.kind = VRPN_BODY_UNKNOWN;
    assert_int_equal(vrpn_body_encode(&w, &bad, &e), -EINVAL);
    /* writer too small */
    in[7].kind = VRPN_BODY_POS_QUAT;
    xg_writer_init(&w, buf, 60);
    assert_int_equal(vrpn_body_encode(&w, &in[7], &e), -EMSGSIZE);
}

static void test_body_kind_names(void **state)
{
    (void)state;
    assert_int_equal(vrpn_body_kind_of("vrpn_Tracker Pos_Quat"), VRPN_BODY_POS_QUAT);
    assert_int_equal(vrpn_body_kind_of("vrpn_Tracker Velocity"), VRPN_BODY_VELOCITY);
    assert_int_equal(vrpn_body_kind_of("vrpn_Tracker Acceleration"), VRPN_BODY_ACCELERATION);
    assert_int_equal(vrpn_body_kind_of("vrpn_Button Change"), VRPN_BODY_BUTTON_CHANGE);
    assert_int_equal(vrpn_body_kind_of("vrpn_Button States"), VRPN_BODY_BUTTON_STATES);
    assert_int_equal(vrpn_body_kind_of("vrpn_Analog Channel"), VRPN_BODY_ANALOG);
    assert_int_equal(vrpn_body_kind_of("vrpn_Dial update"), VRPN_BODY_DIAL);
    assert_int_equal(vrpn_body_kind_of("vrpn_Base ping_message"), VRPN_BODY_PING);
    assert_int_equal(vrpn_body_kind_of("vrpn_Base pong_message"), VRPN_BODY_PONG);
    assert_int_equal(vrpn_body_kind_of("vrpn_Base text_message"), VRPN_BODY_TEXT);
    assert_int_equal(vrpn_body_kind_of("Tracker Pos/Quat"), VRPN_BODY_UNKNOWN);
    assert_int_equal(vrpn_body_kind_of("vrpn_tracker pos_quat"), VRPN_BODY_UNKNOWN);
    assert_int_equal(vrpn_body_kind_of(NULL), VRPN_BODY_UNKNOWN);
    assert_null(vrpn_body_type_name(VRPN_BODY_UNKNOWN));
    /* §6.4 class of service */
    assert_true(vrpn_body_low_latency(VRPN_BODY_POS_QUAT));
    assert_true(vrpn_body_low_latency(VRPN_BODY_VELOCITY));
    assert_true(vrpn_body_low_latency(VRPN_BODY_ACCELERATION));
    assert_true(vrpn_body_low_latency(VRPN_BODY_ANALOG));
    assert_false(vrpn_body_low_latency(VRPN_BODY_BUTTON_CHANGE));
    assert_false(vrpn_body_low_latency(VRPN_BODY_BUTTON_STATES));
    assert_false(vrpn_body_low_latency(VRPN_BODY_DIAL));
    assert_false(vrpn_body_low_latency(VRPN_BODY_PING));
    assert_false(vrpn_body_low_latency(VRPN_BODY_PONG));
    assert_false(vrpn_body_low_latency(VRPN_BODY_TEXT));
    assert_false(vrpn_body_low_latency(VRPN_BODY_UNKNOWN));
    assert_string_equal(vrpn_body_type_name(VRPN_BODY_DIAL), "vrpn_Dial update");
}

/* ---- id maps ---- */

static void test_id_map_both_directions(void **state)
{
    (void)state;
    /* session1_tcp: the client numbers Analog0 3, the server 5 (§6.1) */
    static struct vrpn_id_map client; /* large: keep off the stack */
    vrpn_id_map_init(&client);
    assert_int_equal(vrpn_id_map_register(&client, VRPN_ID_SENDER, "VRPN Control", NULL), 0);
    assert_int_equal(vrpn_id_map_register(&client, VRPN_ID_SENDER, "Tracker0", NULL), 1);
    assert_int_equal(vrpn_id_map_register(&client, VRPN_ID_SENDER, "Button0", NULL), 2);
    assert_int_equal(vrpn_id_map_register(&client, VRPN_ID_SENDER, "Analog0", NULL), 3);
    assert_int_equal(vrpn_id_map_register(&client, VRPN_ID_SENDER, "Analog0", NULL), 3);
    assert_int_equal(vrpn_id_map_count(&client, VRPN_ID_SENDER), 4);
    assert_int_equal(vrpn_id_map_count(&client, VRPN_ID_TYPE), 0);

    bool is_new = true;
    struct xg_error e = {0};
    /* the server describes its senders */
    assert_int_equal(vrpn_id_map_describe(&client, VRPN_ID_SENDER, 0, "VRPN Control", &is_new, &e),
                     0);
    assert_false(is_new);
    assert_int_equal(vrpn_id_map_describe(&client, VRPN_ID_SENDER, 3, "Dial0", &is_new, &e), 4);
    assert_true(is_new); /* auto-registered: to be echoed back (§6.2) */
    assert_int_equal(vrpn_id_map_describe(&client, VRPN_ID_SENDER, 5, "Analog0", &is_new, &e), 3);
    assert_false(is_new);
    assert_int_equal(vrpn_id_map_to_local(&client, VRPN_ID_SENDER, 5, &e), 3);
    assert_int_equal(vrpn_id_map_to_local(&client, VRPN_ID_SENDER, 3, &e), 4);
    assert_string_equal(vrpn_id_map_name(&client, VRPN_ID_SENDER, 4), "Dial0");
    assert_int_equal(vrpn_id_map_to_remote(&client, VRPN_ID_SENDER, 3), 5);
    assert_int_equal(vrpn_id_map_to_remote(&client, VRPN_ID_SENDER, 1), -ENOENT);
    assert_int_equal(vrpn_id_map_find(&client, VRPN_ID_SENDER, "Dial0"), 4);
    assert_int_equal(vrpn_id_map_find(&client, VRPN_ID_SENDER, "Nope"), -ENOENT);
    assert_null(vrpn_id_map_name(&client, VRPN_ID_SENDER, 5));
    assert_null(vrpn_id_map_name(&client, VRPN_ID_SENDER, -1));

    /* the names the server described (for the "wrong device name" warning), VRPN Control left
     * out; Tracker0 and Button0 are only ours */
    char names[64];
    assert_int_equal(
        vrpn_id_map_described_names(&client, VRPN_ID_SENDER, "VRPN Control", names, sizeof names),
        2);
    assert_string_equal(names, "'Analog0', 'Dial0'");
    assert_int_equal(
        vrpn_id_map_described_names(&client, VRPN_ID_SENDER, NULL, names, sizeof names), 3);
    assert_string_equal(names, "'VRPN Control', 'Analog0', 'Dial0'");
    /* too small: the names that fit, then ", ..." */
    assert_int_equal(vrpn_id_map_described_names(&client, VRPN_ID_SENDER, NULL, names, 30), 1);
    assert_string_equal(names, "'VRPN Control', ...");
    assert_int_equal(vrpn_id_map_described_names(&client, VRPN_ID_TYPE, NULL, names, sizeof names),
                     0);
    assert_string_equal(names, "");

    /* undescribed and out-of-range ids */
    assert_int_equal(vrpn_id_map_to_local(&client, VRPN_ID_SENDER, 1, &e), -ENOENT);
    assert_err_contains(&e, "sender id 1 was never described");
    assert_int_equal(vrpn_id_map_to_local(&client, VRPN_ID_TYPE, 2000, &e), -EPROTO);
    assert_err_contains(&e, "type id 2000 out of range 0..1999");
    assert_int_equal(vrpn_id_map_to_local(&client, VRPN_ID_TYPE, -1, &e), -EPROTO);
    assert_int_equal(vrpn_id_map_describe(&client, VRPN_ID_TYPE, 2000, "x", NULL, &e), -EPROTO);
    assert_err_contains(&e, "type description: remote id 2000 out of range 0..1999");
    assert_int_equal(vrpn_id_map_describe(&client, VRPN_ID_TYPE, -5, "x", NULL, &e), -EPROTO);
    char longname[101];
    memset(longname, 'n', 100);
    longname[100] = 0;
    assert_int_equal(vrpn_id_map_describe(&client, VRPN_ID_TYPE, 1, longname, NULL, &e), -EPROTO);
    assert_err_contains(&e, "remote id 1 has a name of bad length");
    assert_int_equal(vrpn_id_map_register(&client, VRPN_ID_TYPE, longname, &e), -EINVAL);
    assert_int_equal(vrpn_id_map_register(&client, VRPN_ID_TYPE, "", &e), -EINVAL);

    /* re-description of a remote id replaces the mapping */
    assert_int_equal(vrpn_id_map_describe(&client, VRPN_ID_SENDER, 5, "Tracker0", NULL, &e), 1);
    assert_int_equal(vrpn_id_map_to_local(&client, VRPN_ID_SENDER, 5, &e), 1);
    assert_int_equal(vrpn_id_map_to_remote(&client, VRPN_ID_SENDER, 3), -ENOENT);
    assert_int_equal(vrpn_id_map_to_remote(&client, VRPN_ID_SENDER, 1), 5);
    /* the same name under a new remote id moves */
    assert_int_equal(vrpn_id_map_describe(&client, VRPN_ID_SENDER, 9, "Tracker0", NULL, &e), 1);
    assert_int_equal(vrpn_id_map_to_local(&client, VRPN_ID_SENDER, 5, &e), -ENOENT);
    assert_int_equal(vrpn_id_map_to_remote(&client, VRPN_ID_SENDER, 1), 9);

    vrpn_id_map_free(&client);
    assert_int_equal(vrpn_id_map_count(&client, VRPN_ID_SENDER), 0);
    assert_int_equal(vrpn_id_map_to_local(&client, VRPN_ID_SENDER, 0, &e), -ENOENT);
}

static void test_id_map_limits(void **state)
{
    (void)state;
    static struct vrpn_id_map m;
    vrpn_id_map_init(&m);
    char name[32];
    struct xg_error e = {0};
    for (int i = 0; i < VRPN_MAX_TYPES; i++) {
        snprintf(name, sizeof name, "type %d", i);
        assert_int_equal(vrpn_id_map_register(&m, VRPN_ID_TYPE, name, &e), i);
    }
    assert_int_equal(vrpn_id_map_register(&m, VRPN_ID_TYPE, "one too many", &e), -ENOSPC);
    assert_err_contains(&e, "more than 2000 type names, cannot add 'one too many'");
    /* an already registered name still resolves */
    assert_int_equal(vrpn_id_map_register(&m, VRPN_ID_TYPE, "type 1999", &e), 1999);
    /* a peer describing a new name when the table is full */
    assert_int_equal(vrpn_id_map_describe(&m, VRPN_ID_TYPE, 0, "fresh", NULL, &e), -ENOSPC);
    assert_int_equal(vrpn_id_map_describe(&m, VRPN_ID_TYPE, 1999, "type 7", NULL, &e), 7);
    assert_string_equal(vrpn_id_map_name(&m, VRPN_ID_TYPE, 1999), "type 1999");
    vrpn_id_map_free(&m);
}

static void test_id_map_handshake_burst(void **state)
{
    (void)state;
    static struct vrpn_id_map m;
    vrpn_id_map_init(&m);
    assert_int_equal(vrpn_id_map_register(&m, VRPN_ID_SENDER, VRPN_NAME_CONTROL, NULL), 0);
    assert_int_equal(vrpn_id_map_register(&m, VRPN_ID_SENDER, "Rig", NULL), 1);
    assert_int_equal(vrpn_id_map_register(&m, VRPN_ID_TYPE, VRPN_TYPE_GOT_FIRST_CONNECTION, NULL),
                     0);
    assert_int_equal(vrpn_id_map_register(&m, VRPN_ID_TYPE, VRPN_TYPE_POS_QUAT, NULL), 1);
    uint8_t out[512];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    uint32_t seq = 1; /* after a UDP_DESCRIPTION */
    struct vrpn_header h = hdr(100, 200, 0, 0);
    assert_int_equal(vrpn_id_map_encode_descriptions(&m, &w, &h, &seq, NULL), 0);
    assert_int_equal(seq, 5);
    /* walk what was written: senders 0,1 then types 0,1, sequence 1..4 */
    static const struct {
        int32_t type, id;
        const char *name;
    } want[4] = {{-1, 0, "VRPN Control"},
                 {-1, 1, "Rig"},
                 {-2, 0, "VRPN_Connection_Got_First_Connection"},
                 {-2, 1, "vrpn_Tracker Pos_Quat"}};
    size_t off = 0;
    for (int i = 0; i < 4; i++) {
        size_t need;
        assert_int_equal(vrpn_stream_check(out + off, w.len - off, &need, NULL), 1);
        struct vrpn_msg msg;
        assert_int_equal(vrpn_msg_parse(out + off, w.len - off, &msg, NULL), 0);
        assert_int_equal(msg.hdr.seq, (uint32_t)(i + 1));
        assert_int_equal(msg.hdr.length, 24 + 4 + strlen(want[i].name) + 1);
        struct vrpn_system_msg s;
        assert_int_equal(vrpn_system_decode(&msg, &s, NULL), 0);
        assert_int_equal(s.type, want[i].type);
        assert_int_equal(s.id, want[i].id);
        assert_string_equal(s.name, want[i].name);
        off += need;
    }
    assert_int_equal(off, w.len);
    vrpn_id_map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cookie_encode_golden),
        cmocka_unit_test(test_cookie_decode_accepts_minor),
        cmocka_unit_test(test_cookie_decode_rejects),
        cmocka_unit_test(test_header_golden_sender_description),
        cmocka_unit_test(test_header_time),
        cmocka_unit_test(test_header_rejects),
        cmocka_unit_test(test_stream_check),
        cmocka_unit_test(test_datagram_split),
        cmocka_unit_test(test_encode_message_limits),
        cmocka_unit_test(test_description_rejects),
        cmocka_unit_test(test_udp_description),
        cmocka_unit_test(test_log_and_disconnect),
        cmocka_unit_test(test_lob),
        cmocka_unit_test(test_pos_quat_golden),
        cmocka_unit_test(test_velocity_golden),
        cmocka_unit_test(test_body_sizes),
        cmocka_unit_test(test_body_roundtrips),
        cmocka_unit_test(test_body_kind_names),
        cmocka_unit_test(test_id_map_both_directions),
        cmocka_unit_test(test_id_map_limits),
        cmocka_unit_test(test_id_map_handshake_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
