/* RTP game-state adapter, ingress glue: datagrams read from the socket (SRTP unprotected first)
 * go to the session (rtp_session.h: SSRC table, sequence accounting, RTCP, FIR answers), whose
 * decoded objects become entity samples here (object ids, capture times from Time1). Split from
 * rtp_adapter.c (which keeps egress and the life cycle; configuration is rtp_conf.c); the shared
 * state is struct rtpa in rtp_adapter.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/transport.h"
#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtcp_out.h"
#include "adapters/rtp/rtp_adapter.h"
#include "adapters/rtp/rtp.h"
#include "adapters/rtp/rtp_oids.h"
#include "adapters/rtp/srtp_session.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/net.h"
#include "mappings/frame.h"

/* ---- ingress ---- */

void rtpa_ssrc_forget(void *user, struct rtp_sess_ssrc *s, bool remove_entities)
{
    struct xg_adapter *a = user;
    struct rtpa *r = a->priv;
    for (struct rtpa_obj *o = s->objs, *nx; o; o = nx) {
        nx = o->next;
        if (remove_entities && o->id) xg_table_remove(a->table, o->id);
        free(o);
    }
    r->n_objs -= s->n_objs;
    s->objs = NULL;
    s->n_objs = 0;
}

static struct rtpa_obj *obj_get(struct rtpa *r, struct rtp_sess_ssrc *s, uint64_t tag, uint64_t oid)
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
void rtpa_obj_sweep(void *user, struct rtp_sess_ssrc *s)
{
    struct xg_adapter *a = user;
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
 * §6), converted to the gateway clock, then through the SSRC's offset estimate (core/net/net.h), so
 * a sender whose clock is off still gets consistent capture times, never after receipt. */
static int64_t time1_capture(struct xg_adapter *a, struct rtp_sess_ssrc *s, uint16_t time1,
                             int64_t recv_ns, int64_t wall_ns, const char *peer)
{
    int64_t t = xg_clock_wall_to_mono_ns(xg_ms16_to_ns(time1, wall_ns));
    return xg_adapter_map_time(a, &s->tmap, t, recv_ns, peer);
}

/* GameControl1: buttons (bit n-1 → button n-1, D6) and sticks (analogs 0..3) go to the entity of
 * a pose object with the same object ID from the same SSRC when there is one (a controller's
 * SixDOF1), else to an entity <ssrc>/GameControl1-<id> of kind controller, reported inactive
 * at the origin (it has no pose). */
static void apply_game_control(struct xg_adapter *a, struct rtp_sess_ssrc *s,
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
        struct xg_sample smp = {.capture_ns = time1_capture(a, s, g->time, recv_ns, wall_ns, peer),
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

void rtpa_object(void *user, struct rtp_sess_ssrc *s, const struct rtp_gs_object *o,
                 int64_t recv_ns, int64_t wall_ns, const char *peer)
{
    struct xg_adapter *a = user;
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
        r->sess.ignored_objects++;
        return;
    }
    if (!ok) {
        rtpa_bad_input(a, peer, R_VALUE,
                       "SSRC %08x %s object %llu: rotation vector part is not unit", s->ssrc,
                       rtp_gs_type_name(o->type), (unsigned long long)oid);
        return;
    }
    /* Time1: wall-clock ms mod 65536, unwrapped against our wall clock, never after receipt */
    smp.capture_ns = has_time ? time1_capture(a, s, time1, recv_ns, wall_ns, peer) : recv_ns;
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

/* SRTP ingress, after the RTP/RTCP demux: a packet carrying our own SSRC (multicast loopback)
 * is ignored before anything else; every other one is unprotected in place with the receive
 * session. Returns true when buf[0..*len) now holds an authentic plain packet; false when it is
 * to be dropped (auth / replay / malformed counted through rtpa_bad_input). */
static bool srtp_in(struct xg_adapter *a, uint8_t *buf, size_t *len, bool rtcp,
                    const struct sockaddr *from, socklen_t from_len, const char *peer)
{
    struct rtpa *r = a->priv;
    size_t at = rtcp ? 4 : 8; /* RTCP: the first packet's sender SSRC; RTP: the header's SSRC */
    bool ours = *len >= at + 4 && xg_load_be32(buf + at) == r->sess.ssrc;
    if (ours && rtpa_is_own(a, from, from_len)) return false;
    struct xg_error err = {0};
    int rc = !r->srtp_rx ? xg_error_set(&err, -EINVAL, "SRTP: no receive session")
             : rtcp      ? xg_srtp_unprotect_rtcp(r->srtp_rx, buf, len, &err)
                         : xg_srtp_unprotect(r->srtp_rx, buf, len, &err);
    if (rc == 0) return true;
    if (ours && (rc == XG_SRTP_EAUTH || rc == XG_SRTP_EREPLAY || rc == XG_SRTP_EMALFORMED)) {
        /* our SSRC under our own key, relayed back by a third party: our own traffic, not the
         * peer's bad input (a peer that really uses our SSRC authenticates: rtp_session.h) */
        r->sess.loops++;
        return false;
    }
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

/* One packet (core/net/udp_endpoint.h reads them while the budget lasts: objects and bytes; the
 * rest waits for the next pass of the loop). Its cost: the objects it held. */
static int rx_packet(void *arg, uint8_t *p, size_t n, const struct sockaddr *from, socklen_t sl)
{
    struct xg_adapter *a = arg;
    struct rtpa *r = a->priv;
    int64_t now = xg_clock_mono_ns();
    char peer[64];
    xg_net_addr_str(from, peer, sizeof peer);
    size_t len = n;
    bool rtcp = rtp_is_rtcp(p, len);
    if (r->srtp.enabled && !srtp_in(a, p, &len, rtcp, from, sl, peer)) return 1;
    uint64_t work = r->objects_in + r->sess.ignored_objects + a->drops;
    rtp_session_receive(&r->sess, p, len, rtcp, from, sl, peer, now);
    return (int)(r->objects_in + r->sess.ignored_objects + a->drops - work);
}

/* A read failed: ICMP errors keep the socket readable until their queue is read. */
static void rx_error(void *arg, int fd, int err)
{
    (void)err;
    xg_udp_icmp_drain(fd, rtpa_icmp_cb, arg);
}

/* End of a wake-up: a FIR/PLI may have set the coalesced full state's deadline. */
static void rx_done(void *arg)
{
    rtpa_arm(arg);
}

int rtpa_rx_start(struct xg_adapter *a, struct xg_udp_rx *rx, int fd)
{
    struct rtpa *r = a->priv;
    rx->on_err = rx_error;
    rx->on_done = rx_done;
    return xg_udp_rx_start(rx, a->base, fd, 65536, rx_packet, a, &r->budget);
}

/* Our own socket sends from (a local address, the bound port): a packet carrying our SSRC from
 * there is ours looped back (multicast), not a collision. Whether an address is local is asked
 * of the kernel once (a UDP socket bound to it, port 0) and remembered for the last few. */
bool rtpa_is_own(void *user, const struct sockaddr *from, socklen_t len)
{
    struct xg_adapter *a = user;
    struct rtpa *r = a->priv;
    if (xg_net_addr_port(from) != r->bound_port || len > sizeof(struct sockaddr_storage))
        return false;
    for (int i = 0; i < r->n_local; i++)
        if (xg_net_addr_equal((const struct sockaddr *)&r->local[i].ss, from))
            return r->local[i].local;
    bool local = xg_udp_addr_is_local(from, len);
    int i = r->local_next;
    r->local_next = (r->local_next + 1) % RTPA_LOCAL_CACHE;
    if (r->n_local < RTPA_LOCAL_CACHE) r->n_local++;
    memset(&r->local[i].ss, 0, sizeof r->local[i].ss);
    memcpy(&r->local[i].ss, from, len);
    r->local[i].local = local;
    return local;
}
