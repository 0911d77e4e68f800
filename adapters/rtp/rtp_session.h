/* The rtp adapter's RTP/RTCP session, socket-free: bytes and time in; bytes out (to every
 * destination or to one peer), game-state objects out, deadlines out. No libevent, no sockets:
 * the glue (rtp_adapter.c, rtp_ingress.c) reads the socket, protects/unprotects SRTP, sends,
 * arms one timer at rtp_session_next_deadline() and calls rtp_session_tick() when it fires.
 *
 * What the session does:
 * - SSRC table: a sender is known from its first RTP packet (payload type, allow list and the
 *   max_ssrcs cap checked first), answered with a compound RTCP FIR (RFC 5104 §4.3.1) asking for
 *   its full state, forgotten on BYE (from the address it sends from) or after ssrc_timeout of
 *   silence.
 * - Sequence accounting per sender (RFC 3550 §6.4.1, Appendix A.1): the extended highest
 *   sequence number across wraps, packets received, lost (expected − received, never negative),
 *   reordered (older than the highest seen) and resyncs (a jump of more than 3000 confirmed by the
 *   next packet). Every packet is still handed on: the table decides what is new by capture time.
 * - RTCP out: every packet is a compound (rtcp_out.h); the periodic report at a random time in
 *   [0.5, 1.5) × rtcp_interval after the previous one (RFC 3550 §6.3.1); BYE on stop.
 * - FIR/PLI in: a full state at once, at most one per 20 ms (a burst is coalesced into one
 *   deferred full state); FIRs are deduplicated by (requester, seq nr) (RFC 5104 §4.3.1).
 * - Periodic refresh of the full state every refresh_ns.
 * - SSRC collision (RFC 3550 §8.2): an RTP or RTCP packet carrying our own SSRC from a
 *   transport address that is not ours (ops.is_own) is a collision: we send a BYE for the old
 *   SSRC, choose a new random one (ops.ssrc_changed tells the glue) and keep the conflicting
 *   address; a later packet with our (new) SSRC from an address already in that list is our own
 *   traffic looped back by a third party and is dropped without another change.
 *
 * Log lines a peer can trigger (new SSRC, BYE, silence, collision) go through one rate limiter
 * per kind. Single-threaded: the reactor's thread. */
#ifndef XG_RTP_SESSION_H
#define XG_RTP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/clock/time_map.h"

/* per-reason drop counters (status names in rtp_adapter.c) */
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

struct rtpa_obj; /* the glue's per-object state (rtp_adapter.h) */

/** One remote sender (SSRC). The session owns it; `objs`, `n_objs` and `tmap` belong to the
 *  glue (released in ops.forget). */
struct rtp_sess_ssrc {
    struct rtp_sess_ssrc *next;
    uint32_t ssrc;
    struct sockaddr_storage from; /* where it sends from (follows the newest packet) */
    socklen_t from_len;
    int64_t first_ns, last_ns; /* first / latest packet (monotonic ns) */
    uint64_t packets, objects;
    /* sequence accounting (RFC 3550 A.1) */
    uint16_t max_seq;  /* highest sequence number seen */
    uint32_t cycles;   /* wraps of the sequence number, × 65536 */
    uint32_t base_seq; /* first sequence number (of the current resync) */
    uint32_t bad_seq;  /* after a large jump: the number that would confirm it */
    uint64_t received; /* packets counted since base_seq */
    uint64_t reordered, resyncs;
    uint8_t our_fir_seq; /* FIRs we sent it */
    /* the glue's */
    struct rtpa_obj *objs;
    size_t n_objs;
    struct xg_time_map tmap; /* Time1 (as gateway time) → gateway time */
};

/** What the session asks of the glue. `user` is rtp_session_conf.user. */
struct rtp_session_ops {
    /** Send buf[0..len) (capacity cap, room for an SRTP trailer): to == NULL to every
     *  destination, else to that peer. `rtcp` says which SRTP protection applies. 0 when it left
     *  for at least one address, else a negative errno (nothing counted as sent). */
    int (*send)(void *user, uint8_t *buf, size_t len, size_t cap, bool rtcp,
                const struct sockaddr *to, socklen_t to_len);
    /** One decoded object of sender s (recv_ns: monotonic receive time, wall_ns the same on the
     *  wall clock). */
    void (*object)(void *user, struct rtp_sess_ssrc *s, const struct rtp_gs_object *o,
                   int64_t recv_ns, int64_t wall_ns, const char *peer);
    /** Send the full state now (FIR/PLI answer, refresh). */
    void (*full_state)(void *user, int64_t now_ns);
    /** Sender s goes (BYE, silence, session freed): release the glue's part of it; with
     *  remove_entities its entities leave the table. s is freed after this returns. */
    void (*forget)(void *user, struct rtp_sess_ssrc *s, bool remove_entities);
    /** Periodic sweep of sender s (every ssrc_timeout / 4), before its silence is checked. */
    void (*sweep)(void *user, struct rtp_sess_ssrc *s);
    /** Bad input of kind `reason` (R_*) from peer: count and log msg (already formatted). With
     *  bad_admit set, it is only called when bad_admit returned true, and only logs. */
    void (*bad_input)(void *user, const char *peer, int reason, const char *msg);
    /** Optional: count bad input of kind `reason` and say whether a log line passes the rate
     *  limiter (core/util/log.h xg_log_admit): the message is formatted only then (issue 30 item
     * 2). */
    bool (*bad_admit)(void *user, int reason);
    /** Is `from` one of our own sockets (a packet we sent, looped back)? NULL: never. */
    bool (*is_own)(void *user, const struct sockaddr *from, socklen_t len);
    /** Our SSRC changed after a collision (RFC 3550 §8.2). May be NULL. */
    void (*ssrc_changed)(void *user, uint32_t old_ssrc, uint32_t new_ssrc);
};

/** Configuration (strings borrowed: they must outlive the session). */
struct rtp_session_conf {
    const char *component; /* log component (the adapter's name) */
    const char *cname;     /* SDES CNAME, 1..255 bytes */
    uint32_t ssrc;         /* our SSRC */
    int pt;                /* payload type we send and accept */
    const uint32_t *allow; /* accept RTP only from these SSRCs (n_allow 0: any) */
    int n_allow;
    int64_t max_ssrcs;        /* senders kept at most */
    int64_t refresh_ns;       /* full state this often (0: never) */
    int64_t rtcp_interval_ns; /* mean RTCP report interval (0: no reports) */
    int64_t ssrc_timeout_ns;  /* a sender silent this long is forgotten */
    uint16_t seq;             /* first RTP sequence number we send */
    uint32_t ts_offset;       /* added to our 90 kHz RTP timestamps */
    uint64_t seed;            /* random state (RTCP interval, new SSRC); 0 picks a fixed one */
    const struct rtp_session_ops *ops;
    void *user;
};

#define RTP_SESS_FIR_MEMO 32                 /* FIR requesters remembered (dedupe) */
#define RTP_SESS_FIR_GAP_NS (20 * 1000000LL) /* FIR/PLI answers at most this often */
#define RTP_SESS_CONFLICTS 8                 /* conflicting addresses remembered (§8.2) */

struct rtp_session {
    struct rtp_session_conf conf;
    uint32_t ssrc; /* our current SSRC (conf.ssrc until a collision) */
    /* egress */
    uint16_t seq;
    uint64_t packets_out, payload_octets_out;
    /* ingress */
    struct rtp_sess_ssrc *ssrcs;
    size_t n_ssrcs;
    struct rtp_gs_iter iter;
    struct {
        uint32_t ssrc;
        uint8_t seq;
        bool used;
    } firs[RTP_SESS_FIR_MEMO];
    int fir_next;
    struct sockaddr_storage conflicts[RTP_SESS_CONFLICTS];
    int n_conflicts, conflict_next;
    /* our SSRCs before a collision changed them: our own packets still in flight (or looped back
     * by the group) carry them, and must not make us a sender of our own */
    uint32_t prev_ssrc[RTP_SESS_CONFLICTS];
    int n_prev_ssrc, prev_ssrc_next;
    /* deadlines (monotonic ns; 0: none) */
    int64_t rtcp_due_ns, refresh_due_ns, sweep_due_ns, fir_due_ns;
    int64_t last_requested_ns; /* last full state sent for an FIR/PLI */
    uint64_t rng;
    struct xg_log_limit lim_ssrc, lim_collision;
    bool started;
    /* counters */
    uint64_t packets_in, rtcp_in, rtcp_out, firs_in, plis_in, firs_dup, firs_out, byes_in;
    uint64_t ssrc_timeouts, gse_tags, ignored_objects, coalesced, refreshes;
    uint64_t collisions, loops, send_errors;
    uint64_t retired_lost, retired_reordered; /* of senders forgotten */
};

/** Set up a session (no I/O). */
void rtp_session_init(struct rtp_session *s, const struct rtp_session_conf *conf);
/** Start the clocks at now_ns: the first report, refresh and sweep are scheduled from here. */
void rtp_session_start(struct rtp_session *s, int64_t now_ns);
/** Send the BYE (compound SR/RR + SDES + BYE, RFC 3550 §6.1) when we have sent RTP; the
 *  deadlines are cleared. */
void rtp_session_stop(struct rtp_session *s, int64_t now_ns);
/** Forget every sender (ops.forget without removing entities). */
void rtp_session_free(struct rtp_session *s);

/** One datagram received at now_ns from `from` (SRTP already removed): `rtcp` from the RTP/RTCP
 *  demux (rtp_is_rtcp). peer is from as text, for log lines. */
void rtp_session_receive(struct rtp_session *s, const uint8_t *buf, size_t len, bool rtcp,
                         const struct sockaddr *from, socklen_t from_len, const char *peer,
                         int64_t now_ns);

/** The earliest pending deadline (monotonic ns), or 0 when none. */
int64_t rtp_session_next_deadline(const struct rtp_session *s);
/** Do what is due at now_ns: RTCP report, refresh, coalesced full state, sweep of silent
 *  senders. */
void rtp_session_tick(struct rtp_session *s, int64_t now_ns);

/** A peer asked for the full state (FIR/PLI): ops.full_state at once, or at the end of the
 *  20 ms hold-off (then counted in `coalesced`). */
void rtp_session_request_full_state(struct rtp_session *s, int64_t now_ns);

/** Egress: the header of the next RTP packet (pt, seq, timestamp of now_ns, our SSRC). */
void rtp_session_header(const struct rtp_session *s, int64_t now_ns, struct rtp_header *h);
/** Egress: that packet was built (its sequence number is used); `sent` when it left with
 *  payload_len bytes of payload (SR counts). */
void rtp_session_packet_done(struct rtp_session *s, bool sent, size_t payload_len);

/** The sender with this SSRC, or NULL. */
struct rtp_sess_ssrc *rtp_session_find(const struct rtp_session *s, uint32_t ssrc);
/** Forget sender x (ops.forget with remove_entities, then freed). */
void rtp_session_forget(struct rtp_session *s, struct rtp_sess_ssrc *x, bool remove_entities);

/** Extended highest sequence number of x (cycles + max_seq). */
uint32_t rtp_sess_ssrc_ext_max(const struct rtp_sess_ssrc *x);
/** Packets of x lost so far (expected − received, 0 if negative; RFC 3550 A.3). */
uint64_t rtp_sess_ssrc_lost(const struct rtp_sess_ssrc *x);
/** Lost / reordered over every sender, including those forgotten. */
uint64_t rtp_session_lost(const struct rtp_session *s);
uint64_t rtp_session_reordered(const struct rtp_session *s);

#endif
