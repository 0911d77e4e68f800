/* `dds` adapter internals shared by dds_adapter.c (Cyclone DDS entities, egress), dds_conf.c
 * (configuration) and dds_ingress.c (readers, TF chaining, stamps). Not a public interface.
 *
 * Threads: Cyclone DDS delivers data on its own threads (receive threads, or the writer's thread
 * for local writers). Its data_available listener only signals the reactor: an atomic flag, and
 * one byte on a non-blocking pipe when the flag was clear. The reactor's read event on that pipe
 * takes the samples (dds_take is thread-safe) and feeds the entity table on the reactor thread,
 * at most DDS_WORK_PER_WAKE units of work per wake-up (issue 30: a sample costs DDS_COST_SAMPLE,
 * a transform 1 plus one per DDS_COST_BYTES bytes of its frame names), then it re-activates
 * itself and continues where it stopped (inside a message) on the next pass of the loop. */
#ifndef XG_DDS_ADAPTER_H
#define XG_DDS_ADAPTER_H

#include <dds/dds.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "adapters/dds/dds_frames.h"
#include "adapters/dds/dds_names.h"
#include "core/table/egress_controls.h"
#include "core/adapter/adapter.h"
#include "core/util/log.h"
#include "core/net/timer.h"
#include "core/net/net.h"
#include "core/clock/time_map.h"
#include "mappings/frame.h"
#include "mappings/naming.h"

#define DDS_MAX_IN_TOPICS 64                  /* PoseStamped topics read (`topics:`) */
#define DDS_TF_CHUNK 256                      /* transforms per TFMessage sent */
#define DDS_READER_DEPTH 100                  /* reader history (keep last), as tf2's listener */
#define DDS_RELIABLE_DEPTH 100                /* writer history with qos: reliable */
#define DDS_TAKE_BATCH 64                     /* samples per dds_take */
#define DDS_WORK_PER_WAKE 256                 /* work units per reactor wake-up (see above) */
#define DDS_COST_SAMPLE 4                     /* units per sample taken */
#define DDS_COST_BYTES 128                    /* bytes of frame names per extra unit */
#define DDS_OWNER_HOLD_NS INT64_C(2000000000) /* a name's owner silent this long loses it */
#define DDS_TIME_MAPS 32                      /* publishers whose clock offset is tracked */

/** A PoseStamped topic read into one entity. */
struct dds_in_topic {
    char ros[DDS_TOPIC_MAX + 1]; /* ROS 2 name as configured */
    char dds[DDS_TOPIC_MAX + 1]; /* "rt/..." */
    char source[XG_NAME_MAX];    /* entity source: the ROS name without leading '/' */
    dds_entity_t topic, reader;
    dds_instance_handle_t own_writer; /* our own writer on that topic (pose_topics), or 0 */
};

/** Clock offset of one publication (the capture-time mapping of core/clock/clock.h). */
struct dds_tmap {
    dds_instance_handle_t pub;
    struct xg_time_map map;
    int64_t used_ns;
};

/** PoseStamped/TwistStamped writers of one entity, allocated on first use and kept in the
 *  adapter's per-entity slot of the table (xg_table_sink_slot()). */
struct dds_out_slot {
    dds_entity_t pose_topic, pose_writer, twist_topic, twist_writer;
};

struct dds {
    struct xg_egress_controls controls; /* ROS 2 pose messages carry no buttons/analogs */
    /* configuration */
    int64_t domain_id;
    char world_frame[XG_NAME_MAX];
    char prefix[DDS_TOPIC_MAX + 1]; /* ROS name prefix of per-entity topics, "/xrgate" */
    bool read_tf, publish_tf, pose_topics, twist_topics, reliable;
    char config_uri[4200];        /* "file://<path>" or "" */
    char enclave[PATH_MAX];       /* security.enclave, absolute, or "" (no DDS Security) */
    const struct xg_frame *frame; /* a->frame */
    struct dds_in_topic in[DDS_MAX_IN_TOPICS];
    int n_in;
    struct xg_globs read_include, read_exclude; /* globs on incoming frame/topic names */
    /* Cyclone DDS entities */
    dds_entity_t domain, pp, tf_topic, tf_reader, tf_writer;
    dds_instance_handle_t tf_writer_ih;
    dds_listener_t *listener;
    dds_qos_t *wqos, *rqos;
    /* reactor hand-off */
    struct xg_wake *wake;   /* Cyclone's listener thread -> the loop (core/net/timer.h) */
    struct xg_timer *yield; /* zero timeout: continue the work left on the next loop pass */
    /* ingress state */
    struct dds_frames names; /* TF frames and entity names' owners (dds_frames.h) */
    /* a batch taken and not finished when a wake-up's budget ran out: resumed next pass */
    void *pend_buf[DDS_TAKE_BATCH];
    dds_sample_info_t pend_info[DDS_TAKE_BATCH];
    int pend_n, pend_i; /* samples in the batch (0: none pending), next sample */
    uint32_t pend_t;    /* next transform of sample pend_i */
    bool pend_begun;    /* sample pend_i was counted (cost, messages_in) */
    int pend_reader;    /* 0: rt/tf, k > 0: in[k - 1] */
    int next_reader;    /* reader to take from next (round robin) */
    int64_t pend_rx;    /* when the batch was taken */
    struct dds_tmap tmaps[DDS_TIME_MAPS];
    /* egress state */
    void *tf_buf;                        /* geometry_msgs TransformStamped_[DDS_TF_CHUNK] */
    char (*tf_names)[DDS_TOPIC_MAX + 1]; /* child_frame_id strings of that buffer */
    size_t tf_n;
    int64_t send_ns; /* stamp of this drain (wall clock) */
    /* counters */
    uint64_t wakeups, messages_in, transforms_in, poses_in, own_skipped, unresolved, bad_input;
    uint64_t tf_messages_out, transforms_out, poses_out, twists_out, write_errors, frames_full;
    uint64_t budget_yields;    /* wake-ups that stopped at DDS_WORK_PER_WAKE with work left */
    uint64_t writer_conflicts; /* samples refused: their name is owned by another writer */
    uint64_t frames_filtered;  /* transforms/poses left out by read_include/read_exclude */
    struct xg_log_limit lim_bad, lim_unresolved, lim_write, lim_frames, lim_conflict;
};

/** Read and check a dds adapter's keys from `conf` into `d` (zeroed by the caller, which owns it
 *  and frees it through the adapter's destroy, also on error): domain_id, world_frame,
 *  publish_tf, read_tf, pose_topics, twist_topics, topic_prefix, qos, config_file (opened and
 *  resolved to a file:// URI), topics (at most DDS_MAX_IN_TOPICS) and read_include /
 *  read_exclude (globs on incoming names, the syntax of include/exclude). `name` is the adapter's
 *  name for the "neither publishes nor reads anything" error. Returns 0 or a negative errno
 *  (-EINVAL, or config_file's open error) with `err` naming the key. */
int dds_read_conf(struct dds *d, const char *name, const struct xg_conf *conf,
                  struct xg_error *err);
/** Read and check `security: {enclave: DIR}` of `conf` into d->enclave (absolute path; left ""
 *  without the key): the six files of an SROS2 enclave are regular and readable, the
 *  certificates and the key parse, the key is the certificate's, the certificate verifies
 *  against identity_ca.cert.pem, governance.p7s and permissions.p7s are S/MIME signed by
 *  permissions_ca.cert.pem (dds_smime.h), permissions.p7s grants the certificate's subject.
 *  0 or a negative errno with `err` at security.enclave (file:line:column). dds_security.c. */
int dds_security_conf(struct dds *d, const struct xg_conf *conf, struct xg_error *err);
/** A participant QoS with the DDS Security properties (dds.sec.auth.*, dds.sec.access.*,
 *  dds.sec.crypto.*: Cyclone's three plugins and the enclave's files as file: URIs) for
 *  d->enclave, owned by the caller (dds_delete_qos); NULL without an enclave or on ENOMEM. */
dds_qos_t *dds_security_qos(const struct dds *d);
/** Create the readers (rt/tf when read_tf, every `topics:` entry) with the hand-off listener on
 *  d->pp, and the pipe event on a->base. 0 or a negative errno (logged). */
int dds_ingress_start(struct xg_adapter *a);
/** Feed one decoded tf2_msgs/TFMessage (`msg`, the generated tf2_msgs_msg_dds__TFMessage_) from
 *  the writer with publication handle `pub`, received at `rx_ns` (gateway clock), whole (no
 *  work budget): what the reactor does with a sample over as many wake-ups as it takes. For the
 *  fuzz target and tests; `a` is a created dds adapter (started or not: the name table is
 *  allocated on first use; without a reader, log lines name the writer by its handle). */
void dds_ingress_tf(struct xg_adapter *a, const void *msg, uint64_t pub, int64_t rx_ns);
/** Return a batch still loaned from a reader (work left when a wake-up's budget ran out) to
 *  Cyclone DDS; before the readers are deleted. */
void dds_ingress_release(struct xg_adapter *a);
/** Free the ingress state that start made on the reactor side (the pipe and its event). */
void dds_ingress_stop(struct xg_adapter *a);

#endif
