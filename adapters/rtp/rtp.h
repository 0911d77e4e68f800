/* RTP / RTCP framing and SDP text for the game-state adapter: pure codec, no I/O.
 *
 * RTP fixed header (RFC 3550 §5.1) with CSRCs, header extension (skipped, §5.3.1) and padding;
 * RTCP (RFC 3550 §6) compound iteration, SR/RR (+ report blocks), SDES CNAME, BYE; payload-
 * specific feedback (PT 206, RFC 4585 §6.1) FIR (FMT 4, RFC 5104 §4.3.1) and PLI (FMT 1,
 * RFC 4585 §6.3.1); RTP/RTCP demultiplexing on one port (RFC 5761 §4); the session's SDP
 * (RFC 4566, wire-rules §6). Everything is big-endian. Decoders borrow the caller's buffer and
 * never read past its end; writers append to an xg_writer and are atomic (on error the writer is
 * left as it was, so the caller can flush and retry). Errors: 0 or a negative errno, with
 * struct xg_error naming the field and the offending value. */
#ifndef XG_RTP_RTP_H
#define XG_RTP_RTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/error.h"
#include "core/util/wire.h"

#define RTP_VERSION 2
#define RTP_HEADER_LEN 12 /* fixed part, without CSRCs */
#define RTP_MAX_CSRC 15
#define RTP_CLOCK_HZ 90000 /* the draft's MUST (§7): 1 ms = 90 ticks */

/* ---- RTP (RFC 3550 §5.1) ---- */

/** RTP header. On encode, `padding` is ignored (see rtp_write_padding) and the extension is
 *  written when `extension` is set (ext.len must be a multiple of 4). On decode, `ext` borrows
 *  the packet. The game-state draft does not use M: send 0, ignore on receipt (wire-rules §6). */
struct rtp_header {
    bool padding;   /* P */
    bool extension; /* X */
    uint8_t cc;     /* CSRC count, 0..15 */
    bool marker;    /* M */
    uint8_t pt;     /* payload type, 0..127 */
    uint16_t seq;
    uint32_t ts; /* 90 kHz media clock */
    uint32_t ssrc;
    uint32_t csrc[RTP_MAX_CSRC];
    uint16_t ext_profile; /* "defined by profile" 16 bits of the extension */
    struct {
        const uint8_t *ptr;
        size_t len; /* bytes, a multiple of 4 */
    } ext;
};

/** A decoded RTP packet: header, payload (padding stripped) and the padding length. */
struct rtp_packet {
    struct rtp_header hdr;
    const uint8_t *payload; /* borrowed */
    size_t payload_len;
    size_t pad_len; /* 0, or the padding count (last byte) */
};

/** Decode an RTP packet of `len` bytes. Returns 0, or -EPROTO with err for: fewer than 12 bytes,
 *  version != 2, CSRCs or extension past the end, padding count 0 or larger than what follows
 *  the header. */
int rtp_decode(const void *pkt, size_t len, struct rtp_packet *out, struct xg_error *err);

/** Append the header (12 + 4·cc bytes, plus 4 + ext.len with the extension; P written as 0).
 *  -EINVAL for cc > 15, pt > 127, ext.len not a multiple of 4 or > 262140; -EMSGSIZE if full. */
int rtp_write_header(struct xg_writer *w, const struct rtp_header *h, struct xg_error *err);

/** Pad the packet that starts at w->buf[pkt_start] (header already written there) to a multiple
 *  of `align` bytes (1..255; RFC 3550 §5.1: the last byte holds the count) and set its P bit.
 *  Nothing is added when the length is already aligned. -EINVAL / -EMSGSIZE. */
int rtp_write_padding(struct xg_writer *w, size_t pkt_start, size_t align, struct xg_error *err);

/** RFC 5761 §4 demultiplexing: true when the second byte is 192..223 (an RTCP packet type;
 *  RTP on a muxed port must avoid those PT+M values). False for fewer than 2 bytes. */
bool rtp_is_rtcp(const void *pkt, size_t len);

/* ---- RTCP (RFC 3550 §6, RFC 4585, RFC 5104) ---- */

#define RTCP_SR 200
#define RTCP_RR 201
#define RTCP_SDES 202
#define RTCP_BYE 203
#define RTCP_APP 204
#define RTCP_RTPFB 205
#define RTCP_PSFB 206
#define RTCP_PSFB_PLI 1 /* RFC 4585 §6.3.1 */
#define RTCP_PSFB_FIR 4 /* RFC 5104 §4.3.1 */
#define RTCP_SDES_END 0
#define RTCP_SDES_CNAME 1
#define RTCP_MAX_COUNT 31 /* 5-bit RC / SC */

/** One RTCP packet of a compound: `count` is the 5-bit RC/SC/FMT field; `body` is what follows
 *  the 4-byte common header, padding removed (borrowed). */
struct rtcp_packet {
    uint8_t pt;
    uint8_t count;
    bool padding;
    const uint8_t *body;
    size_t body_len;
};

/** Compound RTCP iterator (RFC 3550 §6.1, A.2 checks except "first is SR/RR", which
 *  reduced-size RTCP, RFC 5506, relaxes). Borrows the buffer. */
struct rtcp_iter {
    struct xg_reader r;
    bool done;
};

void rtcp_iter_init(struct rtcp_iter *it, const void *buf, size_t len);

#define RTCP_END 0
#define RTCP_PACKET 1

/** Next packet of the compound: RTCP_PACKET, RTCP_END, or -EPROTO when the compound is broken
 *  (fewer than 4 bytes, version != 2, length past the end, padding on a packet that is not the
 *  last, bad padding count); the rest of the compound is then discarded. */
int rtcp_iter_next(struct rtcp_iter *it, struct rtcp_packet *p, struct xg_error *err);

/** Reception report block (RFC 3550 §6.4.1), 24 bytes. */
struct rtcp_report_block {
    uint32_t ssrc;
    uint8_t fraction_lost;   /* fixed point /256 */
    int32_t cumulative_lost; /* 24-bit signed */
    uint32_t highest_seq;    /* extended highest sequence number received */
    uint32_t jitter;         /* RTP timestamp units */
    uint32_t lsr;            /* middle 32 bits of the last SR's NTP timestamp */
    uint32_t dlsr;           /* delay since last SR, 1/65536 s */
};

/** Sender report (PT 200); `reports` has n_reports (<= 31) blocks. */
struct rtcp_sr {
    uint32_t ssrc;
    uint64_t ntp; /* NTP timestamp, 32.32 fixed point seconds since 1900 */
    uint32_t rtp_ts;
    uint32_t packet_count;
    uint32_t octet_count;
    size_t n_reports;
    struct rtcp_report_block reports[RTCP_MAX_COUNT];
};

/** Receiver report (PT 201). */
struct rtcp_rr {
    uint32_t ssrc;
    size_t n_reports;
    struct rtcp_report_block reports[RTCP_MAX_COUNT];
};

/** Parse an SR / RR packet from the iterator. -EPROTO for the wrong PT or a body shorter than
 *  its RC says; profile-specific extensions after the blocks are ignored. */
int rtcp_parse_sr(const struct rtcp_packet *p, struct rtcp_sr *sr, struct xg_error *err);
int rtcp_parse_rr(const struct rtcp_packet *p, struct rtcp_rr *rr, struct xg_error *err);
/** Append an SR / RR (n_reports <= 31, else -EINVAL). */
int rtcp_write_sr(struct xg_writer *w, const struct rtcp_sr *sr, struct xg_error *err);
int rtcp_write_rr(struct xg_writer *w, const struct rtcp_rr *rr, struct xg_error *err);

/** Wall-clock ns since 1970 → 64-bit NTP timestamp (seconds since 1900, 32.32). */
uint64_t rtcp_ntp_from_wall_ns(int64_t wall_ns);
/** The middle 32 bits of an NTP timestamp (LSR, RFC 3550 §6.4.1). */
static inline uint32_t rtcp_ntp_middle32(uint64_t ntp)
{
    return (uint32_t)(ntp >> 16);
}

/** One SDES chunk's CNAME (borrowed, not NUL-terminated; len 0 when the chunk has none). */
struct rtcp_sdes_cname {
    uint32_t ssrc;
    const uint8_t *cname;
    size_t len;
};

/** Parse an SDES packet: up to `cap` chunks into out (*n set; extra chunks are validated but not
 *  stored). -EPROTO for an item or chunk running past the body. */
int rtcp_parse_sdes(const struct rtcp_packet *p, struct rtcp_sdes_cname *out, size_t cap, size_t *n,
                    struct xg_error *err);
/** Append an SDES with one chunk holding CNAME (1..255 bytes, else -EINVAL). */
int rtcp_write_sdes_cname(struct xg_writer *w, uint32_t ssrc, const char *cname,
                          struct xg_error *err);

/** BYE (PT 203): SSRCs leaving and an optional reason (borrowed). */
struct rtcp_bye {
    size_t n_ssrc;
    uint32_t ssrc[RTCP_MAX_COUNT];
    const uint8_t *reason;
    size_t reason_len;
};

int rtcp_parse_bye(const struct rtcp_packet *p, struct rtcp_bye *bye, struct xg_error *err);
/** Append a BYE for n (1..31) SSRCs with an optional reason (NULL, or <= 255 bytes). */
int rtcp_write_bye(struct xg_writer *w, const uint32_t *ssrc, size_t n, const char *reason,
                   struct xg_error *err);

/** FIR FCI entry (RFC 5104 §4.3.1.1): target SSRC and the request's command sequence number. */
struct rtcp_fir_entry {
    uint32_t ssrc;
    uint8_t seq;
};

/** A payload-specific feedback message (PT 206). For FIR, the FCI holds n_fir 8-byte entries
 *  (read them with rtcp_fir_entry_at); PLI has no FCI. */
struct rtcp_psfb {
    uint8_t fmt;
    uint32_t sender_ssrc;
    uint32_t media_ssrc; /* FIR: SHALL be 0 (not enforced on receipt); PLI: the media sender */
    const uint8_t *fci;  /* borrowed */
    size_t fci_len;
    size_t n_fir;
};

/** Parse a PSFB packet. -EPROTO for the wrong PT, a body under 8 bytes, or a FIR whose FCI is
 *  empty or not a multiple of 8 bytes. Other FMTs parse with their FCI left opaque. */
int rtcp_parse_psfb(const struct rtcp_packet *p, struct rtcp_psfb *fb, struct xg_error *err);
/** FIR entry i (< n_fir) of a parsed FIR. */
struct rtcp_fir_entry rtcp_fir_entry_at(const struct rtcp_psfb *fb, size_t i);
/** Append a FIR from sender_ssrc with n (1..64) entries; media SSRC 0, reserved bytes 0. */
int rtcp_write_fir(struct xg_writer *w, uint32_t sender_ssrc, const struct rtcp_fir_entry *e,
                   size_t n, struct xg_error *err);
/** Append a PLI from sender_ssrc about media_ssrc. */
int rtcp_write_pli(struct xg_writer *w, uint32_t sender_ssrc, uint32_t media_ssrc,
                   struct xg_error *err);

/* ---- SDP (RFC 4566; wire-rules §6, draft §7) ---- */

/** What the session's SDP says. Strings are NUL-terminated and borrowed. */
struct rtp_sdp_params {
    const char *session_name; /* s= (NULL → "xrgate") */
    uint64_t session_id;      /* o= sess-id and sess-version */
    const char *origin_addr;  /* o= unicast address (NULL → conn_addr); ':' means IP6 */
    const char *conn_addr;    /* c= address: unicast, or a multicast group */
    uint8_t ttl;              /* IPv4 multicast TTL in c= (0 → 16) */
    uint16_t port;            /* m= port, 1..65535 */
    uint8_t pt;               /* dynamic payload type 96..127 */
    bool avp;                 /* true: plain RTP/AVP, no rtcp-fb; false: RTP/AVPF + ccm fir */
    bool pli;                 /* AVPF: also offer "nack pli" */
    const char *cname;        /* non-NULL: a=ssrc:<ssrc> cname:<cname> */
    uint32_t ssrc;
    const char *direction; /* NULL → "sendrecv"; or "sendonly", "recvonly", "inactive" */
};

/** Write the session description (CRLF line ends, NUL-terminated) into buf of capacity cap:
 *  v=, o=, s=, c=, t=0 0, `m=application <port> RTP/AVPF <pt>`, `a=rtpmap:<pt> gamestate/90000`
 *  (media type application/gamestate, no parameters), `a=rtcp-mux`, `a=rtcp-fb:<pt> ccm fir`
 *  (+ `nack pli`), optional a=ssrc, direction. *len gets the length without the NUL.
 *  -EINVAL for a PT outside 96..127, port 0, missing address, or a string with whitespace or
 *  control characters (names may contain spaces); -EMSGSIZE when cap is too small. */
int rtp_sdp_write(char *buf, size_t cap, const struct rtp_sdp_params *p, size_t *len,
                  struct xg_error *err);

#endif
