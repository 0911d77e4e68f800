/* less adapter: the LESS session of one peer, free of sockets (issue 15 item 2).
 *
 * A session holds only protocol state: the peer's connection-control parameters, the types and
 * entities each side introduced, the peer's subscription to our pose type, the queue of encoded
 * messages waiting to leave, and on UDP the receive ack window, the stale rule and the window
 * of sent packets kept for re-sends (P12-P14). It takes decoded packets and the time in
 * (less_session_rx_tcp, less_session_rx_udp) and gives bytes and events out: encoded TCP
 * packets (less_session_tcp_packet), UDP datagrams through the `datagram` event
 * (less_session_udp_out, less_udp_resend), and the events of struct
 * less_session_events. Entities the peer introduces go into the adapter's table.
 *
 * The sockets stay in the adapter glue: less_tcp.c (bufferevents, TLS, connect and listen),
 * less_udp.c (the UDP socket, its address and timer) and less_adapter.c (the peers of an
 * adapter, the hub, start/stop). The session reaches the adapter only through struct less_env
 * (below: configuration, table, counters, log limiters, scratch), never its sockets, and calls
 * no glue function: the glue includes this header, never the other way round
 * (tests/static/check_less_includes.sh). tests/unit/test_less_session.c drives it with no socket
 * at all, and links no libevent and no socket call (tests/static/check_socket_free.sh).
 * Every name this header declares starts with less_ or LESS_. */
#ifndef XG_LESS_SESSION_H
#define XG_LESS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "core/adapter/adapter.h"
#include "core/table/entity.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/clock/time_map.h"

#define LESS_OUR_TYPEID 1
#define LESS_ARENA_SIZE (256 * 1024) /* bytes of the decode arena (less_env.arena_buf) */
#define LESS_UDP_MAX_INFLIGHT 63
#define LESS_UDP_LOSS_NS (250 * XG_NS_PER_MS)

struct less_mapping;

/** How the adapter reaches its peers (its `mode` key): the session follows the TCP order rules
 *  (LESS_MODE_CONNECT, LESS_MODE_LISTEN) or the UDP ones (LESS_MODE_UDP, P12-P15). */
enum less_mode { LESS_MODE_CONNECT, LESS_MODE_LISTEN, LESS_MODE_UDP };

/** What every session of one adapter shares: the configuration a session reads, the adapter's
 *  table and counters, its log limiters and scratch buffers. Owned by the adapter glue (the
 *  `env` member of struct less_adapter, less_adapter_priv.h), set up before the first session
 *  starts and outliving every session; a unit test fills one by hand. No socket, no libevent. */
struct less_env {
    struct xg_adapter *a; /* name, table, frame, rate_hz, samples_in/out, drops */
    enum less_mode mode;
    const char *gw_id;    /* our gateway id (federation: origin, echo suppression) */
    char schema_str[128]; /* our connection-control schema string (P5) */
    struct less_key key;  /* the key we sign with (id key_id) */
    char key_id[64];
    int64_t mtu; /* UDP: largest datagram sent or accepted, bytes */
    /* types loaded from mapping files (`schemas`), owned by the glue */
    struct less_mapping **mappings;
    size_t n_mappings;
    /* scratch: the decode arena (LESS_ARENA_SIZE bytes) and the TCP packet buffer */
    uint8_t *arena_buf;
    uint8_t *pktbuf;
    size_t pktbuf_cap;
    /* counters (status) */
    uint64_t packets_in, packets_out, bad_signature, framing_errors, slow_peer_drops,
        updates_skipped, updates_coalesced, echo_suppressed, stale_packets, refused_403,
        not_found_404, resends, duplicates, duplicates_ignored, window_full, hub_relayed,
        peer_restarts, entities_introduced, entities_removed, unknown_requests;
    /* lines a peer can trigger, one rate limiter per kind (core/util/log.h) */
    struct xg_log_limit lim_connected, lim_closed, lim_session, lim_request, lim_dgram, lim_packet,
        lim_stale, lim_send;
};

/** An entity the peer introduced to us. */
struct less_in_ent {
    int64_t wire_id;
    int64_t typeid;
    uint32_t table_id;
    bool ignored;    /* our own entity coming back (origin gateway == our id) */
    bool dirty;      /* updated since the hub last relayed it to the other peers */
    uint32_t dup_of; /* the same federated entity already arrived by another path (mesh) */
    struct less_pose pose;
    char name[XG_NAME_MAX];
    char origin[128];
    char origin_gw[64];
};

/** An entity we introduced to the peer. */
struct less_out_ent {
    uint32_t table_id;
    int64_t wire_id;
    int8_t active_sent; /* -1 unknown */
    /* UDP: sequence of the packet that last carried each property, and whether it was acked */
    bool introduce_acked;
    int64_t intro_seq; /* absolute send counter of the introduce, -1 none */
    int64_t upd_seq;   /* absolute send counter of the newest update/introduce */
    bool pending;      /* an update skipped while `skip` (slow peer): sent once it drains */
};

/** One queued message: where it is in the buffer and what it is about. */
struct less_msg_ref {
    uint8_t code;
    uint32_t off, len;
    int64_t wire_id; /* our entity id for introduce/update/remove, else -1 */
};

/** UDP: what a sent packet carried, for re-sends (P13). */
struct less_udp_sent {
    bool in_use, acked;
    uint8_t seq;
    int64_t counter; /* absolute send counter */
    int64_t sent_ns;
    int64_t mark;  /* tx_counter after the last transmission: lost if a later one is acked */
    uint8_t *msgs; /* encoded messages as first sent */
    size_t msgs_len;
    uint64_t count;
    struct less_msg_ref *refs; /* count entries */
};

/** What a session tells its owner (the adapter glue); every callback is optional. */
struct less_session_events {
    void *user;
    /** The peer's first connection-control arrived: the session is up (handshake done). */
    void (*up)(void *user);
    /** The peer subscribed to our pose type for the first time: introduce every entity. */
    void (*subscribed)(void *user);
    /** The queued messages exceed a TCP packet's worth: send them now. */
    void (*flush)(void *user);
    /** UDP: one encoded, signed datagram of at most `mtu` bytes to send to the peer. */
    void (*datagram)(void *user, const uint8_t *buf, size_t len);
};

/** The protocol state of one peer's session. */
struct less_session {
    struct less_env *env; /* the adapter's configuration, table, counters (never its sockets) */
    struct less_session_events ev;
    char addr[80];  /* the peer, as log lines name it */
    bool streaming; /* got the peer's connection-control */
    bool closing;   /* ended: nothing more is sent */
    /* the glue's slow-client policy (core/net/transport_server.h, listen mode) */
    bool skip;        /* updates are skipped (less_out_ent.pending marks them) this drain */
    bool any_pending; /* some less_out_ent.pending is set */
    /* peer's connection parameters */
    int64_t quantum_ns;
    int64_t first_seq, rate_hz;
    char peer_gw[64];
    char peer_session[40]; /* "session=" token of the peer's schema string (UDP restarts) */
    char key_id[64];
    /* receive side */
    bool any_rx;
    int64_t last_rx_ts;
    struct xg_time_map tmap;
    /* peer's types */
    struct {
        int64_t typeid;
        const struct less_schema *schema;
    } * ptypes;
    size_t n_ptypes, cap_ptypes;
    /* entities introduced by the peer */
    struct less_in_ent *in;
    size_t n_in, cap_in;
    struct less_imap in_map; /* wire id -> index in `in` */
    /* subscription of the peer to our pose type */
    bool subscribed;
    uint32_t sub_mask;
    /* entities we introduced */
    struct less_out_ent *out;
    size_t n_out, cap_out;
    struct less_imap out_map;  /* table id -> index in `out` */
    struct less_imap out_wire; /* wire id -> table id */
    int64_t next_wire_id;
    /* send side */
    int64_t last_tx_ts;
    uint8_t *msgbuf;
    size_t msg_len, msg_cap;
    uint64_t msg_count;
    struct less_msg_ref *midx; /* one per queued message (UDP re-sends) */
    size_t midx_cap;
    int64_t last_send_ns;
    /* UDP */
    struct less_ack_window rxwin;
    struct less_rx_times rxts; /* stale rule (P12) */
    uint8_t tx_seq;
    int64_t tx_counter;
    struct less_udp_sent sent[256];
    /* pass-1 bookkeeping (introductions seen earlier in the packet being checked) */
    bool dry;
    int64_t pend_types[64];
    const struct less_schema *pend_schemas[64];
    size_t n_pend_types;
    struct less_imap pend_ents; /* wire id -> index in pend_typeids */
    int64_t *pend_typeids;      /* typeids of the entities introduced earlier in the packet */
    size_t n_pend_ent, cap_pend_ent;
};

/* ---- life cycle (less_send.c) ---- */

/** Start a session with peer `addr` (a label for log lines) of the adapter whose shared state is
 *  `env` (borrowed: it must outlive the session). */
void less_session_init(struct less_session *s, struct less_env *env, const char *addr,
                       const struct less_session_events *ev);
/** Free its memory; the entities the peer introduced leave the table. */
void less_session_free(struct less_session *s);
/** Streaming, subscribed to our type and not closing: entities may be sent. */
bool less_session_ready(const struct less_session *s);

/* ---- receiving (less_session.c) ---- */

/** The "session=<token>" word of a connection-control schema string into out (size bytes,
 *  NUL-terminated, truncated; "" if there is none). */
void less_session_token(const char *schema, char *out, size_t size);
/** Our schema for a type URI the peer introduces: the pose schema, a loaded mapping's schema
 *  (env->mappings), or NULL for a type we do not read. */
const struct less_schema *less_schema_for_uri(const struct less_env *env, const char *uri);

/** Apply an authentic, decoded packet: every message is checked first (a dry pass: a packet that
 *  fails anywhere applies nothing), then applied. `late` (UDP, P12): updates and repeated
 *  introductions are skipped. 0, or a negative errno with err naming message, field, value. */
int less_process_packet(struct less_session *s, const struct less_frame *f, int64_t now, bool late,
                        struct xg_error *err);
/** TCP: a decoded packet at monotonic time `now` (ns): its timestamp must increase (P4), then
 *  less_process_packet(). 0 or a negative errno with err set (the session must be closed). */
int less_session_rx_tcp(struct less_session *s, const struct less_frame *f, int64_t now,
                        struct xg_error *err);

/** What less_session_rx_udp() did with a datagram. */
enum less_session_rx {
    LESS_SESSION_APPLIED = 0, /* applied (or late and applied in part, P12) */
    LESS_SESSION_DUPLICATE,   /* already received: counted, nothing applied */
    LESS_SESSION_STALE,       /* not newer than the packets before it (P12): nothing applied */
    LESS_SESSION_REFUSED,     /* well signed but malformed: acknowledged, nothing applied */
};
/** UDP: an authentic datagram (`rc` is less_udp_decode's result: 0, or an error after the
 *  signature was verified, described by decode_err) at monotonic time `now` (ns): a peer restart
 *  (a new session token) starts our side over; the ack window and the stale rule (P12) decide;
 *  the peer's acks are applied; then less_process_packet(). Refused, stale packets are counted and
 *  logged (rate-limited) naming the peer, sequence number and reason. */
enum less_session_rx less_session_rx_udp(struct less_session *s, const struct less_frame *f, int rc,
                                         const struct xg_error *decode_err, int64_t now);

/* ---- sending (less_send.c) ---- */

/** The codec context for decoding what the peer sends: its types and the entities it introduced
 *  (including those introduced earlier in the packet being checked). */
void less_rx_ctx(struct less_session *s, struct less_context *c);
/** The schema of a type the peer introduced (typeid is the peer's), NULL if unknown. */
const struct less_schema *less_peer_type_schema(struct less_session *s, int64_t typeid);
/** Codec callback (user: the session): the peer's type id of entity `id` it introduced into
 *  *typeid. 0, or -ENOENT for an id it never introduced. */
int less_cb_rx_sender_entity(void *user, int64_t id, int64_t *typeid);
/** The timestamp (us) of a packet sent at monotonic time `now` (ns), newer than the last one. */
int64_t less_next_ts(struct less_session *s, int64_t now);
/** Append one encoded message to the queue. 0 or a negative errno (logged). */
int less_queue_msg(struct less_session *s, const struct less_msg *m);
/** Queue our connection-control (P5) and the introduce-type of our pose type. */
void less_send_connection_control(struct less_session *s);
/** Our record of table entity `table_id` introduced to the peer, NULL if not introduced. */
struct less_out_ent *less_out_find(struct less_session *s, uint32_t table_id);
/** Forget our introduction of table entity `table_id` (after its remove-entity is queued). */
void less_out_del(struct less_session *s, uint32_t table_id);
/** Queue an introduce (full) or an update (the changing properties) of e at pose_in (internal
 *  frame) for the peer; on UDP an update waits until the introduce was acknowledged (P15). */
void less_send_entity(struct less_session *s, const struct xg_entity *e,
                      const struct xg_pose *pose_in, bool introduce);
/** Queue a method-result (P17) answering request_id with status (403, 404) and reason text. */
void less_send_result(struct less_session *s, int64_t request_id, int64_t status,
                      const char *reason);
/** Would sending e to the peer echo it back toward the gateway it came from? */
bool less_echo_toward(const struct less_session *s, const struct xg_entity *e);
/** The entity kind of a `kind` property value (XG_KIND_OBJECT for an unknown value). */
enum xg_kind less_kind_from_wire(int64_t k);
/** TCP: encode the queued messages as one signed packet sent at `now` into *out (the adapter's
 * scratch, valid until the next call) and empty the queue. 1 if a packet was made, 0 if nothing was
 *  queued, a negative errno (logged). */
int less_session_tcp_packet(struct less_session *s, int64_t now, const uint8_t **out, size_t *len);

/* ---- UDP (less_session_udp.c) ---- */

/** Send the queued messages in datagrams of at most `mtu` bytes through the `datagram` event
 *  (an empty one if `force` and nothing is queued, to carry acks), remembering each for
 *  re-sends; with 63 packets unacknowledged the messages wait (updates are dropped, P13). */
int less_session_udp_out(struct less_session *s, bool force, int64_t now);
/** The peer acknowledged (ack_last, mask) (P13): marks those sent packets acked and the
 *  introduces they carried. */
void less_udp_on_ack(struct less_session *s, uint8_t ack_last, uint64_t mask);
/** Re-send the packets lost by `now` (monotonic ns; a later packet acked first, or 250 ms
 *  passed, P13) under their old sequence numbers with only the messages still current,
 *  through the `datagram` event. */
void less_udp_resend(struct less_session *s, int64_t now);

#endif
