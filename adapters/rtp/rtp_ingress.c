/* RTP game-state adapter, ingress: RTP and RTCP packets from peers (SRTP unprotected first)
 * become entity samples; per-SSRC state, object ids, capture times from Time1, FIR answers.
 * Split from rtp_adapter.c (which keeps configuration, egress and the life cycle); the shared
 * state is struct rtpa in rtp_adapter.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtcp_out.h"
#include "adapters/rtp/rtp_adapter.h"
#include "adapters/rtp/rtp.h"
#include "adapters/rtp/rtp_icmp.h"
#include "adapters/rtp/rtp_oids.h"
#include "adapters/rtp/srtp_session.h"
#include "core/adapter.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/net.h"
#include "mappings/frame.h"

/* ---- ingress ---- */

static struct rtpa_ssrc *ssrc_find(struct rtpa *r, uint32_t ssrc)
{
    for (struct rtpa_ssrc *s = r->ssrcs; s; s = s->next)
        if (s->ssrc == ssrc) return s;
    return NULL;
}

void rtpa_ssrc_forget(struct xg_adapter *a, struct rtpa_ssrc *s, bool remove_entities)
{
    struct rtpa *r = a->priv;
    for (struct rtpa_ssrc **pp = &r->ssrcs; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    for (struct rtpa_obj *o = s->objs, *nx; o; o = nx) {
        nx = o->next;
        if (remove_entities && o->id) xg_table_remove(a->table, o->id);
        free(o);
    }
    r->n_objs -= s->n_objs;
    r->n_ssrcs--;
    free(s);
}

static bool ssrc_allowed(const struct rtpa *r, uint32_t ssrc)
{
    if (!r->n_allow) return true;
    for (int i = 0; i < r->n_allow; i++)
        if (r->allow[i] == ssrc) return true;
    return false;
}

static struct rtpa_obj *obj_get(struct rtpa *r, struct rtpa_ssrc *s, uint64_t tag, uint64_t oid)
{
    for (struct rtpa_obj *o = s->objs; o; o = o->next)
        if (o->tag == tag && o->object_id == oid) return o;
    if ((int64_t)r->n_objs >= r->max_objects || (int64_t)s->n_objs >= r->max_objects_per_ssrc)
        return NULL;
    struct rtpa_obj *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->tag = tag;
    o->object_id = oid;
    o->next = s->objs;
    s->objs = o;
    s->n_objs++;
    r->n_objs++;
    return o;
}

/* Forget the objects of s whose entity is gone from the table (expired after entity.expire_ms,
 * or never created): a later sample creates it again. */
static void obj_sweep(struct xg_adapter *a, struct rtpa_ssrc *s)
{
    struct rtpa *r = a->priv;
    for (struct rtpa_obj **pp = &s->objs; *pp;) {
        struct rtpa_obj *o = *pp;
        if (o->id && xg_table_get(a->table, o->id)) {
            pp = &o->next;
            continue;
        }
        *pp = o->next;
        free(o);
        s->n_objs--;
        r->n_objs--;
    }
}

static void sample_loc2(struct xg_sample *smp, const struct rtp_gs_loc2 *l)
{
    smp->position = (struct xg_vec3){l->p[0], l->p[1], l->p[2]};
    smp->velocity = (struct xg_vec3){l->v[0], l->v[1], l->v[2]};
    smp->flags |= XG_SAMPLE_POSITION | XG_SAMPLE_VELOCITY;
}

/* A Rot1/Rot2 vector part must be (nearly) inside the unit ball; Float16 rounding allows a
 * little excess. */
static bool ijk_ok(const float ijk[3])
{
    double n2 = (double)ijk[0] * ijk[0] + (double)ijk[1] * ijk[1] + (double)ijk[2] * ijk[2];
    return isfinite(n2) && n2 <= 1.01;
}

static bool sample_rot2(struct xg_sample *smp, const struct rtp_gs_rot2 *rot)
{
    if (!ijk_ok(rot->s) || !ijk_ok(rot->e)) return false;
    struct xg_quat s = xg_quat_normalize(rtp_gs_quat_from_ijk(rot->s));
    struct xg_quat e = xg_quat_normalize(rtp_gs_quat_from_ijk(rot->e));
    smp->orientation = s;
    smp->angular_velocity = xg_quat_angular_velocity(s, e, 1.0);
    smp->flags |= XG_SAMPLE_ORIENTATION | XG_SAMPLE_ANGULAR_VELOCITY;
    return true;
}

/* Time1 → capture time: unwrapped against our wall clock (the sender's is NTP-synced, wire-rules
 * §6), converted to the gateway clock, then through the SSRC's offset estimate (core/net.h), so a
 * sender whose clock is off still gets consistent capture times, never after receipt. */
static int64_t time1_capture(struct rtpa_ssrc *s, uint16_t time1, int64_t recv_ns, int64_t wall_ns)
{
    int64_t t = xg_clock_wall_to_mono_ns(xg_ms16_to_ns(time1, wall_ns));
    return xg_time_map_update(&s->tmap, t, recv_ns);
}

/* GameControl1: buttons (bit n-1 → button n-1, D6) and sticks (analogs 0..3) go to the entity of
 * a pose object with the same object ID from the same SSRC when there is one (a controller's
 * SixDOF1), else to an entity <ssrc>/GameControl1-<id> of kind controller, reported inactive
 * at the origin (it has no pose). */
static void apply_game_control(struct xg_adapter *a, struct rtpa_ssrc *s,
                               const struct rtp_gs_game_control1 *g, int64_t recv_ns,
                               int64_t wall_ns, const char *peer)
{
    struct rtpa *r = a->priv;
    uint32_t id = 0;
    for (struct rtpa_obj *ob = s->objs; ob && !id; ob = ob->next)
        if (ob->object_id == g->object_id && ob->tag != RTP_GS_TAG_GAME_CONTROL1 && ob->id &&
            xg_table_get(a->table, ob->id))
            id = ob->id;
    if (!id) {
        struct rtpa_obj *ob = obj_get(r, s, RTP_GS_TAG_GAME_CONTROL1, g->object_id);
        if (!ob) {
            rtpa_bad_input(
                a, peer, R_LIMIT,
                "max_objects (%lld) or max_objects_per_ssrc (%lld) reached, GameControl1 "
                "%llu of SSRC %08x ignored",
                (long long)r->max_objects, (long long)r->max_objects_per_ssrc,
                (unsigned long long)g->object_id, s->ssrc);
            return;
        }
        struct xg_sample smp = {.capture_ns = time1_capture(s, g->time, recv_ns, wall_ns),
                                .receive_ns = recv_ns,
                                .flags = XG_SAMPLE_INACTIVE};
        int rc = -ENOENT;
        if (ob->id) rc = xg_table_push(a->table, ob->id, &smp);
        if (rc == -ENOENT) {
            /* the table creates entities from poses only: the origin, reported inactive */
            smp.flags |= XG_SAMPLE_POSE;
            smp.orientation = XG_QUAT_IDENTITY;
            char src[96];
            snprintf(src, sizeof src, "%08x/GameControl1-%llu", s->ssrc,
                     (unsigned long long)g->object_id);
            struct xg_entity_key key = {.source = src, .kind = XG_KIND_CONTROLLER};
            rc = xg_table_update(a->table, a, &key, &smp, &ob->id);
        }
        if (rc) {
            a->drops++;
            return;
        }
        id = ob->id;
    }
    for (int i = 0; i < 20; i++)
        xg_table_set_button(a->table, id, i, (g->buttons >> i) & 1);
    const float sticks[4] = {g->left_x, g->left_y, g->right_x, g->right_y};
    for (int i = 0; i < 4; i++)
        if (isfinite(sticks[i])) xg_table_set_analog(a->table, id, i, sticks[i]);
    a->samples_in++;
    r->objects_in++;
    s->objects++;
}

static void apply_object(struct xg_adapter *a, struct rtpa_ssrc *s, const struct rtp_gs_object *o,
                         int64_t recv_ns, int64_t wall_ns, const char *peer)
{
    struct rtpa *r = a->priv;
    struct xg_sample smp = {.receive_ns = recv_ns};
    uint64_t oid = 0;
    bool has_time = true, ok = true;
    uint16_t time1 = 0;
    enum xg_kind kind = XG_KIND_OBJECT;
    switch (o->type) {
    case RTP_GS_HEAD1:
        oid = o->u.head1.object_id;
        time1 = o->u.head1.time;
        kind = XG_KIND_HEAD;
        sample_loc2(&smp, &o->u.head1.loc);
        ok = sample_rot2(&smp, &o->u.head1.rot);
        break;
    case RTP_GS_HAND1:
        oid = o->u.hand1.object_id;
        time1 = o->u.hand1.time;
        kind = o->u.hand1.left ? XG_KIND_LEFT_HAND : XG_KIND_RIGHT_HAND;
        sample_loc2(&smp, &o->u.hand1.loc);
        ok = sample_rot2(&smp, &o->u.hand1.rot);
        break;
    case RTP_GS_HAND2:
        oid = o->u.hand2.object_id;
        time1 = o->u.hand2.time;
        kind = o->u.hand2.left ? XG_KIND_LEFT_HAND : XG_KIND_RIGHT_HAND;
        sample_loc2(&smp, &o->u.hand2.loc);
        ok = sample_rot2(&smp, &o->u.hand2.rot);
        break;
    case RTP_GS_OBJECT1: {
        const struct rtp_gs_object1 *b = &o->u.object1;
        oid = b->object_id;
        time1 = b->time;
        smp.position = (struct xg_vec3){b->loc[0], b->loc[1], b->loc[2]};
        ok = ijk_ok(b->rot);
        smp.orientation = xg_quat_normalize(rtp_gs_quat_from_ijk(b->rot));
        smp.scale = (struct xg_vec3){b->scale, b->scale, b->scale};
        smp.flags = XG_SAMPLE_POSE | XG_SAMPLE_SCALE | (b->active ? 0 : XG_SAMPLE_INACTIVE);
        break;
    }
    case RTP_GS_OBJECT2: {
        const struct rtp_gs_object2 *b = &o->u.object2;
        oid = b->object_id;
        time1 = b->time;
        sample_loc2(&smp, &b->loc);
        ok = sample_rot2(&smp, &b->rot);
        smp.scale = (struct xg_vec3){b->scale.p[0], b->scale.p[1], b->scale.p[2]};
        smp.flags |= XG_SAMPLE_SCALE | (b->active ? 0 : XG_SAMPLE_INACTIVE);
        break;
    }
    case RTP_GS_MESH2: {
        const struct rtp_gs_mesh2 *b = &o->u.mesh2;
        oid = b->object_id;
        has_time = false; /* D12: no Time1 */
        sample_loc2(&smp, &b->loc);
        ok = sample_rot2(&smp, &b->rot);
        smp.scale = (struct xg_vec3){b->scale.p[0], b->scale.p[1], b->scale.p[2]};
        smp.flags |= XG_SAMPLE_SCALE;
        break;
    }
    case RTP_GS_THREEDOF1:
        oid = o->u.threedof1.object_id;
        time1 = o->u.threedof1.time;
        kind = XG_KIND_CONTROLLER;
        ok = sample_rot2(&smp, &o->u.threedof1.rot);
        break;
    case RTP_GS_SIXDOF1:
        oid = o->u.sixdof1.object_id;
        time1 = o->u.sixdof1.time;
        kind = XG_KIND_CONTROLLER;
        sample_loc2(&smp, &o->u.sixdof1.loc);
        ok = sample_rot2(&smp, &o->u.sixdof1.rot);
        break;
    case RTP_GS_GAME_CONTROL1:
        apply_game_control(a, s, &o->u.game_control1, recv_ns, wall_ns, peer);
        return;
    default: /* Mesh1 (geometry): not an entity */
        r->ignored_objects++;
        return;
    }
    if (!ok) {
        rtpa_bad_input(a, peer, R_VALUE,
                       "SSRC %08x %s object %llu: rotation vector part is not unit", s->ssrc,
                       rtp_gs_type_name(o->type), (unsigned long long)oid);
        return;
    }
    /* Time1: wall-clock ms mod 65536, unwrapped against our wall clock, never after receipt */
    smp.capture_ns = has_time ? time1_capture(s, time1, recv_ns, wall_ns) : recv_ns;
    xg_frame_sample_in(a->frame, &smp);
    struct rtpa_obj *ob = obj_get(r, s, o->tag, oid);
    if (!ob) {
        rtpa_bad_input(a, peer, R_LIMIT,
                       "max_objects (%lld) or max_objects_per_ssrc (%lld) reached, %s %llu of SSRC "
                       "%08x ignored",
                       (long long)r->max_objects, (long long)r->max_objects_per_ssrc,
                       rtp_gs_type_name(o->type), (unsigned long long)oid, s->ssrc);
        return;
    }
    int rc = -ENOENT;
    if (ob->id) rc = xg_table_push(a->table, ob->id, &smp);
    if (rc == -ENOENT) {
        char src[96];
        snprintf(src, sizeof src, "%08x/%s-%llu", s->ssrc, rtp_gs_type_name(o->type),
                 (unsigned long long)oid);
        struct xg_entity_key key = {.source = src, .kind = kind};
        rc = xg_table_update(a->table, a, &key, &smp, &ob->id);
    }
    if (rc == 0) {
        a->samples_in++;
        r->objects_in++;
        s->objects++;
    } else if (rc == -EAGAIN) {
        /* capture time did not advance (a resend within the same ms): the table counts it */
    } else if (rc == -EINVAL) {
        rtpa_bad_input(a, peer, R_VALUE, "SSRC %08x %s object %llu: values rejected (non-finite)",
                       s->ssrc, rtp_gs_type_name(o->type), (unsigned long long)oid);
    } else {
        a->drops++;
    }
}

static bool fir_is_new(struct rtpa *r, uint32_t sender, uint8_t seq)
{
    for (int i = 0; i < RTPA_FIR_MEMO; i++)
        if (r->firs[i].used && r->firs[i].ssrc == sender) {
            if (r->firs[i].seq == seq) return false;
            r->firs[i].seq = seq;
            return true;
        }
    struct rtpa_fir_memo *m = &r->firs[r->fir_next];
    r->fir_next = (r->fir_next + 1) % RTPA_FIR_MEMO;
    *m = (struct rtpa_fir_memo){.ssrc = sender, .seq = seq, .used = true};
    return true;
}

static void handle_rtcp(struct xg_adapter *a, const uint8_t *buf, size_t len,
                        const struct sockaddr *from, socklen_t from_len, const char *peer)
{
    struct rtpa *r = a->priv;
    struct rtcp_iter it;
    struct rtcp_packet p;
    struct xg_error err = {0};
    bool want_full = false;
    int rc;
    r->rtcp_in++;
    rtcp_iter_init(&it, buf, len);
    while ((rc = rtcp_iter_next(&it, &p, &err)) == RTCP_PACKET) {
        if (p.pt == RTCP_PSFB) {
            struct rtcp_psfb fb;
            if (rtcp_parse_psfb(&p, &fb, &err)) {
                rtpa_bad_input(a, peer, R_RTCP, "RTCP feedback: %s", err.msg);
                continue;
            }
            if (fb.fmt == RTCP_PSFB_FIR) {
                for (size_t i = 0; i < fb.n_fir; i++) {
                    struct rtcp_fir_entry e = rtcp_fir_entry_at(&fb, i);
                    if (e.ssrc != r->ssrc) continue;
                    r->firs_in++;
                    if (!fir_is_new(r, fb.sender_ssrc, e.seq)) {
                        r->firs_dup++;
                        continue;
                    }
                    want_full = true;
                }
            } else if (fb.fmt == RTCP_PSFB_PLI && fb.media_ssrc == r->ssrc) {
                r->plis_in++;
                want_full = true;
            }
        } else if (p.pt == RTCP_BYE) {
            struct rtcp_bye bye;
            if (rtcp_parse_bye(&p, &bye, &err)) {
                rtpa_bad_input(a, peer, R_RTCP, "RTCP BYE: %s", err.msg);
                continue;
            }
            for (size_t i = 0; i < bye.n_ssrc; i++) {
                struct rtpa_ssrc *s = ssrc_find(r, bye.ssrc[i]);
                if (s && xg_net_addr_equal((const struct sockaddr *)&s->from, from)) {
                    r->byes_in++;
                    XG_INFO_PEER(&r->lim_ssrc, a->name,
                                 "SSRC %08x (%s) said BYE: its entities are removed", s->ssrc,
                                 peer);
                    rtpa_ssrc_forget(a, s, true);
                }
            }
        }
        /* SR, RR, SDES, APP: accepted, nothing to do */
    }
    if (rc < 0) rtpa_bad_input(a, peer, R_RTCP, "RTCP compound: %s", err.msg);
    (void)from_len;
    if (want_full) rtpa_requested_full_state(a);
}

static void handle_rtp(struct xg_adapter *a, const uint8_t *buf, size_t len,
                       const struct sockaddr *from, socklen_t from_len, const char *peer,
                       int64_t recv_ns)
{
    struct rtpa *r = a->priv;
    struct rtp_packet pk;
    struct xg_error err = {0};
    if (rtp_decode(buf, len, &pk, &err)) {
        int reason = R_TRUNCATED;
        if (len >= 1 && (buf[0] >> 6) != RTP_VERSION)
            reason = R_VERSION;
        else if (len >= RTP_HEADER_LEN && (buf[0] & 0x20)) {
            /* truncated CSRC/extension beats padding: rtp_decode checks them first */
            size_t need = RTP_HEADER_LEN + 4u * (buf[0] & 0x0F);
            bool hdr_ok = len >= need;
            if (hdr_ok && (buf[0] & 0x10))
                hdr_ok = len >= need + 4 && len >= need + 4 + 4u * xg_load_be16(buf + need + 2);
            if (hdr_ok) reason = R_PADDING;
        }
        rtpa_bad_input(a, peer, reason, "%s", err.msg);
        return;
    }
    if (pk.hdr.ssrc == r->ssrc) return; /* our own packets (multicast loopback) */
    if (pk.hdr.pt != r->pt) {
        rtpa_bad_input(a, peer, R_WRONG_PT, "RTP payload type %u (expected %d) from SSRC %08x",
                       pk.hdr.pt, r->pt, pk.hdr.ssrc);
        return;
    }
    if (!ssrc_allowed(r, pk.hdr.ssrc)) {
        rtpa_bad_input(a, peer, R_SSRC_DENIED, "SSRC %08x is not in allow_ssrc", pk.hdr.ssrc);
        return;
    }
    struct rtpa_ssrc *s = ssrc_find(r, pk.hdr.ssrc);
    if (!s) {
        if ((int64_t)r->n_ssrcs >= r->max_ssrcs) {
            rtpa_bad_input(a, peer, R_LIMIT, "max_ssrcs (%lld) reached, SSRC %08x ignored",
                           (long long)r->max_ssrcs, pk.hdr.ssrc);
            return;
        }
        s = calloc(1, sizeof *s);
        if (!s) return;
        s->ssrc = pk.hdr.ssrc;
        s->first_ns = recv_ns;
        s->next = r->ssrcs;
        r->ssrcs = s;
        r->n_ssrcs++;
        memcpy(&s->from, from, from_len);
        s->from_len = from_len;
        XG_INFO_PEER(&r->lim_ssrc, a->name,
                     "new SSRC %08x from %s: asking for its full state (FIR)", s->ssrc, peer);
        rtpa_send_fir(a, s);
    } else if (!xg_net_addr_equal((const struct sockaddr *)&s->from, from)) {
        memcpy(&s->from, from, from_len);
        s->from_len = from_len;
    }
    s->last_ns = recv_ns;
    s->packets++;
    r->packets_in++;
    int64_t wall = xg_clock_mono_to_wall_ns(recv_ns);
    struct rtp_gs_iter *it = &r->iter;
    struct rtp_gs_object o;
    int rc;
    rtp_gs_iter_init(it, pk.payload, pk.payload_len);
    while ((rc = rtp_gs_iter_next(it, &o, &err)) != RTP_GS_END) {
        if (rc == -EPROTO) {
            rtpa_bad_input(a, peer, R_OBJECT, "SSRC %08x: %s", s->ssrc, err.msg);
            continue;
        }
        if (rc == -EBADMSG) {
            rtpa_bad_input(a, peer, R_FRAMING, "SSRC %08x: %s (rest of the packet dropped)",
                           s->ssrc, err.msg);
            continue;
        }
        if (rc < 0) break;
        if (o.gse_tag) r->gse_tags++;
        if (o.type == RTP_GS_UNKNOWN) {
            r->ignored_objects++;
            continue;
        }
        apply_object(a, s, &o, recv_ns, wall, peer);
    }
}

/* SRTP ingress, after the RTP/RTCP demux: a packet carrying our own SSRC (multicast loopback)
 * is ignored before anything else; every other one is unprotected in place with the receive
 * session. Returns true when buf[0..*len) now holds an authentic plain packet; false when it is
 * to be dropped (auth / replay / malformed counted through rtpa_bad_input). */
static bool srtp_in(struct xg_adapter *a, uint8_t *buf, size_t *len, bool rtcp, const char *peer)
{
    struct rtpa *r = a->priv;
    size_t at = rtcp ? 4 : 8; /* RTCP: the first packet's sender SSRC; RTP: the header's SSRC */
    if (*len >= at + 4 && xg_load_be32(buf + at) == r->ssrc) return false;
    struct xg_error err = {0};
    int rc = !r->srtp_rx ? xg_error_set(&err, -EINVAL, "SRTP: no receive session")
             : rtcp      ? xg_srtp_unprotect_rtcp(r->srtp_rx, buf, len, &err)
                         : xg_srtp_unprotect(r->srtp_rx, buf, len, &err);
    if (rc == 0) return true;
    switch (rc) {
    case XG_SRTP_EAUTH:
        rtpa_bad_input(a, peer, R_SRTP_AUTH, "%s", err.msg);
        break;
    case XG_SRTP_EREPLAY:
        rtpa_bad_input(a, peer, R_SRTP_REPLAY, "%s", err.msg);
        break;
    case XG_SRTP_EMALFORMED:
        rtpa_bad_input(a, peer, R_SRTP_MALFORMED, "%s", err.msg);
        break;
    default: /* key usage limit, libsrtp failure: ours, not the peer's */
        r->srtp_other_errors++;
        a->drops++;
        a->errors++;
        XG_WARN_PEER(&r->lim_srtp, a->name, "peer %s: %s (dropped; %llu such SRTP errors)", peer,
                     err.msg, (unsigned long long)r->srtp_other_errors);
        break;
    }
    return false;
}

void rtpa_rx_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_adapter *a = arg;
    struct rtpa *r = a->priv;
    for (int i = 0; i < RTPA_RECV_BATCH; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        ssize_t n = recvfrom(fd, r->rbuf, 65536, 0, (struct sockaddr *)&ss, &sl);
        if (n < 0) {
            /* ICMP errors keep the socket readable until their queue is read */
            rtp_icmp_drain(fd, rtpa_icmp_cb, a);
            break;
        }
        int64_t now = xg_clock_mono_ns();
        char peer[64];
        xg_net_addr_str((struct sockaddr *)&ss, peer, sizeof peer);
        size_t len = (size_t)n;
        bool rtcp = rtp_is_rtcp(r->rbuf, len);
        if (r->srtp.enabled && !srtp_in(a, r->rbuf, &len, rtcp, peer)) continue;
        if (rtcp) {
            /* our own reports looped back by a multicast group we send to and joined */
            if (len >= 8 && xg_load_be32(r->rbuf + 4) == r->ssrc) continue;
            if ((r->rbuf[0] >> 6) != RTP_VERSION) {
                rtpa_bad_input(a, peer, R_VERSION, "RTCP version %u (must be 2)", r->rbuf[0] >> 6);
                continue;
            }
            handle_rtcp(a, r->rbuf, len, (struct sockaddr *)&ss, sl, peer);
        } else {
            handle_rtp(a, r->rbuf, len, (struct sockaddr *)&ss, sl, peer, now);
        }
    }
    (void)what;
}

void rtpa_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    struct xg_adapter *a = arg;
    struct rtpa *r = a->priv;
    int64_t now = xg_clock_mono_ns();
    for (struct rtpa_ssrc *s = r->ssrcs, *nx; s; s = nx) {
        nx = s->next;
        obj_sweep(a, s);
        if (now - s->last_ns > r->ssrc_timeout_ms * XG_NS_PER_MS) {
            char peer[64];
            XG_INFO_PEER(&r->lim_ssrc, a->name,
                         "SSRC %08x (%s) silent for %lld ms: its %zu object(s) are removed",
                         s->ssrc, xg_net_addr_str((struct sockaddr *)&s->from, peer, sizeof peer),
                         (long long)r->ssrc_timeout_ms, s->n_objs);
            r->ssrc_timeouts++;
            rtpa_ssrc_forget(a, s, true);
        }
    }
}
