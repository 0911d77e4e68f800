/* less adapter, UDP side of a session (less_session.h, P12-P14), free of sockets: datagrams of at
 * most `mtu` bytes under 8-bit sequence numbers, the peer's acks (at most 63 packets in flight),
 * re-sends of lost packets with only the messages not superseded since, the stale rule, peer
 * restarts (a new session token). Datagrams leave through the session's `datagram` event; the
 * socket is less_udp.c's. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/less/less_codec.h"
#include "adapters/less/less_imap.h"
#include "adapters/less/less_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/clock/time_map.h"

/* Encode and send one datagram with sequence `seq` carrying msgs. */
static int udp_send(struct less_session *p, uint8_t seq, const uint8_t *msgs, size_t len,
                    uint64_t count, int64_t now)
{
    struct less_env *la = p->env;
    uint8_t dgram[65536];
    struct xg_writer w;
    xg_writer_init(&w, dgram, (size_t)la->mtu);
    uint8_t ack_last;
    uint64_t mask;
    less_ack_fields(&p->rxwin, &ack_last, &mask);
    struct xg_error err = {0};
    int rc = less_udp_encode(&w, &la->key, seq, ack_last, mask, less_next_ts(p, now), count, msgs,
                             len, &err);
    if (rc) {
        XG_WARN_PEER(&la->lim_send, la->a->name, "peer %s: %s", p->addr, err.msg);
        return rc;
    }
    p->last_send_ns = now;
    if (p->ev.datagram) p->ev.datagram(p->ev.user, w.buf, w.len);
    return 0;
}

static int udp_in_flight(const struct less_session *p)
{
    int n = 0;
    for (int i = 0; i < 256; i++)
        if (p->sent[i].in_use && !p->sent[i].acked) n++;
    return n;
}

static void sent_clear(struct less_udp_sent *s)
{
    free(s->msgs);
    free(s->refs);
    s->msgs = NULL;
    s->refs = NULL;
}

/* Send messages refs[0..n) of the pending buffer as one datagram under the next sequence
 * number, remembering them for re-sends. */
static int udp_send_chunk(struct less_session *p, const struct less_msg_ref *refs, size_t n,
                          int64_t now)
{
    struct less_udp_sent *s = &p->sent[p->tx_seq];
    sent_clear(s);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += refs[i].len;
    uint8_t *copy = len ? malloc(len) : NULL;
    struct less_msg_ref *nr = n ? malloc(n * sizeof *nr) : NULL;
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
    *s = (struct less_udp_sent){.in_use = true,
                                .seq = p->tx_seq,
                                .counter = p->tx_counter,
                                .sent_ns = now,
                                .mark = p->tx_counter + 1,
                                .msgs = copy,
                                .msgs_len = len,
                                .count = n,
                                .refs = nr};
    /* entities whose newest state rides in this packet */
    for (size_t i = 0; i < n; i++) {
        uint32_t tid;
        if (nr[i].wire_id < 0 || !less_imap_get(&p->out_wire, nr[i].wire_id, &tid)) continue;
        struct less_out_ent *o = less_out_find(p, tid);
        if (!o) continue;
        if (nr[i].code == LESS_MSG_INTRODUCE_ENTITY) o->intro_seq = p->tx_counter;
        if (nr[i].code != LESS_MSG_REMOVE_ENTITY) o->upd_seq = p->tx_counter;
    }
    int rc = udp_send(p, p->tx_seq, copy, len, n, now);
    p->tx_seq++;
    p->tx_counter++;
    return rc;
}

/* Send the pending messages in datagrams of at most `mtu` bytes. */
int less_session_udp_out(struct less_session *p, bool force, int64_t now)
{
    struct less_env *la = p->env;
    if (!p->msg_count && !force) return 0;
    if (udp_in_flight(p) >= LESS_UDP_MAX_INFLIGHT) {
        /* P13: at most 63 in flight; hold the messages (updates are dropped: newer ones come) */
        size_t keep = 0, klen = 0;
        for (size_t i = 0; i < p->msg_count; i++) {
            struct less_msg_ref r = p->midx[i];
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
    if (!p->msg_count) rc = udp_send_chunk(p, NULL, 0, now);
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
        rc = udp_send_chunk(p, p->midx + i, j - i, now);
        i = j;
    }
    p->msg_len = 0;
    p->msg_count = 0;
    return rc;
}

/* The peer acknowledged (ack_last, mask): mark sent packets, note acked introduces. */
void less_udp_on_ack(struct less_session *p, uint8_t ack_last, uint64_t mask)
{
    for (int k = 0; k <= 64; k++) {
        uint8_t seq = (uint8_t)(ack_last - k);
        struct less_udp_sent *s = &p->sent[seq];
        if (!s->in_use || s->acked) continue;
        if (!less_ack_covers(ack_last, mask, seq)) continue;
        s->acked = true;
        for (size_t i = 0; i < p->n_out; i++)
            if (p->out[i].intro_seq == s->counter) p->out[i].introduce_acked = true;
        sent_clear(s);
    }
}

/* Is message r of the packet sent as `counter` still current (not superseded, P13)? */
static bool still_current(struct less_session *p, const struct less_msg_ref *r, int64_t counter)
{
    if (r->wire_id < 0) return true; /* type, subscription, control, results: always */
    uint32_t tid;
    bool known = less_imap_get(&p->out_wire, r->wire_id, &tid);
    if (r->code == LESS_MSG_REMOVE_ENTITY) return !known;
    if (!known) return false; /* removed since */
    const struct less_out_ent *o = less_out_find(p, tid);
    if (!o) return false;
    if (r->code == LESS_MSG_INTRODUCE_ENTITY) return o->intro_seq == counter;
    return o->upd_seq == counter; /* update: a newer packet carries the entity's properties */
}

/* Re-send lost packets under their old sequence number with a fresh timestamp and only the
 * messages not superseded since (possibly none). Lost: a later packet was acknowledged first,
 * or 250 ms passed (P13). */
void less_udp_resend(struct less_session *p, int64_t now)
{
    struct less_env *la = p->env;
    int64_t newest_acked = -1;
    for (int i = 0; i < 256; i++)
        if (p->sent[i].in_use && p->sent[i].acked && p->sent[i].counter > newest_acked)
            newest_acked = p->sent[i].counter;
    for (int i = 0; i < 256; i++) {
        struct less_udp_sent *s = &p->sent[i];
        if (!s->in_use || s->acked) continue;
        if (p->tx_counter - s->counter > 192) {
            s->in_use = false; /* out of every window: give up */
            sent_clear(s);
            continue;
        }
        bool lost = newest_acked >= s->mark || now - s->sent_ns > LESS_UDP_LOSS_NS;
        if (!lost) continue;
        uint8_t keep[65536];
        size_t klen = 0;
        uint64_t kcount = 0;
        size_t nrefs = 0;
        for (uint64_t k = 0; k < s->count; k++) {
            struct less_msg_ref r = s->refs[k];
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
        udp_send(p, s->seq, s->msgs, klen, kcount, now);
    }
}

/* Does this authentic packet open a new session of the peer (its first message is a
 * connection-control with another session token)? */
static bool peer_restarted(struct less_session *p, const struct less_frame *f)
{
    if (!p->peer_session[0]) return false;
    struct less_context c;
    less_rx_ctx(p, &c);
    struct less_msg_iter it;
    less_msg_iter_init(&it, f);
    struct less_arena arena;
    less_arena_init(&arena, p->env->arena_buf, LESS_ARENA_SIZE);
    struct less_msg m;
    if (less_msg_next(&it, &c, &arena, &m, NULL) != 1 || m.code != LESS_MSG_CONNECTION_CONTROL)
        return false;
    const struct less_prop_list *l = &m.u.connection_control.props;
    for (size_t i = 0; i < l->count; i++) {
        if (l->items[i].property_id != LESS_CONN_SCHEMA) continue;
        char tok[40];
        less_session_token(l->items[i].value.u.str.p, tok, sizeof tok);
        return tok[0] && strcmp(tok, p->peer_session) != 0;
    }
    return false;
}

/* Forget everything about the peer's previous session, start ours over (sequence 0, a new
 * connection-control and introduce-type). */
static void udp_restart(struct less_session *p)
{
    struct less_env *la = p->env;
    for (size_t i = 0; i < p->n_in; i++)
        if (p->in[i].table_id) xg_table_remove(la->a->table, p->in[i].table_id);
    p->n_in = 0;
    less_imap_free(&p->in_map);
    p->n_out = 0;
    less_imap_free(&p->out_map);
    less_imap_free(&p->out_wire);
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
    less_send_connection_control(p);
}

enum less_session_rx less_session_rx_udp(struct less_session *p, const struct less_frame *f, int rc,
                                         const struct xg_error *decode_err, int64_t now)
{
    struct less_env *la = p->env;
    if (rc == 0 && p->streaming && peer_restarted(p, f)) {
        XG_WARN_PEER(&la->lim_session, la->a->name,
                     "peer %s restarted (new session in connection-control); starting over",
                     p->addr);
        udp_restart(p);
    }
    /* P4/P12: the stale rule (less_rx_record) before anything is applied */
    bool newest = !p->any_rx || f->timestamp > p->last_rx_ts;
    enum less_rx_class cls = less_rx_record(&p->rxwin, &p->rxts, f->seq, f->timestamp);
    struct xg_error err = {0};
    if (rc) {
        la->framing_errors++;
        la->a->drops++;
        XG_WARN_PEER(&la->lim_packet, la->a->name, "peer %s: packet %u dropped: %s", p->addr,
                     f->seq, decode_err ? decode_err->msg : "malformed");
        return LESS_SESSION_REFUSED;
    }
    if (cls == LESS_RX_DUPLICATE) {
        la->duplicates++;
        return LESS_SESSION_DUPLICATE;
    }
    if (cls == LESS_RX_STALE) {
        la->stale_packets++;
        XG_WARN_PEER(&la->lim_stale, la->a->name,
                     "peer %s: packet %u dropped: timestamp %" PRId64
                     " is not newer than the packets before it (newest %" PRId64 "; stale, P12)",
                     p->addr, f->seq, f->timestamp, p->last_rx_ts);
        return LESS_SESSION_STALE;
    }
    if (newest) {
        p->any_rx = true;
        p->last_rx_ts = f->timestamp;
        less_udp_on_ack(p, f->ack_last, f->ack_bitmask); /* a late packet's acks are older (P12) */
    }
    if (less_process_packet(p, f, now, !newest, &err) < 0) {
        la->framing_errors++;
        la->a->drops++;
        XG_WARN_PEER(&la->lim_packet, la->a->name, "peer %s: packet %u dropped: %s", p->addr,
                     f->seq, err.msg);
        return LESS_SESSION_REFUSED;
    }
    return LESS_SESSION_APPLIED;
}
