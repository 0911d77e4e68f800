/* Private to the less adapter's glue (less_adapter.c, less_tcp.c, less_udp.c): a peer (its
 * session and its socket), the glue's shared functions and its libevent callbacks. The session
 * files (less_session.c, less_send.c, less_session_udp.c) do not include it: they never see a
 * peer or a socket, and less_adapter_priv.h includes no libevent header. */
#ifndef XG_LESS_ADAPTER_IO_H
#define XG_LESS_ADAPTER_IO_H

#include <sys/socket.h>

#include "core/net/transport.h"
#include "adapters/less/less_adapter_priv.h"
#include "adapters/less/less_session.h"

struct bufferevent;

/** A peer: its session (protocol state, socket-free) and the socket side the glue keeps. */
struct less_peer {
    struct less_session s;   /* less_session.h */
    struct less_adapter *la; /* the adapter (s.env is its env) */
    struct less_peer *next;
    struct bufferevent *bev; /* TCP */
    struct xg_tls_session *tls;
    int rx_key;         /* index of the key that verified the peer's last packet */
    int64_t slow_since; /* listen mode: slow-client state (xg_slow_decide) */
    /* UDP: the peer's address (sslen 0: not known yet) */
    struct sockaddr_storage ss;
    socklen_t sslen;
};

/* ---- less_adapter.c: helpers, the hub, peers (glue) ---- */

/** Send the peer's queued messages (TCP: one packet; UDP: less_udp_flush). 0 or a negative errno
 *  (-ENOBUFS: the peer was too slow and is closed). */
int less_peer_flush(struct less_peer *p);
void less_hub_relay(struct less_adapter *la, struct less_peer *only);
/** Introduce every entity of the table (and the hub's) to the peer and send. */
void less_full_refresh(struct less_peer *p);
struct less_peer *less_peer_new(struct less_adapter *la, const char *addr);
void less_peer_close(struct less_peer *p, const char *why);

/* ---- less_tcp.c: TCP and TLS sessions (connect and listen modes) ---- */

void less_describe_bad_signature(const struct less_adapter *la, struct xg_error *err,
                                 const uint8_t *frame, size_t len, size_t sig_off);
void less_on_connected(void *arg, struct bufferevent *bev, struct xg_tls_session *tls);
/** Listen mode (core/net/transport_server.h): the number of peers held (xg_tserver_ops.clients). */
int less_peers_held(void *arg);
/** Listen mode: a peer accepted by the transport (xg_tserver_ops.accepted): a session starts.
 *  0, or -ENOMEM. */
int less_accepted(void *arg, struct bufferevent *bev, struct xg_tls_session *tls, const char *peer);

/* ---- less_udp.c: the UDP socket ---- */

/** Sends the peer's queued messages and the re-sends (less_session_udp_out) batched with
 *  sendmmsg(2) (core/net/udp_batch.h); nothing while the peer's address is unknown. 0 or a
 *  negative errno. */
int less_udp_flush(struct less_peer *p, bool force);
/** The datagram event of a UDP peer's session: queued on the adapter's batch. */
void less_udp_datagram(void *user, const uint8_t *buf, size_t len);
int less_on_udp_peer(void *arg, const struct sockaddr *sa, socklen_t len, char *why,
                     size_t why_size);
/** Status of a bind address given by name (state while it resolves, last_error, its failures in
 *  dns_failures); nothing for a numeric bind. */
void less_udp_bind_status(const struct less_adapter *la, struct xg_status *st);

/** UDP: one datagram read from the socket (less_udp.c; an xg_udp_rx_fn of core/net/udp_endpoint.h:
 *  `arg` is the less_adapter). Returns 1, its cost in messages. */
int less_udp_rx(void *arg, uint8_t *dgram, size_t len, const struct sockaddr *from, socklen_t flen);

/** UDP: the periodic timer (less_udp.c): re-sends and keep-alive acks. */
void less_udp_timer_cb(void *arg);

#endif
