/* RTP / RTCP / SDP codec for the game-state adapter. See rtp.h. */
#include "adapters/rtp/rtp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- RTP ---- */

int rtp_decode(const void *pkt, size_t len, struct rtp_packet *out, struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    const uint8_t *b = pkt;
    if (len < RTP_HEADER_LEN)
        return xg_error_set(err, -EPROTO,
                            "RTP packet of %zu bytes is shorter than the 12-byte header", len);
    struct xg_reader r;
    xg_reader_init(&r, b, len);
    uint8_t b0 = xg_read_u8(&r), b1 = xg_read_u8(&r);
    struct rtp_header *h = &out->hdr;
    if ((b0 >> 6) != RTP_VERSION)
        return xg_error_set(err, -EPROTO, "RTP version %u (must be 2)", b0 >> 6);
    h->padding = (b0 >> 5) & 1;
    h->extension = (b0 >> 4) & 1;
    h->cc = b0 & 0x0F;
    h->marker = b1 >> 7;
    h->pt = b1 & 0x7F;
    h->seq = xg_read_be16(&r);
    h->ts = xg_read_be32(&r);
    h->ssrc = xg_read_be32(&r);
    if (xg_reader_left(&r) < 4u * h->cc)
        return xg_error_set(err, -EPROTO, "RTP CC %u needs %u CSRC bytes, %zu left", h->cc,
                            4u * h->cc, xg_reader_left(&r));
    for (unsigned i = 0; i < h->cc; i++)
        h->csrc[i] = xg_read_be32(&r);
    if (h->extension) {
        if (xg_reader_left(&r) < 4)
            return xg_error_set(err, -EPROTO, "RTP header extension (X=1) needs 4 bytes, %zu left",
                                xg_reader_left(&r));
        h->ext_profile = xg_read_be16(&r);
        size_t words = xg_read_be16(&r);
        if (xg_reader_left(&r) < 4 * words)
            return xg_error_set(err, -EPROTO,
                                "RTP header extension length %zu words runs past the packet "
                                "(%zu bytes left)",
                                words, xg_reader_left(&r));
        h->ext.len = 4 * words;
        h->ext.ptr = xg_read_bytes(&r, h->ext.len);
    }
    size_t rest = xg_reader_left(&r);
    size_t pad = 0;
    if (h->padding) {
        pad = b[len - 1];
        if (pad == 0 || pad > rest)
            return xg_error_set(err, -EPROTO,
                                "RTP padding count %zu is invalid (%zu bytes after the header)",
                                pad, rest);
    }
    out->payload = b + r.off;
    out->payload_len = rest - pad;
    out->pad_len = pad;
    return 0;
}

/* Restore the writer after a failed atomic write and report it. */
static int rollback(struct xg_writer *w, size_t start, int saved, int rc, struct xg_error *err,
                    const char *what)
{
    w->len = start;
    w->err = saved;
    if (rc == -EMSGSIZE)
        return xg_error_set(err, rc, "%s does not fit in the %zu bytes left", what, w->cap - start);
    return rc;
}

int rtp_write_header(struct xg_writer *w, const struct rtp_header *h, struct xg_error *err)
{
    if (h->cc > RTP_MAX_CSRC) return xg_error_set(err, -EINVAL, "RTP CC %u exceeds 15", h->cc);
    if (h->pt > 127) return xg_error_set(err, -EINVAL, "RTP payload type %u exceeds 127", h->pt);
    if (h->extension && (h->ext.len % 4 || h->ext.len > 4u * 0xFFFF || (h->ext.len && !h->ext.ptr)))
        return xg_error_set(err, -EINVAL,
                            "RTP header extension of %zu bytes is not a multiple of 4 up to "
                            "262140",
                            h->ext.len);
    size_t start = w->len;
    int saved = w->err;
    xg_write_u8(w, (uint8_t)((RTP_VERSION << 6) | (h->extension ? 0x10 : 0) | h->cc));
    xg_write_u8(w, (uint8_t)((h->marker ? 0x80 : 0) | h->pt));
    xg_write_be16(w, h->seq);
    xg_write_be32(w, h->ts);
    xg_write_be32(w, h->ssrc);
    for (unsigned i = 0; i < h->cc; i++)
        xg_write_be32(w, h->csrc[i]);
    if (h->extension) {
        xg_write_be16(w, h->ext_profile);
        xg_write_be16(w, (uint16_t)(h->ext.len / 4));
        xg_write_bytes(w, h->ext.ptr, h->ext.len);
    }
    if (w->err) return rollback(w, start, saved, w->err, err, "RTP header");
    return 0;
}

int rtp_write_padding(struct xg_writer *w, size_t pkt_start, size_t align, struct xg_error *err)
{
    if (align < 1 || align > 255)
        return xg_error_set(err, -EINVAL, "RTP padding alignment %zu must be 1..255", align);
    if (w->err || pkt_start > w->len || w->len - pkt_start < RTP_HEADER_LEN)
        return xg_error_set(err, -EINVAL, "no RTP packet at offset %zu to pad", pkt_start);
    size_t n = (align - (w->len - pkt_start) % align) % align;
    if (n == 0) return 0;
    if (n > w->cap - w->len)
        return xg_error_set(err, -EMSGSIZE, "RTP padding of %zu bytes does not fit (%zu left)", n,
                            w->cap - w->len);
    uint8_t *p = xg_write_reserve(w, n);
    memset(p, 0, n);
    p[n - 1] = (uint8_t)n;
    w->buf[pkt_start] |= 0x20;
    return 0;
}

bool rtp_is_rtcp(const void *pkt, size_t len)
{
    const uint8_t *b = pkt;
    return len >= 2 && b[1] >= 192 && b[1] <= 223;
}

/* ---- RTCP compound ---- */

void rtcp_iter_init(struct rtcp_iter *it, const void *buf, size_t len)
{
    xg_reader_init(&it->r, buf, len);
    it->done = false;
}

static int rtcp_broken(struct rtcp_iter *it, size_t at, struct xg_error *err)
{
    it->done = true;
    it->r.off = it->r.len;
    xg_error_prefix(err, "RTCP compound offset %zu: ", at);
    return -EPROTO;
}

int rtcp_iter_next(struct rtcp_iter *it, struct rtcp_packet *p, struct xg_error *err)
{
    memset(p, 0, sizeof *p);
    if (it->done || xg_reader_left(&it->r) == 0) {
        it->done = true;
        return RTCP_END;
    }
    size_t at = it->r.off, left = xg_reader_left(&it->r);
    if (left < 4) {
        xg_error_set(err, -EPROTO, "%zu bytes left, fewer than a 4-byte header", left);
        return rtcp_broken(it, at, err);
    }
    uint8_t b0 = xg_read_u8(&it->r);
    p->pt = xg_read_u8(&it->r);
    size_t words = xg_read_be16(&it->r);
    if ((b0 >> 6) != RTP_VERSION) {
        xg_error_set(err, -EPROTO, "RTCP version %u (must be 2)", b0 >> 6);
        return rtcp_broken(it, at, err);
    }
    p->padding = (b0 >> 5) & 1;
    p->count = b0 & 0x1F;
    size_t body = 4 * words;
    if (body > xg_reader_left(&it->r)) {
        xg_error_set(err, -EPROTO, "RTCP PT %u length %zu words runs past the end (%zu bytes left)",
                     p->pt, words, xg_reader_left(&it->r));
        return rtcp_broken(it, at, err);
    }
    const uint8_t *bp = xg_read_bytes(&it->r, body);
    if (p->padding) {
        if (xg_reader_left(&it->r) != 0) {
            xg_error_set(err, -EPROTO, "RTCP PT %u has padding but is not the last packet", p->pt);
            return rtcp_broken(it, at, err);
        }
        size_t pad = body ? bp[body - 1] : 0;
        if (pad == 0 || pad > body) {
            xg_error_set(err, -EPROTO, "RTCP PT %u padding count %zu is invalid (body %zu bytes)",
                         p->pt, pad, body);
            return rtcp_broken(it, at, err);
        }
        body -= pad;
    }
    p->body = bp;
    p->body_len = body;
    return RTCP_PACKET;
}

/* Common header: V=2, P=0, count/FMT, PT, length in words - 1 (patched at the end). */
static void rtcp_header(struct xg_writer *w, uint8_t count, uint8_t pt)
{
    xg_write_u8(w, (uint8_t)((RTP_VERSION << 6) | (count & 0x1F)));
    xg_write_u8(w, pt);
    xg_write_be16(w, 0);
}

static int rtcp_finish(struct xg_writer *w, size_t start, int saved, struct xg_error *err,
                       const char *what)
{
    while (!w->err && (w->len - start) % 4)
        xg_write_u8(w, 0);
    if (w->err) return rollback(w, start, saved, w->err, err, what);
    xg_write_be16_at(w, start + 2, (uint16_t)((w->len - start) / 4 - 1));
    return 0;
}

/* ---- SR / RR ---- */

static int parse_blocks(struct xg_reader *r, size_t n, struct rtcp_report_block *b)
{
    for (size_t i = 0; i < n; i++) {
        b[i].ssrc = xg_read_be32(r);
        uint32_t lost = xg_read_be32(r);
        b[i].fraction_lost = (uint8_t)(lost >> 24);
        int32_t cum = (int32_t)(lost & 0xFFFFFFu);
        b[i].cumulative_lost = (cum & 0x800000) ? cum - 0x1000000 : cum;
        b[i].highest_seq = xg_read_be32(r);
        b[i].jitter = xg_read_be32(r);
        b[i].lsr = xg_read_be32(r);
        b[i].dlsr = xg_read_be32(r);
    }
    return r->err;
}

static void write_blocks(struct xg_writer *w, size_t n, const struct rtcp_report_block *b)
{
    for (size_t i = 0; i < n; i++) {
        int32_t c = b[i].cumulative_lost;
        if (c > 0x7FFFFF) c = 0x7FFFFF; /* RFC 3550 §6.4.1: clamp to the 24-bit signed range */
        if (c < -0x800000) c = -0x800000;
        xg_write_be32(w, b[i].ssrc);
        xg_write_be32(w, ((uint32_t)b[i].fraction_lost << 24) | ((uint32_t)c & 0xFFFFFFu));
        xg_write_be32(w, b[i].highest_seq);
        xg_write_be32(w, b[i].jitter);
        xg_write_be32(w, b[i].lsr);
        xg_write_be32(w, b[i].dlsr);
    }
}

int rtcp_parse_sr(const struct rtcp_packet *p, struct rtcp_sr *sr, struct xg_error *err)
{
    memset(sr, 0, sizeof *sr);
    if (p->pt != RTCP_SR) return xg_error_set(err, -EPROTO, "RTCP PT %u is not an SR (200)", p->pt);
    size_t need = 24 + 24 * (size_t)p->count;
    if (p->body_len < need)
        return xg_error_set(err, -EPROTO, "RTCP SR with RC %u needs %zu body bytes, has %zu",
                            p->count, need, p->body_len);
    struct xg_reader r;
    xg_reader_init(&r, p->body, p->body_len);
    sr->ssrc = xg_read_be32(&r);
    sr->ntp = xg_read_be64(&r);
    sr->rtp_ts = xg_read_be32(&r);
    sr->packet_count = xg_read_be32(&r);
    sr->octet_count = xg_read_be32(&r);
    sr->n_reports = p->count;
    parse_blocks(&r, sr->n_reports, sr->reports);
    return 0;
}

int rtcp_parse_rr(const struct rtcp_packet *p, struct rtcp_rr *rr, struct xg_error *err)
{
    memset(rr, 0, sizeof *rr);
    if (p->pt != RTCP_RR) return xg_error_set(err, -EPROTO, "RTCP PT %u is not an RR (201)", p->pt);
    size_t need = 4 + 24 * (size_t)p->count;
    if (p->body_len < need)
        return xg_error_set(err, -EPROTO, "RTCP RR with RC %u needs %zu body bytes, has %zu",
                            p->count, need, p->body_len);
    struct xg_reader r;
    xg_reader_init(&r, p->body, p->body_len);
    rr->ssrc = xg_read_be32(&r);
    rr->n_reports = p->count;
    parse_blocks(&r, rr->n_reports, rr->reports);
    return 0;
}

int rtcp_write_sr(struct xg_writer *w, const struct rtcp_sr *sr, struct xg_error *err)
{
    if (sr->n_reports > RTCP_MAX_COUNT)
        return xg_error_set(err, -EINVAL, "RTCP SR with %zu report blocks (max 31)", sr->n_reports);
    size_t start = w->len;
    int saved = w->err;
    rtcp_header(w, (uint8_t)sr->n_reports, RTCP_SR);
    xg_write_be32(w, sr->ssrc);
    xg_write_be64(w, sr->ntp);
    xg_write_be32(w, sr->rtp_ts);
    xg_write_be32(w, sr->packet_count);
    xg_write_be32(w, sr->octet_count);
    write_blocks(w, sr->n_reports, sr->reports);
    return rtcp_finish(w, start, saved, err, "RTCP SR");
}

int rtcp_write_rr(struct xg_writer *w, const struct rtcp_rr *rr, struct xg_error *err)
{
    if (rr->n_reports > RTCP_MAX_COUNT)
        return xg_error_set(err, -EINVAL, "RTCP RR with %zu report blocks (max 31)", rr->n_reports);
    size_t start = w->len;
    int saved = w->err;
    rtcp_header(w, (uint8_t)rr->n_reports, RTCP_RR);
    xg_write_be32(w, rr->ssrc);
    write_blocks(w, rr->n_reports, rr->reports);
    return rtcp_finish(w, start, saved, err, "RTCP RR");
}

uint64_t rtcp_ntp_from_wall_ns(int64_t wall_ns)
{
    /* 70 years (17 leap days) between 1900-01-01 and 1970-01-01. */
    const uint64_t epoch = 2208988800u;
    int64_t s = wall_ns / 1000000000, ns = wall_ns % 1000000000;
    if (ns < 0) {
        ns += 1000000000;
        s -= 1;
    }
    uint64_t frac = ((uint64_t)ns << 32) / 1000000000u;
    return (((uint64_t)s + epoch) << 32) | frac;
}

/* ---- SDES ---- */

int rtcp_parse_sdes(const struct rtcp_packet *p, struct rtcp_sdes_cname *out, size_t cap, size_t *n,
                    struct xg_error *err)
{
    *n = 0;
    if (p->pt != RTCP_SDES)
        return xg_error_set(err, -EPROTO, "RTCP PT %u is not an SDES (202)", p->pt);
    struct xg_reader r;
    xg_reader_init(&r, p->body, p->body_len);
    for (unsigned c = 0; c < p->count; c++) {
        if (xg_reader_left(&r) < 4)
            return xg_error_set(err, -EPROTO, "RTCP SDES chunk %u of %u: no SSRC (%zu bytes left)",
                                c, p->count, xg_reader_left(&r));
        struct rtcp_sdes_cname chunk = {.ssrc = xg_read_be32(&r)};
        for (;;) {
            if (xg_reader_left(&r) < 1)
                return xg_error_set(err, -EPROTO, "RTCP SDES chunk %u: items without END", c);
            uint8_t type = xg_read_u8(&r);
            if (type == RTCP_SDES_END) {
                size_t mis = r.off % 4; /* chunks end on a 32-bit boundary */
                if (mis && xg_read_skip(&r, 4 - mis))
                    return xg_error_set(err, -EPROTO, "RTCP SDES chunk %u: padding past the end",
                                        c);
                break;
            }
            if (xg_reader_left(&r) < 1)
                return xg_error_set(err, -EPROTO, "RTCP SDES chunk %u: item %u has no length", c,
                                    type);
            size_t len = xg_read_u8(&r);
            if (len > xg_reader_left(&r))
                return xg_error_set(err, -EPROTO,
                                    "RTCP SDES chunk %u: item %u length %zu runs past the end "
                                    "(%zu left)",
                                    c, type, len, xg_reader_left(&r));
            const uint8_t *text = xg_read_bytes(&r, len);
            if (type == RTCP_SDES_CNAME) {
                chunk.cname = text;
                chunk.len = len;
            }
        }
        if (*n < cap) out[(*n)++] = chunk;
    }
    return 0;
}

int rtcp_write_sdes_cname(struct xg_writer *w, uint32_t ssrc, const char *cname,
                          struct xg_error *err)
{
    size_t len = cname ? strlen(cname) : 0;
    if (len < 1 || len > 255)
        return xg_error_set(err, -EINVAL, "SDES CNAME of %zu bytes (must be 1..255)", len);
    size_t start = w->len;
    int saved = w->err;
    rtcp_header(w, 1, RTCP_SDES);
    xg_write_be32(w, ssrc);
    xg_write_u8(w, RTCP_SDES_CNAME);
    xg_write_u8(w, (uint8_t)len);
    xg_write_bytes(w, cname, len);
    xg_write_u8(w, RTCP_SDES_END); /* at least one END byte, then pad to 32 bits */
    return rtcp_finish(w, start, saved, err, "RTCP SDES");
}

/* ---- BYE ---- */

int rtcp_parse_bye(const struct rtcp_packet *p, struct rtcp_bye *bye, struct xg_error *err)
{
    memset(bye, 0, sizeof *bye);
    if (p->pt != RTCP_BYE)
        return xg_error_set(err, -EPROTO, "RTCP PT %u is not a BYE (203)", p->pt);
    if (p->body_len < 4 * (size_t)p->count)
        return xg_error_set(err, -EPROTO, "RTCP BYE with SC %u needs %u bytes, has %zu", p->count,
                            4u * p->count, p->body_len);
    struct xg_reader r;
    xg_reader_init(&r, p->body, p->body_len);
    bye->n_ssrc = p->count;
    for (size_t i = 0; i < bye->n_ssrc; i++)
        bye->ssrc[i] = xg_read_be32(&r);
    if (xg_reader_left(&r) > 0) {
        size_t len = xg_read_u8(&r);
        if (len > xg_reader_left(&r))
            return xg_error_set(err, -EPROTO,
                                "RTCP BYE reason length %zu runs past the end (%zu "
                                "left)",
                                len, xg_reader_left(&r));
        bye->reason = xg_read_bytes(&r, len);
        bye->reason_len = len;
    }
    return 0;
}

int rtcp_write_bye(struct xg_writer *w, const uint32_t *ssrc, size_t n, const char *reason,
                   struct xg_error *err)
{
    if (n < 1 || n > RTCP_MAX_COUNT)
        return xg_error_set(err, -EINVAL, "RTCP BYE with %zu SSRCs (must be 1..31)", n);
    size_t rlen = reason ? strlen(reason) : 0;
    if (rlen > 255)
        return xg_error_set(err, -EINVAL, "RTCP BYE reason of %zu bytes (max 255)", rlen);
    size_t start = w->len;
    int saved = w->err;
    rtcp_header(w, (uint8_t)n, RTCP_BYE);
    for (size_t i = 0; i < n; i++)
        xg_write_be32(w, ssrc[i]);
    if (reason) {
        xg_write_u8(w, (uint8_t)rlen);
        xg_write_bytes(w, reason, rlen);
    }
    return rtcp_finish(w, start, saved, err, "RTCP BYE");
}

/* ---- PSFB: FIR, PLI ---- */

int rtcp_parse_psfb(const struct rtcp_packet *p, struct rtcp_psfb *fb, struct xg_error *err)
{
    memset(fb, 0, sizeof *fb);
    if (p->pt != RTCP_PSFB)
        return xg_error_set(err, -EPROTO, "RTCP PT %u is not payload-specific feedback (206)",
                            p->pt);
    if (p->body_len < 8)
        return xg_error_set(err, -EPROTO, "RTCP PSFB FMT %u body of %zu bytes lacks the two SSRCs",
                            p->count, p->body_len);
    fb->fmt = p->count;
    fb->sender_ssrc = xg_load_be32(p->body);
    fb->media_ssrc = xg_load_be32(p->body + 4);
    fb->fci = p->body + 8;
    fb->fci_len = p->body_len - 8;
    if (fb->fmt == RTCP_PSFB_FIR) {
        if (fb->fci_len == 0 || fb->fci_len % 8)
            return xg_error_set(err, -EPROTO,
                                "RTCP FIR FCI of %zu bytes is not a non-zero multiple of 8",
                                fb->fci_len);
        fb->n_fir = fb->fci_len / 8;
    }
    return 0;
}

struct rtcp_fir_entry rtcp_fir_entry_at(const struct rtcp_psfb *fb, size_t i)
{
    struct rtcp_fir_entry e = {0, 0};
    if (i < fb->n_fir) {
        e.ssrc = xg_load_be32(fb->fci + 8 * i);
        e.seq = fb->fci[8 * i + 4];
    }
    return e;
}

int rtcp_write_fir(struct xg_writer *w, uint32_t sender_ssrc, const struct rtcp_fir_entry *e,
                   size_t n, struct xg_error *err)
{
    if (n < 1 || n > 64 || !e)
        return xg_error_set(err, -EINVAL, "RTCP FIR with %zu entries (must be 1..64)", n);
    size_t start = w->len;
    int saved = w->err;
    rtcp_header(w, RTCP_PSFB_FIR, RTCP_PSFB);
    xg_write_be32(w, sender_ssrc);
    xg_write_be32(w, 0); /* media source SSRC SHALL be 0 (RFC 5104 §4.3.1.2) */
    for (size_t i = 0; i < n; i++) {
        xg_write_be32(w, e[i].ssrc);
        xg_write_u8(w, e[i].seq);
        xg_write_zeros(w, 3);
    }
    return rtcp_finish(w, start, saved, err, "RTCP FIR");
}

int rtcp_write_pli(struct xg_writer *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                   struct xg_error *err)
{
    size_t start = w->len;
    int saved = w->err;
    rtcp_header(w, RTCP_PSFB_PLI, RTCP_PSFB);
    xg_write_be32(w, sender_ssrc);
    xg_write_be32(w, media_ssrc);
    return rtcp_finish(w, start, saved, err, "RTCP PLI");
}

/* ---- SDP ---- */

/* A token for o=/c= (no whitespace or control characters) or, with spaces_ok, a name for s=. */
static bool sdp_text_ok(const char *s, bool spaces_ok)
{
    if (!s || !*s) return false;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c == 0x7F || (*c == ' ' && !spaces_ok)) return false;
    return true;
}

static bool ipv4_multicast(const char *a)
{
    unsigned o1;
    char dot;
    return sscanf(a, "%u%c", &o1, &dot) == 2 && dot == '.' && o1 >= 224 && o1 <= 239;
}

struct sdp_out {
    char *buf;
    size_t cap, len;
    bool overflow;
};

__attribute__((format(printf, 2, 3))) static void sdp_line(struct sdp_out *o, const char *fmt, ...)
{
    if (o->overflow) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + 2 >= o->cap - o->len) {
        o->overflow = true;
        return;
    }
    o->len += (size_t)n;
    memcpy(o->buf + o->len, "\r\n", 3);
    o->len += 2;
}

int rtp_sdp_write(char *buf, size_t cap, const struct rtp_sdp_params *p, size_t *len,
                  struct xg_error *err)
{
    if (len) *len = 0;
    const char *name = p->session_name ? p->session_name : "xrgate";
    const char *origin = p->origin_addr ? p->origin_addr : p->conn_addr;
    const char *dir = p->direction ? p->direction : "sendrecv";
    if (p->pt < 96 || p->pt > 127)
        return xg_error_set(err, -EINVAL, "SDP payload type %u is not dynamic (96..127)", p->pt);
    if (p->port == 0) return xg_error_set(err, -EINVAL, "SDP port 0");
    if (!sdp_text_ok(p->conn_addr, false))
        return xg_error_set(err, -EINVAL, "SDP connection address '%s' is missing or invalid",
                            p->conn_addr ? p->conn_addr : "(null)");
    if (!sdp_text_ok(origin, false))
        return xg_error_set(err, -EINVAL, "SDP origin address '%s' is invalid", origin);
    if (!sdp_text_ok(name, true))
        return xg_error_set(err, -EINVAL, "SDP session name is empty or has control characters");
    if (p->cname && !sdp_text_ok(p->cname, false))
        return xg_error_set(err, -EINVAL, "SDP CNAME '%s' has whitespace or control characters",
                            p->cname);
    if (strcmp(dir, "sendrecv") && strcmp(dir, "sendonly") && strcmp(dir, "recvonly") &&
        strcmp(dir, "inactive"))
        return xg_error_set(err, -EINVAL,
                            "SDP direction '%s' is not sendrecv, sendonly, "
                            "recvonly or inactive",
                            dir);
    if (!buf || cap == 0) return xg_error_set(err, -EMSGSIZE, "SDP buffer of 0 bytes");

    struct sdp_out o = {buf, cap, 0, false};
    const char *ofam = strchr(origin, ':') ? "IP6" : "IP4";
    const char *cfam = strchr(p->conn_addr, ':') ? "IP6" : "IP4";
    sdp_line(&o, "v=0");
    sdp_line(&o, "o=- %" PRIu64 " %" PRIu64 " IN %s %s", p->session_id, p->session_id, ofam,
             origin);
    sdp_line(&o, "s=%s", name);
    if (!strcmp(cfam, "IP4") && ipv4_multicast(p->conn_addr))
        sdp_line(&o, "c=IN IP4 %s/%u", p->conn_addr, p->ttl ? p->ttl : 16u);
    else
        sdp_line(&o, "c=IN %s %s", cfam, p->conn_addr);
    sdp_line(&o, "t=0 0");
    sdp_line(&o, "m=application %u RTP/%s %u", p->port, p->avp ? "AVP" : "AVPF", p->pt);
    sdp_line(&o, "a=rtpmap:%u gamestate/%u", p->pt, RTP_CLOCK_HZ);
    sdp_line(&o, "a=rtcp-mux");
    if (!p->avp) {
        sdp_line(&o, "a=rtcp-fb:%u ccm fir", p->pt);
        if (p->pli) sdp_line(&o, "a=rtcp-fb:%u nack pli", p->pt);
    }
    if (p->cname) sdp_line(&o, "a=ssrc:%" PRIu32 " cname:%s", p->ssrc, p->cname);
    sdp_line(&o, "a=%s", dir);
    if (o.overflow) {
        buf[0] = '\0';
        return xg_error_set(err, -EMSGSIZE, "SDP does not fit in %zu bytes", cap);
    }
    if (len) *len = o.len;
    return 0;
}
