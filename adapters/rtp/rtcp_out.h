/* The RTCP the rtp adapter sends: every packet is a compound that starts with a report and an
 * SDES CNAME, and reports go out at randomised intervals. Pure: no I/O, no clock of its own.
 *
 * Compounds (RFC 3550 §6.1: "each individual RTCP packet MUST be sent in a compound packet", the
 * first one an SR or RR, then an SDES with a CNAME; RFC 4585 §3.1: feedback rides in a compound
 * too): the periodic report is SR (or RR) + SDES CNAME; the BYE on stop is SR/RR + SDES + BYE; the
 * FIR to a new sender is SR/RR + SDES + FIR (RFC 5104 §4.3.1). SR when we have sent RTP, else an
 * RR with no report blocks. Reduced-size RTCP (RFC 5506) is not negotiated: the exported SDP has
 * no a=rtcp-rsize, so peers that do not negotiate it get what RFC 3550 requires.
 *
 * Interval (RFC 3550 §6.2, §6.3.1): each report is scheduled a random time in [0.5, 1.5) × T
 * after the previous one (T = rtcp_interval_ms), so that senders started together do not stay in
 * step. */
#ifndef XG_RTP_RTCP_OUT_H
#define XG_RTP_RTCP_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "adapters/rtp/rtp.h"

/** Who we are, for the report + SDES that open every compound. */
struct rtcp_self {
    uint32_t ssrc;
    bool sender;           /* we have sent RTP: SR; else RR with no report blocks */
    uint64_t ntp;          /* SR: NTP timestamp of now (rtcp_ntp_from_wall_ns) */
    uint32_t rtp_ts;       /* SR: RTP timestamp of the same instant */
    uint32_t packet_count; /* SR: RTP packets sent */
    uint32_t octet_count;  /* SR: RTP payload octets sent */
    const char *cname;     /* SDES CNAME, 1..255 bytes */
};

/** Append SR (or RR) + SDES CNAME. Atomic: on error (-EINVAL for a bad CNAME, -EMSGSIZE when the
 *  writer is full) the writer is left as it was. */
int rtcp_write_compound_report(struct xg_writer *w, const struct rtcp_self *me,
                               struct xg_error *err);

/** Append SR/RR + SDES CNAME + BYE for me->ssrc (reason NULL or <= 255 bytes). Atomic. */
int rtcp_write_compound_bye(struct xg_writer *w, const struct rtcp_self *me, const char *reason,
                            struct xg_error *err);

/** Append SR/RR + SDES CNAME + FIR from me->ssrc with one entry (target SSRC, seq nr). Atomic. */
int rtcp_write_compound_fir(struct xg_writer *w, const struct rtcp_self *me,
                            const struct rtcp_fir_entry *e, struct xg_error *err);

/** The randomised RTCP interval in ns: t_ns × (0.5 + r / 2^32), i.e. uniform over
 *  [0.5, 1.5) × t_ns for a uniform 32-bit r (RFC 3550 §6.3.1). t_ns <= 0 gives 0. */
int64_t rtcp_interval_ns(int64_t t_ns, uint32_t r);

/** 32 random bits from a xorshift64* generator; *state must not be 0 (0 is replaced by a fixed
 *  non-zero seed). Deterministic for a given seed, so tests can inject one. */
uint32_t rtcp_rand32(uint64_t *state);

#endif
