/* Compound RTCP and the randomised report interval (rtcp_out.h). */
#include "adapters/rtp/rtcp_out.h"

#include <errno.h>

int rtcp_write_compound_report(struct xg_writer *w, const struct rtcp_self *me,
                               struct xg_error *err)
{
    size_t start = w->len;
    int saved = w->err;
    int rc;
    if (me->sender) {
        struct rtcp_sr sr = {.ssrc = me->ssrc,
                             .ntp = me->ntp,
                             .rtp_ts = me->rtp_ts,
                             .packet_count = me->packet_count,
                             .octet_count = me->octet_count};
        rc = rtcp_write_sr(w, &sr, err);
    } else {
        struct rtcp_rr rr = {.ssrc = me->ssrc};
        rc = rtcp_write_rr(w, &rr, err);
    }
    if (rc == 0) rc = rtcp_write_sdes_cname(w, me->ssrc, me->cname, err);
    if (rc) {
        w->len = start;
        w->err = saved;
    }
    return rc;
}

int rtcp_write_compound_bye(struct xg_writer *w, const struct rtcp_self *me, const char *reason,
                            struct xg_error *err)
{
    size_t start = w->len;
    int saved = w->err;
    int rc = rtcp_write_compound_report(w, me, err);
    if (rc == 0) rc = rtcp_write_bye(w, &me->ssrc, 1, reason, err);
    if (rc) {
        w->len = start;
        w->err = saved;
    }
    return rc;
}

int rtcp_write_compound_fir(struct xg_writer *w, const struct rtcp_self *me,
                            const struct rtcp_fir_entry *e, struct xg_error *err)
{
    size_t start = w->len;
    int saved = w->err;
    int rc = rtcp_write_compound_report(w, me, err);
    if (rc == 0) rc = rtcp_write_fir(w, me->ssrc, e, 1, err);
    if (rc) {
        w->len = start;
        w->err = saved;
    }
    return rc;
}

int64_t rtcp_interval_ns(int64_t t_ns, uint32_t r)
{
    if (t_ns <= 0) return 0;
    /* t/2 + t·r/2^32 (in double: t·r overflows 64 bits for intervals above ~2 s) */
    return t_ns / 2 + (int64_t)((double)t_ns * ((double)r / 4294967296.0));
}

uint32_t rtcp_rand32(uint64_t *state)
{
    uint64_t x = *state ? *state : UINT64_C(0x9E3779B97F4A7C15);
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (uint32_t)((x * UINT64_C(0x2545F4914F6CDD1D)) >> 32);
}
