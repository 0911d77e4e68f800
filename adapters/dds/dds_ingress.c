/* `dds` adapter ingress: ROS 2 /tf (tf2_msgs/TFMessage on "rt/tf") and listed
 * geometry_msgs/PoseStamped topics into the entity table.
 *
 * Entities: one per TF child frame (source = child_frame_id without a leading '/'), one per
 * listed PoseStamped topic (source = the topic name without the leading '/'). A transform whose
 * parent (header.frame_id) is world_frame is the child's world pose; one whose parent is a frame
 * received before (directly or through a chain) is composed with that frame's pose; any other is
 * dropped and counted (tf_unresolved). A PoseStamped's header.frame_id is resolved the same way,
 * an empty one meaning world_frame. Capture time: header.stamp (the sender's clock, ROS time)
 * mapped to the gateway clock per publication (core/clock.h); a zero stamp means "now" (receive
 * time). Split horizon: samples of our own writers (publication handle) are skipped and counted
 * (own_samples_skipped). Bad input (nanosec >= 1e9, an empty child_frame_id, values that are not
 * a pose) drops the transform with one rate-limited line naming the writer, field and value. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/transport.h"
#include "adapters/dds/dds_adapter.h"
#include "core/clock.h"
#include "core/names.h"
#include "geometry_msgs/msg/PoseStamped.h"
#include "tf2_msgs/msg/TFMessage.h"

/* ---- hand-off from Cyclone's threads ---- */

static void on_data_available(dds_entity_t reader, void *arg)
{
    struct dds *d = arg;
    if (!atomic_exchange(&d->signalled, true)) {
        char b = 1;
        if (write(d->pipe_w, &b, 1) < 0) {
            /* EAGAIN: a wake-up byte is already waiting, which is all that is needed */
        }
    }
}

/* "writer 0110f2a3:...:00000103 on rt/tf" for log lines. */
static void writer_name(dds_entity_t reader, dds_instance_handle_t pub, const char *topic,
                        char *buf, size_t size)
{
    dds_builtintopic_endpoint_t *ep = dds_get_matched_publication_data(reader, pub);
    if (!ep) {
        snprintf(buf, size, "writer %" PRIx64 " on %s", (uint64_t)pub, topic);
        return;
    }
    const uint8_t *g = ep->key.v;
    snprintf(buf, size,
             "writer %02x%02x%02x%02x:%02x%02x%02x%02x:%02x%02x%02x%02x:%02x%02x%02x%02x on %s",
             g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13],
             g[14], g[15], topic);
    dds_builtintopic_free_endpoint(ep);
}

/* ---- time ---- */

static struct xg_time_map *time_map(struct dds *d, dds_instance_handle_t pub, int64_t now)
{
    struct dds_tmap *oldest = &d->tmaps[0];
    for (int i = 0; i < DDS_TIME_MAPS; i++) {
        if (d->tmaps[i].pub == pub) {
            d->tmaps[i].used_ns = now;
            return &d->tmaps[i].map;
        }
        if (d->tmaps[i].used_ns < oldest->used_ns) oldest = &d->tmaps[i];
    }
    memset(oldest, 0, sizeof *oldest);
    oldest->pub = pub;
    oldest->used_ns = now;
    return &oldest->map;
}

/* ---- TF frames ---- */

static uint64_t hash_name(const char *s)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

static struct dds_known_frame *find_frame(struct dds *d, const char *name, uint64_t h)
{
    for (size_t i = 0; i < d->n_frames; i++)
        if (d->frames[i].hash == h && !strcmp(d->frames[i].name, name)) return &d->frames[i];
    return NULL;
}

/* One pose received (wire frame, relative to `parent`): resolve, remember, feed the table. */
struct in_ctx {
    struct xg_adapter *a;
    dds_entity_t reader;
    dds_instance_handle_t pub;
    const char *topic; /* DDS topic, for log lines */
    int64_t rx_ns;
    struct xg_time_map *tmap;
};

static void bad_input(struct in_ctx *c, const char *what, const char *fmt_field, double value)
{
    struct dds *d = c->a->priv;
    char w[200];
    d->bad_input++;
    c->a->errors++;
    writer_name(c->reader, c->pub, c->topic, w, sizeof w);
    XG_WARN_PEER(&d->lim_bad, c->a->name, "bad input from %s: %s: %s = %.17g; dropped", w, what,
                 fmt_field, value);
}

static const char *strip_slash(const char *s)
{
    return s && s[0] == '/' ? s + 1 : (s ? s : "");
}

static void pose_in(struct in_ctx *c, const char *source, const char *parent, int32_t sec,
                    uint32_t nanosec, struct xg_vec3 p, struct xg_quat q, bool remember)
{
    struct xg_adapter *a = c->a;
    struct dds *d = a->priv;
    int64_t stamp;
    if (dds_stamp_to_ns(sec, nanosec, &stamp)) {
        bad_input(c, source, "header.stamp.nanosec (must be below 1000000000)", nanosec);
        return;
    }
    struct xg_sample s = {.flags = XG_SAMPLE_POSE, .position = p, .orientation = q};
    const char *field;
    double value;
    if (xg_sample_check(&s, &field, &value)) {
        bad_input(c, source, field, value);
        return;
    }
    struct xg_vec3 wp = p;
    struct xg_quat wq = q;
    if (strcmp(parent, d->world_frame)) {
        struct dds_known_frame *pf = find_frame(d, parent, hash_name(parent));
        if (!pf) {
            char w[200];
            d->unresolved++;
            writer_name(c->reader, c->pub, c->topic, w, sizeof w);
            XG_INFO_PEER(&d->lim_unresolved, a->name,
                         "%s: '%s' is relative to frame '%s', which is neither world_frame '%s' "
                         "nor a frame received before; dropped",
                         w, source, parent, d->world_frame);
            return;
        }
        wp = xg_vec3_add(pf->p, xg_quat_rotate(pf->q, p));
        wq = xg_quat_normalize(xg_quat_mul(pf->q, q));
    }
    if (remember) {
        uint64_t h = hash_name(source);
        struct dds_known_frame *kf = find_frame(d, source, h);
        if (!kf && d->n_frames < DDS_MAX_FRAMES) {
            kf = &d->frames[d->n_frames++];
            kf->hash = h;
            snprintf(kf->name, sizeof kf->name, "%s", source);
        }
        if (kf) {
            kf->p = wp;
            kf->q = xg_quat_normalize(wq);
        } else {
            char w[200];
            d->frames_full++;
            writer_name(c->reader, c->pub, c->topic, w, sizeof w);
            XG_WARN_PEER(&d->lim_frames, a->name,
                         "%s: frame '%s' not remembered: %d TF frames known already; transforms "
                         "relative to it will be dropped",
                         w, source, DDS_MAX_FRAMES);
        }
    }
    s.position = wp;
    s.orientation = wq;
    s.receive_ns = c->rx_ns;
    s.capture_ns = stamp == 0 ? c->rx_ns : xg_time_map_update(c->tmap, stamp, c->rx_ns);
    xg_frame_sample_in(d->frame, &s);
    struct xg_entity_key key = {.source = source, .kind = XG_KIND_RIGID_BODY};
    /* the table counts what it refuses (dropped_backwards, rejected, refused: all in the
     * adapter's "drops" and "entities_refused" of /api/adapters) */
    int rc = xg_table_update(a->table, a, &key, &s, NULL);
    if (rc == 0)
        a->samples_in++;
    else if (rc == -ENOMEM)
        a->drops++;
}

static void tf_message_in(struct in_ctx *c, const tf2_msgs_msg_dds__TFMessage_ *m)
{
    struct dds *d = c->a->priv;
    for (uint32_t i = 0; i < m->transforms_._length; i++) {
        const struct geometry_msgs_msg_dds__TransformStamped_ *t = &m->transforms_._buffer[i];
        char child[XG_NAME_MAX];
        const char *raw = strip_slash(t->child_frame_id_);
        d->transforms_in++;
        if (!*raw) {
            char w[200];
            d->bad_input++;
            c->a->errors++;
            writer_name(c->reader, c->pub, c->topic, w, sizeof w);
            XG_WARN_PEER(&d->lim_bad, c->a->name,
                         "bad input from %s: transforms[%u].child_frame_id = \"\" (parent '%s'): "
                         "empty; dropped",
                         w, i, strip_slash(t->header_.frame_id_));
            continue;
        }
        xg_name_fit(child, sizeof child, raw, strlen(raw));
        if (!strcmp(child, d->world_frame)) continue; /* the world itself is no entity */
        const struct geometry_msgs_msg_dds__Transform_ *tr = &t->transform_;
        pose_in(c, child, strip_slash(t->header_.frame_id_), t->header_.stamp_.sec_,
                t->header_.stamp_.nanosec_,
                (struct xg_vec3){tr->translation_.x_, tr->translation_.y_, tr->translation_.z_},
                (struct xg_quat){tr->rotation_.x_, tr->rotation_.y_, tr->rotation_.z_,
                                 tr->rotation_.w_},
                true);
    }
}

/* Take everything from one reader (at most *budget samples). */
static void take_reader(struct xg_adapter *a, dds_entity_t reader, const struct dds_in_topic *in,
                        int *budget)
{
    struct dds *d = a->priv;
    void *buf[DDS_TAKE_BATCH];
    dds_sample_info_t info[DDS_TAKE_BATCH];
    dds_instance_handle_t own = in ? in->own_writer : d->tf_writer_ih;
    while (*budget > 0) {
        memset(buf, 0, sizeof buf);
        dds_return_t n = dds_take(reader, buf, info, DDS_TAKE_BATCH, DDS_TAKE_BATCH);
        if (n <= 0) return;
        *budget -= n;
        int64_t rx = xg_clock_mono_ns();
        for (int i = 0; i < n; i++) {
            if (!info[i].valid_data) continue;
            if (own && info[i].publication_handle == own) {
                d->own_skipped++;
                continue;
            }
            d->messages_in++;
            struct in_ctx c = {.a = a,
                               .reader = reader,
                               .pub = info[i].publication_handle,
                               .topic = in ? in->dds : "rt/tf",
                               .rx_ns = rx,
                               .tmap = time_map(d, info[i].publication_handle, rx)};
            if (!in) {
                tf_message_in(&c, buf[i]);
                continue;
            }
            const geometry_msgs_msg_dds__PoseStamped_ *m = buf[i];
            const struct geometry_msgs_msg_dds__Pose_ *p = &m->pose_;
            d->poses_in++;
            pose_in(&c, in->source,
                    strip_slash(m->header_.frame_id_)[0] ? strip_slash(m->header_.frame_id_)
                                                         : d->world_frame,
                    m->header_.stamp_.sec_, m->header_.stamp_.nanosec_,
                    (struct xg_vec3){p->position_.x_, p->position_.y_, p->position_.z_},
                    (struct xg_quat){p->orientation_.x_, p->orientation_.y_, p->orientation_.z_,
                                     p->orientation_.w_},
                    false);
        }
        dds_return_loan(reader, buf, n);
    }
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    struct xg_adapter *a = arg;
    struct dds *d = a->priv;
    char tmp[64];
    while (read(d->pipe_r, tmp, sizeof tmp) > 0) {}
    /* clear before taking: data that arrives from now on signals again */
    atomic_store(&d->signalled, false);
    d->wakeups++;
    int budget = DDS_TAKE_MAX_PER_WAKE;
    if (d->tf_reader > 0) take_reader(a, d->tf_reader, NULL, &budget);
    for (int i = 0; i < d->n_in && budget > 0; i++)
        if (d->in[i].reader > 0) take_reader(a, d->in[i].reader, &d->in[i], &budget);
    if (budget <= 0) event_active(d->ev, EV_READ, 0); /* more may be waiting: next loop pass */
}

int dds_ingress_start(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    if (!d->read_tf && !d->n_in) return 0;
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC)) {
        XG_ERR(a->name, "pipe: %s", strerror(errno));
        return -errno;
    }
    d->pipe_r = fds[0];
    d->pipe_w = fds[1];
    d->ev = event_new(a->base, d->pipe_r, EV_READ | EV_PERSIST, on_wake, a);
    if (!d->ev || event_add(d->ev, NULL)) return -ENOMEM;
    if (d->read_tf) {
        d->frames = calloc(DDS_MAX_FRAMES, sizeof *d->frames);
        if (!d->frames) return -ENOMEM;
    }
    d->listener = dds_create_listener(d);
    if (!d->listener) return -ENOMEM;
    dds_lset_data_available(d->listener, on_data_available);
    if (d->read_tf) {
        d->tf_reader = dds_create_reader(d->pp, d->tf_topic, d->rqos, d->listener);
        if (d->tf_reader < 0) {
            XG_ERR(a->name, "Cyclone DDS: creating the rt/tf reader failed: %s",
                   dds_strretcode(d->tf_reader));
            return -EIO;
        }
    }
    for (int i = 0; i < d->n_in; i++) {
        struct dds_in_topic *t = &d->in[i];
        t->topic =
            dds_create_topic(d->pp, &geometry_msgs_msg_dds__PoseStamped__desc, t->dds, NULL, NULL);
        if (t->topic > 0) t->reader = dds_create_reader(d->pp, t->topic, d->rqos, d->listener);
        if (t->topic <= 0 || t->reader <= 0) {
            XG_ERR(a->name, "Cyclone DDS: creating the reader of %s failed: %s", t->dds,
                   dds_strretcode(t->topic <= 0 ? t->topic : t->reader));
            return -EIO;
        }
    }
    /* samples that arrived before the listener was attached */
    event_active(d->ev, EV_READ, 0);
    return 0;
}

void dds_ingress_stop(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    if (d->ev) {
        event_free(d->ev);
        d->ev = NULL;
    }
    if (d->pipe_r >= 0) close(d->pipe_r);
    if (d->pipe_w >= 0) close(d->pipe_w);
    d->pipe_r = d->pipe_w = -1;
}

/* ---- one decoded TFMessage, outside the reader (tests/fuzz/fuzz_dds_ingress.c) ---- */

void dds_tf_message_in(struct xg_adapter *a, dds_instance_handle_t pub,
                       const struct tf2_msgs_msg_dds__TFMessage_ *m, int64_t rx_ns)
{
    struct dds *d = a->priv;
    struct in_ctx c = {.a = a,
                       .reader = d->tf_reader,
                       .pub = pub,
                       .topic = "rt/tf",
                       .rx_ns = rx_ns,
                       .tmap = time_map(d, pub, rx_ns)};
    tf_message_in(&c, m);
}
