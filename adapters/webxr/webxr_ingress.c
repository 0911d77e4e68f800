/* The webxr adapter's frames into the entity table, and the page clock -> gateway clock offset
 * (webxr_priv.h; docs/adapters/webxr.md "Names" and "Capture time"). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "adapters/webxr/webxr_priv.h"
#include "core/table/names.h"
#include "mappings/frame.h"

bool webxr_clock_pong(struct webxr_clock *c, uint32_t seq, double page_ms, int64_t now_ns)
{
    unsigned slot = seq & 7u;
    if (c->sent_seq[slot] != seq || !c->sent_ns[slot] || now_ns < c->sent_ns[slot]) return false;
    int64_t sent = c->sent_ns[slot];
    c->sent_ns[slot] = 0; /* one pong per ping */
    int64_t rtt = now_ns - sent;
    /* the page read its clock at about the middle of the round trip */
    int64_t off = sent + rtt / 2 - (int64_t)llround(page_ms * 1e6);
    c->rtt_ns[c->next] = rtt;
    c->off_ns[c->next] = off;
    c->next = (c->next + 1) % WEBXR_PONGS;
    if (c->n < WEBXR_PONGS) c->n++;
    unsigned best = 0;
    for (unsigned i = 1; i < c->n; i++)
        if (c->rtt_ns[i] < c->rtt_ns[best]) best = i;
    c->offset_ns = c->off_ns[best];
    c->best_rtt_ns = c->rtt_ns[best] > 0 ? c->rtt_ns[best] : 1;
    return true;
}

int64_t webxr_clock_map(struct xg_adapter *a, struct webxr_clock *c, double page_ms,
                        int64_t receive_ns, const char *peer)
{
    int64_t page_ns = (int64_t)llround(page_ms * 1e6);
    if (!c->best_rtt_ns) return xg_adapter_map_time(a, &c->fallback, page_ns, receive_ns, peer);
    int64_t t = page_ns + c->offset_ns;
    return t > receive_ns ? receive_ns : t;
}

static struct xg_sample pose_sample(const struct xg_adapter *a, const struct webxr_pose *p,
                                    int64_t capture_ns, int64_t receive_ns)
{
    struct xg_sample s;
    memset(&s, 0, sizeof s);
    s.capture_ns = capture_ns;
    s.receive_ns = receive_ns;
    s.flags = XG_SAMPLE_POSE;
    s.position = xg_frame_pos_in(a->frame, (struct xg_vec3){p->p[0], p->p[1], p->p[2]});
    s.orientation = xg_frame_rot_in(a->frame, (struct xg_quat){p->q[0], p->q[1], p->q[2], p->q[3]});
    return s;
}

/* Update one entity; its id in *id (kept across frames). 1 when pushed. */
static int put(struct xg_adapter *a, const char *name, enum xg_kind kind, const struct xg_sample *s,
               uint32_t *id)
{
    struct xg_entity_key key = {.source = name, .kind = kind, .sensor = -1};
    uint32_t got = 0;
    int rc = xg_table_update(a->table, a, &key, s, &got);
    if (rc) {
        if (rc != -EAGAIN) a->drops++;
        return 0;
    }
    *id = got;
    return 1;
}

static const char *const side_name[3] = {"none", "left", "right"};

int webxr_ingest(struct xg_adapter *a, const char *session, struct webxr_ids *ids,
                 const struct webxr_frame *f, int64_t capture_ns, int64_t receive_ns)
{
    char name[XG_NAME_MAX];
    int pushed = 0;
    if (f->has_viewer) {
        struct xg_sample s = pose_sample(a, &f->viewer, capture_ns, receive_ns);
        xg_name_fitf(name, sizeof name, "%s/head", session);
        pushed += put(a, name, XG_KIND_HEAD, &s, &ids->head);
    }
    for (int i = 0; i < f->n_sources; i++) {
        const struct webxr_source *src = &f->sources[i];
        int h = src->handedness;
        if (src->has_hand) {
            /* joints first, parents after every joint of this hand has an id */
            for (int j = 0; j < WEBXR_JOINTS; j++) {
                if (!src->joints[j].valid) continue;
                struct xg_sample s = pose_sample(a, &src->joints[j].pose, capture_ns, receive_ns);
                xg_name_fitf(name, sizeof name, "%s/%s_hand/%s", session, side_name[h],
                             webxr_joint_names[j]);
                enum xg_kind kind = j        ? XG_KIND_JOINT
                                    : h == 1 ? XG_KIND_LEFT_HAND
                                    : h == 2 ? XG_KIND_RIGHT_HAND
                                             : XG_KIND_JOINT;
                pushed += put(a, name, kind, &s, &ids->joint[h][j]);
            }
            for (int j = 1; j < WEBXR_JOINTS; j++) {
                uint32_t id = ids->joint[h][j], parent = ids->joint[h][webxr_joint_parent[j]];
                if (!id || !parent || ids->parent_set[h][j] == id) continue;
                if (!xg_table_set_parent(a->table, id, parent)) ids->parent_set[h][j] = id;
            }
            continue; /* a tracked hand is reported as its joints, not as a controller */
        }
        if (!src->has_grip) continue;
        struct xg_sample s = pose_sample(a, &src->grip, capture_ns, receive_ns);
        xg_name_fitf(name, sizeof name, "%s/%s_controller", session, side_name[h]);
        if (!put(a, name, XG_KIND_CONTROLLER, &s, &ids->controller[h])) continue;
        pushed++;
        uint32_t id = ids->controller[h];
        for (int b = 0; b < src->n_buttons; b++) {
            xg_table_set_button(a->table, id, b, src->pressed[b]);
            xg_table_set_analog(a->table, id, b, src->value[b]);
        }
        for (int x = 0; x < src->n_axes; x++)
            xg_table_set_analog(a->table, id, WEBXR_AXIS_ANALOG(x), src->axes[x]);
    }
    a->samples_in += (uint64_t)pushed;
    return pushed;
}
