/* Socket-free VRPN 07.38 session: the per-connection protocol state machine of `vrpn-client` and
 * `vrpn-server`, with no sockets, no libevent and no entity table. Bytes and time go in; bytes
 * out, events, errors and deadlines come out. The adapters keep only the glue (bufferevent bytes
 * into vrpn_session_feed(), ops.send bytes into the bufferevent, events into the table).
 *
 * What it does (the "§n" are sections of the project's VRPN wire notes, the behaviour is in
 * docs/adapters/vrpn.md "Internals"):
 *  - cookie exchange (§4): our cookie on vrpn_session_connected(); the peer's 24 bytes checked
 *    (magic, major version 07, log mode); another minor version is accepted and reported;
 *  - the handshake burst once the peer's cookie is in (§6.1, §6.3): [UDP_DESCRIPTION], our
 *    SENDER_DESCRIPTIONs, our TYPE_DESCRIPTIONs (vrpn_std_types[]), then VRPN_EV_UP;
 *  - descriptions both directions (§5.3, §6.2): a name the peer describes that we do not know is
 *    registered and described back (an "echo");
 *  - framing (§5.1, §5.2): TCP messages split anywhere across reads are reassembled (partial data
 *    is kept inside the session); UDP datagrams hold whole messages (§6.3);
 *  - dispatch by sender/type id to events; system messages (§5.3-§5.6);
 *  - UDP+TCP mode (§6.3): the client's connection request text and its resends, the call-back
 *    wait; the server's call-back wait;
 *  - client pings (§7): each of our devices is pinged once per second until it is ponged.
 *
 * Rules for bad input (one rule per case, as mainline): every error returned by the feed calls
 * closes the connection (VRPN_RULE_CLOSE); a message the session cannot use but that is not a
 * violation (a sender or type the client never saw described, a device it did not ask for, a
 * datagram before the handshake) is dropped and reported as VRPN_EV_IGNORED (VRPN_RULE_DROP).
 *
 * Ownership: the session owns its id map (names on the heap) and a reassembly buffer of at most
 * VRPN_MAX_MESSAGE bytes; vrpn_session_free() releases both. Counters survive
 * vrpn_session_start() (one session object per configured connection, restarted per attempt).
 * Times are CLOCK_MONOTONIC ns; headers are stamped with ops.wall_ns(now) (now when NULL). */
#ifndef XG_VRPN_SESSION_H
#define XG_VRPN_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters/vrpn/vrpn_codec.h"
#include "core/util/error.h"

/** Which side of the connection the session plays. */
enum vrpn_role {
    VRPN_ROLE_CLIENT = 0, /**< vrpn-client: reads a server's devices */
    VRPN_ROLE_SERVER = 1, /**< vrpn-server: serves a client */
};

/** The connection's transport (§6). */
enum vrpn_mode {
    VRPN_MODE_TCP = 0, /**< TCP only: the client connects */
    VRPN_MODE_UDP = 1, /**< UDP+TCP: connection request over UDP, call-back over TCP */
};

/** Where a session is. */
enum vrpn_sess_state {
    VRPN_SESS_IDLE = 0,  /**< not started, or closed */
    VRPN_SESS_CALLBACK,  /**< UDP+TCP: waiting for the call-back TCP connection */
    VRPN_SESS_COOKIE,    /**< TCP connected, our cookie sent, waiting for the peer's */
    VRPN_SESS_STREAMING, /**< cookie accepted, handshake sent: messages flow */
};

/** What to do with bad input (wire rules: mainline drops the connection on any violation). */
enum vrpn_rule {
    VRPN_RULE_CLOSE = 0, /**< close the connection (the client reconnects after a backoff) */
    VRPN_RULE_DROP = 1,  /**< drop the message, keep the connection */
};

/** Kinds of errors (vrpn_session_error()). */
enum vrpn_err_kind {
    VRPN_ERR_INPUT = 0,   /**< the peer sent something invalid (message in err.msg) */
    VRPN_ERR_NO_CALLBACK, /**< UDP+TCP: no call-back within the connect timeout */
    VRPN_ERR_NO_COOKIE,   /**< no cookie within the connect/handshake timeout */
    VRPN_ERR_LOCAL,       /**< our own output could not be encoded (out of memory) */
};

/** Size of an error text (struct vrpn_session_error). */
#define VRPN_SESSION_MSG_MAX (2 * XG_ERROR_MAX + 256)

/** The last error of a session. */
struct vrpn_session_error {
    enum vrpn_err_kind kind;
    enum vrpn_rule rule;            /**< always VRPN_RULE_CLOSE for errors */
    const char *where;              /**< client role: "cookie", "tcp" or "udp"; server: "" */
    int code;                       /**< negative errno */
    char msg[VRPN_SESSION_MSG_MAX]; /**< names the field and the value (a bad cookie's bytes in
                                         hex, server role) */
};

/** Kinds of events (struct vrpn_event). */
enum vrpn_event_kind {
    VRPN_EV_COOKIE = 0,      /**< the peer's cookie was accepted: minor, minor_differs */
    VRPN_EV_UP,              /**< our handshake burst was sent: the session streams */
    VRPN_EV_DESCRIBED,       /**< the peer described a name: id_kind, remote_id, local_id, name,
                                  echoed (we described it back) */
    VRPN_EV_UDP_DESCRIPTION, /**< the peer's UDP_DESCRIPTION: host (numeric IPv4), udp_port */
    VRPN_EV_LOG_DESCRIPTION, /**< the peer asked for logging (we never log): log_mode */
    VRPN_EV_MESSAGE,         /**< a decoded message of a described sender and type: sender_local,
                                  sender, type_local, type, body (kind VRPN_BODY_UNKNOWN for a type
                                  this codec does not decode), hdr (the peer's time), rx_ns, udp */
    VRPN_EV_PONG,            /**< client: a pong of one of our devices (also a VRPN_EV_MESSAGE is
                                  not sent for it): sender_local, sender, first (first pong) */
    VRPN_EV_NOPONG,          /**< client: a device was pinged for >= 3 s without a pong (once per
                                  connection and device): sender_local, sender */
    VRPN_EV_IGNORED,         /**< a message dropped by rule VRPN_RULE_DROP: reason */
};

/** One event. Pointers are borrowed: valid during the ops.event call only. */
struct vrpn_event {
    enum vrpn_event_kind kind;
    int minor;                     /**< COOKIE: the peer's minor version */
    bool minor_differs;            /**< COOKIE: not 38 */
    enum vrpn_id_kind id_kind;     /**< DESCRIBED */
    int32_t remote_id;             /**< DESCRIBED */
    bool echoed;                   /**< DESCRIBED: new name, described back to the peer */
    int32_t local_id;              /**< DESCRIBED */
    const char *name;              /**< DESCRIBED: the name; UDP_DESCRIPTION: the host */
    uint16_t udp_port;             /**< UDP_DESCRIPTION */
    int32_t log_mode;              /**< LOG_DESCRIPTION */
    int32_t sender_local;          /**< MESSAGE, PONG, NOPONG: our id of the sender */
    const char *sender;            /**< MESSAGE, PONG, NOPONG: its name */
    int32_t type_local;            /**< MESSAGE: our id of the type (enum vrpn_std_type if < 24) */
    const char *type;              /**< MESSAGE: its name */
    const struct vrpn_header *hdr; /**< MESSAGE: the header (the peer's report time) */
    const struct vrpn_body *body;  /**< MESSAGE: the decoded body */
    bool first;                    /**< PONG: the device's first pong on this connection */
    int64_t rx_ns;                 /**< MESSAGE: when the bytes were fed (monotonic ns) */
    bool udp;                      /**< MESSAGE: it came in a UDP datagram */
    const char *reason;            /**< IGNORED: why ("sender or type never described", ...) */
};

/** What the owner does for the session. ctx is given back to every call. */
struct vrpn_session_ops {
    /** Send bytes on the TCP connection. Return 0, or < 0 if the connection is gone (the owner
     *  has freed or closed the session: it touches nothing more and returns -ECONNABORTED). */
    int (*send)(void *ctx, const uint8_t *buf, size_t len);
    /** Client, UDP+TCP: send the connection request datagram. 0 if it was sent (the next resend
     *  is then due 2 s later), < 0 if not (retried at the next vrpn_session_tick()). */
    int (*send_request)(void *ctx, const uint8_t *buf, size_t len);
    /** An event. Return 0, or < 0 if the owner closed the session (as for send). May be NULL. */
    int (*event)(void *ctx, const struct vrpn_event *ev);
    /** Wall-clock ns of monotonic time `mono` for message headers; NULL = mono itself. */
    int64_t (*wall_ns)(void *ctx, int64_t mono);
};

/** Counters of one session, kept across vrpn_session_start(). */
struct vrpn_session_stats {
    uint64_t messages;    /**< messages framed and dispatched */
    uint64_t ignored;     /**< dropped by rule VRPN_RULE_DROP (VRPN_EV_IGNORED) */
    uint64_t echoes;      /**< names described back */
    uint64_t pings;       /**< client: pings sent */
    uint64_t pongs;       /**< client: pongs of our devices received */
    uint64_t tcp_reports; /**< client: device reports received over TCP */
    uint64_t udp_reports; /**< client: device reports received over UDP */
    uint64_t datagrams;   /**< client: UDP datagrams dispatched */
    uint64_t requests;    /**< client: connection requests sent */
};

/** Interval of the client's connection request resends (§6.3). */
#define VRPN_SESSION_REQUEST_RESEND_NS INT64_C(2000000000)
/** The client's first pings follow the server's cookie by this much (§7). */
#define VRPN_SESSION_FIRST_PING_NS INT64_C(100000000)
/** The client pings each unanswered device this often (§7). */
#define VRPN_SESSION_PING_INTERVAL_NS INT64_C(1000000000)
/** A device unanswered for this long gives one VRPN_EV_NOPONG (§7). */
#define VRPN_SESSION_NOPONG_NS INT64_C(3000000000)

struct vrpn_ping_state;

/** One VRPN connection's protocol state. Embed or allocate it (~17 KiB); fields are private. */
struct vrpn_session {
    enum vrpn_role role;
    enum vrpn_mode mode;
    enum vrpn_sess_state state;
    struct vrpn_session_ops ops;
    void *ctx;
    int64_t timeout_ns;     /* call-back wait and cookie wait */
    int64_t phase_start_ns; /* start of the current wait */
    int64_t cookie_ns;      /* when the peer's cookie was accepted */
    int64_t last_request_ns;
    struct vrpn_id_map ids;
    int n_own_senders; /* client: senders registered before the cookie (VRPN Control, devices) */
    uint32_t seq;      /* our TCP sequence numbers */
    char udp_host[64]; /* our UDP data socket (announced in the handshake) */
    uint16_t udp_port; /* 0 = none */
    uint8_t request[VRPN_LOB_MAX]; /* client: the connection request datagram */
    size_t request_len;
    struct vrpn_ping_state *ping; /* client: per own sender */
    int n_ping;
    uint8_t *in; /* reassembly of a partial cookie or message */
    size_t in_len, in_cap;
    struct vrpn_body body;
    struct vrpn_session_error error;
    struct vrpn_session_stats stats;
};

/** Initialise a session for `role` (no allocation); ops.send is required. timeout_ns bounds the
 *  call-back wait and the cookie wait (> 0). */
void vrpn_session_init(struct vrpn_session *s, enum vrpn_role role,
                       const struct vrpn_session_ops *ops, void *ctx, int64_t timeout_ns);

/** Release the id map and buffers; the session is IDLE and can be started again. */
void vrpn_session_free(struct vrpn_session *s);

/** Begin a connection attempt at `now`: fresh id map with VRPN Control as sender 0 and the
 *  standard types (a client the first VRPN_T_CLIENT_COUNT, a server all VRPN_T_COUNT), sequence
 *  numbers from 0, no partial input. Register further local senders (the client's devices, the
 *  server's trackers) with vrpn_id_map_register(vrpn_session_ids(s), ...) before the peer's
 *  cookie. UDP+TCP enters VRPN_SESS_CALLBACK (call-back wait), TCP stays IDLE until
 *  vrpn_session_connected(). 0 or -ENOMEM. */
int vrpn_session_start(struct vrpn_session *s, enum vrpn_mode mode, int64_t now);

/** Our UDP data socket, announced by a UDP_DESCRIPTION at the head of the handshake (§5.4,
 *  §6.3): host a numeric IPv4 address, port != 0. Call before the peer's cookie. */
void vrpn_session_set_udp(struct vrpn_session *s, const char *host, uint16_t port);

/** Client, UDP+TCP: encode the connection request "<host> <tcp_port>\0" (§6.3), the call-back
 *  address, and send it now through ops.send_request (again every 2 s from vrpn_session_tick()
 *  while no call-back came). Returns 0 (also when ops.send_request failed: it is retried), or
 *  -EINVAL with err set when the text cannot be encoded (host not letters/digits/dots, port <
 *  1024). */
int vrpn_session_request(struct vrpn_session *s, const char *host, uint16_t tcp_port, int64_t now,
                         struct xg_error *err);

/** The TCP connection is up (connected, accepted, or the call-back): send our cookie (§4) and wait
 *  for the peer's (VRPN_SESS_COOKIE). The cookie deadline is now + timeout for a client; for a
 *  server that called back it stays the start + timeout (one deadline for call-back and cookie).
 *  0, or -ECONNABORTED if ops.send reported the connection gone. */
int vrpn_session_connected(struct vrpn_session *s, int64_t now);

/** Bytes read from the TCP connection at `now`, any split. Processes every whole cookie/message,
 *  keeps the rest for the next call. Returns 0; a negative errno on bad input (the connection
 *  must be closed, vrpn_session_error() says why; the session is IDLE); or -ECONNABORTED when an
 *  ops call reported the connection gone (the session must not be touched). Bytes fed while IDLE
 *  or CALLBACK are a caller error (-EINVAL). */
int vrpn_session_feed(struct vrpn_session *s, const uint8_t *buf, size_t len, int64_t now);

/** Client: one UDP datagram from the server (the caller checks its source) at `now`: dropped
 *  (VRPN_EV_IGNORED) before the handshake, else each message dispatched as from TCP. Returns as
 *  vrpn_session_feed(); a message cut by the datagram's end is bad input. */
int vrpn_session_feed_datagram(struct vrpn_session *s, const uint8_t *dg, size_t len, int64_t now);

/** The connection reached EOF: 0 if no partial cookie or message is buffered, else -EMSGSIZE with
 *  vrpn_session_error() naming how many bytes were left. */
int vrpn_session_eof(struct vrpn_session *s);

/** Time passes: connection request resends, the call-back and cookie deadlines (-ETIMEDOUT, kind
 *  VRPN_ERR_NO_CALLBACK or VRPN_ERR_NO_COOKIE: close), client pings and VRPN_EV_NOPONG. Returns
 *  0, -ETIMEDOUT, or -ECONNABORTED as vrpn_session_feed(). */
int vrpn_session_tick(struct vrpn_session *s, int64_t now);

/** The next time vrpn_session_tick() has something to do (monotonic ns), INT64_MAX for none. */
int64_t vrpn_session_deadline(const struct vrpn_session *s);

/** End the connection: IDLE, partial input dropped (the id map stays until the next start). */
void vrpn_session_close(struct vrpn_session *s);

/** The session's state. */
static inline enum vrpn_sess_state vrpn_session_state(const struct vrpn_session *s)
{
    return s->state;
}

/** The id map of the connection (ours and the peer's names): register local senders here. */
static inline struct vrpn_id_map *vrpn_session_ids(struct vrpn_session *s)
{
    return &s->ids;
}

/** Our next TCP sequence number, for messages the owner encodes itself (reports, pongs). */
static inline uint32_t *vrpn_session_seq(struct vrpn_session *s)
{
    return &s->seq;
}

/** The last error (valid after a negative return other than -ECONNABORTED). */
static inline const struct vrpn_session_error *vrpn_session_error(const struct vrpn_session *s)
{
    return &s->error;
}

/** The session's counters. */
static inline const struct vrpn_session_stats *vrpn_session_stats(const struct vrpn_session *s)
{
    return &s->stats;
}

/** The header stamp the session uses at `now` (ops.wall_ns), sender/type/seq 0. */
struct vrpn_header vrpn_session_header(const struct vrpn_session *s, int64_t now);

#endif
