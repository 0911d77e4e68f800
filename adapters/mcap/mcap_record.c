/* `mcap-record` egress: records every sample the gateway receives to MCAP files
 * (docs/adapters/mcap.md).
 *
 * The adapter is a sink whose table sample tap (xg_table_set_sample_tap) sees every sample of
 * the entities its include/exclude accept, on the reactor thread. The tap only copies the sample
 * into a compact record (struct rec_sample: times, flags, pose, velocities, scale, the parent's
 * pose, buttons and analogs when there are) and puts it in a bounded lock-free queue
 * (mcap_ring.h); an entity's names (name, source, origin, origin gateway), kind and sensor go
 * once, as an identity record, and samples refer to them by number (the entity's table slot).
 * A writer thread takes the queue every 100 ms (sooner when it is a quarter full), encodes each
 * sample as an xrgate_msgs/msg/Sample (lossless: straight into the chunk, after its entity's
 * strings encoded once) and adds its transform to a tf2_msgs/msg/TFMessage that holds the
 * samples of one source frame (consecutive samples of the same receive and capture times, at most
 * MCAP_TF_GROUP_MAX: one /tf message per frame, as a tf broadcaster sends; CDR, mcap_cdr.h),
 * builds chunks (mcap_writer.h), compresses and writes them, rotates files. The reactor never
 * encodes, takes no lock per sample and never touches the disk: a full queue (a slow or full disk)
 * drops the sample, counted as `dropped` with a rate-limited warning.
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
#include "core/adapter/adapter.h"
#include "core/clock/clock.h"
#include "core/util/log.h"
#include "mappings/frame.h"

#define CH_SAMPLE 0
#define CH_TF 1
#define REC_IDENT 1 /* struct rec_ident, then name, source, origin, origin_gateway (NUL each) */
#define REC_SAMPLE                                                                                 \
    2                  /* struct rec_sample, then n_buttons bytes, padding to 8, n_analogs doubles \
                        */
#define SCRATCH_SELF 0 /* identity numbers sent with every sample (no per-entity slot: ENOMEM) */
#define SCRATCH_PARENT 1 /* the same for its parent */
#define NO_PARENT UINT32_MAX

/* What the loop queues per sample: fixed size (buttons and analogs follow when the entity has
 * them); the writer thread turns it into the two CDR messages. */
struct rec_sample {
    uint32_t ident, parent;         /* identity numbers; parent NO_PARENT = none */
    int64_t capture_ns, receive_ns; /* ns since the Unix epoch */
    uint32_t flags;
    uint16_t n_buttons, n_analogs;
    struct xg_vec3 position, velocity, angular_velocity, scale;
    struct xg_quat orientation;
    struct xg_vec3 parent_position; /* the parent's newest pose, for /tf (when parent) */
    struct xg_quat parent_orientation;
};

/* Sent once per entity (and per identity number reuse): what never changes for an entity. */
struct rec_ident {
    uint32_t ident;
    int32_t sensor;
    uint32_t kind;
    uint16_t len[4]; /* name, source, origin, origin_gateway, without NUL */
};

#define IDENT_MAX (sizeof(struct rec_ident) + 2 * XG_NAME_MAX + 2 * 64)
#define SAMPLE_MAX                                                                                 \
    (sizeof(struct rec_sample) + XG_MAX_BUTTONS + 8 + XG_MAX_ANALOGS * sizeof(double))

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

static size_t str_len(const char *s, size_t max)
{
    return s ? strnlen(s, max - 1) : 0;
}

/* An identity record of e under number `ident` into buf; returns its payload length. */
static size_t ident_record(const struct xg_adapter *a, const struct xg_entity *e, uint32_t ident,
                           uint8_t *buf)
{
    const char *str[4] = {xg_entity_name(e), xg_entity_source(e),
                          xg_table_adapter_name(a->table, xg_entity_origin(e)),
                          xg_entity_origin_gateway(e)};
    const size_t max[4] = {XG_NAME_MAX, XG_NAME_MAX, 64, 64};
    struct rec_ident h = {
        .ident = ident, .sensor = xg_entity_source_sensor(e), .kind = (uint32_t)xg_entity_kind(e)};
    size_t n = sizeof h;
    for (int i = 0; i < 4; i++) {
        h.len[i] = (uint16_t)str_len(str[i], max[i]);
        memcpy(buf + n, str[i] ? str[i] : "", h.len[i]);
        buf[n + h.len[i]] = '\0';
        n += h.len[i] + 1u;
    }
    memcpy(buf, &h, sizeof h);
    return n;
}

/* e's identity number: its slot's, or a new one (*fresh: its identity record must go first, and
 * the slot is set by claim() once queued). */
static uint32_t ident_of(struct xg_adapter *a, const struct xg_entity *e, uint32_t scratch,
                         bool *fresh)
{
    struct mcap_rec *r = a->priv;
    const uint64_t *slot = xg_table_sink_slot(a->table, a->index, e);
    *fresh = true;
    if (!slot) return scratch;
    if (*slot) {
        *fresh = false;
        return (uint32_t)*slot;
    }
    return r->n_free ? r->free_idents[--r->n_free] : r->next_ident++;
}

static void push_free(struct mcap_rec *r, uint32_t ident)
{
    if (r->n_free == r->cap_free) {
        size_t n = r->cap_free ? r->cap_free * 2 : 64;
        uint32_t *p = realloc(r->free_idents, n * sizeof *p);
        if (!p) return; /* the number is lost: the writer's table keeps one entry more */
        r->free_idents = p;
        r->cap_free = n;
    }
    r->free_idents[r->n_free++] = ident;
}

/* After queueing: remember e's new number (queued) or give it back (not queued). */
static void settle(struct xg_adapter *a, const struct xg_entity *e, uint32_t ident, bool queued)
{
    if (ident <= SCRATCH_PARENT) return;
    uint64_t *slot = queued ? xg_table_sink_slot(a->table, a->index, e) : NULL;
    if (slot)
        *slot = ident;
    else
        push_free(a->priv, ident);
}

/* The table releases an entity's slot (it left, or stop): its number may be reused. The writer
 * thread reads the queue in order, so it has used the old identity before the new one arrives. */
static void slot_release(void *user, const struct xg_entity *e, uint64_t value)
{
    (void)e;
    push_free(user, (uint32_t)value);
}

static void rec_tap(void *user, const struct xg_entity *e, const struct xg_sample *s)
{
    struct xg_adapter *a = user;
    struct mcap_rec *r = a->priv;
    struct rec_sample m;
    m.capture_ns = s->capture_ns + r->wall_off_ns;
    m.receive_ns = (s->receive_ns ? s->receive_ns : s->capture_ns) + r->wall_off_ns;
    m.flags = s->flags; /* the merged sample's: every field the source has reported */
    m.position = s->position, m.orientation = s->orientation, m.velocity = s->velocity;
    m.angular_velocity = s->angular_velocity, m.scale = s->scale;
    const uint8_t *bt = NULL;
    const double *an = NULL;
    m.n_buttons = (uint16_t)xg_entity_buttons(e, &bt);
    m.n_analogs = (uint16_t)xg_entity_analogs(e, &an);
    bool fresh, pfresh = false;
    m.ident = ident_of(a, e, SCRATCH_SELF, &fresh);
    const struct xg_entity *pe =
        xg_entity_parent(e) ? xg_table_get(a->table, xg_entity_parent(e)) : NULL;
    m.parent = NO_PARENT;
    m.parent_position = (struct xg_vec3){0, 0, 0};
    m.parent_orientation = (struct xg_quat){0, 0, 0, 1};
    if (pe) {
        const struct xg_sample *ps = xg_entity_last(pe);
        m.parent = ident_of(a, pe, SCRATCH_PARENT, &pfresh);
        m.parent_position = ps->position, m.parent_orientation = ps->orientation;
    }
    /* sizes: identity records (rare) + the sample record */
    static uint8_t id_self[IDENT_MAX], id_parent[IDENT_MAX]; /* loop thread only */
    size_t n_self = fresh ? ident_record(a, e, m.ident, id_self) : 0;
    size_t n_parent = pfresh ? ident_record(a, pe, m.parent, id_parent) : 0;
    size_t n_bt = m.n_buttons, n_an = m.n_analogs * sizeof(double);
    size_t n_sample = sizeof m + (n_an ? (n_bt + 7) / 8 * 8 + n_an : n_bt);
    size_t need = mcap_ring_size(n_sample) + (fresh ? mcap_ring_size(n_self) : 0) +
                  (pfresh ? mcap_ring_size(n_parent) : 0);
    uint64_t pos;
    bool ok = mcap_ring_reserve(&r->ring, need, &pos);
    if (ok) {
        if (pfresh) mcap_ring_put(&r->ring, &pos, REC_IDENT, id_parent, n_parent);
        if (fresh) mcap_ring_put(&r->ring, &pos, REC_IDENT, id_self, n_self);
        if (n_bt || n_an) {
            static uint8_t buf[SAMPLE_MAX]; /* loop thread only */
            memcpy(buf, &m, sizeof m);
            if (n_bt) memcpy(buf + sizeof m, bt, n_bt);
            if (n_an) memcpy(buf + sizeof m + (n_bt + 7) / 8 * 8, an, n_an);
            mcap_ring_put(&r->ring, &pos, REC_SAMPLE, buf, n_sample);
        } else {
            mcap_ring_put(&r->ring, &pos, REC_SAMPLE, &m, sizeof m);
        }
        mcap_ring_publish(&r->ring, pos);
    }
    if (fresh) settle(a, e, m.ident, ok);
    if (pfresh) settle(a, pe, m.parent, ok);
    if (!ok) {
        r->dropped++;
        a->drops++;
        XG_WARN_PEER(&r->lim_drop, a->name,
                     "recording queue full (%zu KiB: the disk is slower than the samples): "
                     "sample of '%s' dropped (%llu dropped so far)",
                     r->queue_bytes / 1024, xg_entity_name(e), (unsigned long long)r->dropped);
        return;
    }
    r->queued++;
    a->samples_out++;
    /* the writer wakes every 100 ms by itself; sooner when the queue fills (once per batch) */
    if (mcap_ring_used(&r->ring) >= r->ring.cap / 4 && !atomic_exchange(&r->kicked, true)) {
        pthread_mutex_lock(&r->mu);
        pthread_cond_signal(&r->cv);
        pthread_mutex_unlock(&r->mu);
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
    mcap_writer_set_level(w, r->level);
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

static void write_error(struct mcap_rec *r, const char *who, int rc)
{
    pthread_mutex_lock(&r->mu);
    uint64_t n = ++r->write_errors;
    pthread_mutex_unlock(&r->mu);
    if (n == 1 || (n & (n - 1)) == 0) /* 1, 2, 4, 8 ...: rate-limited without a clock */
        XG_WARN(who, "writing '%s' failed: %s (%llu errors so far)", r->file, strerror(-rc),
                (unsigned long long)n);
}

/* The pending /tf message (the transforms of one source frame), into the open chunk. */
static void tf_flush(struct mcap_rec *r, const char *who)
{
    if (!r->tf_n) return;
    r->tf_n = 0;
    if (r->tfb.oom) {
        mcap_buf_free(&r->tfb); /* empty and usable again */
        write_error(r, who, -ENOMEM);
        return;
    }
    int rc = mcap_writer_message(&r->w, CH_TF, (uint64_t)r->tf_log, (uint64_t)r->tf_pub, r->tfb.p,
                                 r->tfb.n);
    if (rc) write_error(r, who, rc);
}

static void close_file(struct mcap_rec *r, const char *who)
{
    if (!r->open) return;
    tf_flush(r, who);
    int rc = mcap_writer_close(&r->w);
    r->open = false;
    if (rc) XG_WARN(who, "closing '%s' failed: %s", r->file, strerror(-rc));
}

/* d's Sample prefix from its strings, once (pre_n 0 when it does not fit: never) */
static void set_prefix(struct mcap_ident *d)
{
    struct mcap_buf pre = {0};
    size_t n = mcap_cdr_sample_prefix(
        &pre, (const char *const[5]){d->name, d->source, d->origin, d->origin_gateway, d->kind});
    d->pre_n = n && n <= sizeof d->pre ? (uint16_t)n : 0;
    if (d->pre_n) memcpy(d->pre, pre.p, n);
    mcap_buf_free(&pre);
    d->name_len = (uint16_t)strlen(d->name);
}

/* Identity i as stored, or r->none (empty names, sensor -1) when it is unknown. */
static const struct mcap_ident *ident(struct mcap_rec *r, uint32_t i)
{
    return i < r->n_idents && r->idents[i].pre_n ? &r->idents[i] : &r->none;
}

static void store_ident(struct mcap_rec *r, const uint8_t *p, size_t len)
{
    struct rec_ident h;
    if (len < sizeof h) return;
    memcpy(&h, p, sizeof h);
    if (h.ident >= r->n_idents) {
        size_t n = r->n_idents ? r->n_idents : 64;
        while (n <= h.ident)
            n *= 2;
        struct mcap_ident *v = realloc(r->idents, n * sizeof *v);
        if (!v) return; /* its samples are recorded without names */
        memset(v + r->n_idents, 0, (n - r->n_idents) * sizeof *v);
        r->idents = v;
        r->n_idents = n;
    }
    struct mcap_ident *d = &r->idents[h.ident];
    char *dst[4] = {d->name, d->source, d->origin, d->origin_gateway};
    const size_t size[4] = {sizeof d->name, sizeof d->source, sizeof d->origin,
                            sizeof d->origin_gateway};
    size_t off = sizeof h;
    for (int i = 0; i < 4; i++) {
        size_t n = h.len[i] < size[i] ? h.len[i] : size[i] - 1;
        if (off + h.len[i] >= len) n = 0; /* cannot happen: the loop wrote it */
        memcpy(dst[i], p + off, n);
        dst[i][n] = '\0';
        off += h.len[i] + 1u;
    }
    d->sensor = h.sensor;
    snprintf(d->kind, sizeof d->kind, "%s", xg_kind_name((enum xg_kind)h.kind));
    set_prefix(d);
}

/* One queued sample: its Sample message into the chunk, its transform into the pending /tf
 * message (one per source frame: consecutive samples of the same receive and capture times). */
static void write_sample(struct mcap_rec *r, const uint8_t *p, size_t len, const char *who,
                         int64_t now)
{
    struct mcap_sample s; /* ~2 KiB, strings unused: the writer thread's stack is MiBs */
    struct rec_sample m;
    if (len < sizeof m) return;
    memcpy(&m, p, sizeof m);
    size_t n_bt = m.n_buttons, n_an = (size_t)m.n_analogs * sizeof(double);
    size_t an_at = sizeof m + (n_an ? (n_bt + 7) / 8 * 8 : n_bt);
    if (n_bt > XG_MAX_BUTTONS || m.n_analogs > XG_MAX_ANALOGS || an_at + n_an > len) return;
    const struct mcap_ident *id = ident(r, m.ident);
    const struct mcap_ident *pid = m.parent != NO_PARENT ? ident(r, m.parent) : NULL;
    /* rotate before a sample only: its /tf group is written first, in the same file */
    if (r->open && ((r->rotate_mb > 0 && (double)r->w.pos >= r->rotate_mb * 1e6) ||
                    (r->rotate_s > 0 && (double)(now - r->file_t0_ns) >= r->rotate_s * 1e9)))
        close_file(r, who);
    if (!r->open) {
        struct xg_error err = {0};
        if (open_file(r, &err)) {
            write_error(r, who, err.code ? err.code : -EIO);
            return;
        }
    }
    if (r->tf_n &&
        (m.receive_ns != r->tf_log || m.capture_ns != r->tf_pub || r->tf_n >= MCAP_TF_GROUP_MAX))
        tf_flush(r, who);
    s.capture_time = m.capture_ns;
    s.receive_time = m.receive_ns;
    s.flags = m.flags;
    s.sensor = id->sensor;
    s.position[0] = m.position.x, s.position[1] = m.position.y, s.position[2] = m.position.z;
    s.orientation[0] = m.orientation.x, s.orientation[1] = m.orientation.y;
    s.orientation[2] = m.orientation.z, s.orientation[3] = m.orientation.w;
    s.velocity[0] = m.velocity.x, s.velocity[1] = m.velocity.y, s.velocity[2] = m.velocity.z;
    s.angular_velocity[0] = m.angular_velocity.x, s.angular_velocity[1] = m.angular_velocity.y;
    s.angular_velocity[2] = m.angular_velocity.z;
    s.scale[0] = m.scale.x, s.scale[1] = m.scale.y, s.scale[2] = m.scale.z;
    s.n_buttons = m.n_buttons;
    memcpy(s.buttons, p + sizeof m, n_bt);
    s.n_analogs = m.n_analogs;
    memcpy(s.analogs, p + an_at, n_an);
    struct mcap_buf *b =
        mcap_writer_begin(&r->w, CH_SAMPLE, (uint64_t)m.receive_ns, (uint64_t)m.capture_ns);
    mcap_cdr_sample_with(b, id->pre, id->pre_n, pid ? pid->name : "", pid ? pid->name_len : 0, &s);
    int rc = mcap_writer_end(&r->w);
    if (rc) write_error(r, who, rc);
    r->rate_count++;
    if (!r->tf) return;
    struct xg_vec3 pos = m.position;
    struct xg_quat rot = m.orientation;
    const char *frame = r->world_frame;
    size_t frame_len = r->world_frame_len;
    if (pid) { /* tf is parent-relative: parent^-1 * child */
        struct xg_quat pinv = xg_quat_conj(m.parent_orientation);
        pos =
            xg_frame_vel_out(&r->frame, xg_quat_rotate(pinv, xg_vec3_sub(pos, m.parent_position)));
        rot = xg_frame_rot_out(&r->frame, xg_quat_mul(pinv, rot));
        frame = pid->name, frame_len = pid->name_len;
    } else {
        pos = xg_frame_pos_out(&r->frame, pos);
        rot = xg_frame_rot_out(&r->frame, rot);
    }
    const double t[3] = {pos.x, pos.y, pos.z}, q[4] = {rot.x, rot.y, rot.z, rot.w};
    if (!r->tf_n) {
        r->tfb.n = 0;
        mcap_cdr_tf_begin(&r->tfb);
        r->tf_log = m.receive_ns, r->tf_pub = m.capture_ns;
    }
    mcap_cdr_tf_add(&r->tfb, 0, m.capture_ns, frame, frame_len, id->name, id->name_len, t, q);
    r->tf_n++;
}

/* Everything queued so far: identity records kept, samples encoded and written. The space is
 * given back every 256 records, so that the loop can queue while this thread writes. */
static void write_queued(struct mcap_rec *r, const char *who)
{
    _Alignas(8) uint8_t buf[SAMPLE_MAX > IDENT_MAX ? SAMPLE_MAX : IDENT_MAX];
    const int64_t now = xg_clock_mono_ns(); /* rotation by time: per batch (100 ms) is enough */
    uint64_t pos = atomic_load_explicit(&r->ring.tail, memory_order_relaxed); /* ours */
    uint32_t type;
    size_t len;
    unsigned k = 0;
    while (mcap_ring_get(&r->ring, &pos, &type, buf, sizeof buf, &len)) {
        len = len < sizeof buf ? len : sizeof buf;
        if (type == REC_IDENT)
            store_ident(r, buf, len);
        else if (type == REC_SAMPLE)
            write_sample(r, buf, len, who, now);
        if (++k % 256 == 0) mcap_ring_release(&r->ring, pos);
    }
    if (r->open) tf_flush(r, who); /* a group never waits for the next batch */
    mcap_ring_release(&r->ring, pos);
}

static void *writer_main(void *arg)
{
    struct mcap_rec *r = arg; /* never the adapter: it may be gone (a detached thread) */
    const char *who = r->adapter_name;
    r->rate_t0_ns = xg_clock_mono_ns();
    memset(&r->none, 0, sizeof r->none);
    r->none.sensor = -1;
    set_prefix(&r->none);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        if (!r->stopping && !mcap_ring_used(&r->ring)) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += 100000000; /* wake every 100 ms: chunk age, rate */
            if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        }
        bool stop = r->stopping; /* the loop queues nothing more once it is set */
        pthread_mutex_unlock(&r->mu);
        atomic_store(&r->kicked, false);
        write_queued(r, who);
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
    return NULL;
}

static int rec_start(struct xg_adapter *a)
{
    struct mcap_rec *r = a->priv;
    r->wall_off_ns = xg_clock_wall_ns() - xg_clock_mono_ns();
    r->frame = *a->frame;
    r->next_ident = SCRATCH_PARENT + 1;
    atomic_init(&r->kicked, false);
    if (mcap_ring_init(&r->ring, r->queue_bytes)) return -ENOMEM;
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
    int rc = xg_table_set_sink_slot_free(a->table, a->index, slot_release, r);
    if (!rc) rc = xg_table_set_sample_tap(a->table, a->index, rec_tap, a);
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
    xg_status_gauge(st, "queue_bytes", (double)mcap_ring_used(&r->ring));
    xg_status_gauge(st, "record_rate_hz", r->rate_hz);
    pthread_mutex_unlock(&r->mu);
}

static void rec_stop(struct xg_adapter *a)
{
    struct mcap_rec *r = a->priv;
    if (!r || !r->thread_started) return;
    xg_table_set_sample_tap(a->table, a->index, NULL, NULL);
    xg_table_sink_slots_clear(a->table, a->index);
    xg_table_set_sink_slot_free(a->table, a->index, NULL, NULL);
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
    mcap_ring_free(&r->ring);
    mcap_buf_free(&r->tfb);
    free(r->idents);
    free(r->free_idents);
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
