/* The rtp adapter's private state, shared by rtp_adapter.c (I/O, egress, life cycle),
 * rtp_conf.c (configuration), rtp_egress.c (egress objects), rtp_ingress.c (ingress), rtp_dest.c
 * (addresses by name) and rtp_sdp.c (session identity, the SDP, the multicast group socket). Not a
 * public interface. */
#ifndef XG_RTP_ADAPTER_H
#define XG_RTP_ADAPTER_H

#include <math.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/net/transport.h"
#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp_oids.h"
#include "adapters/rtp/rtp_session.h"
#include "adapters/rtp/srtp_session.h"
#include "core/table/egress_controls.h"
#include "core/adapter/adapter.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/resolve.h"
#include "core/net/udp_dests.h"
#include "core/net/udp_batch.h"
#include "mappings/frame.h"
#include "core/net/ingress_budget.h"
#include "core/net/timer.h"
#include "core/net/udp_endpoint.h"

#define RTPA_MAX_ALLOW 64
#define RTPA_LOCAL_CACHE 4
/* Rot2 cannot represent a turn of π or more per second (draft §3.5): clamp just below it. */
#define RTPA_MAX_RATE (M_PI * 0.999)

/* ingress: one object of one SSRC → table entity id */
struct rtpa_obj {
    struct rtpa_obj *next;
    uint64_t tag, object_id;
    uint32_t id; /* table id, 0 = not created yet */
};

struct rtpa {
    struct xg_egress_controls controls; /* buttons/analogs GameControl1 cannot carry */
    /* config */
    char bind_text[128];
    char iface[64];
    bool has_iface;
    struct xg_udp_bind bind; /* `bind` (core/net/udp_dests.h): ss AF_UNSPEC while a name resolves */
    struct xg_udp_dests dests; /* `destinations` (core/net/udp_dests.h) */
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
    struct xg_udp_rx rx; /* the socket and its reading (core/net/udp_endpoint.h); rx.fd -1 = none */
    uint16_t bound_port;
    struct xg_timer *tick;   /* the session's next deadline (core/net/timer.h) */
    struct rtp_session sess; /* SSRC table, RTCP, FIR/PLI, refresh (rtp_session.h) */
    uint8_t *pkt;            /* mtu bytes */
    struct rtp_oids oids;    /* egress: entity name -> object ID */
    size_t n_objs;           /* ingress objects over every SSRC */
    /* source addresses asked whether they are ours (rtpa_is_own) */
    struct {
        struct sockaddr_storage ss;
        bool local;
    } local[RTPA_LOCAL_CACHE];
    int n_local, local_next;
    /* lines a peer can trigger, one rate limiter per kind (core/util/log.h) */
    struct xg_log_limit lim_reason[R_COUNT], lim_srtp, lim_icmp;
    struct xg_srtp *srtp_tx, *srtp_rx; /* send (local key) / receive (remote key) sessions */
    /* counters (the session's are in sess) */
    uint64_t packets_out, octets_out, payload_octets_out, objects_out, send_errors;
    uint64_t objects_in, full_states, oversize;
    uint64_t reasons[R_COUNT];
    uint64_t srtp_send_errors, srtp_other_errors;
    struct xg_ingress_budget budget; /* per wake-up of the socket (core/net/ingress_budget.h) */
    struct xg_udp_batch ubatch;      /* RTP/RTCP to the destinations, sent with sendmmsg */
    uint64_t batch_errors;           /* ubatch.errors already added to send_errors */
    uint64_t dest_unreachable;       /* ICMP destination/port unreachable for packets we sent */
    int64_t unreachable_ns;          /* when the last one arrived (0: never) */
    int64_t last_rtp_ts_ns;
    bool ssrc_random;     /* SSRC drawn at random (srtp without ssrc:): the SDP names none */
    struct xg_udp_rx grx; /* multicast group socket (rtpa_group_open), grx.fd -1 = none */
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
int rtpa_group_open(struct xg_adapter *a);

/** Close the group socket (stop()). */
void rtpa_group_close(struct rtpa *r);

/** The `sdp` op (core/adapter/adapter.h): see rtp_sdp.c. */
int rtpa_sdp(const struct xg_adapter *a, char *buf, size_t size);

/* Shared between rtp_adapter.c (egress, RTCP out, life cycle), rtp_conf.c (configuration),
 * rtp_egress.c (egress objects) and rtp_ingress.c (RTP/RTCP in). All run on the reactor's thread.
 */

/** rtp_conf.c: read and check the configuration keys (listed at the top of rtp_adapter.c) into
 *  a->priv (a struct rtpa) with their defaults: the ingress caps, egress object types, addresses
 *  (rtpa_conf_addrs), allow_ssrc and srtp (key files read, one warning per key file others can
 *  read). *ssrc is the configured `ssrc:` or -1 when absent. 0, or a negative errno with err
 *  naming the key and the value. */
int rtpa_conf_read(struct xg_adapter *a, const struct xg_conf *conf, int64_t *ssrc,
                   struct xg_error *err);
/** rtp_egress.c: the game state object (*o, overwritten, tag set) of type `type` (an egress type;
 *  any other becomes Object2) for pose p (already in the wire frame) with object id oid, Time1
 *  time1 and the hand side `left` (Hand1/Hand2/SixDOF1/ThreeDOF1). Velocities are saturated to
 *  binary16's range, angular rates clamped below RTPA_MAX_RATE (draft §3.5). */
void rtpa_object_from_pose(struct rtp_gs_object *o, enum rtp_gs_type type, uint64_t oid,
                           uint16_t time1, bool left, const struct xg_pose *p);
/** rtp_egress.c: the GameControl1 object (*o, overwritten) of entity e's buttons 0..19 and
 *  analogs 0..3 (clamped to [-1, 1]) with od's object id; updates od's last button mask and the
 *  Time1 of its last change (time1 when the mask differs from the one last sent). */
void rtpa_game_control(struct rtp_gs_object *o, const struct xg_entity *e, struct rtp_oid *od,
                       uint16_t time1);

/** Count bad input under `reason` (R_*) and log it through that reason's rate limiter, naming
 *  `peer`. */
void rtpa_bad_input(struct xg_adapter *a, const char *peer, int reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/** xg_udp_icmp_drain callback: an ICMP error for a packet sent to `dst` (counted, state
 * unreachable). */
void rtpa_icmp_cb(void *user, const struct sockaddr *dst, socklen_t len, int err);
/** The session's callbacks (rtp_ingress.c): one object of a sender into the table, a sender
 *  forgotten, the sweep of a sender's objects whose entities the table expired. */
void rtpa_object(void *user, struct rtp_sess_ssrc *s, const struct rtp_gs_object *o,
                 int64_t recv_ns, int64_t wall_ns, const char *peer);
void rtpa_ssrc_forget(void *user, struct rtp_sess_ssrc *s, bool remove_entities);
void rtpa_obj_sweep(void *user, struct rtp_sess_ssrc *s);
/** Is `from` our own socket's address (a packet of ours looped back)? (rtp_ingress.c) */
bool rtpa_is_own(void *user, const struct sockaddr *from, socklen_t len);
/* rtp_dest.c: addresses by name (core/net/resolve.h) */

/** Read `bind` (text) and `destinations`: numeric addresses into r->bind / r->dests, host names
 *  kept to be resolved at start (syntax checked: --check). Configuration errors name the key. */
int rtpa_conf_addrs(struct xg_adapter *a, const struct xg_conf *conf, const char *bind,
                    struct xg_error *err);
/** start(): with a numeric bind, open(a) at once and return its result; with a bind host name,
 *  resolve it first: open(a) runs when it resolves (before this returns for /etc/hosts names,
 *  its result returned then); a later failure to open is logged and shown as state "error". */
int rtpa_bind_start(struct xg_adapter *a, int (*open)(void *a));
/** Resolve the destinations given by name (after the socket is open: of its family). */
void rtpa_dests_start(struct xg_adapter *a);
/** Free the resolvers (stop()). */
void rtpa_resolvers_stop(struct xg_adapter *a);
/** Destinations with an address now. */
int rtpa_dests_active(const struct rtpa *r);
/** Status: state while the bind name resolves, last_error and the counters
 *  destinations_unresolved (gauge) and dns_failures (counter) when names are configured. */
void rtpa_dests_status(const struct rtpa *r, struct xg_status *st);

/** Start reading fd (the bound or the group socket) into rx: datagrams to the session, ICMP
 *  errors drained, the budget r->budget shared by both sockets. 0 or -ENOMEM. */
int rtpa_rx_start(struct xg_adapter *a, struct xg_udp_rx *rx, int fd);
/** Arm the session's timer at its next deadline (after anything that may have moved it). */
void rtpa_arm(struct xg_adapter *a);

#endif
