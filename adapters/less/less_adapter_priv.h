/* Private to the less adapter's files (less_adapter.c, less_session.c, less_tcp.c, less_udp.c,
 * less_conf.c): the adapter and per-peer state and the functions the files share. Nothing else
 * includes it but the socket-free unit test (tests/unit/test_less_session.c). No libevent header:
 * the socket handles are opaque pointers here. */
#ifndef XG_LESS_ADAPTER_PRIV_H
#define XG_LESS_ADAPTER_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "adapters/less/less_mapping.h"
#include "core/adapter.h"
#include "core/conf.h"
#include "core/udp_batch.h"
#include "core/egress_controls.h"
#include "core/error.h"
#include "core/log.h"
#include "core/udp_batch.h"
#include "core/net.h"
#include "core/tls.h"
#include "core/transport_client.h"

struct bufferevent;
struct evconnlistener;
struct event;

#define OUR_TYPEID 1
#define ARENA_SIZE (256 * 1024)
#define UDP_MAX_INFLIGHT 63
#define UDP_LOSS_NS (250 * XG_NS_PER_MS)
#define LESS_MAX_KEYS 8
#define HANDSHAKE_TIMEOUT_S 10 /* TCP: connect + TLS + the peer's connection-control */

enum mode { MODE_CONNECT, MODE_LISTEN, MODE_UDP };

/* ---- state ---- */

/** An entity the peer introduced to us. */
struct in_ent {
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
struct out_ent {
    uint32_t table_id;
    int64_t wire_id;
    int8_t active_sent; /* -1 unknown */
    /* UDP: sequence of the packet that last carried each property, and whether it was acked */
    bool introduce_acked;
    int64_t intro_seq; /* absolute send counter of the introduce, -1 none */
    int64_t upd_seq;   /* absolute send counter of the newest update/introduce */
};

struct less_adapter;

/** One queued message: where it is in the buffer and what it is about. */
struct msg_ref {
    uint8_t code;
    uint32_t off, len;
    int64_t wire_id; /* our entity id for introduce/update/remove, else -1 */
};

/** UDP: what a sent packet carried, for re-sends (P13). */
struct udp_sent {
    bool in_use, acked;
    uint8_t seq;
    int64_t counter; /* absolute send counter */
    int64_t sent_ns;
    int64_t mark;  /* tx_counter after the last transmission: lost if a later one is acked */
    uint8_t *msgs; /* encoded messages as first sent */
    size_t msgs_len;
    uint64_t count;
    struct msg_ref *refs; /* count entries */
};

struct peer {
    struct less_adapter *la;
    struct peer *next;
    struct bufferevent *bev;
    struct xg_tls_session *tls;
    char addr[80];
    bool streaming; /* got the peer's connection-control */
    bool closing;
    /* peer's connection parameters */
    int64_t quantum_ns;
    int64_t first_seq, rate_hz;
    char peer_gw[64];
    char peer_session[40]; /* "session=" token of the peer's schema string (UDP restarts) */
    char key_id[64];
    int rx_key; /* index of the key that verified the peer's last packet */
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
    struct in_ent *in;
    size_t n_in, cap_in;
    struct imap in_map; /* wire id -> index in `in` */
    /* subscription of the peer to our pose type */
    bool subscribed;
    uint32_t sub_mask;
    /* entities we introduced */
    struct out_ent *out;
    size_t n_out, cap_out;
    struct imap out_map;  /* table id -> index in `out` */
    struct imap out_wire; /* wire id -> table id */
    int64_t next_wire_id;
    /* send side */
    int64_t last_tx_ts;
    uint8_t *msgbuf;
    size_t msg_len, msg_cap;
    uint64_t msg_count;
    struct msg_ref *midx; /* one per queued message (UDP re-sends) */
    size_t midx_cap;
    int64_t last_send_ns;
    /* UDP */
    struct sockaddr_storage ss;
    socklen_t sslen;
    struct less_ack_window rxwin;
    struct less_rx_times rxts; /* stale rule (P12) */
    uint8_t tx_seq;
    int64_t tx_counter;
    struct udp_sent sent[256];
    /* pass-1 bookkeeping (introductions seen earlier in the packet being checked) */
    bool dry;
    int64_t pend_types[64];
    const struct less_schema *pend_schemas[64];
    size_t n_pend_types;
    struct imap pend_ents; /* wire id -> index in pend_typeids */
    int64_t *pend_typeids; /* typeids of the entities introduced earlier in the packet */
    size_t n_pend_ent, cap_pend_ent;
};

struct less_adapter {
    struct xg_egress_controls controls; /* LESS carries no buttons/analogs */
    struct xg_adapter *a;
    enum mode mode;
    char target[256]; /* connect / listen / bind address text */
    char udp_peer[256];
    struct less_key key; /* the key we sign with (id key_id) */
    /* every key we accept (key rotation by key id, issue 12); keys[0] is `key` */
    struct less_key keys[LESS_MAX_KEYS];
    char key_ids[LESS_MAX_KEYS][64];
    int n_keys;
    bool signature_none, insecure;
    char key_id[64];
    int64_t max_peers, max_packet, max_output, mtu;
    /* TLS */
    bool tls_on, tls_verify;
    char tls_cert[512], tls_key[512], tls_ca[512], server_name[256];
    struct xg_tls_ctx *tls;
    /* types loaded from mapping files */
    struct less_mapping **mappings;
    size_t n_mappings;
    /* runtime */
    const char *gw_id;
    char schema_str[128];
    struct peer *peers;
    int n_peers;
    struct evconnlistener *lis;
    char bound[80];
    struct xg_tclient *tc; /* connect mode: resolution, connect, TLS, backoff, state */
    char closed_why[200];  /* connect mode: why the session ended (last_error) */
    struct event *sweep_ev;
    const char *state;
    int udp_fd;
    struct xg_udp_batch ubatch;        /* UDP datagrams queued until udp_flush */
    uint64_t batch_sent, batch_errors; /* ubatch counts already in packets_out / drops */
    struct event *udp_ev, *udp_timer;
    bool udp_peer_fixed;
    /* scratch */
    uint8_t *arena_buf;
    uint8_t *pktbuf;
    size_t pktbuf_cap;
    /* counters */
    uint64_t packets_in, packets_out, bad_signature, framing_errors, refused_peers, slow_peer_drops,
        echo_suppressed, stale_packets, refused_403, not_found_404, resends, duplicates,
        duplicates_ignored, window_full, hub_relayed, peer_restarts, entities_introduced,
        entities_removed, unknown_requests;
    /* lines a peer can trigger, one rate limiter per kind (core/log.h) */
    struct xg_log_limit lim_refused, lim_connected, lim_closed, lim_session, lim_request, lim_dgram,
        lim_packet, lim_stale, lim_send;
};

/* ---- less_adapter.c: helpers, the peer's context, sending, the hub, peers ---- */

void session_token(const char *schema, char *out, size_t size);
const struct less_schema *schema_for_uri(const struct less_adapter *la, const char *uri);
const struct less_schema *peer_type_schema(struct peer *p, int64_t typeid);
int cb_rx_sender_entity(void *user, int64_t id, int64_t *typeid);
void rx_ctx(struct peer *p, struct less_context *c);
int64_t next_ts(struct peer *p);
int queue_msg(struct peer *p, const struct less_msg *m);
int peer_flush(struct peer *p);
void send_connection_control(struct peer *p);
enum xg_kind kind_from_wire(int64_t k);
struct out_ent *out_find(struct peer *p, uint32_t table_id);
void out_del(struct peer *p, uint32_t table_id);
void send_entity(struct peer *p, const struct xg_entity *e, const struct xg_pose *pose_in,
                 bool introduce);
bool peer_ready(const struct peer *p);
void hub_relay(struct less_adapter *la, struct peer *only);
void full_refresh(struct peer *p);
void send_result(struct peer *p, int64_t request_id, int64_t status, const char *reason);
struct peer *peer_new(struct less_adapter *la, const char *addr);
void peer_close(struct peer *p, const char *why);

/* ---- less_session.c: receiving (a decoded packet applied to the peer and the table) ---- */

int process_packet(struct peer *p, const struct less_frame *f, int64_t now, bool late,
                   struct xg_error *err);

/* ---- less_tcp.c: TCP and TLS sessions (connect and listen modes) ---- */

/** The peer's connection-control arrived: clears a TCP session's handshake timeout (no-op on
 *  UDP). */
void tcp_handshake_done(struct peer *p);
void describe_bad_signature(const struct less_adapter *la, struct xg_error *err,
                            const uint8_t *frame, size_t len, size_t sig_off);
void on_connected(void *arg, struct bufferevent *bev, struct xg_tls_session *tls);

/* ---- less_udp.c: UDP (ack window, re-sends, restarts) ---- */

/** Sends the peer's pending messages (and the re-sends udp_resend queued) in datagrams of at
 *  most `mtu` bytes, batched with sendmmsg(2) (core/udp_batch.h). 0 or a negative errno. */
int udp_flush(struct peer *p, bool force);
/** The peer acknowledged (ack_last, mask) (P13): marks those sent packets acked and the
 *  introduces they carried. */
void udp_on_ack(struct peer *p, uint8_t ack_last, uint64_t mask);
/** Re-sends the packets lost by `now` (monotonic ns; a later packet acked first, or 250 ms
 *  passed, P13) under their old sequence numbers with only the messages still current. They
 *  are queued: the next udp_flush sends them. */
void udp_resend(struct peer *p, int64_t now);
int on_udp_peer(void *arg, const struct sockaddr *sa, socklen_t len, char *why, size_t why_size);

/* ---- less_conf.c: configuration ---- */

int less_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err);

#endif
