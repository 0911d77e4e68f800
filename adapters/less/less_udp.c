/* less adapter, the UDP socket (P12-P14): datagrams in (signature with key rotation, the peer's
 * address: the configured one or the first authentic sender) handed to the session
 * (less_session_rx_udp), the session's datagrams out batched by core (xg_udp_batch_send), the timer
 * for re-sends and keep-alive acks, and the configured peer's resolution. The protocol (ack window,
 * re-sends, stale rule, restarts) is the session's: less_session_udp.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "core/net/transport.h"
#include "adapters/less/less_adapter_io.h"
#include "adapters/less/less_adapter_priv.h"
#include "adapters/less/less_codec.h"
#include "adapters/less/less_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "core/net/transport_client.h"
#include "core/net/udp_batch.h"

/* ---- UDP ---- */

/* The session's datagram event: queued for the peer; udp_out hands the queue to the kernel. */
void less_udp_datagram(void *user, const uint8_t *buf, size_t len)
{
    struct less_peer *p = user;
    struct less_adapter *la = p->la;
    xg_udp_batch_add(&la->ubatch, la->udp.fd, (struct sockaddr *)&p->ss, p->sslen, buf, len, 0);
}

/* Send the queued datagrams through core's batch (xg_udp_batch_send, XG_UDP_BATCH a call): sent
 * ones count in packets_out, refused ones in drops (as a refused sendto did). */
static void udp_out(struct less_adapter *la)
{
    struct xg_udp_batch *b = &la->ubatch;
    xg_udp_batch_send(b);
    la->env.packets_out += b->datagrams - la->batch_sent;
    la->env.a->drops += b->errors - la->batch_errors;
    la->batch_sent = b->datagrams;
    la->batch_errors = b->errors;
}

/* Send the pending messages in datagrams of at most `mtu` bytes, with the re-sends queued by
 * less_udp_resend: all through core's batch (xg_udp_batch_send). Messages wait while the
 * peer's address is unknown. */
int less_udp_flush(struct less_peer *p, bool force)
{
    int rc = p->sslen ? less_session_udp_out(&p->s, force, xg_clock_mono_ns()) : 0;
    udp_out(p->la);
    return rc;
}

static struct less_peer *udp_peer_get(struct less_adapter *la)
{
    return la->peers;
}

/* One datagram (core/net/udp_endpoint.h reads them while the budget lasts: bytes, and one message
 * each; the rest waits for the next pass of the loop). */
int less_udp_rx(void *arg, uint8_t *dgram, size_t len, const struct sockaddr *from, socklen_t flen)
{
    struct less_adapter *la = arg;
    struct less_peer *p = udp_peer_get(la);
    char addr[80];
    xg_net_addr_str(from, addr, sizeof addr);
    if (p && !p->sslen && la->udp_peer_fixed) { /* the configured peer is not resolved yet */
        la->env.a->drops++;
        return 1;
    }
    if (p && p->sslen && !xg_net_addr_equal(from, (struct sockaddr *)&p->ss)) {
        la->env.a->drops++;
        XG_DEBUG(la->env.a->name, "datagram from %s ignored (peer is %s)", addr, p->s.addr);
        return 1;
    }
    struct less_frame f;
    struct xg_error err = {0};
    int64_t now = xg_clock_mono_ns();
    la->env.packets_in++;
    int rc = less_udp_decode(dgram, len, (size_t)la->env.mtu, &la->keys[p->rx_key], &f, &err);
    for (int k = 0; rc == -EACCES && k < la->n_keys; k++) {
        if (k == p->rx_key) continue;
        struct xg_error e2 = {0};
        rc = less_udp_decode(dgram, len, (size_t)la->env.mtu, &la->keys[k], &f, &e2);
        if (rc != -EACCES) {
            p->rx_key = k;
            err = e2;
        }
    }
    if (rc && !f.authentic) {
        if (rc == -EACCES) less_describe_bad_signature(la, &err, dgram, len, f.sig_off);
        if (rc == -EACCES)
            la->env.bad_signature++;
        else
            la->env.framing_errors++;
        la->env.a->drops++;
        XG_WARN_PEER(&la->env.lim_dgram, la->env.a->name, "datagram from %s dropped: %s", addr,
                     err.msg);
        return 1;
    }
    if (!p->sslen) {
        memcpy(&p->ss, from, flen);
        p->sslen = flen;
        snprintf(p->s.addr, sizeof p->s.addr, "%s", addr);
        XG_INFO(la->env.a->name, "UDP peer is %s (first authentic sender)", addr);
        less_send_connection_control(&p->s);
        less_udp_flush(p, false);
    }
    enum less_session_rx r = less_session_rx_udp(&p->s, &f, rc, &err, now);
    if (r == LESS_SESSION_APPLIED || (r == LESS_SESSION_REFUSED && rc == 0))
        less_udp_flush(p, false); /* processed: answers and our acks go out */
    return 1;
}

void less_udp_timer_cb(void *arg)
{
    struct less_adapter *la = arg;
    struct less_peer *p = udp_peer_get(la);
    if (!p || !p->sslen) return;
    int64_t now = xg_clock_mono_ns();
    less_udp_resend(&p->s, now);
    /* keep acks flowing: an empty packet when nothing was sent for 20 ms */
    less_udp_flush(p, now - p->s.last_send_ns >= 20 * XG_NS_PER_MS);
}

/* UDP mode: the configured peer's name resolved (core/net/transport_client.h): it is the peer. */
int less_on_udp_peer(void *arg, const struct sockaddr *sa, socklen_t len, char *why,
                     size_t why_size)
{
    struct less_adapter *la = arg;
    struct less_peer *p = udp_peer_get(la);
    if (!p) {
        snprintf(why, why_size, "out of memory");
        return -ENOMEM;
    }
    memcpy(&p->ss, sa, len);
    p->sslen = len;
    xg_net_addr_str(sa, p->s.addr, sizeof p->s.addr);
    xg_tclient_handshake(la->tc);
    xg_tclient_streaming(la->tc);
    XG_INFO(la->env.a->name, "UDP peer is %s (%s)", p->s.addr, la->udp_peer);
    less_send_connection_control(&p->s);
    less_udp_flush(p, false);
    return 0;
}

/* UDP mode, a bind address by name (core/net/udp_dests.h xg_udp_bind): state "backoff" or
 * "resolving" without a socket, the DNS error in last_error, and its failures added to
 * dns_failures (which also counts the configured peer's, when it is a name). */
void less_udp_bind_status(const struct less_adapter *la, struct xg_status *st)
{
    if (!xg_udp_bind_named(&la->ubind)) return;
    const struct xg_resolve *res = la->ubind.res;
    uint64_t failures = res ? xg_resolve_failures(res) : 0;
    st->client = true; /* last_error applies: the name's resolution */
    if (res && la->udp.fd < 0 && xg_resolve_last_error(res)[0])
        snprintf(st->last_error, sizeof st->last_error, "%s", xg_resolve_last_error(res));
    st->state = xg_udp_bind_state(&la->ubind, la->udp.fd >= 0, st->state, st);
    for (int i = 0; i < st->n_counters; i++)
        if (!strcmp(st->counters[i].name, "dns_failures")) {
            st->counters[i].value += (double)failures;
            return;
        }
    xg_status_counter(st, "dns_failures", (double)failures);
}
