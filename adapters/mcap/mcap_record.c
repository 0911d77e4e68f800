/* `mcap-record` egress: records every sample the gateway receives to MCAP files
 * (docs/adapters/mcap.md).
 *
 * The adapter is a sink whose table sample tap (xg_table_set_sample_tap) sees every sample of
 * the entities its include/exclude accept, on the reactor thread: it encodes the sample as an
 * xrgate_msgs/msg/Sample (lossless) and a tf2_msgs/msg/TFMessage (CDR, mcap_cdr.h) and appends
 * both to a bounded queue. A writer thread takes the queue, builds chunks (mcap_writer.h),
 * compresses and writes them, rotates files. The reactor never touches the disk: a full queue
 * (a slow or full disk) drops the sample, counted as `dropped` with a rate-limited warning.
 *
 * Times: log time = receive time, publish time = capture time (the source's time mapped to the
 * gateway clock), both as ns since the Unix epoch through the wall clock - gateway clock offset
 * taken when recording starts (so that times stay monotonic when the wall clock is stepped). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adapters/mcap/mcap_cdr.h"
#include "adapters/mcap/mcap_priv.h"
#include "core/adapter.h"
#include "core/clock.h"
#include "core/log.h"
#include "mappings/frame.h"

#define CH_SAMPLE 0
#define CH_TF 1
#define ENTRY_HDR 22 /* u16 channel, u64 log time, u64 publish time, u32 length */

static int rec_create(struct xg_adapter *a, const struct xg_conf *conf, struct xg_error *err)
{
    struct mcap_rec *r = calloc(1, sizeof *r);
    if (!r) return -ENOMEM;
    a->priv = r;
    snprintf(r->adapter_name, sizeof r->adapter_name, "%s", a->name);
    snprintf(r->gateway_id, sizeof r->gateway_id, "%s", a->gateway_id ? a->gateway_id : "");
    return mcap_rec_read_conf(r, conf, err);
}

/* ---- the reactor side: the tap ---- */

static void entry(struct mcap_buf *b, uint16_t ch, int64_t log_ns, int64_t pub_ns, size_t at)
{
    /* the header was reserved at `at`; the data follows it */
    size_t len = b->n - at - ENTRY_HDR;
    struct mcap_buf h = {.p = b->p + at, .cap = ENTRY_HDR};
    mcap_put_u16(&h, ch);
    mcap_put_u64(&h, (uint64_t)log_ns);
    mcap_put_u64(&h, (uint64_t)pub_ns);
    mcap_put_u32(&h, (uint32_t)len);
}

static size_t reserve_hdr(struct mcap_buf *b)
{
    static const uint8_t zero[ENTRY_HDR];
    size_t at = b->n;
    mcap_put_bytes(b, zero, ENTRY_HDR);
    return at;
}

static void copy_name(char *dst, size_t size, const char *src)
{
    size_t n = src ? strnlen(src, size - 1) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static void rec_tap(void *user, const struct xg_entity *e, const struct xg_sample *s)
{
    struct xg_adapter *a = user;
    struct mcap_rec *r = a->priv;
    struct mcap_buf *b = &r->enc;
    b->n = 0;
    int64_t cap = s->capture_ns + r->wall_off_ns;
    int64_t rcv = (s->receive_ns ? s->receive_ns : s->capture_ns) + r->wall_off_ns;
    static struct mcap_sample m; /* reactor thread only; too big for the stack of a tap */
    copy_name(m.name, sizeof m.name, xg_entity_name(e));
    copy_name(m.source, sizeof m.source, xg_entity_source(e));
    copy_name(m.origin, sizeof m.origin, xg_table_adapter_name(a->table, xg_entity_origin(e)));
    copy_name(m.origin_gateway, sizeof m.origin_gateway, xg_entity_origin_gateway(e));
    copy_name(m.kind, sizeof m.kind, xg_kind_name(xg_entity_kind(e)));
    const char *parent = xg_table_parent_name(a->table, e);
    copy_name(m.parent, sizeof m.parent, parent);
    m.capture_time = cap;
    m.receive_time = rcv;
    m.flags = s->flags; /* the merged sample's: every field the source has reported */
    m.sensor = xg_entity_source_sensor(e);
    const double p[3] = {s->position.x, s->position.y, s->position.z};
    const double q[4] = {s->orientation.x, s->orientation.y, s->orientation.z, s->orientation.w};
    memcpy(m.position, p, sizeof p);
    memcpy(m.orientation, q, sizeof q);
    m.velocity[0] = s->velocity.x, m.velocity[1] = s->velocity.y, m.velocity[2] = s->velocity.z;
    m.angular_velocity[0] = s->angular_velocity.x, m.angular_velocity[1] = s->angular_velocity.y;
    m.angular_velocity[2] = s->angular_velocity.z;
    m.scale[0] = s->scale.x, m.scale[1] = s->scale.y, m.scale[2] = s->scale.z;
    const uint8_t *bt;
    const double *an;
    m.n_buttons = (uint32_t)xg_entity_buttons(e, &bt);
    if (m.n_buttons) memcpy(m.buttons, bt, m.n_buttons);
    m.n_analogs = (uint32_t)xg_entity_analogs(e, &an);
    if (m.n_analogs) memcpy(m.analogs, an, m.n_analogs * sizeof *an);
    size_t at = reserve_hdr(b);
    mcap_cdr_sample(b, &m);
    entry(b, CH_SAMPLE, rcv, cap, at);
    if (r->tf) {
        static struct mcap_tf tf;
        tf.stamp_ns = cap;
        copy_name(tf.child_frame_id, sizeof tf.child_frame_id, m.name);
        struct xg_vec3 pos = s->position;
        struct xg_quat rot = s->orientation;
        const struct xg_entity *pe =
            xg_entity_parent(e) ? xg_table_get(a->table, xg_entity_parent(e)) : NULL;
        if (pe) { /* tf is parent-relative: parent^-1 * child */
            const struct xg_sample *ps = xg_entity_last(pe);
            struct xg_quat pinv = xg_quat_conj(ps->orientation);
            pos = xg_frame_vel_out(a->frame, xg_quat_rotate(pinv, xg_vec3_sub(pos, ps->position)));
            rot = xg_frame_rot_out(a->frame, xg_quat_mul(pinv, rot));
            copy_name(tf.frame_id, sizeof tf.frame_id, xg_entity_name(pe));
        } else {
            pos = xg_frame_pos_out(a->frame, pos);
            rot = xg_frame_rot_out(a->frame, rot);
            copy_name(tf.frame_id, sizeof tf.frame_id, r->world_frame);
        }
        tf.t[0] = pos.x, tf.t[1] = pos.y, tf.t[2] = pos.z;
        tf.q[0] = rot.x, tf.q[1] = rot.y, tf.q[2] = rot.z, tf.q[3] = rot.w;
        at = reserve_hdr(b);
        mcap_cdr_tf(b, &tf);
        entry(b, CH_TF, rcv, cap, at);
    }
    if (b->oom) {
        a->drops++;
        return;
    }
    bool full, wake;
    pthread_mutex_lock(&r->mu);
    full = r->queue.n + b->n > r->queue_bytes;
    if (!full) mcap_put_bytes(&r->queue, b->p, b->n);
    if (full || r->queue.oom) {
        r->queue.oom = false;
        r->dropped++;
        full = true;
    } else {
        r->queued++;
    }
    wake = r->queue.n >= r->queue_bytes / 4;
    uint64_t dropped = r->dropped;
    pthread_mutex_unlock(&r->mu);
    if (wake) pthread_cond_signal(&r->cv);
    if (full) {
        a->drops++;
        XG_WARN_PEER(&r->lim_drop, a->name,
                     "recording queue full (%zu KiB: the disk is slower than the samples): "
                     "sample of '%s' dropped (%llu dropped so far)",
                     r->queue_bytes / 1024, m.name, (unsigned long long)dropped);
    } else {
        a->samples_out++;
    }
}

/* ---- the writer thread ---- */

static int next_file(struct mcap_rec *r, char *out, size_t size)
{
    if (r->dir) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        size_t len = strlen(r->path);
        return snprintf(out, size, "%s%s%s-%s-%04u.mcap", r->path,
                        len && r->path[len - 1] == '/' ? "" : "/", r->adapter_name, stamp,
                        r->file_no) >= (int)size
                   ? -ENAMETOOLONG
                   : 0;
    }
    if (r->file_no == 0) return snprintf(out, size, "%s", r->path) >= (int)size ? -ENAMETOOLONG : 0;
    const char *dot = strrchr(r->path, '.');
    const char *slash = strrchr(r->path, '/');
    int stem = dot && (!slash || dot > slash) ? (int)(dot - r->path) : (int)strlen(r->path);
    return snprintf(out, size, "%.*s-%u%s", stem, r->path, r->file_no, r->path + stem) >= (int)size
               ? -ENAMETOOLONG
               : 0;
}

static int open_file(struct mcap_rec *r, struct xg_error *err)
{
    char path[1100];
    int rc = next_file(r, path, sizeof path);
    if (rc) return xg_error_set(err, rc, "recording file name too long under '%s'", r->path);
    char lib[64];
    snprintf(lib, sizeof lib, "xrgate %s", XRGATE_VERSION);
    if ((rc = mcap_writer_open(&r->w, path, "ros2", lib, r->compression, r->chunk_bytes, err)))
        return rc;
    struct mcap_writer *w = &r->w;
    const char *ck[] = {"offered_qos_profiles"};
    const char *cv[] = {""};
    if ((rc = mcap_writer_schema(w, 1, MCAP_SAMPLE_SCHEMA, "ros2msg", mcap_sample_definition)) ||
        (rc = mcap_writer_channel(w, CH_SAMPLE, 1, MCAP_SAMPLE_TOPIC, "cdr", 1, ck, cv)))
        goto fail;
    if (r->tf && ((rc = mcap_writer_schema(w, 2, MCAP_TF_SCHEMA, "ros2msg", mcap_tf_definition)) ||
                  (rc = mcap_writer_channel(w, CH_TF, 2, MCAP_TF_TOPIC, "cdr", 1, ck, cv))))
        goto fail;
    char start[32];
    snprintf(start, sizeof start, "%lld", (long long)(xg_clock_mono_ns() + r->wall_off_ns));
    const char *mk[] = {"gateway_id",     "version",    "adapter",      "frame",
                        "tf_world_frame", "start_time", "config_sha256"};
    const char *mv[] = {
        r->gateway_id,   XRGATE_VERSION,
        r->adapter_name, "xrgate internal: right-handed, Y up, metres, quaternion x y z w",
        r->world_frame,  start,
        r->config_sha256};
    if ((rc = mcap_writer_metadata(w, "xrgate", 7, mk, mv))) goto fail;
    pthread_mutex_lock(&r->mu);
    snprintf(r->file, sizeof r->file, "%s", path);
    r->files++;
    pthread_mutex_unlock(&r->mu);
    r->open = true;
    r->file_no++;
    r->file_t0_ns = r->chunk_t0_ns = xg_clock_mono_ns();
    return 0;
fail:
    mcap_writer_abort(w);
    return xg_error_set(err, rc, "cannot write '%s': %s", path, strerror(-rc));
}

static void close_file(struct mcap_rec *r, const char *who)
{
    if (!r->open) return;
    int rc = mcap_writer_close(&r->w);
    r->open = false;
    if (rc) XG_WARN(who, "closing '%s' failed: %s", r->file, strerror(-rc));
}

static void write_error(struct mcap_rec *r, const char *who, int rc)
{
    pthread_mutex_lock(&r->mu);
    uint64_t n = ++r->write_errors;
    pthread_mutex_unlock(&r->mu);
    if (n == 1 || (n & (n - 1)) == 0) /* 1, 2, 4, 8 ...: rate-limited without a clock */
        XG_WARN(who, "writing '%s' failed: %s (%llu errors so far)", r->file, strerror(-rc),
                (unsigned long long)n);
}

static void write_entries(struct mcap_rec *r, const struct mcap_buf *q, const char *who)
{
    struct mcap_cur c = {.p = q->p, .n = q->n};
    const int64_t now = xg_clock_mono_ns(); /* rotation by time: per batch (100 ms) is enough */
    while (c.off < c.n && !c.bad) {
        uint16_t ch = mcap_get_u16(&c);
        uint64_t log_t = mcap_get_u64(&c), pub_t = mcap_get_u64(&c);
        uint32_t len = mcap_get_u32(&c);
        if (c.bad || len > c.n - c.off) break;
        const uint8_t *data = c.p + c.off;
        c.off += len;
        /* rotate before a sample's first message only: its /tf stays in the same file */
        if (r->open && ch == CH_SAMPLE &&
            ((r->rotate_mb > 0 && (double)r->w.pos >= r->rotate_mb * 1e6) ||
             (r->rotate_s > 0 && (double)(now - r->file_t0_ns) >= r->rotate_s * 1e9)))
            close_file(r, who);
        if (!r->open) {
            struct xg_error err = {0};
            if (open_file(r, &err)) {
                write_error(r, who, err.code ? err.code : -EIO);
                continue;
            }
        }
        int rc = mcap_writer_message(&r->w, ch, log_t, pub_t, data, len);
        if (rc) write_error(r, who, rc);
        if (ch == CH_SAMPLE) r->rate_count++;
    }
}

static void *writer_main(void *arg)
{
    struct mcap_rec *r = arg; /* never the adapter: it may be gone (a detached thread) */
    const char *who = r->adapter_name;
    struct mcap_buf local = {0};
    r->rate_t0_ns = xg_clock_mono_ns();
    for (;;) {
        pthread_mutex_lock(&r->mu);
        if (!r->stopping && !r->queue.n) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += 100000000; /* wake every 100 ms: chunk age, rate */
            if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        }
        struct mcap_buf t = r->queue; /* take the queue, leave an empty buffer */
        r->queue = local;
        r->queue.n = 0;
        bool stop = r->stopping;
        pthread_mutex_unlock(&r->mu);
        local = t;
        write_entries(r, &local, who);
        local.n = 0;
        int64_t now = xg_clock_mono_ns();
        if (r->open && now - r->chunk_t0_ns >= MCAP_CHUNK_MAX_NS) {
            int rc = mcap_writer_flush(&r->w);
            if (rc) write_error(r, who, rc);
            r->chunk_t0_ns = now;
        }
        pthread_mutex_lock(&r->mu);
        r->file_bytes = r->open ? r->w.pos : r->file_bytes;
        if (now - r->rate_t0_ns >= 1000000000) {
            r->rate_hz = (double)r->rate_count * 1e9 / (double)(now - r->rate_t0_ns);
            r->rate_count = 0;
            r->rate_t0_ns = now;
        }
        pthread_mutex_unlock(&r->mu);
        if (stop) break;
    }
    close_file(r, who);
    mcap_buf_free(&local);
    return NULL;
}

static int rec_start(struct xg_adapter *a)
{
    struct mcap_rec *r = a->priv;
    r->wall_off_ns = xg_clock_wall_ns() - xg_clock_mono_ns();
    if (pthread_mutex_init(&r->mu, NULL)) return -ENOMEM;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int e = pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (e) {
        pthread_mutex_destroy(&r->mu);
        return -ENOMEM;
    }
    r->sync_ready = true;
    /* the first file now, so that a path that cannot be written is a start-up error */
    struct xg_error err = {0};
    if (open_file(r, &err)) {
        XG_WARN(a->name, "%s", err.msg);
        return err.code ? err.code : -EIO;
    }
    if ((e = pthread_create(&r->thread, NULL, writer_main, r))) {
        close_file(r, a->name);
        return -e;
    }
    r->thread_started = true;
    int rc = xg_table_set_sample_tap(a->table, a->index, rec_tap, a);
    if (rc) return rc;
    XG_INFO(a->name, "recording to %s (%s, chunks of %zu KiB%s)", r->file,
            r->compression ? mcap_compression_name(r->compression) : "uncompressed",
            r->chunk_bytes / 1024, r->tf ? ", with /tf" : "");
    return 0;
}

/* Sink drain: the samples went through the tap; the dirty set is just emptied. */
static int ignore(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    (void)user, (void)e, (void)pose;
    return 0;
}

static void rec_drain(struct xg_adapter *a)
{
    xg_table_drain(a->table, a->index, xg_clock_mono_ns(), ignore, NULL);
}

static void rec_status(const struct xg_adapter *a, struct xg_status *st)
{
    struct mcap_rec *r = a->priv;
    if (!r || !r->sync_ready) { /* none: stopped with its writer thread left behind */
        st->state = r ? "idle" : "stopped";
        return;
    }
    pthread_mutex_lock(&r->mu);
    st->state = r->thread_started ? "recording" : "stopped";
    size_t len = strlen(r->file);
    if (len < sizeof st->peer)
        memcpy(st->peer, r->file, len + 1);
    else
        snprintf(st->peer, sizeof st->peer, "...%s", r->file + len - (sizeof st->peer - 4));
    xg_status_counter(st, "samples_recorded", (double)r->queued);
    xg_status_counter(st, "samples_dropped", (double)r->dropped);
    xg_status_counter(st, "write_errors", (double)r->write_errors);
    xg_status_counter(st, "files", (double)r->files);
    xg_status_gauge(st, "file_bytes", (double)r->file_bytes);
    xg_status_gauge(st, "queue_bytes", (double)r->queue.n);
    xg_status_gauge(st, "record_rate_hz", r->rate_hz);
    pthread_mutex_unlock(&r->mu);
}

static void rec_stop(struct xg_adapter *a)
{
    struct mcap_rec *r = a->priv;
    if (!r || !r->thread_started) return;
    xg_table_set_sample_tap(a->table, a->index, NULL, NULL);
    pthread_mutex_lock(&r->mu);
    r->stopping = true;
    pthread_mutex_unlock(&r->mu);
    pthread_cond_signal(&r->cv);
    r->thread_started = false;
    /* the process stops within 1 s: a writer thread blocked in write(2) (a stalled disk) is
     * left behind, detached, with its state (never freed: it may still finish the file) */
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += 500000000;
    if (dl.tv_nsec >= 1000000000) dl.tv_sec++, dl.tv_nsec -= 1000000000;
    if (pthread_timedjoin_np(r->thread, NULL, &dl)) {
        pthread_detach(r->thread);
        XG_WARN(a->name,
                "recording stopped: the disk did not take the last writes within 0.5 s; %s is "
                "left as it is (readable up to its last complete chunk)",
                r->file);
        a->priv = NULL; /* leaked on purpose: the detached thread still uses it */
        return;
    }
    XG_INFO(a->name, "recording stopped: %s closed (%llu samples, %llu dropped)", r->file,
            (unsigned long long)r->queued, (unsigned long long)r->dropped);
}

static void rec_destroy(struct xg_adapter *a)
{
    struct mcap_rec *r = a->priv;
    if (!r) return;
    rec_stop(a);
    if (r->open) mcap_writer_abort(&r->w);
    if (r->sync_ready) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
    }
    mcap_buf_free(&r->queue);
    mcap_buf_free(&r->enc);
    free(r);
    a->priv = NULL;
}

const struct xg_adapter_ops xg_mcap_record_ops = {
    .type = "mcap-record",
    .is_sink = true,
    .default_rate_hz = 1,   /* the drain only empties the dirty set: the tap records */
    .default_frame = "ros", /* /tf's world frame (the lossless channel stays internal) */
    .create = rec_create,
    .start = rec_start,
    .drain = rec_drain,
    .status = rec_status,
    .stop = rec_stop,
    .destroy = rec_destroy,
};
