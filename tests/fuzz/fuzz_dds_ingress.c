/* libFuzzer target for the dds adapter's TF ingress (adapters/dds/dds_ingress.c): decoded
 * tf2_msgs/TFMessage samples through the frame/parent logic (world_frame, chaining through frames
 * received before, the known-frame table, stamps, per-publication clock maps) into a real entity
 * table, via dds_ingress_tf(), the code the rt/tf reader runs after taking a sample. Cyclone
 * DDS's own CDR decoding is not ours and not fuzzed here; fuzz_dds covers the name mapping.
 *
 * The input is a sequence of messages, each built from the bytes (not CDR):
 *   message   := pub:u8 n:u8 transform{n}     pub: publication handle 1..256 (more than the
 *                                             32 clock maps: eviction), rx time +1 ms each
 *   transform := child:name parent:name sec:i32le nanosec:u32le value{7}   (x y z, qx qy qz qw)
 *   name      := L:u8 (L >= 0xF0: a name from a short list: "world", "/world", "map",
 *                "base_link", "odom", "", "a/b", "base_link/"; else L & 63 raw bytes)
 *   value     := k:u8 (k < 250: (k - 125) / 50; 250 NaN, 251 +Inf, 252 -Inf, 253 1e300,
 *                254 a denormal; 255: 8 raw bytes, a double)
 * After each message:
 *   - transforms_in grew by n, bad_input and unresolved by at most n together;
 *   - every known frame has a non-empty, NUL-terminated name without a leading '/', a finite
 *     position and a unit orientation, and there are at most DDS_MAX_FRAMES of them;
 *   - every entity in the table has a finite position within XG_POSITION_MAX per axis and a unit
 *     orientation.
 * Seeds: tests/fuzz/seeds/fuzz_dds_ingress/ (a chain world -> odom -> base_link -> arm, a
 * transform relative to an unknown frame, a bad nanosec, non-finite values, an empty child).
 * Build and run: `make fuzz SECONDS=N` (target fuzz_dds_ingress in build-fuzz/). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/dds/dds_adapter.h"
#include "core/util/log.h"
#include "tf2_msgs/msg/TFMessage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)
#define MAX_TRANSFORMS 64

static struct xg_frame ros;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    xg_log_set_level(XG_LOG_ERROR); /* the rate-limited warnings are the product's, not ours */
    if (xg_frame_preset("ros", &ros, NULL)) abort();
    return 0;
}

struct in {
    const uint8_t *p;
    size_t n;
};

static int u8(struct in *in)
{
    if (!in->n) return -1;
    in->n--;
    return *in->p++;
}

static uint32_t u32(struct in *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int b = u8(in);
        v |= (uint32_t)(b < 0 ? 0 : b) << (8 * i);
    }
    return v;
}

static const char *const NAMES[] = {"world", "/world", "map", "base_link",
                                    "odom",  "",       "a/b", "base_link/"};

static void name(struct in *in, char *out /* 64 bytes */)
{
    int l = u8(in);
    if (l < 0) l = 0;
    if (l >= 0xF0) {
        strcpy(out, NAMES[(l - 0xF0) % (sizeof NAMES / sizeof NAMES[0])]);
        return;
    }
    l &= 63;
    size_t k = 0;
    for (; k < (size_t)l && in->n; k++)
        out[k] = (char)u8(in);
    out[k] = '\0'; /* an embedded NUL ends the string early, as in a C string from CDR */
}

static double value(struct in *in)
{
    int k = u8(in);
    if (k < 0) return 0.0;
    if (k < 250) return (k - 125) / 50.0;
    switch (k) {
    case 250:
        return NAN;
    case 251:
        return INFINITY;
    case 252:
        return -INFINITY;
    case 253:
        return 1e300;
    case 254:
        return 5e-324;
    default: {
        uint64_t bits = (uint64_t)u32(in) | (uint64_t)u32(in) << 32;
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    }
}

static int unit(struct xg_quat q)
{
    double n = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    return isfinite(n) && fabs(n - 1.0) <= 1e-6;
}

static int check_entity(void *user, const struct xg_entity *e, const struct xg_pose *p)
{
    (void)user;
    (void)e;
    const double v[3] = {p->position.x, p->position.y, p->position.z};
    for (int i = 0; i < 3; i++)
        if (!isfinite(v[i]) || fabs(v[i]) > XG_POSITION_MAX) abort();
    if (!unit(p->orientation)) abort();
    return 0;
}

static void check(const struct dds *d, struct xg_table *t, int64_t now)
{
    if (d->names.n > DDS_MAX_NAMES || d->names.n_posed > DDS_MAX_FRAMES) abort();
    uint32_t posed = 0;
    for (uint32_t i = 0; i < d->names.n; i++) {
        const struct dds_frame *f = &d->names.v[i];
        if (!memchr(f->name, '\0', sizeof f->name) || !f->name[0] || f->name[0] == '/') abort();
        /* every name is found again under the name it was stored under */
        if (dds_frames_find(&d->names, f->name, dds_name_hash(f->name)) != f) abort();
        if (!f->has_pose) continue;
        posed++;
        if (!isfinite(f->p.x) || !isfinite(f->p.y) || !isfinite(f->p.z) || !unit(f->q)) abort();
    }
    if (posed != d->names.n_posed) abort();
    xg_table_foreach(t, -1, now, check_entity, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16) return 0;
    struct xg_table *t = xg_table_new(NULL);
    struct dds *d = calloc(1, sizeof *d);
    if (!t || !d) abort();
    xg_table_set_adapter_name(t, 0, "ros");
    strcpy(d->world_frame, "world");
    d->read_tf = true;
    d->frame = &ros;
    static struct xg_adapter a;
    memset(&a, 0, sizeof a);
    strcpy(a.name, "ros");
    a.index = 0;
    a.table = t;
    a.frame = &ros;
    a.priv = d;

    static geometry_msgs_msg_dds__TransformStamped_ tr[MAX_TRANSFORMS];
    static char names[MAX_TRANSFORMS][2][64];
    struct in in = {data, size};
    int64_t now = T0;
    while (in.n) {
        int pub = u8(&in);
        int n = u8(&in);
        if (n < 0) n = 0;
        n %= MAX_TRANSFORMS + 1;
        memset(tr, 0, sizeof tr);
        for (int i = 0; i < n; i++) {
            name(&in, names[i][0]);
            name(&in, names[i][1]);
            tr[i].child_frame_id_ = names[i][0];
            tr[i].header_.frame_id_ = names[i][1];
            tr[i].header_.stamp_.sec_ = (int32_t)u32(&in);
            tr[i].header_.stamp_.nanosec_ = u32(&in);
            tr[i].transform_.translation_.x_ = value(&in);
            tr[i].transform_.translation_.y_ = value(&in);
            tr[i].transform_.translation_.z_ = value(&in);
            tr[i].transform_.rotation_.x_ = value(&in);
            tr[i].transform_.rotation_.y_ = value(&in);
            tr[i].transform_.rotation_.z_ = value(&in);
            tr[i].transform_.rotation_.w_ = value(&in);
        }
        tf2_msgs_msg_dds__TFMessage_ m = {
            .transforms_ = {._maximum = (uint32_t)n, ._length = (uint32_t)n, ._buffer = tr}};
        uint64_t tin = d->transforms_in, dropped = d->bad_input + d->unresolved;
        now += MS;
        dds_ingress_tf(&a, &m, (uint64_t)(pub < 0 ? 1 : pub + 1), now);
        if (d->transforms_in != tin + (uint64_t)n) abort();
        if (d->bad_input + d->unresolved > dropped + (uint64_t)n) abort();
        check(d, t, now);
    }
    dds_frames_free(&d->names);
    free(d);
    xg_table_free(t);
    return 0;
}
