/* Unit tests for adapters/rtp/rtp: RTP header (RFC 3550), RTCP compound, SR/RR, SDES, BYE,
 * FIR (RFC 5104) / PLI (RFC 4585), RTP/RTCP demux (RFC 5761) and the SDP text (wire-rules §6). */
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

#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp.h"

struct buf {
    uint8_t b[2048];
    size_t n;
};

static void hex(struct buf *b, const char *s)
{
    b->n += xg_test_unhex(s, b->b + b->n, sizeof b->b - b->n);
}

static void assert_bytes(const uint8_t *got, size_t got_n, const struct buf *want)
{
    if (got_n != want->n || memcmp(got, want->b, want->n) != 0) {
        fprintf(stderr, "got  (%zu):", got_n);
        for (size_t i = 0; i < got_n; i++)
            fprintf(stderr, " %02X", got[i]);
        fprintf(stderr, "\nwant (%zu):", want->n);
        for (size_t i = 0; i < want->n; i++)
            fprintf(stderr, " %02X", want->b[i]);
        fprintf(stderr, "\n");
        fail_msg("byte mismatch");
    }
}

/* rtp_decode on a heap copy of exactly n bytes (ASan catches over-reads). */
static int decode_copy(const uint8_t *b, size_t n, struct rtp_packet *p, struct xg_error *err,
                       uint8_t **keep)
{
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, b, n);
    int rc = rtp_decode(copy, n, p, err);
    if (keep)
        *keep = copy;
    else
        free(copy);
    return rc;
}

/* ---- RTP ---- */

/* wire-rules §7.2: V2, PT 98, seq 0x1234, ts 90000, SSRC 0xDEADBEEF carrying the corrected
 * App. C Head1. */
static void test_rtp_golden_packet(void **state)
{
    (void)state;
    struct buf want = {.n = 0};
    hex(&want, "80 62 12 34 00 01 5F 90 DE AD BE EF 01 21 04 00 05 3F 8C CC CD 3E 4C CC CD 41 F0 "
               "00 00");
    for (int i = 0; i < 18; i++)
        hex(&want, "00");
    assert_int_equal(want.n, 12 + 35);

    uint8_t pkt[256];
    struct xg_writer w;
    struct xg_error err = {0};
    xg_writer_init(&w, pkt, sizeof pkt);
    struct rtp_header h = {.pt = 98, .seq = 0x1234, .ts = 90000, .ssrc = 0xDEADBEEF};
    assert_int_equal(rtp_write_header(&w, &h, &err), 0);
    struct rtp_gs_object head = {.type = RTP_GS_HEAD1};
    head.u.head1.object_id = 4;
    head.u.head1.time = 5;
    head.u.head1.loc.p[0] = 1.1f;
    head.u.head1.loc.p[1] = 0.2f;
    head.u.head1.loc.p[2] = 30.0f;
    assert_int_equal(rtp_gs_encode_object(&w, &head, &err), 0);
    assert_bytes(pkt, w.len, &want);

    struct rtp_packet p;
    assert_int_equal(decode_copy(want.b, want.n, &p, &err, NULL), 0);
    assert_int_equal(p.hdr.pt, 98);
    assert_int_equal(p.hdr.seq, 0x1234);
    assert_int_equal(p.hdr.ts, 90000);
    assert_int_equal(p.hdr.ssrc, 0xDEADBEEF);
    assert_false(p.hdr.marker);
    assert_int_equal(p.hdr.cc, 0);
    assert_int_equal(p.payload_len, 35);
    assert_false(rtp_is_rtcp(want.b, want.n));

    /* And the payload iterates to the Head1. */
    assert_int_equal(rtp_decode(want.b, want.n, &p, &err), 0);
    assert_ptr_equal(p.payload, want.b + 12);
    static struct rtp_gs_iter it;
    struct rtp_gs_object o;
    rtp_gs_iter_init(&it, p.payload, p.payload_len);
    assert_int_equal(rtp_gs_iter_next(&it, &o, &err), RTP_GS_OBJECT);
    assert_int_equal(o.type, RTP_GS_HEAD1);
    assert_true(o.u.head1.object_id == 4);
    assert_int_equal(o.u.head1.time, 5);
    assert_int_equal(rtp_gs_iter_next(&it, &o, &err), RTP_GS_END);
}

static void test_rtp_csrc_padding_extension(void **state)
{
    (void)state;
    /* V=2 P=1 X=1 CC=2, M=1 PT=98, 2 CSRCs, extension profile BEDE with 2 words, a 5-byte
     * payload, padded to a multiple of 4 (3 bytes: 00 00 03). */
    struct buf want = {.n = 0};
    hex(&want, "B2 E2 00 07 00 00 00 2A 01 02 03 04 "
               "AA AA AA AA BB BB BB BB "
               "BE DE 00 02 10 FF 00 00 20 01 02 00 "
               "0F 01 02 03 04 "
               "00 00 03");
    const uint8_t ext[8] = {0x10, 0xFF, 0x00, 0x00, 0x20, 0x01, 0x02, 0x00};
    struct rtp_header h = {.extension = true,
                           .cc = 2,
                           .marker = true,
                           .pt = 98,
                           .seq = 7,
                           .ts = 42,
                           .ssrc = 0x01020304,
                           .csrc = {0xAAAAAAAA, 0xBBBBBBBB},
                           .ext_profile = 0xBEDE,
                           .ext = {ext, sizeof ext}};
    uint8_t pkt[128];
    struct xg_writer w;
    struct xg_error err = {0};
    xg_writer_init(&w, pkt, sizeof pkt);
    assert_int_equal(rtp_write_header(&w, &h, &err), 0);
    xg_write_bytes(&w, "\x0F\x01\x02\x03\x04", 5);
    assert_int_equal(rtp_write_padding(&w, 0, 4, &err), 0);
    assert_bytes(pkt, w.len, &want);

    struct rtp_packet p;
    uint8_t *copy;
    assert_int_equal(decode_copy(want.b, want.n, &p, &err, &copy), 0);
    assert_true(p.hdr.padding);
    assert_true(p.hdr.extension);
    assert_true(p.hdr.marker);
    assert_int_equal(p.hdr.cc, 2);
    assert_int_equal(p.hdr.csrc[0], 0xAAAAAAAA);
    assert_int_equal(p.hdr.csrc[1], 0xBBBBBBBB);
    assert_int_equal(p.hdr.ext_profile, 0xBEDE);
    assert_int_equal(p.hdr.ext.len, 8);
    assert_memory_equal(p.hdr.ext.ptr, ext, 8);
    assert_int_equal(p.payload_len, 5);
    assert_memory_equal(p.payload, "\x0F\x01\x02\x03\x04", 5);
    assert_ptr_equal(p.payload, copy + 32);
    assert_int_equal(p.pad_len, 3);
    free(copy);

    /* Already aligned: no padding, P stays 0. */
    xg_writer_init(&w, pkt, sizeof pkt);
    struct rtp_header h2 = {.pt = 98};
    rtp_write_header(&w, &h2, &err);
    xg_write_zeros(&w, 4);
    assert_int_equal(rtp_write_padding(&w, 0, 4, &err), 0);
    assert_int_equal(w.len, 16);
    assert_int_equal(pkt[0], 0x80);
    /* Padding that fills the whole rest (empty payload) is valid. */
    struct buf only_pad = {.n = 0};
    hex(&only_pad, "A0 62 00 01 00 00 00 00 00 00 00 01 00 00 00 04");
    assert_int_equal(decode_copy(only_pad.b, only_pad.n, &p, &err, NULL), 0);
    assert_int_equal(p.payload_len, 0);
    assert_int_equal(p.pad_len, 4);
}

static void test_rtp_decode_rejects(void **state)
{
    (void)state;
    static const struct {
        const char *hex;
        const char *msg;
    } cases[] = {
        {"80 62 00 01 00 00 00 00 00 00 00", "RTP packet of 11 bytes is shorter than the 12-byte"},
        {"", "RTP packet of 0 bytes"},
        {"40 62 00 01 00 00 00 00 00 00 00 01", "RTP version 1 (must be 2)"},
        {"C0 62 00 01 00 00 00 00 00 00 00 01", "RTP version 3 (must be 2)"},
        {"83 62 00 01 00 00 00 00 00 00 00 01 AA AA AA AA BB BB BB BB",
         "RTP CC 3 needs 12 CSRC bytes, 8 left"},
        {"90 62 00 01 00 00 00 00 00 00 00 01 BE DE",
         "RTP header extension (X=1) needs 4 bytes, 2 left"},
        {"90 62 00 01 00 00 00 00 00 00 00 01 BE DE 00 02 01 02 03 04",
         "RTP header extension length 2 words runs past the packet (4 bytes left)"},
        {"A0 62 00 01 00 00 00 00 00 00 00 01 01 02 03 00", "RTP padding count 0 is invalid"},
        {"A0 62 00 01 00 00 00 00 00 00 00 01 01 02 03 05",
         "RTP padding count 5 is invalid (4 bytes after the header)"},
        {"B0 62 00 01 00 00 00 00 00 00 00 01 BE DE 00 01 01 02 03 04 09",
         "RTP padding count 9 is invalid (1 bytes after the header)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf b = {.n = 0};
        hex(&b, cases[i].hex);
        struct rtp_packet p;
        struct xg_error err = {0};
        assert_int_equal(decode_copy(b.b, b.n, &p, &err, NULL), -EPROTO);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
    }
}

static void test_rtp_prefixes_never_overread(void **state)
{
    (void)state;
    struct buf b = {.n = 0};
    hex(&b, "B2 E2 00 07 00 00 00 2A 01 02 03 04 AA AA AA AA BB BB BB BB BE DE 00 02 10 FF 00 00 "
            "20 01 02 00 0F 01 02 03 04 00 00 03");
    for (size_t n = 0; n <= b.n; n++) {
        struct rtp_packet p;
        int rc = decode_copy(b.b, n, &p, NULL, NULL);
        /* Prefixes end on an arbitrary "padding count": valid only if it fits. */
        if (rc == 0)
            assert_true(p.payload_len + p.pad_len + 32 == n);
        else
            assert_int_equal(rc, -EPROTO);
    }
    assert_int_equal(decode_copy(b.b, b.n, &(struct rtp_packet){0}, NULL, NULL), 0);
}

static void test_rtp_write_errors(void **state)
{
    (void)state;
    uint8_t pkt[16];
    struct xg_writer w;
    struct xg_error err = {0};
    xg_writer_init(&w, pkt, sizeof pkt);
    struct rtp_header h = {.pt = 128};
    assert_int_equal(rtp_write_header(&w, &h, &err), -EINVAL);
    assert_string_equal(err.msg, "RTP payload type 128 exceeds 127");
    h.pt = 98;
    h.cc = 16;
    assert_int_equal(rtp_write_header(&w, &h, &err), -EINVAL);
    h.cc = 2; /* 20 bytes do not fit in 16: nothing written */
    assert_int_equal(rtp_write_header(&w, &h, &err), -EMSGSIZE);
    assert_string_equal(err.msg, "RTP header does not fit in the 16 bytes left");
    assert_int_equal(w.len, 0);
    assert_int_equal(w.err, 0);
    h.cc = 0;
    h.extension = true;
    h.ext.len = 3;
    assert_int_equal(rtp_write_header(&w, &h, &err), -EINVAL);
    h.extension = false;
    assert_int_equal(rtp_write_header(&w, &h, &err), 0);
    xg_write_u8(&w, 1);
    assert_int_equal(rtp_write_padding(&w, 0, 32, &err), -EMSGSIZE);
    assert_int_equal(w.len, 13);
    assert_int_equal(rtp_write_padding(&w, 0, 0, &err), -EINVAL);
    assert_int_equal(rtp_write_padding(&w, 5, 4, &err), -EINVAL);
}

static void test_rtp_rtcp_demux(void **state)
{
    (void)state;
    const uint8_t rtp98[] = {0x80, 0x62}, rtp_m[] = {0x80, 0xE2}, fir[] = {0x84, 0xCE},
                  sr[] = {0x80, 0xC8}, lo[] = {0x80, 191}, hi[] = {0x80, 224}, b192[] = {0x80, 192},
                  b223[] = {0x80, 223};
    assert_false(rtp_is_rtcp(rtp98, 2));
    assert_false(rtp_is_rtcp(rtp_m, 2)); /* M=1 PT=98 → 226 */
    assert_true(rtp_is_rtcp(fir, 2));
    assert_true(rtp_is_rtcp(sr, 2));
    assert_false(rtp_is_rtcp(lo, 2));
    assert_false(rtp_is_rtcp(hi, 2));
    assert_true(rtp_is_rtcp(b192, 2));
    assert_true(rtp_is_rtcp(b223, 2));
    assert_false(rtp_is_rtcp(fir, 1));
}

/* ---- RTCP feedback ---- */

static void test_fir_vector(void **state)
{
    (void)state;
    struct buf want = {.n = 0};
    hex(&want, "84 CE 00 04 11 22 33 44 00 00 00 00 DE AD BE EF 01 00 00 00");
    uint8_t out[64];
    struct xg_writer w;
    struct xg_error err = {0};
    xg_writer_init(&w, out, sizeof out);
    struct rtcp_fir_entry e = {0xDEADBEEF, 1};
    assert_int_equal(rtcp_write_fir(&w, 0x11223344, &e, 1, &err), 0);
    assert_bytes(out, w.len, &want);
    assert_true(rtp_is_rtcp(out, w.len));

    struct rtcp_iter it;
    struct rtcp_packet p;
    struct rtcp_psfb fb;
    rtcp_iter_init(&it, want.b, want.n);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(p.pt, RTCP_PSFB);
    assert_int_equal(p.count, RTCP_PSFB_FIR);
    assert_int_equal(rtcp_parse_psfb(&p, &fb, &err), 0);
    assert_int_equal(fb.fmt, RTCP_PSFB_FIR);
    assert_int_equal(fb.sender_ssrc, 0x11223344);
    assert_int_equal(fb.media_ssrc, 0);
    assert_int_equal(fb.n_fir, 1);
    struct rtcp_fir_entry g = rtcp_fir_entry_at(&fb, 0);
    assert_int_equal(g.ssrc, 0xDEADBEEF);
    assert_int_equal(g.seq, 1);
    assert_int_equal(rtcp_fir_entry_at(&fb, 1).ssrc, 0); /* out of range: zero */
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_END);

    /* Two entries, seq wraps at 256: 8-byte FCI each. */
    struct rtcp_fir_entry two[2] = {{1, 255}, {2, 0}};
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rtcp_write_fir(&w, 9, two, 2, &err), 0);
    assert_int_equal(w.len, 28);
    assert_int_equal(out[3], 6);
    rtcp_iter_init(&it, out, w.len);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(rtcp_parse_psfb(&p, &fb, &err), 0);
    assert_int_equal(fb.n_fir, 2);
    assert_int_equal(rtcp_fir_entry_at(&fb, 0).seq, 255);
    assert_int_equal(rtcp_fir_entry_at(&fb, 1).ssrc, 2);
    assert_int_equal(rtcp_write_fir(&w, 9, two, 0, &err), -EINVAL);
}

static void test_pli_vector(void **state)
{
    (void)state;
    struct buf want = {.n = 0};
    hex(&want, "81 CE 00 02 11 22 33 44 DE AD BE EF");
    uint8_t out[64];
    struct xg_writer w;
    struct xg_error err = {0};
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rtcp_write_pli(&w, 0x11223344, 0xDEADBEEF, &err), 0);
    assert_bytes(out, w.len, &want);
    struct rtcp_iter it;
    struct rtcp_packet p;
    struct rtcp_psfb fb;
    rtcp_iter_init(&it, want.b, want.n);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(rtcp_parse_psfb(&p, &fb, &err), 0);
    assert_int_equal(fb.fmt, RTCP_PSFB_PLI);
    assert_int_equal(fb.sender_ssrc, 0x11223344);
    assert_int_equal(fb.media_ssrc, 0xDEADBEEF);
    assert_int_equal(fb.fci_len, 0);
    assert_int_equal(fb.n_fir, 0);
    /* Too small a writer: atomic. */
    xg_writer_init(&w, out, 11);
    assert_int_equal(rtcp_write_pli(&w, 1, 2, &err), -EMSGSIZE);
    assert_string_equal(err.msg, "RTCP PLI does not fit in the 11 bytes left");
    assert_int_equal(w.len, 0);
    assert_int_equal(w.err, 0);
}

static void test_psfb_rejects(void **state)
{
    (void)state;
    static const struct {
        const char *hex;
        const char *msg;
    } cases[] = {
        {"84 CE 00 02 11 22 33 44 00 00 00 00",
         "RTCP FIR FCI of 0 bytes is not a non-zero multiple of 8"},
        {"84 CE 00 03 11 22 33 44 00 00 00 00 DE AD BE EF", "RTCP FIR FCI of 4 bytes"},
        {"81 CE 00 01 11 22 33 44", "RTCP PSFB FMT 1 body of 4 bytes lacks the two SSRCs"},
        {"81 C9 00 01 11 22 33 44", "RTCP PT 201 is not payload-specific feedback (206)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf b = {.n = 0};
        hex(&b, cases[i].hex);
        struct rtcp_iter it;
        struct rtcp_packet p;
        struct rtcp_psfb fb;
        struct xg_error err = {0};
        rtcp_iter_init(&it, b.b, b.n);
        assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
        assert_int_equal(rtcp_parse_psfb(&p, &fb, &err), -EPROTO);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
    }
}

/* ---- SR / RR / SDES / BYE and compounds ---- */

static void test_sr_rr_exact(void **state)
{
    (void)state;
    struct rtcp_sr sr = {.ssrc = 0x01020304,
                         .ntp = 0x1122334455667788ull,
                         .rtp_ts = 90000,
                         .packet_count = 10,
                         .octet_count = 1000,
                         .n_reports = 1,
                         .reports = {{.ssrc = 0xA0B0C0D0,
                                      .fraction_lost = 0x40,
                                      .cumulative_lost = -2,
                                      .highest_seq = 0x00010005,
                                      .jitter = 90,
                                      .lsr = 0x33445566,
                                      .dlsr = 0x00010000}}};
    struct buf want = {.n = 0};
    hex(&want, "81 C8 00 0C 01 02 03 04 11 22 33 44 55 66 77 88 00 01 5F 90 00 00 00 0A 00 00 03 "
               "E8 A0 B0 C0 D0 40 FF FF FE 00 01 00 05 00 00 00 5A 33 44 55 66 00 01 00 00");
    uint8_t out[256];
    struct xg_writer w;
    struct xg_error err = {0};
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rtcp_write_sr(&w, &sr, &err), 0);
    assert_bytes(out, w.len, &want);
    struct rtcp_iter it;
    struct rtcp_packet p;
    rtcp_iter_init(&it, want.b, want.n);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    struct rtcp_sr got;
    assert_int_equal(rtcp_parse_sr(&p, &got, &err), 0);
    assert_memory_equal(&got, &sr, sizeof sr);
    struct rtcp_rr rr;
    assert_int_equal(rtcp_parse_rr(&p, &rr, &err), -EPROTO);
    assert_string_equal(err.msg, "RTCP PT 200 is not an RR (201)");

    /* Empty RR (liveness): 8 bytes. */
    struct rtcp_rr rr0 = {.ssrc = 0xCAFEBABE};
    struct buf want_rr = {.n = 0};
    hex(&want_rr, "80 C9 00 01 CA FE BA BE");
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rtcp_write_rr(&w, &rr0, &err), 0);
    assert_bytes(out, w.len, &want_rr);
    rtcp_iter_init(&it, out, w.len);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(rtcp_parse_rr(&p, &rr, &err), 0);
    assert_int_equal(rr.ssrc, 0xCAFEBABE);
    assert_int_equal(rr.n_reports, 0);

    /* RR claiming 2 blocks with one present. */
    struct buf bad = {.n = 0};
    hex(&bad, "82 C9 00 07 CA FE BA BE");
    for (int i = 0; i < 24; i++)
        hex(&bad, "00");
    rtcp_iter_init(&it, bad.b, bad.n);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(rtcp_parse_rr(&p, &rr, &err), -EPROTO);
    assert_string_equal(err.msg, "RTCP RR with RC 2 needs 52 body bytes, has 28");
    /* Cumulative loss clamps to 24-bit signed on write. */
    sr.reports[0].cumulative_lost = 0x7FFFFFFF;
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(rtcp_write_sr(&w, &sr, &err), 0);
    rtcp_iter_init(&it, out, w.len);
    rtcp_iter_next(&it, &p, &err);
    rtcp_parse_sr(&p, &got, &err);
    assert_int_equal(got.reports[0].cumulative_lost, 0x7FFFFF);
    sr.n_reports = 32;
    assert_int_equal(rtcp_write_sr(&w, &sr, &err), -EINVAL);
}

static void test_ntp(void **state)
{
    (void)state;
    assert_true(rtcp_ntp_from_wall_ns(0) == (2208988800ull << 32));
    assert_true(rtcp_ntp_from_wall_ns(1500000000LL) == ((2208988801ull << 32) | 0x80000000u));
    assert_true(rtcp_ntp_from_wall_ns(-500000000LL) == ((2208988799ull << 32) | 0x80000000u));
    assert_int_equal(rtcp_ntp_middle32(0x1122334455667788ull), 0x33445566);
}

static void test_sdes_bye_compound(void **state)
{
    (void)state;
    uint8_t out[512];
    struct xg_writer w;
    struct xg_error err = {0};
    xg_writer_init(&w, out, sizeof out);
    struct rtcp_rr rr = {.ssrc = 0x11111111};
    assert_int_equal(rtcp_write_rr(&w, &rr, &err), 0);
    size_t sdes_at = w.len;
    assert_int_equal(rtcp_write_sdes_cname(&w, 0x11111111, "xrgate@lab", &err), 0);
    /* 4 hdr + 4 SSRC + 2 + 10 + END = 21 → padded to 24 */
    struct buf want_sdes = {.n = 0};
    hex(&want_sdes, "81 CA 00 05 11 11 11 11 01 0A 78 72 67 61 74 65 40 6C 61 62 00 00 00 00");
    assert_bytes(out + sdes_at, w.len - sdes_at, &want_sdes);
    assert_int_equal(rtcp_write_pli(&w, 0x11111111, 0x22222222, &err), 0);
    uint32_t gone[2] = {0x11111111, 0x33333333};
    size_t bye_at = w.len;
    assert_int_equal(rtcp_write_bye(&w, gone, 2, "shutdown", &err), 0);
    struct buf want_bye = {.n = 0};
    hex(&want_bye, "82 CB 00 05 11 11 11 11 33 33 33 33 08 73 68 75 74 64 6F 77 6E 00 00 00");
    assert_bytes(out + bye_at, w.len - bye_at, &want_bye);

    uint8_t *copy = malloc(w.len);
    memcpy(copy, out, w.len);
    struct rtcp_iter it;
    struct rtcp_packet p;
    rtcp_iter_init(&it, copy, w.len);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(p.pt, RTCP_RR);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(p.pt, RTCP_SDES);
    struct rtcp_sdes_cname cn[2];
    size_t n;
    assert_int_equal(rtcp_parse_sdes(&p, cn, 2, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(cn[0].ssrc, 0x11111111);
    assert_int_equal(cn[0].len, 10);
    assert_memory_equal(cn[0].cname, "xrgate@lab", 10);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    struct rtcp_psfb fb;
    assert_int_equal(rtcp_parse_psfb(&p, &fb, &err), 0);
    assert_int_equal(fb.fmt, RTCP_PSFB_PLI);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    struct rtcp_bye bye;
    assert_int_equal(rtcp_parse_bye(&p, &bye, &err), 0);
    assert_int_equal(bye.n_ssrc, 2);
    assert_int_equal(bye.ssrc[1], 0x33333333);
    assert_int_equal(bye.reason_len, 8);
    assert_memory_equal(bye.reason, "shutdown", 8);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_END);
    free(copy);

    /* SDES with two chunks: a NAME item before CNAME, and a chunk with no CNAME. */
    struct buf two = {.n = 0};
    hex(&two, "82 CA 00 05 "
              "00 00 00 01 02 01 41 01 02 62 63 00 "
              "00 00 00 02 00 00 00 00");
    rtcp_iter_init(&it, two.b, two.n);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(rtcp_parse_sdes(&p, cn, 2, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(cn[0].ssrc, 1);
    assert_int_equal(cn[0].len, 2);
    assert_memory_equal(cn[0].cname, "bc", 2);
    assert_int_equal(cn[1].ssrc, 2);
    assert_int_equal(cn[1].len, 0);
    assert_int_equal(rtcp_parse_sdes(&p, cn, 1, &n, &err), 0); /* cap 1: one stored */
    assert_int_equal(n, 1);
    /* Item length past the body. */
    struct buf bad = {.n = 0};
    hex(&bad, "81 CA 00 02 00 00 00 01 01 09 41 00");
    rtcp_iter_init(&it, bad.b, bad.n);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(rtcp_parse_sdes(&p, cn, 2, &n, &err), -EPROTO);
    assert_string_equal(err.msg, "RTCP SDES chunk 0: item 1 length 9 runs past the end (2 left)");
    /* BYE with a reason running past the end; write limits. */
    struct buf bbye = {.n = 0};
    hex(&bbye, "81 CB 00 02 00 00 00 01 09 41 42 43");
    rtcp_iter_init(&it, bbye.b, bbye.n);
    assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
    assert_int_equal(rtcp_parse_bye(&p, &bye, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "reason length 9"));
    assert_int_equal(rtcp_write_bye(&w, gone, 0, NULL, &err), -EINVAL);
    assert_int_equal(rtcp_write_sdes_cname(&w, 1, "", &err), -EINVAL);
}

static void test_rtcp_compound_rejects(void **state)
{
    (void)state;
    static const struct {
        const char *hex;
        int good_before;
        const char *msg;
    } cases[] = {
        {"80 C9 00", 0, "RTCP compound offset 0: 3 bytes left, fewer than a 4-byte header"},
        {"40 C9 00 01 00 00 00 01", 0, "RTCP version 1 (must be 2)"},
        {"80 C9 00 02 00 00 00 01", 0,
         "RTCP PT 201 length 2 words runs past the end (4 bytes left)"},
        {"A0 C9 00 02 00 00 00 01 00 00 00 04 80 C9 00 01 00 00 00 01", 0,
         "RTCP PT 201 has padding but is not the last packet"},
        {"80 C9 00 01 00 00 00 01 A0 C9 00 02 00 00 00 01 00 00 00 09", 1,
         "RTCP compound offset 8: RTCP PT 201 padding count 9 is invalid (body 8 bytes)"},
        {"80 C9 00 01 00 00 00 01 A0 C9 00 00", 1, "padding count 0 is invalid (body 0 bytes)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct buf b = {.n = 0};
        hex(&b, cases[i].hex);
        uint8_t *copy = malloc(b.n);
        memcpy(copy, b.b, b.n);
        struct rtcp_iter it;
        struct rtcp_packet p;
        struct xg_error err = {0};
        rtcp_iter_init(&it, copy, b.n);
        for (int k = 0; k < cases[i].good_before; k++)
            assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_PACKET);
        assert_int_equal(rtcp_iter_next(&it, &p, &err), -EPROTO);
        if (!strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        assert_int_equal(rtcp_iter_next(&it, &p, &err), RTCP_END);
        free(copy);
    }
    /* Valid trailing padding on the last packet is stripped from its body. */
    struct buf ok = {.n = 0};
    hex(&ok, "A0 C9 00 02 00 00 00 07 00 00 00 04");
    struct rtcp_iter it;
    struct rtcp_packet p;
    struct rtcp_rr rr;
    rtcp_iter_init(&it, ok.b, ok.n);
    assert_int_equal(rtcp_iter_next(&it, &p, NULL), RTCP_PACKET);
    assert_true(p.padding);
    assert_int_equal(p.body_len, 4);
    assert_int_equal(rtcp_parse_rr(&p, &rr, NULL), 0);
    assert_int_equal(rr.ssrc, 7);
}

/* Every prefix of a compound: never reads past the end. */
static void test_rtcp_prefixes(void **state)
{
    (void)state;
    uint8_t out[256];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    struct rtcp_sr sr = {.ssrc = 1, .n_reports = 1};
    rtcp_write_sr(&w, &sr, NULL);
    rtcp_write_sdes_cname(&w, 1, "a@b", NULL);
    struct rtcp_fir_entry e = {2, 3};
    rtcp_write_fir(&w, 1, &e, 1, NULL);
    for (size_t n = 0; n <= w.len; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, out, n);
        struct rtcp_iter it;
        struct rtcp_packet p;
        rtcp_iter_init(&it, copy, n);
        int rc, packets = 0;
        while ((rc = rtcp_iter_next(&it, &p, NULL)) == RTCP_PACKET) {
            packets++;
            struct rtcp_sr s;
            struct rtcp_psfb fb;
            struct rtcp_sdes_cname cn[1];
            size_t k;
            if (p.pt == RTCP_SR) assert_int_equal(rtcp_parse_sr(&p, &s, NULL), 0);
            if (p.pt == RTCP_PSFB) assert_int_equal(rtcp_parse_psfb(&p, &fb, NULL), 0);
            if (p.pt == RTCP_SDES) assert_int_equal(rtcp_parse_sdes(&p, cn, 1, &k, NULL), 0);
        }
        if (n == w.len) {
            assert_int_equal(rc, RTCP_END);
            assert_int_equal(packets, 3);
        } else {
            assert_true(rc == -EPROTO || rc == RTCP_END);
        }
        free(copy);
    }
}

/* ---- SDP ---- */

static void test_sdp(void **state)
{
    (void)state;
    char sdp[1024];
    size_t len;
    struct xg_error err = {0};
    struct rtp_sdp_params p = {.session_name = "xrgate headsets",
                               .session_id = 1234,
                               .origin_addr = "192.0.2.10",
                               .conn_addr = "239.1.2.3",
                               .ttl = 4,
                               .port = 49170,
                               .pt = 98,
                               .pli = true,
                               .cname = "xrgate@lab-a",
                               .ssrc = 0xDEADBEEF};
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &p, &len, &err), 0);
    const char *want = "v=0\r\n"
                       "o=- 1234 1234 IN IP4 192.0.2.10\r\n"
                       "s=xrgate headsets\r\n"
                       "c=IN IP4 239.1.2.3/4\r\n"
                       "t=0 0\r\n"
                       "m=application 49170 RTP/AVPF 98\r\n"
                       "a=rtpmap:98 gamestate/90000\r\n"
                       "a=rtcp-mux\r\n"
                       "a=rtcp-fb:98 ccm fir\r\n"
                       "a=rtcp-fb:98 nack pli\r\n"
                       "a=ssrc:3735928559 cname:xrgate@lab-a\r\n"
                       "a=sendrecv\r\n";
    assert_string_equal(sdp, want);
    assert_int_equal(len, strlen(want));

    /* Exact capacity works, one byte less is -EMSGSIZE. */
    char *tight = malloc(len + 1);
    assert_int_equal(rtp_sdp_write(tight, len + 1, &p, NULL, &err), 0);
    assert_string_equal(tight, want);
    assert_int_equal(rtp_sdp_write(tight, len, &p, &len, &err), -EMSGSIZE);
    assert_int_equal(len, 0);
    assert_string_equal(tight, "");
    free(tight);

    /* Plain RTP/AVP (the draft's example) has no rtcp-fb; unicast IPv6 has no TTL. */
    struct rtp_sdp_params q = {.session_id = 1,
                               .conn_addr = "2001:db8::1",
                               .port = 5004,
                               .pt = 127,
                               .avp = true,
                               .pli = true,
                               .direction = "sendonly"};
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), 0);
    assert_string_equal(sdp, "v=0\r\n"
                             "o=- 1 1 IN IP6 2001:db8::1\r\n"
                             "s=xrgate\r\n"
                             "c=IN IP6 2001:db8::1\r\n"
                             "t=0 0\r\n"
                             "m=application 5004 RTP/AVP 127\r\n"
                             "a=rtpmap:127 gamestate/90000\r\n"
                             "a=rtcp-mux\r\n"
                             "a=sendonly\r\n");
    /* Unicast IPv4, default multicast TTL. */
    q = (struct rtp_sdp_params){.conn_addr = "10.0.0.1", .port = 1, .pt = 96};
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), 0);
    assert_non_null(strstr(sdp, "\r\nc=IN IP4 10.0.0.1\r\n"));
    assert_non_null(strstr(sdp, "a=rtcp-fb:96 ccm fir\r\n"));
    assert_null(strstr(sdp, "nack pli"));
    q.conn_addr = "224.0.0.251";
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), 0);
    assert_non_null(strstr(sdp, "c=IN IP4 224.0.0.251/16\r\n"));

    /* Rejections. */
    q.pt = 95;
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), -EINVAL);
    assert_string_equal(err.msg, "SDP payload type 95 is not dynamic (96..127)");
    q.pt = 128;
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), -EINVAL);
    q.pt = 98;
    q.port = 0;
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), -EINVAL);
    q.port = 9;
    q.session_name = "evil\r\na=inject";
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), -EINVAL);
    q.session_name = NULL;
    q.conn_addr = "1.2.3.4 5";
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), -EINVAL);
    q.conn_addr = NULL;
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), -EINVAL);
    assert_string_equal(err.msg, "SDP connection address '(null)' is missing or invalid");
    q.conn_addr = "1.2.3.4";
    q.direction = "both";
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), -EINVAL);
    q.direction = NULL;
    q.cname = "a b";
    assert_int_equal(rtp_sdp_write(sdp, sizeof sdp, &q, &len, &err), -EINVAL);
}

/* tests/vectors/rtp/rtp_*.bin and rtcp_*.bin decode completely, and the builders reproduce them. */
static bool read_vector(const char *name, struct buf *b)
{
    return xg_test_read_vector("rtp", name, b->b, sizeof b->b, &b->n);
}

static void test_vector_files(void **state)
{
    (void)state;
    struct buf b = {.n = 0};
    struct rtp_packet p;
    struct xg_error err = {0};
    assert_true(read_vector("rtp_appc_corrected", &b));
    assert_int_equal(rtp_decode(b.b, b.n, &p, &err), 0);
    assert_int_equal(p.hdr.ssrc, 0xDEADBEEF);
    assert_int_equal(p.payload_len, 35);
    assert_true(read_vector("rtp_csrc_ext_padding", &b));
    assert_int_equal(rtp_decode(b.b, b.n, &p, &err), 0);
    assert_int_equal(p.hdr.cc, 2);
    assert_int_equal(p.pad_len, 3);

    uint8_t out[256];
    struct xg_writer w;
    struct rtcp_iter it;
    struct rtcp_packet rp;
    assert_true(read_vector("rtcp_fir", &b));
    xg_writer_init(&w, out, sizeof out);
    rtcp_write_fir(&w, 0x11223344, &(struct rtcp_fir_entry){0xDEADBEEF, 1}, 1, &err);
    assert_bytes(out, w.len, &b);
    assert_true(read_vector("rtcp_pli", &b));
    xg_writer_init(&w, out, sizeof out);
    rtcp_write_pli(&w, 0x11223344, 0xDEADBEEF, &err);
    assert_bytes(out, w.len, &b);
    static const struct {
        const char *name;
        int packets;
    } compounds[] = {{"rtcp_sr", 1}, {"rtcp_rr_sdes_bye", 3}, {"rtcp_fir", 1}, {"rtcp_pli", 1}};
    for (size_t i = 0; i < 4; i++) {
        assert_true(read_vector(compounds[i].name, &b));
        assert_true(rtp_is_rtcp(b.b, b.n));
        rtcp_iter_init(&it, b.b, b.n);
        int n = 0, rc;
        while ((rc = rtcp_iter_next(&it, &rp, &err)) == RTCP_PACKET)
            n++;
        assert_int_equal(rc, RTCP_END);
        assert_int_equal(n, compounds[i].packets);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rtp_golden_packet),
        cmocka_unit_test(test_rtp_csrc_padding_extension),
        cmocka_unit_test(test_rtp_decode_rejects),
        cmocka_unit_test(test_rtp_prefixes_never_overread),
        cmocka_unit_test(test_rtp_write_errors),
        cmocka_unit_test(test_rtp_rtcp_demux),
        cmocka_unit_test(test_fir_vector),
        cmocka_unit_test(test_pli_vector),
        cmocka_unit_test(test_psfb_rejects),
        cmocka_unit_test(test_sr_rr_exact),
        cmocka_unit_test(test_ntp),
        cmocka_unit_test(test_sdes_bye_compound),
        cmocka_unit_test(test_rtcp_compound_rejects),
        cmocka_unit_test(test_rtcp_prefixes),
        cmocka_unit_test(test_sdp),
        cmocka_unit_test(test_vector_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
