/* `mcap-replay` ingress (mcap_replay.h). */
#include "adapters/mcap/mcap_replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/mcap/mcap_cdr.h"
#include "adapters/mcap/mcap_reader.h"
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "core/net/timer.h"
#include "mappings/frame.h"

#define MAX_PER_TICK 20000 /* messages played per timer callback before the loop runs again */

struct replay_ent {
    char name[XG_NAME_MAX]; /* the recorded name: the entity's source name */
    enum xg_kind kind;
    uint32_t id; /* table id, 0 = not created (or expired) */
    int parent;  /* index of the parent entity, -1 = none */
    uint32_t linked_id, linked_parent;
    bool has_world; /* /tf: world pose (wire frame) known, usable as a parent */
    struct xg_vec3 p;
    struct xg_quat q;
};

struct mcap_replay_state {
    struct mcap_reader r;
    bool lossless;                /* play the Sample channel, else /tf */
    uint64_t first_log, last_log; /* log times of the played channels in the file */
    uint64_t win_start, win_end;  /* the window's log times (win_end 0 = to the end) */
    struct xg_timer *timer;
    int64_t t0_ns; /* gateway time of win_start in this loop */
    bool pending;  /* a message read but not played yet */
    const struct mcap_channel_info *pch;
    struct mcap_msg pm;
    uint64_t last_played; /* log time of the last message played */
    struct replay_ent *ent;
    int n_ent, cap_ent;
    uint64_t played, loops, errors;
    bool done, failed;
    struct xg_log_limit lim;
    struct mcap_sample smp;
    struct mcap_tf tf;
};

static bool plays(const struct mcap_replay_state *s, const struct mcap_channel_info *c)
{
    if (strcmp(c->message_encoding, "cdr")) return false;
    if (s->lossless) return !strcmp(c->schema_name, MCAP_SAMPLE_SCHEMA);
    return !strcmp(c->topic, MCAP_TF_TOPIC) && !strcmp(c->schema_name, MCAP_TF_SCHEMA);
}

/* Read the whole file once: it is valid, it has something to play, and its time range. */
static int prescan(struct mcap_replay *p, struct xg_error *err)
{
    struct mcap_replay_state *s = p->st;
    const struct mcap_channel_info *c;
    struct mcap_msg m;
    int rc;
    while ((rc = mcap_reader_next(&s->r, &c, &m, err)) == 1) {}
    if (rc < 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return xg_error_set(err, rc, "'%s': %s", p->path, msg);
    }
    for (int i = 0; i < s->r.n_ch; i++)
        if (s->r.ch[i].messages && !strcmp(s->r.ch[i].schema_name, MCAP_SAMPLE_SCHEMA) &&
            !strcmp(s->r.ch[i].message_encoding, "cdr"))
            s->lossless = true;
    uint64_t n = 0;
    for (int i = 0; i < s->r.n_ch; i++) {
        c = &s->r.ch[i];
        if (!plays(s, c) || !c->messages) continue;
        if (!n || c->first_log < s->first_log) s->first_log = c->first_log;
        if (!n || c->last_log > s->last_log) s->last_log = c->last_log;
        n += c->messages;
    }
    if (!n)
        return xg_error_set(err, -EINVAL,
                            "'%s': no messages to replay: the file needs a channel "
                            "%s (%s, cdr) or %s (%s, cdr)",
                            p->path, MCAP_SAMPLE_TOPIC, MCAP_SAMPLE_SCHEMA, MCAP_TF_TOPIC,
                            MCAP_TF_SCHEMA);
    s->win_start = s->first_log + (uint64_t)llround(p->start_s * 1e9);
    s->win_end = p->end_s > 0 ? s->first_log + (uint64_t)llround(p->end_s * 1e9) : 0;
    if (s->win_start > s->last_log)
        return xg_error_set(err, -EINVAL, "'%s': start_s %g is past the last message (%.3f s)",
                            p->path, p->start_s, (double)(s->last_log - s->first_log) * 1e-9);
    mcap_reader_rewind(&s->r);
    return 0;
}

static int rep_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct mcap_replay *p = calloc(1, sizeof *p);
    if (!p) return -ENOMEM;
    a->priv = p;
    int rc = mcap_replay_read_conf(p, conf, err);
    if (rc) return rc;
    if (!(p->st = calloc(1, sizeof *p->st))) return -ENOMEM;
    if (!(rc = mcap_reader_open(&p->st->r, p->path, err))) rc = prescan(p, err);
    if (rc && rc != -ENOMEM) { /* at the `file` key: file:line:col */
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return xg_conf_error(err, xg_conf_get(conf, "file"), rc, "file %s", msg);
    }
    return rc;
}

static int find_ent(struct mcap_replay_state *s, const char *name, bool add)
{
    for (int i = 0; i < s->n_ent; i++)
        if (!strcmp(s->ent[i].name, name)) return i;
    if (!add) return -1;
    if (s->n_ent == s->cap_ent) {
        int cap = s->cap_ent ? s->cap_ent * 2 : 64;
        struct replay_ent *e = realloc(s->ent, (size_t)cap * sizeof *e);
        if (!e) return -1;
        s->ent = e;
        s->cap_ent = cap;
    }
    struct replay_ent *e = &s->ent[s->n_ent];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->parent = -1;
    return s->n_ent++;
}

static void push(struct xg_adapter *a, struct replay_ent *e, const struct xg_sample *smp)
{
    struct mcap_replay_state *s = ((struct mcap_replay *)a->priv)->st;
    int rc = -ENOENT;
    if (e->id) rc = xg_table_push(a->table, e->id, smp);
    if (rc == -ENOENT) {
        struct xg_entity_key key = {.source = e->name, .kind = e->kind};
        rc = xg_table_update(a->table, a, &key, smp, &e->id);
    }
    if (rc == 0)
        a->samples_in++;
    else
        a->drops++;
    uint32_t pid = e->parent >= 0 ? s->ent[e->parent].id : 0;
    if (e->id && pid && (e->linked_id != e->id || e->linked_parent != pid) &&
        xg_table_set_parent(a->table, e->id, pid) == 0) {
        e->linked_id = e->id;
        e->linked_parent = pid;
    }
}

/* the gateway time of a file time (log or capture), on this loop's playback clock */
static int64_t gw_time(const struct mcap_replay *p, int64_t file_ns)
{
    const struct mcap_replay_state *s = p->st;
    return s->t0_ns + (int64_t)llround((double)(file_ns - (int64_t)s->win_start) / p->speed);
}

static void play_sample(struct xg_adapter *a, const struct mcap_msg *m, int64_t now)
{
    struct mcap_replay *p = a->priv;
    struct mcap_replay_state *s = p->st;
    struct mcap_sample *r = &s->smp;
    struct xg_error err = {0};
    if (mcap_cdr_sample_decode(m->data, m->len, r, &err)) {
        s->errors++;
        XG_WARN_PEER(&s->lim, a->name, "%s: message %u skipped: %s", p->path, m->sequence, err.msg);
        return;
    }
    int i = r->name[0] ? find_ent(s, r->name, true) : -1;
    if (i < 0) {
        s->errors++;
        return;
    }
    struct replay_ent *e = &s->ent[i];
    if (xg_kind_parse(r->kind, &e->kind)) e->kind = XG_KIND_RIGID_BODY;
    e->parent = r->parent[0] ? find_ent(s, r->parent, false) : -1;
    int64_t cap = gw_time(p, r->capture_time);
    struct xg_sample smp = {
        .capture_ns = cap < now ? cap : now,
        .receive_ns = now,
        .flags = r->flags & (XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY | XG_SAMPLE_ANGULAR_VELOCITY |
                             XG_SAMPLE_SCALE | XG_SAMPLE_INACTIVE),
        .position = {r->position[0], r->position[1], r->position[2]},
        .orientation = {r->orientation[0], r->orientation[1], r->orientation[2], r->orientation[3]},
        .velocity = {r->velocity[0] * p->speed, r->velocity[1] * p->speed,
                     r->velocity[2] * p->speed},
        .angular_velocity = {r->angular_velocity[0] * p->speed, r->angular_velocity[1] * p->speed,
                             r->angular_velocity[2] * p->speed},
        .scale = {r->scale[0], r->scale[1], r->scale[2]},
    };
    if (!(smp.flags & XG_SAMPLE_POSE)) smp.flags |= XG_SAMPLE_POSE; /* a controls-only entity */
    push(a, e, &smp);
    if (!e->id) return;
    for (uint32_t k = 0; k < r->n_buttons; k++)
        xg_table_set_button(a->table, e->id, (int)k, r->buttons[k] != 0);
    for (uint32_t k = 0; k < r->n_analogs; k++)
        xg_table_set_analog(a->table, e->id, (int)k, r->analogs[k]);
}

static void play_tf(struct xg_adapter *a, const struct mcap_msg *m, int64_t now)
{
    struct mcap_replay *p = a->priv;
    struct mcap_replay_state *s = p->st;
    struct mcap_tf *t = &s->tf;
    uint32_t count = 1;
    for (uint32_t k = 0; k < count; k++) {
        struct xg_error err = {0};
        int rc = mcap_cdr_tf_decode(m->data, m->len, k, &count, t, &err);
        if (rc == -ENOENT) break;
        if (rc) {
            s->errors++;
            XG_WARN_PEER(&s->lim, a->name, "%s: /tf message %u skipped: %s", p->path, m->sequence,
                         err.msg);
            return;
        }
        if (!t->child_frame_id[0]) continue;
        int i = find_ent(s, t->child_frame_id, true);
        if (i < 0) return;
        int par = find_ent(s, t->frame_id, false);
        struct replay_ent *e = &s->ent[i];
        struct xg_vec3 pos = {t->t[0], t->t[1], t->t[2]};
        struct xg_quat q = {t->q[0], t->q[1], t->q[2], t->q[3]};
        if (par >= 0 && par != i && s->ent[par].has_world) { /* compose along the tree */
            pos = xg_vec3_add(s->ent[par].p, xg_quat_rotate(s->ent[par].q, pos));
            q = xg_quat_mul(s->ent[par].q, q);
            e->parent = par;
        } else {
            e->parent = -1;
        }
        e->p = pos;
        e->q = q;
        e->has_world = true;
        /* the log time on the playback clock: messages played in one tick keep their spacing */
        int64_t cap = gw_time(p, (int64_t)m->log_time);
        struct xg_sample smp = {.capture_ns = cap < now ? cap : now,
                                .receive_ns = now,
                                .flags = XG_SAMPLE_POSE,
                                .position = pos,
                                .orientation = q};
        xg_frame_sample_in(a->frame, &smp);
        push(a, e, &smp);
    }
}

static void schedule(struct mcap_replay_state *s, int64_t delay)
{
    if (delay < 0) delay = 0;
    xg_timer_once(s->timer, (uint64_t)delay / 1000);
}

/* The end of the file or of the window: loop or stop. Returns true when playback goes on. */
static bool at_end(struct xg_adapter *a, int64_t now)
{
    struct mcap_replay *p = a->priv;
    struct mcap_replay_state *s = p->st;
    if (!p->loop || !s->played) {
        s->done = true;
        XG_INFO(a->name, "%s: finished (%llu messages played)", p->path,
                (unsigned long long)s->played);
        return false;
    }
    mcap_reader_rewind(&s->r);
    s->loops++;
    s->t0_ns = now;
    s->pending = false;
    for (int i = 0; i < s->n_ent; i++)
        if (s->ent[i].id) xg_table_forget_history(a->table, s->ent[i].id);
    return true;
}

static void rep_tick(void *arg)
{
    struct xg_adapter *a = arg;
    struct mcap_replay *p = a->priv;
    struct mcap_replay_state *s = p->st;
    if (s->done) return;
    int64_t now = xg_clock_mono_ns();
    for (int n = 0; n < MAX_PER_TICK; n++) {
        if (!s->pending) {
            struct xg_error err = {0};
            int rc = mcap_reader_next(&s->r, &s->pch, &s->pm, &err);
            if (rc < 0) { /* the file changed since it was checked */
                XG_WARN(a->name, "%s: %s; playback stopped", p->path, err.msg);
                s->done = s->failed = true;
                return;
            }
            if (rc == 0 || (s->win_end && rc == 1 && s->pm.log_time > s->win_end)) {
                if (!at_end(a, now)) return;
                continue;
            }
            if (!plays(s, s->pch) || s->pm.log_time < s->win_start) continue;
            s->pending = true;
        }
        int64_t due = gw_time(p, (int64_t)s->pm.log_time);
        if (due > now) {
            schedule(s, due - now);
            return;
        }
        s->pending = false;
        if (s->lossless)
            play_sample(a, &s->pm, now);
        else
            play_tf(a, &s->pm, now);
        s->played++;
        s->last_played = s->pm.log_time;
    }
    schedule(s, 0); /* more are due: let the loop run first */
}

static int rep_start(struct xg_adapter *a)
{
    struct mcap_replay *p = a->priv;
    struct mcap_replay_state *s = p->st;
    s->timer = xg_timer_new(a->base, rep_tick, a);
    if (!s->timer) return -ENOMEM;
    s->t0_ns = xg_clock_mono_ns();
    XG_INFO(a->name, "replaying %s: %s, %.3f s from %.3f s, x%g, %s", p->path,
            s->lossless ? MCAP_SAMPLE_TOPIC " (lossless)" : MCAP_TF_TOPIC,
            (double)((s->win_end ? s->win_end : s->last_log) - s->win_start) * 1e-9, p->start_s,
            p->speed, p->loop ? "looping" : "once");
    schedule(s, 0); /* the first messages once every adapter has started (a recorder too) */
    return 0;
}

static void rep_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct mcap_replay *p = a->priv;
    const struct mcap_replay_state *s = p->st;
    st->state = s->failed ? "error" : s->done ? "done" : s->timer ? "playing" : "idle";
    size_t len = strlen(p->path);
    if (len < sizeof st->peer)
        memcpy(st->peer, p->path, len + 1);
    else
        snprintf(st->peer, sizeof st->peer, "...%s", p->path + len - (sizeof st->peer - 4));
    xg_status_counter(st, "messages_played", (double)s->played);
    xg_status_counter(st, "loops", (double)s->loops);
    xg_status_counter(st, "decode_errors", (double)s->errors);
    xg_status_gauge(st, "entities", (double)s->n_ent);
    xg_status_gauge(st, "position_s",
                    s->last_played > s->first_log ? (double)(s->last_played - s->first_log) * 1e-9
                                                  : 0.0);
    xg_status_gauge(st, "duration_s", (double)(s->last_log - s->first_log) * 1e-9);
}

static void rep_stop(struct xg_adapter *a)
{
    struct mcap_replay *p = a->priv;
    if (p && p->st && p->st->timer) {
        xg_timer_free(p->st->timer);
        p->st->timer = NULL;
    }
}

static void rep_destroy(struct xg_adapter *a)
{
    struct mcap_replay *p = a->priv;
    if (!p) return;
    rep_stop(a);
    if (p->st) {
        mcap_reader_close(&p->st->r);
        free(p->st->ent);
        free(p->st);
    }
    free(p);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_mcap_replay_ops = {
    .type = "mcap-replay",
    .is_sink = false,
    .default_frame = "ros", /* of /tf; the lossless channel is in the internal frame */
    .create = rep_create,
    .start = rep_start,
    .status = rep_status,
    .stop = rep_stop,
    .destroy = rep_destroy,
};
