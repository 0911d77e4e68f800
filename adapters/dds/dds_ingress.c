/* `dds` adapter ingress: ROS 2 /tf (tf2_msgs/TFMessage on "rt/tf") and listed
 * geometry_msgs/PoseStamped topics into the entity table.
 *
 * Entities: one per TF child frame (source = child_frame_id without a leading '/'), one per
 * listed PoseStamped topic (source = the topic name without the leading '/'). A transform whose
 * parent (header.frame_id) is world_frame is the child's world pose; one whose parent is a frame
 * received before (directly or through a chain) is composed with that frame's pose; any other is
 * dropped and counted (tf_unresolved). A PoseStamped's header.frame_id is resolved the same way,
 * an empty one meaning world_frame. Capture time: header.stamp (the sender's clock, ROS time)
 * mapped to the gateway clock per publication (core/clock/clock.h); a zero stamp means "now"
 * (receive time). Split horizon: samples of our own writers (publication handle) are skipped and
 * counted (own_samples_skipped). Bad input (nanosec >= 1e9, an empty child_frame_id, values that
 * are not a pose) drops the transform with one rate-limited line naming the writer, field and
 * value.
 *
 * Issue 30: work per wake-up is bounded by its cost (transforms and name bytes, not samples) and
 * continues inside a message on the next pass of the loop; names are found by hash
 * (dds_frames.h), a parent under the same fitted name a child is stored under; a rejection is
 * counted first and the writer's GUID is asked of Cyclone DDS only for a line the rate limiter
 * lets through. One entity per writer: a name is owned by the writer that sent it first; samples
 * of another writer for it are refused (writer_conflicts, one line naming both writers) until the
 * owner has been silent for DDS_OWNER_HOLD_NS. read_include / read_exclude decide which names
 * become entities (a frame left out is still remembered as a parent). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/net/transport.h"
#include "adapters/dds/dds_adapter.h"
#include "core/clock/clock.h"
#include "core/table/names.h"
#include "core/clock/time_map.h"
#include "geometry_msgs/msg/PoseStamped.h"
#include "tf2_msgs/msg/TFMessage.h"

/* ---- hand-off from Cyclone's threads ---- */

static void on_data_available(dds_entity_t reader, void *arg)
{
    struct dds *d = arg;
    (void)reader;
    xg_wake_signal(d->wake); /* any thread; at most one wake-up outstanding */
}

/* True when a line through `lim` at `lvl` would be printed now (no side effect). */
static bool lim_passes(const struct xg_log_limit *lim, enum xg_log_level lvl)
{
    if (!xg_log_enabled(lvl)) return false;
    int64_t now = xg_clock_mono_ns();
    return !lim->window_start_ns || now - lim->window_start_ns >= XG_LOG_LIMIT_INTERVAL_NS ||
           lim->in_window < XG_LOG_LIMIT_BURST;
}

/* lim_passes(); when not, the line is counted as suppressed right away (xg_log_limited() returns
 * before formatting), so that the caller can skip the work of building it (the writer's GUID
 * from Cyclone DDS). */
static bool lim_open(struct xg_log_limit *lim, enum xg_log_level lvl, const char *component)
{
    if (lim_passes(lim, lvl)) return true;
    xg_log_limited(lim, lvl, component, "%s", "-");
    return false;
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
    if (!lim_open(&d->lim_bad, XG_LOG_WARN, c->a->name)) return;
    writer_name(c->reader, c->pub, c->topic, w, sizeof w);
    XG_WARN_PEER(&d->lim_bad, c->a->name, "bad input from %s: %s: %s = %.17g; dropped", w, what,
                 fmt_field, value);
}

/* A frame id without its leading '/'s (tf2 strips the one that ROS 1 frame ids carried; "//a"
 * is the same frame as "a", never an entity named "/a"). NULL reads as "". */
static const char *strip_slash(const char *s)
{
    if (!s) return "";
    while (*s == '/')
        s++;
    return s;
}

/* Header stamp → gateway time through the writer's clock map; a step is counted and logged
 * (core/adapter/adapter.h), the writer named only when the line is printed. */
static int64_t capture_time(struct in_ctx *c, int64_t stamp)
{
    if (stamp == 0) return c->rx_ns;
    uint64_t steps = c->tmap->steps;
    int64_t t = xg_time_map_update(c->tmap, stamp, c->rx_ns);
    if (c->tmap->steps != steps) {
        char w[200];
        bool named = lim_passes(&c->a->lim_clock, XG_LOG_WARN);
        if (named) writer_name(c->reader, c->pub, c->topic, w, sizeof w);
        xg_adapter_clock_step(c->a, c->tmap, named ? w : NULL);
    }
    return t;
}

/* One entity per writer: true when the writer of `c` may feed name `e` (it owns it, or nobody
 * does, or its owner has been silent for DDS_OWNER_HOLD_NS); else counted and refused. */
static bool owner_ok(struct in_ctx *c, struct dds_frame *e)
{
    struct dds *d = c->a->priv;
    if (!e->owner || e->owner == c->pub || c->rx_ns - e->owner_ns >= DDS_OWNER_HOLD_NS) {
        if (e->owner != c->pub) {
            e->owner = c->pub;
            e->owner_reader = c->reader;
            e->conflict_logged = false;
        }
        e->owner_ns = c->rx_ns;
        return true;
    }
    d->writer_conflicts++;
    c->a->drops++;
    if (!e->conflict_logged && lim_open(&d->lim_conflict, XG_LOG_WARN, c->a->name)) {
        char w[200], o[200];
        e->conflict_logged = true;
        writer_name(c->reader, c->pub, c->topic, w, sizeof w);
        writer_name(e->owner_reader, e->owner,
                    e->owner_reader == d->tf_reader ? "rt/tf" : "a pose topic", o, sizeof o);
        XG_WARN_PEER(&d->lim_conflict, c->a->name,
                     "%s also publishes '%s', which %s publishes: refused (one entity per writer; "
                     "give the publishers distinct names, docs/adapters/dds.md); counted in "
                     "writer_conflicts, logged once",
                     w, e->name, o);
    }
    return false;
}

static bool filter_ok(const struct dds *d, const char *source)
{
    if (d->read_include.n && !xg_globs_match(&d->read_include, source)) return false;
    return !(d->read_exclude.n && xg_globs_match(&d->read_exclude, source));
}

/* `source` and `parent` are fitted names (shorter than XG_NAME_MAX). */
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
        const struct dds_frame *pf = dds_frames_find(&d->names, parent, dds_name_hash(parent));
        if (!pf || !pf->has_pose) {
            d->unresolved++;
            if (!lim_open(&d->lim_unresolved, XG_LOG_INFO, a->name)) return;
            char w[200];
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
    struct dds_frame *e = dds_frames_get(&d->names, source, dds_name_hash(source));
    if (e && !owner_ok(c, e)) return;
    if (remember) {
        if (e && !e->has_pose && d->names.n_posed < DDS_MAX_FRAMES) {
            e->has_pose = true;
            d->names.n_posed++;
        }
        if (e && e->has_pose) {
            e->p = wp;
            e->q = xg_quat_normalize(wq);
        } else {
            d->frames_full++;
            if (lim_open(&d->lim_frames, XG_LOG_WARN, a->name)) {
                char w[200];
                writer_name(c->reader, c->pub, c->topic, w, sizeof w);
                XG_WARN_PEER(&d->lim_frames, a->name,
                             "%s: frame '%s' not remembered: %d TF frames known already; "
                             "transforms relative to it will be dropped",
                             w, source, DDS_MAX_FRAMES);
            }
        }
    }
    if (!filter_ok(d, source)) {
        d->frames_filtered++;
        return;
    }
    s.position = wp;
    s.orientation = wq;
    s.receive_ns = c->rx_ns;
    s.capture_ns = capture_time(c, stamp);
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

/* Work units of `len` bytes of names: one per DDS_COST_BYTES. */
static int name_cost(size_t len)
{
    size_t u = len / DDS_COST_BYTES;
    return u > DDS_WORK_PER_WAKE ? DDS_WORK_PER_WAKE : (int)u;
}

/* Transforms *next.. of one message while *work is below DDS_WORK_PER_WAKE. Returns true when
 * the message is done, false with *next at the first transform left for the next pass. */
static bool tf_message_in(struct in_ctx *c, const tf2_msgs_msg_dds__TFMessage_ *m, uint32_t *next,
                          int *work)
{
    struct dds *d = c->a->priv;
    for (uint32_t i = *next; i < m->transforms_._length; i++) {
        if (*work >= DDS_WORK_PER_WAKE) {
            *next = i;
            return false;
        }
        const struct geometry_msgs_msg_dds__TransformStamped_ *t = &m->transforms_._buffer[i];
        const char *raw = strip_slash(t->child_frame_id_);
        const char *praw = strip_slash(t->header_.frame_id_);
        size_t rlen = strlen(raw), plen = strlen(praw);
        *work += 1 + name_cost(rlen + plen);
        d->transforms_in++;
        if (!rlen) {
            d->bad_input++;
            c->a->errors++;
            if (!lim_open(&d->lim_bad, XG_LOG_WARN, c->a->name)) continue;
            char w[200];
            writer_name(c->reader, c->pub, c->topic, w, sizeof w);
            XG_WARN_PEER(&d->lim_bad, c->a->name,
                         "bad input from %s: transforms[%u].child_frame_id = \"\" (parent '%s'): "
                         "empty; dropped",
                         w, i, praw);
            continue;
        }
        /* child and parent fitted alike: a long name is found under the name it is stored under */
        char child[XG_NAME_MAX], parent[XG_NAME_MAX];
        xg_name_fit(child, sizeof child, raw, rlen);
        if (!strcmp(child, d->world_frame)) continue; /* the world itself is no entity */
        xg_name_fit(parent, sizeof parent, praw, plen);
        const struct geometry_msgs_msg_dds__Transform_ *tr = &t->transform_;
        pose_in(c, child, parent, t->header_.stamp_.sec_, t->header_.stamp_.nanosec_,
                (struct xg_vec3){tr->translation_.x_, tr->translation_.y_, tr->translation_.z_},
                (struct xg_quat){tr->rotation_.x_, tr->rotation_.y_, tr->rotation_.z_,
                                 tr->rotation_.w_},
                true);
    }
    *next = m->transforms_._length;
    return true;
}

static void pose_message_in(struct in_ctx *c, const struct dds_in_topic *in,
                            const geometry_msgs_msg_dds__PoseStamped_ *m, int *work)
{
    struct dds *d = c->a->priv;
    const struct geometry_msgs_msg_dds__Pose_ *p = &m->pose_;
    const char *praw = strip_slash(m->header_.frame_id_);
    size_t plen = strlen(praw);
    char parent[XG_NAME_MAX];
    *work += name_cost(plen);
    if (plen)
        xg_name_fit(parent, sizeof parent, praw, plen);
    else
        snprintf(parent, sizeof parent, "%s", d->world_frame);
    d->poses_in++;
    pose_in(c, in->source, parent, m->header_.stamp_.sec_, m->header_.stamp_.nanosec_,
            (struct xg_vec3){p->position_.x_, p->position_.y_, p->position_.z_},
            (struct xg_quat){p->orientation_.x_, p->orientation_.y_, p->orientation_.z_,
                             p->orientation_.w_},
            false);
}

/* Reader k of the round robin: 0 = rt/tf, k > 0 = in[k - 1]. */
static dds_entity_t reader_at(const struct dds *d, int k)
{
    return k == 0 ? d->tf_reader : d->in[k - 1].reader;
}

/* Continue the pending batch while *work is below DDS_WORK_PER_WAKE. Returns true when it is
 * done (its loan returned), false when the budget ran out inside it. */
static bool run_batch(struct xg_adapter *a, int *work)
{
    struct dds *d = a->priv;
    const struct dds_in_topic *in = d->pend_reader ? &d->in[d->pend_reader - 1] : NULL;
    dds_entity_t reader = reader_at(d, d->pend_reader);
    dds_instance_handle_t own = in ? in->own_writer : d->tf_writer_ih;
    for (; d->pend_i < d->pend_n; d->pend_i++, d->pend_t = 0, d->pend_begun = false) {
        if (*work >= DDS_WORK_PER_WAKE) return false;
        const dds_sample_info_t *si = &d->pend_info[d->pend_i];
        if (!d->pend_begun) {
            d->pend_begun = true;
            *work += DDS_COST_SAMPLE;
            if (!si->valid_data) continue;
            if (own && si->publication_handle == own) {
                d->own_skipped++;
                continue;
            }
            d->messages_in++;
        } else if (!si->valid_data || (own && si->publication_handle == own)) {
            continue;
        }
        struct in_ctx c = {.a = a,
                           .reader = reader,
                           .pub = si->publication_handle,
                           .topic = in ? in->dds : "rt/tf",
                           .rx_ns = d->pend_rx,
                           .tmap = time_map(d, si->publication_handle, d->pend_rx)};
        if (in)
            pose_message_in(&c, in, d->pend_buf[d->pend_i], work);
        else if (!tf_message_in(&c, d->pend_buf[d->pend_i], &d->pend_t, work))
            return false;
    }
    dds_return_loan(reader, d->pend_buf, d->pend_n);
    d->pend_n = d->pend_i = 0;
    d->pend_t = 0;
    d->pend_begun = false;
    return true;
}

/* Take the next batch, round robin over the readers. False when every reader is empty. */
static bool take_next(struct dds *d)
{
    int n_readers = 1 + d->n_in;
    for (int k = 0; k < n_readers; k++) {
        int r = (d->next_reader + k) % n_readers;
        dds_entity_t rd = reader_at(d, r);
        if (rd <= 0) continue;
        memset(d->pend_buf, 0, sizeof d->pend_buf);
        dds_return_t n = dds_take(rd, d->pend_buf, d->pend_info, DDS_TAKE_BATCH, DDS_TAKE_BATCH);
        if (n <= 0) continue;
        d->pend_n = (int)n;
        d->pend_i = 0;
        d->pend_t = 0;
        d->pend_begun = false;
        d->pend_reader = r;
        d->pend_rx = xg_clock_mono_ns();
        d->next_reader = (r + 1) % n_readers;
        return true;
    }
    return false;
}

/* Take and feed samples until the budget is spent or every reader is empty. */
static void ingest(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    d->wakeups++;
    int work = 0;
    for (;;) {
        if (d->pend_n && !run_batch(a, &work)) break;
        if (work >= DDS_WORK_PER_WAKE) break;
        if (!take_next(d)) return; /* every reader is empty */
    }
    /* the budget is spent and work is left: continue on the next pass of the loop, after the
     * other events (the admin API, the other adapters). A zero timeout (xg_timer_yield), not
     * xg_timer_activate(): libevent runs an event activated from a callback in the same pass,
     * before it polls the sockets again, which would starve them. */
    d->budget_yields++;
    xg_timer_yield(d->yield);
}

/* Signalled (the wake-up's state is cleared first: data that arrives from now on signals
 * again). */
static void on_wake(void *arg)
{
    struct xg_adapter *a = arg;
    struct dds *d = a->priv;
    if (xg_timer_pending(d->yield)) return; /* work left already: it continues there */
    ingest(a);
}

static void on_yield(void *arg)
{
    ingest(arg);
}

void dds_ingress_tf(struct xg_adapter *a, const void *msg, uint64_t pub, int64_t rx_ns)
{
    struct dds *d = a->priv;
    if (!d->names.slot && dds_frames_init(&d->names)) return;
    struct in_ctx c = {.a = a,
                       .reader = d->tf_reader,
                       .pub = pub,
                       .topic = "rt/tf",
                       .rx_ns = rx_ns,
                       .tmap = time_map(d, pub, rx_ns)};
    uint32_t next = 0;
    d->messages_in++;
    for (;;) {
        int work = 0;
        if (tf_message_in(&c, msg, &next, &work)) return;
    }
}

void dds_ingress_release(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    if (!d || !d->pend_n) return;
    dds_entity_t reader = reader_at(d, d->pend_reader);
    if (reader > 0) dds_return_loan(reader, d->pend_buf, d->pend_n);
    d->pend_n = d->pend_i = 0;
}

int dds_ingress_start(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    if (!d->read_tf && !d->n_in) return 0;
    d->wake = xg_wake_new(a->base, on_wake, a);
    if (!d->wake) {
        int e = errno;
        XG_ERR(a->name, "pipe: %s", strerror(e));
        return -e;
    }
    d->yield = xg_timer_new(a->base, on_yield, a);
    if (!d->yield) return -ENOMEM;
    if (dds_frames_init(&d->names)) return -ENOMEM;
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
    xg_timer_yield(d->yield);
    return 0;
}

void dds_ingress_stop(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    xg_wake_free(d->wake);
    d->wake = NULL;
    xg_timer_free(d->yield);
    d->yield = NULL;
}
