/* libFuzzer target for the vmc adapter's ingress (adapters/vmc/vmc_ingress.c) above the OSC codec:
 * an OSC datagram through vmc_ingress_datagram() into a real entity table, as the adapter's
 * socket callback hands it over (fuzz_osc covers the codec alone).
 *
 * Each input is one UDP payload. It is delivered three times into a fresh table (Unity frame,
 * max_bundle_depth 8, max_devices 4): at t0, again 1 ms later (every bone and device entity now
 * exists: the update paths), and 20 s later after the table's expiry and a sweep (bones stale
 * and forgotten, device slots freed, then everything recreated). After each delivery:
 *   - every entity in the table has a finite position within XG_POSITION_MAX per axis and a unit
 *     orientation (the ingress composes bone poses parent ⊗ local: no NaN or overflow escapes),
 *     and its parent, when it has one, is an entity of the table;
 *   - every received bone's resolved parent is its nearest received ancestor in the humanoid
 *     hierarchy (vmc_bones), or the root when none was received, and the bone's entity has that
 *     ancestor's entity as its parent (none under the root);
 *   - device entities stay within max_devices and match the occupied slots; every bad-input
 *     reason counted is also counted in the adapter's drops;
 *   - the datagram counter grows by exactly one per datagram.
 * Seeds: tests/fuzz/seeds/fuzz_vmc_ingress/ (a VMC avatar bundle with the root, bones and
 * devices; /VMC/Ext/OK and /VMC/Ext/T; nested bundles; bad type tags, unknown bones).
 * Build and run: `make fuzz SECONDS=N` (target fuzz_vmc_ingress in build-fuzz/). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vmc/vmc.h"
#include "adapters/vmc/vmc_bones.h"
#include "core/util/log.h"
#include "mappings/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)
#define MAX_DEVICES 4

static struct xg_frame unity;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    xg_log_set_level(XG_LOG_ERROR); /* the rate-limited warnings are the product's, not ours */
    if (xg_frame_preset("unity", &unity, NULL)) abort();
    return 0;
}

static int check_entity(void *user, const struct xg_entity *e, const struct xg_pose *p)
{
    struct xg_table *t = user;
    const double v[3] = {p->position.x, p->position.y, p->position.z};
    for (int i = 0; i < 3; i++)
        if (!isfinite(v[i]) || fabs(v[i]) > XG_POSITION_MAX) abort();
    const struct xg_quat q = p->orientation;
    double n = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if (!isfinite(n) || fabs(n - 1.0) > 1e-6) abort();
    uint32_t parent = xg_entity_parent(e);
    if (parent && !xg_table_get(t, parent)) abort();
    return 0;
}

static void check(struct xg_table *t, const struct vmc_ingress *in, const struct xg_adapter *a,
                  uint64_t datagrams, int64_t now)
{
    if (in->datagrams != datagrams) abort();
    /* the device set: bounded, its count true, every used slot found again by its name and none
     * left pending after a datagram */
    if (in->dev.max != MAX_DEVICES || in->dev.n_used > MAX_DEVICES || in->dev.n_pend) abort();
    size_t devices = 0;
    for (size_t i = 0; i < MAX_DEVICES; i++) {
        const struct vmc_device *d = &in->dev.d[i];
        if (d->pending) abort();
        if (!d->used) continue;
        devices++;
        if (vmc_devices_find(&in->dev, d->src) != (long)i) abort();
    }
    if (devices != in->dev.n_used) abort();
    uint64_t reasons = 0;
    for (int r = 0; r < VMC_R_COUNT; r++)
        reasons += in->reasons[r];
    if (reasons > a->drops) abort();
    for (int b = 0; b < VMC_BONES; b++) {
        int par = in->bone_parent[b];
        if (par < -2 || par >= VMC_BONES || par == b) abort();
        if (!in->bone[b].have || par == -2) continue;
        /* the resolved parent is the nearest ancestor in the humanoid hierarchy that was received
         * (-1: none, the root) */
        int want = -1;
        for (int q = vmc_bones[b].parent; q >= 0 && want < 0; q = vmc_bones[q].parent)
            if (in->bone[q].have) want = q;
        if (par != want) abort();
        /* the bone's entity has that bone's entity as its parent (none for the root) */
        const struct xg_entity *e = in->bone_id[b] ? xg_table_get(t, in->bone_id[b]) : NULL;
        if (e && in->now_ns == now) {
            const struct xg_entity *pe =
                par >= 0 && in->bone_id[par] ? xg_table_get(t, in->bone_id[par]) : NULL;
            if (xg_entity_parent(e) != (pe ? in->bone_id[par] : 0)) abort();
        }
    }
    xg_table_foreach(t, -1, now, check_entity, t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65507) return 0; /* a UDP payload */
    struct xg_table *t = xg_table_new(NULL);
    if (!t) return 0;
    xg_table_set_adapter_name(t, 0, "vmc");
    static struct xg_adapter a;
    memset(&a, 0, sizeof a);
    strcpy(a.name, "vmc");
    a.index = 0;
    a.table = t;
    a.frame = &unity;
    static struct vmc_ingress in;
    if (vmc_ingress_init(&in, &a, 8, MAX_DEVICES)) abort();
    /* a copy the size of the input: ASan sees a read past its end */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) abort();
    memcpy(buf, data, size);

    vmc_ingress_datagram(&in, buf, size, "127.0.0.1:39539", T0);
    check(t, &in, &a, 1, T0);
    vmc_ingress_datagram(&in, buf, size, "127.0.0.1:39539", T0 + MS);
    check(t, &in, &a, 2, T0 + MS);
    int64_t later = T0 + 20000 * MS; /* past the table's default expire_ms (10 s) */
    xg_table_expire(t, later);
    vmc_ingress_sweep(&in);
    check(t, &in, &a, 2, later);
    vmc_ingress_datagram(&in, buf, size, "127.0.0.1:39539", later);
    check(t, &in, &a, 3, later);

    free(buf);
    vmc_ingress_free(&in);
    xg_table_free(t);
    return 0;
}
