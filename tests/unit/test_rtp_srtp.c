/* Unit tests for adapters/rtp/srtp_session: SDES key text and files (RFC 4568), the a=crypto
 * line and the SRTP SDP, SRTP/SRTCP (RFC 3711) sessions on libsrtp2 for AES_CM_128_HMAC_SHA1_80
 * and AEAD_AES_128_GCM: libsrtp's own known-answer packets (test/srtp_driver.c srtp_validate /
 * srtp_validate_gcm), round trips, a cross-check against sessions made directly with libsrtp's
 * API, wrong keys, replays, plain and truncated packets, trailer room, the `srtp:` config. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <srtp2/srtp.h>

#include "adapters/rtp/rtp.h"
#include "adapters/rtp/srtp_session.h"
#include "mappings/conf_yaml.h"

/* libsrtp's test key (srtp_driver.c test_key, first 30 bytes) and GCM key (test_key_gcm) */
static const uint8_t KAT_KEY[30] = {0xe1, 0xf9, 0x7a, 0x0d, 0x3e, 0x01, 0x8b, 0xe0, 0xd6, 0x4f,
                                    0xa3, 0x2c, 0x06, 0xde, 0x41, 0x39, 0x0e, 0xc6, 0x75, 0xad,
                                    0x49, 0x8a, 0xfe, 0xeb, 0xb6, 0x96, 0x0b, 0x3a, 0xab, 0xe6};
#define KAT_KEY_B64 "4fl6DT4Bi+DWT6MsBt5BOQ7Gda1Jiv7rtpYLOqvm"
static const uint8_t KAT_GCM_KEY[28] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
                                        0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0xa0, 0xa1, 0xa2, 0xa3,
                                        0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab};
#define KAT_GCM_KEY_B64 "AAECAwQFBgcICQoLDA0OD6ChoqOkpaanqKmqqw=="

/* RTP: V=2 PT=15 seq=0x1234 ts=0xdecafbad SSRC=0xcafebabe, 16 bytes of 0xab */
static const uint8_t KAT_RTP[28] = {0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe,
                                    0xba, 0xbe, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab,
                                    0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab};
/* RTCP SR header, SSRC 0xcafebabe, 16 bytes of 0xab */
static const uint8_t KAT_RTCP[24] = {0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe,
                                     0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab,
                                     0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab};
static const uint8_t KAT_SRTP_CM[38] = {0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe,
                                        0xba, 0xbe, 0x4e, 0x55, 0xdc, 0x4c, 0xe7, 0x99, 0x78, 0xd8,
                                        0x8c, 0xa4, 0xd2, 0x15, 0x94, 0x9d, 0x24, 0x02, 0xb7, 0x8d,
                                        0x6a, 0xcc, 0x99, 0xea, 0x17, 0x9b, 0x8d, 0xbb};
static const uint8_t KAT_SRTCP_CM[38] = {0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe, 0x71, 0x28,
                                         0x03, 0x5b, 0xe4, 0x87, 0xb9, 0xbd, 0xbe, 0xf8, 0x90, 0x41,
                                         0xf9, 0x77, 0xa5, 0xa8, 0x80, 0x00, 0x00, 0x01, 0x99, 0x3e,
                                         0x08, 0xcd, 0x54, 0xd6, 0xc1, 0x23, 0x07, 0x98};
static const uint8_t KAT_SRTP_GCM[44] = {
    0x80, 0x0f, 0x12, 0x34, 0xde, 0xca, 0xfb, 0xad, 0xca, 0xfe, 0xba, 0xbe, 0xc5, 0x00, 0x2e,
    0xde, 0x04, 0xcf, 0xdd, 0x2e, 0xb9, 0x11, 0x59, 0xe0, 0x88, 0x0a, 0xa0, 0x6e, 0xd2, 0x97,
    0x68, 0x26, 0xf7, 0x96, 0xb2, 0x01, 0xdf, 0x31, 0x31, 0xa1, 0x27, 0xe8, 0xa3, 0x92};
static const uint8_t KAT_SRTCP_GCM[44] = {
    0x81, 0xc8, 0x00, 0x0b, 0xca, 0xfe, 0xba, 0xbe, 0xc9, 0x8b, 0x8b, 0x5d, 0xf0, 0x39, 0x2a,
    0x55, 0x85, 0x2b, 0x6c, 0x21, 0xac, 0x8e, 0x70, 0x25, 0xc5, 0x2c, 0x6f, 0xbe, 0xa2, 0xb3,
    0xb4, 0x46, 0xea, 0x31, 0x12, 0x3b, 0xa8, 0x8c, 0xe6, 0x1e, 0x80, 0x00, 0x00, 0x01};

static const enum xg_srtp_suite SUITES[2] = {XG_SRTP_AES_CM_128_HMAC_SHA1_80,
                                             XG_SRTP_AEAD_AES_128_GCM};

static struct xg_srtp_key fixed_key(enum xg_srtp_suite suite, uint8_t base)
{
    struct xg_srtp_key k = {.suite = suite, .len = xg_srtp_key_len(suite)};
    for (size_t i = 0; i < k.len; i++)
        k.bytes[i] = (uint8_t)(base + 7 * i);
    return k;
}

static struct xg_srtp *session(enum xg_srtp_dir dir, const struct xg_srtp_key *k)
{
    struct xg_srtp *s = NULL;
    struct xg_error err = {0};
    int rc = xg_srtp_session_new(&s, dir, k, &err);
    if (rc) fail_msg("session: %s", err.msg);
    assert_non_null(s);
    return s;
}

/* A game-state-like RTP packet: V=2, PT 98, seq, ts, SSRC, optional CSRC + extension, payload. */
static size_t make_rtp(uint8_t *b, uint16_t seq, uint32_t ssrc, size_t payload, bool ext)
{
    size_t n = 0;
    b[n++] = (uint8_t)(0x80 | (ext ? 0x10 : 0) | (ext ? 1 : 0));
    b[n++] = 98;
    b[n++] = (uint8_t)(seq >> 8);
    b[n++] = (uint8_t)seq;
    uint32_t ts = 90u * seq;
    for (int i = 3; i >= 0; i--)
        b[n++] = (uint8_t)(ts >> (8 * i));
    for (int i = 3; i >= 0; i--)
        b[n++] = (uint8_t)(ssrc >> (8 * i));
    if (ext) {
        for (int i = 0; i < 4; i++)
            b[n++] = (uint8_t)(0x10 + i); /* CSRC */
        b[n++] = 0xbe;                    /* one-byte ext profile */
        b[n++] = 0xde;
        b[n++] = 0;
        b[n++] = 1; /* 1 word */
        for (int i = 0; i < 4; i++)
            b[n++] = (uint8_t)(0x20 + i);
    }
    for (size_t i = 0; i < payload; i++)
        b[n++] = (uint8_t)(i * 13 + seq);
    return n;
}

/* RTCP SR (28 bytes, no report blocks) + SDES CNAME "xg" (12 bytes). */
static size_t make_rtcp(uint8_t *b, uint32_t ssrc, uint32_t ntp)
{
    static const uint8_t sr[28] = {0x80, 200, 0, 6};
    memcpy(b, sr, sizeof sr);
    for (int i = 0; i < 4; i++)
        b[4 + i] = (uint8_t)(ssrc >> (24 - 8 * i));
    for (int i = 0; i < 4; i++)
        b[8 + i] = (uint8_t)(ntp >> (24 - 8 * i));
    static const uint8_t sdes[12] = {0x81, 202, 0, 2, 0, 0, 0, 0, 1, 2, 'x', 'g'};
    memcpy(b + 28, sdes, sizeof sdes);
    for (int i = 0; i < 4; i++)
        b[32 + i] = (uint8_t)(ssrc >> (24 - 8 * i));
    return 40;
}

/* ---- keys ---- */

static void test_key_parse_forms(void **state)
{
    (void)state;
    struct xg_srtp_key k;
    struct xg_error err = {0};
    const char *cm[] = {"inline:" KAT_KEY_B64, KAT_KEY_B64, "  inline:" KAT_KEY_B64 " \n",
                        "AES_CM_128_HMAC_SHA1_80 inline:" KAT_KEY_B64,
                        "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" KAT_KEY_B64 "\r\n"};
    for (size_t i = 0; i < sizeof cm / sizeof cm[0]; i++) {
        enum xg_srtp_suite want = i < 3 ? XG_SRTP_AES_CM_128_HMAC_SHA1_80 : XG_SRTP_SUITE_NONE;
        if (xg_srtp_key_parse(cm[i], want, &k, &err)) fail_msg("'%s': %s", cm[i], err.msg);
        assert_int_equal(k.suite, XG_SRTP_AES_CM_128_HMAC_SHA1_80);
        assert_int_equal(k.len, 30);
        assert_memory_equal(k.bytes, KAT_KEY, 30);
    }
    /* GCM: 28 bytes, padded or not */
    const char *gcm[] = {"inline:" KAT_GCM_KEY_B64, "inline:AAECAwQFBgcICQoLDA0OD6ChoqOkpaanqKmqqw",
                         "a=crypto:7 AEAD_AES_128_GCM inline:" KAT_GCM_KEY_B64};
    for (size_t i = 0; i < sizeof gcm / sizeof gcm[0]; i++) {
        assert_int_equal(xg_srtp_key_parse(gcm[i], XG_SRTP_AEAD_AES_128_GCM, &k, &err), 0);
        assert_int_equal(k.suite, XG_SRTP_AEAD_AES_128_GCM);
        assert_int_equal(k.len, 28);
        assert_memory_equal(k.bytes, KAT_GCM_KEY, 28);
    }
    /* format back */
    char buf[64];
    struct xg_srtp_key kk = {.suite = XG_SRTP_AEAD_AES_128_GCM, .len = 28};
    memcpy(kk.bytes, KAT_GCM_KEY, 28);
    assert_int_equal(xg_srtp_key_format(&kk, buf, sizeof buf), 47);
    assert_string_equal(buf, "inline:" KAT_GCM_KEY_B64);
    assert_int_equal(xg_srtp_key_format(&kk, buf, 47), -EMSGSIZE);
}

static void expect_parse_error(const char *text, enum xg_srtp_suite suite, const char *needle)
{
    struct xg_srtp_key k;
    struct xg_error err = {0};
    int rc = xg_srtp_key_parse(text, suite, &k, &err);
    if (rc != -EINVAL) fail_msg("'%s': rc %d, want -EINVAL", text, rc);
    if (!strstr(err.msg, needle)) fail_msg("'%s': error '%s' lacks '%s'", text, err.msg, needle);
    assert_int_equal(k.len, 0);
}

static void test_key_parse_errors(void **state)
{
    (void)state;
    const enum xg_srtp_suite CM = XG_SRTP_AES_CM_128_HMAC_SHA1_80, NONE = XG_SRTP_SUITE_NONE;
    /* bad base64 names the character and offset */
    expect_parse_error("inline:4fl6DT4Bi+DWT6Ms!t5BOQ7Gda1Jiv7rtpYLOqvm", CM,
                       "key: bad base64 character '!' at offset 16");
    expect_parse_error("inline:4fl6DT4Bi+DWT6MsBt5BOQ7Gda1Jiv7rtpYLOqv", CM, "key:");
    /* wrong length names both lengths and the suite */
    expect_parse_error(
        "inline:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", CM,
        "key: 29 bytes, AES_CM_128_HMAC_SHA1_80 needs 30 (16-byte key + 14-byte salt)");
    expect_parse_error("inline:" KAT_GCM_KEY_B64, CM, "28 bytes fit AEAD_AES_128_GCM");
    expect_parse_error("inline:" KAT_KEY_B64, XG_SRTP_AEAD_AES_128_GCM,
                       "key: 30 bytes, AEAD_AES_128_GCM needs 28 (16-byte key + 12-byte salt)");
    /* unknown suite */
    expect_parse_error("AES_CM_128_HMAC_SHA1_32 inline:" KAT_KEY_B64, NONE,
                       "suite 'AES_CM_128_HMAC_SHA1_32' is unknown (supported: "
                       "AES_CM_128_HMAC_SHA1_80, AEAD_AES_128_GCM)");
    expect_parse_error("a=crypto:1 F8_128_HMAC_SHA1_80 inline:" KAT_KEY_B64, NONE,
                       "suite 'F8_128_HMAC_SHA1_80' is unknown");
    /* suite mismatch, no suite */
    expect_parse_error("AEAD_AES_128_GCM inline:" KAT_GCM_KEY_B64, CM,
                       "suite: the key is for AEAD_AES_128_GCM, the session uses "
                       "AES_CM_128_HMAC_SHA1_80");
    expect_parse_error("inline:" KAT_KEY_B64, NONE, "suite: none given");
    /* lifetime / MKI / session params / method / tag */
    expect_parse_error("inline:" KAT_KEY_B64 "|2^20|1:4", CM,
                       "key: lifetime/MKI parameters ('|2^20|1:4') are not supported");
    expect_parse_error("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" KAT_KEY_B64 " KDR=1", NONE,
                       "session parameters ('KDR=1') are not supported");
    expect_parse_error("uri:" KAT_KEY_B64, CM, "key: method 'uri' is not supported");
    expect_parse_error("a=crypto:x AES_CM_128_HMAC_SHA1_80 inline:" KAT_KEY_B64, NONE, "tag: 'x'");
    expect_parse_error("   ", CM, "key: empty");
    expect_parse_error("inline:", CM, "key: empty base64");
}

static char tmpdir[64];

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_key_file(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/tx.key", tmpdir);
    write_file(path, "# our sending key\n\n  inline:" KAT_KEY_B64 "\n# more\n", 0600);
    struct xg_srtp_key k;
    struct xg_error err = {0};
    bool wr = true;
    assert_int_equal(xg_srtp_key_load(path, XG_SRTP_AES_CM_128_HMAC_SHA1_80, &k, &wr, &err), 0);
    assert_false(wr);
    assert_memory_equal(k.bytes, KAT_KEY, 30);
    /* an SDP line names the suite; group-readable is reported */
    write_file(path, "a=crypto:1 AEAD_AES_128_GCM inline:" KAT_GCM_KEY_B64 "\r\n", 0640);
    assert_int_equal(xg_srtp_key_load(path, XG_SRTP_SUITE_NONE, &k, &wr, &err), 0);
    assert_true(wr);
    assert_int_equal(k.suite, XG_SRTP_AEAD_AES_128_GCM);
    /* errors carry the path */
    write_file(path, "inline:4fl6DT4Bi+DWT6Ms!t5BOQ7Gda1Jiv7rtpYLOqvm\n", 0600);
    assert_int_equal(xg_srtp_key_load(path, XG_SRTP_AES_CM_128_HMAC_SHA1_80, &k, NULL, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "key file '"));
    assert_non_null(strstr(err.msg, "tx.key': key: bad base64 character '!'"));
    write_file(path, "# nothing\n\n", 0600);
    assert_int_equal(xg_srtp_key_load(path, XG_SRTP_AES_CM_128_HMAC_SHA1_80, &k, NULL, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "no key in it"));
    snprintf(path, sizeof path, "%s/missing.key", tmpdir);
    assert_int_equal(xg_srtp_key_load(path, XG_SRTP_AES_CM_128_HMAC_SHA1_80, &k, NULL, &err),
                     -ENOENT);
    assert_non_null(strstr(err.msg, "missing.key': No such file"));
}

static void test_generate(void **state)
{
    (void)state;
    struct xg_srtp_key a, b;
    assert_int_equal(xg_srtp_key_generate(XG_SRTP_AEAD_AES_128_GCM, &a, NULL), 0);
    assert_int_equal(xg_srtp_key_generate(XG_SRTP_AEAD_AES_128_GCM, &b, NULL), 0);
    assert_int_equal(a.len, 28);
    assert_memory_not_equal(a.bytes, b.bytes, 28);
    char text[64];
    assert_true(xg_srtp_key_format(&a, text, sizeof text) > 0);
    struct xg_srtp_key c;
    assert_int_equal(xg_srtp_key_parse(text, XG_SRTP_AEAD_AES_128_GCM, &c, NULL), 0);
    assert_memory_equal(a.bytes, c.bytes, 28);
    assert_int_equal(xg_srtp_key_generate(XG_SRTP_SUITE_NONE, &a, NULL), -EINVAL);
}

/* ---- SDP ---- */

static void test_sdp(void **state)
{
    (void)state;
    struct xg_srtp_key k = {.suite = XG_SRTP_AES_CM_128_HMAC_SHA1_80, .len = 30};
    memcpy(k.bytes, KAT_KEY, 30);
    char line[128];
    int n = xg_srtp_sdp_crypto(line, sizeof line, 1, &k);
    assert_string_equal(line, "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" KAT_KEY_B64 "\r\n");
    assert_int_equal(n, (int)strlen(line));
    assert_int_equal(xg_srtp_sdp_crypto(line, 20, 1, &k), -EMSGSIZE);
    assert_int_equal(xg_srtp_sdp_crypto(line, sizeof line, 0, &k), -EINVAL);

    /* the session description from the rtp codec, made SRTP */
    char sdp[1024];
    size_t len = 0;
    struct rtp_sdp_params p = {.session_name = "rig",
                               .session_id = 42,
                               .conn_addr = "127.0.0.1",
                               .port = 49170,
                               .pt = 98,
                               .pli = true};
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &p, &len, NULL), 0);
    assert_non_null(strstr(sdp, "m=application 49170 RTP/AVPF 98\r\n"));
    size_t before = len;
    assert_int_equal(xg_srtp_sdp_secure(sdp, before + 10, &len, &k), -EMSGSIZE);
    assert_int_equal(len, before);
    assert_non_null(strstr(sdp, "RTP/AVPF"));
    assert_int_equal(xg_srtp_sdp_secure(sdp, sizeof sdp, &len, &k), 0);
    assert_int_equal(len, strlen(sdp));
    assert_non_null(strstr(sdp, "m=application 49170 RTP/SAVPF 98\r\n"));
    assert_null(strstr(sdp, "RTP/AVPF"));
    assert_non_null(strstr(sdp, "a=rtcp-mux\r\n"));
    const char *tail = "\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" KAT_KEY_B64 "\r\n";
    assert_string_equal(sdp + len - strlen(tail), tail);
    char nom[] = "v=0\r\n";
    size_t nl = strlen(nom);
    assert_int_equal(xg_srtp_sdp_secure(nom, sizeof nom, &nl, &k), -EINVAL);
}

/* ---- sessions ---- */

/* libsrtp's known answers, through this module: protect and unprotect. */
static void kat(enum xg_srtp_suite suite, const uint8_t *key, const uint8_t *srtp, size_t srtp_len,
                const uint8_t *srtcp, size_t srtcp_len)
{
    struct xg_srtp_key k = {.suite = suite, .len = xg_srtp_key_len(suite)};
    memcpy(k.bytes, key, k.len);
    struct xg_srtp *tx = session(XG_SRTP_SEND, &k), *rx = session(XG_SRTP_RECV, &k);
    struct xg_error err = {0};
    uint8_t b[256];
    size_t n = sizeof KAT_RTP;
    memcpy(b, KAT_RTP, n);
    if (xg_srtp_protect(tx, b, &n, sizeof b, &err)) fail_msg("%s", err.msg);
    assert_int_equal(n, srtp_len);
    assert_memory_equal(b, srtp, srtp_len);
    n = sizeof KAT_RTCP;
    memcpy(b, KAT_RTCP, n);
    if (xg_srtp_protect_rtcp(tx, b, &n, sizeof b, &err)) fail_msg("%s", err.msg);
    assert_int_equal(n, srtcp_len);
    assert_memory_equal(b, srtcp, srtcp_len);

    memcpy(b, srtp, srtp_len);
    n = srtp_len;
    if (xg_srtp_unprotect(rx, b, &n, &err)) fail_msg("%s", err.msg);
    assert_int_equal(n, sizeof KAT_RTP);
    assert_memory_equal(b, KAT_RTP, n);
    memcpy(b, srtcp, srtcp_len);
    n = srtcp_len;
    if (xg_srtp_unprotect_rtcp(rx, b, &n, &err)) fail_msg("%s", err.msg);
    assert_int_equal(n, sizeof KAT_RTCP);
    assert_memory_equal(b, KAT_RTCP, n);
    assert_int_equal(xg_srtp_session_stats(tx)->rtp_ok, 1);
    assert_int_equal(xg_srtp_session_stats(tx)->rtcp_ok, 1);
    assert_int_equal(xg_srtp_session_stats(rx)->rtp_ok, 1);
    assert_int_equal(xg_srtp_session_stats(rx)->rtcp_ok, 1);
    xg_srtp_session_free(tx);
    xg_srtp_session_free(rx);
}

static void test_known_answer_aes_cm(void **state)
{
    (void)state;
    kat(XG_SRTP_AES_CM_128_HMAC_SHA1_80, KAT_KEY, KAT_SRTP_CM, sizeof KAT_SRTP_CM, KAT_SRTCP_CM,
        sizeof KAT_SRTCP_CM);
}

static void test_known_answer_gcm(void **state)
{
    (void)state;
    kat(XG_SRTP_AEAD_AES_128_GCM, KAT_GCM_KEY, KAT_SRTP_GCM, sizeof KAT_SRTP_GCM, KAT_SRTCP_GCM,
        sizeof KAT_SRTCP_GCM);
}

static void test_round_trip(void **state)
{
    (void)state;
    for (int si = 0; si < 2; si++) {
        enum xg_srtp_suite suite = SUITES[si];
        struct xg_srtp_key k = fixed_key(suite, (uint8_t)(11 + si));
        struct xg_srtp *tx = session(XG_SRTP_SEND, &k), *rx = session(XG_SRTP_RECV, &k);
        assert_int_equal(xg_srtp_session_suite(tx), suite);
        assert_int_equal(xg_srtp_session_dir(rx), XG_SRTP_RECV);
        struct xg_error err = {0};
        uint8_t b[1500], plain[1500];
        /* two SSRCs, headers with and without CSRC + extension, seq wrapping past 65535 */
        for (int i = 0; i < 300; i++) {
            uint16_t seq = (uint16_t)(65400 + i);
            uint32_t ssrc = i % 2 ? 0x11111111u : 0x22222222u;
            size_t n = make_rtp(b, seq, ssrc, (size_t)(i % 97) * 11, i % 3 == 0);
            memcpy(plain, b, n);
            size_t pn = n;
            if (xg_srtp_protect(tx, b, &n, sizeof b, &err)) fail_msg("%s", err.msg);
            assert_int_equal(n, pn + xg_srtp_overhead(suite, false));
            if (pn > 40) assert_memory_not_equal(b + 40, plain + 40, pn - 40); /* encrypted */
            if (xg_srtp_unprotect(rx, b, &n, &err)) fail_msg("pkt %d: %s", i, err.msg);
            assert_int_equal(n, pn);
            assert_memory_equal(b, plain, pn);
        }
        for (uint32_t i = 0; i < 5; i++) {
            size_t n = make_rtcp(b, 0x22222222u, i), pn = n;
            memcpy(plain, b, n);
            if (xg_srtp_protect_rtcp(tx, b, &n, sizeof b, &err)) fail_msg("%s", err.msg);
            assert_int_equal(n, pn + xg_srtp_overhead(suite, true));
            assert_memory_equal(b, plain, 8); /* first 8 bytes stay clear */
            assert_memory_not_equal(b + 8, plain + 8, pn - 8);
            if (xg_srtp_unprotect_rtcp(rx, b, &n, &err)) fail_msg("%s", err.msg);
            assert_int_equal(n, pn);
            assert_memory_equal(b, plain, pn);
        }
        const struct xg_srtp_stats *st = xg_srtp_session_stats(rx);
        assert_int_equal(st->rtp_ok, 300);
        assert_int_equal(st->rtcp_ok, 5);
        assert_int_equal(st->auth_fail + st->replay + st->malformed + st->other, 0);
        xg_srtp_session_free(tx);
        xg_srtp_session_free(rx);
    }
}

/* An independent libsrtp session made directly with libsrtp's API (specific SSRC). */
static srtp_t direct_session(enum xg_srtp_suite suite, const struct xg_srtp_key *k, uint32_t ssrc)
{
    srtp_policy_t pol;
    memset(&pol, 0, sizeof pol);
    if (suite == XG_SRTP_AEAD_AES_128_GCM) {
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&pol.rtp);
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&pol.rtcp);
    } else {
        srtp_crypto_policy_set_rtp_default(&pol.rtp);
        srtp_crypto_policy_set_rtcp_default(&pol.rtcp);
    }
    pol.ssrc.type = ssrc_specific;
    pol.ssrc.value = ssrc;
    pol.key = (unsigned char *)k->bytes;
    pol.window_size = 128;
    srtp_t ctx = NULL;
    assert_int_equal(srtp_create(&ctx, &pol), srtp_err_status_ok);
    return ctx;
}

static void test_cross_check_libsrtp(void **state)
{
    (void)state;
    for (int si = 0; si < 2; si++) {
        enum xg_srtp_suite suite = SUITES[si];
        struct xg_srtp_key k = fixed_key(suite, (uint8_t)(99 + si));
        struct xg_srtp *tx = session(XG_SRTP_SEND, &k), *rx = session(XG_SRTP_RECV, &k);
        srtp_t d_rx = direct_session(suite, &k, 0x5eed0001u);
        srtp_t d_tx = direct_session(suite, &k, 0x5eed0002u);
        struct xg_error err = {0};
        uint8_t b[1500], plain[1500];
        for (int i = 0; i < 20; i++) {
            /* ours → direct */
            size_t n = make_rtp(b, (uint16_t)(1000 + i), 0x5eed0001u, 64, i & 1);
            size_t pn = n;
            memcpy(plain, b, n);
            assert_int_equal(xg_srtp_protect(tx, b, &n, sizeof b, &err), 0);
            int dn = (int)n;
            assert_int_equal(srtp_unprotect(d_rx, b, &dn), srtp_err_status_ok);
            assert_int_equal(dn, (int)pn);
            assert_memory_equal(b, plain, pn);
            /* direct → ours */
            n = make_rtp(b, (uint16_t)(7 + i), 0x5eed0002u, 100, false);
            pn = n;
            memcpy(plain, b, n);
            dn = (int)n;
            assert_int_equal(srtp_protect(d_tx, b, &dn), srtp_err_status_ok);
            n = (size_t)dn;
            if (xg_srtp_unprotect(rx, b, &n, &err)) fail_msg("%s", err.msg);
            assert_int_equal(n, pn);
            assert_memory_equal(b, plain, pn);
        }
        /* RTCP both ways */
        size_t n = make_rtcp(b, 0x5eed0001u, 1), pn = n;
        memcpy(plain, b, n);
        assert_int_equal(xg_srtp_protect_rtcp(tx, b, &n, sizeof b, &err), 0);
        int dn = (int)n;
        assert_int_equal(srtp_unprotect_rtcp(d_rx, b, &dn), srtp_err_status_ok);
        assert_memory_equal(b, plain, pn);
        n = make_rtcp(b, 0x5eed0002u, 2);
        pn = n;
        memcpy(plain, b, n);
        dn = (int)n;
        assert_int_equal(srtp_protect_rtcp(d_tx, b, &dn), srtp_err_status_ok);
        n = (size_t)dn;
        assert_int_equal(xg_srtp_unprotect_rtcp(rx, b, &n, &err), 0);
        assert_memory_equal(b, plain, pn);
        srtp_dealloc(d_rx);
        srtp_dealloc(d_tx);
        xg_srtp_session_free(tx);
        xg_srtp_session_free(rx);
    }
}

static void test_wrong_key(void **state)
{
    (void)state;
    for (int si = 0; si < 2; si++) {
        enum xg_srtp_suite suite = SUITES[si];
        struct xg_srtp_key k = fixed_key(suite, 1), bad = fixed_key(suite, 2);
        struct xg_srtp *tx = session(XG_SRTP_SEND, &k), *rx = session(XG_SRTP_RECV, &bad);
        struct xg_error err = {0};
        uint8_t b[1500];
        for (int i = 0; i < 3; i++) {
            size_t n = make_rtp(b, (uint16_t)i, 0xabcdef01u, 80, false);
            assert_int_equal(xg_srtp_protect(tx, b, &n, sizeof b, NULL), 0);
            assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EAUTH);
        }
        assert_non_null(strstr(err.msg, "SRTP: authentication failed (SSRC 0xabcdef01 seq 2)"));
        size_t n = make_rtcp(b, 0xabcdef01u, 0);
        assert_int_equal(xg_srtp_protect_rtcp(tx, b, &n, sizeof b, NULL), 0);
        assert_int_equal(xg_srtp_unprotect_rtcp(rx, b, &n, &err), XG_SRTP_EAUTH);
        assert_non_null(strstr(err.msg, "SRTCP: authentication failed (SSRC 0xabcdef01)"));
        const struct xg_srtp_stats *st = xg_srtp_session_stats(rx);
        assert_int_equal(st->auth_fail, 4);
        assert_int_equal(st->rtp_ok + st->rtcp_ok + st->replay + st->malformed, 0);
        /* a flipped bit with the right key also fails authentication */
        struct xg_srtp *rx2 = session(XG_SRTP_RECV, &k);
        n = make_rtp(b, 10, 0xabcdef01u, 80, false);
        assert_int_equal(xg_srtp_protect(tx, b, &n, sizeof b, NULL), 0);
        uint8_t copy[1500];
        memcpy(copy, b, n);
        b[30] ^= 0x01;
        assert_int_equal(xg_srtp_unprotect(rx2, b, &n, NULL), XG_SRTP_EAUTH);
        /* ... and a failed packet does not poison the replay window (the failed unprotect may
         * have written into its buffer: use the copy) */
        if (xg_srtp_unprotect(rx2, copy, &n, &err)) fail_msg("%s", err.msg);
        xg_srtp_session_free(rx2);
        xg_srtp_session_free(tx);
        xg_srtp_session_free(rx);
    }
}

static void test_replay(void **state)
{
    (void)state;
    for (int si = 0; si < 2; si++) {
        enum xg_srtp_suite suite = SUITES[si];
        struct xg_srtp_key k = fixed_key(suite, 40);
        struct xg_srtp *tx = session(XG_SRTP_SEND, &k), *rx = session(XG_SRTP_RECV, &k);
        struct xg_error err = {0};
        uint8_t first[1500], b[1500];
        size_t first_n = make_rtp(first, 5, 0x01020304u, 50, false);
        assert_int_equal(xg_srtp_protect(tx, first, &first_n, sizeof first, NULL), 0);
        memcpy(b, first, first_n);
        size_t n = first_n;
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, NULL), 0);
        /* the same packet again */
        memcpy(b, first, first_n);
        n = first_n;
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EREPLAY);
        assert_non_null(
            strstr(err.msg, "SRTP: replayed or too old packet (SSRC 0x01020304 seq 5)"));
        /* out of order within the window is fine; behind the 128-packet window is a replay */
        uint8_t later[8][1500];
        size_t later_n[8];
        for (int i = 0; i < 200; i++) {
            n = make_rtp(b, (uint16_t)(6 + i), 0x01020304u, 20, false);
            assert_int_equal(xg_srtp_protect(tx, b, &n, sizeof b, NULL), 0);
            if (i < 8) {
                memcpy(later[i], b, n);
                later_n[i] = n;
                continue; /* held back */
            }
            assert_int_equal(xg_srtp_unprotect(rx, b, &n, NULL), 0);
            if (i == 20) { /* seq 7 arrives late but inside the window */
                n = later_n[1];
                memcpy(b, later[1], n);
                assert_int_equal(xg_srtp_unprotect(rx, b, &n, NULL), 0);
            }
        }
        n = later_n[0]; /* seq 6: now 199 packets behind */
        memcpy(b, later[0], n);
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, NULL), XG_SRTP_EREPLAY);
        /* the sender never encrypts one index twice */
        n = make_rtp(b, 100, 0x01020304u, 20, false);
        assert_int_equal(xg_srtp_protect(tx, b, &n, sizeof b, &err), XG_SRTP_EREPLAY);
        assert_int_equal(xg_srtp_session_stats(tx)->replay, 1);
        /* SRTCP index replay */
        uint8_t c[256], c2[256];
        size_t cn = make_rtcp(c, 0x01020304u, 9);
        assert_int_equal(xg_srtp_protect_rtcp(tx, c, &cn, sizeof c, NULL), 0);
        memcpy(c2, c, cn);
        n = cn;
        assert_int_equal(xg_srtp_unprotect_rtcp(rx, c, &n, NULL), 0);
        n = cn;
        assert_int_equal(xg_srtp_unprotect_rtcp(rx, c2, &n, &err), XG_SRTP_EREPLAY);
        assert_non_null(strstr(err.msg, "SRTCP: replayed"));
        const struct xg_srtp_stats *st = xg_srtp_session_stats(rx);
        assert_int_equal(st->replay, 3);
        assert_int_equal(st->auth_fail, 0);
        assert_int_equal(st->rtp_ok, 1 + 192 + 1);
        xg_srtp_session_free(tx);
        xg_srtp_session_free(rx);
    }
}

static void test_plain_and_malformed(void **state)
{
    (void)state;
    for (int si = 0; si < 2; si++) {
        enum xg_srtp_suite suite = SUITES[si];
        struct xg_srtp_key k = fixed_key(suite, 77);
        struct xg_srtp *tx = session(XG_SRTP_SEND, &k), *rx = session(XG_SRTP_RECV, &k);
        struct xg_error err = {0};
        uint8_t b[1500];
        /* plain RTP of game-state size: no valid tag */
        size_t n = make_rtp(b, 1, 0x0badf00du, 120, false);
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EAUTH);
        /* plain RTCP: no E||index + tag */
        n = make_rtcp(b, 0x0badf00du, 1);
        int rc = xg_srtp_unprotect_rtcp(rx, b, &n, &err);
        if (rc != XG_SRTP_EAUTH) fail_msg("plain RTCP: %d %s", rc, err.msg);
        assert_non_null(strstr(err.msg, "SRTCP: authentication failed (SSRC 0x0badf00d)"));
        /* plain RTCP whose last bytes happen to have the E bit set */
        n = make_rtcp(b, 0x0badf00du, 1);
        b[n - xg_srtp_overhead(suite, true)] |= 0x80; /* E: AES_CM keeps E||index before the tag */
        b[n - 4] |= 0x80;                             /* GCM after it */
        assert_int_equal(xg_srtp_unprotect_rtcp(rx, b, &n, &err), XG_SRTP_EAUTH);
        /* too short for header + tag */
        n = 12 + xg_srtp_overhead(suite, false) - 1;
        make_rtp(b, 1, 1, 20, false);
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EMALFORMED);
        assert_non_null(strstr(err.msg, "shorter than the 12-byte RTP header"));
        n = 4;
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EMALFORMED);
        n = 0;
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EMALFORMED);
        /* a valid SRTP packet cut short by one byte: the tag no longer matches */
        n = make_rtp(b, 2, 0x0badf00du, 60, false);
        assert_int_equal(xg_srtp_protect(tx, b, &n, sizeof b, NULL), 0);
        n -= 1;
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EAUTH);
        /* cut inside the header: CSRCs / extension past the end */
        n = make_rtp(b, 3, 0x0badf00du, 0, true); /* 12 + 4 + 8 */
        assert_int_equal(xg_srtp_protect(tx, b, &n, sizeof b, NULL), 0);
        n = 20 + xg_srtp_overhead(suite, false);
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EMALFORMED);
        assert_non_null(strstr(err.msg, "runs past"));
        b[0] = 0x8f; /* 15 CSRCs */
        n = 40;
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EMALFORMED);
        /* version 1 */
        n = make_rtp(b, 4, 1, 40, false);
        b[0] = 0x40;
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, &err), XG_SRTP_EMALFORMED);
        assert_non_null(strstr(err.msg, "RTP version 1 (want 2)"));
        /* RTCP: short, wrong packet type */
        n = make_rtcp(b, 1, 1);
        size_t short_n = 8 + xg_srtp_overhead(suite, true) - 1;
        assert_int_equal(xg_srtp_unprotect_rtcp(rx, b, &short_n, &err), XG_SRTP_EMALFORMED);
        assert_non_null(strstr(err.msg, "SRTCP: "));
        b[1] = 98;
        assert_int_equal(xg_srtp_unprotect_rtcp(rx, b, &n, &err), XG_SRTP_EMALFORMED);
        assert_non_null(strstr(err.msg, "packet type 98 is not RTCP"));
        const struct xg_srtp_stats *st = xg_srtp_session_stats(rx);
        assert_int_equal(st->auth_fail, 4);
        assert_int_equal(st->malformed, 8);
        assert_int_equal(st->rtp_ok + st->rtcp_ok, 0);
        /* protect refuses non-RTP too */
        n = 8;
        assert_int_equal(xg_srtp_protect(tx, b, &n, sizeof b, &err), XG_SRTP_EMALFORMED);
        /* directions */
        n = make_rtp(b, 5, 1, 10, false);
        assert_int_equal(xg_srtp_protect(rx, b, &n, sizeof b, &err), -EINVAL);
        assert_int_equal(xg_srtp_unprotect(tx, b, &n, &err), -EINVAL);
        xg_srtp_session_free(tx);
        xg_srtp_session_free(rx);
    }
}

/* Trailer room: exactly enough works (libsrtp then runs on a scratch copy) and matches the
 * in-place result; one byte less is -EMSGSIZE with the packet untouched. */
static void test_capacity(void **state)
{
    (void)state;
    for (int si = 0; si < 2; si++) {
        enum xg_srtp_suite suite = SUITES[si];
        struct xg_srtp_key k = fixed_key(suite, 5);
        struct xg_srtp *a = session(XG_SRTP_SEND, &k), *b = session(XG_SRTP_SEND, &k);
        struct xg_error err = {0};
        for (int rtcp = 0; rtcp < 2; rtcp++) {
            uint8_t big[2048], tight[256], orig[256];
            size_t n = rtcp ? make_rtcp(big, 0x77u, 3) : make_rtp(big, 9, 0x77u, 100, false);
            size_t ov = xg_srtp_overhead(suite, rtcp);
            memcpy(tight, big, n);
            memcpy(orig, big, n);
            size_t tn = n;
            int rc = rtcp ? xg_srtp_protect_rtcp(b, tight, &tn, n + ov - 1, &err)
                          : xg_srtp_protect(b, tight, &tn, n + ov - 1, &err);
            assert_int_equal(rc, -EMSGSIZE);
            assert_non_null(strstr(err.msg, "bytes of room for the trailer"));
            assert_int_equal(tn, n);
            assert_memory_equal(tight, orig, n);
            rc = rtcp ? xg_srtp_protect_rtcp(b, tight, &tn, n + ov, &err)
                      : xg_srtp_protect(b, tight, &tn, n + ov, &err);
            if (rc) fail_msg("%s", err.msg);
            size_t bn = n;
            rc = rtcp ? xg_srtp_protect_rtcp(a, big, &bn, sizeof big, &err)
                      : xg_srtp_protect(a, big, &bn, sizeof big, &err);
            assert_int_equal(rc, 0);
            assert_int_equal(tn, n + ov);
            assert_int_equal(bn, tn);
            assert_memory_equal(big, tight, tn);
        }
        assert_int_equal(xg_srtp_session_stats(b)->no_room, 2);
        xg_srtp_session_free(a);
        xg_srtp_session_free(b);
    }
    assert_int_equal(xg_srtp_overhead(XG_SRTP_AES_CM_128_HMAC_SHA1_80, false), 10);
    assert_int_equal(xg_srtp_overhead(XG_SRTP_AES_CM_128_HMAC_SHA1_80, true), 14);
    assert_int_equal(xg_srtp_overhead(XG_SRTP_AEAD_AES_128_GCM, false), 16);
    assert_int_equal(xg_srtp_overhead(XG_SRTP_AEAD_AES_128_GCM, true), XG_SRTP_MAX_OVERHEAD);
}

static void test_session_errors_and_library(void **state)
{
    (void)state;
    struct xg_srtp *s = NULL;
    struct xg_error err = {0};
    struct xg_srtp_key k = fixed_key(XG_SRTP_AES_CM_128_HMAC_SHA1_80, 1);
    k.len = 28;
    assert_int_equal(xg_srtp_session_new(&s, XG_SRTP_SEND, &k, &err), -EINVAL);
    assert_null(s);
    /* the library comes and goes with its sessions (several cycles) */
    for (int i = 0; i < 3; i++) {
        struct xg_srtp_key g = fixed_key(XG_SRTP_AEAD_AES_128_GCM, (uint8_t)i);
        struct xg_srtp *tx = session(XG_SRTP_SEND, &g), *rx = session(XG_SRTP_RECV, &g);
        uint8_t b[256];
        size_t n = make_rtp(b, 1, 2, 30, false);
        assert_int_equal(xg_srtp_protect(tx, b, &n, sizeof b, NULL), 0);
        assert_int_equal(xg_srtp_unprotect(rx, b, &n, NULL), 0);
        xg_srtp_session_free(tx);
        xg_srtp_session_free(rx);
    }
    xg_srtp_session_free(NULL);
    assert_int_equal(xg_srtp_global_init(NULL), 0);
    xg_srtp_global_cleanup();
    xg_srtp_global_cleanup(); /* extra cleanup is harmless */
}

/* ---- the `srtp:` config ---- */

static int conf_read(const char *yaml, struct xg_srtp_conf *out, struct xg_error *err)
{
    char path[128];
    snprintf(path, sizeof path, "%s/gw.yaml", tmpdir);
    struct xg_conf *root = xg_conf_yaml_parse(yaml, strlen(yaml), path, err);
    if (!root) fail_msg("yaml: %s", err->msg);
    const struct xg_conf *a = xg_conf_get(root, "a");
    int rc = xg_srtp_conf_read(a, out, err);
    if (!rc) rc = xg_conf_check_unused(root, err);
    xg_conf_yaml_free(root);
    return rc;
}

static void test_conf(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/a.key", tmpdir);
    write_file(path, "inline:" KAT_KEY_B64 "\n", 0600);
    snprintf(path, sizeof path, "%s/b.key", tmpdir);
    write_file(path, "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd\n", 0600);
    snprintf(path, sizeof path, "%s/g.key", tmpdir);
    write_file(path, "a=crypto:1 AEAD_AES_128_GCM inline:" KAT_GCM_KEY_B64 "\n", 0644);
    struct xg_srtp_conf c;
    struct xg_error err = {0};

    assert_int_equal(conf_read("a: {}\n", &c, &err), 0);
    assert_false(c.enabled);

    /* relative paths are relative to the config file; default suite AES_CM */
    int rc = conf_read("a:\n  srtp: {key_file: a.key, remote_key_file: b.key}\n", &c, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_true(c.enabled);
    assert_int_equal(c.suite, XG_SRTP_AES_CM_128_HMAC_SHA1_80);
    assert_memory_equal(c.local.bytes, KAT_KEY, 30);
    assert_int_equal(c.remote.bytes[29], 29);
    assert_false(c.shared_key);
    assert_false(c.world_readable);
    assert_non_null(strstr(c.key_path, "/a.key"));
    xg_srtp_conf_wipe(&c);
    assert_int_equal(c.local.len, 0);

    /* the suite from the key file's a=crypto line; one key for both directions */
    rc = conf_read("a:\n  srtp:\n    key_file: g.key\n", &c, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(c.suite, XG_SRTP_AEAD_AES_128_GCM);
    assert_true(c.shared_key);
    assert_true(c.world_readable);
    assert_memory_equal(c.remote.bytes, KAT_GCM_KEY, 28);

    /* errors point at the key with file:line:col */
    rc = conf_read("a:\n  srtp:\n    suite: AES_CM_128_HMAC_SHA1_32\n    key_file: a.key\n", &c,
                   &err);
    assert_int_equal(rc, -EINVAL);
    assert_non_null(
        strstr(err.msg, "gw.yaml:3:12: srtp.suite 'AES_CM_128_HMAC_SHA1_32' is unknown"));
    rc = conf_read("a:\n  srtp:\n    suite: AEAD_AES_128_GCM\n    key_file: a.key\n", &c, &err);
    assert_int_equal(rc, -EINVAL);
    assert_non_null(strstr(err.msg, "gw.yaml:4:15: srtp.key_file: key file '"));
    assert_non_null(strstr(err.msg, "key: 30 bytes, AEAD_AES_128_GCM needs 28"));
    rc = conf_read("a:\n  srtp: {key_file: a.key, remote_key_file: g.key}\n", &c, &err);
    assert_int_equal(rc, -EINVAL);
    assert_non_null(strstr(err.msg, "srtp.remote_key_file: key file '"));
    assert_non_null(strstr(err.msg, "suite: the key is for AEAD_AES_128_GCM"));
    rc = conf_read("a:\n  srtp: {suite: AEAD_AES_128_GCM}\n", &c, &err);
    assert_int_equal(rc, -EINVAL);
    assert_non_null(strstr(err.msg, "srtp needs 'key_file:'"));
    rc = conf_read("a:\n  srtp: {key_file: nope.key}\n", &c, &err);
    assert_int_equal(rc, -ENOENT);
    assert_non_null(strstr(err.msg, "nope.key': No such file or directory"));
    rc = conf_read("a:\n  srtp: {key_file: a.key, keyfile: b.key}\n", &c, &err);
    assert_int_equal(rc, -EINVAL);
    assert_non_null(strstr(err.msg, "keyfile"));
    rc = conf_read("a:\n  srtp: yes\n", &c, &err);
    assert_int_equal(rc, -EINVAL);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/xg_srtp_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"tx.key", "a.key", "b.key", "g.key"};
    char path[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        unlink(path);
    }
    rmdir(tmpdir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_parse_forms),
        cmocka_unit_test(test_key_parse_errors),
        cmocka_unit_test(test_key_file),
        cmocka_unit_test(test_generate),
        cmocka_unit_test(test_sdp),
        cmocka_unit_test(test_known_answer_aes_cm),
        cmocka_unit_test(test_known_answer_gcm),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_cross_check_libsrtp),
        cmocka_unit_test(test_wrong_key),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_plain_and_malformed),
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_session_errors_and_library),
        cmocka_unit_test(test_conf),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
