/* `vrpn-server` adapter, private to its source files (vrpn_server.c: adapter ops;
 * vrpn_server_conf.c: configuration; vrpn_server_conn.c: listeners, connections, handshake and
 * client messages; vrpn_server_egress.c: tracker/sensor numbering and the per-client reports of
 * each drain). The behaviour is described at the top of vrpn_server.c; nothing outside
 * adapters/vrpn includes this.
 */
#ifndef XG_VRPN_SERVER_PRIV_H
#define XG_VRPN_SERVER_PRIV_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/net/transport.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "adapters/vrpn/vrpn_names.h"
#include "adapters/vrpn/vrpn_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/transport_server.h"
#include "core/net/udp_batch.h"
#include "core/net/ingress_budget.h"
#include "core/net/timer.h"
#include "core/net/udp_endpoint.h"

#define MAX_TRACKERS 1000
#define MAX_CTL_DEVICES 500 /* device names made for entities' controls (the rest: trackers) */
#define VEL_QUAT_DT 0.1     /* s: the interval of the Velocity message's rotation increment */
#define POS_QUAT_LEN 64
#define VELOCITY_LEN 72
#define REPORT_WIRE (VRPN_HEADER_SIZE + POS_QUAT_LEN + VRPN_HEADER_SIZE + VELOCITY_LEN)

/* our type ids on every connection: the index in vrpn_std_types[] (vrpn_codec.h) */
enum {
    T_POS_QUAT = VRPN_T_POS_QUAT,
    T_VELOCITY = VRPN_T_VELOCITY,
    T_PING = VRPN_T_PING,
    T_PONG = VRPN_T_PONG,
    T_BUTTON_CHANGE = VRPN_T_BUTTON_CHANGE,
    T_BUTTON_STATES = VRPN_T_BUTTON_STATES,
    T_ANALOG = VRPN_T_ANALOG
};
struct rule {
    char *match;
    char *tracker;  /* template, NULL = tracker_name */
    int64_t sensor; /* -1 = automatic */
};

struct tracker {
    char name[VRPN_CNAME_MAX];
    struct vrpn_bitset used; /* sensor numbers in use or reserved */
    int extras_slot;         /* the slot whose buttons/analogs this tracker serves, -1 = none */
    int n_btn;               /* buttons known (states last sent) */
    uint8_t btn[VRPN_MAX_BUTTONS];
};

struct report {
    int tracker, sensor, slot; /* slot: the entity's name index (s->names) */
    uint8_t pq[POS_QUAT_LEN];
    uint8_t vel[VELOCITY_LEN];
};

struct xmsg {                /* a button or analog message of a tracker: body in reports.xb */
    int tracker, type, slot; /* slot: the entity's name index */
    size_t off, len;
};

struct reports {
    struct report *v;
    size_t n, cap;
    struct xmsg *x;
    size_t xn, xcap;
    uint8_t *xb;
    size_t xblen, xbcap;
};

struct conn {
    struct xg_adapter *a;
    struct bufferevent *bev;
    struct xg_timer *deadline; /* the handshake (call-back connect + cookie) must end by then */
    char peer[64];
    struct vrpn_session sess; /* cookie, ids, TCP sequence numbers (vrpn_session.h) */
    bool callback;            /* we connected back after a UDP connection request (UDP+TCP mode) */
    struct sockaddr_in cb_addr; /* the call-back target (callback connections) */
    int32_t *tsender;           /* our sender id of each tracker on this connection */
    int n_tsender;
    uint32_t udp_seq;
    struct xg_udp_rx udp; /* our UDP socket for this connection (udp.fd -1 = none); reads (and
                             discards) what the client sends to it (core/net/udp_endpoint.h) */
    uint16_t udp_port;    /* its port (announced in callback mode) */
    char udp_host[64];    /* its address */
    struct sockaddr_storage udp_to; /* the client's announced UDP address */
    socklen_t udp_to_len;
    bool udp_ok; /* client's UDP_DESCRIPTION received: low-latency reports go over UDP */
    uint8_t dgram[VRPN_UDP_MAX];
    size_t dlen;
    bool need_full;             /* new client: every sensor on the next drain */
    struct vrpn_bitset pending; /* name slots skipped while above max_output_bytes */
    int n_pending;              /* bits set in pending */
    int64_t slow_since;         /* slow-client state (xg_slow_decide): 0 = not above the bound */
    struct conn *next;
};

struct vrpn_server {
    char listen[256];
    int64_t max_clients, max_output, slow_timeout_ms, handshake_ms;
    bool send_velocity, send_all;
    char *tracker_name;
    struct rule *rules;
    size_t n_rules;
    struct xg_tserver *ts; /* TCP listener, client cap, slow-client policy (transport_server.h) */
    struct xg_udp_rx lob;  /* the UDP connection-request socket (core/net/udp_endpoint.h) */
    char bound[128];
    struct conn *conns;
    int n_conns;
    struct tracker *trackers;
    int n_trackers;
    int n_ctl_devices;                /* trackers made as device names for entities' controls */
    struct vrpn_names names;          /* entity name -> (tracker, sensor) */
    struct sockaddr_storage bound_ss; /* our TCP listen address (call-back self checks) */
    /* peer-triggered log lines, one limiter per kind (core/util/log.h) */
    struct xg_ingress_budget
        lob_budget; /* per wake-up of the request socket (core/net/ingress_budget.h) */
    struct xg_log_limit lim_bad, lim_refused, lim_request, lim_callback, lim_session, lim_conflict,
        lim_ctl, lim_no_ctl; /* sensor conflicts; controls served / not served */
    bool members_dirty;
    const struct xg_entity **newv; /* entities to number (assign_new) */
    size_t n_new, cap_new;
    struct reports dirty, full;
    uint8_t *scratch;
    size_t scratch_cap;
    uint64_t callbacks, callback_failures, lob_rejected, lob_duplicates, lob_self, lob_names,
        bad_input, reports_tcp, reports_udp, reports_skipped, reports_coalesced, pongs, unmapped;
    struct xg_udp_batch ubatch; /* one client's datagrams of a drain, one sendmmsg */
};

/* departed names whose sensor numbers are kept (a source that restarts gets its numbers back) */
#define DEPARTED_MAX 1024

/** A VRPN header stamped with the wall-clock time of monotonic time mono_ns (0 if before the
 *  epoch). */
static inline struct vrpn_header now_header(int64_t mono_ns)
{
    struct vrpn_header h = {0};
    int64_t w = xg_clock_mono_to_wall_ns(mono_ns);
    vrpn_header_set_wall_ns(&h, w > 0 ? w : 0);
    return h;
}

/* ---- vrpn_server_conf.c ---- */

/** Read and check the configuration keys (listed at the top of vrpn_server.c) into s, with their
 *  defaults; sets a->whole_frames (send_all) and a->egress_slice. 0, or a negative errno with err
 *  naming the key and the value (-ENOMEM on allocation failure). */
int vrpn_srv_conf_read(struct xg_adapter *a, struct vrpn_server *s, const struct xg_conf *conf,
                       struct xg_error *err);

/* ---- vrpn_server_conn.c ---- */

/** Unlink connection c from s->conns and free it with its sockets and events. */
void vrpn_srv_conn_free(struct vrpn_server *s, struct conn *c);

/** Queue n bytes at p on c's TCP connection (xg_tserver_write); drops the client (frees c) when
 *  its unsent output is already past 2x max_output_bytes or the write fails. Returns false if c
 *  is gone. */
bool vrpn_srv_conn_write(struct xg_adapter *a, struct conn *c, const void *p, size_t n);

/** Our sender id of tracker t on connection c (registered and cached on first use), or -1 on
 *  allocation failure. If w is not NULL and the name is new on c, a SENDER_DESCRIPTION stamped h
 *  is appended to w. */
int vrpn_srv_conn_tracker_sender(struct xg_adapter *a, struct conn *c, int t, struct xg_writer *w,
                                 const struct vrpn_header *h);

/** xg_tserver_ops.clients (arg: the adapter): the connections held, call-backs included. */
int vrpn_srv_clients(void *arg);

/** xg_tserver_ops.accepted (arg: the adapter): a new TCP-only client from `peer` (the transport
 *  refused it past max_clients); sends our cookie. 0, or -ENOMEM. */
int vrpn_srv_accepted(void *arg, struct bufferevent *bev, struct xg_tls_session *tls,
                      const char *peer);

/** One datagram of the UDP listen socket (an xg_udp_rx_fn, core/net/udp_endpoint.h; arg: the
 *  adapter; n its full length, MSG_TRUNC): a UDP connection request (wire rules §6.3), checked
 *  and called back over TCP or refused with one log line. Returns 1 (one message). */
int vrpn_srv_lob_datagram(void *arg, uint8_t *b, size_t n, const struct sockaddr *fromsa,
                          socklen_t fl);

/* ---- vrpn_server_egress.c ---- */

/** The adapter's drain op: numbers new entities, then sends each streaming client the reports of
 *  this tick (over UDP or TCP), skipping and coalescing for clients above max_output_bytes. */
void vrpn_srv_drain(struct xg_adapter *a);

/** The adapter's entity_event op: an entity added to the table marks membership dirty; a removed
 *  one releases its name (its sensor number is kept among the departed names). */
void vrpn_srv_entity_event(struct xg_adapter *a, const struct xg_entity *e, bool added);

#endif
