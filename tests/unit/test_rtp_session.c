/* Unit tests for the rtp adapter's socket-free session (adapters/rtp/rtp_session.h): bytes and
 * time in, bytes (with their destination), objects and deadlines out, without sockets or a
 * reactor. A new SSRC gets a compound FIR; FIR/PLI give a full state (deduplicated, coalesced
 * within 20 ms); sequence numbers across the wrap, loss and reordering (RFC 3550 A.1, A.3); BYE;
 * the randomised RTCP interval stays within [0.5, 1.5) x T (RFC 3550 §6.3.1); SSRC collision and
 * loop handling (RFC 3550 §8.2); silence and the periodic refresh. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp.h"
#include "adapters/rtp/rtp_session.h"
#include "core/clock/clock.h"
#include "core/util/wire.h"

#define OUR_SSRC 0x01020304u
#define MS (1000000LL)
#define T0 (1000 * MS) /* session start, monotonic ns */

/* What the session did, as the fake glue saw it. */
struct sent {
    uint8_t buf[512];
    size_t len;
    bool rtcp, to_all;
    struct sockaddr_in to;
};

static struct fake {
    struct sent sent[64];
    int n_sent;
    int full_states, objects, forgets, forgets_removing, sweeps, bad[R_COUNT];
    uint32_t last_object_ssrc;
    uint64_t last_object_id;
    uint32_t changed_old, changed_new;
    int changes;
    struct sockaddr_in own; /* is_own answers true for this address */
} F;

static int f_send(void *user, uint8_t *buf, size_t len, size_t cap, bool rtcp,
                  const struct sockaddr *to, socklen_t to_len)
{
    (void)user;
    (void)cap;
    (void)to_len;
    if (F.n_sent >= 64) return -ENOBUFS;
    struct sent *s = &F.sent[F.n_sent++];
    memcpy(s->buf, buf, len);
    s->len = len;
    s->rtcp = rtcp;
    s->to_all = !to;
    if (to) memcpy(&s->to, to, sizeof s->to);
    return 0;
}

static void f_object(void *user, struct rtp_sess_ssrc *s, const struct rtp_gs_object *o,
                     int64_t recv_ns, int64_t wall_ns, const char *peer)
{
    (void)user;
    (void)recv_ns;
    (void)wall_ns;
    (void)peer;
    F.objects++;
    F.last_object_ssrc = s->ssrc;
    F.last_object_id = o->u.object1.object_id;
    s->objects++;
}

static void f_full_state(void *user, int64_t now_ns)
{
    (void)user;
    (void)now_ns;
    F.full_states++;
}

static void f_forget(void *user, struct rtp_sess_ssrc *s, bool remove_entities)
{
    (void)user;
    (void)s;
    F.forgets++;
    if (remove_entities) F.forgets_removing++;
}

static void f_sweep(void *user, struct rtp_sess_ssrc *s)
{
    (void)user;
    (void)s;
    F.sweeps++;
}

static void f_bad(void *user, const char *peer, int reason, const char *msg)
{
    (void)user;
    (void)peer;
    (void)msg;
    F.bad[reason]++;
}

static bool f_is_own(void *user, const struct sockaddr *from, socklen_t len)
{
    (void)user;
    (void)len;
    return xg_net_addr_equal(from, (const struct sockaddr *)&F.own);
}

static void f_changed(void *user, uint32_t old_ssrc, uint32_t new_ssrc)
{
    (void)user;
    F.changes++;
    F.changed_old = old_ssrc;
    F.changed_new = new_ssrc;
}

static const struct rtp_session_ops OPS = {.send = f_send,
                                           .object = f_object,
                                           .full_state = f_full_state,
                                           .forget = f_forget,
                                           .sweep = f_sweep,
                                           .bad_input = f_bad,
                                           .is_own = f_is_own,
                                           .ssrc_changed = f_changed};

static struct sockaddr_in addr(const char *ip, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

static void setup(struct rtp_session *s, int64_t refresh_ns, int64_t rtcp_ns)
{
    memset(&F, 0, sizeof F);
    F.own = addr("127.0.0.1", 5004);
    struct rtp_session_conf c = {.component = "rtp-test",
                                 .cname = "ab",
                                 .ssrc = OUR_SSRC,
                                 .pt = 98,
                                 .max_ssrcs = 4,
                                 .refresh_ns = refresh_ns,
                                 .rtcp_interval_ns = rtcp_ns,
                                 .ssrc_timeout_ns = 1000 * MS,
                                 .seq = 100,
                                 .seed = 42,
                                 .ops = &OPS};
    rtp_session_init(s, &c);
    rtp_session_start(s, T0);
}

/* An RTP packet from `ssrc` with sequence number `seq` carrying one Object1 `oid`. */
static size_t rtp_pkt(uint8_t *buf, size_t cap, uint32_t ssrc, uint16_t seq, uint64_t oid)
{
    struct xg_writer w;
    xg_writer_init(&w, buf, cap);
    struct rtp_header h = {.pt = 98, .seq = seq, .ts = 1, .ssrc = ssrc};
    assert_int_equal(rtp_write_header(&w, &h, NULL), 0);
    struct rtp_gs_object o;
    memset(&o, 0, sizeof o);
    o.type = RTP_GS_OBJECT1;
    o.tag = rtp_gs_type_tag(RTP_GS_OBJECT1);
    o.u.object1.object_id = oid;
    o.u.object1.scale = 1;
    o.u.object1.active = true;
    assert_int_equal(rtp_gs_encode_object(&w, &o, NULL), 0);
    return w.len;
}

static void feed_rtp(struct rtp_session *s, const struct sockaddr_in *from, uint32_t ssrc,
                     uint16_t seq, int64_t now)
{
    uint8_t buf[256];
    size_t n = rtp_pkt(buf, sizeof buf, ssrc, seq, seq);
    rtp_session_receive(s, buf, n, false, (const struct sockaddr *)from, sizeof *from, "peer", now);
}

static void feed_rtcp(struct rtp_session *s, const struct sockaddr_in *from, const uint8_t *buf,
                      size_t n, int64_t now)
{
    assert_true(rtp_is_rtcp(buf, n));
    rtp_session_receive(s, buf, n, true, (const struct sockaddr *)from, sizeof *from, "peer", now);
}

/* A compound RR (sender `from_ssrc`, no blocks) + a FIR for `target` with seq nr `seq`. */
static size_t rtcp_fir(uint8_t *buf, size_t cap, uint32_t from_ssrc, uint32_t target, uint8_t seq)
{
    struct xg_writer w;
    xg_writer_init(&w, buf, cap);
    struct rtcp_rr rr = {.ssrc = from_ssrc};
    struct rtcp_fir_entry e = {.ssrc = target, .seq = seq};
    assert_int_equal(rtcp_write_rr(&w, &rr, NULL), 0);
    assert_int_equal(rtcp_write_fir(&w, from_ssrc, &e, 1, NULL), 0);
    return w.len;
}

static size_t rtcp_pli(uint8_t *buf, size_t cap, uint32_t from_ssrc, uint32_t media)
{
    struct xg_writer w;
    xg_writer_init(&w, buf, cap);
    struct rtcp_rr rr = {.ssrc = from_ssrc};
    assert_int_equal(rtcp_write_rr(&w, &rr, NULL), 0);
    assert_int_equal(rtcp_write_pli(&w, from_ssrc, media, NULL), 0);
    return w.len;
}

static size_t rtcp_bye(uint8_t *buf, size_t cap, uint32_t ssrc)
{
    struct xg_writer w;
    xg_writer_init(&w, buf, cap);
    struct rtcp_rr rr = {.ssrc = ssrc};
    assert_int_equal(rtcp_write_rr(&w, &rr, NULL), 0);
    assert_int_equal(rtcp_write_bye(&w, &ssrc, 1, NULL, NULL), 0);
    return w.len;
}

/* The packet types of a compound, in order; fails on a malformed one. */
static int compound_types(const struct sent *s, uint8_t *pts, int max)
{
    struct rtcp_iter it;
    struct rtcp_packet p;
    int n = 0, rc;
    rtcp_iter_init(&it, s->buf, s->len);
    while ((rc = rtcp_iter_next(&it, &p, NULL)) == RTCP_PACKET && n < max)
        pts[n++] = p.pt;
    assert_int_equal(rc, RTCP_END);
    return n;
}

static void test_new_ssrc_gets_compound_fir(void **state)
{
    (void)state;
    struct rtp_session s;
    setup(&s, 0, 0);
    struct sockaddr_in peer = addr("127.0.0.2", 6000);
    feed_rtp(&s, &peer, 0xAABBCCDD, 7, T0 + MS);
    assert_int_equal(s.n_ssrcs, 1);
    assert_int_equal(F.objects, 1);
    assert_int_equal(F.last_object_ssrc, 0xAABBCCDD);
    assert_int_equal(F.last_object_id, 7);
    /* one compound to the sender itself: RR (we sent no RTP) + SDES CNAME + FIR */
    assert_int_equal(F.n_sent, 1);
    struct sent *f = &F.sent[0];
    assert_true(f->rtcp && !f->to_all);
    assert_true(xg_net_addr_equal((struct sockaddr *)&f->to, (struct sockaddr *)&peer));
    uint8_t pts[8];
    assert_int_equal(compound_types(f, pts, 8), 3);
    assert_int_equal(pts[0], RTCP_RR);
    assert_int_equal(pts[1], RTCP_SDES);
    assert_int_equal(pts[2], RTCP_PSFB);
    /* RR 8 + SDES 16 ("ab" + end, padded); FIR: header, our SSRC, media 0, then the entry:
     * target SSRC, seq nr 1 */
    assert_int_equal(f->len, 8 + 16 + 20);
    assert_int_equal(f->buf[24] & 0x1F, RTCP_PSFB_FIR);
    assert_int_equal(xg_load_be32(f->buf + 28), OUR_SSRC);
    assert_int_equal(xg_load_be32(f->buf + 36), 0xAABBCCDD);
    assert_int_equal(f->buf[40], 1);
    assert_int_equal(s.firs_out, 1);
    /* a second packet of the same sender: no second FIR */
    feed_rtp(&s, &peer, 0xAABBCCDD, 8, T0 + 2 * MS);
    assert_int_equal(F.n_sent, 1);
    assert_int_equal(s.packets_in, 2);
    rtp_session_free(&s);
    assert_int_equal(F.forgets, 1);
    assert_int_equal(F.forgets_removing, 0);
}

static void test_fir_pli_full_state(void **state)
{
    (void)state;
    struct rtp_session s;
    setup(&s, 0, 0);
    struct sockaddr_in peer = addr("127.0.0.2", 6000);
    uint8_t buf[128];
    size_t n = rtcp_fir(buf, sizeof buf, 0x55, OUR_SSRC, 1);
    feed_rtcp(&s, &peer, buf, n, T0 + 100 * MS);
    assert_int_equal(F.full_states, 1); /* at once */
    assert_int_equal(s.firs_in, 1);
    /* the same request again (same seq nr): a duplicate, nothing sent */
    feed_rtcp(&s, &peer, buf, n, T0 + 200 * MS);
    assert_int_equal(F.full_states, 1);
    assert_int_equal(s.firs_dup, 1);
    /* a FIR for another SSRC: not ours, not counted */
    n = rtcp_fir(buf, sizeof buf, 0x55, 0x99, 2);
    feed_rtcp(&s, &peer, buf, n, T0 + 300 * MS);
    assert_int_equal(s.firs_in, 2); /* the original and its duplicate */
    /* a new seq nr: full state at once (the last one was 200 ms ago) */
    n = rtcp_fir(buf, sizeof buf, 0x55, OUR_SSRC, 2);
    feed_rtcp(&s, &peer, buf, n, T0 + 300 * MS);
    assert_int_equal(F.full_states, 2);
    /* a PLI 5 ms later: coalesced into one deferred full state at +20 ms */
    n = rtcp_pli(buf, sizeof buf, 0x66, OUR_SSRC);
    feed_rtcp(&s, &peer, buf, n, T0 + 305 * MS);
    feed_rtcp(&s, &peer, buf, n, T0 + 306 * MS);
    assert_int_equal(s.plis_in, 2);
    assert_int_equal(F.full_states, 2);
    assert_int_equal(s.coalesced, 2);
    assert_int_equal(s.fir_due_ns, T0 + 320 * MS);
    rtp_session_tick(&s, T0 + 319 * MS);
    assert_int_equal(F.full_states, 2);
    rtp_session_tick(&s, T0 + 320 * MS);
    assert_int_equal(F.full_states, 3);
    assert_int_equal(s.fir_due_ns, 0);
    /* a PLI about another media SSRC: nothing */
    n = rtcp_pli(buf, sizeof buf, 0x66, 0x77);
    feed_rtcp(&s, &peer, buf, n, T0 + 400 * MS);
    assert_int_equal(F.full_states, 3);
    assert_int_equal(s.plis_in, 2);
    rtp_session_free(&s);
}

static void test_sequence_wrap_loss_reorder(void **state)
{
    (void)state;
    struct rtp_session s;
    setup(&s, 0, 0);
    struct sockaddr_in peer = addr("127.0.0.2", 6000);
    const uint16_t wrap[] = {65534, 65535, 0, 1};
    for (int i = 0; i < 4; i++)
        feed_rtp(&s, &peer, 0x10, wrap[i], T0 + i * MS);
    struct rtp_sess_ssrc *x = rtp_session_find(&s, 0x10);
    assert_non_null(x);
    assert_int_equal(rtp_sess_ssrc_ext_max(x), 65536u + 1);
    assert_int_equal(x->cycles, 65536u);
    assert_int_equal(rtp_sess_ssrc_lost(x), 0);
    /* 2 and 3 lost, then 3 arrives late: one reordered, one lost */
    feed_rtp(&s, &peer, 0x10, 4, T0 + 10 * MS);
    assert_int_equal(rtp_sess_ssrc_lost(x), 2);
    feed_rtp(&s, &peer, 0x10, 3, T0 + 11 * MS);
    assert_int_equal(x->reordered, 1);
    assert_int_equal(rtp_sess_ssrc_lost(x), 1);
    assert_int_equal(rtp_session_lost(&s), 1);
    assert_int_equal(rtp_session_reordered(&s), 1);
    /* every packet is still handed on (the table decides by capture time) */
    assert_int_equal(F.objects, 6);
    /* a jump of more than 3000: held until the next packet confirms it, then a resync */
    feed_rtp(&s, &peer, 0x10, 20000, T0 + 12 * MS);
    assert_int_equal(rtp_sess_ssrc_ext_max(x), 65536u + 4);
    feed_rtp(&s, &peer, 0x10, 20001, T0 + 13 * MS);
    assert_int_equal(x->resyncs, 1);
    assert_int_equal(x->max_seq, 20001);
    assert_int_equal(rtp_sess_ssrc_lost(x), 0);
    assert_int_equal(rtp_session_lost(&s), 1); /* the loss before the resync is kept */
    /* forgotten: its counts stay in the session's totals */
    rtp_session_forget(&s, x, true);
    assert_int_equal(rtp_session_lost(&s), 1);
    assert_int_equal(rtp_session_reordered(&s), 1);
    assert_int_equal(F.forgets_removing, 1);
    rtp_session_free(&s);
}

static void test_bye(void **state)
{
    (void)state;
    struct rtp_session s;
    setup(&s, 0, 0);
    struct sockaddr_in peer = addr("127.0.0.2", 6000), other = addr("127.0.0.3", 6000);
    feed_rtp(&s, &peer, 0x20, 1, T0 + MS);
    feed_rtp(&s, &peer, 0x21, 1, T0 + MS);
    assert_int_equal(s.n_ssrcs, 2);
    uint8_t buf[64];
    size_t n = rtcp_bye(buf, sizeof buf, 0x20);
    /* from another address: not that sender's BYE */
    feed_rtcp(&s, &other, buf, n, T0 + 2 * MS);
    assert_int_equal(s.n_ssrcs, 2);
    assert_int_equal(s.byes_in, 0);
    feed_rtcp(&s, &peer, buf, n, T0 + 3 * MS);
    assert_int_equal(s.n_ssrcs, 1);
    assert_int_equal(s.byes_in, 1);
    assert_int_equal(F.forgets_removing, 1);
    assert_null(rtp_session_find(&s, 0x20));
    assert_non_null(rtp_session_find(&s, 0x21));
    rtp_session_free(&s);
}

static void test_rtcp_interval_bounds(void **state)
{
    (void)state;
    struct rtp_session s;
    const int64_t T = 5000 * MS;
    setup(&s, 0, T);
    int64_t prev = T0, sum = 0, lo = INT64_MAX, hi = 0;
    const int N = 2000;
    for (int i = 0; i < N; i++) {
        int64_t due = s.rtcp_due_ns; /* next_deadline may be the sweep's, earlier */
        assert_true(rtp_session_next_deadline(&s) <= due);
        int64_t d = due - prev;
        assert_true(d >= T / 2 && d < T + T / 2);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
        sum += d;
        F.n_sent = 0;
        rtp_session_tick(&s, due - 1); /* not yet */
        assert_int_equal(F.n_sent, 0);
        rtp_session_tick(&s, due);
        assert_int_equal(F.n_sent, 1);
        /* a compound to every destination: RR + SDES before any RTP, SR + SDES after */
        uint8_t pts[4];
        assert_true(F.sent[0].to_all);
        assert_int_equal(compound_types(&F.sent[0], pts, 4), 2);
        assert_int_equal(pts[0], i == 0 ? RTCP_RR : RTCP_SR);
        assert_int_equal(pts[1], RTCP_SDES);
        if (i == 0) rtp_session_packet_done(&s, true, 10);
        prev = due;
    }
    /* spread over the whole range, mean near T */
    assert_true(lo < T / 2 + T / 20);
    assert_true(hi > T + T / 2 - T / 20);
    int64_t mean = sum / N;
    assert_true(mean > T - T / 20 && mean < T + T / 20);
    assert_int_equal(s.rtcp_out, N);
    rtp_session_free(&s);
}

static void test_report_is_sr_after_rtp(void **state)
{
    (void)state;
    struct rtp_session s;
    setup(&s, 0, 1000 * MS);
    struct rtp_header h;
    rtp_session_header(&s, T0, &h);
    assert_int_equal(h.seq, 100);
    assert_int_equal(h.ssrc, OUR_SSRC);
    assert_int_equal(h.pt, 98);
    rtp_session_packet_done(&s, true, 40);
    rtp_session_packet_done(&s, false, 40); /* not sent (SRTP): its seq nr is used all the same */
    rtp_session_header(&s, T0, &h);
    assert_int_equal(h.seq, 102);
    rtp_session_tick(&s, s.rtcp_due_ns);
    assert_int_equal(F.n_sent, 1);
    uint8_t pts[4];
    assert_int_equal(compound_types(&F.sent[0], pts, 4), 2);
    assert_int_equal(pts[0], RTCP_SR);
    assert_int_equal(xg_load_be32(F.sent[0].buf + 20), 1);  /* packet count */
    assert_int_equal(xg_load_be32(F.sent[0].buf + 24), 40); /* octet count */
    /* stop: BYE compound SR + SDES + BYE, then no deadlines */
    rtp_session_stop(&s, T0 + MS);
    assert_int_equal(F.n_sent, 2);
    assert_int_equal(compound_types(&F.sent[1], pts, 4), 3);
    assert_int_equal(pts[2], RTCP_BYE);
    assert_int_equal(xg_load_be32(F.sent[1].buf + F.sent[1].len - 4), OUR_SSRC);
    assert_int_equal(rtp_session_next_deadline(&s), 0);
    rtp_session_free(&s);
}

static void test_ssrc_collision(void **state)
{
    (void)state;
    struct rtp_session s;
    setup(&s, 0, 0);
    rtp_session_packet_done(&s, true, 10); /* we have sent RTP: the BYE is an SR compound */
    /* our own packet looped back (multicast): dropped, no collision */
    feed_rtp(&s, &F.own, OUR_SSRC, 1, T0 + MS);
    assert_int_equal(s.collisions, 0);
    assert_int_equal(s.packets_in, 0);
    assert_int_equal(F.n_sent, 0);
    /* another host with our SSRC: BYE for the old SSRC, a new random SSRC, the packet is then
     * that sender's (FIR to it) */
    struct sockaddr_in peer = addr("127.0.0.9", 5004);
    feed_rtp(&s, &peer, OUR_SSRC, 1, T0 + 2 * MS);
    assert_int_equal(s.collisions, 1);
    assert_int_equal(F.changes, 1);
    assert_int_equal(F.changed_old, OUR_SSRC);
    assert_int_not_equal(s.ssrc, OUR_SSRC);
    assert_int_equal(F.changed_new, s.ssrc);
    assert_int_equal(F.n_sent, 2);
    uint8_t pts[4];
    assert_true(F.sent[0].to_all);
    assert_int_equal(compound_types(&F.sent[0], pts, 4), 3);
    assert_int_equal(pts[0], RTCP_SR);
    assert_int_equal(pts[2], RTCP_BYE);
    assert_int_equal(xg_load_be32(F.sent[0].buf + 4), OUR_SSRC);
    assert_int_equal(xg_load_be32(F.sent[0].buf + F.sent[0].len - 4), OUR_SSRC);
    /* the FIR to the sender comes from the new SSRC, an RR (the SR counts restarted) */
    assert_false(F.sent[1].to_all);
    assert_int_equal(compound_types(&F.sent[1], pts, 4), 3);
    assert_int_equal(pts[0], RTCP_RR);
    assert_int_equal(xg_load_be32(F.sent[1].buf + 4), s.ssrc);
    assert_non_null(rtp_session_find(&s, OUR_SSRC));
    assert_int_equal(F.objects, 1);
    /* our BYE for the old SSRC and our last packet under it come back from our own socket (a
     * group we send to and joined, or our own address as a destination): ours, not the colliding
     * sender's - its SSRC stays known and nothing of ours becomes its objects */
    {
        uint8_t bye[64];
        size_t bn = rtcp_bye(bye, sizeof bye, OUR_SSRC);
        feed_rtcp(&s, &F.own, bye, bn, T0 + 2 * MS + 1);
        feed_rtp(&s, &F.own, OUR_SSRC, 2, T0 + 2 * MS + 2);
        assert_non_null(rtp_session_find(&s, OUR_SSRC));
        assert_int_equal(F.objects, 1);
        assert_int_equal(s.collisions, 1);
    }
    /* egress uses the new SSRC */
    struct rtp_header h;
    rtp_session_header(&s, T0, &h);
    assert_int_equal(h.ssrc, s.ssrc);
    /* our new SSRC coming back from that address: a loop, no second change (§8.2) */
    uint32_t now_ssrc = s.ssrc;
    feed_rtp(&s, &peer, now_ssrc, 5, T0 + 3 * MS);
    assert_int_equal(s.collisions, 1);
    assert_int_equal(s.loops, 1);
    assert_int_equal(s.ssrc, now_ssrc);
    assert_int_equal(F.n_sent, 2);
    /* RTCP with our SSRC from another, new address: a collision too */
    struct sockaddr_in peer2 = addr("127.0.0.10", 5004);
    uint8_t buf[64];
    size_t n = rtcp_bye(buf, sizeof buf, now_ssrc);
    feed_rtcp(&s, &peer2, buf, n, T0 + 4 * MS);
    assert_int_equal(s.collisions, 2);
    assert_int_not_equal(s.ssrc, now_ssrc);
    rtp_session_free(&s);
}

static void test_silence_and_refresh(void **state)
{
    (void)state;
    struct rtp_session s;
    setup(&s, 200 * MS, 0);
    struct sockaddr_in peer = addr("127.0.0.2", 6000);
    feed_rtp(&s, &peer, 0x30, 1, T0 + MS);
    /* refresh every 200 ms: the first at T0 + 200 ms */
    int64_t due = rtp_session_next_deadline(&s);
    assert_int_equal(due, T0 + 200 * MS);
    rtp_session_tick(&s, due);
    assert_int_equal(F.full_states, 1);
    assert_int_equal(s.refreshes, 1);
    assert_int_equal(F.sweeps, 0); /* the sweep (every timeout / 4 = 250 ms) is not due yet */
    assert_int_equal(rtp_session_next_deadline(&s), T0 + 250 * MS);
    rtp_session_tick(&s, T0 + 250 * MS);
    assert_int_equal(F.sweeps, 1);
    assert_int_equal(s.n_ssrcs, 1);
    /* silent for more than the 1000 ms timeout: forgotten with its entities at a sweep */
    for (int64_t t = T0 + 500 * MS; t <= T0 + 1000 * MS; t += 250 * MS)
        rtp_session_tick(&s, t);
    assert_int_equal(s.n_ssrcs, 1); /* silent 999 ms at the last sweep: kept */
    rtp_session_tick(&s, T0 + 1250 * MS);
    assert_int_equal(s.n_ssrcs, 0);
    assert_int_equal(s.ssrc_timeouts, 1);
    assert_int_equal(F.forgets_removing, 1);
    rtp_session_free(&s);
}

static void test_bad_input_and_caps(void **state)
{
    (void)state;
    struct rtp_session s;
    setup(&s, 0, 0);
    struct sockaddr_in peer = addr("127.0.0.2", 6000);
    uint8_t buf[256];
    size_t n = rtp_pkt(buf, sizeof buf, 0x40, 1, 1);
    buf[1] = 97; /* wrong payload type */
    rtp_session_receive(&s, buf, n, false, (struct sockaddr *)&peer, sizeof peer, "p", T0);
    assert_int_equal(F.bad[R_WRONG_PT], 1);
    rtp_session_receive(&s, buf, 5, false, (struct sockaddr *)&peer, sizeof peer, "p", T0);
    assert_int_equal(F.bad[R_TRUNCATED], 1);
    /* max_ssrcs (4): the fifth sender is refused */
    for (uint32_t i = 0; i < 5; i++)
        feed_rtp(&s, &peer, 0x50 + i, 1, T0 + MS);
    assert_int_equal(s.n_ssrcs, 4);
    assert_int_equal(F.bad[R_LIMIT], 1);
    /* RTCP version 1 */
    size_t m = rtcp_bye(buf, sizeof buf, 0x50);
    buf[0] = (uint8_t)((buf[0] & 0x3F) | 0x40);
    rtp_session_receive(&s, buf, m, true, (struct sockaddr *)&peer, sizeof peer, "p", T0);
    assert_int_equal(F.bad[R_VERSION], 1);
    assert_int_equal(s.n_ssrcs, 4);
    rtp_session_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_ssrc_gets_compound_fir),
        cmocka_unit_test(test_fir_pli_full_state),
        cmocka_unit_test(test_sequence_wrap_loss_reorder),
        cmocka_unit_test(test_bye),
        cmocka_unit_test(test_rtcp_interval_bounds),
        cmocka_unit_test(test_report_is_sr_after_rtp),
        cmocka_unit_test(test_ssrc_collision),
        cmocka_unit_test(test_silence_and_refresh),
        cmocka_unit_test(test_bad_input_and_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
