/* less adapter, TCP and TLS: a peer's bytes in (framing, signature with key rotation) handed to
 * its session (less_session_rx_tcp), the connection events, connect mode
 * (core/net/transport_client.h) and listen mode (accept, max_peers). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/transport.h"
#include "adapters/less/less_adapter_io.h"
#include "adapters/less/less_adapter_priv.h"
#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "adapters/less/less_mapping.h"
#include "adapters/less/less_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/table/egress_controls.h"
#include "core/util/log.h"
#include "core/table/names.h"
#include "core/net/net.h"
#include "core/conf/path.h"
#include "core/net/tls.h"
#include "core/net/transport_client.h"
#include "mappings/frame.h"

/* Name the field and its value in a signature failure: "... (signature 0123456789abcdef of a
 * 42-byte packet; 1 key(s) tried, signing key id 'k1')". */
void less_describe_bad_signature(const struct less_adapter *la, struct xg_error *err,
                                 const uint8_t *frame, size_t len, size_t sig_off)
{
    char hex[2 * LESS_SIG_LEN + 1] = "";
    if (sig_off + LESS_SIG_LEN <= len)
        for (int i = 0; i < LESS_SIG_LEN; i++)
            snprintf(hex + 2 * i, 3, "%02x", frame[sig_off + (size_t)i]);
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n,
             " (signature %s of a %zu-byte frame; %d key(s) tried, ours is key id '%s')", hex, len,
             la->n_keys, la->env.key_id);
}

/* Verify with the key that worked last, then the others (key rotation). */
static int tcp_decode_keys(struct less_peer *p, const uint8_t *frame, size_t len,
                           struct less_frame *f, struct xg_error *err)
{
    struct less_adapter *la = p->la;
    if (la->n_keys <= 1) return less_tcp_decode(frame, len, &la->env.key, f, err);
    int rc = less_tcp_decode(frame, len, &la->keys[p->rx_key], f, err);
    for (int k = 0; rc == -EACCES && k < la->n_keys; k++) {
        if (k == p->rx_key) continue;
        struct xg_error e2 = {0};
        rc = less_tcp_decode(frame, len, &la->keys[k], f, &e2);
        if (rc != -EACCES) {
            p->rx_key = k;
            if (err) *err = e2;
        }
    }
    return rc;
}

static void tcp_read_cb(struct bufferevent *bev, void *arg)
{
    struct less_peer *p = arg;
    struct less_adapter *la = p->la;
    xg_tserver_read_more(bev); /* a whole frame per pass, not 4 KiB of it */
    while (!p->s.closing) {    /* what this pass read (at most XG_TSERVER_READ_CAP bytes) */
        size_t avail = xg_tcp_in_len(bev);
        if (!avail) return;
        /* the splitter reads the packet-length INTEGER only (at most LESS_INT_MAX_BYTES bytes)
         * and compares it with `avail`: contiguous header bytes, no copy of the whole input */
        size_t hl = avail < LESS_INT_MAX_BYTES ? avail : LESS_INT_MAX_BYTES;
        const uint8_t *head = xg_tcp_in_pullup(bev, hl);
        if (!head) {
            less_peer_close(p, "out of memory buffering a packet; closing");
            return;
        }
        size_t flen = 0;
        struct xg_error err = {0};
        int rc = less_tcp_split(head, avail, (size_t)la->max_packet, &flen, &err);
        if (rc < 0) {
            la->env.framing_errors++;
            la->env.a->errors++;
            char why[XG_ERROR_MAX + 64];
            snprintf(why, sizeof why, "%s; closing", err.msg);
            less_peer_close(p, why);
            return;
        }
        if (rc == 0) return;
        const uint8_t *frame = xg_tcp_in_pullup(bev, flen);
        if (!frame) {
            less_peer_close(p, "out of memory buffering a packet; closing");
            return;
        }
        struct less_frame f;
        int64_t now = xg_clock_mono_ns();
        rc = tcp_decode_keys(p, frame, flen, &f, &err);
        la->env.packets_in++;
        if (rc == -EACCES) less_describe_bad_signature(la, &err, frame, flen, f.sig_off);
        if (rc == 0) rc = less_session_rx_tcp(&p->s, &f, now, &err);
        xg_tcp_in_drain(bev, flen);
        if (rc < 0) {
            if (rc == -EACCES)
                la->env.bad_signature++;
            else
                la->env.framing_errors++;
            la->env.a->errors++;
            char why[XG_ERROR_MAX + 64];
            snprintf(why, sizeof why, "%s; closing", err.msg);
            less_peer_close(p, why);
            return;
        }
        if (less_peer_flush(p) == -ENOBUFS) return;
        if (la->env.a->rate_hz == 0 && la->n_peers > 1) {
            /* send-on-change: relay to the other peers now (the table wakes us for others) */
            less_hub_relay(la, NULL);
            for (struct less_peer *q = la->peers; q; q = q->next)
                if (q != p) less_peer_flush(q);
        }
    }
}

static void tcp_event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct less_peer *p = arg;
    struct less_adapter *la = p->la;
    char why[400];
    if (p->tls && xg_tls_error(p->tls)[0]) {
        snprintf(why, sizeof why, "%s; closing", xg_tls_error(p->tls));
        la->env.a->errors++;
    } else if (what & XG_TCP_TIMEOUT) {
        snprintf(why, sizeof why,
                 "no connection-control within %d s of connecting (is it a LESS peer?); closing",
                 LESS_HANDSHAKE_TIMEOUT_S);
        la->env.a->errors++;
    } else if (p->tls && !xg_tls_established(p->tls)) {
        snprintf(why, sizeof why,
                 "TLS with %s: connection closed during the handshake (is the peer using TLS, "
                 "and does it accept our certificate?); closing",
                 p->s.addr);
        la->env.a->errors++;
    } else if (what & XG_TCP_EOF) {
        snprintf(why, sizeof why, "connection closed by peer");
    } else {
        int e = errno;
        snprintf(why, sizeof why, "connection error: %s", e ? strerror(e) : "unknown");
        la->env.a->errors++;
    }
    less_peer_close(p, why);
}

/* A connected session (TLS-wrapped by the transport when configured) starts: handshake timeout,
 * read cap (core/net/transport_server.h), our connection-control. */
static void peer_attach(struct less_peer *p, struct bufferevent *bev)
{
    p->bev = bev;
    xg_tserver_read_cap(bev);
    xg_tcp_read_timeout(bev, LESS_HANDSHAKE_TIMEOUT_S * 1000); /* cleared once the session is up */
    struct xg_tcp_conf tc = {.read = tcp_read_cb, .event = tcp_event_cb, .arg = p};
    xg_tcp_start(bev, &tc);
    less_send_connection_control(&p->s);
    less_peer_flush(p);
}

/* ---- connect mode ---- */

/* The transport connected (core/net/transport_client.h): a session starts. */
void less_on_connected(void *arg, struct bufferevent *bev, struct xg_tls_session *tls)
{
    struct less_adapter *la = arg;
    struct less_peer *p = less_peer_new(la, xg_tclient_peer(la->tc));
    if (!p) {
        xg_tcp_free(bev);
        xg_tclient_closed(la->tc, "out of memory");
        return;
    }
    p->tls = tls;
    peer_attach(p, bev);
}

/* ---- listen mode (core/net/transport_server.h: accept, max_peers, TLS) ---- */

int less_peers_held(void *arg)
{
    const struct less_adapter *la = arg;
    return la->n_peers;
}

int less_accepted(void *arg, struct bufferevent *bev, struct xg_tls_session *tls, const char *peer)
{
    struct less_adapter *la = arg;
    struct less_peer *p = less_peer_new(la, peer);
    if (!p) return -ENOMEM;
    p->tls = tls;
    XG_INFO_PEER(&la->env.lim_connected, la->env.a->name, "peer %s connected%s", peer,
                 la->tls ? " (TLS)" : "");
    peer_attach(p, bev);
    return 0;
}
