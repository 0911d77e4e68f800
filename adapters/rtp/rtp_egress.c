/* `rtp` adapter egress encoding (rtp_adapter.h): one entity's pose, buttons and analogs as game
 * state objects (draft-jennings-dispatch-game-state-over-rtp-01 §3), in the wire frame already.
 * Pure: rtp_adapter.c looks the object id up, packs the objects into packets and sends them. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp_adapter.h"
#include "adapters/rtp/rtp_oids.h"
#include "core/table/entity.h"
#include "core/util/xmath.h"

static void fill_loc2(struct rtp_gs_loc2 *l, const struct xg_pose *p)
{
    l->p[0] = (float)p->position.x;
    l->p[1] = (float)p->position.y;
    l->p[2] = (float)p->position.z;
    /* v is binary16 on the wire (overflow -> Inf, wire-rules §5.1): a finite velocity in a
     * frame with a small scale can exceed 65504, so it is saturated to the largest half */
    struct xg_vec3 v = xg_vec3_clamp(p->velocity, 65504.0);
    l->v[0] = (float)v.x;
    l->v[1] = (float)v.y;
    l->v[2] = (float)v.z;
}

/* Rot2 (draft §3.5): s = now, e = exp(ω·1 s) ⊗ s with |ω| clamped below π rad/s. */
static void fill_rot2(struct rtp_gs_rot2 *rot, const struct xg_pose *p)
{
    struct xg_vec3 w = p->angular_velocity;
    double n = xg_vec3_norm(w);
    if (!(n <= RTPA_MAX_RATE))
        w = n > 0 && isfinite(n) ? xg_vec3_scale(w, RTPA_MAX_RATE / n) : XG_VEC3_ZERO;
    struct xg_quat s = xg_quat_normalize(p->orientation);
    struct xg_quat e = xg_quat_integrate(s, w, 1.0);
    rtp_gs_ijk_from_quat(s, rot->s);
    rtp_gs_ijk_from_quat(e, rot->e);
}

void rtpa_object_from_pose(struct rtp_gs_object *o, enum rtp_gs_type type, uint64_t oid,
                           uint16_t time1, bool left, const struct xg_pose *p)
{
    memset(o, 0, sizeof *o);
    o->type = type;
    switch (o->type) {
    case RTP_GS_HEAD1:
        o->u.head1.object_id = oid;
        o->u.head1.time = time1;
        fill_loc2(&o->u.head1.loc, p);
        fill_rot2(&o->u.head1.rot, p);
        break;
    case RTP_GS_HAND1:
        o->u.hand1.object_id = oid;
        o->u.hand1.time = time1;
        o->u.hand1.left = left;
        fill_loc2(&o->u.hand1.loc, p);
        fill_rot2(&o->u.hand1.rot, p);
        break;
    case RTP_GS_HAND2:
        o->u.hand2.object_id = oid;
        o->u.hand2.time = time1;
        o->u.hand2.left = left;
        fill_loc2(&o->u.hand2.loc, p);
        fill_rot2(&o->u.hand2.rot, p);
        break; /* joints: zero (no finger data in the table) */
    case RTP_GS_OBJECT1: {
        struct rtp_gs_object1 *b = &o->u.object1;
        b->object_id = oid;
        b->time = time1;
        b->loc[0] = (float)p->position.x;
        b->loc[1] = (float)p->position.y;
        b->loc[2] = (float)p->position.z;
        rtp_gs_ijk_from_quat(xg_quat_normalize(p->orientation), b->rot);
        b->scale = (float)((p->scale.x + p->scale.y + p->scale.z) / 3.0);
        b->active = p->active && p->quality != XG_QUALITY_STALE;
        break;
    }
    case RTP_GS_SIXDOF1:
        o->u.sixdof1.object_id = oid;
        o->u.sixdof1.time = time1;
        o->u.sixdof1.left = left;
        fill_loc2(&o->u.sixdof1.loc, p);
        fill_rot2(&o->u.sixdof1.rot, p);
        break;
    case RTP_GS_THREEDOF1:
        o->u.threedof1.object_id = oid;
        o->u.threedof1.time = time1;
        o->u.threedof1.left = left;
        fill_rot2(&o->u.threedof1.rot, p);
        break;
    default: {
        struct rtp_gs_object2 *b = &o->u.object2;
        o->type = RTP_GS_OBJECT2;
        b->object_id = oid;
        b->time = time1;
        fill_loc2(&b->loc, p);
        fill_rot2(&b->rot, p);
        b->scale.p[0] = (float)p->scale.x;
        b->scale.p[1] = (float)p->scale.y;
        b->scale.p[2] = (float)p->scale.z;
        b->active = p->active && p->quality != XG_QUALITY_STALE;
        break;
    }
    }
    o->tag = rtp_gs_type_tag(o->type);
}

void rtpa_game_control(struct rtp_gs_object *o, const struct xg_entity *e, struct rtp_oid *od,
                       uint16_t time1)
{
    /* buttons (indices 0..19 = draft bits 1..20, D6) and analogs 0..3 (left x/y, right
     * x/y) as a GameControl1 with the same object ID */
    struct rtp_gs_game_control1 *g = &o->u.game_control1;
    memset(o, 0, sizeof *o);
    o->type = RTP_GS_GAME_CONTROL1;
    o->tag = rtp_gs_type_tag(o->type);
    g->object_id = od->oid;
    g->time = time1;
    const uint8_t *buttons;
    const double *analogs;
    int nb = xg_entity_buttons(e, &buttons), na = xg_entity_analogs(e, &analogs);
    for (int i = 0; i < nb && i < 20; i++)
        if (buttons[i]) g->buttons |= INT64_C(1) << i;
    if (!od->sent_buttons || od->buttons != g->buttons) {
        od->buttons = g->buttons;
        od->buttons_changed = time1;
        od->sent_buttons = true;
    }
    g->buttons_changed = od->buttons_changed;
    float *sticks[4] = {&g->left_x, &g->left_y, &g->right_x, &g->right_y};
    for (int i = 0; i < 4 && i < na; i++) {
        double v = analogs[i];
        *sticks[i] = (float)(v < -1 ? -1 : v > 1 ? 1 : v);
    }
}
