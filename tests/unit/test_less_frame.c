/* Unit tests for LESS framing: TCP packet-length + splitter, UDP sequence/ack/bitmask, the
 * HMAC-SHA-256/64 signature (profile P3), message iteration, and the 64-packet ack window.
 *
 * Expected signatures were computed independently with the OpenSSL CLI at test-writing time:
 *   printf '<frame with the 8 signature bytes zeroed>' | xxd -r -p > f.bin
 *   openssl dgst -sha256 -mac HMAC -macopt hexkey:000102030405060708090a0b0c0d0e0f\
 *       101112131415161718191a1b1c1d1e1f f.bin
 * and are also stored, with the frames, in tests/vectors/less/ (one .hex file per frame). */
#include <errno.h>
#include <inttypes.h>
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

#define KEY_HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
/* introduce-type 1 "urn:xrgate:lods:pose:1" */
#define MSG_HEX "01 01 16 75726e3a7872676174653a6c6f64733a706f73653a31"
/* packet-length 37, signature, timestamp 1000000, message-count 1, MSG */
#define TCP_ZERO "25 0000000000000000 80897a 01 " MSG_HEX
#define TCP_SIG "7ca3de76ef820c7b" /* openssl: 7ca3de76ef820c7bacb4ca23e1864625... */
#define TCP_SIGNED "25 " TCP_SIG " 80897a 01 " MSG_HEX
/* seq 5, ack 4, bitmask 0x8000000000000001, signature, timestamp 1000001, count 1, MSG */
#define UDP_ZERO "05 04 81808080808080808002 0000000000000000 81897a 01 " MSG_HEX
#define UDP_SIG "b22abb10d5dcff09" /* openssl: b22abb10d5dcff0903132c1cfd6bf58c... */
#define UDP_SIGNED "05 04 81808080808080808002 " UDP_SIG " 81897a 01 " MSG_HEX

static struct less_key test_key(void)
{
    struct less_key k;
    assert_int_equal(less_key_from_hex(KEY_HEX, strlen(KEY_HEX), &k, NULL), 0);
    return k;
}

static size_t msg_bytes(uint8_t *out, size_t cap)
{
    return xg_test_unhex(MSG_HEX, out, cap);
}

/* ---- keys ---- */

static void test_key_from_hex(void **state)
{
    (void)state;
    struct less_key k;
    struct xg_error e = {0};
    const char *spaced = " 0001 0203 0405 0607\n0809 0a0b 0C0D 0E0F\t\n";
    assert_int_equal(less_key_from_hex(spaced, strlen(spaced), &k, &e), 0);
    assert_int_equal(k.len, 16);
    assert_int_equal(k.bytes[0], 0x00);
    assert_int_equal(k.bytes[12], 0x0c);
    assert_int_equal(k.bytes[15], 0x0f);
    k = test_key();
    assert_int_equal(k.len, 32);
    assert_int_equal(k.bytes[31], 0x1f);

    assert_int_equal(less_key_from_hex("0011", 4, &k, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "2 bytes, need 16 to 64");
    assert_int_equal(less_key_from_hex("001", 3, &k, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "odd number");
    assert_int_equal(less_key_from_hex("00zz", 4, &k, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "character 0x7a at index 2");
    char big[200];
    memset(big, 'a', 130);
    assert_int_equal(less_key_from_hex(big, 130, &k, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "longer than 64");
    assert_int_equal(less_key_from_hex(big, 128, &k, &e), 0);
    assert_int_equal(k.len, 64);
}

/* ---- signatures ---- */

static void test_hmac_vector(void **state)
{
    (void)state;
    struct less_key k = test_key();
    uint8_t frame[128], sig[8];
    size_t n = xg_test_unhex(TCP_ZERO, frame, sizeof frame);
    assert_int_equal(less_sign(&k, frame, n, 1, sig, NULL), 0);
    xg_test_assert_bytes(sig, 8, TCP_SIG);
    /* the signature bytes are taken as zero: filling them in does not change the result */
    memcpy(frame + 1, sig, 8);
    uint8_t again[8];
    assert_int_equal(less_sign(&k, frame, n, 1, again, NULL), 0);
    assert_memory_equal(again, sig, 8);
    assert_int_equal(less_verify(&k, frame, n, 1, NULL), 0);

    n = xg_test_unhex(UDP_ZERO, frame, sizeof frame);
    assert_int_equal(less_sign(&k, frame, n, 12, sig, NULL), 0);
    xg_test_assert_bytes(sig, 8, UDP_SIG);

    /* signature: none -> zeros */
    assert_int_equal(less_sign(NULL, frame, n, 12, sig, NULL), 0);
    xg_test_assert_bytes(sig, 8, "0000000000000000");
    struct xg_error e = {0};
    assert_int_equal(less_sign(&k, frame, n, n - 7, sig, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "outside");
}

static void test_tcp_encode_decode_vector(void **state)
{
    (void)state;
    struct less_key k = test_key();
    uint8_t msgs[64], out[128];
    size_t ml = msg_bytes(msgs, sizeof msgs);
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(less_tcp_encode(&w, &k, 1000000, 1, msgs, ml, &e), 0);
    xg_test_assert_bytes(out, w.len, TCP_SIGNED);

    struct less_frame f;
    assert_int_equal(less_tcp_decode(out, w.len, &k, &f, &e), 0);
    assert_true(f.authentic);
    assert_int_equal(f.packet_len, 37);
    assert_int_equal(f.sig_off, 1);
    assert_int_equal(f.timestamp, 1000000);
    assert_int_equal(f.message_count, 1);
    assert_int_equal(f.messages_len, ml);
    assert_memory_equal(f.messages, msgs, ml);
    xg_test_assert_bytes(f.signature, 8, TCP_SIG);

    /* every single-bit flip is rejected; inside the signed packet it is a signature failure */
    for (size_t i = 0; i < w.len; i++) {
        for (int b = 0; b < 8; b++) {
            out[i] ^= (uint8_t)(1 << b);
            int rc = less_tcp_decode(out, w.len, &k, &f, &e);
            assert_true(rc < 0);
            if (i >= 1) assert_int_equal(rc, -EACCES);
            out[i] ^= (uint8_t)(1 << b);
        }
    }
    assert_int_equal(less_tcp_decode(out, w.len, &k, &f, &e), 0);

    /* wrong key */
    struct less_key k2 = k;
    k2.bytes[0] ^= 1;
    assert_int_equal(less_tcp_decode(out, w.len, &k2, &f, &e), -EACCES);
    xg_test_assert_err_contains(&e, "HMAC does not verify");
    assert_false(f.authentic);
    /* signed frame but we are configured for signature: none */
    assert_int_equal(less_tcp_decode(out, w.len, NULL, &f, &e), -EACCES);
    xg_test_assert_err_contains(&e, "not zero (signature: none)");
    /* unsigned frame, both ends none */
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(less_tcp_encode(&w, NULL, 1000000, 1, msgs, ml, &e), 0);
    xg_test_assert_bytes(out, w.len, TCP_ZERO);
    assert_int_equal(less_tcp_decode(out, w.len, NULL, &f, &e), 0);
    /* zero signature against a keyed receiver */
    assert_int_equal(less_tcp_decode(out, w.len, &k, &f, &e), -EACCES);
}

static void test_tcp_decode_rejections(void **state)
{
    (void)state;
    struct less_key k = test_key();
    struct less_frame f;
    struct xg_error e = {0};
    uint8_t buf[128];
    size_t n = xg_test_unhex(TCP_SIGNED, buf, sizeof buf);
    /* length says more than there is / less than there is */
    assert_int_equal(less_tcp_decode(buf, n - 1, &k, &f, &e), -EMSGSIZE);
    xg_test_assert_err_contains(&e, "packet-length 37 but 36 bytes follow");
    uint8_t longer[129];
    memcpy(longer, buf, n);
    longer[n] = 0;
    assert_int_equal(less_tcp_decode(longer, n + 1, &k, &f, &e), -EPROTO);
    /* signed, but the message-count claims more messages than bytes */
    uint8_t msgs[8] = {0x05, 0x07};
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_tcp_encode(&w, &k, 5, 9, msgs, 2, &e), 0);
    assert_int_equal(less_tcp_decode(buf, w.len, &k, &f, &e), -EPROTO);
    assert_true(f.authentic);
    xg_test_assert_err_contains(&e, "message-count 9");
    /* negative packet-length */
    uint8_t neg[] = {0xc0, 0x00};
    assert_int_equal(less_tcp_decode(neg, 2, &k, &f, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "negative");
    /* a writer too small leaves nothing behind */
    xg_writer_init(&w, buf, 20);
    assert_int_equal(less_tcp_encode(&w, &k, 5, 1, (const uint8_t *)"0123456789abcdef", 16, &e),
                     -EMSGSIZE);
    assert_int_equal(w.len, 0);
    assert_int_equal(w.err, 0);
    xg_test_assert_err_contains(&e, "does not fit in 20 bytes");
}

static void test_tcp_split(void **state)
{
    (void)state;
    uint8_t two[256];
    size_t n = xg_test_unhex(TCP_SIGNED, two, sizeof two);
    memcpy(two + n, two, n);
    size_t fl = 99;
    struct xg_error e = {0};
    /* byte by byte: incomplete until the whole first frame is there */
    for (size_t avail = 0; avail < n; avail++) {
        uint8_t *cut = malloc(avail ? avail : 1); /* exact size: ASan catches over-reads */
        memcpy(cut, two, avail);
        assert_int_equal(less_tcp_split(cut, avail, 1200, &fl, &e), 0);
        free(cut);
    }
    assert_int_equal(less_tcp_split(two, n, 1200, &fl, &e), 1);
    assert_int_equal(fl, n);
    assert_int_equal(less_tcp_split(two, 2 * n, 1200, &fl, &e), 1);
    assert_int_equal(fl, n);
    assert_int_equal(less_tcp_split(two + fl, n, 1200, &fl, &e), 1);
    assert_int_equal(fl, n);
    /* maximum */
    assert_int_equal(less_tcp_split(two, n, 36, &fl, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "packet-length 37 outside 10..36");
    /* a packet-length INTEGER still incomplete: wait; 10 continuation bytes: error */
    uint8_t cont[11];
    memset(cont, 0x80, sizeof cont);
    assert_int_equal(less_tcp_split(cont, 9, 1 << 20, &fl, &e), 0);
    assert_int_equal(less_tcp_split(cont, 11, 1 << 20, &fl, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "longer than 10 bytes");
    /* negative, too small */
    uint8_t neg[] = {0xc0, 0x00};
    assert_int_equal(less_tcp_split(neg, 2, 1200, &fl, &e), -EPROTO);
    uint8_t tiny[] = {0x09};
    assert_int_equal(less_tcp_split(tiny, 1, 1200, &fl, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "packet-length 9 outside");
    /* two-byte length 200: need 202 bytes */
    uint8_t big[202] = {0x88, 0x03};
    assert_int_equal(less_tcp_split(big, 201, 1200, &fl, &e), 0);
    assert_int_equal(less_tcp_split(big, 202, 1200, &fl, &e), 1);
    assert_int_equal(fl, 202);
}

/* The TCP reader makes only the packet-length contiguous (at most LESS_INT_MAX_BYTES bytes, fewer
 * if fewer are buffered) and passes the whole buffered length as `avail`: the splitter must read
 * nothing past those bytes (exact-size heap copies: ASan catches an over-read). */
static void test_tcp_split_header_only(void **state)
{
    (void)state;
    uint8_t enc[LESS_INT_MAX_BYTES];
    struct xg_writer w;
    xg_writer_init(&w, enc, sizeof enc);
    assert_int_equal(less_put_uint(&w, 300000), 0);
    size_t hl = w.len, fl = 0;
    struct xg_error e = {0};
    for (size_t have = 1; have <= hl; have++) {
        uint8_t *head = malloc(have);
        memcpy(head, enc, have);
        /* the INTEGER incomplete, or the packet not all there yet: wait */
        assert_int_equal(less_tcp_split(head, have, 1 << 20, &fl, &e), 0);
        if (have == hl) {
            assert_int_equal(less_tcp_split(head, hl + 299999, 1 << 20, &fl, &e), 0);
            assert_int_equal(less_tcp_split(head, hl + 300000, 1 << 20, &fl, &e), 1);
            assert_int_equal(fl, hl + 300000);
            assert_int_equal(less_tcp_split(head, hl + 400000, 1 << 20, &fl, &e), 1);
            assert_int_equal(fl, hl + 300000);
            assert_int_equal(less_tcp_split(head, hl + 400000, 1000, &fl, &e), -EPROTO);
        }
        free(head);
    }
    /* an over-long INTEGER: the error comes from the first LESS_INT_MAX_BYTES bytes */
    uint8_t *cont = malloc(LESS_INT_MAX_BYTES);
    memset(cont, 0x80, LESS_INT_MAX_BYTES);
    assert_int_equal(less_tcp_split(cont, 1 << 20, 1 << 20, &fl, &e), -EPROTO);
    free(cont);
}

static void test_udp_encode_decode_vector(void **state)
{
    (void)state;
    struct less_key k = test_key();
    uint8_t msgs[64], out[128];
    size_t ml = msg_bytes(msgs, sizeof msgs);
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(less_udp_encode(&w, &k, 5, 4, 0x8000000000000001ull, 1000001, 1, msgs, ml, &e),
                     0);
    xg_test_assert_bytes(out, w.len, UDP_SIGNED);

    struct less_frame f;
    assert_int_equal(less_udp_decode(out, w.len, 1200, &k, &f, &e), 0);
    assert_int_equal(f.seq, 5);
    assert_int_equal(f.ack_last, 4);
    assert_true(f.ack_bitmask == 0x8000000000000001ull);
    assert_int_equal(f.sig_off, 12);
    assert_int_equal(f.timestamp, 1000001);
    assert_int_equal(f.message_count, 1);
    assert_memory_equal(f.messages, msgs, ml);

    /* bit flips anywhere after the bitmask: signature failure, not acknowledged */
    for (size_t i = 0; i < w.len; i++) {
        out[i] ^= 0x01;
        int rc = less_udp_decode(out, w.len, 1200, &k, &f, &e);
        assert_true(rc < 0);
        if (i < 2 || i >= 12) {
            assert_int_equal(rc, -EACCES);
            assert_false(f.authentic);
        }
        out[i] ^= 0x01;
    }
    /* MTU */
    assert_int_equal(less_udp_decode(out, w.len, w.len - 1, &k, &f, &e), -EMSGSIZE);
    xg_test_assert_err_contains(&e, "exceeds the MTU");
    /* an authentic datagram whose header does not parse: still ackable (P14) */
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(less_udp_encode(&w, &k, 77, 0, 0, 10, 3, msgs, 1, &e), 0);
    assert_int_equal(less_udp_decode(out, w.len, 1200, &k, &f, &e), -EPROTO);
    assert_true(f.authentic);
    assert_int_equal(f.seq, 77);
    /* negative bitmask */
    uint8_t negmask[] = {1, 0, 0xc0, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(less_udp_decode(negmask, sizeof negmask, 1200, NULL, &f, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "ack-previous-bitmask");
    /* MTU on encode = writer capacity */
    xg_writer_init(&w, out, 30);
    assert_int_equal(less_udp_encode(&w, &k, 5, 4, 0, 1, 1, msgs, ml, &e), -EMSGSIZE);
    assert_int_equal(w.len, 0);
}

/* Truncated frames never read past the end (exact-size heap copies; run under ASan). */
static void test_truncation(void **state)
{
    (void)state;
    struct less_key k = test_key();
    uint8_t tcp[128], udp[128];
    size_t tn = xg_test_unhex(TCP_SIGNED, tcp, sizeof tcp),
           un = xg_test_unhex(UDP_SIGNED, udp, sizeof udp);
    for (size_t len = 0; len < tn; len++) {
        uint8_t *cut = malloc(len ? len : 1);
        memcpy(cut, tcp, len);
        struct less_frame f;
        assert_true(less_tcp_decode(cut, len, &k, &f, NULL) < 0);
        free(cut);
    }
    for (size_t len = 0; len < un; len++) {
        uint8_t *cut = malloc(len ? len : 1);
        memcpy(cut, udp, len);
        struct less_frame f;
        assert_true(less_udp_decode(cut, len, 1200, &k, &f, NULL) < 0);
        free(cut);
    }
}

/* ---- message iteration over a whole packet ---- */

static const struct less_schema *t_type(void *u, int64_t id)
{
    (void)u;
    return id == 1 ? less_pose_schema() : NULL;
}

static int t_entity(void *u, int64_t id, int64_t *type)
{
    (void)u;
    *type = 1;
    return id == 7 ? 0 : -1;
}

static void test_packet_messages(void **state)
{
    (void)state;
    static const struct less_context ctx = {t_type, t_type, t_entity, t_entity, NULL, NULL, NULL};
    struct less_key k = test_key();
    uint8_t body[256], out[300];
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, body, sizeof body);

    struct less_prop_value cp[] = {{LESS_CONN_QUANTUM_NS, {NULL, {.i = 1000}}}};
    struct less_msg m = {.code = LESS_MSG_CONNECTION_CONTROL};
    m.u.connection_control.props = (struct less_prop_list){cp, 1};
    assert_int_equal(less_encode_msg(&w, &ctx, &m, &e), 0);
    m = (struct less_msg){.code = LESS_MSG_INTRODUCE_TYPE};
    m.u.introduce_type.typeid = 1;
    m.u.introduce_type.uri = LESS_POSE_URI;
    m.u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    assert_int_equal(less_encode_msg(&w, &ctx, &m, &e), 0);
    struct less_prop_value pv[] = {{LESS_POSE_ACTIVE, {NULL, {.i = 1}}}};
    struct less_comp_values cv = {0, {pv, 1}};
    m = (struct less_msg){.code = LESS_MSG_UPDATE_ENTITY};
    m.u.update_entity.entity_id = 7;
    m.u.update_entity.components = (struct less_comp_values_list){&cv, 1};
    assert_int_equal(less_encode_msg(&w, &ctx, &m, &e), 0);
    size_t bl = w.len;

    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(less_udp_encode(&w, &k, 0, 255, 0, 42, 3, body, bl, &e), 0);
    struct less_frame f;
    assert_int_equal(less_udp_decode(out, w.len, 1200, &k, &f, &e), 0);
    struct less_msg_iter it;
    uint8_t abuf[4096];
    struct less_arena a;
    less_arena_init(&a, abuf, sizeof abuf);
    less_msg_iter_init(&it, &f);
    enum less_msg_code want[] = {LESS_MSG_CONNECTION_CONTROL, LESS_MSG_INTRODUCE_TYPE,
                                 LESS_MSG_UPDATE_ENTITY};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(less_msg_next(&it, &ctx, &a, &m, &e), 1);
        assert_int_equal(m.code, want[i]);
    }
    assert_int_equal(m.u.update_entity.components.items[0].props.items[0].value.u.i, 1);
    assert_int_equal(less_msg_next(&it, &ctx, &a, &m, &e), 0);

    /* message-count 2 with 3 messages: trailing bytes */
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(less_tcp_encode(&w, &k, 42, 2, body, bl, &e), 0);
    assert_int_equal(less_tcp_decode(out, w.len, &k, &f, &e), 0);
    less_msg_iter_init(&it, &f);
    assert_int_equal(less_msg_next(&it, &ctx, &a, &m, &e), 1);
    assert_int_equal(less_msg_next(&it, &ctx, &a, &m, &e), 1);
    assert_int_equal(less_msg_next(&it, &ctx, &a, &m, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "bytes after message 2");

    /* message-count 4 with 3 messages: the 4th is truncated */
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(less_tcp_encode(&w, &k, 42, 4, body, bl, &e), 0);
    assert_int_equal(less_tcp_decode(out, w.len, &k, &f, &e), 0);
    less_msg_iter_init(&it, &f);
    for (int i = 0; i < 3; i++)
        assert_int_equal(less_msg_next(&it, &ctx, &a, &m, &e), 1);
    assert_int_equal(less_msg_next(&it, &ctx, &a, &m, &e), -EMSGSIZE);
    xg_test_assert_err_contains(&e, "LESS message 3: message code: INTEGER truncated at offset 37");
    /* iterating after an error keeps failing */
    assert_true(less_msg_next(&it, &ctx, &a, &m, &e) < 0);

    /* an update for an entity the sender never introduced: the packet fails at message 2 */
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(less_tcp_encode(&w, &k, 42, 3, body, bl, &e), 0);
    assert_int_equal(less_tcp_decode(out, w.len, &k, &f, &e), 0);
    static const struct less_context other = {t_type, t_type, NULL, NULL, NULL, NULL, NULL};
    less_msg_iter_init(&it, &f);
    assert_int_equal(less_msg_next(&it, &other, &a, &m, &e), 1);
    assert_int_equal(less_msg_next(&it, &other, &a, &m, &e), 1);
    assert_int_equal(less_msg_next(&it, &other, &a, &m, &e), -EPROTO);
    xg_test_assert_err_contains(
        &e, "LESS message 2: update-entity: unknown entity 7 (not introduced by the sender)");
}

/* ---- golden vector files ---- */

static void check_vector_file(const char *name, bool udp)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/vectors/less/%s", XG_SOURCE_DIR, name);
    FILE *fp = fopen(path, "r");
    if (!fp) fail_msg("%s not found (a checked-in vector: the checkout is incomplete)", path);
    char line[1024];
    uint8_t frame[256];
    size_t fl = 0;
    struct less_key k = {{0}, 0};
    while (fgets(line, sizeof line, fp)) {
        if (strncmp(line, "key ", 4) == 0)
            assert_int_equal(less_key_from_hex(line + 4, strlen(line + 4), &k, NULL), 0);
        else if (strncmp(line, "frame ", 6) == 0)
            fl = xg_test_unhex(line + 6, frame, sizeof frame);
    }
    fclose(fp);
    assert_int_equal(k.len, 32);
    assert_true(fl > 0);
    struct less_frame f;
    struct xg_error e = {0};
    int rc = udp ? less_udp_decode(frame, fl, LESS_UDP_DEFAULT_MTU, &k, &f, &e)
                 : less_tcp_decode(frame, fl, &k, &f, &e);
    if (rc) {
        fprintf(stderr, "%s: %s\n", name, e.msg);
        fail();
    }
    /* re-encode from the decoded fields: byte-identical */
    uint8_t out[256];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    if (udp)
        rc = less_udp_encode(&w, &k, f.seq, f.ack_last, f.ack_bitmask, f.timestamp, f.message_count,
                             f.messages, f.messages_len, &e);
    else
        rc = less_tcp_encode(&w, &k, f.timestamp, f.message_count, f.messages, f.messages_len, &e);
    assert_int_equal(rc, 0);
    assert_int_equal(w.len, fl);
    assert_memory_equal(out, frame, fl);
    /* and its message decodes */
    static const struct less_context none = {0};
    struct less_msg_iter it;
    struct less_msg m;
    uint8_t abuf[1024];
    struct less_arena a;
    less_arena_init(&a, abuf, sizeof abuf);
    less_msg_iter_init(&it, &f);
    assert_int_equal(less_msg_next(&it, &none, &a, &m, &e), 1);
    assert_int_equal(m.code, LESS_MSG_INTRODUCE_TYPE);
    assert_string_equal(m.u.introduce_type.uri, LESS_POSE_URI);
    assert_int_equal(less_msg_next(&it, &none, &a, &m, &e), 0);
}

static void test_vector_files(void **state)
{
    (void)state;
    check_vector_file("tcp_introduce_type.hex", false);
    check_vector_file("udp_introduce_type.hex", true);
}

/* ---- ack window ---- */

static void test_ack_in_order(void **state)
{
    (void)state;
    struct less_ack_window w;
    uint8_t last;
    uint64_t mask;
    less_ack_init(&w, 0);
    less_ack_fields(&w, &last, &mask);
    assert_int_equal(last, 255); /* one less than the first sequence number (P13) */
    assert_true(mask == 0);
    for (int s = 0; s < 5; s++)
        assert_int_equal(less_ack_record(&w, (uint8_t)s), LESS_ACK_NEW);
    less_ack_fields(&w, &last, &mask);
    assert_int_equal(last, 4);
    assert_true(mask == 0xF); /* 3, 2, 1, 0 */
    assert_true(less_ack_covers(last, mask, 4));
    assert_true(less_ack_covers(last, mask, 0));
    assert_false(less_ack_covers(last, mask, 5));
    assert_false(less_ack_covers(last, mask, 255));
}

static void test_ack_out_of_order_and_duplicates(void **state)
{
    (void)state;
    struct less_ack_window w;
    less_ack_init(&w, 10);
    assert_int_equal(less_ack_record(&w, 10), LESS_ACK_NEW);
    assert_int_equal(less_ack_record(&w, 12), LESS_ACK_NEW); /* 11 lost so far */
    assert_int_equal(w.last, 12);
    assert_true(w.mask == 0x2); /* bit0 = 11 missing, bit1 = 10 */
    assert_false(less_ack_covers(w.last, w.mask, 11));
    assert_int_equal(less_ack_record(&w, 11), LESS_ACK_NEW); /* late arrival */
    assert_true(w.mask == 0x3);
    assert_int_equal(w.last, 12);
    assert_int_equal(less_ack_record(&w, 11), LESS_ACK_DUPLICATE);
    assert_int_equal(less_ack_record(&w, 12), LESS_ACK_DUPLICATE);
    assert_int_equal(less_ack_record(&w, 10), LESS_ACK_DUPLICATE);
    /* the initial ack-last (first - 1) was never received: recording it is new */
    assert_int_equal(less_ack_record(&w, 9), LESS_ACK_NEW);
    assert_true(w.mask == 0x7);
}

static void test_ack_wrap_and_window_edge(void **state)
{
    (void)state;
    struct less_ack_window w;
    less_ack_init(&w, 250);
    assert_int_equal(w.last, 249);
    for (int i = 0; i < 9; i++) /* 250..255, 0, 1, 2 */
        assert_int_equal(less_ack_record(&w, (uint8_t)(250 + i)), LESS_ACK_NEW);
    assert_int_equal(w.last, 2);
    assert_true(w.mask == 0xFF);
    assert_true(less_ack_covers(2, w.mask, 250));
    assert_false(less_ack_covers(2, w.mask, 249));
    assert_int_equal(less_ack_record(&w, 255), LESS_ACK_DUPLICATE);

    /* 64 behind is the oldest acknowledgeable; 65 behind is too old */
    less_ack_init(&w, 100);
    assert_int_equal(less_ack_record(&w, 100), LESS_ACK_NEW);
    assert_int_equal(less_ack_record(&w, 36), LESS_ACK_NEW); /* 64 behind -> bit 63 */
    assert_true(w.mask == 0x8000000000000000ull);
    assert_int_equal(less_ack_record(&w, 35), LESS_ACK_TOO_OLD);
    assert_true(less_ack_covers(100, w.mask, 36));
    assert_false(less_ack_covers(100, ~0ull, 35)); /* beyond the bitmask */
    /* jump ahead by exactly 64: the old last becomes bit 63, older bits fall off */
    less_ack_init(&w, 0);
    assert_int_equal(less_ack_record(&w, 0), LESS_ACK_NEW);
    assert_int_equal(less_ack_record(&w, 64), LESS_ACK_NEW);
    assert_true(w.mask == 0x8000000000000000ull);
    /* jump ahead by 65: the old last falls out of the window */
    assert_int_equal(less_ack_record(&w, 129), LESS_ACK_NEW);
    assert_true(w.mask == 0);
    assert_int_equal(less_ack_record(&w, 64), LESS_ACK_TOO_OLD);
    /* 128 away is ambiguous in 8 bits and treated as too old */
    assert_int_equal(less_ack_record(&w, 1), LESS_ACK_TOO_OLD);
}

/* The stale rule (P12): timestamps decide. A replay of sequence 0 after 130 packets (serially
 * "ahead" by 126) is STALE and leaves the window alone; a gap filled in time order is LATE. */
static void test_rx_stale_after_wrap(void **state)
{
    (void)state;
    struct less_ack_window w;
    struct less_rx_times t;
    less_ack_init(&w, 0);
    less_rx_times_init(&t);
    for (int s = 0; s <= 130; s++)
        assert_int_equal(less_rx_record(&w, &t, (uint8_t)s, 1000 + s), LESS_RX_NEW);
    uint64_t mask = w.mask;
    assert_int_equal(less_rx_record(&w, &t, 0, 1000), LESS_RX_STALE);   /* 130 old */
    assert_int_equal(less_rx_record(&w, &t, 200, 1070), LESS_RX_STALE); /* 186 old, "70 ahead" */
    assert_true(w.last == 130 && w.mask == mask);
    assert_int_equal(less_rx_record(&w, &t, 130, 1130), LESS_RX_DUPLICATE);
    assert_int_equal(less_rx_record(&w, &t, 66, 1066), LESS_RX_DUPLICATE); /* 64 behind */
    assert_int_equal(less_rx_record(&w, &t, 65, 1065), LESS_RX_STALE);     /* 65 behind */
    assert_int_equal(less_rx_record(&w, &t, 131, 1131), LESS_RX_NEW);
    /* gaps: 2 lost, then 3 arrives; 2 comes late in time order (LATE, acked), a copy of 2
     * from an earlier lap (older than packet 1) is STALE but acknowledged (P12) */
    less_ack_init(&w, 0);
    less_rx_times_init(&t);
    assert_int_equal(less_rx_record(&w, &t, 0, 10), LESS_RX_NEW);
    assert_int_equal(less_rx_record(&w, &t, 1, 20), LESS_RX_NEW);
    assert_int_equal(less_rx_record(&w, &t, 3, 40), LESS_RX_NEW);
    assert_int_equal(less_rx_record(&w, &t, 2, 15), LESS_RX_STALE); /* older than packet 1 */
    assert_true(less_ack_covers(w.last, w.mask, 2));
    assert_int_equal(less_rx_record(&w, &t, 2, 30), LESS_RX_DUPLICATE);
    less_ack_init(&w, 0);
    less_rx_times_init(&t);
    assert_int_equal(less_rx_record(&w, &t, 0, 10), LESS_RX_NEW);
    assert_int_equal(less_rx_record(&w, &t, 2, 30), LESS_RX_NEW);
    assert_int_equal(less_rx_record(&w, &t, 1, 20), LESS_RX_LATE);
    assert_int_equal(less_rx_record(&w, &t, 4, 30), LESS_RX_STALE); /* ahead, not newer */
    assert_int_equal(w.last, 2);
    /* packets leaving the window set the floor: a gap older than all in-window packets must be
     * newer than the newest one that left */
    less_ack_init(&w, 0);
    less_rx_times_init(&t);
    assert_int_equal(less_rx_record(&w, &t, 0, 100), LESS_RX_NEW);
    assert_int_equal(less_rx_record(&w, &t, 70, 170), LESS_RX_NEW); /* 1..69 lost, 0 left */
    assert_int_equal(less_rx_record(&w, &t, 6, 99), LESS_RX_STALE); /* 64 behind, older */
    assert_int_equal(less_rx_record(&w, &t, 7, 107), LESS_RX_LATE);
}

/* Random delivery with loss, reordering and duplicates against a model in unbounded sequence
 * numbers. */
static void test_ack_model(void **state)
{
    (void)state;
    srand(12345);
    for (int trial = 0; trial < 50; trial++) {
        uint8_t first = (uint8_t)rand();
        struct less_ack_window w;
        less_ack_init(&w, first);
        static bool got[4096];
        memset(got, 0, sizeof got);
        long highest = -1; /* in absolute numbers from `first` */
        long sent = 0;
        for (int step = 0; step < 1500; step++) {
            /* deliver a packet near the sender's head: mostly fresh, some late, some dups */
            long abs_seq;
            int r = rand() % 10;
            if (r < 6 || highest < 0)
                abs_seq = sent++;
            else if (r < 9)
                abs_seq = highest - (rand() % 70); /* late or duplicate, maybe too old */
            else
                abs_seq = highest;
            if (abs_seq < 0) continue;
            if (rand() % 4 == 0) continue; /* lost */
            enum less_ack_result res = less_ack_record(&w, (uint8_t)(first + abs_seq));
            enum less_ack_result want;
            if (highest >= 0 && abs_seq < highest - 64)
                want = LESS_ACK_TOO_OLD;
            else if (got[abs_seq])
                want = LESS_ACK_DUPLICATE;
            else
                want = LESS_ACK_NEW;
            assert_int_equal(res, want);
            if (want == LESS_ACK_NEW) {
                got[abs_seq] = true;
                if (abs_seq > highest) highest = abs_seq;
            }
            /* compare the window */
            uint64_t mask = 0;
            for (int i = 0; i < 64; i++) {
                long s = highest - 1 - i;
                if (s >= 0 && got[s]) mask |= (uint64_t)1 << i;
            }
            assert_int_equal(w.last, (uint8_t)(first + highest));
            assert_true(w.mask == mask);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_from_hex),
        cmocka_unit_test(test_hmac_vector),
        cmocka_unit_test(test_tcp_encode_decode_vector),
        cmocka_unit_test(test_tcp_decode_rejections),
        cmocka_unit_test(test_tcp_split_header_only),
        cmocka_unit_test(test_tcp_split),
        cmocka_unit_test(test_udp_encode_decode_vector),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_packet_messages),
        cmocka_unit_test(test_vector_files),
        cmocka_unit_test(test_ack_in_order),
        cmocka_unit_test(test_ack_out_of_order_and_duplicates),
        cmocka_unit_test(test_ack_wrap_and_window_edge),
        cmocka_unit_test(test_rx_stale_after_wrap),
        cmocka_unit_test(test_ack_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
