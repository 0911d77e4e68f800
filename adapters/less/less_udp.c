/* less adapter, UDP (P12-P14): datagrams of at most `mtu` bytes under 8-bit sequence numbers, the
 * peer's acks (at most 63 packets in flight), re-sends of lost packets with only the messages not
 * superseded since, the stale rule, peer restarts (a new session token), and the configured
 * peer's resolution. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adapters/less/less_adapter_io.h"
#include "adapters/less/less_adapter_priv.h"
#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "adapters/less/less_mapping.h"
#include "core/adapter.h"
#include "core/clock.h"
#include "core/egress_controls.h"
#include "core/log.h"
#include "core/names.h"
#include "core/net.h"
#include "core/path.h"
#include "core/tls.h"
#include "core/transport_client.h"
#include "core/udp_batch.h"
#include "mappings/frame.h"

/* ---- UDP ---- */

/* Queue a datagram for the peer; udp_out hands the queue to the kernel. */
static void udp_send_raw(struct peer *p, const uint8_t *buf, size_t len)
{
    xg_udp_batch_add(&p->la->ubatch, p->la->udp_fd, (struct sockaddr *)&p->ss, p->sslen, buf, len,
                     0);
}

/* Send the queued datagrams, one sendmmsg(2) per XG_UDP_BATCH (udp_sends): sent ones count in
 * packets_out, refused ones in drops (as a refused sendto did). */
static void udp_out(struct less_adapter *la)
{
    struct xg_udp_batch *b = &la->ubatch;
    xg_udp_batch_send(b);
    la->packets_out += b->datagrams - la->batch_sent;
    la->a->drops += b->errors - la->batch_errors;
    la->batch_sent = b->datagrams;
    la->batch_errors = b->errors;
}

/* Encode and send one datagram with sequence `seq` carrying msgs. */
static int udp_send(struct peer *p, uint8_t seq, const uint8_t *msgs, size_t len, uint64_t count)
{
    struct less_adapter *la = p->la;
    uint8_t dgram[65536];
    struct xg_writer w;
    xg_writer_init(&w, dgram, (size_t)la->mtu);
    uint8_t ack_last;
    uint64_t mask;
    less_ack_fields(&p->rxwin, &ack_last, &mask);
    struct xg_error err = {0};
    int rc = less_udp_encode(&w, &la->key, seq, ack_last, mask, next_ts(p), count, msgs, len, &err);
    if (rc) {
        XG_WARN_PEER(&la->lim_send, la->a->name, "peer %s: %s", p->addr, err.msg);
        return rc;
    }
    p->last_send_ns = xg_clock_mono_ns();
    udp_send_raw(p, w.buf, w.len);
    return 0;
}

static int udp_in_flight(const struct peer *p)
{
    int n = 0;
    for (int i = 0; i < 256; i++)
        if (p->sent[i].in_use && !p->sent[i].acked) n++;
    return n;
}

static void sent_clear(struct udp_sent *s)
{
    free(s->msgs);
    free(s->refs);
    s->msgs = NULL;
    s->refs = NULL;
}

/* Send messages refs[0..n) of the pending buffer as one datagram under the next sequence
 * number, remembering them for re-sends. */
static int udp_send_chunk(struct peer *p, const struct msg_ref *refs, size_t n)
{
    struct udp_sent *s = &p->sent[p->tx_seq];
    sent_clear(s);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += refs[i].len;
    uint8_t *copy = len ? malloc(len) : NULL;
    struct msg_ref *nr = n ? malloc(n * sizeof *nr) : NULL;
    if ((len && !copy) || (n && !nr)) {
        free(copy);
        free(nr);
        return -ENOMEM;
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(copy + off, p->msgbuf + refs[i].off, refs[i].len);
        nr[i] = refs[i];
        nr[i].off = (uint32_t)off;
        off += refs[i].len;
    }
    *s = (struct udp_sent){.in_use = true,
                           .seq = p->tx_seq,
                           .counter = p->tx_counter,
                           .sent_ns = xg_clock_mono_ns(),
                           .mark = p->tx_counter + 1,
                           .msgs = copy,
                           .msgs_len = len,
                           .count = n,
                           .refs = nr};
    /* entities whose newest state rides in this packet */
    for (size_t i = 0; i < n; i++) {
        uint32_t tid;
        if (nr[i].wire_id < 0 || !imap_get(&p->out_wire, nr[i].wire_id, &tid)) continue;
        struct out_ent *o = out_find(p, tid);
        if (!o) continue;
        if (nr[i].code == LESS_MSG_INTRODUCE_ENTITY) o->intro_seq = p->tx_counter;
        if (nr[i].code != LESS_MSG_REMOVE_ENTITY) o->upd_seq = p->tx_counter;
    }
    int rc = udp_send(p, p->tx_seq, copy, len, n);
    p->tx_seq++;
    p->tx_counter++;
    return rc;
}

/* Queue the pending messages in datagrams of at most `mtu` bytes. */
static int udp_queue(struct peer *p, bool force)
{
    struct less_adapter *la = p->la;
    if (!p->msg_count && !force) return 0;
    if (p->sslen == 0) return 0;
    if (udp_in_flight(p) >= UDP_MAX_INFLIGHT) {
        /* P13: at most 63 in flight; hold the messages (updates are dropped: newer ones come) */
        size_t keep = 0, klen = 0;
        for (size_t i = 0; i < p->msg_count; i++) {
            struct msg_ref r = p->midx[i];
            if (r.code == LESS_MSG_UPDATE_ENTITY) continue;
            memmove(p->msgbuf + klen, p->msgbuf + r.off, r.len);
            r.off = (uint32_t)klen;
            klen += r.len;
            p->midx[keep++] = r;
        }
        p->msg_len = klen;
        p->msg_count = keep;
        la->a->drops++;
        la->window_full++;
        return 0;
    }
    /* framing + signature + timestamp + message-count take at most 40 bytes */
    size_t budget = (size_t)la->mtu - 40;
    int rc = 0;
    size_t i = 0;
    if (!p->msg_count) rc = udp_send_chunk(p, NULL, 0);
    while (i < p->msg_count) {
        size_t j = i, len = 0;
        while (j < p->msg_count && len + p->midx[j].len <= budget)
            len += p->midx[j++].len;
        if (j == i) {
            XG_WARN_PEER(&la->lim_send, la->a->name,
                         "peer %s: %s of %u bytes does not fit in the MTU %" PRId64 "; dropped",
                         p->addr, less_msg_name(p->midx[i].code), p->midx[i].len, la->mtu);
            la->a->drops++;
            i++;
            continue;
        }
        rc = udp_send_chunk(p, p->midx + i, j - i);
        i = j;
    }
    p->msg_len = 0;
    p->msg_count = 0;
    return rc;
}

/* Send the pending messages in datagrams of at most `mtu` bytes, with the re-sends queued by
 * udp_resend: all in one sendmmsg(2) per XG_UDP_BATCH datagrams. */
int udp_flush(struct peer *p, bool force)
{
    int rc = udp_queue(p, force);
    udp_out(p->la);
    return rc;
}

/* The peer acknowledged (ack_last, mask): mark sent packets, note acked introduces. */
void udp_on_ack(struct peer *p, uint8_t ack_last, uint64_t mask)
{
    for (int k = 0; k <= 64; k++) {
        uint8_t seq = (uint8_t)(ack_last - k);
        struct udp_sent *s = &p->sent[seq];
        if (!s->in_use || s->acked) continue;
        if (!less_ack_covers(ack_last, mask, seq)) continue;
        s->acked = true;
        for (size_t i = 0; i < p->n_out; i++)
            if (p->out[i].intro_seq == s->counter) p->out[i].introduce_acked = true;
        sent_clear(s);
    }
}

/* Is message r of the packet sent as `counter` still current (not superseded, P13)? */
static bool still_current(struct peer *p, const struct msg_ref *r, int64_t counter)
{
    if (r->wire_id < 0) return true; /* type, subscription, control, results: always */
    uint32_t tid;
    bool known = imap_get(&p->out_wire, r->wire_id, &tid);
    if (r->code == LESS_MSG_REMOVE_ENTITY) return !known;
    if (!known) return false; /* removed since */
    const struct out_ent *o = out_find(p, tid);
    if (!o) return false;
    if (r->code == LESS_MSG_INTRODUCE_ENTITY) return o->intro_seq == counter;
    return o->upd_seq == counter; /* update: a newer packet carries the entity's properties */
}

/* Re-send lost packets under their old sequence number with a fresh timestamp and only the
 * messages not superseded since (possibly none). Lost: a later packet was acknowledged first,
 * or 250 ms passed (P13). */
void udp_resend(struct peer *p, int64_t now)
{
    struct less_adapter *la = p->la;
    int64_t newest_acked = -1;
    for (int i = 0; i < 256; i++)
        if (p->sent[i].in_use && p->sent[i].acked && p->sent[i].counter > newest_acked)
            newest_acked = p->sent[i].counter;
    for (int i = 0; i < 256; i++) {
        struct udp_sent *s = &p->sent[i];
        if (!s->in_use || s->acked) continue;
        if (p->tx_counter - s->counter > 192) {
            s->in_use = false; /* out of every window: give up */
            sent_clear(s);
            continue;
        }
        bool lost = newest_acked >= s->mark || now - s->sent_ns > UDP_LOSS_NS;
        if (!lost) continue;
        uint8_t keep[65536];
        size_t klen = 0;
        uint64_t kcount = 0;
        size_t nrefs = 0;
        for (uint64_t k = 0; k < s->count; k++) {
            struct msg_ref r = s->refs[k];
            if (!still_current(p, &r, s->counter)) continue;
            if (klen + r.len > sizeof keep) break;
            memcpy(keep + klen, s->msgs + r.off, r.len);
            r.off = (uint32_t)klen;
            s->refs[nrefs++] = r;
            klen += r.len;
            kcount++;
        }
        if (klen) memcpy(s->msgs, keep, klen);
        s->msgs_len = klen;
        s->count = kcount;
        s->sent_ns = now;
        s->mark = p->tx_counter;
        la->resends++;
        udp_send(p, s->seq, s->msgs, klen, kcount);
    }
}

/* Does this authentic packet open a new session of the peer (its first message is a
 * connection-control with another session token)? */
static bool peer_restarted(struct peer *p, const struct less_frame *f)
{
    if (!p->peer_session[0]) return false;
    struct less_context c;
    rx_ctx(p, &c);
    struct less_msg_iter it;
    less_msg_iter_init(&it, f);
    struct less_arena arena;
    less_arena_init(&arena, p->la->arena_buf, ARENA_SIZE);
    struct less_msg m;
    if (less_msg_next(&it, &c, &arena, &m, NULL) != 1 || m.code != LESS_MSG_CONNECTION_CONTROL)
        return false;
    const struct less_prop_list *l = &m.u.connection_control.props;
    for (size_t i = 0; i < l->count; i++) {
        if (l->items[i].property_id != LESS_CONN_SCHEMA) continue;
        char tok[40];
        session_token(l->items[i].value.u.str.p, tok, sizeof tok);
        return tok[0] && strcmp(tok, p->peer_session) != 0;
    }
    return false;
}

/* Forget everything about the peer's previous session, start ours over (sequence 0, a new
 * connection-control and introduce-type). */
static void udp_restart(struct peer *p)
{
    struct less_adapter *la = p->la;
    for (size_t i = 0; i < p->n_in; i++)
        if (p->in[i].table_id) xg_table_remove(la->a->table, p->in[i].table_id);
    p->n_in = 0;
    imap_free(&p->in_map);
    p->n_out = 0;
    imap_free(&p->out_map);
    imap_free(&p->out_wire);
    p->n_ptypes = 0;
    p->subscribed = false;
    p->sub_mask = 0;
    p->streaming = false;
    p->any_rx = false;
    p->peer_session[0] = '\0';
    xg_time_map_reset(&p->tmap);
    for (int i = 0; i < 256; i++) {
        sent_clear(&p->sent[i]);
        p->sent[i].in_use = false;
    }
    p->tx_seq = 0;
    p->msg_len = 0;
    p->msg_count = 0;
    less_ack_init(&p->rxwin, 0);
    less_rx_times_init(&p->rxts);
    la->peer_restarts++;
    send_connection_control(p);
}

static struct peer *udp_peer_get(struct less_adapter *la)
{
    return la->peers;
}

void udp_read_cb(evutil_socket_t fd, short what, void *arg)
{
    struct less_adapter *la = arg;
    for (int n = 0; n < 64; n++) {
        uint8_t dgram[65536];
        struct sockaddr_storage from;
        socklen_t flen = sizeof from;
        ssize_t len = recvfrom(fd, dgram, sizeof dgram, 0, (struct sockaddr *)&from, &flen);
        if (len < 0) return;
        struct peer *p = udp_peer_get(la);
        char addr[80];
        xg_net_addr_str((struct sockaddr *)&from, addr, sizeof addr);
        if (p && !p->sslen && la->udp_peer_fixed) { /* the configured peer is not resolved yet */
            la->a->drops++;
            continue;
        }
        if (p && p->sslen &&
            !xg_net_addr_equal((struct sockaddr *)&from, (struct sockaddr *)&p->ss)) {
            la->a->drops++;
            XG_DEBUG(la->a->name, "datagram from %s ignored (peer is %s)", addr, p->addr);
            continue;
        }
        struct less_frame f;
        struct xg_error err = {0};
        int64_t now = xg_clock_mono_ns();
        la->packets_in++;
        int rc =
            less_udp_decode(dgram, (size_t)len, (size_t)la->mtu, &la->keys[p->rx_key], &f, &err);
        for (int k = 0; rc == -EACCES && k < la->n_keys; k++) {
            if (k == p->rx_key) continue;
            struct xg_error e2 = {0};
            rc = less_udp_decode(dgram, (size_t)len, (size_t)la->mtu, &la->keys[k], &f, &e2);
            if (rc != -EACCES) {
                p->rx_key = k;
                err = e2;
            }
        }
        if (rc && !f.authentic) {
            if (rc == -EACCES) describe_bad_signature(la, &err, dgram, (size_t)len, f.sig_off);
            if (rc == -EACCES)
                la->bad_signature++;
            else
                la->framing_errors++;
            la->a->drops++;
            XG_WARN_PEER(&la->lim_dgram, la->a->name, "datagram from %s dropped: %s", addr,
                         err.msg);
            continue;
        }
        if (!p->sslen) {
            p->ss = from;
            p->sslen = flen;
            snprintf(p->addr, sizeof p->addr, "%s", addr);
            XG_INFO(la->a->name, "UDP peer is %s (first authentic sender)", addr);
            send_connection_control(p);
            udp_flush(p, false);
        }
        if (rc == 0 && p->streaming && peer_restarted(p, &f)) {
            XG_WARN_PEER(&la->lim_session, la->a->name,
                         "peer %s restarted (new session in connection-control); "
                         "starting over",
                         p->addr);
            udp_restart(p);
        }
        /* P4/P12: the stale rule (less_rx_record) before anything is applied */
        bool newest = !p->any_rx || f.timestamp > p->last_rx_ts;
        enum less_rx_class cls = rc && !f.authentic
                                     ? LESS_RX_STALE
                                     : less_rx_record(&p->rxwin, &p->rxts, f.seq, f.timestamp);
        if (rc) {
            la->framing_errors++;
            la->a->drops++;
            XG_WARN_PEER(&la->lim_packet, la->a->name, "peer %s: packet %u dropped: %s", p->addr,
                         f.seq, err.msg);
            continue;
        }
        if (cls == LESS_RX_DUPLICATE) {
            la->duplicates++;
            continue;
        }
        if (cls == LESS_RX_STALE) {
            la->stale_packets++;
            XG_WARN_PEER(&la->lim_stale, la->a->name,
                         "peer %s: packet %u dropped: timestamp %" PRId64
                         " is not newer than the packets before it (newest %" PRId64
                         "; stale, P12)",
                         p->addr, f.seq, f.timestamp, p->last_rx_ts);
            continue;
        }
        if (newest) {
            p->any_rx = true;
            p->last_rx_ts = f.timestamp;
            udp_on_ack(p, f.ack_last, f.ack_bitmask); /* a late packet's acks are older (P12) */
        }
        rc = process_packet(p, &f, now, !newest, &err);
        if (rc < 0) {
            la->framing_errors++;
            la->a->drops++;
            XG_WARN_PEER(&la->lim_packet, la->a->name, "peer %s: packet %u dropped: %s", p->addr,
                         f.seq, err.msg);
        }
        udp_flush(p, false);
    }
}

void udp_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    struct less_adapter *la = arg;
    struct peer *p = udp_peer_get(la);
    if (!p || !p->sslen) return;
    int64_t now = xg_clock_mono_ns();
    udp_resend(p, now);
    /* keep acks flowing: an empty packet when nothing was sent for 50 ms */
    udp_flush(p, now - p->last_send_ns >= 20 * XG_NS_PER_MS);
}

/* UDP mode: the configured peer's name resolved (core/transport_client.h): it is the peer. */
int on_udp_peer(void *arg, const struct sockaddr *sa, socklen_t len, char *why, size_t why_size)
{
    struct less_adapter *la = arg;
    struct peer *p = udp_peer_get(la);
    if (!p) {
        snprintf(why, why_size, "out of memory");
        return -ENOMEM;
    }
    memcpy(&p->ss, sa, len);
    p->sslen = len;
    xg_net_addr_str(sa, p->addr, sizeof p->addr);
    xg_tclient_handshake(la->tc);
    xg_tclient_streaming(la->tc);
    XG_INFO(la->a->name, "UDP peer is %s (%s)", p->addr, la->udp_peer);
    send_connection_control(p);
    udp_flush(p, false);
    return 0;
}
