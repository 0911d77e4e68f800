/* libFuzzer target for the RTP game-state codec (adapters/rtp/gamestate_*.c, rtp.c).
 *
 * The input is tried as (1) an RTP packet whose payload is walked object by object, (2) a bare
 * game-state payload, and (3) an RTCP compound with every packet parsed. Every object that
 * decodes must re-encode, the re-encoded bytes must decode to the same type, and encoding that
 * again must give the same bytes (encode ∘ decode is idempotent after one normalisation: minimal
 * VarUInts, canonical NaN, Length-exact sub-TLVs). (4) The input is also handed to the socket-free
 * session (adapters/rtp/rtp_session.h) as a datagram from one of two peers, once with our SSRC
 * patched in (collision path), and the session's bounds are checked after each: senders within
 * max_ssrcs, every packet sent by it a valid compound RTCP within its buffer.
 *
 * Seeds: tests/vectors/rtp/ (golden vectors as .bin). Build command below. */
// From the repository root (the codec files of adapters/rtp are needed; the -l flags are there
// only because core/ links libevent and mbedtls):
//   clang -fsanitize=fuzzer,address -I. tests/fuzz/fuzz_rtp.c adapters/rtp/gamestate_*.c
//     adapters/rtp/rtp.c core/*/*.c -lm $(pkg-config --libs libevent_core libevent_extra)
//     -lmbedtls -lmbedx509 -lmbedcrypto
//   ./a.out -max_total_time=60 corpus/   (corpus/ seeded with a copy of tests/vectors/rtp/)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp.h"
#include "adapters/rtp/rtp_session.h"

static struct rtp_gs_iter it_a, it_b;
static uint8_t enc1[1 << 16], enc2[1 << 16];

static void check_object(const struct rtp_gs_object *o)
{
    if (o->type == RTP_GS_UNKNOWN) return;
    struct xg_writer w;
    struct xg_error err = {0};
    xg_writer_init(&w, enc1, sizeof enc1);
    if (rtp_gs_encode_object(&w, o, &err) != 0) abort(); /* whatever decodes must encode */
    size_t n1 = w.len;
    struct rtp_gs_object d;
    if (rtp_gs_decode_one(&it_b, enc1, n1, &d, &err) != 0 || d.type != o->type || d.gse_tag)
        abort();
    xg_writer_init(&w, enc2, sizeof enc2);
    if (rtp_gs_encode_object(&w, &d, &err) != 0) abort();
    if (w.len != n1 || memcmp(enc1, enc2, n1) != 0) abort();
}

static void walk_payload(const uint8_t *p, size_t n)
{
    struct rtp_gs_object o;
    struct xg_error err;
    rtp_gs_iter_init(&it_a, p, n);
    int rc;
    size_t guard = 0;
    while ((rc = rtp_gs_iter_next(&it_a, &o, &err)) != RTP_GS_END) {
        if (rc == RTP_GS_OBJECT)
            check_object(&o);
        else if (rc != -EPROTO && rc != -EBADMSG)
            abort();
        if (++guard > n + 1) /* every step consumes at least one byte */
            abort();
    }
}

static void walk_rtcp(const uint8_t *p, size_t n)
{
    struct rtcp_iter it;
    struct rtcp_packet pkt;
    rtcp_iter_init(&it, p, n);
    while (rtcp_iter_next(&it, &pkt, NULL) == RTCP_PACKET) {
        if (pkt.body_len > n) abort();
        switch (pkt.pt) {
        case RTCP_SR: {
            struct rtcp_sr sr;
            rtcp_parse_sr(&pkt, &sr, NULL);
            break;
        }
        case RTCP_RR: {
            struct rtcp_rr rr;
            rtcp_parse_rr(&pkt, &rr, NULL);
            break;
        }
        case RTCP_SDES: {
            struct rtcp_sdes_cname cn[4];
            size_t k;
            rtcp_parse_sdes(&pkt, cn, 4, &k, NULL);
            break;
        }
        case RTCP_BYE: {
            struct rtcp_bye bye;
            rtcp_parse_bye(&pkt, &bye, NULL);
            break;
        }
        case RTCP_PSFB: {
            struct rtcp_psfb fb;
            if (rtcp_parse_psfb(&pkt, &fb, NULL) == 0)
                for (size_t i = 0; i < fb.n_fir; i++)
                    (void)rtcp_fir_entry_at(&fb, i);
            break;
        }
        default:
            break;
        }
    }
}

/* ---- (4) the session ---- */

static int sess_send(void *user, uint8_t *buf, size_t len, size_t cap, bool rtcp,
                     const struct sockaddr *to, socklen_t to_len)
{
    (void)user;
    (void)to;
    (void)to_len;
    if (!rtcp || len > cap || !rtp_is_rtcp(buf, len)) abort();
    struct rtcp_iter it;
    struct rtcp_packet p;
    int rc, n = 0;
    rtcp_iter_init(&it, buf, len);
    while ((rc = rtcp_iter_next(&it, &p, NULL)) == RTCP_PACKET)
        n++;
    if (rc != RTCP_END || n < 2) abort(); /* a compound: report + SDES at least */
    return 0;
}

static void sess_full(void *user, int64_t now)
{
    (void)user;
    (void)now;
}

static const struct rtp_session_ops SESS_OPS = {.send = sess_send, .full_state = sess_full};

static void session_input(const uint8_t *data, size_t size)
{
    static struct rtp_session s;
    static bool init;
    static int64_t now = 1000000000;
    static uint8_t buf[1 << 16];
    if (!init) {
        struct rtp_session_conf c = {.component = "fuzz",
                                     .cname = "fuzz",
                                     .ssrc = 0x01020304,
                                     .pt = 98,
                                     .max_ssrcs = 8,
                                     .refresh_ns = 200000000,
                                     .rtcp_interval_ns = 50000000,
                                     .ssrc_timeout_ns = 500000000,
                                     .seed = 1,
                                     .ops = &SESS_OPS};
        rtp_session_init(&s, &c);
        rtp_session_start(&s, now);
        init = true;
    }
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_port = htons(5004)};
    from.sin_addr.s_addr = htonl(0x7F000002u + (size ? data[0] & 1u : 0u));
    if (size > sizeof buf) size = sizeof buf;
    memcpy(buf, data, size);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) { /* our SSRC where RTP (offset 8) or RTCP (offset 4) carries one */
            size_t at = rtp_is_rtcp(buf, size) ? 4 : 8;
            if (size < at + 4) break;
            uint32_t v = htonl(s.ssrc);
            memcpy(buf + at, &v, 4);
        }
        now += 7000000; /* 7 ms per datagram: deadlines come due as the corpus runs */
        rtp_session_receive(&s, buf, size, rtp_is_rtcp(buf, size), (struct sockaddr *)&from,
                            sizeof from, "fuzz", now);
        while (rtp_session_next_deadline(&s) && rtp_session_next_deadline(&s) <= now)
            rtp_session_tick(&s, now);
        if (s.n_ssrcs > 8) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    session_input(data, size);
    if (rtp_is_rtcp(data, size)) {
        walk_rtcp(data, size);
    } else {
        struct rtp_packet pkt;
        if (rtp_decode(data, size, &pkt, NULL) == 0) {
            if (pkt.payload < data || pkt.payload + pkt.payload_len > data + size) abort();
            walk_payload(pkt.payload, pkt.payload_len);
        }
    }
    walk_payload(data, size);
    return 0;
}
