/* `vrpn-client` adapter, private to its source files (vrpn_client.c: connections, the glue to
 * each connection's session (vrpn_session.h: handshake, dispatch, pings), entities and adapter
 * ops; vrpn_client_conf.c: the devices list of the configuration;
 * vrpn_client_udp.c: UDP+TCP mode's connection request, call-back and data datagrams). The
 * behaviour is described at the top of vrpn_client.c; nothing outside adapters/vrpn includes this.
 */
#ifndef XG_VRPN_CLIENT_PRIV_H
#define XG_VRPN_CLIENT_PRIV_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/net/transport.h"
#include "adapters/vrpn/vrpn_client.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "adapters/vrpn/vrpn_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/conf/conf.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/transport_client.h"
#include "mappings/frame.h"
#include "core/net/ingress_budget.h"
#include "core/net/timer.h"
#include "core/net/udp_endpoint.h"
#include "core/clock/time_map.h"

#define DIAL_ANALOG_BASE 64 /* dial d -> analogs[64 + d] */

#define ST(c) xg_tclient_state((c)->tc)

struct sensor {
    uint32_t id;      /* table id, 0 until the first Pos_Quat */
    int64_t last_t;   /* last capture time given to the table */
    int64_t last_src; /* last source time (wall ns) of a Pos_Quat, 0 = none */
};

struct vconn;

/* One configured device name on a connection. */
struct vdev {
    char name[VRPN_CNAME_MAX];
    struct vconn *conn;
    int local_id; /* our sender id */
    struct sensor *sensors;
    int n_sensors;    /* allocated */
    int first_sensor; /* sensor whose entity carries the controls, -1 until one exists */
    uint32_t ctl_id;  /* controller entity while there is no tracker entity */
    int64_t ctl_last_t;
    struct xg_time_map tmap;
    /* control state (kept to carry it over between entities and across reconnects) */
    uint8_t buttons[XG_MAX_BUTTONS];
    int n_buttons;
    double analogs[XG_MAX_ANALOGS];
    int n_analogs;
    bool sensors_warned;
};

/* One server address (mode, host, port) and its connection. */
struct vconn {
    struct xg_adapter *a;
    bool tcp_only;
    char host[200];
    int port;
    char peer[300];               /* "ip:port" (tcp:// prefix for TCP-only) */
    struct xg_tclient *tc;        /* resolution, TCP connect, backoff, state */
    struct sockaddr_storage addr; /* the server, as resolved for this attempt */
    socklen_t addrlen;
    struct vdev **devs;
    int n_devs;

    struct bufferevent *bev;
    struct evconnlistener *lis; /* UDP+TCP: call-back listener */
    struct xg_udp_rx udp;     /* UDP+TCP: data socket (core/net/udp_endpoint.h), udp.fd -1 = none */
    struct xg_timer *tick;    /* 100 ms (less for stale_ms < 400): session deadlines, keepalive */
    struct vrpn_session sess; /* the protocol (vrpn_session.h): cookie, ids, pings, counters */
    bool sess_ready;          /* sess initialised (client_start) */
    char local_ip[INET_ADDRSTRLEN];
    uint16_t listen_port, udp_port;
    /* UDP data is accepted only from the server's address and, once its first datagram was
     * read, from that port (network order; 0 = not known yet) */
    struct in_addr srv_ip;
    uint16_t srv_udp_port;

    uint64_t bad_messages, udp_foreign;
};

struct vclient {
    struct vconn **conns;
    struct xg_tclient **tcs; /* conns[i]->tc, for the status */
    int n_conns;
    struct vdev **devs; /* all devices, config order */
    int n_devs;
    int64_t connect_timeout_ns;
    int64_t max_sensors;
    bool started;
    /* peer-triggered log lines (core/util/log.h): bad input from a server, foreign datagrams */
    struct xg_log_limit lim_bad, lim_foreign;
    struct xg_ingress_budget
        udp_budget;                 /* per wake-up of a UDP socket (core/net/ingress_budget.h) */
    struct xg_log_limit lim_nopong; /* devices the server never answers for */
};

/* ---- vrpn_client_conf.c ---- */

/** Add the configured device name `text` (Device@host[:port], x-vrpn:// or tcp:// location;
 *  vrpn_client_parse_name()) to v: its connection (made once per mode, host and port) and its
 *  device. A malformed, reserved or duplicate name is a configuration error at `at` (-EINVAL,
 *  err filled); -ENOMEM on allocation failure. */
int vrpn_cli_add_device(struct xg_adapter *a, struct vclient *v, const struct xg_conf *at,
                        const char *text, struct xg_error *err);

/* ---- vrpn_client.c ---- */

/** Close connection c (or its attempt); with `why` (already logged) reconnect after a backoff,
 *  without only clean up (stop, or a failed attempt the transport reports). */
void vrpn_cli_close_conn(struct vconn *c, const char *why);

/** Bad input from c's server in `where` (msg says what): count it, one rate-limited log line
 *  naming the peer, and close the connection (reconnecting later). */
void vrpn_cli_bad_input(struct vconn *c, const char *where, const char *msg);

/** c's session failed (a negative return of a vrpn_session_* call other than -ECONNABORTED):
 *  log and close as its error says; `where` overrides the error's place (NULL: keep it). */
void vrpn_cli_session_failed(struct vconn *c, const char *where);

/** Attach c's connected TCP bufferevent (c->bev) to the read and event call-backs and start the
 *  cookie exchange (vrpn_session_connected(): our cookie, wire rules §4). */
void vrpn_cli_setup_bev(struct vconn *c);

/* ---- vrpn_client_udp.c ---- */

/** ops.send_request of c's session: send the connection request datagram to the server from a
 *  fresh UDP socket (§6.3); 0 or a negative errno. */
int vrpn_cli_send_request(void *ctx, const uint8_t *buf, size_t len);

/** Start a UDP+TCP attempt: call-back listener and UDP data socket on the local address that
 *  routes to the server, then the connection request. 0, or -errno with the reason in why. */
int vrpn_cli_start_callback(struct vconn *c, char *why, size_t why_size);

#endif
