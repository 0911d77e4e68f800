/* `dds` adapter: ROS 2 pose topics on Eclipse Cyclone DDS (issue 18), both directions.
 *
 * Egress (a sink): every dirty entity, predicted to the send time, as one
 * geometry_msgs/TransformStamped in a tf2_msgs/TFMessage on ROS 2's /tf (DDS topic "rt/tf"):
 * header.frame_id = world_frame, header.stamp = the send time (wall clock), child_frame_id = the
 * entity name as a legal ROS 2 name (dds_ros_name). Optionally a geometry_msgs/PoseStamped on
 * "<topic_prefix>/<entity>/pose" and a geometry_msgs/TwistStamped (linear and angular velocity in
 * world_frame) on ".../twist" per entity. Types and names as ROS 2's rmw layers put them on the
 * wire (type "tf2_msgs::msg::dds_::TFMessage_", IDL in adapters/dds/idl), XCDR1.
 * Ingress: see dds_ingress.c.
 *
 * Frame: the preset `ros` (REP 103: right-handed, X forward, Y left, Z up, metres) unless
 * `frame:` says otherwise. QoS (`qos:`): sensor_data (ROS 2's sensor-data profile: best effort,
 * volatile, keep last 1 for writers) or reliable (reliable, volatile, keep last 100; a write
 * never blocks the reactor: a full history fails the write, counted in write_errors). Readers keep
 * the last DDS_READER_DEPTH samples.
 *
 * Config keys: domain_id (0..232, default 0), world_frame ("world"), publish_tf / read_tf (true),
 * topics (PoseStamped topics to read), pose_topics / twist_topics (false), topic_prefix
 * ("/xrgate"), qos (sensor_data | reliable), config_file (Cyclone DDS XML configuration:
 * interfaces, multicast, peers; default: the CYCLONEDDS_URI environment variable), security
 * ({enclave: DIR}: DDS Security with an SROS2 enclave, dds_security.c), plus
 * frame, rename, rate_hz, include, exclude. The adapter's own keys are read and checked in
 * dds_conf.c. */
#include "core/net/transport.h"
#include "adapters/dds/dds_adapter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock/clock.h"
#include "core/table/names.h"
#include "geometry_msgs/msg/PoseStamped.h"
#include "geometry_msgs/msg/TwistStamped.h"
#include "tf2_msgs/msg/TFMessage.h"

typedef struct geometry_msgs_msg_dds__TransformStamped_ ts_t;

/* ---- create ---- */

static int dds_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct dds *d = calloc(1, sizeof *d);
    if (!d) return -ENOMEM;
    a->priv = d;
    xg_egress_controls_init(
        &d->controls, 0, 0,
        "TransformStamped, PoseStamped and TwistStamped have no field for them");
    d->frame = a->frame; /* `ros` unless configured: default_frame of xg_dds_ops */
    return dds_read_conf(d, a->name, conf, err);
}

/* ---- Cyclone DDS entities ---- */

static int dds_fail(struct xg_adapter *a, const char *what, dds_return_t rc)
{
    XG_ERR(a->name, "Cyclone DDS: %s failed: %s", what, dds_strretcode(rc));
    return -EIO;
}

static dds_qos_t *make_qos(bool reliable, bool writer)
{
    dds_qos_t *q = dds_create_qos();
    if (!q) return NULL;
    dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
    if (reliable)
        dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, 0); /* never block the reactor */
    else
        dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
    int depth = !writer ? DDS_READER_DEPTH : reliable ? DDS_RELIABLE_DEPTH : 1;
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, depth);
    if (writer) {
        dds_data_representation_id_t xcdr1 = DDS_DATA_REPRESENTATION_XCDR1;
        dds_qset_data_representation(q, 1, &xcdr1);
    }
    return q;
}

static void slot_release(void *user, const struct xg_entity *e, uint64_t value);

static int dds_start(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    xg_table_set_sink_slot_free(a->table, a->index, slot_release, a);
    if (d->config_uri[0]) {
        d->domain = dds_create_domain((dds_domainid_t)d->domain_id, d->config_uri);
        if (d->domain < 0) return dds_fail(a, "creating the domain with config_file", d->domain);
    }
    dds_qos_t *pqos = dds_security_qos(d);
    if (d->enclave[0] && !pqos) return -ENOMEM;
    d->pp = dds_create_participant((dds_domainid_t)d->domain_id, pqos, NULL);
    if (pqos) dds_delete_qos(pqos);
    if (d->pp < 0 && d->enclave[0]) {
        XG_ERR(a->name,
               "Cyclone DDS refused the DDS Security enclave '%s' (%s): the permissions do not "
               "allow this participant on domain %lld (or their validity is over), "
               "governance.p7s or permissions.p7s does not follow the DDS Security schema, or a "
               "plugin did not load (Cyclone's own message above says which)",
               d->enclave, dds_strretcode(d->pp), (long long)d->domain_id);
        return -EACCES;
    }
    if (d->pp < 0) return dds_fail(a, "creating the participant", d->pp);
    d->wqos = make_qos(d->reliable, true);
    d->rqos = make_qos(d->reliable, false);
    if (!d->wqos || !d->rqos) return -ENOMEM;
    if (d->publish_tf || d->read_tf) {
        d->tf_topic =
            dds_create_topic(d->pp, &tf2_msgs_msg_dds__TFMessage__desc, "rt/tf", NULL, NULL);
        if (d->tf_topic < 0) return dds_fail(a, "creating topic rt/tf", d->tf_topic);
    }
    if (d->publish_tf) {
        d->tf_writer = dds_create_writer(d->pp, d->tf_topic, d->wqos, NULL);
        if (d->tf_writer < 0) return dds_fail(a, "creating the rt/tf writer", d->tf_writer);
        dds_return_t r = dds_get_instance_handle(d->tf_writer, &d->tf_writer_ih);
        if (r < 0) return dds_fail(a, "reading the rt/tf writer's handle", r);
        d->tf_buf = calloc(DDS_TF_CHUNK, sizeof(ts_t));
        d->tf_names = calloc(DDS_TF_CHUNK, sizeof *d->tf_names);
        if (!d->tf_buf || !d->tf_names) return -ENOMEM;
    }
    int rc = dds_ingress_start(a);
    if (rc) return rc;
    XG_INFO(a->name,
            "ROS 2 over Cyclone DDS on domain %lld: %s%s%s%s, %d PoseStamped topic%s read, qos "
            "%s%s%s%s",
            (long long)d->domain_id, d->publish_tf ? "publishes rt/tf" : "does not publish rt/tf",
            d->pose_topics ? ", PoseStamped per entity" : "",
            d->twist_topics ? ", TwistStamped per entity" : "", d->read_tf ? ", reads rt/tf" : "",
            d->n_in, d->n_in == 1 ? "" : "s", d->reliable ? "reliable" : "sensor_data",
            d->config_uri[0] ? " (config_file)" : "",
            d->enclave[0] ? ", DDS Security enclave " : ", no DDS Security (open domain)",
            d->enclave);
    return 0;
}

/* ---- egress ---- */

static void flush_tf(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    if (!d->tf_n) return;
    tf2_msgs_msg_dds__TFMessage_ msg = {.transforms_ = {._maximum = (uint32_t)d->tf_n,
                                                        ._length = (uint32_t)d->tf_n,
                                                        ._buffer = d->tf_buf,
                                                        ._release = false}};
    dds_return_t r = dds_write(d->tf_writer, &msg);
    if (r < 0) {
        d->write_errors++;
        a->drops += d->tf_n;
        XG_WARN_PEER(&d->lim_write, a->name, "rt/tf: writing %zu transforms failed: %s", d->tf_n,
                     dds_strretcode(r));
    } else {
        d->tf_messages_out++;
        d->transforms_out += d->tf_n;
        a->samples_out += d->tf_n;
    }
    d->tf_n = 0;
}

static void stamp_header(struct dds *d, struct std_msgs_msg_dds__Header_ *h)
{
    dds_stamp_from_ns(d->send_ns, &h->stamp_.sec_, &h->stamp_.nanosec_);
    h->frame_id_ = d->world_frame;
}

static void free_slot(struct dds_out_slot *s)
{
    if (s->pose_writer > 0) dds_delete(s->pose_writer);
    if (s->pose_topic > 0) dds_delete(s->pose_topic);
    if (s->twist_writer > 0) dds_delete(s->twist_writer);
    if (s->twist_topic > 0) dds_delete(s->twist_topic);
    memset(s, 0, sizeof *s);
}

/* The table releases an entity's writers (xg_table_sink_slot(): it left the table, or
 * dds_stop() clears them). */
static void slot_release(void *user, const struct xg_entity *e, uint64_t value)
{
    (void)user, (void)e;
    struct dds_out_slot *s = (struct dds_out_slot *)(uintptr_t)value;
    free_slot(s);
    free(s);
}

/* The writer of entity e on "<prefix>/<name>/<leaf>", created on first use; 0 if it cannot be. */
static dds_entity_t entity_writer(struct xg_adapter *a, const struct xg_entity *e, bool twist)
{
    struct dds *d = a->priv;
    uint64_t *v = xg_table_sink_slot(a->table, a->index, e);
    if (!v) return 0;
    struct dds_out_slot *s = (struct dds_out_slot *)(uintptr_t)*v;
    if (!s) {
        if (!(s = calloc(1, sizeof *s))) return 0;
        *v = (uint64_t)(uintptr_t)s; /* released by slot_release() when e goes */
    }
    dds_entity_t *w = twist ? &s->twist_writer : &s->pose_writer;
    dds_entity_t *t = twist ? &s->twist_topic : &s->pose_topic;
    if (*w) return *w > 0 ? *w : 0;
    char name[DDS_TOPIC_MAX + 1], topic[2 * DDS_TOPIC_MAX];
    dds_ros_name(name, sizeof name, xg_entity_name(e));
    int n = snprintf(topic, sizeof topic, "rt%s/%s/%s", d->prefix, name, twist ? "twist" : "pose");
    if (n > DDS_TOPIC_MAX) {
        *w = -1; /* remembered: not retried every tick */
        d->write_errors++;
        XG_WARN_PEER(&d->lim_write, a->name,
                     "entity '%s': topic name '%s' is %d bytes, longer than %d; not published",
                     xg_entity_name(e), topic, n, DDS_TOPIC_MAX);
        return 0;
    }
    *t = dds_create_topic(d->pp,
                          twist ? &geometry_msgs_msg_dds__TwistStamped__desc
                                : &geometry_msgs_msg_dds__PoseStamped__desc,
                          topic, NULL, NULL);
    if (*t > 0) *w = dds_create_writer(d->pp, *t, d->wqos, NULL);
    if (*t <= 0 || *w <= 0) {
        dds_return_t r = *t <= 0 ? *t : *w;
        *w = -1;
        d->write_errors++;
        XG_WARN_PEER(&d->lim_write, a->name, "entity '%s': creating the writer on %s failed: %s",
                     xg_entity_name(e), topic, dds_strretcode(r));
        return 0;
    }
    if (!twist)
        for (int i = 0; i < d->n_in; i++)
            if (!strcmp(d->in[i].dds, topic)) dds_get_instance_handle(*w, &d->in[i].own_writer);
    return *w;
}

static void write_entity(struct xg_adapter *a, dds_entity_t w, const void *msg, uint64_t *count)
{
    struct dds *d = a->priv;
    dds_return_t r = dds_write(w, msg);
    if (r < 0) {
        d->write_errors++;
        a->drops++;
        XG_WARN_PEER(&d->lim_write, a->name, "writing a per-entity message failed: %s",
                     dds_strretcode(r));
    } else {
        (*count)++;
    }
}

static int drain_visit(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct xg_adapter *a = user;
    struct dds *d = a->priv;
    xg_egress_controls_check(&d->controls, a->name, e);
    struct xg_pose p = *pose;
    xg_frame_pose_out(d->frame, &p);
    if (d->publish_tf) {
        ts_t *ts = (ts_t *)d->tf_buf + d->tf_n;
        dds_ros_name(d->tf_names[d->tf_n], sizeof d->tf_names[0], xg_entity_name(e));
        stamp_header(d, &ts->header_);
        ts->child_frame_id_ = d->tf_names[d->tf_n];
        ts->transform_.translation_ =
            (struct geometry_msgs_msg_dds__Vector3_){p.position.x, p.position.y, p.position.z};
        ts->transform_.rotation_ = (struct geometry_msgs_msg_dds__Quaternion_){
            p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w};
        if (++d->tf_n == DDS_TF_CHUNK) flush_tf(a);
    }
    dds_entity_t w;
    if (d->pose_topics && (w = entity_writer(a, e, false))) {
        geometry_msgs_msg_dds__PoseStamped_ m;
        stamp_header(d, &m.header_);
        m.pose_.position_ =
            (struct geometry_msgs_msg_dds__Point_){p.position.x, p.position.y, p.position.z};
        m.pose_.orientation_ = (struct geometry_msgs_msg_dds__Quaternion_){
            p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w};
        write_entity(a, w, &m, &d->poses_out);
    }
    if (d->twist_topics && (p.has_velocity || p.has_angular_velocity) &&
        (w = entity_writer(a, e, true))) {
        geometry_msgs_msg_dds__TwistStamped_ m;
        stamp_header(d, &m.header_);
        m.twist_.linear_ =
            (struct geometry_msgs_msg_dds__Vector3_){p.velocity.x, p.velocity.y, p.velocity.z};
        m.twist_.angular_ = (struct geometry_msgs_msg_dds__Vector3_){
            p.angular_velocity.x, p.angular_velocity.y, p.angular_velocity.z};
        write_entity(a, w, &m, &d->twists_out);
    }
    return 0;
}

static void dds_drain(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    if (d->pp <= 0) return;
    int64_t now = xg_clock_mono_ns();
    d->send_ns = xg_clock_mono_to_wall_ns(now);
    d->tf_n = 0;
    xg_table_drain(a->table, a->index, now, drain_visit, a);
    flush_tf(a);
}

static void dds_entity_event(struct xg_adapter *a, const struct xg_entity *e, bool added)
{
    struct dds *d = a->priv;
    const uint64_t *v = added ? NULL : xg_table_sink_slot(a->table, a->index, e);
    const struct dds_out_slot *s = v ? (const struct dds_out_slot *)(uintptr_t)*v : NULL;
    if (d->pp > 0 && s) { /* the table then releases the writers (slot_release) */
        for (int i = 0; i < d->n_in; i++) {
            dds_instance_handle_t ih;
            if (s->pose_writer > 0 && dds_get_instance_handle(s->pose_writer, &ih) >= 0 &&
                d->in[i].own_writer == ih)
                d->in[i].own_writer = 0;
        }
    }
}

/* ---- status and life cycle ---- */

static void dds_status(const struct xg_adapter *a, struct xg_status *st)
{
    const struct dds *d = a->priv;
    st->state = d->pp > 0 ? "running" : "stopped";
    snprintf(st->peer, sizeof st->peer, "DDS domain %lld%s", (long long)d->domain_id,
             d->enclave[0] ? " (DDS Security)" : "");
    xg_status_counter(st, "tf_messages_out", (double)d->tf_messages_out);
    xg_status_counter(st, "transforms_out", (double)d->transforms_out);
    xg_status_counter(st, "poses_out", (double)d->poses_out);
    xg_status_counter(st, "twists_out", (double)d->twists_out);
    xg_status_counter(st, "write_errors", (double)d->write_errors);
    xg_status_counter(st, "controls_not_carried", (double)d->controls.not_carried);
    xg_status_counter(st, "messages_in", (double)d->messages_in);
    xg_status_counter(st, "transforms_in", (double)d->transforms_in);
    xg_status_counter(st, "poses_in", (double)d->poses_in);
    xg_status_counter(st, "own_samples_skipped", (double)d->own_skipped);
    xg_status_counter(st, "tf_unresolved", (double)d->unresolved);
    xg_status_counter(st, "bad_input", (double)d->bad_input);
    xg_status_gauge(st, "frames_known", (double)d->names.n_posed);
    xg_status_counter(st, "frames_not_remembered", (double)d->frames_full);
    xg_status_counter(st, "budget_yields", (double)d->budget_yields);
    xg_status_counter(st, "writer_conflicts", (double)d->writer_conflicts);
    xg_status_counter(st, "frames_filtered", (double)d->frames_filtered);
    xg_status_counter(st, "wakeups", (double)d->wakeups);
}

static void dds_stop(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    if (!d) return;
    xg_table_sink_slots_clear(a->table, a->index); /* the entities' writers */
    dds_ingress_release(a); /* a batch loaned from a reader, before the reader goes */
    /* deleting the participant deletes its readers, writers and topics and waits for listener
     * calls in progress; the domain goes with its last participant */
    if (d->pp > 0) dds_delete(d->pp);
    if (d->domain > 0) dds_delete(d->domain);
    d->pp = d->domain = 0;
    d->tf_reader = d->tf_writer = d->tf_topic = 0;
    for (int i = 0; i < d->n_in; i++)
        d->in[i].reader = d->in[i].topic = 0;
    dds_ingress_stop(a);
}

static void dds_destroy(struct xg_adapter *a)
{
    struct dds *d = a->priv;
    if (!d) return;
    dds_stop(a);
    if (d->listener) dds_delete_listener(d->listener);
    if (d->wqos) dds_delete_qos(d->wqos);
    if (d->rqos) dds_delete_qos(d->rqos);
    free(d->tf_buf);
    free(d->tf_names);
    dds_frames_free(&d->names);
    xg_globs_free(&d->read_include);
    xg_globs_free(&d->read_exclude);
    free(d);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_dds_ops = {
    .type = "dds",
    .is_sink = true,
    .default_frame = "ros",
    .whole_frames = true, /* one frame per drain: not sliced (core/table/egress_pass.h) */
    .create = dds_create,
    .start = dds_start,
    .drain = dds_drain,
    .status = dds_status,
    .stop = dds_stop,
    .destroy = dds_destroy,
    .entity_event = dds_entity_event,
};
