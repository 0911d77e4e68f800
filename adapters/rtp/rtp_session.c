/* The rtp adapter's socket-free RTP/RTCP session (rtp_session.h). */
#include "adapters/rtp/rtp_session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/rtp/rtcp_out.h"
#include "adapters/rtp/srtp_session.h"
#include "core/clock/clock.h"
#include "core/util/wire.h"

#define SEQ_MOD 65536u
#define MAX_DROPOUT 3000u /* RFC 3550 A.1 */
#define MAX_MISORDER 100u

static void bad(struct rtp_session *s, const char *peer, int reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void bad(struct rtp_session *s, const char *peer, int reason, const char *fmt, ...)
{
    if (s->conf.ops->bad_admit && !s->conf.ops->bad_admit(s->conf.user, reason))
        return; /* counted; not formatted: the rate limiter holds the line back */
    char msg[XG_ERROR_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (s->conf.ops->bad_input) s->conf.ops->bad_input(s->conf.user, peer, reason, msg);
}

void rtp_session_init(struct rtp_session *s, const struct rtp_session_conf *conf)
{
    memset(s, 0, sizeof *s);
    s->conf = *conf;
    s->ssrc = conf->ssrc;
    s->seq = conf->seq;
    s->rng = conf->seed ? conf->seed : UINT64_C(0x9E3779B97F4A7C15);
}

static void schedule_rtcp(struct rtp_session *s, int64_t now_ns)
{
    s->rtcp_due_ns = s->conf.rtcp_interval_ns > 0
                         ? now_ns + rtcp_interval_ns(s->conf.rtcp_interval_ns, rtcp_rand32(&s->rng))
                         : 0;
}

static int64_t sweep_period(const struct rtp_session *s)
{
    int64_t p = s->conf.ssrc_timeout_ns / 4;
    return p > 0 ? p : XG_NS_PER_MS;
}

void rtp_session_start(struct rtp_session *s, int64_t now_ns)
{
    s->started = true;
    schedule_rtcp(s, now_ns);
    s->refresh_due_ns = s->conf.refresh_ns > 0 ? now_ns + s->conf.refresh_ns : 0;
    s->sweep_due_ns = now_ns + sweep_period(s);
    s->fir_due_ns = 0;
}

/* Who we are for the SR/RR + SDES that open every compound (rtcp_out.h), as of now. */
static struct rtcp_self me_at(const struct rtp_session *s, int64_t now_ns)
{
    return (struct rtcp_self){.ssrc = s->ssrc,
                              .sender = s->packets_out > 0,
                              .ntp = rtcp_ntp_from_wall_ns(xg_clock_mono_to_wall_ns(now_ns)),
                              .rtp_ts = xg_ns_to_rtp90k(now_ns) + s->conf.ts_offset,
                              .packet_count = (uint32_t)s->packets_out,
                              .octet_count = (uint32_t)s->payload_octets_out,
                              .cname = s->conf.cname};
}

static int send_bye(struct rtp_session *s, int64_t now_ns)
{
    uint8_t buf[512];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf - XG_SRTP_MAX_OVERHEAD);
    struct rtcp_self me = me_at(s, now_ns);
    int rc = rtcp_write_compound_bye(&w, &me, NULL, NULL); /* RFC 3550 §6.1: compound */
    if (rc) return rc;
    return s->conf.ops->send(s->conf.user, buf, w.len, sizeof buf, true, NULL, 0);
}

void rtp_session_stop(struct rtp_session *s, int64_t now_ns)
{
    if (s->started && s->packets_out) send_bye(s, now_ns);
    s->started = false;
    s->rtcp_due_ns = s->refresh_due_ns = s->sweep_due_ns = s->fir_due_ns = 0;
}

struct rtp_sess_ssrc *rtp_session_find(const struct rtp_session *s, uint32_t ssrc)
{
    for (struct rtp_sess_ssrc *x = s->ssrcs; x; x = x->next)
        if (x->ssrc == ssrc) return x;
    return NULL;
}

uint32_t rtp_sess_ssrc_ext_max(const struct rtp_sess_ssrc *x)
{
    return x->cycles + x->max_seq;
}

uint64_t rtp_sess_ssrc_lost(const struct rtp_sess_ssrc *x)
{
    int64_t expected = (int64_t)rtp_sess_ssrc_ext_max(x) - (int64_t)x->base_seq + 1;
    int64_t lost = expected - (int64_t)x->received;
    return lost > 0 ? (uint64_t)lost : 0;
}

uint64_t rtp_session_lost(const struct rtp_session *s)
{
    uint64_t n = s->retired_lost;
    for (const struct rtp_sess_ssrc *x = s->ssrcs; x; x = x->next)
        n += rtp_sess_ssrc_lost(x);
    return n;
}

uint64_t rtp_session_reordered(const struct rtp_session *s)
{
    uint64_t n = s->retired_reordered;
    for (const struct rtp_sess_ssrc *x = s->ssrcs; x; x = x->next)
        n += x->reordered;
    return n;
}

void rtp_session_forget(struct rtp_session *s, struct rtp_sess_ssrc *x, bool remove_entities)
{
    for (struct rtp_sess_ssrc **pp = &s->ssrcs; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            break;
        }
    s->retired_lost += rtp_sess_ssrc_lost(x);
    s->retired_reordered += x->reordered;
    if (s->conf.ops->forget) s->conf.ops->forget(s->conf.user, x, remove_entities);
    s->n_ssrcs--;
    free(x);
}

void rtp_session_free(struct rtp_session *s)
{
    while (s->ssrcs)
        rtp_session_forget(s, s->ssrcs, false);
}

/* ---- sequence accounting (RFC 3550 A.1, without the probation of new sources: the first
 * packet is accepted, as every packet is handed on) ---- */

static void seq_init(struct rtp_sess_ssrc *x, uint16_t seq)
{
    x->base_seq = seq;
    x->max_seq = seq;
    x->bad_seq = SEQ_MOD + 1; /* so seq == bad_seq is false */
    x->cycles = 0;
    x->received = 0;
}

static void seq_update(struct rtp_session *s, struct rtp_sess_ssrc *x, uint16_t seq)
{
    uint16_t udelta = (uint16_t)(seq - x->max_seq);
    if (udelta < MAX_DROPOUT) {
        if (seq < x->max_seq) x->cycles += SEQ_MOD; /* wrapped */
        x->max_seq = seq;
    } else if (udelta <= SEQ_MOD - MAX_MISORDER) {
        /* a large jump: the sender restarted, or a stray packet; resync when the next one
         * follows it */
        if (seq != x->bad_seq) {
            x->bad_seq = (seq + 1u) & (SEQ_MOD - 1);
            return;
        }
        s->retired_lost += rtp_sess_ssrc_lost(x);
        seq_init(x, seq);
        x->resyncs++;
    } else {
        x->reordered++; /* older than the highest seen: late (or a duplicate of a late one) */
    }
    x->received++;
}

/* ---- our own SSRC seen from elsewhere (RFC 3550 §8.2) ---- */

static bool conflict_known(const struct rtp_session *s, const struct sockaddr *from)
{
    for (int i = 0; i < s->n_conflicts; i++)
        if (xg_net_addr_equal((const struct sockaddr *)&s->conflicts[i], from)) return true;
    return false;
}

/* A packet from our own socket carrying one of our earlier SSRCs (sent before a collision changed
 * it, or our BYE for it, looped back): our own, dropped. From anywhere else that SSRC is the
 * colliding sender's. */
static bool own_earlier_ssrc(const struct rtp_session *s, const struct sockaddr *from,
                             socklen_t from_len, uint32_t ssrc)
{
    for (int i = 0; i < s->n_prev_ssrc; i++)
        if (s->prev_ssrc[i] == ssrc)
            return s->conf.ops->is_own && s->conf.ops->is_own(s->conf.user, from, from_len);
    return false;
}

/* A packet carries our SSRC: true when it is to be dropped (our own, looped back); false after a
 * collision was resolved by a new SSRC (the packet is then another sender's). */
static bool own_ssrc_seen(struct rtp_session *s, const struct sockaddr *from, socklen_t from_len,
                          uint32_t their_ssrc, const char *peer, int64_t now_ns)
{
    if (s->conf.ops->is_own && s->conf.ops->is_own(s->conf.user, from, from_len)) return true;
    if (conflict_known(s, from)) {
        s->loops++; /* our traffic coming back through a third party: no new change */
        return true;
    }
    struct sockaddr_storage *c = &s->conflicts[s->conflict_next];
    memset(c, 0, sizeof *c);
    memcpy(c, from, from_len <= sizeof *c ? from_len : sizeof *c);
    s->conflict_next = (s->conflict_next + 1) % RTP_SESS_CONFLICTS;
    if (s->n_conflicts < RTP_SESS_CONFLICTS) s->n_conflicts++;
    s->collisions++;
    uint32_t old = s->ssrc;
    if (s->packets_out || s->rtcp_out || s->firs_out) send_bye(s, now_ns);
    uint32_t n;
    do
        n = rtcp_rand32(&s->rng);
    while (n == old || n == their_ssrc || rtp_session_find(s, n));
    s->ssrc = n;
    s->prev_ssrc[s->prev_ssrc_next] = old;
    s->prev_ssrc_next = (s->prev_ssrc_next + 1) % RTP_SESS_CONFLICTS;
    if (s->n_prev_ssrc < RTP_SESS_CONFLICTS) s->n_prev_ssrc++;
    /* RFC 3550 §6.4.1: the SR's counts start again with the new SSRC */
    s->packets_out = s->payload_octets_out = 0;
    XG_WARN_PEER(&s->lim_collision, s->conf.component,
                 "SSRC collision: %s sends with our SSRC %08x; BYE sent for it, our SSRC is now "
                 "%08x (RFC 3550 §8.2)",
                 peer, old, n);
    if (s->conf.ops->ssrc_changed) s->conf.ops->ssrc_changed(s->conf.user, old, n);
    return false;
}

/* ---- RTCP in ---- */

static bool fir_is_new(struct rtp_session *s, uint32_t sender, uint8_t seq)
{
    for (int i = 0; i < RTP_SESS_FIR_MEMO; i++)
        if (s->firs[i].used && s->firs[i].ssrc == sender) {
            if (s->firs[i].seq == seq) return false;
            s->firs[i].seq = seq;
            return true;
        }
    int i = s->fir_next;
    s->fir_next = (s->fir_next + 1) % RTP_SESS_FIR_MEMO;
    s->firs[i].ssrc = sender;
    s->firs[i].seq = seq;
    s->firs[i].used = true;
    return true;
}

static void handle_rtcp(struct rtp_session *s, const uint8_t *buf, size_t len,
                        const struct sockaddr *from, const char *peer, int64_t now_ns)
{
    struct rtcp_iter it;
    struct rtcp_packet p;
    struct xg_error err = {0};
    bool want_full = false;
    int rc;
    s->rtcp_in++;
    rtcp_iter_init(&it, buf, len);
    while ((rc = rtcp_iter_next(&it, &p, &err)) == RTCP_PACKET) {
        if (p.pt == RTCP_PSFB) {
            struct rtcp_psfb fb;
            if (rtcp_parse_psfb(&p, &fb, &err)) {
                bad(s, peer, R_RTCP, "RTCP feedback: %s", err.msg);
                continue;
            }
            if (fb.fmt == RTCP_PSFB_FIR) {
                for (size_t i = 0; i < fb.n_fir; i++) {
                    struct rtcp_fir_entry e = rtcp_fir_entry_at(&fb, i);
                    if (e.ssrc != s->ssrc) continue;
                    s->firs_in++;
                    if (!fir_is_new(s, fb.sender_ssrc, e.seq)) {
                        s->firs_dup++;
                        continue;
                    }
                    want_full = true;
                }
            } else if (fb.fmt == RTCP_PSFB_PLI && fb.media_ssrc == s->ssrc) {
                s->plis_in++;
                want_full = true;
            }
        } else if (p.pt == RTCP_BYE) {
            struct rtcp_bye bye;
            if (rtcp_parse_bye(&p, &bye, &err)) {
                bad(s, peer, R_RTCP, "RTCP BYE: %s", err.msg);
                continue;
            }
            for (size_t i = 0; i < bye.n_ssrc; i++) {
                struct rtp_sess_ssrc *x = rtp_session_find(s, bye.ssrc[i]);
                if (x && xg_net_addr_equal((const struct sockaddr *)&x->from, from)) {
                    s->byes_in++;
                    XG_INFO_PEER(&s->lim_ssrc, s->conf.component,
                                 "SSRC %08x (%s) said BYE: its entities are removed", x->ssrc,
                                 peer);
                    rtp_session_forget(s, x, true);
                }
            }
        }
        /* SR, RR, SDES, APP: accepted, nothing to do */
    }
    if (rc < 0) bad(s, peer, R_RTCP, "RTCP compound: %s", err.msg);
    if (want_full) rtp_session_request_full_state(s, now_ns);
}

/* ---- RTP in ---- */

static int send_fir(struct rtp_session *s, struct rtp_sess_ssrc *x, int64_t now_ns)
{
    uint8_t buf[512];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf - XG_SRTP_MAX_OVERHEAD);
    struct rtcp_fir_entry e = {.ssrc = x->ssrc, .seq = ++x->our_fir_seq};
    struct rtcp_self me = me_at(s, now_ns);
    int rc = rtcp_write_compound_fir(&w, &me, &e, NULL); /* RFC 4585 §3.1: compound */
    if (rc) return rc;
    rc = s->conf.ops->send(s->conf.user, buf, w.len, sizeof buf, true,
                           (const struct sockaddr *)&x->from, x->from_len);
    if (rc == 0) s->firs_out++;
    return rc;
}

static bool ssrc_allowed(const struct rtp_session *s, uint32_t ssrc)
{
    if (!s->conf.n_allow) return true;
    for (int i = 0; i < s->conf.n_allow; i++)
        if (s->conf.allow[i] == ssrc) return true;
    return false;
}

static void handle_rtp(struct rtp_session *s, const uint8_t *buf, size_t len,
                       const struct sockaddr *from, socklen_t from_len, const char *peer,
                       int64_t recv_ns)
{
    struct rtp_packet pk;
    struct xg_error err = {0};
    if (rtp_decode(buf, len, &pk, &err)) {
        int reason = R_TRUNCATED;
        if (len >= 1 && (buf[0] >> 6) != RTP_VERSION)
            reason = R_VERSION;
        else if (len >= RTP_HEADER_LEN && (buf[0] & 0x20)) {
            /* truncated CSRC/extension beats padding: rtp_decode checks them first */
            size_t need = RTP_HEADER_LEN + 4u * (buf[0] & 0x0F);
            bool hdr_ok = len >= need;
            if (hdr_ok && (buf[0] & 0x10))
                hdr_ok = len >= need + 4 && len >= need + 4 + 4u * xg_load_be16(buf + need + 2);
            if (hdr_ok) reason = R_PADDING;
        }
        bad(s, peer, reason, "%s", err.msg);
        return;
    }
    if (pk.hdr.ssrc == s->ssrc && own_ssrc_seen(s, from, from_len, pk.hdr.ssrc, peer, recv_ns))
        return; /* our own packets (multicast loopback) */
    if (own_earlier_ssrc(s, from, from_len, pk.hdr.ssrc)) return;
    if (pk.hdr.pt != s->conf.pt) {
        bad(s, peer, R_WRONG_PT, "RTP payload type %u (expected %d) from SSRC %08x", pk.hdr.pt,
            s->conf.pt, pk.hdr.ssrc);
        return;
    }
    if (!ssrc_allowed(s, pk.hdr.ssrc)) {
        bad(s, peer, R_SSRC_DENIED, "SSRC %08x is not in allow_ssrc", pk.hdr.ssrc);
        return;
    }
    struct rtp_sess_ssrc *x = rtp_session_find(s, pk.hdr.ssrc);
    if (!x) {
        if ((int64_t)s->n_ssrcs >= s->conf.max_ssrcs) {
            bad(s, peer, R_LIMIT, "max_ssrcs (%lld) reached, SSRC %08x ignored",
                (long long)s->conf.max_ssrcs, pk.hdr.ssrc);
            return;
        }
        x = calloc(1, sizeof *x);
        if (!x) return;
        x->ssrc = pk.hdr.ssrc;
        x->first_ns = recv_ns;
        x->next = s->ssrcs;
        s->ssrcs = x;
        s->n_ssrcs++;
        memcpy(&x->from, from, from_len <= sizeof x->from ? from_len : sizeof x->from);
        x->from_len = from_len;
        seq_init(x, pk.hdr.seq);
        x->received = 1;
        XG_INFO_PEER(&s->lim_ssrc, s->conf.component,
                     "new SSRC %08x from %s: asking for its full state (FIR)", x->ssrc, peer);
        send_fir(s, x, recv_ns);
    } else {
        if (!xg_net_addr_equal((const struct sockaddr *)&x->from, from)) {
            memcpy(&x->from, from, from_len <= sizeof x->from ? from_len : sizeof x->from);
            x->from_len = from_len;
        }
        seq_update(s, x, pk.hdr.seq);
    }
    x->last_ns = recv_ns;
    x->packets++;
    s->packets_in++;
    int64_t wall = xg_clock_mono_to_wall_ns(recv_ns);
    struct rtp_gs_iter *it = &s->iter;
    struct rtp_gs_object o;
    int rc;
    uint32_t ssrc = x->ssrc;
    rtp_gs_iter_init(it, pk.payload, pk.payload_len);
    while ((rc = rtp_gs_iter_next(it, &o, &err)) != RTP_GS_END) {
        if (rc == -EPROTO) {
            bad(s, peer, R_OBJECT, "SSRC %08x: %s", ssrc, err.msg);
            continue;
        }
        if (rc == -EBADMSG) {
            bad(s, peer, R_FRAMING, "SSRC %08x: %s (rest of the packet dropped)", ssrc, err.msg);
            continue;
        }
        if (rc < 0) break;
        if (o.gse_tag) s->gse_tags++;
        if (o.type == RTP_GS_UNKNOWN) {
            s->ignored_objects++;
            continue;
        }
        if (s->conf.ops->object) s->conf.ops->object(s->conf.user, x, &o, recv_ns, wall, peer);
    }
}

void rtp_session_receive(struct rtp_session *s, const uint8_t *buf, size_t len, bool rtcp,
                         const struct sockaddr *from, socklen_t from_len, const char *peer,
                         int64_t now_ns)
{
    if (!rtcp) {
        handle_rtp(s, buf, len, from, from_len, peer, now_ns);
        return;
    }
    if (!len) return; /* the demux (rtp_is_rtcp) says RTCP for 2 bytes or more */
    /* our own reports looped back by a multicast group we send to and joined */
    if (len >= 8 && xg_load_be32(buf + 4) == s->ssrc &&
        own_ssrc_seen(s, from, from_len, s->ssrc, peer, now_ns))
        return;
    if (len >= 8 && own_earlier_ssrc(s, from, from_len, xg_load_be32(buf + 4))) return;
    if ((buf[0] >> 6) != RTP_VERSION) {
        bad(s, peer, R_VERSION, "RTCP version %u (must be 2)", buf[0] >> 6);
        return;
    }
    handle_rtcp(s, buf, len, from, peer, now_ns);
}

/* ---- full state, deadlines ---- */

void rtp_session_request_full_state(struct rtp_session *s, int64_t now_ns)
{
    if (!s->last_requested_ns || now_ns - s->last_requested_ns >= RTP_SESS_FIR_GAP_NS) {
        s->last_requested_ns = now_ns;
        s->conf.ops->full_state(s->conf.user, now_ns);
        return;
    }
    s->coalesced++;
    if (!s->fir_due_ns) s->fir_due_ns = s->last_requested_ns + RTP_SESS_FIR_GAP_NS;
}

int64_t rtp_session_next_deadline(const struct rtp_session *s)
{
    int64_t d[] = {s->rtcp_due_ns, s->refresh_due_ns, s->sweep_due_ns, s->fir_due_ns}, m = 0;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (d[i] && (!m || d[i] < m)) m = d[i];
    return m;
}

static void sweep(struct rtp_session *s, int64_t now_ns)
{
    for (struct rtp_sess_ssrc *x = s->ssrcs, *nx; x; x = nx) {
        nx = x->next;
        if (s->conf.ops->sweep) s->conf.ops->sweep(s->conf.user, x);
        if (now_ns - x->last_ns > s->conf.ssrc_timeout_ns) {
            char peer[64];
            XG_INFO_PEER(&s->lim_ssrc, s->conf.component,
                         "SSRC %08x (%s) silent for %lld ms: its %zu object(s) are removed",
                         x->ssrc, xg_net_addr_str((struct sockaddr *)&x->from, peer, sizeof peer),
                         (long long)(s->conf.ssrc_timeout_ns / XG_NS_PER_MS), x->n_objs);
            s->ssrc_timeouts++;
            rtp_session_forget(s, x, true);
        }
    }
}

void rtp_session_tick(struct rtp_session *s, int64_t now_ns)
{
    if (s->fir_due_ns && now_ns >= s->fir_due_ns) {
        s->fir_due_ns = 0;
        s->last_requested_ns = now_ns;
        s->conf.ops->full_state(s->conf.user, now_ns);
    }
    if (s->refresh_due_ns && now_ns >= s->refresh_due_ns) {
        s->refresh_due_ns += s->conf.refresh_ns;
        if (s->refresh_due_ns <= now_ns) s->refresh_due_ns = now_ns + s->conf.refresh_ns;
        s->refreshes++;
        s->conf.ops->full_state(s->conf.user, now_ns);
    }
    if (s->rtcp_due_ns && now_ns >= s->rtcp_due_ns) {
        schedule_rtcp(s, now_ns);
        uint8_t buf[512];
        struct xg_writer w;
        xg_writer_init(&w, buf, sizeof buf - XG_SRTP_MAX_OVERHEAD);
        struct rtcp_self me = me_at(s, now_ns);
        if (!rtcp_write_compound_report(&w, &me, NULL) &&
            s->conf.ops->send(s->conf.user, buf, w.len, sizeof buf, true, NULL, 0) == 0)
            s->rtcp_out++;
    }
    if (s->sweep_due_ns && now_ns >= s->sweep_due_ns) {
        s->sweep_due_ns = now_ns + sweep_period(s);
        sweep(s, now_ns);
    }
}

/* ---- egress ---- */

void rtp_session_header(const struct rtp_session *s, int64_t now_ns, struct rtp_header *h)
{
    memset(h, 0, sizeof *h);
    h->pt = (uint8_t)s->conf.pt;
    h->seq = s->seq;
    h->ts = xg_ns_to_rtp90k(now_ns) + s->conf.ts_offset;
    h->ssrc = s->ssrc;
}

void rtp_session_packet_done(struct rtp_session *s, bool sent, size_t payload_len)
{
    s->seq++;
    if (!sent) return;
    s->packets_out++;
    s->payload_octets_out += payload_len;
}
