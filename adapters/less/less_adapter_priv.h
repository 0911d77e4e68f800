/* Private to the less adapter's files (less_adapter.c, less_session.c, less_send.c,
 * less_session_udp.c, less_tcp.c, less_udp.c, less_conf.c): the adapter's configuration,
 * counters and socket handles, a peer (its session + its socket), and the functions the files
 * share. Nothing else includes it but the socket-free unit test (tests/unit/test_less_session.c).
 * No libevent header: the socket handles are opaque pointers here; the session files use only
 * the configuration, table, counters and log limiters of struct less_adapter. */
#ifndef XG_LESS_ADAPTER_PRIV_H
#define XG_LESS_ADAPTER_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "adapters/less/less_mapping.h"
#include "adapters/less/less_session.h"
#include "core/adapter.h"
#include "core/conf.h"
#include "core/egress_controls.h"
#include "core/error.h"
#include "core/log.h"
#include "core/udp_batch.h"
#include "core/udp_dests.h"
#include "core/net.h"
#include "core/tls.h"
#include "core/transport_client.h"
#include "core/transport_server.h"
#include "core/ingress_budget.h"

struct event;
struct peer; /* the glue's (less_adapter_io.h): a session + its socket */

#define ARENA_SIZE (256 * 1024)
#define LESS_MAX_KEYS 8
#define HANDSHAKE_TIMEOUT_S 10 /* TCP: connect + TLS + the peer's connection-control */

enum mode { MODE_CONNECT, MODE_LISTEN, MODE_UDP };

/* ---- state ---- */

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
    int64_t max_peers, max_packet, max_output, mtu, slow_timeout_ms;
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
    struct xg_tserver *ts; /* listen mode: listener, max_peers, TLS, slow peers */
    char bound[80];
    struct xg_tclient *tc; /* connect mode: resolution, connect, TLS, backoff, state */
    char closed_why[200];  /* connect mode: why the session ended (last_error) */
    struct event *sweep_ev;
    const char *state;
    int udp_fd;
    struct xg_udp_bind ubind;   /* UDP mode: `bind` (a name resolves at start, no DNS at load) */
    struct xg_udp_batch ubatch; /* UDP datagrams queued until udp_flush */
    uint64_t batch_sent, batch_errors; /* ubatch counts already in packets_out / drops */
    struct event *udp_ev, *udp_timer;
    bool udp_peer_fixed;
    /* scratch */
    uint8_t *arena_buf;
    uint8_t *pktbuf;
    size_t pktbuf_cap;
    /* counters */
    uint64_t packets_in, packets_out, bad_signature, framing_errors, slow_peer_drops,
        updates_skipped, updates_coalesced, echo_suppressed, stale_packets, refused_403,
        not_found_404, resends, duplicates, duplicates_ignored, window_full, hub_relayed,
        peer_restarts, entities_introduced, entities_removed, unknown_requests;
    /* lines a peer can trigger, one rate limiter per kind (core/log.h) */
    struct xg_ingress_budget udp_budget; /* per wake-up of the UDP socket (core/ingress_budget.h) */
    struct xg_log_limit lim_connected, lim_closed, lim_session, lim_request, lim_dgram, lim_packet,
        lim_stale, lim_send;
};

/* ---- less_adapter.c: helpers the session uses ---- */

void session_token(const char *schema, char *out, size_t size);
const struct less_schema *schema_for_uri(const struct less_adapter *la, const char *uri);

/* ---- less_conf.c: configuration ---- */

int less_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err);

#endif
