/* The rtp adapter's private state, shared by rtp_adapter.c (I/O, ingress, egress) and
 * rtp_sdp.c (session identity, the SDP, the multicast group socket). Not a public interface. */
#ifndef XG_RTP_ADAPTER_H
#define XG_RTP_ADAPTER_H

#include <event2/event.h>
#include <math.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp_oids.h"
#include "adapters/rtp/srtp_session.h"
#include "core/egress_controls.h"
#include "core/adapter.h"
#include "core/log.h"
#include "core/net.h"
#include "core/udp_batch.h"
#include "mappings/frame.h"

#define RTPA_MAX_DEST 16
#define RTPA_MAX_ALLOW 64
#define RTPA_RECV_BATCH 64
/* Rot2 cannot represent a turn of π or more per second (draft §3.5): clamp just below it. */
#define RTPA_MAX_RATE (M_PI * 0.999)

/* per-reason drop counters (status names) */
enum rtpa_reason {
    R_TRUNCATED,      /* RTP shorter than its header (fixed, CSRCs, extension) */
    R_VERSION,        /* RTP/RTCP version != 2 */
    R_PADDING,        /* padding count 0 or larger than the packet */
    R_WRONG_PT,       /* payload type not ours */
    R_SSRC_DENIED,    /* not in allow_ssrc */
    R_FRAMING,        /* tag 0, Length 0 / past the end, bad VarUInt in Tag/Length: rest dropped */
    R_OBJECT,         /* one malformed object (bad VarUInt, Boolean > 1, overrun) */
    R_VALUE,          /* decoded values the table rejects (non-finite, degenerate rotation) */
    R_RTCP,           /* malformed RTCP compound */
    R_LIMIT,          /* max_ssrcs / max_objects reached */
    R_SRTP_AUTH,      /* SRTP/SRTCP authentication failed (wrong key, altered, plain RTP/RTCP) */
    R_SRTP_REPLAY,    /* SRTP/SRTCP replay (index seen or older than the window) */
    R_SRTP_MALFORMED, /* too short for header + trailer, version != 2, header past the end */
    R_COUNT
};

struct rtpa_dest {
    struct sockaddr_storage ss;
    socklen_t len;
    char str[64];
};

/* ingress: one object of one SSRC → table entity id */
struct rtpa_obj {
    struct rtpa_obj *next;
    uint64_t tag, object_id;
    uint32_t id; /* table id, 0 = not created yet */
};

struct rtpa_ssrc {
    struct rtpa_ssrc *next;
    uint32_t ssrc;
    struct sockaddr_storage from;
    socklen_t from_len;
    int64_t first_ns, last_ns;
    uint64_t packets, objects;
    struct rtpa_obj *objs;
    size_t n_objs;
    struct xg_time_map tmap; /* Time1 (as gateway time) → gateway time */
    /* FIRs we sent it */
    uint8_t our_fir_seq;
};

/* FIR dedupe (RFC 5104 §4.3.1): the last seq nr per requesting SSRC, for the most recent
 * RTPA_FIR_MEMO requesters (they need not send RTP themselves). */
#define RTPA_FIR_MEMO 32
struct rtpa_fir_memo {
    uint32_t ssrc;
    uint8_t seq;
    bool used;
};

struct rtpa {
    struct xg_egress_controls controls; /* buttons/analogs GameControl1 cannot carry */
    /* config */
    char bind_text[128];
    char iface[64];
    bool has_iface;
    struct sockaddr_storage bind_ss;
    socklen_t bind_len;
    struct rtpa_dest dest[RTPA_MAX_DEST];
    int n_dest;
    int pt;
    uint32_t ssrc;
    int64_t refresh_ms, rtcp_interval_ms, mtu, ttl, ssrc_timeout_ms, max_ssrcs, max_objects,
        max_objects_per_ssrc;
    enum rtp_gs_type kind_type[XG_KIND_COUNT];
    uint32_t allow[RTPA_MAX_ALLOW];
    int n_allow;
    char sdp_address[64];
    uint64_t session_id;
    char cname[128];
    struct xg_srtp_conf srtp; /* srtp.enabled: protect/unprotect everything */
    size_t pack_len;          /* RTP packets are packed to this (mtu - SRTP tag) */
    /* runtime */
    int fd;
    uint16_t bound_port;
    struct event *rx_ev, *refresh_ev, *rtcp_ev, *sweep_ev, *fir_ev;
    int64_t last_requested_ns; /* last full state sent for an FIR/PLI */
    uint16_t seq;
    uint32_t ts_offset;
    uint8_t *pkt;         /* mtu bytes */
    uint8_t *rbuf;        /* receive buffer */
    struct rtp_oids oids; /* egress: entity name -> object ID */
    /* egress cache: table slot -> (entity id, its object id record); saves the by-name lookup
     * per sample (8.6 % of the profile at 10 000 entities) */
    struct rtpa_oid_cache {
        uint32_t id;
        struct rtp_oid *o;
    } * oid_by_slot;
    size_t n_oid_by_slot;
    struct rtpa_ssrc *ssrcs;
    size_t n_ssrcs, n_objs;
    struct rtp_gs_iter iter;
    /* lines a peer can trigger, one rate limiter per kind (core/log.h) */
    struct xg_log_limit lim_reason[R_COUNT], lim_ssrc, lim_srtp, lim_icmp;
    struct rtpa_fir_memo firs[RTPA_FIR_MEMO];
    int fir_next;
    struct xg_srtp *srtp_tx, *srtp_rx; /* send (local key) / receive (remote key) sessions */
    /* counters */
    uint64_t packets_out, octets_out, payload_octets_out, objects_out, send_errors;
    uint64_t packets_in, objects_in, rtcp_in, rtcp_out, firs_in, plis_in, firs_dup, firs_out;
    uint64_t full_states, coalesced, refreshes, oversize, ignored_objects, gse_tags, ssrc_timeouts,
        byes_in;
    uint64_t reasons[R_COUNT];
    uint64_t srtp_send_errors, srtp_other_errors;
    struct xg_udp_batch ubatch; /* RTP/RTCP to the destinations, sent with sendmmsg */
    uint64_t batch_errors;      /* ubatch.errors already added to send_errors */
    uint64_t dest_unreachable;  /* ICMP destination/port unreachable for packets we sent */
    int64_t unreachable_ns;     /* when the last one arrived (0: never) */
    int64_t last_rtp_ts_ns;
    uint64_t rtcp_rng; /* rtcp_rand32 state for the randomised report interval */
    bool ssrc_random;  /* SSRC drawn at random (srtp without ssrc:): the SDP names none */
    int gfd;           /* multicast group socket (rtpa_group_open), -1 = none */
    struct event *grx_ev;
};

/** true for an IPv4 or IPv6 multicast address. */
bool rtpa_is_multicast(const struct sockaddr *sa);

/** The default SSRC when the config has no `ssrc:` (and no srtp): FNV-1a 64 of
 *  "xrgate-rtp-ssrc", gateway.id and the adapter name (NUL-separated), folded to 32 bits, so the
 *  daemon and `xrgate --sdp NAME` agree and a restart keeps it. */
uint32_t rtpa_default_ssrc(const char *gateway_id, const char *name);

/** The SDP o= sess-id (and sess-version, RFC 8866 §5.2): FNV-1a 64 of "xrgate-rtp-session",
 *  gateway.id and the adapter name, shifted right by 2 (below 2^62). */
uint64_t rtpa_default_session_id(const char *gateway_id, const char *name);

/** The session's IPv4 multicast group when it sends to one and binds a unicast address: the
 *  first IPv4 multicast destination; NULL otherwise (no destination group, or bind is itself the
 *  group). */
const struct sockaddr *rtpa_dest_group(const struct rtpa *r);

/** Receive on rtpa_dest_group (start()), so the session hears what peers send to the address its
 *  SDP advertises: a second socket bound to the group's port and joined on `interface`, whose
 *  packets go to `rx` like those of the bound socket; or, when the bound socket is 0.0.0.0 on the
 *  group's port already, the group joined on that socket. 0 when there is no such group, or a
 *  negative errno (logged). */
int rtpa_group_open(struct xg_adapter *a, event_callback_fn rx);

/** Close the group socket (stop()). */
void rtpa_group_close(struct rtpa *r);

/** The `sdp` op (core/adapter.h): see rtp_sdp.c. */
int rtpa_sdp(const struct xg_adapter *a, char *buf, size_t size);

/* Shared between rtp_adapter.c (configuration, egress, RTCP out, life cycle) and rtp_ingress.c
 * (RTP/RTCP in). All run on the reactor's thread. */

/** Count bad input under `reason` (R_*) and log it through that reason's rate limiter, naming
 *  `peer`. */
void rtpa_bad_input(struct xg_adapter *a, const char *peer, int reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/** rtp_icmp callback: an ICMP error for a packet sent to `dst` (counted, state unreachable). */
void rtpa_icmp_cb(void *user, const struct sockaddr *dst, socklen_t len, int err);
/** A peer asked for the full state (FIR/PLI): sent at once or after the FIR hold-off. */
void rtpa_requested_full_state(struct xg_adapter *a);
/** Send a compound RTCP FIR (RFC 5104 §4.3.1) asking SSRC s for its full state. */
void rtpa_send_fir(struct xg_adapter *a, struct rtpa_ssrc *s);
/** Forget SSRC s (BYE or silence); with remove_entities its entities leave the table. */
void rtpa_ssrc_forget(struct xg_adapter *a, struct rtpa_ssrc *s, bool remove_entities);
/** libevent callbacks of the UDP socket (read) and of the silent-SSRC/object sweep timer. */
void rtpa_rx_cb(evutil_socket_t fd, short what, void *arg);
void rtpa_sweep_cb(evutil_socket_t fd, short what, void *arg);

#endif
