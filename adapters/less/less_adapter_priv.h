/* Private to the less adapter's glue (less_adapter.c, less_tcp.c, less_udp.c, less_conf.c): the
 * adapter's configuration and socket handles, with `env`, the part every session reads (struct
 * less_env, less_session.h). No libevent header: the socket handles are opaque pointers here.
 * The session files (less_session.c, less_send.c, less_session_udp.c) and their unit test do not
 * include it: they see only struct less_env (tests/static/check_less_includes.sh). */
#ifndef XG_LESS_ADAPTER_PRIV_H
#define XG_LESS_ADAPTER_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "adapters/less/less_mapping.h"
#include "adapters/less/less_session.h"
#include "core/adapter/adapter.h"
#include "core/conf/conf.h"
#include "core/table/egress_controls.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/net/udp_batch.h"
#include "core/net/udp_dests.h"
#include "core/net/net.h"
#include "core/net/tls.h"
#include "core/net/transport_client.h"
#include "core/net/transport_server.h"
#include "core/net/ingress_budget.h"
#include "core/net/timer.h"
#include "core/net/udp_endpoint.h"

struct less_peer; /* the glue's (less_adapter_io.h): a session + its socket */

#define LESS_MAX_KEYS 8
#define LESS_HANDSHAKE_TIMEOUT_S 10 /* TCP: connect + TLS + the peer's connection-control */

/* ---- state ---- */

struct less_adapter {
    struct xg_egress_controls controls; /* LESS carries no buttons/analogs */
    struct less_env env; /* what the sessions share (less_session.h): a, mode, keys, counters */
    char target[256];    /* connect / listen / bind address text */
    char udp_peer[256];
    /* every key we accept (key rotation by key id, issue 12); keys[0] is `key` */
    struct less_key keys[LESS_MAX_KEYS];
    char key_ids[LESS_MAX_KEYS][64];
    int n_keys;
    bool signature_none, insecure;
    int64_t max_peers, max_packet, max_output, slow_timeout_ms;
    /* TLS */
    bool tls_on, tls_verify;
    char tls_cert[512], tls_key[512], tls_ca[512], server_name[256];
    struct xg_tls_ctx *tls;
    /* runtime */
    struct less_peer *peers;
    int n_peers;
    struct xg_tserver *ts; /* listen mode: listener, max_peers, TLS, slow peers */
    char bound[80];
    struct xg_tclient *tc;  /* connect mode: resolution, connect, TLS, backoff, state */
    char closed_why[200];   /* connect mode: why the session ended (last_error) */
    struct xg_timer *sweep; /* frees closed sessions after the callback that closed them */
    const char *state;
    struct xg_udp_rx udp;       /* UDP mode: the socket and its reading (core/net/udp_endpoint.h) */
    struct xg_udp_bind ubind;   /* UDP mode: `bind` (a name resolves at start, no DNS at load) */
    struct xg_udp_batch ubatch; /* UDP datagrams queued until less_udp_flush */
    uint64_t batch_sent, batch_errors; /* ubatch counts already in packets_out / drops */
    struct xg_timer *udp_timer; /* UDP mode: re-sends and acks every 20 ms (core/net/timer.h) */
    bool udp_peer_fixed;
    struct xg_ingress_budget
        udp_budget; /* per wake-up of the UDP socket (core/net/ingress_budget.h) */
};

/* ---- less_conf.c: configuration ---- */

int less_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err);

#endif
