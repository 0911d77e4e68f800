/* libFuzzer target for the BVH parser and forward kinematics (adapters/bvh/bvh_parser.c,
 * bvh_fk.c).
 *
 * The input is parsed as a BVH file with small limits (64 joints, 1024 frames); whatever parses
 * must satisfy the structure invariants (parents precede children, End Sites have no channels,
 * channel columns are contiguous in file order, the motion holds frames × channels values), and
 * forward kinematics with velocities runs over every frame: orientations must be unit
 * quaternions. A failed parse must leave the output empty with a message naming a line.
 *
 * Seeds: tests/vectors/bvh/ and the head of the CMU walk (tests/fuzz/run.sh). Build command
 * below (`make fuzz` builds it too). */
// From the repository root:
//   clang -fsanitize=fuzzer,address,undefined -I. tests/fuzz/fuzz_bvh.c adapters/bvh/bvh_parser.c
//     adapters/bvh/bvh_fk.c core/*/*.c -lm $(pkg-config --libs libevent_core libevent_extra)
//     -lmbedtls -lmbedx509 -lmbedcrypto
//   ./a.out -max_total_time=60 corpus/   (corpus/ seeded with a copy of tests/vectors/bvh/)
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/bvh/bvh_fk.h"
#include "adapters/bvh/bvh_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bvh_limits lim = {
        .max_joints = 64, .max_channels = 384, .max_frames = 1024, .max_values = 65536};
    struct bvh_file f;
    struct xg_error err = {0};
    int rc = bvh_parse((const char *)data, size, &lim, &f, &err);
    if (rc != 0) {
        if (f.joints || f.motion || f.n_joints || f.n_frames) abort();
        if (rc != -ENOMEM && strncmp(err.msg, "line ", 5) != 0) abort();
        return 0;
    }
    if (f.n_joints < 1 || f.n_joints > 64 || f.n_channels > 384 || f.n_frames > 1024) abort();
    if (!(f.frame_time > 0) || (f.n_frames > 0 && f.n_channels > 0 && !f.motion)) abort();
    int col = 0;
    for (int i = 0; i < f.n_joints; i++) {
        const struct bvh_joint *j = &f.joints[i];
        if (j->parent >= i || j->parent < -1) abort();
        if (j->parent >= 0 && f.joints[j->parent].end_site) abort();
        if (j->end_site && (j->n_channels || j->parent < 0)) abort();
        if (j->n_channels < 0 || j->n_channels > 6) abort();
        if (j->n_channels && j->channel_index != col) abort();
        col += j->n_channels;
        if (bvh_find_joint(&f, j->name) != i) abort(); /* names are unique */
        for (int k = 0; k < 3; k++)
            if (!isfinite(j->offset[k])) abort();
    }
    if (col != f.n_channels) abort();
    for (size_t i = 0; i < (size_t)f.n_frames * (size_t)f.n_channels; i++)
        if (!isfinite(f.motion[i])) abort();
    if (f.n_frames > 0) {
        struct bvh_fk_work w;
        int n = f.n_joints;
        struct xg_vec3 *p = calloc((size_t)n, sizeof *p), *v = calloc((size_t)n, sizeof *v),
                       *av = calloc((size_t)n, sizeof *av);
        struct xg_quat *q = calloc((size_t)n, sizeof *q);
        if (!p || !v || !av || !q || bvh_fk_work_init(&w, &f)) abort();
        for (long k = 0; k < f.n_frames; k++) {
            bvh_fk_motion(&f, k, 0, f.n_frames - 1, 0.01, &w, p, q, v, av);
            for (int i = 0; i < n; i++) {
                double qn = sqrt(xg_quat_dot(q[i], q[i]));
                if (fabs(qn - 1.0) > 1e-9) abort();
            }
        }
        bvh_fk_work_free(&w);
        free(p);
        free(v);
        free(av);
        free(q);
    }
    bvh_free(&f);
    return 0;
}
